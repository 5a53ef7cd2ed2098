//! Piece kinds and coloured pieces, with their FEN letters.

use crate::Color;

/// A kind of piece, without colour.
///
/// ```
/// use qchess_board::PieceKind;
/// assert_eq!(PieceKind::from_char('n'), Some(PieceKind::Knight));
/// assert_eq!(PieceKind::Queen.to_char(), 'q');
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash, Debug)]
pub enum PieceKind {
    /// Pawn ('p').
    Pawn = 0,
    /// Knight ('n').
    Knight = 1,
    /// Bishop ('b').
    Bishop = 2,
    /// Rook ('r').
    Rook = 3,
    /// Queen ('q').
    Queen = 4,
    /// King ('k').
    King = 5,
}

impl PieceKind {
    /// All kinds, pawn first.
    pub const ALL: [PieceKind; 6] = [
        PieceKind::Pawn,
        PieceKind::Knight,
        PieceKind::Bishop,
        PieceKind::Rook,
        PieceKind::Queen,
        PieceKind::King,
    ];

    /// The kinds a pawn may promote to, queen first.
    pub const PROMOTIONS: [PieceKind; 4] = [
        PieceKind::Queen,
        PieceKind::Rook,
        PieceKind::Bishop,
        PieceKind::Knight,
    ];

    /// 0 (pawn) .. 5 (king).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The kind with this index (0 = pawn .. 5 = king).
    #[inline]
    pub const fn from_index(i: usize) -> Option<PieceKind> {
        if i < 6 { Some(PieceKind::ALL[i]) } else { None }
    }

    /// The kind of a lower-case letter (`p n b r q k`); upper case is not accepted.
    pub const fn from_char(c: char) -> Option<PieceKind> {
        match c {
            'p' => Some(PieceKind::Pawn),
            'n' => Some(PieceKind::Knight),
            'b' => Some(PieceKind::Bishop),
            'r' => Some(PieceKind::Rook),
            'q' => Some(PieceKind::Queen),
            'k' => Some(PieceKind::King),
            _ => None,
        }
    }

    /// The lower-case letter of this kind.
    pub const fn to_char(self) -> char {
        match self {
            PieceKind::Pawn => 'p',
            PieceKind::Knight => 'n',
            PieceKind::Bishop => 'b',
            PieceKind::Rook => 'r',
            PieceKind::Queen => 'q',
            PieceKind::King => 'k',
        }
    }
}

/// A piece of one colour.
///
/// ```
/// use qchess_board::{Color, Piece, PieceKind};
/// let p = Piece::from_fen_char('N').unwrap();
/// assert_eq!(p, Piece { color: Color::White, kind: PieceKind::Knight });
/// assert_eq!(Piece::new(Color::Black, PieceKind::Queen).fen_char(), 'q');
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash, Debug)]
pub struct Piece {
    /// The side it belongs to.
    pub color: Color,
    /// What it is.
    pub kind: PieceKind,
}

impl Piece {
    /// A piece of `color` and `kind`.
    #[inline]
    pub const fn new(color: Color, kind: PieceKind) -> Piece {
        Piece { color, kind }
    }

    /// The piece of a FEN letter: upper case White, lower case Black.
    pub const fn from_fen_char(c: char) -> Option<Piece> {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        match PieceKind::from_char(c.to_ascii_lowercase()) {
            Some(kind) => Some(Piece { color, kind }),
            None => None,
        }
    }

    /// The FEN letter: upper case White, lower case Black.
    pub const fn fen_char(self) -> char {
        let c = self.kind.to_char();
        match self.color {
            Color::White => c.to_ascii_uppercase(),
            Color::Black => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fen_letters_round_trip() {
        for color in Color::ALL {
            for kind in PieceKind::ALL {
                let p = Piece::new(color, kind);
                assert_eq!(Piece::from_fen_char(p.fen_char()), Some(p));
            }
        }
        assert_eq!(Piece::from_fen_char('x'), None);
        assert_eq!(Piece::from_fen_char('1'), None);
        assert_eq!(Piece::from_fen_char('K').unwrap().color, Color::White);
        assert_eq!(PieceKind::from_char('K'), None);
    }
}
