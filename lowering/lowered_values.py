"""What an expression lowers to: SSA values, tensor handles, compile-time ints, tuples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from lowering.ir.core import Value
from parser.entry_signature import EntryParam
from parser.types import MarkerTy


@dataclass
class TensorHandle:
    """A tensor inside the kernel: a parameter, or one made by `make_tensor_view` (`param`
    None, `local_id` negative). Its view, extents, and, for outputs and made tensors, its
    token (inputs have none: nothing writes them)."""

    param: EntryParam | None
    view: Value
    dims: tuple[int | Value, ...]  # static extents as ints, dynamic ones as values
    token: Value | None  # the last memory effect through this tensor (written ones only)
    partitions: dict[tuple[object, ...], Value] = field(default_factory=dict)
    local_id: int = 0

    @property
    def index(self) -> int:
        """The parameter index; a negative id for a tensor made in the kernel (whose
        extents the host does not know)."""
        return self.param.index if self.param is not None else self.local_id


@dataclass(frozen=True)
class PartitionValue:
    """A tiled view: of an input (read-only), or of this block's output slab (`offsets`
    turn the slab-local tile index into the tensor's tile index)."""

    handle: TensorHandle
    view: Value
    tile: tuple[int, ...]
    mutable: bool
    offsets: tuple[Value, ...] = ()
    token: Value | None = None  # `make_partition_view`'s token: its reads come after it


@dataclass
class TokenChain:
    """A token ordering effects that no tensor owns (the kernel's prints, in program
    order); loops and `if`s carry it like an output's token (it sits in `outputs`)."""

    token: Value


# A lowered expression: an SSA value, a tensor, a compile-time int (a shape entry), a mode
# marker, a tuple of those (tuples, arrays, shapes), or None (unit).
Lowered = Union[Value, TensorHandle, PartitionValue, int, MarkerTy, tuple["Lowered", ...], None]
