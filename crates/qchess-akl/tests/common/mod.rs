//! Helpers shared by the integration tests.
#![allow(dead_code)]

use qchess_akl::{AklMove, AklPosition, Game, TouchResult};
use qchess_board::{PieceKind, Square};

/// A square from its name.
pub fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

/// A game from an AKL-FEN text.
pub fn game(fen: &str) -> Game {
    Game::from_position(AklPosition::parse(fen).unwrap())
}

/// A move from UCI text.
pub fn mv(uci: &str) -> AklMove {
    uci.parse().unwrap()
}

/// Touches `from` (collapsing to `collapse` when quantum) and expects it to be able to move.
pub fn touch_moves(game: &mut Game, from: &str, collapse: Option<PieceKind>) -> Vec<AklMove> {
    match game.touch_forced(sq(from), collapse).unwrap().result {
        TouchResult::MustMove(moves) => moves,
        other => panic!("touch of {from} ended the turn: {other:?}"),
    }
}

/// The target squares of `moves`, sorted, as names.
pub fn targets(moves: &[AklMove]) -> Vec<String> {
    let mut t: Vec<String> = moves.iter().map(|m| m.to.to_string()).collect();
    t.sort();
    t.dedup();
    t
}
