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
    # outputs: the tile each block writes, an axis given at launch (`-1`) as a value
    slab: tuple[int | Value, ...] = ()
    local_id: int = 0

    @property
    def index(self) -> int:
        """The parameter index; a negative id for a tensor made in the kernel (whose
        extents the host does not know)."""
        return self.param.index if self.param is not None else self.local_id


@dataclass(frozen=True)
class AxisOrigin:
    """A tile count that is exactly a partition axis's: `num_tiles(&p, axis)` (of the
    tensor parameter `param` cut into tiles of `tile` on `axis`; `slab`: of this block's
    `partition_mut` slab), or an index walked over one."""

    param: int
    axis: int
    tile: int
    slab: bool = False


@dataclass(frozen=True)
class ValueOrigin:
    """A `Dim` made from a value (`Dim::new(n)`, `n.into_dim()`): its own brand."""

    value: int  # the value's id


Origin = AxisOrigin | ValueOrigin


@dataclass(frozen=True)
class DimValue:
    """A `Dim`: an i32 tile count and the brand its iterations carry."""

    value: Value
    origin: Origin


@dataclass(frozen=True)
class PartitionValue:
    """A tiled view: of an input (read-only), or of this block's output slab (`offsets`
    turn the slab-local tile index into the tensor's tile index). `bounds`: the `Dim`
    brands `with_bounds` tied its axes to (a bounded partition)."""

    handle: TensorHandle
    view: Value
    tile: tuple[int, ...]
    mutable: bool
    offsets: tuple[Value, ...] = ()
    bounds: tuple[Origin, ...] | None = None
    dim_map: tuple[int, ...] = ()  # `partition_permuted`: logical axis a is tensor axis [a]
    slab_tiles: tuple[int | Value, ...] = ()  # `partition_mut`: its tiles per axis in the slab
    token: Value | None = None  # `make_partition_view`'s token: its reads come after it

    def tensor_axis(self, axis: int) -> int:
        """The tensor axis logical axis `axis` walks."""
        return self.dim_map[axis] if self.dim_map else axis


@dataclass
class TokenChain:
    """A token ordering effects that no tensor owns (the kernel's prints, in program
    order); loops and `if`s carry it like an output's token (it sits in `outputs`)."""

    token: Value


# A lowered expression: an SSA value, a tensor, a compile-time int (a shape entry), a mode
# marker, a tuple of those (tuples, arrays, shapes), or None (unit).
Lowered = Union[
    Value, TensorHandle, PartitionValue, DimValue, int, MarkerTy, tuple["Lowered", ...], None
]
