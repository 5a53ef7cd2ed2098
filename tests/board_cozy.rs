//! Differential test of `qchess::board` against cozy-chess (an independent, MIT-licensed
//! generator): seeded random games from the published perft positions, comparing the full
//! legal move list, check status and game end at every ply, playing the same move in both.

use qchess::board::{Move, Position};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeSet;

const FENS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
];

/// cozy-chess writes castling as king-takes-rook; convert to the king's two-square move.
fn cozy_to_uci(board: &cozy_chess::Board, mv: cozy_chess::Move) -> String {
    let king = board.king(board.side_to_move());
    let is_castle = mv.from == king && board.colors(board.side_to_move()).has(mv.to);
    let to = if is_castle {
        let file = if mv.to.file() > mv.from.file() {
            cozy_chess::File::G
        } else {
            cozy_chess::File::C
        };
        cozy_chess::Square::new(file, mv.from.rank())
    } else {
        mv.to
    };
    let promo = mv.promotion.map(|p| p.to_string()).unwrap_or_default();
    format!("{}{}{}", mv.from, to, promo)
}

fn cozy_moves(board: &cozy_chess::Board) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    board.generate_moves(|moves| {
        for mv in moves {
            out.insert(cozy_to_uci(board, mv));
        }
        false
    });
    out
}

#[test]
fn random_games_agree_with_cozy_chess() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xC0_2E);
    let mut plies = 0;
    for game in 0..240 {
        let fen = FENS[game % FENS.len()];
        let mut ours: Position = fen.parse().unwrap();
        let mut cozy = cozy_chess::Board::from_fen(fen, false).unwrap();
        for _ in 0..120 {
            let list: BTreeSet<String> = ours.legal_moves().iter().map(Move::to_string).collect();
            assert_eq!(list, cozy_moves(&cozy), "{}", ours.to_fen());
            assert_eq!(ours.legal_move_count(), list.len());
            assert_eq!(
                ours.checkers().count(),
                cozy.checkers().len(),
                "{}",
                ours.to_fen()
            );
            if list.is_empty() {
                break;
            }
            let pick = list
                .iter()
                .nth(rng.random_range(0..list.len()))
                .unwrap()
                .clone();
            ours.play(pick.parse().unwrap()).unwrap();
            let cozy_mv = {
                let mut found = None;
                cozy.generate_moves(|moves| {
                    for mv in moves {
                        if cozy_to_uci(&cozy, mv) == pick {
                            found = Some(mv);
                        }
                    }
                    false
                });
                found.unwrap()
            };
            cozy.play(cozy_mv);
            plies += 1;
        }
    }
    assert!(plies > 10_000, "only {plies} plies compared");
}
