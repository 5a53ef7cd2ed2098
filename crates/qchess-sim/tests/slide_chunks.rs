//! A controlled iSwap (a slide) on states large enough to be permuted as many tasks (runs of
//! whole groups of at most 16 384 entries, grouped into jobs) or as a few long groups, against
//! the obvious method: flip the two bits of every entry that moves, multiply by `i`, sort.

use num_complex::Complex;
use qchess_sim::{Controls, Normalization, State};
use rand::{Rng, SeedableRng};

/// `n` distinct random keys below `2^bits` with distinct random amplitudes.
fn random_state(n: usize, bits: u32, seed: u64) -> State<f64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut keys: Vec<u64> = (0..n).map(|_| rng.random_range(0..1u64 << bits)).collect();
    keys.sort_unstable();
    keys.dedup();
    let amps = keys
        .iter()
        .map(|_| Complex::new(rng.random_range(0.5..1.0), rng.random_range(-1.0..1.0)))
        .collect();
    State::from_board_arrays(keys, amps, Normalization::Renormalize).unwrap()
}

/// The iSwap of bits `a`, `b` where every bit of `path` is clear, by flipping and sorting.
fn flipped(s: &State<f64>, a: u8, b: u8, path: u64) -> Vec<(u64, Complex<f64>)> {
    let ab = (1u64 << a) | (1u64 << b);
    let mut out: Vec<(u64, Complex<f64>)> = s
        .entries()
        .map(|(k, v)| {
            let k = k.board;
            let moves = (k >> a ^ k >> b) & 1 == 1 && k & path == 0;
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
fn a_slide_in_tasks_is_the_flip_and_sort_bit_for_bit() {
    // (lo, hi, path): small groups (many tasks a job), groups of about 12 000 entries (a task
    // each), and one group of every entry (one long task).
    let cases = [
        (2u8, 5u8, 1u64 << 10),
        (3, 20, 1 << 11),
        (1, 23, 1 << 12),
        (22, 23, 0b1),
    ];
    for (i, &(lo, hi, path)) in cases.iter().enumerate() {
        let s = random_state(200_000, 24, i as u64);
        let expected = flipped(&s, lo, hi, path);
        let mut t = s.clone();
        t.iswap(hi, lo, Controls::empty_path(path)).unwrap();
        let got: Vec<(u64, Complex<f64>)> = t.entries().map(|(k, v)| (k.board, v)).collect();
        assert_eq!(got.len(), expected.len(), "case {i}");
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g.0, e.0, "case {i}");
            assert_eq!(
                (g.1.re.to_bits(), g.1.im.to_bits()),
                (e.1.re.to_bits(), e.1.im.to_bits())
            );
        }
        // The inverse brings back every entry exactly.
        t.iswap_inv(lo, hi, Controls::empty_path(path)).unwrap();
        for (k, v) in s.entries() {
            assert_eq!(t.amplitude(k), v, "case {i}: {k:?}");
        }
        assert_eq!(t.len(), s.len());
        // A slide holds at most the state and its moved entries: peak under 1.5x.
        assert!(t.peak_bytes() as f64 <= 1.5 * s.bytes() as f64, "case {i}");
    }
}
