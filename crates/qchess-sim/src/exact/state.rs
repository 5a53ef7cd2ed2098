//! Exact read-outs and measurement of a `State<Exact>`: sums of `|alpha|^2` in Z[1/sqrt2]
//! (i128 while it fits, big integers after), probabilities in Q(sqrt2).

use super::kernels::{MassScan, Masses, project_shift, scan_masses};
use super::{Exact, Probability, QSqrt2};
use crate::error::SimError;
use crate::key::Predicate;
use crate::perm::map_key;
use crate::state::State;
use num_complex::Complex;

/// `sum |z|^2` over `amps`, exactly (the mass scan with every entry counted).
fn sum_norms<'a, I>(amps: I) -> Result<QSqrt2, SimError>
where
    I: Iterator<Item = &'a Complex<Exact>>,
{
    let mut m = MassScan::default();
    for z in amps {
        m.add(z, true);
    }
    Ok(m.finish()?.all.to_qsqrt2())
}

impl State<Exact> {
    /// The exact masses where the physical `(mask, value)` holds and in total, with the
    /// smallest `k` of either side's components: one scan per sector
    /// ([`MassScan`](super::kernels::MassScan): 256-bit sums per denominator, big integers
    /// only at the end).
    fn masses_exact(&self, mask: u64, value: u64) -> Result<Masses, SimError> {
        self.sectors
            .iter()
            .map(|s| scan_masses(&s.keys, &s.amps, mask, value))
            .fold(MassScan::default(), MassScan::merge)
            .finish()
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
        self.masses_exact(0, 0).map(|m| m.all.to_qsqrt2())
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
        let m = self.masses_exact(mask, value)?;
        if m.all.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        Ok(m.yes.ratio(&m.all))
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
        let m = self.masses_exact(mask, value)?;
        if m.all.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        let mass = if outcome {
            m.yes.clone()
        } else {
            m.all.minus(&m.yes)
        };
        if mass.is_zero() {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        self.project_exact(mask, value, outcome, &m);
        Ok(mass.ratio(&m.all))
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
        let (outcome, m) = self.measure_exact_outcome(pred, rng)?;
        let mass = if outcome { m.yes } else { m.all.minus(&m.yes) };
        Ok((outcome, mass.ratio(&m.all)))
    }

    /// [`State::measure_exact`] without the final division: the outcome (decided by the
    /// exact comparison `r < yes / N`, done on integers) and the masses it was decided on.
    pub(crate) fn measure_exact_outcome<R: rand::Rng + ?Sized>(
        &mut self,
        pred: Predicate,
        rng: &mut R,
    ) -> Result<(bool, Masses), SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        let m = self.masses_exact(mask, value)?;
        let r: f64 = rng.random();
        if m.all.is_zero() {
            return Err(SimError::ZeroNorm);
        }
        // r is a dyadic rational in [0, 1): (rm + 0*sqrt2) / 2^re exactly.
        let (rm, _, re) = Exact::from_f64(r).parts().unwrap_or((0, 0, 0));
        let mut outcome = m.yes.ratio_exceeds(&m.all, rm, re);
        // An outcome of probability exactly 0 is never chosen.
        let zero = |o: bool| {
            if o {
                m.yes.is_zero()
            } else {
                m.all.minus(&m.yes).is_zero()
            }
        };
        if zero(outcome) {
            outcome = !outcome;
        }
        self.project_exact(mask, value, outcome, &m);
        Ok((outcome, m))
    }

    /// Keeps the entries where `(key & mask == value) == keep` and, in the same pass,
    /// divides out the common power of two of the kept amplitudes (every amplitude times
    /// `2^m`, `m` the smallest `k` of their non-zero components, which the mass scan `masses`
    /// found).
    fn project_exact(&mut self, mask: u64, value: u64, keep: bool, masses: &Masses) {
        let kmin = if keep {
            masses.kmin_yes
        } else {
            masses.kmin_no
        };
        let shift = if kmin == u32::MAX { 0 } else { kmin };
        for s in &mut self.sectors {
            let n = project_shift(&mut s.keys, &mut s.amps, mask, value, keep, shift);
            s.keys.truncate(n);
            s.amps.truncate(n);
        }
        self.finish_pass();
        self.shrink_to_survivors();
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
