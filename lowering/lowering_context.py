"""What the lowering rules need of the kernel lowering that runs them: its state and the few
operations every rule uses.

Control flow (`lower_control`, `lower_persistent`), operators (`lower_ops`), the debug macros
and literals, the prelude intrinsics (`intrinsics/`), bounds checks (`bounds`,
`bounded_checks`, `preheader`) and partition choices take a `LoweringContext` instead of
importing the concrete `lower_kernel.KernelLowering`, which composes them: the rules depend on
this surface, the kernel lowering on the rules, and nothing back.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from lowering.bounds_ledger import BoundsLedger
from lowering.contract import Assumption
from lowering.ir.core import Builder, Value
from lowering.ir.ops_pointer import GlobalVar
from lowering.ir.types import PaddingValue
from lowering.loop_frames import LoopFrame
from lowering.lowered_expr import Lowered, Origin, PartitionValue, TensorHandle, TokenChain
from parser import ast_nodes as A
from parser.typed_kernel import TypedBody, TypedKernel
from parser.types import SemType


class LoweringContext(Protocol):
    """One kernel's lowering, as the rules see it."""

    kernel: TypedKernel
    body: TypedBody  # the body being lowered (an inlined call's while lowering it)
    builder: Builder
    values: dict[int, Lowered]  # LocalVar.id -> current value
    outputs: list[TensorHandle | TokenChain]  # the tokens control flow carries
    exit_counts: dict[A.Expr, int]  # how many `outputs` a loop carries
    print_chain: TokenChain | None
    pointer_chain: TokenChain | None
    raw_memory: bool
    globals: dict[str, GlobalVar]
    terminated: bool  # after `break` / `continue`: the rest of the region is unreachable
    assumptions: list[Assumption]
    bounds: BoundsLedger
    dim_origins: dict[int, Origin]
    index_origins: dict[int, Origin]
    minted: dict[int, frozenset[int]]
    choices: dict[int, list[PartitionValue]]
    block_ids: tuple[Value, Value, Value]
    loops: list[LoopFrame]
    conditional_depth: int

    def partition(
        self,
        handle: TensorHandle,
        tile: tuple[int, ...],
        padding: PaddingValue | None,
        span: A.Span,
        dim_map: tuple[int, ...] | None = None,
    ) -> Value: ...

    def region_scope(self) -> AbstractContextManager[None]: ...

    def conditional(self) -> AbstractContextManager[None]: ...

    def local_tensor(self, handle: TensorHandle) -> TensorHandle: ...

    def type_of(self, expr: A.Expr) -> SemType: ...

    def constant(self, value: int | float | bool, ty: SemType, span: A.Span) -> Value: ...

    def scalar(self, value: Lowered, span: A.Span) -> Value: ...

    def block(self, block: A.Block, trailing: type | None = None) -> Lowered: ...

    def expr(self, expr: A.Expr) -> Lowered: ...
