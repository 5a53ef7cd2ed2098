//! `has_legal_move`, `legal_captures` and `is_capture` against the full legal move list, the
//! reference: on every position of random games (every board, many rule combinations, moves
//! biased towards captures so that games reach mates, stalemates and bare endgames),
//! `has_legal_move` is `!legal_moves(..).is_empty()` and `legal_captures` is the full list
//! filtered by a capture test written here from the rules (a step onto an opponent's piece
//! or half, or a pawn's diagonal step onto the en passant square), order included.

use qchess_board::PieceKind;
use qchess_niels::{
    Game, Move, Position, RULE_NAMES, Rules, Status, has_legal_move, is_capture, legal_captures,
    legal_moves,
};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

fn rules_from_mask(mask: u16) -> Rules {
    let names: Vec<&str> = RULE_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    Rules::parse_list(&names.join(",")).unwrap()
}

/// The reference capture test, from the rules alone (not from the crate's generator).
fn captures_by_rule(pos: &Position, mv: &Move) -> bool {
    let Move::Step { from, to, .. } = *mv else {
        return false;
    };
    let side = pos.side_to_move();
    let Some(piece) = pos.piece_at(from) else {
        return false;
    };
    let onto_opponent = pos.piece_at(to).is_some_and(|v| v.color != side);
    let en_passant =
        piece.kind == PieceKind::Pawn && pos.en_passant() == Some(to) && from.file() != to.file();
    onto_opponent || en_passant
}

/// Compares the queries with the reference on `pos`; returns (legal moves, captures).
fn check(pos: &Position, rules: &Rules) -> (usize, usize) {
    let all = legal_moves(pos, rules);
    assert_eq!(has_legal_move(pos, rules), !all.is_empty(), "{pos}");
    let expected: Vec<Move> = all
        .iter()
        .copied()
        .filter(|m| captures_by_rule(pos, m))
        .collect();
    assert_eq!(legal_captures(pos, rules), expected, "{pos}");
    for m in &all {
        assert_eq!(is_capture(pos, m), captures_by_rule(pos, m), "{m} in {pos}");
    }
    (all.len(), expected.len())
}

#[derive(Default)]
struct Seen {
    positions: usize,
    no_move: usize,
    with_captures: usize,
    en_passant: usize,
    must_move: usize,
}

fn walk(board: &str, rules: Rules, seed: u64, plies: usize, seen: &mut Seen) {
    let mut game = Game::new(rules, board.parse().unwrap()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..plies {
        let pos = game.position().clone();
        let (n, caps) = check(&pos, &rules);
        // The game's own queries agree with its list.
        let listed = game.legal_moves();
        assert_eq!(game.has_legal_move(), !listed.is_empty(), "{pos}");
        let game_caps: Vec<Move> = listed
            .iter()
            .copied()
            .filter(|m| captures_by_rule(&pos, m))
            .collect();
        assert_eq!(game.legal_captures(), game_caps, "{pos}");
        seen.positions += 1;
        seen.no_move += usize::from(n == 0);
        seen.with_captures += usize::from(caps > 0);
        seen.en_passant += usize::from(pos.en_passant().is_some());
        seen.must_move += usize::from(pos.must_move().is_some());
        if game.status() != Status::Ongoing {
            break;
        }
        let captures = game.legal_captures();
        let mv = if !captures.is_empty() && rng.random_bool(0.6) {
            *captures.choose(&mut rng).unwrap()
        } else {
            *listed.choose(&mut rng).unwrap()
        };
        game.play(&mv, &mut rng).unwrap();
    }
}

#[test]
fn queries_match_the_full_list_on_random_games() {
    let mut seen = Seen::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    for board in ["4x4", "4x5", "4x6", "5x6"] {
        for _ in 0..24 {
            let mask: u16 = rng.random_range(0..512);
            let seed: u64 = rng.random();
            walk(board, rules_from_mask(mask), seed, 80, &mut seen);
        }
    }
    for (mask, seed) in [
        (0u16, 1u64),
        (0, 2),
        (1 << 4, 3),
        (1 << 7 | 1 << 6, 4),
        (1, 5),
    ] {
        walk("8x8", rules_from_mask(mask), seed, 60, &mut seen);
    }
    // The walk reached the cases that matter.
    assert!(seen.positions > 2000, "{} positions", seen.positions);
    assert!(
        seen.no_move >= 5,
        "{} positions without a move",
        seen.no_move
    );
    assert!(seen.with_captures > 300, "{}", seen.with_captures);
    assert!(seen.en_passant > 10, "{}", seen.en_passant);
    assert!(seen.must_move > 5, "{}", seen.must_move);
}

/// Mates, stalemates and the queen endgame that made the engine slow: the queries agree with
/// the full list there too.
#[test]
fn queries_match_the_full_list_on_set_positions() {
    let rules = Rules::default();
    for fen in [
        "6k1/6Q1/6K1/8/8/8/8/8 b - - 0 1",
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
        "4k3/8/8/3q4/8/8/8/R3K3 w - - 0 1",
        "4k3/8/8/3q4/8/8/8/R3K3 b - - 0 1",
        "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1",
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
    ] {
        let pos: Position = fen.parse().unwrap();
        check(&pos, &rules);
    }
    // Superposition, entanglement and the other non-step moves are never captures.
    let pos: Position = "4k3/8/8/3q4/8/8/8/R3K3 b - - 0 1".parse().unwrap();
    for m in legal_moves(&pos, &rules) {
        if !matches!(m, Move::Step { .. }) {
            assert!(!is_capture(&pos, &m));
        }
    }
}
