"""What a prelude entry is: spellings, receiver kind, Rust signature, typing rule."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from parser import ast_nodes as A
from parser.diagnostics import Diagnostic
from parser.spans import Span
from parser.types import (
    DimTy,
    GlobalTy,
    MappedTy,
    PartitionIndexTy,
    PartitionTy,
    PointerTileTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TensorTy,
    TileTy,
)


class Receiver(enum.Enum):
    TENSOR = "tensor"  # &Tensor or &mut Tensor
    TILE = "tile"
    SCALAR = "scalar"
    SHAPE = "shape"
    PARTITION = "partition"  # methods of every partition
    PARTITION_MUT = "partition_mut"  # methods only a `PartitionMut` has (looked up first)
    MAPPED = "mapped"
    INDEX = "index"
    POINTER_TILE = "pointer_tile"
    DIM = "dim"
    BOUNDED_PARTITION = "bounded_partition"  # `with_bounds` views: indexed by `coord((..))`
    BOUNDED_PARTITION_MUT = "bounded_partition_mut"
    GLOBAL = "global"  # a module `static` `Global<E, {[]}>`


class CallTyper(Protocol):
    """What a typing rule may ask of the type checker."""

    span: Span
    args: tuple[A.Expr, ...]
    expected: SemType | None  # the result type the context asks for, if any
    generic_args: tuple[A.GenericArg, ...]  # the turbofish

    def arg(self, index: int, expected: SemType | None = None) -> SemType | None: ...

    def constant(self, index: int) -> object:
        """The compile-time value of an argument, or None when it is not constant."""
        ...

    def binding(self, index: int) -> object:
        """The local variable an argument names (a `LocalVar`), or None."""
        ...

    def report(self, diagnostic: Diagnostic) -> None: ...


TypingRule = Callable[[CallTyper], SemType | None]


@dataclass(frozen=True)
class Intrinsic:
    id: str
    signature: str
    arities: tuple[int, ...]  # accepted argument counts, receiver included
    rule: TypingRule | None  # None: part of the DSL, not implemented yet
    functions: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    receiver: Receiver | None = None
    unsafe: bool = False  # an `unsafe fn`: calls need an `unsafe {}` block or `unsafe fn` (E0133)
    # reads or writes memory that no bounds check covers, yet safe in cuTile Rust (which
    # calls it outside `unsafe`): accepted anywhere, with a warning outside `unsafe`, and
    # the kernel's contract is marked unchecked (the host needs `allow_unchecked=True`)
    raw_access: bool = False


def receiver_kind(ty: SemType) -> Receiver | None:
    if (isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy)) or isinstance(ty, TensorTy):
        return Receiver.TENSOR
    if isinstance(ty, TileTy):
        return Receiver.TILE
    if isinstance(ty, ScalarTy):
        return Receiver.SCALAR
    if isinstance(ty, ShapeTy):
        return Receiver.SHAPE
    if isinstance(ty, PartitionTy) and ty.bounded:
        return Receiver.BOUNDED_PARTITION_MUT if ty.mutable else Receiver.BOUNDED_PARTITION
    if isinstance(ty, PartitionTy):
        return Receiver.PARTITION_MUT if ty.mutable else Receiver.PARTITION
    if isinstance(ty, MappedTy):
        return Receiver.MAPPED
    if isinstance(ty, PartitionIndexTy):
        return Receiver.INDEX
    if isinstance(ty, PointerTileTy):
        return Receiver.POINTER_TILE
    if isinstance(ty, DimTy):
        return Receiver.DIM
    if isinstance(ty, GlobalTy):
        return Receiver.GLOBAL
    return None
