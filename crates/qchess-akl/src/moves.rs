//! Moves of one touched, classical piece: chess movement without en passant, kings free to
//! stand in check, castling with an untouched king and rook and not out of, through or into check.

use crate::position::{AklPosition, attacks_of, home_rank};
use qchess_board::{Color, PieceKind, Square, between};
use std::fmt;
use std::str::FromStr;

/// A move of the touched piece: from, to, and the promotion type when a pawn reaches the last
/// rank. Castling is the king's two-square move (`e1g1`).
///
/// ```
/// use qchess_akl::AklMove;
/// let m: AklMove = "e7e8q".parse().unwrap();
/// assert_eq!(m.to_string(), "e7e8q");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AklMove {
    /// The touched piece's square.
    pub from: qchess_board::Square,
    /// Where it goes.
    pub to: qchess_board::Square,
    /// The chosen type when a pawn promotes.
    pub promotion: Option<PieceKind>,
}

impl fmt::Display for AklMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion {
            write!(f, "{}", p.to_char())?;
        }
        Ok(())
    }
}

impl FromStr for AklMove {
    type Err = crate::AklError;

    fn from_str(s: &str) -> Result<AklMove, crate::AklError> {
        let bad = |at: usize, message: &str| crate::AklError::Notation {
            input: s.to_string(),
            at,
            message: message.to_string(),
        };
        if !s.is_ascii() || !(4..=5).contains(&s.len()) {
            return Err(bad(0, "expected a UCI move like e2e4 or e7e8q"));
        }
        let from = s[0..2].parse().map_err(|_| bad(0, "bad from-square"))?;
        let to = s[2..4].parse().map_err(|_| bad(2, "bad to-square"))?;
        let promotion = match s[4..].chars().next() {
            None => None,
            Some(c) => match PieceKind::from_char(c.to_ascii_lowercase()) {
                Some(k) if k != PieceKind::King => Some(k),
                _ => return Err(bad(4, "promotion must be one of q, r, b, n, p")),
            },
        };
        Ok(AklMove {
            from,
            to,
            promotion,
        })
    }
}

/// The types a pawn may promote to: any type but king (rules-notes 5), pawn included. A piece
/// promoted to a pawn cannot move as a pawn from the last rank, but it keeps the pawn's other
/// type and regains its superposition on a dark square, so the choice is not empty.
pub const PROMOTION_TYPES: [PieceKind; 5] = [
    PieceKind::Queen,
    PieceKind::Rook,
    PieceKind::Bishop,
    PieceKind::Knight,
    PieceKind::Pawn,
];

/// Every move of the piece on `from` if it were classical of type `kind` (its colour is the
/// piece's). Empty when `from` is empty.
pub fn moves_as(pos: &AklPosition, from: Square, kind: PieceKind) -> Vec<AklMove> {
    let Some(piece) = pos.piece(from) else {
        return Vec::new();
    };
    let color = piece.color;
    let occupied = pos.occupied();
    let own = pos.occupied_by(color);
    let enemy = pos.occupied_by(color.opposite());
    let mut out = Vec::new();
    let last_rank = home_rank(color.opposite());
    let push = |to: Square, out: &mut Vec<AklMove>| {
        if kind == PieceKind::Pawn && to.rank() == last_rank {
            for p in PROMOTION_TYPES {
                out.push(AklMove {
                    from,
                    to,
                    promotion: Some(p),
                });
            }
        } else {
            out.push(AklMove {
                from,
                to,
                promotion: None,
            });
        }
    };
    if kind == PieceKind::Pawn {
        let dir: i8 = if color == Color::White { 1 } else { -1 };
        let start_rank = if color == Color::White { 1 } else { 6 };
        if let Some(one) = from.offset(0, dir).filter(|s| !occupied.contains(*s)) {
            push(one, &mut out);
            if from.rank() == start_rank
                && let Some(two) = from.offset(0, 2 * dir).filter(|s| !occupied.contains(*s))
            {
                push(two, &mut out);
            }
        }
        // Diagonal captures only: there is no en passant.
        for to in attacks_of(PieceKind::Pawn, color, from, occupied) & enemy {
            push(to, &mut out);
        }
        return out;
    }
    for to in attacks_of(kind, color, from, occupied) & !own {
        push(to, &mut out);
    }
    if kind == PieceKind::King {
        for side in [CastleSide::King, CastleSide::Queen] {
            if can_castle(pos, color, side) {
                out.push(AklMove {
                    from,
                    to: side.king_target(color),
                    promotion: None,
                });
            }
        }
    }
    out
}

/// A castling side.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CastleSide {
    /// Towards the h-file rook.
    King,
    /// Towards the a-file rook.
    Queen,
}

impl CastleSide {
    /// The king's target square.
    pub fn king_target(self, color: Color) -> Square {
        Square::new(
            if self == CastleSide::King { 6 } else { 2 },
            home_rank(color),
        )
    }

    /// The rook's start square.
    pub fn rook_from(self, color: Color) -> Square {
        Square::new(
            if self == CastleSide::King { 7 } else { 0 },
            home_rank(color),
        )
    }

    /// The rook's target square (the square the king crosses).
    pub fn rook_to(self, color: Color) -> Square {
        Square::new(
            if self == CastleSide::King { 5 } else { 3 },
            home_rank(color),
        )
    }

    /// The side whose king move is `from` -> `to`, if that is a castling king move.
    pub fn of_king_move(color: Color, from: Square, to: Square) -> Option<CastleSide> {
        let home = Square::new(4, home_rank(color));
        if from != home {
            return None;
        }
        [CastleSide::King, CastleSide::Queen]
            .into_iter()
            .find(|s| s.king_target(color) == to)
    }
}

/// Whether `color` may castle on `side` now: king and that rook never touched or moved (the
/// rook is the original piece of the corner, whose primary type is rook, in superposition or
/// not), the squares between them empty, and the king's square, the square it crosses and its
/// target not attacked by a classical enemy piece.
pub fn can_castle(pos: &AklPosition, color: Color, side: CastleSide) -> bool {
    let king_sq = Square::new(4, home_rank(color));
    let rook_sq = side.rook_from(color);
    // The right alone should imply the pieces, but `AklPosition`'s fields are public: a
    // hand-built position may claim a right without its king or rook.
    let pieces_home = pos
        .piece(king_sq)
        .is_some_and(|p| p.color == color && p.is_king())
        && pos
            .piece(rook_sq)
            .is_some_and(|p| p.color == color && p.pair.primary == PieceKind::Rook);
    if !pos.castling_right(color, side)
        || !pieces_home
        || between(king_sq, rook_sq).intersects(pos.occupied())
    {
        return false;
    }
    let enemy = color.opposite();
    let crossed = side.rook_to(color);
    let target = side.king_target(color);
    [king_sq, crossed, target]
        .into_iter()
        .all(|sq| !pos.attacked_by_classical(sq, enemy))
}
