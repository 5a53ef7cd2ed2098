//! A dense pair gate whose higher bit is clear in every key: a split of a piece to an empty
//! square above it (sqrt-iSwap of the piece's square `lo` with the empty `hi`).
//!
//! Then no pair entry has a partner and nothing cancels: every `lo` entry where the condition
//! holds stays, times the diagonal, and gains a new entry at `k ^ (lo | hi)`, times the
//! off-diagonal, which sorts after every key of its group for bit `hi` (it is the only key
//! there with `hi` set). So a group's output is the group itself (pair entries scaled,
//! phases applied) followed by its pair entries flipped, in order: no merge, no partner
//! search, no bitmap. Written in place from the end of the grown arrays (whose grown part
//! may be spare room no zeros were written to: `grow`), group by group backwards, each
//! group's new entries first (above its input) and then the group moved up by the growth
//! below it. Every value is computed as the general kernel computes it
//! (`expand::expand`: the unpartnered entries of pass 2), so the output is bit for bit the
//! same.

use crate::amplitude::Amplitude;
use crate::grow::{Down, Phase, Push};
use crate::kernels::expand::group_before;
use crate::kernels::pair::PairGate;
use crate::key::Cond;
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

/// Applies `gate` in place to a run of `n` entries (bit `gate.hi` clear in every key): the
/// writer `out` holds the run as its input, at the bottom of a region of `n + grow` entries
/// (the [`grow`] of the run), and the output fills the region from the top down. The
/// region's part above the input may be uninitialized room (`grow::split_spare`): every
/// slot of it is written. `pre` and `post` are the fused input / output phases of the
/// general kernel.
///
/// Whole groups go through a writer of the room alone while a group's output (at most
/// twice its length) surely fits in what is left of it, then through a writer of the part
/// below alone; the one group whose output straddles the room's bottom goes in chunks, each
/// through whichever writer its part allows. So the hot loops write without a branch on
/// where.
pub(crate) fn spread<T, Pre, Post>(
    out: &mut Down<'_, u64, Complex<T>>,
    n: usize,
    gate: &PairGate<T>,
    pre: Pre,
    post: Post,
) where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    let k = Kernel {
        a: 1u64 << gate.lo,
        ab: (1u64 << gate.lo) | (1u64 << gate.hi),
        hi: gate.hi,
        d: gate.diag,
        o: gate.off,
        cond: gate.cond,
        pre,
        post,
    };
    let mut end = n;
    while end > 0 {
        let next = out.phased(2, |p| match p {
            Phase::Room(w) => k.groups(w, n, end, |left, len| left >= 2 * len),
            Phase::Below(w) => k.groups(w, n, end, |_, _| true),
            Phase::Both(_) => end,
        });
        if next < end {
            end = next;
            continue;
        }
        // The group whose output straddles the room's bottom, in chunks.
        let (start, _) = group_before(&out.keys()[..n], end, gate.hi);
        for new in [true, false] {
            let mut hi = end;
            while hi > start {
                let lo = hi.saturating_sub(STRADDLE_CHUNK).max(start);
                out.phased(hi - lo, |p| match p {
                    Phase::Room(w) => k.part(w, lo, hi, new),
                    Phase::Below(w) => k.part(w, lo, hi, new),
                    Phase::Both(w) => k.part(w, lo, hi, new),
                });
                hi = lo;
            }
        }
        end = start;
    }
    debug_assert_eq!(out.left(), 0);
}

/// Input entries of the straddling group a writer is chosen for at a time.
const STRADDLE_CHUNK: usize = 256;

/// The gate's constants and fused phases.
struct Kernel<T, Pre, Post> {
    a: u64,
    ab: u64,
    hi: u32,
    d: Complex<T>,
    o: Complex<T>,
    cond: Cond,
    pre: Pre,
    post: Post,
}

impl<T, Pre, Post> Kernel<T, Pre, Post>
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T>,
    Post: Fn(u64, Complex<T>) -> Complex<T>,
{
    /// Whole groups of the run's first `end` entries, from the top, while `fits(what the
    /// writer has left, the group's length)`; the end of what is left to do.
    #[inline(always)]
    fn groups<W: Push<u64, Complex<T>>>(
        &self,
        w: &mut W,
        n: usize,
        mut end: usize,
        fits: impl Fn(usize, usize) -> bool,
    ) -> usize {
        let mut l = w.take();
        while end > 0 {
            let (start, _) = group_before(&l.keys()[..n], end, self.hi);
            if !fits(l.left(), end - start) {
                break;
            }
            self.part(&mut l, start, end, true);
            self.part(&mut l, start, end, false);
            end = start;
        }
        *w = l;
        end
    }

    /// The entries `lo..hi` of a group, from the top: their new entries (`new`: at and above
    /// the group's input, which stays unread-over), or themselves moved up by the growth
    /// below them.
    #[inline(always)]
    fn part<W: Push<u64, Complex<T>>>(&self, out: &mut W, lo: usize, hi: usize, new: bool) {
        // The constants as locals: read through `self` they are loaded again after every
        // store.
        let (a, ab, d, o, cond) = (self.a, self.ab, self.d, self.o, self.cond);
        let (pre, post) = (&self.pre, &self.post);
        let mut l = out.take();
        let w = &mut l;
        if new {
            for r in (lo..hi).rev() {
                prefetch(w.keys(), r.wrapping_sub(AHEAD));
                prefetch(w.vals(), r.wrapping_sub(AHEAD));
                let k = w.keys()[r];
                if k & a != 0 && cond.holds(k) {
                    let v = post(k ^ ab, o * pre(k, w.vals()[r]));
                    w.push(k ^ ab, v);
                }
            }
        } else {
            w.shift_up(lo, hi, |k, v| {
                let v = pre(k, v);
                let scaled = d * v;
                let pair = (k & a != 0) & cond.holds(k);
                (k, post(k, if pair { scaled } else { v }))
            });
        }
        *out = l;
    }
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

    /// Game-shaped states (`bench::game_state`: groups of a few entries) given the split's
    /// sqrt-iSwap on one thread, so each sector is one piece that spreads into its arrays'
    /// spare room: the groups written wholly into the room, the one that straddles its
    /// bottom (in chunks), and those below it give bit for bit what the general kernel
    /// gives.
    #[test]
    fn a_game_shaped_state_spreads_into_its_room_as_the_general_kernel_does() {
        use crate::Controls;
        use std::sync::atomic::Ordering;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        for n in [1000, 200_000] {
            let base = crate::bench::game_state::<f64>(n).unwrap();
            let (q, t1, _, _) = crate::bench::game_qubits(n);
            let run = |off: bool| {
                OFF.store(off, Ordering::Relaxed);
                let mut s = base.clone();
                // The sqrt-iSwap alone: a split's iSwap after it relabels and sorts.
                pool.install(|| s.sqrt_iswap(q, t1, Controls::NONE))
                    .unwrap();
                OFF.store(false, Ordering::Relaxed);
                s
            };
            let (general, fast) = (run(true), run(false));
            assert!(fast.len() > n + n / 4, "n {n}: the split grew the state");
            let entries = crate::test_states::entry_bits;
            assert_eq!(entries(&fast), entries(&general), "n {n}");
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
        // Fewer and shorter runs under Miri (the room written through `grow`'s unsafe code
        // is what it checks: `cargo +nightly miri test -p qchess-sim --lib -- spread grow`).
        let (cases, longest) = if cfg!(miri) { (24, 40) } else { (600, 300) };
        for case in 0..cases {
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
            let mut keys: Vec<u64> = (0..(rnd() % longest))
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
            // Once into room taken from the spare capacity (uninitialized), once within an
            // initialized region (the parallel pieces' way).
            let (mut k, mut a) = (keys.clone(), amps.clone());
            k.reserve(g);
            a.reserve(g);
            let (kb, kr) = crate::grow::split_spare(&mut k, g).unwrap();
            let (ab, ar) = crate::grow::split_spare(&mut a, g).unwrap();
            let mut out = Down::new((kb, ab), (kr, ar));
            spread(&mut out, n, &gate, pre, post);
            let (fk, fa) = out.finish().unwrap();
            crate::grow::commit(&mut k, fk);
            crate::grow::commit(&mut a, fa);
            let (mut k2, mut a2) = (keys.clone(), amps.clone());
            k2.resize(n + g, 0);
            a2.resize(n + g, Complex::new(0.0, 0.0));
            let mut out = Down::within(&mut k2, &mut a2);
            spread(&mut out, n, &gate, pre, post);
            assert!(out.finish().is_some());
            assert_eq!((&k2, &a2), (&k, &a), "case {case}: the two ways");
            assert_eq!(k, ek, "case {case}: keys, bits {lo} {hi}, {cond:?}");
            let bits = |v: &[Complex<f64>]| -> Vec<(u64, u64)> {
                v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect()
            };
            assert_eq!(bits(&a), bits(&ea), "case {case}: amplitudes");
            ran += usize::from(g > 0);
        }
        assert!(ran > cases * 2 / 3);
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
