//! Set-up shared by the budget tests (`clone_budget.rs`, `read_budget.rs`) and the tests of
//! moves without undo records (`jump_without_copy.rs`, `measure_without_record.rs`).

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

/// Four knight splits from the start: g1 onto f3 and h3, b8 onto a6 and c6, b1 onto a3 and
/// c3, g8 onto f6 and h6 (16 basis states; White to move).
pub const OPENING: [&str; 4] = ["g1^f3h3", "b8^a6c6", "b1^a3c3", "g8^f6h6"];

/// The game from `fen` after `moves` (outcomes forced where they matter), with the undo
/// snapshot budget `budget` when given.
pub fn played_from(fen: &str, budget: Option<usize>, moves: &[&str]) -> Game {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut game = Game::from_fen(fen).unwrap();
    if let Some(b) = budget {
        game.set_snapshot_budget(b);
    }
    for mv in moves {
        game.apply(mv, &mut rng).unwrap();
    }
    game
}

/// [`played_from`] the standard start.
pub fn played(budget: Option<usize>, moves: &[&str]) -> Game {
    played_from(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        budget,
        moves,
    )
}

/// The state's entries with the amplitudes' bits, sorted: equal lists are equal states,
/// bit for bit.
pub fn entry_bits(game: &Game) -> Vec<(u64, u128, u64, u64)> {
    let mut v: Vec<_> = game
        .state()
        .entries()
        .map(|(k, a)| (k.board, k.ancillas, a.re.to_bits(), a.im.to_bits()))
        .collect();
    v.sort_unstable();
    v
}
