"""Type rules for literals, operators and `as` casts.

Binary operators need identical operand types (no broadcasting, no tile-scalar mixing);
an unsuffixed literal takes its type from the other operand or the expected type.
"""

from __future__ import annotations

import math

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import storage_only, unsupported
from parser.checker_surface import CheckerSurface
from parser.type_eval import TypeResolver
from parser.types import ELEM_BY_NAME, Elem, ScalarTy, SemType, TileTy

ARITHMETIC = ("+", "-", "*", "/", "%")
BITWISE = ("&", "|", "^", "<<", ">>")
COMPARISON = ("==", "!=", "<", "<=", ">", ">=")
LOGICAL = ("&&", "||")
_POINTER_SIZED = {"usize": Elem.U64, "isize": Elem.I64}


class OperatorRules(CheckerSurface):
    def int_literal(self, lit: A.IntLit, expected: SemType | None) -> SemType | None:
        if lit.suffix in _POINTER_SIZED:
            ty = ScalarTy(_POINTER_SIZED[lit.suffix])
        elif lit.suffix is not None:
            ty = ScalarTy(ELEM_BY_NAME[lit.suffix])
        elif isinstance(expected, (ScalarTy, TileTy)) and expected.elem.is_integer:
            ty = ScalarTy(expected.elem)
        else:
            ty = ScalarTy(Elem.I32)  # Rust's fallback; a later use may still fix it
            self.note_default(lit)
        if not _fits(lit.value, ty.elem, lit in self.negated_literals):
            self.report(messages.INT_LITERAL_OUT_OF_RANGE.at(lit.span, elem=ty.elem))
            return None
        return ty

    def float_literal(self, lit: A.FloatLit, expected: SemType | None) -> SemType | None:
        ty: ScalarTy | None = None
        if lit.suffix is not None:
            ty = ScalarTy(ELEM_BY_NAME[lit.suffix])
        elif isinstance(expected, (ScalarTy, TileTy)) and expected.elem.is_float:
            ty = ScalarTy(expected.elem)
        else:
            self.note_default(lit)  # Rust's fallback is `f64`; a later use may still fix it
            ty = ScalarTy(Elem.F64)
        if _float_fits(lit.value, ty.elem):
            return ty
        self.report(
            messages.FLOAT_LITERAL_OUT_OF_RANGE.at(
                lit.span, elem=ty.elem, literal=_shown(lit.span.text)
            )
        )
        return None

    def binary(self, binary: A.Binary, expected: SemType | None) -> SemType | None:
        lhs_first = not _is_literal(binary.lhs)
        first, second = (binary.lhs, binary.rhs) if lhs_first else (binary.rhs, binary.lhs)
        operand_hint = expected if binary.op in ARITHMETIC + BITWISE else None
        first_ty = self.expr(first, operand_hint)
        second_ty = self.expr(second, first_ty)
        if first_ty is None or second_ty is None:
            return None
        lhs_ty, rhs_ty = (first_ty, second_ty) if lhs_first else (second_ty, first_ty)
        if lhs_ty != rhs_ty and (
            self.try_flex(binary.lhs, lhs_ty, rhs_ty) or self.try_flex(binary.rhs, rhs_ty, lhs_ty)
        ):
            rhs_ty = lhs_ty  # left to the next round (a literal-fed binding changes type)
        if lhs_ty != rhs_ty:
            self.report(
                messages.BINARY_OPERANDS_DIFFER.at(
                    binary.span,
                    ((binary.lhs.span, f"`{lhs_ty}`"), (binary.rhs.span, f"`{rhs_ty}`")),
                    op=binary.op,
                    lhs=lhs_ty,
                    rhs=rhs_ty,
                )
            )
            return None
        result = self.binary_result(binary.op, lhs_ty, binary.span)
        folded = self.fold(binary)
        if folded is not None and result is not None and _representable(folded, result):
            self.facts.consts[binary] = folded  # an overflowing result is left to run time
        return result

    def binary_result(self, op: str, ty: SemType, span: A.Span) -> SemType | None:
        elem = ty.elem if isinstance(ty, (ScalarTy, TileTy)) else None
        if elem is not None and not elem.computes:
            self.report(storage_only(elem, f"`{op}`", span))
            return None
        valid = elem is not None and (
            (op in ARITHMETIC and elem is not Elem.BOOL)
            or (op in BITWISE and not elem.is_float)
            or (op in COMPARISON and isinstance(ty, ScalarTy))
            or (op in LOGICAL and elem is Elem.BOOL and isinstance(ty, ScalarTy))
        )
        if not valid:
            entry = (
                messages.INVALID_COMPARISON_OPERANDS
                if op in COMPARISON
                else messages.INVALID_OPERANDS
            )
            self.report(entry.at(span, op=op, ty=ty))
            return None
        return ScalarTy(Elem.BOOL) if op in COMPARISON + LOGICAL else ty

    def unary(self, unary: A.Unary, expected: SemType | None) -> SemType | None:
        if unary.op == "-" and isinstance(unary.operand, A.IntLit):
            self.negated_literals.add(unary.operand)
        if unary.op not in ("-", "!"):
            self.report(unsupported(unary.span, f"the unary operator `{unary.op}`"))
            return None
        ty = self.expr(unary.operand, expected)
        if ty is None:
            return None
        if isinstance(ty, TileTy):  # cuTile's `Tile` implements neither `Neg` nor `Not`
            function = "negf` / `negi" if unary.op == "-" else "xori"
            self.report(
                messages.INVALID_UNARY_OPERAND.at(unary.span, op=unary.op, ty=ty, function=function)
            )
            return None
        elem = ty.elem if isinstance(ty, ScalarTy) else None
        if elem is not None and not elem.computes:
            self.report(storage_only(elem, f"`{unary.op}`", unary.span))
            return None
        allowed = elem is not None and (
            (unary.op == "-" and (elem.is_float or elem.is_signed))
            or (unary.op == "!" and not elem.is_float)
        )
        if not allowed:
            verb = "negate" if unary.op == "-" else "apply `!` to"
            self.report(messages.INVALID_OPERAND.at(unary.span, verb=verb, ty=ty))
            return None
        folded = self.fold(unary)
        if folded is not None:
            self.facts.consts[unary] = folded
        return ty

    def cast(self, cast: A.Cast, expected: SemType | None) -> SemType | None:
        """`x as T` between scalar numbers: widen/narrow integers, int<->float, float<->float."""
        source = self.expr(cast.value, None)
        target = _cast_target(cast.type, self.resolver)
        if source is None:
            return None
        storage = isinstance(source, ScalarTy) and not source.elem.computes
        if target is None or not isinstance(source, ScalarTy) or storage or not target.computes:
            self.report(
                messages.UNSUPPORTED_CAST.at(cast.span, source=source, target=cast.type.span.text)
            )
            return None
        folded = self.fold(cast.value)
        if isinstance(folded, (int, float)):
            self.facts.consts[cast] = cast_constant(folded, source.elem, target)
        return ScalarTy(target)


def cast_constant(value: int | float, source: Elem, target: Elem) -> int | float | bool:
    """`value as target` with Rust's semantics: integers wrap to the target width, floats
    truncate toward zero and saturate, integers become the nearest float."""
    if target is Elem.BOOL:
        return bool(value)
    if target.is_float:
        return float(value)
    if isinstance(value, float):
        if value != value:  # NaN
            return 0
        low, high = _int_range(target)
        return max(low, min(high, int(value)))
    bits = target.bits
    wrapped = int(value) & ((1 << bits) - 1)
    if target.is_signed and wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    return wrapped


def _int_range(elem: Elem) -> tuple[int, int]:
    if elem.is_signed:
        return -(1 << (elem.bits - 1)), (1 << (elem.bits - 1)) - 1
    return 0, (1 << elem.bits) - 1


def _representable(value: object, ty: SemType) -> bool:
    elem = ty.elem if isinstance(ty, (ScalarTy, TileTy)) else None
    if elem is None or isinstance(value, bool) or not isinstance(value, int) or elem.is_float:
        return True
    if elem is Elem.BOOL:
        return True
    low, high = _int_range(elem)
    return low <= value <= high


def _cast_target(ty: A.TypeExpr, resolver: TypeResolver) -> Elem | None:
    if isinstance(ty, A.PathType) and len(ty.segments) == 1 and not ty.args:
        if ty.name in _POINTER_SIZED:
            return _POINTER_SIZED[ty.name]
        if ty.name in ELEM_BY_NAME:
            return ELEM_BY_NAME[ty.name]
        bound = resolver.env.generics.get(ty.name)
        if isinstance(bound, Elem):
            return bound
    return None


def _fits(value: int, elem: Elem, negated: bool) -> bool:
    """Whether an integer literal (after an optional leading `-`) fits `elem`."""
    if elem.is_float or elem is Elem.BOOL:
        return True
    signed = elem.is_signed
    magnitude_limit = 2 ** (elem.bits - 1) if signed else 2**elem.bits - 1
    if negated:  # negating an unsigned value is reported by the `-` operator itself
        return not signed or value <= magnitude_limit
    return value <= (magnitude_limit - 1 if signed else magnitude_limit)


def _float_fits(value: float, elem: Elem) -> bool:
    """A literal is out of range when it rounds to infinity (rustc's `overflowing_literals`);
    the element table knows where that starts for each float type."""
    threshold = elem.spec.overflow_threshold
    return not math.isinf(value) and (threshold is None or abs(value) < threshold)


def _shown(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:37]}..."


def _is_literal(expr: A.Expr) -> bool:
    if isinstance(expr, A.Unary):
        return _is_literal(expr.operand)
    return isinstance(expr, (A.IntLit, A.FloatLit))
