//! Set-up shared by the budget tests (`clone_budget.rs`, `read_budget.rs`).

use qchess_cantwell::Game;
use rand::{Rng, SeedableRng};

/// A game of random legal moves (measurements drawn from the same generator) that has
/// reached more than 8 basis states, or `None` if it ended first.
pub fn random_game(seed: u64) -> Option<Game> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut g = Game::new();
    for _ in 0..40 {
        if g.state_size() > 8 && g.state().ancilla_count() > 0 {
            return Some(g);
        }
        let moves = g.legal_moves();
        if moves.is_empty() {
            return None;
        }
        let mv = moves[rng.random_range(0..moves.len())].clone();
        g.apply(&mv, &mut rng).unwrap();
    }
    (g.state_size() > 8).then_some(g)
}
