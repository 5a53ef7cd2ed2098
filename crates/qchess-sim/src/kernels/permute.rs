//! Controlled pair permutations (controlled iSwap and its inverse: a slide) applied in place.
//!
//! An entry moves when its bits `lo`, `hi` differ and the condition holds; its key becomes
//! `k ^ (lo | hi)` and its amplitude is multiplied by `off`. The entries that stay form a
//! sorted subsequence, and so do the movers of each pattern after the flip (a constant
//! shift of `+-(hi - lo)` keeps their order). So one forward pass, by 64-entry bitmaps,
//! compacts the stays in place and copies the two mover classes into a scratch (each run
//! preceded by a sentinel key 0, which no mover can have: a mover's new key has `lo` or `hi`
//! set), and one backward merge of the stays with one mover class at a time writes the
//! result into the same arrays. The scratch holds only the movers, so the peak is the state
//! plus the moved entries.

use crate::amplitude::Amplitude;
use crate::kernels::pair::gallop_while;
use crate::key::Cond;
use crate::prefetch::{AHEAD, KEYS_PER_LINE, prefetch};
use num_complex::Complex;

/// Movers of one range: `(lo set and hi clear, hi set and lo clear)` where `cond` holds.
/// One branch-free pass over the keys, in 64-bit lanes: a key moves when bits `lo` and `hi`
/// differ (bit 0 of `k >> lo ^ k >> hi`) and the condition holds, and moves up when bit
/// `lo` is the one set.
pub(crate) fn count_movers(keys: &[u64], lo: u32, hi: u32, cond: Cond) -> (usize, usize) {
    let (mut movers, mut up) = (0u64, 0u64);
    let mut count = |k: u64| {
        let m = (k >> lo ^ k >> hi) & u64::from(cond.holds(k));
        movers += m & 1;
        up += m & k >> lo & 1;
    };
    // A line of keys at a time, the line `AHEAD` entries on hinted: one stream read at the
    // memory's pace, not at the pace the hardware prefetcher alone keeps.
    let lines = keys.chunks_exact(KEYS_PER_LINE);
    let rest = lines.remainder();
    for (c, line) in lines.enumerate() {
        prefetch(keys, c * KEYS_PER_LINE + AHEAD);
        line.iter().for_each(|&k| count(k));
    }
    rest.iter().for_each(|&k| count(k));
    (up as usize, (movers - up) as usize)
}

/// Scratch entries a range with `(up, down)` movers needs: each class behind its sentinel.
pub(crate) fn scratch_len(up: usize, down: usize) -> usize {
    up + down + 2
}

/// The squared norms of the entries a permutation moved, `[up, down]`: up the ones with bit
/// `lo` set (their mass goes from qubit `lo` to qubit `hi`), down the ones with bit `hi` set.
pub(crate) type Flows = [f64; 2];

/// Sum of `|v|^2` over `amps`, in order (the masses a run's movers carry, [`Flows`]).
fn moved_mass<T: Amplitude>(amps: &[Complex<T>]) -> f64 {
    amps.iter().map(|&v| crate::kernels::scan::norm2(v)).sum()
}

/// Applies the permutation to one run, in place, and returns its [`Flows`] when `sum`
/// (summed from the scratch, in key order; zero otherwise). `movers` is `count_movers` of this run,
/// `sk`/`sa` a scratch of `scratch_len` entries. The run must be closed under the
/// permutation (whole groups for bit `hi`), which every whole sector is.
#[allow(clippy::too_many_arguments)]
pub(crate) fn permute_in_place<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    lo: u32,
    hi: u32,
    cond: Cond,
    off: Complex<T>,
    movers: (usize, usize),
    sk: &mut [u64],
    sa: &mut [Complex<T>],
    sum: bool,
) -> Flows {
    let n = keys.len();
    let (a, b) = (1u64 << lo, 1u64 << hi);
    let ab = a | b;
    let (up, down) = movers;
    if up + down == 0 {
        return [0.0; 2];
    }
    let zero = Complex::new(T::zero(), T::zero());
    // Layout: [0, up keys..] [0, down keys..]; `base` is where the down run starts.
    let base = up + 1;
    sk[0] = 0;
    sk[base] = 0;
    sa[0] = zero;
    sa[base] = zero;
    // Forward, 64 entries at a time: the chunk's two mover classes as bitmaps (one
    // branch-free loop over its keys), then its movers copied (flipped, phased) to the
    // scratch and its stays moved down to their compacted places, each by its bitmap's set
    // bits. Movers first: a stay may land on a mover's place in the same chunk. A chunk
    // without movers whose stays are already in place is not written.
    let amps_per_line = (64 / std::mem::size_of::<Complex<T>>()).max(1);
    let (mut w, mut iu, mut id) = (0usize, 1usize, base + 1);
    let mut r0 = 0;
    while r0 < n {
        let len = (n - r0).min(64);
        // Both arrays hinted `AHEAD` entries on, a line at a time (memory-bound: the
        // hardware prefetcher alone keeps a slower pace).
        for l in (0..64).step_by(KEYS_PER_LINE) {
            prefetch(keys, r0 + AHEAD + l);
        }
        for l in (0..64).step_by(amps_per_line) {
            prefetch(amps, r0 + AHEAD + l);
        }
        let (mut um, mut dm) = (0u64, 0u64);
        for (t, &k) in keys[r0..r0 + len].iter().enumerate() {
            let c = cond.holds(k);
            um |= u64::from((k & ab == a) & c) << t;
            dm |= u64::from((k & ab == b) & c) << t;
        }
        let moving = um | dm;
        if moving == 0 && w == r0 {
            (w, r0) = (w + len, r0 + len);
            continue;
        }
        for (mut m, j) in [(um, &mut iu), (dm, &mut id)] {
            while m != 0 {
                let r = r0 + m.trailing_zeros() as usize;
                sk[*j] = keys[r] ^ ab;
                sa[*j] = off * amps[r];
                *j += 1;
                m &= m - 1;
            }
        }
        let mut stay = !moving & (u64::MAX >> (64 - len));
        while stay != 0 {
            let r = r0 + stay.trailing_zeros() as usize;
            keys[w] = keys[r];
            amps[w] = amps[r];
            w += 1;
            stay &= stay - 1;
        }
        r0 += len;
    }
    debug_assert_eq!((iu - 1, id - base - 1, w), (up, down, n - up - down));
    let (uk, dk) = sk.split_at(base);
    let (ua, da) = sa.split_at(base);
    // `|i v|^2 == |v|^2` bit for bit: the phased movers carry their masses.
    let flows = if sum {
        [moved_mass(&ua[1..]), moved_mass(&da[1..=down])]
    } else {
        [0.0; 2]
    };
    // Backward merge, largest key first: stays sit in [0, w), the output fills [0, n), and
    // `out - i` is the count of movers left. The two mover classes interleave only group
    // by group (a group's `hi` movers land in its lower half, below its `lo` movers), so
    // the class whose head is larger is picked by a branch that rarely changes, and its run
    // above the other class's head is merged with the stays branch-free, two heads at a time.
    // Stays go up in blocks where they outnumber the movers at least [`BLOCK_RATIO`] to 1.
    let blocks = w >= BLOCK_RATIO * (up + down);
    let (mut i, mut ju, mut jd, mut out) = (w, up, down, n);
    while ju + jd > 0 {
        let (hu, hd) = (uk[ju], dk[jd]);
        out = if hu > hd {
            merge_run(keys, amps, (&mut i, out), (uk, ua, &mut ju), hd, blocks)
        } else {
            merge_run(keys, amps, (&mut i, out), (dk, da, &mut jd), hu, blocks)
        };
    }
    flows
}

/// One step of [`permute_in_place`]'s backward merge: merges the stays below `*i` with the
/// movers `mk[..=*j]` whose keys exceed `bound` (the other class's head), writing below
/// `out`, and returns the new `out`. The movers' sentinel key 0 at index 0 ends the run; a
/// stay's place below 0 reads as key 0, below every mover (a mover's key has bit `lo` or
/// `hi` set).
///
/// With `blocks`, mover by mover: the stays above it move up in blocks of [`BLOCK`] (all of
/// a block is written, the count above the mover kept), then the mover takes the next place.
/// A block is written only while at least [`BLOCK`] movers are left, so that its places lie
/// above every unread stay. Otherwise (and near the end, and below the first [`BLOCK`]
/// stays) one entry a step, branch-free.
#[inline(always)]
fn merge_run<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    (i, mut out): (&mut usize, usize),
    (mk, ma, j): (&[u64], &[Complex<T>], &mut usize),
    bound: u64,
    blocks: bool,
) -> usize {
    loop {
        let hm = mk[*j];
        if hm <= bound {
            break;
        }
        if blocks && *i >= BLOCK && out - *i >= BLOCK {
            let (from, to) = (*i - BLOCK, out - BLOCK);
            let bk: [u64; BLOCK] = keys[from..*i].try_into().expect("a block");
            let ba: [Complex<T>; BLOCK] = amps[from..*i].try_into().expect("a block");
            // The stays are sorted: those above the mover are the block's top `c`.
            let c = bk.iter().map(|&k| usize::from(k > hm)).sum::<usize>();
            keys[to..out].copy_from_slice(&bk);
            amps[to..out].copy_from_slice(&ba);
            (*i, out) = (*i - c, out - c);
            if c < BLOCK {
                out -= 1;
                keys[out] = hm;
                amps[out] = ma[*j];
                *j -= 1;
            }
            continue;
        }
        let hs = stay(keys, *i);
        let ts = hs > hm;
        // The amplitude by masks (`Amplitude::select`): an `if` on it compiles to a branch
        // on the data.
        out -= 1;
        keys[out] = if ts { hs } else { hm };
        amps[out] = T::select(ts, amps[(*i).max(1) - 1], ma[*j]);
        *i -= usize::from(ts);
        *j -= usize::from(!ts);
    }
    out
}

/// Stays moved at once by [`merge_run`].
const BLOCK: usize = 8;

/// Stays per mover from which [`merge_run`] moves stays in blocks: a block step costs about
/// two single steps and places the stays above a mover and the mover, so it pays where a
/// mover has a few stays above it (a random state's slide: three), not where stays and
/// movers alternate (measured: the game's slide `a1a5` at 1e7 took 75-77 ms by blocks
/// against 67-69 entry by entry).
const BLOCK_RATIO: usize = 2;

/// The stay below `i` (`keys[i - 1]`), or key 0 below the first.
#[inline(always)]
fn stay(keys: &[u64], i: usize) -> u64 {
    if i > 0 { keys[i - 1] } else { 0 }
}

/// Whether [`permute_groups`] applies: no bit of the condition lies below `lo`, so it reads
/// only bits above `lo` (never `lo` or `hi` themselves) and is the same for every key of one
/// sub-group, the keys that share every bit above `lo` but `hi`. A slide's path condition is
/// of this kind whenever its squares' physical bits lie above the lower of the two squares'.
pub(crate) fn blocks_apply(lo: u32, cond: Cond) -> bool {
    (cond.mask | cond.any) & ((1u64 << lo) - 1) == 0
}

/// Fewest key bits below `lo` that must vary in a run for [`permute_groups`] to take it: with
/// fewer, a sub-group's classes hold a few entries each (one, when none varies: a slide from
/// square 0), the walk's searches cost more than the per-entry kernel (measured: a game slide
/// `a1a5` at 1e7 took 250 ms by blocks against 83 ms entry by entry), and
/// [`permute_in_place`] takes the run. With three, a class holds up to eight.
pub(crate) const BLOCK_BITS: u32 = 3;

/// How to permute a run: `None` by blocks ([`permute_groups`]), when `blocks` (the caller's
/// [`blocks_apply`], and the run short enough for a scratch) and at least [`BLOCK_BITS`] key
/// bits below `lo` vary among a sample of its keys (32 from its start and 32 from its
/// middle: the low bits are the ones that change between neighbours, so a sample shows them
/// without a pass over the run); otherwise `Some` of its [`count_movers`], entry by entry.
pub(crate) fn plan(
    keys: &[u64],
    lo: u32,
    hi: u32,
    cond: Cond,
    blocks: bool,
) -> Option<(usize, usize)> {
    if blocks {
        let half = keys.len() / 2;
        let sample = keys[..keys.len().min(32)]
            .iter()
            .chain(&keys[half..keys.len().min(half + 32)]);
        let (any, all) = sample.fold((0u64, !0u64), |(o, n), &k| (o | k, n & k));
        if ((any ^ all) & ((1u64 << lo) - 1)).count_ones() >= BLOCK_BITS {
            return None;
        }
    }
    Some(count_movers(keys, lo, hi, cond))
}

/// Applies the permutation to a run of whole groups for bit `hi`, in place, by blocks, when
/// [`blocks_apply`] holds. `sk` / `sa` must hold the run's largest group (its length will do).
///
/// In one group, the sub-groups (keys sharing every bit above `lo` but `hi`) each hold up to
/// four classes: `00` and `lo` (bit `lo` clear / set) in the lower half, `hi` and `11` in the
/// upper. Where the condition holds for a sub-group (it is the same for all of its keys), its
/// `lo` class moves up and its `hi` class moves down, both flipped and phased; elsewhere
/// nothing moves. So the group's output is, sub-group by sub-group: lower half `00`, then the
/// flipped `hi` class or the `lo` class; upper half the flipped `lo` class or the `hi` class,
/// then `11`. Every piece is a contiguous run of the group's input, copied as a block (no
/// comparison per entry). A first walk over the sub-groups (searches at their boundaries, no
/// pass over the entries) counts the movers and finds the first place that changes; a group
/// without a mover is not touched; otherwise its keys, and its amplitudes from that place
/// on, are copied to the scratch, and the runs are written back from there, a run already
/// in its place left alone. Same entries, same amplitudes (the same product `off * v`) as
/// [`permute_in_place`]. Returns the [`Flows`] when `sum`, summed group by group in key
/// order (zero otherwise).
#[allow(clippy::too_many_arguments)]
pub(crate) fn permute_groups<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    lo: u32,
    hi: u32,
    cond: Cond,
    off: Complex<T>,
    sk: &mut [u64],
    sa: &mut [Complex<T>],
    sum: bool,
) -> Flows {
    debug_assert!(blocks_apply(lo, cond));
    let mut flows = [0.0f64; 2];
    let b = 1u64 << hi;
    let ab = (1u64 << lo) | b;
    let above = if hi == 63 { 0 } else { !0u64 << (hi + 1) };
    let mut start = 0;
    while start < keys.len() {
        let end = group_end(keys, start, above);
        let (len, m) = (
            end - start,
            keys[start..end].partition_point(|&k| k & b == 0),
        );
        // Movers, and `from`: where the first moving sub-group's `lo` / `hi` part goes. The
        // output before it is the input, so it is neither copied nor written.
        let (mut up, mut down, mut from) = (0, 0, len);
        let (lower, upper) = keys[start..end].split_at(m);
        walk(lower, upper, lo, hi, cond, |sub| {
            if sub.moves {
                from = from.min(sub.l.1);
                up += sub.l.2 - sub.l.1;
                down += sub.u.1 - sub.u.0;
            }
        });
        if up + down == 0 {
            start = end;
            continue;
        }
        // The group's keys (the walk reads them while the output is written) and its
        // amplitudes from `from` on, to the scratch.
        sk[..len].copy_from_slice(&keys[start..end]);
        sa[from..len].copy_from_slice(&amps[start + from..end]);
        let (ok, oa) = (&mut keys[start..end], &mut amps[start..end]);
        let (gk, ga) = (&sk[..len], &sa[..len]);
        // Appends the group's input `[i, j)` at `*w`, flipped and phased if `flip`; a block
        // already in its place is left as it is.
        let mut put = |w: &mut usize, i: usize, j: usize, flip: bool| {
            let n = j - i;
            if n == 0 || (!flip && *w == i) {
                *w += n;
                return;
            }
            debug_assert!(i >= from);
            let (dk, da) = (&mut ok[*w..*w + n], &mut oa[*w..*w + n]);
            if flip {
                for (o, &k) in dk.iter_mut().zip(&gk[i..j]) {
                    *o = k ^ ab;
                }
                for (o, &v) in da.iter_mut().zip(&ga[i..j]) {
                    *o = off * v;
                }
            } else {
                dk.copy_from_slice(&gk[i..j]);
                da.copy_from_slice(&ga[i..j]);
            }
            *w += n;
        };
        // The lower half's output is `m - up + down` long; the upper half's follows.
        let (mut wl, mut wu) = (0, m - up + down);
        let (lower, upper) = gk.split_at(m);
        walk(lower, upper, lo, hi, cond, |sub| {
            let ((il, xl, el), (iu, xu, eu)) = (sub.l, sub.u);
            // Lower half: `00`, then the flipped `hi` class or the `lo` class; upper half:
            // the flipped `lo` class or the `hi` class, then `11`.
            put(&mut wl, il, xl, false);
            if sub.moves {
                put(&mut wl, m + iu, m + xu, true);
                put(&mut wu, xl, el, true);
                if sum {
                    flows[0] += moved_mass(&ga[xl..el]);
                    flows[1] += moved_mass(&ga[m + iu..m + xu]);
                }
            } else {
                put(&mut wl, xl, el, false);
                put(&mut wu, m + iu, m + xu, false);
            }
            put(&mut wu, m + xu, m + eu, false);
        });
        debug_assert_eq!((wl, wu), (m - up + down, len));
        start = end;
    }
    flows
}

/// The end of the group whose keys share `keys[start] & above`: eight keys at a time (the
/// keys are sorted, so the eighth tells for all), then one by one.
#[inline]
fn group_end(keys: &[u64], start: usize, above: u64) -> usize {
    let prefix = keys[start] & above;
    let mut end = start + 1;
    while end + 8 <= keys.len() && keys[end + 7] & above == prefix {
        end += 8;
    }
    while end < keys.len() && keys[end] & above == prefix {
        end += 1;
    }
    end
}

/// One sub-group of a group (the keys sharing every bit above `lo` but `hi`): its ranges in
/// the lower half, `l = (i, x, e)` (`[i, x)` bit `lo` clear, `[x, e)` set), and in the upper
/// half, `u` likewise (either may be empty), and whether it moves (the condition holds).
struct Sub {
    l: (usize, usize, usize),
    u: (usize, usize, usize),
    moves: bool,
}

/// Calls `f` for each sub-group of the group whose halves are `lower` and `upper`, in key
/// order: a merge of the two halves' sub-groups by their bits above `lo` (bit `hi` aside),
/// with searches at the boundaries only.
fn walk(lower: &[u64], upper: &[u64], lo: u32, hi: u32, cond: Cond, mut f: impl FnMut(Sub)) {
    let (a, b) = (1u64 << lo, 1u64 << hi);
    let sh = lo + 1;
    let (mut il, mut iu) = (0, 0);
    while il < lower.len() || iu < upper.len() {
        // Sub-group values (bit `hi` cleared, bits up to `lo` dropped); never u64::MAX.
        let sl = lower.get(il).map_or(u64::MAX, |&k| k >> sh);
        let su = upper.get(iu).map_or(u64::MAX, |&k| (k & !b) >> sh);
        let s = sl.min(su);
        let l = if sl == s {
            let e = gallop_while(lower, il, |k| k >> sh == s);
            (il, il + lower[il..e].partition_point(|&k| k & a == 0), e)
        } else {
            (il, il, il)
        };
        let u = if su == s {
            let e = gallop_while(upper, iu, |k| (k & !b) >> sh == s);
            (iu, iu + upper[iu..e].partition_point(|&k| k & a == 0), e)
        } else {
            (iu, iu, iu)
        };
        let moves = cond.holds(if sl == s { lower[il] } else { upper[iu] });
        (il, iu) = (l.2, u.2);
        f(Sub { l, u, moves });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The permutation by the obvious method: flip, phase, sort.
    fn naive(keys: &[u64], lo: u32, hi: u32, cond: Cond) -> Vec<(u64, Complex<f64>)> {
        let ab = (1u64 << lo) | (1u64 << hi);
        let mut out: Vec<(u64, Complex<f64>)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| {
                let v = Complex::new(i as f64 + 1.0, -(i as f64));
                let moves = ((k >> lo) ^ (k >> hi)) & 1 == 1 && cond.holds(k);
                if moves {
                    (k ^ ab, Complex::new(0.0, 1.0) * v)
                } else {
                    (k, v)
                }
            })
            .collect();
        out.sort_by_key(|e| e.0);
        out
    }

    /// A xorshift generator from `seed`.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Two of `bits` drawn at random as gate bits `lo < hi`, or `None` when the draw repeats one.
    fn gate_bits(rnd: &mut impl FnMut() -> u64, bits: &[u32]) -> Option<(u32, u32)> {
        let (i, j) = (rnd() as usize % bits.len(), rnd() as usize % bits.len());
        (i != j).then(|| (bits[i.min(j)], bits[i.max(j)]))
    }

    /// The four condition shapes the random tests cycle through, on bit masks `c1`, `c2`:
    /// none, `c1` clear, `c1` set with `c2` clear, `c1` clear with any of `c2`.
    fn cond_case(case: usize, c1: u64, c2: u64) -> Cond {
        match case % 4 {
            0 => Cond {
                mask: 0,
                value: 0,
                any: 0,
            },
            1 => Cond {
                mask: c1,
                value: 0,
                any: 0,
            },
            2 => Cond {
                mask: c1 | c2,
                value: c1,
                any: 0,
            },
            _ => Cond {
                mask: c1 & !c2,
                value: 0,
                any: c2,
            },
        }
    }

    /// [`permute_in_place`] on `keys` with the amplitudes [`naive`] gives them, its scratch
    /// sized by [`count_movers`] and filled with junk first.
    fn in_place(mut keys: Vec<u64>, lo: u32, hi: u32, cond: Cond) -> Vec<(u64, Complex<f64>)> {
        let mut amps: Vec<Complex<f64>> = (0..keys.len())
            .map(|i| Complex::new(i as f64 + 1.0, -(i as f64)))
            .collect();
        let movers = count_movers(&keys, lo, hi, cond);
        let len = scratch_len(movers.0, movers.1);
        let (mut sk, mut sa) = (vec![7u64; len], vec![Complex::new(9.0, 9.0); len]);
        let off = Complex::new(0.0, 1.0);
        permute_in_place(
            &mut keys, &mut amps, lo, hi, cond, off, movers, &mut sk, &mut sa, true,
        );
        keys.into_iter().zip(amps).collect()
    }

    #[test]
    fn matches_flip_and_sort_including_key_zero_and_bit_63() {
        let mut rnd = xorshift(12345u64);
        for case in 0..300 {
            // Keys over a few chosen bits, so every pattern and condition value occurs.
            let bits = [0u32, 1, 5, 31, 62, 63];
            let mut keys: Vec<u64> = (0..(rnd() % 60))
                .map(|_| bits.iter().fold(0, |k, &b| k | ((rnd() & 1) << b)))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let (lo, hi) = match case % 3 {
                0 => (0, 63),
                1 => (1, 62),
                _ => (5, 31),
            };
            let others: Vec<u32> = bits
                .iter()
                .copied()
                .filter(|&b| b != lo && b != hi)
                .collect();
            let cond = match case % 4 {
                0 => Cond {
                    mask: 0,
                    value: 0,
                    any: 0,
                },
                1 => Cond {
                    mask: 1 << others[0],
                    value: 0,
                    any: 0,
                },
                2 => Cond {
                    mask: 1 << others[1],
                    value: 1 << others[1],
                    any: 0,
                },
                _ => Cond {
                    mask: 1 << others[0],
                    value: 0,
                    any: 1 << others[2],
                },
            };
            let expected = naive(&keys, lo, hi, cond);
            let got = in_place(keys, lo, hi, cond);
            assert_eq!(got, expected, "case {case}");
        }
    }

    /// The entry-by-entry kernel on runs longer than its 64-entry chunks: keys over twelve
    /// bits (dense and sparse, one group for `hi` or many), gate bits low and high, and
    /// conditions on bits below, between and above them.
    #[test]
    fn long_runs_match_flip_and_sort() {
        let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let bits = [0u32, 1, 2, 3, 4, 5, 9, 12, 20, 33, 62, 63];
        for case in 0..400 {
            let Some((lo, hi)) = gate_bits(&mut rnd, &bits) else {
                continue;
            };
            let others: Vec<u32> = bits
                .iter()
                .copied()
                .filter(|&q| q != lo && q != hi)
                .collect();
            let pick = |r: u64| 1u64 << others[r as usize % others.len()];
            let (c1, c2) = (pick(rnd()), pick(rnd()));
            let cond = cond_case(case, c1, c2);
            // One in four bits set or three in four: sparse and dense runs.
            let dense = rnd() & 1 == 1;
            let mut keys: Vec<u64> = (0..(rnd() % 700))
                .map(|_| {
                    bits.iter().fold(0, |k, &q| {
                        let r = rnd() & 3;
                        let on = if dense { r != 0 } else { r == 0 };
                        k | (u64::from(on) << q)
                    })
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let expected = naive(&keys, lo, hi, cond);
            let got = in_place(keys, lo, hi, cond);
            assert_eq!(got, expected, "case {case}: bits {lo} {hi}, {cond:?}");
        }
    }

    /// The block kernel against the flip and sort, on keys over eight bits (so sub-groups and
    /// classes hold several entries, and some are empty) with every pair of gate bits and
    /// conditions on one or two bits above `lo`: between the gate bits, above `hi`, on both
    /// sides, with `any`, or none. Conditions reading a bit below `lo` are not its to take.
    #[test]
    fn blocks_match_flip_and_sort() {
        let mut rnd = xorshift(0x2545_f491_4f6c_dd1du64);
        let bits = [0u32, 2, 3, 7, 20, 40, 62, 63];
        let mut ran = 0;
        for case in 0..2000 {
            let Some((lo, hi)) = gate_bits(&mut rnd, &bits) else {
                continue;
            };
            let others: Vec<u32> = bits
                .iter()
                .copied()
                .filter(|&q| q > lo && q != hi)
                .collect();
            let pick = |r: u64| {
                others
                    .get(r as usize % others.len().max(1))
                    .map_or(0, |&q| 1u64 << q)
            };
            let (c1, c2) = (pick(rnd()), pick(rnd()));
            let cond = cond_case(case, c1, c2);
            assert!(blocks_apply(lo, cond), "case {case}");
            let density = rnd() % 4;
            let mut keys: Vec<u64> = (0..(rnd() % 200))
                .map(|_| {
                    bits.iter().fold(0, |k, &q| {
                        let on = if q == hi && density == 0 {
                            0
                        } else {
                            rnd() & 1
                        };
                        k | (on << q)
                    })
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let expected = naive(&keys, lo, hi, cond);
            let mut amps: Vec<Complex<f64>> = (0..keys.len())
                .map(|i| Complex::new(i as f64 + 1.0, -(i as f64)))
                .collect();
            let (mut sk, mut sa) = (
                vec![7u64; keys.len()],
                vec![Complex::new(9.0, 9.0); keys.len()],
            );
            permute_groups(
                &mut keys,
                &mut amps,
                lo,
                hi,
                cond,
                Complex::new(0.0, 1.0),
                &mut sk,
                &mut sa,
                true,
            );
            let got: Vec<(u64, Complex<f64>)> = keys.into_iter().zip(amps).collect();
            assert_eq!(got, expected, "case {case}: bits {lo} {hi}, {cond:?}");
            ran += 1;
        }
        assert!(ran > 1500);
        // Which kernel a run takes: by blocks only where enough bits below `lo` vary.
        let cond = Cond {
            mask: 1 << 20,
            value: 0,
            any: 0,
        };
        let few: Vec<u64> = (0..64u64).map(|i| i << 6 | (i & 3)).collect();
        let many: Vec<u64> = (0..64u64).map(|i| i << 6 | (i & 7)).collect();
        assert_eq!(
            plan(&few, 5, 9, cond, true),
            Some(count_movers(&few, 5, 9, cond))
        );
        assert_eq!(plan(&many, 5, 9, cond, true), None);
        assert_eq!(
            plan(&many, 5, 9, cond, false),
            Some(count_movers(&many, 5, 9, cond))
        );
        assert!(!blocks_apply(
            3,
            Cond {
                mask: 1 << 2,
                value: 0,
                any: 0
            }
        ));
        assert!(!blocks_apply(
            3,
            Cond {
                mask: 1 << 9,
                value: 0,
                any: 1
            }
        ));
    }
}
