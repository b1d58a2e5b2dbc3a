"""Lowering of element-type conversions (`parser.prelude.convert`)."""

from __future__ import annotations

from typing import Any

from lowering.intrinsics.common import (
    marker,
    mode_attribute,
    result_type,
    value,
    value_type,
)
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir.attributes import RoundingMode
from lowering.ir.ops_convert import Bitcast, ExtI, FToF, FToI, IToF, TruncI
from lowering.lower_ops import convert, signedness
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A


def _convert(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """Value-preserving conversion: ftof / ftoi (toward zero) / itof / exti / trunci, or
    nothing when the tile IR types agree (`u32` <-> `i32`)."""
    source = value(ctx, args[0])
    return convert(ctx, source, ctx.type_of(args[0]), ctx.type_of(call), call.span)


def _op(op_class: type[Any]) -> IntrinsicLowering:
    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        source = value(ctx, args[0])
        result = result_type(ctx, call)
        if source.type == result:  # same tile IR type: a relabel (`bitcast` u32 -> i32)
            return source
        src, dst = value_type(ctx, args[0]).elem, value_type(ctx, call).elem
        fields: dict[str, Any] = {}
        if op_class in (ExtI, IToF):
            fields["signedness"] = signedness(src)
        if op_class is FToI:
            fields["signedness"] = signedness(dst)
            fields["rounding"] = RoundingMode.NEAREST_INT_TO_ZERO
        elif op_class in (FToF, IToF):
            fields["rounding"] = mode_attribute("rounding", marker(ctx, args[1]))
        if op_class is TruncI:
            fields["overflow"] = mode_attribute("overflow", marker(ctx, args[1]))
        return ctx.builder.emit(
            op_class, result=result, source=source, span=call.span, **fields
        ).result

    return lower


CONVERT_LOWERINGS: dict[str, IntrinsicLowering] = {
    "convert_tile": _convert,
    "convert_scalar": _convert,
    "bitcast": _op(Bitcast),
    "exti": _op(ExtI),
    "trunci": _op(TruncI),
    "ftof": _op(FToF),
    "ftoi": _op(FToI),
    "itof": _op(IToF),
}
