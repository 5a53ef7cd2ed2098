//! Streaming passes that keep key order: sums, phases, projections. Work is cut into fixed
//! blocks of `BLOCK` entries whatever the thread count, and partial sums are combined in
//! block order, so results are bit-identical for any rayon pool size.

use crate::amplitude::Amplitude;
use num_complex::Complex;
use rayon::prelude::*;

/// Entries per parallel block.
pub(crate) const BLOCK: usize = 1 << 16;

/// `f` over each block range of `0..n`, results in block order. Every block is its own
/// rayon job (`with_max_len(1)`), so an idle thread steals the blocks a preempted one has not
/// started: a busy second core never makes a parallel scan slower than one thread's.
pub(crate) fn map_blocks<R: Send>(n: usize, f: impl Fn(usize, usize) -> R + Sync) -> Vec<R> {
    let blocks = n.div_ceil(BLOCK);
    if blocks <= 1 {
        return vec![f(0, n)];
    }
    (0..blocks)
        .into_par_iter()
        .with_max_len(1)
        .map(|b| f(b * BLOCK, ((b + 1) * BLOCK).min(n)))
        .collect()
}

#[inline(always)]
pub(crate) fn norm2<T: Amplitude>(z: Complex<T>) -> f64 {
    let (re, im) = (z.re.as_f64(), z.im.as_f64());
    re * re + im * im
}

/// `(sum of |a|^2 where key & mask == value, sum of all |a|^2)`.
pub(crate) fn probability<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    mask: u64,
    value: u64,
) -> (f64, f64) {
    let parts = map_blocks(keys.len(), |s, e| {
        // Four interleaved partial sums in a fixed order: vectorisable and deterministic.
        let (mut yes, mut all) = ([0.0f64; 4], [0.0f64; 4]);
        let ks = keys[s..e].chunks_exact(4);
        let as_ = amps[s..e].chunks_exact(4);
        let (kr, ar) = (ks.remainder(), as_.remainder());
        for (k4, a4) in ks.zip(as_) {
            for l in 0..4 {
                let p = norm2(a4[l]);
                all[l] += p;
                yes[l] += if k4[l] & mask == value { p } else { 0.0 };
            }
        }
        for (k, a) in kr.iter().zip(ar) {
            let p = norm2(*a);
            all[0] += p;
            yes[0] += if k & mask == value { p } else { 0.0 };
        }
        (
            (yes[0] + yes[1]) + (yes[2] + yes[3]),
            (all[0] + all[1]) + (all[2] + all[3]),
        )
    });
    parts
        .iter()
        .fold((0.0, 0.0), |(y, a), (py, pa)| (y + py, a + pa))
}

/// Sum of `|a|^2`.
pub(crate) fn norm_sqr<T: Amplitude>(amps: &[Complex<T>]) -> f64 {
    map_blocks(amps.len(), |s, e| {
        amps[s..e].iter().map(|a| norm2(*a)).sum::<f64>()
    })
    .iter()
    .sum()
}

/// Multiplies by `factor` where `key & mask == value` (and, if `any != 0`, `key & any != 0`),
/// or, with `differ = Some((p, q))`, where bits `p` and `q` differ.
pub(crate) fn phase<T: Amplitude>(
    keys: &[u64],
    amps: &mut [Complex<T>],
    sel: Selector,
    factor: Complex<T>,
) {
    // The per-type pass (`Amplitude::mul_phase_where`): multiply-and-select for the floats,
    // swaps and negations for `Exact`.
    // The selector is matched once per block, not per entry.
    let apply = |ks: &[u64], as_: &mut [Complex<T>]| match sel {
        Selector::Equals { mask, value } => {
            T::mul_phase_where(ks, as_, move |k| k & mask == value, factor)
        }
        Selector::Differ { p, q } => {
            T::mul_phase_where(ks, as_, move |k| ((k >> p) ^ (k >> q)) & 1 == 1, factor)
        }
    };
    if keys.len() <= BLOCK {
        apply(keys, amps);
    } else {
        keys.par_chunks(BLOCK)
            .zip(amps.par_chunks_mut(BLOCK))
            .with_max_len(1)
            .for_each(|(ks, as_)| apply(ks, as_));
    }
}

/// Which entries a phase acts on.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Selector {
    /// `key & mask == value`.
    Equals { mask: u64, value: u64 },
    /// Bits `p` and `q` differ.
    Differ { p: u32, q: u32 },
}

/// Keeps the entries with `(key & mask == value) == keep`, scaling them by `scale`; compacts
/// in place (order kept) and returns the new length.
pub(crate) fn project<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    mask: u64,
    value: u64,
    keep: bool,
    scale: T,
) -> usize {
    project_map(keys, amps, mask, value, keep, |a| a * scale)
}

/// Keeps the entries with `(key & mask == value) == keep`, each amplitude replaced by
/// `f(amplitude)`; compacts in place (order kept, branch-free: every entry is written and
/// the write position advances only for kept ones) and returns the new length. The one
/// projection loop of [`project`] and of the exact projection's shift.
#[inline]
pub(crate) fn project_map<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    mask: u64,
    value: u64,
    keep: bool,
    f: impl Fn(Complex<T>) -> Complex<T>,
) -> usize {
    let mut w = 0;
    for r in 0..keys.len() {
        let k = keys[r];
        let a = amps[r];
        keys[w] = k;
        amps[w] = f(a);
        w += usize::from((k & mask == value) == keep);
    }
    w
}

/// Per byte of the key, the probability mass of each byte value: 8 x 256 sums from which every
/// single-qubit marginal follows (8 table updates per entry instead of one per set bit).
pub(crate) fn byte_marginals<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
) -> Box<[[f64; 256]; 8]> {
    const BIG: usize = BLOCK * 16;
    let n = keys.len();
    let blocks = n.div_ceil(BIG).max(1);
    let one = |s: usize, e: usize| {
        let mut t = Box::new([[0.0f64; 256]; 8]);
        for (k, a) in keys[s..e].iter().zip(&amps[s..e]) {
            let p = norm2(*a);
            for (byte, row) in t.iter_mut().enumerate() {
                row[((k >> (8 * byte)) & 0xff) as usize] += p;
            }
        }
        t
    };
    let parts: Vec<_> = if blocks == 1 {
        vec![one(0, n)]
    } else {
        (0..blocks)
            .into_par_iter()
            .with_max_len(1)
            .map(|b| one(b * BIG, ((b + 1) * BIG).min(n)))
            .collect()
    };
    let mut total = Box::new([[0.0f64; 256]; 8]);
    for part in &parts {
        for (tr, pr) in total.iter_mut().zip(part.iter()) {
            for (t, p) in tr.iter_mut().zip(pr.iter()) {
                *t += p;
            }
        }
    }
    total
}
