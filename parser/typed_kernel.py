"""The product of type checking: the entry, its signature, and facts about every node.

Facts live in a `TypedBody` per checked body: the entry's own, and one for every inlined
device-function call (a device function called twice is checked twice, once per call,
with that call's types). Lowering reads only these facts.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from parser import ast_nodes as A
from parser.entry_signature import EntrySignature
from parser.spans import Span
from parser.types import ConstValue, GenericValue, SemType

_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class LocalVar:
    """One binding: a parameter, a `let` variable (shadowing makes a new one), a loop
    variable, or a block-level `const` (then `const_value` is set). An immutable `let`
    of a compile-time scalar (`let zero = T::ZERO;`) keeps it in `known`: it folds
    wherever a constant is needed, and is otherwise an ordinary variable."""

    name: str
    type: SemType
    span: Span
    mutable: bool = False
    param_index: int | None = None
    const_value: ConstValue | None = None
    id: int = field(default_factory=lambda: next(_ids))
    known: ConstValue | None = None

    @property
    def folds_to(self) -> ConstValue | None:
        return self.const_value if self.const_value is not None else self.known


@dataclass(frozen=True)
class ResolvedCall:
    intrinsic: str  # prelude id, e.g. "load_tile_like"
    args: tuple[A.Expr, ...]  # receiver first for method calls


Construct = A.ForExpr | A.WhileExpr | A.LoopExpr | A.IfExpr


@dataclass
class TypedBody:
    """What type checking learned about one body; read-only once checking is done."""

    expr_types: dict[A.Expr, SemType] = field(default_factory=dict)
    names: dict[A.PathExpr, LocalVar] = field(default_factory=dict)
    consts: dict[A.Expr, ConstValue] = field(default_factory=dict)  # compile-time values
    lets: dict[A.Let, tuple[LocalVar, ...]] = field(default_factory=dict)
    assigns: dict[A.Assign, LocalVar] = field(default_factory=dict)
    calls: dict[A.Call | A.MethodCall, ResolvedCall] = field(default_factory=dict)
    inlined: dict[A.Call | A.MethodCall, InlinedCall] = field(default_factory=dict)
    folded_ifs: dict[A.IfExpr, bool] = field(default_factory=dict)  # compile-time conditions
    # outer mutable variables assigned inside a loop or runtime `if`, in first-seen order:
    carried: dict[Construct, tuple[LocalVar, ...]] = field(default_factory=dict)
    loop_vars: dict[A.ForExpr, LocalVar | None] = field(default_factory=dict)
    # `if c { ..; return; }` at the top of the entry body: the rest of the body is its else
    guards: set[A.IfExpr] = field(default_factory=set)
    # `break` / `continue`: the loop each one leaves or restarts
    exits: dict[A.BreakExpr | A.ContinueExpr, A.ForExpr | A.WhileExpr | A.LoopExpr] = field(
        default_factory=dict
    )
    # `for idx in z.iter_indices()`: the loop and the mapped partition's binding
    persistent_loops: dict[A.ForExpr, LocalVar] = field(default_factory=dict)
    # `z.iter_indices_with(&w)`: the partition `w` whose stores also accept the indices
    persistent_partners: dict[A.ForExpr, LocalVar] = field(default_factory=dict)
    # `for j in d` over a `Dim`: walks 0..d
    dim_loops: set[A.ForExpr] = field(default_factory=set)


@dataclass(frozen=True)
class InlinedCall:
    """A device-function call (or a method / associated function of a module `impl`),
    checked with this call's argument types; `args` are the argument expressions in
    parameter order (a method's receiver first)."""

    function: A.Function
    params: tuple[LocalVar, ...]
    body: TypedBody
    generics: Mapping[str, GenericValue]
    args: tuple[A.Expr, ...] = ()


@dataclass(frozen=True)
class TypedKernel:
    function: A.Function
    signature: EntrySignature
    generics: Mapping[str, GenericValue]
    consts: Mapping[str, ConstValue]
    params: tuple[LocalVar, ...]
    body: TypedBody

    @property
    def expr_types(self) -> dict[A.Expr, SemType]:
        return self.body.expr_types

    @property
    def names(self) -> dict[A.PathExpr, LocalVar]:
        return self.body.names

    @property
    def lets(self) -> dict[A.Let, tuple[LocalVar, ...]]:
        return self.body.lets

    @property
    def calls(self) -> dict[A.Call | A.MethodCall, ResolvedCall]:
        return self.body.calls
