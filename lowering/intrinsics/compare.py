"""Lowering of comparisons, `select` and the bitwise tile ops (`parser.prelude.compare`)."""

from __future__ import annotations

from lowering.intrinsics.common import result_type, value_type, values
from lowering.intrinsics.math import LHS_RHS, OVERFLOW, op
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir import ops_bits as bits
from lowering.ir.ops_compare import CmpF, CmpI, Select
from lowering.lower_ops import binary_op
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A

_OPERATORS = {
    "eq_tile": "==",
    "ne_tile": "!=",
    "lt_tile": "<",
    "le_tile": "<=",
    "gt_tile": ">",
    "ge_tile": ">=",
}


def _tile_compare(operator: str) -> IntrinsicLowering:
    """`lt_tile(a, b)` is `a < b` element-wise: cmpf (ordered) or cmpi (signedness of E)."""

    def lower(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
        lhs, rhs = values(ctx, args[:2])
        return binary_op(ctx, operator, value_type(ctx, args[0]), lhs, rhs, call.span)

    return lower


def _select(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    condition, if_true, if_false = values(ctx, args)
    return ctx.builder.emit(
        Select,
        result=result_type(ctx, call),
        condition=condition,
        if_true=if_true,
        if_false=if_false,
        span=call.span,
    ).result


COMPARE_LOWERINGS: dict[str, IntrinsicLowering] = {
    **{name: _tile_compare(operator) for name, operator in _OPERATORS.items()},
    "cmpi": op(CmpI, LHS_RHS, (("predicate", "predicate"),), signed=True),
    "cmpf": op(CmpF, LHS_RHS, (("predicate", "predicate"), ("ordering", "cmp_ordering"))),
    "select": _select,
    "andi": op(bits.AndI, LHS_RHS),
    "ori": op(bits.OrI, LHS_RHS),
    "xori": op(bits.XOrI, LHS_RHS),
    "shli": op(bits.ShLI, LHS_RHS, OVERFLOW),
    "shri": op(bits.ShRI, LHS_RHS, signed=True),
}
