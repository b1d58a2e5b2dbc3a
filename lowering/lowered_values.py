"""What an expression lowers to: SSA values, tensor handles, compile-time ints, tuples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from lowering.ir.core import Value
from parser.entry_signature import EntryParam
from parser.types import MarkerTy


@dataclass
class TensorHandle:
    """A tensor parameter inside the kernel: its view, extents, and for outputs its token."""

    param: EntryParam
    view: Value
    dims: tuple[int | Value, ...]  # static extents as ints, dynamic ones as values
    token: Value | None  # outputs only: the last memory effect through this tensor
    partitions: dict[tuple[object, ...], Value] = field(default_factory=dict)


@dataclass(frozen=True)
class PartitionValue:
    """A tiled view: of an input (read-only), or of this block's output slab (`offsets`
    turn the slab-local tile index into the tensor's tile index)."""

    handle: TensorHandle
    view: Value
    tile: tuple[int, ...]
    mutable: bool
    offsets: tuple[Value, ...] = ()


@dataclass
class TokenChain:
    """A token ordering effects that no tensor owns (the kernel's prints, in program
    order); loops and `if`s carry it like an output's token (it sits in `outputs`)."""

    token: Value


# A lowered expression: an SSA value, a tensor, a compile-time int (a shape entry), a mode
# marker, a tuple of those (tuples, arrays, shapes), or None (unit).
Lowered = Union[Value, TensorHandle, PartitionValue, int, MarkerTy, tuple["Lowered", ...], None]
