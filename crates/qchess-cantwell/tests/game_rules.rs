//! Game end (section 10, rules-notes D14): king gone, the 50-move measurement and the
//! threefold-repetition claim, with real counts and their records replayed.

use qchess_board::Color;
use qchess_cantwell::{EndReason, Game, GameError, GameStatus, RuleOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const KINGS: &str = "4k3/8/8/8/8/8/8/4K3 w - - 0 1";

#[test]
fn capturing_the_only_king_wins_and_half_a_king_does_not() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    // The black king splits onto e4/f5; a white knight takes the e4 half (a capture jump
    // whose measurement "d2 occupied" is certain). Half a king is still a king.
    let mut g = Game::from_fen("8/8/8/4k3/8/8/3N4/4K3 b - - 0 1").unwrap();
    g.apply("e5^e4f5", &mut rng).unwrap();
    let rec = g.apply("d2e4", &mut rng).unwrap();
    assert_eq!(rec.notation, "d2e4.m1");
    assert!((rec.probability.unwrap() - 1.0).abs() < 1e-12);
    assert!(g.status().is_ongoing());
    assert_eq!(
        g.piece_at(qchess_board::Square::E4).unwrap().fen_char(),
        'N'
    );
    assert_eq!(
        g.piece_at(qchess_board::Square::F5).unwrap().fen_char(),
        'k'
    );
    assert!((g.probability(qchess_board::Square::F5) - 0.5).abs() < 1e-12);
    assert_eq!(g.state().ancilla_count(), 1);
    // A classical capture of a classical king ends the game.
    let mut g = Game::from_fen("4k3/8/3N4/8/8/8/8/4K3 w - - 0 1").unwrap();
    g.apply("d6e8", &mut rng).unwrap();
    assert_eq!(
        g.status(),
        GameStatus::Won {
            winner: Color::White,
            reason: EndReason::KingGone
        }
    );
    assert_eq!(g.status().name(), "white_wins");
    assert_eq!(g.history_notation(), vec!["d6e8.m1"]);
}

#[test]
fn fifty_move_measurement_ends_the_game_after_100_quiet_plies() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let options = RuleOptions {
        fifty_move_measurement: true,
        ..RuleOptions::default()
    };
    let mut g = Game::from_fen(KINGS).unwrap().with_options(options);
    let cycle = ["e1e2", "e8e7", "e2e1", "e7e8"];
    for ply in 0..100 {
        assert!(g.status().is_ongoing(), "ended early at ply {ply}");
        g.apply(cycle[ply % 4], &mut rng).unwrap();
    }
    assert_eq!(
        g.status(),
        GameStatus::Drawn {
            reason: EndReason::FiftyMoveMeasurement
        }
    );
    assert_eq!(g.history().len(), 101);
    assert_eq!(g.history_notation().last().unwrap(), "measure:e1,e8");
    let replayed = Game::replay(&g.start_position(), options, &g.history_notation()).unwrap();
    assert_eq!(replayed.position().to_json(), g.position().to_json());
    assert_eq!(replayed.status(), g.status());
    assert!(matches!(
        g.apply("e1e2", &mut rng),
        Err(GameError::GameOver(_))
    ));
    // Undo takes back the measurement, then the 100th ply.
    g.undo().unwrap();
    assert!(g.status().is_ongoing());
    assert_eq!(g.classical().flags.halfmove_clock, 100);
    g.undo().unwrap();
    assert_eq!(g.classical().flags.halfmove_clock, 99);
    // Off by default: the same game just goes on.
    let mut g = Game::from_fen(KINGS).unwrap();
    for ply in 0..120 {
        g.apply(cycle[ply % 4], &mut rng).unwrap();
    }
    assert!(g.status().is_ongoing());
}

#[test]
fn a_capture_resets_the_fifty_move_counter() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut g = Game::from_fen("4k3/8/8/8/8/n7/8/1N2K3 w - - 7 1").unwrap();
    g.apply("e1e2", &mut rng).unwrap();
    assert_eq!(g.classical().flags.halfmove_clock, 8);
    g.apply("a3c2", &mut rng).unwrap(); // black knight: quiet
    assert_eq!(g.classical().flags.halfmove_clock, 9);
    g.apply("b1a3", &mut rng).unwrap(); // empty now: quiet
    g.apply("c2e1", &mut rng).unwrap();
    g.apply("e2e1", &mut rng).unwrap(); // king captures the knight: one piece fewer
    assert_eq!(g.classical().flags.halfmove_clock, 0);
}

#[test]
fn threefold_repetition_claim() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let options = RuleOptions {
        repetition_claim_measurement: true,
        ..RuleOptions::default()
    };
    let mut g = Game::from_fen(KINGS).unwrap().with_options(options);
    let cycle = ["e1e2", "e8e7", "e2e1", "e7e8"];
    for mv in cycle {
        g.apply(mv, &mut rng).unwrap();
    }
    assert_eq!(g.repetitions(), 2);
    let before = g.position().to_json();
    assert_eq!(
        g.claim_repetition(&mut rng).unwrap_err(),
        GameError::NoRepetition { occurrences: 2 }
    );
    assert_eq!(g.position().to_json(), before);
    for mv in cycle {
        g.apply(mv, &mut rng).unwrap();
    }
    assert_eq!(g.repetitions(), 3);
    let status = g.claim_repetition(&mut rng).unwrap();
    assert_eq!(
        status,
        GameStatus::Drawn {
            reason: EndReason::RepetitionMeasurement
        }
    );
    // Without the option the claim is refused.
    let mut g = Game::from_fen(KINGS).unwrap();
    assert_eq!(
        g.claim_repetition(&mut rng).unwrap_err(),
        GameError::OptionOff("repetition_claim_measurement")
    );
}

#[test]
fn measuring_every_square_can_decide_for_one_side() {
    // A split black king: the 50-move measurement finds it on one square; whichever, both
    // kings are there, so a draw. With the white king split too, still both present.
    let options = RuleOptions {
        fifty_move_measurement: true,
        ..RuleOptions::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut g = Game::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 98 60")
        .unwrap()
        .with_options(options);
    g.apply("e1^d1f1", &mut rng).unwrap();
    g.apply("e8^d8f8", &mut rng).unwrap();
    assert_eq!(
        g.status(),
        GameStatus::Drawn {
            reason: EndReason::FiftyMoveMeasurement
        }
    );
    assert_eq!(g.state_size(), 1, "the measurement collapses the board");
    assert_eq!(g.pieces().occupied_mask().count_ones(), 2);
}

#[test]
fn outcome_zero_that_changes_the_state_ends_the_turn() {
    // D12: the capture jump f3e5 measures "f3 occupied"; outcome 0 collapses the knight onto
    // h3 without moving it, which changes the state, so the turn passes.
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut g = Game::new();
    g.apply("g1^f3h3", &mut rng).unwrap();
    g.apply("e7e5", &mut rng).unwrap();
    let rec = g.apply("f3e5.m0", &mut rng).unwrap();
    assert_eq!(rec.notation, "f3e5.m0");
    assert!((rec.probability.unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(g.side_to_move(), Color::Black);
    use qchess_board::Square;
    assert_eq!(
        g.piece_at(Square::F3),
        None,
        "f3 was measured empty: its letter goes"
    );
    assert!((g.probability(Square::H3) - 1.0).abs() < 1e-12);
    assert_eq!(g.piece_at(Square::E5).unwrap().fen_char(), 'p');
    assert_eq!(g.state_size(), 1);
}
