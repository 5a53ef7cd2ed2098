//! Probabilities and projective measurement.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::scan;
use crate::key::Predicate;
use crate::state::State;
use std::any::Any;

impl<T: Amplitude> State<T> {
    /// `(mass where (phys mask, value) holds, total mass)`, summed sector by sector in f64.
    fn masses(&self, mask: u64, value: u64) -> (f64, f64) {
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
        let (yes, all) = self.masses(mask, value);
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
        let (yes, all) = self.masses(mask, value);
        let p = if all > 0.0 { yes / all } else { 0.0 };
        let r: f64 = rng.random();
        let mut outcome = r < p;
        let p_out = |o: bool| if o { p } else { 1.0 - p };
        if p_out(outcome) <= T::ZERO_PROBABILITY {
            outcome = !outcome;
        }
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
        let (yes, all) = self.masses(mask, value);
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
