//! Controlled pair permutations (controlled iSwap and its inverse: a slide) applied in place.
//!
//! An entry moves when its bits `lo`, `hi` differ and the condition holds; its key becomes
//! `k ^ (lo | hi)` and its amplitude is multiplied by `off`. The entries that stay form a
//! sorted subsequence, and so do the movers of each pattern after the flip (a constant
//! shift of `+-(hi - lo)` keeps their order). So one branch-free forward pass compacts the
//! stays in place and copies the two mover classes into a scratch (each run preceded by a
//! sentinel key 0, which no mover can have: a mover's new key has `lo` or `hi` set), and one
//! branch-free backward three-way merge writes the result into the same arrays. The scratch
//! holds only the movers, so the peak is the state plus the moved entries.

use crate::amplitude::Amplitude;
use crate::key::Cond;
use num_complex::Complex;

/// Movers of one range: `(lo set and hi clear, hi set and lo clear)` where `cond` holds.
/// One branch-free pass over the keys.
pub(crate) fn count_movers(keys: &[u64], lo: u32, hi: u32, cond: Cond) -> (usize, usize) {
    let (a, b) = (1u64 << lo, 1u64 << hi);
    let ab = a | b;
    let (mut up, mut down) = (0usize, 0usize);
    for &k in keys {
        let c = cond.holds(k);
        up += usize::from((k & ab == a) & c);
        down += usize::from((k & ab == b) & c);
    }
    (up, down)
}

/// Scratch entries a range with `(up, down)` movers needs: each class plus a sentinel and
/// one slot the branch-free pass may write past its last mover.
pub(crate) fn scratch_len(up: usize, down: usize) -> usize {
    up + down + 4
}

/// Applies the permutation to one run, in place. `movers` is `count_movers` of this run,
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
) {
    let n = keys.len();
    let (a, b) = (1u64 << lo, 1u64 << hi);
    let ab = a | b;
    let (up, down) = movers;
    if up + down == 0 {
        return;
    }
    let zero = Complex::new(T::zero(), T::zero());
    // Layout: [0, up keys.., pad] [0, down keys.., pad]; `base` is where the down run starts.
    let base = up + 2;
    sk[0] = 0;
    sk[base] = 0;
    sa[0] = zero;
    sa[base] = zero;
    // Forward: stays compacted in place, movers copied (flipped, phased) to the scratch. A
    // non-mover writes its copy into the next free up slot, which a later mover or the
    // pad overwrites: one store per array instead of a branch.
    let (mut w, mut iu, mut id) = (0usize, 1usize, base + 1);
    for r in 0..n {
        let k = keys[r];
        let v = amps[r];
        let c = cond.holds(k);
        let is_up = (k & ab == a) & c;
        let is_down = (k & ab == b) & c;
        keys[w] = k;
        amps[w] = v;
        let j = if is_down { id } else { iu };
        sk[j] = k ^ ab;
        sa[j] = off * v;
        w += usize::from(!(is_up | is_down));
        iu += usize::from(is_up);
        id += usize::from(is_down);
    }
    let (uk, dk) = sk.split_at(base);
    let (ua, da) = sa.split_at(base);
    // Backward merge: largest head first. Stays sit in [0, w); output fills [0, n).
    let (mut i, mut ju, mut jd, mut out) = (w, up, down, n);
    while i > 0 && out > i {
        let (hs, hu, hd) = (keys[i - 1], uk[ju], dk[jd]);
        let ts = (hs > hu) & (hs > hd);
        let tu = !ts & (hu > hd);
        let td = !ts & !tu;
        // Select by index into a tiny array: `if`-chains compile to unpredictable branches.
        let pick = usize::from(tu) + 2 * usize::from(td);
        out -= 1;
        keys[out] = if ts {
            hs
        } else if tu {
            hu
        } else {
            hd
        };
        amps[out] = [amps[i - 1], ua[ju], da[jd]][pick];
        i -= usize::from(ts);
        ju -= usize::from(tu);
        jd -= usize::from(td);
    }
    // Either the movers are placed (`out == i`) or the stays ran out and the remaining
    // movers fill [0, out).
    while out > i {
        let (hu, hd) = (uk[ju], dk[jd]);
        let tu = hu > hd;
        let pick = usize::from(!tu);
        out -= 1;
        keys[out] = [hu, hd][pick];
        amps[out] = [ua[ju], da[jd]][pick];
        ju -= usize::from(tu);
        jd -= usize::from(!tu);
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

    #[test]
    fn matches_flip_and_sort_including_key_zero_and_bit_63() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
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
            let mut amps: Vec<Complex<f64>> = (0..keys.len())
                .map(|i| Complex::new(i as f64 + 1.0, -(i as f64)))
                .collect();
            let movers = count_movers(&keys, lo, hi, cond);
            let len = scratch_len(movers.0, movers.1);
            let (mut sk, mut sa) = (vec![7u64; len], vec![Complex::new(9.0, 9.0); len]);
            let off = Complex::new(0.0, 1.0);
            permute_in_place(
                &mut keys, &mut amps, lo, hi, cond, off, movers, &mut sk, &mut sa,
            );
            let got: Vec<(u64, Complex<f64>)> = keys.into_iter().zip(amps).collect();
            assert_eq!(got, expected, "case {case}");
        }
    }
}
