//! Dense pair gates on groups whose keys fill a small span: both passes of [`super::expand`]
//! for such a group work in a scratch array indexed by key offset instead of merging sorted
//! runs.
//!
//! In a group for bit `hi` (keys sharing the bits above `hi`), an `lo` entry at offset `x`
//! pairs with the `hi` entry at `x + 2^hi - 2^lo`. When the group's span of `2^(hi + 1)` key
//! values is small and well filled (a uniformly random state, a gate on low bits), finding
//! partners by offset costs a load, where the merge costs a comparison and a mispredicted
//! branch per entry.
//!
//! The scratch holds the group's offsets with bits `hi` and `lo` moved to the top of the
//! index ([`Layout::slot`]), so the four classes `00, lo, hi, 11` are four quarters of the
//! scratch, each in key order, and the `lo` quarter and the `hi` quarter pair slot for slot.
//! The gate is then one loop over a quarter, every case (both entries present, one, none)
//! computed and one kept by selects, which the compiler vectorises. The occupied slots are
//! written back in key order, 64 offsets per occupancy mask.
//!
//! A group too wide for the scratch but as full ([`window_bits`]) runs as window pairs: a
//! window of the lower half and the window `2^hi` above it, where its partners are, laid out
//! the same way with the window's top bit standing for bit `hi` ([`expand_wide`]).
//!
//! A run whose groups are all dense may also run forwards, into room left below it by an
//! earlier gate ([`expand_dense_forward`]): each group read whole into the scratch first,
//! its output written from the bottom up.
//!
//! Only amplitude types with cheap arithmetic use this module (`Amplitude::CHEAP_ARITHMETIC`,
//! an argument of [`window_bits`]).
//!
//! Every entry is computed with the same products in the same order as `pair::apply`, so the
//! output is bit-identical to the other kernels'.

use crate::amplitude::Amplitude;
use crate::kernels::pair::{GroupWalk, PairGate};
use crate::key::Cond;
use crate::prefetch::{AHEAD, KEYS_PER_LINE, prefetch};
use num_complex::Complex;

/// Groups up to `2^MAX_SPAN_BITS` key values wide may be expanded densely (512 KiB of f64
/// amplitudes: the second-level cache holds the scratch).
const MAX_SPAN_BITS: u32 = 15;

/// How a group of `entries` entries for gate bits `lo < hi` goes through this module, decided
/// by both passes alike (so they agree on every group): the window bits `wb` of its window
/// pairs, or `None` to leave it to the merge kernels (`cheap`: the amplitude type's
/// `CHEAP_ARITHMETIC`). A *dense* group (span `2^(hi+1)` of at least 128 and at most
/// `2^MAX_SPAN_BITS` key values) is one window pair, its two halves: `wb == hi`. A *wide*
/// group (bit `hi` at least `MAX_SPAN_BITS`) is processed as pairs of windows of `2^wb` key
/// values, a window of the lower half with the window `2^hi` above it where its partners are;
/// `wb` is 13, or `lo + 2` where bit `lo` needs it, and below `MAX_SPAN_BITS` so that a window
/// pair fits the scratch. Either way the group must be full: at most 8 key values per entry.
#[inline]
pub(crate) fn window_bits(lo: u32, hi: u32, entries: usize, cheap: bool) -> Option<u32> {
    if !cheap || hi >= 48 || (1usize << (hi + 1)) > 8 * entries {
        return None;
    }
    if (6..MAX_SPAN_BITS).contains(&hi) {
        return Some(hi);
    }
    let wb = (lo + 2).max(13);
    (hi >= MAX_SPAN_BITS && wb < MAX_SPAN_BITS).then_some(wb)
}

/// The index map of one gate's groups: offset `x` (bits `0..=hi`) to scratch slot.
#[derive(Clone, Copy)]
struct Layout {
    lo: u32,
    hi: u32,
    span: usize,
}

impl Layout {
    fn new(lo: u32, hi: u32) -> Self {
        Self {
            lo,
            hi,
            span: 1 << (hi + 1),
        }
    }

    /// Slot of offset `x`: bit `hi` at the top, bit `lo` below it, the other bits in order.
    #[inline(always)]
    fn slot(self, x: usize) -> usize {
        let (lo, hi) = (self.lo, self.hi);
        let low = x & ((1 << lo) - 1);
        let mid = (x >> (lo + 1)) & ((1 << (hi - lo - 1)) - 1);
        ((x >> hi) & 1) << hi | ((x >> lo) & 1) << (hi - 1) | mid << lo | low
    }

    /// The first slot of each class quarter: `lo` (bit `lo` set, `hi` clear) and `hi`.
    fn quarters(self) -> (usize, usize) {
        (self.span / 4, self.span / 2)
    }

    /// Occupancy of offsets `64 c .. 64 c + 64` (each byte of `occ` 0 or 1), bit `u` for offset
    /// `64 c + u` (`hi >= 6`, so the 64 offsets share bit `hi`).
    #[inline(always)]
    fn mask(self, occ: &[u8], c: usize) -> u64 {
        // Eight occupancy bytes (each 0 or 1) at a time: the multiplication adds byte `j`'s
        // bit into bit `56 + j` with no carries between them.
        let bits = |s: &[u8]| {
            s.chunks_exact(8).enumerate().fold(0u64, |m, (j, c)| {
                let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                m | (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * j)
            })
        };
        let x = c * 64;
        if self.lo >= 6 {
            let p = self.slot(x);
            return bits(&occ[p..p + 64]);
        }
        // Offsets alternate between the two classes of bit lo in chunks of 2^lo; each
        // class's 32 offsets are 32 consecutive slots.
        let a = 1usize << self.lo;
        let (p0, p1) = (self.slot(x), self.slot(x + a));
        let (m0, m1) = (bits(&occ[p0..p0 + 32]), bits(&occ[p1..p1 + 32]));
        // Each class's chunks of `a` bits to every other chunk: halve the chunk size from 32
        // down to `a`, moving each upper half up by the half's size.
        let every_other_chunk = |mut v: u64| {
            const STEPS: [(usize, u64); 5] = [
                (16, 0x0000_ffff_0000_ffff),
                (8, 0x00ff_00ff_00ff_00ff),
                (4, 0x0f0f_0f0f_0f0f_0f0f),
                (2, 0x3333_3333_3333_3333),
                (1, 0x5555_5555_5555_5555),
            ];
            for (s, keep) in STEPS {
                if s >= a {
                    v = (v | v << s) & keep;
                }
            }
            v
        };
        every_other_chunk(m0) | every_other_chunk(m1) << a
    }

    /// Zeroes the occupancy of offsets `64 c .. 64 c + 64`.
    #[inline(always)]
    fn clear(self, occ: &mut [u8], c: usize) {
        let x = c * 64;
        if self.lo >= 6 {
            let p = self.slot(x);
            occ[p..p + 64].fill(0);
        } else {
            let a = 1usize << self.lo;
            let (p0, p1) = (self.slot(x), self.slot(x + a));
            occ[p0..p0 + 32].fill(0);
            occ[p1..p1 + 32].fill(0);
        }
    }

    /// The key offset of slot `p` (the inverse of [`Layout::slot`]).
    #[inline(always)]
    fn offset(self, p: usize) -> usize {
        let (lo, hi) = (self.lo, self.hi);
        let low = p & ((1 << lo) - 1);
        let mid = (p >> lo) & ((1 << (hi - lo - 1)) - 1);
        ((p >> hi) & 1) << hi | ((p >> (hi - 1)) & 1) << lo | mid << (lo + 1) | low
    }
}

/// The set bits of a word, highest first.
struct BitsDown(u64);

impl Iterator for BitsDown {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let u = 63 - self.0.leading_zeros() as usize;
        self.0 ^= 1 << u;
        Some(u)
    }
}

/// The scratch of one thread's dense groups: amplitudes (real and imaginary parts apart) and
/// occupancy by slot. The occupancy is all zero between groups; the amplitudes of unoccupied
/// slots are stale and never used.
pub(crate) struct Scratch<T> {
    re: Vec<T>,
    im: Vec<T>,
    occ: Vec<u8>,
}

impl<T: Amplitude> Scratch<T> {
    /// An empty scratch; it grows to the first dense group's span.
    pub(crate) fn new() -> Self {
        Self {
            re: Vec::new(),
            im: Vec::new(),
            occ: Vec::new(),
        }
    }

    fn fit(&mut self, span: usize) {
        if self.occ.len() < span {
            self.re.resize(span, T::zero());
            self.im.resize(span, T::zero());
            self.occ.resize(span, 0);
        }
    }
}

/// The singles of two half occupancies by plain offset, a byte (0 or 1) per offset, where
/// offset `t` of `lower` (bit `lo` set) pairs with offset `t - 2^lo` of `upper`: `(lower
/// entries without partner, upper entries without partner)`. The sums run 64 offsets a step,
/// without a branch (vectorised).
fn count_bytes(lower: &[u8], upper: &[u8], lo: u32) -> (usize, usize) {
    let a = 1usize << lo;
    let n = lower.len();
    let (mut l, mut h) = (0usize, 0usize);
    let mut pair = |x: &[u8], y: &[u8], on: &[u8]| {
        let (mut sl, mut sh) = (0u32, 0u32);
        for ((&x, &y), &p) in x.iter().zip(y).zip(on) {
            sl += u32::from(x & !y & p);
            sh += u32::from(y & !x & p);
        }
        l += sl as usize;
        h += sh as usize;
    };
    if lo >= 6 {
        const ONES: [u8; 64] = [1; 64];
        let mut s = a;
        while s < n {
            for c in (s..s + a).step_by(64) {
                pair(&lower[c..c + 64], &upper[c - a..c - a + 64], &ONES);
            }
            s += 2 * a;
        }
    } else {
        // Offsets `a + 64 j + i` have bit `lo` as `a + i` does.
        let on: [u8; 64] = std::array::from_fn(|i| (((a + i) >> lo) & 1) as u8);
        let mut s = a;
        while s + 64 <= n {
            pair(&lower[s..s + 64], &upper[s - a..s - a + 64], &on);
            s += 64;
        }
        let r = n - s;
        pair(&lower[s..], &upper[s - a..s - a + r], &on[..r]);
    }
    (l, h)
}

/// The slot pairs of `occ` (laid out by `layout`, offsets from key `base`, where `cond`
/// holds) with only the `lo` entry, and with only the `hi` entry.
fn count_singles(layout: Layout, base: u64, cond: Cond, occ: &[u8]) -> (usize, usize) {
    let (ql, qh) = layout.quarters();
    let (l, h) = (&occ[ql..qh], &occ[qh..qh + ql]);
    if cond.is_always() {
        l.iter().zip(h).fold((0, 0), |(a, b), (&x, &y)| {
            (a + usize::from(x > y), b + usize::from(y > x))
        })
    } else {
        l.iter()
            .zip(h)
            .enumerate()
            .fold((0, 0), |(a, b), (t, (&x, &y))| {
                let on = cond.holds(base + layout.offset(ql + t) as u64);
                (a + usize::from(on & (x > y)), b + usize::from(on & (y > x)))
            })
    }
}

/// Pass 2 of a dense group: expands the group `keys[start..end]` (whole, for `gate.hi`, with
/// [`window_bits`] `hi`) in place: the group is read into the scratch and the gate applied
/// there, then its output is written backwards below `top(occupancy)` (the place given the
/// scratch's occupancy, so a caller may place it by its size), and the new low end of the
/// output is returned. Backwards from the top (`expand_top`) the place is a fixed `w`, at
/// least `end` plus the growth of this group and of every group below it;
/// forwards ([`expand_dense_forward`]) it is just above the output so far. `pre` and `post`
/// are the fused phases of `pair::apply`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn expand_group<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    (start, end): (usize, usize),
    top: impl FnOnce(&[u8]) -> usize,
    gate: &PairGate<T>,
    scratch: &mut Scratch<T>,
    pre: &Pre,
    post: &Post,
) -> usize
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let layout = Layout::new(gate.lo, gate.hi);
    let span = layout.span;
    let base = keys[start] & !(span as u64 - 1);
    scratch.fit(span);
    let mut sc = scratch.slices(span);
    scatter_down(keys, amps, (start, end), (base, 0), layout, &mut sc, pre);
    apply_quarters(layout, base, gate, &mut sc);
    let w = top(sc.occ);
    gather::<T, Post, false>(keys, amps, w, layout, (0, span / 64), base, &mut sc, post)
}

/// Whether every group of `keys` for bit `hi` is a dense group ([`window_bits`] is `hi`),
/// so that [`expand_dense_forward`] can run the gate on them. Stops at the first that is not.
pub(crate) fn all_dense(keys: &[u64], lo: u32, hi: u32, cheap: bool) -> bool {
    let mut walk = GroupWalk::default();
    while let Some((start, _, end)) = walk.next(keys, hi) {
        if window_bits(lo, hi, end - start, cheap) != Some(hi) {
            return false;
        }
    }
    true
}

/// Pass 2 of a run of dense groups ([`all_dense`]) forwards, into room below the run: the
/// input is `keys[from..]`, `amps[from..]`, and the output is written from 0 up, group by
/// group (each group read whole into the scratch first, as [`expand_group`] does, with the
/// same arithmetic: the output is bit for bit the backward pass's). Returns the output
/// length. The gate must create at most `from` entries (pass 1's count): an output place is
/// then never above the input still to be read.
///
/// This is how a dense gate uses the room a dense gate before it left below its output
/// (`Lane`): the merge that undoes a split creates the entries the split cancelled, exactly
/// that room.
#[allow(clippy::too_many_arguments)]
pub(crate) fn expand_dense_forward<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    from: usize,
    gate: &PairGate<T>,
    scratch: &mut Scratch<T>,
    pre: &Pre,
    post: &Post,
) -> usize
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let (mut w, mut walk) = (0, GroupWalk::at(from));
    while let Some((start, _, end)) = walk.next(keys, gate.hi) {
        // The group's output goes just above the output so far.
        let mut next = w;
        let top = |occ: &[u8]| {
            let out: usize = occ.iter().map(|&o| usize::from(o)).sum();
            // The growth so far is at most `from`: the group's output ends at or below the
            // next group's input.
            assert!(w + out <= end, "a forward dense pass overtook its input");
            next = w + out;
            next
        };
        let low = expand_group(keys, amps, (start, end), top, gate, scratch, pre, post);
        debug_assert_eq!(low, w);
        w = next;
    }
    w
}

/// The first key of the lowest window pair that holds an entry not yet visited: lower-half
/// entries from `i` (below `mid`), upper-half ones from `j` (to the end of `keys`), in the
/// group whose first key is `gb`, windows of `2^wb` key values.
#[inline(always)]
fn next_window(
    keys: &[u64],
    (i, mid): (usize, usize),
    j: usize,
    (gb, hi, wb): (u64, u32, u32),
) -> u64 {
    let wl = if i < mid {
        (keys[i] - gb) >> wb
    } else {
        u64::MAX
    };
    let wu = if j < keys.len() {
        (keys[j] - gb - (1u64 << hi)) >> wb
    } else {
        u64::MAX
    };
    gb + (wl.min(wu) << wb)
}

/// The window pairs of a wide group, lowest first: calls `f(lower, upper, lbase)` with the
/// index ranges of the lower-half entries (of `keys[..mid]`) and the upper-half entries (of
/// `keys[mid..]`, indices into `keys`) of each window pair that holds any, `lbase` the first
/// key of its lower window. With `wb == hi` (a dense group) the one pair is the two halves.
fn window_pairs(
    keys: &[u64],
    mid: usize,
    hi: u32,
    wb: u32,
    mut f: impl FnMut((usize, usize), (usize, usize), u64),
) {
    let n = keys.len();
    let gb = keys[0] >> (hi + 1) << (hi + 1);
    if wb == hi {
        // A dense group: one window pair, its two halves.
        return f((0, mid), (mid, n), gb);
    }
    let b = 1u64 << hi;
    let half = 1u64 << wb;
    let (mut i, mut j) = (0, mid);
    while i < mid || j < n {
        let lbase = next_window(keys, (i, mid), j, (gb, hi, wb));
        let (i0, j0) = (i, j);
        while i < mid && keys[i] - lbase < half {
            i += 1;
        }
        while j < n && keys[j] - lbase - b < half {
            j += 1;
        }
        f((i0, i), (j0, j), lbase);
    }
}

/// Pass 1 of a dense or wide group (`keys` the whole group for `hi`, its upper half from
/// `mid`; windows of `2^wb` key values, [`window_bits`]): the pair entries whose partner is
/// absent, as `(lo entries, hi entries)`; their sum is the group's growth, what
/// `mark_unpartnered` counts. `occ` is an occupancy array, all zero on entry and on return.
pub(crate) fn count_wide(
    keys: &[u64],
    mid: usize,
    (lo, hi, wb): (u32, u32, u32),
    cond: Cond,
    occ: &mut Vec<u8>,
) -> (usize, usize) {
    if mid == keys.len() {
        // No upper half: no `lo` entry has its partner, and there is no `hi` entry. One
        // count of the keys, no occupancy (a third of the random merge's pass 1 at 1e7).
        let a = 1u64 << lo;
        return (keys.iter().filter(|&&k| lone_lo(k, a, cond)).count(), 0);
    }
    let layout = Layout::new(lo, wb);
    let span = layout.span;
    let b = 1u64 << hi;
    let (mut l, mut h) = (0, 0);
    if occ.len() < span {
        occ.resize(span, 0);
    }
    if cond.is_always() {
        // Without a condition an occupancy by plain offset is enough: no layout to compute.
        // A byte per offset, not a bit: each key is one independent store (a bitmap's word
        // gathered in a register costs a compare and a branch per key), and the count below
        // runs 64 offsets a step.
        // The window's bounds are found by the same loop that marks its keys: one read of
        // each key, no separate scan for the bounds ([`window_pairs`]).
        let (lower, upper) = occ[..span].split_at_mut(span / 2);
        let mark = |occ: &mut [u8], mut i: usize, end: usize, base: u64| {
            while i < end {
                // Compared as a key difference, before any cast that could truncate it.
                let d = keys[i].wrapping_sub(base);
                if d >= occ.len() as u64 {
                    break;
                }
                occ[d as usize] = 1;
                i += 1;
            }
            i
        };
        let n = keys.len();
        let gb = keys[0] >> (hi + 1) << (hi + 1);
        let (mut i, mut j) = (0, mid);
        while i < mid || j < n {
            let lbase = next_window(keys, (i, mid), j, (gb, hi, wb));
            i = mark(lower, i, mid, lbase);
            j = mark(upper, j, n, lbase + b);
            let (a, c) = count_bytes(lower, upper, lo);
            (l, h) = (l + a, h + c);
            lower.fill(0);
            upper.fill(0);
        }
        return (l, h);
    }
    let occ = &mut occ[..span];
    window_pairs(keys, mid, hi, wb, |(i0, i1), (j0, j1), lbase| {
        for &k in &keys[i0..i1] {
            occ[layout.slot((k - lbase) as usize)] = 1;
        }
        for &k in &keys[j0..j1] {
            occ[layout.slot((k - lbase - b) as usize | (span / 2))] = 1;
        }
        let (a, c) = count_singles(layout, lbase, cond, occ);
        (l, h) = (l + a, h + c);
        occ.fill(0);
    });
    (l, h)
}

/// The entries of a wide group's upper half that pass 2 copies aside ([`expand_wide`]) when
/// the lower half's output place reaches `room` entries into the upper half's input (`n_up`
/// entries): those `room`, if fewer than the whole half; else none (the half is moved up, as
/// many entries either way). `room` is the growth below the group's upper half: pass 1's
/// count of the group's new `lo` entries plus all the growth of the groups below it.
pub(crate) fn spill_len(room: usize, n_up: usize) -> usize {
    if room < n_up { room } else { 0 }
}

/// Pass 2 of a wide group `[start, end)` (upper half from `mid`, with [`window_bits`] `wb < hi`),
/// in place below `w` as [`expand_group`], given `lo_singles`, pass 1's count of its `lo`
/// entries without partner (the new `hi` entries). Returns the new `w` and, if entries of the
/// upper half cancelled, the gap `[from, to)` they left between the two halves' outputs.
///
/// The two halves' outputs are written at once, window pair by window pair from the top, the
/// upper half's downwards from `w` and the lower half's downwards from the top of its place
/// (its size before cancellations is known from pass 1), `room` entries above the upper
/// half's first entry. So that the lower half's outputs never land on upper-half entries not
/// yet read, those `room` lowest entries of the upper half are first copied to `spill` (when
/// it holds [`spill_len`] of them) and read from there; without a spill the whole upper half
/// is moved up by `room` instead (a memmove of every entry of it: about a tenth of a random
/// merge at 1e7). Then every output lands at or above its input, as in `expand_top`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn expand_wide<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    (start, mid, end): (usize, usize, usize),
    w: usize,
    (gate, wb): (&PairGate<T>, u32),
    lo_singles: usize,
    scratch: &mut Scratch<T>,
    spill: (&mut [u64], &mut [Complex<T>]),
    pre: &Pre,
    post: &Post,
) -> (usize, Option<(usize, usize)>)
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let n_up = end - mid;
    let u_bottom = w - n_up - lo_singles;
    debug_assert!(u_bottom >= mid);
    // The upper half's entries: `[u_bottom, u_top)` of the arrays, below them `sk` / `sa`.
    let room = u_bottom - mid;
    let aside = spill_len(room, n_up);
    let (sk, sa): (&[u64], &[Complex<T>]) = if aside > 0 && spill.0.len() >= aside {
        #[cfg(test)]
        crate::kernels::expand::tests::SPILLED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (sk, sa) = (&mut spill.0[..aside], &mut spill.1[..aside]);
        sk.copy_from_slice(&keys[mid..u_bottom]);
        sa.copy_from_slice(&amps[mid..u_bottom]);
        (sk, sa)
    } else {
        if room > 0 {
            keys.copy_within(mid..end, u_bottom);
            amps.copy_within(mid..end, u_bottom);
        }
        (&[], &[])
    };
    let u_top = if sk.is_empty() { u_bottom + n_up } else { end };
    let mut rs = sk.len();
    let layout = Layout::new(gate.lo, wb);
    let span = layout.span;
    let half = span / 2;
    let b = 1u64 << gate.hi;
    let gb = keys[start] >> (gate.hi + 1) << (gate.hi + 1);
    scratch.fit(span);
    let mut sc = scratch.slices(span);
    // The write-back streams past the caches (non-temporal stores, no read for ownership)
    // where the lines it writes were last touched a whole state's traffic ago.
    let stream = streams(gate, amps, end - start);
    #[cfg(test)]
    if stream {
        crate::kernels::expand::tests::STREAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let (mut ru, mut rl) = (u_top, mid);
    let (mut wu, mut wl) = (w, u_bottom);
    loop {
        let top_l = (rl > start).then(|| (keys[rl - 1] - gb) >> wb);
        let top_u = if ru > u_bottom {
            Some((keys[ru - 1] - gb - b) >> wb)
        } else {
            (rs > 0).then(|| (sk[rs - 1] - gb - b) >> wb)
        };
        let Some(win) = top_l.max(top_u) else {
            break;
        };
        let lbase = gb + (win << wb);
        let ubase = lbase + b;
        let upper = (ubase, half);
        if ru > u_bottom {
            ru = scatter_down(keys, amps, (u_bottom, ru), upper, layout, &mut sc, pre);
        }
        if ru == u_bottom && rs > 0 {
            rs = scatter_down(sk, sa, (0, rs), upper, layout, &mut sc, pre);
        }
        rl = scatter_down(keys, amps, (start, rl), (lbase, 0), layout, &mut sc, pre);
        apply_quarters(layout, lbase, gate, &mut sc);
        let (up, low) = ((half / 64, span / 64), (0, half / 64));
        if stream {
            wu = gather::<T, Post, true>(keys, amps, wu, layout, up, ubase, &mut sc, post);
            wl = gather::<T, Post, true>(keys, amps, wl, layout, low, lbase, &mut sc, post);
        } else {
            wu = gather::<T, Post, false>(keys, amps, wu, layout, up, ubase, &mut sc, post);
            wl = gather::<T, Post, false>(keys, amps, wl, layout, low, lbase, &mut sc, post);
        }
    }
    // The write-back streamed past the cache (above): ordered before any later store, so a
    // thread handed the output sees it.
    crate::stream::fence();
    (wl, (wu > u_bottom).then_some((u_bottom, wu)))
}

/// Pass 2 of a wide group `[start, end)` of `keys`, `amps` whose upper half is empty (no key
/// of it has bit `hi` set: the top group of a state whose keys stop below its upper half), in
/// place below `w`, given `lo_singles`, pass 1's count of its `lo` entries where the
/// condition holds ([`lone_lo`]): each of them has no partner, so it is kept times the
/// diagonal and copied `2^hi - 2^lo` up times the off-diagonal, and every other entry keeps
/// its value; nothing can cancel, so no entry goes through the scratch. One backward stream
/// in, two out (the new `hi` entries from `w` down, streamed past the caches where `STREAM`
/// (the caller's [`streams`]) as [`expand_wide`]'s write-back is, and the rest below them).
/// Each value is the product [`step`] computes for a slot pair with one entry, so the output
/// is bit for bit the scratch kernels'. Returns the new `w`.
pub(crate) fn expand_wide_lower<T, Pre, Post, const STREAM: bool>(
    (keys, amps): (&mut [u64], &mut [Complex<T>]),
    (start, end, w): (usize, usize, usize),
    (gate, lo_singles): (&PairGate<T>, usize),
    (pre, post): (&Pre, &Post),
) -> usize
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    #[cfg(test)]
    crate::kernels::expand::tests::LOWER_ONLY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    #[cfg(test)]
    if STREAM {
        crate::kernels::expand::tests::STREAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let (a, delta) = (1u64 << gate.lo, (1u64 << gate.hi) - (1u64 << gate.lo));
    let (d, o) = (gate.diag, gate.off);
    // The new `hi` entries from `w` down, streamed where `STREAM`: they land at least the
    // group's growth above the entry read. The others below them, with ordinary stores:
    // they may land on the very lines just read (in pieces, where the growth below the group
    // is not in its region), and a non-temporal store to a cached line is very slow
    // (measured: two threads at 1e7, 19 M states/s against 108). Both land at or above the
    // entry read: `w - lo_singles` is at least `end` (the group's growth is `lo_singles`).
    let put_hi = |keys: &mut [u64], amps: &mut [Complex<T>], at: usize, k: u64, v: Complex<T>| {
        if STREAM {
            put_streamed((&mut keys[at], &mut amps[at]), k, v);
        } else {
            (keys[at], amps[at]) = (k, v);
        }
    };
    let (mut wu, mut wl) = (w, w - lo_singles);
    debug_assert!(wl >= end);
    let mut r = end;
    while r > start {
        r -= 1;
        if r % KEYS_PER_LINE == 0 {
            prefetch(keys, r.wrapping_sub(AHEAD));
        }
        prefetch(amps, r.wrapping_sub(AHEAD));
        let k = keys[r];
        let v = pre(k, amps[r]);
        if lone_lo(k, a, gate.cond) {
            let kh = k + delta;
            wu -= 1;
            put_hi(keys, amps, wu, kh, post(kh, o * v));
            wl -= 1;
            (keys[wl], amps[wl]) = (k, post(k, d * v));
        } else {
            wl -= 1;
            (keys[wl], amps[wl]) = (k, post(k, v));
        }
    }
    debug_assert_eq!(wu, w - lo_singles);
    if STREAM {
        crate::stream::fence();
    }
    wl
}

/// Whether `k`, a key of a wide group without upper half, is a `lo` entry (bit `a` set) where
/// the condition holds: one without partner. Pass 1 counts them ([`count_wide`]) and pass 2
/// copies each up ([`expand_wide_lower`]); the one test keeps the count and the growth equal.
#[inline(always)]
fn lone_lo(k: u64, a: u64, cond: Cond) -> bool {
    k & a != 0 && cond.holds(k)
}

/// Whether a wide group's write-back of `entries` entries streams past the caches
/// (non-temporal stores): f64 entries of a large group in a state the caches cannot hold
/// (`gate.cold`), whose lines were last touched a whole state's traffic ago.
pub(crate) fn streams<T: Amplitude>(
    gate: &PairGate<T>,
    amps: &[Complex<T>],
    entries: usize,
) -> bool {
    gate.cold
        && std::mem::size_of::<Complex<T>>() == 16
        && T::as_words(&amps[..0]).is_some()
        && entries >= STREAM_MIN
}

/// Entries from which a wide group's write-back streams ([`expand_wide`]): a group much
/// larger than a core's L2.
pub(crate) const STREAM_MIN: usize = 1 << 18;

/// State bytes (keys and amplitudes) from which a dense gate's pass counts as cold
/// ([`PairGate::cold`]): its wide groups' write-back streams. Measured on the Intel Xeon VM
/// (random merge f64, one thread, M states/s, streamed against not): 5e6 states (120 MB)
/// 77.6 against 83.3, 7e6 (168 MB) 83.6 against 80.1, 1e7 84 against 78-80; below, the lines
/// written were still in its last-level cache (docs/benchmarks.md, "The wide groups'
/// write-back streamed").
pub(crate) const COLD_BYTES: usize = 160 << 20;

/// State bytes (keys and amplitudes) from which a dense gate's wide groups read the lowest
/// entries of their upper halves from a spill instead of moving the halves up
/// ([`expand_wide`], `State::apply_dense_in_place`). Measured on the Intel Xeon VM (random
/// merge f64, one thread, M states/s, spilled against moved): 1e6 states (24 MB) 100.0
/// against 105.7, 3e6 (72 MB) 83.1 against 85.2, 5e6 (120 MB) 83.1 against 81.2, 7e6 91.9
/// against 87.5, 1e7 91.0-93.9 against 88.2-88.4; in a state the caches largely hold the
/// move is cheap (docs/benchmarks.md, "The wide groups' upper halves read from a spill").
pub(crate) const SPILL_BYTES: usize = 100 << 20;

/// The scratch's three arrays, cut to one span.
struct Slices<'a, T> {
    re: &'a mut [T],
    im: &'a mut [T],
    occ: &'a mut [u8],
}

impl<T: Amplitude> Scratch<T> {
    fn slices(&mut self, span: usize) -> Slices<'_, T> {
        Slices {
            re: &mut self.re[..span],
            im: &mut self.im[..span],
            occ: &mut self.occ[..span],
        }
    }
}

/// Lays out in the scratch (pre-phased) the entries below `to`, down to `floor` at most, whose
/// keys are at least `kb`: entry `k` at offset `(k - kb) | or`, highest key first. Groups (and
/// a wide group's windows) are visited downwards, so the reads are one descending stream per
/// half; each entry is much work for the bytes it reads, so the reads are hinted ahead.
/// Returns the first entry laid out.
#[inline(always)]
fn scatter_down<T, Pre>(
    keys: &[u64],
    amps: &[Complex<T>],
    (floor, to): (usize, usize),
    (kb, or): (u64, usize),
    layout: Layout,
    sc: &mut Slices<'_, T>,
    pre: &Pre,
) -> usize
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
{
    let mut r = to;
    while r > floor {
        let k = keys[r - 1];
        if k < kb {
            break;
        }
        r -= 1;
        prefetch(amps, r.wrapping_sub(AHEAD));
        prefetch(keys, r.wrapping_sub(AHEAD));
        let p = layout.slot((k - kb) as usize | or);
        let v = pre(k, amps[r]);
        sc.re[p] = v.re;
        sc.im[p] = v.im;
        sc.occ[p] = 1;
    }
    r
}

/// Writes the occupied slots of offset words `c0..c1` back below `w` in key order (highest
/// first, post-phased), word `c`'s offset `u` being key `kb + 64 (c - c0) + u`, clears their
/// occupancy, and returns the new `w`. A word's entries go to the next `popcount` places.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn gather<T, Post, const STREAM: bool>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    mut w: usize,
    layout: Layout,
    (c0, c1): (usize, usize),
    kb: u64,
    sc: &mut Slices<'_, T>,
    post: &Post,
) -> usize
where
    T: Amplitude,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let (re, im) = (&*sc.re, &*sc.im);
    for c in (c0..c1).rev() {
        let m = layout.mask(sc.occ, c);
        if m == 0 {
            continue;
        }
        layout.clear(sc.occ, c);
        let n = m.count_ones() as usize;
        let places = keys[w - n..w]
            .iter_mut()
            .rev()
            .zip(amps[w - n..w].iter_mut().rev())
            .zip(BitsDown(m));
        w -= n;
        let kbase = kb + ((c - c0) * 64) as u64;
        if layout.lo >= 6 {
            let p = layout.slot(c * 64);
            let r: &[T; 64] = re[p..p + 64].try_into().expect("64 slots");
            let i: &[T; 64] = im[p..p + 64].try_into().expect("64 slots");
            for ((kd, ad), u) in places {
                let k = kbase + u as u64;
                if STREAM {
                    put_streamed((kd, ad), k, post(k, Complex::new(r[u & 63], i[u & 63])));
                } else {
                    *kd = k;
                    *ad = post(k, Complex::new(r[u & 63], i[u & 63]));
                }
            }
        } else {
            // Offsets alternate between the classes of bit lo in chunks of 2^lo; each
            // class's 32 offsets are 32 consecutive slots.
            let (lo, am) = (layout.lo, (1usize << layout.lo) - 1);
            let (p0, p1) = (layout.slot(c * 64), layout.slot(c * 64 + am + 1));
            for ((kd, ad), u) in places {
                let k = kbase + u as u64;
                let j = ((u >> 1) & !am | (u & am)) & 31;
                // The class's slot by arithmetic, not a branch on the random bit `lo`.
                let q = p0 + ((u >> lo) & 1) * (p1 - p0) + j;
                if STREAM {
                    put_streamed((kd, ad), k, post(k, Complex::new(re[q], im[q])));
                } else {
                    *kd = k;
                    *ad = post(k, Complex::new(re[q], im[q]));
                }
            }
        }
    }
    w
}

/// One entry of [`gather`]'s write-back with non-temporal stores (a wide group's in a cold
/// pass, whose places lie far from the lines just read: saves the read for ownership of
/// every line written).
#[inline(always)]
fn put_streamed<T: Amplitude>((kd, ad): (&mut u64, &mut Complex<T>), k: u64, v: Complex<T>) {
    crate::stream::store_pod(kd, k);
    T::stream_to(ad, v);
}

/// The gate on every `lo` / `hi` slot pair of one group laid out by `layout`.
#[inline(always)]
fn apply_quarters<T: Amplitude>(
    layout: Layout,
    base: u64,
    gate: &PairGate<T>,
    sc: &mut Slices<'_, T>,
) {
    let (re, im, occ) = (&mut *sc.re, &mut *sc.im, &mut *sc.occ);
    let (ql, qh) = layout.quarters();
    let (re_l, re_h) = re.split_at_mut(qh);
    let (im_l, im_h) = im.split_at_mut(qh);
    let (occ_l, occ_h) = occ.split_at_mut(qh);
    let slots = re_l[ql..]
        .iter_mut()
        .zip(im_l[ql..].iter_mut())
        .zip(occ_l[ql..].iter_mut())
        .zip(
            re_h[..ql]
                .iter_mut()
                .zip(im_h[..ql].iter_mut())
                .zip(occ_h[..ql].iter_mut()),
        );
    if gate.cond.is_always() {
        for (((rl, il), ol), ((rh, ih), oh)) in slots {
            step(gate, true, (rl, il, ol), (rh, ih, oh));
        }
    } else {
        for (t, (((rl, il), ol), ((rh, ih), oh))) in slots.enumerate() {
            let on = gate.cond.holds(base + layout.offset(ql + t) as u64);
            step(gate, on, (rl, il, ol), (rh, ih, oh));
        }
    }
}

/// One slot: real part, imaginary part, occupancy.
type Slot<'a, T> = (&'a mut T, &'a mut T, &'a mut u8);

/// The gate on one `lo` / `hi` slot pair (applied where `on`): every case (both entries
/// present, one, none) computed and one kept by selects, since the occupancy pattern is
/// random in the states this kernel is for and branches on it would mispredict.
#[inline(always)]
fn step<T: Amplitude>(gate: &PairGate<T>, on: bool, l: Slot<'_, T>, h: Slot<'_, T>) {
    let (d, o) = (gate.diag, gate.off);
    let zero = T::zero();
    let (ol, oh) = (*l.2 != 0, *h.2 != 0);
    let (xr, xi, yr, yi) = (*l.0, *l.1, *h.0, *h.1);
    let vl = Complex::new(if ol { xr } else { zero }, if ol { xi } else { zero });
    let vh = Complex::new(if oh { yr } else { zero }, if oh { yi } else { zero });
    let (dl, oh_) = (d * vl, o * vh);
    let (ol_, dh) = (o * vl, d * vh);
    let both = ol & oh;
    let (fl, fh) = (dl + oh_, ol_ + dh);
    let nl = if both {
        fl
    } else if ol {
        dl
    } else {
        oh_
    };
    let nh = if both {
        fh
    } else if ol {
        ol_
    } else {
        dh
    };
    let any = on & (ol | oh);
    let kl = if both { T::survives(fl, vl, vh) } else { any };
    let kh = if both { T::survives(fh, vl, vh) } else { any };
    // Stored unconditionally (a select keeps the old values), so the loop has no branch.
    *l.0 = if any { nl.re } else { xr };
    *l.1 = if any { nl.im } else { xi };
    *h.0 = if any { nh.re } else { yr };
    *h.1 = if any { nh.im } else { yi };
    *l.2 = u8::from(if on { kl } else { ol });
    *h.2 = u8::from(if on { kh } else { oh });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_a_bijection_with_classes_in_quarters() {
        for (lo, hi) in [(0, 6), (2, 12), (5, 6), (6, 9), (3, 14)] {
            let l = Layout::new(lo, hi);
            let mut seen = vec![false; l.span];
            let mut last = [None; 4];
            for x in 0..l.span {
                let p = l.slot(x);
                assert!(!seen[p], "slot {p} twice");
                seen[p] = true;
                assert_eq!(l.offset(p), x);
                let class = (x >> hi & 1) << 1 | (x >> lo & 1);
                assert_eq!(p / (l.span / 4), class, "offset {x} in its class quarter");
                // Each class in key order.
                assert!(last[class].is_none_or(|q| q < p));
                last[class] = Some(p);
            }
        }
    }

    /// Pass 1 of a dense or wide group (`count_wide`) against a count by key lookups, for
    /// gate bits `lo` below, inside and above a word of offsets, dense groups and window
    /// pairs, groups full and thin, with and without a condition.
    #[test]
    fn pass_1_counts_the_entries_without_partner() {
        let mut seed = 0x5eed_u64;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        };
        let mut occ = Vec::new();
        for (lo, hi) in [
            (0, 7),
            (1, 9),
            (2, 12),
            (4, 8),
            (5, 13),
            (6, 10),
            (7, 14),
            (2, 16),
        ] {
            let wb = window_bits(lo, hi, 1 << hi, true).expect("a dense or wide group");
            for fill in [1, 3, 7] {
                // One group for bit `hi`: keys below `2^(hi + 1)`, about `fill` in 8 present.
                let base = 5u64 << (hi + 1);
                let keys: Vec<u64> = (0..1u64 << (hi + 1))
                    .filter(|_| next() % 8 < fill)
                    .map(|x| base + x)
                    .collect();
                let mid = keys.partition_point(|&k| k >> hi & 1 == 0);
                let (a, b) = (1u64 << lo, 1u64 << hi);
                let has = |k: u64| keys.binary_search(&k).is_ok();
                for cond in [
                    Cond {
                        mask: 0,
                        value: 0,
                        any: 0,
                    },
                    Cond {
                        mask: 1 << (lo + 1).min(hi - 1),
                        value: 0,
                        any: 0,
                    },
                ] {
                    if cond.mask & (a | b) != 0 {
                        continue;
                    }
                    let want_l = keys
                        .iter()
                        .filter(|&&k| k & (a | b) == a && cond.holds(k) && !has(k - a + b))
                        .count();
                    let want_h = keys
                        .iter()
                        .filter(|&&k| k & (a | b) == b && cond.holds(k) && !has(k + a - b))
                        .count();
                    let got = count_wide(&keys, mid, (lo, hi, wb), cond, &mut occ);
                    assert_eq!(
                        got,
                        (want_l, want_h),
                        "lo {lo} hi {hi} fill {fill} {cond:?}"
                    );
                    assert!(occ.iter().all(|&o| o == 0), "the occupancy is left clear");
                    // The lower half alone (a group without upper half): every `lo` entry
                    // where the condition holds is without partner.
                    let low = &keys[..mid];
                    let in_low = |k: u64| low.binary_search(&k).is_ok();
                    let want_low = low
                        .iter()
                        .filter(|&&k| k & (a | b) == a && cond.holds(k) && !in_low(k - a + b))
                        .count();
                    assert!(want_low > 0, "lo {lo} hi {hi} fill {fill}: no lo entry");
                    let got = count_wide(low, mid, (lo, hi, wb), cond, &mut occ);
                    assert_eq!(
                        got,
                        (want_low, 0),
                        "lower half, lo {lo} hi {hi} fill {fill}"
                    );
                }
            }
        }
    }

    #[test]
    fn occupancy_masks_are_in_key_order() {
        for (lo, hi) in [(0, 6), (2, 12), (5, 7), (6, 9), (7, 8)] {
            let l = Layout::new(lo, hi);
            let mut occ = vec![0u8; l.span];
            let xs: Vec<usize> = (0..l.span).filter(|x| (x * 7 + x / 3) % 5 < 2).collect();
            for &x in &xs {
                occ[l.slot(x)] = 1;
            }
            for c in 0..l.span / 64 {
                let want = xs
                    .iter()
                    .filter(|&&x| x / 64 == c)
                    .fold(0u64, |m, &x| m | 1 << (x % 64));
                assert_eq!(l.mask(&occ, c), want, "lo {lo} hi {hi} word {c}");
                l.clear(&mut occ, c);
            }
            assert!(occ.iter().all(|&o| o == 0));
        }
    }
}
