//! Property tests over positions reached by random play (seeded ChaCha8) from the start
//! position of every geometry and from the published perft positions:
//! make/unmake restores position and hash; the incremental hash equals the hash from scratch;
//! FEN print/parse round-trips; legal moves are exactly the pseudo-legal moves that do not
//! leave the king attacked (plus FIDE's castling conditions); bulk counting agrees with the
//! move list; refused moves change nothing.

use proptest::prelude::*;
use qchess_board::{Color, Geometry, Move, PieceKind, Position, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

const FENS: [&str; 5] = [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
];

/// A start: index < 25 picks a geometry's start position, the rest a published FEN.
fn start(index: usize) -> Position {
    if index < 25 {
        let g = Geometry::new(4 + (index / 5) as u8, 4 + (index % 5) as u8).unwrap();
        Position::startpos_for(g)
    } else {
        FENS[(index - 25) % FENS.len()].parse().unwrap()
    }
}

/// Random legal (or pseudo-legal) play for up to `plies` plies; every position on the way.
fn walk(index: usize, seed: u64, plies: usize, pseudo: bool) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pos = start(index);
    let mut trail = vec![pos];
    for _ in 0..plies {
        let moves = if pseudo {
            pos.pseudo_legal_moves()
        } else {
            pos.legal_moves()
        };
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.random_range(0..moves.len())];
        if pseudo {
            pos.play_pseudo_legal(mv).unwrap();
            if Color::ALL.iter().any(|&c| pos.king_square(c).is_none()) {
                break; // a king was captured: the game is over
            }
        } else {
            pos.play(mv).unwrap();
        }
        assert_eq!(
            pos.hash(),
            pos.compute_hash(),
            "hash after {mv} in {}",
            pos.to_fen()
        );
        trail.push(pos);
    }
    trail
}

fn our_king_safe_after(pos: &Position, mv: Move) -> bool {
    let us = pos.side_to_move();
    let mut child = *pos;
    child.play_unchecked(mv);
    match child.king_square(us) {
        Some(k) => !child.is_attacked(k, !us, child.occupied()),
        None => true,
    }
}

fn check_position(pos: &Position, relaxed: bool) {
    let g = pos.geometry();
    // FEN round trip (the whole value, caches and hash included).
    let fen = pos.to_fen();
    let back = if relaxed {
        Position::from_fen_relaxed(&fen, g).unwrap()
    } else {
        Position::from_fen(&fen, g).unwrap()
    };
    assert_eq!(&back, pos, "{fen}");
    assert_eq!(back.to_fen(), fen);

    let pseudo = pos.pseudo_legal_moves();
    let legal: BTreeSet<Move> = pos.legal_moves().into_iter().collect();
    assert_eq!(
        legal.len(),
        pos.legal_moves().len(),
        "duplicate legal moves in {fen}"
    );
    assert_eq!(pos.legal_move_count(), legal.len(), "bulk count in {fen}");

    let filtered: BTreeSet<Move> = pseudo
        .iter()
        .copied()
        .filter(|&m| our_king_safe_after(pos, m))
        .filter(|&m| !pos.is_castling(m) || pos.castling_path_safe(m))
        .collect();
    if pos.king_square(pos.side_to_move()).is_some() {
        assert_eq!(legal, filtered, "{fen}");
    }

    for &mv in &pseudo {
        // make / unmake restores everything, and the hash stays incremental-exact.
        let mut p = *pos;
        let undo = p.make(mv);
        assert_eq!(p.hash(), p.compute_hash(), "{mv} in {fen}");
        p.unmake(undo);
        assert_eq!(&p, pos, "unmake {mv} in {fen}");
        // Checked play refuses exactly the non-legal pseudo-legal moves, changing nothing.
        let mut q = *pos;
        assert_eq!(q.play(mv).is_ok(), legal.contains(&mv), "{mv} in {fen}");
        if !legal.contains(&mv) {
            assert_eq!(&q, pos);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn legal_play_properties(index in 0usize..30, seed: u64, plies in 0usize..80) {
        for pos in walk(index, seed, plies, false) {
            check_position(&pos, false);
        }
    }

    #[test]
    fn pseudo_legal_play_properties(index in 0usize..30, seed: u64, plies in 0usize..80) {
        for pos in walk(index, seed, plies, true) {
            check_position(&pos, true);
        }
    }

    #[test]
    fn arbitrary_moves_are_refused_without_change(
        index in 0usize..30,
        seed: u64,
        plies in 0usize..40,
        from in 0u8..64,
        to in 0u8..64,
        promo in 0usize..7,
    ) {
        let pos = *walk(index, seed, plies, false).last().unwrap();
        let promotion = PieceKind::from_index(promo);
        let mv = Move::new(Square::from_index(from).unwrap(), Square::from_index(to).unwrap(), promotion);
        let legal = pos.legal_moves().contains(&mv);
        let mut p = pos;
        prop_assert_eq!(p.play(mv).is_ok(), legal);
        if !legal {
            prop_assert_eq!(p, pos);
        }
        let pseudo = pos.pseudo_legal_moves().contains(&mv);
        let mut q = pos;
        prop_assert_eq!(q.play_pseudo_legal(mv).is_ok(), pseudo);
        if !pseudo {
            prop_assert_eq!(q, pos);
        }
    }
}
