"""Lowering of the `Dim` API (`parser.prelude.dims`): a `Dim` is its i32 value plus a
brand (`DimValue`); `with_bounds` places its binding checks and records the brands of
its axes; bounded loads and stores prove their coordinates by brand
(`lowering.bounded_checks`) and then access the view like any partition."""

from __future__ import annotations

from dataclasses import replace

from lowering.bounded_checks import place_binding_check, place_bounded_checks
from lowering.element_types import ir_tile_type
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import (
    access_limits,
    index_operands,
    partition_operand,
    store_to_output,
)
from lowering.intrinsics.views import load_hints
from lowering.ir.core import Value
from lowering.ir.ops_memory import LoadViewTko
from lowering.ir.types import TOKEN
from lowering.lowered_expr import DimValue, Lowered, PartitionValue, ValueOrigin
from lowering.lowering_context import LoweringContext
from lowering.rejection import Rejected
from parser import ast_nodes as A
from parser import messages
from parser.types import PartitionTy


def _scalar(ctx: LoweringContext, expr: A.Expr) -> Value:
    value = ctx.expr(expr)
    if isinstance(value, DimValue):
        return value.value
    return ctx.scalar(value, expr.span)


def _dim_new(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    value = _scalar(ctx, args[0])
    return DimValue(value, ValueOrigin(value.id))


def _into_dim(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`n.into_dim()` keeps the brand of a `num_tiles` count; any other value gets its own."""
    lowered = ctx.expr(args[0])
    if isinstance(lowered, DimValue):
        return lowered
    value = ctx.scalar(lowered, args[0].span)
    return DimValue(value, ctx.dim_origins.get(value.id, ValueOrigin(value.id)))


def _dim_value(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return _scalar(ctx, args[0])


def _coord(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return index_operands(ctx, args[0])


def _with_bounds(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    part_type = ctx.type_of(args[0])
    assert isinstance(part_type, PartitionTy)
    bounds = ctx.expr(args[1])
    assert isinstance(bounds, tuple)
    limits, counts, _ = access_limits(ctx, part, part_type, call.span)
    spans = _element_spans(args[1], len(bounds))
    materialized: dict[int, Value] = {}

    def count(axis: int) -> Value:
        if not materialized:  # one index-space query answers every axis
            materialized.update({a: counts(a) for a in range(len(bounds))})
        return materialized[axis]

    origins = []
    for axis, bound in enumerate(bounds):
        if isinstance(bound, DimValue):
            value, origin = bound.value, bound.origin
        else:
            value = ctx.scalar(bound, spans[axis])
            origin = ctx.dim_origins.get(value.id)
        if origin is None:
            raise Rejected(_bound_without_brand(axis, spans[axis]))
        place_binding_check(ctx, value, limits[axis], lambda a=axis: count(a), axis, spans[axis])
        origins.append(origin)
    return replace(part, bounds=tuple(origins))


def _bound_without_brand(axis: int, span: A.Span):  # type: ignore[no-untyped-def]
    return messages.BOUND_WITHOUT_DIM.at(span, axis=axis)


def _element_spans(expr: A.Expr, count: int) -> tuple[A.Span, ...]:
    inner = expr.value if isinstance(expr, A.Reference) else expr
    if isinstance(inner, A.TupleExpr) and len(inner.elements) == count:
        return tuple(e.span for e in inner.elements)
    return (expr.span,) * count


def _checked_coord(
    ctx: LoweringContext, part: PartitionValue, part_type: PartitionTy, coord: A.Expr
) -> tuple[Value, ...]:
    index = index_operands(ctx, coord)
    assert part.bounds is not None
    limits, _, _ = access_limits(ctx, part, part_type, coord.span)
    inner = coord.args[0] if isinstance(coord, A.Call) and coord.args else coord
    spans = _element_spans(inner, len(index))
    place_bounded_checks(ctx, index, part.bounds, limits, spans)
    return index


def _load(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple, latency: int | None):
    part = partition_operand(ctx, args[0])
    part_type = ctx.type_of(args[0])
    assert isinstance(part_type, PartitionTy)
    index = _checked_coord(ctx, part, part_type, args[1])
    op = ctx.builder.emit(
        LoadViewTko,
        tile=ir_tile_type(ctx.type_of(call)),
        result_token=TOKEN,
        hints=load_hints(latency, allow_tma=True),
        view=part.view,
        index=index,
        span=call.span,
    )
    return op.tile


def _bounded_load(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return _load(ctx, call, args, None)


def _bounded_load_pipelined(
    ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple
) -> Lowered:
    assert isinstance(call, A.MethodCall)
    latency = ctx.body.consts[call.generic_args[0]]  # type: ignore[index]
    assert isinstance(latency, int)
    return _load(ctx, call, args, latency)


def _bounded_store(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    part = partition_operand(ctx, args[0])
    part_type = ctx.type_of(args[0])
    assert isinstance(part_type, PartitionTy)
    tile = ctx.expr(args[1])
    index = _checked_coord(ctx, part, part_type, args[2])
    store_to_output(ctx, part, tile, index, call.span)
    return None


DIM_LOWERINGS: dict[str, IntrinsicLowering] = {
    "dim_new": _dim_new,
    "into_dim": _into_dim,
    "dim_into_dim": _into_dim,
    "dim_value": _dim_value,
    "coord": _coord,
    "with_bounds": _with_bounds,
    "bounded_load": _bounded_load,
    "bounded_load_pipelined": _bounded_load_pipelined,
    "bounded_store": _bounded_store,
}
