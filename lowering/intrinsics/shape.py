"""Lowering of tile creation and shape manipulation (`parser.prelude.shape`)."""

from __future__ import annotations

from lowering.intrinsics.common import result_type, static_value, value, values
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir.core import Value
from lowering.ir.ops_core import Constant, Reshape
from lowering.ir.ops_shape import Cat, Extract, Iota, Permute
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A


def _constant(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    fill = static_value(ctx, args[0])
    return ctx.builder.emit(
        Constant, result=result_type(ctx, call), values=(fill,), span=call.span
    ).result


def reshape(ctx: LoweringContext, source: Value, call: A.Expr) -> Value:
    """`source` with the call's result shape (no op when it already has it)."""
    target = result_type(ctx, call)
    if source.type == target:
        return source
    return ctx.builder.emit(Reshape, result=target, source=source, span=call.span).result


def _reshape(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return reshape(ctx, value(ctx, args[0]), call)


def _permute_by(ctx: LoweringContext, call: A.Expr, source: Value, order: tuple[int, ...]) -> Value:
    if order == tuple(range(len(order))):
        return source
    return ctx.builder.emit(
        Permute, result=result_type(ctx, call), permutation=order, source=source, span=call.span
    ).result


def _permute(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    source = value(ctx, args[0])
    order = getattr(ctx.type_of(args[1]), "dims", None) or ctx.body.consts[args[1]]
    assert isinstance(order, tuple)
    return _permute_by(ctx, call, source, tuple(int(d) for d in order))


def _permute_array(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """`result[i] = source[order[i]]`: the same values, reordered (no op)."""
    source = ctx.expr(args[0])
    order = getattr(ctx.type_of(args[1]), "dims", None) or ctx.body.consts[args[1]]
    assert isinstance(source, tuple) and isinstance(order, tuple)
    return tuple(source[int(i)] for i in order)


def _transpose(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return _permute_by(ctx, call, value(ctx, args[0]), (1, 0))


def _extract(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    source = value(ctx, args[0])
    indices = ctx.expr(args[1])
    assert isinstance(indices, tuple) and all(isinstance(i, Value) for i in indices)
    return ctx.builder.emit(
        Extract,
        result=result_type(ctx, call),
        source=source,
        indices=indices,  # type: ignore[arg-type]
        span=call.span,
    ).result


def _cat(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    lhs, rhs = values(ctx, args[:2])
    dim = static_value(ctx, args[2])
    assert isinstance(dim, int)
    return ctx.builder.emit(
        Cat, result=result_type(ctx, call), dim=dim, lhs=lhs, rhs=rhs, span=call.span
    ).result


def _iota(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.builder.emit(Iota, result=result_type(ctx, call), span=call.span).result


def _relabel(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """A scalar is a rank-0 tile in tile IR: `scalar_to_tile`/`tile_to_scalar` emit nothing."""
    return value(ctx, args[0])


SHAPE_LOWERINGS: dict[str, IntrinsicLowering] = {
    "constant": _constant,
    "reshape": _reshape,
    "permute": _permute,
    "permute_array": _permute_array,
    "transpose": _transpose,
    "extract": _extract,
    "cat": _cat,
    "iota": _iota,
    "scalar_to_tile": _relabel,
    "tile_to_scalar": _relabel,
}
