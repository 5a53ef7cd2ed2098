//! The parallel in-place projection of a sector: block jobs that compact the kept entries
//! straight to their final places (handing regions down through [`Regions`]), and, for an
//! undoable projection, copy the removed ones to a record. The one projection kernel of
//! [`State::measure`](crate::State::measure) / [`State::force`](crate::State::force) (no
//! record) and of [`State::force_keeping`](crate::State::force_keeping) and the measuring
//! move (with the record, the kept masses and the marginals).

use crate::amplitude::Amplitude;
use crate::kernels::handoff::Regions;
use crate::kernels::pair::SliceSink;
use crate::kernels::scan::{BLOCK, BitMasses, add_bit_masses, compact_range, move_whole, one_run};
use num_complex::Complex;

/// Entries a block job (and the undo record's `copy_removed`) stages on the stack before it
/// copies them to their places.
pub(crate) const STAGE: usize = 256;
// `s & (STAGE - 1)` indexes the stage without a bounds check (`s < STAGE` in a chunk).
const _: () = assert!(STAGE.is_power_of_two());

/// What [`split_project`] summed over one block of [`BLOCK`] entries.
pub(crate) struct BlockSums {
    /// Squared norm of the block's removed entries.
    pub(crate) gone: f64,
    /// Squared norm of its kept entries.
    pub(crate) kept: f64,
    /// The kept entries' bit masses, as multiplied by the pass's scale (when asked; zero
    /// otherwise).
    pub(crate) masses: BitMasses,
}

/// What the fused projection pass does beside moving entries: sum the kept entries' bit
/// masses (`marginals`), multiply the kept amplitudes by `scale`.
#[derive(Clone, Copy)]
pub(crate) struct PassExtras<T> {
    /// Sum the kept entries' bit masses.
    pub(crate) marginals: bool,
    /// Multiply the kept amplitudes by this factor.
    pub(crate) scale: Option<T>,
    /// Copy the removed entries to the record; `false` drops them (the record slices are
    /// then empty).
    pub(crate) record: bool,
    /// The lowest key bit `out_of` reads (a predicate's mask's lowest bit), so that sorted
    /// keys agreeing from it up are all removed or all kept: the lean pass without record
    /// then skips, unread, a chunk whose first and last keys agree there and that it
    /// removes (`scan::one_run`). 0 where nothing is known (no two distinct keys agree).
    pub(crate) run_shift: u32,
    /// The roles of the two destinations swapped (only with [`PassExtras::record`]): the
    /// kept entries (multiplied by `scale`, their masses summed as ever) go out to the
    /// record's slices and the removed ones (unscaled) are compacted in place to the
    /// sector's front. A projection that removes more than half of its sector writes the
    /// fewer entries out this way, so that it never holds more than 1.5x the sector (issue
    /// 10's peak target); the caller then swaps the arrays. The kept entries, the removed
    /// ones and every block sum are those of the plain pass, bit for bit.
    pub(crate) invert: bool,
}

/// The fused pass of [`State::force_keeping`](crate::State::force_keeping) on one sector:
/// every block's removed entries (`per_block[b]` of them, where `out_of(key)`) go, in order,
/// to `rec_keys` / `rec_amps` (with room for all of them; streamed, see `stream.rs`) when
/// [`PassExtras::record`], and are dropped otherwise; the kept entries are compacted in
/// place to the sector's front, unscaled or multiplied by `scale` when given. Returns the block sums in block
/// order; the bit masses of the kept entries are summed (into [`BlockSums::masses`]) only
/// when `marginals`.
///
/// Every block is its own job ([`project_block`]), claimed in order: it writes its removed
/// entries to its own slice of the record (offsets from `per_block`) and its kept entries
/// straight to their final places (offsets from `per_block` too), taking the places below its
/// block from the finished blocks under it ([`Regions`]). When [`projects_in_blocks`], as
/// many workers as the pool has threads claim the blocks; otherwise the calling thread runs
/// them all in order, or, with a record, makes one pass over the sector in order
/// ([`InOrder`], the same results). With a record, `rec_keys` /
/// `rec_amps` are exactly the removed entries' length (index-writable, see
/// `State::record_buffers`); without, they are empty.
/// Every entry and every block sum is computed the same way whichever thread runs its
/// block, so the result is bit-identical for any thread count.
pub(crate) fn split_project<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    per_block: &[usize],
    rec_keys: &mut [u64],
    rec_amps: &mut [Complex<T>],
    out_of: impl Fn(u64) -> bool + Sync + Copy,
    extra: PassExtras<T>,
) -> Vec<BlockSums> {
    let in_order = extra.record && !projects_in_blocks(keys.len());
    split_project_with(
        keys, amps, per_block, rec_keys, rec_amps, out_of, extra, in_order,
    )
}

/// [`split_project`], by the pass in order ([`InOrder`]) when `in_order` (asked only with a record)
/// and by the block jobs otherwise: the same results bit for bit.
#[allow(clippy::too_many_arguments)]
fn split_project_with<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    per_block: &[usize],
    rec_keys: &mut [u64],
    rec_amps: &mut [Complex<T>],
    out_of: impl Fn(u64) -> bool + Sync + Copy,
    extra: PassExtras<T>,
    in_order: bool,
) -> Vec<BlockSums> {
    let n = keys.len();
    let removed: usize = per_block.iter().sum();
    let invert = extra.record && extra.invert;
    debug_assert!(extra.record || !extra.invert);
    // The entries written out: the removed ones, or the kept ones when inverted.
    let recorded = match (extra.record, invert) {
        (false, _) => 0,
        (true, false) => removed,
        (true, true) => n - removed,
    };
    debug_assert_eq!((rec_keys.len(), rec_amps.len()), (recorded, recorded));
    if in_order {
        debug_assert!(extra.record);
        // One thread: one pass in order, the entries that stay compacted in place (no
        // offsets).
        let mut pass = InOrder::new();
        let rec = (rec_keys, rec_amps);
        let done = pass.run(
            keys,
            amps,
            rec,
            out_of,
            (extra.scale, extra.marginals, invert),
            true,
        );
        debug_assert!(done && pass.recorded() == recorded);
        return pass.finish();
    }
    // Where each block's entries that stay go: after all those of the blocks before (the
    // kept ones, or the removed ones when inverted).
    let stays = |len: usize, r: usize| if invert { r } else { len - r };
    let mut dest = Vec::with_capacity(per_block.len() + 1);
    dest.push(0usize);
    for (b, &r) in per_block.iter().enumerate() {
        let len = ((b + 1) * BLOCK).min(n) - b * BLOCK;
        dest.push(dest[b] + stays(len, r));
    }
    let stay_total = dest[per_block.len()];
    let mut tasks = Vec::with_capacity(per_block.len());
    let (mut rk, mut ra) = (rec_keys, rec_amps);
    for ((kb, ab), &r) in keys
        .chunks_mut(BLOCK)
        .zip(amps.chunks_mut(BLOCK))
        .zip(per_block)
    {
        // The block's slot of the record: the entries it writes out.
        let r = if extra.record {
            kb.len() - stays(kb.len(), r)
        } else {
            0
        };
        let (k1, k2) = std::mem::take(&mut rk).split_at_mut(r);
        let (a1, a2) = std::mem::take(&mut ra).split_at_mut(r);
        (rk, ra) = (k2, a2);
        tasks.push(std::sync::Mutex::new(Some(BlockJob {
            keys: kb,
            amps: ab,
            rec_keys: k1,
            rec_amps: a1,
        })));
    }
    let regions = Regions::new();
    let sums: Vec<std::sync::Mutex<Option<BlockSums>>> = (0..tasks.len())
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let worker = || {
        let _watch = regions.watch();
        loop {
            // Blocks are claimed in increasing order (see `handoff`).
            let b = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(slot) = tasks.get(b) else {
                break;
            };
            let job = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(job) = job {
                let to = (dest[b], dest[b + 1]);
                // The lean pass without record (a bare measurement) in its own copy, so
                // that the recording passes compile as they did without it.
                let lean = extra.scale.is_some() && !extra.marginals;
                let s = if extra.record || !lean {
                    project_block::<T, false>(b, job, to, &regions, out_of, extra)
                } else {
                    project_block::<T, true>(b, job, to, &regions, out_of, extra)
                };
                *sums[b].lock().unwrap_or_else(|e| e.into_inner()) = Some(s);
            }
        }
    };
    if projects_in_blocks(n) {
        let workers = rayon::current_num_threads().min(tasks.len()).max(1);
        rayon::scope(|sc| {
            for _ in 1..workers {
                sc.spawn(|_| worker());
            }
            worker();
        });
    } else {
        // One worker, the calling thread: the blocks in order, none ever waits.
        worker();
    }
    let sums = sums
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every block job ran")
        })
        .collect();
    debug_assert_eq!(
        stay_total + recorded,
        if extra.record { n } else { stay_total }
    );
    debug_assert_eq!(stay_total, if invert { removed } else { n - removed });
    sums
}

/// [`split_project`] with a record on the calling thread alone (the pass in order): one pass
/// over the sector in order, each kept entry written straight to its final place (never past
/// the entry being read), each removed one staged and streamed to the record. The masses
/// (when no scale is given) are summed per block exactly as [`project_block`] sums them, in
/// two lanes by the entry's parity in its block, and with `marginals` the bit masses of each
/// chunk's kept entries are summed from their final places right after they were written
/// (still in the first-level cache), as [`project_block`] sums them from its stage: so the
/// block sums, the kept entries and the record are bit-identical to the block jobs'.
/// (On one thread the staged block jobs cost more: their kept entries go through a stage
/// too, and those below their block are written by streaming stores; the one-thread
/// measuring move's paired ratio fell from 1.50 to 1.26 at 1.49e6, docs/benchmarks.md.)
///
/// The pass can stop before a chunk whose removed entries might not fit in the record it was
/// lent, and go on from there with a longer one ([`InOrder::run`]): the undoable projection
/// of one thread uses that to write its record without counting the removed entries first
/// (`State::force_keeping`).
pub(crate) struct InOrder {
    /// The next entry to read: a chunk's start.
    pos: usize,
    /// The next kept place (the kept entries so far: `[0, w)`).
    w: usize,
    /// Removed entries written to the record so far.
    recorded: usize,
    /// The current block's masses so far, in two lanes (see [`add_mass`]).
    gone: [f64; 2],
    kept: [f64; 2],
    /// The current block's kept entries' bit masses so far.
    masses: BitMasses,
    /// The finished blocks' sums, in block order.
    sums: Vec<BlockSums>,
}

impl InOrder {
    /// A pass at the sector's start.
    pub(crate) fn new() -> Self {
        Self {
            pos: 0,
            w: 0,
            recorded: 0,
            gone: [0.0; 2],
            kept: [0.0; 2],
            masses: BitMasses::ZERO,
            sums: Vec::new(),
        }
    }

    /// The next entry the pass reads (every entry below it is kept in `[0, kept())` or
    /// written to the record).
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// The entries written to the record so far (the removed ones; the kept ones once
    /// [`InOrder::invert_roles`]).
    pub(crate) fn recorded(&self) -> usize {
        self.recorded
    }

    /// The entries placed at the arrays' front so far (the kept ones; the removed ones once
    /// [`InOrder::invert_roles`]).
    pub(crate) fn placed(&self) -> usize {
        self.w
    }

    /// Swaps the two destinations from here on ([`PassExtras::invert`]), for a caller that
    /// swapped what they hold so far: the first [`InOrder::placed`] entries of the arrays
    /// with the first [`InOrder::recorded`] of the record (the longer of the two prefixes
    /// traded whole). The next [`InOrder::run`] goes on inverted, and the results are those
    /// of one pass inverted from the start, bit for bit.
    pub(crate) fn invert_roles(&mut self) {
        std::mem::swap(&mut self.w, &mut self.recorded);
    }

    /// The block sums, in block order (once [`InOrder::run`] returned true).
    pub(crate) fn finish(self) -> Vec<BlockSums> {
        self.sums
    }

    /// Goes on with the pass in order over `keys` / `amps` (the same arrays
    /// every call), writing removed entries from [`InOrder::recorded`] on in `rec` (the same
    /// record every call, possibly longer; its first `recorded()` entries as written).
    /// `(scale, marginals, invert)`: the kept amplitudes' factor, whether their bit masses
    /// are summed, and whether the roles are swapped ([`PassExtras::invert`]: the kept
    /// entries written to `rec`, the removed ones compacted in place; only with `exact`).
    /// Returns true once the sector is done; false when it stopped before a chunk because
    /// the record might be too short for it: unless `exact` (the caller knows the record
    /// holds every entry it gets), a chunk runs only while the record has room for all of
    /// it. The results are those of one uninterrupted pass, bit for bit.
    pub(crate) fn run<T: Amplitude>(
        &mut self,
        keys: &mut [u64],
        amps: &mut [Complex<T>],
        rec: (&mut [u64], &mut [Complex<T>]),
        out_of: impl Fn(u64) -> bool,
        (scale, marginals, invert): (Option<T>, bool, bool),
        exact: bool,
    ) -> bool {
        debug_assert!(exact || !invert);
        // Monomorphised copies of the pass: with the factor given (no masses) and without,
        // plain and inverted.
        let one = T::of_f64(1.0);
        match (scale, invert) {
            (Some(f), false) => {
                self.run_with::<T, false, false>(keys, amps, rec, out_of, f, marginals, exact)
            }
            (None, false) => {
                self.run_with::<T, true, false>(keys, amps, rec, out_of, one, marginals, exact)
            }
            (Some(f), true) => {
                self.run_with::<T, false, true>(keys, amps, rec, out_of, f, marginals, exact)
            }
            (None, true) => {
                self.run_with::<T, true, true>(keys, amps, rec, out_of, one, marginals, exact)
            }
        }
    }

    /// [`InOrder::run`] with the kept amplitudes times `f`, summing the masses when `MASSES`
    /// and the kept entries' bit masses when `marginals`; with `INVERT` the kept entries go
    /// to the record and the removed ones stay.
    #[allow(clippy::too_many_arguments)]
    fn run_with<T: Amplitude, const MASSES: bool, const INVERT: bool>(
        &mut self,
        keys: &mut [u64],
        amps: &mut [Complex<T>],
        (rec_keys, rec_amps): (&mut [u64], &mut [Complex<T>]),
        out_of: impl Fn(u64) -> bool,
        f: T,
        marginals: bool,
        exact: bool,
    ) -> bool {
        let zero = Complex::new(T::zero(), T::zero());
        let n = keys.len();
        let room = rec_keys.len().min(rec_amps.len());
        let mut stage_k = [0u64; STAGE];
        let mut stage_a = [zero; STAGE];
        let (mut w, mut r) = (self.w, self.recorded);
        let (mut gone, mut kept) = (self.gone, self.kept);
        let mut done = true;
        while self.pos < n {
            let c = self.pos;
            let end = (c - c % BLOCK + BLOCK).min(n);
            let e = (c + STAGE).min(end);
            if !exact && r + (e - c) > room {
                done = false;
                break;
            }
            let (next, s) = compact_recording::<T, MASSES, INVERT>(
                keys,
                amps,
                w,
                c..e,
                &out_of,
                f,
                (&mut stage_k, &mut stage_a),
                (&mut gone, &mut kept),
            );
            if marginals {
                // The chunk's kept entries, scaled: in place, or staged when inverted.
                if INVERT {
                    add_bit_masses(&stage_k[..s], &stage_a[..s], &mut self.masses);
                } else {
                    add_bit_masses(&keys[w..next], &amps[w..next], &mut self.masses);
                }
            }
            w = next;
            put_streamed(
                (&mut rec_keys[r..r + s], &mut rec_amps[r..r + s]),
                &stage_k[..s],
                &stage_a[..s],
            );
            r += s;
            self.pos = e;
            if e == end {
                self.sums.push(BlockSums {
                    gone: gone[0] + gone[1],
                    kept: kept[0] + kept[1],
                    masses: std::mem::replace(&mut self.masses, BitMasses::ZERO),
                });
                (gone, kept) = ([0.0; 2], [0.0; 2]);
            }
        }
        crate::stream::fence();
        (self.w, self.recorded, self.gone, self.kept) = (w, r, gone, kept);
        done
    }
}

/// One chunk (at most [`STAGE`] entries, starting at an even index of its block) of the pass
/// in order ([`InOrder`]), without a branch on the data: every entry is written to the next
/// kept place `w` (amplitude times `f`) and to the next place of the removed stage, and only
/// the one it belongs to advances. With `INVERT` the other way round: every entry to the
/// next place `w` unscaled (a removed one takes it) and to the next place of the stage times
/// `f` (a kept one takes it). With `MASSES`, the masses as [`stage_chunk`] sums them.
/// Returns the next place in the arrays and the count staged.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn compact_recording<T: Amplitude, const MASSES: bool, const INVERT: bool>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    mut w: usize,
    range: std::ops::Range<usize>,
    out_of: &impl Fn(u64) -> bool,
    f: T,
    (stage_k, stage_a): (&mut [u64; STAGE], &mut [Complex<T>; STAGE]),
    (gone, kept): (&mut [f64; 2], &mut [f64; 2]),
) -> (usize, usize) {
    debug_assert!(w <= range.start);
    let mut s = 0usize;
    for (i, r) in range.enumerate() {
        let (k, a) = (keys[r], amps[r]);
        let out = usize::from(out_of(k));
        keys[w] = k;
        stage_k[s & (STAGE - 1)] = k;
        if INVERT {
            amps[w] = a;
            w += out;
            stage_a[s & (STAGE - 1)] = a * f;
            s += 1 - out;
        } else {
            amps[w] = a * f;
            w += 1 - out;
            stage_a[s & (STAGE - 1)] = a;
            s += out;
        }
        if MASSES {
            add_mass(a, out, i, (&mut *gone, &mut *kept));
        }
    }
    (w, s)
}

/// Adds the entry's `|a|^2` to the removed (`out == 1`) or the kept sums, in the lane of
/// its parity `i & 1` (its index in the chunk, which starts at an even index of its block):
/// the one mass sum of [`stage_chunk`] and [`compact_recording`], so that both give the same
/// block sums bit for bit.
#[inline(always)]
fn add_mass<T: Amplitude>(
    a: Complex<T>,
    out: usize,
    i: usize,
    (gone, kept): (&mut [f64; 2], &mut [f64; 2]),
) {
    let p = crate::kernels::scan::norm2(a);
    let fo = out as f64;
    gone[i & 1] += p * fo;
    kept[i & 1] += p * (1.0 - fo);
}

/// One block's slices for [`project_block`]: its entries and its slot of the record.
struct BlockJob<'a, T> {
    keys: &'a mut [u64],
    amps: &'a mut [Complex<T>],
    rec_keys: &'a mut [u64],
    rec_amps: &'a mut [Complex<T>],
}

/// Block `b` of [`split_project`]: its removed entries to its record slot, its
/// kept entries straight to their final places `[to.0, to.1)` of the sector (the other way
/// round when [`PassExtras::invert`]), in chunks of
/// [`STAGE`] entries staged on the stack. The part of that range below the block is taken
/// from `regions` (given by the blocks under it once done); the rest is the block's own front
/// (never ahead of where it is read). The block then gives the places it did not write.
/// Every entry and every block sum is computed the same way whichever thread runs the block
/// and in whatever order the blocks finish: bit-identical for any thread count.
fn project_block<'a, T: Amplitude, const DIRECT: bool>(
    b: usize,
    job: BlockJob<'a, T>,
    to: (usize, usize),
    regions: &Regions<'a, u64, Complex<T>>,
    out_of: impl Fn(u64) -> bool,
    extra: PassExtras<T>,
) -> BlockSums {
    let PassExtras {
        marginals,
        scale,
        record,
        run_shift,
        invert,
    } = extra;
    let BlockJob {
        keys,
        amps,
        rec_keys,
        rec_amps,
    } = job;
    let zero = Complex::new(T::zero(), T::zero());
    // The kept entries' factor (1 when they are scaled afterwards: exact).
    let f = scale.unwrap_or_else(|| T::of_f64(1.0));
    // With the factor given (the caller's probability) the masses are not needed (the bit
    // masses, when asked, are summed apart).
    let lean = scale.is_some();
    let base = b * BLOCK;
    let below = to.1.min(base);
    let mut pieces = if to.0 < below {
        regions.take(to.0, below)
    } else {
        Vec::new()
    };
    let (mut piece, mut piece_w) = (0usize, 0usize);
    let mut own_w = 0usize;
    let mut rec = SliceSink {
        keys: rec_keys,
        amps: rec_amps,
        len: 0,
    };
    let mut stage_k = [0u64; STAGE];
    let mut stage_a = [zero; STAGE];
    let mut keep_k = [0u64; STAGE];
    let mut keep_a = [zero; STAGE];
    let mut masses = marginals.then_some(BitMasses::ZERO);
    let (mut gone, mut kept) = ([0.0f64; 2], [0.0f64; 2]);
    let n = keys.len();
    // `DIRECT` (the lean pass without record: the bare measurement's projection): a chunk
    // whose kept entries all go to one slice is compacted straight into it, not staged.
    let keep = |k: u64| !out_of(k);
    for c in (0..n).step_by(STAGE) {
        let e = (c + STAGE).min(n);
        if DIRECT {
            // A chunk that is one run: removed, nothing of it is read or written; kept, it is
            // copied whole (`whole`), by loops the compiler vectorises.
            let whole = one_run(keys[c], keys[e - 1], run_shift);
            if whole && out_of(keys[c]) {
                continue;
            }
            if let Some((pk, pa)) = pieces.get_mut(piece) {
                if pk.len() - piece_w >= e - c {
                    // Staged, then streamed: the places below the block were read long ago,
                    // and ordinary stores would read each of their lines again first.
                    let stage = (&mut keep_k[..], &mut keep_a[..]);
                    let m = compact_to(&keys[c..e], &amps[c..e], stage, keep, f, whole);
                    let to = (&mut pk[piece_w..piece_w + m], &mut pa[piece_w..piece_w + m]);
                    put_streamed(to, &keep_k[..m], &keep_a[..m]);
                    piece_w += m;
                    if piece_w == pk.len() {
                        (piece, piece_w) = (piece + 1, 0);
                    }
                    continue;
                }
            } else {
                own_w = if whole {
                    move_whole(keys, amps, own_w, c..e, f)
                } else {
                    compact_range(keys, amps, own_w, c..e, keep, f)
                };
                continue;
            }
        }
        let mut st = Stages {
            keep_k: &mut keep_k,
            keep_a: &mut keep_a,
            gone_k: &mut stage_k,
            gone_a: &mut stage_a,
        };
        // Two monomorphised copies of the loop: without the masses (a given factor) and with.
        let (m, s) = if lean {
            stage_chunk::<T, false>(
                &keys[c..e],
                &amps[c..e],
                &out_of,
                f,
                &mut st,
                (&mut gone, &mut kept),
            )
        } else {
            stage_chunk::<T, true>(
                &keys[c..e],
                &amps[c..e],
                &out_of,
                f,
                &mut st,
                (&mut gone, &mut kept),
            )
        };
        if let Some(t) = masses.as_mut() {
            add_bit_masses(&keep_k[..m], &keep_a[..m], t);
        }
        // The entries written out (the removed ones, or the kept ones when inverted) and
        // those that stay in the arrays.
        let ((out_k, out_a), (stay_k, stay_a)) = if invert {
            ((&keep_k[..m], &keep_a[..m]), (&stage_k[..s], &stage_a[..s]))
        } else {
            ((&stage_k[..s], &stage_a[..s]), (&keep_k[..m], &keep_a[..m]))
        };
        if record {
            let end = rec.len + out_k.len();
            let to = (&mut rec.keys[rec.len..end], &mut rec.amps[rec.len..end]);
            put_streamed(to, out_k, out_a);
            rec.len = end;
        }
        // The entries that stay: the taken places below the block first, then the block's
        // front (`own_w + rest <= e`: never past what this chunk has read).
        let stay = stay_k.len();
        let mut from = 0;
        while from < stay && piece < pieces.len() {
            let (pk, pa) = &mut pieces[piece];
            let take = (pk.len() - piece_w).min(stay - from);
            let to = (
                &mut pk[piece_w..piece_w + take],
                &mut pa[piece_w..piece_w + take],
            );
            put_streamed(to, &stay_k[from..from + take], &stay_a[from..from + take]);
            (piece_w, from) = (piece_w + take, from + take);
            if piece_w == pk.len() {
                (piece, piece_w) = (piece + 1, 0);
            }
        }
        let rest = stay - from;
        keys[own_w..own_w + rest].copy_from_slice(&stay_k[from..stay]);
        amps[own_w..own_w + rest].copy_from_slice(&stay_a[from..stay]);
        own_w += rest;
    }
    // The streamed record and kept entries are seen by whoever sees this job's results.
    crate::stream::fence();
    debug_assert_eq!(rec.len, rec.keys.len());
    debug_assert_eq!(own_w, to.1.saturating_sub(base));
    debug_assert_eq!(piece, pieces.len());
    let (_, free_k) = keys.split_at_mut(own_w);
    let (_, free_a) = amps.split_at_mut(own_w);
    regions.give(base + own_w, free_k, free_a);
    BlockSums {
        gone: gone[0] + gone[1],
        kept: kept[0] + kept[1],
        masses: masses.unwrap_or(BitMasses::ZERO),
    }
}

/// Writes the entries of `keys` / `amps` for which `keep(key)` holds, amplitudes times `f`,
/// to the front of `to` (at least as long as `keys`), in order and without a branch on the
/// data (every entry is written to the next place, and only a kept one takes it); returns
/// how many were kept. With `whole` (the caller knows every entry is kept: one run) all of
/// them, by a plain copy and a scaling loop.
#[inline(always)]
fn compact_to<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    to: (&mut [u64], &mut [Complex<T>]),
    keep: impl Fn(u64) -> bool,
    f: T,
    whole: bool,
) -> usize {
    let (tk, ta) = to;
    let (tk, ta) = (&mut tk[..keys.len()], &mut ta[..keys.len()]);
    if whole {
        tk.copy_from_slice(keys);
        for (d, a) in ta.iter_mut().zip(amps) {
            *d = *a * f;
        }
        return keys.len();
    }
    let mut w = 0;
    for (&k, &a) in keys.iter().zip(amps) {
        tk[w] = k;
        ta[w] = a * f;
        w += usize::from(keep(k));
    }
    w
}

/// Copies a staged run to `to` (the same length) with streaming stores (`stream.rs`): to the
/// record, or to kept places below the block, whose lines are then not read first and do not
/// take the cache from the state's (ordinary stores where the amplitudes are not plain
/// words: exact amplitudes).
#[inline]
fn put_streamed<T: Amplitude>(to: (&mut [u64], &mut [Complex<T>]), ks: &[u64], as_: &[Complex<T>]) {
    let (tk, ta) = to;
    crate::stream::copy(tk, ks);
    let streamed = match (T::as_words_mut(&mut *ta), T::as_words(as_)) {
        (Some(d), Some(s)) => {
            crate::stream::copy(d, s);
            true
        }
        _ => false,
    };
    if !streamed {
        ta.copy_from_slice(as_);
    }
}

/// The stack stages of [`project_block`]: the chunk's kept entries (scaled) and its removed
/// ones.
struct Stages<'s, T> {
    keep_k: &'s mut [u64; STAGE],
    keep_a: &'s mut [Complex<T>; STAGE],
    gone_k: &'s mut [u64; STAGE],
    gone_a: &'s mut [Complex<T>; STAGE],
}

/// Stages one chunk of at most [`STAGE`] entries without a branch on the data: every entry
/// is written to the next place of both stages (its amplitude times `f` to the kept one) and
/// only the stage it belongs to advances. With `MASSES`, adds each entry's `|a|^2` to the
/// removed or the kept sums, in two interleaved lanes by the entry's parity in the block
/// (the chunk starts at an even index). Returns the kept and the removed counts.
#[inline(always)]
fn stage_chunk<T: Amplitude, const MASSES: bool>(
    keys: &[u64],
    amps: &[Complex<T>],
    out_of: &impl Fn(u64) -> bool,
    f: T,
    st: &mut Stages<'_, T>,
    (gone, kept): (&mut [f64; 2], &mut [f64; 2]),
) -> (usize, usize) {
    let (mut m, mut s) = (0usize, 0usize);
    for (i, (&k, &a)) in keys.iter().zip(amps).enumerate() {
        let out = usize::from(out_of(k));
        st.keep_k[m & (STAGE - 1)] = k;
        st.keep_a[m & (STAGE - 1)] = a * f;
        m += 1 - out;
        st.gone_k[s & (STAGE - 1)] = k;
        st.gone_a[s & (STAGE - 1)] = a;
        s += out;
        if MASSES {
            add_mass(a, out, i, (&mut *gone, &mut *kept));
        }
    }
    (m, s)
}

/// The inverted pass of a projection that keeps the sector's old arrays whole as its undo
/// record: every block's kept entries (`BLOCK - per_block[b]` of them, amplitudes times
/// `scale` when given) written in order to `out_keys` / `out_amps` (exactly their number
/// long), `keys` / `amps` only read. So the pass writes the survivors and nothing else,
/// where [`split_project`]'s inverted pass also compacts the removed entries in place
/// (a projection that removes three quarters wrote every entry). The blocks are
/// independent jobs (each writes its own slice, placed by `per_block`): in parallel on a
/// large sector ([`projects_in_blocks`]), in order on the calling thread otherwise. The
/// survivors and every block sum are those of [`split_project`], bit for bit: the masses
/// (without `scale`) in two lanes by the entry's parity, the survivors' bit masses (with
/// `marginals`) chunk by chunk of [`STAGE`] entries from each block's start.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_kept<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    per_block: &[usize],
    out_keys: &mut [u64],
    out_amps: &mut [Complex<T>],
    out_of: impl Fn(u64) -> bool + Sync + Copy,
    scale: Option<T>,
    marginals: bool,
) -> Vec<BlockSums> {
    use rayon::prelude::*;
    let n = keys.len();
    // Each block's slice of the output.
    let mut jobs = Vec::with_capacity(per_block.len());
    let (mut ok, mut oa) = (out_keys, out_amps);
    for (b, &r) in per_block.iter().enumerate() {
        let (lo, hi) = (b * BLOCK, ((b + 1) * BLOCK).min(n));
        let m = hi - lo - r;
        let (k1, k2) = std::mem::take(&mut ok).split_at_mut(m);
        let (a1, a2) = std::mem::take(&mut oa).split_at_mut(m);
        (ok, oa) = (k2, a2);
        jobs.push((lo, hi, k1, a1));
    }
    debug_assert!(ok.is_empty() && oa.is_empty());
    let run = |(lo, hi, k, a): (usize, usize, &mut [u64], &mut [Complex<T>])| {
        let (ks, az) = (&keys[lo..hi], &amps[lo..hi]);
        let (sums, w) = copy_kept_block(ks, az, (k, a), out_of, scale, marginals)
            .expect("a block's slot holds its survivors (counted)");
        debug_assert_eq!(w, hi - lo - per_block[lo / BLOCK]);
        sums
    };
    if projects_in_blocks(n) {
        jobs.into_par_iter().with_max_len(1).map(run).collect()
    } else {
        jobs.into_iter().map(run).collect()
    }
}

/// [`copy_kept`] on the calling thread without counts: the survivors of the blocks in
/// order to the front of `out_keys` / `out_amps`, as long as they fit there. Returns their
/// number and the block sums (those of [`copy_kept`], bit for bit), or `None` (nothing
/// else written, `keys` / `amps` untouched as ever) when they do not fit.
pub(crate) fn copy_kept_within<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    out_keys: &mut [u64],
    out_amps: &mut [Complex<T>],
    out_of: impl Fn(u64) -> bool + Copy,
    scale: Option<T>,
    marginals: bool,
) -> Option<(usize, Vec<BlockSums>)> {
    let mut sums = Vec::new();
    sums.try_reserve_exact(keys.len().div_ceil(BLOCK)).ok()?;
    let mut w = 0usize;
    for (kb, ab) in keys.chunks(BLOCK).zip(amps.chunks(BLOCK)) {
        let out = (&mut out_keys[w..], &mut out_amps[w..]);
        let (b, m) = copy_kept_block(kb, ab, out, out_of, scale, marginals)?;
        sums.push(b);
        w += m;
    }
    Some((w, sums))
}

/// One block of [`copy_kept`]: chunk by chunk of [`STAGE`] entries, the kept ones staged
/// (without a branch on the data) and copied to the front of `out`; their number with the
/// block's sums, or `None` as soon as a chunk's survivors do not fit in `out`. With the
/// factor given (`scale`), no masses are summed (as the compacting pass's lean form).
fn copy_kept_block<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    out: (&mut [u64], &mut [Complex<T>]),
    out_of: impl Fn(u64) -> bool,
    scale: Option<T>,
    marginals: bool,
) -> Option<(BlockSums, usize)> {
    // Two monomorphised copies: with the factor given (no masses) and without.
    match scale {
        Some(f) => copy_kept_chunks::<T, false>(keys, amps, out, out_of, f, marginals),
        None => copy_kept_chunks::<T, true>(keys, amps, out, out_of, T::of_f64(1.0), marginals),
    }
}

/// [`copy_kept_block`] with the kept amplitudes times `f`, summing the masses when `MASSES`.
fn copy_kept_chunks<T: Amplitude, const MASSES: bool>(
    keys: &[u64],
    amps: &[Complex<T>],
    (out_k, out_a): (&mut [u64], &mut [Complex<T>]),
    out_of: impl Fn(u64) -> bool,
    f: T,
    marginals: bool,
) -> Option<(BlockSums, usize)> {
    let zero = Complex::new(T::zero(), T::zero());
    let mut keep_k = [0u64; STAGE];
    let mut keep_a = [zero; STAGE];
    let (mut gone, mut kept) = ([0.0f64; 2], [0.0f64; 2]);
    let mut masses = BitMasses::ZERO;
    let room = out_k.len().min(out_a.len());
    let mut w = 0usize;
    for (ks, az) in keys.chunks(STAGE).zip(amps.chunks(STAGE)) {
        let mut m = 0usize;
        for (i, (&k, &a)) in ks.iter().zip(az).enumerate() {
            let out = usize::from(out_of(k));
            keep_k[m & (STAGE - 1)] = k;
            keep_a[m & (STAGE - 1)] = a * f;
            m += 1 - out;
            if MASSES {
                add_mass(a, out, i, (&mut gone, &mut kept));
            }
        }
        if w + m > room {
            return None;
        }
        out_k[w..w + m].copy_from_slice(&keep_k[..m]);
        out_a[w..w + m].copy_from_slice(&keep_a[..m]);
        if marginals {
            add_bit_masses(&keep_k[..m], &keep_a[..m], &mut masses);
        }
        w += m;
    }
    let sums = BlockSums {
        gone: gone[0] + gone[1],
        kept: kept[0] + kept[1],
        masses,
    };
    Some((sums, w))
}

/// Whether [`split_project`] runs a sector of `n` entries as parallel block jobs: more than
/// one thread, at least [`PARALLEL_MIN`](crate::state::PARALLEL_MIN) entries (so more than
/// one block).
pub(crate) fn projects_in_blocks(n: usize) -> bool {
    n >= crate::state::PARALLEL_MIN && crate::load::parallel()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::scan;

    /// Per block of [`BLOCK`] keys, how many `out_of` removes, and their total.
    fn removed_per_block(keys: &[u64], out_of: impl Fn(u64) -> bool) -> (Vec<usize>, usize) {
        let per_block: Vec<usize> = keys
            .chunks(BLOCK)
            .map(|c| c.iter().filter(|&&k| out_of(k)).count())
            .collect();
        let removed = per_block.iter().sum();
        (per_block, removed)
    }

    /// The amplitudes rounded to f32.
    fn to_f32(a: &[Complex<f64>]) -> Vec<Complex<f32>> {
        a.iter()
            .map(|z| Complex::new(z.re as f32, z.im as f32))
            .collect()
    }

    fn bits(a: &[Complex<f64>]) -> Vec<(u64, u64)> {
        a.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
    }

    /// The block jobs without a record (the bare measurement's projection) give the
    /// sequential projection's entries bit for bit, for any thread count, whether the blocks
    /// lose everything, nothing or a random half (so that chunks straddle the places handed
    /// down from the blocks below and go through the stage), and whether the removed entries
    /// come in runs that the pass skips unread (a qubit of the keys' high bits) or not.
    #[test]
    fn block_jobs_without_record_match_the_sequential_projection() {
        let n = 5 * BLOCK + 1234;
        let (keys, amps) = crate::test_states::random_arrays(n, 3, 24);
        let f = 0.812_345_678_9_f64;
        let top = 1u64 << 39;
        let cases = [
            (top, top, true),
            (top, top, false),
            (1 << 30, 1 << 30, true),
            (1 << 30, 0, true),
            (0b11 << 29, 0b01 << 29, false),
            (1 << 3, 0, true),
            (0b1001 << 20, 0b0001 << 20, false),
            (0, 0, true),
            (0, 0, false),
        ];
        for (mask, value, keep) in cases {
            let (mut rk, mut ra) = (keys.clone(), amps.clone());
            let m = scan::project(&mut rk, &mut ra, mask, value, keep, f);
            rk.truncate(m);
            ra.truncate(m);
            let out_of = move |k: u64| (k & mask == value) != keep;
            let (per_block, removed) = removed_per_block(&keys, out_of);
            assert_eq!(removed, n - m);
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mut k, mut a) = (keys.clone(), amps.clone());
                let extra = PassExtras {
                    marginals: false,
                    scale: Some(f),
                    record: false,
                    run_shift: mask.trailing_zeros(),
                    invert: false,
                };
                let sums = pool.install(|| {
                    split_project(&mut k, &mut a, &per_block, &mut [], &mut [], out_of, extra)
                });
                assert_eq!(sums.len(), per_block.len());
                k.truncate(n - removed);
                a.truncate(n - removed);
                assert_eq!(k, rk, "mask {mask:#x} keep {keep}, {threads} threads");
                assert_eq!(bits(&a), bits(&ra), "mask {mask:#x} keep {keep}");
            }
        }
    }

    /// With a record (streamed for the floats, copied for exact amplitudes), every type's
    /// record holds exactly the removed entries in order, and the kept entries are the
    /// sequential projection's, on 1 and 2 threads.
    #[test]
    fn the_record_holds_the_removed_entries_for_every_amplitude_type() {
        fn check<T: Amplitude>(keys: &[u64], amps: &[Complex<T>]) {
            let n = keys.len();
            let (mask, value, keep) = (1u64 << 17, 0, true);
            let out_of = move |k: u64| (k & mask == value) != keep;
            let (per_block, removed) = removed_per_block(keys, out_of);
            let gone: Vec<(u64, Complex<T>)> = keys
                .iter()
                .zip(amps)
                .filter(|(k, _)| out_of(**k))
                .map(|(&k, &a)| (k, a))
                .collect();
            let f = T::of_f64(1.0);
            let (mut rk, mut ra) = (keys.to_vec(), amps.to_vec());
            let m = scan::project(&mut rk, &mut ra, mask, value, keep, f);
            assert_eq!(m + removed, n);
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mut k, mut a) = (keys.to_vec(), amps.to_vec());
                let mut rec_k = vec![0u64; removed];
                let mut rec_a = vec![Complex::new(T::zero(), T::zero()); removed];
                let extra = PassExtras {
                    marginals: false,
                    scale: Some(f),
                    record: true,
                    run_shift: 0,
                    invert: false,
                };
                pool.install(|| {
                    split_project(
                        &mut k, &mut a, &per_block, &mut rec_k, &mut rec_a, out_of, extra,
                    )
                });
                let rec: Vec<(u64, Complex<T>)> = rec_k.into_iter().zip(rec_a).collect();
                assert!(rec == gone, "{} threads", threads);
                assert!(k[..m] == rk[..m] && a[..m] == ra[..m], "{threads} threads");
            }
        }
        let n = 3 * BLOCK + 4321;
        let (keys, amps) = crate::test_states::random_arrays(n, 8, 30);
        check::<f64>(&keys, &amps);
        check::<f32>(&keys, &to_f32(&amps));
        let small = 2 * BLOCK + 99;
        let exact: Vec<Complex<crate::Exact>> = amps[..small]
            .iter()
            .map(|z| Complex::new(crate::Exact::of_f64(z.re), crate::Exact::of_f64(z.im)))
            .collect();
        check::<crate::Exact>(&keys[..small], &exact);
    }

    /// The one-thread pass in order gives the block jobs' results bit for bit: the kept
    /// entries, the record, each block's masses (summed when no scale is given) and, when
    /// asked, its kept entries' bit masses, for blocks that lose everything, nothing or a
    /// random part, f64 and f32.
    #[test]
    fn the_pass_in_order_matches_the_block_jobs() {
        fn check<T: Amplitude>(keys: &[u64], amps: &[Complex<T>]) {
            let n = keys.len();
            let top = 1u64 << 39;
            let cases = [
                (top, top, true),
                (top, top, false),
                (1 << 3, 0, true),
                (0b1001 << 20, 0b0001 << 20, false),
                (0, 0, false),
            ];
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            for (mask, value, keep) in cases {
                let out_of = move |k: u64| (k & mask == value) != keep;
                let (per_block, removed) = removed_per_block(keys, out_of);
                let scales = [None, Some(T::of_f64(1.234_567_890_123))];
                let variants = scales.into_iter().flat_map(|s| {
                    [
                        (s, false, false),
                        (s, true, false),
                        (s, false, true),
                        (s, true, true),
                    ]
                });
                for (scale, marginals, invert) in variants {
                    let extra = PassExtras {
                        marginals,
                        scale,
                        record: true,
                        run_shift: 0,
                        invert,
                    };
                    let run = |extra: PassExtras<T>, in_order: bool| {
                        // Written out: the removed entries, or the kept ones when inverted.
                        let (out, stay) = if extra.invert {
                            (n - removed, removed)
                        } else {
                            (removed, n - removed)
                        };
                        let (mut k, mut a) = (keys.to_vec(), amps.to_vec());
                        let mut rec_k = vec![0u64; out];
                        let mut rec_a = vec![Complex::new(T::zero(), T::zero()); out];
                        let sums = pool.install(|| {
                            split_project_with(
                                &mut k, &mut a, &per_block, &mut rec_k, &mut rec_a, out_of, extra,
                                in_order,
                            )
                        });
                        k.truncate(stay);
                        a.truncate(stay);
                        let masses: Vec<Vec<u64>> = sums
                            .iter()
                            .map(|b| {
                                let m = &b.masses;
                                let parts = m.common.iter().chain(&m.varying);
                                parts.chain([&m.total]).map(|x| x.to_bits()).collect()
                            })
                            .collect();
                        let sums: Vec<(u64, u64)> = sums
                            .iter()
                            .map(|b| (b.gone.to_bits(), b.kept.to_bits()))
                            .collect();
                        (k, a, rec_k, rec_a, sums, masses)
                    };
                    let (blocks, in_order) = (run(extra, false), run(extra, true));
                    let what = format!(
                        "mask {mask:#x} keep {keep} scaled {} marginals {marginals} inverted {invert}",
                        scale.is_some()
                    );
                    if invert {
                        // The plain pass's entries, the other way round, and its sums.
                        let plain = run(
                            PassExtras {
                                invert: false,
                                ..extra
                            },
                            true,
                        );
                        assert_eq!(blocks.2, plain.0, "{what}");
                        assert!(blocks.3 == plain.1, "{what}");
                        assert_eq!(blocks.0, plain.2, "{what}");
                        assert!(blocks.1 == plain.3, "{what}");
                        assert_eq!(blocks.4, plain.4, "{what}");
                        assert_eq!(blocks.5, plain.5, "{what}");
                    }
                    assert_eq!(in_order.0, blocks.0, "{what}");
                    assert!(in_order.1 == blocks.1, "{what}");
                    assert_eq!(in_order.2, blocks.2, "{what}");
                    assert!(in_order.3 == blocks.3, "{what}");
                    assert_eq!(in_order.4, blocks.4, "{what}");
                    assert_eq!(in_order.4.len(), per_block.len());
                    assert_eq!(in_order.5, blocks.5, "{what}");
                    // The bit masses were summed when asked (and only then): without a
                    // scale each block's total is its kept mass.
                    for (b, m) in in_order.4.iter().zip(&in_order.5) {
                        let (total, kept) = (f64::from_bits(m[128]), f64::from_bits(b.1));
                        if !marginals {
                            assert_eq!(total, 0.0, "{what}");
                        } else if scale.is_none() {
                            assert!((total - kept).abs() <= 1e-12 * kept.max(1.0), "{what}");
                        }
                    }
                    if scale.is_none() && removed > 0 && removed < n {
                        // The masses were summed, not left at zero.
                        assert!(in_order.4.iter().any(|&(g, _)| f64::from_bits(g) > 0.0));
                        assert!(in_order.4.iter().any(|&(_, k)| f64::from_bits(k) > 0.0));
                    }
                }
            }
        }
        let n = 4 * BLOCK + 777;
        let (keys, amps) = crate::test_states::random_arrays(n, 5, 28);
        check::<f64>(&keys, &amps);
        check::<f32>(&keys, &to_f32(&amps));
    }
}
