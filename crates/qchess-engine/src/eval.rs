//! Shared evaluation terms: piece values and a small square bonus.

use qchess_board::{Color, PieceKind, Square};

/// Centipawn value of a piece kind (the king's value is only used where its presence is a
/// probability, as in Cantwell).
pub(crate) fn piece_value(kind: PieceKind) -> f64 {
    match kind {
        PieceKind::Pawn => 100.0,
        PieceKind::Knight => 320.0,
        PieceKind::Bishop => 330.0,
        PieceKind::Rook => 500.0,
        PieceKind::Queen => 900.0,
        PieceKind::King => 2000.0,
    }
}

/// A small positional bonus: knights, bishops and pawns toward the centre, pawns for
/// advancing. At most a few tens of centipawns, so material decides.
pub(crate) fn square_bonus(kind: PieceKind, color: Color, sq: Square) -> f64 {
    let f = sq.file() as f64;
    let r = sq.rank() as f64;
    let centre = 7.0 - ((f - 3.5).abs() + (r - 3.5).abs()); // 0 (corner) .. 6 (centre)
    let advance = if color == Color::White { r } else { 7.0 - r };
    match kind {
        PieceKind::Knight | PieceKind::Bishop => 4.0 * centre,
        PieceKind::Pawn => {
            3.0 * advance
                + if (2.0..=5.0).contains(&f) {
                    2.0 * advance
                } else {
                    0.0
                }
        }
        PieceKind::Queen | PieceKind::Rook => centre,
        PieceKind::King => 0.0,
    }
}

/// `+1` for White, `-1` for Black.
pub(crate) fn sign(color: Color) -> f64 {
    if color == Color::White { 1.0 } else { -1.0 }
}
