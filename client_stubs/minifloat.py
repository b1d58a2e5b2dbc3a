"""Small float formats that neither `struct` nor numpy can encode (fp8, fp4, e8m0): their values
as bit patterns and back, for ABI scalar slots, host arrays without ml_dtypes and the
compiler's constants. Standard library only (the compiler imports it through the element table).

Encoding rounds to the nearest representable value, ties to the even code (for formats with
a mantissa that is round-half-to-even). A value past the largest finite one raises
`OverflowError` (scalars) or becomes the format's infinity, NaN or largest value (arrays, like
numpy's casts); NaN becomes the format's NaN, `ValueError` where it has none.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import cached_property

IEEE, FINITE_NAN, FINITE = "ieee", "fn", "finite"  # special-value conventions


@dataclass(frozen=True)
class FloatFormat:
    """A sign/exponent/mantissa format.

    `specials`: IEEE (all-ones exponent: infinities and NaNs), FINITE_NAN ("fn": no
    infinities, the all-ones code is NaN) or FINITE (every code is a number). Unsigned formats
    (`signed=False`, e8m0) have no sign bit; `zero=False` formats (e8m0) hold only powers of two.
    """

    exponent: int
    mantissa: int
    specials: str = IEEE
    signed: bool = True
    zero: bool = True

    @property
    def bits(self) -> int:
        return self.exponent + self.mantissa + int(self.signed)

    @property
    def bias(self) -> int:
        return (1 << (self.exponent - 1)) - 1

    @property
    def _magnitude_codes(self) -> int:
        return 1 << (self.exponent + self.mantissa)

    def decode(self, code: int) -> float:
        """The value of a bit pattern."""
        sign_bit = self.exponent + self.mantissa
        negative = self.signed and (code >> sign_bit) & 1
        magnitude = code & (self._magnitude_codes - 1)
        value = self._decode_magnitude(magnitude)
        return -value if negative else value

    def _decode_magnitude(self, magnitude: int) -> float:
        all_ones = self._magnitude_codes - 1
        exp = magnitude >> self.mantissa
        man = magnitude & ((1 << self.mantissa) - 1)
        if self.specials == IEEE and exp == (1 << self.exponent) - 1:
            return math.inf if man == 0 else math.nan
        if self.specials == FINITE_NAN and magnitude == all_ones:
            return math.nan
        if not self.zero:
            return math.ldexp(1.0, exp - self.bias)
        if exp == 0:
            return math.ldexp(man, 1 - self.bias - self.mantissa)
        return math.ldexp((1 << self.mantissa) + man, exp - self.bias - self.mantissa)

    @cached_property
    def finite(self) -> tuple[tuple[float, ...], tuple[int, ...]]:
        """The finite non-negative values in increasing order and their codes."""
        pairs = sorted(
            (self._decode_magnitude(m), m)
            for m in range(self._magnitude_codes)
            if math.isfinite(self._decode_magnitude(m))
        )
        return tuple(v for v, _ in pairs), tuple(c for _, c in pairs)

    @property
    def max(self) -> float:
        return self.finite[0][-1]

    @property
    def nan_code(self) -> int | None:
        if self.specials == FINITE:
            return None
        if self.specials == FINITE_NAN:
            return self._magnitude_codes - 1
        return ((1 << self.exponent) - 1) << self.mantissa | 1 << max(0, self.mantissa - 1)

    def encode(self, value: float) -> int:
        """The bit pattern nearest to `value` (ties to the even code)."""
        if math.isnan(value):
            if self.nan_code is None:
                raise ValueError(f"NaN has no encoding in {self}")
            return self.nan_code
        negative = math.copysign(1.0, value) < 0
        if negative and not self.signed:
            if value == 0:
                negative = False
            else:
                raise OverflowError(f"{value} is negative; the format is unsigned")
        magnitude = self._nearest(abs(value))
        if magnitude is None:
            if self.specials != IEEE or not math.isinf(value):
                raise OverflowError(f"{value} is out of range (largest {self.max})")
            magnitude = ((1 << self.exponent) - 1) << self.mantissa
        sign = int(negative) << (self.exponent + self.mantissa)
        return sign | magnitude

    def _nearest(self, magnitude: float) -> int | None:
        """The code nearest to a non-negative magnitude; None past the largest value (by
        more than rounding would absorb)."""
        values, codes = self.finite
        i = bisect.bisect_left(values, magnitude)
        if i == len(values):
            step = values[-1] - values[-2]
            return codes[-1] if magnitude - values[-1] < step / 2 else None
        if i == 0 or values[i] == magnitude:
            return codes[i]
        below, above = magnitude - values[i - 1], values[i] - magnitude
        if below != above:
            return codes[i - 1] if below < above else codes[i]
        return codes[i - 1] if codes[i - 1] % 2 == 0 else codes[i]


F8E4M3FN = FloatFormat(4, 3, FINITE_NAN)
F8E5M2 = FloatFormat(5, 2, IEEE)
F8E8M0FNU = FloatFormat(8, 0, FINITE_NAN, signed=False, zero=False)
F4E2M1FN = FloatFormat(2, 1, FINITE)
