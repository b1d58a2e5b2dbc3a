"""Lowering of reductions and scans (`parser.prelude.reduce`): one `reduce`/`scan` op whose
region combines an element with the accumulator (block arguments in that order) and
yields the new accumulator."""

from __future__ import annotations

from collections.abc import Callable

from lowering.element_types import ir_element
from lowering.intrinsics.common import marker, static_value, value, value_type
from lowering.intrinsics.shape import reshape
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir import ops_arith as arith
from lowering.ir import ops_math as m
from lowering.ir.attributes import FloatAttr, IntegerAttr, TypedAttr
from lowering.ir.core import Region, Value
from lowering.ir.ops_control import Yield
from lowering.ir.ops_reduce import Reduce, Scan, identity_for
from lowering.ir.types import TileType
from lowering.lower_ops import signedness
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.typed_kernel import LocalVar
from parser.types import Elem, TileTy

Combine = Callable[["LoweringContext", tuple[Value, ...], A.Expr], Value]

_FLOAT_COMBINERS = {"sum": arith.AddF, "prod": arith.MulF, "max": m.MaxF, "min": m.MinF}
_INT_COMBINERS = {"sum": arith.AddI, "prod": arith.MulI, "max": m.MaxI, "min": m.MinI}


def _builtin(kind: str, elem: Elem) -> Combine:
    """`element op accumulator` with the standard combiner of `kind`."""

    def combine(ctx: LoweringContext, args: tuple[Value, ...], call: A.Expr) -> Value:
        element, acc = args
        scalar = element.type
        if elem.is_float:
            op_class = _FLOAT_COMBINERS[kind]
            return ctx.builder.emit(
                op_class, result=scalar, lhs=element, rhs=acc, span=call.span
            ).result
        extra = {"signedness": signedness(elem)} if kind in ("max", "min") else {}
        return ctx.builder.emit(
            _INT_COMBINERS[kind], result=scalar, lhs=element, rhs=acc, span=call.span, **extra
        ).result

    return combine


def _closure(closure: A.Closure) -> Combine:
    """The body of `|acc, x| ..`: `acc` is bound to the accumulator block argument and `x`
    to the element (cuTile binds them the other way round; for the associative, symmetric
    functions a reduction needs the two agree, and this reading keeps a scan's `acc` the
    running prefix)."""
    params = closure.params  # two: the checker refused any other combiner
    assert len(params) == 2

    def combine(ctx: LoweringContext, args: tuple[Value, ...], call: A.Expr) -> Value:
        element, acc = args
        for param, arg in zip(params, (acc, element), strict=True):
            var = _param_var(ctx, param)
            if var is not None:
                ctx.values[var.id] = arg
        return value(ctx, closure.body)

    return combine


def _param_var(ctx: LoweringContext, param: A.Pattern) -> LocalVar | None:
    """The local the checker declared for a closure parameter (None when it is unused)."""
    if not isinstance(param, A.IdentPattern):
        return None
    return next(
        (v for v in ctx.body.names.values() if v.span == param.span and v.name == param.name),
        None,
    )


def _region(ctx: LoweringContext, elem: Elem, combine: Combine, call: A.Expr) -> Region:
    scalar = TileType(ir_element(elem))

    def fill(args: tuple[Value, ...]) -> None:
        result = combine(ctx, args, call)
        ctx.builder.emit(Yield, values=(result,), span=call.span)

    with ctx.region_scope():
        return ctx.builder.region([scalar, scalar], fill)


def _identity(ctx: LoweringContext, expr: A.Expr, elem: Elem) -> TypedAttr:
    given = static_value(ctx, expr)
    element = ir_element(elem)
    if elem.is_float:
        return FloatAttr(float(given), element)
    return IntegerAttr(int(given), element)


def _source(ctx: LoweringContext, args: tuple) -> tuple[Value, TileTy, int]:
    source = value(ctx, args[0])
    ty = value_type(ctx, args[0])
    dim = static_value(ctx, args[1])
    assert isinstance(ty, TileTy) and isinstance(dim, int)
    return source, ty, dim


def _emit_reduce(
    ctx: LoweringContext,
    call: A.Expr,
    args: tuple,
    identity: Callable[[TileTy], TypedAttr],
    combine: Callable[[TileTy], Combine],
) -> Value:
    source, ty, dim = _source(ctx, args)
    reduced = TileType(ir_element(ty.elem), ty.shape[:dim] + ty.shape[dim + 1 :])
    op = ctx.builder.emit(
        Reduce,
        outputs=(reduced,),
        dim=dim,
        identities=(identity(ty),),
        inputs=(source,),
        body=_region(ctx, ty.elem, combine(ty), call),
        span=call.span,
    )
    return reshape(ctx, op.outputs[0], call)


def _fixed_reduce(kind: str) -> IntrinsicLowering:
    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        return _emit_reduce(
            ctx,
            call,
            args,
            lambda ty: identity_for(kind, ir_element(ty.elem), ty.elem.is_signed),
            lambda ty: _builtin(kind, ty.elem),
        )

    return lower


def _reduce(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return _emit_reduce(
        ctx,
        call,
        args,
        lambda ty: _identity(ctx, args[2], ty.elem),
        lambda ty: _closure(args[3]),
    )


def _scan(closure: bool) -> IntrinsicLowering:
    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        source, ty, dim = _source(ctx, args)
        combine = _closure(args[4]) if closure else _builtin("sum", ty.elem)
        op = ctx.builder.emit(
            Scan,
            outputs=(source.type,),
            dim=dim,
            reverse=marker(ctx, args[2]) == "Reverse",
            identities=(_identity(ctx, args[3], ty.elem),),
            inputs=(source,),
            body=_region(ctx, ty.elem, combine, call),
            span=call.span,
        )
        return op.outputs[0]

    return lower


REDUCE_LOWERINGS: dict[str, IntrinsicLowering] = {
    **{f"reduce_{kind}": _fixed_reduce(kind) for kind in ("sum", "max", "min", "prod")},
    "reduce": _reduce,
    "scan_sum": _scan(closure=False),
    "scan": _scan(closure=True),
}
