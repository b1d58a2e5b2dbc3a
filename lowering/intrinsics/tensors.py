"""Lowering of the tensor-access intrinsics (`parser.prelude.tensors`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lowering.bounds import place_checks
from lowering.contract import Quantity
from lowering.element_types import ir_tile_type
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tokens import advance, view_token
from lowering.ir.core import Value
from lowering.ir.ops_arith import AddI, MulI
from lowering.ir.ops_core import Broadcast, GetNumTileBlocks, Reshape
from lowering.ir.ops_memory import GetIndexSpaceShape, LoadViewTko, StoreViewTko
from lowering.ir.types import I32, TOKEN, PaddingValue, TileType
from lowering.lowered_values import Lowered, PartitionValue, TensorHandle
from parser import ast_nodes as A
from parser.entry_signature import ParamRole
from parser.types import Elem, MappedTy, PartitionTy, ScalarTy, ShapeTy, TileTy

I32_SCALAR = ScalarTy(Elem.I32)

if TYPE_CHECKING:
    from lowering.lower_kernel import KernelLowering


def _handle(ctx: KernelLowering, expr: A.Expr) -> TensorHandle:
    value = ctx.expr(expr)
    assert isinstance(value, TensorHandle)
    return value


def _block_index(ctx: KernelLowering, rank: int, span: A.Span) -> tuple:
    return ctx.block_ids[:rank]


def _load_tile_like(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    source = _handle(ctx, args[0])
    like = _handle(ctx, args[1])
    tile = like.param.tensor.shape
    part = ctx.partition(source, tile, PaddingValue.ZERO, call.span)
    result = ir_tile_type(ctx.type_of(call))
    op = ctx.builder.emit(
        LoadViewTko,
        tile=result,
        result_token=TOKEN,
        view=part,
        index=_block_index(ctx, len(tile), call.span),
        span=call.span,
    )
    return op.tile


def _store(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    out = _handle(ctx, args[0])
    value = ctx.expr(args[1])
    tile = out.param.tensor.shape
    part = ctx.partition(out, tile, None, call.span)
    op = ctx.builder.emit(
        StoreViewTko,
        result_token=TOKEN,
        tile=value,
        view=part,
        index=_block_index(ctx, len(tile), call.span),
        token=out.token,
        span=call.span,
    )
    out.token = op.result_token
    return None


def _load_output(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    out = _handle(ctx, args[0])
    tile = out.param.tensor.shape
    part = ctx.partition(out, tile, None, call.span)
    op = ctx.builder.emit(
        LoadViewTko,
        tile=ir_tile_type(ctx.type_of(call)),
        result_token=TOKEN,
        view=part,
        index=_block_index(ctx, len(tile), call.span),
        token=out.token,
        span=call.span,
    )
    out.token = op.result_token
    return op.tile


def _shape(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """An input's extents (dynamic ones as values); an output's or a tile's static shape."""
    value = ctx.expr(args[0])
    if isinstance(value, TensorHandle) and (
        value.param is None or value.param.role is ParamRole.INPUT
    ):
        return value.dims
    shape = ctx.type_of(call)
    assert isinstance(shape, ShapeTy)
    return shape.dims


def _block_ids(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.block_ids


def _broadcast(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    source = ctx.expr(args[0])
    ctx.expr(args[1])
    target = ctx.type_of(call)
    assert isinstance(target, TileTy)
    result = ir_tile_type(target)
    source_type = source.type  # type: ignore[union-attr]
    assert isinstance(source_type, TileType)
    if source_type == result:
        return source
    if source_type.rank != result.rank:
        ones = TileType(source_type.element, (1,) * result.rank)
        source = ctx.builder.emit(Reshape, result=ones, source=source, span=call.span).result
        if ones == result:
            return source
    return ctx.builder.emit(Broadcast, result=result, source=source, span=call.span).result


def _num_tile_blocks(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    op = ctx.builder.emit(GetNumTileBlocks, x=I32, y=I32, z=I32, span=call.span)
    return (op.x, op.y, op.z)


def _partition(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    handle = _handle(ctx, args[0])
    part_type = ctx.type_of(call)
    assert isinstance(part_type, PartitionTy)
    view = ctx.partition(handle, part_type.tile, PaddingValue.ZERO, call.span)
    return PartitionValue(handle, view, part_type.tile, mutable=False)


def _partition_mut(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """Tile index (slab-local i) maps to block_id * (S / R) + i on each axis."""
    handle = _handle(ctx, args[0])
    part_type = ctx.type_of(call)
    assert isinstance(part_type, PartitionTy)
    view = ctx.partition(handle, part_type.tile, None, call.span)
    if part_type.full:  # of a made tensor with a dynamic shape: the whole tensor
        return PartitionValue(handle, view, part_type.tile, mutable=True)
    offsets = []
    for axis, per_block in enumerate(part_type.grid):
        block = ctx.block_ids[axis]
        if per_block == 1:
            offsets.append(block)
            continue
        factor = ctx.constant(per_block, I32_SCALAR, call.span)
        offsets.append(
            ctx.builder.emit(MulI, result=I32, lhs=block, rhs=factor, span=call.span).result
        )
    return PartitionValue(handle, view, part_type.tile, mutable=True, offsets=tuple(offsets))


def partition_operand(ctx: KernelLowering, expr: A.Expr) -> PartitionValue:
    value = ctx.expr(expr)
    assert isinstance(value, PartitionValue)
    return value


def index_operands(ctx: KernelLowering, expr: A.Expr) -> tuple[Value, ...]:
    value = ctx.expr(expr)
    assert isinstance(value, tuple)
    return tuple(ctx.scalar(v, expr.span) for v in value)


def _partition_load(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    index = index_operands(ctx, args[1])
    place_checks(
        ctx,
        index,
        _tile_limits(part),
        _tile_counts(ctx, part, call.span),
        "partition load",
        call.span,
        part.view,
    )
    op = ctx.builder.emit(
        LoadViewTko,
        tile=ir_tile_type(ctx.type_of(call)),
        result_token=TOKEN,
        view=part.view,
        index=index,
        token=view_token(ctx, part, call.span),
        span=call.span,
    )
    advance(part, op.result_token)
    return op.tile


def _slab_limits(part_type: PartitionTy) -> tuple[Quantity, ...]:
    """A `partition_mut` index must stay inside this block's slab (else it races)."""
    return tuple(Quantity(constant=g) for g in part_type.grid)


def _tile_limits(part: PartitionValue) -> tuple[Quantity, ...]:
    """Tiles per axis of an input partition: a constant for a static extent."""
    limits = []
    for axis, (extent, tile) in enumerate(zip(part.handle.dims, part.tile, strict=True)):
        if isinstance(extent, int):
            limits.append(Quantity(constant=-(-extent // tile)))
        else:
            limits.append(Quantity(tile_count=(part.handle.index, axis, tile)))
    return tuple(limits)


def _tile_counts(ctx: KernelLowering, part: PartitionValue, span: A.Span):
    """Materializes a partition's tile count along an axis, for an in-kernel check."""

    def count(axis: int) -> Value:
        op = ctx.builder.emit(
            GetIndexSpaceShape, counts=(I32,) * len(part.tile), view=part.view, span=span
        )
        return op.counts[axis]

    return count


def _partition_store(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    tile = ctx.expr(args[1])
    local = index_operands(ctx, args[2])
    check_output_index(ctx, part, ctx.type_of(args[0]), local, "partition_mut store", call.span)
    store_to_output(ctx, part, tile, local, call.span)
    return None


def check_output_index(
    ctx: KernelLowering,
    part: PartitionValue,
    part_type: object,
    index: tuple[Value, ...],
    cause: str,
    span: A.Span,
) -> None:
    """Place the checks of an index into a `PartitionMut`: inside this block's slab, or,
    for a full view, inside the whole tensor's tiles."""
    assert isinstance(part_type, PartitionTy)
    if part_type.full:
        limits = _tile_limits(part)
        place_checks(ctx, index, limits, _tile_counts(ctx, part, span), cause, span, part.view)
        return
    grid = part_type.grid
    place_checks(
        ctx,
        index,
        _slab_limits(part_type),
        lambda axis: ctx.constant(grid[axis], I32_SCALAR, span),
        cause,
        span,
    )


def output_index(
    ctx: KernelLowering, part: PartitionValue, local: tuple[Value, ...], span: A.Span
) -> tuple[Value, ...]:
    """The tensor's tile index of a `PartitionMut` index (slab-local ones get the offset)."""
    if not part.offsets:
        return local
    return tuple(
        ctx.builder.emit(AddI, result=I32, lhs=offset, rhs=i, span=span).result
        for offset, i in zip(part.offsets, local, strict=True)
    )


def store_to_output(
    ctx: KernelLowering, part: PartitionValue, tile: Lowered, local: tuple[Value, ...], span: A.Span
) -> None:
    """A store through a `PartitionMut`, ordered after the output's earlier effects."""
    op = ctx.builder.emit(
        StoreViewTko,
        result_token=TOKEN,
        tile=tile,
        view=part.view,
        index=output_index(ctx, part, local, span),
        token=part.handle.token,
        span=span,
    )
    part.handle.token = op.result_token


def _mapped_store(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    handle = _handle(ctx, args[0])
    mapped = ctx.type_of(args[0])
    assert isinstance(mapped, MappedTy)
    tile = ctx.expr(args[1])
    index = index_operands(ctx, args[2])
    view = ctx.partition(handle, mapped.tile, None, call.span)
    op = ctx.builder.emit(
        StoreViewTko,
        result_token=TOKEN,
        tile=tile,
        view=view,
        index=index,
        token=handle.token,
        span=call.span,
    )
    handle.token = op.result_token
    return None


def _index_parts(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.expr(args[0])  # a minted index is its coordinates


def _num_tiles(ctx: KernelLowering, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    axis = ctx.body.consts[args[1]]
    assert isinstance(axis, int)
    view_type = ctx.type_of(args[0])
    if isinstance(view_type, MappedTy):
        handle = _handle(ctx, args[0])
        view = ctx.partition(handle, view_type.tile, None, call.span)
        op = ctx.builder.emit(
            GetIndexSpaceShape, counts=(I32,) * view_type.rank, view=view, span=call.span
        )
        return op.counts[axis]
    part = partition_operand(ctx, args[0])
    part_type = view_type
    assert isinstance(part_type, PartitionTy)
    if part.mutable and not part_type.full:
        return ctx.constant(part_type.grid[axis], I32_SCALAR, call.span)
    extent = part.handle.dims[axis]
    if isinstance(extent, int):  # a static extent: the count is a constant
        return ctx.constant(-(-extent // part.tile[axis]), I32_SCALAR, call.span)
    op = ctx.builder.emit(
        GetIndexSpaceShape, counts=(I32,) * len(part.tile), view=part.view, span=call.span
    )
    return op.counts[axis]


TENSOR_LOWERINGS: dict[str, IntrinsicLowering] = {
    "partition": _partition,
    "partition_mut": _partition_mut,
    "partition_load": _partition_load,
    "partition_store": _partition_store,
    "num_tiles": _num_tiles,
    "mapped_store": _mapped_store,
    "index_components": _index_parts,
    "index_coords": _index_parts,
    "get_tile_block_id": _block_ids,
    "get_num_tile_blocks": _num_tile_blocks,
    "load_tile_like": _load_tile_like,
    "store": _store,
    "load_output": _load_output,
    "shape": _shape,
    "tile_shape": _shape,
    "broadcast": _broadcast,
    "broadcast_tile": _broadcast,
}
