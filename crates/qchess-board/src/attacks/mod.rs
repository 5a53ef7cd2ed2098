//! Attack sets on the 8x8 grid: leaper tables, magic-bitboard sliders, `between` and `line`.
//!
//! Every function answers for the full 8x8 grid. On a smaller [`crate::Geometry`], AND the
//! result with `geometry.mask()`: the board is a convex rectangle in the a1 corner, so a ray that
//! leaves it never comes back, and off-board squares never block anything that matters.
//! Slider functions take the occupancy as an argument so callers can ask "what if these
//! squares were empty (or full)" with masks the board does not hold.
//!
//! ```
//! use qchess_board::{attacks, Bitboard, Square};
//! let occ = Square::E6.bitboard();
//! let rook = attacks::rook_attacks(Square::E4, occ);
//! assert!(rook.contains(Square::E6) && !rook.contains(Square::E7));
//! assert_eq!(attacks::between(Square::A1, Square::D4).count(), 2);
//! ```

mod leapers;
mod magic;
mod rays;

#[cfg(test)]
mod tests;

use crate::{Bitboard, Color, Square};

/// Squares a knight on `sq` attacks.
#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    leapers::KNIGHT[sq.index() as usize]
}

/// Squares a king on `sq` attacks.
#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    leapers::KING[sq.index() as usize]
}

/// Squares a pawn of `color` on `sq` attacks (its diagonal captures).
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    leapers::PAWN[color.index()][sq.index() as usize]
}

/// Squares a bishop on `sq` attacks when `occupied` squares block: each ray runs up to and
/// including the first occupied square.
#[inline(always)]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic::lookup(&magic::BISHOP[sq.index() as usize], occupied.0)
}

/// Squares a rook on `sq` attacks when `occupied` squares block.
#[inline(always)]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic::lookup(&magic::ROOK[sq.index() as usize], occupied.0)
}

/// Squares a queen on `sq` attacks when `occupied` squares block.
#[inline(always)]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a bishop on `sq` attacks on an empty board (its four diagonal rays to the edge).
#[inline(always)]
pub fn bishop_rays(sq: Square) -> Bitboard {
    rays::EMPTY_BOARD_RAYS[0][sq.index() as usize]
}

/// Squares a rook on `sq` attacks on an empty board (its rank and file).
#[inline(always)]
pub fn rook_rays(sq: Square) -> Bitboard {
    rays::EMPTY_BOARD_RAYS[1][sq.index() as usize]
}

/// Squares strictly between `a` and `b` when they share a rank, file or diagonal; otherwise
/// (or when `a == b`) empty.
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    rays::BETWEEN[a.index() as usize][b.index() as usize]
}

/// The whole rank, file or diagonal through `a` and `b` (edge to edge, both included) when they
/// share one; otherwise (or when `a == b`) empty.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    rays::LINE[a.index() as usize][b.index() as usize]
}
