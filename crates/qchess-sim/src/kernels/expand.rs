//! Dense pair gates (sqrt-iSwap and its inverse, controlled or not, with fused phases) applied
//! **in place**: the run grows by exactly the entries the gate creates and no second copy of
//! the state is ever held.
//!
//! Pass 1 (`mark_unpartnered`, read-only): per group for bit `hi` (see `pair`), a merge-join
//! of the `lo` entries of the lower half with the `hi` entries of the upper half sets a bit in
//! a bitmap for every pair entry without its partner. Their count is the exact growth `G`.
//!
//! Pass 2 (`expand`, after the arrays were grown to `n + G`): groups from the last to the
//! first, each written backwards from the end of the grown arrays, so every write lands at or
//! above the position it reads (an entry's output index is its input index plus the entries
//! created before it). Per group, the upper half comes first: its entries merged with the
//! new `hi` entries made from the flagged `lo` entries of the lower half (still unread there).
//! A partnered `hi` entry's partner is the matching unflagged `lo` entry (the two classes are
//! in bijection and in the same order, so a cursor finds it with no key comparison); both new
//! values are computed at once, the `hi` one written out and the `lo` one stored in place in
//! the lower half (exact zero marks a cancelled one). A flagged `hi` entry is moved with its
//! raw amplitude and its flag. Then the lower half: its entries merged with the new `lo`
//! entries made from the flagged `hi` entries just written, whose own amplitude is finished
//! at that moment. Entries whose merged amplitude cancelled are skipped; if any were, the
//! output starts above 0: in one segment it stays there and the room below is left to the
//! sector (`Lane`), which the next dense gate creating no more entries than that room fills
//! forwards (`dense::expand_dense_forward`); in several (a wide group's halves) they are
//! joined around the largest that may stay where it is, the room below staying small, else
//! moved down to 0 (`join_segments`). A gate that creates nothing
//! (`G = 0`: the merge that undoes a split) runs forwards instead (`shrink_forward`), so
//! what cancels closes up as the pass goes and nothing is moved at the end; such a gate is
//! usually recognised before pass 1 by one read of the keys (`creates_nothing`), and the
//! state then skips pass 1 and its bitmaps (`State::try_shrink`).
//!
//! Pass 1 flags a group's pair entries whole, branch-free and a word at a time; when one
//! half holds no pair entry nothing can be partnered (a split to a square that is empty in
//! every branch, which is every group of a game-shaped state) and that is all. Groups with
//! pair entries in both halves then run the merge-join over the flagged entries (visited by
//! their bits, `trailing_zeros`, with no per-entry class test), clearing the partnered ones.
//!
//! A group whose keys fill a small span densely (`dense::window_bits`: a uniformly random state,
//! a gate on low bits) goes through [`dense`] in both passes instead: its entries are laid out
//! in a scratch by key offset, so partners are found by offset, and pass 1 only counts.
//!
//! With several threads a large run is cut into pieces at group boundaries
//! ([`expand_pieces`]): each piece has its own pass 1 and bitmap, the pieces' inputs are moved
//! up by the growth below them (one memmove), and each piece then runs pass 2 in its own
//! disjoint region as a parallel task.
//!
//! The arithmetic of every entry is that of `pair::apply` (same products, same order), so
//! the results are bit-identical to the out-of-place kernel and do not depend on how many
//! threads ran pass 1.

use crate::amplitude::Amplitude;
use crate::kernels::dense;
use crate::kernels::pair::{GroupWalk, PairGate, for_each_group, partition_near};
use crate::key::Cond;
use crate::lane::Lane;
use crate::prefetch::{AHEAD, KEYS_PER_LINE, prefetch};
use num_complex::Complex;

/// Two bitmaps interleaved word by word: `[UNPARTNERED]` marks pair entries without their
/// partner, `[PARTNERED]` the lower-half (`lo`) entries of partnered pairs.
pub(crate) type Flags = [u64; 2];
const UNPARTNERED: usize = 0;
const PARTNERED: usize = 1;

#[inline(always)]
fn get(flags: &[Flags], i: usize) -> bool {
    flags[i >> 6][UNPARTNERED] >> (i & 63) & 1 == 1
}

#[inline(always)]
fn put_flag(flags: &mut [Flags], i: usize, on: bool) {
    let w = &mut flags[i >> 6][UNPARTNERED];
    *w = (*w & !(1u64 << (i & 63))) | (u64::from(on) << (i & 63));
}

/// The largest index in `[from, before)` set in bitmap `which`, scanning whole words.
#[inline]
fn prev_flag(flags: &[Flags], which: usize, from: usize, before: usize) -> Option<usize> {
    if before <= from {
        return None;
    }
    let mut wi = (before - 1) >> 6;
    // Bits at or above `before` in the first word are masked off.
    let top = before - (wi << 6); // 1..=64
    let mut word = flags[wi][which] & (u64::MAX >> (64 - top));
    loop {
        if word != 0 {
            let i = (wi << 6) + 63 - word.leading_zeros() as usize;
            return (i >= from).then_some(i);
        }
        if wi == 0 || (wi << 6) <= from {
            return None;
        }
        wi -= 1;
        word = flags[wi][which];
    }
}

/// The smallest index in `[from, to)` set in the `UNPARTNERED` bitmap, or `to`.
#[inline]
fn next_flag(flags: &[Flags], from: usize, to: usize) -> usize {
    if from >= to {
        return to;
    }
    let mut wi = from >> 6;
    let mut word = flags[wi][UNPARTNERED] & (u64::MAX << (from & 63));
    loop {
        if word != 0 {
            return ((wi << 6) + word.trailing_zeros() as usize).min(to);
        }
        wi += 1;
        if wi << 6 >= to {
            return to;
        }
        word = flags[wi][UNPARTNERED];
    }
}

/// ORs into the `UNPARTNERED` bitmap a bit for every index in `[from, to)` whose key passes
/// `pred`, a word at a time without branches; returns how many passed.
fn set_bits(
    keys: &[u64],
    from: usize,
    to: usize,
    pred: &impl Fn(u64) -> bool,
    flags: &mut [Flags],
) -> usize {
    let mut count = 0;
    let mut i = from;
    while i < to {
        let word_end = ((i | 63) + 1).min(to);
        let mut m = 0u64;
        for (j, &k) in keys[i..word_end].iter().enumerate() {
            m |= u64::from(pred(k)) << ((i + j) & 63);
        }
        flags[i >> 6][UNPARTNERED] |= m;
        count += m.count_ones() as usize;
        i = word_end;
    }
    count
}

/// Pass 1's counts for one wide group (`dense::window_bits` below `hi`), for its pass 2
/// (`dense::expand_wide`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wide {
    /// Its `lo` entries without partner: the `hi` entries the gate creates in it.
    pub lo_singles: usize,
    /// Its upper half's entries that pass 2 reads from a spill ([`dense::spill_len`]).
    pub spill: usize,
}

/// The spill a run's pass 2 needs: the largest of its wide groups' (`wide`, from
/// [`mark_unpartnered`]); pass 2 runs them one after the other.
pub(crate) fn spill_need(wide: &[Wide]) -> usize {
    wide.iter().map(|w| w.spill).max().unwrap_or(0)
}

/// A spill for pass 2's wide groups ([`spill_need`] entries, or empty: then each moves its
/// upper half instead).
pub(crate) type Spill<'a, T> = (&'a mut [u64], &'a mut [Complex<T>]);

/// Sets, in `flags` (bit `i` for key index `i`), the pair entries of `keys` whose partner is
/// absent and the `lo` entries of partnered pairs, and returns how many are unpartnered: a
/// dense gate adds exactly that many entries before cancellations. `flags` must be zero on
/// entry. Groups that `dense::window_bits` routes to the scratch kernels (`scratch_ok`: the
/// amplitude type's `CHEAP_ARITHMETIC`, which pass 2 passes the same way) are only counted,
/// and the wide ones' counts are pushed to `wide`, for pass 2.
pub(crate) fn mark_unpartnered(
    keys: &[u64],
    lo: u32,
    hi: u32,
    cond: Cond,
    flags: &mut [Flags],
    wide: &mut Vec<Wide>,
    scratch_ok: bool,
) -> usize {
    let a = 1u64 << lo;
    let b = 1u64 << hi;
    let ab = a | b;
    let delta = b - a;
    let mut singles = 0usize;
    let is_l = |k: u64| k & ab == a && cond.holds(k);
    let is_h = |k: u64| k & ab == b && cond.holds(k);
    let mut bitmap: Vec<u64> = Vec::new();
    let mut occ: Vec<u8> = Vec::new();
    for_each_group(keys, hi, |start, mid, end| {
        if let Some(wb) = dense::window_bits(lo, hi, end - start, scratch_ok) {
            #[cfg(test)]
            let counter = if wb == hi {
                &tests::SCRATCH
            } else {
                &tests::WIDE
            };
            #[cfg(test)]
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let group = &keys[start..end];
            let (l, h) = dense::count_wide(group, mid - start, (lo, hi, wb), cond, &mut occ);
            if wb < hi {
                // At least 2^13 entries per wide group: a few words in all. Pass 2 writes
                // the group's lower half below `w - (end - mid) - l`, where `w - end` is the
                // growth up to this group's end: that much (`singles + h`) above `mid`.
                wide.push(Wide {
                    lo_singles: l,
                    spill: dense::spill_len(singles + h, end - mid),
                });
            }
            singles += l + h;
            return;
        }
        // Every pair entry is flagged first, branch-free a word at a time; the join below
        // then clears the partnered ones. Without hi entries in the upper half (or lo
        // entries in the lower half) nothing is partnered (a split to an empty square:
        // every group of a game state).
        let nl = set_bits(keys, start, mid, &is_l, flags);
        let nh = set_bits(keys, mid, end, &is_h, flags);
        singles += nl + nh;
        if nl == 0 || nh == 0 {
            #[cfg(test)]
            tests::WHOLE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        if let Some(pairs) = join_dense(keys, start, mid, end, delta, flags, &mut bitmap) {
            #[cfg(test)]
            tests::DENSE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            singles -= 2 * pairs;
            return;
        }
        #[cfg(test)]
        tests::MERGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Merge-join of the flagged lo entries (shifted up) with the flagged hi entries,
        // visiting them by their bits (no per-entry class test).
        let (mut i, mut j) = (next_flag(flags, start, mid), next_flag(flags, mid, end));
        while i < mid && j < end {
            let (l, h) = (keys[i] + delta, keys[j]);
            if l < h {
                i = next_flag(flags, i + 1, mid);
            } else if h < l {
                j = next_flag(flags, j + 1, end);
            } else {
                flags[i >> 6][UNPARTNERED] &= !(1 << (i & 63));
                flags[j >> 6][UNPARTNERED] &= !(1 << (j & 63));
                flags[i >> 6][PARTNERED] |= 1 << (i & 63);
                singles -= 2;
                i = next_flag(flags, i + 1, mid);
                j = next_flag(flags, j + 1, end);
            }
        }
    });
    singles
}

/// Whether the gate creates nothing on `keys`: every pair entry's partner is present (the
/// merge that undoes a split, on the state that split made) and no group goes to the
/// scratch kernels (`dense::window_bits`). Then [`mark_unpartnered`] would flag nothing and
/// count no wide group, so pass 2 (`shrink_forward`) reads neither its bitmap nor its
/// counts: the caller may skip pass 1 and its bitmaps and run [`expand_raised`] with empty ones.
/// One read of the keys, group by group, each lower-half `lo` entry matched with the next
/// upper-half `hi` entry (in bijection they pair up in order); stops at the first group
/// that fails.
pub(crate) fn creates_nothing(keys: &[u64], lo: u32, hi: u32, cond: Cond, cheap: bool) -> bool {
    let (a, b) = (1u64 << lo, 1u64 << hi);
    let ab = a | b;
    let delta = b - a;
    let is_h = |k: u64| k & ab == b && cond.holds(k);
    let (mut walk, mut hinted) = (GroupWalk::default(), 0);
    while let Some((start, mid, end)) = walk.next(keys, hi) {
        if dense::window_bits(lo, hi, end - start, cheap).is_some() {
            return false;
        }
        // Every line of keys up to `AHEAD` keys past this group, once.
        while hinted < end + AHEAD {
            prefetch(keys, hinted);
            hinted += KEYS_PER_LINE;
        }
        let mut j = mid;
        for &k in &keys[start..mid] {
            if k & ab == a && cond.holds(k) {
                while j < end && !is_h(keys[j]) {
                    j += 1;
                }
                if j == end || keys[j] != k + delta {
                    return false;
                }
                j += 1;
            }
        }
        if keys[j..end].iter().any(|&k| is_h(k)) {
            return false;
        }
    }
    true
}

/// Key span of one window of [`join_dense`]: 2^18 bits (32 KiB per bitmap, two of them: the
/// first- and second-level caches hold them).
const WINDOW: u64 = 1 << 18;

/// The partner join of one group by key offsets instead of a merge, when the upper half's
/// keys are dense (at most 64 key values per entry over their span): the span is cut into
/// windows of [`WINDOW`] key values; in each, a bitmap marks the flagged `hi` keys, each
/// flagged `lo` entry whose partner falls in the window looks up its partner's bit (no
/// comparison of one stream against the other, so no branch on the data), and its hits mark a
/// second bitmap from which the partnered `hi` entries are cleared. The same entries end up
/// flagged as by the merge-join. Returns the number of pairs found, or `None` (the group is
/// left untouched) when the keys are too sparse.
fn join_dense(
    keys: &[u64],
    start: usize,
    mid: usize,
    end: usize,
    delta: u64,
    flags: &mut [Flags],
    bitmap: &mut Vec<u64>,
) -> Option<usize> {
    if keys[end - 1] - keys[mid] >= 64 * (end - mid) as u64 {
        return None;
    }
    let (mut pairs, mut i0, mut j0) = (0, start, mid);
    while j0 < end {
        let base = keys[j0];
        let j1 = j0 + keys[j0..end].partition_point(|&k| k - base < WINDOW);
        // The lo entries whose partners would fall in this window (none can before it).
        let partner_offset = |k: u64| k.saturating_add(delta).saturating_sub(base);
        i0 += keys[i0..mid].partition_point(|&k| k.saturating_add(delta) < base);
        let i1 = i0 + keys[i0..mid].partition_point(|&k| partner_offset(k) < WINDOW);
        pairs += join_window(keys, (i0, i1), (j0, j1), delta, flags, bitmap);
        (i0, j0) = (i1, j1);
    }
    Some(pairs)
}

/// One window of [`join_dense`]: the lower-half entries `[start, mid)` against the upper-half
/// entries `[upper, end)`, whose keys span less than [`WINDOW`] from the first. Returns the
/// pairs found.
fn join_window(
    keys: &[u64],
    (start, mid): (usize, usize),
    (upper, end): (usize, usize),
    delta: u64,
    flags: &mut [Flags],
    bitmap: &mut Vec<u64>,
) -> usize {
    let base = keys[upper];
    let span = keys[end - 1] - base + 1;
    let words = span.div_ceil(64) as usize;
    bitmap.clear();
    bitmap.resize(2 * words, 0);
    let (present, matched) = bitmap.split_at_mut(words);
    // Sorted keys fill the bitmaps word after word: each word is gathered in a register and
    // stored once (an OR into memory per entry would wait on the previous entry's store).
    let mut fill = Filler::default();
    for (j, &k) in keys.iter().enumerate().take(end).skip(upper) {
        fill.put(present, k - base, get(flags, j));
    }
    fill.flush(present);
    let mut pairs = 0usize;
    let mut i = start;
    while i < mid {
        let word_end = ((i | 63) + 1).min(mid);
        let mut hits = 0u64;
        for (ii, &k) in keys.iter().enumerate().take(word_end).skip(i) {
            // The partner's offset; out of the span (wrapped or above) means absent.
            let t = k.wrapping_add(delta).wrapping_sub(base);
            let inside = t < span;
            let tc = if inside { t } else { 0 };
            let hit =
                get(flags, ii) & inside & ((present[(tc >> 6) as usize] >> (tc & 63)) & 1 == 1);
            hits |= u64::from(hit) << (ii & 63);
            fill.put(matched, tc, hit);
        }
        let w = &mut flags[i >> 6];
        w[UNPARTNERED] &= !hits;
        w[PARTNERED] |= hits;
        pairs += hits.count_ones() as usize;
        i = word_end;
    }
    fill.flush(matched);
    let mut j = upper;
    while j < end {
        let word_end = ((j | 63) + 1).min(end);
        let mut hits = 0u64;
        for (jj, &k) in keys.iter().enumerate().take(word_end).skip(j) {
            let t = k - base;
            hits |= ((matched[(t >> 6) as usize] >> (t & 63)) & 1) << (jj & 63);
        }
        flags[j >> 6][UNPARTNERED] &= !hits;
        j = word_end;
    }
    pairs
}

/// Sets bits of a bitmap one word at a time: consecutive offsets in the same word are gathered
/// in a register and stored together when the word changes (any order of offsets is correct;
/// increasing ones store each word once).
#[derive(Default)]
pub(crate) struct Filler {
    word: usize,
    bits: u64,
}

impl Filler {
    /// Sets bit `t` if `on`.
    #[inline(always)]
    pub(crate) fn put(&mut self, map: &mut [u64], t: u64, on: bool) {
        let w = (t >> 6) as usize;
        if w != self.word {
            map[self.word] |= self.bits;
            (self.word, self.bits) = (w, 0);
        }
        self.bits |= u64::from(on) << (t & 63);
    }

    /// Stores the word being gathered.
    pub(crate) fn flush(&mut self, map: &mut [u64]) {
        map[self.word] |= self.bits;
        self.bits = 0;
    }
}

/// First index `< end` of the group holding `keys[end - 1]` for bit `hi`, and the first index
/// of its upper half (bit `hi` set): `(start, mid)`.
#[inline]
pub(crate) fn group_before(keys: &[u64], end: usize, hi: u32) -> (usize, usize) {
    group_before_near(keys, end, hi, (0, 0))
}

/// [`group_before`] searching near `guess`, the `(end - start, mid - start)` the group is
/// expected to have (`pair::partition_near`; `(0, 0)` for none: a gallop backwards from
/// `end`).
#[inline]
pub(crate) fn group_before_near(
    keys: &[u64],
    end: usize,
    hi: u32,
    (len, lower): (usize, usize),
) -> (usize, usize) {
    let b = 1u64 << hi;
    let prefix = if hi == 63 {
        0
    } else {
        keys[end - 1] >> (hi + 1) << (hi + 1)
    };
    if len > 0 && len < end {
        let start = partition_near(keys, (0, end), end - len, |k| k < prefix);
        let mid = partition_near(keys, (start, end), start + lower, |k| k < prefix | b);
        return (start, mid);
    }
    // Gallop backwards for the first key >= prefix.
    let mut step = 1usize;
    let mut hi_idx = end; // keys[hi_idx..end] >= prefix
    loop {
        if step >= hi_idx {
            break;
        }
        let probe = hi_idx - step;
        if keys[probe] < prefix {
            break;
        }
        hi_idx = probe;
        step *= 2;
    }
    let lo_idx = hi_idx.saturating_sub(step);
    let start = lo_idx + keys[lo_idx..hi_idx].partition_point(|&k| k < prefix);
    let mid = start + keys[start..end].partition_point(|&k| k < prefix | b);
    (start, mid)
}

/// Applies the dense `gate` in place to the run `keys[head..head + n]`, `amps[head..head +
/// n]`, where both slices have length `head + n + grow` (`grow` = the count from
/// [`mark_unpartnered`], whose `flags` cover at least `n + grow` bits; `head` the room the
/// sector keeps below its entries, `Lane`). `pre` and `post` are the fused input / output
/// phases of `pair::apply`. Returns `(from, len)`: the output is `keys[from..from + len]`,
/// `amps[from..from + len]`.
///
/// Where amplitudes cancelled, the pass's output starts above `head`. When it is one segment
/// (no wide group left a gap between its halves) it stays there, against the top of the
/// slices, and the caller keeps the room below as its sector's `Lane` head: no move of the
/// whole state (a fifth of a random-state split at 1e7). Otherwise (a wide group's upper
/// half cancelled entries, leaving a gap between its halves' outputs) the segments are joined
/// around the largest that may stay where it is, the room below staying small
/// ([`join_segments`]); else they all go down to 0, over the room below too. A gate that
/// creates nothing runs forwards from `head` anyway.
#[allow(clippy::too_many_arguments)]
pub(crate) fn expand_raised<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    head: usize,
    n: usize,
    gate: &PairGate<T>,
    flags: &mut [Flags],
    (wide, spill): (&[Wide], Spill<'_, T>),
    pre: Pre,
    post: Post,
) -> (usize, usize)
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let (live_k, live_a) = (&mut keys[head..], &mut amps[head..]);
    let mut segments = expand_top(live_k, live_a, n, gate, flags, (wide, spill), pre, post);
    if let [(from, to)] = segments[..] {
        return (head + from, to - from);
    }
    for s in &mut segments {
        *s = (head + s.0, head + s.1);
    }
    join_segments(keys, amps, &segments)
}

/// Joins the output `segments` (highest first, disjoint, each at or above where it goes)
/// into one run around the largest segment that may stay where it is: those above it moved
/// down onto it, those below it up under it. A segment may stay if the room that leaves
/// below the run (from index 0: the sector's room below its entries included) is at most one
/// part in [`Lane::SETTLE_SHARE`] of the run; more, and the next growth that needs room
/// above would move the whole run down ([`Lane::reserve_with`]). If none may, all of it goes
/// down to 0, which gives the sector's room below back too. Returns where the run starts and
/// its length.
fn join_segments<T: Copy>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    segments: &[(usize, usize)],
) -> (usize, usize) {
    let out: usize = segments.iter().map(|&(from, to)| to - from).sum();
    #[cfg(test)]
    let off = tests::JOIN_OFF.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    let off = false;
    let small = |room: usize| !off && room.saturating_mul(Lane::<u64>::SETTLE_SHARE) <= out;
    // The segment to keep, lowest first, and where the run then starts: its start less the
    // segments below it.
    let mut keep: Option<(usize, usize)> = None;
    let mut under = 0;
    for (i, &(from, to)) in segments.iter().enumerate().rev() {
        let len = |i: usize| segments[i].1 - segments[i].0;
        if small(from - under) && keep.is_none_or(|(k, _)| to - from > len(k)) {
            keep = Some((i, from - under));
        }
        under += to - from;
    }
    let Some((m, start)) = keep else {
        return (0, close_gaps(keys, amps, segments.iter().rev().copied(), 0));
    };
    #[cfg(test)]
    if start > 0 {
        tests::JOINED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let top = close_gaps(
        keys,
        amps,
        segments[..m].iter().rev().copied(),
        segments[m].1,
    );
    let mut bottom = segments[m].0;
    for &(from, to) in &segments[m + 1..] {
        let dst = bottom - (to - from);
        if dst != from {
            keys.copy_within(from..to, dst);
            amps.copy_within(from..to, dst);
        }
        bottom = dst;
    }
    debug_assert_eq!(bottom, start);
    (start, top - start)
}

/// Moves the output `segments` (ascending, disjoint, each at or above where it goes) down to
/// one run starting at `out`; returns the run's end.
fn close_gaps<T: Copy>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    segments: impl Iterator<Item = (usize, usize)>,
    mut out: usize,
) -> usize {
    for (from, to) in segments {
        if from != out {
            keys.copy_within(from..to, out);
            amps.copy_within(from..to, out);
        }
        out += to - from;
    }
    out
}

/// One piece of a parallel pass 2: the input run `[start, end)` (whole groups), the entries
/// it creates (`grow`, pass 1's count on it) and its own bitmap, indexed from `start` and
/// covering at least `end - start + grow` bits.
pub(crate) struct Piece {
    pub start: usize,
    pub end: usize,
    pub grow: usize,
    pub flags: Vec<Flags>,
    /// Pass 1's counts for the piece's wide groups (`mark_unpartnered`'s `wide`).
    pub wide: Vec<Wide>,
}

/// [`expand_raised`] of a run cut into `pieces` (consecutive, from 0 to the input length `n`
/// counted from `head`, with `keys.len() == amps.len() == head + n + ` the sum of their
/// `grow`), the pieces run as parallel tasks. Piece `j` writes exactly
/// `[start_j + G_j, end_j + G_j + grow_j)` (from `head`; `G_j` the growth of the pieces
/// before it), so first every piece's input is moved up by its `G_j` (back to front, a
/// memmove), which makes the pieces' regions disjoint; each then expands in its own region as [`expand_raised`] does, and the
/// pieces' output segments are joined as there ([`join_segments`]). Returns `(from, len)`,
/// the output's place. Every entry is computed as in [`expand_raised`]: the output is
/// bit-identical for any cut and any thread count.
#[allow(clippy::too_many_arguments)]
pub(crate) fn expand_pieces<T, Pre, Post>(
    whole_keys: &mut [u64],
    whole_amps: &mut [Complex<T>],
    head: usize,
    pieces: &mut [Piece],
    gate: &PairGate<T>,
    spill: Spill<'_, T>,
    pre: &Pre,
    post: &Post,
) -> (usize, usize)
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T> + Sync,
    Post: Fn(u64, Complex<T>) -> Complex<T> + Sync,
{
    use rayon::prelude::*;
    let (keys, amps) = (&mut whole_keys[head..], &mut whole_amps[head..]);
    // Move each piece's input to the bottom of its output region, last piece first.
    let mut before: Vec<usize> = Vec::with_capacity(pieces.len());
    let mut g = 0;
    for p in pieces.iter() {
        before.push(g);
        g += p.grow;
    }
    debug_assert_eq!(keys.len(), pieces.last().map_or(0, |p| p.end) + g);
    for (p, &shift) in pieces.iter().zip(&before).rev() {
        if shift > 0 && p.end > p.start {
            keys.copy_within(p.start..p.end, p.start + shift);
            amps.copy_within(p.start..p.end, p.start + shift);
        }
    }
    // Disjoint regions, one task each, and each its part of the spill (its [`spill_need`], or
    // none once the spill runs short).
    let mut tasks = Vec::with_capacity(pieces.len());
    let (mut ks, mut vs) = (&mut *keys, &mut *amps);
    let (mut sk, mut sa) = spill;
    for p in pieces.iter_mut() {
        let size = p.end - p.start + p.grow;
        let (k, kr) = std::mem::take(&mut ks).split_at_mut(size);
        let (v, vr) = std::mem::take(&mut vs).split_at_mut(size);
        (ks, vs) = (kr, vr);
        let part = spill_need(&p.wide);
        let part = if part <= sk.len() { part } else { 0 };
        let (k_spill, rest_k) = std::mem::take(&mut sk).split_at_mut(part);
        let (a_spill, rest_a) = std::mem::take(&mut sa).split_at_mut(part);
        (sk, sa) = (rest_k, rest_a);
        tasks.push((k, v, p, (k_spill, a_spill)));
    }
    let tops: Vec<(Vec<(usize, usize)>, usize)> = tasks
        .into_par_iter()
        .with_max_len(1)
        .map(|(k, v, p, spill)| {
            let segments = if p.end > p.start {
                expand_top(
                    k,
                    v,
                    p.end - p.start,
                    gate,
                    &mut p.flags,
                    (&p.wide, spill),
                    pre,
                    post,
                )
            } else {
                Vec::new()
            };
            (segments, k.len())
        })
        .collect();
    // Join the pieces' outputs (each in segments where entries cancelled), highest first.
    let mut base = head;
    let mut all = Vec::new();
    for (segments, size) in tops {
        all.extend(segments.iter().rev().map(|&(a, b)| (base + a, base + b)));
        base += size;
    }
    all.reverse();
    if all.is_empty() {
        return (head, 0);
    }
    join_segments(whole_keys, whole_amps, &all)
}

/// Pass 2 of a gate that creates no entry (pass 1 found every pair entry partnered, so
/// `keys.len()` is the input length: the inverse of a split, on the state that split made),
/// **forwards**: groups from the first to the last, each written at or below where it is read,
/// so entries that cancel close up as the pass goes and no final move of the output is
/// needed. Returns the output length.
///
/// In a group, each `lo` entry of the lower half meets its partner at a cursor over the upper
/// half's `hi` entries (with nothing unpartnered the two classes are in bijection and in the
/// same order); both new values are computed at once, the `lo` one written out and the `hi`
/// one stored in its place (exact zero marks a cancelled one) until the upper half is
/// copied down. A group that `dense::window_bits` routes to the scratch kernels runs their
/// backward pass in its own place (it creates nothing, so its output fits there) and is then
/// moved down: a move of one group, in cache. Every entry is computed as in `expand_top`
/// (same products, same order), so the output is bit-identical to it.
fn shrink_forward<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    gate: &PairGate<T>,
    wide: &[Wide],
    pre: Pre,
    post: Post,
) -> usize
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let a = 1u64 << gate.lo;
    let b = 1u64 << gate.hi;
    let ab = a | b;
    let (d, o) = (gate.diag, gate.off);
    let cond = gate.cond;
    let zero = Complex::new(T::zero(), T::zero());
    let is_l = |k: u64| k & ab == a && cond.holds(k);
    let is_h = |k: u64| k & ab == b && cond.holds(k);
    let mut w = 0;
    let mut walk = GroupWalk::default();
    let mut scratch = None;
    let mut wide_next = 0;
    while let Some((start, mid, end)) = walk.next(keys, gate.hi) {
        let wb = dense::window_bits(gate.lo, gate.hi, end - start, T::CHEAP_ARITHMETIC);
        if let Some(wb) = wb {
            #[cfg(test)]
            tests::FORWARD_SCRATCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let scratch = scratch.get_or_insert_with(dense::Scratch::new);
            // The group's output: `[from, end)`, less the gap a wide group's upper half left.
            let (from, gap) = if wb == gate.hi {
                let from = dense::expand_group(
                    keys,
                    amps,
                    (start, end),
                    |_| end,
                    gate,
                    scratch,
                    &pre,
                    &post,
                );
                (from, None)
            } else {
                // It creates nothing: no room below the upper half's output, no spill.
                let lo_singles = wide[wide_next].lo_singles;
                wide_next += 1;
                // Written in its own place and moved down at once: not streamed, so the move
                // reads it from the cache.
                let warm = PairGate {
                    cold: false,
                    ..*gate
                };
                let (group, gate_w) = ((start, mid, end), (&warm, wb));
                let no_spill = (&mut [][..], &mut [][..]);
                dense::expand_wide(
                    keys, amps, group, end, gate_w, lo_singles, scratch, no_spill, &pre, &post,
                )
            };
            let (g0, g1) = gap.unwrap_or((end, end));
            w = close_gaps(keys, amps, [(from, g0), (g1, end)].into_iter(), w);
            continue;
        }
        // Lower half: each lo entry with its partner, the next hi entry of the upper half.
        let mut c = mid;
        for i in start..mid {
            prefetch(keys, i + AHEAD);
            prefetch(amps, i + AHEAD);
            let (k, v) = (keys[i], amps[i]);
            if is_l(k) {
                while !is_h(keys[c]) {
                    c += 1;
                }
                debug_assert_eq!(keys[c], k + (b - a));
                let kh = keys[c];
                let (vl, vh) = (pre(k, v), pre(kh, amps[c]));
                let nl = d * vl + o * vh;
                let nh = o * vl + d * vh;
                amps[c] = if T::survives(nh, vl, vh) {
                    post(kh, nh)
                } else {
                    zero
                };
                c += 1;
                if T::survives(nl, vl, vh) {
                    keys[w] = k;
                    amps[w] = post(k, nl);
                    w += 1;
                }
            } else {
                keys[w] = k;
                amps[w] = post(k, pre(k, v));
                w += 1;
            }
        }
        // Upper half: the hi entries are finished (or cancelled); the others get their phases.
        for j in mid..end {
            prefetch(keys, j + AHEAD);
            prefetch(amps, j + AHEAD);
            let (k, v) = (keys[j], amps[j]);
            if is_h(k) {
                if v != zero {
                    keys[w] = k;
                    amps[w] = v;
                    w += 1;
                }
            } else {
                keys[w] = k;
                amps[w] = post(k, pre(k, v));
                w += 1;
            }
        }
    }
    debug_assert_eq!(wide_next, wide.len());
    w
}

/// [`expand_raised`] without the final move: returns the output's segments, highest first (one,
/// `[w, len)`, unless entries cancelled in a wide group's upper half).
#[allow(clippy::too_many_arguments)]
fn expand_top<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    n: usize,
    gate: &PairGate<T>,
    flags: &mut [Flags],
    (wide, spill): (&[Wide], Spill<'_, T>),
    pre: Pre,
    post: Post,
) -> Vec<(usize, usize)>
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let total = keys.len();
    if total == n {
        #[cfg(test)]
        tests::FORWARD.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return vec![(0, shrink_forward(keys, amps, gate, wide, pre, post))];
    }
    let a = 1u64 << gate.lo;
    let b = 1u64 << gate.hi;
    let ab = a | b;
    let delta = b - a;
    let (d, o) = (gate.diag, gate.off);
    let cond = gate.cond;
    let zero = Complex::new(T::zero(), T::zero());
    let is_l = |k: u64| k & ab == a && cond.holds(k);
    let is_h = |k: u64| k & ab == b && cond.holds(k);
    let mut w = total;
    let mut end = n;
    let mut scratch = None;
    let (mut segments, mut top) = (Vec::new(), total);
    let mut wide_left = wide.len();
    // The last group's shape, where the next one's boundaries are searched first.
    let mut guess = (0, 0);
    while end > 0 {
        let (start, mid) = group_before_near(&keys[..n], end, gate.hi, guess);
        guess = (end - start, mid - start);
        let wb = dense::window_bits(gate.lo, gate.hi, end - start, T::CHEAP_ARITHMETIC);
        if let Some(wb) = wb {
            let scratch = scratch.get_or_insert_with(dense::Scratch::new);
            if wb == gate.hi {
                w = dense::expand_group(
                    keys,
                    amps,
                    (start, end),
                    |_| w,
                    gate,
                    scratch,
                    &pre,
                    &post,
                );
            } else {
                wide_left -= 1;
                let (lo_singles, group) = (wide[wide_left].lo_singles, (start, mid, end));
                let (gate_w, pre, post) = ((gate, wb), &pre, &post);
                if mid == end {
                    // No upper half: no partner, nothing cancels, no scratch.
                    let stream = dense::streams(gate, amps, end - start);
                    let (arrays, at) = ((&mut *keys, &mut *amps), (start, end, w));
                    let (gate_l, phases) = ((gate, lo_singles), (pre, post));
                    w = if stream {
                        dense::expand_wide_lower::<T, _, _, true>(arrays, at, gate_l, phases)
                    } else {
                        dense::expand_wide_lower::<T, _, _, false>(arrays, at, gate_l, phases)
                    };
                } else {
                    let spill = (&mut *spill.0, &mut *spill.1);
                    let (new_w, gap) = dense::expand_wide(
                        keys, amps, group, w, gate_w, lo_singles, scratch, spill, pre, post,
                    );
                    if let Some((from, to)) = gap {
                        segments.push((to, top));
                        top = from;
                    }
                    w = new_w;
                }
            }
            end = start;
            continue;
        }
        // Upper half: [mid, end) with the new hi entries of the flagged lo entries.
        let u_top = w;
        let mut p = prev_flag(flags, UNPARTNERED, start, mid);
        let mut q = mid; // partnered lo cursor: the next one is below q
        let mut r = end;
        loop {
            let up = p.map(|p| keys[p] + delta);
            if r > mid && up.is_none_or(|u| keys[r - 1] > u) {
                r -= 1;
                let (k, v) = (keys[r], amps[r]);
                if is_h(k) {
                    if get(flags, r) {
                        w -= 1;
                        keys[w] = k;
                        amps[w] = v;
                        put_flag(flags, w, true);
                    } else {
                        // The partner: the partnered lo entries are in the same order.
                        q = prev_flag(flags, PARTNERED, start, q).unwrap_or(start);
                        let kl = keys[q];
                        let (vl, vh) = (pre(kl, amps[q]), pre(k, v));
                        let nl = d * vl + o * vh;
                        let nh = o * vl + d * vh;
                        amps[q] = if T::survives(nl, vl, vh) {
                            post(kl, nl)
                        } else {
                            zero
                        };
                        if T::survives(nh, vl, vh) {
                            w -= 1;
                            keys[w] = k;
                            amps[w] = post(k, nh);
                            put_flag(flags, w, false);
                        }
                    }
                } else {
                    w -= 1;
                    keys[w] = k;
                    amps[w] = post(k, pre(k, v));
                    put_flag(flags, w, false);
                }
            } else if let (Some(pi), Some(k)) = (p, up) {
                let v = pre(keys[pi], amps[pi]);
                w -= 1;
                keys[w] = k;
                amps[w] = post(k, o * v);
                put_flag(flags, w, false);
                p = prev_flag(flags, UNPARTNERED, start, pi);
            } else {
                break;
            }
        }
        // Lower half: [start, mid) with the new lo entries of the flagged hi entries now in
        // [w, u_top).
        let u_bottom = w;
        let mut s = prev_flag(flags, UNPARTNERED, u_bottom, u_top);
        let mut r = mid;
        loop {
            let down = s.map(|s| keys[s] - delta);
            if r > start && down.is_none_or(|dk| keys[r - 1] > dk) {
                r -= 1;
                let (k, v) = (keys[r], amps[r]);
                if is_l(k) {
                    if get(flags, r) {
                        w -= 1;
                        keys[w] = k;
                        amps[w] = post(k, d * pre(k, v));
                    } else if v != zero {
                        w -= 1;
                        keys[w] = k;
                        amps[w] = v;
                    }
                } else {
                    w -= 1;
                    keys[w] = k;
                    amps[w] = post(k, pre(k, v));
                }
            } else if let (Some(si), Some(k)) = (s, down) {
                let kh = keys[si];
                let vh = pre(kh, amps[si]);
                amps[si] = post(kh, d * vh);
                w -= 1;
                keys[w] = k;
                amps[w] = post(k, o * vh);
                s = prev_flag(flags, UNPARTNERED, u_bottom, si);
            } else {
                break;
            }
        }
        end = start;
    }
    debug_assert_eq!(wide_left, 0);
    segments.push((w, top));
    segments
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::kernels::pair::{self, VecSink};

    type Phase<'a> = &'a (dyn Fn(u64, Complex<f64>) -> Complex<f64> + Sync);

    static CANCELLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Runs of the parallel pass 2 that were cut into more than one piece.
    static PIECES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Groups whose pair entries pass 1 flagged whole (one half without pair entries).
    pub(super) static WHOLE: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Groups whose partners pass 1 found by the merge-join.
    pub(super) static MERGED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Wide groups both passes handled by window pairs in the dense scratch (`dense`).
    pub(super) static WIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// Groups both passes handled in the dense scratch (`dense`).
    pub(super) static SCRATCH: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Turns the state-level path without pass 1 (`State::try_shrink`) off, so the general
    /// path runs instead, for the comparison of the two.
    pub(crate) static SHRINK_OFF: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Wide groups whose upper half's lowest entries were read from a spill
    /// (`dense::expand_wide`) instead of the half being moved up.
    pub(crate) static SPILLED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Turns the state's spill for wide groups off (`State::apply_dense_in_place`), so that
    /// each moves its upper half.
    pub(crate) static SPILL_OFF: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Wide groups without an upper half run by `dense::expand_wide_lower`.
    pub(crate) static LOWER_ONLY: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Lets the state's wide groups read a spill at any state size, not only from
    /// `dense::SPILL_BYTES` (unless [`SPILL_OFF`]).
    pub(crate) static SPILL_ANY: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Turns the forward pass into the room below a sector's entries
    /// (`dense::expand_dense_forward`) off, so the backward pass runs instead, for the
    /// comparison of the two.
    pub(crate) static FORWARD_OFF: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Sectors a dense gate ran forwards into the room below their entries.
    pub(crate) static FORWARDS: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// `group_before_near` is `group_before` for every guess, on random sorted keys.
    #[test]
    fn a_group_found_backwards_from_a_guess_is_the_same_group() {
        let mut seed = 5u64;
        for case in 0..200 {
            let n = 1 + (splitmix(&mut seed) % 300) as usize;
            let mut keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed) % 2000).collect();
            keys.sort_unstable();
            let hi = (splitmix(&mut seed) % 11) as u32;
            let mut end = n;
            while end > 0 {
                let (start, mid) = group_before(&keys, end, hi);
                for guess in [(0, 0), (1, 0), (end - start, mid - start), (3, 9), (n, 1)] {
                    let near = group_before_near(&keys, end, hi, guess);
                    assert_eq!(near, (start, mid), "case {case}: group ending at {end}");
                }
                end = start;
            }
        }
    }

    /// Turns the join of an output's segments in place (`join_segments`) off, so that they
    /// all go down to 0, for the comparison of the two.
    pub(crate) static JOIN_OFF: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// Outputs whose segments were joined in place, left above 0.
    pub(crate) static JOINED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Wide merges and splits, again and again on one random state (bit `hi` near the top of
    /// the keys: one wide group in window pairs): where a group's upper half cancels entries
    /// the output is in several segments, joined around the largest that may stay while the
    /// room below stays small (`join_segments`). The entries are bit for bit those with every
    /// segment moved down to 0, the room below differs (and is given back when a later
    /// output's segments may not stay), and the merges undo the splits.
    #[test]
    fn an_output_in_segments_joins_in_place_bit_for_bit() {
        use crate::{Controls, State};
        use std::sync::atomic::Ordering;
        let n = 200_000;
        let (lo, mid, hi) = crate::bench::qubits(n);
        let base = crate::bench::random_state::<f64>(n).unwrap();
        let entries = crate::test_states::entry_bits;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let cycle = |off: bool| {
            JOIN_OFF.store(off, Ordering::Relaxed);
            let before = JOINED.load(Ordering::Relaxed);
            let mut s: State<f64> = base.clone();
            let mut seen = Vec::new();
            for _ in 0..3 {
                pool.install(|| s.merge(lo, hi, mid, Controls::NONE))
                    .unwrap();
                seen.push((entries(&s), s.sectors[0].keys.head()));
                pool.install(|| s.split(mid, hi, lo, Controls::NONE))
                    .unwrap();
                seen.push((entries(&s), s.sectors[0].keys.head()));
            }
            JOIN_OFF.store(false, Ordering::Relaxed);
            (s, seen, JOINED.load(Ordering::Relaxed) - before)
        };
        let (down, down_seen) = {
            let (s, seen, _) = cycle(true);
            (s, seen)
        };
        let (low, low_seen, joined) = cycle(false);
        assert!(joined >= 1, "no output joined in place");
        // A gate whose segments may not stay moves them down to 0 over the room a gate before
        // it left below: the room is given back, it does not pile up.
        let heads: Vec<usize> = low_seen.iter().map(|&(_, h)| h).collect();
        let first_room = heads.iter().position(|&h| h > 0);
        assert!(
            first_room.is_some_and(|i| heads[i..].contains(&0)),
            "room below kept and then given back: {heads:?}"
        );
        let mut heads_differ = false;
        for (i, ((e, h), (ed, hd))) in low_seen.iter().zip(&down_seen).enumerate() {
            assert!(e == ed, "gate {i}: the same entries and bits");
            assert_eq!(low.sectors[0].keys.head(), low.sectors[0].amps.head());
            heads_differ |= h > hd;
        }
        assert!(heads_differ, "room was left below a joined output");
        assert_eq!(entries(&low), entries(&down));
        assert_eq!(low.len(), base.len(), "the splits undid the merges");
        for ((k, v), (kb, vb)) in low.entries().zip(base.entries()) {
            assert!(k == kb && (v - vb).norm() < 1e-12, "{k:?} undone");
        }
    }

    /// Split and merge, again and again on one state of dense random keys whose amplitudes
    /// cancel in pairs: each split keeps the room its cancelled entries leave below its
    /// output (`Lane` head), each merge that undoes it runs forwards into that room, and the
    /// entries are bit for bit those of the same gates with the forward pass off (the
    /// backward pass on a sector with room below), on one thread and two (pieces).
    #[test]
    fn a_dense_gate_runs_forwards_into_the_room_below_bit_for_bit() {
        use crate::{Controls, State};
        use std::sync::atomic::Ordering;
        let n = 200_000;
        let (lo, mid, hi) = crate::bench::qubits(n);
        let base = crate::bench::random_state::<f64>(n).unwrap();
        let entries = crate::test_states::entry_bits;
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let cycle = |off: bool| {
                FORWARD_OFF.store(off, Ordering::Relaxed);
                let before = FORWARDS.load(Ordering::Relaxed);
                let mut s: State<f64> = base.clone();
                let mut seen = Vec::new();
                for _ in 0..3 {
                    pool.install(|| s.split(mid, lo, hi, Controls::NONE))
                        .unwrap();
                    let head = s.sectors[0].keys.head();
                    assert_eq!(head, s.sectors[0].amps.head());
                    seen.push((entries(&s), head));
                    pool.install(|| s.merge(hi, lo, mid, Controls::NONE))
                        .unwrap();
                    seen.push((entries(&s), s.sectors[0].keys.head()));
                }
                FORWARD_OFF.store(false, Ordering::Relaxed);
                (s, seen, FORWARDS.load(Ordering::Relaxed) - before)
            };
            let (back, back_seen, none) = cycle(true);
            let (fwd, fwd_seen, forwards) = cycle(false);
            assert_eq!(none, 0, "threads {threads}: the forward pass was off");
            for (i, ((e, h), (eb, _))) in fwd_seen.iter().zip(&back_seen).enumerate() {
                assert!(
                    e == eb,
                    "threads {threads}, gate {i}: the same entries and bits"
                );
                if threads == 1 {
                    // The split leaves its cancelled entries' room below (about 5 % of the
                    // state here); the merge fills it, forwards, from 0.
                    if i % 2 == 0 {
                        assert!(*h > n / 50, "gate {i}: room kept below the split ({h})");
                    } else {
                        assert_eq!(*h, 0, "gate {i}: the merge wrote from 0");
                    }
                }
            }
            if threads == 1 {
                assert_eq!(forwards, 3, "every merge ran forwards");
            }
            assert_eq!(fwd.len(), base.len(), "the merges undid the splits");
            for ((k, v), (kb, vb)) in fwd.entries().zip(base.entries()) {
                assert!(k == kb && (v - vb).norm() < 1e-12, "{k:?} undone");
            }
            assert_eq!(entries(&back), entries(&fwd));
        }
    }

    /// Gates `State::try_shrink` applied without pass 1.
    pub(crate) static SHRUNK: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// `creates_nothing` against pass 1 on random key sets over 11 bits, closed under the
    /// pairing (every pair entry's partner added) and then perturbed (a pair entry dropped,
    /// or one moved to a free key of its class and group, so that the counts still agree),
    /// with and without a condition: it answers exactly whether pass 1 counts no growth and
    /// routes no group to the scratch kernels.
    #[test]
    fn creates_nothing_is_pass_1_finding_nothing() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let (mut yes, mut no) = (0, 0);
        for case in 0..3000 {
            let hi = 1 + (splitmix(&mut seed) % 10) as u32;
            let lo = (splitmix(&mut seed) % u64::from(hi)) as u32;
            let (a, b) = (1u64 << lo, 1u64 << hi);
            let c = (0..11).find(|&c| c != lo && c != hi).unwrap();
            let cond = Cond {
                mask: (case % 2) << c,
                value: 0,
                any: 0,
            };
            let len = 1 + splitmix(&mut seed) % 200;
            let mut keys: Vec<u64> = (0..len).map(|_| splitmix(&mut seed) & 0x7ff).collect();
            let partners: Vec<u64> = keys
                .iter()
                .filter(|&&k| (k & (a | b)).count_ones() == 1)
                .map(|&k| k ^ (a | b))
                .collect();
            keys.extend(partners);
            keys.sort_unstable();
            keys.dedup();
            let pair = |k: u64| (k & (a | b)).count_ones() == 1 && cond.holds(k);
            let pairs: Vec<usize> = (0..keys.len()).filter(|&i| pair(keys[i])).collect();
            match (case / 2) % 3 {
                1 if !pairs.is_empty() => {
                    keys.remove(pairs[(splitmix(&mut seed) as usize) % pairs.len()]);
                }
                2 if pairs.len() >= 4 => {
                    // Move one pair entry to a free key of its class and group (a bit below
                    // `hi` flipped): as many lo as hi entries there, not all partnered.
                    let i = pairs[(splitmix(&mut seed) as usize) % pairs.len()];
                    let k = keys.remove(i);
                    let moved = (0..hi)
                        .filter(|&x| x != lo)
                        .map(|x| k ^ (1 << x))
                        .find(|&m| pair(m) && !keys.contains(&m));
                    if let Some(m) = moved {
                        keys.push(m);
                        keys.sort_unstable();
                    }
                }
                _ => {}
            }
            let mut flags = vec![[0u64; 2]; keys.len().div_ceil(64) + 1];
            let mut wide = Vec::new();
            let grow = mark_unpartnered(&keys, lo, hi, cond, &mut flags, &mut wide, true);
            let mut routed = false;
            crate::kernels::pair::for_each_group(&keys, hi, |start, _, end| {
                routed |= dense::window_bits(lo, hi, end - start, true).is_some();
            });
            let expected = grow == 0 && !routed;
            assert_eq!(
                creates_nothing(&keys, lo, hi, cond, true),
                expected,
                "case {case}: lo {lo} hi {hi} keys {keys:?}"
            );
            if expected {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(
            yes > 300 && no > 300,
            "both answers were exercised: {yes} / {no}"
        );
    }

    /// Merges that undo splits (nothing created) on a 300 000-entry random state with one
    /// and three sectors, on a game-shaped state of 200 000, controlled (on a square that
    /// varies) and not, on pools of
    /// one and two threads (the single sector in parallel pieces): the path without pass 1
    /// gives bit for bit what the general path gives, and a merge that would create entries
    /// (on the split state with some entries dropped) is left to the general path.
    #[test]
    fn a_merge_that_creates_nothing_skips_pass_1_and_matches_the_general_path() {
        use crate::{Controls, State};
        use std::sync::atomic::Ordering;
        let entries = crate::test_states::entry_bits;
        let mut bases = Vec::new();
        for sectors in [1u32, 3] {
            let base = crate::test_states::random_state(300_000, 11, !0xf00, |r| {
                u128::from(rand::Rng::random_range(r, 0..sectors))
            });
            bases.push((
                format!("random, {sectors} sectors"),
                base,
                (3u8, 9u8, 10u8),
                5u8,
            ));
        }
        let (q, t1, t2, p) = crate::bench::game_qubits(200_000);
        bases.push((
            "game-shaped".to_string(),
            crate::bench::game_state::<f64>(200_000).unwrap(),
            (q, t1, t2),
            p,
        ));
        for (what, base, (q, t1, t2), control) in &bases {
            for (controls, threads) in [
                (Controls::NONE, 1),
                (Controls::NONE, 2),
                (Controls::empty_path(1 << *control), 2),
            ] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut split = base.clone();
                pool.install(|| split.split(*q, *t1, *t2, controls))
                    .unwrap();
                let run = |input: &State<f64>, off: bool| {
                    SHRINK_OFF.store(off, Ordering::Relaxed);
                    let before = SHRUNK.load(Ordering::Relaxed);
                    let mut s = input.clone();
                    pool.install(|| s.merge(*t2, *t1, *q, controls)).unwrap();
                    let skipped = SHRUNK.load(Ordering::Relaxed) > before;
                    SHRINK_OFF.store(false, Ordering::Relaxed);
                    (s, skipped)
                };
                let ((general, _), (fast, skipped)) = (run(&split, true), run(&split, false));
                assert!(skipped, "{what}, threads {threads}: pass 1 was skipped");
                assert_eq!(
                    entries(&fast),
                    entries(&general),
                    "{what}, threads {threads}"
                );
                assert_eq!(fast.len(), base.len(), "{what}: the merge undid the split");
                for ((k, v), (kb, vb)) in fast.entries().zip(base.entries()) {
                    assert!(k == kb && (v - vb).norm() < 1e-12, "{what}: {k:?} undone");
                }
                // With every seventh entry of the split state dropped, pairs lose partners:
                // the merge creates entries, and the general path runs.
                let holed = State::from_amplitudes(
                    (split.entries().enumerate())
                        .filter(|(i, _)| i % 7 != 3)
                        .map(|(_, e)| e)
                        .collect(),
                    crate::Normalization::Renormalize,
                )
                .unwrap();
                let ((general, _), (fast, skipped)) = (run(&holed, true), run(&holed, false));
                assert!(
                    !skipped,
                    "{what}, threads {threads}: this merge grows the state"
                );
                assert_eq!(
                    entries(&fast),
                    entries(&general),
                    "{what}, threads {threads}"
                );
            }
        }
    }

    /// Runs (or pieces) that pass 2 wrote forwards (`shrink_forward`: nothing created).
    pub(super) static FORWARD: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Groups of a forward pass 2 that went through the dense scratch kernels.
    pub(super) static FORWARD_SCRATCH: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Groups whose partners pass 1 found by the dense bitmap join.
    pub(super) static DENSE: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    fn splitmix(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Grows both arrays to `len` with values no pass may read: keys far above every
    /// other, amplitudes NaN.
    fn grow_with_garbage(k: &mut Vec<u64>, a: &mut Vec<Complex<f64>>, len: usize) {
        k.resize(len, u64::MAX - 1);
        a.resize(len, Complex::new(f64::NAN, f64::NAN));
    }

    thread_local! {
        /// Whether [`in_place`] and [`in_pieces`] on this thread give the pass no spill.
        static NO_SPILL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// A spill of `len` entries for pass 2's wide groups, or none under [`NO_SPILL`]; its
    /// values are garbage no pass may read before writing.
    fn spill_for(len: usize) -> (Vec<u64>, Vec<Complex<f64>>) {
        let len = if NO_SPILL.get() { 0 } else { len };
        (
            vec![u64::MAX; len],
            vec![Complex::new(f64::NAN, f64::NAN); len],
        )
    }

    /// Runs the in-place kernel on a copy of the run and returns its output.
    fn in_place(
        keys: &[u64],
        amps: &[Complex<f64>],
        gate: &PairGate<f64>,
        pre: impl Fn(u64, Complex<f64>) -> Complex<f64>,
        post: impl Fn(u64, Complex<f64>) -> Complex<f64>,
    ) -> (Vec<u64>, Vec<Complex<f64>>) {
        let n = keys.len();
        let mut flags = vec![[0u64; 2]; n.div_ceil(64) + 1];
        let mut wide = Vec::new();
        let g = mark_unpartnered(
            keys, gate.lo, gate.hi, gate.cond, &mut flags, &mut wide, true,
        );
        let (mut k, mut a) = (keys.to_vec(), amps.to_vec());
        // The grown room holds stale values, as a lane's room above does
        // (`Lane::grow_stale`): the pass must write every slot of it before it reads it.
        grow_with_garbage(&mut k, &mut a, n + g);
        flags.resize((n + g).div_ceil(64) + 1, [0; 2]);
        let (mut sk, mut sa) = spill_for(spill_need(&wide));
        let spill = (&wide[..], (&mut sk[..], &mut sa[..]));
        let (from, len) = expand_raised(&mut k, &mut a, 0, n, gate, &mut flags, spill, pre, post);
        // Output left above 0 ends at the top, only the room of cancelled entries below it,
        // or (segments joined in place) has little room below it.
        assert!(
            from == 0
                || (g > 0 && from + len == n + g)
                || (g > 0 && from + len < n + g && from * Lane::<u64>::SETTLE_SHARE <= len),
            "the output's place"
        );

        k.truncate(from + len);
        a.truncate(from + len);
        k.drain(..from);
        a.drain(..from);
        if len < n + g {
            CANCELLED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        (k, a)
    }

    /// Runs the parallel pass 2 ([`expand_pieces`]) on a copy of the run cut into about
    /// `parts` pieces at group boundaries, each flagged by its own pass 1.
    fn in_pieces(
        keys: &[u64],
        amps: &[Complex<f64>],
        gate: &PairGate<f64>,
        pre: impl Fn(u64, Complex<f64>) -> Complex<f64> + Sync,
        post: impl Fn(u64, Complex<f64>) -> Complex<f64> + Sync,
        parts: usize,
    ) -> (Vec<u64>, Vec<Complex<f64>>, usize) {
        let mut pieces: Vec<Piece> = pair::group_ranges(keys, gate.hi, parts)
            .into_iter()
            .map(|(start, end)| {
                let mut flags = vec![[0u64; 2]; (end - start).div_ceil(64) + 1];
                let mut wide = Vec::new();
                let (lo, hi, cond) = (gate.lo, gate.hi, gate.cond);
                let grow =
                    mark_unpartnered(&keys[start..end], lo, hi, cond, &mut flags, &mut wide, true);
                flags.resize((end - start + grow).div_ceil(64) + 1, [0; 2]);
                Piece {
                    start,
                    end,
                    grow,
                    flags,
                    wide,
                }
            })
            .collect();
        let g: usize = pieces.iter().map(|p| p.grow).sum();
        let (mut k, mut a) = (keys.to_vec(), amps.to_vec());
        grow_with_garbage(&mut k, &mut a, keys.len() + g);
        let (mut sk, mut sa) = spill_for(pieces.iter().map(|p| spill_need(&p.wide)).sum());
        let spill = (&mut sk[..], &mut sa[..]);
        let (from, len) = expand_pieces(&mut k, &mut a, 0, &mut pieces, gate, spill, &pre, &post);
        assert!(
            from == 0 || from * Lane::<u64>::SETTLE_SHARE <= len,
            "the output's place"
        );
        k.truncate(from + len);
        a.truncate(from + len);
        k.drain(..from);
        a.drain(..from);
        (k, a, pieces.len())
    }

    /// Wide groups whose write-back streams past the caches ([`PairGate::cold`]).
    pub(crate) static STREAMED: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// A random run of about 830 000 entries over 21 bits: two wide groups for bit 19, each
    /// above the streaming size. Amplitudes 1 or i, as the bench's, so that partnered pairs
    /// cancel and the halves' outputs leave gaps.
    fn wide_run(mut seed: u64) -> (Vec<u64>, Vec<Complex<f64>>) {
        let mut keys: Vec<u64> = (0..1usize << 20)
            .map(|_| splitmix(&mut seed) & ((1 << 21) - 1))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let amps = keys
            .iter()
            .map(|_| {
                if splitmix(&mut seed) & 1 == 1 {
                    Complex::new(1.0, 0.0)
                } else {
                    Complex::new(0.0, 1.0)
                }
            })
            .collect();
        (keys, amps)
    }

    /// `n` random amplitudes, real parts in `[-0.5, 0.5)`, imaginary in `[0, 1)`.
    fn random_amps(n: usize, seed: &mut u64) -> Vec<Complex<f64>> {
        (0..n)
            .map(|_| {
                let r = splitmix(seed);
                Complex::new(
                    (r & 0xffff) as f64 / 65536.0 - 0.5,
                    (r >> 48) as f64 / 65536.0,
                )
            })
            .collect()
    }

    /// Whether two outputs are the same entries, bit for bit.
    fn same_bits(a: &(Vec<u64>, Vec<Complex<f64>>), b: (&[u64], &[Complex<f64>])) -> bool {
        a.0 == b.0
            && a.1.len() == b.1.len()
            && (a.1.iter().zip(b.1))
                .all(|(x, y)| x.re.to_bits() == y.re.to_bits() && x.im.to_bits() == y.im.to_bits())
    }

    /// A wide group whose upper half's lowest entries pass 2 reads from a spill
    /// (`dense::expand_wide`) gives bit for bit what it gives when the half is moved up
    /// instead: [`wide_run`], a merge and a split (the lower halves grow, so their output
    /// places reach into the upper halves), with and without phases, plain and in pieces.
    #[test]
    fn a_spilled_upper_half_gives_the_same_bits() {
        use std::sync::atomic::Ordering;
        let (keys, amps) = wide_run(12);
        let (h, none) = (std::f64::consts::FRAC_1_SQRT_2, Cond::ALWAYS);
        let post = |k: u64, v: Complex<f64>| if (k >> 5) & 1 == 1 { v * -1.0 } else { v };
        for (off, phased) in [(h, false), (-h, true)] {
            let gate = PairGate::new(3, 19, none, Complex::new(h, 0.0), Complex::new(0.0, off));
            let post = |k: u64, v: Complex<f64>| if phased { post(k, v) } else { v };
            NO_SPILL.set(true);
            let moved = in_place(&keys, &amps, &gate, |_, v| v, post);
            let (pk, pa, _) = in_pieces(&keys, &amps, &gate, |_, v| v, post, 2);
            NO_SPILL.set(false);
            assert!(moved.0.len() > keys.len(), "the gate created entries");
            assert!(same_bits(&moved, (&pk, &pa)));
            let before = SPILLED.load(Ordering::Relaxed);
            let spilled = in_place(&keys, &amps, &gate, |_, v| v, post);
            assert!(SPILLED.load(Ordering::Relaxed) > before, "a spill was read");
            assert!(same_bits(&moved, (&spilled.0, &spilled.1)));
            let (pk, pa, _) = in_pieces(&keys, &amps, &gate, |_, v| v, post, 2);
            assert!(same_bits(&moved, (&pk, &pa)));
        }
    }

    /// A wide group without an upper half (`dense::expand_wide_lower`), large enough that a
    /// cold pass streams its new `hi` entries, gives bit for bit what the out-of-place kernel
    /// gives, cold and warm, plain and in pieces: random keys below 3 * 2^19 (the group for
    /// bit 19 above 2^20 holds only a lower half, about 380 000 entries), a controlled merge
    /// and split with phases.
    #[test]
    fn a_wide_group_without_upper_half_gives_the_same_bits() {
        use std::sync::atomic::Ordering;
        let mut seed = 13u64;
        let mut keys: Vec<u64> = (0..1usize << 21)
            .map(|_| splitmix(&mut seed) % (3 << 19))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let amps = random_amps(keys.len(), &mut seed);
        let upper = keys.iter().filter(|&&k| k >> 19 == 2).count();
        assert!(upper >= crate::kernels::dense::STREAM_MIN, "{upper}");
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let i = Complex::new(0.0, 1.0);
        let cond = Cond {
            mask: 1 << 7,
            value: 0,
            any: 0,
        };
        let pre = |k: u64, v: Complex<f64>| if (k >> 4) & 1 == 1 { v * i } else { v };
        let post = |k: u64, v: Complex<f64>| if (k >> 9) & 1 == 0 { v * -i } else { v };
        for off in [h, -h] {
            let warm = PairGate::new(2, 19, cond, Complex::new(h, 0.0), Complex::new(0.0, off));
            let (mut rk, mut ra) = (Vec::new(), Vec::new());
            let mut sink = VecSink {
                keys: &mut rk,
                amps: &mut ra,
            };
            pair::apply(&keys, &amps, &warm, false, pre, post, &mut sink);
            let reference = (rk, ra);
            let (lower, streamed) = (
                LOWER_ONLY.load(Ordering::Relaxed),
                STREAMED.load(Ordering::Relaxed),
            );
            let a = in_place(&keys, &amps, &warm, pre, post);
            assert!(
                LOWER_ONLY.load(Ordering::Relaxed) > lower,
                "the group ran without a scratch"
            );
            assert!(same_bits(&reference, (&a.0, &a.1)));
            let cold = PairGate { cold: true, ..warm };
            let b = in_place(&keys, &amps, &cold, pre, post);
            assert!(
                STREAMED.load(Ordering::Relaxed) > streamed,
                "the cold pass streamed"
            );
            assert!(same_bits(&reference, (&b.0, &b.1)));
            let (pk, pa, _) = in_pieces(&keys, &amps, &cold, pre, post, 2);
            assert!(same_bits(&reference, (&pk, &pa)));
        }
    }

    /// A cold pass (the write-back of its wide groups streamed by non-temporal stores) gives
    /// bit for bit what the same pass gives with ordinary stores: a random run of about 830 000
    /// entries over 21 bits (two wide groups for bit 19, each above the streaming size), the
    /// bench's amplitudes (1 or i, so partnered pairs cancel and the halves' outputs leave
    /// gaps), a merge and a split, plain and in pieces.
    #[test]
    fn a_cold_pass_streams_the_same_bits() {
        use std::sync::atomic::Ordering;
        let (keys, amps) = wide_run(11);
        let (h, none) = (std::f64::consts::FRAC_1_SQRT_2, Cond::ALWAYS);
        for off in [h, -h] {
            let warm = PairGate::new(3, 19, none, Complex::new(h, 0.0), Complex::new(0.0, off));
            let cold = PairGate { cold: true, ..warm };
            let post = |k: u64, v: Complex<f64>| if (k >> 5) & 1 == 1 { v * -1.0 } else { v };
            let before = STREAMED.load(Ordering::Relaxed);
            let a = in_place(&keys, &amps, &warm, |_, v| v, post);
            assert_eq!(
                STREAMED.load(Ordering::Relaxed),
                before,
                "a warm pass streams nothing"
            );
            let b = in_place(&keys, &amps, &cold, |_, v| v, post);
            assert!(
                STREAMED.load(Ordering::Relaxed) > before,
                "the cold pass streamed"
            );
            assert!(a.0.len() > keys.len(), "the gate created entries");
            assert_eq!(a.0, b.0);
            assert!(a.1.iter().zip(&b.1).all(|(x, y)| {
                x.re.to_bits() == y.re.to_bits() && x.im.to_bits() == y.im.to_bits()
            }));
            let (c, d, _) = in_pieces(&keys, &amps, &cold, |_, v| v, post, 2);
            assert_eq!(a.0, c);
            assert!(a.1.iter().zip(&d).all(|(x, y)| {
                x.re.to_bits() == y.re.to_bits() && x.im.to_bits() == y.im.to_bits()
            }));
        }
    }

    /// The in-place kernel gives bit for bit what the out-of-place merge kernel gives: random
    /// runs (dense, sparse, clustered keys), every bit pair shape (adjacent, far apart, bit
    /// 63), controls, fused phases, and inputs built to cancel.
    #[test]
    fn matches_the_out_of_place_kernel_bit_for_bit() {
        let mut seed = 7u64;
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let i = Complex::new(0.0, 1.0);
        for case in 0..400 {
            let mut n = 1 + (splitmix(&mut seed) % 300) as usize;
            let mut span = [4u32, 8, 12, 20, 64][case % 5];
            // Every other 12-bit run filled densely enough for the scratch kernel's groups.
            if case % 10 == 2 {
                n = 1000 + 8 * n;
            }
            // One run in five 17 bits wide and a quarter full: with bit hi at 15 or 16 its
            // groups are wide (window pairs in the scratch).
            let wide = case % 10 == 6 || case % 10 == 7;
            if wide {
                span = 17;
                n = 1 << 15;
            }
            let mut keys: Vec<u64> = (0..n)
                .map(|_| {
                    let r = splitmix(&mut seed);
                    if span == 64 {
                        r
                    } else {
                        r & ((1u64 << span) - 1)
                    }
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let bits = span.min(64);
            let lo = (splitmix(&mut seed) % u64::from(bits)) as u32;
            let mut hi = (splitmix(&mut seed) % u64::from(bits)) as u32;
            if hi == lo {
                hi = (lo + 1) % bits;
            }
            let (mut lo, mut hi) = (lo.min(hi), lo.max(hi));
            if wide {
                lo %= 13;
                hi = 15 + hi % 2;
            }
            // Game-like runs: one gate bit empty in every branch (a split to an empty
            // square), so groups have no partnered pairs.
            if case % 8 >= 5 {
                let clear = if case % 8 == 5 { lo } else { hi };
                for k in &mut keys {
                    *k &= !(1u64 << clear);
                }
                keys.sort_unstable();
                keys.dedup();
            }
            let cond = if case % 3 == 0 {
                let c = splitmix(&mut seed) & !(1u64 << lo | 1u64 << hi) & 0b1_0110_0000;
                Cond {
                    mask: c,
                    value: c & 0b1_0000_0000,
                    any: 0,
                }
            } else {
                Cond {
                    mask: 0,
                    value: 0,
                    any: 0,
                }
            };
            // Every other dense run is built to cancel too (the forward pass's scratch groups).
            let cancel = case % 4 == 3 || case % 20 == 12;
            let inverse = case % 2 == 1 || cancel;
            let off = Complex::new(0.0, if inverse { -h } else { h });
            let gate = PairGate::new(lo, hi, cond, Complex::new(h, 0.0), off);
            // Amplitudes: random, or the image of a sqrt-iSwap so the inverse cancels.
            let mut amps = random_amps(keys.len(), &mut seed);
            if cancel {
                let fwd = PairGate::new(lo, hi, cond, Complex::new(h, 0.0), Complex::new(0.0, h));
                let (mut k2, mut a2) = (Vec::new(), Vec::new());
                pair::apply(
                    &keys,
                    &amps,
                    &fwd,
                    true,
                    |_, v| v,
                    |_, v| v,
                    &mut VecSink {
                        keys: &mut k2,
                        amps: &mut a2,
                    },
                );
                keys = k2;
                amps = a2;
            }
            let ph = 1 + (case % 7) as u32;
            let pre = move |k: u64, v: Complex<f64>| if (k >> ph) & 1 == 1 { v * i } else { v };
            let post = move |k: u64, v: Complex<f64>| if (k >> lo) & 1 == 0 { v * -i } else { v };
            for plain in [true, false] {
                let (mut rk, mut ra) = (Vec::new(), Vec::new());
                let (p1, p2): (Phase, Phase) = if plain {
                    (&|_, v| v, &|_, v| v)
                } else {
                    (&pre, &post)
                };
                pair::apply(
                    &keys,
                    &amps,
                    &gate,
                    plain,
                    p1,
                    p2,
                    &mut VecSink {
                        keys: &mut rk,
                        amps: &mut ra,
                    },
                );
                let (k, a) = in_place(&keys, &amps, &gate, p1, p2);
                assert_eq!(k, rk, "keys, case {case}");
                let bits = |v: &[Complex<f64>]| -> Vec<(u64, u64)> {
                    v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
                };
                assert_eq!(bits(&a), bits(&ra), "amplitudes, case {case}");
                // The parallel pass 2, cut into 1 to 9 pieces (as many as the groups allow).
                for parts in [1, 2, 3, 9] {
                    let (kp, ap, cut) = in_pieces(&keys, &amps, &gate, p1, p2, parts);
                    assert_eq!(kp, rk, "keys, case {case}, {parts} parts");
                    assert_eq!(
                        bits(&ap),
                        bits(&ra),
                        "amplitudes, case {case}, {parts} parts"
                    );
                    if cut > 1 {
                        PIECES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        }
        // The cancelling inputs did cancel (and were dropped the same way).
        assert!(CANCELLED.load(std::sync::atomic::Ordering::Relaxed) >= 50);
        // The inputs built to cancel (every pair partnered) took the forward pass 2, whole
        // runs and pieces, and so did dense and wide groups in it.
        let forward = FORWARD.load(std::sync::atomic::Ordering::Relaxed);
        assert!(forward >= 500, "{forward}");
        let forward_scratch = FORWARD_SCRATCH.load(std::sync::atomic::Ordering::Relaxed);
        assert!(forward_scratch >= 100, "{forward_scratch}");
        // The whole-class flagging ran, on many groups.
        let whole = WHOLE.load(std::sync::atomic::Ordering::Relaxed);
        assert!(whole >= 100, "{whole}");
        // Both joins ran on many groups: the dense bitmap join and the merge-join (whose
        // groups are those neither whole nor dense; the 64-bit keys are never dense).
        let dense = DENSE.load(std::sync::atomic::Ordering::Relaxed);
        assert!(dense >= 100, "{dense}");
        let merged = MERGED.load(std::sync::atomic::Ordering::Relaxed);
        assert!(merged >= 100, "{merged}");
        // Wide groups (window pairs) ran, in both passes.
        let wide = WIDE.load(std::sync::atomic::Ordering::Relaxed);
        assert!(wide >= 40, "{wide}");
        // Among them, wide groups without an upper half (bit hi cleared in every key).
        let lower = LOWER_ONLY.load(std::sync::atomic::Ordering::Relaxed);
        assert!(lower >= 4, "{lower}");
        // The scratch kernel (both passes of dense groups) ran on many groups.
        let scratch = SCRATCH.load(std::sync::atomic::Ordering::Relaxed);
        assert!(scratch >= 100, "{scratch}");
        // The parallel pass 2 ran cut into several pieces, on most runs.
        let pieces = PIECES.load(std::sync::atomic::Ordering::Relaxed);
        assert!(pieces >= 500, "{pieces}");
    }
}

#[cfg(test)]
mod timing {
    use super::*;

    /// The calling thread's CPU time (what a loaded machine does not inflate).
    struct Cpu(f64);

    impl Cpu {
        fn now() -> Self {
            Cpu(crate::bench::thread_cpu_seconds().unwrap_or(0.0))
        }
        fn elapsed(&self) -> std::time::Duration {
            std::time::Duration::from_secs_f64(
                crate::bench::thread_cpu_seconds().unwrap_or(0.0) - self.0,
            )
        }
    }

    /// `cargo test --release -p qchess-sim --lib time_passes -- --ignored --nocapture`:
    /// the two passes of the split's sqrt-iSwap at 1e7 (random and game states), timed.
    #[test]
    #[ignore]
    fn time_passes() {
        let n = 10_000_000;
        let h = std::f64::consts::FRAC_1_SQRT_2;
        for game in [false, true] {
            let s = if game {
                crate::bench::game_state::<f64>(n).unwrap()
            } else {
                crate::bench::random_state::<f64>(n).unwrap()
            };
            let (q, t1) = if game {
                let (q, t1, _, _) = crate::bench::game_qubits(n);
                (q, t1)
            } else {
                let (lo, mid, _) = crate::bench::qubits(n);
                (mid, lo)
            };
            let keys = s.sectors[0].keys.to_vec();
            let amps = s.sectors[0].amps.to_vec();
            let cond = Cond {
                mask: 0,
                value: 0,
                any: 0,
            };
            let gate = PairGate::new(
                u32::from(q),
                u32::from(t1),
                cond,
                Complex::new(h, 0.0),
                Complex::new(0.0, h),
            );
            for _ in 0..5 {
                let t = Cpu::now();
                let mut flags = vec![[0u64; 2]; n.div_ceil(64) + 1];
                let mut wide = Vec::new();
                let g = mark_unpartnered(
                    &keys, gate.lo, gate.hi, gate.cond, &mut flags, &mut wide, true,
                );
                let t1s = t.elapsed();
                let (mut k, mut a) = (keys.clone(), amps.clone());
                k.reserve_exact(g);
                a.reserve_exact(g);
                flags.resize((n + g).div_ceil(64) + 1, [0; 2]);
                let t = Cpu::now();
                k.resize(n + g, 0);
                a.resize(n + g, Complex::new(0.0, 0.0));
                let tr = t.elapsed();
                let t = Cpu::now();
                let (_, len) = expand_raised(
                    &mut k,
                    &mut a,
                    0,
                    n,
                    &gate,
                    &mut flags,
                    (&wide, (&mut [], &mut [])),
                    |_, v| v,
                    |_, v| v,
                );
                let t2 = t.elapsed();
                eprintln!(
                    "game {game} grow {g} len {len}: pass 1 {t1s:?} resize {tr:?} pass 2 {t2:?}"
                );
            }
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                for _ in 0..3 {
                    let t = std::time::Instant::now();
                    let mut pieces: Vec<Piece> =
                        crate::kernels::pair::group_ranges(&keys, gate.hi, 8)
                            .into_iter()
                            .map(|(start, end)| {
                                let mut flags = vec![[0u64; 2]; (end - start).div_ceil(64) + 1];
                                let mut wide = Vec::new();
                                let grow = mark_unpartnered(
                                    &keys[start..end],
                                    gate.lo,
                                    gate.hi,
                                    gate.cond,
                                    &mut flags,
                                    &mut wide,
                                    true,
                                );
                                flags.resize((end - start + grow).div_ceil(64) + 1, [0; 2]);
                                Piece {
                                    start,
                                    end,
                                    grow,
                                    flags,
                                    wide,
                                }
                            })
                            .collect();
                    let t1s = t.elapsed();
                    let g: usize = pieces.iter().map(|p| p.grow).sum();
                    let (mut k, mut a) = (keys.clone(), amps.clone());
                    k.resize(n + g, 0);
                    a.resize(n + g, Complex::new(0.0, 0.0));
                    let t = std::time::Instant::now();
                    let (_, len) = pool.install(|| {
                        let none = (&mut [][..], &mut [][..]);
                        expand_pieces(
                            &mut k,
                            &mut a,
                            0,
                            &mut pieces,
                            &gate,
                            none,
                            &|_, v| v,
                            &|_, v| v,
                        )
                    });
                    let t2 = t.elapsed();
                    eprintln!(
                        "  pieces, {threads} threads: len {len} pass 1 {t1s:?} pass 2 {t2:?}"
                    );
                }
            }
        }
    }
}
