//! Rule options and the rules around the figures: flip, promotion, en passant, castling,
//! the two-group limit, end of game, and every variant of the papers.

use qchess_board::Color;
use qchess_niels::{
    DrawReason, Facings, Game, Mark, Move, NielsError, Position, Rules, Status, capture_chance,
    in_check,
};

fn mv(s: &str) -> Move {
    s.parse().unwrap()
}

fn sq(s: &str) -> qchess_board::Square {
    s.parse().unwrap()
}

fn game_with(rules: &str, fen: &str) -> Game {
    Game::from_position(
        Rules::parse_list(rules).unwrap(),
        fen.parse::<Position>().unwrap(),
    )
}

fn letter(g: &Game, s: &str) -> Option<char> {
    g.position().piece_at(sq(s)).map(|p| p.fen_char())
}

/// A white knight pair, red on c3 and blue on b1 (one knight move apart), equal.
const KNIGHT_PAIR: &str = "4k3/8/8/8/8/2[Nro|1]5/8/1[Nbo|1]2K3 w - - 0 1";

#[test]
fn flip_needs_a_real_difference() {
    // Equal and unentangled: inverting both marks changes nothing (rules-notes 8).
    let g = game_with("", KNIGHT_PAIR);
    assert!(g.check_move(&mv("f:c3")).is_err());
    // Unequal: the flip swaps 4/6 and 2/6.
    let mut g = game_with("", "4k3/8/8/8/8/2[Nro|1]5/8/1[Nbp|1]2K3 w - - 0 1");
    assert!(g.legal_moves().contains(&mv("f:c3")));
    assert!(g.check_move(&mv("f:b1")).is_ok()); // either half names the pair
    g.play_with_rolls(&mv("f:c3"), &[]).unwrap();
    let pair = &g.position().pairs()[0];
    assert_eq!(pair.facings, Facings::BLUE_AHEAD);
    assert!((pair.facings.probability(Mark::Red, g.rules()) - 2.0 / 6.0).abs() < 1e-12);
    // Halves not one move apart: no flip.
    let g = game_with("", "4k3/8/8/8/8/2[Nro|1]5/8/[Nbp|1]3K3 w - - 0 1");
    assert!(g.check_move(&mv("f:c3")).is_err());
    // Simplified Game: no flips at all; the red mark faces the opponent.
    let g = game_with(
        "simplified",
        "4k3/8/8/8/8/2[Nro|1]5/8/1[Nbp|1]2K3 w - - 0 1",
    );
    assert!(
        g.check_move(&mv("f:c3"))
            .unwrap_err()
            .to_string()
            .contains("Simplified")
    );
    let g = game_with("simplified", "4k3/8/8/8/8/8/8/1N2K3 w - - 0 1");
    assert!(g.check_move(&mv("b1^a3c3:po")).is_err());
    assert!(g.check_move(&mv("b1^a3c3:op")).is_ok());
}

#[test]
fn flip_of_an_entangled_pair_changes_the_correlation() {
    // Fig. 8 right: rook pair (e4, f4) and knight pair (f6, d5) entangled on -45.
    let mut g = game_with("", "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1");
    g.play_with_rolls(&mv("f6&f6d5:oo@e4"), &[]).unwrap();
    assert!(g.legal_moves().contains(&mv("f:e4")));
    let group = g.position().group(qchess_niels::Diagonal::Minus);
    let squares = |g: &Game| -> Vec<Vec<String>> {
        qchess_niels::group_outcomes(g.position(), &group, g.rules())
            .iter()
            .map(|o| {
                o.marks
                    .iter()
                    .map(|(id, m)| g.position().pair(*id).unwrap().square(*m).to_string())
                    .collect()
            })
            .collect()
    };
    assert_eq!(squares(&g), [["f4", "d5"], ["e4", "f6"]]);
    g.play_with_rolls(&mv("f:e4"), &[]).unwrap();
    // Now the rook on f4 goes with the knight on f6, and e4 with d5.
    assert_eq!(squares(&g), [["e4", "d5"], ["f4", "f6"]]);
    // An even roll (4): rook to blue (f4), knight to red (f6).
    g.play_with_rolls(&mv("a4a5"), &[]).unwrap();
    g.play_with_rolls(&mv("h1g1"), &[]).unwrap();
    let out = g.play_with_rolls(&mv("d5f4"), &[4]).unwrap();
    assert_eq!(out.captured, None);
    assert_eq!((letter(&g, "f4"), letter(&g, "f6")), (Some('R'), Some('n')));
}

#[test]
fn hadamard_interference_not_a_coin_toss() {
    // H on an equal superposition: the red square with certainty.
    let g = game_with("hadamard", KNIGHT_PAIR);
    let outs = g.outcomes(&mv("h:c3")).unwrap();
    assert_eq!(outs.len(), 1);
    assert_eq!(outs[0].1, 1.0);
    let mut a = g.clone();
    a.play_with_rolls(&mv("h:b1"), &[]).unwrap();
    assert_eq!(letter(&a, "c3"), Some('N'));
    assert!(a.position().pairs().is_empty());
    // After a Z move on the blue half: still 1/2 - 1/2 to a dice collapse, but H now lands on
    // blue with certainty.
    let mut b = g.clone();
    b.play_with_rolls(&mv("z:b1"), &[]).unwrap();
    assert_eq!(
        b.position().pairs()[0]
            .facings
            .probability(Mark::Red, b.rules()),
        0.5
    );
    b.play_with_rolls(&mv("e8d8"), &[]).unwrap();
    b.play_with_rolls(&mv("h:c3"), &[]).unwrap();
    assert_eq!(letter(&b, "b1"), Some('N'));
    assert_eq!(letter(&b, "c3"), None);
    // Z on the red half is the same state up to a global phase: blue again.
    let mut c = g.clone();
    c.play_with_rolls(&mv("z:c3"), &[]).unwrap();
    c.play_with_rolls(&mv("e8d8"), &[]).unwrap();
    c.play_with_rolls(&mv("h:c3"), &[]).unwrap();
    assert_eq!(letter(&c, "b1"), Some('N'));
    // Without the option there are no Z or Hadamard moves.
    let g = game_with("", KNIGHT_PAIR);
    assert!(g.check_move(&mv("h:c3")).is_err());
    assert!(g.check_move(&mv("z:b1")).is_err());
    // Halves not one move apart: no Hadamard move; Z is still allowed.
    let g = game_with("hadamard", "4k3/8/8/8/8/2[Nro|1]5/8/[Nbo|1]3K3 w - - 0 1");
    assert!(g.check_move(&mv("h:c3")).is_err());
    assert!(g.check_move(&mv("z:a1")).is_ok());
}

#[test]
fn hadamard_plus_acts_on_entangled_pairs_and_groups() {
    let fen = "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1";
    let entangle = |rules: &str| {
        let mut g = game_with(rules, fen);
        g.play_with_rolls(&mv("f6&f6d5:oo@e4"), &[]).unwrap();
        g
    };
    // Hadamard Game: Z and H only on unentangled pairs.
    let g = entangle("hadamard");
    assert!(g.check_move(&mv("z:f4")).is_err());
    assert!(g.check_move(&mv("h:e4")).is_err());
    // Hadamard+: H on the group collapses every pair at once, deterministically.
    let mut g = entangle("hadamard-plus");
    g.play_with_rolls(&mv("h:e4"), &[]).unwrap();
    assert_eq!((letter(&g, "e4"), letter(&g, "f6")), (Some('R'), Some('n')));
    assert!(g.position().pairs().is_empty());
    // A Z move on the entangled rook first flips the relative phase: the other outcome.
    let mut g = entangle("hadamard-plus");
    g.play_with_rolls(&mv("z:f4"), &[]).unwrap();
    g.play_with_rolls(&mv("a4a5"), &[]).unwrap();
    g.play_with_rolls(&mv("h:e4"), &[]).unwrap();
    assert_eq!((letter(&g, "f4"), letter(&g, "d5")), (Some('R'), Some('n')));
}

#[test]
fn deterministic_game_captures_by_hadamard() {
    // Fig. 4 with the Deterministic Game: an equal rook pair goes to red (d4): no capture.
    let mut g = game_with(
        "deterministic",
        "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1",
    );
    let out = g.play_with_rolls(&mv("f5e6"), &[]).unwrap();
    assert!(out.rolls.is_empty());
    assert_eq!(out.captured, None);
    assert_eq!(letter(&g, "d4"), Some('r'));
    // With phase (blue facing its owner) it goes to blue (e6) and is captured.
    let mut g = game_with(
        "deterministic",
        "4k3/8/4[rbp|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1",
    );
    let out = g.play_with_rolls(&mv("f5e6"), &[]).unwrap();
    assert_eq!(out.captured.map(|p| p.fen_char()), Some('r'));
    // Forced rolls are refused: nothing is rolled in this game.
    let mut g = game_with(
        "deterministic",
        "4k3/8/4[rbp|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1",
    );
    assert!(matches!(
        g.play_with_rolls(&mv("f5e6"), &[3]),
        Err(NielsError::Rolls(_))
    ));
    // Check is deterministic too: the knight half on e5 (equal pair, red on d4) never captures.
    let p: Position = "4k3/8/8/4[nbo|1]3/3[nro|1]2K1/8/8/8 w - - 0 1"
        .parse()
        .unwrap();
    assert!(in_check(&p, Color::White, &Rules::default()));
    assert!(!in_check(
        &p,
        Color::White,
        &Rules::parse_list("deterministic").unwrap()
    ));
    assert_eq!(
        capture_chance(
            &p,
            sq("e5"),
            sq("g4"),
            &Rules::parse_list("deterministic").unwrap()
        ),
        0.0
    );
}

#[test]
fn no_box_attacker_collapses_first() {
    let fen = "4k3/8/[nbo|1]3[nro|1]3/8/4[Rro|1]3/8/8/K6[Rbo|1] w - - 0 1";
    // Odd roll: the rook collapses to h1 (blue); aborted, the knight stays indefinite.
    let mut g = game_with("no-box", fen);
    let out = g.play_with_rolls(&mv("e4e6"), &[3]).unwrap();
    assert!(out.aborted);
    assert_eq!(out.rolls.len(), 1);
    assert_eq!(out.rolls[0].player, Color::White);
    assert_eq!(letter(&g, "h1"), Some('R'));
    assert_eq!(g.position().pairs().len(), 1);
    // Even: the rook is on e4, then Black rolls for the knight: 4 = red = e6, captured.
    let mut g = game_with("no-box", fen);
    let out = g.play_with_rolls(&mv("e4e6"), &[4, 4]).unwrap();
    assert_eq!(
        out.rolls.iter().map(|r| r.player).collect::<Vec<_>>(),
        [Color::White, Color::Black]
    );
    assert_eq!(out.captured.map(|p| p.fen_char()), Some('n'));
    // The boxed game: Black (the piece attacked) rolls first.
    let mut g = game_with("", fen);
    let out = g.play_with_rolls(&mv("e4e6"), &[4, 4]).unwrap();
    assert_eq!(
        out.rolls.iter().map(|r| r.player).collect::<Vec<_>>(),
        [Color::Black, Color::White]
    );
    assert_eq!(out.captured.map(|p| p.fen_char()), Some('n'));
    // Too few or too many rolls are errors that change nothing.
    let mut g = game_with("", fen);
    let before = g.position().clone();
    assert!(matches!(
        g.play_with_rolls(&mv("e4e6"), &[4]),
        Err(NielsError::Rolls(_))
    ));
    assert!(matches!(
        g.play_with_rolls(&mv("e4e6"), &[4, 4, 4]),
        Err(NielsError::Rolls(_))
    ));
    assert!(matches!(
        g.play_with_rolls(&mv("e4e6"), &[0, 4]),
        Err(NielsError::Rolls(_))
    ));
    assert_eq!(g.position(), &before);
    assert!(g.history().is_empty());
}

#[test]
fn competitive_rule_2_stay_only() {
    let g = game_with("stay-only", "4k3/8/8/8/8/8/8/1N2K3 w - - 0 1");
    assert!(
        g.check_move(&mv("b1^a3c3:oo"))
            .unwrap_err()
            .to_string()
            .contains("rule 2")
    );
    assert!(g.check_move(&mv("b1^a3b1:oo")).is_ok());
}

#[test]
fn competitive_rule_3_remote_collapse() {
    let mut g = game_with("remote-collapse", KNIGHT_PAIR);
    let out = g.play_with_rolls(&mv("c:c3"), &[4]).unwrap();
    assert_eq!(out.rolls[0].player, Color::White);
    assert_eq!(g.position().must_move(), Some(sq("c3")));
    assert_eq!(g.position().side_to_move(), Color::White);
    assert!(g.check_move(&mv("e1e2")).is_err());
    assert!(g.legal_moves().iter().all(|m| m.from_square() == sq("c3")));
    g.play_with_rolls(&mv("c3d5"), &[]).unwrap();
    assert_eq!(g.position().side_to_move(), Color::Black);
    let mut g = game_with("remote-collapse", KNIGHT_PAIR);
    g.play_with_rolls(&mv("c:c3"), &[3]).unwrap();
    assert_eq!(g.position().must_move(), Some(sq("b1")));
    // The pending move survives a record round trip.
    let replayed = g
        .record()
        .to_string()
        .parse::<qchess_niels::GameRecord>()
        .unwrap()
        .replay()
        .unwrap();
    assert_eq!(replayed.position(), g.position());
    assert!(game_with("", KNIGHT_PAIR).check_move(&mv("c:c3")).is_err());
}

#[test]
fn indefinite_pawns_rule_7_3_promotion_and_en_passant() {
    let g = game_with("", "4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
    assert!(g.check_move(&mv("e2^e3e4:oo")).is_err()); // 7.3: red must be the farther half
    assert!(g.check_move(&mv("e2^e4e3:oo")).is_ok());
    // Superposition two-step, then en passant (7.9): White rolls for the pawn pair.
    let mut a = g.clone();
    a.play_with_rolls(&mv("e2^e4e2:oo"), &[]).unwrap();
    assert_eq!(a.position().en_passant(), Some(sq("e3")));
    let mut hit = a.clone();
    let out = hit.play_with_rolls(&mv("d4e3"), &[2]).unwrap();
    assert_eq!(out.rolls[0].player, Color::White);
    assert_eq!(out.captured.map(|p| p.fen_char()), Some('P'));
    assert_eq!(
        hit.position().to_string(),
        "4k3/8/8/8/8/4p3/8/4K3 w - - 0 2"
    );
    let mut miss = a.clone();
    let out = miss.play_with_rolls(&mv("d4e3"), &[1]).unwrap();
    assert_eq!(out.captured, None);
    assert_eq!(
        miss.position().to_string(),
        "4k3/8/8/8/8/4p3/4P3/4K3 w - - 0 2"
    );
    // 7.8: an indefinite pawn reaching the last rank makes the whole pair a queen pair.
    let mut p = game_with("", "k7/4P3/8/8/8/8/8/4K3 w - - 0 1");
    assert!(p.check_move(&mv("e7^e8e7:oo")).is_err());
    p.play_with_rolls(&mv("e7^e8e7:op=q"), &[]).unwrap();
    let pair = &p.position().pairs()[0];
    assert_eq!(
        (pair.piece.fen_char(), pair.red, pair.blue, pair.facings),
        ('Q', sq("e8"), sq("e7"), Facings::RED_AHEAD)
    );
}

#[test]
fn castling_conditions_6_2_4_and_6_2_5() {
    let g = game_with("", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    assert!(g.check_move(&mv("e1g1")).is_ok());
    assert!(g.check_move(&mv("e1c1")).is_ok());
    // An indefinite rook cannot castle.
    let g = game_with("", "4k3/8/8/8/8/7[Rro|1]/8/4K2[Rbo|1] w K - 0 1");
    assert!(g.check_move(&mv("e1g1")).is_err());
    // The square the king crosses is attacked by an indefinite knight.
    let g = game_with("", "4k3/8/8/8/8/4[nro|1]3/8/[nbo|1]3K2R w K - 0 1");
    assert!(
        g.check_move(&mv("e1g1"))
            .unwrap_err()
            .to_string()
            .contains("f1")
    );
    // A superposition move of the rook forfeits the right.
    let mut g = game_with("", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    g.play_with_rolls(&mv("h1^h3h1:oo"), &[]).unwrap();
    assert!(!g.position().castling().white_king && g.position().castling().white_queen);
}

#[test]
fn at_most_two_entangled_groups() {
    let fen = "4k2[nbo-1]/7[nro-1]/K4n2/3[Qbo|1]4/3[Qro|1]4/[Rbo-1]7/[Rro-1]2[Bbo+1]4/2[Bro+1]3[rbo+1][rro+1] b - - 0 1";
    let mut g = game_with("", fen);
    let e = g.check_move(&mv("f6&f6e4:oo@d5")).unwrap_err();
    assert!(e.to_string().contains("free diagonal"), "{e}");
    // Joining an existing group is still allowed (8.3.3).
    g.play_with_rolls(&mv("f6&f6e4:oo@d2"), &[]).unwrap();
    assert_eq!(g.history()[0].mv.to_string(), "f6&f6e4:oo@d2+");
    assert_eq!(g.position().group(qchess_niels::Diagonal::Plus).len(), 3);
    let e = game_with("", fen)
        .check_move(&mv("f6&f6e4:oo@d2-"))
        .unwrap_err();
    assert!(e.to_string().contains("entangled on the +"), "{e}");
}

#[test]
fn end_of_game() {
    let g = game_with("", "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
    assert_eq!(
        g.status(),
        Status::Checkmate {
            winner: Color::White
        }
    );
    assert_eq!(g.status().result(), "1-0");
    let g = game_with("", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    assert_eq!(g.status(), Status::Draw(DrawReason::Stalemate));
    let g = game_with("", "7k/8/6K1/8/8/8/8/8 b - - 0 1");
    assert_eq!(g.status(), Status::Draw(DrawReason::InsufficientMaterial));
    let g = game_with("", "7k/8/6K1/8/8/8/8/7R b - - 100 80");
    assert_eq!(g.status(), Status::Draw(DrawReason::FiftyMoves));
    // Threefold repetition by moving knights back and forth.
    let mut g = Game::new(Rules::default(), "8x8".parse().unwrap()).unwrap();
    for m in [
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
    ] {
        assert_eq!(g.status(), Status::Ongoing);
        g.play_with_rolls(&mv(m), &[]).unwrap();
    }
    assert_eq!(g.status(), Status::Draw(DrawReason::Repetition));
    assert!(matches!(
        g.play_with_rolls(&mv("e2e4"), &[]),
        Err(NielsError::GameOver(_))
    ));
}

#[test]
fn indefinite_checkmate_section_5() {
    // The king on h8 is attacked by the knight half on f7 with chance 1/2 and cannot escape;
    // entangling the rook with the knight (g8&g8f8) leaves a 1/2 chance: an indefinite mate.
    let g = game_with("", "6rk/5[Nro|1]pp/8/8/8/8/8/[Nbo|1]1K5 b - - 0 1");
    assert!(g.in_check());
    assert_eq!(
        g.status(),
        Status::Checkmate {
            winner: Color::White
        }
    );
}

#[test]
fn en_passant_after_an_entanglement_two_step_8_5() {
    let fen = "[nbo|1]3k3/8/8/3[nro|1]4/3p4/8/4P3/4K3 w - - 0 1";
    let mut g = game_with("", fen);
    g.play_with_rolls(&mv("e2&e4e2:oo@d5"), &[]).unwrap();
    assert_eq!(g.position().en_passant(), Some(sq("e3")));
    // White rolls for the pawn's group, which also holds Black's knight: 4 = red for both.
    let mut hit = g.clone();
    let out = hit.play_with_rolls(&mv("d4e3"), &[4]).unwrap();
    assert_eq!(out.captured.map(|p| p.fen_char()), Some('P'));
    assert_eq!(
        hit.position().to_string(),
        "4k3/8/8/3n4/8/4p3/8/4K3 w - - 0 2"
    );
    let mut miss = g.clone();
    let out = miss.play_with_rolls(&mv("d4e3"), &[3]).unwrap();
    assert_eq!(out.captured, None);
    assert_eq!(
        miss.position().to_string(),
        "n3k3/8/8/8/8/4p3/4P3/4K3 w - - 0 2"
    );
}

#[test]
fn promotion_after_a_failed_attempted_capture() {
    // The knight half on d8 collapses to a5 (Black rolls 3: blue); the pawn stands on d8
    // conventional and promotes (rules-notes 8).
    let mut g = game_with("", "3[nro|1]k3/4P3/8/[nbo|1]7/8/8/8/4K3 w - - 0 1");
    let out = g.play_with_rolls(&mv("e7d8=q"), &[3]).unwrap();
    assert_eq!(out.captured, None);
    assert_eq!(g.position().to_string(), "3Qk3/8/8/n7/8/8/8/4K3 b - - 0 1");
    assert!(g.in_check());
}

#[test]
fn halves_block_lines_6_2_2() {
    // A pinned rook may not leave the e-file, but a move-and-stay keeps a half on e2.
    let g = game_with("", "4r1k1/8/8/8/8/8/4R3/4K3 w - - 0 1");
    assert!(g.check_move(&mv("e2f2")).is_err());
    assert!(g.check_move(&mv("e2^f2e2:oo")).is_ok());
    // Two squares off the file would open it with certainty: illegal.
    assert!(g.check_move(&mv("e2^f2g2:oo")).is_err());
    // A half can block a check.
    let g = game_with("", "4r1k1/8/8/8/8/8/8/4K1N1 w - - 0 1");
    assert!(g.in_check());
    assert!(g.check_move(&mv("g1^e2h3:oo")).is_ok());
    assert!(g.check_move(&mv("g1^f3h3:oo")).is_err());
}

#[test]
fn undo_restores_the_previous_position() {
    let mut g = game_with("", "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1");
    let before = g.position().clone();
    g.play_with_rolls(&mv("f5e6"), &[3]).unwrap();
    let undone = g.undo().unwrap();
    assert_eq!(undone.mv, mv("f5e6"));
    assert_eq!(g.position(), &before);
    assert!(g.undo().is_none());
}

#[test]
fn hadamard_game_flip_changes_the_hadamard_result() {
    // rules-notes 8: flipping an unentangled equal pair makes a real difference in the
    // Hadamard Game, because a Hadamard move then lands on blue instead of red.
    let mut g = game_with("hadamard", KNIGHT_PAIR);
    assert!(g.legal_moves().contains(&mv("f:c3")));
    g.play_with_rolls(&mv("f:c3"), &[]).unwrap();
    g.play_with_rolls(&mv("e8d8"), &[]).unwrap();
    g.play_with_rolls(&mv("h:c3"), &[]).unwrap();
    assert_eq!(letter(&g, "b1"), Some('N'));
    // In the unitary reading the flip is a global phase: no real difference, not allowed.
    let g = game_with("hadamard,unitary-hadamard", KNIGHT_PAIR);
    assert!(g.check_move(&mv("f:c3")).is_err());
}

/// FIDE's dead positions K+N v K, K+B v K and K+B v K+B (bishops on one colour) are not dead
/// in Niel's Chess: from each, with every piece conventional, a short sequence of legal moves
/// reaches an (indefinite) checkmate, so FIDE 5.2.2 does not end the game there
/// (docs/niels.md, reading 17). Only bare kings are insufficient material.
#[test]
fn fide_dead_positions_are_alive_here() {
    let cases: [(&str, &[&str]); 3] = [
        // K+N v K: Black splits its king (a8, a7); the knight's halves on c6 (check on the
        // a7 half) and b8 (guarding a6); the white king covers b6, b7 and b8.
        (
            "kN6/2K5/8/8/8/8/8/8 b - - 0 1",
            &["a8^a7a8:oo", "b8^c6b8:oo"],
        ),
        // K+B v K: Black splits its king (a8, a7); the bishop's halves on d5 (check on the
        // a8 half) and c8 (guarding a6); the white king covers b6, b7 and b8.
        (
            "k7/2K5/4B3/8/8/8/8/8 b - - 0 1",
            &["a8^a7a8:oo", "e6^c8d5:oo"],
        ),
        // K+B v K+B, both bishops on light squares: the same mate; Black's bishop on h7
        // cannot interpose on b7 or c6, and entangling with the bishop pair does not lower
        // the chance of capturing the king's half to zero.
        (
            "k7/2K4b/4B3/8/8/8/8/8 b - - 0 1",
            &["a8^a7a8:oo", "e6^c8d5:oo"],
        ),
    ];
    for (fen, line) in cases {
        let mut g = game_with("", fen);
        assert!(g.position().pairs().is_empty());
        assert_eq!(g.status(), Status::Ongoing, "{fen}");
        for m in line {
            assert_eq!(g.status(), Status::Ongoing, "{fen} before {m}");
            g.play_with_rolls(&mv(m), &[]).unwrap();
        }
        assert!(g.in_check(), "{fen}");
        assert_eq!(
            g.status(),
            Status::Checkmate {
                winner: Color::White
            },
            "{fen}: {}",
            g.position()
        );
    }
    // A conventional king is harder to mate: with the knight's halves on c7 (check) and a6
    // (guarding b8) it escapes as in Fig. 11, entangling with the knight so that it is on b8
    // exactly when the knight is on c7 (and on a8 when the knight is on a6).
    let mut g = game_with("", "k7/8/NK6/8/8/8/8/8 w - - 0 1");
    g.play_with_rolls(&mv("a6^c7a6:oo"), &[]).unwrap();
    assert!(g.in_check());
    assert_eq!(g.status(), Status::Ongoing);
    assert!(
        g.legal_moves()
            .iter()
            .all(|m| matches!(m, Move::Entanglement { .. }))
    );
    // Bare kings, one of them indefinite, stay a draw.
    let g = game_with("", "[kro|1]7/[kbo|1]7/2K5/8/8/8/8/8 w - - 0 1");
    assert_eq!(g.status(), Status::Draw(DrawReason::InsufficientMaterial));
}

/// Interference worked by hand (Appendix D/E): the amplitudes of the two outcomes, the 2x2
/// Hadamard matrix applied to them, and the move's result where the interfered amplitude is
/// 1 (and the other 0). Probabilities alone (1/2, 1/2 in every case) could not tell the cases
/// apart.
#[test]
fn hadamard_interference_by_hand() {
    use std::f64::consts::FRAC_1_SQRT_2 as S;
    // H (a_X, a_Y) = ((a_X + a_Y)/sqrt 2, (a_X - a_Y)/sqrt 2).
    let h = |x: f64, y: f64| ((x + y) * S, (x - y) * S);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    // Case 1: one knight pair, red c3 / blue b1, both marks facing the opponent:
    // |psi> = (+|c3> + |b1>)/sqrt 2 -> H -> |c3>. After a Z move on the blue half:
    // (+|c3> - |b1>)/sqrt 2 -> H -> |b1>.
    for (z, amps, lands) in [(None, (S, S), "c3"), (Some("z:b1"), (S, -S), "b1")] {
        let mut g = game_with("hadamard", KNIGHT_PAIR);
        if let Some(z) = z {
            g.play_with_rolls(&mv(z), &[]).unwrap();
            g.play_with_rolls(&mv("e8d8"), &[]).unwrap();
        }
        let pair = g.position().pairs()[0].clone();
        let outs = qchess_niels::group_outcomes(g.position(), &[pair.id], g.rules());
        let amp_of = |m: Mark| {
            outs.iter()
                .find(|o| o.marks == [(pair.id, m)])
                .unwrap()
                .amplitude
        };
        let (x, y) = (amp_of(Mark::Red), amp_of(Mark::Blue));
        assert!(close(x, amps.0) && close(y, amps.1), "{x} {y}");
        let (hx, hy) = h(x, y);
        let expect = if lands == "c3" {
            (1.0, 0.0)
        } else {
            (0.0, 1.0)
        };
        assert!(close(hx.abs(), expect.0) && close(hy.abs(), expect.1));
        g.play_with_rolls(&mv("h:c3"), &[]).unwrap();
        assert_eq!(letter(&g, lands), Some('N'));
    }
    // Case 2 (Hadamard+): Fig. 8's group, rook e4/f4 and knight f6/d5, all marks facing the
    // opponent. X = (rook e4, knight f6), Y = (rook f4, knight d5): amplitudes (+1/sqrt 2,
    // +1/sqrt 2) -> H -> X. A Z move on the rook's blue half (f4) makes Y's sign negative:
    // (+1/sqrt 2, -1/sqrt 2) -> H -> Y.
    for (z, amps, rook, knight) in [
        (None, (S, S), "e4", "f6"),
        (Some("z:f4"), (S, -S), "f4", "d5"),
    ] {
        let mut g = game_with(
            "hadamard-plus",
            "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1",
        );
        g.play_with_rolls(&mv("f6&f6d5:oo@e4"), &[]).unwrap();
        if let Some(z) = z {
            g.play_with_rolls(&mv(z), &[]).unwrap();
            g.play_with_rolls(&mv("a4a5"), &[]).unwrap();
        }
        let group = g.position().group(qchess_niels::Diagonal::Minus);
        let outs = qchess_niels::group_outcomes(g.position(), &group, g.rules());
        assert_eq!(outs.len(), 2);
        let amp_with_rook_on = |s: &str| {
            outs.iter()
                .find(|o| {
                    o.marks
                        .iter()
                        .any(|(id, m)| g.position().pair(*id).unwrap().square(*m) == sq(s))
                })
                .unwrap()
                .amplitude
        };
        let (x, y) = (amp_with_rook_on("e4"), amp_with_rook_on("f4"));
        assert!(close(x, amps.0) && close(y, amps.1), "{x} {y}");
        let (hx, hy) = h(x, y);
        let expect = if rook == "e4" { (1.0, 0.0) } else { (0.0, 1.0) };
        assert!(close(hx.abs(), expect.0) && close(hy.abs(), expect.1));
        g.play_with_rolls(&mv("h:e4"), &[]).unwrap();
        assert_eq!(
            (letter(&g, rook), letter(&g, knight)),
            (Some('R'), Some('n'))
        );
        assert!(g.position().pairs().is_empty());
    }
}
