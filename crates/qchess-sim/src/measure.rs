//! Probabilities and projective measurement.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::compact::{self, PassExtras};
use crate::kernels::scan::{self, BLOCK};
use crate::key::Predicate;
use crate::state::State;
use std::any::Any;

impl<T: Amplitude> State<T> {
    /// `(mass where (phys mask, value) holds, total mass)`, summed sector by sector in f64.
    pub(crate) fn phys_masses(&self, mask: u64, value: u64) -> (f64, f64) {
        self.sectors.iter().fold((0.0, 0.0), |(y, a), s| {
            let (sy, sa) = scan::probability(&s.keys, &s.amps, mask, value);
            (y + sy, a + sa)
        })
    }

    /// [`State::phys_masses`] (the same sums, bit for bit) and, per sector, the number of
    /// entries where `(mask, value)` holds in each block of [`BLOCK`] entries: what the
    /// parallel projection needs to place every block's survivors ([`State::project`]), and
    /// the read of [`State::measure_keeping`].
    pub(crate) fn phys_masses_counted(
        &self,
        mask: u64,
        value: u64,
    ) -> Result<(f64, f64, Vec<Vec<usize>>), SimError> {
        let mut holds = Vec::new();
        holds
            .try_reserve_exact(self.sectors.len())
            .map_err(|_| SimError::OutOfMemory { states: self.len() })?;
        let (mut yes, mut all) = (0.0f64, 0.0f64);
        for s in &self.sectors {
            let (sy, sa, c) = scan::probability_counted(&s.keys, &s.amps, mask, value);
            (yes, all) = (yes + sy, all + sa);
            holds.push(c);
        }
        Ok((yes, all, holds))
    }

    /// Probability that `pred` holds (relative to the state's norm). A malformed predicate
    /// (qubit out of range, value outside mask) never holds: 0.
    ///
    /// ```
    /// use qchess_sim::{Predicate, State};
    /// let s = State::<f64>::classical(0b10);
    /// assert_eq!(s.probability(Predicate::One(1)), 1.0);
    /// assert_eq!(s.probability(Predicate::AllZero(0b01)), 1.0);
    /// ```
    pub fn probability(&self, pred: Predicate) -> f64 {
        let Ok((mask, value)) = self.check_predicate(pred) else {
            return 0.0;
        };
        // Exact states: the exact probability, rounded once (NaN after an overflow).
        if let Some(s) = (self as &dyn Any).downcast_ref::<State<crate::Exact>>() {
            return s.probability_exact(pred).map_or(f64::NAN, |p| p.to_f64());
        }
        let (yes, all) = self.phys_masses(mask, value);
        if all > 0.0 { yes / all } else { 0.0 }
    }

    /// Measures `pred`: draws one `f64` from `rng` (always exactly one, so replays stay in
    /// step), picks the outcome with its probability, projects onto it and renormalises.
    /// An outcome of probability at most [`Amplitude::ZERO_PROBABILITY`] is never chosen.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let first = s.measure(Predicate::One(1), &mut rng)?;
    /// assert_eq!(s.measure(Predicate::One(1), &mut rng)?, first);
    /// assert_eq!(s.len(), 1);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn measure<R: rand::Rng + ?Sized>(
        &mut self,
        pred: Predicate,
        rng: &mut R,
    ) -> Result<bool, SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        // Exact states: the outcome is decided with the exact probability.
        if let Some(s) = (self as &mut dyn Any).downcast_mut::<State<crate::Exact>>() {
            return s.measure_exact_outcome(pred, rng).map(|(o, _)| o);
        }
        let (yes, all, holds) = self.phys_masses_counted(mask, value)?;
        let (outcome, mass) = Self::pick_outcome_of_masses(yes, all, rng.random());
        self.project(mask, value, outcome, mass, Some(&holds));
        Ok(outcome)
    }

    /// Projects onto the outcome `outcome` of `pred` and renormalises; returns the outcome's
    /// probability. Errors (and changes nothing) if that probability is at most
    /// [`Amplitude::ZERO_PROBABILITY`].
    ///
    /// ```
    /// use qchess_sim::{Predicate, SimError, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// assert_eq!(s.force(Predicate::One(0), true)?, 1.0);
    /// assert!(matches!(s.force(Predicate::One(0), false), Err(SimError::ZeroProbabilityOutcome { .. })));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force(&mut self, pred: Predicate, outcome: bool) -> Result<f64, SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        // Exact states: projected without renormalising, exact probability rounded once.
        if let Some(s) = (self as &mut dyn Any).downcast_mut::<State<crate::Exact>>() {
            return s.force_exact(pred, outcome).map(|p| p.to_f64());
        }
        let (yes, all, holds) = self.phys_masses_counted(mask, value)?;
        let mass = if outcome { yes } else { all - yes };
        let p = Self::forced_probability(outcome, mass, all)?;
        self.project(mask, value, outcome, mass, Some(&holds));
        Ok(p)
    }

    /// The probability `mass / all` of a forced `outcome`, or the error
    /// [`SimError::ZeroProbabilityOutcome`] when it is at most [`Amplitude::ZERO_PROBABILITY`]
    /// (or the outcome's mass is not positive): the one decision of [`State::force`] and of the
    /// undoable forced measurement.
    pub(crate) fn forced_probability(outcome: bool, mass: f64, all: f64) -> Result<f64, SimError> {
        let p = if all > 0.0 { mass / all } else { 0.0 };
        if p <= T::ZERO_PROBABILITY || mass <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: p,
            });
        }
        Ok(p)
    }

    /// The outcome [`State::measure`] picks for probability `p` (of "holds") and the uniform
    /// draw `r` in `[0, 1)`: `r < p`, except that an outcome of probability at most
    /// [`Amplitude::ZERO_PROBABILITY`] is never chosen.
    ///
    /// ```
    /// use qchess_sim::State;
    /// assert!(State::<f64>::pick_outcome(0.5, 0.25));
    /// assert!(!State::<f64>::pick_outcome(0.5, 0.75));
    /// assert!(State::<f64>::pick_outcome(1.0, 0.999));
    /// assert!(!State::<f64>::pick_outcome(0.0, 0.0));
    /// ```
    pub fn pick_outcome(p: f64, r: f64) -> bool {
        let mut outcome = r < p;
        let p_out = |o: bool| if o { p } else { 1.0 - p };
        if p_out(outcome) <= T::ZERO_PROBABILITY {
            outcome = !outcome;
        }
        outcome
    }

    /// [`State::pick_outcome`] for the masses `(yes, all)` that [`State::masses`] returns
    /// (probability `yes / all`, 0 when `all` is not positive) and the draw `r`, with the
    /// chosen outcome's mass (`yes` or `all - yes`): the one decision of [`State::measure`]
    /// and of a distributed state's measurement, which passes the global masses.
    ///
    /// ```
    /// use qchess_sim::State;
    /// assert_eq!(State::<f64>::pick_outcome_of_masses(0.25, 1.0, 0.1), (true, 0.25));
    /// assert_eq!(State::<f64>::pick_outcome_of_masses(0.25, 1.0, 0.9), (false, 0.75));
    /// ```
    pub fn pick_outcome_of_masses(yes: f64, all: f64, r: f64) -> (bool, f64) {
        let p = if all > 0.0 { yes / all } else { 0.0 };
        let outcome = Self::pick_outcome(p, r);
        (outcome, if outcome { yes } else { all - yes })
    }

    /// `(mass where pred holds, total mass)`: the unnormalised squared norms [`State::measure`]
    /// divides. A distributed state sums these over its pieces before it picks an outcome
    /// and calls [`State::project_onto`] on every piece with the global mass.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let (yes, all) = s.masses(Predicate::One(1))?;
    /// assert!((yes - 0.5).abs() < 1e-15 && (all - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn masses(&self, pred: Predicate) -> Result<(f64, f64), SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        Ok(self.phys_masses(mask, value))
    }

    /// Keeps the entries where `pred` has the value `outcome` and scales them by
    /// `1/sqrt(mass)`, with the same per-entry arithmetic as [`State::measure`] and
    /// [`State::force`] (which pass the outcome's own mass). `mass` must be positive and
    /// finite; a piece of a distributed state passes the global mass of the outcome. An
    /// [`Exact`](crate::Exact) state is not scaled: it stays exact and unnormalised, as
    /// [`State::force_exact`] keeps it (the same probabilities).
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.project_onto(Predicate::One(1), true, 0.5)?;
    /// assert_eq!(s.len(), 1);
    /// assert!((s.amplitude(Key::board(0b10)).im - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_onto(
        &mut self,
        pred: Predicate,
        outcome: bool,
        mass: f64,
    ) -> Result<(), SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        if !(mass.is_finite() && mass > 0.0) {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        self.project(mask, value, outcome, mass, None);
        Ok(())
    }

    /// The factor a projection given the kept `mass` multiplies the kept amplitudes by:
    /// `1/sqrt(mass)` for the floats; 1 for [`Exact`](crate::Exact), which stays exact and
    /// unnormalised (as [`State::force_exact`] keeps it) instead of taking a rounded factor
    /// that would grow its coefficients at every projection. The one rule of
    /// [`State::project_onto`] and [`State::projected_boards`], a distributed state's
    /// per-piece projections: every piece takes the same factor.
    pub(crate) fn projection_scale(mass: f64) -> T {
        if T::RENORMALIZES {
            T::of_f64(1.0 / mass.sqrt())
        } else {
            T::one()
        }
    }

    /// Keeps the entries where `(key & mask == value) == keep`, scaled to norm 1 (an exact
    /// state: not scaled, see [`State::project_onto`]), then gives
    /// back the memory the dropped entries held (see [`State::shrink_to_survivors`]).
    ///
    /// With `holds` (per sector, the entries of each block where `(mask, value)` holds, as
    /// [`State::phys_masses_counted`] counts them) a large sector is compacted by parallel
    /// block jobs straight to the survivors' final places ([`compact::split_project`],
    /// without a record); otherwise, or on one thread, by one sequential pass. Both give
    /// the same entries bit for bit.
    pub(crate) fn project(
        &mut self,
        mask: u64,
        value: u64,
        keep: bool,
        mass: f64,
        holds: Option<&[Vec<usize>]>,
    ) {
        let scale = Self::projection_scale(mass);
        for (i, s) in self.sectors.iter_mut().enumerate() {
            let len = s.keys.len();
            let counted = holds
                .and_then(|h| h.get(i))
                .filter(|c| c.len() == len.div_ceil(BLOCK) && compact::projects_in_blocks(len));
            let n = match counted {
                Some(c) => {
                    // Entries each block loses: those where the predicate's value is not `keep`.
                    let per_block: Vec<usize> = c
                        .iter()
                        .enumerate()
                        .map(|(b, &h)| {
                            if keep {
                                ((b + 1) * BLOCK).min(len) - b * BLOCK - h
                            } else {
                                h
                            }
                        })
                        .collect();
                    let extra = PassExtras {
                        marginals: false,
                        scale: Some(scale),
                        record: false,
                        run_shift: mask.trailing_zeros(),
                        invert: false,
                    };
                    let out_of = move |k: u64| (k & mask == value) != keep;
                    compact::split_project(
                        &mut s.keys,
                        &mut s.amps,
                        &per_block,
                        &mut [],
                        &mut [],
                        out_of,
                        extra,
                    );
                    len - per_block.iter().sum::<usize>()
                }
                None => scan::project(&mut s.keys, &mut s.amps, mask, value, keep, scale),
            };
            s.keys.truncate(n);
            s.amps.truncate(n);
        }
        self.finish_pass();
        self.shrink_to_survivors();
    }
}

#[cfg(test)]
mod tests {
    use crate::{Complex, Controls, Key, Normalization, Predicate, State};
    use rand::SeedableRng;

    /// `n` distinct random keys (sorted) with random amplitudes, renormalised.
    fn random_state(n: usize, seed: u64) -> State<f64> {
        let (keys, amps) = crate::test_states::random_arrays(n, seed, 20);
        State::from_board_arrays(keys, amps, Normalization::Renormalize).unwrap()
    }

    /// The entries of `s` where qubit `q` is 1, divided by the square root of their mass.
    fn reference_projection(s: &State<f64>, q: u8) -> Vec<(Key, Complex<f64>)> {
        let kept: Vec<(Key, Complex<f64>)> =
            s.entries().filter(|(k, _)| k.board >> q & 1 == 1).collect();
        let mass: f64 = kept.iter().map(|(_, a)| a.norm_sqr()).sum();
        kept.into_iter()
            .map(|(k, a)| (k, a / mass.sqrt()))
            .collect()
    }

    #[test]
    fn a_projection_onto_half_the_entries_gives_the_rest_back() {
        let n = 100_000;
        let q = 30; // a middle bit of keys in [0, 2^44): set in about half of them
        let mut s = random_state(n, 11);
        // Buffers from earlier passes, as in a game: the projection must drop them too.
        s.iswap(0, 1, Controls::NONE).unwrap();
        s.iswap(0, 1, Controls::NONE).unwrap();
        s.reserve_buffers(n).unwrap();
        let expected = reference_projection(&s, q);
        assert!(
            (45_000..55_000).contains(&expected.len()),
            "{}",
            expected.len()
        );
        let before = s.bytes();
        assert!(before >= 2 * n * 24, "buffers held before: {before}");
        s.reset_peak_bytes();
        let p = s.force(Predicate::One(q), true).unwrap();
        assert!(p > 0.4 && p < 0.6, "{p}");
        // Results: the same entries, amplitudes within rounding of the reference.
        let got: Vec<(Key, Complex<f64>)> = s.entries().collect();
        assert_eq!(got.len(), expected.len());
        for ((gk, ga), (ek, ea)) in got.iter().zip(&expected) {
            assert_eq!(gk, ek);
            assert!((ga - ea).norm() < 1e-15, "{gk:?}: {ga} vs {ea}");
        }
        // Memory: exactly the survivors (24 B/state), no buffers left, budget credited.
        let len = s.len();
        assert_eq!(s.state_bytes(), len * 24);
        assert!(s.state_bytes() as f64 / len as f64 <= 24.0);
        let sector_overhead = s.bytes() - s.state_bytes();
        assert!(sector_overhead < 256, "{sector_overhead}");
        // The budget counts what is held: a budget just above the survivors still allows
        // a copy of them.
        s.set_memory_budget(2 * len * 24 + 1024);
        assert_eq!(s.try_clone(0).unwrap().len(), len);
        // The projection allocated nothing: its peak is the state before it.
        assert_eq!(s.peak_bytes(), before);
    }

    #[test]
    fn measure_and_capture_keep_24_bytes_per_state() {
        let n = 20_000;
        let mut s = random_state(n, 5);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let outcome = s.measure(Predicate::One(25), &mut rng).unwrap();
        let kept = s.len();
        assert!(kept < n && kept > n / 3, "{kept}");
        assert!(
            s.entries()
                .all(|(k, _)| (k.board >> 25 & 1 == 1) == outcome)
        );
        assert_eq!(s.state_bytes(), kept * 24);
        // A capture moves the entries with the target occupied into a new sector: the old
        // sector gives their room back, the total stays 24 B/state.
        let moved = s.entries().filter(|(k, _)| k.board >> 40 & 1 == 1).count();
        assert!(moved > kept / 4 && moved < kept * 3 / 4, "{moved}");
        s.capture(40).unwrap();
        assert_eq!(s.len(), kept);
        assert_eq!(s.state_bytes(), kept * 24);
        assert!((s.norm_sqr() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn an_f32_projection_keeps_16_bytes_per_state() {
        let n = 50_000;
        let mut s = crate::bench::random_state::<f32>(n).unwrap();
        let (_, mid, _) = crate::bench::qubits(n);
        s.force(Predicate::One(mid), true).unwrap();
        assert!(s.len() > n / 3 && s.len() < 2 * n / 3, "{}", s.len());
        assert_eq!(s.state_bytes(), s.len() * 16);
    }

    type Entries = Vec<(Key, Complex<f64>)>;

    /// Above the parallel threshold, `measure` and `force` project through the parallel
    /// block jobs when the pool has more than one thread: the same outcome, probability and
    /// entries bit for bit as on one thread (the sequential pass), and the reference's
    /// entries within rounding.
    #[test]
    fn a_large_measurement_is_the_same_on_any_thread_count() {
        let n = 3 * crate::state::PARALLEL_MIN + 777;
        let s0 = random_state(n, 29);
        for q in [33u8, 41, 2] {
            let expected = reference_projection(&s0, q);
            let mut first: Option<(Entries, f64)> = None;
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut s = s0.clone();
                let p = pool.install(|| s.force(Predicate::One(q), true)).unwrap();
                let got: Vec<(Key, Complex<f64>)> = s.entries().collect();
                assert_eq!(got.len(), expected.len(), "qubit {q}");
                for ((gk, ga), (ek, ea)) in got.iter().zip(&expected) {
                    assert_eq!(gk, ek);
                    assert!((ga - ea).norm() < 1e-15, "{gk:?}: {ga} vs {ea}");
                }
                assert_eq!(s.state_bytes(), got.len() * 24);
                // `project_onto` given the same mass (no counts from a scan: one sequential
                // pass on any pool) keeps the same entries as the block jobs, bit for bit.
                let mut given = s0.clone();
                let (yes, _) = s0.masses(Predicate::One(q)).unwrap();
                pool.install(|| given.project_onto(Predicate::One(q), true, yes))
                    .unwrap();
                let bits = crate::test_states::entry_bits;
                assert_eq!(bits(&given), bits(&s), "qubit {q}, {threads} threads");
                assert_eq!(given.state_bytes(), got.len() * 24);
                // `measure` with the same draw picks the same outcome and entries.
                let mut m = s0.clone();
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(q));
                let outcome = pool
                    .install(|| m.measure(Predicate::One(q), &mut rng))
                    .unwrap();
                let kept = m.len();
                assert!(m.entries().all(|(k, _)| (k.board >> q & 1 == 1) == outcome));
                match &first {
                    None => first = Some((got, p)),
                    Some((g1, p1)) => {
                        assert_eq!(p.to_bits(), p1.to_bits());
                        let same = got.iter().zip(g1).all(|((k, a), (k1, a1))| {
                            k == k1
                                && a.re.to_bits() == a1.re.to_bits()
                                && a.im.to_bits() == a1.im.to_bits()
                        });
                        assert!(
                            same && got.len() == g1.len(),
                            "qubit {q}, {threads} threads"
                        );
                    }
                }
                assert!(kept > 0 && kept < n);
            }
        }
    }
}
