//! Streaming passes that keep key order: sums, phases, projections. Work is cut into fixed
//! blocks of `BLOCK` entries whatever the thread count, and partial sums are combined in
//! block order, so results are bit-identical for any rayon pool size.

use crate::amplitude::Amplitude;
use crate::prefetch::{AHEAD, prefetch};
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
/// number of such entries (dropped by the compiler where unused).
#[inline(always)]
fn probability_block<T: Amplitude>(
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
/// single-qubit marginal follows ([`table_bits`]).
pub(crate) type ByteTables = [[f64; 256]; 8];

/// The byte tables of a run of entries ([`ByteTables`]), by [`add_byte_tables`] on chunks of
/// two blocks in parallel, summed in chunk order (the same for any thread count).
pub(crate) fn byte_marginals<T: Amplitude>(keys: &[u64], amps: &[Complex<T>]) -> Box<ByteTables> {
    // Chunks of two blocks: a state of a few hundred thousand entries (a game state after
    // a measurement at 1.5e6) still splits across the threads; each chunk's two tables
    // (32 KiB) are zeroed and summed once, far less than its 131 072 entries cost.
    const BIG: usize = BLOCK * 2;
    let one = |s: usize, e: usize| {
        let mut t = Box::new([[[0.0f64; 256]; 8]; 2]);
        add_byte_tables(&keys[s..e], &amps[s..e], &mut t);
        fold_tables(&t)
    };
    let parts = map_chunks(keys.len(), BIG, one);
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

/// The two sets of [`add_byte_tables`] summed into one.
pub(crate) fn fold_tables(t: &[ByteTables; 2]) -> Box<ByteTables> {
    let mut out = Box::new(t[0]);
    for (tr, ur) in out.iter_mut().zip(t[1].iter()) {
        for (x, y) in tr.iter_mut().zip(ur.iter()) {
            *x += y;
        }
    }
    out
}

/// Entries [`add_byte_tables`] looks at together: the bytes on which all of them agree get
/// one table update for the lot. (32 against 16 and 8: a little faster on the bench-move
/// game states, 2026-12-01.)
const TABLE_CHUNK: usize = 32;

/// Adds each entry's `|a|^2` to the byte tables of [`byte_marginals`] (`t[set][byte][value of
/// that byte of the key]`; the caller sums the two sets, [`fold_tables`]). Per chunk of
/// [`TABLE_CHUNK`] entries, a byte on which every key of the chunk agrees (the high bytes of
/// sorted keys, mostly) gets the chunk's summed mass in one update of set 0; only the bytes
/// that vary inside the chunk are updated per entry or per run. Each update of a slot waits
/// for the one before it to the same slot (a store-to-load round trip), and inside a chunk of
/// sorted keys a higher varying byte keeps its value over runs of entries: each such run is
/// summed in a register and added once. The lowest varying byte, which changes from entry
/// to entry mostly, is updated entry by entry, even entries into set 0 and odd ones into set
/// 1 (halving what chains remain). Any key order is right; sorted keys are fast. The order of
/// the additions is fixed by the input alone.
///
/// Measured on the `qchess bench move` game state after its measurement (5.0e6 survivors,
/// Intel Xeon VM, 2026-12-01): 35 ms on one thread entry by entry (two sets), 27 ms by chunks
/// into one set, 20 ms by chunks into two sets, 18.6-19.0 ms with the higher bytes by runs
/// and the chunk's mass in four running sums (0.75e6 survivors: 2.6-2.7 -> 2.3-2.4 ms)
/// (docs/benchmarks.md, "A fourth machine"). Tried the same day and not kept: 64 per-bit
/// masked sums per chunk (the compiler vectorised them two lanes wide; no faster), and these
/// tables summed inside the one-thread projection pass (the move 2.1 ms slower at 1.49e6:
/// the pass is not idle enough to hide them).
pub(crate) fn add_byte_tables<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    t: &mut [ByteTables; 2],
) {
    let [t, u] = t;
    for (kc, ac) in keys.chunks(TABLE_CHUNK).zip(amps.chunks(TABLE_CHUNK)) {
        let k0 = kc[0];
        let varying = kc.iter().fold(0u64, |v, &k| v | (k ^ k0));
        let mut p = [0.0f64; TABLE_CHUNK];
        for (slot, a) in p.iter_mut().zip(ac) {
            *slot = norm2(*a);
        }
        let p = &p[..kc.len()];
        // Four running sums (one chain of 32 additions would be 128 cycles of latency).
        let mut lanes = [0.0f64; 4];
        let mut quads = p.chunks_exact(4);
        for q in &mut quads {
            for (l, m) in lanes.iter_mut().zip(q) {
                *l += m;
            }
        }
        for (l, m) in lanes.iter_mut().zip(quads.remainder()) {
            *l += m;
        }
        let sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
        let mut rows = [0u32; 8];
        let mut nv = 0;
        for (byte, row) in t.iter_mut().enumerate() {
            let shift = 8 * byte as u32;
            if (varying >> shift) & 0xff == 0 {
                row[((k0 >> shift) & 0xff) as usize] += sum;
            } else {
                rows[nv] = shift;
                nv += 1;
            }
        }
        let Some((&low, high)) = rows[..nv].split_first() else {
            continue;
        };
        // A higher varying byte of sorted keys keeps its value over runs of entries: each
        // run is summed in a register and added to its slot once (a slot updated entry by
        // entry would chain every update on the one before, through memory).
        for &shift in high {
            let row = &mut t[(shift / 8) as usize];
            let mut v = (k0 >> shift) & 0xff;
            let mut run = 0.0f64;
            for (k, m) in kc.iter().zip(p) {
                let b = (k >> shift) & 0xff;
                if b != v {
                    row[v as usize] += run;
                    (v, run) = (b, 0.0);
                }
                run += m;
            }
            row[v as usize] += run;
        }
        // The lowest varying byte changes from entry to entry, mostly: entry by entry, even
        // and odd entries into the two sets.
        let byte = (low / 8) as usize;
        let mut kp = kc.chunks_exact(2);
        let mut pp = p.chunks_exact(2);
        for (k, m) in (&mut kp).zip(&mut pp) {
            t[byte][((k[0] >> low) & 0xff) as usize] += m[0];
            u[byte][((k[1] >> low) & 0xff) as usize] += m[1];
        }
        for (k, m) in kp.remainder().iter().zip(pp.remainder()) {
            t[byte][((k >> low) & 0xff) as usize] += m;
        }
    }
}

/// The 64 physical-bit masses of a set of byte tables ([`byte_marginals`]): bit `8 b + j` gets
/// the mass of every value of byte `b` with bit `j` set. Summed in a fixed order.
pub(crate) fn table_bits(t: &ByteTables) -> [f64; 64] {
    let mut bits = [0.0f64; 64];
    for (byte, row) in t.iter().enumerate() {
        for (j, slot) in bits[8 * byte..8 * byte + 8].iter_mut().enumerate() {
            *slot = row
                .iter()
                .enumerate()
                .filter(|(v, _)| v >> j & 1 == 1)
                .map(|(_, m)| m)
                .sum::<f64>();
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn chunked_byte_tables_match_the_entry_by_entry_sum() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for (n, sorted) in [
            (1, true),
            (15, false),
            (1000, true),
            (1000, false),
            (70_001, true),
        ] {
            let mut keys: Vec<u64> = (0..n)
                .map(|_| rng.random::<u64>() & 0xf0f0_00ff_0f03_ff37)
                .collect();
            if sorted {
                keys.sort_unstable();
            }
            let amps: Vec<Complex<f64>> = (0..n)
                .map(|_| Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
                .collect();
            let mut want = [[0.0f64; 256]; 8];
            for (k, a) in keys.iter().zip(&amps) {
                for (byte, row) in want.iter_mut().enumerate() {
                    row[((k >> (8 * byte)) & 0xff) as usize] += a.norm_sqr();
                }
            }
            let mut sets = [[[0.0f64; 256]; 8]; 2];
            add_byte_tables(&keys, &amps, &mut sets);
            let got = fold_tables(&sets);
            let total: f64 = want[0].iter().sum();
            for (wr, gr) in want.iter().zip(got.iter()) {
                for (w, g) in wr.iter().zip(gr) {
                    assert!((w - g).abs() <= 1e-13 * total, "{w} vs {g}");
                }
            }
            let bits = table_bits(&got);
            for (j, b) in bits.iter().enumerate() {
                let direct: f64 = keys
                    .iter()
                    .zip(&amps)
                    .filter(|(k, _)| *k >> j & 1 == 1)
                    .map(|(_, a)| a.norm_sqr())
                    .sum();
                assert!((b - direct).abs() <= 1e-13 * total, "bit {j}");
            }
        }
    }
}
