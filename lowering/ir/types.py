"""Types of our tile IR; they mirror CUDA Tile IR's type system one to one.

All types are frozen and hashable, so the bytecode writer can intern them and tests can
compare them. `str(t)` prints the MLIR-like spelling used by `tileirdisasm`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Union

from client_stubs.element_table import IR_ELEMENT_BY_NAME, IR_ELEMENTS, IRElement


class _ElementTypeBase(enum.Enum):
    """Scalar element types (Tile IR has no signedness: ops carry it); the members are the
    rows of `client_stubs.element_table.IR_ELEMENTS` (`ElementType.F32`, ...)."""

    @property
    def spec(self) -> IRElement:
        return IR_ELEMENT_BY_NAME[self.value]

    @property
    def is_float(self) -> bool:
        return self.spec.is_float

    @property
    def bits(self) -> int:
        return self.spec.bits

    @property
    def bytes(self) -> int:
        """Storage size in memory (i1 is one byte)."""
        return self.spec.storage_bytes

    def __str__(self) -> str:
        return self.value


ElementType = _ElementTypeBase(
    "ElementType",
    [(e.name.upper(), e.name) for e in IR_ELEMENTS],
    module=__name__,
    qualname="ElementType",
)


@dataclass(frozen=True)
class PointerType:
    pointee: ElementType

    def __str__(self) -> str:
        return f"ptr<{self.pointee}>"


@dataclass(frozen=True)
class TileType:
    """`tile<SHAPE x E>`; rank 0 is a scalar. Every SSA value of data is a tile."""

    element: ElementType | PointerType
    shape: tuple[int, ...] = ()

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tile<{dims}{self.element}>"


DYNAMIC = None  # a dynamic extent or stride in a tensor view


@dataclass(frozen=True)
class TensorViewType:
    """A typed view of global memory; `None` marks a dynamic extent or stride."""

    element: ElementType
    shape: tuple[int | None, ...]
    strides: tuple[int | None, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        dims = "".join(f"{'?' if d is None else d}x" for d in self.shape)
        strides = ",".join("?" if s is None else str(s) for s in self.strides)
        return f"tensor_view<{dims}{self.element}, strides=[{strides}]>"


class PaddingValue(enum.Enum):
    ZERO = 0
    NEG_ZERO = 1
    NAN = 2
    POS_INF = 3
    NEG_INF = 4


@dataclass(frozen=True)
class PartitionViewType:
    """A tensor view cut into tiles of `tile_shape`; reads past the end give `padding`."""

    tile_shape: tuple[int, ...]
    tensor_view: TensorViewType
    dim_map: tuple[int, ...]
    padding: PaddingValue | None = None

    def __str__(self) -> str:
        tile = ",".join(str(d) for d in self.tile_shape)
        pad = "" if self.padding is None else f", padding={self.padding.name.lower()}"
        return f"partition_view<tile=({tile}){pad}, {self.tensor_view}>"


@dataclass(frozen=True)
class GatherScatterViewType:
    """A tensor view read in tiles whose `sparse_dim` coordinates come from an index tile
    (bytecode 13.3+)."""

    tile_shape: tuple[int, ...]
    tensor_view: TensorViewType
    sparse_dim: int
    padding: PaddingValue | None = None

    def __str__(self) -> str:
        tile = "x".join(str(d) for d in self.tile_shape)
        return (
            f"gather_scatter_view<tile=({tile}), {self.tensor_view}, sparse_dim={self.sparse_dim}>"
        )


@dataclass(frozen=True)
class StridedViewType:
    """A tensor view read in tiles that step `traversal_strides` tiles per index (13.3+)."""

    tile_shape: tuple[int, ...]
    traversal_strides: tuple[int, ...]
    tensor_view: TensorViewType
    dim_map: tuple[int, ...]
    padding: PaddingValue | None = None

    def __str__(self) -> str:
        tile = "x".join(str(d) for d in self.tile_shape)
        strides = ",".join(map(str, self.traversal_strides))
        dims = ",".join(map(str, self.dim_map))
        return (
            f"strided_view<tile=({tile}), traversal_strides=[{strides}], {self.tensor_view}, "
            f"dim_map=[{dims}]>"
        )


@dataclass(frozen=True)
class TokenType:
    def __str__(self) -> str:
        return "token"


IRType = Union[
    TileType, TensorViewType, PartitionViewType, GatherScatterViewType, StridedViewType, TokenType
]

TOKEN = TokenType()
I1 = TileType(ElementType.I1)
I32 = TileType(ElementType.I32)
I32_MAX = 2**31 - 1
