//! The 8-bit float formats (fp8 e4m3fn and e5m2, the e8m0 scale) as bit patterns, with the
//! rounding and range rules of `client_stubs.minifloat`: the nearest code, ties to the even
//! code; NaN to the format's NaN; a value past the largest finite one (by more than rounding
//! absorbs) is an error, except an infinity in a format that has one.

/// How a format spends its all-ones exponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE: infinities and NaNs.
    Ieee,
    /// No infinities; the all-ones code is NaN ("fn").
    FiniteNan,
}

/// A sign/exponent/mantissa format of at most 8 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    pub exponent: u32,
    pub mantissa: u32,
    pub specials: Specials,
    /// No sign bit (e8m0).
    pub signed: bool,
    /// Has zero and subnormals (e8m0 holds only powers of two).
    pub zero: bool,
}

pub const F8E4M3FN: FloatFormat = FloatFormat {
    exponent: 4,
    mantissa: 3,
    specials: Specials::FiniteNan,
    signed: true,
    zero: true,
};
pub const F8E5M2: FloatFormat = FloatFormat {
    exponent: 5,
    mantissa: 2,
    specials: Specials::Ieee,
    signed: true,
    zero: true,
};
pub const F8E8M0FNU: FloatFormat = FloatFormat {
    exponent: 8,
    mantissa: 0,
    specials: Specials::FiniteNan,
    signed: false,
    zero: false,
};

impl FloatFormat {
    fn magnitude_codes(self) -> u32 {
        1 << (self.exponent + self.mantissa)
    }

    fn bias(self) -> i32 {
        (1 << (self.exponent - 1)) - 1
    }

    /// The value of a magnitude code (no sign bit).
    fn decode_magnitude(self, magnitude: u32) -> f64 {
        let exp = magnitude >> self.mantissa;
        let man = magnitude & ((1 << self.mantissa) - 1);
        if self.specials == Specials::Ieee && exp == (1 << self.exponent) - 1 {
            return if man == 0 { f64::INFINITY } else { f64::NAN };
        }
        if self.specials == Specials::FiniteNan && magnitude == self.magnitude_codes() - 1 {
            return f64::NAN;
        }
        let scale = |e: i32| 2f64.powi(e);
        if !self.zero {
            return scale(exp as i32 - self.bias());
        }
        if exp == 0 {
            return man as f64 * scale(1 - self.bias() - self.mantissa as i32);
        }
        ((1u32 << self.mantissa) + man) as f64
            * scale(exp as i32 - self.bias() - self.mantissa as i32)
    }

    /// The finite non-negative values in increasing order, with their codes.
    fn finite(self) -> Vec<(f64, u32)> {
        let mut pairs: Vec<(f64, u32)> = (0..self.magnitude_codes())
            .map(|m| (self.decode_magnitude(m), m))
            .filter(|(v, _)| v.is_finite())
            .collect();
        pairs.sort_by(|a, b| a.partial_cmp(b).expect("finite values"));
        pairs
    }

    /// The largest finite value.
    pub fn max(self) -> f64 {
        self.finite().last().expect("a finite value").0
    }

    fn nan_code(self) -> u32 {
        match self.specials {
            Specials::FiniteNan => self.magnitude_codes() - 1,
            Specials::Ieee => {
                (((1 << self.exponent) - 1) << self.mantissa)
                    | (1 << self.mantissa.saturating_sub(1))
            }
        }
    }

    /// The bit pattern nearest to `value`; an error says why there is none.
    pub fn encode(self, value: f64) -> Result<u8, String> {
        if value.is_nan() {
            return Ok(self.nan_code() as u8);
        }
        let mut negative = value.is_sign_negative();
        if negative && !self.signed {
            if value == 0.0 {
                negative = false;
            } else {
                return Err(format!(
                    "{} is negative; the format is unsigned",
                    crate::dtype::float_repr(value)
                ));
            }
        }
        let magnitude = match self.nearest(value.abs()) {
            Some(code) => code,
            None if self.specials == Specials::Ieee && value.is_infinite() => {
                ((1 << self.exponent) - 1) << self.mantissa
            }
            None => {
                return Err(format!(
                    "{} is out of range (largest {})",
                    crate::dtype::float_repr(value),
                    crate::dtype::float_repr(self.max())
                ))
            }
        };
        let sign = (negative as u32) << (self.exponent + self.mantissa);
        Ok((sign | magnitude) as u8)
    }

    /// The code nearest to a non-negative magnitude; None past the largest value.
    fn nearest(self, magnitude: f64) -> Option<u32> {
        let finite = self.finite();
        let i = finite.partition_point(|(v, _)| *v < magnitude);
        if i == finite.len() {
            let (top, top_code) = finite[i - 1];
            let step = top - finite[i - 2].0;
            return (magnitude - top < step / 2.0).then_some(top_code);
        }
        if i == 0 || finite[i].0 == magnitude {
            return Some(finite[i].1);
        }
        let (below, above) = (magnitude - finite[i - 1].0, finite[i].0 - magnitude);
        if below != above {
            return Some(if below < above {
                finite[i - 1].1
            } else {
                finite[i].1
            });
        }
        let even = if finite[i - 1].1.is_multiple_of(2) {
            i - 1
        } else {
            i
        };
        Some(finite[even].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_values() {
        assert_eq!(F8E4M3FN.max(), 448.0);
        assert_eq!(F8E5M2.max(), 57344.0);
        assert_eq!(F8E8M0FNU.max(), 2f64.powi(127));
    }

    #[test]
    fn codes_of_known_values() {
        assert_eq!(F8E4M3FN.encode(1.0), Ok(0x38));
        assert_eq!(F8E4M3FN.encode(-448.0), Ok(0xfe));
        assert_eq!(F8E4M3FN.encode(f64::NAN), Ok(0x7f));
        assert_eq!(F8E5M2.encode(1.0), Ok(0x3c));
        assert_eq!(F8E5M2.encode(f64::INFINITY), Ok(0x7c));
        assert_eq!(F8E5M2.encode(f64::NEG_INFINITY), Ok(0xfc));
        assert_eq!(F8E5M2.encode(f64::NAN), Ok(0x7e));
        assert_eq!(F8E8M0FNU.encode(1.0), Ok(127));
        assert_eq!(F8E8M0FNU.encode(0.25), Ok(125));
        assert_eq!(F8E8M0FNU.encode(f64::NAN), Ok(0xff));
    }

    #[test]
    fn ties_round_to_the_even_code() {
        // 1.0625 lies halfway between 1.0 (0x38) and 1.125 (0x39) in e4m3fn
        assert_eq!(F8E4M3FN.encode(1.0625), Ok(0x38));
        // 1.1875 lies halfway between 1.125 (0x39) and 1.25 (0x3a)
        assert_eq!(F8E4M3FN.encode(1.1875), Ok(0x3a));
    }

    #[test]
    fn out_of_range_is_an_error_with_pythons_words() {
        assert_eq!(
            F8E4M3FN.encode(480.0),
            Err("480.0 is out of range (largest 448.0)".into())
        );
        assert_eq!(F8E4M3FN.encode(463.0), Ok(0x7e)); // within half a step of 448
        assert_eq!(
            F8E8M0FNU.encode(-1.0),
            Err("-1.0 is negative; the format is unsigned".into())
        );
        assert_eq!(F8E8M0FNU.encode(-0.0), F8E8M0FNU.encode(0.0));
    }
}
