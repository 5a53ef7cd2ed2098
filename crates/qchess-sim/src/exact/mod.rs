//! Exact arithmetic: amplitudes in `Z[i][1/sqrt2]` ([`Exact`] real and imaginary parts) and
//! probabilities in Q(sqrt2) ([`Probability`]). See `docs/exact.md`.
//!
//! Every Cantwell gate has entries in {0, 1, i, 1/sqrt2, i/sqrt2}, so a `State<Exact>` that
//! starts classical stays in `Z[i][1/sqrt2]` through every gate; it is never renormalised (a
//! projection only deletes entries), and every probability is `|alpha|^2 / N` with the exact
//! squared norm `N`, an element of Q(sqrt2).
//!
//! ```
//! use qchess_sim::{Controls, Exact, Key, Predicate, Probability, State};
//! // Section 11.2: the interference term on a2 is exactly 0.
//! let (a1, b1, a2, b2) = (0, 1, 8, 9);
//! let mut s = State::<Exact>::classical(1 << a1);
//! s.split(a1, a2, b1, Controls::NONE)?;
//! s.split(a2, a1, b2, Controls::NONE)?;
//! s.split(b1, a1, b2, Controls::NONE)?;
//! assert!(s.probability_exact(Predicate::One(a2))?.is_zero());
//! assert_eq!(s.probability_exact(Predicate::One(a1))?.to_string(), "3/8+1/4*sqrt2");
//! # Ok::<(), qchess_sim::SimError>(())
//! ```

mod kernels;
mod qsqrt2;
mod ring;
mod state;

pub use qsqrt2::{ParseQSqrt2Error, Probability, QSqrt2};
pub use ring::Exact;

use crate::amplitude::Amplitude;
use crate::error::SimError;
use num_complex::Complex;

/// Largest coefficient bit length a gate may produce: one bit below `i128`'s 127 value
/// bits, so negation can never overflow either.
const MAX_BITS: i64 = 126;

impl Amplitude for Exact {
    const DROP_EPS: Exact = Exact::ZERO;
    const ZERO_PROBABILITY: f64 = 0.0;
    const UNIT_TOLERANCE: f64 = 1e-12;
    const RENORMALIZES: bool = false;
    const CHEAP_ARITHMETIC: bool = false;
    const WIRE_WORDS: usize = 5;
    /// The coefficients `a`, `b` (low word, then high) and `k`; an overflowed value writes
    /// `k = u32::MAX`, which [`Exact::new`] reads back as the poison value.
    fn to_wire(self, out: &mut Vec<u64>) {
        let (a, b, k) = self.parts().unwrap_or((0, 0, u32::MAX));
        let (a, b) = (a as u128, b as u128);
        out.extend_from_slice(&[
            a as u64,
            (a >> 64) as u64,
            b as u64,
            (b >> 64) as u64,
            u64::from(k),
        ]);
    }
    fn from_wire(w: &[u64]) -> Self {
        let int = |lo: u64, hi: u64| (u128::from(lo) | u128::from(hi) << 64) as i128;
        let k = u32::try_from(w[4]).unwrap_or(u32::MAX);
        Exact::new(int(w[0], w[1]), int(w[2], w[3]), k)
    }
    fn of_f64(x: f64) -> Self {
        Exact::from_f64(x)
    }
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
    fn frac_1_sqrt_2() -> Self {
        Exact::frac_1_sqrt_2()
    }
    fn is_finite(self) -> bool {
        !self.is_poisoned()
    }
    #[inline(always)]
    fn survives(n: Complex<Self>, _: Complex<Self>, _: Complex<Self>) -> bool {
        n.re != Exact::ZERO || n.im != Exact::ZERO
    }
    /// Multiplication by 1, -1, i or -i is a swap and negations.
    #[inline(always)]
    fn mul_phase(a: Complex<Self>, f: Complex<Self>) -> Complex<Self> {
        let (o, m) = (Exact::ONE, -Exact::ONE);
        match (f.re, f.im) {
            (re, im) if re == o && im == Exact::ZERO => a,
            (re, im) if re == Exact::ZERO && im == o => Complex::new(-a.im, a.re),
            (re, im) if re == Exact::ZERO && im == m => Complex::new(a.im, -a.re),
            (re, im) if re == m && im == Exact::ZERO => Complex::new(-a.re, -a.im),
            _ => a * f,
        }
    }
    /// `+-i` and `-1` swap and negate coefficients in a branch-free pass (no growth: no
    /// overflow pre-check); see `kernels::mul_phase_where`.
    #[inline]
    fn mul_phase_where<F: Fn(u64) -> bool>(
        keys: &[u64],
        amps: &mut [Complex<Self>],
        holds: F,
        factor: Complex<Self>,
    ) {
        kernels::mul_phase_where(keys, amps, holds, factor);
    }
    /// With `K` the largest `k` and `B` the largest `bits - k` of the sector's coefficients
    /// (`bits` a coefficient's bit length), a pair gate's results and intermediates need at
    /// most `K + B + 2` bits and raise `K` and `B` by at most 1 each; so `gates` gates are
    /// safe when `K + B + 2 * gates + 2 <= 126`. A poisoned amplitude is an error too.
    fn check_growth(amps: &[Complex<Self>], gates: u32) -> Result<(), SimError> {
        let (mut kmax, mut bmax) = (0i64, i64::MIN);
        for z in amps {
            for v in [z.re, z.im] {
                let Some((bits, k)) = v.size() else {
                    return Err(SimError::ExactOverflow {
                        context: "an amplitude overflowed earlier",
                    });
                };
                if bits > 0 {
                    kmax = kmax.max(i64::from(k));
                    bmax = bmax.max(i64::from(bits) - i64::from(k));
                }
            }
        }
        if bmax != i64::MIN && kmax + bmax + 2 * i64::from(gates) + 2 > MAX_BITS {
            return Err(SimError::ExactOverflow {
                context: "the gate's exact coefficients could outgrow i128",
            });
        }
        Ok(())
    }
}
