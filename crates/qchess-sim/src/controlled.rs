//! The few controlled operations the Cantwell circuits need beyond the native gates: a
//! capture controlled on board qubits, an iSwap controlled on capture ancillas, and a
//! projection onto an arbitrary set of boards. Each first checks whether the plain gate (or
//! nothing) already does the same thing on this state; where the control genuinely splits
//! the state, each runs in place on the sector arrays (the capture's pass with a condition,
//! the slide's permutation kernel on the picked sectors, a filter), asking the memory budget
//! for what it allocates, never through a list of the entries.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::compact::PassExtras;
use crate::kernels::scan::map_blocks;
use crate::key::{Controls, Key, Normalization};
use crate::perm::map_key;
use crate::prefetch::{AHEAD, prefetch};
use crate::state::State;
use num_complex::Complex;

/// Binds `$out_of` to the cut of outcome `$outcome` of "some physical pattern of `$phys`
/// holds" (whether a key's entry goes: for outcome 1, no pattern holds on it; for outcome 0,
/// one does) and runs `$body`: over a fixed array of [`FIXED_PATTERNS`] when they fit, so
/// that the test of a key unrolls (a loop over a slice per key took most of a projection's
/// pass), over the slice otherwise.
macro_rules! with_cut {
    ($phys:expr, $outcome:expr, |$out_of:ident| $body:expr) => {{
        let phys: &[(u64, u64)] = $phys;
        let outcome: bool = $outcome;
        match fixed_patterns(phys) {
            Some(fixed) => {
                let $out_of = move |k: u64| any_fixed(&fixed, k) != outcome;
                $body
            }
            None => {
                let $out_of = move |k: u64| any_pattern(phys, k) != outcome;
                $body
            }
        }
    }};
}

impl<T: Amplitude> State<T> {
    /// Captures the piece on `q` into a fresh ancilla (iSwap(q, x): `|1>|0> -> i|0>|1>`) on
    /// the branches where `controls` hold. Returns the ancilla's index, or `None` when no
    /// branch has `q` occupied under the controls (then no ancilla is taken).
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b11);
    /// // Capture on qubit 0 only where qubit 1 is empty: never, so nothing happens.
    /// assert_eq!(s.capture_controlled(0, Controls::empty_path(0b10))?, None);
    /// assert_eq!(s.capture_controlled(0, Controls { zeros: 0, ones: 0b10 })?, Some(0));
    /// assert_eq!(s.amplitude(Key { board: 0b10, ancillas: 1 }).im, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn capture_controlled(
        &mut self,
        q: u8,
        controls: Controls,
    ) -> Result<Option<u32>, SimError> {
        let (fires, plain) = self.capture_flags(q, controls)?;
        if !fires {
            return Ok(None);
        }
        if plain {
            return Ok(Some(self.capture(q)?));
        }
        self.capture_where(q, controls).map(Some)
    }

    /// Whether a capture of `q` under `controls` would fire on some branch, and whether it
    /// would fire on every branch with `q` occupied (then it is a plain capture): the
    /// decision [`State::capture_controlled`] takes. A sharded state combines the pieces'
    /// flags (or, and) before every piece calls [`State::capture_where`].
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let s = State::<f64>::classical(0b11);
    /// // Qubit 1 is occupied wherever qubit 0 is: the control never holds.
    /// assert_eq!(s.capture_flags(0, Controls::empty_path(0b10))?, (false, false));
    /// assert_eq!(s.capture_flags(0, Controls::NONE)?, (true, true));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn capture_flags(&self, q: u8, controls: Controls) -> Result<(bool, bool), SimError> {
        if q >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: q });
        }
        let qbit = 1u64 << q;
        if controls.mask() & qbit != 0 {
            return Err(SimError::ControlOnTarget {
                overlap: controls.mask() & qbit,
            });
        }
        // On the physical keys, through the condition the controls are there.
        let (bit, cond) = (1u64 << self.perm.phys(q), self.cond_of(controls));
        let (mut fires, mut plain) = (false, true);
        for &k in self.sectors.iter().flat_map(|s| s.keys.iter()) {
            if k & bit != 0 {
                let hold = cond.holds(k);
                fires |= hold;
                plain &= hold;
            }
        }
        Ok((fires, plain))
    }

    /// Takes a fresh ancilla and moves into it the piece on `q` of every branch where
    /// `controls` hold (amplitude times `i`), even if no branch of this state fires (then
    /// only the ancilla count grows): a piece of a sharded state must number its ancillas
    /// like the others. No normalisation. Returns the ancilla's index.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// assert_eq!(s.capture_where(0, Controls { zeros: 0, ones: 0b10 })?, 0);
    /// assert_eq!((s.ancilla_count(), s.amplitude(Key::board(1)).re), (1, 1.0));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn capture_where(&mut self, q: u8, controls: Controls) -> Result<u32, SimError> {
        if q >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: q });
        }
        let qbit = 1u64 << q;
        if controls.mask() & qbit != 0 {
            return Err(SimError::ControlOnTarget {
                overlap: controls.mask() & qbit,
            });
        }
        // The plain capture's pass, on the branches where the controls hold: in place, the
        // moved entries' arrays asked of the memory budget first.
        let cond = self.cond_of(controls);
        self.capture_cond(q, cond)
    }

    /// iSwap(s, t) on the branches where any of the `ancillas` bits is set (an iSwap
    /// controlled on a capture having happened in that branch).
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let mut s = State::<f64>::classical(0b101);
    /// let x = s.capture(2)?; // every branch captured: a plain iSwap
    /// s.iswap_where_ancillas(0, 1, 1u128 << x)?;
    /// assert_eq!(s.amplitude(Key { board: 0b010, ancillas: 1 }).re, -1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap_where_ancillas(&mut self, s: u8, t: u8, ancillas: u128) -> Result<(), SimError> {
        if s >= 64 || t >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: s.max(t) });
        }
        if s == t {
            return Err(SimError::RepeatedQubit { qubit: s });
        }
        let (any, all) = self.ancilla_flags(ancillas);
        if !any {
            return Ok(());
        }
        if all {
            return self.iswap(s, t, Controls::NONE);
        }
        self.iswap_where_ancillas_always(s, t, ancillas)
    }

    /// Whether some branch, and whether every branch, has one of the `ancillas` bits set:
    /// the decision [`State::iswap_where_ancillas`] takes (a sharded state combines the
    /// pieces' flags).
    ///
    /// ```
    /// let mut s = qchess_sim::State::<f64>::classical(0b1);
    /// assert_eq!(s.ancilla_flags(1), (false, false));
    /// let x = s.capture(0)?;
    /// assert_eq!(s.ancilla_flags(1 << x), (true, true));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn ancilla_flags(&self, ancillas: u128) -> (bool, bool) {
        let (mut any, mut all) = (false, true);
        for s in &self.sectors {
            let c = s.ancillas & ancillas != 0;
            any |= c;
            all &= c;
        }
        (any, all)
    }

    /// iSwap(s, t) on the branches where some `ancillas` bit is set, always by moving the
    /// entries of those sectors (no relabelling shortcut, no normalisation): the per-piece
    /// step of [`State::iswap_where_ancillas`].
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let mut s = State::<f64>::classical(0b101);
    /// let x = s.capture(2)?;
    /// s.iswap_where_ancillas_always(0, 1, 1u128 << x)?;
    /// assert_eq!(s.amplitude(Key { board: 0b010, ancillas: 1 }).re, -1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap_where_ancillas_always(
        &mut self,
        s: u8,
        t: u8,
        ancillas: u128,
    ) -> Result<(), SimError> {
        if s >= 64 || t >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: s.max(t) });
        }
        if s == t {
            return Err(SimError::RepeatedQubit { qubit: s });
        }
        // The sectors with one of the bits set, each by the iSwap's permutation kernel (the
        // slide's): its scratch asked of the memory budget, the other sectors untouched.
        let (pa, pb) = (self.perm.phys(s), self.perm.phys(t));
        let always = self.cond_of(Controls::NONE);
        self.on_sectors(
            |a| a & ancillas != 0,
            |picked| {
                if picked.sectors.is_empty() {
                    return Ok(());
                }
                picked
                    .permute_pair(pa, pb, always, false, false)
                    .map(|_| ())
            },
        )
    }

    /// Keeps the basis states whose board satisfies `keep`, renormalised; returns the
    /// probability that was kept. Errors (changing nothing) when nothing would be kept. When
    /// every entry is kept the state is not touched and 1 is returned.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let p = s.project_boards(&|b| b == 0b10)?;
    /// assert!((p - 0.5).abs() < 1e-15);
    /// assert!((s.amplitude(Key::board(0b10)).im - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_boards(&mut self, keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<f64, SimError> {
        // Each physical key mapped to its board, the predicate asked of it.
        let table = self.perm.logical_table();
        let table = table.as_deref();
        self.project_where(move |k| !keep(map_key(table, k)), keep, true)
    }

    /// Keeps the basis states on whose board any of `patterns` holds, renormalised (a
    /// projection onto a union of native patterns, such as the failed outcome of eq. 23b's
    /// capture slide measurement); returns the probability kept. The same projection as
    /// [`State::project_boards`] with `|b| patterns.iter().any(|p| p.holds(b))`, bit for bit,
    /// but each pattern is mapped to the physical bits once, so that its two passes (the
    /// tally, the filter) compare keys as a [`State::force`]'s do instead of mapping each key
    /// to its board and calling a predicate on it. A malformed pattern is
    /// [`SimError::InvalidPredicate`]; no pattern, or none that holds anywhere, is
    /// [`SimError::ZeroProbabilityOutcome`]; nothing changes on error.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?; // 0b001, 0b010 and 0b100
    /// let p = s.project_any(&[Predicate::One(0), Predicate::One(2)])?;
    /// assert!((p - 0.75).abs() < 1e-15 && s.len() == 2);
    /// assert_eq!(s.amplitude(Key::board(0b010)).norm(), 0.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_any(&mut self, patterns: &[crate::Predicate]) -> Result<f64, SimError> {
        self.force_any(patterns, true)
    }

    /// Projects onto outcome `outcome` of the measurement "some pattern of `patterns`
    /// holds" and renormalises; returns the outcome's probability. Outcome 1 is
    /// [`State::project_any`]; outcome 0 keeps the boards on which none of them holds (such
    /// as eq. 23b's M1, the complement of a union of native patterns), in one pass of the
    /// same kind, each pattern mapped to the physical bits once. A malformed pattern is
    /// [`SimError::InvalidPredicate`]; an outcome with nothing kept is
    /// [`SimError::ZeroProbabilityOutcome`]; nothing changes on error. No pattern never
    /// holds: outcome 0 keeps everything.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?; // 0b001, 0b010 and 0b100
    /// let p = s.force_any(&[Predicate::One(0), Predicate::One(2)], false)?;
    /// assert!((p - 0.25).abs() < 1e-15 && s.len() == 1);
    /// assert!((s.amplitude(Key::board(0b010)).norm() - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_any(
        &mut self,
        patterns: &[crate::Predicate],
        outcome: bool,
    ) -> Result<f64, SimError> {
        let phys = self.phys_patterns(patterns)?;
        let keep = |b: u64| patterns.iter().any(|p| p.holds(b)) == outcome;
        with_cut!(&phys, outcome, |out_of| self
            .project_where(out_of, &keep, outcome))
    }

    /// The probabilities that some pattern of `patterns` holds and that none does, relative
    /// to the state's norm, each summed from its own entries (so that a small one keeps its
    /// digits): the read of the measurement [`State::force_any`] projects onto, in one pass
    /// over the keys (blocks in parallel, summed in block order: the same sums on any thread
    /// count), each pattern mapped to the physical bits once. Exactly `0.0` for an outcome
    /// no stored board with a non-zero weight has; `(0.0, 0.0)` for a state of zero norm.
    /// A malformed pattern is [`SimError::InvalidPredicate`].
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?; // 0b001, 0b010 and 0b100
    /// let (any, none) = s.probability_any(&[Predicate::One(0), Predicate::One(2)])?;
    /// assert!((any - 0.75).abs() < 1e-15 && (none - 0.25).abs() < 1e-15);
    /// assert_eq!(s.probability_any(&[Predicate::One(5)])?, (0.0, 1.0));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn probability_any(&self, patterns: &[crate::Predicate]) -> Result<(f64, f64), SimError> {
        let phys = self.phys_patterns(patterns)?;
        // The cut of outcome 1: an entry "goes" where no pattern holds. Up to four patterns
        // (a capture slide's through a path of three) from an array of four: the read is
        // all test, and four padding patterns cost about an eighth of it.
        let (yes, no) = match phys.as_slice() {
            few if few.len() <= 4 => {
                let fixed: [(u64, u64); 4] =
                    std::array::from_fn(|i| few.get(i).copied().unwrap_or((0, 1)));
                self.union_masses(move |k| !any_pattern(&fixed, k))
            }
            _ => with_cut!(&phys, true, |out_of| self.union_masses(out_of)),
        };
        let all = yes + no;
        Ok(if all > 0.0 {
            (yes / all, no / all)
        } else {
            (0.0, 0.0)
        })
    }

    /// The squared norms of the entries `out_of` keeps and of those it removes, each summed
    /// without a branch on the data in four lanes (as the probability scan sums), per block
    /// of each sector in parallel, in block order.
    fn union_masses(&self, out_of: impl Fn(u64) -> bool + Sync) -> (f64, f64) {
        let (mut kept, mut gone) = (0.0f64, 0.0f64);
        for s in &self.sectors {
            let blocks = map_blocks(s.keys.len(), |a, b| {
                let (mut kept, mut gone) = ([0.0f64; 4], [0.0f64; 4]);
                let (keys, amps) = (&s.keys[a..b], &s.amps[a..b]);
                let (kc, ac) = (keys.chunks_exact(4), amps.chunks_exact(4));
                let (kr, ar) = (kc.remainder(), ac.remainder());
                for (c, (k4, a4)) in kc.zip(ac).enumerate() {
                    // Hinted ahead as the probability scan's reads (`prefetch.rs`).
                    prefetch(keys, 4 * c + AHEAD);
                    prefetch(amps, 4 * c + AHEAD);
                    for j in 0..4 {
                        let m = crate::kernels::scan::norm2(a4[j]);
                        let out = out_of(k4[j]);
                        gone[j] += if out { m } else { 0.0 };
                        kept[j] += if out { 0.0 } else { m };
                    }
                }
                for (j, (&k, &a)) in kr.iter().zip(ar).enumerate() {
                    let m = crate::kernels::scan::norm2(a);
                    let out = out_of(k);
                    gone[j] += if out { m } else { 0.0 };
                    kept[j] += if out { 0.0 } else { m };
                }
                let sum = |x: [f64; 4]| (x[0] + x[1]) + (x[2] + x[3]);
                (sum(kept), sum(gone))
            });
            for (k, g) in blocks {
                kept += k;
                gone += g;
            }
        }
        (kept, gone)
    }

    /// `patterns` as `(mask, value)` on the physical bits, each checked.
    fn phys_patterns(&self, patterns: &[crate::Predicate]) -> Result<Vec<(u64, u64)>, SimError> {
        patterns.iter().map(|&p| self.check_predicate(p)).collect()
    }

    /// The projection of [`State::project_boards`] and [`State::project_any`]: `out_of` says
    /// of a physical key whether its entry goes, `keep` of a board whether it stays (the
    /// exact states' rebuild reads the entries by board).
    fn project_where(
        &mut self,
        out_of: impl Fn(u64) -> bool + Sync + Copy,
        keep: &(dyn Fn(u64) -> bool + Sync),
        outcome: bool,
    ) -> Result<f64, SimError> {
        let (mass, total, per_block) = self.board_tally(out_of);
        let removed: usize = per_block.iter().flatten().sum();
        if removed == 0 {
            return Ok(1.0);
        }
        if mass.is_nan() || mass <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        if !T::RENORMALIZES {
            // Exact states: rebuilt from the kept entries (their own normalisation). The list,
            // its merged copy and the new arrays are asked of the budget first.
            let n = self.len() - removed;
            let entry = std::mem::size_of::<(Key, Complex<T>)>();
            self.ask(n.saturating_mul(2 * entry + crate::memory::entry_bytes::<T>()))?;
            let mut kept = Vec::new();
            kept.try_reserve_exact(n)
                .map_err(|_| SimError::OutOfMemory { states: n })?;
            kept.extend(self.entries().filter(|(key, _)| keep(key.board)));
            self.rebuild(kept, Normalization::Renormalize)?;
            return Ok(if total > 0.0 { mass / total } else { 0.0 });
        }
        self.filter_boards(out_of, mass, &per_block, None);
        Ok(if total > 0.0 { mass / total } else { 0.0 })
    }

    /// [`State::project_boards`] that also returns the removed entries, so that
    /// [`State::unproject`] takes it back (the game's undo record of such a projection,
    /// instead of a copy of the whole state). The removed entries' arrays are asked of the
    /// memory budget and reserved before anything changes. A projection that keeps every
    /// entry changes nothing and returns an empty record. Exact states:
    /// [`SimError::Unsupported`] (a caller keeps a copy instead).
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let before: Vec<_> = s.entries().collect();
    /// let (p, removed) = s.project_boards_keeping(&|b| b == 0b10)?;
    /// assert!((p - 0.5).abs() < 1e-15 && s.len() == 1 && removed.len() == 1);
    /// s.unproject(removed)?;
    /// let after: Vec<_> = s.entries().collect();
    /// assert!(before.iter().zip(&after).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).norm() < 1e-15));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_boards_keeping(
        &mut self,
        keep: &(dyn Fn(u64) -> bool + Sync),
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        let table = self.perm.logical_table();
        let table = table.as_deref();
        self.project_keeping_where(move |k| !keep(map_key(table, k)), true)
    }

    /// [`State::project_any`] that also returns the removed entries, as
    /// [`State::project_boards_keeping`] does (the same record, bit for bit).
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?;
    /// let before: Vec<_> = s.entries().collect();
    /// let (p, removed) = s.project_any_keeping(&[Predicate::One(0), Predicate::One(2)])?;
    /// assert!((p - 0.75).abs() < 1e-15 && s.len() == 2 && removed.len() == 1);
    /// s.unproject(removed)?;
    /// let after: Vec<_> = s.entries().collect();
    /// assert!(before.iter().zip(&after).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).norm() < 1e-15));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_any_keeping(
        &mut self,
        patterns: &[crate::Predicate],
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        self.force_any_keeping(patterns, true)
    }

    /// [`State::force_any`] that also returns the removed entries, as
    /// [`State::project_any_keeping`] does for outcome 1 (the same record, bit for bit).
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?;
    /// let before: Vec<_> = s.entries().collect();
    /// let (p, removed) = s.force_any_keeping(&[Predicate::One(0), Predicate::One(2)], false)?;
    /// assert!((p - 0.25).abs() < 1e-15 && s.len() == 1 && removed.len() == 2);
    /// s.unproject(removed)?;
    /// let after: Vec<_> = s.entries().collect();
    /// assert!(before.iter().zip(&after).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).norm() < 1e-15));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_any_keeping(
        &mut self,
        patterns: &[crate::Predicate],
        outcome: bool,
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        let phys = self.phys_patterns(patterns)?;
        with_cut!(&phys, outcome, |out_of| self
            .project_keeping_where(out_of, outcome))
    }

    /// [`State::project_any_keeping`] for a caller that knows the probability of the
    /// patterns' union (`probability`, positive, at most 1; as a measurement read it
    /// before choosing its outcome): the survivors are scaled by `1 / sqrt(probability)` in
    /// the projection's pass, no tally of the masses comes first (on one thread a sample of
    /// the keys sizes the record, as [`State::force_keeping_given`] does), and the qubit
    /// marginals of the state after are summed in the same pass, as
    /// [`State::force_keeping_given_marginals`] returns them (`None` when nothing was
    /// removed). The record takes the projection back ([`State::unproject`]). Errors as
    /// [`State::project_any`]'s and [`State::force_keeping_given`]'s; nothing changes on
    /// error. Exact states: [`State::project_any_keeping`] (the probability is theirs).
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?;
    /// let union = [Predicate::One(0), Predicate::One(2)];
    /// let (p, removed, marginals) = s.project_any_given_marginals(&union, 0.75)?;
    /// assert_eq!((p, s.len(), removed.len()), (0.75, 2, 1));
    /// let m = marginals.expect("a branch was removed");
    /// assert!((m[0] - 2.0 / 3.0).abs() < 1e-15 && m[1] == 0.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_any_given_marginals(
        &mut self,
        patterns: &[crate::Predicate],
        probability: f64,
    ) -> Result<crate::undo::Projected<Self>, SimError> {
        self.force_any_given_marginals(patterns, true, probability)
    }

    /// [`State::force_any_keeping`] for a caller that knows the outcome's probability
    /// (`probability`, positive, at most 1; as [`State::probability_any`] read it before
    /// the outcome was chosen), as [`State::project_any_given_marginals`] for outcome 1: the
    /// survivors scaled in the projection's pass, the marginals after it summed there.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?;
    /// let union = [Predicate::One(0), Predicate::One(2)];
    /// let (p, removed, marginals) = s.force_any_given_marginals(&union, false, 0.25)?;
    /// assert_eq!((p, s.len(), removed.len()), (0.25, 1, 2));
    /// let m = marginals.expect("a branch was removed");
    /// assert!((m[1] - 1.0).abs() < 1e-15 && m[0] == 0.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn force_any_given_marginals(
        &mut self,
        patterns: &[crate::Predicate],
        outcome: bool,
        probability: f64,
    ) -> Result<crate::undo::Projected<Self>, SimError> {
        if !T::RENORMALIZES {
            let (p, removed) = self.force_any_keeping(patterns, outcome)?;
            return Ok((p, removed, None));
        }
        let phys = self.given_patterns(patterns, outcome, probability)?;
        let low = low_bit(&phys);
        with_cut!(&phys, outcome, |out_of| {
            self.project_keeping_by((out_of, low), outcome, true, Some(probability), None)
        })
    }

    /// [`State::project_any_given_marginals`] for a caller that keeps the undo record only
    /// when it takes at most `room` bytes, as [`State::force_given_marginals_within`]:
    /// `None` in place of the record when the removed entries were dropped in the
    /// projection's pass instead (a count of them decides first; nothing can take the
    /// projection back then). The state after, the probability and the marginals are
    /// those of [`State::project_any_given_marginals`], bit for bit, record or not.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?;
    /// let mut kept = s.clone();
    /// let union = [Predicate::One(0), Predicate::One(2)];
    /// let (p, removed, _) = s.project_any_given_within(&union, 0.75, 0)?;
    /// assert!(removed.is_none() && p == 0.75);
    /// let (_, record, _) = kept.project_any_given_within(&union, 0.75, 1 << 20)?;
    /// assert_eq!(record.map(|r| r.len()), Some(1));
    /// assert_eq!(s.entries().collect::<Vec<_>>(), kept.entries().collect::<Vec<_>>());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn project_any_given_within(
        &mut self,
        patterns: &[crate::Predicate],
        probability: f64,
        room: usize,
    ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
        self.force_any_given_within(patterns, true, probability, room)
    }

    /// [`State::force_any_given_marginals`] for a caller that keeps the undo record only
    /// when it takes at most `room` bytes, as [`State::project_any_given_within`] for
    /// outcome 1. The state after, the probability and the marginals are those of
    /// [`State::force_any_given_marginals`], bit for bit, record or not.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap(1, 2, Controls::NONE)?;
    /// let mut kept = s.clone();
    /// let union = [Predicate::One(0), Predicate::One(2)];
    /// let (p, removed, _) = s.force_any_given_within(&union, false, 0.25, 0)?;
    /// assert!(removed.is_none() && p == 0.25);
    /// let (_, record, _) = kept.force_any_given_within(&union, false, 0.25, 1 << 20)?;
    /// assert_eq!(record.map(|r| r.len()), Some(2));
    /// assert_eq!(s.entries().collect::<Vec<_>>(), kept.entries().collect::<Vec<_>>());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    #[allow(clippy::type_complexity)]
    pub fn force_any_given_within(
        &mut self,
        patterns: &[crate::Predicate],
        outcome: bool,
        probability: f64,
        room: usize,
    ) -> Result<(f64, Option<crate::Removed<Self>>, Option<[f64; 64]>), SimError> {
        let entry = crate::memory::entry_bytes::<T>();
        if !T::RENORMALIZES || self.len().saturating_mul(entry) <= room {
            let (p, removed, marginals) =
                self.force_any_given_marginals(patterns, outcome, probability)?;
            return Ok((p, Some(removed), marginals));
        }
        let phys = self.given_patterns(patterns, outcome, probability)?;
        let low = low_bit(&phys);
        with_cut!(&phys, outcome, |out_of| {
            let counted = self.removed_per_block(out_of);
            // The record when its entries fit the room; the lean pass drops them otherwise.
            let record = self.record_entries(&counted.0).saturating_mul(entry) <= room;
            let cut = (out_of, low);
            let (p, removed, marginals) =
                self.project_counted(cut, outcome, true, Some(probability), counted, record)?;
            Ok((p, record.then_some(removed), marginals))
        })
    }

    /// The physical patterns of a projection onto outcome `outcome` of their union with a
    /// caller's probability, checked (each well formed; at least one for outcome 1, which
    /// no pattern never holds; the probability as [`State::force_keeping_given`] checks it).
    fn given_patterns(
        &self,
        patterns: &[crate::Predicate],
        outcome: bool,
        probability: f64,
    ) -> Result<Vec<(u64, u64)>, SimError> {
        let phys = self.phys_patterns(patterns)?;
        if phys.is_empty() && outcome {
            // Nothing is kept.
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        Self::check_given_probability(outcome, probability)?;
        Ok(phys)
    }

    /// The recording projection of [`State::project_boards_keeping`] and
    /// [`State::project_any_keeping`]; `out_of` says of a physical key whether its entry goes.
    fn project_keeping_where(
        &mut self,
        out_of: impl Fn(u64) -> bool + Sync + Copy,
        outcome: bool,
    ) -> Result<(f64, crate::Removed<Self>), SimError> {
        if !T::RENORMALIZES {
            return Err(SimError::Unsupported {
                what: "projections onto a set of boards with undo records on exact states",
            });
        }
        // The kept mass and the removed entries of each block of each sector, in one pass.
        let (mass, total, per_block) = self.board_tally(out_of);
        let counts: Vec<usize> = per_block.iter().map(|c| c.iter().sum()).collect();
        let removed: usize = counts.iter().sum();
        if removed == 0 {
            return Ok((
                1.0,
                crate::Removed::new(self.with_sectors(Vec::new(), usize::MAX), None),
            ));
        }
        if mass.is_nan() || mass <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: 0.0,
            });
        }
        // The removed entries' arrays (one per sector that loses entries, each exactly its
        // length, from the free pass buffers where one fits), or the survivors' where a
        // sector loses more than half (the old arrays are then the record), asked of the
        // budget first.
        let (inverted, mut records) = self.recording_buffers(&counts)?;
        let held = self.bytes() + records.iter().map(|r| r.bytes()).sum::<usize>();
        self.peak = self.peak.max(held);
        self.filter_boards(out_of, mass, &per_block, Some((&mut records, &inverted)));
        let part = self.with_sectors(records, usize::MAX);
        let p = if total > 0.0 { mass / total } else { 0.0 };
        Ok((p, crate::Removed::new(part, Some(mass.sqrt()))))
    }

    /// The in-place pass of a projection onto the boards `keep` holds for, once
    /// [`State::board_tally`] counted what each block of each sector loses (`per_block`):
    /// each sector's kept entries moved down in order and scaled by `1/sqrt(mass)`, the
    /// others copied (unscaled) to `records` when given (one index-writable record per
    /// sector that loses entries, in order, each exactly its length; where the flag beside
    /// them says the sector loses more than half, the kept ones written out to it instead
    /// and the arrays swapped, so that the old arrays are the record), the room they left
    /// given back. The pass of the measurements' projection ([`split_project`]): block jobs
    /// in parallel on a large sector, the same entries bit for bit on any thread count.
    fn filter_boards(
        &mut self,
        out_of: impl Fn(u64) -> bool + Sync + Copy,
        mass: f64,
        per_block: &[Vec<usize>],
        records: Option<(&mut Vec<crate::state::Sector<T>>, &[bool])>,
    ) {
        let scale = T::of_f64(1.0 / mass.sqrt());
        let record = records.is_some();
        let (mut next, inverted) = match records {
            Some((r, inv)) => (r.iter_mut(), inv),
            None => ([].iter_mut(), &[][..]),
        };
        for (i, (s, per_block)) in self.sectors.iter_mut().zip(per_block).enumerate() {
            let n: usize = per_block.iter().sum();
            if n == 0 {
                crate::kernels::scan::scale_amps(&mut s.amps, scale);
                continue;
            }
            let len = s.keys.len();
            // With a record, a sector that loses more than half writes its survivors out
            // (`State::recording_buffers` made their arrays).
            let invert = inverted.get(i).copied().unwrap_or(false);
            let mut rec = record.then(|| {
                next.next()
                    .expect("one record per sector that loses entries")
            });
            let extra = PassExtras {
                marginals: false,
                scale: Some(scale),
                record,
                run_shift: 0,
                invert,
            };
            crate::undo::project_sector(s, per_block, rec.as_deref_mut(), out_of, extra);
            if let Some(r) = rec.filter(|_| invert) {
                // No probability check follows: the record's room above it goes now.
                crate::undo::shrink_record(r);
            }
            let kept = len - n;
            s.keys.truncate(kept);
            s.amps.truncate(kept);
            s.keys.shrink_to_fit();
            s.amps.shrink_to_fit();
        }
        self.finish_pass();
    }

    /// `(mass of the boards satisfying keep, total mass, whether every entry is kept)`: what
    /// [`State::project_boards`] decides on (a sharded state sums the pieces' masses).
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let (kept, total, all) = s.board_masses(&|b| b == 0b10);
    /// assert!((kept - 0.5).abs() < 1e-15 && (total - 1.0).abs() < 1e-15 && !all);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn board_masses(&self, keep: &(dyn Fn(u64) -> bool + Sync)) -> (f64, f64, bool) {
        let table = self.perm.logical_table();
        let table = table.as_deref();
        let (kept, total, per_block) = self.board_tally(move |k| !keep(map_key(table, k)));
        (kept, total, per_block.iter().flatten().all(|&n| n == 0))
    }

    /// The mass of the entries `out_of` keeps, the mass of all entries ([`State::norm_sqr`]
    /// bit for bit: each block summed in order, as it sums) and, for each block of
    /// [`BLOCK`](crate::kernels::scan::BLOCK) entries of each sector, how many entries it
    /// removes: one pass over the physical keys (no listing of the entries), its blocks in
    /// parallel unless the cores are busy. Each block's masses are summed in order and the
    /// blocks' in block and sector order, so the sums are the same bit for bit on any thread
    /// count.
    fn board_tally(&self, out_of: impl Fn(u64) -> bool + Sync) -> (f64, f64, Vec<Vec<usize>>) {
        let (mut kept, mut total) = (0.0, 0.0);
        let mut per_block = Vec::with_capacity(self.sectors.len());
        for s in &self.sectors {
            let blocks = map_blocks(s.keys.len(), |a, b| {
                let (mut mass, mut all, mut gone) = (0.0f64, 0.0f64, 0usize);
                // Without a branch on the data (the boards kept and dropped may alternate
                // entry by entry): the mass of a dropped entry is selected away.
                for (&k, &amp) in s.keys[a..b].iter().zip(&s.amps[a..b]) {
                    let out = out_of(k);
                    let m = crate::kernels::scan::norm2(amp);
                    mass += if out { 0.0 } else { m };
                    all += m;
                    gone += usize::from(out);
                }
                (mass, all, gone)
            });
            kept += blocks.iter().map(|b| b.0).sum::<f64>();
            total += blocks.iter().map(|b| b.1).sum::<f64>();
            per_block.push(blocks.into_iter().map(|b| b.2).collect());
        }
        (kept, total, per_block)
    }

    /// Keeps the boards satisfying `keep`, each amplitude scaled by `1/sqrt(mass)` (no
    /// normalisation of its own): the per-piece step of a sharded [`State::project_boards`],
    /// with the global kept mass. `mass` must be positive and finite. An
    /// [`Exact`](crate::Exact) state is not scaled: it stays exact and unnormalised, with
    /// the probabilities of [`State::project_boards`].
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.project_boards_with_mass(&|b| b == 0b10, 0.5)?;
    /// assert!((s.amplitude(Key::board(0b10)).im - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_boards_with_mass(
        &mut self,
        keep: &(dyn Fn(u64) -> bool + Sync),
        mass: f64,
    ) -> Result<(), SimError> {
        *self = self.projected_boards(keep, mass)?;
        Ok(())
    }

    /// What [`State::project_boards_with_mass`] makes of this state, built beside it (this
    /// state unchanged, the new one under its memory budget and cap; the kept entries' list
    /// and arrays asked of that budget first, [`SimError::StateTooLarge`] when they do not
    /// fit): for a sharded state,
    /// whose ranks must all agree that every piece could be built before any piece is
    /// replaced (a projection cannot be taken back).
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let p = s.projected_boards(&|b| b == 0b10, 0.5)?;
    /// assert_eq!((s.len(), p.len()), (2, 1));
    /// assert!((p.amplitude(Key::board(0b10)).im - 1.0).abs() < 1e-15);
    /// // No room beside the state for the kept entries: refused, nothing made.
    /// let tight = s.clone().with_memory_budget(s.bytes());
    /// let refused = tight.projected_boards(&|b| b == 0b10, 0.5);
    /// assert!(matches!(refused, Err(qchess_sim::SimError::StateTooLarge { .. })));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn projected_boards(
        &self,
        keep: &(dyn Fn(u64) -> bool + Sync),
        mass: f64,
    ) -> Result<State<T>, SimError> {
        if !(mass.is_finite() && mass > 0.0) {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome: true,
                probability: 0.0,
            });
        }
        let scale = Self::projection_scale(mass);
        // The list of the kept entries and the arrays built from it, beside this state:
        // asked of the budget and reserved before anything is made.
        let n = self.entries().filter(|(key, _)| keep(key.board)).count();
        let entry = std::mem::size_of::<(Key, Complex<T>)>();
        self.ask(n.saturating_mul(entry + 8 + std::mem::size_of::<Complex<T>>()))?;
        let mut kept = Vec::new();
        kept.try_reserve_exact(n)
            .map_err(|_| SimError::OutOfMemory { states: n })?;
        kept.extend(
            self.entries()
                .filter(|(key, _)| keep(key.board))
                .map(|(k, a)| (k, a * scale)),
        );
        State::from_shard_budgeted(
            kept,
            self.ancilla_count(),
            self.cap(),
            Some(self.memory_budget()),
        )
    }

    /// Replaces the state by one holding `entries`, keeping its size cap.
    fn rebuild(
        &mut self,
        entries: Vec<(Key, Complex<T>)>,
        normalization: Normalization,
    ) -> Result<(), SimError> {
        // Exact states are kept unnormalised (their norm is not 1 after a measurement).
        let normalization = if T::RENORMALIZES {
            normalization
        } else {
            Normalization::Renormalize
        };
        let cap = self.cap();
        let mut fresh = State::from_amplitudes(entries, normalization)?.with_cap(cap);
        fresh.set_memory_budget(self.memory_budget());
        if let Some(s) =
            (&mut fresh as &mut dyn std::any::Any).downcast_mut::<State<crate::Exact>>()
        {
            s.rescale_exact();
        }
        *self = fresh;
        Ok(())
    }
}

/// Whether any `(mask, value)` of `patterns` holds for the physical key `k` (without a branch
/// on the data: the patterns are few, and the entries they keep may alternate).
#[inline(always)]
fn any_pattern(patterns: &[(u64, u64)], k: u64) -> bool {
    patterns
        .iter()
        .fold(false, |any, &(m, v)| any | (k & m == v))
}

/// The most patterns a projection onto their union tests from a fixed array
/// ([`fixed_patterns`]): eq. 23b's failed outcome has one more than its path's squares
/// (at most seven on a board).
const FIXED_PATTERNS: usize = 8;

/// `patterns` in a fixed array, the places after them filled with a pattern that never
/// holds (`k & 0 == 1`), or `None` when there are more than [`FIXED_PATTERNS`].
fn fixed_patterns(patterns: &[(u64, u64)]) -> Option<[(u64, u64); FIXED_PATTERNS]> {
    (patterns.len() <= FIXED_PATTERNS)
        .then(|| std::array::from_fn(|i| patterns.get(i).copied().unwrap_or((0, 1))))
}

/// [`any_pattern`] over a fixed array (its length known where it is inlined: unrolled).
#[inline(always)]
fn any_fixed(patterns: &[(u64, u64); FIXED_PATTERNS], k: u64) -> bool {
    any_pattern(patterns, k)
}

/// The lowest key bit a union of `patterns` reads (0 for none).
fn low_bit(patterns: &[(u64, u64)]) -> u32 {
    patterns
        .iter()
        .map(|&(m, _)| m.trailing_zeros())
        .min()
        .unwrap_or(0)
}
