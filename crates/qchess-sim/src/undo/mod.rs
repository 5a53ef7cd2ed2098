//! Taking a pass back without a copy of the state (issue 10, Deliver 1): a projection that
//! keeps only what it threw away, and the inverse of a capture. Unitary gates are undone by
//! their inverse gates ([`State::iswap_inv`], [`State::merge`] for a split, ...); these two
//! are the operations that have no inverse gate.

mod pass;
mod take_back;
#[cfg(test)]
mod tests;

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::scan::BLOCK;
use crate::key::Predicate;
use crate::state::State;

pub(crate) use pass::{project_sector, shrink_record};

/// What a projection removed from a state, enough to put it back: the projected-out entries
/// (kept in the backend's own form, unnormalised) and the factor the survivors were scaled
/// by. Its memory is proportional to what the projection destroyed: where a counted
/// projection of the local [`State`] removed at least two thirds of a sector, the record holds
/// that sector's old arrays whole (its survivors' old entries beside the removed ones, at
/// most twice what went), which the undo puts back as they were
/// (docs/decisions.md, "A record of two thirds of a sector keeps the old arrays whole").
#[derive(Clone, Debug)]
pub struct Removed<S> {
    /// The removed entries, as a (sub-normalised) state of the same backend.
    pub(crate) part: S,
    /// `sqrt(kept mass)`: multiplying the survivors by it undoes the renormalisation;
    /// `None` when nothing was rescaled (nothing removed).
    pub(crate) restore: Option<f64>,
    /// Per sector of `part` (empty when none is): whether it is a sector's old arrays
    /// whole, which the undo puts back in place of the sector's survivors.
    pub(crate) whole: Vec<bool>,
    /// The survivors' entries the whole sectors of `part` hold beside the removed ones.
    pub(crate) held: usize,
}

/// The cut of a projection onto outcome `outcome` of the physical predicate
/// `key & mask == value`: whether a key's entry goes, and the lowest key bit that reads
/// ([`State::project_counted`]).
fn predicate_cut(
    mask: u64,
    value: u64,
    outcome: bool,
) -> (impl Fn(u64) -> bool + Sync + Copy, u32) {
    (
        move |k: u64| (k & mask == value) != outcome,
        mask.trailing_zeros(),
    )
}

/// What the caller of [`State::measure_keeping`] picks once it has read the probability
/// that the predicate holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    /// The outcome to project onto (`true`: the predicate holds).
    pub outcome: bool,
    /// The outcome's probability as the caller read it: the survivors are scaled by
    /// `1 / sqrt(given)` in the projection's own pass (see [`State::force_keeping_given`]);
    /// `None` sums the kept mass instead (for a rare outcome, whose `1 - p` lost digits).
    pub given: Option<f64>,
}

/// What [`State::force_keeping_marginals`] returns: the outcome's probability, the undo
/// record, and the qubit marginals after the projection when its pass summed them.
pub(crate) type Projected<S> = (f64, Removed<S>, Option<[f64; 64]>);

impl<S> Removed<S> {
    /// A record made by a backend from its own parts (for other [`crate::QuantumState`]
    /// implementations): the removed entries and the factor that undoes the survivors'
    /// renormalisation (`None` when they were not rescaled).
    pub fn new(part: S, restore: Option<f64>) -> Self {
        Self {
            part,
            restore,
            whole: Vec::new(),
            held: 0,
        }
    }

    /// The removed entries; for a sector that lost at least two thirds of its entries to a
    /// counted projection of the local [`State`], that sector's old entries whole
    /// ([`Removed::holds_survivors`]).
    pub fn part(&self) -> &S {
        &self.part
    }

    /// Whether [`Removed::part`] holds some survivors' old entries beside the removed ones
    /// (a sector's old arrays kept whole).
    pub fn holds_survivors(&self) -> bool {
        self.held > 0
    }

    /// The factor that undoes the survivors' renormalisation, if they were rescaled.
    pub fn restore_factor(&self) -> Option<f64> {
        self.restore
    }

    /// Splits the record into its parts (a record that
    /// [`Removed::holds_survivors`] loses which of its sectors are whole).
    pub fn into_parts(self) -> (S, Option<f64>) {
        (self.part, self.restore)
    }
}

impl<S: crate::QuantumState> Removed<S> {
    /// A copy of the record made with fallible allocations ([`crate::QuantumState::try_clone`]
    /// of the removed entries): running out of memory is [`SimError::OutOfMemory`], never an
    /// abort (issue 10, Deliver 5). The removed entries of the local [`State`] carry no
    /// budget of their own (they are counted by the game that keeps the record), so for it
    /// the copy is refused only when the allocation fails; the caller asks its budget first.
    /// The copy equals [`Clone::clone`] of the record.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let (_, removed) = s.force_keeping(Predicate::One(1), true)?;
    /// let copy = removed.try_clone()?;
    /// let entries = |r: &qchess_sim::Removed<State<f64>>| r.part().entries().collect::<Vec<_>>();
    /// assert_eq!(entries(&copy), entries(&removed));
    /// assert_eq!(copy.len(), removed.len());
    /// assert_eq!(copy.restore_factor(), removed.restore_factor());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn try_clone(&self) -> Result<Self, SimError> {
        let mut whole = Vec::new();
        whole
            .try_reserve_exact(self.whole.len())
            .map_err(|_| SimError::OutOfMemory { states: 0 })?;
        whole.extend_from_slice(&self.whole);
        Ok(Self {
            part: self.part.try_clone(0)?,
            restore: self.restore,
            whole,
            held: self.held,
        })
    }
}

impl<T: Amplitude> Removed<State<T>> {
    /// Heap bytes the record holds.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let (_, removed) = s.force_keeping(Predicate::One(1), true)?;
    /// assert_eq!(removed.len(), 1);
    /// assert!(removed.bytes() >= 24);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn bytes(&self) -> usize {
        self.part.bytes()
    }

    /// Number of removed entries (not counting the survivors' old entries a whole sector
    /// of the record holds).
    pub fn len(&self) -> usize {
        self.part.len() - self.held
    }

    /// Whether nothing was removed.
    pub fn is_empty(&self) -> bool {
        self.part.sectors.is_empty()
    }
}

impl<T: Amplitude> State<T> {
    /// [`State::force`] that also returns what it removed, so that [`State::unproject`] can
    /// take the projection back. A projection that removes nothing leaves the state exactly
    /// as it was (it is not rescaled), so its undo is exact; otherwise the survivors are
    /// scaled as by [`State::force`] and the undo restores them within rounding.
    ///
    /// The removed entries are counted against the memory budget before they are copied.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let before: Vec<_> = s.entries().collect();
    /// let (p, removed) = s.force_keeping(Predicate::One(1), true)?;
    /// assert!((p - 0.5).abs() < 1e-15);
    /// assert_eq!(s.len(), 1);
    /// s.unproject(removed)?;
    /// let after: Vec<_> = s.entries().collect();
    /// assert_eq!(before.len(), after.len());
    /// for ((ka, a), (kb, b)) in before.iter().zip(&after) {
    ///     assert_eq!(ka, kb);
    ///     assert!((a - b).norm() < 1e-15);
    /// }
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_keeping(
        &mut self,
        pred: Predicate,
        outcome: bool,
    ) -> Result<(f64, Removed<Self>), SimError> {
        let (p, removed, _) = self.force_keeping_with(pred, outcome, false)?;
        Ok((p, removed))
    }

    /// [`State::force_keeping`] that also returns the qubit marginals of the state after the
    /// projection (as [`State::qubit_probabilities`] would read them, within rounding),
    /// summed in the projection's own pass over the survivors; `None` when the projection
    /// removed nothing (the marginals did not change) or the amplitudes are exact.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let (p, removed, marginals) = s.force_keeping_marginals(Predicate::One(1), true)?;
    /// assert!((p - 0.5).abs() < 1e-15);
    /// let m = marginals.expect("the projection removed a branch");
    /// assert!((m[1] - 1.0).abs() < 1e-15 && m[2] == 0.0);
    /// let plain = s.qubit_probabilities();
    /// assert!(m.iter().zip(&plain).all(|(a, b)| (a - b).abs() < 1e-15));
    /// s.unproject(removed)?;
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_keeping_marginals(
        &mut self,
        pred: Predicate,
        outcome: bool,
    ) -> Result<Projected<Self>, SimError> {
        self.force_keeping_with(pred, outcome, true)
    }

    /// [`State::force_keeping`], with the survivors' marginals when `marginals`.
    ///
    /// One count pass over the keys (removed entries per block, in parallel), then one pass
    /// that copies each block's removed entries to their slot of the record, compacts the
    /// kept ones in place towards the front of the sector, and sums the masses (and the
    /// survivors' bit masses) per block; then the survivors are scaled (in parallel).
    /// Sums are per block, combined in block order: the same for any thread count.
    /// [`State::force_keeping`] for a caller that has just read the outcome's probability
    /// `probability` (as [`State::probability`] gives it, or one minus it for the outcome
    /// "does not hold"): the survivors are scaled by `1 / sqrt(probability)` in the
    /// projection's own pass, with no pass to sum the kept mass and none to scale them
    /// afterwards (issue 10: a measuring move within 1.5x of its bare gate). The state after
    /// has the norm it had before (1 up to rounding), as after [`State::force`]. Returns
    /// `probability` and the undo record ([`State::unproject`] takes it back). A
    /// probability that is not finite, not above [`Amplitude::ZERO_PROBABILITY`] or above 1
    /// is [`SimError::ZeroProbabilityOutcome`] / [`SimError::InvalidProbability`] and
    /// nothing changes. Exact amplitudes and a projection that removes nothing behave as
    /// [`State::force_keeping`].
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let before = s.clone();
    /// let p = s.probability(Predicate::One(1));
    /// let (got, removed) = s.force_keeping_given(Predicate::One(1), true, p)?;
    /// assert_eq!(got, p);
    /// let mut plain = before.clone();
    /// plain.force(Predicate::One(1), true)?;
    /// assert!((s.inner(&plain).norm() - 1.0).abs() < 1e-15);
    /// s.unproject(removed)?;
    /// assert!((s.inner(&before).norm() - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_keeping_given(
        &mut self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
    ) -> Result<(f64, Removed<Self>), SimError> {
        if !T::RENORMALIZES {
            return self.force_keeping(pred, outcome);
        }
        self.check_given(pred, outcome, probability)?;
        let (p, removed, _) =
            self.force_keeping_inner(pred, outcome, false, Some(probability), None)?;
        Ok((p, removed))
    }

    /// [`State::force_keeping_given`] that also returns the qubit marginals of the state
    /// after the projection (as [`State::qubit_probabilities`] would read them, within
    /// rounding), summed in the projection's own pass over the survivors (from their final
    /// places, in cache, on one thread as on several): a measuring move needs no marginal
    /// pass of its own after it. `None` when the projection removed nothing (the marginals
    /// did not change) or the amplitudes are exact.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let p = s.probability(Predicate::One(1));
    /// let (got, removed, marginals) = s.force_keeping_given_marginals(Predicate::One(1), true, p)?;
    /// assert_eq!(got, p);
    /// let m = marginals.expect("the projection removed a branch");
    /// assert_eq!((m[1], m[2]), (1.0, 0.0));
    /// let plain = s.qubit_probabilities();
    /// assert!(m.iter().zip(&plain).all(|(a, b)| (a - b).abs() < 1e-15));
    /// s.unproject(removed)?;
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_keeping_given_marginals(
        &mut self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
    ) -> Result<Projected<Self>, SimError> {
        if !T::RENORMALIZES {
            let (p, removed) = self.force_keeping(pred, outcome)?;
            return Ok((p, removed, None));
        }
        self.check_given(pred, outcome, probability)?;
        self.force_keeping_inner(pred, outcome, true, Some(probability), None)
    }

    /// [`State::force_keeping_given_marginals`] for a caller that keeps the undo record
    /// only when it takes at most `room` bytes (a game whose undo budget is nearly full
    /// drops a larger one): when the removed entries' arrays would take more, they are
    /// dropped in the projection's pass instead of written out (`None` in place of the
    /// record; nothing can take the projection back then), so no memory is spent on a
    /// record the caller would throw away. Where a record of the whole state surely fits,
    /// this is [`State::force_keeping_given_marginals`]; otherwise the removed entries are
    /// counted first (one read of the keys) and the record made when they fit. The state
    /// after, the probability and the marginals are those of
    /// [`State::force_keeping_given_marginals`], bit for bit, record or not; the checks and
    /// errors are its own (on an error nothing changes).
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let mut kept = s.clone();
    /// let p = s.probability(Predicate::One(1));
    /// // No room: the removed branch is dropped, not recorded.
    /// let (got, removed, marginals) = s.force_given_marginals_within(Predicate::One(1), true, p, 0)?;
    /// assert!(removed.is_none());
    /// assert_eq!(got, p);
    /// assert_eq!(marginals.map(|m| (m[1], m[2])), Some((1.0, 0.0)));
    /// // The same projection with a record.
    /// let (_, record, _) = kept.force_given_marginals_within(Predicate::One(1), true, p, 1 << 20)?;
    /// assert_eq!(record.map(|r| r.len()), Some(1));
    /// assert_eq!(s.entries().collect::<Vec<_>>(), kept.entries().collect::<Vec<_>>());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn force_given_marginals_within(
        &mut self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
        room: usize,
    ) -> Result<(f64, Option<Removed<Self>>, Option<[f64; 64]>), SimError> {
        let entry = crate::memory::entry_bytes::<T>();
        if !T::RENORMALIZES || self.len().saturating_mul(entry) <= room {
            let (p, removed, marginals) =
                self.force_keeping_given_marginals(pred, outcome, probability)?;
            return Ok((p, Some(removed), marginals));
        }
        self.check_given(pred, outcome, probability)?;
        let (mask, value) = self.check_predicate(pred)?;
        let cut = predicate_cut(mask, value, outcome);
        let counted = self.removed_per_block(cut.0);
        // The record when its entries fit the room; the lean pass drops them otherwise (the
        // survivors scaled and their bit masses summed where they land, as with a record).
        let record = self.record_entries(&counted.0).saturating_mul(entry) <= room;
        let (p, removed, marginals) =
            self.project_counted(cut, outcome, true, Some(probability), counted, record)?;
        Ok((p, record.then_some(removed), marginals))
    }

    /// [`State::force_keeping`] for a caller that keeps the undo record only when it takes
    /// at most `room` bytes: `None` in place of the record when the removed entries were
    /// dropped in the projection's pass instead (a count of them decides first). The
    /// state after it is bit for bit the one [`State::force_keeping`] leaves, record or not
    /// (a game replayed with another undo budget stays bit-exact). Exact states always make
    /// the record.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let mut kept = s.clone();
    /// let (p, removed) = s.force_within(Predicate::One(1), true, 0)?;
    /// assert!(removed.is_none());
    /// let (q, record) = kept.force_keeping(Predicate::One(1), true)?;
    /// assert_eq!((p, record.len()), (q, 1));
    /// assert_eq!(s.entries().collect::<Vec<_>>(), kept.entries().collect::<Vec<_>>());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_within(
        &mut self,
        pred: Predicate,
        outcome: bool,
        room: usize,
    ) -> Result<(f64, Option<Removed<Self>>), SimError> {
        let entry = crate::memory::entry_bytes::<T>();
        if !T::RENORMALIZES || self.len().saturating_mul(entry) <= room {
            let (p, removed) = self.force_keeping(pred, outcome)?;
            return Ok((p, Some(removed)));
        }
        let (mask, value) = self.check_predicate(pred)?;
        let cut = predicate_cut(mask, value, outcome);
        let counted = self.removed_per_block(cut.0);
        let record = self.record_entries(&counted.0).saturating_mul(entry) <= room;
        let (p, removed, _) = self.project_counted(cut, outcome, false, None, counted, record)?;
        Ok((p, record.then_some(removed)))
    }

    /// The checks of [`State::force_keeping_given`] on the caller's `probability`.
    fn check_given(
        &self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
    ) -> Result<(), SimError> {
        if !(probability.is_finite() && probability > T::ZERO_PROBABILITY) {
            self.check_predicate(pred)?;
        }
        Self::check_given_probability(outcome, probability)
    }

    /// The checks of a caller's `probability` of `outcome` ([`State::check_given`] once the
    /// predicate is known to be well formed).
    pub(crate) fn check_given_probability(outcome: bool, probability: f64) -> Result<(), SimError> {
        if !(probability.is_finite() && probability > T::ZERO_PROBABILITY) {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability,
            });
        }
        if probability > 1.0 + 1e-9 {
            return Err(SimError::InvalidProbability { probability });
        }
        Ok(())
    }

    /// A measurement in one read and one projection: reads the probability that `pred`
    /// holds (exactly as [`State::probability`] gives it, bit for bit) and, in the same pass
    /// over the state, how many entries each block would lose; `choose` is handed that
    /// probability and picks the outcome ([`Pick`]), or `None` to leave the state as it
    /// was. The projection then follows as [`State::force_keeping_given`] (when
    /// [`Pick::given`] is set) or [`State::force_keeping`] would make it, without their
    /// counting pass over the keys (issue 10: a measuring move within 1.5x of its bare
    /// gate). Returns the outcome's probability and the undo record ([`State::unproject`]),
    /// or `None` when `choose` declined. A malformed predicate is an error and `choose` is
    /// not called; on any error nothing changes.
    ///
    /// ```
    /// use qchess_sim::{Controls, Pick, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let before = s.clone();
    /// let read = s.probability(Predicate::One(1));
    /// let mut seen = None;
    /// let (p, removed) = s
    ///     .measure_keeping(Predicate::One(1), &mut |p| {
    ///         seen = Some(p);
    ///         Some(Pick { outcome: true, given: Some(p) })
    ///     })?
    ///     .expect("an outcome was picked");
    /// assert_eq!(seen, Some(read));
    /// assert_eq!(p, read);
    /// assert_eq!(s.len(), 1);
    /// s.unproject(removed)?;
    /// assert!((s.inner(&before).norm() - 1.0).abs() < 1e-15);
    /// // Declining leaves the state as it was.
    /// assert!(s.measure_keeping(Predicate::One(1), &mut |_| None)?.is_none());
    /// assert_eq!(s.len(), 2);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn measure_keeping(
        &mut self,
        pred: Predicate,
        choose: &mut dyn FnMut(f64) -> Option<Pick>,
    ) -> Result<Option<(f64, Removed<Self>)>, SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        if !T::RENORMALIZES {
            // Exact amplitudes: the read, then the projection (which needs no given
            // probability: exact states are not renormalised).
            let Some(Pick { outcome, .. }) = choose(self.probability(pred)) else {
                return Ok(None);
            };
            return self.force_keeping(pred, outcome).map(Some);
        }
        let Some((Pick { outcome, given }, holds, total)) =
            self.read_counted(mask, value, choose)?
        else {
            return Ok(None);
        };
        let (p, removed, _) = match given {
            Some(probability) => {
                self.check_given(pred, outcome, probability)?;
                self.force_keeping_inner(pred, outcome, false, given, Some((holds, total)))?
            }
            None => self.force_keeping_inner(pred, outcome, false, None, Some((holds, total)))?,
        };
        Ok(Some((p, removed)))
    }

    /// The read of [`State::measure_keeping`]: the probability that `(mask, value)` holds,
    /// summed as [`State::probability`] sums it, handed to `choose`; with its pick, the
    /// entries each block of each sector loses under the outcome picked, and their total.
    /// `None` when `choose` declined.
    #[allow(clippy::type_complexity)]
    fn read_counted(
        &self,
        mask: u64,
        value: u64,
        choose: &mut dyn FnMut(f64) -> Option<Pick>,
    ) -> Result<Option<(Pick, Vec<Vec<usize>>, usize)>, SimError> {
        // The read: the sums of `State::probability` in its order, and the counts.
        let (yes, all, mut holds) = self.phys_masses_counted(mask, value)?;
        let read = if all > 0.0 { yes / all } else { 0.0 };
        let Some(pick) = choose(read) else {
            return Ok(None);
        };
        // Entries each block loses: those where the predicate's value is not `outcome`.
        let mut total = 0;
        for (s, per_block) in self.sectors.iter().zip(holds.iter_mut()) {
            let n = s.keys.len();
            for (b, c) in per_block.iter_mut().enumerate() {
                if !pick.outcome {
                    continue;
                }
                let len = ((b + 1) * BLOCK).min(n) - b * BLOCK;
                *c = len - *c;
            }
            total += per_block.iter().sum::<usize>();
        }
        Ok(Some((pick, holds, total)))
    }

    /// [`State::measure_keeping`] for a caller that keeps the undo record only when it
    /// takes at most the room `choose` gives with its pick: `None` in place of the record
    /// when its entries (counted in the read) take more, dropped in the projection's pass
    /// instead. The state after it is bit for bit the one [`State::measure_keeping`]
    /// leaves. With a room for every entry of the state this is
    /// [`State::measure_keeping`]; exact states always make the record.
    ///
    /// ```
    /// use qchess_sim::{Controls, Pick, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let mut kept = s.clone();
    /// let pick = |p: f64| Pick { outcome: true, given: Some(p) };
    /// // No room: the removed branch is dropped.
    /// let (p, removed) = s.measure_within(Predicate::One(1), &mut |p| Some((pick(p), 0)))?.unwrap();
    /// assert!(removed.is_none());
    /// let (q, record) = kept.measure_keeping(Predicate::One(1), &mut |p| Some(pick(p)))?.unwrap();
    /// assert_eq!((p, record.len()), (q, 1));
    /// assert_eq!(s.entries().collect::<Vec<_>>(), kept.entries().collect::<Vec<_>>());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn measure_within(
        &mut self,
        pred: Predicate,
        choose: &mut dyn FnMut(f64) -> Option<(Pick, usize)>,
    ) -> Result<Option<(f64, Option<Removed<Self>>)>, SimError> {
        let mut room = usize::MAX;
        if !T::RENORMALIZES {
            return Ok(self
                .measure_keeping(pred, &mut |p| choose(p).map(|(pick, _)| pick))?
                .map(|(p, r)| (p, Some(r))));
        }
        let (mask, value) = self.check_predicate(pred)?;
        let Some((Pick { outcome, given }, holds, total)) =
            self.read_counted(mask, value, &mut |p| {
                choose(p).map(|(pick, r)| {
                    room = r;
                    pick
                })
            })?
        else {
            return Ok(None);
        };
        if let Some(probability) = given {
            self.check_given(pred, outcome, probability)?;
        }
        // Within the room: the recording pass of `measure_keeping`; otherwise the lean one,
        // whose state is the same bit for bit.
        let entry = crate::memory::entry_bytes::<T>();
        let record = self.record_entries(&holds).saturating_mul(entry) <= room;
        let cut = predicate_cut(mask, value, outcome);
        let (p, removed, _) =
            self.project_counted(cut, outcome, false, given, (holds, total), record)?;
        Ok(Some((p, record.then_some(removed))))
    }

    fn force_keeping_with(
        &mut self,
        pred: Predicate,
        outcome: bool,
        marginals: bool,
    ) -> Result<Projected<Self>, SimError> {
        self.force_keeping_inner(pred, outcome, marginals, None, None)
    }

    /// The projection of [`State::force_keeping`]; with `given` (the outcome's probability,
    /// checked by the caller) the survivors are scaled in the fused pass by
    /// `1 / sqrt(given)` and the masses are not summed; with `counted` (the entries each
    /// block of each sector loses, and their total, as [`State::removed_per_block`] would
    /// count them) there is no counting pass. Without, on one thread, a sample of the keys
    /// usually stands in for the count ([`State::estimate_removed`],
    /// [`State::pass_growing`]).
    fn force_keeping_inner(
        &mut self,
        pred: Predicate,
        outcome: bool,
        marginals: bool,
        given: Option<f64>,
        counted: Option<(Vec<Vec<usize>>, usize)>,
    ) -> Result<Projected<Self>, SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        if !T::RENORMALIZES {
            // Exact states project without renormalising (their own `force`).
            let (removed, _, mass) = self.collect_removed(mask, value, outcome)?;
            let p = if removed.sectors.is_empty() {
                if mass <= 0.0 {
                    return Err(SimError::ZeroNorm);
                }
                1.0
            } else {
                self.force(pred, outcome)?
            };
            let removed = Removed::new(removed, None);
            return Ok((p, removed, None));
        }
        let cut = predicate_cut(mask, value, outcome);
        self.project_keeping_by(cut, outcome, marginals, given, counted)
    }
}
