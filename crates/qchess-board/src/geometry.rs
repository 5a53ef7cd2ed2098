//! Board sizes: W files x H ranks (4..=8 each) in the a1 corner of the 8x8 grid.

use crate::{Bitboard, Color, Square};
use std::fmt;
use std::str::FromStr;

/// A rectangular board of `width` files and `height` ranks, 4 <= W, H <= 8, occupying files
/// a.. and ranks 1.. of the 8x8 grid. Every square index stays rank * 8 + file.
///
/// ```
/// use qchess_board::{Color, Geometry, Square};
/// let g: Geometry = "5x6".parse().unwrap();
/// assert_eq!((g.width(), g.height()), (5, 6));
/// assert!(g.contains(Square::E6) && !g.contains(Square::F1) && !g.contains(Square::A7));
/// assert_eq!(g.promotion_rank(Color::White), 5);
/// assert_eq!(g.mask().count(), 30);
/// assert_eq!(Geometry::default(), Geometry::STANDARD);
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
pub struct Geometry {
    width: u8,
    height: u8,
    mask: Bitboard,
}

/// Why a board size was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeometryError {
    /// Width or height outside 4..=8.
    OutOfRange {
        /// Requested number of files.
        width: u8,
        /// Requested number of ranks.
        height: u8,
    },
    /// Text that is not of the form `WxH` (e.g. "5x6").
    Syntax(String),
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeometryError::OutOfRange { width, height } => write!(
                f,
                "board {width}x{height} is not supported: width and height must each be 4 to 8"
            ),
            GeometryError::Syntax(s) => {
                write!(
                    f,
                    "invalid board size {s:?}: expected WxH such as \"8x8\" or \"5x6\""
                )
            }
        }
    }
}

impl std::error::Error for GeometryError {}

impl Geometry {
    /// The standard 8x8 board.
    pub const STANDARD: Geometry = Geometry {
        width: 8,
        height: 8,
        mask: Bitboard::FULL,
    };

    /// A board of `width` files and `height` ranks; both must be in 4..=8.
    pub const fn new(width: u8, height: u8) -> Result<Geometry, GeometryError> {
        if width < 4 || width > 8 || height < 4 || height > 8 {
            return Err(GeometryError::OutOfRange { width, height });
        }
        let file_mask = (1u64 << width) - 1;
        let mut mask = 0u64;
        let mut r = 0;
        while r < height {
            mask |= file_mask << (8 * r);
            r += 1;
        }
        Ok(Geometry {
            width,
            height,
            mask: Bitboard(mask),
        })
    }

    /// Parses "WxH" (also accepts 'X'), e.g. "4x5".
    pub fn parse(s: &str) -> Result<Geometry, GeometryError> {
        let syntax = || GeometryError::Syntax(s.to_string());
        let (w, h) = s.split_once(['x', 'X']).ok_or_else(syntax)?;
        let w: u8 = w.trim().parse().map_err(|_| syntax())?;
        let h: u8 = h.trim().parse().map_err(|_| syntax())?;
        Geometry::new(w, h)
    }

    /// Number of files.
    #[inline]
    pub const fn width(self) -> u8 {
        self.width
    }

    /// Number of ranks.
    #[inline]
    pub const fn height(self) -> u8 {
        self.height
    }

    /// The squares on this board.
    #[inline]
    pub const fn mask(self) -> Bitboard {
        self.mask
    }

    /// Whether `sq` is on this board.
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        self.mask.contains(sq)
    }

    /// Whether this is the standard 8x8 board.
    #[inline]
    pub const fn is_standard(self) -> bool {
        self.width == 8 && self.height == 8
    }

    /// The rank `color`'s pawns start on: 1 (rank 2) for White, H-2 for Black.
    #[inline]
    pub const fn pawn_start_rank(self, color: Color) -> u8 {
        match color {
            Color::White => 1,
            Color::Black => self.height - 2,
        }
    }

    /// The rank where `color`'s pawns promote: H-1 for White, 0 for Black.
    #[inline]
    pub const fn promotion_rank(self, color: Color) -> u8 {
        match color {
            Color::White => self.height - 1,
            Color::Black => 0,
        }
    }

    /// All squares of rank `rank` on this board.
    #[inline]
    pub const fn rank_mask(self, rank: u8) -> Bitboard {
        Bitboard((0xFFu64 << (8 * rank as u32)) & self.mask.0)
    }

    /// Whether pawns of this board may advance two squares from their start rank
    /// (only on boards with 8 ranks; see docs/board.md).
    #[inline]
    pub const fn has_double_step(self) -> bool {
        self.height == 8
    }
}

impl Default for Geometry {
    fn default() -> Geometry {
        Geometry::STANDARD
    }
}

impl FromStr for Geometry {
    type Err = GeometryError;
    fn from_str(s: &str) -> Result<Geometry, GeometryError> {
        Geometry::parse(s)
    }
}

impl fmt::Display for Geometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_errors() {
        for w in 4..=8 {
            for h in 4..=8 {
                let g = Geometry::new(w, h).unwrap();
                assert_eq!(g.mask().count(), u32::from(w) * u32::from(h));
                assert_eq!(g.to_string().parse::<Geometry>().unwrap(), g);
                assert_eq!(g.pawn_start_rank(Color::Black), h - 2);
            }
        }
        assert_eq!(Geometry::new(8, 8).unwrap(), Geometry::STANDARD);
        assert!(matches!(
            Geometry::new(3, 8),
            Err(GeometryError::OutOfRange { .. })
        ));
        assert!(matches!(
            Geometry::new(8, 9),
            Err(GeometryError::OutOfRange { .. })
        ));
        for bad in ["", "8", "8x", "x8", "axb", "8*8", "8x8x8"] {
            assert!(bad.parse::<Geometry>().is_err(), "{bad}");
        }
        assert!(
            "9x9"
                .parse::<Geometry>()
                .unwrap_err()
                .to_string()
                .contains("4 to 8")
        );
    }
}
