//! Element types of host buffers, and the 16-bit float storage types.

use crate::enums::DType;

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values are laid out exactly as fstitch stores elements of
/// [`Element::DTYPE`]. Implemented for `f32`, `f64`, `i8`, `i32`, `i64`, `u8`, `bool`,
/// [`F16`] and [`Bf16`]; sealed, because run and evaluate trust the layout.
pub trait Element: Copy + sealed::Sealed + 'static {
    /// The fstitch dtype of this element type.
    const DTYPE: DType;
}

macro_rules! element {
    ($($rust:ty => $dtype:ident),* $(,)?) => {
        $(
            impl sealed::Sealed for $rust {}
            impl Element for $rust {
                const DTYPE: DType = DType::$dtype;
            }
        )*
    };
}

element!(
    f32 => F32,
    f64 => F64,
    i8 => I8,
    i32 => I32,
    i64 => I64,
    u8 => U8,
    bool => Bool,
    F16 => F16,
    Bf16 => BF16,
);

/// An IEEE binary16 value stored as its bit pattern, as fstitch stores `f16` elements.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F16(pub u16);

/// A bfloat16 value stored as its bit pattern, as fstitch stores `bf16` elements.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bf16(pub u16);

impl F16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> F16 {
        F16(bits)
    }

    /// The bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `value` rounded to the nearest f16, ties to even; overflow gives infinity and NaN
    /// stays a (quiet) NaN.
    pub fn from_f32(value: f32) -> F16 {
        let bits = value.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exponent = ((bits >> 23) & 0xff) as i32;
        let mantissa = bits & 0x7f_ffff;
        if exponent == 0xff {
            let nan = if mantissa != 0 {
                0x200 | (mantissa >> 13) as u16
            } else {
                0
            };
            return F16(sign | 0x7c00 | nan);
        }
        let half_exponent = exponent - 127 + 15;
        if half_exponent >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if half_exponent <= 0 {
            // A subnormal f16 (or zero): the significand with its implicit bit, shifted so
            // that one unit is 2^-24.
            if half_exponent < -10 {
                return F16(sign);
            }
            let significand = mantissa | 0x80_0000;
            let shift = (14 - half_exponent) as u32;
            let rounded = round_shift_right(significand, shift);
            return F16(sign | rounded as u16);
        }
        // A carry out of the mantissa correctly bumps the exponent, up to infinity.
        let rounded = round_shift_right(((half_exponent as u32) << 23) | mantissa, 13);
        F16(sign | rounded as u16)
    }

    /// The exact f32 value.
    pub fn to_f32(self) -> f32 {
        let sign = u32::from(self.0 & 0x8000) << 16;
        let exponent = u32::from((self.0 >> 10) & 0x1f);
        let mantissa = u32::from(self.0 & 0x3ff);
        match exponent {
            0 => {
                let magnitude = mantissa as f32 * (1.0 / 16_777_216.0);
                if sign != 0 {
                    -magnitude
                } else {
                    magnitude
                }
            }
            0x1f => f32::from_bits(sign | 0x7f80_0000 | (mantissa << 13)),
            _ => f32::from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13)),
        }
    }
}

impl Bf16 {
    /// The value with these bits.
    pub const fn from_bits(bits: u16) -> Bf16 {
        Bf16(bits)
    }

    /// The bits.
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `value` rounded to the nearest bfloat16, ties to even; NaN stays a (quiet) NaN.
    pub fn from_f32(value: f32) -> Bf16 {
        let bits = value.to_bits();
        if value.is_nan() {
            return Bf16(((bits >> 16) as u16) | 0x40);
        }
        Bf16(round_shift_right(bits, 16) as u16)
    }

    /// The exact f32 value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

/// `value >> shift` rounded to nearest, ties to even; `shift` is 1..=31.
fn round_shift_right(value: u32, shift: u32) -> u32 {
    let kept = value >> shift;
    let remainder = value & ((1u32 << shift) - 1);
    let half = 1u32 << (shift - 1);
    if remainder > half || (remainder == half && kept & 1 == 1) {
        kept + 1
    } else {
        kept
    }
}

impl From<F16> for f32 {
    fn from(value: F16) -> f32 {
        value.to_f32()
    }
}

impl From<Bf16> for f32 {
    fn from(value: Bf16) -> f32 {
        value.to_f32()
    }
}
