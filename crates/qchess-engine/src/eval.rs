//! Shared evaluation terms: piece values and a small square bonus.

use qchess_board::{Bitboard, Color, Geometry, Piece, PieceKind, Position, Square};

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

/// Centipawns per pseudo-legal move of difference between the sides (the mobility term).
pub(crate) const MOBILITY_CP: f64 = 3.0;

/// Centipawns per unit of probability that a king is attacked (the king-danger term).
pub(crate) const KING_DANGER_CP: f64 = 50.0;

/// A classical approximation of a quantum position for the evaluation's mobility and
/// king-danger terms: every piece that may stand somewhere is put there (so it blocks
/// fully), with a weight (its probability of being there) that its moves count by.
///
/// The shared board crate's generator lists the moves of the side to move only, and a
/// [`Position`] built piece by piece has White to move; Black's moves are counted on a second
/// board with the ranks flipped and the colours swapped (no castling rights, no en passant:
/// put pieces carry none).
pub(crate) struct ClassicalBoard {
    geometry: Geometry,
    board: Position,
    mirrored: Position,
    weight: [f64; 64],
}

impl ClassicalBoard {
    /// An empty board of `geometry`.
    pub(crate) fn new(geometry: Geometry) -> ClassicalBoard {
        ClassicalBoard {
            geometry,
            board: Position::empty(geometry),
            mirrored: Position::empty(geometry),
            weight: [0.0; 64],
        }
    }

    /// Puts `piece` on `sq`, its moves counting `weight` each.
    pub(crate) fn put(&mut self, sq: Square, piece: Piece, weight: f64) {
        self.board.put_piece(sq, piece);
        self.mirrored.put_piece(
            sq.flip_rank(self.geometry.height()),
            Piece::new(piece.color.opposite(), piece.kind),
        );
        self.weight[sq.index() as usize] = weight;
    }

    /// Pseudo-legal moves of White less those of Black, each move weighted by its piece's
    /// weight.
    pub(crate) fn mobility(&self) -> f64 {
        let mut white = 0.0;
        self.board.generate_pseudo_legal(|pm| {
            white += pm.len() as f64 * self.weight[pm.from.index() as usize];
            false
        });
        let h = self.geometry.height();
        let mut black = 0.0;
        self.mirrored.generate_pseudo_legal(|pm| {
            black += pm.len() as f64 * self.weight[pm.from.flip_rank(h).index() as usize];
            false
        });
        white - black
    }

    /// Pieces of `by` that attack `sq` on this board.
    pub(crate) fn attackers(&self, sq: Square, by: Color) -> Bitboard {
        self.board.attackers(sq, by, self.board.occupied())
    }

    /// The weight of the piece on `sq` (0 when empty).
    pub(crate) fn weight(&self, sq: Square) -> f64 {
        self.weight[sq.index() as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pc(c: char) -> Piece {
        Piece::from_fen_char(c).unwrap()
    }

    #[test]
    fn mobility_of_the_start_position_is_zero_and_weights_follow_the_piece() {
        let start = Position::startpos();
        let mut b = ClassicalBoard::new(Geometry::STANDARD);
        for sq in Square::ALL {
            if let Some(p) = start.piece_on(sq) {
                b.put(sq, p, 1.0);
            }
        }
        assert_eq!(b.mobility(), 0.0);

        // White knight b1 (a3, c3, d2: 3 moves, weight 1), black knight g8 (e7, f6, h6: 3
        // moves, weight 1/2), black rook a8 (12 moves, weight 1/4).
        let mut b = ClassicalBoard::new(Geometry::STANDARD);
        b.put(Square::B1, pc('N'), 1.0);
        b.put(Square::G8, pc('n'), 0.5);
        b.put(Square::A8, pc('r'), 0.25);
        assert!((b.mobility() - (3.0 - 1.5 - 0.25 * 12.0)).abs() < 1e-12);
        // The rook on a8 is blocked by g8 on the rank: a8-f8 is 5 squares, a7-a1 is 7.
        assert_eq!(b.attackers(Square::A1, Color::Black), Square::A8.bitboard());
    }

    #[test]
    fn black_moves_are_counted_on_small_boards() {
        // 5x6: a black pawn on its start rank (rank 5, no double step on 6 ranks) and a white
        // king on a1.
        let g = Geometry::new(5, 6).unwrap();
        let mut b = ClassicalBoard::new(g);
        b.put(Square::new(2, 4), pc('p'), 1.0);
        b.put(Square::A1, pc('K'), 1.0);
        assert_eq!(b.mobility(), 3.0 - 1.0);
    }
}
