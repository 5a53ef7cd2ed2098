//! Classical moves, their UCI notation, and per-piece move sets.

use crate::{Bitboard, BitboardIter, PieceKind, Square};
use std::fmt;
use std::str::FromStr;

/// A classical move: origin, destination and promotion kind. Castling is the king's two-square
/// move (e1g1, e1c1, e8g8, e8c8); en passant is the pawn's diagonal move to the e.p. square.
///
/// ```
/// use qchess_board::{Move, PieceKind, Square};
/// let m: Move = "e7e8q".parse().unwrap();
/// assert_eq!(m, Move::new(Square::E7, Square::E8, Some(PieceKind::Queen)));
/// assert_eq!(m.to_string(), "e7e8q");
/// assert!("e7e8k".parse::<Move>().is_err());
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug, Ord, PartialOrd)]
pub struct Move {
    /// Origin square.
    pub from: Square,
    /// Destination square.
    pub to: Square,
    /// Kind a pawn promotes to, if it does.
    pub promotion: Option<PieceKind>,
}

impl Move {
    /// A move from `from` to `to` with an optional promotion.
    #[inline]
    pub const fn new(from: Square, to: Square, promotion: Option<PieceKind>) -> Move {
        Move {
            from,
            to,
            promotion,
        }
    }
}

impl fmt::Display for Move {
    /// UCI long algebraic notation: "e2e4", "e7e8q".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion {
            write!(f, "{}", p.to_char())?;
        }
        Ok(())
    }
}

/// Why a string is not a UCI move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseMoveError {
    /// The text that was given.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for ParseMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid move {:?}: {}", self.input, self.reason)
    }
}

impl std::error::Error for ParseMoveError {}

impl FromStr for Move {
    type Err = ParseMoveError;

    fn from_str(s: &str) -> Result<Move, ParseMoveError> {
        let err = |reason| ParseMoveError {
            input: s.to_string(),
            reason,
        };
        if !s.is_ascii() || !(4..=5).contains(&s.len()) {
            return Err(err("expected UCI notation such as \"e2e4\" or \"e7e8q\""));
        }
        let from = s[0..2]
            .parse()
            .map_err(|_| err("the origin square is not a1..h8"))?;
        let to = s[2..4]
            .parse()
            .map_err(|_| err("the destination square is not a1..h8"))?;
        let promotion = match s[4..].chars().next() {
            None => None,
            Some(c) => match PieceKind::from_char(c) {
                Some(k) if k != PieceKind::Pawn && k != PieceKind::King => Some(k),
                _ => return Err(err("the promotion letter must be one of q, r, b, n")),
            },
        };
        Ok(Move {
            from,
            to,
            promotion,
        })
    }
}

/// A growable list of moves: no fixed cap, since a quantum position may hold more pieces of one
/// kind than chess allows.
pub type MoveList = Vec<Move>;

/// All moves of one piece as a set of destinations (cozy-chess style): bulk counting needs only
/// `len()`, which is a popcount.
///
/// ```
/// use qchess_board::Position;
/// let pos = Position::startpos();
/// let mut n = 0;
/// pos.generate_legal(|pm| {
///     n += pm.len();
///     false // keep going
/// });
/// assert_eq!(n, 20);
/// ```
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
pub struct PieceMoves {
    /// Kind of the moving piece.
    pub piece: PieceKind,
    /// Where it stands.
    pub from: Square,
    /// Where it may go.
    pub to: Bitboard,
    /// Whether every destination is a promotion (then each counts four times: q, r, b, n).
    pub promotes: bool,
}

impl PieceMoves {
    /// Number of moves in the set (each promotion destination counts four).
    #[inline]
    pub const fn len(&self) -> usize {
        let n = self.to.count() as usize;
        if self.promotes { n * 4 } else { n }
    }

    /// Whether the set holds no move.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.to.is_empty()
    }

    /// The moves one by one (promotions in the order q, r, b, n).
    pub fn iter(&self) -> PieceMovesIter {
        PieceMovesIter {
            moves: *self,
            to: self.to.iter(),
            current: None,
            promo: 0,
        }
    }
}

impl IntoIterator for PieceMoves {
    type Item = Move;
    type IntoIter = PieceMovesIter;
    fn into_iter(self) -> PieceMovesIter {
        self.iter()
    }
}

/// Iterator over the moves of a [`PieceMoves`].
#[derive(Clone, Debug)]
pub struct PieceMovesIter {
    moves: PieceMoves,
    to: BitboardIter,
    current: Option<Square>,
    promo: usize,
}

impl Iterator for PieceMovesIter {
    type Item = Move;

    #[inline]
    fn next(&mut self) -> Option<Move> {
        let from = self.moves.from;
        if !self.moves.promotes {
            return self.to.next().map(|to| Move::new(from, to, None));
        }
        if self.current.is_none() || self.promo == 4 {
            self.current = Some(self.to.next()?);
            self.promo = 0;
        }
        let kind = PieceKind::PROMOTIONS[self.promo];
        self.promo += 1;
        Some(Move::new(from, self.current?, Some(kind)))
    }
}
