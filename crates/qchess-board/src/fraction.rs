//! Exact probabilities of the rule systems whose chances are rational: Niel's Chess (fair
//! dice: denominators divide a power of 6) and Akl-style (fair coins: powers of 2).

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Mul};

/// A probability as a reduced fraction `num/den` (`den > 0`).
///
/// ```
/// use qchess_board::Fraction;
/// let p = Fraction::new(1, 6) + Fraction::new(1, 3);
/// assert_eq!(p, Fraction::new(1, 2));
/// assert_eq!(p.to_string(), "1/2");
/// assert_eq!(Fraction::ONE.to_string(), "1");
/// assert_eq!(p.to_f64(), 0.5);
/// assert_eq!(p * Fraction::new(1, 2), Fraction::new(1, 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fraction {
    num: u64,
    den: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Fraction {
    /// 0.
    pub const ZERO: Fraction = Fraction { num: 0, den: 1 };
    /// 1.
    pub const ONE: Fraction = Fraction { num: 1, den: 1 };

    /// `num/den`, reduced. Panics if `den` is 0 (a programming error).
    pub fn new(num: u64, den: u64) -> Fraction {
        assert!(den != 0, "a fraction's denominator is never 0");
        let g = gcd(num, den).max(1);
        Fraction {
            num: num / g,
            den: den / g,
        }
    }

    /// The numerator (reduced).
    pub fn numerator(self) -> u64 {
        self.num
    }

    /// The denominator (reduced, at least 1).
    pub fn denominator(self) -> u64 {
        self.den
    }

    /// The nearest `f64`.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl Add for Fraction {
    type Output = Fraction;
    fn add(self, other: Fraction) -> Fraction {
        let g = gcd(self.den, other.den);
        let den = u128::from(self.den / g) * u128::from(other.den);
        let num = u128::from(self.num) * u128::from(other.den / g)
            + u128::from(other.num) * u128::from(self.den / g);
        let r = gcd128(num, den).max(1);
        Fraction {
            num: u64::try_from(num / r).expect("dice probabilities fit in u64"),
            den: u64::try_from(den / r).expect("dice probabilities fit in u64"),
        }
    }
}

impl Mul for Fraction {
    type Output = Fraction;
    fn mul(self, other: Fraction) -> Fraction {
        let (a, b) = (
            gcd(self.num, other.den).max(1),
            gcd(other.num, self.den).max(1),
        );
        Fraction::new(
            (self.num / a)
                .checked_mul(other.num / b)
                .expect("probabilities of a game fit in u64"),
            (self.den / b)
                .checked_mul(other.den / a)
                .expect("probabilities of a game fit in u64"),
        )
    }
}

fn gcd128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl PartialOrd for Fraction {
    fn partial_cmp(&self, other: &Fraction) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Fraction {
    fn cmp(&self, other: &Fraction) -> Ordering {
        (u128::from(self.num) * u128::from(other.den))
            .cmp(&(u128::from(other.num) * u128::from(self.den)))
    }
}

impl fmt::Display for Fraction {
    /// `"n/d"`, or `"n"` when the denominator is 1.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}
