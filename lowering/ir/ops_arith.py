"""Element-wise arithmetic: float and integer binary ops (operands and result share a type)."""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import IntegerOverflow, RoundingMode, Signedness
from lowering.ir.core import (
    FLOAT_ELEMENTWISE,
    INTEGER_ELEMENTWISE,
    Op,
    Value,
    attribute,
    operand,
    result,
)


@dataclass(frozen=True, kw_only=True)
class _FloatBinary(Op):
    result: Value = result()
    flush_to_zero: bool = attribute(False)
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_EVEN)
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


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

    TRAITS = INTEGER_ELEMENTWISE


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

    TRAITS = INTEGER_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class RemI(Op):
    """Integer remainder; truncating (the sign follows the dividend)."""

    NAME = "remi"
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE
