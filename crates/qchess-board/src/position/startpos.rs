//! Start positions of every geometry (docs/board.md explains each choice).

use super::Position;
use crate::Geometry;

/// The FEN of the standard start position.
pub const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// White's back rank for a board `width` files wide (Black mirrors it on the top rank).
/// 4: Silverman; 5: Gardner / Petty chess; 6: Los Alamos; 8: FIDE; 7: the FIDE rank without
/// its queen-side bishop (no published array; our choice).
const fn back_rank(width: u8) -> &'static str {
    match width {
        4 => "RQKR",
        5 => "RNBQK",
        6 => "RNQKNR",
        7 => "RNBQKNR",
        _ => "RNBQKBNR",
    }
}

/// The start FEN of `geometry`: Microchess on 4x5, otherwise back rank, pawns, empty ranks,
/// pawns, back rank (castling rights only on 8x8).
pub fn startpos_fen(geometry: Geometry) -> String {
    let (w, h) = (geometry.width(), geometry.height());
    if (w, h) == (4, 5) {
        // Microchess (Glimne, 1997): K, N, B, R and one pawn each, rotationally symmetric.
        return "knbr/p3/4/3P/RBNK w - - 0 1".to_string();
    }
    let white = back_rank(w);
    let black = white.to_ascii_lowercase();
    let mut rows = vec![black, "p".repeat(w as usize)];
    for _ in 0..h - 4 {
        rows.push(w.to_string());
    }
    rows.push("P".repeat(w as usize));
    rows.push(white.to_string());
    let castling = if geometry.is_standard() { "KQkq" } else { "-" };
    format!("{} w {castling} - 0 1", rows.join("/"))
}

impl Position {
    /// The standard chess start position.
    pub fn startpos() -> Position {
        Position::startpos_for(Geometry::STANDARD)
    }

    /// The start position of `geometry` (see docs/board.md): Silverman 4x4, Microchess 4x5,
    /// 4x6 (Silverman's array with two empty ranks), Gardner 5x5, Petty chess 5x6,
    /// Los Alamos 6x6 and FIDE 8x8; other sizes follow the same back-rank-and-pawns pattern.
    ///
    /// ```
    /// use qchess_board::{Geometry, Position};
    /// let pos = Position::startpos_for(Geometry::new(4, 4).unwrap());
    /// assert_eq!(pos.to_fen(), "rqkr/pppp/PPPP/RQKR w - - 0 1");
    /// ```
    pub fn startpos_for(geometry: Geometry) -> Position {
        match Position::from_fen(&startpos_fen(geometry), geometry) {
            Ok(pos) => pos,
            // Every geometry's start FEN is covered by a test; this arm is unreachable.
            Err(e) => unreachable!("start position of {geometry} is invalid: {e}"),
        }
    }
}
