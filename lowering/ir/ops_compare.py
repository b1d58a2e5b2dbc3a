"""Comparisons and selection: `cmpf`, `cmpi` (results are i1 tiles) and `select`."""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import ComparisonOrdering, ComparisonPredicate, Signedness
from lowering.ir.core import Op, Value, attribute, operand, result
from lowering.ir.types import ElementType, TileType


def _compare_errors(op: CmpF | CmpI, want_float: bool) -> list[str]:
    lhs, rhs, res = op.lhs.type, op.rhs.type, op.result.type
    if lhs != rhs:
        return [f"{op.NAME}: operand types differ"]
    if not isinstance(lhs, TileType) or not isinstance(lhs.element, ElementType):
        return [f"{op.NAME}: operands must be tiles of numbers"]
    if lhs.element.is_float != want_float:
        kind = "float" if want_float else "integer"
        return [f"{op.NAME}: needs {kind} operands, got {lhs}"]
    if res != TileType(ElementType.I1, lhs.shape):
        return [f"{op.NAME}: result must be {TileType(ElementType.I1, lhs.shape)}"]
    return []


@dataclass(frozen=True, kw_only=True)
class CmpF(Op):
    """Float comparison; `ordering` says whether a NaN operand makes it false (ordered)."""

    NAME = "cmpf"
    result: Value = result()
    predicate: ComparisonPredicate = attribute()
    ordering: ComparisonOrdering = attribute(ComparisonOrdering.ORDERED)
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        return _compare_errors(self, want_float=True)


@dataclass(frozen=True, kw_only=True)
class CmpI(Op):
    NAME = "cmpi"
    result: Value = result()
    predicate: ComparisonPredicate = attribute()
    signedness: Signedness = attribute(Signedness.SIGNED)
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        return _compare_errors(self, want_float=False)


@dataclass(frozen=True, kw_only=True)
class Select(Op):
    """Element-wise `condition ? if_true : if_false`."""

    NAME = "select"
    result: Value = result()
    condition: Value = operand()
    if_true: Value = operand()
    if_false: Value = operand()

    def verify(self) -> list[str]:
        res = self.result.type
        if not (self.if_true.type == self.if_false.type == res):
            return ["select: both arms and the result must share one type"]
        if not isinstance(res, TileType):
            return ["select works on tiles"]
        if self.condition.type != TileType(ElementType.I1, res.shape):
            return [f"select: condition must be {TileType(ElementType.I1, res.shape)}"]
        return []
