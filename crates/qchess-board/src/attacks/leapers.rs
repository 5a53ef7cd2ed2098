//! Knight, king and pawn attack tables, computed at compile time.

use crate::{Bitboard, Square};

const KNIGHT_STEPS: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING_STEPS: [(i8, i8); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

/// The squares reached from each square by one of `steps`, on the 8x8 grid.
const fn step_table(steps: &[(i8, i8)]) -> [Bitboard; 64] {
    let mut table = [Bitboard::EMPTY; 64];
    let mut i = 0;
    while i < 64 {
        let sq = Square::ALL[i];
        let mut bits = 0u64;
        let mut s = 0;
        while s < steps.len() {
            if let Some(to) = sq.offset(steps[s].0, steps[s].1) {
                bits |= 1u64 << to.index();
            }
            s += 1;
        }
        table[i] = Bitboard(bits);
        i += 1;
    }
    table
}

pub(super) static KNIGHT: [Bitboard; 64] = step_table(&KNIGHT_STEPS);
pub(super) static KING: [Bitboard; 64] = step_table(&KING_STEPS);
/// Pawn captures, indexed by colour then square.
pub(super) static PAWN: [[Bitboard; 64]; 2] = [
    step_table(&[(-1, 1), (1, 1)]),
    step_table(&[(-1, -1), (1, -1)]),
];
