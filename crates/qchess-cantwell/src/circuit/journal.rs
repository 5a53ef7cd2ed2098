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
        let steps: usize = self.steps.iter().map(Self::step_bytes).sum();
        steps + self.steps.capacity() * std::mem::size_of::<Step<S>>()
    }

    /// Heap bytes one step holds beside its slot in the journal.
    fn step_bytes(step: &Step<S>) -> usize {
        match step {
            Step::Projection(r) => S::removed_bytes(r) + std::mem::size_of::<Removed<S>>(),
            Step::Whole(copy) => copy.bytes() + std::mem::size_of::<S>(),
            _ => 0,
        }
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

/// What a [`Recorder`] knows of its state's square marginals (issue 10, Deliver 2), worked
/// out from the steps it took without reading the state where a step allows.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Tracked {
    /// Every square's marginal as the state is now.
    Known([f64; 64]),
    /// The marginals as last known, except on the squares of the mask, which later steps
    /// changed in ways only the state tells: those are to be read from it.
    Touched([f64; 64], u64),
    /// Nothing: every marginal is to be read (no marginals were given, a projection did not
    /// sum them, or the state was replaced by a copy).
    Unknown,
}

impl Tracked {
    /// The marginals after `step`, applied to a state whose marginals were `self`:
    /// * an iSwap whose controls hold in every branch (uncontrolled, or a path of squares
    ///   empty in every branch) relabels its two qubits, so their marginals swap and no
    ///   other changes;
    /// * a split jump (eq. 7) onto two squares empty in every branch, or a split slide
    ///   (eq. 9) whose targets and paths are, moves half the source's mass to each target
    ///   and empties the source;
    /// * other gate steps change the occupancy of the squares they act on only (their
    ///   controls are read, never changed): a controlled iSwap its two squares, a split or
    ///   merge (slide or not) its three, a capture the captured square, an iSwap on some
    ///   ancilla sectors its two; those become [`Tracked::Touched`] (but a controlled iSwap
    ///   whose kernel summed the masses it moved keeps them known, [`Recorder::iswap`], and
    ///   an uncontrolled capture empties its square, [`Recorder::capture`]);
    /// * a projection that removed nothing left the state exactly as it was (not
    ///   rescaled); any other projection, and a whole-state copy, make them
    ///   [`Tracked::Unknown`] (a projection that summed them in its pass sets them after,
    ///   [`Recorder::measure`]).
    fn after<S: QuantumState>(self, step: &Step<S>) -> Tracked {
        let squares = match step {
            Step::Projection(removed) if removed.part().len() == 0 => return self,
            Step::Projection(_) | Step::Whole(_) => return Tracked::Unknown,
            Step::Iswap { a, b, .. } | Step::IswapWhereAncillas { s: a, t: b, .. } => {
                (1u64 << a) | (1u64 << b)
            }
            Step::Capture { t, .. } => 1u64 << t,
            Step::Split { s, t1, t2 } | Step::SplitSlide { s, t1, t2, .. } => {
                (1u64 << s) | (1u64 << t1) | (1u64 << t2)
            }
            Step::Merge { s1, s2, t } | Step::MergeSlide { s1, s2, t, .. } => {
                (1u64 << s1) | (1u64 << s2) | (1u64 << t)
            }
        };
        match (self, step) {
            (Tracked::Known(mut probs), Step::Iswap { a, b, controls })
                if relabels(*controls, &probs) =>
            {
                probs.swap(usize::from(*a), usize::from(*b));
                Tracked::Known(probs)
            }
            (
                Tracked::Known(mut probs),
                Step::Split { s, t1, t2 } | Step::SplitSlide { s, t1, t2, .. },
            ) if probs[usize::from(*t1)] == 0.0
                && probs[usize::from(*t2)] == 0.0
                && paths_empty(step, &probs) =>
            {
                // Eq. 7 with both targets empty in every branch (a split slide whose paths
                // are empty in every branch is the split, eq. 9): each branch with the piece
                // on `s` sends half its mass to each target and leaves `s` empty.
                let half = probs[usize::from(*s)] / 2.0;
                probs[usize::from(*s)] = 0.0;
                probs[usize::from(*t1)] = half;
                probs[usize::from(*t2)] = half;
                Tracked::Known(probs)
            }
            (Tracked::Known(probs), _) => Tracked::Touched(probs, squares),
            (Tracked::Touched(probs, t), _) => Tracked::Touched(probs, t | squares),
            (Tracked::Unknown, _) => Tracked::Unknown,
        }
    }
}

/// The marginals after an iSwap of `a` and `b` that moved the masses `[a to b, b to a]`
/// (`QuantumState::iswap_with_flows`) from `probs`: the gate moves mass between its two
/// squares only. A result within 1e-12 of 0 or 1 may be an exact 0 or 1 (a square emptied or
/// filled in every branch) that rounding missed: such a square is read from the state
/// ([`Tracked::Touched`]), so that "empty / occupied in every branch" stays exact.
fn moved(mut probs: [f64; 64], (a, b): (u8, u8), [ab, ba]: [f64; 2]) -> Tracked {
    let (a, b) = (usize::from(a), usize::from(b));
    probs[a] = probs[a] - ab + ba;
    probs[b] = probs[b] + ab - ba;
    let unsure = |p: f64| !(1e-12..=1.0 - 1e-12).contains(&p);
    let read = (u64::from(unsure(probs[a])) << a) | (u64::from(unsure(probs[b])) << b);
    if read == 0 {
        Tracked::Known(probs)
    } else {
        Tracked::Touched(probs, read)
    }
}

/// Whether an iSwap under `controls` relabels its two qubits: its controls hold in every
/// branch (no square required occupied, every square required empty has marginal exactly 0).
fn relabels(controls: Controls, probs: &[f64; 64]) -> bool {
    controls.ones == 0 && empty_everywhere(controls.zeros, probs)
}

/// Whether every square on the paths of a split slide is empty in every branch (marginal
/// exactly 0); true for any other step.
fn paths_empty<S>(step: &Step<S>, probs: &[f64; 64]) -> bool {
    match step {
        Step::SplitSlide { p1, p2, .. } => empty_everywhere(p1 | p2, probs),
        _ => true,
    }
}

/// Whether every square of `mask` is empty in every branch (marginal exactly 0).
fn empty_everywhere(mask: u64, probs: &[f64; 64]) -> bool {
    (0..64).all(|q| mask >> q & 1 == 0 || probs[q] == 0.0)
}

/// The least mass a measurement's outcome removes for [`Recorder::may_drop`] (and a
/// measurement of several squares, [`Recorder::measure`]) to drop its record: the state then
/// surely changes by far more than the game's Definition 2 tolerance (1e-12).
const DROPPED_MASS: f64 = 1e-10;

/// A state whose mutating steps are recorded in a journal (when the backend keeps undo
/// records; otherwise the steps just run). The circuits run on this.
pub(crate) struct Recorder<'a, S> {
    pub state: &'a mut S,
    journal: &'a mut Journal<S>,
    recording: bool,
    /// The squares' marginals of `state`, when the caller keeps them (the game, issue 10
    /// Deliver 2) and the backend keeps undo records, followed through every step.
    marginals: Tracked,
    /// The bytes a projection's record may take ([`Recorder::within`]); `None`: no limit.
    room: Option<usize>,
    /// Whether a projection dropped its removed entries (more than `room`): the journal
    /// then cannot take the move back.
    dropped: bool,
}

impl<'a, S: QuantumState> Recorder<'a, S> {
    pub fn new(state: &'a mut S, journal: &'a mut Journal<S>) -> Self {
        let recording = state.keeps_undo_records();
        Self {
            state,
            journal,
            recording,
            marginals: Tracked::Unknown,
            room: None,
            dropped: false,
        }
    }

    /// The same recorder, whose measurements with a given probability keep their record
    /// only when it takes at most `room` bytes
    /// ([`QuantumState::force_given_marginals_within`]; [`Recorder::measure`]); a larger one
    /// is dropped in the projection's pass and the journal can no longer take the move back
    /// ([`Recorder::dropped`]). Eq. 23b's projections drop theirs where
    /// [`Recorder::may_drop`] allows it. For a caller that would throw such a record away (a game
    /// whose undo budget is full), on a move that no later step can fail and whose effect
    /// it knows without the record. `None`: every record is kept.
    pub fn within(mut self, room: Option<usize>) -> Self {
        self.room = room;
        self
    }

    /// Whether a projection dropped its record ([`Recorder::within`]): the journal lacks
    /// it and must not be rolled back.
    pub fn dropped(&self) -> bool {
        self.dropped
    }

    /// Whether the projection of a measurement whose chosen outcome has `probability`,
    /// where no one predicate describes the outcome (eq. 23b's capture slide through a
    /// path), may drop its record ([`Recorder::force_any_within`]): a room is given
    /// ([`Recorder::within`]) and the outcome removes more than [`DROPPED_MASS`] of the
    /// state's mass, so that the move surely changes the state (Definition 2 then never
    /// needs the record to rebuild the state before: a projection removing mass `m`
    /// followed by a permutation of the keys with phases leaves an overlap with the state
    /// before of at most about `1 - m/4`).
    pub fn may_drop(&self, probability: f64) -> bool {
        self.recording && self.room.is_some() && 1.0 - probability > DROPPED_MASS
    }

    /// Records a projection made within `room`: its record, when it kept one, as a step
    /// whose bytes are then no longer room for the next one; otherwise the journal can no
    /// longer take the move back, and the marginals are the pass's (`summed`) or unknown.
    fn push_within(&mut self, room: usize, removed: Option<Removed<S>>, summed: Option<[f64; 64]>) {
        match removed {
            Some(removed) => {
                let step = Step::Projection(Box::new(removed));
                let bytes = Journal::<S>::step_bytes(&step);
                self.room = Some(room.saturating_sub(bytes));
                self.push_summed(step, summed);
            }
            None => {
                self.dropped = true;
                self.marginals = summed.map_or(Tracked::Unknown, Tracked::Known);
            }
        }
    }

    /// [`Recorder::force_any`] keeping the record only where it fits what is left of the
    /// room: with the outcome's probability `given`, a count of the removed entries decides
    /// ([`QuantumState::force_any_given_within`]); without, a state larger than the room
    /// drops it (its removed entries, uncounted, could fill it). A dropped record leaves
    /// the journal unable to take the move back ([`Recorder::dropped`]). For a measurement
    /// [`Recorder::may_drop`] allows; the state after it is bit for bit the one
    /// [`Recorder::force_any`] leaves.
    pub fn force_any_within(
        &mut self,
        patterns: &[Predicate],
        outcome: bool,
        given: Option<f64>,
    ) -> Result<f64, SimError> {
        let room = match self.room.filter(|_| self.recording) {
            Some(room) if self.state.bytes() > room => room,
            _ => return self.force_any(patterns, outcome, given),
        };
        let Some(probability) = given else {
            // The plain projection's pass is the recording one's without the record.
            let p = self.state.force_any(patterns, outcome)?;
            self.dropped = true;
            self.marginals = Tracked::Unknown;
            return Ok(p);
        };
        let (p, removed, summed) =
            self.state
                .force_any_given_within(patterns, outcome, probability, room)?;
        self.push_within(room, removed, summed);
        Ok(p)
    }

    /// The same recorder told the squares' marginals of its state as it is now (as
    /// [`QuantumState::qubit_probabilities`] reads them), when its backend keeps undo
    /// records: it follows them through its steps ([`Recorder::marginals`]), and a
    /// measurement of one square while they are known takes its probability from them
    /// instead of reading the state, and sums them after its projection in the
    /// projection's own pass ([`Recorder::measure`]).
    pub fn knowing(mut self, marginals: Option<[f64; 64]>) -> Self {
        self.marginals = match marginals {
            Some(m) if self.recording => Tracked::Known(m),
            _ => Tracked::Unknown,
        };
        self
    }

    /// What the recorder knows of its state's square marginals after the steps so far.
    pub fn marginals(&self) -> Tracked {
        self.marginals
    }

    /// The probability that `pred` holds from the known marginals: only for a predicate on
    /// one square, while they are known.
    fn known_probability(&self, pred: Predicate) -> Option<f64> {
        let Tracked::Known(marginals) = &self.marginals else {
            return None;
        };
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
        if self.dropped {
            // The projection's removed entries are gone: the journal is not the move.
            return Err(SimError::Unsupported {
                what: "taking back a projection whose record was dropped",
            });
        }
        let tail = Journal {
            steps: self.journal.steps.split_off(mark),
        };
        self.marginals = Tracked::Unknown;
        tail.rollback(self.state)
    }

    /// Records `step` (taken on the state), and follows the marginals through it by the
    /// rules of [`Tracked::after`].
    fn push(&mut self, step: Step<S>) {
        let learned = self.marginals.after(&step);
        self.push_learned(step, learned);
    }

    /// Records `step` with the marginals after it as the gate itself told them (the masses
    /// its kernel moved, its projection's pass) or as a rule for that gate gives them.
    fn push_learned(&mut self, step: Step<S>, learned: Tracked) {
        self.marginals = learned;
        if self.recording {
            self.journal.steps.push(step);
        }
    }

    /// Records a projection's `step` with the marginals its pass summed (`summed`), or, when
    /// it summed none, as [`Recorder::push`] does.
    fn push_summed(&mut self, step: Step<S>, summed: Option<[f64; 64]>) {
        match summed {
            Some(m) => self.push_learned(step, Tracked::Known(m)),
            None => self.push(step),
        }
    }

    pub fn ancilla_count(&self) -> u32 {
        self.state.ancilla_count()
    }

    /// The squares occupied on every stored board and on some stored board, `(always,
    /// ever)`, from one read of the keys ([`QuantumState::occupancy_bounds`]).
    pub fn occupancy_bounds(&self) -> (u64, u64) {
        self.state.occupancy_bounds()
    }

    /// The probabilities that some pattern of `patterns` holds and that none does, in one
    /// read of the state ([`QuantumState::probability_any`]).
    pub fn probability_any(&self, patterns: &[Predicate]) -> Result<(f64, f64), SimError> {
        self.state.probability_any(patterns)
    }

    /// `iswap(a, b, controls)`, recorded. With the marginals known and controls that do not
    /// hold in every branch, the masses the gate moved (`QuantumState::iswap_with_flows`)
    /// keep them known ([`moved`]).
    pub fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        // With the marginals known and controls that do not hold in every branch (a slide
        // whose path is occupied somewhere), the gate's pass sums the masses it moves.
        let step = Step::Iswap { a, b, controls };
        match self.marginals {
            Tracked::Known(probs) if !relabels(controls, &probs) => {
                match self.state.iswap_with_flows(a, b, controls)? {
                    Some(flows) => self.push_learned(step, moved(probs, (a, b), flows)),
                    None => self.push(step),
                }
            }
            _ => {
                self.state.iswap(a, b, controls)?;
                self.push(step);
            }
        }
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

    /// `capture(t)`, recorded: with the marginals known, `t`'s becomes exactly 0.
    pub fn capture(&mut self, t: u8) -> Result<u32, SimError> {
        let ancilla = self.state.capture(t)?;
        let step = Step::Capture { t, ancilla };
        match self.marginals {
            Tracked::Known(mut probs) => {
                // Eq. 18's capture with no control moves the piece on `t` to the fresh
                // ancilla in every branch: `t` is empty everywhere after it.
                probs[usize::from(t)] = 0.0;
                self.push_learned(step, Tracked::Known(probs));
            }
            _ => self.push(step),
        }
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

    /// A measurement of `pred` in one read and one projection
    /// ([`QuantumState::measure_keeping`]): `choose` gets the probability that `pred` holds
    /// and picks the outcome, or `None` to change nothing. Returns the outcome's
    /// probability as the backend gives it, or `None` when `choose` declined.
    ///
    /// With undo records, a predicate on one square and the marginals known
    /// ([`Recorder::knowing`], followed through the steps since: [`Tracked`]), the
    /// probability is the known marginal
    /// and the state is not read for it: the projection follows as
    /// [`QuantumState::force_keeping_given_marginals`] (or [`QuantumState::force_keeping`]
    /// when `choose` gives no probability), with only a sample of the keys (one thread) or a
    /// count over them before it, and
    /// the marginals it summed are known after it ([`Recorder::marginals`]).
    ///
    /// A predicate on several squares (castling's two targets) with a room smaller than the
    /// state ([`Recorder::within`]) is measured in one read that counts what each outcome
    /// removes: an outcome of probability at least 1/16 ([`Pick::given`]) that removes
    /// more than [`DROPPED_MASS`] of the mass then keeps its record only when it fits the
    /// room ([`QuantumState::measure_within`]).
    pub fn measure(
        &mut self,
        pred: Predicate,
        choose: &mut dyn FnMut(f64) -> Option<Pick>,
    ) -> Result<Option<f64>, SimError> {
        if !self.recording {
            let Some(Pick { outcome, .. }) = choose(self.state.probability(pred)) else {
                return Ok(None);
            };
            return self.state.force(pred, outcome).map(Some);
        }
        // One square with the marginals known: the probability is theirs. Several squares
        // with a room smaller than the state: one read that counts what each outcome
        // removes, then the projection with its record only where the record fits the
        // room, for an outcome of probability at least 1/16 ([`Pick::given`]) that removes
        // more than `DROPPED_MASS` of the mass (any other keeps it); the state after is the
        // recorded projection's bit for bit, and the marginals are read from it after the
        // move, as after the recorded one.
        let known = self.known_probability(pred);
        let short = self.room.filter(|&room| self.state.bytes() > room);
        if let (None, Some(room)) = (known, short) {
            let measured = self.state.measure_within(pred, &mut |read| {
                let pick = choose(read)?;
                let room = match pick.given {
                    Some(p) if 1.0 - p > DROPPED_MASS => room,
                    _ => usize::MAX,
                };
                Some((pick, room))
            })?;
            let Some((p, removed)) = measured else {
                return Ok(None);
            };
            match removed {
                Some(removed) => self.push(Step::Projection(Box::new(removed))),
                None => {
                    self.dropped = true;
                    self.marginals = Tracked::Unknown;
                }
            }
            return Ok(Some(p));
        }
        if let Some(read) = known {
            let Some(Pick { outcome, given }) = choose(read) else {
                return Ok(None);
            };
            // The projection sums the marginals after it in its pass.
            let (p, removed, summed) = match given {
                Some(probability) => {
                    // With no room given, every record fits (the recording projection).
                    let room = self.room.unwrap_or(usize::MAX);
                    let (p, removed, summed) = self.state.force_given_marginals_within(
                        pred,
                        outcome,
                        probability,
                        room,
                    )?;
                    let Some(removed) = removed else {
                        // Dropped: no step to record; the marginals are the pass's.
                        self.dropped = true;
                        self.marginals = summed.map_or(Tracked::Unknown, Tracked::Known);
                        return Ok(Some(p));
                    };
                    (p, removed, summed)
                }
                None => {
                    let (p, removed) = self.state.force_keeping(pred, outcome)?;
                    (p, removed, None)
                }
            };
            self.push_summed(Step::Projection(Box::new(removed)), summed);
            return Ok(Some(p));
        }
        let Some((p, removed)) = self.state.measure_keeping(pred, choose)? else {
            return Ok(None);
        };
        self.push(Step::Projection(Box::new(removed)));
        Ok(Some(p))
    }

    /// Projects onto outcome `outcome` of "some pattern of `patterns` holds"
    /// ([`QuantumState::force_any`]); with the outcome's probability `given` (read before),
    /// the survivors are scaled by it in the projection's pass and the marginals after it
    /// summed there ([`QuantumState::force_any_given_marginals`]). No one predicate
    /// describes the set, so the record is the removed entries.
    pub fn force_any(
        &mut self,
        patterns: &[Predicate],
        outcome: bool,
        given: Option<f64>,
    ) -> Result<f64, SimError> {
        if !self.recording {
            return self.state.force_any(patterns, outcome);
        }
        // No predicate describes the set: the record is the removed entries, as a
        // projection's; a backend without such records keeps a copy of the state before.
        let kept = match given {
            Some(probability) => {
                self.state
                    .force_any_given_marginals(patterns, outcome, probability)
            }
            None => (self.state.force_any_keeping(patterns, outcome)).map(|(p, r)| (p, r, None)),
        };
        match kept {
            Ok((p, removed, summed)) => {
                self.push_summed(Step::Projection(Box::new(removed)), summed);
                Ok(p)
            }
            Err(SimError::Unsupported { .. }) => {
                let copy = self.state.try_clone(self.journal.bytes())?;
                let p = self.state.force_any(patterns, outcome)?;
                self.push(Step::Whole(Box::new(copy)));
                Ok(p)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qchess_sim::State;

    /// A one-square measurement takes its probability from the known marginals while steps
    /// keep them known (a relabelling iSwap swaps them); after a step that only the state
    /// tells (a controlled iSwap), and for a predicate on more than one square, the state is
    /// read. The projection is the one `force_keeping_given` makes, and undoes exactly.
    #[test]
    fn known_marginals_serve_one_square_measurements_while_known() {
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
        // Uncontrolled iSwaps relabel: the marked marginal moves to square 3 and back.
        rec.iswap(1, 3, Controls::NONE).unwrap();
        assert!(matches!(rec.marginals(), Tracked::Known(m) if m[3] == 0.25 && m[1] == 0.0));
        rec.iswap(3, 1, Controls::NONE).unwrap();
        seen.clear();
        let mut look = |p: f64| {
            seen.push(p);
            None
        };
        assert!(rec.measure(Predicate::One(1), &mut look).unwrap().is_none());
        assert_eq!(seen, vec![0.25]);
        // iSwaps controlled by a square occupied in some branch: only the state tells.
        let half_full = Controls::empty_path(1 << 2);
        rec.iswap(1, 3, half_full).unwrap();
        assert!(matches!(rec.marginals(), Tracked::Touched(_, t) if t == 0b1010));
        rec.iswap(3, 1, half_full).unwrap();
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

    /// A controlled iSwap (a slide whose path is occupied in some branches) on a state large
    /// enough for the in-place kernel keeps the marginals known from the masses it moved:
    /// they agree with a fresh pass, and the move is undone.
    #[test]
    fn a_slide_keeps_the_marginals_known_from_the_masses_it_moved() {
        // A piece on 0; one on 3 split onto 2 and 4; fourteen more split: 2^15 branches.
        let mut state = State::<f64>::classical(0b1001 | (0x3fff << 8));
        state.split(3, 2, 4, Controls::NONE).unwrap();
        for p in 0..14u8 {
            state
                .split(8 + p, 22 + 2 * p, 23 + 2 * p, Controls::NONE)
                .unwrap();
        }
        let start: Vec<_> = state.entries().collect();
        let marginals = state.qubit_probabilities();
        let mut journal = Journal::new();
        let mut rec = Recorder::new(&mut state, &mut journal).knowing(Some(marginals));
        // 0 to 1 where square 2 is empty (half the branches), then 1 to 5 where 22 is (a
        // half independent of it).
        rec.iswap(0, 1, Controls::empty_path(1 << 2)).unwrap();
        rec.iswap(1, 5, Controls::empty_path(1 << 22)).unwrap();
        let Tracked::Known(known) = rec.marginals() else {
            panic!("not known: {:?}", rec.marginals());
        };
        let fresh = state.qubit_probabilities();
        for (q, (k, f)) in known.iter().zip(&fresh).enumerate() {
            assert!((k - f).abs() < 1e-12, "square {q}: {k} against {f}");
        }
        assert!((known[0] - 0.5).abs() < 1e-12 && (known[5] - 0.25).abs() < 1e-12);
        assert!((known[1] - 0.25).abs() < 1e-12, "{}", known[1]);
        journal.rollback(&mut state).unwrap();
        assert_eq!(state.entries().collect::<Vec<_>>(), start);
    }

    /// Masses moved onto a square or off it that leave it within rounding of empty or full
    /// in every branch mark it to be read; others are known.
    #[test]
    fn moved_masses_near_empty_or_full_are_read() {
        let mut probs = [0.0; 64];
        probs[0] = 0.3;
        probs[1] = 0.2;
        // Half of square 0's mass to 1: both known.
        let Tracked::Known(p) = moved(probs, (0, 1), [0.15, 0.0]) else {
            panic!("known");
        };
        assert_eq!((p[0], p[1]), (0.3 - 0.15, 0.2 + 0.15));
        // All of it (summed elsewhere with its own rounding): 0 is to be read.
        let all = 0.3 - 1e-17;
        assert!(matches!(
            moved(probs, (0, 1), [all, 0.0]),
            Tracked::Touched(_, 0b01)
        ));
        // Square 1 filled in every branch, and 0 emptied: both read.
        probs[1] = 0.7;
        assert!(matches!(
            moved(probs, (0, 1), [0.3, 0.0]),
            Tracked::Touched(_, 0b11)
        ));
        // Mass back from 1 to 0, neither near 0 or 1.
        assert!(matches!(
            moved(probs, (0, 1), [0.0, 0.1]),
            Tracked::Known(_)
        ));
    }
}
