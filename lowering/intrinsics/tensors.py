"""Lowering of the tensor-access intrinsics (`parser.prelude.tensors`)."""

from __future__ import annotations

from collections.abc import Callable

from lowering.bounded_checks import check_composite_store
from lowering.bounds import place_checks
from lowering.contract import Assumption, AssumptionKind, Quantity
from lowering.element_types import ir_tile_type
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tokens import advance, view_token
from lowering.ir.attributes import LoadStoreHints, RoundingMode
from lowering.ir.core import Value
from lowering.ir.ops_arith import AddI, DivI, MulI
from lowering.ir.ops_core import Broadcast, GetNumTileBlocks, Reshape
from lowering.ir.ops_memory import GetIndexSpaceShape, LoadViewTko, StoreViewTko
from lowering.ir.types import I32, TOKEN, PaddingValue, TileType
from lowering.lower_persistent import swizzle
from lowering.lowered_expr import AxisOrigin, Lowered, PartitionValue, TensorHandle
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.entry_signature import ParamRole
from parser.types import (
    ArrayTy,
    CoordTy,
    Elem,
    MappedTy,
    PartitionTy,
    ScalarTy,
    ShapeTy,
    TileTy,
)

I32_SCALAR = ScalarTy(Elem.I32)


def _handle(ctx: LoweringContext, expr: A.Expr) -> TensorHandle:
    value = ctx.expr(expr)
    assert isinstance(value, TensorHandle)
    return value


def _block_index(ctx: LoweringContext, rank: int, span: A.Span) -> tuple:
    return ctx.block_ids[:rank]


def _load_tile_like(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
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


def _store(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
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


def _load_output(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
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


def _shape(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """An input's extents (dynamic ones as values); an output's or a tile's static shape."""
    value = ctx.expr(args[0])
    if isinstance(value, TensorHandle) and (
        value.param is None or value.param.role is ParamRole.INPUT
    ):
        return value.dims
    shape = ctx.type_of(call)
    assert isinstance(shape, ShapeTy)
    return shape.dims


def _block_ids(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.block_ids


def _broadcast(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
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


def _num_tile_blocks(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    op = ctx.builder.emit(GetNumTileBlocks, x=I32, y=I32, z=I32, span=call.span)
    return (op.x, op.y, op.z)


def _partition(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    handle = _handle(ctx, args[0])
    part_type = ctx.type_of(call)
    assert isinstance(part_type, PartitionTy)
    view = ctx.partition(handle, part_type.tile, PaddingValue.ZERO, call.span)
    return PartitionValue(handle, view, part_type.tile, mutable=False)


def _partition_permuted(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    handle = _handle(ctx, args[0])
    part_type = ctx.type_of(call)
    dim_map = ctx.type_of(args[2])
    assert isinstance(part_type, PartitionTy) and isinstance(dim_map, ArrayTy)
    assert dim_map.dims is not None
    ctx.expr(args[2])
    view = ctx.partition(handle, part_type.tile, PaddingValue.ZERO, call.span, dim_map.dims)
    return PartitionValue(handle, view, part_type.tile, mutable=False, dim_map=dim_map.dims)


def _partition_mut(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """Tile index (slab-local i) maps to block_id * ceil(S / R) + i on each axis."""
    handle = _handle(ctx, args[0])
    part_type = ctx.type_of(call)
    assert isinstance(part_type, PartitionTy)
    view = ctx.partition(handle, part_type.tile, None, call.span)
    if part_type.full:  # of a made tensor with a dynamic shape: the whole tensor
        return PartitionValue(handle, view, part_type.tile, mutable=True)
    # an output's slab (its `-1` extents given at launch); a made tensor's static shape
    slabs = handle.slab or part_type.slab
    offsets, counts = [], []
    for axis, tile in enumerate(part_type.tile):
        per_block = _slab_tiles(ctx, handle, slabs[axis], axis, tile, call.span)
        counts.append(per_block)
        block = ctx.block_ids[axis]
        if per_block == 1:
            offsets.append(block)
            continue
        factor = ctx.scalar(per_block, call.span)
        offsets.append(
            ctx.builder.emit(MulI, result=I32, lhs=block, rhs=factor, span=call.span).result
        )
    return PartitionValue(
        handle,
        view,
        part_type.tile,
        mutable=True,
        offsets=tuple(offsets),
        slab_tiles=tuple(counts),
    )


def _slab_tiles(
    ctx: LoweringContext,
    handle: TensorHandle,
    slab: int | Value,
    axis: int,
    tile: int,
    span: A.Span,
) -> int | Value:
    """Sub-tiles of `tile` per block on `axis`. A static slab S: ceil(S / tile), the last
    one overhanging the slab where tile does not divide S, which is safe only with no other
    block's slab after it (past the tensor's end the store is masked): one block on that
    axis, checked at launch. A slab given at launch: S / tile, with tile dividing S (the
    host checks that too)."""
    param = handle.index
    if isinstance(slab, int):
        if slab % tile:
            cause = f"`partition_mut` sub-tiles overhang the block's tile on axis {axis}"
            ctx.bounds.hoist(Quantity(grid_axis=axis), Quantity(constant=1), cause)
        return -(-slab // tile)
    if tile == 1:
        ctx.bounds.known[slab.id] = Quantity(slab_tiles=(param, axis, 1))
        return slab
    assumption = Assumption(param, AssumptionKind.SLAB_DIV, axis, tile)
    if assumption not in ctx.assumptions:
        ctx.assumptions.append(assumption)
        ctx.bounds.hoisted += 1
    divisor = ctx.constant(tile, I32_SCALAR, span)
    count = ctx.builder.emit(
        DivI, result=I32, lhs=slab, rhs=divisor, rounding=RoundingMode.ZERO, span=span
    ).result
    ctx.bounds.known[count.id] = Quantity(slab_tiles=(param, axis, tile))
    return count


def partition_operand(ctx: LoweringContext, expr: A.Expr) -> PartitionValue:
    value = ctx.expr(expr)
    assert isinstance(value, PartitionValue)
    return value


def index_operands(ctx: LoweringContext, expr: A.Expr) -> tuple[Value, ...]:
    value = ctx.expr(expr)
    assert isinstance(value, tuple)
    return tuple(ctx.scalar(v, expr.span) for v in value)


def _partition_load(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return checked_load(ctx, partition_operand(ctx, args[0]), args[1], call)


def _load_tile(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`x.partition(shape).load(idx)`, with the same check."""
    handle = _handle(ctx, args[0])
    tile = ctx.type_of(call)
    assert isinstance(tile, TileTy)
    view = ctx.partition(handle, tile.shape, PaddingValue.ZERO, call.span)
    part = PartitionValue(handle, view, tile.shape, mutable=False)
    return checked_load(ctx, part, args[2], call)


def checked_load(
    ctx: LoweringContext,
    part: PartitionValue,
    index_expr: A.Expr,
    call: A.Call | A.MethodCall,
    hints: tuple[LoadStoreHints, ...] = (),
) -> Lowered:
    """A load through a read-only partition at `index_expr`, its index checked in bounds
    (`hints`: `load_pipelined`'s latency)."""
    index = index_operands(ctx, index_expr)
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
        hints=hints,
        view=part.view,
        index=index,
        token=view_token(ctx, part, call.span),
        span=call.span,
    )
    advance(part, op.result_token)
    return op.tile


def _slab_limits(part: PartitionValue) -> tuple[Quantity, ...]:
    """A `partition_mut` index must stay inside this block's slab (else it races)."""
    param = part.handle.index
    return tuple(
        Quantity(constant=count)
        if isinstance(count, int)
        else Quantity(slab_tiles=(param, axis, part.tile[axis]))
        for axis, count in enumerate(part.slab_tiles)
    )


def _tile_limits(part: PartitionValue) -> tuple[Quantity, ...]:
    """Tiles per axis of an input partition: a constant for a static extent."""
    limits = []
    for axis, tile in enumerate(part.tile):
        tensor_axis = part.tensor_axis(axis)
        extent = part.handle.dims[tensor_axis]
        if isinstance(extent, int):
            limits.append(Quantity(constant=-(-extent // tile)))
        else:
            limits.append(Quantity(tile_count=(part.handle.index, tensor_axis, tile)))
    return tuple(limits)


def _tile_counts(ctx: LoweringContext, part: PartitionValue, span: A.Span):
    """Materializes a partition's tile count along an axis, for an in-kernel check."""

    def count(axis: int) -> Value:
        op = ctx.builder.emit(
            GetIndexSpaceShape, counts=(I32,) * len(part.tile), view=part.view, span=span
        )
        return op.counts[axis]

    return count


def _partition_store(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    tile = ctx.expr(args[1])
    local = index_operands(ctx, args[2])
    check_output_index(ctx, part, ctx.type_of(args[0]), local, "partition_mut store", call.span)
    store_to_output(ctx, part, tile, local, call.span)
    return None


def check_output_index(
    ctx: LoweringContext,
    part: PartitionValue,
    part_type: object,
    index: tuple[Value, ...],
    cause: str,
    span: A.Span,
) -> None:
    """Place the checks of an index into a `PartitionMut`: inside this block's slab, or,
    for a full view, inside the whole tensor's tiles."""
    assert isinstance(part_type, PartitionTy)
    limits, counts, source = access_limits(ctx, part, part_type, span)
    place_checks(ctx, index, limits, counts, cause, span, source)


def access_limits(
    ctx: LoweringContext, part: PartitionValue, part_type: PartitionTy, span: A.Span
) -> tuple[tuple[Quantity, ...], Callable[[int], Value], Value | None]:
    """What an index into `part` must stay below on each axis: its tiles (a slab's, for a
    `partition_mut` view), how to count them in the kernel, and the view they are read
    from (None when they are constants)."""
    if part_type.mutable and not part_type.full:
        return (
            _slab_limits(part),
            lambda axis: ctx.scalar(part.slab_tiles[axis], span),
            None,
        )
    return _tile_limits(part), _tile_counts(ctx, part, span), part.view


def axis_origin(part: PartitionValue, part_type: PartitionTy, axis: int) -> AxisOrigin:
    """The brand of `num_tiles(&part, axis)`."""
    slab = part_type.mutable and not part_type.full
    return AxisOrigin(part.handle.index, part.tensor_axis(axis), part.tile[axis], slab)


def output_index(
    ctx: LoweringContext, part: PartitionValue, local: tuple[Value, ...], span: A.Span
) -> tuple[Value, ...]:
    """The tensor's tile index of a `PartitionMut` index (slab-local ones get the offset)."""
    if not part.offsets:
        return local
    return tuple(
        ctx.builder.emit(AddI, result=I32, lhs=offset, rhs=i, span=span).result
        for offset, i in zip(part.offsets, local, strict=True)
    )


def store_to_output(
    ctx: LoweringContext,
    part: PartitionValue,
    tile: Lowered,
    local: tuple[Value, ...],
    span: A.Span,
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


def _mapped_store(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    handle = _handle(ctx, args[0])
    mapped = ctx.type_of(args[0])
    assert isinstance(mapped, MappedTy)
    tile = ctx.expr(args[1])
    index = index_operands(ctx, args[2])
    if isinstance(ctx.type_of(args[2]), CoordTy):  # composite: proved per component
        coord = args[2].args[0] if isinstance(args[2], A.Call) and args[2].args else args[2]
        spans = (
            tuple(e.span for e in coord.elements)
            if isinstance(coord, A.TupleExpr) and len(coord.elements) == len(index)
            else (args[2].span,) * len(index)
        )
        check_composite_store(ctx, index, handle.index, mapped, spans)
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


def _swizzled_index(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """The schedule's index of a flat tile id, unbranded (the caller vouches for it)."""
    mapped = ctx.type_of(args[0])
    if isinstance(mapped, MappedTy):
        groups, operands = mapped.map_shape, args[1:]
    else:
        assert isinstance(call, A.Call) and isinstance(call.function, A.PathExpr)
        groups = ctx.body.consts[call.function.generic_args[1]]  # type: ignore[index,assignment]
        operands = args
    tile_id, rows, cols = (ctx.scalar(ctx.expr(a), a.span) for a in operands)
    return swizzle(ctx, tile_id, (rows, cols), tuple(groups), call.span)  # type: ignore[arg-type]


def _index_parts(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.expr(args[0])  # a minted index is its coordinates


def _num_tiles(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """The tile count, branded with the axis it counts (`with_bounds`, `for i in 0..n`)."""
    axis = ctx.body.consts[args[1]]
    assert isinstance(axis, int)
    view_type = ctx.type_of(args[0])
    if isinstance(view_type, MappedTy):
        handle = _handle(ctx, args[0])
        view = ctx.partition(handle, view_type.tile, None, call.span)
        op = ctx.builder.emit(
            GetIndexSpaceShape, counts=(I32,) * view_type.rank, view=view, span=call.span
        )
        count = op.counts[axis]
        ctx.dim_origins[count.id] = AxisOrigin(handle.index, axis, view_type.tile[axis])
        return count
    part = partition_operand(ctx, args[0])
    assert isinstance(view_type, PartitionTy)
    count = _tile_count(ctx, part, view_type, axis, call.span)
    ctx.dim_origins[count.id] = axis_origin(part, view_type, axis)
    return count


def _tensor_extents(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    handle = _handle(ctx, args[0])
    return tuple(ctx.scalar(d, call.span) for d in handle.dims)


def _index_space(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """Tiles per axis, each as `num_tiles(&p, axis)` would count it (and brand it)."""
    part = partition_operand(ctx, args[0])
    part_type = ctx.type_of(args[0])
    assert isinstance(part_type, PartitionTy)
    counts = []
    for axis in range(len(part.tile)):
        count = _tile_count(ctx, part, part_type, axis, call.span)
        ctx.dim_origins[count.id] = axis_origin(part, part_type, axis)
        counts.append(count)
    return tuple(counts)


def _tile_count(
    ctx: LoweringContext, part: PartitionValue, part_type: PartitionTy, axis: int, span: A.Span
) -> Value:
    if part.mutable and not part_type.full:
        return ctx.scalar(part.slab_tiles[axis], span)
    extent = part.handle.dims[part.tensor_axis(axis)]
    if isinstance(extent, int):  # a static extent: the count is a constant
        return ctx.constant(-(-extent // part.tile[axis]), I32_SCALAR, span)
    op = ctx.builder.emit(
        GetIndexSpaceShape, counts=(I32,) * len(part.tile), view=part.view, span=span
    )
    return op.counts[axis]


TENSOR_LOWERINGS: dict[str, IntrinsicLowering] = {
    "partition": _partition,
    "partition_permuted": _partition_permuted,
    "partition_mut": _partition_mut,
    "partition_load": _partition_load,
    "load_tile": _load_tile,
    "partition_store": _partition_store,
    "num_tiles": _num_tiles,
    "get_tensor_shape": _tensor_extents,
    "get_index_space_shape": _index_space,
    "mapped_store": _mapped_store,
    "swizzle_partition_index_2d": _swizzled_index,
    "mapped_index": _swizzled_index,
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
