//! Castling rights (standard 8x8 only: king on e1/e8, rooks on a- and h-files).

use crate::{Color, Square};

/// Which side of the board a castling goes to.
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
pub enum CastleSide {
    /// Short castling, towards the h-file (e1g1).
    King,
    /// Long castling, towards the a-file (e1c1).
    Queen,
}

impl CastleSide {
    /// Both sides, king side first.
    pub const ALL: [CastleSide; 2] = [CastleSide::King, CastleSide::Queen];
}

/// The four castling rights as bits: White king side (1), White queen side (2), Black king
/// side (4), Black queen side (8).
///
/// ```
/// use qchess_board::{CastleSide, CastlingRights, Color};
/// let r = CastlingRights::ALL.without(Color::White, CastleSide::Queen);
/// assert!(r.has(Color::White, CastleSide::King));
/// assert!(!r.has(Color::White, CastleSide::Queen));
/// assert_eq!(r.to_string(), "Kkq");
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug, Default)]
pub struct CastlingRights(u8);

impl CastlingRights {
    /// No rights.
    pub const NONE: CastlingRights = CastlingRights(0);
    /// All four rights.
    pub const ALL: CastlingRights = CastlingRights(15);

    const fn bit(color: Color, side: CastleSide) -> u8 {
        1 << (color as u8 * 2 + side as u8)
    }

    /// Whether `color` may still castle on `side`.
    #[inline]
    pub const fn has(self, color: Color, side: CastleSide) -> bool {
        self.0 & Self::bit(color, side) != 0
    }

    /// These rights plus one.
    #[must_use]
    pub const fn with(self, color: Color, side: CastleSide) -> CastlingRights {
        CastlingRights(self.0 | Self::bit(color, side))
    }

    /// These rights minus one.
    #[must_use]
    pub const fn without(self, color: Color, side: CastleSide) -> CastlingRights {
        CastlingRights(self.0 & !Self::bit(color, side))
    }

    /// Whether no right is left.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The four bits as a number 0..16 (used for hashing).
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The rights that survive a move touching `sq` (as origin or destination).
    #[inline]
    pub(crate) const fn after_touching(self, sq: Square) -> CastlingRights {
        let lost = match sq.index() {
            4 => 3,
            0 => 2,
            7 => 1,
            60 => 12,
            56 => 8,
            63 => 4,
            _ => 0,
        };
        CastlingRights(self.0 & !lost)
    }

    /// The king's start square, the rook's start square and the king's target square.
    pub const fn squares(color: Color, side: CastleSide) -> (Square, Square, Square) {
        let base = match color {
            Color::White => 0,
            Color::Black => 56,
        };
        let (rook, target) = match side {
            CastleSide::King => (7, 6),
            CastleSide::Queen => (0, 2),
        };
        (
            Square::ALL[base + 4],
            Square::ALL[base + rook],
            Square::ALL[base + target],
        )
    }
}

impl std::fmt::Display for CastlingRights {
    /// FEN form: "KQkq" subset, or "-".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        for (c, color, side) in [
            ('K', Color::White, CastleSide::King),
            ('Q', Color::White, CastleSide::Queen),
            ('k', Color::Black, CastleSide::King),
            ('q', Color::Black, CastleSide::Queen),
        ] {
            if self.has(color, side) {
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}
