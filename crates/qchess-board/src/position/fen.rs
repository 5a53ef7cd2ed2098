//! FEN parsing and printing for every geometry: H ranks of W squares, top rank first.

use super::Position;
use crate::{CastleSide, CastlingRights, Color, Geometry, Piece, PieceKind, Square};
use std::fmt;
use std::str::FromStr;

/// The part of a FEN an error is about.
#[derive(Copy, Clone, Eq, PartialEq, Hash, Debug)]
pub enum FenField {
    /// Field 1, the piece placement.
    Placement,
    /// Field 2, the side to move.
    SideToMove,
    /// Field 3, castling rights.
    Castling,
    /// Field 4, the en-passant square.
    EnPassant,
    /// Field 5, the half-move clock.
    HalfmoveClock,
    /// Field 6, the full-move number.
    FullmoveNumber,
    /// The FEN as a whole (field count, or a position that breaks a rule of chess).
    Whole,
}

impl fmt::Display for FenField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenField::Placement => "piece placement (field 1)",
            FenField::SideToMove => "side to move (field 2)",
            FenField::Castling => "castling rights (field 3)",
            FenField::EnPassant => "en-passant square (field 4)",
            FenField::HalfmoveClock => "half-move clock (field 5)",
            FenField::FullmoveNumber => "full-move number (field 6)",
            FenField::Whole => "position",
        })
    }
}

/// A FEN that could not be read: which field, which character (and its 1-based column in the
/// FEN text), and why.
///
/// ```
/// use qchess_board::{FenField, Geometry, Position};
/// let err = Position::from_fen("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
///     Geometry::STANDARD).unwrap_err();
/// assert_eq!(err.field, FenField::Placement);
/// assert_eq!(err.character, Some('x'));
/// assert_eq!(err.column, Some(14));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenError {
    /// The field that is wrong.
    pub field: FenField,
    /// 1-based column (in characters) of the offending character in the FEN text, if any.
    pub column: Option<usize>,
    /// The offending character, if one is to blame.
    pub character: Option<char>,
    /// What is wrong, in words.
    pub reason: String,
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid FEN: {}", self.field)?;
        match (self.character, self.column) {
            (Some(c), Some(col)) => write!(f, ", character {c:?} at column {col}")?,
            (None, Some(col)) => write!(f, ", at column {col}")?,
            _ => {}
        }
        write!(f, ": {}", self.reason)
    }
}

impl std::error::Error for FenError {}

/// One whitespace-separated field and its character offset in the FEN text.
struct Field<'a> {
    text: &'a str,
    start: usize,
}

fn split_fields(fen: &str) -> Vec<Field<'_>> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte, char column)
    for (col, (byte, c)) in fen.char_indices().enumerate() {
        if c.is_whitespace() {
            if let Some((b, sc)) = start.take() {
                out.push(Field {
                    text: &fen[b..byte],
                    start: sc,
                });
            }
        } else if start.is_none() {
            start = Some((byte, col));
        }
    }
    if let Some((b, sc)) = start {
        out.push(Field {
            text: &fen[b..],
            start: sc,
        });
    }
    out
}

fn error(field: FenField, f: &Field<'_>, at: Option<usize>, reason: impl Into<String>) -> FenError {
    let character = at.and_then(|i| f.text.chars().nth(i));
    FenError {
        field,
        column: Some(f.start + at.unwrap_or(0) + 1),
        character,
        reason: reason.into(),
    }
}

fn whole(reason: impl Into<String>) -> FenError {
    FenError {
        field: FenField::Whole,
        column: None,
        character: None,
        reason: reason.into(),
    }
}

impl Position {
    /// Reads a FEN on `geometry`: H ranks of W squares separated by '/', then side to move,
    /// castling rights ("-" off 8x8), en-passant square, half-move clock and full-move number
    /// (the last two may be omitted: 0 and 1). The position must be legal chess: one king per
    /// side, no pawn on the first or last rank, the side not to move not in check.
    /// Never panics; every error names the field and character.
    pub fn from_fen(fen: &str, geometry: Geometry) -> Result<Position, FenError> {
        let pos = Position::from_fen_relaxed(fen, geometry)?;
        for color in Color::ALL {
            let kings = pos.pieces(color, PieceKind::King).count();
            if kings != 1 {
                return Err(whole(format!(
                    "{color:?} has {kings} kings, expected exactly one"
                )));
            }
            let back = geometry.rank_mask(0) | geometry.rank_mask(geometry.height() - 1);
            if (pos.pieces(color, PieceKind::Pawn) & back).any() {
                return Err(whole(format!(
                    "{color:?} has a pawn on the first or last rank"
                )));
            }
        }
        let them = !pos.side;
        if let Some(k) = pos.king_square(them) {
            if pos.is_attacked(k, pos.side, pos.occupied()) {
                return Err(whole(format!(
                    "{them:?} is not to move but its king on {k} is in check"
                )));
            }
        }
        Ok(pos)
    }

    /// Like [`Position::from_fen`] but accepts positions chess forbids and the pseudo-legal
    /// rule sets reach: a side without a king (after a king capture), pawns on the back ranks,
    /// the side not to move in check. At most one king per side is still required.
    pub fn from_fen_relaxed(fen: &str, geometry: Geometry) -> Result<Position, FenError> {
        let fields = split_fields(fen);
        if !(fields.len() == 4 || fields.len() == 6) {
            return Err(whole(format!(
                "expected 6 fields (or 4 without the clocks), found {}",
                fields.len()
            )));
        }
        let mut pos = Position::empty(geometry);
        parse_placement(&mut pos, &fields[0])?;
        for color in Color::ALL {
            if pos.pieces(color, PieceKind::King).has_many() {
                return Err(whole(format!("{color:?} has more than one king")));
            }
        }
        pos.side = match fields[1].text {
            "w" => Color::White,
            "b" => Color::Black,
            _ => {
                return Err(error(
                    FenField::SideToMove,
                    &fields[1],
                    Some(0),
                    "expected 'w' or 'b'",
                ));
            }
        };
        pos.castling = parse_castling(&pos, &fields[2])?;
        pos.ep = parse_ep(&pos, &fields[3])?;
        if fields.len() == 6 {
            pos.halfmove = fields[4].text.parse().map_err(|_| {
                error(
                    FenField::HalfmoveClock,
                    &fields[4],
                    Some(0),
                    "expected a number of plies",
                )
            })?;
            pos.fullmove = match fields[5].text.parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(error(
                        FenField::FullmoveNumber,
                        &fields[5],
                        Some(0),
                        "expected a move number of at least 1",
                    ));
                }
            };
        }
        pos.hash = pos.compute_hash();
        pos.refresh_caches();
        Ok(pos)
    }

    /// The FEN of this position (ranks of W squares, H rows).
    pub fn to_fen(&self) -> String {
        let g = self.geometry;
        let mut s = String::with_capacity(90);
        for rank in (0..g.height()).rev() {
            let mut empty = 0;
            for file in 0..g.width() {
                match self.piece_on(Square::new(file, rank)) {
                    Some(p) => {
                        if empty > 0 {
                            s.push((b'0' + empty) as char);
                            empty = 0;
                        }
                        s.push(p.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                s.push((b'0' + empty) as char);
            }
            if rank > 0 {
                s.push('/');
            }
        }
        let ep = self.ep.map_or_else(|| "-".to_string(), |sq| sq.to_string());
        s.push_str(&format!(
            " {} {} {} {} {}",
            self.side.fen_char(),
            self.castling,
            ep,
            self.halfmove,
            self.fullmove
        ));
        s
    }
}

fn parse_placement(pos: &mut Position, f: &Field<'_>) -> Result<(), FenError> {
    let g = pos.geometry;
    let (w, h) = (g.width(), g.height());
    let err = |at, reason: String| error(FenField::Placement, f, Some(at), reason);
    let mut row = 0u8; // 0 = top rank (H)
    let mut file = 0u8;
    let mut last = 0;
    for (i, c) in f.text.chars().enumerate() {
        last = i;
        let rank = h - 1 - row;
        match c {
            '/' => {
                if file != w {
                    return Err(err(
                        i,
                        format!("rank {} has {file} squares, expected {w}", rank + 1),
                    ));
                }
                if row + 1 == h {
                    return Err(err(i, format!("more than {h} ranks for a {g} board")));
                }
                row += 1;
                file = 0;
            }
            '1'..='8' => {
                let n = c as u8 - b'0';
                if file + n > w {
                    return Err(err(
                        i,
                        format!("rank {} has more than {w} squares", rank + 1),
                    ));
                }
                file += n;
            }
            _ => {
                let Some(piece) = Piece::from_fen_char(c) else {
                    return Err(err(
                        i,
                        "not a piece letter (PNBRQK / pnbrqk), digit 1-8 or '/'".into(),
                    ));
                };
                if file >= w {
                    return Err(err(
                        i,
                        format!("rank {} has more than {w} squares", rank + 1),
                    ));
                }
                pos.xor_piece(piece.color, piece.kind, Square::new(file, rank));
                file += 1;
            }
        }
    }
    if row + 1 != h || file != w {
        let n = last + 1;
        let reason = if row + 1 != h {
            format!("only {} ranks, expected {h} for a {g} board", row + 1)
        } else {
            format!("rank 1 has {file} squares, expected {w}")
        };
        return Err(FenError {
            field: FenField::Placement,
            column: Some(f.start + n + 1),
            character: None,
            reason,
        });
    }
    Ok(())
}

fn parse_castling(pos: &Position, f: &Field<'_>) -> Result<CastlingRights, FenError> {
    if f.text == "-" {
        return Ok(CastlingRights::NONE);
    }
    let mut rights = CastlingRights::NONE;
    for (i, c) in f.text.chars().enumerate() {
        let err = |reason: &str| error(FenField::Castling, f, Some(i), reason);
        let (color, side) = match c {
            'K' => (Color::White, CastleSide::King),
            'Q' => (Color::White, CastleSide::Queen),
            'k' => (Color::Black, CastleSide::King),
            'q' => (Color::Black, CastleSide::Queen),
            _ => return Err(err("expected '-' or letters from KQkq")),
        };
        if !pos.geometry.is_standard() {
            return Err(err("castling exists only on the 8x8 board"));
        }
        if rights.has(color, side) {
            return Err(err("this right is given twice"));
        }
        let (king, rook, _) = CastlingRights::squares(color, side);
        if !pos.pieces(color, PieceKind::King).contains(king) {
            return Err(err("the king is not on its start square"));
        }
        if !pos.pieces(color, PieceKind::Rook).contains(rook) {
            return Err(err("no rook on that corner"));
        }
        rights = rights.with(color, side);
    }
    Ok(rights)
}

fn parse_ep(pos: &Position, f: &Field<'_>) -> Result<Option<Square>, FenError> {
    if f.text == "-" {
        return Ok(None);
    }
    let err = |at, reason: &str| error(FenField::EnPassant, f, Some(at), reason);
    let sq = Square::from_str(f.text).map_err(|_| err(0, "expected '-' or a square such as e3"))?;
    let g = pos.geometry;
    if !g.contains(sq) {
        return Err(err(0, "the square is off the board"));
    }
    if !g.has_double_step() {
        return Err(err(
            0,
            "pawns have no double step on this board, so no en passant",
        ));
    }
    // The side that just moved is the opponent; its pawn passed over `sq`.
    let mover = !pos.side;
    let skipped_rank = g.pawn_start_rank(mover) as i8 + if mover == Color::White { 1 } else { -1 };
    if sq.rank() as i8 != skipped_rank {
        return Err(err(
            1,
            "wrong rank for the side to move (expected rank 3 or 6)",
        ));
    }
    let dir: i8 = if mover == Color::White { 1 } else { -1 };
    let (Some(pawn_sq), Some(start_sq)) = (sq.offset(0, dir), sq.offset(0, -dir)) else {
        return Err(err(0, "no pawn can have just passed this square"));
    };
    if pos.occupied().contains(sq) || pos.occupied().contains(start_sq) {
        return Err(err(
            0,
            "the square a pawn just passed, and the one it left, must be empty",
        ));
    }
    if !pos.pieces(mover, PieceKind::Pawn).contains(pawn_sq) {
        return Err(err(0, "no pawn stands in front of this square"));
    }
    Ok(Some(sq))
}

impl FromStr for Position {
    type Err = FenError;
    /// Reads a FEN on the standard 8x8 board (see [`Position::from_fen`]).
    fn from_str(s: &str) -> Result<Position, FenError> {
        Position::from_fen(s, Geometry::STANDARD)
    }
}
