//! [`Exact`]: an element `(a + b*sqrt2) / 2^k` of the ring Z[1/sqrt2] with `i128`
//! coefficients, every operation checked.

use super::qsqrt2::QSqrt2;
use num_bigint::BigInt;
use num_traits::{Num, One, Zero};
use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};
use std::str::FromStr;

/// The `k` of the poison value (a result that did not fit `i128`).
pub(super) const POISON_K: u32 = u32::MAX;

/// A real number `(a + b*sqrt2) / 2^k` with integers `a`, `b` (`i128`) and `k >= 0`: an
/// element of `Z[1/sqrt2]`. A `Complex<Exact>` is an element of `Z[i][1/sqrt2]`, the ring every
/// amplitude of a Cantwell game lies in (the gates' entries are 0, 1, i, 1/sqrt2, i/sqrt2).
///
/// The representation is canonical: `k` is as small as possible (`a` and `b` are not both
/// even unless `k == 0`) and zero is `(0, 0, 0)`, so equal numbers have equal fields and
/// `==` is exact equality.
///
/// Arithmetic is checked and never gives a wrong answer: a result whose coefficients do not
/// fit `i128` is the sticky *poison* value ([`Exact::is_poisoned`]); every operation with a
/// poisoned operand is poisoned, and the simulator refuses a gate whose result could
/// overflow before it changes anything (see `docs/exact.md`).
///
/// ```
/// use qchess_sim::Exact;
/// let h = Exact::frac_1_sqrt_2();
/// assert_eq!(h * h, Exact::from_dyadic(1, 1)); // (1/sqrt2)^2 = 1/2, exactly
/// assert_eq!(h.to_string(), "1/2*sqrt2");
/// assert_eq!((h + h) * h, Exact::one());
/// assert!((h.to_f64() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-16);
/// # use num_traits::One;
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Exact {
    pub(super) a: i128,
    pub(super) b: i128,
    pub(super) k: u32,
}

impl fmt::Debug for Exact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_poisoned() {
            write!(f, "Exact(poison)")
        } else {
            write!(f, "Exact({})", self)
        }
    }
}

/// `x << s` if it fits, else `None`.
#[inline]
fn shl_checked(x: i128, s: u32) -> Option<i128> {
    if x == 0 {
        return Some(0);
    }
    if s >= 127 {
        return None;
    }
    let y = x << s;
    (y >> s == x).then_some(y)
}

impl Exact {
    /// Zero.
    pub const ZERO: Exact = Exact { a: 0, b: 0, k: 0 };
    /// One.
    pub const ONE: Exact = Exact { a: 1, b: 0, k: 0 };
    /// The poison value: the result of an operation that did not fit `i128`.
    pub const POISON: Exact = Exact {
        a: 0,
        b: 0,
        k: POISON_K,
    };

    /// `(a + b*sqrt2) / 2^k`, reduced. `k == u32::MAX` gives the poison value.
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// assert_eq!(Exact::new(4, 2, 2), Exact::new(2, 1, 1));
    /// assert_eq!(Exact::new(4, 2, 2).parts(), Some((2, 1, 1)));
    /// ```
    pub fn new(a: i128, b: i128, k: u32) -> Self {
        if k == POISON_K {
            return Self::POISON;
        }
        Self::reduced(a, b, k)
    }

    /// The integer `n / 2^k` (a dyadic rational).
    ///
    /// ```
    /// assert_eq!(qchess_sim::Exact::from_dyadic(3, 2).to_f64(), 0.75);
    /// ```
    pub fn from_dyadic(n: i128, k: u32) -> Self {
        Self::new(n, 0, k)
    }

    /// `1/sqrt2 = sqrt2/2`.
    ///
    /// ```
    /// assert_eq!(qchess_sim::Exact::frac_1_sqrt_2().parts(), Some((0, 1, 1)));
    /// ```
    pub const fn frac_1_sqrt_2() -> Self {
        Exact { a: 0, b: 1, k: 1 }
    }

    /// `sqrt2`.
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// assert_eq!(Exact::sqrt2() * Exact::sqrt2(), Exact::from_dyadic(2, 0));
    /// ```
    pub const fn sqrt2() -> Self {
        Exact { a: 0, b: 1, k: 0 }
    }

    #[inline]
    fn reduced(a: i128, b: i128, k: u32) -> Self {
        if a == 0 && b == 0 {
            return Self::ZERO;
        }
        let t = (a | b).trailing_zeros().min(k);
        Exact {
            a: a >> t,
            b: b >> t,
            k: k - t,
        }
    }

    /// `(a, b, k)` with the value `(a + b*sqrt2) / 2^k`, or `None` for the poison value.
    ///
    /// ```
    /// assert_eq!(qchess_sim::Exact::POISON.parts(), None);
    /// ```
    pub fn parts(self) -> Option<(i128, i128, u32)> {
        (!self.is_poisoned()).then_some((self.a, self.b, self.k))
    }

    /// Whether this is the poison value (an overflowed result).
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// let big = Exact::from_dyadic(i128::MAX, 0);
    /// assert!((big + big).is_poisoned());
    /// assert!(!(big - big).is_poisoned());
    /// ```
    #[inline]
    pub fn is_poisoned(self) -> bool {
        self.k == POISON_K
    }

    /// Exact sum, or `None` if a coefficient would not fit `i128` (or an operand is poison).
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// let h = Exact::frac_1_sqrt_2();
    /// assert_eq!(h.checked_add(h), Some(Exact::sqrt2()));
    /// assert_eq!(Exact::from_dyadic(i128::MAX, 0).checked_add(Exact::ONE), None);
    /// ```
    #[inline]
    pub fn checked_add(self, o: Self) -> Option<Self> {
        if self.is_poisoned() || o.is_poisoned() {
            return None;
        }
        if o.a == 0 && o.b == 0 {
            return Some(self);
        }
        if self.a == 0 && self.b == 0 {
            return Some(o);
        }
        let k = self.k.max(o.k);
        let (sa, sb) = (
            shl_checked(self.a, k - self.k)?,
            shl_checked(self.b, k - self.k)?,
        );
        let (oa, ob) = (shl_checked(o.a, k - o.k)?, shl_checked(o.b, k - o.k)?);
        Some(Self::reduced(sa.checked_add(oa)?, sb.checked_add(ob)?, k))
    }

    /// Exact negation, or `None` on overflow (`i128::MIN`) or poison.
    ///
    /// ```
    /// assert_eq!(qchess_sim::Exact::ONE.checked_neg().map(|x| x.to_f64()), Some(-1.0));
    /// ```
    #[inline]
    pub fn checked_neg(self) -> Option<Self> {
        if self.is_poisoned() {
            return None;
        }
        Some(Exact {
            a: self.a.checked_neg()?,
            b: self.b.checked_neg()?,
            k: self.k,
        })
    }

    /// Exact product, or `None` on overflow or poison.
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// assert_eq!(Exact::sqrt2().checked_mul(Exact::frac_1_sqrt_2()), Some(Exact::ONE));
    /// ```
    #[inline]
    pub fn checked_mul(self, o: Self) -> Option<Self> {
        if self.is_poisoned() || o.is_poisoned() {
            return None;
        }
        if (self.a == 0 && self.b == 0) || (o.a == 0 && o.b == 0) {
            return Some(Self::ZERO);
        }
        // Gate entries and phases are mostly +-1: no multiplication needed.
        if o.b == 0 && o.k == 0 && (o.a == 1 || o.a == -1) {
            return if o.a == 1 {
                Some(self)
            } else {
                self.checked_neg()
            };
        }
        // (a + b r)(c + d r) = (ac + 2bd) + (ad + bc) r with r = sqrt2.
        let (a, b, c, d) = (self.a, self.b, o.a, o.b);
        let x = a
            .checked_mul(c)?
            .checked_add(b.checked_mul(d)?.checked_mul(2)?)?;
        let y = a.checked_mul(d)?.checked_add(b.checked_mul(c)?)?;
        let k = self.k.checked_add(o.k)?;
        if k == POISON_K {
            return None;
        }
        Some(Self::reduced(x, y, k))
    }

    /// Exact product by `1/sqrt2`: `(a + b*sqrt2)/sqrt2 = (2b + a*sqrt2)/2`.
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// assert_eq!(Exact::ONE.checked_mul_frac_1_sqrt_2(), Some(Exact::frac_1_sqrt_2()));
    /// ```
    #[inline]
    pub fn checked_mul_frac_1_sqrt_2(self) -> Option<Self> {
        if self.is_poisoned() {
            return None;
        }
        let k = self.k.checked_add(1)?;
        if k == POISON_K {
            return None;
        }
        Some(Self::reduced(self.b.checked_mul(2)?, self.a, k))
    }

    /// The value as the nearest `f64` (about 1 ulp; no cancellation error: when `a` and
    /// `b*sqrt2` have opposite signs it is computed as `(a^2 - 2b^2) / (a - b*sqrt2)`).
    /// NaN for the poison value.
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// // 1 - 1/sqrt2 * sqrt2 is exactly 0; a huge a and b that nearly cancel stay accurate.
    /// let x = Exact::new(665_857, -470_832, 0); // 665857 - 470832 sqrt2 ~ 7.5e-7
    /// assert!((x.to_f64() - 7.509_119_826_032_946e-7).abs() < 1e-21);
    /// ```
    pub fn to_f64(self) -> f64 {
        if self.is_poisoned() {
            return f64::NAN;
        }
        let (a, b) = (self.a, self.b);
        let r2 = std::f64::consts::SQRT_2;
        let v = if a == 0 || b == 0 || (a > 0) == (b > 0) {
            a as f64 + b as f64 * r2
        } else {
            let (ba, bb) = (BigInt::from(a), BigInt::from(b));
            let num: BigInt = &ba * &ba - BigInt::from(2) * &bb * &bb;
            num_traits::ToPrimitive::to_f64(&num).unwrap_or(f64::NAN) / (a as f64 - b as f64 * r2)
        };
        scale_pow2(v, self.k)
    }

    /// An exactly representable `f64` (every finite `f64` is a dyadic rational) as an
    /// `Exact`; the poison value for NaN, infinities, or values whose integer part does not
    /// fit `i128`.
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// assert_eq!(Exact::from_f64(0.375), Exact::from_dyadic(3, 3));
    /// assert!(Exact::from_f64(f64::NAN).is_poisoned());
    /// ```
    pub fn from_f64(x: f64) -> Self {
        if !x.is_finite() {
            return Self::POISON;
        }
        if x == 0.0 {
            return Self::ZERO;
        }
        let bits = x.to_bits();
        let sign: i128 = if bits >> 63 == 1 { -1 } else { 1 };
        let exp = ((bits >> 52) & 0x7ff) as i64;
        let frac = (bits & ((1u64 << 52) - 1)) as i128;
        let (m, e) = if exp == 0 {
            (frac, -1074i64)
        } else {
            (frac | (1i128 << 52), exp - 1075)
        };
        if e >= 0 {
            match shl_checked(m, e as u32) {
                Some(v) => Self::reduced(sign * v, 0, 0),
                None => Self::POISON,
            }
        } else {
            Self::reduced(sign * m, 0, (-e) as u32)
        }
    }

    /// The value as an element of Q(sqrt2) with big rational coordinates (`None` for
    /// poison).
    ///
    /// ```
    /// use qchess_sim::Exact;
    /// assert_eq!(Exact::new(1, -3, 2).to_qsqrt2().unwrap().to_string(), "1/4-3/4*sqrt2");
    /// ```
    pub fn to_qsqrt2(self) -> Option<QSqrt2> {
        self.parts().map(|(a, b, k)| QSqrt2::from_parts(a, b, k))
    }

    /// Bits a gate may use: the largest coefficient's bit length `bits` and `k`, so that
    /// `bits - k` bounds the value's size; used by the simulator's overflow pre-check.
    /// `None` for poison.
    #[inline]
    pub(crate) fn size(self) -> Option<(u32, u32)> {
        if self.is_poisoned() {
            return None;
        }
        let bits = |x: i128| 128 - x.unsigned_abs().leading_zeros();
        Some((bits(self.a).max(bits(self.b)), self.k))
    }

    /// Multiplies by `2^s` when `k >= s` (only lowers `k`; used for exact global rescaling).
    #[inline]
    pub(crate) fn shift_down(self, s: u32) -> Self {
        if self.is_poisoned() || (self.a == 0 && self.b == 0) {
            return self;
        }
        debug_assert!(self.k >= s);
        Exact {
            a: self.a,
            b: self.b,
            k: self.k - s,
        }
    }

    /// `k` of a non-zero, non-poison value (`None` otherwise).
    #[inline]
    pub(crate) fn k_if_nonzero(self) -> Option<u32> {
        (!(self.is_poisoned() || (self.a == 0 && self.b == 0))).then_some(self.k)
    }
}

/// `v * 2^-k` without overflow or underflow of the scale factor itself.
fn scale_pow2(mut v: f64, mut k: u32) -> f64 {
    while k > 0 {
        let s = k.min(1000);
        v *= 2f64.powi(-(s as i32));
        k -= s;
    }
    v
}

impl fmt::Display for Exact {
    /// The string form of [`QSqrt2`](crate::QSqrt2): `x`, `y*sqrt2`, `x+y*sqrt2` or
    /// `x-y*sqrt2`; `poison` for the poison value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_qsqrt2() {
            Some(q) => fmt::Display::fmt(&q, f),
            None => f.write_str("poison"),
        }
    }
}

impl FromStr for Exact {
    type Err = super::qsqrt2::ParseQSqrt2Error;
    /// Parses the [`QSqrt2`](crate::QSqrt2) string form; errors if the value is not in
    /// Z[1/sqrt2] (a denominator other than a power of two) or does not fit `i128`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<QSqrt2>()?
            .to_exact()
            .ok_or(super::qsqrt2::ParseQSqrt2Error::NotDyadic)
    }
}

impl Add for Exact {
    type Output = Exact;
    #[inline]
    fn add(self, o: Exact) -> Exact {
        self.checked_add(o).unwrap_or(Exact::POISON)
    }
}

impl Sub for Exact {
    type Output = Exact;
    #[inline]
    fn sub(self, o: Exact) -> Exact {
        o.checked_neg()
            .and_then(|n| self.checked_add(n))
            .unwrap_or(Exact::POISON)
    }
}

impl Mul for Exact {
    type Output = Exact;
    #[inline]
    fn mul(self, o: Exact) -> Exact {
        self.checked_mul(o).unwrap_or(Exact::POISON)
    }
}

impl Neg for Exact {
    type Output = Exact;
    #[inline]
    fn neg(self) -> Exact {
        self.checked_neg().unwrap_or(Exact::POISON)
    }
}

impl Div for Exact {
    type Output = Exact;
    /// Exact quotient when it lies in Z[1/sqrt2] and fits; otherwise poison (never a
    /// rounded value). Present because `Complex<T>` arithmetic needs `num_traits::Num`;
    /// the simulator never divides.
    fn div(self, o: Exact) -> Exact {
        match (self.to_qsqrt2(), o.to_qsqrt2()) {
            (Some(x), Some(y)) if !y.is_zero() => (x / y).to_exact().unwrap_or(Exact::POISON),
            _ => Exact::POISON,
        }
    }
}

impl Rem for Exact {
    type Output = Exact;
    /// Zero when the exact quotient lies in Z[1/sqrt2] (the ring is a field there is no
    /// other meaningful remainder), else poison. Present only for `num_traits::Num`.
    #[allow(clippy::suspicious_arithmetic_impl)] // defined through the exact quotient
    fn rem(self, o: Exact) -> Exact {
        let q = self / o;
        if q.is_poisoned() {
            Exact::POISON
        } else {
            Exact::ZERO
        }
    }
}

impl Zero for Exact {
    fn zero() -> Self {
        Exact::ZERO
    }
    fn is_zero(&self) -> bool {
        *self == Exact::ZERO
    }
}

impl One for Exact {
    fn one() -> Self {
        Exact::ONE
    }
}

impl Num for Exact {
    type FromStrRadixErr = super::qsqrt2::ParseQSqrt2Error;
    /// Radix 10 only: the [`Display`](fmt::Display) form.
    fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
        if radix != 10 {
            return Err(super::qsqrt2::ParseQSqrt2Error::Syntax);
        }
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn small() -> impl Strategy<Value = Exact> {
        (-1000i128..1000, -1000i128..1000, 0u32..20).prop_map(|(a, b, k)| Exact::new(a, b, k))
    }

    proptest! {
        #[test]
        fn ring_ops_match_f64(x in small(), y in small()) {
            let (fx, fy) = (x.to_f64(), y.to_f64());
            let tol = 1e-12 * (1.0 + fx.abs() + fy.abs()).powi(2);
            prop_assert!(((x + y).to_f64() - (fx + fy)).abs() < tol);
            prop_assert!(((x - y).to_f64() - (fx - fy)).abs() < tol);
            prop_assert!(((x * y).to_f64() - fx * fy).abs() < tol);
            prop_assert!(((-x).to_f64() + fx).abs() < tol);
            prop_assert!((x.checked_mul_frac_1_sqrt_2().unwrap().to_f64()
                - fx * std::f64::consts::FRAC_1_SQRT_2).abs() < tol);
        }

        #[test]
        fn canonical_and_ring_laws(x in small(), y in small(), z in small()) {
            prop_assert_eq!((x + y) * z, x * z + y * z);
            prop_assert_eq!(x * y, y * x);
            prop_assert_eq!((x + y) - y, x);
            // Canonical: k minimal.
            if let Some((a, b, k)) = (x * y).parts() {
                prop_assert!(k == 0 || (a | b) & 1 == 1);
            }
        }

        #[test]
        fn display_parses_back(x in small()) {
            let s = x.to_string();
            prop_assert_eq!(s.parse::<Exact>().unwrap(), x);
        }

        #[test]
        fn from_f64_is_exact(v in -1e6f64..1e6) {
            prop_assert_eq!(Exact::from_f64(v).to_f64(), v);
        }
    }

    #[test]
    fn overflow_poisons_and_sticks() {
        let big = Exact::from_dyadic(1i128 << 100, 0);
        let p = big * big;
        assert!(p.is_poisoned());
        assert!((p + Exact::ONE).is_poisoned());
        assert!((Exact::ZERO * p).is_poisoned());
        assert!(p.to_f64().is_nan());
        assert!(Exact::from_dyadic(i128::MIN, 0).checked_neg().is_none());
        // Alignment overflow: 1 + 2^-127 needs a 127-bit shift.
        assert!(Exact::ONE.checked_add(Exact::from_dyadic(1, 127)).is_none());
        assert_eq!(
            Exact::ONE.checked_add(Exact::from_dyadic(1, 100)),
            Some(Exact::new((1i128 << 100) + 1, 0, 100))
        );
    }

    #[test]
    fn division_is_exact_or_poison() {
        let h = Exact::frac_1_sqrt_2();
        assert_eq!(Exact::ONE / h, Exact::sqrt2());
        assert_eq!(
            Exact::ONE / Exact::from_dyadic(4, 0),
            Exact::from_dyadic(1, 2)
        );
        assert!((Exact::ONE / Exact::from_dyadic(3, 0)).is_poisoned());
        assert!((Exact::ONE / Exact::ZERO).is_poisoned());
        assert_eq!(Exact::ONE % h, Exact::ZERO);
    }
}
