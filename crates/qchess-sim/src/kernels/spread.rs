//! A dense pair gate whose higher bit is clear in every key: a split of a piece to an empty
//! square above it (sqrt-iSwap of the piece's square `lo` with the empty `hi`).
//!
//! Then no pair entry has a partner and nothing cancels: every `lo` entry where the condition
//! holds stays, times the diagonal, and gains a new entry at `k ^ (lo | hi)`, times the
//! off-diagonal, which sorts after every key of its group for bit `hi` (it is the only key
//! there with `hi` set). So a group's output is the group itself (pair entries scaled,
//! phases applied) followed by its pair entries flipped, in order: no merge, no partner
//! search, no bitmap. Written in place from the end of the grown arrays, group by group
//! backwards, each group's new entries first (above its input) and then the group moved up
//! by the growth below it. Every value is computed as the general kernel computes it
//! (`expand::expand`: the unpartnered entries of pass 2), so the output is bit for bit the
//! same.

use crate::amplitude::Amplitude;
use crate::kernels::expand::group_before;
use crate::kernels::pair::PairGate;
use crate::prefetch::{AHEAD, prefetch};
use num_complex::Complex;

/// The entries [`spread`] adds to `keys` (the pair entries: bit `lo` set, condition
/// holds), or `None` when some key has bit `hi` set (the gate is not a spread). A look at
/// every 1024th key and the last (where a high bit is set, sorted keys show it at once), then
/// one pass over the keys in blocks, stopping at the first block with bit `hi` set.
pub(crate) fn grow<T: Amplitude>(keys: &[u64], gate: &PairGate<T>) -> Option<usize> {
    let (a, b) = (1u64 << gate.lo, 1u64 << gate.hi);
    if keys
        .iter()
        .step_by(1024)
        .chain(keys.last())
        .any(|&k| k & b != 0)
    {
        return None;
    }
    let mut total = 0;
    for block in keys.chunks(4096) {
        let (mut any, mut count) = (0u64, 0usize);
        for &k in block {
            any |= k;
            count += usize::from((k & a != 0) & gate.cond.holds(k));
        }
        if any & b != 0 {
            return None;
        }
        total += count;
    }
    Some(total)
}

/// Applies `gate` in place to the run `keys[..n]`, `amps[..n]` (bit `gate.hi` clear in every
/// key), where both slices have length `n + grow` (the [`grow`] of the run): the output fills
/// them. `pre` and `post` are the fused input / output phases of the general kernel.
pub(crate) fn spread<T, Pre, Post>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    n: usize,
    gate: &PairGate<T>,
    pre: Pre,
    post: Post,
) where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let (a, b) = (1u64 << gate.lo, 1u64 << gate.hi);
    let ab = a | b;
    let (d, o, cond) = (gate.diag, gate.off, gate.cond);
    let mut w = keys.len();
    let mut end = n;
    while end > 0 {
        let (start, _) = group_before(&keys[..n], end, gate.hi);
        // The group's new entries, at and above `end` (its input stays unread-over).
        for r in (start..end).rev() {
            prefetch(keys, r.wrapping_sub(AHEAD));
            prefetch(amps, r.wrapping_sub(AHEAD));
            let k = keys[r];
            if k & a != 0 && cond.holds(k) {
                w -= 1;
                keys[w] = k ^ ab;
                amps[w] = post(k ^ ab, o * pre(k, amps[r]));
            }
        }
        // The group itself, moved up by the growth below it, backwards.
        let shift = w - end;
        for r in (start..end).rev() {
            let k = keys[r];
            let v = pre(k, amps[r]);
            let scaled = d * v;
            let pair = (k & a != 0) & cond.holds(k);
            keys[r + shift] = k;
            amps[r + shift] = post(k, if pair { scaled } else { v });
        }
        w = start + shift;
        end = start;
    }
    debug_assert_eq!(w, 0);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Turns the state-level spread path off (the general kernel runs instead), for the
    /// comparison below.
    pub(crate) static OFF: std::sync::atomic::AtomicBool =
        std::sync::atomic::AtomicBool::new(false);

    /// A state of 300 000 entries whose board bits 8-11 are clear everywhere, on one and three
    /// sectors, split (uncontrolled: one fused pass; controlled: a sqrt-iSwap pass then an
    /// iSwap) from square 3 to the empty square 9 on pools of one and two threads (the
    /// single sector in parallel pieces): bit for bit what the general kernel gives.
    #[test]
    fn a_state_splits_to_an_empty_square_as_the_general_kernel_does() {
        use crate::Controls;
        use std::sync::atomic::Ordering;
        let entries = crate::test_states::entry_bits;
        for sectors in [1u32, 3] {
            let base = crate::test_states::random_state(300_000, 7, !0xf00, |r| {
                u128::from(rand::Rng::random_range(r, 0..sectors))
            });
            for (controls, threads) in [
                (Controls::NONE, 1),
                (Controls::NONE, 2),
                (Controls::empty_path(1 << 5), 2),
            ] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let run = |off: bool| {
                    OFF.store(off, Ordering::Relaxed);
                    let mut s = base.clone();
                    pool.install(|| s.split(3, 9, 40, controls)).unwrap();
                    OFF.store(false, Ordering::Relaxed);
                    s
                };
                let (general, fast) = (run(true), run(false));
                assert!(
                    fast.len() > base.len(),
                    "sectors {sectors}: the split grew the state"
                );
                assert_eq!(
                    entries(&fast),
                    entries(&general),
                    "sectors {sectors}, threads {threads}"
                );
            }
        }
    }
    use crate::kernels::pair::{self, VecSink};
    use crate::key::Cond;

    /// Against the general out-of-place kernel (`pair::apply`, the dense gates' reference),
    /// bit for bit, with fused phases and conditions: keys over bits 0-9 with `hi` never
    /// set, every choice of `lo < hi`, both gate orientations' values.
    #[test]
    fn matches_the_general_kernel() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let mut ran = 0;
        for case in 0..600 {
            let hi = 1 + (rnd() % 9) as u32;
            let lo = (rnd() % u64::from(hi)) as u32;
            let c = (rnd() % 10) as u32;
            let cond = match case % 3 {
                _ if c == lo || c == hi => Cond {
                    mask: 0,
                    value: 0,
                    any: 0,
                },
                0 => Cond {
                    mask: 0,
                    value: 0,
                    any: 0,
                },
                1 => Cond {
                    mask: 1 << c,
                    value: 0,
                    any: 0,
                },
                _ => Cond {
                    mask: 1 << c,
                    value: 1 << c,
                    any: 0,
                },
            };
            let mut keys: Vec<u64> = (0..(rnd() % 300))
                .map(|_| rnd() & 0x3ff & !(1 << hi))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            let amps: Vec<Complex<f64>> = keys
                .iter()
                .map(|&k| Complex::new((k as f64 + 1.0).sin(), (k as f64).cos()))
                .collect();
            let (diag, off) = if case % 2 == 0 {
                (Complex::new(h, 0.0), Complex::new(0.0, h))
            } else {
                (Complex::new(h, 0.0), Complex::new(0.0, -h))
            };
            let gate = PairGate::new(lo, hi, cond, diag, off);
            let pre = |k: u64, v: Complex<f64>| {
                if k & 4 != 0 {
                    Complex::new(-v.im, v.re)
                } else {
                    v
                }
            };
            let post = |k: u64, v: Complex<f64>| if k & 32 != 0 { -v } else { v };
            let (mut ek, mut ea) = (Vec::new(), Vec::new());
            let mut sink = VecSink {
                keys: &mut ek,
                amps: &mut ea,
            };
            pair::apply(&keys, &amps, &gate, false, pre, post, &mut sink);
            let n = keys.len();
            let g = grow(&keys, &gate).expect("bit hi is clear");
            let (mut k, mut a) = (keys.clone(), amps.clone());
            k.resize(n + g, 0);
            a.resize(n + g, Complex::new(0.0, 0.0));
            spread(&mut k, &mut a, n, &gate, pre, post);
            assert_eq!(k, ek, "case {case}: keys, bits {lo} {hi}, {cond:?}");
            let bits = |v: &[Complex<f64>]| -> Vec<(u64, u64)> {
                v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
            };
            assert_eq!(bits(&a), bits(&ea), "case {case}: amplitudes");
            ran += usize::from(g > 0);
        }
        assert!(ran > 400);
        let gate = PairGate::new(
            1,
            7,
            Cond {
                mask: 0,
                value: 0,
                any: 0,
            },
            Complex::new(h, 0.0),
            Complex::new(0.0, h),
        );
        assert_eq!(grow(&[1, 2, 3, 1 << 7], &gate), None);
        assert_eq!(grow(&[1, 2, 3, 6], &gate), Some(3));
    }
}
