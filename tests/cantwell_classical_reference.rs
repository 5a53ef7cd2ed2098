//! On classical positions a Cantwell game is chess without check: the standard (non-split,
//! non-merge) legal moves the Cantwell layers list must be exactly the pseudo-legal moves of
//! the classical move generator (qchess-board), position after position of random games that
//! play only standard moves (which keep the state classical: every measurement is certain).

use qchess::board::{Geometry, Position as ChessPosition};
use qchess::cantwell::Game;
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

fn standard_moves(game: &Game) -> BTreeSet<String> {
    game.legal_moves()
        .into_iter()
        .filter(|m| !m.contains('^'))
        .map(|m| m.to_lowercase())
        .collect()
}

fn reference_moves(fen: &str) -> BTreeSet<String> {
    let pos = ChessPosition::from_fen_relaxed(fen, Geometry::STANDARD).unwrap();
    pos.pseudo_legal_moves()
        .into_iter()
        .map(|m| m.to_string())
        .collect()
}

#[test]
fn standard_moves_match_the_pseudo_legal_generator() {
    let mut positions = 0;
    for seed in 0..12u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let start = if seed % 2 == 0 {
            qchess::cantwell::STARTPOS_FEN
        } else {
            "r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R w KQkq - 0 1"
        };
        let mut game = Game::from_fen(start).unwrap();
        for _ in 0..80 {
            if !game.status().is_ongoing() {
                break;
            }
            assert_eq!(
                game.state_size(),
                1,
                "standard moves keep a classical position classical"
            );
            let ours = standard_moves(&game);
            let reference = reference_moves(&game.fen());
            assert_eq!(ours, reference, "position {}", game.fen());
            positions += 1;
            let list: Vec<&String> = ours.iter().collect();
            let Some(mv) = list.choose(&mut rng) else {
                break;
            };
            game.apply(mv, &mut rng).unwrap();
        }
    }
    assert!(positions > 500, "{positions} positions compared");
}
