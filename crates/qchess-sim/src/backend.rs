//! [`QuantumState`]: exactly what a game layer needs from a simulator, so that the same game
//! code runs on the local [`State`] or on any other backend (a state sharded over MPI ranks,
//! exact amplitudes, ...).

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::key::{Controls, Key, Normalization, Predicate};
use crate::state::State;
use num_complex::Complex;
use std::fmt::Debug;

/// The operations the Cantwell game layer (`qchess_cantwell::Game` and its circuits) performs
/// on an occupancy superposition, and nothing more.
///
/// # The model
///
/// A state is a normalised superposition of basis [`Key`]s: 64 board qubits (bit `i` = square
/// `i` is occupied, a1 = 0) plus capture ancillas (bit `j` = the piece taken by the `j`-th
/// capture). Only non-zero amplitudes are stored; [`QuantumState::len`] counts them.
/// Conventions are the paper's (Cantwell 2019, eq. 4a/4b): iSwap `|01> -> i|10>`; sqrt-iSwap
/// `|01> -> (|01> + i|10>)/sqrt2`; `|00>` and `|11>` unchanged. All qubit arguments are
/// logical board qubits `0..64`; [`Controls`] and [`Predicate`]s read board bits only.
///
/// # Contract every implementation keeps
///
/// * **Atomic errors.** An operation that returns `Err` leaves the state exactly as it was
///   (same keys, same amplitudes bit for bit, same ancilla count). Argument errors (qubit out
///   of range, repeated qubit, control on a target) are [`SimError`]s of the same variants as
///   [`State`] returns.
/// * **Determinism.** Results are a function of the state and the arguments only (never of
///   thread or rank counts): a recorded game replays bit for bit on the same backend.
/// * **Memory.** A gate that would need more than [`QuantumState::cap`] basis states fails
///   with [`SimError::CapExceeded`] before it allocates; an allocation that cannot be made
///   is an error, never an abort.
/// * **Probabilities** are relative to the state's norm and accumulated in `f64`.
///
/// # Implementations
///
/// [`State<T>`] for `T` = `f32`, `f64` and [`Exact`](crate::Exact) (the local sorted-sector
/// simulator, one concrete impl each, compiled once in this crate). A backend
/// that shards the state (e.g. over MPI ranks) implements the read-outs as reductions; none
/// of the methods hands out the whole state except [`QuantumState::entries_f64`], which the
/// game uses only for serialised positions and the repetition fingerprint.
///
/// ```
/// use qchess_sim::{Controls, Predicate, QuantumState, State};
/// // Game-layer code written against the trait runs on any backend.
/// fn knight_split<S: QuantumState>() -> Result<f64, qchess_sim::SimError> {
///     let mut s = S::classical(1 << 6); // a knight on g1
///     s.split(6, 21, 23, Controls::NONE)?; // g1^f3h3
///     Ok(s.probability(Predicate::One(21)))
/// }
/// assert!((knight_split::<State<f64>>()? - 0.5).abs() < 1e-15);
/// assert!((knight_split::<State<f32>>()? - 0.5).abs() < 1e-6);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub trait QuantumState: Clone + Debug + Send + Sync + Sized + 'static {
    // ----- construction -----------------------------------------------------------------

    /// The classical board `board` with amplitude 1 and no ancillas.
    fn classical(board: u64) -> Self;

    /// A state from explicit amplitudes (duplicates summed, zeros dropped, ancilla count one
    /// above the highest ancilla bit used); see [`State::from_amplitudes`] for the errors.
    fn from_entries(
        entries: Vec<(Key, Complex<f64>)>,
        normalization: Normalization,
    ) -> Result<Self, SimError>;

    // ----- size and memory --------------------------------------------------------------

    /// Number of stored basis states (non-zero amplitudes).
    fn len(&self) -> usize;

    /// Whether no basis state is stored (never true for a state built through this trait).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes held (on every rank, for a distributed backend), reusable buffers included.
    fn bytes(&self) -> usize;

    /// Bytes one stored basis state takes (its key and amplitude): what an undo record
    /// asks per removed entry. By default [`QuantumState::bytes`] over
    /// [`QuantumState::len`] (at least 1).
    fn entry_bytes(&self) -> usize {
        (self.bytes() / self.len().max(1)).max(1)
    }

    /// The most basis states an operation may produce.
    fn cap(&self) -> usize;

    /// Sets [`QuantumState::cap`]; a gate that would exceed it fails with
    /// [`SimError::CapExceeded`] and changes nothing.
    fn set_cap(&mut self, max_states: usize);

    /// Number of capture ancillas created so far (the next capture gets this index).
    fn ancilla_count(&self) -> u32;

    /// The memory budget in bytes: every state-sized allocation asks it first, and an
    /// operation that would exceed it fails with [`SimError::StateTooLarge`], changing
    /// nothing. See [`State::memory_budget`].
    fn memory_budget(&self) -> usize;

    /// Sets [`QuantumState::memory_budget`].
    fn set_memory_budget(&mut self, bytes: usize);

    /// A copy of the state, made only when the budget has room for it after `also_held`
    /// more bytes held elsewhere against the same budget ([`SimError::StateTooLarge`]
    /// otherwise), allocated fallibly.
    fn try_clone(&self, also_held: usize) -> Result<Self, SimError>;

    /// The `k` most probable boards, most probable first (ties by board), and the number of
    /// distinct boards, in memory proportional to `k`. See [`State::board_distribution_top`].
    fn board_distribution_top(&self, k: usize) -> (Vec<(u64, f64)>, usize);

    /// Calls `f` with every board and its probability (ancillas summed over), in an order
    /// fixed by the state, without building the distribution. See
    /// [`State::board_distribution_iter`].
    fn for_each_board(&self, f: &mut dyn FnMut(u64, f64));

    /// [`QuantumState::board_distribution_top`] within the memory budget (issue 10,
    /// Deliver 5): the answer's bytes (16 per board, at most `k` and at most
    /// [`QuantumState::len`] boards) are asked of what [`QuantumState::memory_budget`] leaves
    /// after [`QuantumState::bytes`] before it is built; [`SimError::StateTooLarge`] (bytes
    /// asked and available) when they do not fit, and the state is never changed. The answer
    /// is the same as [`QuantumState::board_distribution_top`]'s. See
    /// [`State::try_board_distribution_top`] (which also reserves fallibly); a backend that
    /// gathers the whole distribution first counts the gather.
    fn try_board_distribution_top(&self, k: usize) -> Result<(Vec<(u64, f64)>, usize), SimError> {
        let boards = k.min(self.len());
        let asked = boards.saturating_mul(std::mem::size_of::<(u64, f64)>());
        let available = self.memory_budget().saturating_sub(self.bytes());
        if asked > available {
            return Err(SimError::StateTooLarge { asked, available });
        }
        Ok(self.board_distribution_top(k))
    }

    /// [`QuantumState::for_each_board`] within the memory budget (issue 10, Deliver 5): a
    /// backend whose pass holds state-sized memory (one that gathers the distribution
    /// first) asks the budget for it before the pass and answers [`SimError::StateTooLarge`]
    /// (bytes asked and available) without calling `f` when it does not fit. The default,
    /// for backends that stream their boards like the local [`State`] (one cursor per
    /// ancilla sector, nothing state-sized), is [`QuantumState::for_each_board`] and never
    /// refuses.
    fn try_for_each_board(&self, f: &mut dyn FnMut(u64, f64)) -> Result<(), SimError> {
        self.for_each_board(f);
        Ok(())
    }

    /// The squares occupied on every board and on some board, as `(always, ever)` logical
    /// masks (`(!0, 0)` when there is no board). See [`State::occupancy_bounds`]; the
    /// default reads [`QuantumState::for_each_board`].
    fn occupancy_bounds(&self) -> (u64, u64) {
        let (mut always, mut ever) = (!0u64, 0u64);
        self.for_each_board(&mut |b, _| {
            always &= b;
            ever |= b;
        });
        (always, ever)
    }

    /// For each `(mask, value, any)`, the probability of the boards with
    /// `board & mask == value` and (when `any != 0`) `board & any != 0`; exactly 0 when no
    /// board matches. See [`State::pattern_weights`] (one pass, joint histograms); the
    /// default checks every pattern on every board of [`QuantumState::for_each_board`].
    fn pattern_weights(&self, patterns: &[(u64, u64, u64)]) -> Vec<f64> {
        let mut w = vec![0.0f64; patterns.len()];
        self.for_each_board(&mut |b, p| {
            for (wi, &(m, v, a)) in w.iter_mut().zip(patterns) {
                if b & m == v & m && (a == 0 || b & a != 0) {
                    *wi += p;
                }
            }
        });
        w
    }

    /// `<psi|U|psi> / <psi|psi>` for `U` the iSwap on `a`, `b` controlled on the squares of
    /// `empty` being empty, or `None` when it cannot be had (a copy or the gate refused).
    /// See [`State::iswap_overlap`] (read-only, one pass); the default applies the gate to
    /// a copy ([`QuantumState::try_clone`], [`QuantumState::iswap`], [`QuantumState::inner`]).
    fn iswap_overlap(&self, a: u8, b: u8, empty: u64) -> Option<Complex<f64>> {
        let mut copy = self.try_clone(0).ok()?;
        copy.iswap(a, b, Controls::empty_path(empty)).ok()?;
        let norm = self.norm_sqr();
        (norm > 0.0).then(|| self.inner(&copy) / norm)
    }

    /// Read-only answers to many presence and circuit questions at once (Definition 2 of a
    /// candidate move without applying it). See [`State::local_effects`], which reads its
    /// own sectors and never fails. The default reads [`QuantumState::entries_f64`] into
    /// sorted sectors first: that copy of the entries is counted against the state's memory
    /// budget before it is made ([`SimError::StateTooLarge`] when what the budget has left
    /// after [`QuantumState::bytes`] cannot hold it) and reserved fallibly
    /// ([`SimError::OutOfMemory`]); an error changes nothing.
    fn local_effects(
        &self,
        queries: &[crate::LocalQuery],
        threshold: f64,
    ) -> Result<Vec<crate::LocalAnswer>, SimError> {
        let available = self.memory_budget().saturating_sub(self.bytes());
        crate::local::local_effects_of_entries(
            self.entries_f64(),
            self.len(),
            available,
            queries,
            threshold,
        )
    }

    // ----- gates ------------------------------------------------------------------------

    /// iSwap (eq. 4a) on `a`, `b` where `controls` hold: a jump, or a slide with the path as
    /// `Controls::empty_path`.
    fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError>;

    /// [`QuantumState::iswap`] that also returns the squared norms it moved, `[a to b, b to
    /// a]`, when the backend summed them in the gate's own pass (see
    /// [`State::iswap_with_flows`]); `None` leaves the caller to read the marginals. The
    /// default runs [`QuantumState::iswap`] and returns `None`.
    fn iswap_with_flows(
        &mut self,
        a: u8,
        b: u8,
        controls: Controls,
    ) -> Result<Option<[f64; 2]>, SimError> {
        self.iswap(a, b, controls)?;
        Ok(None)
    }

    /// Inverse iSwap: `|01> -> -i|10>`, `|10> -> -i|01>` (undoes [`QuantumState::iswap`]).
    fn iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError>;

    /// sqrt-iSwap (eq. 4b) on `a`, `b` where `controls` hold.
    fn sqrt_iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError>;

    /// Inverse sqrt-iSwap (undoes [`QuantumState::sqrt_iswap`]).
    fn sqrt_iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError>;

    /// Split `s^t1t2`: `iSwap(s, t2) * sqrt-iSwap(s, t1)`, the sqrt-iSwap acting first.
    fn split(&mut self, s: u8, t1: u8, t2: u8, controls: Controls) -> Result<(), SimError>;

    /// Merge `s1s2^t`: the exact inverse of `split(t, s2, s1)`.
    fn merge(&mut self, s1: u8, s2: u8, t: u8, controls: Controls) -> Result<(), SimError>;

    /// Split slide (eq. 9): `path1` from `s` to `t1`, `path2` from `s` to `t2`, each arm
    /// controlled on its own path being empty; see [`State::split_slide`].
    fn split_slide(
        &mut self,
        s: u8,
        t1: u8,
        t2: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError>;

    /// Merge slide (eq. 12): the exact inverse of `split_slide(t, s2, s1, path2, path1)`.
    fn merge_slide(
        &mut self,
        s1: u8,
        s2: u8,
        t: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError>;

    /// Capture: `iSwap(t, x)` with a fresh ancilla `x` in `|0>`: branches with `t` occupied
    /// move the piece into the ancilla (amplitude times `i`). Returns the ancilla's index;
    /// [`SimError::TooManyAncillas`] when none is left.
    fn capture(&mut self, t: u8) -> Result<u32, SimError>;

    /// A capture of `q` only on the branches where `controls` hold; `None` (no ancilla
    /// taken) when no branch has `q` occupied under the controls.
    fn capture_controlled(&mut self, q: u8, controls: Controls) -> Result<Option<u32>, SimError>;

    /// iSwap(s, t) only on the branches where some bit of `ancillas` is set.
    fn iswap_where_ancillas(&mut self, s: u8, t: u8, ancillas: u128) -> Result<(), SimError>;

    // ----- undo records (issue 10, Deliver 1) ---------------------------------------------

    /// Whether this backend implements [`QuantumState::force_keeping`],
    /// [`QuantumState::unproject`] and [`QuantumState::uncapture`], so a game can take its
    /// moves back without copying the state. Backends that do not keep whole-state copies.
    fn keeps_undo_records(&self) -> bool {
        false
    }

    /// [`QuantumState::force`] that also returns what it removed (see
    /// [`State::force_keeping`]). Default: [`SimError::Unsupported`], nothing changed.
    fn force_keeping(
        &mut self,
        pred: Predicate,
        outcome: bool,
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        let _ = (pred, outcome);
        Err(SimError::Unsupported {
            what: "projections with undo records",
        })
    }

    /// [`QuantumState::force_keeping`] for a caller that has just read the outcome's
    /// probability (see [`State::force_keeping_given`]: the survivors are scaled by
    /// `1 / sqrt(probability)` in the projection's own pass). The default ignores
    /// `probability` and calls [`QuantumState::force_keeping`].
    fn force_keeping_given(
        &mut self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        let _ = probability;
        self.force_keeping(pred, outcome)
    }

    /// [`QuantumState::force_keeping_given`] that also returns the squares' marginals after
    /// the projection, when the backend sums them in the projection's pass (see
    /// [`State::force_keeping_given_marginals`]); `None` leaves the caller to read them. The
    /// default returns `None`.
    #[allow(clippy::type_complexity)]
    fn force_keeping_given_marginals(
        &mut self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
    ) -> Result<(f64, crate::Removed<Self>, Option<[f64; 64]>), SimError> {
        let (p, removed) = self.force_keeping_given(pred, outcome, probability)?;
        Ok((p, removed, None))
    }

    /// [`QuantumState::force_keeping_given_marginals`] for a caller that keeps the undo
    /// record only when it takes at most `room` bytes: `None` in place of the record when
    /// the backend dropped the removed entries instead (see
    /// [`State::force_given_marginals_within`]; nothing can take the projection back then).
    /// The default always makes the record.
    #[allow(clippy::type_complexity)]
    fn force_given_marginals_within(
        &mut self,
        pred: Predicate,
        outcome: bool,
        probability: f64,
        room: usize,
    ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
        let _ = room;
        let (p, removed, marginals) =
            self.force_keeping_given_marginals(pred, outcome, probability)?;
        Ok((p, Some(removed), marginals))
    }

    /// [`QuantumState::force_keeping`] for a caller that keeps the undo record only when it
    /// takes at most `room` bytes: `None` in place of the record when the backend dropped
    /// the removed entries instead (see [`State::force_within`]). The default always makes
    /// the record.
    #[allow(clippy::type_complexity)]
    fn force_within(
        &mut self,
        pred: Predicate,
        outcome: bool,
        room: usize,
    ) -> Result<(f64, Option<crate::Removed<Self>>), SimError> {
        let _ = room;
        let (p, removed) = self.force_keeping(pred, outcome)?;
        Ok((p, Some(removed)))
    }

    /// A measurement in one read and one projection (see [`State::measure_keeping`]):
    /// `choose` gets the probability that `pred` holds (as [`QuantumState::probability`]
    /// reads it) and picks the outcome, or `None` to change nothing. The default reads the
    /// probability, then calls [`QuantumState::force_keeping_given`] or
    /// [`QuantumState::force_keeping`].
    fn measure_keeping(
        &mut self,
        pred: Predicate,
        choose: &mut dyn FnMut(f64) -> Option<crate::Pick>,
    ) -> Result<Option<(f64, crate::Removed<Self>)>, SimError> {
        measure_keeping_by_parts(self, pred, choose)
    }

    /// [`QuantumState::measure_keeping`] for a caller that keeps the undo record only when
    /// it takes at most the room `choose` gives with its pick (see
    /// [`State::measure_within`]): `None` in place of the record when the backend dropped
    /// the removed entries instead. The default always makes the record.
    #[allow(clippy::type_complexity)]
    fn measure_within(
        &mut self,
        pred: Predicate,
        choose: &mut dyn FnMut(f64) -> Option<(crate::Pick, usize)>,
    ) -> Result<Option<(f64, Option<crate::Removed<Self>>)>, SimError> {
        Ok(self
            .measure_keeping(pred, &mut |p| choose(p).map(|(pick, _)| pick))?
            .map(|(p, r)| (p, Some(r))))
    }

    /// Takes back a projection of [`QuantumState::force_keeping`] (see [`State::unproject`]).
    fn unproject(&mut self, removed: crate::Removed<Self>) -> Result<(), SimError> {
        let _ = removed;
        Err(SimError::Unsupported {
            what: "projections with undo records",
        })
    }

    /// Takes back the capture of `t` into the last ancilla `ancilla` (see
    /// [`State::uncapture`]).
    fn uncapture(&mut self, t: u8, ancilla: u32) -> Result<(), SimError> {
        let _ = (t, ancilla);
        Err(SimError::Unsupported {
            what: "taking captures back",
        })
    }

    /// Heap bytes of an undo record made by [`QuantumState::force_keeping`].
    fn removed_bytes(removed: &crate::Removed<Self>) -> usize {
        removed.part().bytes()
    }

    // ----- measurement ------------------------------------------------------------------

    /// Probability that `pred` holds; 0 for a malformed predicate.
    fn probability(&self, pred: Predicate) -> f64;

    /// Projects onto outcome `outcome` of `pred` and renormalises; returns the outcome's
    /// probability. [`SimError::ZeroProbabilityOutcome`] (nothing changed) when it is
    /// numerically zero.
    fn force(&mut self, pred: Predicate, outcome: bool) -> Result<f64, SimError>;

    /// Keeps the basis states whose board satisfies `keep`, renormalised (a projection onto
    /// a set no single [`Predicate`] describes); returns the probability kept.
    fn project_boards(&mut self, keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<f64, SimError>;

    /// [`QuantumState::project_boards`] that also returns what it removed (see
    /// [`State::project_boards_keeping`]), for an undo record smaller than a copy of the
    /// state. Default: [`SimError::Unsupported`], nothing changed (a caller keeps a copy).
    fn project_boards_keeping(
        &mut self,
        keep: &(dyn Fn(u64) -> bool + Sync),
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        let _ = keep;
        Err(SimError::Unsupported {
            what: "projections onto a set of boards with undo records",
        })
    }

    /// Keeps the basis states on whose board any of `patterns` holds, renormalised; returns
    /// the probability kept (see [`State::project_any`]). Default: [`QuantumState::project_boards`]
    /// with that predicate, after checking the patterns.
    fn project_any(&mut self, patterns: &[Predicate]) -> Result<f64, SimError> {
        check_patterns(patterns)?;
        self.project_boards(&|b| patterns.iter().any(|p| p.holds(b)))
    }

    /// [`QuantumState::project_any`] that also returns what it removed (see
    /// [`State::project_any_keeping`]). Default: [`QuantumState::project_boards_keeping`]
    /// with that predicate, after checking the patterns.
    fn project_any_keeping(
        &mut self,
        patterns: &[Predicate],
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        check_patterns(patterns)?;
        self.project_boards_keeping(&|b| patterns.iter().any(|p| p.holds(b)))
    }

    /// [`QuantumState::project_any_keeping`] for a caller that knows the union's probability
    /// (see [`State::project_any_given_marginals`]: the survivors scaled by
    /// `1 / sqrt(probability)` in the projection's pass, the marginals after it summed there).
    /// The default ignores `probability` and calls [`QuantumState::project_any_keeping`]
    /// (no marginals).
    #[allow(clippy::type_complexity)]
    fn project_any_given_marginals(
        &mut self,
        patterns: &[Predicate],
        probability: f64,
    ) -> Result<(f64, crate::Removed<Self>, Option<[f64; 64]>), SimError> {
        let _ = probability;
        let (p, removed) = self.project_any_keeping(patterns)?;
        Ok((p, removed, None))
    }

    /// [`QuantumState::project_any_given_marginals`] for a caller that keeps the undo record
    /// only when it takes at most `room` bytes (see [`State::project_any_given_within`]).
    /// The default always makes the record.
    #[allow(clippy::type_complexity)]
    fn project_any_given_within(
        &mut self,
        patterns: &[Predicate],
        probability: f64,
        room: usize,
    ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
        let _ = room;
        let (p, removed, marginals) = self.project_any_given_marginals(patterns, probability)?;
        Ok((p, Some(removed), marginals))
    }

    /// The probabilities that some pattern of `patterns` holds and that none does (see
    /// [`State::probability_any`]: one pass, each summed from its own entries). Default:
    /// the patterns checked, then every board of [`QuantumState::for_each_board`] asked.
    fn probability_any(&self, patterns: &[Predicate]) -> Result<(f64, f64), SimError> {
        check_patterns(patterns)?;
        let (mut yes, mut no) = (0.0f64, 0.0f64);
        self.for_each_board(&mut |b, p| {
            if patterns.iter().any(|q| q.holds(b)) {
                yes += p;
            } else {
                no += p;
            }
        });
        let all = yes + no;
        Ok(if all > 0.0 {
            (yes / all, no / all)
        } else {
            (0.0, 0.0)
        })
    }

    /// Projects onto outcome `outcome` of "some pattern of `patterns` holds" (see
    /// [`State::force_any`]). Default: [`QuantumState::project_boards`] with that
    /// predicate, after checking the patterns.
    fn force_any(&mut self, patterns: &[Predicate], outcome: bool) -> Result<f64, SimError> {
        check_patterns(patterns)?;
        self.project_boards(&|b| patterns.iter().any(|p| p.holds(b)) == outcome)
    }

    /// [`QuantumState::force_any`] that also returns what it removed (see
    /// [`State::force_any_keeping`]). Default: [`QuantumState::project_boards_keeping`]
    /// with that predicate, after checking the patterns.
    fn force_any_keeping(
        &mut self,
        patterns: &[Predicate],
        outcome: bool,
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        check_patterns(patterns)?;
        self.project_boards_keeping(&|b| patterns.iter().any(|p| p.holds(b)) == outcome)
    }

    /// [`QuantumState::force_any_keeping`] for a caller that knows the outcome's
    /// probability (see [`State::force_any_given_marginals`]). The default ignores
    /// `probability` and calls [`QuantumState::force_any_keeping`] (no marginals).
    #[allow(clippy::type_complexity)]
    fn force_any_given_marginals(
        &mut self,
        patterns: &[Predicate],
        outcome: bool,
        probability: f64,
    ) -> Result<(f64, crate::Removed<Self>, Option<[f64; 64]>), SimError> {
        let _ = probability;
        let (p, removed) = self.force_any_keeping(patterns, outcome)?;
        Ok((p, removed, None))
    }

    /// [`QuantumState::force_any_given_marginals`] for a caller that keeps the undo record
    /// only when it takes at most `room` bytes (see [`State::force_any_given_within`]).
    /// The default always makes the record.
    #[allow(clippy::type_complexity)]
    fn force_any_given_within(
        &mut self,
        patterns: &[Predicate],
        outcome: bool,
        probability: f64,
        room: usize,
    ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
        let _ = room;
        let (p, removed, marginals) =
            self.force_any_given_marginals(patterns, outcome, probability)?;
        Ok((p, Some(removed), marginals))
    }

    // ----- read-outs --------------------------------------------------------------------

    /// Probability that each board qubit is 1 (ancillas and the other qubits traced out).
    fn qubit_probabilities(&self) -> [f64; 64];

    /// Probability that each of `qubits` is 1 (0 for a qubit out of range): for a caller
    /// that knows which marginals a gate changed. The default reads each from
    /// [`QuantumState::probability`]; [`State`] sums them all in one pass.
    fn qubit_probabilities_of(&self, qubits: &[u8]) -> Vec<f64> {
        qubits
            .iter()
            .map(|&q| {
                if q < 64 {
                    self.probability(Predicate::One(q))
                } else {
                    0.0
                }
            })
            .collect()
    }

    /// Probability of each board (ancillas marginalised), most probable first, ties by board
    /// key; at most `limit` boards.
    fn board_distribution(&self, limit: Option<usize>) -> Vec<(u64, f64)>;

    /// [`QuantumState::board_distribution`] within the memory budget (issue 10, Deliver 5):
    /// the answer's bytes (16 per board, at most `limit` and at most [`QuantumState::len`]
    /// boards) are asked of what [`QuantumState::memory_budget`] leaves after
    /// [`QuantumState::bytes`] before it is built; [`SimError::StateTooLarge`] (bytes asked
    /// and available) when they do not fit, and the state is never changed. See
    /// [`State::try_board_distribution`], which counts the distinct boards exactly and
    /// reserves fallibly; this default bounds them by the basis states.
    fn try_board_distribution(&self, limit: Option<usize>) -> Result<Vec<(u64, f64)>, SimError> {
        let boards = limit.map_or(self.len(), |k| k.min(self.len()));
        let asked = boards.saturating_mul(std::mem::size_of::<(u64, f64)>());
        let available = self.memory_budget().saturating_sub(self.bytes());
        if asked > available {
            return Err(SimError::StateTooLarge { asked, available });
        }
        Ok(self.board_distribution(limit))
    }

    /// Reduced density matrix of board qubits `a`, `b` (basis index `2 * bit_a + bit_b`).
    fn reduced_density_matrix(&self, a: u8, b: u8) -> [[Complex<f64>; 4]; 4];

    /// The amplitude of one basis state (0 when it is not stored).
    fn amplitude_f64(&self, key: Key) -> Complex<f64>;

    /// Every stored basis state with its amplitude in canonical order (ancillas, then board).
    /// Whole-state: for serialisation and fingerprints, not for per-move work.
    fn entries_f64(&self) -> Box<dyn Iterator<Item = (Key, Complex<f64>)> + '_>;

    /// [`QuantumState::entries_f64`] within the memory budget (issue 10, Deliver 5): a backend
    /// whose read-out holds state-sized memory (a sharded state gathers every entry to every
    /// rank) asks its budget for it first and answers [`SimError::StateTooLarge`] (or
    /// [`SimError::OutOfMemory`]) instead of a short list. The default, for backends that
    /// stream their own arrays (the local [`State`]: nothing is allocated), is
    /// `Ok(self.entries_f64())`.
    ///
    /// ```
    /// use qchess_sim::{QuantumState, State};
    /// let s = State::<f64>::classical(0b101);
    /// let all: Vec<_> = QuantumState::try_entries_f64(&s)?.collect();
    /// assert_eq!(all.len(), 1);
    /// assert_eq!(all[0].0.board, 0b101);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    #[allow(clippy::type_complexity)]
    fn try_entries_f64(
        &self,
    ) -> Result<Box<dyn Iterator<Item = (Key, Complex<f64>)> + '_>, SimError> {
        Ok(self.entries_f64())
    }

    /// Calls `f` with every stored basis state and its amplitude, in the order of
    /// [`QuantumState::entries_f64`], with nothing state-sized held beside the state: what
    /// serialisation reads (a position's amplitude list, its JSON text). The default reads
    /// [`QuantumState::try_entries_f64`] (the local [`State`] streams its own arrays, so it
    /// never refuses); a distributed backend streams its pieces in bounded rounds, merged in
    /// key order, instead of gathering them. An error ([`SimError::StateTooLarge`] from a
    /// backend that must hold state-sized memory to read its entries) comes before `f` is
    /// first called. On a distributed backend the call is collective: every rank calls `f`
    /// with the same entries in the same order.
    ///
    /// ```
    /// use qchess_sim::{Controls, QuantumState, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let mut seen = Vec::new();
    /// QuantumState::try_for_each_entry_f64(&s, &mut |k, a| seen.push((k, a)))?;
    /// assert_eq!(seen, QuantumState::entries_f64(&s).collect::<Vec<_>>());
    /// assert_eq!(seen.len(), 2);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    fn try_for_each_entry_f64(&self, f: &mut dyn FnMut(Key, Complex<f64>)) -> Result<(), SimError> {
        for (k, a) in self.try_entries_f64()? {
            f(k, a);
        }
        Ok(())
    }

    /// A digest of the entries up to a global phase, with amplitudes scaled by `scale` and
    /// rounded: `(count, sum)` of [`crate::digest::digest_entries`] after rotating the
    /// reference amplitude ([`crate::digest::phase_reference`]) onto the positive real axis.
    /// States equal up to a global phase (within the rounding) give equal digests. Nothing
    /// state-sized is allocated: the default reads [`QuantumState::entries_f64`] twice (the
    /// local [`State`] streams its own arrays); a distributed backend digests its pieces
    /// where they lie and adds the pieces' digests.
    ///
    /// ```
    /// use qchess_sim::{Complex, Controls, Normalization, QuantumState, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// // The same state times the global phase i.
    /// let turned = s.entries().map(|(k, a)| (k, a * Complex::new(0.0, 1.0))).collect();
    /// let t = State::<f64>::from_amplitudes(turned, Normalization::RequireUnit)?;
    /// assert_eq!(s.amplitude_digest(1e9), t.amplitude_digest(1e9));
    /// assert_eq!(s.amplitude_digest(1e9).0, 2);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    fn amplitude_digest(&self, scale: f64) -> (u64, u64) {
        let rot = crate::digest::rotation(crate::digest::phase_reference(self.entries_f64()));
        crate::digest::digest_entries(self.entries_f64(), rot, scale)
    }

    /// Whether `other` holds the same basis states as this state with every amplitude
    /// within `tolerance` (the modulus of the difference). Nothing state-sized is allocated
    /// by the default, which walks both [`QuantumState::entries_f64`] side by side (the local
    /// [`State`] streams its own arrays); a distributed backend compares its pieces where
    /// they lie.
    ///
    /// ```
    /// use qchess_sim::{Controls, QuantumState, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let mut t = s.clone();
    /// assert!(s.entries_close(&t, 1e-12));
    /// t.iswap(1, 3, Controls::NONE)?;
    /// assert!(!s.entries_close(&t, 1e-12));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    fn entries_close(&self, other: &Self, tolerance: f64) -> bool {
        self.len() == other.len()
            && self
                .entries_f64()
                .zip(other.entries_f64())
                .all(|((ka, va), (kb, vb))| ka == kb && (va - vb).norm() <= tolerance)
    }

    /// The squared norm (1 up to rounding).
    fn norm_sqr(&self) -> f64;

    /// `<self|other>`, accumulated in `f64`.
    fn inner(&self, other: &Self) -> Complex<f64>;

    /// Draws one basis state with probability `|amplitude|^2`, taking exactly one `f64` from
    /// `rng`.
    fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Key;
}

fn to64<T: Amplitude>(a: Complex<T>) -> Complex<f64> {
    Complex::new(a.re.as_f64(), a.im.as_f64())
}

/// The local simulator's [`QuantumState`], one concrete impl per amplitude type the workspace
/// uses (`f32`, `f64`, [`Exact`](crate::Exact)) rather than one generic impl: the methods of a
/// non-generic impl are compiled once, here, so a crate that plays games on `State<f64>` calls
/// them instead of compiling every simulator kernel again (docs/decisions.md, "The local
/// backend is compiled once").
macro_rules! local_backend {
    ($($t:ty),*) => {$(
        impl QuantumState for State<$t> {
            #[inline]
            fn classical(board: u64) -> Self {
                State::classical(board)
            }
            fn from_entries(
                entries: Vec<(Key, Complex<f64>)>,
                normalization: Normalization,
            ) -> Result<Self, SimError> {
                let entries = entries
                    .into_iter()
                    .map(|(k, a)| (k, Complex::new(<$t>::of_f64(a.re), <$t>::of_f64(a.im))))
                    .collect();
                State::from_amplitudes(entries, normalization)
            }
            #[inline]
            fn len(&self) -> usize {
                State::len(self)
            }
            #[inline]
            fn bytes(&self) -> usize {
                State::bytes(self)
            }
            #[inline]
            fn entry_bytes(&self) -> usize {
                crate::memory::entry_bytes::<$t>()
            }
            #[inline]
            fn cap(&self) -> usize {
                State::cap(self)
            }
            #[inline]
            fn set_cap(&mut self, max_states: usize) {
                State::set_cap(self, max_states);
            }
            #[inline]
            fn ancilla_count(&self) -> u32 {
                State::ancilla_count(self)
            }
            #[inline]
            fn memory_budget(&self) -> usize {
                State::memory_budget(self)
            }
            #[inline]
            fn set_memory_budget(&mut self, bytes: usize) {
                State::set_memory_budget(self, bytes);
            }
            fn try_clone(&self, also_held: usize) -> Result<Self, SimError> {
                State::try_clone(self, also_held)
            }
            fn board_distribution_top(&self, k: usize) -> (Vec<(u64, f64)>, usize) {
                State::board_distribution_top(self, k)
            }
            fn for_each_board(&self, f: &mut dyn FnMut(u64, f64)) {
                for (b, p) in State::board_distribution_iter(self) {
                    f(b, p);
                }
            }
            fn try_board_distribution_top(&self, k: usize) -> Result<(Vec<(u64, f64)>, usize), SimError> {
                State::try_board_distribution_top(self, k)
            }
            fn occupancy_bounds(&self) -> (u64, u64) {
                State::occupancy_bounds(self)
            }
            fn pattern_weights(&self, patterns: &[(u64, u64, u64)]) -> Vec<f64> {
                State::pattern_weights(self, patterns)
            }
            fn iswap_overlap(&self, a: u8, b: u8, empty: u64) -> Option<Complex<f64>> {
                Some(State::iswap_overlap(self, a, b, empty))
            }
            fn local_effects(
                &self,
                queries: &[crate::LocalQuery],
                threshold: f64,
            ) -> Result<Vec<crate::LocalAnswer>, SimError> {
                // The sectors are read in place: no copy, nothing to ask of the budget.
                Ok(State::local_effects(self, queries, threshold))
            }
            fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
                State::iswap(self, a, b, controls)
            }
            fn iswap_with_flows(
                &mut self,
                a: u8,
                b: u8,
                controls: Controls,
            ) -> Result<Option<[f64; 2]>, SimError> {
                State::iswap_with_flows(self, a, b, controls)
            }
            fn iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
                State::iswap_inv(self, a, b, controls)
            }
            fn sqrt_iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
                State::sqrt_iswap(self, a, b, controls)
            }
            fn sqrt_iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
                State::sqrt_iswap_inv(self, a, b, controls)
            }
            fn split(&mut self, s: u8, t1: u8, t2: u8, controls: Controls) -> Result<(), SimError> {
                State::split(self, s, t1, t2, controls)
            }
            fn merge(&mut self, s1: u8, s2: u8, t: u8, controls: Controls) -> Result<(), SimError> {
                State::merge(self, s1, s2, t, controls)
            }
            fn split_slide(
                &mut self,
                s: u8,
                t1: u8,
                t2: u8,
                path1: u64,
                path2: u64,
            ) -> Result<(), SimError> {
                State::split_slide(self, s, t1, t2, path1, path2)
            }
            fn merge_slide(
                &mut self,
                s1: u8,
                s2: u8,
                t: u8,
                path1: u64,
                path2: u64,
            ) -> Result<(), SimError> {
                State::merge_slide(self, s1, s2, t, path1, path2)
            }
            fn capture(&mut self, t: u8) -> Result<u32, SimError> {
                State::capture(self, t)
            }
            fn capture_controlled(&mut self, q: u8, controls: Controls) -> Result<Option<u32>, SimError> {
                State::capture_controlled(self, q, controls)
            }
            fn iswap_where_ancillas(&mut self, s: u8, t: u8, ancillas: u128) -> Result<(), SimError> {
                State::iswap_where_ancillas(self, s, t, ancillas)
            }
            #[inline]
            fn keeps_undo_records(&self) -> bool {
                // Exact states are not renormalised and rebuild canonically: they keep copies.
                <$t>::RENORMALIZES
            }
            fn force_keeping(
                &mut self,
                pred: Predicate,
                outcome: bool,
            ) -> Result<(f64, crate::Removed<Self>), SimError> {
                State::force_keeping(self, pred, outcome)
            }
            fn force_keeping_given(
                &mut self,
                pred: Predicate,
                outcome: bool,
                probability: f64,
            ) -> Result<(f64, crate::Removed<Self>), SimError> {
                State::force_keeping_given(self, pred, outcome, probability)
            }
            fn force_keeping_given_marginals(
                &mut self,
                pred: Predicate,
                outcome: bool,
                probability: f64,
            ) -> Result<(f64, crate::Removed<Self>, Option<[f64; 64]>), SimError> {
                State::force_keeping_given_marginals(self, pred, outcome, probability)
            }
            fn force_given_marginals_within(
                &mut self,
                pred: Predicate,
                outcome: bool,
                probability: f64,
                room: usize,
            ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
                State::force_given_marginals_within(self, pred, outcome, probability, room)
            }
            fn force_within(
                &mut self,
                pred: Predicate,
                outcome: bool,
                room: usize,
            ) -> Result<(f64, Option<crate::Removed<Self>>), SimError> {
                State::force_within(self, pred, outcome, room)
            }
            fn measure_keeping(
                &mut self,
                pred: Predicate,
                choose: &mut dyn FnMut(f64) -> Option<crate::Pick>,
            ) -> Result<Option<(f64, crate::Removed<Self>)>, SimError> {
                State::measure_keeping(self, pred, choose)
            }
            #[allow(clippy::type_complexity)]
            fn measure_within(
                &mut self,
                pred: Predicate,
                choose: &mut dyn FnMut(f64) -> Option<(crate::Pick, usize)>,
            ) -> Result<Option<(f64, Option<crate::Removed<Self>>)>, SimError> {
                State::measure_within(self, pred, choose)
            }
            fn unproject(&mut self, removed: crate::Removed<Self>) -> Result<(), SimError> {
                State::unproject(self, removed)
            }
            fn uncapture(&mut self, t: u8, ancilla: u32) -> Result<(), SimError> {
                State::uncapture(self, t, ancilla)
            }
            fn probability(&self, pred: Predicate) -> f64 {
                State::probability(self, pred)
            }
            fn force(&mut self, pred: Predicate, outcome: bool) -> Result<f64, SimError> {
                State::force(self, pred, outcome)
            }
            fn project_boards(&mut self, keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<f64, SimError> {
                State::project_boards(self, keep)
            }
            fn project_boards_keeping(
                &mut self,
                keep: &(dyn Fn(u64) -> bool + Sync),
            ) -> Result<(f64, crate::Removed<Self>), SimError> {
                State::project_boards_keeping(self, keep)
            }
            fn project_any(&mut self, patterns: &[Predicate]) -> Result<f64, SimError> {
                State::project_any(self, patterns)
            }
            fn project_any_keeping(
                &mut self,
                patterns: &[Predicate],
            ) -> Result<(f64, crate::Removed<Self>), SimError> {
                State::project_any_keeping(self, patterns)
            }
            #[allow(clippy::type_complexity)]
            fn project_any_given_marginals(
                &mut self,
                patterns: &[Predicate],
                probability: f64,
            ) -> Result<(f64, crate::Removed<Self>, Option<[f64; 64]>), SimError> {
                State::project_any_given_marginals(self, patterns, probability)
            }
            #[allow(clippy::type_complexity)]
            fn project_any_given_within(
                &mut self,
                patterns: &[Predicate],
                probability: f64,
                room: usize,
            ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
                State::project_any_given_within(self, patterns, probability, room)
            }
            fn probability_any(&self, patterns: &[Predicate]) -> Result<(f64, f64), SimError> {
                State::probability_any(self, patterns)
            }
            fn force_any(&mut self, patterns: &[Predicate], outcome: bool) -> Result<f64, SimError> {
                State::force_any(self, patterns, outcome)
            }
            fn force_any_keeping(
                &mut self,
                patterns: &[Predicate],
                outcome: bool,
            ) -> Result<(f64, crate::Removed<Self>), SimError> {
                State::force_any_keeping(self, patterns, outcome)
            }
            #[allow(clippy::type_complexity)]
            fn force_any_given_marginals(
                &mut self,
                patterns: &[Predicate],
                outcome: bool,
                probability: f64,
            ) -> Result<(f64, crate::Removed<Self>, Option<[f64; 64]>), SimError> {
                State::force_any_given_marginals(self, patterns, outcome, probability)
            }
            #[allow(clippy::type_complexity)]
            fn force_any_given_within(
                &mut self,
                patterns: &[Predicate],
                outcome: bool,
                probability: f64,
                room: usize,
            ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
                State::force_any_given_within(self, patterns, outcome, probability, room)
            }
            fn qubit_probabilities(&self) -> [f64; 64] {
                State::qubit_probabilities(self)
            }
            fn qubit_probabilities_of(&self, qubits: &[u8]) -> Vec<f64> {
                // The compiled few-qubit kernel (4-5x the generic loop of the inspector's).
                State::marginals_of(self, qubits)
            }
            fn board_distribution(&self, limit: Option<usize>) -> Vec<(u64, f64)> {
                State::board_distribution(self, limit)
            }
            fn try_board_distribution(&self, limit: Option<usize>) -> Result<Vec<(u64, f64)>, SimError> {
                State::try_board_distribution(self, limit)
            }
            fn reduced_density_matrix(&self, a: u8, b: u8) -> [[Complex<f64>; 4]; 4] {
                State::reduced_density_matrix(self, a, b)
            }
            fn amplitude_f64(&self, key: Key) -> Complex<f64> {
                to64(State::amplitude(self, key))
            }
            fn entries_f64(&self) -> Box<dyn Iterator<Item = (Key, Complex<f64>)> + '_> {
                Box::new(State::entries(self).map(|(k, a)| (k, to64(a))))
            }
            fn norm_sqr(&self) -> f64 {
                State::norm_sqr(self)
            }
            fn inner(&self, other: &Self) -> Complex<f64> {
                State::inner(self, other)
            }
            fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Key {
                State::sample(self, rng)
            }
        }
    )*};
}

local_backend!(f32, f64, crate::Exact);

/// Checks every pattern of a [`QuantumState::project_any`] (the error of the first
/// malformed one).
fn check_patterns(patterns: &[Predicate]) -> Result<(), SimError> {
    patterns.iter().try_for_each(|p| p.checked().map(|_| ()))
}

/// [`QuantumState::measure_keeping`] as a read followed by a projection (two passes): the
/// trait's default.
pub(crate) fn measure_keeping_by_parts<S: QuantumState>(
    state: &mut S,
    pred: Predicate,
    choose: &mut dyn FnMut(f64) -> Option<crate::Pick>,
) -> Result<Option<(f64, crate::Removed<S>)>, SimError> {
    let read = state.probability(pred);
    let Some(crate::Pick { outcome, given }) = choose(read) else {
        return Ok(None);
    };
    match given {
        Some(p) => state.force_keeping_given(pred, outcome, p),
        None => state.force_keeping(pred, outcome),
    }
    .map(Some)
}
