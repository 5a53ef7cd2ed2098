//! States the integration tests share, reached by real gates.

use qchess_sim::{Controls, State};
use rand::{Rng, SeedableRng};

/// A state with several ancilla sectors (boards repeated across them) and relabelled
/// qubits, reached by real gates: up to 14 random splits, iSwaps, captures and controlled
/// sqrt-iSwaps on the low 16 squares of a board with its first rank full, from `seed`.
pub fn game_shaped(seed: u64) -> State<f64> {
    game_shaped_with(seed, true).0
}

/// [`game_shaped`], with the uncontrolled iSwaps (which relabel qubits) only where `iswaps`
/// (else a controlled sqrt-iSwap takes their turn); also whether an iSwap was applied.
pub fn game_shaped_with(seed: u64, iswaps: bool) -> (State<f64>, bool) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut s = State::<f64>::classical(0x0000_0000_0000_00ff);
    let mut swapped = false;
    for _ in 0..14 {
        let a = rng.random_range(0..16u8);
        let b = rng.random_range(0..16u8);
        let c = rng.random_range(0..16u8);
        if a == b || b == c || a == c {
            continue;
        }
        match rng.random_range(0..4) {
            0 => s.split(a, b, c, Controls::NONE).unwrap(),
            1 if iswaps => {
                s.iswap(a, b, Controls::NONE).unwrap();
                swapped = true;
            }
            2 => {
                s.capture(a).unwrap();
            }
            _ => s.sqrt_iswap(a, b, Controls::empty_path(1 << c)).unwrap(),
        }
    }
    (s, swapped)
}
