"""Element-wise arithmetic: float and integer binary ops (operands and result share a type)."""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import IntegerOverflow, RoundingMode, Signedness
from lowering.ir.core import Op, Value, attribute, operand, result
from lowering.ir.types import ElementType, TileType


def _same_type_errors(op_name: str, values: tuple[Value, ...], want_float: bool) -> list[str]:
    first = values[0].type
    if any(v.type != first for v in values):
        return [f"{op_name}: operand and result types differ"]
    if not isinstance(first, TileType) or not isinstance(first.element, ElementType):
        return [f"{op_name}: operands must be tiles of numbers"]
    is_float = first.element.is_float
    if is_float != want_float:
        kind = "float" if want_float else "integer"
        return [f"{op_name}: needs {kind} operands, got {first}"]
    return []


@dataclass(frozen=True, kw_only=True)
class _FloatBinary(Op):
    result: Value = result()
    flush_to_zero: bool = attribute(False)
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_EVEN)
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        return _same_type_errors(self.NAME, (self.result, self.lhs, self.rhs), want_float=True)


@dataclass(frozen=True, kw_only=True)
class AddF(_FloatBinary):
    NAME = "addf"


@dataclass(frozen=True, kw_only=True)
class SubF(_FloatBinary):
    NAME = "subf"


@dataclass(frozen=True, kw_only=True)
class MulF(_FloatBinary):
    NAME = "mulf"


@dataclass(frozen=True, kw_only=True)
class DivF(_FloatBinary):
    NAME = "divf"


@dataclass(frozen=True, kw_only=True)
class _IntOverflowBinary(Op):
    result: Value = result()
    overflow: IntegerOverflow = attribute(IntegerOverflow.NONE)
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        return _same_type_errors(self.NAME, (self.result, self.lhs, self.rhs), want_float=False)


@dataclass(frozen=True, kw_only=True)
class AddI(_IntOverflowBinary):
    NAME = "addi"


@dataclass(frozen=True, kw_only=True)
class SubI(_IntOverflowBinary):
    NAME = "subi"


@dataclass(frozen=True, kw_only=True)
class MulI(_IntOverflowBinary):
    NAME = "muli"


@dataclass(frozen=True, kw_only=True)
class DivI(Op):
    """Integer division; cuTile's `/` rounds toward negative infinity (floor)."""

    NAME = "divi"
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    rounding: RoundingMode = attribute(RoundingMode.NEGATIVE_INF)
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        return _same_type_errors(self.NAME, (self.result, self.lhs, self.rhs), want_float=False)


@dataclass(frozen=True, kw_only=True)
class RemI(Op):
    """Integer remainder; truncating (the sign follows the dividend)."""

    NAME = "remi"
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    lhs: Value = operand()
    rhs: Value = operand()

    def verify(self) -> list[str]:
        return _same_type_errors(self.NAME, (self.result, self.lhs, self.rhs), want_float=False)
