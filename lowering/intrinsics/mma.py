"""Lowering of matrix multiply-accumulate (`parser.prelude.mma`): `mmaf` for float
accumulators, `mmai` (operand signedness from their Rust types, or given) otherwise, and
`mmaf_scaled` as it is."""

from __future__ import annotations

from lowering.intrinsics.common import SIGNEDNESS, marker, result_type, value_type, values
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir.ops_matmul import MmaF, MmaFScaled, MmaI
from lowering.lower_ops import signedness
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A


def _mma(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    lhs, rhs, acc = values(ctx, args[:3])
    result = result_type(ctx, call)
    if value_type(ctx, args[2]).elem.is_float:
        return ctx.builder.emit(
            MmaF, result=result, lhs=lhs, rhs=rhs, acc=acc, span=call.span
        ).result
    if len(args) == 5:
        sign_lhs, sign_rhs = (SIGNEDNESS[marker(ctx, a)] for a in args[3:])
    else:
        sign_lhs, sign_rhs = (signedness(value_type(ctx, a).elem) for a in args[:2])
    return ctx.builder.emit(
        MmaI,
        result=result,
        signedness_lhs=sign_lhs,
        signedness_rhs=sign_rhs,
        lhs=lhs,
        rhs=rhs,
        acc=acc,
        span=call.span,
    ).result


def _mmaf_scaled(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    lhs, rhs, acc, lhs_scale, rhs_scale = values(ctx, args)
    return ctx.builder.emit(
        MmaFScaled,
        result=result_type(ctx, call),
        lhs=lhs,
        rhs=rhs,
        acc=acc,
        lhs_scale=lhs_scale,
        rhs_scale=rhs_scale,
        span=call.span,
    ).result


MMA_LOWERINGS: dict[str, IntrinsicLowering] = {
    "mma": _mma,
    "mmaf": _mma,
    "mmai": _mma,
    "mmaf_scaled": _mmaf_scaled,
}
