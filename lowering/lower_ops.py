"""Lowering of literals, operators and `as` casts to element-wise tile IR ops."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lowering.element_types import ir_tile_type
from lowering.ir import ops_arith as arith
from lowering.ir.attributes import ComparisonPredicate, RoundingMode, Signedness
from lowering.ir.core import Value
from lowering.ir.ops_bits import AndI, OrI, ShLI, ShRI, XOrI
from lowering.ir.ops_compare import CmpF, CmpI, Select
from lowering.ir.ops_convert import ExtI, FToF, FToI, IToF, TruncI
from lowering.ir.ops_math import NegF, NegI, RemF
from lowering.ir.types import TileType
from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.types import Elem, ScalarTy, SemType, TileTy

_FLOAT_OPS: dict[str, type[Any]] = {
    "+": arith.AddF,
    "-": arith.SubF,
    "*": arith.MulF,
    "/": arith.DivF,
    "%": RemF,  # Rust's float `%`: truncated, the sign of the dividend
}
_INT_OPS: dict[str, type[Any]] = {"+": arith.AddI, "-": arith.SubI, "*": arith.MulI}
_BIT_OPS: dict[str, type[Any]] = {"&": AndI, "|": OrI, "^": XOrI}  # also on bool masks
_PREDICATES = {
    "==": ComparisonPredicate.EQ,
    "!=": ComparisonPredicate.NE,
    "<": ComparisonPredicate.LT,
    "<=": ComparisonPredicate.LE,
    ">": ComparisonPredicate.GT,
    ">=": ComparisonPredicate.GE,
}


def signedness(elem: Elem) -> Signedness:
    return Signedness.SIGNED if elem.is_signed else Signedness.UNSIGNED


def _literal(ctx: LoweringContext, lit: A.IntLit | A.FloatLit | A.BoolLit) -> Lowered:
    return ctx.constant(lit.value, ctx.type_of(lit), lit.span)


def _binary(ctx: LoweringContext, node: A.Binary) -> Lowered:
    ty = ctx.type_of(node.lhs)
    assert isinstance(ty, (ScalarTy, TileTy))
    if node.op in ("&&", "||"):
        return _logical(ctx, node)
    lhs, rhs = ctx.expr(node.lhs), ctx.expr(node.rhs)
    assert isinstance(lhs, Value) and isinstance(rhs, Value)
    return binary_op(ctx, node.op, ty, lhs, rhs, node.span)


def binary_op(
    ctx: LoweringContext, op: str, ty: ScalarTy | TileTy, lhs: Value, rhs: Value, span: A.Span
) -> Value:
    """`lhs op rhs` on two values of type `ty` (also used by `x op= y`)."""
    elem, result = ty.elem, ir_tile_type(ty)
    emit = ctx.builder.emit
    if op in _PREDICATES:
        flag = TileType(ir_tile_type(ScalarTy(Elem.BOOL)).element, result.shape)
        if elem.is_float:
            return emit(
                CmpF, result=flag, predicate=_PREDICATES[op], lhs=lhs, rhs=rhs, span=span
            ).result
        return emit(
            CmpI,
            result=flag,
            predicate=_PREDICATES[op],
            signedness=signedness(elem),
            lhs=lhs,
            rhs=rhs,
            span=span,
        ).result
    if elem.is_float:
        return emit(_FLOAT_OPS[op], result=result, lhs=lhs, rhs=rhs, span=span).result
    if op in _INT_OPS:
        return emit(_INT_OPS[op], result=result, lhs=lhs, rhs=rhs, span=span).result
    if op == "/":  # cuTile: integer division rounds toward negative infinity
        rounding = RoundingMode.NEGATIVE_INF if elem.is_signed else RoundingMode.ZERO
        return emit(
            arith.DivI,
            result=result,
            signedness=signedness(elem),
            rounding=rounding,
            lhs=lhs,
            rhs=rhs,
            span=span,
        ).result
    if op == "%":
        return emit(
            arith.RemI, result=result, signedness=signedness(elem), lhs=lhs, rhs=rhs, span=span
        ).result
    if op in _BIT_OPS:
        return emit(_BIT_OPS[op], result=result, lhs=lhs, rhs=rhs, span=span).result
    if op == "<<":
        return emit(ShLI, result=result, lhs=lhs, rhs=rhs, span=span).result
    if op == ">>":  # arithmetic for signed types, logical for unsigned
        return emit(
            ShRI, result=result, signedness=signedness(elem), lhs=lhs, rhs=rhs, span=span
        ).result
    raise NotImplementedError(f"operator `{op}` on {ty}")


def _logical(ctx: LoweringContext, node: A.Binary) -> Lowered:
    """`a && b` = select(a, b, false); `a || b` = select(a, true, b)."""
    bool_ty = ScalarTy(Elem.BOOL)
    lhs, rhs = ctx.expr(node.lhs), ctx.expr(node.rhs)
    constant = ctx.constant(node.op == "||", bool_ty, node.span)
    if_true, if_false = (rhs, constant) if node.op == "&&" else (constant, rhs)
    return ctx.builder.emit(
        Select,
        result=ir_tile_type(bool_ty),
        condition=lhs,
        if_true=if_true,
        if_false=if_false,
        span=node.span,
    ).result


def _unary(ctx: LoweringContext, node: A.Unary) -> Lowered:
    ty = ctx.type_of(node)
    assert isinstance(ty, (ScalarTy, TileTy))
    source = ctx.expr(node.operand)
    if node.op == "!":  # bitwise not: x ^ all-ones (`true` for bool)
        ones = ctx.constant(True if ty.elem is Elem.BOOL else -1, ty, node.span)
        return ctx.builder.emit(
            XOrI, result=ir_tile_type(ty), lhs=source, rhs=ones, span=node.span
        ).result
    op = NegF if ty.elem.is_float else NegI
    return ctx.builder.emit(op, result=ir_tile_type(ty), source=source, span=node.span).result


def _cast(ctx: LoweringContext, node: A.Cast) -> Lowered:
    source = ctx.expr(node.value)
    assert isinstance(source, Value)
    return convert(ctx, source, ctx.type_of(node.value), ctx.type_of(node), node.span)


def convert(
    ctx: LoweringContext, value: Value, source: SemType, target: SemType, span: A.Span
) -> Value:
    """Convert between element types (same shape), with Rust `as` semantics."""
    assert isinstance(source, (ScalarTy, TileTy)) and isinstance(target, (ScalarTy, TileTy))
    src, dst = source.elem, target.elem
    result = ir_tile_type(target)
    emit = ctx.builder.emit
    if value.type == result:
        return value
    if src.is_float and dst.is_float:
        return emit(FToF, result=result, source=value, span=span).result
    if src.is_float:
        return emit(FToI, result=result, signedness=signedness(dst), source=value, span=span).result
    if dst.is_float:
        return emit(IToF, result=result, signedness=signedness(src), source=value, span=span).result
    if dst.bits > src.bits:
        return emit(ExtI, result=result, signedness=signedness(src), source=value, span=span).result
    return emit(TruncI, result=result, source=value, span=span).result


LOWERINGS: dict[type, Callable[[LoweringContext, Any], Lowered]] = {
    A.IntLit: _literal,
    A.FloatLit: _literal,
    A.BoolLit: _literal,
    A.Binary: _binary,
    A.Unary: _unary,
    A.Cast: _cast,
}
