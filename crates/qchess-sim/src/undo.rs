//! Taking a pass back without a copy of the state (issue 10, Deliver 1): a projection that
//! keeps only what it threw away, and the inverse of a capture. Unitary gates are undone by
//! their inverse gates ([`State::iswap_inv`], [`State::merge`] for a split, ...); these two
//! are the operations that have no inverse gate.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::key::Predicate;
use crate::memory::Buffer;
use crate::state::{Sector, State};
use num_complex::Complex;

/// What a projection removed from a state, enough to put it back: the projected-out entries
/// (kept in the backend's own form, unnormalised) and the factor the survivors were scaled
/// by. Its memory is proportional to what the projection destroyed.
#[derive(Clone, Debug)]
pub struct Removed<S> {
    /// The removed entries, as a (sub-normalised) state of the same backend.
    pub(crate) part: S,
    /// `sqrt(kept mass)`: multiplying the survivors by it undoes the renormalisation;
    /// `None` when nothing was rescaled (nothing removed).
    pub(crate) restore: Option<f64>,
}

impl<S> Removed<S> {
    /// A record made by a backend from its own parts (for other [`crate::QuantumState`]
    /// implementations): the removed entries and the factor that undoes the survivors'
    /// renormalisation (`None` when they were not rescaled).
    pub fn new(part: S, restore: Option<f64>) -> Self {
        Self { part, restore }
    }

    /// The removed entries.
    pub fn part(&self) -> &S {
        &self.part
    }

    /// The factor that undoes the survivors' renormalisation, if they were rescaled.
    pub fn restore_factor(&self) -> Option<f64> {
        self.restore
    }

    /// Splits the record into its parts.
    pub fn into_parts(self) -> (S, Option<f64>) {
        (self.part, self.restore)
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

    /// Number of removed entries.
    pub fn len(&self) -> usize {
        self.part.len()
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
        let (mask, value) = self.check_predicate(pred)?;
        let (removed, gone, mass) = self.collect_removed(mask, value, outcome)?;
        if removed.sectors.is_empty() {
            if mass <= 0.0 {
                return Err(SimError::ZeroNorm);
            }
            return Ok((
                1.0,
                Removed {
                    part: removed,
                    restore: None,
                },
            ));
        }
        if !T::RENORMALIZES {
            // Exact states project without renormalising (their own `force`).
            let p = self.force(pred, outcome)?;
            return Ok((
                p,
                Removed {
                    part: removed,
                    restore: None,
                },
            ));
        }
        // `force`'s decision and arithmetic, with the masses summed by the copy pass.
        let p = Self::forced_probability(outcome, mass, mass + gone)?;
        self.project(mask, value, outcome, mass);
        let restore = Some(mass.sqrt());
        Ok((
            p,
            Removed {
                part: removed,
                restore,
            },
        ))
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
        use crate::kernels::scan::{BLOCK, map_blocks};
        use rayon::prelude::*;
        let out_of = |k: u64| (k & mask == value) != keep;
        // Removed entries per block of each sector (keys only): each block's removed entries
        // then go straight to their own slot of the record, all blocks in parallel.
        let block_counts: Vec<Vec<usize>> = self
            .sectors
            .iter()
            .map(|s| {
                map_blocks(s.keys.len(), |a, b| {
                    s.keys[a..b].iter().filter(|&&k| out_of(k)).count()
                })
            })
            .collect();
        let counts: Vec<usize> = block_counts.iter().map(|c| c.iter().sum()).collect();
        let total: usize = counts.iter().sum();
        // Room from the free pass buffers is already counted in the state's bytes (and its
        // pages are faulted in); only fresh memory is asked of the budget.
        // (Counted for a single removing sector only: two could not share one buffer.)
        let removing: Vec<usize> = counts.iter().copied().filter(|&n| n > 0).collect();
        let from_pool = match removing.as_slice() {
            [n] if self.pool.fitting_capacity(n + 1) > 0 => n + 1,
            _ => 0,
        };
        self.ask(total.saturating_sub(from_pool) * crate::memory::entry_bytes::<T>())?;
        let oom = |_| SimError::OutOfMemory { states: total };
        let mut sectors = Vec::new();
        sectors
            .try_reserve_exact(counts.iter().filter(|&&n| n > 0).count())
            .map_err(oom)?;
        let (mut gone, mut kept) = (0.0f64, 0.0f64);
        for ((s, &n), per_block) in self.sectors.iter().zip(&counts).zip(&block_counts) {
            if n == 0 {
                kept += crate::kernels::scan::norm_sqr(&s.amps);
                continue;
            }
            // A free pass buffer if one fits (warm pages: an undo gives its record's arrays
            // back to the pool, so apply / undo / apply reuses them), else fresh memory.
            // One spare slot, as the pool's fitting check above asks (an undo gives back
            // arrays of this capacity, which the next projection's record then fits).
            let mut buf = self.pool.take(n + 1)?;
            buf.ensure_initialized(n + 1)?;
            let (mut keys, mut amps) = (buf.keys, buf.amps);
            keys.truncate(n);
            amps.truncate(n);
            let mut slots = Vec::new();
            slots.try_reserve_exact(per_block.len()).map_err(oom)?;
            let (mut ks, mut as_) = (&mut keys[..], &mut amps[..]);
            for (b, &c) in per_block.iter().enumerate() {
                let (k, kr) = ks.split_at_mut(c);
                let (a, ar) = as_.split_at_mut(c);
                slots.push((b, k, a));
                (ks, as_) = (kr, ar);
            }
            let masses: Vec<(f64, f64)> = slots
                .into_par_iter()
                .with_max_len(1)
                .map(|(b, k, a)| {
                    let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(s.keys.len()));
                    copy_removed(&s.keys[lo..hi], &s.amps[lo..hi], out_of, k, a)
                })
                .collect();
            // Summed in block order: the same masses whatever the thread count.
            for (g, k) in masses {
                gone += g;
                kept += k;
            }
            sectors.push(Sector {
                ancillas: s.ancillas,
                keys,
                amps,
            });
        }
        Ok((self.with_sectors(sectors, usize::MAX), gone, kept))
    }

    /// Takes back a projection made by [`State::force_keeping`] (after every later pass has
    /// been taken back): scales the survivors back and merges the removed entries in.
    /// The merge needs room for the removed entries only; it is asked of the budget.
    pub fn unproject(&mut self, removed: Removed<Self>) -> Result<(), SimError> {
        let Removed { mut part, restore } = removed;
        if part.ancilla_count != self.ancilla_count {
            return Err(SimError::UndoMismatch {
                what: "a projection's record does not belong to this state",
            });
        }
        if part.perm != self.perm {
            // A later step rebuilt the state (a controlled capture) with another bit map:
            // map the removed keys to this one and sort them again.
            for sector in &mut part.sectors {
                let mut entries: Vec<(u64, Complex<T>)> = sector
                    .keys
                    .iter()
                    .zip(&sector.amps)
                    .map(|(&k, &a)| (self.perm.to_phys(part.perm.to_logical(k)), a))
                    .collect();
                entries.sort_unstable_by_key(|e| e.0);
                for (i, (k, a)) in entries.into_iter().enumerate() {
                    sector.keys[i] = k;
                    sector.amps[i] = a;
                }
            }
            part.perm = self.perm.clone();
        }
        let growth: usize = part.sectors.iter().map(|s| s.keys.len()).sum();
        self.ask(growth * crate::memory::entry_bytes::<T>())?;
        // Reserve everything first, so that a refusal changes nothing.
        let oom = |_| SimError::OutOfMemory { states: growth };
        let mut targets = Vec::new();
        targets.try_reserve_exact(part.sectors.len()).map_err(oom)?;
        for r in &part.sectors {
            match self.sectors.iter().position(|s| s.ancillas == r.ancillas) {
                Some(i) => {
                    self.sectors[i]
                        .keys
                        .try_reserve(r.keys.len())
                        .map_err(oom)?;
                    self.sectors[i]
                        .amps
                        .try_reserve(r.amps.len())
                        .map_err(oom)?;
                    targets.push(Some(i));
                }
                None => targets.push(None),
            }
        }
        self.sectors
            .try_reserve(targets.iter().filter(|t| t.is_none()).count())
            .map_err(oom)?;
        if let Some(f) = restore {
            let f = T::of_f64(f);
            for s in &mut self.sectors {
                for a in &mut s.amps {
                    *a = Complex::new(a.re * f, a.im * f);
                }
            }
        }
        for (r, target) in part.sectors.into_iter().zip(targets) {
            match target {
                Some(i) => {
                    merge_into(&mut self.sectors[i], &r);
                    // The record's arrays become a free pass buffer (pages kept warm for the
                    // next projection's record or pass); `finish_pass` bounds the pool.
                    self.pool.give(Buffer {
                        keys: r.keys,
                        amps: r.amps,
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
        // Reserve room in each base sector first, so that a refusal changes nothing.
        self.ask(growth * crate::memory::entry_bytes::<T>())?;
        let moved: Vec<usize> = (0..self.sectors.len())
            .filter(|&i| self.sectors[i].ancillas & fresh != 0)
            .collect();
        for &i in &moved {
            let base = self.sectors[i].ancillas & !fresh;
            let n = self.sectors[i].keys.len();
            if let Some(j) = self.sectors.iter().position(|s| s.ancillas == base) {
                self.sectors[j].keys.try_reserve(n).map_err(oom)?;
                self.sectors[j].amps.try_reserve(n).map_err(oom)?;
            }
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

/// Entries [`copy_removed`] stages on the stack before it copies them to their slot.
const STAGE: usize = 256;

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
    use crate::{Controls, Predicate, State};

    fn sample_state() -> State<f64> {
        let mut s = State::<f64>::classical(0b0000_0101);
        s.split(0, 3, 4, Controls::NONE).unwrap();
        s.split(2, 5, 6, Controls::NONE).unwrap();
        s.sqrt_iswap(3, 5, Controls::NONE).unwrap();
        s.iswap(4, 7, Controls::NONE).unwrap(); // a relabelling: the bit map is not identity
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
    fn projection_of_many_blocks_keeps_the_removed_entries_in_order() {
        use crate::{Complex, Key, Normalization};
        use rand::{Rng, SeedableRng};
        // Some 400 000 entries in two ancilla sectors: several parallel blocks per sector.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut entries: Vec<(Key, Complex<f64>)> = (0..400_000)
            .map(|_| {
                let key = Key {
                    board: rng.random::<u64>() & 0x3f_ffff,
                    ancillas: u128::from(rng.random::<bool>()),
                };
                let a = Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
                (key, a)
            })
            .collect();
        entries.sort_by_key(|e| e.0);
        entries.dedup_by_key(|e| e.0);
        let mut before = State::from_amplitudes(entries, Normalization::Renormalize).unwrap();
        before.iswap(2, 30, Controls::NONE).unwrap(); // physical and logical keys differ
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
            let kept: Vec<_> = removed.part().entries().collect();
            assert_eq!(gone, kept);
            s.unproject(removed).unwrap();
            assert!(close(&before, &s, 1e-15));
        }
    }
}
