"""Integer bit ops: and/or/xor (also on i1 masks), shifts, absolute value, high multiply.

Operands and result share one integer tile type in every op here. Shift amounts
(`rhs`) are read as unsigned; `shri` fills with the sign bit when SIGNED.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.attributes import IntegerOverflow, Signedness
from lowering.ir.core import (
    INTEGER_ELEMENTWISE,
    Op,
    Value,
    attribute,
    operand,
    result,
)


@dataclass(frozen=True, kw_only=True)
class _IntBinary(Op):
    result: Value = result()
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class AndI(_IntBinary):
    NAME = "andi"


@dataclass(frozen=True, kw_only=True)
class OrI(_IntBinary):
    NAME = "ori"


@dataclass(frozen=True, kw_only=True)
class XOrI(_IntBinary):
    NAME = "xori"


@dataclass(frozen=True, kw_only=True)
class MulhiI(_IntBinary):
    """The high half of the double-width unsigned product."""

    NAME = "mulhii"


@dataclass(frozen=True, kw_only=True)
class ShLI(Op):
    NAME = "shli"
    result: Value = result()
    overflow: IntegerOverflow = attribute(IntegerOverflow.NONE)
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class ShRI(Op):
    """Right shift: arithmetic when SIGNED, logical when UNSIGNED."""

    NAME = "shri"
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class AbsI(Op):
    """|x| of a signed input (the result reads as unsigned: |INT_MIN| stays INT_MIN's bits)."""

    NAME = "absi"
    result: Value = result()
    source: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE
