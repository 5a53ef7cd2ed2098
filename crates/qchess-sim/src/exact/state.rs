//! Exact read-outs and measurement of a `State<Exact>`: sums of `|alpha|^2` in Z[1/sqrt2]
//! (i128 while it fits, big integers after), probabilities in Q(sqrt2).

use super::{Exact, Probability, QSqrt2};
use crate::error::SimError;
use crate::kernels::scan;
use crate::key::Predicate;
use crate::perm::map_key;
use crate::state::State;
use num_bigint::BigInt;
use num_complex::Complex;
use num_traits::{One, Zero};

/// `|z|^2` exactly, if it fits `i128`.
#[inline]
fn norm2(z: &Complex<Exact>) -> Option<Exact> {
    z.re.checked_mul(z.re)?.checked_add(z.im.checked_mul(z.im)?)
}

/// A sum `(a + b*sqrt2) / 2^k` with big-integer coefficients (no reduction until the end).
#[derive(Default)]
struct Wide {
    a: BigInt,
    b: BigInt,
    k: u32,
}

impl Wide {
    fn add(&mut self, a: BigInt, b: BigInt, k: u32) {
        if k > self.k {
            self.a <<= k - self.k;
            self.b <<= k - self.k;
            self.k = k;
            self.a += a;
            self.b += b;
        } else {
            let s = self.k - k;
            self.a += a << s;
            self.b += b << s;
        }
    }

    /// Adds `|z|^2`: `((a^2 + 2b^2) + 2ab sqrt2) / 4^k` per part.
    fn add_norm(&mut self, z: &Complex<Exact>) -> Result<(), SimError> {
        for v in [z.re, z.im] {
            let (a, b, k) = v.parts().ok_or(SimError::ExactOverflow {
                context: "an amplitude overflowed earlier",
            })?;
            let (a, b) = (BigInt::from(a), BigInt::from(b));
            let x = &a * &a + BigInt::from(2) * &b * &b;
            let y = BigInt::from(2) * a * b;
            self.add(x, y, 2 * k);
        }
        Ok(())
    }

    fn to_qsqrt2(&self) -> QSqrt2 {
        let d = BigInt::one() << self.k;
        QSqrt2::new(
            num_rational::BigRational::new(self.a.clone(), d.clone()),
            num_rational::BigRational::new(self.b.clone(), d),
        )
    }
}

/// `sum |z|^2` over `amps`, exactly.
fn sum_norms<'a, I>(amps: I) -> Result<QSqrt2, SimError>
where
    I: Iterator<Item = &'a Complex<Exact>> + Clone,
{
    let mut acc = Exact::ZERO;
    let mut fits = true;
    for z in amps.clone() {
        match norm2(z).and_then(|n| acc.checked_add(n)) {
            Some(v) => acc = v,
            None => {
                fits = false;
                break;
            }
        }
    }
    if fits {
        return Ok(acc.to_qsqrt2().unwrap_or_default());
    }
    let mut w = Wide::default();
    for z in amps {
        w.add_norm(z)?;
    }
    Ok(w.to_qsqrt2())
}

impl State<Exact> {
    /// `(mass where the physical (mask, value) holds, total mass)`, exactly.
    fn masses_exact(&self, mask: u64, value: u64) -> Result<(QSqrt2, QSqrt2), SimError> {
        let mut yes = QSqrt2::zero();
        let mut all = QSqrt2::zero();
        for s in &self.sectors {
            let hit = s
                .keys
                .iter()
                .zip(&s.amps)
                .filter(move |(k, _)| *k & mask == value)
                .map(|(_, a)| a);
            yes = &yes + &sum_norms(hit)?;
            all = &all + &sum_norms(s.amps.iter())?;
        }
        Ok((yes, all))
    }

    /// The squared norm `N` of the (unnormalised) state, exactly: the sum of `|alpha|^2`, an
    /// element of Z[1/sqrt2]. Gates keep it; a projection lowers it to the kept mass (and a
    /// global rescale by a power of 4 may follow, see [`State::force_exact`]).
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, Predicate, State};
    /// let mut s = State::<Exact>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// assert_eq!(s.norm_exact()?.to_string(), "1");
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn norm_exact(&self) -> Result<Probability, SimError> {
        self.masses_exact(0, 0).map(|(_, all)| all)
    }

    /// The exact probability that `pred` holds: `(sum of |alpha|^2 where it holds) / N`.
    /// Errors on a malformed predicate or an overflowed amplitude.
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, Predicate, State};
    /// let mut s = State::<Exact>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// assert_eq!(s.probability_exact(Predicate::One(1))?.to_string(), "1/2");
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn probability_exact(&self, pred: Predicate) -> Result<Probability, SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        let (yes, all) = self.masses_exact(mask, value)?;
        if all.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        Ok(&yes / &all)
    }

    /// Projects onto `outcome` of `pred` without renormalising (the state stays exact; `N`
    /// becomes the kept mass) and returns the outcome's exact probability. Afterwards every
    /// amplitude is multiplied by the largest power of two that keeps all coefficients
    /// integral (probabilities are unchanged), so long games keep small coefficients.
    /// Errors, changing nothing, if the outcome has probability exactly 0.
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, Key, Predicate, State};
    /// let mut s = State::<Exact>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?; // i/sqrt2 (|010> + |100>)
    /// assert_eq!(s.force_exact(Predicate::One(1), true)?.to_string(), "1/2");
    /// assert_eq!(s.len(), 1);
    /// assert_eq!(s.probability_exact(Predicate::One(1))?.to_string(), "1");
    /// assert!(s.force_exact(Predicate::One(1), false).is_err());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_exact(&mut self, pred: Predicate, outcome: bool) -> Result<Probability, SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        let (yes, all) = self.masses_exact(mask, value)?;
        if all.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        let mass = if outcome { yes } else { &all - &yes };
        if mass.is_zero() {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        self.project_exact(mask, value, outcome);
        Ok(&mass / &all)
    }

    /// Measures `pred`: draws one `f64` `r` from `rng` (always exactly one, so replays stay
    /// in step, as [`State::measure`]) and takes the outcome `true` when `r < p` with `p` the
    /// exact probability (compared exactly); an outcome of probability exactly 0 is never
    /// chosen. Returns the outcome and its exact probability.
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, Predicate, State};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    /// let mut s = State::<Exact>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let (first, p) = s.measure_exact(Predicate::One(1), &mut rng)?;
    /// assert_eq!(p.to_string(), "1/2");
    /// assert_eq!(s.measure_exact(Predicate::One(1), &mut rng)?, (first, "1".parse().unwrap()));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn measure_exact<R: rand::Rng + ?Sized>(
        &mut self,
        pred: Predicate,
        rng: &mut R,
    ) -> Result<(bool, Probability), SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        let (yes, all) = self.masses_exact(mask, value)?;
        let r: f64 = rng.random();
        if all.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        let p = &yes / &all;
        let r = QSqrt2::from_f64(r).unwrap_or_default();
        let mut outcome = r < p;
        let p_of = |o: bool| if o { p.clone() } else { &QSqrt2::one() - &p };
        if p_of(outcome).is_zero() {
            outcome = !outcome;
        }
        self.project_exact(mask, value, outcome);
        Ok((outcome, p_of(outcome)))
    }

    /// Keeps the entries where `(key & mask == value) == keep`, then divides out the common
    /// power of two.
    fn project_exact(&mut self, mask: u64, value: u64, keep: bool) {
        for s in &mut self.sectors {
            let n = scan::project(&mut s.keys, &mut s.amps, mask, value, keep, Exact::ONE);
            s.keys.truncate(n);
            s.amps.truncate(n);
        }
        self.finish_pass();
        self.shrink_to_survivors();
        self.rescale_exact();
    }

    /// Multiplies every amplitude by `2^m` with `m` the smallest `k` of all coefficients.
    pub(crate) fn rescale_exact(&mut self) {
        let m = self
            .sectors
            .iter()
            .flat_map(|s| s.amps.iter())
            .flat_map(|z| [z.re.k_if_nonzero(), z.im.k_if_nonzero()])
            .flatten()
            .min()
            .unwrap_or(0);
        if m == 0 {
            return;
        }
        for s in &mut self.sectors {
            for z in &mut s.amps {
                *z = Complex::new(z.re.shift_down(m), z.im.shift_down(m));
            }
        }
    }

    /// Exact probability of each board (ancillas marginalised), most probable first (exact
    /// order), ties by board key; at most `limit` boards.
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, State};
    /// let mut s = State::<Exact>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let d = s.board_distribution_exact(None)?;
    /// assert_eq!(d.len(), 2);
    /// assert_eq!((d[0].0, d[0].1.to_string()), (0b010, "1/2".to_string()));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn board_distribution_exact(
        &self,
        limit: Option<usize>,
    ) -> Result<Vec<(u64, Probability)>, SimError> {
        let table = self.perm.logical_table();
        let norm = self.norm_exact()?;
        if norm.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        let mut all: Vec<(u64, &Complex<Exact>)> = Vec::with_capacity(self.len());
        for s in &self.sectors {
            all.extend(
                s.keys
                    .iter()
                    .zip(&s.amps)
                    .map(|(k, a)| (map_key(table.as_deref(), *k), a)),
            );
        }
        all.sort_by_key(|e| e.0);
        let mut out: Vec<(u64, Probability)> = Vec::new();
        for group in all.chunk_by(|x, y| x.0 == y.0) {
            let mass = sum_norms(group.iter().map(|e| e.1))?;
            out.push((group[0].0, &mass / &norm));
        }
        out.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        if let Some(l) = limit {
            out.truncate(l);
        }
        Ok(out)
    }

    /// Exact probability that each board qubit is 1 (index = qubit).
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, State};
    /// let mut s = State::<Exact>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let p = s.qubit_probabilities_exact()?;
    /// assert_eq!((p[0].to_string(), p[1].to_string(), p[2].to_string()), ("0".into(), "1/2".into(), "1/2".into()));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn qubit_probabilities_exact(&self) -> Result<Vec<Probability>, SimError> {
        (0..64u8)
            .map(|q| self.probability_exact(Predicate::One(q)))
            .collect()
    }

    /// `sqrt(N)` when it lies in Q(sqrt2) (then `alpha / sqrt(N)` are the normalised
    /// amplitudes, exactly), else `None`.
    ///
    /// ```
    /// use qchess_sim::{Controls, Exact, Predicate, State};
    /// let mut s = State::<Exact>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// s.force_exact(Predicate::One(1), true)?;
    /// // i/sqrt2 |010> is kept and rescaled by 2: i*sqrt2 |010>, N = 2.
    /// assert_eq!(s.norm_exact()?.to_string(), "2");
    /// assert_eq!(s.norm_sqrt_exact()?.unwrap().to_string(), "1*sqrt2");
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn norm_sqrt_exact(&self) -> Result<Option<QSqrt2>, SimError> {
        Ok(self.norm_exact()?.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_sums_agree_with_i128_sums() {
        let zs: Vec<Complex<Exact>> = (1..50)
            .map(|i| Complex::new(Exact::new(i, -2 * i + 1, 7), Exact::new(3 - i, i, 5)))
            .collect();
        let fast = sum_norms(zs.iter()).unwrap();
        let mut w = Wide::default();
        for z in &zs {
            w.add_norm(z).unwrap();
        }
        assert_eq!(w.to_qsqrt2(), fast);
        // A sum that needs big integers: coefficients near 2^100 squared.
        let big = Complex::new(Exact::new(1i128 << 100, 1, 0), Exact::ZERO);
        let s = sum_norms([big, big].iter()).unwrap();
        let expect = QSqrt2::from_parts(1i128 << 100, 1, 0);
        assert_eq!(s, &(&expect * &expect) * &QSqrt2::rational(2, 1));
    }
}
