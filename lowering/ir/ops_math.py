"""Element-wise math beyond the four basic operators: unary float functions, negation,
min/max and fused multiply-add. Operands and result share one type in every op here.
"""

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
class _FloatUnary(Op):
    result: Value = result()
    source: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class NegF(_FloatUnary):
    NAME = "negf"


@dataclass(frozen=True, kw_only=True)
class AbsF(_FloatUnary):
    NAME = "absf"


@dataclass(frozen=True, kw_only=True)
class Log(_FloatUnary):
    NAME = "log"


@dataclass(frozen=True, kw_only=True)
class Log2(_FloatUnary):
    NAME = "log2"


@dataclass(frozen=True, kw_only=True)
class Sin(_FloatUnary):
    NAME = "sin"


@dataclass(frozen=True, kw_only=True)
class Cos(_FloatUnary):
    NAME = "cos"


@dataclass(frozen=True, kw_only=True)
class Tan(_FloatUnary):
    NAME = "tan"


@dataclass(frozen=True, kw_only=True)
class Sinh(_FloatUnary):
    NAME = "sinh"


@dataclass(frozen=True, kw_only=True)
class Cosh(_FloatUnary):
    NAME = "cosh"


@dataclass(frozen=True, kw_only=True)
class Ceil(_FloatUnary):
    NAME = "ceil"


@dataclass(frozen=True, kw_only=True)
class Floor(_FloatUnary):
    NAME = "floor"


@dataclass(frozen=True, kw_only=True)
class RemF(Op):
    """Float remainder of truncated division; the sign follows `lhs`."""

    NAME = "remf"
    result: Value = result()
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class Pow(Op):
    """`source ** exponent`, element-wise, both floats of one type."""

    NAME = "pow"
    result: Value = result()
    source: Value = operand()
    exponent: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class Atan2(Op):
    """The arc tangent of `x / y` in the right quadrant; bytecode 13.2 or later."""

    NAME = "atan2"
    result: Value = result()
    x: Value = operand()
    y: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class _FloatUnaryRounded(Op):
    """`rounding` is FULL (CUDA math) or APPROX (fast hardware approximation)."""

    result: Value = result()
    rounding: RoundingMode = attribute(RoundingMode.FULL)
    source: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class Exp(_FloatUnaryRounded):
    """`rounding` is encoded from bytecode 13.3; older versions can only say FULL."""

    NAME = "exp"


@dataclass(frozen=True, kw_only=True)
class Tanh(_FloatUnaryRounded):
    """`rounding` is encoded from bytecode 13.2; 13.1 can only say FULL."""

    NAME = "tanh"


@dataclass(frozen=True, kw_only=True)
class _FloatUnaryFtz(Op):
    result: Value = result()
    flush_to_zero: bool = attribute(False)
    source: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class Exp2(_FloatUnaryFtz):
    NAME = "exp2"


@dataclass(frozen=True, kw_only=True)
class Rsqrt(_FloatUnaryFtz):
    NAME = "rsqrt"


@dataclass(frozen=True, kw_only=True)
class Sqrt(Op):
    NAME = "sqrt"
    result: Value = result()
    flush_to_zero: bool = attribute(False)
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_EVEN)
    source: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class NegI(Op):
    """Integer negation; `overflow` is encoded from bytecode 13.2 (13.1 only says NONE)."""

    NAME = "negi"
    result: Value = result()
    overflow: IntegerOverflow = attribute(IntegerOverflow.NONE)
    source: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class _FloatMinMax(Op):
    result: Value = result()
    propagate_nan: bool = attribute(False)
    flush_to_zero: bool = attribute(False)
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class MaxF(_FloatMinMax):
    NAME = "maxf"


@dataclass(frozen=True, kw_only=True)
class MinF(_FloatMinMax):
    NAME = "minf"


@dataclass(frozen=True, kw_only=True)
class _IntMinMax(Op):
    result: Value = result()
    signedness: Signedness = attribute(Signedness.SIGNED)
    lhs: Value = operand()
    rhs: Value = operand()

    TRAITS = INTEGER_ELEMENTWISE


@dataclass(frozen=True, kw_only=True)
class MaxI(_IntMinMax):
    NAME = "maxi"


@dataclass(frozen=True, kw_only=True)
class MinI(_IntMinMax):
    NAME = "mini"


@dataclass(frozen=True, kw_only=True)
class Fma(Op):
    """`lhs * rhs + acc` with a single rounding."""

    NAME = "fma"
    result: Value = result()
    flush_to_zero: bool = attribute(False)
    rounding: RoundingMode = attribute(RoundingMode.NEAREST_EVEN)
    lhs: Value = operand()
    rhs: Value = operand()
    acc: Value = operand()

    TRAITS = FLOAT_ELEMENTWISE
