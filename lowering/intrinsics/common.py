"""Helpers the element-wise, shape, reduce, mma and convert lowerings share: argument
values, mode markers as op attributes, result types."""

from __future__ import annotations

from lowering.element_types import ir_tile_type
from lowering.ir.attributes import (
    ComparisonOrdering,
    ComparisonPredicate,
    IntegerOverflow,
    RoundingMode,
    Signedness,
)
from lowering.ir.core import Value
from lowering.ir.types import TileType
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import MarkerTy, ScalarTy, TileTy

ROUNDING = {
    "NearestEven": RoundingMode.NEAREST_EVEN,
    "Zero": RoundingMode.ZERO,
    "NegativeInf": RoundingMode.NEGATIVE_INF,
    "PositiveInf": RoundingMode.POSITIVE_INF,
    "Approx": RoundingMode.APPROX,
    "Full": RoundingMode.FULL,
}
OVERFLOW = {
    "None": IntegerOverflow.NONE,
    "NoSignedWrap": IntegerOverflow.NSW,
    "NoUnsignedWrap": IntegerOverflow.NUW,
    "NoWrap": IntegerOverflow.NW,
}
PREDICATE = {
    "Equal": ComparisonPredicate.EQ,
    "NotEqual": ComparisonPredicate.NE,
    "LessThan": ComparisonPredicate.LT,
    "LessThanOrEqual": ComparisonPredicate.LE,
    "GreaterThan": ComparisonPredicate.GT,
    "GreaterThanOrEqual": ComparisonPredicate.GE,
}
CMP_ORDERING = {"Ordered": ComparisonOrdering.ORDERED, "Unordered": ComparisonOrdering.UNORDERED}
SIGNEDNESS = {"Signed": Signedness.SIGNED, "Unsigned": Signedness.UNSIGNED}


def marker(ctx: LoweringContext, expr: A.Expr) -> str:
    """The variant of a mode-marker argument (`ftz::Enabled` -> "Enabled")."""
    ty = ctx.type_of(expr)
    assert isinstance(ty, MarkerTy), ty
    return ty.variant


def mode_attribute(kind: str, variant: str) -> object:
    """A marker as the value of the op attribute it sets."""
    if kind == "rounding":
        return ROUNDING[variant]
    if kind == "overflow":
        return OVERFLOW[variant]
    if kind == "predicate":
        return PREDICATE[variant]
    if kind == "cmp_ordering":
        return CMP_ORDERING[variant]
    if kind == "signedness":
        return SIGNEDNESS[variant]
    return variant == "Enabled"  # ftz, nan: unit flags


def value(ctx: LoweringContext, expr: A.Expr) -> Value:
    lowered = ctx.expr(expr)
    assert isinstance(lowered, Value), (expr.span.text, lowered)
    return lowered


def values(ctx: LoweringContext, exprs: tuple[A.Expr, ...]) -> tuple[Value, ...]:
    return tuple(value(ctx, e) for e in exprs)


def value_type(ctx: LoweringContext, expr: A.Expr) -> ScalarTy | TileTy:
    ty = ctx.type_of(expr)
    assert isinstance(ty, (ScalarTy, TileTy)), ty
    return ty


def result_type(ctx: LoweringContext, call: A.Expr) -> TileType:
    return ir_tile_type(ctx.type_of(call))


def static_value(ctx: LoweringContext, expr: A.Expr) -> int | float | bool:
    """The compile-time value the checker established for a constant argument."""
    consts = ctx.body.consts
    if expr in consts:
        found = consts[expr]
        assert isinstance(found, (int, float, bool)), found
        return found
    if isinstance(expr, (A.IntLit, A.FloatLit, A.BoolLit)):
        return expr.value
    if isinstance(expr, A.Unary) and expr.op == "-":
        inner = static_value(ctx, expr.operand)
        assert not isinstance(inner, bool)
        return -inner
    raise AssertionError(f"`{expr.span.text}` has no compile-time value")
