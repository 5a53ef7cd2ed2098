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
        }
    }

    /// A gate with a zero diagonal is a permutation with phases: it never creates or merges
    /// entries.
    pub fn is_dense(&self) -> bool {
        self.diag != Complex::new(T::zero(), T::zero())
    }
}

#[inline(always)]
fn inf_norm<T: Amplitude>(z: Complex<T>) -> T {
    z.re.abs().max(z.im.abs())
}

/// First index `>= from` whose key is `>= bound`, given `keys[from - 1] < bound` or
/// `from == 0`; exponential then binary search so small groups cost O(1).
#[inline]
fn gallop_lower_bound(keys: &[u64], from: usize, bound: u64) -> usize {
    let n = keys.len();
    let mut lo = from;
    let mut step = 1;
    loop {
        let probe = lo + step - 1;
        if probe >= n {
            return lo + keys[lo..n].partition_point(|&k| k < bound);
        }
        if keys[probe] >= bound {
            return lo + keys[lo..probe].partition_point(|&k| k < bound);
        }
        lo = probe + 1;
        step *= 2;
    }
}

/// The groups of a run for bit `hi`: calls `f(start, mid, end)` for each group, where
/// `[start, mid)` has bit `hi` clear and `[mid, end)` has it set.
#[inline]
pub(crate) fn for_each_group(keys: &[u64], hi: u32, mut f: impl FnMut(usize, usize, usize)) {
    let b = 1u64 << hi;
    let span_shift = hi + 1;
    let n = keys.len();
    let mut pos = 0;
    while pos < n {
        let (end, mid) = if span_shift == 64 {
            (n, gallop_lower_bound(keys, pos, b))
        } else {
            let prefix = keys[pos] >> span_shift << span_shift;
            let end = match prefix.checked_add(1u64 << span_shift) {
                Some(bound) => gallop_lower_bound(keys, pos, bound),
                None => n,
            };
            let mid = pos + gallop_lower_bound(&keys[pos..end], 0, prefix | b);
            (end, mid)
        };
        f(pos, mid, end);
        pos = end;
    }
}

/// Applies `gate` to the run `(keys, amps)`, writing the result to the front of
/// `(out_k, out_a)` and returning its length. `pre` transforms each input amplitude (given its
/// input key) and `post` each output amplitude (given its output key): fused diagonal phases.
/// `out` must hold at least `keys.len() + count_pair_entries(..)` entries.
///
/// Inside a group for bit `hi`, each half splits again into sub-groups sharing the bits
/// above `lo`: `[00 run][lo run]` in the lower half, `[hi run][11 run]` in the upper one, each
/// run sorted by the bits below `lo`. Sub-groups with the same middle bits are joined: the
/// `00` and `11` runs are copied, the `lo` and `hi` runs merge-joined on their low bits.
#[allow(clippy::too_many_arguments)]
pub(crate) fn apply<T, Pre, Post>(
    keys: &[u64],
    amps: &[Complex<T>],
    gate: &PairGate<T>,
    pre: Pre,
    post: Post,
    out_k: &mut [u64],
    out_a: &mut [Complex<T>],
    tmp: &mut Vec<(u64, Complex<T>)>,
) -> usize
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let a = 1u64 << gate.lo;
    let b = 1u64 << gate.hi;
    let low_mask = a - 1;
    let sub_shift = gate.lo + 1;
    let dense = gate.is_dense();
    let (d, o) = (gate.diag, gate.off);
    let eps = T::DROP_EPS;
    let cond = gate.cond;
    let mut w = 0usize;
    // End of the sub-group starting at `i` (keys sharing the bits above `lo`), and its split.
    let sub = |i: usize, limit: usize| -> (usize, usize) {
        let prefix = keys[i] >> sub_shift << sub_shift;
        let end = match prefix.checked_add(1u64 << sub_shift) {
            Some(bound) => i + gallop_lower_bound(&keys[i..limit], 0, bound),
            None => limit,
        };
        let mid = i + gallop_lower_bound(&keys[i..end], 0, prefix | a);
        (mid, end)
    };
    for_each_group(keys, gate.hi, |start, mid, end| {
        tmp.clear();
        let (mut i, mut j) = (start, mid);
        while i < mid || j < end {
            let pi = if i < mid {
                keys[i] >> sub_shift
            } else {
                u64::MAX
            };
            let pj = if j < end {
                (keys[j] & !b) >> sub_shift
            } else {
                u64::MAX
            };
            let p = pi.min(pj);
            let (i_mid, i_end) = if pi == p { sub(i, mid) } else { (i, i) };
            let (j_mid, j_end) = if pj == p { sub(j, end) } else { (j, j) };
            // 00 run: unchanged.
            for r in i..i_mid {
                out_k[w] = keys[r];
                out_a[w] = post(keys[r], pre(keys[r], amps[r]));
                w += 1;
            }
            // lo run [i_mid, i_end) against hi run [j, j_mid), joined on the low bits.
            let (mut x, mut y) = (i_mid, j);
            while x < i_end || y < j_mid {
                let lx = if x < i_end {
                    keys[x] & low_mask
                } else {
                    u64::MAX
                };
                let ly = if y < j_mid {
                    keys[y] & low_mask
                } else {
                    u64::MAX
                };
                let low = lx.min(ly);
                let (mut hl, mut hh) = (lx == low, ly == low);
                let kl = if hl { keys[x] } else { (keys[y] ^ b) | a };
                let kh = kl ^ a ^ b;
                let mut vl = if hl {
                    pre(kl, amps[x])
                } else {
                    Complex::new(T::zero(), T::zero())
                };
                let mut vh = if hh {
                    pre(kh, amps[y])
                } else {
                    Complex::new(T::zero(), T::zero())
                };
                x += usize::from(hl);
                y += usize::from(hh);
                if cond.holds(kl) {
                    if !dense {
                        (vl, vh) = (o * vh, o * vl);
                        (hl, hh) = (hh, hl);
                    } else if hl && hh {
                        let nl = d * vl + o * vh;
                        let nh = o * vl + d * vh;
                        let scale = inf_norm(vl).max(inf_norm(vh)) * eps;
                        hl = inf_norm(nl) > scale;
                        hh = inf_norm(nh) > scale;
                        (vl, vh) = (nl, nh);
                    } else if hl {
                        (vl, vh) = (d * vl, o * vl);
                        hh = true;
                    } else {
                        (vl, vh) = (o * vh, d * vh);
                        hl = true;
                    }
                }
                if hl {
                    out_k[w] = kl;
                    out_a[w] = post(kl, vl);
                    w += 1;
                }
                if hh {
                    tmp.push((kh, post(kh, vh)));
                }
            }
            // 11 run: unchanged, after the hi outputs of this sub-group.
            for r in j_mid..j_end {
                tmp.push((keys[r], post(keys[r], pre(keys[r], amps[r]))));
            }
            i = i_end;
            j = j_end;
        }
        for &(k, v) in tmp.iter() {
            out_k[w] = k;
            out_a[w] = v;
            w += 1;
        }
    });
    w
}

/// Entries where the gate acts on the `{lo, hi}` pair (bits differ, condition holds): the
/// result of a dense gate has at most `len + this` entries.
pub(crate) fn count_pair_entries(keys: &[u64], lo: u32, hi: u32, cond: Cond) -> usize {
    keys.iter()
        .filter(|&&k| ((k >> lo) ^ (k >> hi)) & 1 == 1 && cond.holds(k))
        .count()
}

/// Pair entries without a partner (`k ^ lo ^ hi` absent): the exact growth of a dense gate
/// before cancellations.
pub(crate) fn count_unpartnered(keys: &[u64], lo: u32, hi: u32, cond: Cond) -> usize {
    let flip = (1u64 << lo) | (1u64 << hi);
    keys.iter()
        .filter(|&&k| {
            ((k >> lo) ^ (k >> hi)) & 1 == 1
                && cond.holds(k)
                && keys.binary_search(&(k ^ flip)).is_err()
        })
        .count()
}
