//! Inputs found by the fuzz targets (`fuzz/`, docs/reliability.md), reduced to the moves that
//! matter; each failed before its fix. The raw fuzzer input is kept in `fuzz/seeds/<target>/`.

use qchess_cantwell::Game;
use qchess_cantwell::game::same_state;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `play` target, 2026-11-26 (`fuzz/seeds/play/crash-ea5e6584...`): a pawn two-step that
/// moved nothing in any branch still set the en-passant flag. The pawn was split between c7
/// (behind the knight on c6) and c5 (knight on a6); `c7c5` is then blocked where the pawn is
/// on c7 and takes it back from c5 where it is on c5 (the target holds the same piece, D10),
/// so c5 ends empty. The FEN said `c6` with no pawn on c5, and the game's own save
/// (`Game::position`) could not be loaded: the game was lost.
#[test]
fn two_step_that_moves_nothing_sets_no_en_passant_flag() {
    let mut g = Game::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for mv in ["h2h4", "b8^a6c6", "h1h2", "c7c5"] {
        g.apply(mv, &mut rng).expect("a legal move");
    }
    // A two-step that moved the pawn in one branch sets the flag, and that save loads.
    assert_eq!(
        g.fen(),
        "r1bqkbnr/pppppppp/n1n5/2p5/7P/8/PPPPPPPR/RNBQKBN1 w Qkq c6 4 3"
    );
    let p = g.probabilities();
    assert!((p[qchess_board::Square::C5.index() as usize] - 0.5).abs() < 1e-12);
    assert!(Game::from_position(&g.position()).is_ok());

    g.apply("h2h1", &mut rng).expect("a legal move");
    let record = g.apply("c7c5", &mut rng).expect("a legal move");
    assert_eq!(record.measured, None, "no measurement: both branches act");
    let p = g.probabilities();
    assert!(p[qchess_board::Square::C5.index() as usize].abs() < 1e-12);
    assert!((p[qchess_board::Square::C7.index() as usize] - 1.0).abs() < 1e-12);
    assert_eq!(
        g.fen(),
        "r1bqkbnr/pppppppp/n1n5/8/7P/8/PPPPPPP1/RNBQKBNR w Qkq - 6 4",
        "no pawn on c5, so no en-passant square"
    );
    let loaded = Game::from_position(&g.position()).expect("the game's own save loads");
    assert_eq!(loaded.fen(), g.fen());
    assert!(same_state(loaded.state(), g.state()));
}
