//! Taking a pass back without a copy of the state (issue 10, Deliver 1): a projection that
//! keeps only what it threw away, and the inverse of a capture. Unitary gates are undone by
//! their inverse gates ([`State::iswap_inv`], [`State::merge`] for a split, ...); these two
//! are the operations that have no inverse gate.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::compact::{PassExtras, STAGE, split_project};
use crate::kernels::scan::BLOCK;
use crate::key::Predicate;
use crate::memory::Buffer;
use crate::state::{Sector, State};
use num_complex::Complex;

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

/// The sample that sizes an undo record before a one-thread projection
/// (`State::estimate_removed`) reads [`SAMPLE_RUN`] consecutive keys (about a cache line) in
/// every window of this many: at 1.5 x 10^6 keys, about 2 900 runs, against a count that
/// reads every key. (One key in every 64 cost about two thirds of the count it saves: each
/// read is a miss.)
const SAMPLE_STRIDE: usize = 512;

/// Consecutive keys the sample reads in each window of [`SAMPLE_STRIDE`].
const SAMPLE_RUN: usize = 8;

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

/// A sample of `keys` for `State::estimate_removed`: how many windows it reads, how many keys,
/// and how many of those `out_of` removes. It reads one run of [`SAMPLE_RUN`] keys in each
/// window of [`SAMPLE_STRIDE`], at an offset in the window drawn from a fixed hash of the
/// window's index: a fixed offset would read the same place of every window, and the keys of
/// a game's state repeat with periods of powers of two (a state of 1.49 x 10^6 keys after
/// knight splits has one square's bit the same at every 64th key).
fn sample_count(keys: &[u64], out_of: impl Fn(u64) -> bool) -> (usize, usize, usize) {
    let n = keys.len();
    let m = n.div_ceil(SAMPLE_STRIDE);
    let (mut read, mut c) = (0, 0);
    for j in 0..m {
        let run = &keys[sampled(j, n)];
        read += run.len();
        c += run.iter().filter(|&&k| out_of(k)).count();
    }
    (m, read, c)
}

/// The keys [`sample_count`] reads in window `j` of [`SAMPLE_STRIDE`] keys out of `n`: a run
/// of [`SAMPLE_RUN`] (fewer at the end) at the offset given by the top bits of a
/// multiplicative (Fibonacci) hash of `j`.
#[inline]
fn sampled(j: usize, n: usize) -> std::ops::Range<usize> {
    let jitter = ((j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize;
    let start = (j * SAMPLE_STRIDE + jitter % (SAMPLE_STRIDE - SAMPLE_RUN + 1)).min(n - 1);
    start..(start + SAMPLE_RUN).min(n)
}

/// What a sector loses in a projection, as `State::estimate_removed` finds it.
#[derive(Clone, Copy, Debug)]
enum Loses {
    /// This many entries, counted.
    Exactly(usize),
    /// At least one entry, likely at least this many (a sample's estimate).
    AtLeast(usize),
}

/// What the pass of a projection with a record leaves for `State::finish_projection`.
struct PassDone<T> {
    /// One record per sector that lost entries, in sector order.
    records: Vec<Sector<T>>,
    /// The removed and the kept entries' squared norms (the kept ones before any scaling).
    gone: f64,
    kept: f64,
    /// The survivors' bit masses (when asked), as scaled in the pass.
    masses: crate::kernels::scan::BitMasses,
    /// Per sector: its survivors (at its front) and its removed entries.
    kept_len: Vec<usize>,
    removed: Vec<usize>,
    /// Per sector: whether its pass was inverted ([`PassExtras::invert`]: the survivors
    /// written out to arrays that are now the sector's, the removed entries left in the
    /// sector's old arrays, now the record's, whose room above them is given back once the
    /// projection stands).
    inverted: Vec<bool>,
    /// Per sector: whether its inverted pass left the old arrays whole
    /// ([`crate::kernels::compact::copy_kept`]: every entry as before, the record; where
    /// at most a third survives, [`keeps_whole`]).
    whole: Vec<bool>,
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

    /// The recording projection of [`State::force_keeping_inner`] on a renormalised state,
    /// for any cut: `out_of` says of a physical key whether its entry goes, `low_bit` is
    /// the lowest key bit it reads ([`PassExtras::run_shift`]); `outcome` names the outcome
    /// in errors. [`State::project_any_given_marginals`] projects through it too.
    pub(crate) fn project_keeping_by(
        &mut self,
        (out_of, low_bit): (impl Fn(u64) -> bool + Sync + Copy, u32),
        outcome: bool,
        marginals: bool,
        given: Option<f64>,
        counted: Option<(Vec<Vec<usize>>, usize)>,
    ) -> Result<Projected<Self>, SimError> {
        // With nothing counted and one thread, the pass finds the removed entries itself
        // where a sample of the keys shows that some go and some stay.
        if counted.is_none()
            && let Some(plan) = self.estimate_removed(out_of)
            && let Some(done) = self.pass_growing(&plan, out_of, given, marginals)?
        {
            return self.finish_projection(outcome, marginals, given, done);
        }
        // Where the sample shows that at most a third survives, the whole-record pass needs
        // no count either.
        if counted.is_none()
            && let Some(done) = self.pass_whole_sampled(out_of, given, marginals)?
        {
            return self.finish_projection(outcome, marginals, given, done);
        }
        let counted = match counted {
            Some(counted) => counted,
            None => self.removed_per_block(out_of),
        };
        self.project_counted((out_of, low_bit), outcome, marginals, given, counted, true)
    }

    /// The whole-record pass of [`State::project_counted`] ([`keeps_whole`]) without the
    /// count before it, for a state of one sector projected on the calling thread: where a
    /// sample of the keys ([`sample_count`]) shows, by four standard deviations (as
    /// [`State::estimate_removed`] bounds it), that at most a third of the entries survive,
    /// the survivors are written to arrays as long as that bound
    /// ([`crate::kernels::compact::copy_kept_within`]), the old arrays kept whole as the
    /// record. `None`, with nothing changed, where the sample cannot tell, the budget has
    /// no room for those arrays, or more survive than the bound (then the counted pass
    /// follows: the old arrays were only read).
    fn pass_whole_sampled(
        &mut self,
        out_of: impl Fn(u64) -> bool + Copy,
        given: Option<f64>,
        marginals: bool,
    ) -> Result<Option<PassDone<T>>, SimError> {
        use crate::kernels::compact::{copy_kept_within, projects_in_blocks};
        let [s] = self.sectors.as_slice() else {
            return Ok(None);
        };
        let len = s.keys.len();
        if len < BLOCK || projects_in_blocks(len) {
            return Ok(None);
        }
        let (m, read, c) = sample_count(&s.keys, out_of);
        if c == 0 || c == read {
            return Ok(None);
        }
        let est_kept = ((read - c) as f64 / read as f64) * len as f64;
        let spread = 2.0 * len as f64 / (m as f64).sqrt() + STAGE as f64;
        let most = (est_kept + spread).ceil() as usize;
        if most >= len || !keeps_whole(len - most, len) {
            return Ok(None);
        }
        let Ok(mut bufs) = self.pass_buffers(&[Some((most, 0))]) else {
            return Ok(None);
        };
        let Some(mut buf) = bufs.pop() else {
            return Ok(None);
        };
        let held = self.bytes() + buf.bytes();
        let in_pass = given.map(|p| T::of_f64(1.0 / p.sqrt()));
        let s = &mut self.sectors[0];
        let copied = copy_kept_within(
            &s.keys,
            &s.amps,
            &mut buf.keys,
            &mut buf.amps,
            out_of,
            in_pass,
            marginals,
        );
        let Some((w, sums)) = copied.filter(|&(w, _)| w > 0) else {
            // More survive than the bound (a sample fooled by the keys' pattern), or none
            // (the counted pass reports that). The arrays are freed, not pooled: the
            // counted pass's record would take them, with their room above it.
            drop(buf);
            return Ok(None);
        };
        self.peak = self.peak.max(held);
        buf.keys.truncate(w);
        buf.amps.truncate(w);
        // The survivors' arrays cut to them in place (the bound's room given back).
        buf.keys.shrink_above(0);
        buf.amps.shrink_above(0);
        std::mem::swap(&mut s.keys, &mut buf.keys);
        std::mem::swap(&mut s.amps, &mut buf.amps);
        let (mut gone, mut kept) = (0.0f64, 0.0f64);
        let mut masses = crate::kernels::scan::BitMasses::ZERO;
        add_block_sums(&sums, marginals, (&mut gone, &mut kept), &mut masses);
        Ok(Some(PassDone {
            records: vec![buf],
            gone,
            kept,
            masses,
            kept_len: vec![w],
            removed: vec![len - w],
            inverted: vec![true],
            whole: vec![true],
        }))
    }

    /// The projection of [`State::force_keeping_inner`] once the entries each block of each
    /// sector loses are counted (`counted`, as [`State::removed_per_block`] counts them, and
    /// their total), on a renormalised state: the removed entries written to a record
    /// when `record`, dropped in the pass otherwise (the [`Removed`] returned is then empty
    /// and cannot take the projection back; the state after is the same bit for bit).
    pub(crate) fn project_counted(
        &mut self,
        (out_of, low_bit): (impl Fn(u64) -> bool + Sync + Copy, u32),
        outcome: bool,
        marginals: bool,
        given: Option<f64>,
        (block_counts, total): (Vec<Vec<usize>>, usize),
        record: bool,
    ) -> Result<Projected<Self>, SimError> {
        if total == 0 {
            // Nothing removed: the state stays exactly as it was (not rescaled).
            let mass: f64 = self
                .sectors
                .iter()
                .map(|s| crate::kernels::scan::norm_sqr(&s.amps))
                .sum();
            if mass <= 0.0 {
                return Err(SimError::ZeroNorm);
            }
            let removed = Removed::new(self.with_sectors(Vec::new(), usize::MAX), None);
            return Ok((1.0, removed, None));
        }
        if given.is_some() && total == self.len() {
            // The caller's probability is positive but nothing would survive.
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        // With the caller's probability, the survivors are scaled in the fused pass.
        let in_pass = given.map(|p| T::of_f64(1.0 / p.sqrt()));
        let counts: Vec<usize> = block_counts.iter().map(|c| c.iter().sum()).collect();
        // A sector that loses more than half its entries, with a record, writes its
        // survivors out and keeps its removed entries in place as the record.
        let (inverted, mut records) = if record {
            self.recording_buffers(&counts)?
        } else {
            (Vec::new(), Vec::new())
        };
        // The pass holds the state and the arrays it writes out.
        let held = self.bytes() + records.iter().map(Sector::bytes).sum::<usize>();
        self.peak = self.peak.max(held);
        // The fused pass, sector by sector; masses summed in sector and block order.
        let (mut gone, mut kept) = (0.0f64, 0.0f64);
        // The survivors' bit masses (as scaled in the pass), summed in sector and block order.
        let mut masses = crate::kernels::scan::BitMasses::ZERO;
        let mut kept_len = Vec::new();
        kept_len
            .try_reserve_exact(self.sectors.len())
            .map_err(|_| SimError::OutOfMemory { states: total })?;
        let mut next = records.iter_mut();
        let mut whole = Vec::new();
        whole
            .try_reserve_exact(self.sectors.len())
            .map_err(|_| SimError::OutOfMemory { states: total })?;
        whole.resize(self.sectors.len(), false);
        for (i, (s, per_block)) in self.sectors.iter_mut().zip(&block_counts).enumerate() {
            let n: usize = per_block.iter().sum();
            if n == 0 {
                if given.is_none() {
                    // The kept mass decides the probability (a given one needs no sum).
                    kept += crate::kernels::scan::norm_sqr(&s.amps);
                }
                if marginals && in_pass.is_none() {
                    // Unscaled, as the pass sums the other sectors' survivors (with a given
                    // probability they are summed once scaled, below).
                    masses.add(&crate::kernels::scan::bit_masses(&s.keys, &s.amps));
                }
                kept_len.push(s.keys.len());
                continue;
            }
            let len = s.keys.len();
            let rec = record.then(|| next.next().expect("one record per removing sector"));
            let invert = inverted.get(i).copied().unwrap_or(false);
            let blocks = match rec {
                Some(rec) if invert && keeps_whole(n, len) => {
                    // At most a third survives: the survivors written out, the old arrays
                    // left whole as the record (nothing written in them), then the arrays
                    // traded.
                    let blocks = crate::kernels::compact::copy_kept(
                        &s.keys,
                        &s.amps,
                        per_block,
                        &mut rec.keys,
                        &mut rec.amps,
                        out_of,
                        in_pass,
                        marginals,
                    );
                    std::mem::swap(&mut s.keys, &mut rec.keys);
                    std::mem::swap(&mut s.amps, &mut rec.amps);
                    whole[i] = true;
                    blocks
                }
                rec => {
                    let extra = PassExtras {
                        marginals,
                        scale: in_pass,
                        record,
                        // Without a record, the pass skips unread a chunk that it removes
                        // whole.
                        run_shift: if record { 0 } else { low_bit },
                        invert,
                    };
                    project_sector(s, per_block, rec, out_of, extra)
                }
            };
            add_block_sums(&blocks, marginals, (&mut gone, &mut kept), &mut masses);
            kept_len.push(len - n);
        }
        let done = PassDone {
            records,
            gone,
            kept,
            masses,
            kept_len,
            removed: counts,
            inverted,
            whole,
        };
        self.finish_projection(outcome, marginals, given, done)
    }

    /// The end of [`State::force_keeping_inner`] once its pass went over every sector (the
    /// kept entries at each sector's front, `done.kept_len[i]` of them, scaled there when
    /// `given`): the outcome's probability checked (the removed entries merged back when it
    /// fails: nothing was scaled then), the survivors scaled, the arrays cut to them, the
    /// marginals of the survivors.
    fn finish_projection(
        &mut self,
        outcome: bool,
        marginals: bool,
        given: Option<f64>,
        done: PassDone<T>,
    ) -> Result<Projected<Self>, SimError> {
        let PassDone {
            mut records,
            gone,
            kept,
            mut masses,
            kept_len,
            removed,
            inverted,
            whole,
        } = done;
        let in_pass = given.map(|p| T::of_f64(1.0 / p.sqrt()));
        let checked = match given {
            Some(p) => Ok(p),
            None => Self::forced_probability(outcome, kept, kept + gone),
        };
        let p = match checked {
            Ok(p) => p,
            Err(e) => {
                // Nothing was scaled yet: merging the removed entries back restores the
                // state bit for bit.
                let sectors = self.sectors.iter_mut().zip(&kept_len).zip(&removed);
                for ((((s, &k), &r), &inv), &all) in sectors.zip(&inverted).zip(&whole) {
                    s.keys.truncate(k);
                    s.amps.truncate(k);
                    if r > 0 {
                        let mut r = records.remove(0);
                        if all {
                            // The old arrays are whole: they are the sector's again, the
                            // survivors' arrays a free buffer.
                            std::mem::swap(s, &mut r);
                            self.pool.give(Buffer {
                                keys: r.keys.into_whole(),
                                amps: r.amps.into_whole(),
                            });
                            continue;
                        }
                        if inv {
                            // The old arrays (the record's now) have room for every entry:
                            // the survivors merge back into them, and they are the
                            // sector's again.
                            std::mem::swap(s, &mut r);
                        }
                        merge_into(s, &r);
                        self.pool.give(Buffer {
                            keys: r.keys.into_whole(),
                            amps: r.amps.into_whole(),
                        });
                    }
                }
                return Err(e);
            }
        };
        // The factor the survivors get (already applied in the pass when `given`), and the
        // one that undoes it.
        let (scale, restore) = match given {
            Some(p) => (T::of_f64(1.0 / p.sqrt()), p.sqrt()),
            None => (T::of_f64(1.0 / kept.sqrt()), kept.sqrt()),
        };
        for ((s, &k), &r) in self.sectors.iter_mut().zip(&kept_len).zip(&removed) {
            // The kept entries are at the sector's front, in place. A sector the pass went
            // through is scaled already when `given`; one with nothing removed was not: it
            // is scaled here, in parallel.
            let scaled = in_pass.is_some() && r > 0;
            s.keys.truncate(k);
            s.amps.truncate(k);
            if !scaled {
                crate::kernels::scan::scale_amps(&mut s.amps, scale);
                if marginals && in_pass.is_some() {
                    masses.add(&crate::kernels::scan::bit_masses(&s.keys, &s.amps));
                }
            }
        }
        // An inverted sector's record is the sector's old arrays: the room above its removed
        // entries is given back (a shrink in place), down to the spare slot a record has.
        // (A whole record keeps every entry: nothing above them to give back.)
        let mut inv = (inverted.iter().zip(&whole).zip(&removed)).filter(|&(_, &r)| r > 0);
        let mut flags = Vec::new();
        flags
            .try_reserve_exact(records.len())
            .map_err(|_| SimError::OutOfMemory { states: 0 })?;
        let mut held = 0usize;
        for r in &mut records {
            let (&i, &all) = inv.next().map_or((&false, &false), |(f, _)| f);
            if i && !all {
                shrink_record(r);
            }
            flags.push(all);
        }
        for ((&k, &r), &all) in kept_len.iter().zip(&removed).zip(&whole) {
            if all && r > 0 {
                held += k;
            }
        }
        self.finish_pass();
        self.shrink_to_survivors();
        // Every sector's survivors' masses were summed alike: all unscaled, or (with a given
        // probability) all scaled.
        let marginals = marginals.then(|| {
            let bits = masses.bits();
            let mut out = [0.0f64; 64];
            for (q, slot) in out.iter_mut().enumerate() {
                *slot = bits[self.perm.phys(q as u8) as usize] / masses.total;
            }
            out
        });
        let removed = Removed {
            part: self.with_sectors(records, usize::MAX),
            restore: Some(restore),
            whole: if held > 0 || flags.iter().any(|&w| w) {
                flags
            } else {
                Vec::new()
            },
            held,
        };
        Ok((p, removed, marginals))
    }

    /// For [`State::force_keeping_inner`] on one thread without counts: what a sample of
    /// every sector's keys ([`sample_count`]) says each loses under `out_of`, or `None`
    /// (count them first) when the sample sees no removed or no kept entry, when some sector
    /// is projected in parallel blocks (which need the counts), or when the state is smaller
    /// than a block (its count is short, and a sample of so few runs would mostly end in a
    /// count anyway). A sector whose sample loses nothing is counted here
    /// ([`Loses::Exactly`]); the others get a lower estimate of their loss
    /// ([`Loses::AtLeast`]).
    fn estimate_removed(&self, out_of: impl Fn(u64) -> bool + Copy) -> Option<Vec<Loses>> {
        use crate::kernels::compact::projects_in_blocks;
        let blocks = self
            .sectors
            .iter()
            .any(|s| projects_in_blocks(s.keys.len()));
        if self.len() < BLOCK || blocks {
            return None;
        }
        let (mut gone, mut stays) = (false, false);
        let mut sampled = Vec::new();
        sampled.try_reserve_exact(self.sectors.len()).ok()?;
        for s in &self.sectors {
            let (m, read, c) = sample_count(&s.keys, out_of);
            (gone, stays) = (gone || c > 0, stays || c < read);
            sampled.push((m, read, c));
        }
        if !(gone && stays) {
            return None;
        }
        // The sample's share of `n`, and four standard deviations of a sample of `m` runs
        // (at most `n / (2 sqrt(m))` each, a run counted as one draw: its keys may agree)
        // and a chunk.
        let bounds = |n: usize, (m, read, c): (usize, usize, usize)| {
            let est = (c as f64 / read as f64) * n as f64;
            let spread = 2.0 * n as f64 / (m as f64).sqrt() + STAGE as f64;
            (est - spread, est + spread)
        };
        // A sector that surely loses more than half its entries is counted first, for the
        // counted pass to write its survivors out from the start (issue 10's peak target).
        // (Where the sample cannot tell, the pass inverts itself if it finds more than half
        // gone, `State::pass_growing`.)
        if (self.sectors.iter().zip(&sampled))
            .any(|(s, &sc)| sc.2 > 0 && 2.0 * bounds(s.keys.len(), sc).0 > s.keys.len() as f64)
        {
            return None;
        }
        let plan = self.sectors.iter().zip(sampled).map(|(s, sc)| {
            let n = s.keys.len();
            if sc.2 == 0 {
                return Loses::Exactly(s.keys.iter().filter(|&&k| out_of(k)).count());
            }
            // The lower bound: below the loss but for rare samples, for which the record is
            // then longer than needed, and cut after the pass.
            Loses::AtLeast(bounds(n, sc).0.max(0.0) as usize)
        });
        Some(plan.collect())
    }

    /// The pass of [`State::force_keeping_inner`] sector by sector on the calling thread, in
    /// order (`kernels::compact::InOrder`), with records that start at the `plan`'s estimate
    /// and grow where the pass reaches their end: then the rest of the sector is counted and
    /// the record made exactly long enough, or, where more than half the sector goes, the
    /// pass inverted from there on (`InOrder::invert_roles`: the entries so far trade
    /// places, the survivors are written out to the buffer and the old arrays kept as the
    /// record), so that it holds at most 1.5x the sector. The budget is asked first for records of every
    /// entry of every sector that loses some (their capacity is reserved then, and given
    /// back down to what they hold after), so the pass never fails halfway; `None` (nothing
    /// changed) where it has no room for that, for the counted pass to ask for the exact
    /// lengths.
    fn pass_growing(
        &mut self,
        plan: &[Loses],
        out_of: impl Fn(u64) -> bool + Copy,
        given: Option<f64>,
        marginals: bool,
    ) -> Result<Option<PassDone<T>>, SimError> {
        use crate::kernels::compact::InOrder;
        let worst: usize = (self.sectors.iter().zip(plan))
            .filter(|(_, l)| !matches!(l, Loses::Exactly(0)))
            .map(|(s, _)| s.keys.len() + 1)
            .sum();
        // A pool buffer a single record would grow from is counted in the state's bytes
        // already (as `State::record_buffers` counts it).
        let from_pool = match plan {
            [Loses::Exactly(r) | Loses::AtLeast(r)] => self.pool.fitting_capacity(r + 1),
            _ => 0,
        };
        let bytes = worst.saturating_sub(from_pool) * crate::memory::entry_bytes::<T>();
        if self.ask(bytes).is_err() {
            return Ok(None);
        }
        let oom = |_| SimError::OutOfMemory { states: worst };
        // Every record buffer, made before the first sector changes (an error leaves the
        // state as it was), with its capacity before: what it is given back down to.
        let mut bufs: Vec<Option<(Buffer<T>, usize)>> = Vec::new();
        bufs.try_reserve_exact(plan.len()).map_err(oom)?;
        for (s, l) in self.sectors.iter().zip(plan) {
            let start = match *l {
                Loses::Exactly(0) => {
                    bufs.push(None);
                    continue;
                }
                Loses::Exactly(r) | Loses::AtLeast(r) => r + 1,
            };
            // The worst case reserved at once: a fresh record is one allocation, never
            // grown (growing one by `realloc` copied its untouched room, in the allocator's
            // heap, and faulted it in: 26 % of a fresh projection at 2e6). A free buffer that
            // fits keeps its capacity; a fresh or grown one is cut to its record.
            let most = s.keys.len() + 1;
            let before = self.pool.fitting_capacity(most);
            let made = self.pool.take_fixed(most).and_then(|mut buf| {
                // A fresh or grown record's room above the estimate on 4 KiB pages while the
                // pass writes it (a free buffer that fits may hold huge pages there already).
                if before == 0 {
                    buf.hold_back_huge(start);
                }
                match buf.ensure_initialized(start) {
                    Ok(()) => Ok((buf, before)),
                    Err(e) => {
                        if before == 0 {
                            buf.advise_huge();
                        }
                        self.pool.give(buf);
                        Err(e)
                    }
                }
            });
            match made {
                Ok(b) => bufs.push(Some(b)),
                Err(e) => {
                    for (mut buf, before) in bufs.into_iter().flatten() {
                        if before == 0 {
                            buf.advise_huge();
                        }
                        self.pool.give(buf);
                    }
                    return Err(e);
                }
            }
        }
        let in_pass = given.map(|p| T::of_f64(1.0 / p.sqrt()));
        let (mut gone, mut kept) = (0.0f64, 0.0f64);
        let mut masses = crate::kernels::scan::BitMasses::ZERO;
        let (mut records, mut kept_len, mut removed) = (Vec::new(), Vec::new(), Vec::new());
        let mut inverted = Vec::new();
        records.try_reserve_exact(plan.len()).map_err(oom)?;
        kept_len.try_reserve_exact(plan.len()).map_err(oom)?;
        removed.try_reserve_exact(plan.len()).map_err(oom)?;
        inverted.try_reserve_exact(plan.len()).map_err(oom)?;
        // The state's bytes before the pass (the buffers taken from the pool not in them),
        // and the arrays the pass writes out, for the peak.
        let (base, mut held, mut peak) = (self.bytes(), 0usize, self.peak);
        for ((s, l), buf) in self.sectors.iter_mut().zip(plan).zip(bufs) {
            let Some((mut buf, before)) = buf else {
                kept += crate::kernels::scan::norm_sqr(&s.amps);
                if marginals && in_pass.is_none() {
                    // Unscaled, as the pass sums the other sectors' survivors.
                    masses.add(&crate::kernels::scan::bit_masses(&s.keys, &s.amps));
                }
                kept_len.push(s.keys.len());
                removed.push(0);
                inverted.push(false);
                continue;
            };
            let mut pass = InOrder::new();
            let mut exact = matches!(l, Loses::Exactly(_));
            let mut invert = false;
            loop {
                let rec = (&mut buf.keys[..], &mut buf.amps[..]);
                let (keys, amps) = (&mut s.keys[..], &mut s.amps[..]);
                if pass.run(keys, amps, rec, out_of, (in_pass, marginals, invert), exact) {
                    break;
                }
                // The record's end: the rest counted, the record made long enough (within
                // the capacity reserved above: no allocation).
                let rest = (s.keys[pass.pos()..].iter())
                    .filter(|&&k| out_of(k))
                    .count();
                let (len, lost) = (s.keys.len(), pass.recorded() + rest);
                if inverts(lost, len) {
                    // More than half goes (the sample was wrong by more than its four
                    // standard deviations): the rest of the pass is inverted, within 1.5x
                    // the sector. The kept entries so far (at the arrays' front) and the
                    // removed ones (at the record's) trade places, and from here on the
                    // kept entries are written out to the buffer and the removed ones
                    // compacted in place: the pass's results are the same bit for bit.
                    let swapped = pass.placed().max(pass.recorded());
                    let need = (len - lost).max(swapped);
                    if buf.keys.len() < need {
                        buf.keys.resize(need, 0);
                        buf.amps.resize(need, Complex::new(T::zero(), T::zero()));
                    }
                    s.keys[..swapped].swap_with_slice(&mut buf.keys[..swapped]);
                    s.amps[..swapped].swap_with_slice(&mut buf.amps[..swapped]);
                    pass.invert_roles();
                    invert = true;
                } else if buf.keys.len() < lost + 1 {
                    buf.keys.resize(lost + 1, 0);
                    buf.amps
                        .resize(lost + 1, Complex::new(T::zero(), T::zero()));
                }
                exact = true;
            }
            // The pass held the state, the arrays written out before and this buffer's
            // entries.
            held += buf.keys.len() * crate::memory::entry_bytes::<T>();
            peak = peak.max(base + held);
            // Entries written out: the removed ones, or the kept ones when inverted.
            let out = pass.recorded();
            let sums = pass.finish();
            add_block_sums(&sums, marginals, (&mut gone, &mut kept), &mut masses);
            let (k, r) = if invert {
                (out, s.keys.len() - out)
            } else {
                (s.keys.len() - out, out)
            };
            kept_len.push(k);
            removed.push(r);
            inverted.push(invert);
            buf.keys.truncate(out);
            buf.amps.truncate(out);
            if !invert {
                // The reserved room given back, down to one spare slot (or what it held
                // before). (Inverted, the buffer is the sector's survivors, cut to them
                // with the state's arrays.)
                buf.keys.shrink_to(before.max(r + 1));
                buf.amps.shrink_to(before.max(r + 1));
            }
            // A held-back record one mapping again, advised whole (for a `realloc` by
            // `mremap` when it is reused as a pass buffer).
            if before == 0 {
                buf.advise_huge();
            }
            let mut record = Sector {
                ancillas: s.ancillas,
                keys: buf.keys.into(),
                amps: buf.amps.into(),
            };
            if invert {
                swap_out(s, &mut record, r);
            }
            records.push(record);
        }
        self.peak = peak;
        let whole = vec![false; inverted.len()];
        Ok(Some(PassDone {
            records,
            gone,
            kept,
            masses,
            kept_len,
            removed,
            inverted,
            whole,
        }))
    }

    /// The entries the record of a counted projection holds (`block_counts`, per sector,
    /// as [`State::removed_per_block`] counts what each block loses): each sector's removed
    /// entries, or its whole old arrays where at most a third survives ([`keeps_whole`]).
    pub(crate) fn record_entries(&self, block_counts: &[Vec<usize>]) -> usize {
        (self.sectors.iter().zip(block_counts))
            .map(|(s, c)| {
                let n: usize = c.iter().sum();
                if inverts(n, s.keys.len()) && keeps_whole(n, s.keys.len()) {
                    s.keys.len()
                } else {
                    n
                }
            })
            .sum()
    }

    /// Removed entries per block of each sector (a pass over the keys only), and their total.
    pub(crate) fn removed_per_block(
        &self,
        out_of: impl Fn(u64) -> bool + Sync,
    ) -> (Vec<Vec<usize>>, usize) {
        use crate::kernels::scan::map_blocks;
        let block_counts: Vec<Vec<usize>> = self
            .sectors
            .iter()
            .map(|s| {
                map_blocks(s.keys.len(), |a, b| {
                    s.keys[a..b].iter().filter(|&&k| out_of(k)).count()
                })
            })
            .collect();
        let total = block_counts.iter().flatten().sum();
        (block_counts, total)
    }

    /// The arrays an undoable projection writes out, one per sector that loses entries
    /// (`counts[i]` of them), and per sector whether its pass is inverted ([`inverts`]):
    /// the removed entries' arrays, with one spare slot (see [`State::sector_buffers`]), or,
    /// inverted, the survivors' arrays, exactly their length (they become the sector's).
    /// Asked of the budget and made as [`State::pass_buffers`] makes them.
    pub(crate) fn recording_buffers(
        &mut self,
        counts: &[usize],
    ) -> Result<(Vec<bool>, Vec<Sector<T>>), SimError> {
        let oom = |_| SimError::OutOfMemory {
            states: counts.iter().sum(),
        };
        let (mut inverted, mut wants) = (Vec::new(), Vec::new());
        inverted.try_reserve_exact(counts.len()).map_err(oom)?;
        wants.try_reserve_exact(counts.len()).map_err(oom)?;
        for (s, &n) in self.sectors.iter().zip(counts) {
            let len = s.keys.len();
            let invert = inverts(n, len);
            inverted.push(invert);
            wants.push(match (n, invert) {
                (0, _) => None,
                (n, true) => Some((len - n, 0)),
                (n, false) => Some((n, 1)),
            });
        }
        Ok((inverted, self.pass_buffers(&wants)?))
    }

    /// The record's sectors, one per sector that loses entries (`counts` of them, `total` in
    /// all): taken from the free pass buffers where one fits (warm pages), else asked of the
    /// budget and allocated. Each is exactly its length, written by index (a reused buffer's
    /// old length counts as written, so only fresh room is zeroed), with room for one entry
    /// more (see [`State::sector_buffers`]).
    pub(crate) fn record_buffers(
        &mut self,
        counts: &[usize],
        total: usize,
    ) -> Result<Vec<Sector<T>>, SimError> {
        self.sector_buffers(counts, total, 1)
    }

    /// [`State::record_buffers`] with room for `spare` entries more than each sector's
    /// count: 1 for an undo record (an undo gives back arrays of that capacity, which the
    /// next projection's record then fits), 0 for arrays that become a sector's (a capture's
    /// copied part).
    pub(crate) fn sector_buffers(
        &mut self,
        counts: &[usize],
        total: usize,
        spare: usize,
    ) -> Result<Vec<Sector<T>>, SimError> {
        debug_assert_eq!(counts.iter().sum::<usize>(), total);
        let mut wants = Vec::new();
        wants
            .try_reserve_exact(counts.len())
            .map_err(|_| SimError::OutOfMemory { states: total })?;
        wants.extend(counts.iter().map(|&n| (n > 0).then_some((n, spare))));
        self.pass_buffers(&wants)
    }

    /// Arrays for a pass that writes entries out of a sector: per sector in order, `None`
    /// for none or `Some((entries, spare))` for arrays exactly `entries` long with room for
    /// `spare` more (0 and 0: empty arrays, nothing allocated). Taken from the free pass
    /// buffers where one fits (warm pages), else asked of the budget and allocated; written
    /// by index (a reused buffer's old length counts as written, so only fresh room is
    /// zeroed). On an error the state is as it was.
    pub(crate) fn pass_buffers(
        &mut self,
        wants: &[Option<(usize, usize)>],
    ) -> Result<Vec<Sector<T>>, SimError> {
        let mut asked: Vec<(usize, usize, u128)> = Vec::new();
        asked
            .try_reserve_exact(self.sectors.len())
            .map_err(|_| SimError::OutOfMemory { states: 0 })?;
        for (s, w) in self.sectors.iter().zip(wants) {
            if let Some((n, spare)) = *w {
                asked.push((n, spare, s.ancillas));
            }
        }
        let total: usize = asked.iter().map(|a| a.0).sum();
        // Room from the free pass buffers is already counted in the state's bytes (and its
        // pages are faulted in); only fresh memory is asked of the budget.
        // (Counted for a single buffer only: two could not share one.)
        let from_pool = match asked.as_slice() {
            [(n, spare, _)] if self.pool.fitting_capacity(n + spare) > 0 => n + spare,
            _ => 0,
        };
        self.ask(total.saturating_sub(from_pool) * crate::memory::entry_bytes::<T>())?;
        let oom = |_| SimError::OutOfMemory { states: total };
        let mut records = Vec::new();
        records.try_reserve_exact(asked.len()).map_err(oom)?;
        for (n, spare, ancillas) in asked {
            if n + spare == 0 {
                records.push(Sector {
                    ancillas,
                    keys: Vec::new().into(),
                    amps: Vec::new().into(),
                });
                continue;
            }
            // The spare slots, as the pool's fitting check above asks. A fresh buffer gets
            // exactly this capacity (`take_fixed`): it is never grown.
            let mut buf = self.pool.take_fixed(n + spare)?;
            buf.ensure_initialized(n + spare)?;
            let (mut keys, mut amps) = (buf.keys, buf.amps);
            keys.truncate(n);
            amps.truncate(n);
            records.push(Sector {
                ancillas,
                keys: keys.into(),
                amps: amps.into(),
            });
        }
        Ok(records)
    }

    /// The entries where `(key & mask == value) != keep`, copied into a state of their own
    /// (same bit map and ancilla count), asked of the budget first, with the squared norms
    /// of the removed and of the kept entries, summed in the same pass.
    fn collect_removed(
        &mut self,
        mask: u64,
        value: u64,
        keep: bool,
    ) -> Result<(Self, f64, f64), SimError> {
        use crate::kernels::scan::BLOCK;
        use rayon::prelude::*;
        let out_of = move |k: u64| (k & mask == value) != keep;
        // Removed entries per block of each sector (keys only): each block's removed entries
        // then go straight to their own slot of the record, all blocks in parallel.
        let (block_counts, total) = self.removed_per_block(out_of);
        let counts: Vec<usize> = block_counts.iter().map(|c| c.iter().sum()).collect();
        let mut records = self.record_buffers(&counts, total)?;
        let oom = |_| SimError::OutOfMemory { states: total };
        let (mut gone, mut kept) = (0.0f64, 0.0f64);
        // One record per sector that loses entries, in sector order.
        let mut next = records.iter_mut();
        for ((s, &n), per_block) in self.sectors.iter().zip(&counts).zip(&block_counts) {
            if n == 0 {
                kept += crate::kernels::scan::norm_sqr(&s.amps);
                continue;
            }
            let Some(record) = next.next() else {
                break;
            };
            let mut slots = Vec::new();
            slots.try_reserve_exact(per_block.len()).map_err(oom)?;
            let (mut ks, mut as_) = (&mut record.keys[..], &mut record.amps[..]);
            for (b, &c) in per_block.iter().enumerate() {
                let (k, kr) = ks.split_at_mut(c);
                let (a, ar) = as_.split_at_mut(c);
                slots.push((b, k, a));
                (ks, as_) = (kr, ar);
            }
            let copy = |(b, k, a): (usize, &mut [u64], &mut [Complex<T>])| {
                let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(s.keys.len()));
                copy_removed(&s.keys[lo..hi], &s.amps[lo..hi], out_of, k, a)
            };
            let masses: Vec<(f64, f64)> = if crate::load::parallel() {
                slots.into_par_iter().with_max_len(1).map(copy).collect()
            } else {
                slots.into_iter().map(copy).collect()
            };
            // Summed in block order: the same masses whatever the thread count.
            for (g, k) in masses {
                gone += g;
                kept += k;
            }
        }
        Ok((self.with_sectors(records, usize::MAX), gone, kept))
    }

    /// Takes back a projection made by [`State::force_keeping`] (after every later pass has
    /// been taken back): scales the survivors back and merges the removed entries in.
    /// The merge needs room for the removed entries only; it is asked of the budget. A
    /// sector whose old arrays the record holds whole is put back as it was, bit for bit,
    /// in place of its survivors (no merge, nothing asked).
    pub fn unproject(&mut self, removed: Removed<Self>) -> Result<(), SimError> {
        let Removed {
            mut part,
            restore,
            whole,
            held: _,
        } = removed;
        let is_whole = |j: usize| whole.get(j).copied().unwrap_or(false);
        if part.ancilla_count != self.ancilla_count {
            return Err(SimError::UndoMismatch {
                what: "a projection's record does not belong to this state",
            });
        }
        if part.perm != self.perm {
            // A later step rebuilt the state (a controlled capture) with another bit map:
            // map the removed keys to this one and sort them again.
            // Sector by sector through a list the budget is asked for first, made fallibly.
            for sector in &mut part.sectors {
                let n = sector.keys.len();
                self.ask(n.saturating_mul(std::mem::size_of::<(u64, Complex<T>)>()))?;
                let mut entries: Vec<(u64, Complex<T>)> = Vec::new();
                entries
                    .try_reserve_exact(n)
                    .map_err(|_| SimError::OutOfMemory { states: n })?;
                entries.extend(
                    (sector.keys.iter().zip(&sector.amps))
                        .map(|(&k, &a)| (self.perm.to_phys(part.perm.to_logical(k)), a)),
                );
                entries.sort_unstable_by_key(|e| e.0);
                for (i, (k, a)) in entries.into_iter().enumerate() {
                    sector.keys[i] = k;
                    sector.amps[i] = a;
                }
            }
            part.perm = self.perm.clone();
        }
        let all: usize = part.sectors.iter().map(|s| s.keys.len()).sum();
        let oom = |_| SimError::OutOfMemory { states: all };
        // The sector each removed one merges into (none: it becomes a sector of its own),
        // and whether the sector's entries merge into the record's arrays instead: where
        // the record holds more (an inverted projection's, which kept the sector's old
        // arrays), the smaller part grows the larger, so that the undo too holds at most
        // 1.5x the state.
        let mut targets = Vec::new();
        targets.try_reserve_exact(part.sectors.len()).map_err(oom)?;
        targets.extend((part.sectors.iter()).map(|r| {
            let i = self.sectors.iter().position(|s| s.ancillas == r.ancillas)?;
            Some((i, r.keys.len() > self.sectors[i].keys.len()))
        }));
        // The sectors a whole record replaces (their survivors are not scaled back).
        let mut replaced = Vec::new();
        replaced
            .try_reserve_exact(self.sectors.len())
            .map_err(oom)?;
        replaced.resize(self.sectors.len(), false);
        for (j, t) in targets.iter().enumerate() {
            if let Some((i, _)) = *t
                && is_whole(j)
            {
                replaced[i] = true;
            }
        }
        // The entries the merges add to the arrays they grow, and the rounding of those
        // arrays, asked of the budget (a removed sector of its own adds none, nor does a
        // whole one).
        let (mut growth, mut rounding) = (0usize, 0usize);
        for (j, (r, &t)) in part.sectors.iter().zip(&targets).enumerate() {
            if is_whole(j) {
                continue;
            }
            match t {
                Some((i, true)) => {
                    let n = self.sectors[i].keys.len();
                    (growth, rounding) = (growth + n, rounding + r.rounding_bytes(n));
                }
                Some((i, false)) => {
                    let n = r.keys.len();
                    let more = self.sectors[i].rounding_bytes(n);
                    (growth, rounding) = (growth + n, rounding + more);
                }
                None => {}
            }
        }
        self.ask(growth * crate::memory::entry_bytes::<T>() + rounding)?;
        // Reserve everything first, so that a refusal changes nothing.
        for (j, (r, &t)) in part.sectors.iter_mut().zip(&targets).enumerate() {
            if is_whole(j) {
                continue;
            }
            match t {
                Some((i, true)) => r.reserve(self.sectors[i].keys.len()).map_err(oom)?,
                Some((i, false)) => self.sectors[i].reserve(r.keys.len()).map_err(oom)?,
                None => {}
            }
        }
        self.sectors
            .try_reserve(targets.iter().filter(|t| t.is_none()).count())
            .map_err(oom)?;
        if let Some(f) = restore {
            let f = T::of_f64(f);
            for s in
                (self.sectors.iter_mut().zip(&replaced)).filter_map(|(s, &r)| (!r).then_some(s))
            {
                for a in &mut s.amps {
                    *a = Complex::new(a.re * f, a.im * f);
                }
            }
        }
        // The free buffers left by the passes on the projected state (a permutation's
        // scratch, an output's old arrays) go: the record's arrays below are what the next
        // such move needs, and holding both between moves took the process past the state
        // plus its record (docs/benchmarks.md, "The pool after a projection is taken back").
        self.pool.clear();
        for (j, (mut r, target)) in part.sectors.into_iter().zip(targets).enumerate() {
            match target {
                Some((i, _)) if is_whole(j) => {
                    // The old arrays as they were; the survivors' a free pass buffer.
                    std::mem::swap(&mut self.sectors[i], &mut r);
                    self.pool.give(Buffer {
                        keys: r.keys.into_whole(),
                        amps: r.amps.into_whole(),
                    });
                }
                Some((i, into_record)) => {
                    if into_record {
                        // The record's arrays become the sector's, the sector's old ones
                        // the free buffer given back below.
                        std::mem::swap(&mut self.sectors[i], &mut r);
                    }
                    merge_into(&mut self.sectors[i], &r);
                    // The record's arrays become a free pass buffer (pages kept warm for the
                    // next projection's record or pass); `finish_pass` bounds the pool.
                    self.pool.give(Buffer {
                        keys: r.keys.into_whole(),
                        amps: r.amps.into_whole(),
                    });
                }
                None => self.sectors.push(r),
            }
        }
        self.sectors.sort_by_key(|s| s.ancillas);
        self.finish_pass();
        Ok(())
    }

    /// Takes back [`State::capture`] (or a capture of [`State::capture_controlled`]) of
    /// `t` into ancilla `ancilla`, which must be the last one taken: every entry with that
    /// ancilla set gets `t` back (the iSwap's phase undone, `-i`), the ancilla is given back.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b1);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let before: Vec<_> = s.entries().collect();
    /// let a = s.capture(1)?;
    /// assert_eq!(s.ancilla_count(), 1);
    /// s.uncapture(1, a)?;
    /// assert_eq!(s.ancilla_count(), 0);
    /// assert_eq!(s.entries().collect::<Vec<_>>(), before);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn uncapture(&mut self, t: u8, ancilla: u32) -> Result<(), SimError> {
        if t >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: t });
        }
        if ancilla + 1 != self.ancilla_count {
            return Err(SimError::UndoMismatch {
                what: "only the last capture ancilla can be given back",
            });
        }
        let fresh = 1u128 << ancilla;
        let bit = 1u64 << self.perm.phys(t);
        if self
            .sectors
            .iter()
            .any(|s| s.ancillas & fresh != 0 && s.keys.iter().any(|&k| k & bit != 0))
        {
            return Err(SimError::UndoMismatch {
                what: "the captured square is occupied where the capture ancilla is set",
            });
        }
        let growth: usize = self
            .sectors
            .iter()
            .filter(|s| s.ancillas & fresh != 0)
            .map(|s| s.keys.len())
            .sum();
        let oom = |_| SimError::OutOfMemory { states: growth };
        // Each moved sector's size and the base sector it joins, if there is one.
        let joins: Vec<(usize, usize)> = (self.sectors.iter())
            .filter(|m| m.ancillas & fresh != 0)
            .filter_map(|m| {
                let base = m.ancillas & !fresh;
                let j = self.sectors.iter().position(|s| s.ancillas == base)?;
                Some((m.keys.len(), j))
            })
            .collect();
        // Reserve room in each base sector first, so that a refusal changes nothing; the
        // rounding of the arrays that grow is asked too.
        let rounding: usize = (joins.iter())
            .map(|&(n, j)| self.sectors[j].rounding_bytes(n))
            .sum();
        self.ask(growth * crate::memory::entry_bytes::<T>() + rounding)?;
        for &(n, j) in &joins {
            self.sectors[j].reserve(n).map_err(oom)?;
        }
        let minus_i = Complex::new(T::zero(), -T::one());
        let mut out: Vec<Sector<T>> = Vec::new();
        out.try_reserve_exact(self.sectors.len()).map_err(oom)?;
        let (with, without): (Vec<_>, Vec<_>) = std::mem::take(&mut self.sectors)
            .into_iter()
            .partition(|s| s.ancillas & fresh != 0);
        out.extend(without);
        for mut s in with {
            for k in &mut s.keys {
                *k |= bit;
            }
            for a in &mut s.amps {
                *a = T::mul_phase(*a, minus_i);
            }
            s.ancillas &= !fresh;
            match out.iter().position(|b| b.ancillas == s.ancillas) {
                Some(j) => merge_into(&mut out[j], &s),
                None => out.push(s),
            }
        }
        out.sort_by_key(|s| s.ancillas);
        self.sectors = out;
        self.ancilla_count -= 1;
        self.finish_pass();
        Ok(())
    }
}

/// Whether an undoable projection that removes `removed` of a sector's `len` entries
/// inverts its pass ([`PassExtras::invert`]): when it removes more than half, so that the
/// pass holds at most 1.5x the sector (issue 10's peak target; docs/decisions.md, "A
/// projection that removes more than half writes its survivors out").
pub(crate) fn inverts(removed: usize, len: usize) -> bool {
    2 * removed > len
}

/// Whether a counted projection that removes `removed` of a sector's `len` entries keeps
/// the sector's old arrays whole as its record ([`crate::kernels::compact::copy_kept`]:
/// only the survivors are written): where at most a third survives, so that the state
/// after and its record hold at most 4/3 of the sector (between a half and two thirds
/// survive, the pass compacts the removed entries in the old arrays, which are then cut
/// to them, and the two hold the sector once).
pub(crate) fn keeps_whole(removed: usize, len: usize) -> bool {
    3 * (len - removed.min(len)) <= len
}

/// One sector's fused pass ([`split_project`], `per_block` entries removed per block),
/// writing out to `out`: the removed entries (its record), or, when [`PassExtras::invert`],
/// the survivors, whose arrays are then swapped in ([`swap_out`]: the sector holds its
/// survivors and `out` the removed entries); `None` without [`PassExtras::record`] (the
/// removed entries dropped). Returns the block sums.
pub(crate) fn project_sector<T: Amplitude>(
    s: &mut Sector<T>,
    per_block: &[usize],
    mut out: Option<&mut Sector<T>>,
    out_of: impl Fn(u64) -> bool + Sync + Copy,
    extra: PassExtras<T>,
) -> Vec<crate::kernels::compact::BlockSums> {
    let (out_keys, out_amps): (&mut [u64], &mut [Complex<T>]) = match out.as_mut() {
        Some(r) => (&mut r.keys, &mut r.amps),
        None => (&mut [], &mut []),
    };
    let blocks = split_project(
        &mut s.keys,
        &mut s.amps,
        per_block,
        out_keys,
        out_amps,
        out_of,
        extra,
    );
    if let Some(r) = out.filter(|_| extra.invert) {
        swap_out(s, r, per_block.iter().sum());
    }
    blocks
}

/// After an inverted pass over `s` (its `removed` entries compacted at the front of its
/// arrays, the survivors written to `out`'s): the survivors' arrays become the sector's and
/// the old ones, cut to the removed entries, `out`'s (the record).
fn swap_out<T>(s: &mut Sector<T>, out: &mut Sector<T>, removed: usize) {
    std::mem::swap(&mut s.keys, &mut out.keys);
    std::mem::swap(&mut s.amps, &mut out.amps);
    out.keys.truncate(removed);
    out.amps.truncate(removed);
}

/// Gives back the room above an inverted projection's record (the sector's old arrays),
/// down to the spare slot every record has: a shrink in place, which keeps the room below
/// the entries that a dense gate may have left (moving the entries down over it would be a
/// copy of the record).
pub(crate) fn shrink_record<T>(r: &mut Sector<T>) {
    r.keys.shrink_above(1);
    r.amps.shrink_above(1);
}

/// Copies the entries of one block for which `out_of(key)` holds into `keys` / `amps`
/// (exactly their number long), in order, and returns the squared norms of the copied and
/// of the other entries. Branch-free: every entry is written to the next free place of a
/// stack stage (only a copied entry takes it), and the stage goes to the slot whenever it
/// holds a chunk's worth.
fn copy_removed<T: Amplitude>(
    src_keys: &[u64],
    src_amps: &[Complex<T>],
    out_of: impl Fn(u64) -> bool,
    keys: &mut [u64],
    amps: &mut [Complex<T>],
) -> (f64, f64) {
    let zero = Complex::new(T::zero(), T::zero());
    let mut stage_k = [0u64; 2 * STAGE];
    let mut stage_a = [zero; 2 * STAGE];
    let (mut w, mut at) = (0usize, 0usize);
    let (mut gone, mut kept) = ([0.0f64; 2], [0.0f64; 2]);
    for (ks, az) in src_keys.chunks(STAGE).zip(src_amps.chunks(STAGE)) {
        // w < STAGE here, so w stays below 2 * STAGE.
        for (i, (k, a)) in ks.iter().zip(az).enumerate() {
            let out = usize::from(out_of(*k));
            stage_k[w] = *k;
            stage_a[w] = *a;
            w += out;
            let m = crate::kernels::scan::norm2(*a);
            let f = out as f64;
            gone[i & 1] += m * f;
            kept[i & 1] += m * (1.0 - f);
        }
        if w >= STAGE {
            keys[at..at + w].copy_from_slice(&stage_k[..w]);
            amps[at..at + w].copy_from_slice(&stage_a[..w]);
            at += w;
            w = 0;
        }
    }
    keys[at..at + w].copy_from_slice(&stage_k[..w]);
    amps[at..at + w].copy_from_slice(&stage_a[..w]);
    debug_assert_eq!(at + w, keys.len());
    (gone[0] + gone[1], kept[0] + kept[1])
}

/// Adds a pass's block sums, in block order, to the removed and kept masses and (with
/// `marginals`) the survivors' bit masses.
fn add_block_sums(
    blocks: &[crate::kernels::compact::BlockSums],
    marginals: bool,
    (gone, kept): (&mut f64, &mut f64),
    masses: &mut crate::kernels::scan::BitMasses,
) {
    for b in blocks {
        *gone += b.gone;
        *kept += b.kept;
        if marginals {
            masses.add(&b.masses);
        }
    }
}

/// Merges `from` (sorted, disjoint keys) into `into` (sorted) in place, from the back.
fn merge_into<T: Amplitude>(into: &mut Sector<T>, from: &Sector<T>) {
    let (n, m) = (into.keys.len(), from.keys.len());
    if m == 0 {
        return;
    }
    into.keys.resize(n + m, 0);
    into.amps.resize(n + m, Complex::new(T::zero(), T::zero()));
    let (mut i, mut j, mut w) = (n, m, n + m);
    while j > 0 {
        w -= 1;
        if i > 0 && into.keys[i - 1] > from.keys[j - 1] {
            i -= 1;
            into.keys[w] = into.keys[i];
            into.amps[w] = into.amps[i];
        } else {
            j -= 1;
            into.keys[w] = from.keys[j];
            into.amps[w] = from.amps[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Controls, Pick, Predicate, SimError, State};

    fn sample_state() -> State<f64> {
        let mut s = State::<f64>::classical(0b0000_0101);
        s.split(0, 3, 4, Controls::NONE).unwrap();
        s.split(2, 5, 6, Controls::NONE).unwrap();
        s.sqrt_iswap(3, 5, Controls::NONE).unwrap();
        s.iswap(4, 7, Controls::NONE).unwrap(); // a relabelling: the bit map is not identity
        s
    }

    /// About `n` random entries (random amplitudes, renormalised) over 22 board qubits in two
    /// ancilla sectors, several parallel blocks each, with physical and logical keys
    /// differing (an iSwap relabelling).
    fn random_two_sector_state(seed: u64, n: usize) -> State<f64> {
        random_state_in_sectors(n, seed, 0x3f_ffff, &[0, 1], (2, 30))
    }

    /// `n` random entries with boards masked by `board_mask` and ancillas drawn from
    /// `sectors`, then iSwap(a, b) so that physical and logical keys differ.
    fn random_state_in_sectors(
        n: usize,
        seed: u64,
        board_mask: u64,
        sectors: &[u128],
        (a, b): (u8, u8),
    ) -> State<f64> {
        use rand::Rng;
        let mut s = crate::test_states::random_state(n, seed, board_mask, |rng| {
            sectors[rng.random_range(0..sectors.len())]
        });
        s.iswap(a, b, Controls::NONE).unwrap();
        s
    }

    fn close(a: &State<f64>, b: &State<f64>, tol: f64) -> bool {
        let (x, y): (Vec<_>, Vec<_>) = (a.entries().collect(), b.entries().collect());
        x.len() == y.len()
            && x.iter()
                .zip(&y)
                .all(|((ka, va), (kb, vb))| ka == kb && (va - vb).norm() <= tol)
    }

    #[test]
    fn projection_round_trips_on_every_outcome() {
        for q in 0..8u8 {
            for outcome in [false, true] {
                let before = sample_state();
                let mut s = before.clone();
                match s.force_keeping(Predicate::One(q), outcome) {
                    Ok((p, removed)) => {
                        let q_p = before.probability(Predicate::One(q));
                        let want = if outcome { q_p } else { 1.0 - q_p };
                        assert!((p - want).abs() < 1e-14);
                        assert!((s.norm_sqr() - 1.0).abs() < 1e-14);
                        s.unproject(removed).unwrap();
                        assert!(close(&before, &s, 1e-15), "q {q} outcome {outcome}");
                    }
                    Err(_) => assert!(
                        before.probability(Predicate::One(q)) == if outcome { 0.0 } else { 1.0 }
                    ),
                }
            }
        }
    }

    /// A projection taken back leaves the pool holding the smaller of its record's and its
    /// survivors' arrays (the one the merge did not grow) and nothing that the passes on the
    /// projected state left behind (here a slide's scratch, about a quarter of a random
    /// state, which the slide keeps): between moves the process holds the state plus at
    /// most what the next such projection writes out.
    #[test]
    fn taking_back_a_projection_keeps_only_its_record_in_the_pool() {
        let before = crate::bench::random_state::<f64>(200_000).expect("state");
        let mut s = before.clone();
        let (_, removed) = s.force_keeping(Predicate::One(9), true).unwrap();
        // The smaller of the record and the survivors: the arrays the undo frees (about
        // half the state each; a record of more than half is the sector's old arrays, and
        // the survivors' arrays are freed instead).
        let entry = crate::memory::entry_bytes::<f64>();
        let record_bytes = removed.len().min(s.len()) * entry;
        let path = Controls {
            zeros: 1 << 20,
            ones: 0,
        };
        s.iswap(3, 40, path).unwrap();
        assert!(s.pool.heap_bytes() > 0, "the slide keeps its scratch");
        s.iswap_inv(3, 40, path).unwrap();
        s.unproject(removed).unwrap();
        assert!(close(&before, &s, 1e-15));
        let held = s.pool.heap_bytes();
        assert!(
            held <= record_bytes + 4096,
            "pool {held} B against a record of {record_bytes} B"
        );
        assert!(
            held >= record_bytes,
            "the record's arrays are kept for the next one"
        );
    }

    #[test]
    fn certain_projection_is_undone_bit_for_bit() {
        let before = sample_state();
        let mut s = before.clone();
        let (p, removed) = s.force_keeping(Predicate::AllZero(1 << 1), true).unwrap();
        assert_eq!(p, 1.0);
        assert!(removed.is_empty());
        s.unproject(removed).unwrap();
        assert!(close(&before, &s, 0.0));
    }

    #[test]
    fn capture_round_trips_bit_for_bit_after_later_captures_are_undone() {
        let before = sample_state();
        let mut s = before.clone();
        let a = s.capture(3).unwrap();
        let b = s.capture(5).unwrap();
        assert!(s.uncapture(3, a).is_err(), "not the last ancilla");
        s.uncapture(5, b).unwrap();
        s.uncapture(3, a).unwrap();
        assert!(close(&before, &s, 0.0));
        assert_eq!(s.ancilla_count(), 0);
    }

    #[test]
    fn controlled_capture_round_trips() {
        let before = sample_state();
        let mut s = before.clone();
        let a = s
            .capture_controlled(
                3,
                Controls {
                    zeros: 1 << 5,
                    ones: 0,
                },
            )
            .unwrap()
            .expect("fires somewhere");
        s.uncapture(3, a).unwrap();
        assert!(close(&before, &s, 0.0));
    }

    #[test]
    fn unproject_refuses_a_foreign_record() {
        let mut s = sample_state();
        let (_, removed) = s.force_keeping(Predicate::One(3), true).unwrap();
        s.capture(0).unwrap(); // one more ancilla: not the state the record came from
        assert!(s.unproject(removed).is_err());
    }

    #[test]
    fn unproject_maps_keys_to_a_changed_bit_map() {
        let before = sample_state();
        let mut s = before.clone();
        let (_, removed) = s.force_keeping(Predicate::One(3), true).unwrap();
        // Two relabellings that cancel logically but leave another bit map.
        s.iswap(0, 1, Controls::NONE).unwrap();
        s.iswap(1, 0, Controls::NONE).unwrap();
        s.iswap_inv(0, 1, Controls::NONE).unwrap();
        s.iswap_inv(0, 1, Controls::NONE).unwrap();
        s.unproject(removed).unwrap();
        assert!(close(&before, &s, 1e-15));
    }

    #[test]
    fn projection_given_its_probability_equals_the_plain_one() {
        let before = random_two_sector_state(5, 300_000);
        for (pred, outcome) in [
            (Predicate::One(30), true),
            (Predicate::AllZero(0b1001), true),
            (Predicate::AllZero(0b1001), false),
        ] {
            let p1 = before.probability(pred);
            let p = if outcome { p1 } else { 1.0 - p1 };
            let mut s = before.clone();
            let (got, removed) = s.force_keeping_given(pred, outcome, p).unwrap();
            assert_eq!(got, p);
            let mut plain = before.clone();
            let p_plain = plain.force(pred, outcome).unwrap();
            assert!((p - p_plain).abs() < 1e-13);
            assert!(close(&s, &plain, 1e-15));
            assert!((s.norm_sqr() - 1.0).abs() < 1e-13);
            let gone: Vec<_> = before
                .entries()
                .filter(|(k, _)| pred.holds(k.board) != outcome)
                .collect();
            assert_eq!(gone, record_gone(&removed, &s));
            s.unproject(removed).unwrap();
            assert!(close(&before, &s, 1e-15));
        }
    }

    #[test]
    fn projection_given_a_bad_probability_changes_nothing() {
        use crate::SimError;
        let before = sample_state();
        let pred = Predicate::One(3);
        for p in [0.0, -0.5, f64::NAN, f64::INFINITY, 1.5] {
            let mut s = before.clone();
            let err = s.force_keeping_given(pred, true, p).unwrap_err();
            assert!(
                matches!(
                    err,
                    SimError::ZeroProbabilityOutcome { .. } | SimError::InvalidProbability { .. }
                ),
                "{p}: {err:?}"
            );
            assert!(close(&before, &s, 0.0));
        }
        // A positive probability for an outcome nothing has: refused, unchanged.
        let mut s = State::<f64>::classical(0b1000);
        assert!(matches!(
            s.force_keeping_given(Predicate::One(3), false, 0.5),
            Err(SimError::ZeroProbabilityOutcome { .. })
        ));
        assert_eq!(s.len(), 1);
        // A malformed predicate is its own error.
        assert!(matches!(
            s.force_keeping_given(Predicate::One(64), true, 0.5),
            Err(SimError::QubitOutOfRange { .. })
        ));
    }

    #[test]
    fn projection_of_many_blocks_keeps_the_removed_entries_in_order() {
        // Some 400 000 entries in two ancilla sectors: several parallel blocks per sector.
        let before = random_two_sector_state(3, 400_000);
        for (pred, outcome) in [
            (Predicate::One(30), true),
            (Predicate::AllZero(0b1001), true),
            (Predicate::AllZero(0b1001), false),
        ] {
            let mut s = before.clone();
            let (p, removed) = s.force_keeping(pred, outcome).unwrap();
            let mut plain = before.clone();
            let p_plain = plain.force(pred, outcome).unwrap();
            assert!((p - p_plain).abs() < 1e-13);
            // The survivors are the plain projection's; the record the rest, in key order.
            assert!(close(&s, &plain, 1e-15));
            let gone: Vec<_> = before
                .entries()
                .filter(|(k, _)| pred.holds(k.board) != outcome)
                .collect();
            let kept = record_gone(&removed, &s);
            assert_eq!(gone, kept);
            s.unproject(removed).unwrap();
            assert!(close(&before, &s, 1e-15));
        }
    }

    /// A random state of about `n` entries in three ancilla sectors (sorted, distinct keys).
    /// `measure_keeping` reads what `probability` reads (bit for bit), hands it over once,
    /// and projects exactly as `force_keeping_given` / `force_keeping` do, on a state of
    /// several sectors and many blocks, for both outcomes; declining changes nothing.
    #[test]
    fn measurement_in_one_read_equals_the_read_and_the_projection() {
        let before = three_sector_state(400_000, 11);
        for pred in [Predicate::One(30), Predicate::AllZero(0b1_0010)] {
            let read = before.probability(pred);
            assert!(read > 0.1 && read < 0.9, "{read}");
            for outcome in [true, false] {
                let p = if outcome { read } else { 1.0 - read };
                for given in [Some(p), None] {
                    let mut s = before.clone();
                    let mut calls = Vec::new();
                    let (got, removed) = s
                        .measure_keeping(pred, &mut |r| {
                            calls.push(r);
                            Some(Pick { outcome, given })
                        })
                        .unwrap()
                        .unwrap();
                    assert_eq!(calls, vec![read]);
                    let mut plain = before.clone();
                    let (p_plain, removed_plain) = match given {
                        Some(p) => plain.force_keeping_given(pred, outcome, p).unwrap(),
                        None => plain.force_keeping(pred, outcome).unwrap(),
                    };
                    assert_eq!(got, p_plain);
                    assert!((got - p).abs() < 1e-13);
                    let entries = |s: &State<f64>| s.entries().collect::<Vec<_>>();
                    assert_eq!(entries(&s), entries(&plain));
                    assert_eq!(entries(removed.part()), entries(removed_plain.part()));
                    assert_eq!(removed.restore_factor(), removed_plain.restore_factor());
                    s.unproject(removed).unwrap();
                    assert!(close(&before, &s, 1e-15));
                }
            }
            let mut s = before.clone();
            assert!(s.measure_keeping(pred, &mut |_| None).unwrap().is_none());
            assert_eq!(
                s.entries().collect::<Vec<_>>(),
                before.entries().collect::<Vec<_>>()
            );
        }
        // An outcome with no survivor, a bad given probability, a malformed predicate:
        // errors, and the state is as it was.
        let mut s = before.clone();
        let never = Predicate::One(2); // bit 2 is clear in every key
        assert_eq!(s.probability(never), 0.0);
        assert!(matches!(
            s.measure_keeping(never, &mut |_| Some(Pick {
                outcome: true,
                given: None
            })),
            Err(SimError::ZeroProbabilityOutcome { .. })
        ));
        assert!(matches!(
            s.measure_keeping(Predicate::One(30), &mut |_| Some(Pick {
                outcome: true,
                given: Some(1.5)
            })),
            Err(SimError::InvalidProbability { .. })
        ));
        let mut called = false;
        assert!(
            s.measure_keeping(Predicate::One(99), &mut |_| {
                called = true;
                None
            })
            .is_err()
        );
        assert!(!called);
        assert_eq!(
            s.entries().collect::<Vec<_>>(),
            before.entries().collect::<Vec<_>>()
        );
    }

    fn three_sector_state(n: usize, seed: u64) -> State<f64> {
        random_state_in_sectors(n, seed, 0x00ff_00ff_ff0f_fff3, &[0, 1, 3], (0, 40))
    }

    #[test]
    fn fused_projection_matches_the_plain_passes_for_any_thread_count() {
        // Sectors above the parallel threshold: one thread runs the sequential group, two and
        // three the per-block jobs (`split_project`), and all must agree bit for bit.
        let before = three_sector_state(450_000, 17);
        assert_eq!(before.sectors.len(), 3);
        assert!(
            before
                .sectors
                .iter()
                .all(|s| s.keys.len() >= crate::state::PARALLEL_MIN)
        );
        // Bit 40 is high: with outcome 1 the first blocks lose everything and the last keep
        // everything; with outcome 0 the reverse (every block writes only its own front).
        for (pred, outcome) in [
            (Predicate::One(40), true),
            (Predicate::One(40), false),
            (Predicate::One(4), false),
            (Predicate::AllZero(0b1001_0000), true),
            (
                Predicate::Equals {
                    mask: 0xff_0000,
                    value: 0x03_0000,
                },
                false,
            ),
        ] {
            // The slow path: the plain projection, then the 64-square pass.
            let mut plain = before.clone();
            let p_plain = plain.force(pred, outcome).unwrap();
            let m_plain = plain.qubit_probabilities();
            let gone: Vec<_> = before
                .entries()
                .filter(|(k, _)| pred.holds(k.board) != outcome)
                .collect();
            let mut first: Option<(f64, Vec<_>, Vec<_>, [f64; 64])> = None;
            let mut first_given: Option<(Vec<_>, Vec<_>)> = None;
            for threads in [1, 2, 3, 4] {
                let pool = crate::test_states::pool(threads);
                let mut s = before.clone();
                let (p, removed, m) = pool
                    .install(|| s.force_keeping_marginals(pred, outcome))
                    .unwrap();
                let m = m.expect("entries were removed");
                assert!((p - p_plain).abs() < 1e-13);
                assert!(close(&s, &plain, 1e-15), "{pred:?} {outcome}");
                for (q, (a, b)) in m.iter().zip(&m_plain).enumerate() {
                    assert!((a - b).abs() < 1e-13, "qubit {q}: {a} vs {b}");
                }
                let rec = record_gone(&removed, &s);
                assert_eq!(rec, gone);
                let got: Vec<_> = s.entries().collect();
                // Bit for bit the same whatever the thread count.
                match &first {
                    None => first = Some((p, got, rec, m)),
                    Some((p1, got1, rec1, m1)) => {
                        assert_eq!(p.to_bits(), p1.to_bits());
                        assert_eq!(&got, got1);
                        assert_eq!(&rec, rec1);
                        assert_eq!(m.map(f64::to_bits), m1.map(f64::to_bits));
                    }
                }
                s.unproject(removed).unwrap();
                assert!(close(&before, &s, 1e-12));
                // The lean pass (the caller's probability scales the survivors in the pass,
                // no masses summed): bit for bit the same whatever the thread count too.
                let mut g = before.clone();
                let (_, removed) = pool
                    .install(|| g.force_keeping_given(pred, outcome, p_plain))
                    .unwrap();
                assert!(close(&g, &plain, 1e-15), "{pred:?} {outcome} given");
                let rec = record_gone(&removed, &g);
                assert_eq!(rec, gone);
                let got: Vec<_> = g.entries().collect();
                match &first_given {
                    None => first_given = Some((got, rec)),
                    Some((got1, rec1)) => {
                        assert_eq!(&got, got1);
                        assert_eq!(&rec, rec1);
                    }
                }
                g.unproject(removed).unwrap();
                assert!(close(&before, &g, 1e-12));
            }
        }
    }

    /// `n` entries whose board is `2 i + b_i` for the `i`-th, with `b_i = bit(i)`, in the
    /// ancilla sector `sector(i)`: a predicate on qubit 0 then removes exactly the positions
    /// `bit` picks (or those it does not).
    fn state_with_bit_0_at(
        n: usize,
        seed: u64,
        bit: impl Fn(usize) -> bool,
        sector: impl Fn(usize) -> u128,
    ) -> State<f64> {
        let (_, amps) = crate::test_states::random_arrays(n, seed, 20);
        let entries = (0..n)
            .zip(amps)
            .map(|(i, a)| {
                let board = ((i as u64) << 1) | u64::from(bit(i));
                let ancillas = sector(i);
                (crate::Key { board, ancillas }, a)
            })
            .collect();
        State::from_amplitudes(entries, crate::Normalization::Renormalize).unwrap()
    }

    /// The one-thread projection that sizes its record from a sample of the keys
    /// (`State::estimate_removed`, `State::pass_growing`) gives what the projection after a
    /// count gives, bit for bit (survivors, record, probability, marginals), and is undone
    /// alike, within 1.5x the state: where the sample is about right, where it sees far too
    /// few removed entries (the record grows halfway: the rest is counted; where more than
    /// half goes, the pass is inverted from there on), none in one sector (that sector
    /// counted first), and on three sectors; where the sample sees no removed or no kept
    /// entry at all, or surely more than half a sector removed, the count decides (and the
    /// counted projection of more than half writes the survivors out).
    #[test]
    fn the_sampled_record_matches_the_counted_one() {
        use crate::test_states::entry_bits;
        let n = 100_000;
        // The keys the sample reads (of the whole state, or of each half: two sectors).
        let read = |n: usize| -> std::collections::HashSet<usize> {
            (0..n.div_ceil(super::SAMPLE_STRIDE))
                .flat_map(|j| super::sampled(j, n))
                .collect()
        };
        let (all, half) = (read(n), read(n / 2));
        let first = super::sampled(0, n).start;
        let one_sector = |_| 0;
        // Each case with whether the sample decides for outcomes 1 and 0 of qubit 0. It
        // does not where it may remove more than half of a sector (four standard deviations
        // of the sample above its estimate): the count decides, for a pass that writes the
        // survivors out.
        let cases: Vec<(&str, State<f64>, [bool; 2])> = vec![
            (
                "random",
                state_with_bit_0_at(n, 1, |i| (i * 7919) % 13 < 10, one_sector),
                [true, false],
            ),
            (
                "one sampled entry set",
                state_with_bit_0_at(n, 2, |i| i == first || !all.contains(&i), one_sector),
                [false, true],
            ),
            (
                "one sampled entry clear",
                state_with_bit_0_at(n, 3, |i| all.contains(&i) && i != first, one_sector),
                [true, false],
            ),
            (
                "sample misses",
                state_with_bit_0_at(n, 4, |i| !all.contains(&i) && i % 50 == 0, one_sector),
                [false, false],
            ),
            (
                "one sector missed",
                state_with_bit_0_at(
                    n,
                    5,
                    |i| {
                        if i < n / 2 {
                            !half.contains(&i) && i % 50 == 0
                        } else {
                            i % 5 == 0
                        }
                    },
                    |i| u128::from(i >= n / 2),
                ),
                [false, true],
            ),
            (
                "three sectors",
                three_sector_state(150_000, 9),
                [false, true],
            ),
        ];
        // The predicate: qubit 0, but qubits 4 and 5 both clear in the three sectors (whose
        // qubit 0 is never set; it removes about three quarters, or a quarter).
        let predicate = |name: &str| {
            if name == "three sectors" {
                Predicate::AllZero(0b11 << 4)
            } else {
                Predicate::One(0)
            }
        };
        let one = crate::test_states::pool(1);
        // A state below a block is counted: the sample does not decide.
        let small = state_with_bit_0_at(super::BLOCK - 1, 6, |i| i % 2 == 0, |_| 0);
        let out_of = |k: u64| k & 1 == 0;
        assert!(one.install(|| small.estimate_removed(out_of)).is_none());
        for (name, before, decides) in &cases {
            let pred = predicate(name);
            for outcome in [true, false] {
                let (mask, value) = before.check_predicate(pred).unwrap();
                let out_of = move |k: u64| (k & mask == value) != outcome;
                let p = before.probability(pred);
                let p = if outcome { p } else { 1.0 - p };
                for (marginals, given) in [(false, None), (true, None), (true, Some(p))] {
                    let what = format!("{name}: {pred:?} {outcome} {marginals} {given:?}");
                    let (mut a, mut b) = (before.clone(), before.clone());
                    let sampled = one.install(|| a.estimate_removed(out_of));
                    assert_eq!(sampled.is_some(), decides[usize::from(!outcome)], "{what}");
                    let bytes = a.bytes();
                    a.reset_peak_bytes();
                    let (pa, ra, ma) = one
                        .install(|| a.force_keeping_inner(pred, outcome, marginals, given, None))
                        .unwrap();
                    // At most 1.5x the state, a record of more than half the sector (the
                    // sample fooled: the pass inverted halfway) included.
                    let peak = a.peak_bytes();
                    assert!(2 * peak <= 3 * bytes + 96, "{what}: {peak} of {bytes}");
                    let counted = b.removed_per_block(out_of);
                    let (pb, rb, mb) = one
                        .install(|| {
                            b.force_keeping_inner(pred, outcome, marginals, given, Some(counted))
                        })
                        .unwrap();
                    assert_eq!(pa.to_bits(), pb.to_bits(), "{what}");
                    assert_eq!(entry_bits(&a), entry_bits(&b), "{what}");
                    assert_eq!(gone_bits(&ra, &a), gone_bits(&rb, &b), "{what}");
                    assert_eq!(ra.restore, rb.restore, "{what}");
                    assert_eq!(
                        ma.map(|m| m.map(f64::to_bits)),
                        mb.map(|m| m.map(f64::to_bits))
                    );
                    // The record holds what went, and no more room than one spare slot.
                    let gone = before
                        .entries()
                        .filter(|(k, _)| pred.holds(k.board) != outcome);
                    assert_eq!(ra.len(), gone.count(), "{what}");
                    assert!(records_are_tight(&ra), "{what}");
                    // (A sector kept whole comes back bit for bit; one merged back has its
                    // survivors scaled back, within rounding.)
                    a.unproject(ra).unwrap();
                    b.unproject(rb).unwrap();
                    assert!(close(&a, before, 1e-12), "{what}");
                    assert!(close(&b, before, 1e-12), "{what}");
                }
            }
        }
    }

    /// The sampled record asks the budget for a record of every entry before its pass:
    /// where the budget has room for the exact record only, the counted projection runs
    /// instead, with the same results bit for bit; where it has no room for the exact record
    /// either, the projection is a `StateTooLarge` error and the state is as it was.
    #[test]
    fn the_sampled_record_falls_back_to_the_count_within_a_tight_budget() {
        use crate::test_states::entry_bits;
        let n = 100_000;
        // A quarter of the entries (qubit 0 clear) go: the sample decides.
        let before = state_with_bit_0_at(n, 7, |i| (i * 7919) % 13 >= 3, |_| 0);
        let pred = Predicate::One(0);
        let p = before.probability(pred);
        let r = before.entries().filter(|(k, _)| k.board & 1 == 0).count();
        let entry = crate::memory::entry_bytes::<f64>();
        let one = crate::test_states::pool(1);
        let run = |budget: usize| {
            let s = before.clone();
            let held = s.bytes();
            let mut s = s.with_memory_budget(held + budget);
            let got = one.install(|| s.force_keeping_given_marginals(pred, true, p));
            (s, got)
        };
        // Room for every entry: the sampled pass.
        let (wide, got) = run((n + 1) * entry);
        let (_, removed, m) = got.unwrap();
        assert_eq!(removed.part().len(), r);
        // Room for the exact record only: the counted pass, the same results.
        let (tight, got) = run(r * entry);
        let (_, removed_tight, m_tight) = got.unwrap();
        assert_eq!(entry_bits(&tight), entry_bits(&wide));
        assert_eq!(entry_bits(removed_tight.part()), entry_bits(removed.part()));
        assert_eq!(
            m.map(|m| m.map(f64::to_bits)),
            m_tight.map(|m| m.map(f64::to_bits))
        );
        // One byte less: an error, the state untouched.
        let (untouched, got) = run(r * entry - 1);
        assert!(
            matches!(got, Err(SimError::StateTooLarge { .. })),
            "{got:?}"
        );
        assert_eq!(entry_bits(&untouched), entry_bits(&before));
    }

    #[test]
    fn an_impossible_fused_projection_changes_nothing() {
        let before = three_sector_state(450_000, 5);
        let mut s = before.clone();
        // Qubit 3 is never set (mask above): outcome 1 keeps nothing.
        let err = s.force_keeping_marginals(Predicate::One(3), true);
        assert!(matches!(
            err,
            Err(crate::SimError::ZeroProbabilityOutcome { .. })
        ));
        assert!(close(&before, &s, 0.0));
        // Outcome 0 removes nothing: no marginals, the state as it was.
        let (p, removed, m) = s.force_keeping_marginals(Predicate::One(3), false).unwrap();
        assert_eq!(p, 1.0);
        assert!(removed.is_empty() && m.is_none());
        assert!(close(&before, &s, 0.0));
    }

    #[test]
    fn a_projection_without_room_drops_its_record_and_changes_the_state_alike() {
        // Three sectors above the parallel threshold, one and several threads; small states.
        let big = three_sector_state(450_000, 23);
        let small = sample_state();
        for (before, pred, outcome) in [
            (&big, Predicate::One(12), true),
            (&big, Predicate::One(5), false),
            (&big, Predicate::AllZero(0b1_0001_0000), true),
            (&small, Predicate::One(7), true),
            (&small, Predicate::One(6), false),
        ] {
            let p = before.probability(pred);
            let p = if outcome { p } else { 1.0 - p };
            assert!(p > 0.05 && p < 0.95, "{pred:?}: {p}");
            for threads in [1, 2, 3] {
                let pool = crate::test_states::pool(threads);
                // The reference: the record kept (unlimited room).
                let mut kept = before.clone();
                let (pk, removed, mk) = pool
                    .install(|| kept.force_given_marginals_within(pred, outcome, p, usize::MAX))
                    .unwrap();
                let removed = removed.expect("room for every entry");
                // No room: the same state, probability and marginals, no record, and no
                // memory beyond the state before.
                let mut dropped = before.clone();
                dropped.reset_peak_bytes();
                let held = dropped.bytes();
                let (pd, none, md) = pool
                    .install(|| dropped.force_given_marginals_within(pred, outcome, p, 0))
                    .unwrap();
                assert!(none.is_none(), "{pred:?} {outcome} {threads}");
                assert_eq!(pd.to_bits(), pk.to_bits());
                let bits = |s: &State<f64>| -> Vec<_> {
                    s.entries()
                        .map(|(k, a)| (k, a.re.to_bits(), a.im.to_bits()))
                        .collect()
                };
                assert_eq!(bits(&dropped), bits(&kept), "{pred:?} {outcome} {threads}");
                let (md, mk) = (md.expect("summed"), mk.expect("summed"));
                assert_eq!(md.map(f64::to_bits), mk.map(f64::to_bits));
                let plain = dropped.qubit_probabilities();
                for q in 0..64 {
                    assert!((md[q] - plain[q]).abs() < 1e-13, "qubit {q}");
                }
                assert!(
                    dropped.peak_bytes() <= held,
                    "{} > {held}",
                    dropped.peak_bytes()
                );
                assert_eq!(dropped.state_bytes(), dropped.len() * 24);
                // Room for exactly the counted pass's record (the removed entries, or a
                // sector's old arrays where at most a third survives): counted, then
                // recorded.
                let mut tight = before.clone();
                let (mask, value) = before.check_predicate(pred).unwrap();
                let counted =
                    before.removed_per_block(super::predicate_cut(mask, value, outcome).0);
                let room = before.record_entries(&counted.0) * 24;
                let (_, rec, _) = pool
                    .install(|| tight.force_given_marginals_within(pred, outcome, p, room))
                    .unwrap();
                let rec_tight = rec.expect("room for the record");
                assert_eq!(rec_tight.part().len() * 24, room);
                assert_eq!(gone_bits(&rec_tight, &tight), gone_bits(&removed, &kept));
                assert_eq!(bits(&tight), bits(&kept));
                // One byte less: dropped.
                let mut short = before.clone();
                let (_, rec, _) = pool
                    .install(|| short.force_given_marginals_within(pred, outcome, p, room - 1))
                    .unwrap();
                assert!(rec.is_none());
                assert_eq!(bits(&short), bits(&kept));
                tight.unproject(rec_tight).unwrap();
                assert!(close(before, &tight, 1e-12));
            }
        }
    }

    /// The removed entries a record holds: all of its entries but, in a sector it keeps
    /// whole, the survivors' old ones (the keys the state after the projection, `after`,
    /// still has).
    fn record_gone(
        removed: &super::Removed<State<f64>>,
        after: &State<f64>,
    ) -> Vec<(crate::Key, num_complex::Complex<f64>)> {
        let kept: std::collections::HashSet<crate::Key> = after.entries().map(|e| e.0).collect();
        (removed.part().entries())
            .filter(|(k, _)| !kept.contains(k))
            .collect()
    }

    /// [`record_gone`] with the amplitudes' bits.
    fn gone_bits(
        removed: &super::Removed<State<f64>>,
        after: &State<f64>,
    ) -> Vec<(crate::Key, u64, u64)> {
        (record_gone(removed, after).into_iter())
            .map(|(k, a)| (k, a.re.to_bits(), a.im.to_bits()))
            .collect()
    }

    /// Whether every record sector not kept whole has at most one spare slot.
    fn records_are_tight(removed: &super::Removed<State<f64>>) -> bool {
        (removed.part().sectors.iter().enumerate())
            .filter(|&(j, _)| !removed.whole.get(j).copied().unwrap_or(false))
            .all(|(_, r)| {
                r.keys.allocated() <= r.keys.len() + 1 && r.amps.allocated() <= r.amps.len() + 1
            })
    }

    /// The entries with their amplitudes' bits: equal lists are equal states, bit for bit.
    fn entry_bits(s: &State<f64>) -> Vec<(crate::Key, u64, u64)> {
        s.entries()
            .map(|(k, a)| (k, a.re.to_bits(), a.im.to_bits()))
            .collect()
    }

    /// A projection within a room (`run(state, room)`, on a copy of `before`) against the
    /// one that keeps its record (`kept`, its probability and record): with room for the
    /// record (or more) that record, with less none and a peak within the state; the same
    /// state and probability bit for bit every time, and the record takes it back.
    fn check_rooms(
        before: &State<f64>,
        (kept, pk, removed): (&State<f64>, f64, &super::Removed<State<f64>>),
        what: &str,
        run: impl Fn(&mut State<f64>, usize) -> (f64, Option<super::Removed<State<f64>>>),
    ) {
        // The record the projection within a room makes with room for everything (a sector
        // kept whole holds its survivors' old entries too; the reference may have counted
        // otherwise on one thread).
        let room = {
            // Below the state's bytes the projection counts first; a record it cannot keep
            // there is the whole state's, kept only with room for the state.
            let mut s = before.clone();
            match run(&mut s, before.len() * 24 - 1).1 {
                Some(rec) => rec.part().len() * 24,
                None => before.len() * 24,
            }
        };
        for (room, keeps) in [
            (usize::MAX, true),
            (room, true),
            (room - 1, false),
            (0, false),
        ] {
            let mut s = before.clone();
            s.reset_peak_bytes();
            let held = s.bytes();
            let (p, rec) = run(&mut s, room);
            let what = format!("{what} {room}");
            assert_eq!(p.to_bits(), pk.to_bits(), "{what}");
            assert_eq!(entry_bits(&s), entry_bits(kept), "{what}");
            assert_eq!(rec.is_some(), keeps, "{what}");
            if let Some(rec) = rec {
                assert_eq!(record_gone(&rec, &s), record_gone(removed, kept), "{what}");
                s.unproject(rec).unwrap();
                assert!(close(before, &s, 1e-12), "{what}");
            } else {
                assert!(
                    s.peak_bytes() <= held,
                    "{what}: {} > {held}",
                    s.peak_bytes()
                );
            }
        }
    }

    #[test]
    fn a_plain_projection_within_room_is_the_kept_one_bit_for_bit() {
        // `force_within` (no given probability): with room the record of `force_keeping`,
        // without it none, and the same state, probability and peak within the state.
        let big = three_sector_state(450_000, 29);
        let small = sample_state();
        for (before, pred, outcome) in [
            (&big, Predicate::One(12), true),
            (&big, Predicate::AllZero(0b1_0001_0000), false),
            (&small, Predicate::One(7), true),
        ] {
            for threads in [1, 2] {
                let pool = crate::test_states::pool(threads);
                let mut kept = before.clone();
                let (pk, removed) = pool.install(|| kept.force_keeping(pred, outcome)).unwrap();
                assert!(!removed.is_empty());
                let what = format!("{pred:?} {outcome} {threads}");
                check_rooms(before, (&kept, pk, &removed), &what, |s, room| {
                    pool.install(|| s.force_within(pred, outcome, room))
                        .unwrap()
                });
            }
        }
    }

    #[test]
    fn a_measurement_within_room_is_the_kept_one_bit_for_bit() {
        // `measure_within`: with room the record of `measure_keeping`, without it none, and
        // the same state and probability; given and not given, both outcomes, one and two
        // threads, several sectors of many blocks.
        let big = three_sector_state(450_000, 31);
        let small = sample_state();
        for (before, pred, outcome, given) in [
            (&big, Predicate::One(12), true, true),
            (&big, Predicate::AllZero(0b1_0001_0000), false, true),
            (&big, Predicate::One(12), false, false),
            (&small, Predicate::One(7), true, true),
        ] {
            let pick = move |p: f64| Pick {
                outcome,
                given: given.then_some(if outcome { p } else { 1.0 - p }),
            };
            for threads in [1, 2] {
                let pool = crate::test_states::pool(threads);
                let mut kept = before.clone();
                let (pk, removed) = pool
                    .install(|| kept.measure_keeping(pred, &mut |p| Some(pick(p))))
                    .unwrap()
                    .unwrap();
                assert!(!removed.is_empty(), "{pred:?} {outcome}");
                let what = format!("{pred:?} {outcome} {given} {threads}");
                check_rooms(before, (&kept, pk, &removed), &what, |s, room| {
                    pool.install(|| s.measure_within(pred, &mut |p| Some((pick(p), room))))
                        .unwrap()
                        .unwrap()
                });
                // Declining changes nothing.
                let mut s = before.clone();
                assert!(s.measure_within(pred, &mut |_| None).unwrap().is_none());
                assert_eq!(entry_bits(&s), entry_bits(before));
            }
        }
    }

    #[test]
    fn a_projection_without_room_refuses_as_the_kept_one_does() {
        let before = three_sector_state(450_000, 5);
        let mut s = before.clone();
        // Qubit 3 is never set: outcome 1 keeps nothing, whatever the given probability.
        assert!(matches!(
            s.force_given_marginals_within(Predicate::One(3), true, 0.5, 0),
            Err(SimError::ZeroProbabilityOutcome { .. })
        ));
        assert!(close(&before, &s, 0.0));
        // A bad probability, a malformed predicate: errors, nothing changed.
        for p in [0.0, f64::NAN, 1.5] {
            assert!(
                s.force_given_marginals_within(Predicate::One(12), true, p, 0)
                    .is_err()
            );
            assert!(close(&before, &s, 0.0));
        }
        assert!(matches!(
            s.force_given_marginals_within(Predicate::One(64), true, 0.5, 0),
            Err(SimError::QubitOutOfRange { .. })
        ));
        assert!(close(&before, &s, 0.0));
        // Outcome 0 removes nothing: kept as it was (an empty record fits no room at all).
        let (p, rec, m) = s
            .force_given_marginals_within(Predicate::One(3), false, 1.0, 0)
            .unwrap();
        assert_eq!(p, 1.0);
        assert!(rec.is_some_and(|r| r.is_empty()) && m.is_none());
        assert!(close(&before, &s, 0.0));
    }

    /// A projection that removes more than half of its sectors writes the survivors out
    /// and keeps the removed entries in the old arrays as the record (issue 10's peak
    /// target): the state, the probability and the marginals are bit for bit those of the
    /// same projection without a record; the record holds exactly the removed entries as
    /// they were, with no room above them; the pass holds at most 1.5x the state and the
    /// move leaves the state and its record in the state's bytes; the undo restores the
    /// state within 1e-12 and holds at most 1.5x too. On one and two threads, one sector and
    /// three, through the projection with a given probability, the one that sums its
    /// masses, and the measurement in one read.
    #[test]
    fn a_projection_of_more_than_half_writes_its_survivors_out() {
        use crate::test_states::entry_bits;
        // Qubits 4 and 5 both clear: about a quarter of the entries.
        let pred = Predicate::AllZero(0b11 << 4);
        let states = [
            (
                "one sector",
                crate::bench::random_state::<f64>(300_000).expect("state"),
            ),
            ("three sectors", three_sector_state(450_000, 11)),
        ];
        let masses = |m: Option<[f64; 64]>| m.map(|m| m.map(f64::to_bits));
        for (name, before) in &states {
            let gone: Vec<_> = (before.entries())
                .filter(|(k, _)| !pred.holds(k.board))
                .map(|(k, a)| (k, a.re.to_bits(), a.im.to_bits()))
                .collect();
            assert!(
                4 * gone.len() > 2 * before.len(),
                "{name}: more than half goes"
            );
            let p = before.probability(pred);
            let bytes = before.bytes();
            for threads in [1, 2] {
                let pool = crate::test_states::pool(threads);
                let what = format!("{name}, {threads} threads");
                // The references: the same projections with no room for a record.
                let mut lean = before.clone();
                let (_, none, m_lean) = pool
                    .install(|| lean.force_given_marginals_within(pred, true, p, 0))
                    .unwrap();
                assert!(none.is_none(), "{what}");
                let mut lean_summed = before.clone();
                let (p_summed, none) = pool
                    .install(|| lean_summed.force_within(pred, true, 0))
                    .unwrap();
                assert!(none.is_none(), "{what}");
                type Run = dyn Sync
                    + Fn(&mut State<f64>) -> (f64, super::Removed<State<f64>>, Option<[f64; 64]>);
                type Case<'a> = (&'a str, &'a Run, &'a State<f64>, Option<[f64; 64]>);
                let runs: [Case; 3] = [
                    (
                        "given",
                        &move |s| s.force_keeping_given_marginals(pred, true, p).unwrap(),
                        &lean,
                        m_lean,
                    ),
                    (
                        "summed",
                        &move |s| {
                            let (q, r) = s.force_keeping(pred, true).unwrap();
                            assert_eq!(q.to_bits(), p_summed.to_bits());
                            (q, r, None)
                        },
                        &lean_summed,
                        None,
                    ),
                    (
                        "measured",
                        &move |s| {
                            let pick = |q| {
                                Some(Pick {
                                    outcome: true,
                                    given: Some(q),
                                })
                            };
                            let (q, r) =
                                s.measure_keeping(pred, &mut |q| pick(q)).unwrap().unwrap();
                            (q, r, None)
                        },
                        &lean,
                        None,
                    ),
                ];
                for (how, run, reference, m_ref) in runs {
                    let what = format!("{what}, {how}");
                    let mut s = before.clone();
                    s.reset_peak_bytes();
                    let (_, removed, m) = pool.install(|| run(&mut s));
                    assert_eq!(entry_bits(&s), entry_bits(reference), "{what}");
                    if m_ref.is_some() {
                        assert_eq!(masses(m), masses(m_ref), "{what}");
                    }
                    assert_eq!(gone_bits(&removed, &s), gone, "{what}");
                    assert!(records_are_tight(&removed), "{what}");
                    assert!(
                        2 * s.peak_bytes() <= 3 * bytes,
                        "{what}: peak {} of {bytes}",
                        s.peak_bytes()
                    );
                    // The record is what went, in the old arrays cut to it, or (a counted
                    // pass) the old arrays whole: at most the state before.
                    let beside = if removed.holds_survivors() {
                        0
                    } else {
                        s.bytes()
                    };
                    assert!(
                        beside + removed.bytes() <= bytes + 64 * 48,
                        "{what}: {beside} + {} of {bytes}",
                        removed.bytes()
                    );
                    s.unproject(removed).unwrap();
                    assert!(close(&s, before, 1e-12), "{what}");
                    assert!(
                        2 * s.bytes() <= 3 * bytes,
                        "{what}: {} of {bytes}",
                        s.bytes()
                    );
                }
            }
        }
    }

    /// An inverted projection asks the budget for the survivors' arrays: with exactly that
    /// room it is made, with a byte less it is `StateTooLarge` and the state is as it was;
    /// one whose survivors have no mass is `ZeroProbabilityOutcome`, with the survivors
    /// merged back into the old arrays bit for bit.
    #[test]
    fn an_inverted_projection_asks_for_its_survivors_and_fails_cleanly() {
        use crate::test_states::entry_bits;
        let n = 100_000;
        let before = state_with_bit_0_at(n, 21, |i| i % 4 == 0, |_| 0);
        let kept = before.entries().filter(|(k, _)| k.board & 1 == 1).count();
        let entry = crate::memory::entry_bytes::<f64>();
        for threads in [1, 2] {
            let pool = crate::test_states::pool(threads);
            let run = |room: usize| {
                let s = before.clone();
                let held = s.bytes();
                let mut s = s.with_memory_budget(held + room);
                let got = pool.install(|| s.force_keeping(Predicate::One(0), true));
                (s, got)
            };
            let (s, got) = run(kept * entry);
            let (_, removed) = got.unwrap();
            assert_eq!((s.len(), removed.len()), (kept, n - kept));
            let (s, got) = run(kept * entry - 1);
            assert!(
                matches!(got, Err(SimError::StateTooLarge { .. })),
                "{got:?}"
            );
            assert_eq!(entry_bits(&s), entry_bits(&before));
        }
        // The survivors (qubit 0 set, a quarter) carry no mass.
        let entries = before.entries().map(|(k, a)| {
            let a = if k.board & 1 == 1 {
                num_complex::Complex::new(1e-200, 0.0)
            } else {
                a
            };
            (k, a)
        });
        let faint =
            State::from_amplitudes(entries.collect(), crate::Normalization::Renormalize).unwrap();
        for threads in [1, 2] {
            let pool = crate::test_states::pool(threads);
            let mut s = faint.clone();
            let got = pool.install(|| s.force_keeping(Predicate::One(0), true));
            assert!(
                matches!(got, Err(SimError::ZeroProbabilityOutcome { .. })),
                "{got:?}"
            );
            assert_eq!(entry_bits(&s), entry_bits(&faint), "{threads} threads");
        }
    }

    /// On one thread, a projection that a sample shows leaves at most a third of a sector
    /// writes the survivors without counting them first and keeps the old arrays whole:
    /// the same state, probability, marginals and removed entries as the counted pass, bit
    /// for bit, with or without the caller's probability, and the undo gives the state
    /// before back bit for bit.
    #[test]
    fn a_sampled_projection_of_two_thirds_keeps_the_old_arrays_whole() {
        use crate::test_states::entry_bits;
        // Large enough for the sample's bound (four standard deviations) to tell.
        let before = crate::bench::random_state::<f64>(1_000_000).expect("state");
        assert_eq!(before.sectors.len(), 1);
        let one = crate::test_states::pool(1);
        // Qubits 4 and 5 both clear: about a quarter survives.
        let pred = Predicate::AllZero(0b11 << 4);
        let p = before.probability(pred);
        assert!(p > 0.2 && p < 0.3, "{p}");
        let (mask, value) = before.check_predicate(pred).unwrap();
        let out_of = super::predicate_cut(mask, value, true).0;
        for (marginals, given) in [(false, None), (true, None), (true, Some(p))] {
            let mut a = before.clone();
            let (pa, ra, ma) = one
                .install(|| a.force_keeping_inner(pred, true, marginals, given, None))
                .unwrap();
            let mut b = before.clone();
            let counted = b.removed_per_block(out_of);
            let (pb, rb, mb) = one
                .install(|| b.force_keeping_inner(pred, true, marginals, given, Some(counted)))
                .unwrap();
            assert_eq!(pa.to_bits(), pb.to_bits());
            assert_eq!(entry_bits(&a), entry_bits(&b));
            assert_eq!(
                ma.map(|m| m.map(f64::to_bits)),
                mb.map(|m| m.map(f64::to_bits))
            );
            assert!(ra.holds_survivors() && rb.holds_survivors());
            assert_eq!((ra.len(), ra.part().len()), (rb.len(), before.len()));
            assert_eq!(gone_bits(&ra, &a), gone_bits(&rb, &b));
            // The survivors' arrays hold them and no more.
            assert!(a.sectors[0].keys.allocated() <= a.len() + 1);
            a.unproject(ra).unwrap();
            assert_eq!(entry_bits(&a), entry_bits(&before));
        }
    }

    /// An inverted projection of a sector with room below its entries (a merge's output
    /// that ended above 0) keeps that room in its record (no entry moves when the record is
    /// cut down): the record holds the removed entries, its arrays the room below and one
    /// spare slot above, and the undo gives the state back; or, counted, the old arrays as
    /// they were, and the undo gives the state back bit for bit.
    #[test]
    fn an_inverted_record_keeps_the_room_below_its_entries() {
        use crate::test_states::entry_bits;
        let n = 200_000;
        let (lo, mid, hi) = crate::bench::qubits(n);
        let one = crate::test_states::pool(1);
        // The same merge on fresh states (a copy would move the entries down).
        let merged = || {
            let mut s = crate::bench::random_state::<f64>(n).unwrap();
            one.install(|| s.merge(lo, hi, mid, crate::Controls::NONE))
                .unwrap();
            s
        };
        let before = merged();
        let head = before.sectors[0].keys.head();
        assert!(head > 0, "the merge left room below");
        let pred = Predicate::AllZero(0b11 << 4);
        let gone: Vec<_> = (before.entries())
            .filter(|(k, _)| !pred.holds(k.board))
            .map(|(k, a)| (k, a.re.to_bits(), a.im.to_bits()))
            .collect();
        assert!(2 * gone.len() > before.len());
        let mut lean = merged();
        one.install(|| lean.force_within(pred, true, 0)).unwrap();
        let mut s = merged();
        assert_eq!(s.sectors[0].keys.head(), head);
        let allocated = s.sectors[0].keys.allocated();
        let (_, removed) = one.install(|| s.force_keeping(pred, true)).unwrap();
        assert_eq!(entry_bits(&s), entry_bits(&lean));
        assert_eq!(gone_bits(&removed, &s), gone);
        let r = &removed.part().sectors[0];
        assert_eq!((r.keys.head(), r.amps.head()), (head, head));
        if removed.holds_survivors() {
            // Counted (at most a third survives): the old arrays whole, as they were.
            assert_eq!(r.keys.len(), before.len());
            assert_eq!(r.keys.allocated(), allocated);
            s.unproject(removed).unwrap();
            assert_eq!(entry_bits(&s), entry_bits(&before));
        } else {
            assert!(r.keys.allocated() <= head + r.keys.len() + 1);
            assert!(r.amps.allocated() <= head + r.amps.len() + 1);
            s.unproject(removed).unwrap();
            assert!(close(&s, &before, 1e-12));
        }
    }
}
