//! Random states for the unit tests: one builder for the modules' tests.

use crate::{Complex, Controls, Key, Normalization, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` distinct sorted keys (random words shifted right by `shift`) and `n` amplitudes
/// uniform in `[-0.5, 0.5)` in both parts, drawn from `seed`, not normalised: the arrays of a
/// random sector.
pub(crate) fn random_arrays(n: usize, seed: u64, shift: u32) -> (Vec<u64>, Vec<Complex<f64>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys: Vec<u64> = (0..n + n / 8)
        .map(|_| rng.random::<u64>() >> shift)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.truncate(n);
    assert_eq!(keys.len(), n, "too few distinct keys drawn");
    let amps = (0..n)
        .map(|_| Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5))
        .collect();
    (keys, amps)
}

/// `n` random entries drawn from `seed` (duplicates dropped), renormalised: each entry's
/// board is a random word masked by `board_mask`, its ancillas `ancilla(rng)` (drawn after
/// the board), its amplitude uniform in `[-0.5, 0.5)` in both parts.
pub(crate) fn random_state(
    n: usize,
    seed: u64,
    board_mask: u64,
    mut ancilla: impl FnMut(&mut ChaCha8Rng) -> u128,
) -> State<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut entries: Vec<(Key, Complex<f64>)> = (0..n)
        .map(|_| {
            let board = rng.random::<u64>() & board_mask;
            let key = Key {
                board,
                ancillas: ancilla(&mut rng),
            };
            let a = Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
            (key, a)
        })
        .collect();
    entries.sort_by_key(|e| e.0);
    entries.dedup_by_key(|e| e.0);
    State::from_amplitudes(entries, Normalization::Renormalize).unwrap()
}

/// Every entry of `s` with its amplitude's bits: what "bit for bit the same state" compares.
pub(crate) fn entry_bits(s: &State<f64>) -> Vec<(Key, u64, u64)> {
    s.entries()
        .map(|(k, v)| (k, v.re.to_bits(), v.im.to_bits()))
        .collect()
}

/// A rayon pool of `threads` threads, for a test that runs a pass on a given thread count.
pub(crate) fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// Random keys over 20 board bits in three ancilla sectors (some 300 000 entries: several
/// parallel blocks), qubits relabelled by uncontrolled iSwaps.
pub(crate) fn big_state(n: usize, seed: u64) -> State<f64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut entries: Vec<(Key, Complex<f64>)> = (0..n)
        .map(|_| {
            let key = Key {
                board: (rng.random::<u64>() & 0xf_ffff) | 1 << 50,
                ancillas: rng.random_range(0..3u128),
            };
            (
                key,
                Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5),
            )
        })
        .collect();
    entries.sort_by_key(|e| e.0);
    entries.dedup_by_key(|e| e.0);
    let mut s = State::from_amplitudes(entries, Normalization::Renormalize).unwrap();
    s.iswap(0, 33, Controls::NONE).unwrap();
    s.iswap(5, 50, Controls::NONE).unwrap();
    s
}
