"""Lowering of element-wise arithmetic and math (`parser.prelude.math`): one tile IR op per
call, its mode markers turned into attributes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lowering.intrinsics.common import (
    marker,
    mode_attribute,
    result_type,
    value_type,
    values,
)
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir import ops_arith as arith
from lowering.ir import ops_bits as bits
from lowering.ir import ops_math as m
from lowering.ir.attributes import RoundingMode
from lowering.lower_ops import signedness
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import Elem

LHS_RHS = ("lhs", "rhs")
SOURCE = ("source",)


def op(
    op_class: type[Any],
    operands: tuple[str, ...],
    modes: tuple[tuple[str, str], ...] = (),
    signed: bool = False,
) -> IntrinsicLowering:
    """`op_class` with the first `len(operands)` arguments as its operands, the following
    marker arguments as `modes` ((attribute, marker kind) pairs), and, when `signed`, the
    signedness of the operands' element type."""

    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        count = len(operands)
        fields: dict[str, Any] = dict(zip(operands, values(ctx, args[:count]), strict=True))
        for (attribute, kind), arg in zip(modes, args[count:], strict=True):
            fields[attribute] = mode_attribute(kind, marker(ctx, arg))
        if signed:
            fields["signedness"] = signedness(value_type(ctx, args[0]).elem)
        return ctx.builder.emit(
            op_class, result=result_type(ctx, call), span=call.span, **fields
        ).result

    return lower


def by_element(float_op: IntrinsicLowering, int_op: IntrinsicLowering) -> IntrinsicLowering:
    """Dispatch on the operands' element type (`min_tile` -> minf or mini)."""

    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        chosen = float_op if value_type(ctx, args[0]).elem.is_float else int_op
        return chosen(ctx, call, args)

    return lower


def _divide(rounding: Callable[[Elem], RoundingMode], ftz: bool = False) -> IntrinsicLowering:
    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        lhs, rhs = values(ctx, args[:2])
        elem = value_type(ctx, args[0]).elem
        result = result_type(ctx, call)
        if elem.is_float:
            return ctx.builder.emit(
                arith.DivF,
                result=result,
                rounding=rounding(elem),
                flush_to_zero=ftz and elem is Elem.F32,
                lhs=lhs,
                rhs=rhs,
                span=call.span,
            ).result
        return ctx.builder.emit(
            arith.DivI,
            result=result,
            signedness=signedness(elem),
            rounding=rounding(elem),
            lhs=lhs,
            rhs=rhs,
            span=call.span,
        ).result

    return lower


def _true_div_rounding(elem: Elem) -> RoundingMode:
    """cuTile's `true_div` is the fast approximate divide (f32 only in Tile IR; other
    float types divide with IEEE rounding)."""
    return RoundingMode.APPROX if elem is Elem.F32 else RoundingMode.NEAREST_EVEN


FLOAT_MODES = (("rounding", "rounding"), ("flush_to_zero", "ftz"))
MINMAX_MODES = (("propagate_nan", "nan"), ("flush_to_zero", "ftz"))
OVERFLOW = (("overflow", "overflow"),)

_MIN = by_element(op(m.MinF, LHS_RHS), op(m.MinI, LHS_RHS, signed=True))
_MAX = by_element(op(m.MaxF, LHS_RHS), op(m.MaxI, LHS_RHS, signed=True))

_UNARY = {
    "exp": m.Exp,
    "log": m.Log,
    "log2": m.Log2,
    "tanh": m.Tanh,
    "sin": m.Sin,
    "cos": m.Cos,
    "tan": m.Tan,
    "sinh": m.Sinh,
    "cosh": m.Cosh,
    "negf": m.NegF,
    "absf": m.AbsF,
    "ceil": m.Ceil,
    "floor": m.Floor,
}

MATH_LOWERINGS: dict[str, IntrinsicLowering] = {
    "true_div": _divide(_true_div_rounding, ftz=True),
    "ceil_div": _divide(lambda _: RoundingMode.POSITIVE_INF),
    "min": _MIN,
    "max": _MAX,
    "min_tile": _MIN,
    "max_tile": _MAX,
    "addf": op(arith.AddF, LHS_RHS, FLOAT_MODES),
    "subf": op(arith.SubF, LHS_RHS, FLOAT_MODES),
    "mulf": op(arith.MulF, LHS_RHS, FLOAT_MODES),
    "divf": op(arith.DivF, LHS_RHS, FLOAT_MODES),
    "fma": op(m.Fma, ("lhs", "rhs", "acc"), FLOAT_MODES),
    "maxf": op(m.MaxF, LHS_RHS, MINMAX_MODES),
    "minf": op(m.MinF, LHS_RHS, MINMAX_MODES),
    "addi": op(arith.AddI, LHS_RHS, OVERFLOW),
    "subi": op(arith.SubI, LHS_RHS, OVERFLOW),
    "muli": op(arith.MulI, LHS_RHS, OVERFLOW),
    "divi": op(arith.DivI, LHS_RHS, (("rounding", "rounding"),), signed=True),
    "remi": op(arith.RemI, LHS_RHS, signed=True),
    "maxi": op(m.MaxI, LHS_RHS, signed=True),
    "mini": op(m.MinI, LHS_RHS, signed=True),
    "mulhii": op(bits.MulhiI, LHS_RHS),
    "negi": op(m.NegI, SOURCE, OVERFLOW),
    "absi": op(bits.AbsI, SOURCE),
    **{name: op(cls, SOURCE) for name, cls in _UNARY.items()},
    "pow": op(m.Pow, ("source", "exponent")),
    "atan2": op(m.Atan2, ("x", "y")),
    "remf": op(m.RemF, LHS_RHS),
    "exp2": op(m.Exp2, SOURCE, (("flush_to_zero", "ftz"),)),
    "rsqrt": op(m.Rsqrt, SOURCE, (("flush_to_zero", "ftz"),)),
    "sqrt": op(m.Sqrt, SOURCE, FLOAT_MODES),
}
