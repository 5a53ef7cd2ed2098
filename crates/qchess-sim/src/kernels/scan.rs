//! Streaming passes that keep key order: sums, phases, projections. Work is cut into fixed
//! blocks of `BLOCK` entries whatever the thread count, and partial sums are combined in
//! block order, so results are bit-identical for any rayon pool size.

use crate::amplitude::Amplitude;
use crate::prefetch::{AHEAD, KEYS_PER_LINE, prefetch};
use num_complex::Complex;
use rayon::prelude::*;

/// Entries per parallel block.
pub(crate) const BLOCK: usize = 1 << 16;

/// `f` over each block range of `0..n`, results in block order ([`map_chunks`] of
/// [`BLOCK`] entries).
pub(crate) fn map_blocks<R: Send>(n: usize, f: impl Fn(usize, usize) -> R + Sync) -> Vec<R> {
    map_chunks(n, BLOCK, f)
}

/// `f` over each range of `size` entries of `0..n` (the last one shorter), results in range
/// order. Every range is its own rayon job (`with_max_len(1)`), so an idle thread steals the
/// ranges a preempted one has not started; while other work keeps the cores busy
/// (`load::parallel` false) the ranges run one after the other on the calling thread.
pub(crate) fn map_chunks<R: Send>(
    n: usize,
    size: usize,
    f: impl Fn(usize, usize) -> R + Sync,
) -> Vec<R> {
    let chunks = n.div_ceil(size);
    if chunks <= 1 {
        return vec![f(0, n)];
    }
    let range = |c: usize| f(c * size, ((c + 1) * size).min(n));
    if crate::load::parallel() {
        (0..chunks)
            .into_par_iter()
            .with_max_len(1)
            .map(range)
            .collect()
    } else {
        (0..chunks).map(range).collect()
    }
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
        let (yes, all, _) = probability_block(&keys[s..e], &amps[s..e], mask, value);
        (yes, all)
    });
    parts
        .iter()
        .fold((0.0, 0.0), |(y, a), (py, pa)| (y + py, a + pa))
}

/// [`probability`] (the same sums, bit for bit) with, per block of [`map_blocks`], the
/// number of entries where `key & mask == value`: a measurement's read that also sizes the
/// projection after it.
pub(crate) fn probability_counted<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    mask: u64,
    value: u64,
) -> (f64, f64, Vec<usize>) {
    let parts = map_blocks(keys.len(), |s, e| {
        probability_block(&keys[s..e], &amps[s..e], mask, value)
    });
    let (mut y, mut a) = (0.0, 0.0);
    let mut counts = Vec::with_capacity(parts.len());
    for (py, pa, c) in parts {
        (y, a) = (y + py, a + pa);
        counts.push(c);
    }
    (y, a, counts)
}

/// One block of [`probability`]: the masses where `key & mask == value` and in all, and the
/// number of such entries (dropped by the compiler where unused). By the amplitudes' parts
/// ([`probability_parts`]) for a type that scans so (`Amplitude::SCAN_BY_PARTS`: f32, where it
/// measured faster at 1e7); otherwise entry by entry (f64 on AVX2 without AVX-512 four entries
/// a step, [`probability_entries_avx2`], the same sums).
#[inline(always)]
fn probability_block<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    mask: u64,
    value: u64,
) -> (f64, f64, usize) {
    match T::as_parts(amps) {
        Some(parts) if T::SCAN_BY_PARTS => probability_parts(keys, parts, mask, value),
        #[cfg(all(qchess_avx2, not(qchess_avx512)))]
        // SAFETY: `probability_entries_avx2` is safe code; its call is unsafe only for its
        // `#[target_feature(enable = "avx2")]`. This line is compiled only when the build
        // itself targets AVX2 (`cfg(target_feature = "avx2")`, build.rs), so the CPU has it.
        #[allow(unsafe_code)]
        Some(parts) => unsafe { probability_entries_avx2(keys, parts, mask, value) },
        _ => probability_block_entries(keys, amps, mask, value),
    }
}

/// Entries per step of [`probability_parts`]: eight keys (one cache line) and their sixteen
/// parts.
const STEP: usize = 8;

/// The partial sums of [`probability_parts`]: the squared parts of a step's first four
/// entries (`[0]`, eight lanes: `re, im` of each) and of its last four (`[1]`), over all
/// entries (`all`) and over those where the predicate holds (`yes`).
#[derive(Clone, Copy)]
struct PartLanes {
    all: [[f64; 8]; 2],
    yes: [[f64; 8]; 2],
}

impl PartLanes {
    /// Adds one step: its sixteen parts widened to f64 (`x`), and where the predicate holds
    /// on each of its eight entries (`holds`).
    #[inline(always)]
    fn add(&mut self, x: &[f64; 16], holds: &[bool; STEP]) {
        // 1 where the part's entry holds, 0 elsewhere: `q * 0.0` adds `+0.0`, which leaves a
        // lane as it is (squares of finite parts are never negative, so lanes are never
        // -0.0): the vector path's masked addition, bit for bit. A select or a branch here
        // compiled to a branch per part (in cache 540-775 against 1 760-2 000 M states/s).
        let on: [f64; 16] = std::array::from_fn(|l| f64::from(u8::from(holds[l / 2])));
        for h in 0..2 {
            for l in 0..8 {
                let v = x[8 * h + l];
                let q = v * v;
                self.all[h][l] += q;
                self.yes[h][l] += q * on[8 * h + l];
            }
        }
    }

    /// `(yes, all)`: each set of sixteen lanes summed in one fixed tree.
    fn totals(&self) -> (f64, f64) {
        let tree = |v: &[[f64; 8]; 2]| {
            let s: [f64; 8] = std::array::from_fn(|l| v[0][l] + v[1][l]);
            ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
        };
        (tree(&self.yes), tree(&self.all))
    }
}

/// Hints step `c`'s lines [`AHEAD`] entries ahead: one of keys, one or two of parts.
#[inline(always)]
fn prefetch_step<T>(keys: &[u64], parts: &[T], c: usize) {
    prefetch(keys, STEP * c + AHEAD);
    let p = 2 * (STEP * c + AHEAD);
    prefetch(parts, p);
    if std::mem::size_of::<T>() > 4 {
        prefetch(parts, p + 8);
    }
}

/// A step's sixteen parts widened to f64 (exactly).
#[inline(always)]
fn widen<T: Amplitude>(p: &[T; 2 * STEP]) -> [f64; 2 * STEP] {
    std::array::from_fn(|i| p[i].as_f64())
}

/// Whether the predicate holds on each of a step's keys (`false` past the end of `keys`, a
/// last step's).
#[inline(always)]
fn holds_of(keys: &[u64], mask: u64, value: u64) -> [bool; STEP] {
    std::array::from_fn(|j| keys.get(j).is_some_and(|&k| k & mask == value))
}

/// [`probability_block`] for a float type: the keys eight at a time, their amplitudes' parts
/// squared one by one into the lanes of [`PartLanes`] (a part adds to `yes` where its entry's
/// key holds), the step's count of holding keys from the same bits. With AVX-512 (the
/// build's target CPU has it) each step is two vector products and four vector additions,
/// two of them masked ([`probability_parts_avx512`]); with AVX2 alone (Zen 3) four products
/// and eight additions on 256-bit registers, four of them of parts masked to `+0.0`
/// ([`probability_parts_avx2`]); elsewhere the same additions one lane at a time. All give
/// the same sums, bit for bit. The last entries (fewer than a step) go
/// through [`PartLanes::add`] with zero parts beside them, which add nothing.
#[inline(always)]
fn probability_parts<T: Amplitude>(
    keys: &[u64],
    parts: &[T],
    mask: u64,
    value: u64,
) -> (f64, f64, usize) {
    let steps = keys.len() / STEP;
    #[cfg(qchess_avx512)]
    // SAFETY: `probability_parts_avx512` is safe code; its call is unsafe only for its
    // `#[target_feature(enable = "avx512f")]`. This line is compiled only when the build itself
    // targets AVX-512 (as `chunk_masses`), so the CPU has the feature.
    #[allow(unsafe_code)]
    let (mut lanes, mut count) =
        unsafe { probability_parts_avx512(keys, parts, mask, value, steps) };
    #[cfg(all(qchess_avx2, not(qchess_avx512)))]
    // SAFETY: `probability_parts_avx2` is safe code; its call is unsafe only for its
    // `#[target_feature(enable = "avx2")]`. This line is compiled only when the build itself
    // targets AVX2 (`cfg(target_feature = "avx2")`, build.rs), so the CPU has it.
    #[allow(unsafe_code)]
    let (mut lanes, mut count) = unsafe { probability_parts_avx2(keys, parts, mask, value, steps) };
    #[cfg(not(any(qchess_avx512, qchess_avx2)))]
    let (mut lanes, mut count) = probability_parts_portable(keys, parts, mask, value, steps);
    let rest = &keys[steps * STEP..];
    if !rest.is_empty() {
        let mut p = [T::zero(); 2 * STEP];
        p[..2 * rest.len()].copy_from_slice(&parts[2 * steps * STEP..]);
        let holds = holds_of(rest, mask, value);
        lanes.add(&widen(&p), &holds);
        count += holds.iter().filter(|&&h| h).count();
    }
    let (yes, all) = lanes.totals();
    (yes, all, count)
}

/// The first `steps` steps of [`probability_parts`], one lane at a time: the reference of
/// the vector path.
#[cfg_attr(any(qchess_avx512, qchess_avx2), allow(dead_code))]
#[inline(always)]
fn probability_parts_portable<T: Amplitude>(
    keys: &[u64],
    parts: &[T],
    mask: u64,
    value: u64,
    steps: usize,
) -> (PartLanes, usize) {
    let mut lanes = PartLanes {
        all: [[0.0; 8]; 2],
        yes: [[0.0; 8]; 2],
    };
    let mut count = 0;
    let steps = keys
        .chunks_exact(STEP)
        .zip(parts.chunks_exact(2 * STEP))
        .take(steps);
    for (c, (k, p)) in steps.enumerate() {
        prefetch_step(keys, parts, c);
        // As arrays, so that no access is bounds-checked and the lanes vectorise.
        let k: &[u64; STEP] = k.try_into().expect("a whole step");
        let p: &[T; 2 * STEP] = p.try_into().expect("a whole step");
        let holds: [bool; STEP] = std::array::from_fn(|j| k[j] & mask == value);
        lanes.add(&widen(p), &holds);
        count += holds.iter().map(|&h| usize::from(h)).sum::<usize>();
    }
    (lanes, count)
}

/// [`probability_parts_portable`] on AVX-512: a step's eight keys in one register, one masked
/// compare for the predicate; its parts widened to two registers of eight f64, squared, added
/// to `all` and, under the compare's bits doubled (an entry's two parts), to `yes`.
#[cfg(qchess_avx512)]
#[target_feature(enable = "avx512f")]
#[allow(clippy::incompatible_msrv)]
fn probability_parts_avx512<T: Amplitude>(
    keys: &[u64],
    parts: &[T],
    mask: u64,
    value: u64,
    steps: usize,
) -> (PartLanes, usize) {
    use std::arch::x86_64::*;
    // Bit j of a nibble to bits 2j and 2j + 1: an entry's mask to its two parts' lanes.
    const DOUBLED: [u8; 16] = {
        let mut t = [0u8; 16];
        let mut i = 0;
        while i < 16 {
            let mut j = 0;
            while j < 4 {
                t[i] |= (((i >> j) & 1) as u8 * 3) << (2 * j);
                j += 1;
            }
            i += 1;
        }
        t
    };
    let (mv, vv) = (
        _mm512_set1_epi64(mask as i64),
        _mm512_set1_epi64(value as i64),
    );
    let mut all = [_mm512_setzero_pd(); 2];
    let mut yes = [_mm512_setzero_pd(); 2];
    let mut count = 0;
    let (ks, ps) = (keys.as_chunks::<STEP>().0, parts.as_chunks::<16>().0);
    for c in 0..steps {
        prefetch_step(keys, parts, c);
        let k: __m512i = bytemuck::cast(ks[c]);
        let m = _mm512_cmpeq_epi64_mask(_mm512_and_si512(k, mv), vv);
        count += m.count_ones() as usize;
        let x = widen(&ps[c]);
        let halves: [[f64; 8]; 2] = bytemuck::cast(x);
        for h in 0..2 {
            let v: __m512d = bytemuck::cast(halves[h]);
            let q = _mm512_mul_pd(v, v);
            all[h] = _mm512_add_pd(all[h], q);
            let mm = DOUBLED[usize::from((m >> (4 * h)) & 15)];
            yes[h] = _mm512_mask_add_pd(yes[h], mm, yes[h], q);
        }
    }
    let lanes = PartLanes {
        all: [bytemuck::cast(all[0]), bytemuck::cast(all[1])],
        yes: [bytemuck::cast(yes[0]), bytemuck::cast(yes[1])],
    };
    (lanes, count)
}

/// [`probability_parts_portable`] on AVX2 (Zen 3 has no AVX-512): a step's eight keys in
/// two registers, one compare each for the predicate; its sixteen parts widened to four
/// registers of four f64 (`[0]`, `[1]` the lanes of `PartLanes::all[0]`, `[2]`, `[3]` those
/// of `[1]`), squared, added to `all` and, where the part's entry holds (the compare's lane
/// doubled, an entry's two parts), to `yes`; elsewhere `+0.0` is added, as the portable path
/// adds `q * 0.0`: the same sums, bit for bit.
#[cfg(qchess_avx2)]
#[cfg_attr(qchess_avx512, allow(dead_code))]
#[target_feature(enable = "avx2")]
// Compiled only where build.rs found Rust 1.89 or later, as the AVX-512 kernels.
#[allow(clippy::incompatible_msrv)]
fn probability_parts_avx2<T: Amplitude>(
    keys: &[u64],
    parts: &[T],
    mask: u64,
    value: u64,
    steps: usize,
) -> (PartLanes, usize) {
    use std::arch::x86_64::*;
    let (mv, vv) = (
        _mm256_set1_epi64x(mask as i64),
        _mm256_set1_epi64x(value as i64),
    );
    let mut all = [_mm256_setzero_pd(); 4];
    let mut yes = [_mm256_setzero_pd(); 4];
    let mut count = 0;
    let (ks, ps) = (keys.as_chunks::<4>().0, parts.as_chunks::<16>().0);
    for c in 0..steps {
        prefetch_step(keys, parts, c);
        // Entries 0-3 and 4-7 of the step: all ones in a lane where the predicate holds.
        let holds: [__m256i; 2] = std::array::from_fn(|h| {
            let k: __m256i = bytemuck::cast(ks[2 * c + h]);
            _mm256_cmpeq_epi64(_mm256_and_si256(k, mv), vv)
        });
        for h in &holds {
            count += _mm256_movemask_pd(_mm256_castsi256_pd(*h)).count_ones() as usize;
        }
        let x: [[f64; 4]; 4] = bytemuck::cast(widen(&ps[c]));
        for (r, xr) in x.iter().enumerate() {
            let v: __m256d = bytemuck::cast(*xr);
            let q = _mm256_mul_pd(v, v);
            all[r] = _mm256_add_pd(all[r], q);
            // Register `r` holds the parts of entries `2r` and `2r + 1`: their compare lanes,
            // each twice.
            let h = holds[r / 2];
            let on = if r % 2 == 0 {
                _mm256_permute4x64_epi64::<0b01_01_00_00>(h)
            } else {
                _mm256_permute4x64_epi64::<0b11_11_10_10>(h)
            };
            yes[r] = _mm256_add_pd(yes[r], _mm256_and_pd(q, _mm256_castsi256_pd(on)));
        }
    }
    let lane = |v: &[__m256d; 4], h: usize| -> [f64; 8] {
        let lo: [f64; 4] = bytemuck::cast(v[2 * h]);
        let hi: [f64; 4] = bytemuck::cast(v[2 * h + 1]);
        std::array::from_fn(|l| if l < 4 { lo[l] } else { hi[l - 4] })
    };
    let lanes = PartLanes {
        all: [lane(&all, 0), lane(&all, 1)],
        yes: [lane(&yes, 0), lane(&yes, 1)],
    };
    (lanes, count)
}

/// [`probability_block`] entry by entry, four partial sums of `|a|^2`: for amplitude types
/// that are not plain floats (`Exact`).
#[inline(always)]
fn probability_block_entries<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    mask: u64,
    value: u64,
) -> (f64, f64, usize) {
    // Four interleaved partial sums in a fixed order: vectorisable and deterministic.
    let (mut yes, mut all) = ([0.0f64; 4], [0.0f64; 4]);
    let mut count = [0usize; 4];
    let ks = keys.chunks_exact(4);
    let as_ = amps.chunks_exact(4);
    let (kr, ar) = (ks.remainder(), as_.remainder());
    for (c, (k4, a4)) in ks.zip(as_).enumerate() {
        prefetch(keys, 4 * c + AHEAD);
        prefetch(amps, 4 * c + AHEAD);
        for l in 0..4 {
            let p = norm2(a4[l]);
            let holds = k4[l] & mask == value;
            all[l] += p;
            yes[l] += if holds { p } else { 0.0 };
            count[l] += usize::from(holds);
        }
    }
    for (k, a) in kr.iter().zip(ar) {
        let p = norm2(*a);
        let holds = k & mask == value;
        all[0] += p;
        yes[0] += if holds { p } else { 0.0 };
        count[0] += usize::from(holds);
    }
    (
        (yes[0] + yes[1]) + (yes[2] + yes[3]),
        (all[0] + all[1]) + (all[2] + all[3]),
        count.iter().sum(),
    )
}

/// [`probability_block_entries`] on AVX2 for a float type scanned entry by entry (f64): four
/// entries a step, their keys in one register and one compare for the predicate, their
/// parts in two registers squared, each entry's two squares added (`re * re + im * im`, as
/// [`norm2`] adds them) and put back in entry order, so that lane `l` makes the additions of
/// the partial sums `[l]` in the same order; where the predicate does not hold `+0.0` is
/// added, as the entry loop adds `0.0`. The last entries (fewer than four) go to lane 0 as
/// there. The same sums and count, bit for bit.
#[cfg(qchess_avx2)]
#[cfg_attr(qchess_avx512, allow(dead_code))]
#[target_feature(enable = "avx2")]
// Compiled only where build.rs found Rust 1.89 or later, as the AVX-512 kernels.
#[allow(clippy::incompatible_msrv)]
fn probability_entries_avx2<T: Amplitude>(
    keys: &[u64],
    parts: &[T],
    mask: u64,
    value: u64,
) -> (f64, f64, usize) {
    use std::arch::x86_64::*;
    let (mv, vv) = (
        _mm256_set1_epi64x(mask as i64),
        _mm256_set1_epi64x(value as i64),
    );
    let (mut yes, mut all) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    let mut count = 0usize;
    let (ks, ps) = (keys.as_chunks::<4>().0, parts.as_chunks::<8>().0);
    for (c, (k4, p8)) in ks.iter().zip(ps).enumerate() {
        prefetch(keys, 4 * c + AHEAD);
        prefetch(parts, 8 * c + 2 * AHEAD);
        let k: __m256i = bytemuck::cast(*k4);
        let holds = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(k, mv), vv));
        count += _mm256_movemask_pd(holds).count_ones() as usize;
        let x: [f64; 8] = std::array::from_fn(|i| p8[i].as_f64());
        let (x0, x1): (__m256d, __m256d) = (
            bytemuck::cast([x[0], x[1], x[2], x[3]]),
            bytemuck::cast([x[4], x[5], x[6], x[7]]),
        );
        // [p0, p2, p1, p3], then in entry order.
        let pair = _mm256_hadd_pd(_mm256_mul_pd(x0, x0), _mm256_mul_pd(x1, x1));
        let p = _mm256_permute4x64_pd::<0b11_01_10_00>(pair);
        all = _mm256_add_pd(all, p);
        yes = _mm256_add_pd(yes, _mm256_and_pd(p, holds));
    }
    let (mut yes, mut all): ([f64; 4], [f64; 4]) = (bytemuck::cast(yes), bytemuck::cast(all));
    let done = 4 * ks.len().min(ps.len());
    for (&k, z) in keys[done..].iter().zip(parts[2 * done..].chunks_exact(2)) {
        let (re, im) = (z[0].as_f64(), z[1].as_f64());
        let p = re * re + im * im;
        let holds = k & mask == value;
        all[0] += p;
        yes[0] += if holds { p } else { 0.0 };
        count += usize::from(holds);
    }
    (
        (yes[0] + yes[1]) + (yes[2] + yes[3]),
        (all[0] + all[1]) + (all[2] + all[3]),
        count,
    )
}

/// Sum of `|a|^2`.
pub(crate) fn norm_sqr<T: Amplitude>(amps: &[Complex<T>]) -> f64 {
    map_blocks(amps.len(), |s, e| {
        amps[s..e].iter().map(|a| norm2(*a)).sum::<f64>()
    })
    .iter()
    .sum()
}

/// Multiplies every amplitude by `scale` (blocks in parallel unless the cores are busy, see
/// `load`), as the projections do.
pub(crate) fn scale_amps<T: Amplitude>(amps: &mut [Complex<T>], scale: T) {
    if amps.len() <= BLOCK || !crate::load::parallel() {
        amps.iter_mut().for_each(|a| *a = *a * scale);
    } else {
        amps.par_chunks_mut(BLOCK)
            .with_max_len(1)
            .for_each(|c| c.iter_mut().for_each(|a| *a = *a * scale));
    }
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
    if keys.len() <= BLOCK || !crate::load::parallel() {
        apply(keys, amps);
    } else {
        keys.par_chunks(BLOCK)
            .zip(amps.par_chunks_mut(BLOCK))
            .with_max_len(1)
            .for_each(|(ks, as_)| apply(ks, as_));
    }
}

/// Clears `bit` in every key and multiplies every amplitude by `factor`: a capture's
/// relabel of a sector whose every key has `bit` set (the keys stay sorted and distinct).
/// In blocks of [`BLOCK`] entries, in parallel when the cores are free.
pub(crate) fn clear_bit_times<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    bit: u64,
    factor: Complex<T>,
) {
    let apply = |ks: &mut [u64], as_: &mut [Complex<T>]| {
        for k in ks.iter_mut() {
            *k &= !bit;
        }
        for a in as_.iter_mut() {
            *a = *a * factor;
        }
    };
    if keys.len() <= BLOCK || !crate::load::parallel() {
        apply(keys, amps);
    } else {
        keys.par_chunks_mut(BLOCK)
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

/// Entries of one piece of [`project`]: a piece whose first and last keys agree on every bit
/// from the mask's lowest up ([`one_run`]) is kept or dropped whole.
const RUN: usize = 64;

/// Pieces of [`project`] in a row that, when none was one run, make it go on entry by entry
/// to the sector's end.
const MIXED: usize = 8;

/// Whether the sorted keys from `first` to `last` all agree on the bits from `shift` up, so
/// that a predicate on a mask whose lowest bit is `shift` has one value on all of them
/// (`shift` 64, an empty mask: any two keys).
#[inline(always)]
pub(crate) fn one_run(first: u64, last: u64, shift: u32) -> bool {
    (first ^ last).checked_shr(shift).unwrap_or(0) == 0
}

/// Keeps the entries with `(key & mask == value) == keep`, scaling them by `scale`; compacts
/// in place (order kept) and returns the new length.
///
/// In pieces of [`RUN`] entries: a piece that is one run ([`one_run`]) is dropped unread or
/// moved whole (its lines hinted ahead), any other entry by entry as [`project_map`] does.
/// A qubit above the state's varied low bits (a random state's middle qubit: runs of about
/// 1 600 entries) is projected without reading the half it drops; the amplitudes are the
/// same products either way. (Tried and not kept: the same pieces in the probability scan,
/// which on the Intel Xeon VM read only the amplitudes more slowly than the scan reads both
/// arrays; docs/benchmarks.md, "The measuring projection by runs".)
pub(crate) fn project<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    mask: u64,
    value: u64,
    keep: bool,
    scale: T,
) -> usize {
    let shift = mask.trailing_zeros();
    let n = keys.len();
    let kept = move |k: u64| (k & mask == value) == keep;
    let (mut w, mut r) = (0usize, 0usize);
    // Pieces in a row that were not one run: from [`MIXED`] on (a qubit among the varied
    // low bits) the rest of the sector goes entry by entry, [`MIXED`] pieces at a time,
    // without a look at their ends. (Looking again at one piece after each such stretch, so
    // that runs further on are found, cost 14-22 % on a qubit without runs, bit 2 of the
    // random state at 1e7 on the Intel Xeon VM, even once in 64 pieces: not done.)
    let mut mixed = 0usize;
    while r + RUN <= n {
        if mixed >= MIXED && r + MIXED * RUN <= n {
            w = compact_range(keys, amps, w, r..r + MIXED * RUN, kept, scale);
            r += MIXED * RUN;
            continue;
        }
        // The next piece but one: its last key, which decides whether it is one run.
        prefetch(keys, r + 3 * RUN - 1);
        let k0 = keys[r];
        if one_run(k0, keys[r + RUN - 1], shift) {
            mixed = 0;
            if kept(k0) {
                // Most often the next pieces are kept too: their lines are hinted.
                for c in (0..RUN).step_by(4) {
                    prefetch(amps, r + 2 * RUN + c);
                }
                for c in (0..RUN).step_by(KEYS_PER_LINE) {
                    prefetch(keys, r + 2 * RUN + c);
                }
                w = move_whole(keys, amps, w, r..r + RUN, scale);
            }
        } else {
            mixed += 1;
            w = compact_range(keys, amps, w, r..r + RUN, kept, scale);
        }
        r += RUN;
    }
    compact_range(keys, amps, w, r..n, kept, scale)
}

/// The entries of `range` (at or after `w`) for which `keep(key)` holds, amplitudes times
/// `f`, to the places from `w` on, in order and without a branch on the data (every entry is
/// written to the next place, never past the one being read, and only a kept one takes it).
/// Returns the next free place. The entry-by-entry step of [`project`] and of the parallel
/// projection's block jobs (`compact.rs`).
#[inline(always)]
pub(crate) fn compact_range<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    mut w: usize,
    range: std::ops::Range<usize>,
    keep: impl Fn(u64) -> bool,
    f: T,
) -> usize {
    debug_assert!(w <= range.start);
    for r in range {
        let (k, a) = (keys[r], amps[r]);
        keys[w] = k;
        amps[w] = a * f;
        w += usize::from(keep(k));
    }
    w
}

/// Moves every entry of `range` down to the places from `w` on (`w <= range.start`),
/// amplitudes times `f`, and returns the next free place: as two disjoint slices (a copy and
/// a scaling loop the compiler vectorises) when the places lie wholly below the range, entry
/// by entry in order while they overlap. How [`project`] and the block jobs move a kept run.
#[inline(always)]
pub(crate) fn move_whole<T: Amplitude>(
    keys: &mut [u64],
    amps: &mut [Complex<T>],
    w: usize,
    range: std::ops::Range<usize>,
    f: T,
) -> usize {
    debug_assert!(w <= range.start);
    let (r, len) = (range.start, range.len());
    if w + len <= r {
        let (kd, ks) = keys.split_at_mut(r);
        kd[w..w + len].copy_from_slice(&ks[..len]);
        let (ad, as_) = amps.split_at_mut(r);
        for (d, s) in ad[w..w + len].iter_mut().zip(&as_[..len]) {
            *d = *s * f;
        }
    } else {
        for j in 0..len {
            keys[w + j] = keys[r + j];
            amps[w + j] = amps[r + j] * f;
        }
    }
    w + len
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

/// Per physical key bit, the probability mass of the entries with that bit set, and the mass
/// of all entries: every single-qubit marginal of a run of entries is `bits()[b] / total`.
/// The masses of a bit come in two parts, summed apart and added at the end: from the chunks
/// of [`add_bit_masses`] in which every key has the bit (`common`), and from those in which
/// it varies (`varying`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BitMasses {
    /// Per bit, the masses of the chunks in which every key has it.
    pub(crate) common: [f64; 64],
    /// Per bit, the masses of the entries that have it in the chunks in which it varies.
    pub(crate) varying: [f64; 64],
    /// Mass of all entries.
    pub(crate) total: f64,
}

impl BitMasses {
    /// No entries.
    pub(crate) const ZERO: BitMasses = BitMasses {
        common: [0.0; 64],
        varying: [0.0; 64],
        total: 0.0,
    };

    /// Adds `other`'s masses to these, part by part.
    pub(crate) fn add(&mut self, other: &BitMasses) {
        for (x, y) in self.common.iter_mut().zip(&other.common) {
            *x += y;
        }
        for (x, y) in self.varying.iter_mut().zip(&other.varying) {
            *x += y;
        }
        self.total += other.total;
    }

    /// Per bit, the mass of the entries that have it. A bit that every entry has gets
    /// exactly `total` (its varying part is zero, its common part summed as `total` is).
    pub(crate) fn bits(&self) -> [f64; 64] {
        std::array::from_fn(|b| self.common[b] + self.varying[b])
    }
}

/// The bit masses of a run of entries ([`BitMasses`]), by [`add_bit_masses`] on chunks of two
/// blocks in parallel, summed in chunk order (the same for any thread count).
pub(crate) fn bit_masses<T: Amplitude>(keys: &[u64], amps: &[Complex<T>]) -> BitMasses {
    // Chunks of two blocks: a state of a few hundred thousand entries (a game state after
    // a measurement at 1.5e6) still splits across the threads.
    const BIG: usize = BLOCK * 2;
    let parts = map_chunks(keys.len(), BIG, |s, e| {
        let mut m = BitMasses::ZERO;
        add_bit_masses(&keys[s..e], &amps[s..e], &mut m);
        m
    });
    let mut total = BitMasses::ZERO;
    for part in &parts {
        total.add(part);
    }
    total
}

/// Entries [`add_bit_masses`] looks at together.
const MASS_CHUNK: usize = 32;

/// Lanes of the masked sums (one 512-bit vector of f64).
const MASS_LANES: usize = 8;

/// The keys and masses of one chunk of [`add_bit_masses`], padded to [`MASS_CHUNK`].
type Chunk = ([u64; MASS_CHUNK], [f64; MASS_CHUNK]);

/// Adds each entry's `|a|^2` to `m`: to `m.total`, and to the masses of every bit set in its
/// key (`m.common` or `m.varying`, see [`BitMasses`]). Per chunk of [`MASS_CHUNK`] entries: the chunk's mass is summed once
/// ([`chunk_sum`]); a bit set in every key of the chunk (the high bits of sorted keys,
/// mostly) gets that sum in one addition, and only the bits that vary inside the chunk get a
/// masked sum over it ([`chunk_masses`]). A bit set in every entry of the run therefore gets
/// exactly `m.total`'s additions, in the same order: its marginal is exactly 1. Any key order
/// is right; sorted keys (few varying bits per chunk) are fast. The order of every addition
/// is fixed by the input alone, and is the same on every machine (the vector path and the
/// portable one add alike).
pub(crate) fn add_bit_masses<T: Amplitude>(keys: &[u64], amps: &[Complex<T>], m: &mut BitMasses) {
    for (kc, ac) in keys.chunks(MASS_CHUNK).zip(amps.chunks(MASS_CHUNK)) {
        let k0 = kc[0];
        // A short last chunk is padded with copies of its first key and zero masses: the
        // padding varies no bit and adds nothing.
        let mut chunk: Chunk = ([k0; MASS_CHUNK], [0.0; MASS_CHUNK]);
        chunk.0[..kc.len()].copy_from_slice(kc);
        for (slot, a) in chunk.1.iter_mut().zip(ac) {
            *slot = norm2(*a);
        }
        let varying = chunk.0.iter().fold(0u64, |v, &k| v | (k ^ k0));
        let sum = chunk_sum(&chunk.1);
        m.total += sum;
        chunk_masses(&chunk, (k0 & !varying, varying), sum, m);
    }
}

/// `sum of p[j]` over the whole chunk: [`MASS_LANES`] lanes (lane `l` adds entries `l`,
/// `l + 8`, ... in order), reduced by [`lane_total`].
#[inline(always)]
fn chunk_sum(p: &[f64; MASS_CHUNK]) -> f64 {
    let mut lanes = [0.0f64; MASS_LANES];
    for pg in p.chunks_exact(MASS_LANES) {
        for (lane, m) in lanes.iter_mut().zip(pg) {
            *lane += m;
        }
    }
    lane_total(lanes)
}

/// The lanes added in a fixed tree: the halves of a 512-bit vector, then of the 256-bit
/// sum, then the two left (what the vector path computes).
#[inline(always)]
fn lane_total(lanes: [f64; MASS_LANES]) -> f64 {
    let [a, b, c, d, e, f, g, h] = lanes;
    ((a + e) + (c + g)) + ((b + f) + (d + h))
}

/// One chunk's bit masses into `m`: `sum` (the chunk's mass) to `m.common[b]` for every bit
/// of `common`, and to `m.varying[b]`, for every bit `b` of `varying`, the chunk's masses
/// where the key has `b` set, summed in the lanes and order of [`chunk_sum`] (a masked-off
/// entry adds nothing). With AVX-512 (the build's target CPU has it) the chunk's keys and
/// masses are held in eight 512-bit registers: each varying bit costs four mask tests and
/// four masked additions, and the common bits eight masked additions without a branch
/// ([`chunk_masses_avx512`]); with AVX2 alone (Zen 3) in pairs of 256-bit registers, the
/// masked additions as additions and blends ([`chunk_masses_avx2`]); elsewhere the same
/// additions one lane at a time ([`chunk_masses_portable`]). All give the same masses, bit
/// for bit.
#[inline(always)]
fn chunk_masses(chunk: &Chunk, (common, varying): (u64, u64), sum: f64, m: &mut BitMasses) {
    #[cfg(qchess_avx512)]
    {
        // SAFETY: `chunk_masses_avx512` is safe code; its call is unsafe only for its
        // `#[target_feature(enable = "avx512f")]`. This line is compiled only when the build
        // itself targets AVX-512 (`cfg(target_feature = "avx512f")`: the project builds with
        // `target-cpu=native`, on the machine that runs it), so the CPU has the feature
        // (and only with a compiler where the intrinsics are stable: build.rs).
        #[allow(unsafe_code)]
        unsafe {
            chunk_masses_avx512(chunk, (common, varying), sum, m)
        }
    }
    #[cfg(all(qchess_avx2, not(qchess_avx512)))]
    {
        // SAFETY: `chunk_masses_avx2` is safe code; its call is unsafe only for its
        // `#[target_feature(enable = "avx2")]`. This line is compiled only when the build
        // itself targets AVX2 (`cfg(target_feature = "avx2")`, build.rs), so the CPU has it.
        #[allow(unsafe_code)]
        unsafe {
            chunk_masses_avx2(chunk, (common, varying), sum, m)
        }
    }
    #[cfg(not(any(qchess_avx512, qchess_avx2)))]
    chunk_masses_portable(chunk, (common, varying), sum, m)
}

/// [`chunk_masses`] without vector intrinsics: the reference of the vector paths.
#[cfg_attr(any(qchess_avx512, qchess_avx2), allow(dead_code))]
fn chunk_masses_portable(
    (keys, p): &Chunk,
    (common, varying): (u64, u64),
    sum: f64,
    m: &mut BitMasses,
) {
    for (b, slot) in m.common.iter_mut().enumerate() {
        if (common >> b) & 1 == 1 {
            *slot += sum;
        }
    }
    let mut vary = varying;
    while vary != 0 {
        let b = vary.trailing_zeros();
        let mut lanes = [0.0f64; MASS_LANES];
        for (kg, pg) in keys
            .chunks_exact(MASS_LANES)
            .zip(p.chunks_exact(MASS_LANES))
        {
            for ((lane, k), x) in lanes.iter_mut().zip(kg).zip(pg) {
                if (k >> b) & 1 == 1 {
                    *lane += x;
                }
            }
        }
        m.varying[b as usize] += lane_total(lanes);
        vary &= vary - 1;
    }
}

/// [`chunk_masses`] on AVX-512: each group of eight keys and masses loaded once; per varying
/// bit a broadcast, four mask tests (`vptestmq`), four masked additions and the reduction of
/// [`lane_total`]; the common bits as eight masked additions of the broadcast sum, one per
/// byte of the mask.
#[cfg(qchess_avx512)]
#[target_feature(enable = "avx512f")]
// Compiled only where build.rs found Rust 1.89 or later, where these intrinsics are stable.
#[allow(clippy::incompatible_msrv)]
fn chunk_masses_avx512(
    (keys, p): &Chunk,
    (common, varying): (u64, u64),
    sum: f64,
    m: &mut BitMasses,
) {
    use std::arch::x86_64::*;
    // Vectors are read and written as arrays of eight through `bytemuck` (plain bits both
    // ways); the chunk and the masses split into such arrays exactly.
    let s = _mm512_set1_pd(sum);
    for (g, lanes) in m.common.as_chunks_mut::<8>().0.iter_mut().enumerate() {
        let acc: __m512d = bytemuck::cast(*lanes);
        *lanes = bytemuck::cast(_mm512_mask_add_pd(acc, (common >> (8 * g)) as u8, acc, s));
    }
    if varying == 0 {
        return;
    }
    let (kg, pg) = (keys.as_chunks::<8>().0, p.as_chunks::<8>().0);
    let k: [__m512i; 4] = std::array::from_fn(|g| bytemuck::cast(kg[g]));
    let x: [__m512d; 4] = std::array::from_fn(|g| bytemuck::cast(pg[g]));
    let mut vary = varying;
    while vary != 0 {
        let b = vary.trailing_zeros();
        let bit = _mm512_set1_epi64((1u64 << b) as i64);
        let mut acc = _mm512_setzero_pd();
        for (kg, xg) in k.iter().zip(&x) {
            acc = _mm512_mask_add_pd(acc, _mm512_test_epi64_mask(*kg, bit), acc, *xg);
        }
        // lane_total's tree: halves of 512, halves of 256, the last two.
        let s4 = _mm256_add_pd(
            _mm512_castpd512_pd256(acc),
            _mm512_extractf64x4_pd::<1>(acc),
        );
        let s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd::<1>(s4));
        m.varying[b as usize] += _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
        vary &= vary - 1;
    }
}

/// [`chunk_masses`] on AVX2 (Zen 3 has no AVX-512): the eight lanes of
/// [`chunk_masses_portable`] as two 256-bit registers (lanes 0-3 and 4-7), each group of four
/// keys and masses loaded once; per varying bit a broadcast, eight compares and, for each,
/// an addition kept only in the lanes whose key has the bit (a blend: a lane without it is
/// left as it was, not added zero), then [`lane_total`]'s tree; the common bits as sixteen
/// such blended additions of the broadcast sum, one per four bits. The same additions in the
/// same order as the portable path: the same masses, bit for bit.
#[cfg(qchess_avx2)]
#[cfg_attr(qchess_avx512, allow(dead_code))]
#[target_feature(enable = "avx2")]
// Compiled only where build.rs found Rust 1.89 or later, as the AVX-512 kernels.
#[allow(clippy::incompatible_msrv)]
fn chunk_masses_avx2(
    (keys, p): &Chunk,
    (common, varying): (u64, u64),
    sum: f64,
    m: &mut BitMasses,
) {
    use std::arch::x86_64::*;
    // Lane `l` of a group of four selects bit `l` of the group's four bits of `common`.
    let select = _mm256_setr_epi64x(1, 2, 4, 8);
    let s = _mm256_set1_pd(sum);
    for (g, lanes) in m.common.as_chunks_mut::<4>().0.iter_mut().enumerate() {
        let bits = (common >> (4 * g)) & 0xf;
        if bits == 0 {
            continue;
        }
        let has = _mm256_and_si256(_mm256_set1_epi64x(bits as i64), select);
        let mask = _mm256_castsi256_pd(_mm256_cmpeq_epi64(has, select));
        let acc: __m256d = bytemuck::cast(*lanes);
        *lanes = bytemuck::cast(_mm256_blendv_pd(acc, _mm256_add_pd(acc, s), mask));
    }
    if varying == 0 {
        return;
    }
    // Quarters of the chunk: quarter `2j` holds entries `8j..8j+4` (lanes 0-3), `2j + 1`
    // entries `8j+4..8j+8` (lanes 4-7).
    let (kq, pq) = (keys.as_chunks::<4>().0, p.as_chunks::<4>().0);
    let k: [__m256i; 8] = std::array::from_fn(|q| bytemuck::cast(kq[q]));
    let x: [__m256d; 8] = std::array::from_fn(|q| bytemuck::cast(pq[q]));
    let mut vary = varying;
    while vary != 0 {
        let b = vary.trailing_zeros();
        let bit = _mm256_set1_epi64x((1u64 << b) as i64);
        let mut acc = [_mm256_setzero_pd(); 2];
        for (q, (kq, xq)) in k.iter().zip(&x).enumerate() {
            let has = _mm256_cmpeq_epi64(_mm256_and_si256(*kq, bit), bit);
            let a = &mut acc[q % 2];
            *a = _mm256_blendv_pd(*a, _mm256_add_pd(*a, *xq), _mm256_castsi256_pd(has));
        }
        // lane_total's tree: lanes l and l + 4, then the halves, then the last two.
        let s4 = _mm256_add_pd(acc[0], acc[1]);
        let s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd::<1>(s4));
        m.varying[b as usize] += _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
        vary &= vary - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random keys (a fixed high part, random low bits) and amplitudes of `n` entries.
    fn scan_arrays<T: Amplitude>(n: usize, seed: u64) -> (Vec<u64>, Vec<Complex<T>>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let keys = (0..n)
            .map(|_| rng.random::<u64>() & 0x0000_0fff_ffff_f0ff | 1 << 50)
            .collect();
        let amps = (0..n)
            .map(|_| {
                let (re, im) = (rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
                Complex::new(T::of_f64(re), T::of_f64(im))
            })
            .collect();
        (keys, amps)
    }

    /// The scan by parts (the floats') gives the entry-by-entry masses to rounding (sums in
    /// another order) and the same count, for `f32` and `f64`, lengths with and without a
    /// last partial step, masks of one bit, of several, of a bit set in every key, and empty.
    #[test]
    fn the_scan_by_parts_matches_the_entry_by_entry_masses() {
        fn check<T: Amplitude>(n: usize, seed: u64) {
            let (keys, amps) = scan_arrays::<T>(n, seed);
            let parts = T::as_parts(&amps).expect("a float's parts");
            let masks = [
                (1u64 << 3, 1u64 << 3),
                (1 << 20, 0),
                (0b101 << 9, 0b100 << 9),
                (1 << 50, 1 << 50),
                (0, 0),
                (1 << 12, 1 << 12),
            ];
            for (mask, value) in masks {
                let (ey, ea, ec) = probability_block_entries(&keys, &amps, mask, value);
                let (py, pa, pc) = probability_parts(&keys, parts, mask, value);
                assert_eq!(pc, ec, "n {n} mask {mask:#x}");
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * b.abs().max(1e-300);
                assert!(
                    close(py, ey) && close(pa, ea),
                    "n {n} mask {mask:#x}: {py} {ey} {pa} {ea}"
                );
                // The mass of every entry, once: `all` is the sum of the parts' squares.
                let direct: f64 = amps.iter().map(|&z| norm2(z)).sum();
                assert!(close(pa, direct), "n {n}");
            }
            // A predicate that holds nowhere has mass exactly 0; everywhere, exactly `all`.
            let (y0, a0, c0) = probability_parts(&keys, parts, 1 << 60, 1 << 60);
            assert_eq!((y0, c0), (0.0, 0));
            let (y1, a1, c1) = probability_parts(&keys, parts, 1 << 50, 1 << 50);
            assert_eq!((y1.to_bits(), c1), (a1.to_bits(), n));
            assert_eq!(a0.to_bits(), a1.to_bits());
        }
        for (n, seed) in [(0, 1), (1, 2), (7, 3), (8, 4), (9, 5), (1000, 6), (4099, 7)] {
            check::<f32>(n, seed);
            check::<f64>(n, seed);
        }
    }

    /// The predicates `(mask, value)` the vector scans are checked on: one bit (holding on
    /// about half the entries), several bits, the empty mask (holding everywhere) and bit 0.
    #[cfg(any(qchess_avx512, qchess_avx2))]
    const VECTOR_MASKS: [(u64, u64); 4] =
        [(1 << 3, 1 << 3), (0b101 << 9, 0b100 << 9), (0, 0), (1, 0)];

    /// The test of a vector kernel of the scan by parts (`$kernel`, compiled where the build
    /// targets its instruction set): on f32 and f64, lengths of one step to a whole block, and
    /// masks of one bit, of several, empty and bit 0, it gives the portable lanes and count bit
    /// for bit.
    #[cfg(any(qchess_avx512, qchess_avx2))]
    macro_rules! vector_scan_by_parts_matches_the_portable_one {
        ($kernel:ident) => {{
            fn check<T: Amplitude>(n: usize, seed: u64) {
                let (keys, amps) = scan_arrays::<T>(n, seed);
                let parts = T::as_parts(&amps).expect("a float's parts");
                for (mask, value) in VECTOR_MASKS {
                    let steps = n / STEP;
                    let (a, ac) = probability_parts_portable(&keys, parts, mask, value, steps);
                    #[allow(unsafe_code)]
                    // SAFETY: compiled only where the build targets the kernel's instruction
                    // set (the test's cfg).
                    let (b, bc) = unsafe { $kernel(&keys, parts, mask, value, steps) };
                    let bits = |l: &PartLanes| {
                        (
                            l.all.map(|h| h.map(f64::to_bits)),
                            l.yes.map(|h| h.map(f64::to_bits)),
                        )
                    };
                    assert_eq!(bits(&a), bits(&b), "n {n} mask {mask:#x}");
                    assert_eq!(ac, bc, "n {n} mask {mask:#x}");
                    // The predicate held on some entries and not on others: both sums made.
                    if mask == 1 << 3 && n >= 1000 {
                        assert!(0 < ac && ac < n, "n {n}");
                    }
                }
            }
            for (n, seed) in [(8, 1), (1000, 2), (65_536, 3)] {
                check::<f32>(n, seed);
                check::<f64>(n, seed);
            }
        }};
    }

    /// The AVX-512 scan by parts is the portable one bit for bit.
    #[cfg(qchess_avx512)]
    #[test]
    fn the_vector_scan_by_parts_is_the_portable_one_bit_for_bit() {
        vector_scan_by_parts_matches_the_portable_one!(probability_parts_avx512);
    }

    /// The AVX2 scan by parts (the kernel of a build for AVX2 without AVX-512; tested wherever
    /// the build targets AVX2) is the portable one bit for bit.
    #[cfg(qchess_avx2)]
    #[test]
    fn the_avx2_scan_by_parts_is_the_portable_one_bit_for_bit() {
        vector_scan_by_parts_matches_the_portable_one!(probability_parts_avx2);
    }

    /// On AVX2 the vector scan entry by entry (f64's) gives the entry loop's sums and count
    /// bit for bit, for lengths with and without a last partial step and several masks.
    #[cfg(qchess_avx2)]
    #[test]
    fn the_avx2_scan_entry_by_entry_is_the_portable_one_bit_for_bit() {
        for (n, seed) in [(0, 1), (3, 2), (4, 3), (1001, 4), (65_536, 5)] {
            let (keys, amps) = scan_arrays::<f64>(n, seed);
            let parts = f64::as_parts(&amps).expect("a float's parts");
            for (mask, value) in VECTOR_MASKS {
                let (ey, ea, ec) = probability_block_entries(&keys, &amps, mask, value);
                #[allow(unsafe_code)]
                // SAFETY: compiled only where the build targets AVX2.
                let (vy, va, vc) = unsafe { probability_entries_avx2(&keys, parts, mask, value) };
                let what = format!("n {n} mask {mask:#x}");
                assert_eq!(
                    (vy.to_bits(), va.to_bits(), vc),
                    (ey.to_bits(), ea.to_bits(), ec),
                    "{what}"
                );
                if mask == 1 << 3 && n >= 1000 {
                    // The predicate held on some entries and not on others.
                    assert!(0 < ec && ec < n && 0.0 < ey && ey < ea, "{what}");
                }
            }
        }
    }

    /// The projection by runs keeps exactly the entries and amplitude bits of the
    /// entry-by-entry pass: states whose keys vary in low bits only (long runs for the high
    /// qubits), in every bit (no runs), in a few high bits over a fixed background (a game's
    /// shape), up to key `u64::MAX`; one-bit masks from bit 0 to 63, several-bit masks, the
    /// empty mask; lengths below, at and off a multiple of the piece; both outcomes.
    #[test]
    fn the_projection_by_runs_equals_the_entry_by_entry_pass() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(21);
        let shapes: [(usize, u64, u64); 5] = [
            (5000, 0x0000_0000_0000_ffff, 0),
            (5000, u64::MAX, 0),
            (3001, 0xff00_0000_0000_0f00, 0x0000_0f00_f0f0_0000),
            (64 * 40, 0x0000_0000_003f_ffff, 0xffff_ffff_ffc0_0000),
            (63, 0x0000_0000_0000_0fff, 0),
        ];
        let mut cases = 0;
        // Sparse keys below 2^40, then dense ones from 2^41: no runs for a middle bit, then
        // long ones (the pass goes entry by entry for a while, then finds runs again).
        let mut mixed_then_runs: Vec<u64> = (0..1000).map(|_| rng.random::<u64>() >> 24).collect();
        mixed_then_runs.extend((0..3000).map(|_| (1u64 << 41) | rng.random::<u64>() >> 50));
        let mut arrays: Vec<Vec<u64>> = shapes
            .iter()
            .map(|&(n, varied, fixed)| {
                (0..n)
                    .map(|_| rng.random::<u64>() & varied | fixed)
                    .collect()
            })
            .collect();
        arrays.push(mixed_then_runs);
        for mut keys in arrays {
            keys.sort_unstable();
            keys.dedup();
            let amps: Vec<Complex<f64>> = (0..keys.len())
                .map(|_| Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
                .collect();
            let masks = (0..64).map(|b| (1u64 << b, 1u64 << b)).chain([
                (0, 0),
                (0b1010 << 8, 0b1000 << 8),
                (0xff << 56, 0),
                (u64::MAX, 0),
            ]);
            for (mask, value) in masks {
                for keep in [true, false] {
                    let scale = 1.25;
                    let (mut ek, mut ea) = (keys.clone(), amps.clone());
                    let en = project_map(&mut ek, &mut ea, mask, value, keep, |a| a * scale);
                    let (mut gk, mut ga) = (keys.clone(), amps.clone());
                    let gn = project(&mut gk, &mut ga, mask, value, keep, scale);
                    assert_eq!(gn, en, "mask {mask:#x} keep {keep}");
                    assert_eq!(gk[..gn], ek[..en], "mask {mask:#x} keep {keep}");
                    let bits = |a: &[Complex<f64>]| -> Vec<(u64, u64)> {
                        a.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
                    };
                    assert_eq!(bits(&ga[..gn]), bits(&ea[..en]), "mask {mask:#x}");
                    cases += usize::from(gn > 0 && gn < keys.len());
                }
            }
        }
        // Most cases keep some entries and drop others.
        assert!(cases > 200, "{cases}");
    }

    /// The chunked bit masses against the entry-by-entry sums, sorted and unsorted keys, short
    /// and odd lengths (a padded last chunk); a bit set in every key gets exactly the total,
    /// a bit set in none exactly zero.
    #[test]
    fn chunked_bit_masses_match_the_entry_by_entry_sum() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for (n, sorted) in [
            (1, true),
            (15, false),
            (33, true),
            (1000, true),
            (1000, false),
            (70_001, true),
        ] {
            let mut keys: Vec<u64> = (0..n)
                .map(|_| (rng.random::<u64>() & 0xf0f0_00ff_0f03_ff37) | (1 << 40))
                .collect();
            if sorted {
                keys.sort_unstable();
            }
            let amps: Vec<Complex<f64>> = (0..n)
                .map(|_| Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
                .collect();
            let mut got = BitMasses::ZERO;
            add_bit_masses(&keys, &amps, &mut got);
            let total: f64 = amps.iter().map(|a| a.norm_sqr()).sum();
            assert!((got.total - total).abs() <= 1e-13 * total, "n {n}");
            let bits = got.bits();
            for (j, b) in bits.iter().enumerate() {
                let direct: f64 = keys
                    .iter()
                    .zip(&amps)
                    .filter(|(k, _)| *k >> j & 1 == 1)
                    .map(|(_, a)| a.norm_sqr())
                    .sum();
                assert!(
                    (b - direct).abs() <= 1e-13 * total,
                    "n {n} bit {j}: {b} vs {direct}"
                );
            }
            assert_eq!(bits[40], got.total, "n {n}: the bit every key has");
            assert_eq!(bits[3], 0.0, "n {n}: the bit no key has");
        }
    }

    /// Random chunks with every count of varying bits, and masses already in `m` (as a pass
    /// has them), for the vector paths of `chunk_masses` against the portable one.
    #[cfg(any(qchess_avx512, qchess_avx2))]
    fn random_chunks(seed: u64) -> impl Iterator<Item = (Chunk, (u64, u64), f64, BitMasses)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        (0..2000).map(move |round| {
            let k0: u64 = rng.random();
            let vary: u64 = rng.random::<u64>() >> (round % 64);
            let keys: [u64; MASS_CHUNK] =
                std::array::from_fn(|_| k0 ^ (rng.random::<u64>() & vary));
            let p: [f64; MASS_CHUNK] = std::array::from_fn(|_| rng.random::<f64>() * 1e-3);
            let varying = keys.iter().fold(0u64, |v, &k| v | (k ^ keys[0]));
            let common = keys[0] & !varying;
            let sum = chunk_sum(&p);
            let mut m = BitMasses::ZERO;
            m.common = std::array::from_fn(|i| i as f64 * 0.125);
            m.varying = std::array::from_fn(|i| i as f64 * 0.375);
            ((keys, p), (common, varying), sum, m)
        })
    }

    /// The AVX2 path of `chunk_masses` adds exactly as the portable one: the same masses bit
    /// for bit (compiled where the build targets AVX2, AVX-512 machines included).
    #[cfg(qchess_avx2)]
    #[test]
    fn the_avx2_chunk_masses_are_the_portable_ones_bit_for_bit() {
        for (round, (chunk, bits, sum, m)) in random_chunks(12).enumerate() {
            let (mut a, mut b) = (m, m);
            chunk_masses_portable(&chunk, bits, sum, &mut a);
            #[allow(unsafe_code)]
            // SAFETY: compiled only where the build targets AVX2.
            unsafe {
                chunk_masses_avx2(&chunk, bits, sum, &mut b)
            };
            let raw = |m: &BitMasses| (m.common.map(f64::to_bits), m.varying.map(f64::to_bits));
            assert_eq!(raw(&a), raw(&b), "round {round}");
            assert_ne!(raw(&a), raw(&m), "round {round}: the chunk added something");
        }
    }

    /// The vector path of `chunk_masses` adds exactly as the portable one: the same masses bit
    /// for bit, on random chunks with every count of varying bits (compiled where the build
    /// targets AVX-512; elsewhere the portable path is the only one).
    #[cfg(qchess_avx512)]
    #[test]
    fn the_vector_chunk_masses_are_the_portable_ones_bit_for_bit() {
        for (round, (chunk, bits, sum, m)) in random_chunks(11).enumerate() {
            let (mut a, mut b) = (m, m);
            chunk_masses_portable(&chunk, bits, sum, &mut a);
            #[allow(unsafe_code)]
            // SAFETY: compiled only where the build targets AVX-512.
            unsafe {
                chunk_masses_avx512(&chunk, bits, sum, &mut b)
            };
            let raw = |m: &BitMasses| (m.common.map(f64::to_bits), m.varying.map(f64::to_bits));
            assert_eq!(raw(&a), raw(&b), "round {round}");
        }
    }
}
