//! Every figure of the two papers that the text describes as a test, with the papers'
//! numbers. Positions are written in this crate's serialised form (docs/niels.md); where a
//! figure's diagram is not in the text, the pieces the text names are placed as it says and
//! the rest of the board is filled in minimally (each test says so).

use qchess_niels::{
    Diagonal, Game, Mark, Move, NielsError, Position, Rules, Status, capture_chance,
    group_outcomes, in_check,
};

fn mv(s: &str) -> Move {
    s.parse().unwrap()
}

fn game(fen: &str) -> Game {
    Game::from_position(Rules::default(), fen.parse::<Position>().unwrap())
}

fn sq(s: &str) -> qchess_board::Square {
    s.parse().unwrap()
}

/// Schools paper Fig. 2-3: the knight on c6 moves to d4 and e5 at once; the king on g4 is
/// then in check from the indefinite knight on e5.
#[test]
fn fig_2_3_knight_superposition() {
    let start = "4k3/8/2n5/8/6K1/8/8/8 b - - 0 1";
    let g = game(start);
    let legal = g.legal_moves();
    for f in ["oo", "op", "po", "pp"] {
        assert!(legal.contains(&mv(&format!("c6^d4e5:{f}"))), "{f}");
    }
    // Left of Fig. 3: equal superposition.
    let mut eq = game(start);
    eq.play_with_rolls(&mv("c6^d4e5:oo"), &[]).unwrap();
    let p = eq.position();
    assert!(
        p.is_indefinite(sq("d4")) && p.is_indefinite(sq("e5")) && p.occupant(sq("c6")).is_none()
    );
    assert!(in_check(p, qchess_board::Color::White, eq.rules()));
    assert_eq!(capture_chance(p, sq("e5"), sq("g4"), eq.rules()), 0.5);
    let pair = &p.pairs()[0];
    assert_eq!((pair.red, pair.blue), (sq("d4"), sq("e5")));
    assert_eq!(pair.facings.probability(Mark::Red, eq.rules()), 0.5);
    // Right of Fig. 3: unequal superposition, red facing the opponent: 4/6 on d4, 2/6 on e5.
    let mut uneq = game(start);
    uneq.play_with_rolls(&mv("c6^d4e5:op"), &[]).unwrap();
    let p = uneq.position();
    assert!((capture_chance(p, sq("e5"), sq("g4"), uneq.rules()) - 2.0 / 6.0).abs() < 1e-12);
    assert!((p.pairs()[0].facings.probability(Mark::Red, uneq.rules()) - 4.0 / 6.0).abs() < 1e-12);
}

/// Schools paper Fig. 4-5: the pawn on f5 attempts to capture the rook on e6 (and d4); Black
/// rolls a 3, the rook collapses to e6 where its blue mark stands, and is captured.
#[test]
fn fig_4_5_attempted_capture() {
    let start = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1";
    let mut g = game(start);
    let out = g.play_with_rolls(&mv("f5e6"), &[3]).unwrap();
    assert_eq!(out.rolls.len(), 1);
    assert_eq!(out.rolls[0].player, qchess_board::Color::Black);
    assert_eq!(out.collapses[0].square, sq("e6"));
    assert_eq!(out.collapses[0].mark, Mark::Blue);
    assert_eq!(out.captured.map(|p| p.fen_char()), Some('r'));
    assert_eq!(g.position().to_string(), "4k3/8/4P3/8/8/8/8/4K3 b - - 0 1");
    // An even roll collapses to the red mark on d4: the capture fails, the pawn stays on e6.
    let mut g = game(start);
    let out = g.play_with_rolls(&mv("f5e6"), &[4]).unwrap();
    assert_eq!(out.captured, None);
    assert_eq!(
        g.position().to_string(),
        "4k3/8/4P3/8/3r4/8/8/4K3 b - - 0 1"
    );
    // The two outcomes have probability 1/2 each.
    let outs = game(start).outcomes(&mv("f5e6")).unwrap();
    let total: f64 = outs.iter().map(|(_, p, _)| p).sum();
    assert!((total - 1.0).abs() < 1e-12);
    let captured: f64 = outs
        .iter()
        .filter(|(_, _, o)| o.captured.is_some())
        .map(|(_, p, _)| p)
        .sum();
    assert!((captured - 0.5).abs() < 1e-12);
}

/// Schools paper Fig. 6: White may not attempt to capture the knight on d4, as it might
/// collapse to e5 and leave the king on g4 in check.
#[test]
fn fig_6_illegal_attempted_capture() {
    let g = game("4k3/8/8/4[nbo|1]3/3[nro|1]2K1/2P5/8/8 w - - 0 1");
    assert!(g.in_check());
    let err = g.check_move(&mv("c3d4")).unwrap_err();
    assert!(matches!(err, NielsError::Illegal { .. }), "{err}");
    assert!(err.to_string().contains("0.5000"), "{err}");
    assert!(!g.legal_moves().contains(&mv("c3d4")));
    // Moving the king out of the knight's reach is legal.
    assert!(g.legal_moves().contains(&mv("g4g5")));
}

const FIG8: &str = "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1";

/// Schools paper Fig. 8: the knight on f6 joins White's rook superposition (e4, f4); the
/// marks end up on the -45 degree diagonal.
#[test]
fn fig_8_entanglement() {
    let mut g = game(FIG8);
    let m = mv("f6&f6d5:oo@e4");
    assert!(g.legal_moves().contains(&mv("f6&f6d5:oo@e4-")));
    g.play_with_rolls(&m, &[]).unwrap();
    assert_eq!(g.history()[0].mv.to_string(), "f6&f6d5:oo@e4-");
    let p = g.position();
    assert_eq!(p.group(Diagonal::Minus).len(), 2);
    assert!(
        p.pairs()
            .iter()
            .all(|q| q.diagonal == Some(Diagonal::Minus))
    );
    // Unequal marks may not join an equal superposition (8.3 step 1).
    let e = game(FIG8).check_move(&mv("f6&f6d5:op@e4")).unwrap_err();
    assert!(e.to_string().contains("same type"), "{e}");
}

/// Schools paper Fig. 9-10: the bishop joins from c4; the rook on f4 attempts to capture the
/// knight on f6; Black rolls a 4 ("red"): knight on f6, rook on e4, all three pairs collapse
/// on that one roll.
#[test]
fn fig_9_10_tandem_collapse() {
    let mut g = game(FIG8);
    g.play_with_rolls(&mv("f6&f6d5:oo@e4"), &[]).unwrap();
    g.play_with_rolls(&mv("e2&c4e2:oo@d5"), &[]).unwrap();
    assert_eq!(g.position().group(Diagonal::Minus).len(), 3);
    let group = g.position().group(Diagonal::Minus);
    let outs = group_outcomes(g.position(), &group, g.rules());
    assert_eq!(outs.len(), 2);
    assert!(outs.iter().all(|o| (o.probability - 0.5).abs() < 1e-12));
    // Fig. 9 right: Black's rook on a4 may not attempt to capture the bishop on c4 (and e2):
    // the collapse to "blue" would expose Black's king to the rook on f4.
    let e = g.check_move(&mv("a4c4")).unwrap_err();
    assert!(e.to_string().contains("check"), "{e}");
    // Fig. 10 with all three pairs (after a quiet Black move): one roll by Black collapses
    // the whole group. A 4 ("red"): knight f6, rook e4, bishop c4; the capture fails.
    let mut three = g.clone();
    three.play_with_rolls(&mv("f8g8"), &[]).unwrap();
    let mut red = three.clone();
    let out = red.play_with_rolls(&mv("f4f6"), &[4]).unwrap();
    assert_eq!(out.rolls.len(), 1);
    assert_eq!(out.rolls[0].player, qchess_board::Color::Black);
    assert_eq!(out.collapses.len(), 3);
    assert!(out.collapses.iter().all(|c| c.mark == Mark::Red));
    assert_eq!(out.captured, None);
    assert_eq!(
        red.position().to_string(),
        "6k1/8/5n2/8/r1B1R3/8/8/7K b - - 0 3"
    );
    // A 3 ("blue"): knight d5, bishop e2, and the rook collapses to f4, the half that moved:
    // it stands on f6, now empty.
    let mut blue = three.clone();
    let out = blue.play_with_rolls(&mv("f4f6"), &[3]).unwrap();
    assert!(out.collapses.iter().all(|c| c.mark == Mark::Blue));
    assert_eq!(out.captured, None);
    assert_eq!(
        blue.position().to_string(),
        "6k1/8/5R2/3n4/r7/8/4B3/7K b - - 0 3"
    );
    // Fig. 10 (White to move in the Fig. 8 right position): the rook on f4 attempts to
    // capture the knight on f6; one roll, by Black, collapses the whole group.
    let mut g = game(FIG8);
    g.play_with_rolls(&mv("f6&f6d5:oo@e4"), &[]).unwrap();
    g.play_with_rolls(&mv("f8g8"), &[]).unwrap_err(); // Black has just moved: White to move
    let out = g.play_with_rolls(&mv("f4f6"), &[4]).unwrap();
    assert_eq!(out.rolls.len(), 1);
    assert_eq!(out.rolls[0].player, qchess_board::Color::Black);
    assert_eq!(out.captured, None);
    let p = g.position();
    assert_eq!(p.piece_at(sq("f6")).map(|x| x.fen_char()), Some('n'));
    assert_eq!(p.piece_at(sq("e4")).map(|x| x.fen_char()), Some('R'));
    assert!(p.pairs().is_empty());
    assert!(p.occupant(sq("f4")).is_none() && p.occupant(sq("d5")).is_none());
}

/// Schools paper Fig. 11: the king on e5 is in check from the queen's half on e4; entangling
/// the king with the queen's superposition leaves it attacked with zero chance, which is not
/// a check (8.7, 8.8).
#[test]
fn fig_11_king_escapes_check_by_entanglement() {
    let mut g = game("[Qbo|1]7/8/8/4k3/4[Qro|1]3/8/8/7K b - - 0 1");
    assert!(g.in_check());
    // Attempting to capture the half on e4 could leave the king in check from a8.
    assert!(g.check_move(&mv("e5e4")).is_err());
    let m = mv("e5&d6e5:oo@e4");
    assert!(g.legal_moves().contains(&mv("e5&d6e5:oo@e4-")));
    g.play_with_rolls(&m, &[]).unwrap();
    let p = g.position().clone();
    assert!(!in_check(&p, qchess_board::Color::Black, g.rules()));
    assert_eq!(capture_chance(&p, sq("e4"), sq("e5"), g.rules()), 0.0);
    // 8.9: White may attempt that capture, as it has zero chance of success.
    assert!(g.legal_moves().contains(&mv("e4e5")));
}

/// Schools paper Fig. 13 (5x6 board): the queen mates from c1 by moving to c3 and e3 at once.
/// The diagram is not in the text; this position makes the hint "blocking" literal: the
/// half on c3 blocks the rook on a3 from the e3 half, so a conventional Qe3 is not mate.
#[test]
fn fig_13_five_by_six_queen_mate() {
    let fen = "3rk/3p1/5/r4/5/2Q1K w - - 0 1";
    let start = Position::from_fen(fen, "5x6".parse().unwrap()).unwrap();
    let mut g = Game::from_position(Rules::default(), start.clone());
    assert_eq!(g.status(), Status::Ongoing);
    g.play_with_rolls(&mv("c1^c3e3:oo"), &[]).unwrap();
    assert!(g.in_check());
    assert!(g.legal_moves().is_empty());
    assert_eq!(
        g.status(),
        Status::Checkmate {
            winner: qchess_board::Color::White
        }
    );
    // A conventional queen on e3 is not mate: the rook takes it.
    let mut g = Game::from_position(Rules::default(), start);
    g.play_with_rolls(&mv("c1e3"), &[]).unwrap();
    assert!(g.in_check());
    assert!(g.legal_moves().contains(&mv("a3e3")));
    assert_eq!(g.status(), Status::Ongoing);
}

/// Schools paper Fig. 15-16: the rook tunnels through the pawn to e5 on a 6, and bounces
/// back on a 3.
#[test]
fn fig_15_16_tunnelling() {
    let fen = "4k3/8/8/8/4p3/8/4R3/4K3 w - - 0 1";
    let rules = Rules {
        tunnelling: true,
        ..Rules::default()
    };
    let mut g = Game::from_position(rules, fen.parse().unwrap());
    assert!(g.legal_moves().contains(&mv("e2~e5")));
    let out = g.play_with_rolls(&mv("e2~e5"), &[6]).unwrap();
    assert_eq!(out.tunnelled, Some(true));
    assert_eq!(
        g.position().to_string(),
        "4k3/8/8/4R3/4p3/8/8/4K3 b - - 1 1"
    );
    let mut g = Game::from_position(rules, fen.parse().unwrap());
    let out = g.play_with_rolls(&mv("e2~e5"), &[3]).unwrap();
    assert_eq!(out.tunnelled, Some(false));
    assert_eq!(
        g.position().to_string(),
        "4k3/8/8/8/4p3/8/4R3/4K3 b - - 1 1"
    );
    let outs = Game::from_position(rules, fen.parse().unwrap())
        .outcomes(&mv("e2~e5"))
        .unwrap();
    let through: f64 = outs
        .iter()
        .filter(|(_, _, o)| o.tunnelled == Some(true))
        .map(|(_, p, _)| p)
        .sum();
    assert!((through - 1.0 / 6.0).abs() < 1e-12);
    // Without the option, and through an indefinite piece, there is no tunnelling.
    let g = game(fen);
    assert!(g.check_move(&mv("e2~e5")).is_err());
    let g = Game::from_position(
        rules,
        "4k3/8/8/8/4[nro|1]3/8/4R3/4K1[nbo|1]1 w - - 0 1"
            .parse()
            .unwrap(),
    );
    let e = g.check_move(&mv("e2~e5")).unwrap_err();
    assert!(e.to_string().contains("conventional"), "{e}");
}
