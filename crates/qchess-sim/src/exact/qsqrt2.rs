//! [`QSqrt2`] (alias [`Probability`]): an element `x + y*sqrt2` of the field Q(sqrt2) with
//! big rational `x`, `y`, its string form, parsing and serde.

use super::ring::Exact;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};
use std::str::FromStr;

/// A number `x + y*sqrt2` with rational `x`, `y` (big integers: never overflows): an element
/// of the field Q(sqrt2). Every probability `|alpha|^2 / N` of an exact state lies here.
///
/// Its string form ([`Display`](fmt::Display), parsed back by [`FromStr`], written by
/// `Serialize`) is one of `x`, `y*sqrt2`, `x+y*sqrt2`, `x-y*sqrt2` with `x`, `y` reduced
/// fractions `n` or `n/d` (`d > 1`); `x` may be negative, and so may `y` in the form
/// `y*sqrt2`. Zero is `0`.
///
/// ```
/// use qchess_sim::Probability;
/// let p: Probability = "3/4-1/4*sqrt2".parse()?;
/// assert_eq!(p.to_string(), "3/4-1/4*sqrt2");
/// assert!((p.to_f64() - (0.75 - 0.25 * 2f64.sqrt())).abs() < 1e-16);
/// assert_eq!(serde_json::to_string(&p).unwrap(), "\"3/4-1/4*sqrt2\"");
/// # Ok::<(), qchess_sim::ParseQSqrt2Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct QSqrt2 {
    x: BigRational,
    y: BigRational,
}

/// The name the simulator's exact read-outs use for a [`QSqrt2`] that is a probability.
pub type Probability = QSqrt2;

/// Why a string is not a [`QSqrt2`] (or not an [`Exact`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseQSqrt2Error {
    /// Not of the form `x`, `y*sqrt2`, `x+y*sqrt2`, `x-y*sqrt2` with fractions `n`/`n/d`.
    Syntax,
    /// A denominator is zero.
    ZeroDenominator,
    /// Parsed, but not an element of Z[1/sqrt2] that fits `i128` (for [`Exact`]).
    NotDyadic,
}

impl fmt::Display for ParseQSqrt2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Syntax => {
                "expected x, y*sqrt2, x+y*sqrt2 or x-y*sqrt2 with x, y of the form n or n/d"
            }
            Self::ZeroDenominator => "a fraction has denominator 0",
            Self::NotDyadic => "not (a + b*sqrt2)/2^k with a, b fitting i128",
        })
    }
}

impl std::error::Error for ParseQSqrt2Error {}

impl fmt::Debug for QSqrt2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "QSqrt2({self})")
    }
}

fn pow2(k: u32) -> BigInt {
    BigInt::one() << k
}

impl QSqrt2 {
    /// `x + y*sqrt2`.
    ///
    /// ```
    /// use qchess_sim::QSqrt2;
    /// use num_rational::BigRational;
    /// let half = BigRational::new(1.into(), 2.into());
    /// assert_eq!(QSqrt2::new(half.clone(), half).to_string(), "1/2+1/2*sqrt2");
    /// ```
    pub fn new(x: BigRational, y: BigRational) -> Self {
        Self { x, y }
    }

    /// The rational `n / d` (`d != 0`).
    ///
    /// ```
    /// assert_eq!(qchess_sim::QSqrt2::rational(6, -4).to_string(), "-3/2");
    /// ```
    pub fn rational(n: i64, d: i64) -> Self {
        Self {
            x: BigRational::new(n.into(), d.into()),
            y: BigRational::zero(),
        }
    }

    /// `(a + b*sqrt2) / 2^k`.
    ///
    /// ```
    /// assert_eq!(qchess_sim::QSqrt2::from_parts(2, 1, 2).to_string(), "1/2+1/4*sqrt2");
    /// ```
    pub fn from_parts(a: i128, b: i128, k: u32) -> Self {
        let d = pow2(k);
        Self {
            x: BigRational::new(a.into(), d.clone()),
            y: BigRational::new(b.into(), d),
        }
    }

    /// An `f64` exactly (every finite `f64` is rational); `None` for NaN and infinities.
    ///
    /// ```
    /// assert_eq!(qchess_sim::QSqrt2::from_f64(0.25).unwrap().to_string(), "1/4");
    /// ```
    pub fn from_f64(v: f64) -> Option<Self> {
        Some(Self {
            x: BigRational::from_float(v)?,
            y: BigRational::zero(),
        })
    }

    /// The rational part `x`.
    pub fn x(&self) -> &BigRational {
        &self.x
    }

    /// The coefficient `y` of `sqrt2`.
    pub fn y(&self) -> &BigRational {
        &self.y
    }

    /// The value as the nearest `f64` (no cancellation error: when `x` and `y*sqrt2` have
    /// opposite signs it is `(x^2 - 2y^2) / (x - y*sqrt2)`).
    ///
    /// ```
    /// use qchess_sim::Probability;
    /// let p: Probability = "1/2+1/4*sqrt2".parse().unwrap();
    /// assert!((p.to_f64() - 0.8535533905932737).abs() < 1e-16);
    /// ```
    pub fn to_f64(&self) -> f64 {
        let r2 = std::f64::consts::SQRT_2;
        let f = |q: &BigRational| q.to_f64().unwrap_or(f64::NAN);
        if self.x.is_zero() || self.y.is_zero() || self.x.is_positive() == self.y.is_positive() {
            f(&self.x) + f(&self.y) * r2
        } else {
            let two = BigRational::from_integer(2.into());
            let num = &self.x * &self.x - two * &self.y * &self.y;
            f(&num) / (f(&self.x) - f(&self.y) * r2)
        }
    }

    /// Whether the value is 0.
    pub fn is_zero(&self) -> bool {
        self.x.is_zero() && self.y.is_zero()
    }

    /// The sign: -1, 0 or 1, exactly.
    ///
    /// ```
    /// use qchess_sim::QSqrt2;
    /// let q: QSqrt2 = "-1414213/1000000+1*sqrt2".parse().unwrap();
    /// assert_eq!(q.signum(), 1);
    /// ```
    pub fn signum(&self) -> i32 {
        let s = |q: &BigRational| {
            if q.is_positive() {
                1
            } else if q.is_negative() {
                -1
            } else {
                0
            }
        };
        let (sx, sy) = (s(&self.x), s(&self.y));
        if sx == sy || sy == 0 {
            return sx;
        }
        if sx == 0 {
            return sy;
        }
        // Opposite signs: compare x^2 with 2y^2.
        let two = BigRational::from_integer(2.into());
        let d = &self.x * &self.x - two * &self.y * &self.y;
        if d.is_zero() {
            0 // impossible for y != 0 (sqrt2 is irrational), kept for totality
        } else if d.is_positive() {
            sx
        } else {
            sy
        }
    }

    /// The conjugate `x - y*sqrt2`.
    pub fn conj(&self) -> Self {
        Self {
            x: self.x.clone(),
            y: -self.y.clone(),
        }
    }

    /// The value as an [`Exact`] when it lies in Z[1/sqrt2] (denominators powers of two)
    /// and fits `i128`.
    ///
    /// ```
    /// use qchess_sim::{Exact, QSqrt2};
    /// assert_eq!(QSqrt2::rational(3, 8).to_exact(), Some(Exact::from_dyadic(3, 3)));
    /// assert_eq!(QSqrt2::rational(1, 3).to_exact(), None);
    /// ```
    pub fn to_exact(&self) -> Option<Exact> {
        let dx = self.x.denom();
        let dy = self.y.denom();
        let is_pow2 = |d: &BigInt| d.is_positive() && (d & (d - BigInt::one())).is_zero();
        if !is_pow2(dx) || !is_pow2(dy) {
            return None;
        }
        let k = dx.bits().max(dy.bits()) - 1;
        let k32 = u32::try_from(k).ok()?;
        let a = (self.x.numer() * (pow2(k32) / dx)).to_i128()?;
        let b = (self.y.numer() * (pow2(k32) / dy)).to_i128()?;
        let e = Exact::new(a, b, k32);
        (!e.is_poisoned()).then_some(e)
    }

    /// The square root in Q(sqrt2) when there is one: `x + y*sqrt2 = (u + v*sqrt2)^2` with
    /// rational `u`, `v`, the non-negative root. Used to normalise amplitudes exactly.
    ///
    /// ```
    /// use qchess_sim::QSqrt2;
    /// let q: QSqrt2 = "3/4+1/2*sqrt2".parse().unwrap(); // (1/2 + 1/2*sqrt2)^2
    /// assert_eq!(q.sqrt().unwrap().to_string(), "1/2+1/2*sqrt2");
    /// assert!(QSqrt2::rational(2, 1).sqrt().unwrap().to_string() == "1*sqrt2");
    /// assert!(QSqrt2::rational(3, 1).sqrt().is_none());
    /// ```
    pub fn sqrt(&self) -> Option<Self> {
        if self.signum() < 0 {
            return None;
        }
        if self.is_zero() {
            return Some(Self::default());
        }
        // (u + v r)^2 = u^2 + 2 v^2 + 2uv r: u^2 + 2v^2 = x, 2uv = y. With n = x^2 - 2y^2
        // (must be a rational square s^2): u^2 = (x + s)/2 or (x - s)/2, v = y / (2u).
        let two = BigRational::from_integer(2.into());
        let n = &self.x * &self.x - &two * &self.y * &self.y;
        let s = rational_sqrt(&n)?;
        for u2 in [(&self.x + &s) / &two, (&self.x - &s) / &two] {
            let Some(u) = rational_sqrt(&u2) else {
                continue;
            };
            let cand = if u.is_zero() {
                // x = 2v^2, y = 0.
                let v = rational_sqrt(&(&self.x / &two))?;
                Self {
                    x: BigRational::zero(),
                    y: v,
                }
            } else {
                Self {
                    y: &self.y / (&two * &u),
                    x: u,
                }
            };
            if &cand * &cand == *self {
                return Some(if cand.signum() < 0 { -cand } else { cand });
            }
        }
        None
    }
}

/// The rational square root of `q >= 0`, if there is one.
fn rational_sqrt(q: &BigRational) -> Option<BigRational> {
    if q.is_negative() {
        return None;
    }
    let (n, d) = (q.numer(), q.denom());
    let (sn, sd) = (n.sqrt(), d.sqrt());
    (&sn * &sn == *n && &sd * &sd == *d).then(|| BigRational::new(sn, sd))
}

fn fmt_rational(q: &BigRational, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if q.denom().is_one() {
        write!(f, "{}", q.numer())
    } else {
        write!(f, "{}/{}", q.numer(), q.denom())
    }
}

impl fmt::Display for QSqrt2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.y.is_zero() {
            return fmt_rational(&self.x, f);
        }
        if self.x.is_zero() {
            fmt_rational(&self.y, f)?;
            return f.write_str("*sqrt2");
        }
        fmt_rational(&self.x, f)?;
        f.write_str(if self.y.is_negative() { "-" } else { "+" })?;
        fmt_rational(&self.y.abs(), f)?;
        f.write_str("*sqrt2")
    }
}

/// `-?n` or `-?n/d` with decimal digits; `signed` allows the leading `-`.
fn parse_rational(s: &str, signed: bool) -> Result<BigRational, ParseQSqrt2Error> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) if signed => (true, rest),
        Some(_) => return Err(ParseQSqrt2Error::Syntax),
        None => (false, s),
    };
    let digits = |t: &str| -> Result<BigInt, ParseQSqrt2Error> {
        if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
            return Err(ParseQSqrt2Error::Syntax);
        }
        t.parse::<BigInt>().map_err(|_| ParseQSqrt2Error::Syntax)
    };
    let (n, d) = match body.split_once('/') {
        Some((n, d)) => (digits(n)?, digits(d)?),
        None => (digits(body)?, BigInt::one()),
    };
    if d.is_zero() {
        return Err(ParseQSqrt2Error::ZeroDenominator);
    }
    let q = BigRational::new(n, d);
    Ok(if neg { -q } else { q })
}

impl FromStr for QSqrt2 {
    type Err = ParseQSqrt2Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let Some(head) = s.strip_suffix("*sqrt2") else {
            return Ok(Self {
                x: parse_rational(s, true)?,
                y: BigRational::zero(),
            });
        };
        // The separator is the last '+' or '-' after the first character.
        let split = head
            .char_indices()
            .skip(1)
            .filter(|&(_, c)| c == '+' || c == '-')
            .map(|(i, _)| i)
            .last();
        match split {
            None => Ok(Self {
                x: BigRational::zero(),
                y: parse_rational(head, true)?,
            }),
            Some(i) => {
                let x = parse_rational(&head[..i], true)?;
                let y = parse_rational(&head[i + 1..], false)?;
                Ok(Self {
                    x,
                    y: if &head[i..=i] == "-" { -y } else { y },
                })
            }
        }
    }
}

impl serde::Serialize for QSqrt2 {
    /// The string form.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for QSqrt2 {
    /// The string form.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl PartialOrd for QSqrt2 {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for QSqrt2 {
    /// Exact order of the real numbers.
    fn cmp(&self, o: &Self) -> Ordering {
        (self - o).signum().cmp(&0)
    }
}

impl Add for &QSqrt2 {
    type Output = QSqrt2;
    fn add(self, o: &QSqrt2) -> QSqrt2 {
        QSqrt2 {
            x: &self.x + &o.x,
            y: &self.y + &o.y,
        }
    }
}

impl Sub for &QSqrt2 {
    type Output = QSqrt2;
    fn sub(self, o: &QSqrt2) -> QSqrt2 {
        QSqrt2 {
            x: &self.x - &o.x,
            y: &self.y - &o.y,
        }
    }
}

impl Mul for &QSqrt2 {
    type Output = QSqrt2;
    fn mul(self, o: &QSqrt2) -> QSqrt2 {
        let two = BigRational::from_integer(2.into());
        QSqrt2 {
            x: &self.x * &o.x + two * &self.y * &o.y,
            y: &self.x * &o.y + &self.y * &o.x,
        }
    }
}

impl Div for &QSqrt2 {
    type Output = QSqrt2;
    /// Exact quotient; panics on division by zero like the rationals do (callers check).
    fn div(self, o: &QSqrt2) -> QSqrt2 {
        let two = BigRational::from_integer(2.into());
        let n = &o.x * &o.x - two * &o.y * &o.y;
        let p = self * &o.conj();
        QSqrt2 {
            x: p.x / &n,
            y: p.y / n,
        }
    }
}

macro_rules! by_value {
    ($tr:ident, $f:ident) => {
        impl $tr for QSqrt2 {
            type Output = QSqrt2;
            fn $f(self, o: QSqrt2) -> QSqrt2 {
                (&self).$f(&o)
            }
        }
    };
}
by_value!(Add, add);
by_value!(Sub, sub);
by_value!(Mul, mul);
by_value!(Div, div);

impl Neg for QSqrt2 {
    type Output = QSqrt2;
    fn neg(self) -> QSqrt2 {
        QSqrt2 {
            x: -self.x,
            y: -self.y,
        }
    }
}

impl Zero for QSqrt2 {
    fn zero() -> Self {
        Self::default()
    }
    fn is_zero(&self) -> bool {
        QSqrt2::is_zero(self)
    }
}

impl One for QSqrt2 {
    fn one() -> Self {
        Self::rational(1, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn q() -> impl Strategy<Value = QSqrt2> {
        (-50i64..50, 1i64..20, -50i64..50, 1i64..20).prop_map(|(a, b, c, d)| {
            QSqrt2::new(
                BigRational::new(a.into(), b.into()),
                BigRational::new(c.into(), d.into()),
            )
        })
    }

    #[test]
    fn the_four_string_forms() {
        for (s, v) in [
            ("0", 0.0),
            ("-3", -3.0),
            ("1/2", 0.5),
            ("1*sqrt2", std::f64::consts::SQRT_2),
            ("-1/2*sqrt2", -std::f64::consts::FRAC_1_SQRT_2),
            ("1/2+1/4*sqrt2", 0.5 + 0.25 * std::f64::consts::SQRT_2),
            ("-1/2-1/4*sqrt2", -0.5 - 0.25 * std::f64::consts::SQRT_2),
            ("3-2*sqrt2", 3.0 - 2.0 * std::f64::consts::SQRT_2),
        ] {
            let p: QSqrt2 = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
            assert!((p.to_f64() - v).abs() < 1e-15, "{s}");
        }
        // Non-reduced input is accepted and printed reduced.
        assert_eq!("2/4+0*sqrt2".parse::<QSqrt2>().unwrap().to_string(), "1/2");
        for bad in [
            "",
            "sqrt2",
            "1/0",
            "1+-1*sqrt2",
            "1 + 1*sqrt2",
            "1/2/3",
            "+1",
            "1e3",
            "x*sqrt2",
            "1+1",
        ] {
            assert!(bad.parse::<QSqrt2>().is_err(), "{bad}");
        }
    }

    #[test]
    fn serde_round_trip() {
        let p: QSqrt2 = "1/4-1/8*sqrt2".parse().unwrap();
        let j = serde_json::to_string(&p).unwrap();
        assert_eq!(j, "\"1/4-1/8*sqrt2\"");
        assert_eq!(serde_json::from_str::<QSqrt2>(&j).unwrap(), p);
        assert!(serde_json::from_str::<QSqrt2>("\"1/\"").is_err());
    }

    proptest! {
        #[test]
        fn field_ops_match_f64(a in q(), b in q()) {
            let (fa, fb) = (a.to_f64(), b.to_f64());
            let tol = 1e-10 * (1.0 + fa.abs() + fb.abs()).powi(2);
            prop_assert!(((&a + &b).to_f64() - (fa + fb)).abs() < tol);
            prop_assert!(((&a - &b).to_f64() - (fa - fb)).abs() < tol);
            prop_assert!(((&a * &b).to_f64() - fa * fb).abs() < tol);
            if !b.is_zero() {
                prop_assert_eq!(&(&a / &b) * &b, a.clone());
            }
            prop_assert_eq!(a.cmp(&b), fa.partial_cmp(&fb).unwrap());
            prop_assert_eq!(a.to_string().parse::<QSqrt2>().unwrap(), a.clone());
            let sq = &a * &a;
            let r = sq.sqrt().unwrap();
            prop_assert!(r == a || r == -a.clone());
        }
    }
}
