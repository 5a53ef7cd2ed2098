//! Taking a projection or a capture back: the removed entries merged in, the survivors
//! scaled back, whole records swapped in.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::memory::Buffer;
use crate::state::{Sector, State};
use num_complex::Complex;

use super::Removed;

impl<T: Amplitude> State<T> {
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

/// Merges `from` (sorted, disjoint keys) into `into` (sorted) in place, from the back.
pub(super) fn merge_into<T: Amplitude>(into: &mut Sector<T>, from: &Sector<T>) {
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
