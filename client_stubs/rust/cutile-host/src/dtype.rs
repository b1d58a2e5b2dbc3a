//! cuTile element types and the packing of one value into an ABI slot's ctype
//! (little-endian), with the same rounding and range rules as `client_stubs.dtypes`.

use std::fmt;

use crate::minifloat::{self, FloatFormat};

/// One cuTile element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    /// The mma operand format, an f32 bit pattern in memory (cuTile Rust's `tf32(u32)`).
    TF32,
    F64,
    /// fp8 e4m3 (no infinities), e5m2 (IEEE) and the e8m0 block scale: bit patterns on the host.
    F8E4M3FN,
    F8E5M2,
    F8E8M0FNU,
    /// Two fp4 e2m1 values packed in a byte (the host sees the byte).
    F4E2M1FNx2,
}

/// Signed, unsigned, float or bool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Bool,
    Signed,
    Unsigned,
    Float,
}

pub const ALL: [DType; 18] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::TF32,
    DType::F64,
    DType::F8E4M3FN,
    DType::F8E5M2,
    DType::F8E8M0FNU,
    DType::F4E2M1FNx2,
];

impl DType {
    /// The cuTile spelling ("f32", "bf16", "bool"...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::TF32 => "tf32",
            DType::F64 => "f64",
            DType::F8E4M3FN => "f8e4m3fn",
            DType::F8E5M2 => "f8e5m2",
            DType::F8E8M0FNU => "f8e8m0fnu",
            DType::F4E2M1FNx2 => "f4e2m1fnx2",
        }
    }

    /// The dtype of a cuTile name; None for names the client does not know.
    pub fn parse(name: &str) -> Option<DType> {
        ALL.iter().copied().find(|d| d.name() == name)
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::F8E4M3FN | DType::F8E5M2 | DType::F8E8M0FNU | DType::F4E2M1FNx2 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 | DType::TF32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    pub fn class(self) -> Class {
        match self {
            DType::Bool => Class::Bool,
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => Class::Signed,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => Class::Unsigned,
            DType::F4E2M1FNx2 => Class::Unsigned, // a byte of two codes
            DType::F16 | DType::BF16 | DType::F32 | DType::TF32 | DType::F64 => Class::Float,
            DType::F8E4M3FN | DType::F8E5M2 | DType::F8E8M0FNU => Class::Float,
        }
    }

    /// The 8-bit float format of an fp8 dtype (None for the others).
    pub fn minifloat(self) -> Option<FloatFormat> {
        match self {
            DType::F8E4M3FN => Some(minifloat::F8E4M3FN),
            DType::F8E5M2 => Some(minifloat::F8E5M2),
            DType::F8E8M0FNU => Some(minifloat::F8E8M0FNU),
            _ => None,
        }
    }

    pub fn is_integer(self) -> bool {
        matches!(self.class(), Class::Signed | Class::Unsigned)
    }

    /// Inclusive value range of an integer dtype.
    pub fn int_range(self) -> Option<(i128, i128)> {
        let bits = 8 * self.itemsize() as u32;
        match self.class() {
            Class::Signed => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
            Class::Unsigned => Some((0, (1i128 << bits) - 1)),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A host value for a scalar parameter (or an ABI slot): Python's bool, int or float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i128),
    Float(f64),
}

impl Scalar {
    /// Python's `repr` of the value (for error messages).
    pub fn repr(&self) -> String {
        match self {
            Scalar::Bool(true) => "True".into(),
            Scalar::Bool(false) => "False".into(),
            Scalar::Int(v) => v.to_string(),
            Scalar::Float(v) => float_repr(*v),
        }
    }

    fn as_f64(&self) -> f64 {
        match self {
            Scalar::Bool(b) => *b as u8 as f64,
            Scalar::Int(v) => *v as f64,
            Scalar::Float(v) => *v,
        }
    }
}

/// Python's `repr(float)`: the shortest text that reads back, in exponent form below 1e-4
/// and from 1e16 on.
pub fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let magnitude = v.abs();
    if magnitude == 0.0 || (1e-4..1e16).contains(&magnitude) {
        let text = format!("{v}");
        return if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        };
    }
    let text = format!("{v:e}");
    let (mantissa, exponent) = text.split_once('e').expect("exponent form");
    let exponent: i32 = exponent.parse().expect("an exponent");
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

macro_rules! scalar_from {
    ($($t:ty => $variant:ident as $conv:ty),* $(,)?) => {
        $(impl From<$t> for Scalar {
            fn from(v: $t) -> Self {
                Scalar::$variant(v as $conv)
            }
        })*
    };
}
scalar_from!(
    i8 => Int as i128, i16 => Int as i128, i32 => Int as i128, i64 => Int as i128,
    u8 => Int as i128, u16 => Int as i128, u32 => Int as i128, u64 => Int as i128,
    usize => Int as i128, isize => Int as i128, i128 => Int as i128,
    f32 => Float as f64, f64 => Float as f64,
);

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

impl From<half::f16> for Scalar {
    fn from(v: half::f16) -> Self {
        Scalar::Float(v.to_f64())
    }
}

impl From<half::bf16> for Scalar {
    fn from(v: half::bf16) -> Self {
        Scalar::Float(v.to_f64())
    }
}

/// Round to bfloat16 (nearest even) through f32, as `float_to_bf16_bits` does.
pub fn f32_to_bf16_bits(value: f32) -> u16 {
    if value.is_nan() {
        return 0x7FC0;
    }
    let bits = value.to_bits() as u64;
    let rounded = bits + 0x7FFF + ((bits >> 16) & 1);
    ((rounded >> 16) & 0xFFFF) as u16
}

/// f64 -> f32 as Python's struct 'f' does: an overflow of a finite value is an error.
fn to_f32(v: f64) -> Result<f32, String> {
    let narrowed = v as f32;
    if narrowed.is_infinite() && v.is_finite() {
        return Err("float too large to pack with f format".into());
    }
    Ok(narrowed)
}

/// Write `value` as `ctype` (little-endian) into `out` (exactly the ctype's size).
/// An error names why (out of range, a float for an integer slot).
pub fn pack_ctype(ctype: DType, value: Scalar, out: &mut [u8]) -> Result<(), String> {
    match ctype.class() {
        Class::Bool => {
            let truthy = match value {
                Scalar::Bool(b) => b,
                Scalar::Int(v) => v != 0,
                Scalar::Float(v) => v != 0.0,
            };
            out[0] = truthy as u8;
        }
        Class::Signed | Class::Unsigned => {
            let v = match value {
                Scalar::Bool(b) => b as i128,
                Scalar::Int(v) => v,
                Scalar::Float(f) => {
                    return Err(format!(
                        "{ctype} slot needs an integer, got float {}",
                        float_repr(f)
                    ))
                }
            };
            let (lo, hi) = ctype.int_range().expect("integer ctype");
            if v < lo || v > hi {
                return Err(format!("{v} does not fit in {ctype} [{lo}, {hi}]"));
            }
            let bytes = v.to_le_bytes();
            out.copy_from_slice(&bytes[..ctype.itemsize()]);
        }
        Class::Float => {
            let v = value.as_f64();
            if let Some(format) = ctype.minifloat() {
                out[0] = format.encode(v)?;
                return Ok(());
            }
            match ctype {
                DType::F64 => out.copy_from_slice(&v.to_le_bytes()),
                // tf32 scalars travel in an f32 container, as Python's struct 'f' packs them
                DType::F32 | DType::TF32 => out.copy_from_slice(&to_f32(v)?.to_le_bytes()),
                DType::F16 => {
                    let h = half::f16::from_f64(v);
                    if h.is_infinite() && v.is_finite() {
                        return Err("float too large to pack with e format".into());
                    }
                    out.copy_from_slice(&h.to_bits().to_le_bytes());
                }
                _ => {
                    let bits = if v.is_nan() {
                        0x7FC0
                    } else {
                        f32_to_bf16_bits(to_f32(v)?)
                    };
                    out.copy_from_slice(&bits.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(ctype: DType, value: Scalar) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; ctype.itemsize()];
        pack_ctype(ctype, value, &mut out).map(|_| out)
    }

    #[test]
    fn floats_print_as_python_does() {
        let cases = [
            (1e300, "1e+300"),
            (1e39, "1e+39"),
            (1.5e-5, "1.5e-05"),
            (2.5, "2.5"),
            (3.0, "3.0"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (123456789.0, "123456789.0"),
            (0.1, "0.1"),
        ];
        for (value, text) in cases {
            assert_eq!(float_repr(value), text);
        }
    }

    #[test]
    fn names_round_trip() {
        for d in ALL {
            assert_eq!(DType::parse(d.name()), Some(d));
        }
        assert_eq!(DType::parse("f8e4m3"), None);
    }

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(
            packed(DType::I32, Scalar::Int(-2)).unwrap(),
            vec![0xfe, 0xff, 0xff, 0xff]
        );
        assert!(packed(DType::I32, Scalar::Int(1 << 31)).is_err());
        assert!(packed(DType::U8, Scalar::Int(-1)).is_err());
        assert!(packed(DType::I64, Scalar::Float(1.0)).is_err());
        assert_eq!(packed(DType::U8, Scalar::Bool(true)).unwrap(), vec![1]);
    }

    #[test]
    fn floats_round_like_python() {
        // 1 + 2^-8 is a tie between two bf16 values: rounds to even (1.0)
        let tie = 1.0 + 1.0 / 256.0;
        assert_eq!(
            packed(DType::BF16, Scalar::Float(tie)).unwrap(),
            vec![0x80, 0x3f]
        );
        assert_eq!(
            packed(DType::BF16, Scalar::Float(f64::NAN)).unwrap(),
            vec![0xc0, 0x7f]
        );
        assert_eq!(
            packed(DType::F16, Scalar::Float(1.0)).unwrap(),
            vec![0x00, 0x3c]
        );
        assert!(packed(DType::F16, Scalar::Float(1e6)).is_err());
        assert!(packed(DType::F32, Scalar::Float(1e300)).is_err());
        assert_eq!(
            packed(DType::F32, Scalar::Float(f64::INFINITY)).unwrap(),
            f32::INFINITY.to_le_bytes().to_vec()
        );
    }
}
