//! Piece attacks and pushes on a geometry, from qchess-board's attack tables.

use qchess_board::{
    Bitboard, Color, Geometry, Piece, PieceKind, Square, bishop_attacks, king_attacks,
    knight_attacks, pawn_attacks, queen_attacks, rook_attacks,
};

/// Squares `piece` on `sq` attacks (6.2.3), lines stopped by every occupied square
/// (indefinite halves block, 6.2.2).
pub(crate) fn attacks_from(piece: Piece, sq: Square, occupied: Bitboard, g: Geometry) -> Bitboard {
    let a = match piece.kind {
        PieceKind::Pawn => pawn_attacks(piece.color, sq),
        PieceKind::Knight => knight_attacks(sq),
        PieceKind::King => king_attacks(sq),
        PieceKind::Bishop => bishop_attacks(sq, occupied),
        PieceKind::Rook => rook_attacks(sq, occupied),
        PieceKind::Queen => queen_attacks(sq, occupied),
    };
    a & g.mask()
}

/// The rank step of a pawn of `color`.
pub(crate) const fn forward(color: Color) -> i8 {
    match color {
        Color::White => 1,
        Color::Black => -1,
    }
}

/// Unoccupied squares a pawn on `sq` can push to: one step, and two from its starting rank
/// when the board has double steps.
pub(crate) fn pawn_pushes(color: Color, sq: Square, occupied: Bitboard, g: Geometry) -> Bitboard {
    let mut out = Bitboard::EMPTY;
    let dr = forward(color);
    if let Some(one) = sq.offset(0, dr).filter(|s| g.contains(*s)) {
        if !occupied.contains(one) {
            out = out.with(one);
            if g.has_double_step() && sq.rank() == g.pawn_start_rank(color) {
                if let Some(two) = sq.offset(0, 2 * dr).filter(|s| g.contains(*s)) {
                    if !occupied.contains(two) {
                        out = out.with(two);
                    }
                }
            }
        }
    }
    out
}

/// Unoccupied squares `piece` on `sq` can move to without capturing (Articles 3.1-3.7).
pub(crate) fn quiet_targets(piece: Piece, sq: Square, occupied: Bitboard, g: Geometry) -> Bitboard {
    if piece.kind == PieceKind::Pawn {
        pawn_pushes(piece.color, sq, occupied, g)
    } else {
        attacks_from(piece, sq, occupied, g) & !occupied
    }
}

/// Whether `piece` on `a` could move to `b` if `b` were unoccupied (7.7 "one move away").
pub(crate) fn one_move_away(
    piece: Piece,
    a: Square,
    b: Square,
    occupied: Bitboard,
    g: Geometry,
) -> bool {
    let occ = occupied.without(b);
    quiet_targets(piece, a, occ, g).contains(b)
}
