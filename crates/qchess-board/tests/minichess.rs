//! Minichess: perft of every small-board start position, the bitboard legal generator against
//! the naive reference generator (pseudo-legal + king-attacked filter on a mailbox board), and
//! move-for-move agreement on every node of the first plies.

mod common;

use common::{Naive, to_move};
use qchess_board::{Geometry, Position, perft};

fn check_geometry(w: u8, h: u8, depth: u32) -> Vec<u64> {
    let g = Geometry::new(w, h).unwrap();
    let pos = Position::startpos_for(g);
    let naive = Naive::from_position(&pos);
    (1..=depth)
        .map(|d| {
            let expected = naive.perft(d);
            assert_eq!(perft(&pos, d, true), expected, "{g} depth {d} bulk");
            assert_eq!(perft(&pos, d, false), expected, "{g} depth {d} no-bulk");
            expected
        })
        .collect()
}

/// Same move lists at every node down to `depth`, not only the same counts.
fn same_moves(pos: &Position, naive: &Naive, depth: u32) {
    let mut ours = pos.legal_moves();
    let mut reference: Vec<_> = naive.legal_moves().into_iter().map(to_move).collect();
    ours.sort();
    reference.sort();
    assert_eq!(ours, reference, "{}", pos.to_fen());
    if depth > 1 {
        for m in naive.legal_moves() {
            let mut child = *pos;
            child.play(to_move(m)).unwrap();
            same_moves(&child, &naive.play(m), depth - 1);
        }
    }
}

#[test]
fn silverman_4x4() {
    let counts = check_geometry(4, 4, 6);
    // By hand: the pawns face each other, so White's only moves are the six pawn captures
    // (a2xb3, b2xa3, b2xc3, c2xb3, c2xd3, d2xc3).
    assert_eq!(counts[0], 6);
}

#[test]
fn microchess_4x5() {
    let counts = check_geometry(4, 5, 6);
    // By hand: rook a2, a3, a4xp; bishop a2, c2, d3; knight a2, b3, d3; pawn d3; king c2.
    assert_eq!(counts[0], 11);
}

#[test]
fn four_by_six() {
    check_geometry(4, 6, 5);
}

#[test]
fn petty_5x6() {
    check_geometry(5, 6, 4);
}

#[test]
fn every_geometry_move_lists() {
    for w in 4..=8 {
        for h in 4..=8 {
            let pos = Position::startpos_for(Geometry::new(w, h).unwrap());
            same_moves(&pos, &Naive::from_position(&pos), 3);
        }
    }
}

#[test]
fn standard_positions_move_lists() {
    // Castling, promotions, pins and en passant on 8x8, against the naive generator.
    for fen in [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    ] {
        let pos: Position = fen.parse().unwrap();
        same_moves(&pos, &Naive::from_position(&pos), 2);
    }
}

#[test]
#[ignore = "prints the minichess perft table for docs/board.md"]
fn print_minichess_counts() {
    for (w, h, depth) in [(4, 4, 7), (4, 5, 7), (4, 6, 6), (5, 6, 5)] {
        let pos = Position::startpos_for(Geometry::new(w, h).unwrap());
        let counts: Vec<u64> = (1..=depth).map(|d| perft(&pos, d, true)).collect();
        println!("{w}x{h} {} {counts:?}", pos.to_fen());
    }
}

#[test]
fn more_pieces_than_chess_allows() {
    // Fourteen white queens (a quantum position can hold more pieces of a kind than chess):
    // no list cap, and the moves agree with the naive generator.
    let fen = "7k/7p/8/8/8/QQQQQQQ1/QQQQQQQ1/K7 w - - 0 1";
    let pos = Position::from_fen_relaxed(fen, Geometry::STANDARD).unwrap();
    let naive = Naive::from_position(&pos);
    assert_eq!(pos.legal_moves().len(), naive.legal_moves().len());
    assert!(pos.legal_moves().len() > 100);
    same_moves(&pos, &naive, 2);
}

#[test]
fn random_games_on_every_geometry_match_the_naive_generator() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x5EED_4B0A);
    let mut compared = 0;
    for w in 4..=8 {
        for h in 4..=8 {
            for _game in 0..8 {
                let mut pos = Position::startpos_for(Geometry::new(w, h).unwrap());
                let mut naive = Naive::from_position(&pos);
                for _ in 0..120 {
                    let mut ours = pos.legal_moves();
                    let mut reference: Vec<_> =
                        naive.legal_moves().into_iter().map(to_move).collect();
                    ours.sort();
                    reference.sort();
                    assert_eq!(ours, reference, "{}", pos.to_fen());
                    compared += 1;
                    if ours.is_empty() {
                        break;
                    }
                    let mv = ours[rng.random_range(0..ours.len())];
                    pos.play(mv).unwrap();
                    let m = naive
                        .legal_moves()
                        .into_iter()
                        .find(|&m| to_move(m) == mv)
                        .unwrap();
                    naive = naive.play(m);
                }
            }
        }
    }
    assert!(compared > 10_000, "only {compared} positions compared");
}
