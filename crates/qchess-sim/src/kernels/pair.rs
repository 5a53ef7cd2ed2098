//! Two-qubit gates that act only on the `{01, 10}` subspace (iSwap, sqrt-iSwap and their
//! inverses, optionally controlled), applied to a key-sorted run by a linear merge-join.
//!
//! With `lo < hi` the gate's bits, the run splits into groups of keys sharing the bits above
//! `hi`; each group is a segment with bit `hi` clear followed by one with it set, and each of
//! those splits the same way at bit `lo`. The four classes `00, lo, hi, 11` of one sub-group
//! are each sorted by the bits below `lo`, so partners meet in a linear merge-join and the
//! results come out in key order with no sorting and no hashing.

use crate::amplitude::Amplitude;
use crate::key::Cond;
use num_complex::Complex;

/// Where a kernel writes its output, in key order.
pub(crate) trait Sink<T> {
    /// Appends one entry.
    fn put(&mut self, k: u64, v: Complex<T>);
    /// Appends a run of untouched entries.
    fn put_run(&mut self, ks: &[u64], vs: &[Complex<T>]);
}

/// Appends to a pair of vectors (capacity reserved beforehand).
pub(crate) struct VecSink<'a, T> {
    pub keys: &'a mut Vec<u64>,
    pub amps: &'a mut Vec<Complex<T>>,
}

impl<T: Copy> Sink<T> for VecSink<'_, T> {
    #[inline(always)]
    fn put(&mut self, k: u64, v: Complex<T>) {
        self.keys.push(k);
        self.amps.push(v);
    }
    #[inline(always)]
    fn put_run(&mut self, ks: &[u64], vs: &[Complex<T>]) {
        self.keys.extend_from_slice(ks);
        self.amps.extend_from_slice(vs);
    }
}

/// Writes into a pre-sized slot of a shared output (one parallel task's share).
pub(crate) struct SliceSink<'a, T> {
    pub keys: &'a mut [u64],
    pub amps: &'a mut [Complex<T>],
    pub len: usize,
}

impl<T: Copy> Sink<T> for SliceSink<'_, T> {
    #[inline(always)]
    fn put(&mut self, k: u64, v: Complex<T>) {
        self.keys[self.len] = k;
        self.amps[self.len] = v;
        self.len += 1;
    }
    #[inline(always)]
    fn put_run(&mut self, ks: &[u64], vs: &[Complex<T>]) {
        let end = self.len + ks.len();
        self.keys[self.len..end].copy_from_slice(ks);
        self.amps[self.len..end].copy_from_slice(vs);
        self.len = end;
    }
}

/// Cuts a run into about `parts` key ranges at group boundaries for bit `hi` (each group
/// whole in one range), so ranges can be processed independently.
pub(crate) fn group_ranges(keys: &[u64], hi: u32, parts: usize) -> Vec<(usize, usize)> {
    let n = keys.len();
    let mut cuts = vec![0usize];
    if hi < 63 {
        let shift = hi + 1;
        for p in 1..parts {
            let prefix = keys[p * n / parts] >> shift << shift;
            let start = keys.partition_point(|&k| k < prefix);
            if start > *cuts.last().unwrap_or(&0) {
                cuts.push(start);
            }
        }
    }
    cuts.push(n);
    cuts.windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| (w[0], w[1]))
        .collect()
}

/// [`group_ranges`] for a pass that grows the run in place in parallel pieces (each piece's
/// input moved up by the growth below it, then expanded in its own region): about `threads
/// * 4` pieces, the ones in the first `1 / threads` of the run merged into one, which does
/// not move, so the move before the pass is `1 - 1 / threads` of the run.
pub(crate) fn growing_pieces(keys: &[u64], hi: u32, threads: usize) -> Vec<(usize, usize)> {
    let mut ranges = group_ranges(keys, hi, threads * 4);
    let first = ranges
        .iter()
        .take_while(|r| r.1 <= keys.len() / threads.max(1))
        .count()
        .max(1);
    let first_end = ranges[first - 1].1;
    ranges.splice(0..first, [(0, first_end)]);
    ranges
}

/// Cuts a run into consecutive ranges of whole groups for bit `hi`, each at most `max`
/// entries long where the groups allow it: as many whole groups as fit, and a group longer
/// than `max` alone in its range. A range can then be processed on its own, in cache when it
/// is short.
pub(crate) fn group_chunks(keys: &[u64], hi: u32, max: usize) -> Vec<(usize, usize)> {
    let n = keys.len();
    if hi >= 63 || n == 0 {
        return vec![(0, n)];
    }
    let shift = hi + 1;
    let max = max.max(1);
    let mut out = Vec::with_capacity(n / max + 1);
    let mut start = 0;
    while start < n {
        let mut end = (start + max).min(n);
        if end < n {
            // The group of the first entry past the budget starts at `g`; cut there, or, when
            // that group began at `start` (longer than `max`), after the whole group.
            let prefix = keys[end] >> shift << shift;
            let g = start + keys[start..end].partition_point(|&k| k < prefix);
            end = if g > start {
                g
            } else {
                group_after(keys, start, hi).1
            };
        }
        out.push((start, end));
        start = end;
    }
    out
}

/// A symmetric 2x2 gate `[[diag, off], [off, diag]]` on the `{lo, hi}` pair of a basis
/// state's two bits (`lo` set, `hi` clear) and (`hi` set, `lo` clear), acting where `cond`
/// holds. Every gate of the paper is symmetric under exchanging its two qubits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PairGate<T> {
    pub lo: u32,
    pub hi: u32,
    pub cond: Cond,
    pub diag: Complex<T>,
    pub off: Complex<T>,
    /// Whether the state the gate runs on is larger than this machine's caches hold
    /// ([`crate::kernels::dense::COLD_BYTES`]): a wide group's write-back then streams past
    /// them. A property of the pass, set by the state; never changes a value.
    pub cold: bool,
}

impl<T: Amplitude> PairGate<T> {
    /// Builds the gate for physical bits `a != b` in either order.
    pub fn new(a: u32, b: u32, cond: Cond, diag: Complex<T>, off: Complex<T>) -> Self {
        Self {
            lo: a.min(b),
            hi: a.max(b),
            cond,
            diag,
            off,
            cold: false,
        }
    }

    /// A gate with a zero diagonal is a permutation with phases: it never creates or merges
    /// entries.
    pub fn is_dense(&self) -> bool {
        self.diag != Complex::new(T::zero(), T::zero())
    }
}

/// First index `>= from` whose key is `>= bound`, given `keys[from - 1] < bound` or
/// `from == 0`; exponential then binary search so small groups cost O(1).
#[inline]
fn gallop_lower_bound(keys: &[u64], from: usize, bound: u64) -> usize {
    gallop_while(keys, from, |k| k < bound)
}

/// The first index in `[from, keys.len())` whose key fails `holds`, where `holds` is true on
/// a prefix of `keys[from..]` and false after it: exponential then binary search, so a short
/// run costs O(1).
#[inline]
pub(crate) fn gallop_while(keys: &[u64], from: usize, holds: impl Fn(u64) -> bool) -> usize {
    let n = keys.len();
    let mut lo = from;
    let mut step = 1;
    loop {
        let probe = lo + step - 1;
        if probe >= n {
            return lo + keys[lo..n].partition_point(|&k| holds(k));
        }
        if !holds(keys[probe]) {
            return lo + keys[lo..probe].partition_point(|&k| holds(k));
        }
        lo = probe + 1;
        step *= 2;
    }
}

/// The first index in `[lo, hi)` whose key fails `holds` (true on a prefix of
/// `keys[lo..hi]`), searched outwards from `guess`: a probe there, then exponential steps
/// away from it and a binary search, so an answer near the guess costs a few probes near
/// it. Without a guess inside `(lo, hi)`, [`gallop_while`] from `lo`.
///
/// Group boundaries in a large state are far apart in memory and each probe of a search
/// from the group's start is a cache miss; the next group's boundary is usually about as
/// far as the last one's (a random state's groups are of about one size), so its guess is
/// the last group's length.
#[inline]
pub(crate) fn partition_near(
    keys: &[u64],
    (lo, hi): (usize, usize),
    guess: usize,
    holds: impl Fn(u64) -> bool,
) -> usize {
    if guess <= lo || guess >= hi {
        return gallop_while(&keys[..hi], lo, holds);
    }
    if holds(keys[guess]) {
        return gallop_while(&keys[..hi], guess + 1, holds);
    }
    // The answer is in [lo, guess]: gallop backwards, `keys[b]` failing.
    let (mut b, mut step) = (guess, 1);
    loop {
        if b - lo <= step {
            return lo + keys[lo..b].partition_point(|&k| holds(k));
        }
        let probe = b - step;
        if holds(keys[probe]) {
            return probe + 1 + keys[probe + 1..b].partition_point(|&k| holds(k));
        }
        b = probe;
        step *= 2;
    }
}

/// The group for bit `hi` that starts at `start` (`start < keys.len()`, the first index of a
/// group): `(mid, end)`, where `[start, mid)` has bit `hi` clear and `[mid, end)` has it set.
#[inline]
pub(crate) fn group_after(keys: &[u64], start: usize, hi: u32) -> (usize, usize) {
    group_after_near(keys, start, hi, (0, 0))
}

/// [`group_after`] searching near `guess`, the `(mid - start, end - start)` the group is
/// expected to have ([`partition_near`]; `(0, 0)` for none).
#[inline]
pub(crate) fn group_after_near(
    keys: &[u64],
    start: usize,
    hi: u32,
    guess: (usize, usize),
) -> (usize, usize) {
    let b = 1u64 << hi;
    let span_shift = hi + 1;
    let n = keys.len();
    if span_shift == 64 {
        return (gallop_lower_bound(keys, start, b), n);
    }
    let prefix = keys[start] >> span_shift << span_shift;
    let end = match prefix.checked_add(1u64 << span_shift) {
        Some(bound) => partition_near(keys, (start, n), start + guess.1, |k| k < bound),
        None => n,
    };
    let mid = partition_near(keys, (start, end), start + guess.0, |k| k < prefix | b);
    (mid, end)
}

/// A walk over the groups of a run for bit `hi`, first to last: [`GroupWalk::next`] gives
/// each as `(start, mid, end)`, its boundaries searched near the last group's shape
/// ([`group_after_near`]). It holds no borrow of the keys, so a pass may rewrite the keys
/// below the group it is at (a forward pass writing its output there).
#[derive(Clone, Copy, Default)]
pub(crate) struct GroupWalk {
    pos: usize,
    guess: (usize, usize),
}

impl GroupWalk {
    /// A walk whose first group starts at `pos`.
    pub(crate) fn at(pos: usize) -> Self {
        Self { pos, guess: (0, 0) }
    }

    /// The next group of `keys` for bit `hi`, or `None` at the end: `[start, mid)` has bit
    /// `hi` clear and `[mid, end)` has it set.
    #[inline]
    pub(crate) fn next(&mut self, keys: &[u64], hi: u32) -> Option<(usize, usize, usize)> {
        let start = self.pos;
        if start >= keys.len() {
            return None;
        }
        let (mid, end) = group_after_near(keys, start, hi, self.guess);
        (self.pos, self.guess) = (end, (mid - start, end - start));
        Some((start, mid, end))
    }
}

/// The groups of a run for bit `hi`: calls `f(start, mid, end)` for each group, where
/// `[start, mid)` has bit `hi` clear and `[mid, end)` has it set ([`GroupWalk`]).
#[inline]
pub(crate) fn for_each_group(keys: &[u64], hi: u32, mut f: impl FnMut(usize, usize, usize)) {
    let mut walk = GroupWalk::default();
    while let Some((start, mid, end)) = walk.next(keys, hi) {
        f(start, mid, end);
    }
}

/// Applies `gate` to the run `(keys, amps)`, appending the result (in key order) to
/// `(out_k, out_a)`. `pre` transforms each input amplitude (given its input key) and `post`
/// each output amplitude (given its output key): fused diagonal phases.
///
/// Inside a group for bit `hi`, the lower half (`hi` clear) holds the `00` and `lo` entries
/// and the upper half the `hi` and `11` entries. An `lo` entry at `k` pairs with the `hi`
/// entry at `k + delta` (`delta = hi - lo`), and both classes stay sorted under that shift,
/// so each output half is one merge: the half itself (its pair entries updated) with the
/// other half's unpartnered pair entries shifted in. No sorting, no hashing, no scratch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply<T, Pre, Post, S>(
    keys: &[u64],
    amps: &[Complex<T>],
    gate: &PairGate<T>,
    plain: bool,
    pre: Pre,
    post: Post,
    sink: &mut S,
) where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
    S: Sink<T>,
{
    let a = 1u64 << gate.lo;
    let b = 1u64 << gate.hi;
    let ab = a | b;
    let delta = b - a;
    let dense = gate.is_dense();
    let (d, o) = (gate.diag, gate.off);
    let cond = gate.cond;
    let is_l = |k: u64| k & ab == a && cond.holds(k);
    let is_h = |k: u64| k & ab == b && cond.holds(k);
    // Keeps a merged amplitude unless it cancelled relative to its inputs.
    let kept = |n: Complex<T>, x: Complex<T>, y: Complex<T>| T::survives(n, x, y);
    // Copies entries the gate leaves alone: in bulk when `pre` and `post` are identities.
    let copy = |sink: &mut S, from: usize, to: usize| {
        if plain {
            sink.put_run(&keys[from..to], &amps[from..to]);
        } else {
            for r in from..to {
                sink.put(keys[r], post(keys[r], pre(keys[r], amps[r])));
            }
        }
    };
    for_each_group(keys, gate.hi, |start, mid, end| {
        let next_l = |mut i: usize| {
            while i < mid && !is_l(keys[i]) {
                i += 1;
            }
            i
        };
        let next_h = |mut j: usize| {
            while j < end && !is_h(keys[j]) {
                j += 1;
            }
            j
        };
        // Lower half: [start, mid) merged with the hi entries of [mid, end) shifted down.
        let (mut i, mut j) = (start, next_h(mid));
        loop {
            let partner = j < end;
            let limit = if partner { keys[j] - delta } else { 0 };
            let from = i;
            while i < mid && (!partner || keys[i] < limit) && !is_l(keys[i]) {
                i += 1;
            }
            copy(sink, from, i);
            if i < mid && (!partner || keys[i] < limit) {
                // An unpartnered lo entry: keeps d * v (a permutation moves it away).
                if dense {
                    let k = keys[i];
                    sink.put(k, post(k, d * pre(k, amps[i])));
                }
                i += 1;
            } else if !partner {
                break;
            } else if i < mid && keys[i] == limit {
                let (vl, vh) = (pre(limit, amps[i]), pre(keys[j], amps[j]));
                let n = if dense { d * vl + o * vh } else { o * vh };
                if !dense || kept(n, vl, vh) {
                    sink.put(limit, post(limit, n));
                }
                i += 1;
                j = next_h(j + 1);
            } else {
                // An unpartnered hi entry sends o * v down.
                sink.put(limit, post(limit, o * pre(keys[j], amps[j])));
                j = next_h(j + 1);
            }
        }
        // Upper half: [mid, end) merged with the lo entries of [start, mid) shifted up.
        let (mut i, mut j) = (next_l(start), mid);
        loop {
            let partner = i < mid;
            let limit = if partner { keys[i] + delta } else { 0 };
            let from = j;
            while j < end && (!partner || keys[j] < limit) && !is_h(keys[j]) {
                j += 1;
            }
            copy(sink, from, j);
            if j < end && (!partner || keys[j] < limit) {
                if dense {
                    let k = keys[j];
                    sink.put(k, post(k, d * pre(k, amps[j])));
                }
                j += 1;
            } else if !partner {
                break;
            } else if j < end && keys[j] == limit {
                let (vl, vh) = (pre(keys[i], amps[i]), pre(limit, amps[j]));
                let n = if dense { o * vl + d * vh } else { o * vl };
                if !dense || kept(n, vl, vh) {
                    sink.put(limit, post(limit, n));
                }
                j += 1;
                i = next_l(i + 1);
            } else {
                sink.put(limit, post(limit, o * pre(keys[i], amps[i])));
                i = next_l(i + 1);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::group_chunks;

    /// `partition_near` is `partition_point` on `[lo, hi)` for every guess, inside the range
    /// or not, near the answer or far; and `group_after_near` is `group_after` for every
    /// guess.
    #[test]
    fn a_search_from_a_guess_finds_the_partition_point() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for case in 0..300 {
            let n = rng.random_range(1..400usize);
            let mut keys: Vec<u64> = (0..n).map(|_| rng.random_range(0..1000u64)).collect();
            keys.sort_unstable();
            let lo = rng.random_range(0..n);
            let hi = rng.random_range(lo..=n);
            let bound = rng.random_range(0..1100u64);
            let holds = |k: u64| k < bound;
            let want = lo + keys[lo..hi].partition_point(|&k| holds(k));
            for guess in 0..=n + 1 {
                let got = super::partition_near(&keys, (lo, hi), guess, holds);
                assert_eq!(got, want, "case {case}: [{lo}, {hi}) guess {guess}");
            }
            let hib = rng.random_range(0..10u32);
            let mut start = 0;
            while start < n {
                let (mid, end) = super::group_after(&keys, start, hib);
                for guess in [(0, 0), (1, 2), (mid - start, end - start), (7, 3), (n, n)] {
                    let near = super::group_after_near(&keys, start, hib, guess);
                    assert_eq!(near, (mid, end), "case {case}: group at {start}");
                }
                start = end;
            }
        }
    }

    /// Every cut falls between groups, the ranges cover the run in order, a range is at most
    /// `max` long unless it is one group, and a range stops only where the next group would
    /// not fit; including keys with bit 63 set (the last group's end overflows) and `hi` 63.
    #[test]
    fn chunks_hold_whole_groups_and_respect_the_bound() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut rnd = || rng.random::<u64>();
        for case in 0..400 {
            let n = (rnd() % 300) as usize;
            let hi = [0u32, 3, 7, 20, 61, 62, 63][case % 7];
            let spread = [6u32, 12, 64][case % 3];
            let mut keys: Vec<u64> = (0..n)
                .map(|_| {
                    let k = if spread == 64 {
                        rnd()
                    } else {
                        rnd() % (1 << spread)
                    };
                    if case % 5 == 0 { k | 1 << 63 } else { k }
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let max = 1 + (rnd() % 40) as usize;
            let chunks = group_chunks(&keys, hi, max);
            if keys.is_empty() {
                assert_eq!(chunks, [(0, 0)]);
                continue;
            }
            let group = |k: u64| if hi >= 63 { 0 } else { k >> (hi + 1) };
            let mut at = 0;
            for (i, &(a, b)) in chunks.iter().enumerate() {
                assert_eq!(a, at, "case {case}");
                assert!(b > a, "case {case}: empty range");
                if b < keys.len() {
                    assert_ne!(
                        group(keys[b - 1]),
                        group(keys[b]),
                        "case {case}: split group"
                    );
                }
                let one_group = group(keys[a]) == group(keys[b - 1]);
                assert!(b - a <= max || one_group, "case {case}: {a}..{b} > {max}");
                if b < keys.len() && i + 1 < chunks.len() && b - a <= max {
                    // The next group did not fit.
                    let next_end = keys.partition_point(|&k| group(k) <= group(keys[b]));
                    assert!(
                        next_end - a > max,
                        "case {case}: range {a}..{b} stopped early"
                    );
                }
                at = b;
            }
            assert_eq!(at, keys.len(), "case {case}");
        }
    }
}
