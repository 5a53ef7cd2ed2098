//! The recording projection's passes: the undo record sized from a sample or a count,
//! the in-place and the inverted passes, the whole-record pass, and the buffers they write.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::compact::{PassExtras, STAGE, split_project};
use crate::kernels::scan::BLOCK;
use crate::memory::Buffer;
use crate::state::{Sector, State};
use num_complex::Complex;

use super::take_back::merge_into;
use super::{Projected, Removed};

/// The sample that sizes an undo record before a one-thread projection
/// (`State::estimate_removed`) reads [`SAMPLE_RUN`] consecutive keys (about a cache line) in
/// every window of this many: at 1.5 x 10^6 keys, about 2 900 runs, against a count that
/// reads every key. (One key in every 64 cost about two thirds of the count it saves: each
/// read is a miss.)
pub(super) const SAMPLE_STRIDE: usize = 512;

/// Consecutive keys the sample reads in each window of [`SAMPLE_STRIDE`].
const SAMPLE_RUN: usize = 8;

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
pub(super) fn sampled(j: usize, n: usize) -> std::ops::Range<usize> {
    let jitter = ((j as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize;
    let start = (j * SAMPLE_STRIDE + jitter % (SAMPLE_STRIDE - SAMPLE_RUN + 1)).min(n - 1);
    start..(start + SAMPLE_RUN).min(n)
}

/// What a sector loses in a projection, as `State::estimate_removed` finds it.
#[derive(Clone, Copy, Debug)]
pub(super) enum Loses {
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

impl<T: Amplitude> State<T> {
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
    pub(super) fn estimate_removed(
        &self,
        out_of: impl Fn(u64) -> bool + Copy,
    ) -> Option<Vec<Loses>> {
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
    pub(super) fn collect_removed(
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
