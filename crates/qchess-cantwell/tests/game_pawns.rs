//! Pawn moves at game level: the three en-passant cases with a superposed two-step (sections
//! 8.11.6-8.11.8, rules-notes D6), and promotion of a pawn in superposition (`b7b8Q`).

use qchess_board::Square as Q;
use qchess_cantwell::Game;
use qchess_cantwell::circuit::{MoveType, Variant};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const TOL: f64 = 1e-12;

fn play(g: &mut Game, moves: &[&str]) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for m in moves {
        g.apply(m, &mut rng).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

fn letter(g: &Game, sq: qchess_board::Square) -> Option<char> {
    g.piece_at(sq).map(|p| p.fen_char())
}

#[test]
fn standard_en_passant_captures_into_an_ancilla() {
    let mut g = Game::from_fen("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1").unwrap();
    play(&mut g, &["d7d5"]);
    assert_eq!(g.classical().flags.en_passant_file, Some(3));
    let c = g.classify("e5d6").unwrap();
    assert_eq!((c.move_type, c.variant), (MoveType::PawnEp, Variant::Basic));
    play(&mut g, &["e5d6"]);
    assert_eq!(letter(&g, Q::D6), Some('P'));
    assert_eq!(letter(&g, Q::D5), None);
    assert_eq!(letter(&g, Q::E5), None);
    assert_eq!(g.state().ancilla_count(), 1);
    assert_eq!(g.classical().flags.en_passant_file, None);
    // The right lasts one turn only.
    let mut g = Game::from_fen("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1").unwrap();
    play(&mut g, &["d7d5", "e1e2", "e8e7"]);
    assert!(g.classify("e5d6").is_err());
}

#[test]
fn blocked_en_passant_after_a_two_step_through_a_split_knight() {
    // White knight b5 splits onto d6/c3; the black pawn's two-step d7d5 passes d6 only where
    // the knight is not: pawn and knight are entangled. e5d6 is then Blocked E.P. (d6 holds a
    // white knight): it measures "d6 empty"; outcome 1 finds the knight on c3 and the pawn
    // on d5, and takes it.
    let mut g = Game::from_fen("4k3/3p4/8/1N2P3/8/8/8/4K3 w - - 0 1").unwrap();
    play(&mut g, &["b5^d6c3", "d7d5"]);
    assert!((g.probability(Q::D5) - 0.5).abs() < TOL);
    assert!((g.probability(Q::D7) - 0.5).abs() < TOL);
    let c = g.classify("e5d6").unwrap();
    assert_eq!(
        (c.move_type, c.variant),
        (MoveType::PawnEp, Variant::Excluded)
    );
    assert!(
        g.classify("e5xd6").is_err(),
        "the x mark contradicts a blocked e.p."
    );
    play(&mut g, &["e5d6.m1"]);
    assert_eq!(g.state_size(), 1);
    assert_eq!(letter(&g, Q::D6), Some('P'));
    assert_eq!(letter(&g, Q::C3), Some('N'));
    for sq in [Q::D5, Q::D7, Q::E5] {
        assert_eq!(letter(&g, sq), None, "{sq}");
    }
    assert_eq!(g.state().ancilla_count(), 1);
}

#[test]
fn capture_en_passant_takes_either_piece() {
    // A black knight splits onto d6/c5, the pawn two-steps through d6: the knight is on d6
    // exactly where the pawn stayed on d7. e5d6 (Capture E.P.) takes the knight on d6 in one
    // branch and the pawn on d5 en passant in the other: the white pawn is on d6 for sure.
    let mut g = Game::from_fen("4k3/1n1p4/8/4P3/8/8/8/4K3 b - - 0 1").unwrap();
    play(&mut g, &["b7^d6c5", "e1e2", "d7d5"]);
    let c = g.classify("e5d6").unwrap();
    assert_eq!(
        (c.move_type, c.variant),
        (MoveType::PawnEp, Variant::Capture)
    );
    let rec = g.apply("e5xd6", &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
    assert_eq!(rec.notation, "e5d6.m1");
    assert!((g.probability(Q::D6) - 1.0).abs() < TOL);
    assert!((g.probability(Q::D7) - 0.5).abs() < TOL);
    assert!((g.probability(Q::C5) - 0.5).abs() < TOL);
    assert!(g.probability(Q::D5) < TOL);
    assert_eq!(letter(&g, Q::D6), Some('P'));
    assert_eq!(letter(&g, Q::D7), Some('p'));
    assert_eq!(letter(&g, Q::C5), Some('n'));
    assert_eq!(letter(&g, Q::D5), None);
}

#[test]
fn promotion_of_a_pawn_in_superposition() {
    // A black knight splits onto a8/c8; b7xa8Q captures where the knight is on a8 and stays
    // on b7 otherwise: the pawn is now in superposition, and b7b8Q promotes that half.
    let mut g = Game::from_fen("4k3/1P6/1n6/8/8/8/8/4K3 b - - 0 1").unwrap();
    play(&mut g, &["b6^a8c8"]);
    let rec = g.apply("b7a8Q", &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
    assert_eq!(rec.notation, "b7a8Q.m1");
    assert_eq!(letter(&g, Q::A8), Some('Q'));
    assert_eq!(letter(&g, Q::B7), Some('P'));
    assert_eq!(letter(&g, Q::C8), Some('n'));
    assert!((g.probability(Q::A8) - 0.5).abs() < TOL);
    assert!((g.probability(Q::B7) - 0.5).abs() < TOL);
    play(&mut g, &["e8e7"]);
    assert!(g.legal_moves().contains(&"b7b8Q".to_string()));
    assert!(
        g.classify("b7b8")
            .unwrap_err()
            .to_string()
            .contains("must promote")
    );
    play(&mut g, &["b7b8Q"]);
    assert_eq!(letter(&g, Q::B8), Some('Q'));
    assert_eq!(letter(&g, Q::B7), None);
    assert!((g.probability(Q::B8) - 0.5).abs() < TOL);
    assert_eq!(
        g.history_notation(),
        vec!["b6^a8c8", "b7a8Q.m1", "e8e7", "b7b8Q"]
    );
}

#[test]
fn castling_measures_the_squares_between_and_loses_the_right_either_way() {
    // A white knight splits onto g1/f2: king-side castling measures "f1 and g1 empty" (D5).
    let start = "4k3/8/8/8/8/7N/8/4K2R w K - 0 1";
    let mut g = Game::from_fen(start).unwrap();
    play(&mut g, &["h3^g1f2", "e8e7"]);
    let c = g.classify("e1g1").unwrap();
    assert_eq!(c.move_type, MoveType::KsCastle);
    let mut yes = g.clone();
    let rec = yes
        .apply("e1g1.m1", &mut ChaCha8Rng::seed_from_u64(0))
        .unwrap();
    assert!((rec.probability.unwrap() - 0.5).abs() < TOL);
    assert_eq!(letter(&yes, Q::G1), Some('K'));
    assert_eq!(letter(&yes, Q::F1), Some('R'));
    assert_eq!(letter(&yes, Q::F2), Some('N'));
    assert_eq!((letter(&yes, Q::E1), letter(&yes, Q::H1)), (None, None));
    assert_eq!(yes.state_size(), 1);
    assert!(!yes.classical().flags.castling.white_king_side);
    // Outcome 0: the knight is found on g1, nothing castles, the right is gone (D13) and the
    // turn passes (D12).
    play(&mut g, &["e1g1.m0"]);
    assert_eq!(letter(&g, Q::G1), Some('N'));
    assert_eq!(letter(&g, Q::E1), Some('K'));
    assert_eq!(letter(&g, Q::F2), None);
    assert!(!g.classical().flags.castling.white_king_side);
    assert_eq!(g.side_to_move(), qchess_board::Color::Black);
    play(&mut g, &["e7e8", "g1h3", "e8e7"]);
    assert!(
        g.classify("e1g1")
            .unwrap_err()
            .to_string()
            .contains("castling right")
    );
}
