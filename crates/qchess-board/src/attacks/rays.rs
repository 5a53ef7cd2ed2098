//! `between` and `line` tables for every pair of squares, computed at compile time.

use crate::{Bitboard, Square};

/// The direction from `a` to `b` when they share a rank, file or diagonal.
const fn direction(a: Square, b: Square) -> Option<(i8, i8)> {
    let df = b.file() as i8 - a.file() as i8;
    let dr = b.rank() as i8 - a.rank() as i8;
    if (df == 0 && dr == 0) || !(df == 0 || dr == 0 || df == dr || df == -dr) {
        return None;
    }
    Some((df.signum(), dr.signum()))
}

/// Squares from `from` stepping (df, dr) until `stop` (exclusive) or the edge.
const fn walk(from: Square, d: (i8, i8), stop: Option<Square>) -> u64 {
    let mut bits = 0u64;
    let mut cur = from.offset(d.0, d.1);
    while let Some(sq) = cur {
        if let Some(s) = stop {
            if s.index() == sq.index() {
                break;
            }
        }
        bits |= 1u64 << sq.index();
        cur = sq.offset(d.0, d.1);
    }
    bits
}

const fn build(whole_line: bool) -> [[Bitboard; 64]; 64] {
    let mut table = [[Bitboard::EMPTY; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            let (sa, sb) = (Square::ALL[a], Square::ALL[b]);
            if let Some(d) = direction(sa, sb) {
                table[a][b] = Bitboard(if whole_line {
                    walk(sa, d, None) | walk(sa, (-d.0, -d.1), None) | (1u64 << a)
                } else {
                    walk(sa, d, Some(sb))
                });
            }
            b += 1;
        }
        a += 1;
    }
    table
}

pub(super) static BETWEEN: [[Bitboard; 64]; 64] = build(false);
pub(super) static LINE: [[Bitboard; 64]; 64] = build(true);

/// Slider attacks on an empty board: [bishop, rook] per square.
const fn empty_board_rays() -> [[Bitboard; 64]; 2] {
    let mut out = [[Bitboard::EMPTY; 64]; 2];
    let diagonal = [(1, 1), (-1, 1), (1, -1), (-1, -1)];
    let straight = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    let mut i = 0;
    while i < 64 {
        let sq = Square::ALL[i];
        let mut d = 0;
        while d < 4 {
            out[0][i].0 |= walk(sq, diagonal[d], None);
            out[1][i].0 |= walk(sq, straight[d], None);
            d += 1;
        }
        i += 1;
    }
    out
}

pub(super) static EMPTY_BOARD_RAYS: [[Bitboard; 64]; 2] = empty_board_rays();
