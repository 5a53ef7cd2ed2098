//! Squares of the 8x8 grid that every geometry lives in.

use crate::Bitboard;
use std::fmt;
use std::str::FromStr;

/// A square of the 8x8 grid: index = rank * 8 + file, a1 = 0, h1 = 7, a2 = 8, h8 = 63.
///
/// Smaller boards use the same indices (they sit in the a1 corner); whether a square is on a
/// given board is a question for [`crate::Geometry::contains`].
///
/// ```
/// use qchess_board::Square;
/// let e4: Square = "e4".parse().unwrap();
/// assert_eq!(e4, Square::new(4, 3));
/// assert_eq!(e4.index(), 28);
/// assert_eq!(e4.to_string(), "e4");
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash)]
pub struct Square(u8);

macro_rules! square_consts {
    ($($name:ident = $idx:expr),* $(,)?) => {
        impl Square {
            $(
                #[doc = concat!("The square ", stringify!($name), ".")]
                pub const $name: Square = Square($idx);
            )*
        }
    };
}

square_consts! {
    A1 = 0, B1 = 1, C1 = 2, D1 = 3, E1 = 4, F1 = 5, G1 = 6, H1 = 7,
    A2 = 8, B2 = 9, C2 = 10, D2 = 11, E2 = 12, F2 = 13, G2 = 14, H2 = 15,
    A3 = 16, B3 = 17, C3 = 18, D3 = 19, E3 = 20, F3 = 21, G3 = 22, H3 = 23,
    A4 = 24, B4 = 25, C4 = 26, D4 = 27, E4 = 28, F4 = 29, G4 = 30, H4 = 31,
    A5 = 32, B5 = 33, C5 = 34, D5 = 35, E5 = 36, F5 = 37, G5 = 38, H5 = 39,
    A6 = 40, B6 = 41, C6 = 42, D6 = 43, E6 = 44, F6 = 45, G6 = 46, H6 = 47,
    A7 = 48, B7 = 49, C7 = 50, D7 = 51, E7 = 52, F7 = 53, G7 = 54, H7 = 55,
    A8 = 56, B8 = 57, C8 = 58, D8 = 59, E8 = 60, F8 = 61, G8 = 62, H8 = 63,
}

impl Square {
    /// All 64 squares in index order (a1, b1, ..., h8).
    pub const ALL: [Square; 64] = {
        let mut all = [Square(0); 64];
        let mut i = 0;
        while i < 64 {
            all[i] = Square(i as u8);
            i += 1;
        }
        all
    };

    /// The square on `file` (0 = a) and `rank` (0 = rank 1). Both must be below 8 (checked in
    /// debug builds; release builds keep the low three bits, so the result is always a square).
    #[inline]
    pub const fn new(file: u8, rank: u8) -> Square {
        debug_assert!(file < 8 && rank < 8);
        Square(((rank & 7) << 3) | (file & 7))
    }

    /// The square with this index, or `None` when `index >= 64`.
    #[inline]
    pub const fn from_index(index: u8) -> Option<Square> {
        if index < 64 {
            Some(Square(index))
        } else {
            None
        }
    }

    /// The square with this index; the caller guarantees `index < 64` (masked otherwise).
    #[inline]
    pub(crate) const fn from_index_unchecked(index: u8) -> Square {
        Square(index & 63)
    }

    /// The index rank * 8 + file (0..64).
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }

    /// The file, 0 = a .. 7 = h.
    #[inline]
    pub const fn file(self) -> u8 {
        self.0 & 7
    }

    /// The rank, 0 = rank 1 .. 7 = rank 8.
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 >> 3
    }

    /// The bitboard holding only this square.
    #[inline]
    pub const fn bitboard(self) -> Bitboard {
        Bitboard(1u64 << self.0)
    }

    /// This square moved by (`df` files, `dr` ranks), or `None` when that leaves the 8x8 grid.
    #[inline]
    pub const fn offset(self, df: i8, dr: i8) -> Option<Square> {
        let f = self.file() as i8 + df;
        let r = self.rank() as i8 + dr;
        if f >= 0 && f < 8 && r >= 0 && r < 8 {
            Some(Square::new(f as u8, r as u8))
        } else {
            None
        }
    }

    /// The same file on the rank mirrored for a board of `height` ranks (rank r -> height-1-r).
    #[inline]
    pub const fn flip_rank(self, height: u8) -> Square {
        Square::new(self.file(), height - 1 - self.rank())
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file()) as char,
            (b'1' + self.rank()) as char
        )
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a string is not a square name like "e4".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseSquareError {
    /// The text that was given.
    pub input: String,
}

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid square {:?}: expected a file a-h followed by a rank 1-8, like \"e4\"",
            self.input
        )
    }
}

impl std::error::Error for ParseSquareError {}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        let err = || ParseSquareError {
            input: s.to_string(),
        };
        match s.as_bytes() {
            [f @ b'a'..=b'h', r @ b'1'..=b'8'] => Ok(Square::new(f - b'a', r - b'1')),
            _ => Err(err()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for sq in Square::ALL {
            let name = sq.to_string();
            assert_eq!(name.parse::<Square>().unwrap(), sq);
        }
        assert_eq!(Square::H8.to_string(), "h8");
        assert_eq!(Square::B1.index(), 1);
        assert_eq!(Square::A2.index(), 8);
    }

    #[test]
    fn bad_names_are_errors() {
        for bad in ["", "e", "i1", "a9", "a0", "e44", "E4", "4e"] {
            let err = bad.parse::<Square>().unwrap_err();
            assert!(err.to_string().contains("invalid square"), "{bad}");
        }
        assert_eq!(Square::from_index(64), None);
        assert_eq!(Square::from_index(63), Some(Square::H8));
    }
}
