//! The two sides.

use std::ops::Not;

/// A side: White moves first and starts on the low ranks.
///
/// ```
/// use qchess_board::Color;
/// assert_eq!(!Color::White, Color::Black);
/// assert_eq!(Color::Black.fen_char(), 'b');
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash, Debug)]
pub enum Color {
    /// White (upper-case FEN letters, moves up the board).
    White = 0,
    /// Black (lower-case FEN letters, moves down the board).
    Black = 1,
}

impl Color {
    /// Both colours, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The other side.
    #[inline]
    pub const fn opposite(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// 0 for White, 1 for Black.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The FEN side-to-move letter: 'w' or 'b'.
    #[inline]
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// The colour of a FEN side-to-move letter ('w' or 'b').
    pub const fn from_fen_char(c: char) -> Option<Color> {
        match c {
            'w' => Some(Color::White),
            'b' => Some(Color::Black),
            _ => None,
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.opposite()
    }
}
