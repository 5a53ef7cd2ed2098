//! Bad input: malformed and illegal move strings, bad FEN, bad positions and impossible
//! forced outcomes each give a clear error, and the game is exactly as before (serialisation,
//! history and side to move compared).

use qchess_cantwell::{Game, GameError, Position};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn snapshot(g: &Game) -> (String, Vec<String>, usize) {
    (g.position().to_json(), g.history_notation(), g.state_size())
}

/// A game with a split knight (so forced outcomes can be impossible).
fn quantum_game() -> Game {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut g = Game::new();
    for m in ["g1^f3h3", "e7e5", "b1^a3c3", "d8^f6h4"] {
        g.apply(m, &mut rng).unwrap();
    }
    g
}

#[test]
fn every_bad_move_is_refused_and_changes_nothing() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let precise: &[(&str, &str)] = &[
        ("", "notation"),
        ("e9e4", "notation"),
        ("e2e4e5", "notation"),
        ("e3e4", "illegal_move"),
        ("e7e5", "illegal_move"),
        ("e2e5", "illegal_move"),
        ("c1c3", "illegal_move"),
        ("f3^g5g5", "illegal_move"),
        ("f3^e5g5", "illegal_move"),
        ("Bf3e5", "illegal_move"),
        ("f3we5", "illegal_move"),
        ("f3xg5", "illegal_move"),
        ("e2e4.m0", "impossible_outcome"),
        ("a1a3", "no_effect"), // the a2 pawn blocks the path with certainty (D9)
        ("f1e2", "no_effect"), // blocked slide onto own pawn: measuring "e2 empty" is certain 0
    ];
    for &(mv, kind) in precise {
        let mut g = quantum_game();
        let before = snapshot(&g);
        let err = g.apply(mv, &mut rng).expect_err(mv);
        assert_eq!(err.kind(), kind, "{mv}: {err}");
        assert_eq!(snapshot(&g), before, "{mv} changed the game");
    }
    // Notation errors say where.
    let mut g = quantum_game();
    let err = g.apply("e2e9", &mut rng).unwrap_err();
    assert_eq!(err.position(), Some(3));
}

#[test]
fn impossible_forced_outcomes() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // Basic moves measure nothing: .m1 is accepted, .m0 is not (rules-notes D7).
    let mut g = Game::from_fen("4k3/8/8/8/8/n7/8/1NB1K3 w - - 0 1").unwrap();
    let before = snapshot(&g);
    assert_eq!(
        g.apply("e1e2.m0", &mut rng).unwrap_err().kind(),
        "impossible_outcome"
    );
    assert_eq!(snapshot(&g), before);
    // Blocked jump onto a certainly occupied own square: "target empty" has probability 0,
    // so .m1 is impossible and the unforced move has no effect (Definition 2).
    let err = g.apply("b1d2.m1", &mut rng);
    assert!(err.is_ok(), "d2 is empty: a basic jump, .m1 accepted");
    g.undo().unwrap();
    let err = g.apply("c1b2", &mut rng);
    assert!(err.is_ok());
    g.undo().unwrap();
    assert_eq!(snapshot(&g), before);
    let mut g2 = Game::from_fen("4k3/8/8/8/8/n1B5/8/1N2K3 w - - 0 1").unwrap();
    let before2 = snapshot(&g2);
    assert_eq!(
        g2.apply("b1c3.m1", &mut rng).unwrap_err().kind(),
        "impossible_outcome"
    );
    assert_eq!(g2.apply("b1c3", &mut rng).unwrap_err().kind(), "no_effect");
    assert_eq!(snapshot(&g2), before2);
    // Capture jump with a certain source: outcome 0 (source empty) is impossible.
    assert_eq!(
        g2.apply("b1a3.m0", &mut rng).unwrap_err().kind(),
        "impossible_outcome"
    );
    assert_eq!(snapshot(&g2), before2);
    let rec = g2.apply("b1a3.m1", &mut rng).unwrap();
    assert_eq!(rec.notation, "b1a3.m1");
    assert_eq!(
        g2.piece_at(qchess_board::Square::A3).unwrap().fen_char(),
        'N'
    );
    assert_eq!(g2.state().ancilla_count(), 1);
}

#[test]
fn bad_fen_and_bad_positions() {
    for fen in [
        "",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
        "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkz - 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
    ] {
        let err = Game::from_fen(fen).unwrap_err();
        assert_eq!(err.kind(), "fen", "{fen}");
        assert!(err.to_string().contains("character"), "{err}");
    }
    let good = quantum_game().position();
    let mut bad = good.clone();
    bad.amplitudes[0].re += 0.5; // norm no longer 1
    assert!(matches!(
        Game::from_position(&bad),
        Err(GameError::Position(_))
    ));
    let mut bad = good.clone();
    bad.amplitudes[0].board.push_str(" d4"); // d4 has no letter
    assert!(
        Game::from_position(&bad)
            .unwrap_err()
            .to_string()
            .contains("no piece letter")
    );
    let mut bad = good.clone();
    bad.fen = "rnbqkbnr/pppppppp/8/8/3Q4/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(); // d4 letter, p = 0
    assert!(Game::from_position(&bad).is_err());
    let mut bad = good.clone();
    let dup = bad.amplitudes[0].clone();
    bad.amplitudes.push(dup);
    assert!(
        Game::from_position(&bad)
            .unwrap_err()
            .to_string()
            .contains("twice")
    );
    assert!(Position::from_json("{\"fen\": 3}").is_err());
}

#[test]
fn undo_with_nothing_to_undo_and_moves_after_the_end() {
    let mut g = Game::new();
    assert_eq!(g.undo().unwrap_err(), GameError::NothingToUndo);
    // A position without the black king is already won by White: no move is accepted.
    let mut g = Game::from_fen("8/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    assert_eq!(g.status().name(), "white_wins");
    let before = snapshot(&g);
    let err = g
        .apply("e1e2", &mut ChaCha8Rng::seed_from_u64(0))
        .unwrap_err();
    assert_eq!(err.kind(), "game_over");
    assert_eq!(snapshot(&g), before);
    assert!(g.legal_moves().is_empty());
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Arbitrary move strings (biased towards move-like characters) never panic; a refused
        /// one leaves the game exactly as it was.
        #[test]
        fn arbitrary_move_strings(mv in "[a-i0-9^xwQNBRKP.m ]{0,9}|\\PC{0,6}") {
            let mut g = quantum_game();
            let before = snapshot(&g);
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            if g.apply(&mv, &mut rng).is_err() {
                prop_assert_eq!(snapshot(&g), before);
            }
        }

        /// Arbitrary FEN-like strings never panic.
        #[test]
        fn arbitrary_fens(fen in "[1-9pnbrqkPNBRQK/]{0,40} [wbx] [KQkq-]{1,4} [a-h1-8-]{1,2} [0-9]{1,2} [0-9]{1,2}") {
            let _ = Game::from_fen(&fen);
        }
    }
}
