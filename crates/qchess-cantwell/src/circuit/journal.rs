//! The undo journal of a move (issue 10, Deliver 1): each simulator step a circuit takes is
//! recorded with what its inverse needs, so a move is taken back without a copy of the
//! state. A unitary step is undone by its inverse gate; a projection keeps only what it
//! threw away ([`qchess_sim::Removed`]); a capture gives its ancilla back. Backends without
//! undo records ([`QuantumState::keeps_undo_records`]) record nothing here; the game keeps
//! whole-state copies for them.

use qchess_sim::{Controls, Pick, Predicate, QuantumState, Removed, SimError};

/// One simulator step of a move, with what its inverse needs.
#[derive(Clone, Debug)]
pub enum Step<S> {
    /// `iswap(a, b, controls)`; undone by `iswap_inv`.
    Iswap {
        /// First qubit.
        a: u8,
        /// Second qubit.
        b: u8,
        /// The controls it ran under.
        controls: Controls,
    },
    /// `split(s, t1, t2)`; undone by `merge(t2, t1, s)`.
    Split {
        /// Source.
        s: u8,
        /// First target.
        t1: u8,
        /// Second target.
        t2: u8,
    },
    /// `merge(s1, s2, t)`; undone by `split(t, s2, s1)`.
    Merge {
        /// First source.
        s1: u8,
        /// Second source.
        s2: u8,
        /// Target.
        t: u8,
    },
    /// `split_slide(s, t1, t2, p1, p2)`; undone by `merge_slide(t2, t1, s, p2, p1)`.
    SplitSlide {
        /// Source.
        s: u8,
        /// First target.
        t1: u8,
        /// Second target.
        t2: u8,
        /// Path to the first target.
        p1: u64,
        /// Path to the second target.
        p2: u64,
    },
    /// `merge_slide(s1, s2, t, p1, p2)`; undone by `split_slide(t, s2, s1, p2, p1)`.
    MergeSlide {
        /// First source.
        s1: u8,
        /// Second source.
        s2: u8,
        /// Target.
        t: u8,
        /// Path from the first source.
        p1: u64,
        /// Path from the second source.
        p2: u64,
    },
    /// A capture of `t` into ancilla `ancilla`; undone by `uncapture`.
    Capture {
        /// The captured square.
        t: u8,
        /// The ancilla taken.
        ancilla: u32,
    },
    /// `iswap_where_ancillas(s, t, ancillas)`; undone by applying it three times
    /// (`iSwap^3 = iSwap^-1`; each application multiplies by `i`, exactly).
    IswapWhereAncillas {
        /// First qubit.
        s: u8,
        /// Second qubit.
        t: u8,
        /// The ancilla mask it was controlled on.
        ancillas: u128,
    },
    /// A projection, with the entries it removed.
    Projection(Box<Removed<S>>),
    /// A copy of the whole state taken before a step without a cheaper inverse (a
    /// projection onto a set of boards no predicate describes).
    Whole(Box<S>),
}

impl<S: QuantumState> Step<S> {
    /// A copy of the step made with fallible allocations (issue 10, Deliver 5): a
    /// projection's removed entries by [`Removed::try_clone`], a whole-state copy by
    /// [`QuantumState::try_clone`]; gate steps are a few bytes. Running out of memory is an
    /// error ([`SimError::OutOfMemory`]), never an abort. A whole-state copy keeps the budget
    /// its state had when it was taken, which had room for it beside that state, so its copy
    /// is refused only when the allocation fails (or, on a sharded state, when it fails on
    /// some rank). The copy equals [`Clone::clone`] of the step.
    pub fn try_clone(&self) -> Result<Self, SimError> {
        Ok(match self {
            Step::Projection(removed) => Step::Projection(Box::new(removed.try_clone()?)),
            Step::Whole(copy) => Step::Whole(Box::new(copy.try_clone(0)?)),
            &Step::Iswap { a, b, controls } => Step::Iswap { a, b, controls },
            &Step::Split { s, t1, t2 } => Step::Split { s, t1, t2 },
            &Step::Merge { s1, s2, t } => Step::Merge { s1, s2, t },
            &Step::SplitSlide { s, t1, t2, p1, p2 } => Step::SplitSlide { s, t1, t2, p1, p2 },
            &Step::MergeSlide { s1, s2, t, p1, p2 } => Step::MergeSlide { s1, s2, t, p1, p2 },
            &Step::Capture { t, ancilla } => Step::Capture { t, ancilla },
            &Step::IswapWhereAncillas { s, t, ancillas } => {
                Step::IswapWhereAncillas { s, t, ancillas }
            }
        })
    }
}

/// The steps one move took, oldest first.
#[derive(Clone, Debug)]
pub struct Journal<S> {
    steps: Vec<Step<S>>,
}

impl<S> Default for Journal<S> {
    fn default() -> Self {
        Self { steps: Vec::new() }
    }
}

impl<S: QuantumState> Journal<S> {
    /// An empty journal.
    pub fn new() -> Self {
        Self::default()
    }

    /// A journal that restores `copy` (a whole-state copy taken before the move).
    pub fn whole(copy: S) -> Self {
        Self {
            steps: vec![Step::Whole(Box::new(copy))],
        }
    }

    /// Appends a step (for steps taken outside a circuit, e.g. a final measurement).
    pub fn push(&mut self, step: Step<S>) {
        self.steps.push(step);
    }

    /// A copy of the journal made with fallible allocations (issue 10, Deliver 5): the step
    /// list by `try_reserve_exact`, each step by [`Step::try_clone`]. Running out of memory
    /// is an error ([`SimError::OutOfMemory`]), never an abort; the copy equals
    /// [`Clone::clone`] of the journal. The caller counts [`Journal::bytes`] against its
    /// budget before asking.
    ///
    /// ```
    /// use qchess_cantwell::circuit::{Journal, Step};
    /// use qchess_sim::{Controls, Predicate, QuantumState, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let (_, removed) = s.force_keeping(Predicate::One(1), true)?;
    /// let mut journal = Journal::new();
    /// journal.push(Step::Projection(Box::new(removed)));
    /// let copy = journal.try_clone()?;
    /// assert_eq!(copy.steps().len(), 1);
    /// // Both take the measurement back to the same state.
    /// let mut t = s.clone();
    /// journal.rollback(&mut s)?;
    /// copy.rollback(&mut t)?;
    /// assert_eq!(s.entries().collect::<Vec<_>>(), t.entries().collect::<Vec<_>>());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn try_clone(&self) -> Result<Self, SimError> {
        let mut steps = Vec::new();
        steps
            .try_reserve_exact(self.steps.len())
            .map_err(|_| SimError::OutOfMemory {
                states: self.steps.len(),
            })?;
        for step in &self.steps {
            steps.push(step.try_clone()?);
        }
        Ok(Self { steps })
    }

    /// Gives back the spare capacity of the step list (for journals kept for undo).
    pub fn shrink_to_fit(&mut self) {
        self.steps.shrink_to_fit();
    }

    /// The recorded steps, oldest first.
    pub fn steps(&self) -> &[Step<S>] {
        &self.steps
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Heap bytes the journal holds (removed entries and copies; gate steps are a few bytes).
    pub fn bytes(&self) -> usize {
        let steps: usize = self
            .steps
            .iter()
            .map(|s| match s {
                Step::Projection(r) => S::removed_bytes(r) + std::mem::size_of::<Removed<S>>(),
                Step::Whole(copy) => copy.bytes() + std::mem::size_of::<S>(),
                _ => 0,
            })
            .sum();
        steps + self.steps.capacity() * std::mem::size_of::<Step<S>>()
    }

    /// Whether taking the journal back restores the state bit for bit: only iSwaps, phases,
    /// captures, projections that removed nothing, and whole copies.
    pub fn undoes_exactly(&self) -> bool {
        self.steps.iter().all(|s| match s {
            Step::Projection(r) => r.restore_factor().is_none(),
            Step::Split { .. }
            | Step::Merge { .. }
            | Step::SplitSlide { .. }
            | Step::MergeSlide { .. } => false,
            _ => true,
        })
    }

    /// The whole-state copy, when the journal is exactly one (a state before the move).
    pub fn base_state(&self) -> Option<&S> {
        match self.steps.as_slice() {
            [Step::Whole(copy)] => Some(copy.as_ref()),
            _ => None,
        }
    }

    /// Takes every recorded step back, newest first. The state's cap and memory budget are
    /// lifted meanwhile: the undo only returns the state to sizes it already had.
    pub fn rollback(self, state: &mut S) -> Result<(), SimError> {
        let (budget, cap) = (state.memory_budget(), state.cap());
        state.set_memory_budget(usize::MAX);
        state.set_cap(usize::MAX);
        let mut result = Ok(());
        for step in self.steps.into_iter().rev() {
            result = undo_step(state, step);
            if result.is_err() {
                break;
            }
        }
        state.set_memory_budget(budget);
        state.set_cap(cap);
        result
    }
}

fn undo_step<S: QuantumState>(state: &mut S, step: Step<S>) -> Result<(), SimError> {
    match step {
        Step::Iswap { a, b, controls } => state.iswap_inv(a, b, controls),
        Step::Split { s, t1, t2 } => state.merge(t2, t1, s, Controls::NONE),
        Step::Merge { s1, s2, t } => state.split(t, s2, s1, Controls::NONE),
        Step::SplitSlide { s, t1, t2, p1, p2 } => state.merge_slide(t2, t1, s, p2, p1),
        Step::MergeSlide { s1, s2, t, p1, p2 } => state.split_slide(t, s2, s1, p2, p1),
        Step::Capture { t, ancilla } => state.uncapture(t, ancilla),
        Step::IswapWhereAncillas { s, t, ancillas } => {
            for _ in 0..3 {
                state.iswap_where_ancillas(s, t, ancillas)?;
            }
            Ok(())
        }
        Step::Projection(removed) => state.unproject(*removed),
        Step::Whole(copy) => {
            *state = *copy;
            Ok(())
        }
    }
}

/// A state whose mutating steps are recorded in a journal (when the backend keeps undo
/// records; otherwise the steps just run). The circuits run on this.
pub(crate) struct Recorder<'a, S> {
    pub state: &'a mut S,
    journal: &'a mut Journal<S>,
    recording: bool,
    /// The squares' marginals of `state` as it is now, when the caller keeps them (the game,
    /// issue 10 Deliver 2); forgotten at the first step that changes the state.
    known: Option<[f64; 64]>,
}

impl<'a, S: QuantumState> Recorder<'a, S> {
    pub fn new(state: &'a mut S, journal: &'a mut Journal<S>) -> Self {
        let recording = state.keeps_undo_records();
        Self {
            state,
            journal,
            recording,
            known: None,
        }
    }

    /// The same recorder told the squares' marginals of its state as it is now (as
    /// [`QuantumState::qubit_probabilities`] reads them): a measurement of one square before
    /// any step has changed the state takes its probability from them instead of reading the
    /// state ([`Recorder::measure`]).
    pub fn knowing(mut self, marginals: Option<[f64; 64]>) -> Self {
        self.known = marginals;
        self
    }

    /// The probability that `pred` holds from the known marginals: only for a predicate on
    /// one square, while they are known.
    fn known_probability(&self, pred: Predicate) -> Option<f64> {
        let marginals = self.known.as_ref()?;
        let (mask, value) = pred.mask_value()?;
        if mask.count_ones() != 1 {
            return None;
        }
        let p = marginals[mask.trailing_zeros() as usize];
        Some(if value == mask { p } else { 1.0 - p })
    }

    /// Whether steps are recorded (the backend keeps undo records).
    pub fn recording(&self) -> bool {
        self.recording
    }

    /// Steps recorded so far.
    pub fn mark(&self) -> usize {
        self.journal.steps.len()
    }

    /// Takes back the steps recorded since `mark` (a failed move).
    pub fn rollback_to(&mut self, mark: usize) -> Result<(), SimError> {
        let tail = Journal {
            steps: self.journal.steps.split_off(mark),
        };
        tail.rollback(self.state)
    }

    fn push(&mut self, step: Step<S>) {
        // Every step changes the state: the marginals known before no longer hold.
        self.known = None;
        if self.recording {
            self.journal.steps.push(step);
        }
    }

    pub fn ancilla_count(&self) -> u32 {
        self.state.ancilla_count()
    }

    pub fn probability(&self, pred: Predicate) -> f64 {
        self.state.probability(pred)
    }

    pub fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.state.iswap(a, b, controls)?;
        self.push(Step::Iswap { a, b, controls });
        Ok(())
    }

    pub fn split(&mut self, s: u8, t1: u8, t2: u8) -> Result<(), SimError> {
        self.state.split(s, t1, t2, Controls::NONE)?;
        self.push(Step::Split { s, t1, t2 });
        Ok(())
    }

    pub fn merge(&mut self, s1: u8, s2: u8, t: u8) -> Result<(), SimError> {
        self.state.merge(s1, s2, t, Controls::NONE)?;
        self.push(Step::Merge { s1, s2, t });
        Ok(())
    }

    pub fn split_slide(&mut self, s: u8, t1: u8, t2: u8, p1: u64, p2: u64) -> Result<(), SimError> {
        self.state.split_slide(s, t1, t2, p1, p2)?;
        self.push(Step::SplitSlide { s, t1, t2, p1, p2 });
        Ok(())
    }

    pub fn merge_slide(&mut self, s1: u8, s2: u8, t: u8, p1: u64, p2: u64) -> Result<(), SimError> {
        self.state.merge_slide(s1, s2, t, p1, p2)?;
        self.push(Step::MergeSlide { s1, s2, t, p1, p2 });
        Ok(())
    }

    pub fn capture(&mut self, t: u8) -> Result<u32, SimError> {
        let ancilla = self.state.capture(t)?;
        self.push(Step::Capture { t, ancilla });
        Ok(ancilla)
    }

    pub fn capture_controlled(
        &mut self,
        q: u8,
        controls: Controls,
    ) -> Result<Option<u32>, SimError> {
        let taken = self.state.capture_controlled(q, controls)?;
        if let Some(ancilla) = taken {
            self.push(Step::Capture { t: q, ancilla });
        }
        Ok(taken)
    }

    pub fn iswap_where_ancillas(&mut self, s: u8, t: u8, ancillas: u128) -> Result<(), SimError> {
        self.state.iswap_where_ancillas(s, t, ancillas)?;
        self.push(Step::IswapWhereAncillas { s, t, ancillas });
        Ok(())
    }

    pub fn force(&mut self, pred: Predicate, outcome: bool) -> Result<f64, SimError> {
        if !self.recording {
            self.known = None;
            return self.state.force(pred, outcome);
        }
        let (p, removed) = self.state.force_keeping(pred, outcome)?;
        self.push(Step::Projection(Box::new(removed)));
        Ok(p)
    }

    /// A measurement of `pred` in one read and one projection
    /// ([`QuantumState::measure_keeping`]): `choose` gets the probability that `pred` holds
    /// and picks the outcome, or `None` to change nothing. Returns the outcome's
    /// probability as the backend gives it, or `None` when `choose` declined.
    ///
    /// With undo records, a predicate on one square and the marginals known
    /// ([`Recorder::knowing`], no step taken since), the probability is the known marginal
    /// and the state is not read for it: the projection follows as
    /// [`QuantumState::force_keeping_given`] (or [`QuantumState::force_keeping`] when
    /// `choose` gives no probability), with only a count over the keys before it.
    pub fn measure(
        &mut self,
        pred: Predicate,
        choose: &mut dyn FnMut(f64) -> Option<Pick>,
    ) -> Result<Option<f64>, SimError> {
        if !self.recording {
            self.known = None;
            let Some(Pick { outcome, .. }) = choose(self.state.probability(pred)) else {
                return Ok(None);
            };
            return self.state.force(pred, outcome).map(Some);
        }
        if let Some(read) = self.known_probability(pred) {
            let Some(Pick { outcome, given }) = choose(read) else {
                return Ok(None);
            };
            let (p, removed) = match given {
                Some(probability) => self.state.force_keeping_given(pred, outcome, probability)?,
                None => self.state.force_keeping(pred, outcome)?,
            };
            self.push(Step::Projection(Box::new(removed)));
            return Ok(Some(p));
        }
        let Some((p, removed)) = self.state.measure_keeping(pred, choose)? else {
            return Ok(None);
        };
        self.push(Step::Projection(Box::new(removed)));
        Ok(Some(p))
    }

    pub fn project_boards(&mut self, keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<f64, SimError> {
        if !self.recording {
            self.known = None;
            return self.state.project_boards(keep);
        }
        // No predicate describes the set: the rare case keeps a copy of the state before.
        let copy = self.state.try_clone(self.journal.bytes())?;
        let p = self.state.project_boards(keep)?;
        self.push(Step::Whole(Box::new(copy)));
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qchess_sim::State;

    /// A one-square measurement takes its probability from the known marginals until a step
    /// changes the state; after it, and for a predicate on more than one square, the state
    /// is read. The projection is the one `force_keeping_given` makes, and undoes exactly.
    #[test]
    fn known_marginals_serve_one_square_measurements_until_a_step() {
        let mut state = State::<f64>::classical(0b01);
        state.split(0, 1, 2, Controls::NONE).unwrap();
        let start: Vec<_> = state.entries().collect();
        let mut marginals = state.qubit_probabilities();
        // Marked so that their use shows (the true probability of square 1 is 1/2).
        marginals[1] = 0.25;
        let mut journal = Journal::new();
        let mut rec = Recorder::new(&mut state, &mut journal).knowing(Some(marginals));
        let mut seen = Vec::new();
        let mut look = |p: f64| {
            seen.push(p);
            None
        };
        // Declined: nothing changes, and the marginals stay known.
        assert!(rec.measure(Predicate::One(1), &mut look).unwrap().is_none());
        assert!(
            rec.measure(Predicate::AllZero(0b10), &mut look)
                .unwrap()
                .is_none()
        );
        // Two squares: read from the state.
        assert!(
            rec.measure(Predicate::AllZero(0b110), &mut look)
                .unwrap()
                .is_none()
        );
        assert_eq!(seen, vec![0.25, 0.75, 0.0]);
        // A step: the known marginals are forgotten.
        rec.iswap(1, 3, Controls::NONE).unwrap();
        rec.iswap(3, 1, Controls::NONE).unwrap();
        seen.clear();
        let mut look = |p: f64| {
            seen.push(p);
            None
        };
        assert!(rec.measure(Predicate::One(1), &mut look).unwrap().is_none());
        assert_eq!(seen.len(), 1);
        assert!((seen[0] - 0.5).abs() < 1e-15, "{seen:?}");

        // A fresh recorder with the true marginals: the measurement projects as
        // `force_keeping_given` with the known probability, and rolls back.
        let mut state = State::<f64>::classical(0b01);
        state.split(0, 1, 2, Controls::NONE).unwrap();
        let mut reference = state.clone();
        let marginals = state.qubit_probabilities();
        let mut journal = Journal::new();
        let mut rec = Recorder::new(&mut state, &mut journal).knowing(Some(marginals));
        let p = rec
            .measure(Predicate::One(2), &mut |p| {
                Some(Pick {
                    outcome: true,
                    given: Some(p),
                })
            })
            .unwrap();
        assert_eq!(p, Some(marginals[2]));
        reference
            .force_keeping_given(Predicate::One(2), true, marginals[2])
            .unwrap();
        assert_eq!(
            state.entries().collect::<Vec<_>>(),
            reference.entries().collect::<Vec<_>>()
        );
        journal.rollback(&mut state).unwrap();
        assert_eq!(state.entries().collect::<Vec<_>>(), start);
    }
}
