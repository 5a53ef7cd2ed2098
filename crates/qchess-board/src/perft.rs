//! Perft: counting the leaves of the legal move tree, with or without bulk counting.

use crate::{Move, Position};

/// Number of leaf nodes of the legal move tree `depth` plies deep.
///
/// With `bulk`, the last ply is counted from the move sets without playing the moves (much
/// faster); without it every leaf move is played, which also exercises make-move.
///
/// ```
/// use qchess_board::{perft, Position};
/// let pos = Position::startpos();
/// assert_eq!(perft(&pos, 3, true), 8902);
/// assert_eq!(perft(&pos, 3, false), 8902);
/// ```
pub fn perft(pos: &Position, depth: u32, bulk: bool) -> u64 {
    if bulk {
        perft_bulk(pos, depth)
    } else {
        perft_full(pos, depth)
    }
}

fn perft_bulk(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.legal_move_count() as u64,
        _ => {
            let mut nodes = 0;
            pos.generate_legal(|pm| {
                for mv in pm {
                    let mut child = *pos;
                    child.play_known(mv, pm.piece);
                    nodes += perft_bulk(&child, depth - 1);
                }
                false
            });
            nodes
        }
    }
}

fn perft_full(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    pos.generate_legal(|pm| {
        for mv in pm {
            let mut child = *pos;
            child.play_known(mv, pm.piece);
            nodes += if depth == 1 {
                1
            } else {
                perft_full(&child, depth - 1)
            };
        }
        false
    });
    nodes
}

/// Perft below each legal root move, in generation order (`depth >= 1`; depth 0 gives an
/// empty list).
///
/// ```
/// use qchess_board::{perft_divide, Position};
/// let counts = perft_divide(&Position::startpos(), 2, true);
/// assert_eq!(counts.len(), 20);
/// assert!(counts.iter().all(|&(_, n)| n == 20));
/// ```
pub fn perft_divide(pos: &Position, depth: u32, bulk: bool) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let mut child = *pos;
            child.play_unchecked(mv);
            (mv, perft(&child, depth - 1, bulk))
        })
        .collect()
}
