//! Probabilities and projective measurement.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::scan;
use crate::key::Predicate;
use crate::state::State;
use std::any::Any;

impl<T: Amplitude> State<T> {
    /// `(mass where (phys mask, value) holds, total mass)`, summed sector by sector in f64.
    fn phys_masses(&self, mask: u64, value: u64) -> (f64, f64) {
        self.sectors.iter().fold((0.0, 0.0), |(y, a), s| {
            let (sy, sa) = scan::probability(&s.keys, &s.amps, mask, value);
            (y + sy, a + sa)
        })
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
            return s.measure_exact(pred, rng).map(|(o, _)| o);
        }
        let (yes, all) = self.phys_masses(mask, value);
        let p = if all > 0.0 { yes / all } else { 0.0 };
        let r: f64 = rng.random();
        let outcome = Self::pick_outcome(p, r);
        let mass = if outcome { yes } else { all - yes };
        self.project(mask, value, outcome, mass);
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
        let (yes, all) = self.phys_masses(mask, value);
        let mass = if outcome { yes } else { all - yes };
        let p = if all > 0.0 { mass / all } else { 0.0 };
        if p <= T::ZERO_PROBABILITY || mass <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: p,
            });
        }
        self.project(mask, value, outcome, mass);
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
    /// finite; a piece of a distributed state passes the global mass of the outcome.
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
        self.project(mask, value, outcome, mass);
        Ok(())
    }

    /// Keeps the entries where `(key & mask == value) == keep`, scaled to norm 1.
    fn project(&mut self, mask: u64, value: u64, keep: bool, mass: f64) {
        let scale = T::of_f64(1.0 / mass.sqrt());
        for s in &mut self.sectors {
            let n = scan::project(&mut s.keys, &mut s.amps, mask, value, keep, scale);
            s.keys.truncate(n);
            s.amps.truncate(n);
        }
        self.finish_pass();
    }
}
