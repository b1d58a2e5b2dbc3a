"""A kernel skeleton over tensors of any rank and element type, for op-family tests.

`start_view_kernel(*tiles)` declares one tensor per tile type (`ptr, extents..., strides...`
parameters, every extent dynamic, the last stride 1), builds its tensor and partition
views, and leaves the builder open for the op under test.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir import ops_control as control
from lowering.ir import ops_core as core
from lowering.ir import ops_memory as memory
from lowering.ir.attributes import DivBy
from lowering.ir.core import Builder, Function, Module, Op, Region, Value
from lowering.ir.types import (
    I32,
    TOKEN,
    ElementType,
    PartitionViewType,
    PointerType,
    TensorViewType,
    TileType,
)


@dataclass(frozen=True)
class ViewKernel:
    """A kernel over tensors of any rank: tensor k is read/written as tiles `tiles[k]`.

    Each tensor takes `ptr, extents..., strides...` parameters (all extents dynamic, the
    last stride 1); tile index k of the block is `(block id, 0, ..., 0)`.
    """

    b: Builder
    params: tuple[Value, ...]
    token: Value
    views: tuple[Value, ...]
    tensors: tuple[Value, ...]
    tiles: tuple[TileType, ...]
    block: Value
    zero: Value

    def index(self, k: int) -> tuple[Value, ...]:
        return (self.block,) + (self.zero,) * (self.tiles[k].rank - 1)

    def load(self, k: int, **fields: object) -> Value:
        op = self.b.emit(
            memory.LoadViewTko,
            tile=self.tiles[k],
            result_token=TOKEN,
            view=self.views[k],
            index=self.index(k),
            token=self.token,
            **fields,
        )
        return op.tile

    def store(self, k: int, tile: Value, **fields: object) -> Value:
        op = self.b.emit(
            memory.StoreViewTko,
            result_token=TOKEN,
            tile=tile,
            view=self.views[k],
            index=self.index(k),
            token=self.token,
            **fields,
        )
        return op.result_token

    def const(self, ty: TileType, value: float | int) -> Value:
        return self.b.emit(core.Constant, result=ty, values=(value,)).result

    def combiner(self, op_class: type[Op], element: ElementType, **attrs: object) -> Region:
        """A reduce/scan body `(lhs, rhs) -> op_class(lhs, rhs)` on rank-0 tiles."""
        scalar = TileType(element)

        def fill(args: tuple[Value, ...]) -> None:
            lhs, rhs = args
            combined = self.b.emit(op_class, result=scalar, lhs=lhs, rhs=rhs, **attrs)
            self.b.emit(control.Yield, values=combined.results)

        return self.b.region([scalar, scalar], fill)

    def finish(self, name: str) -> Module:
        self.b.emit(core.Return)
        return Module((Function(name, self.params, self.b.finish(self.params)),))


def tensor_view_type(tile: TileType) -> TensorViewType:
    assert isinstance(tile.element, ElementType)
    return TensorViewType(tile.element, (None,) * tile.rank, (None,) * (tile.rank - 1) + (1,))


def start_view_kernel(*tiles: TileType) -> ViewKernel:
    """Parameters, views and block id for one tensor per tile type in `tiles`."""
    b = Builder()
    groups = []
    for tile in tiles:
        assert isinstance(tile.element, ElementType)
        ptr = b.value(TileType(PointerType(tile.element)))
        groups.append((ptr, tuple(b.value(I32) for _ in range(2 * tile.rank - 1))))
    params = tuple(v for ptr, dims in groups for v in (ptr, *dims))
    token = b.emit(core.MakeToken, result=TOKEN).result
    tensors, views = [], []
    for tile, (ptr, dims) in zip(tiles, groups, strict=True):
        base = b.emit(core.Assume, result=ptr.type, predicate=DivBy(16), value=ptr).result
        view = b.emit(
            memory.MakeTensorView,
            result=tensor_view_type(tile),
            base=base,
            dynamic_shape=dims[: tile.rank],
            dynamic_strides=dims[tile.rank :],
        ).result
        tensors.append(view)
        part = PartitionViewType(tile.shape, tensor_view_type(tile), tuple(range(tile.rank)))
        views.append(b.emit(memory.MakePartitionView, result=part, tensor_view=view).result)
    block = b.emit(core.GetTileBlockId, x=I32, y=I32, z=I32).x
    zero = b.emit(core.Constant, result=I32, values=(0,)).result
    return ViewKernel(b, params, token, tuple(views), tuple(tensors), tiles, block, zero)
