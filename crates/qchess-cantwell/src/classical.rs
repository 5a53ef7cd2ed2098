//! Layer 2, the classical information of the paper's section 5: the piece-type vector `v`
//! (eq. 2), the flags `F` (eq. 3: side to move, castling rights, en-passant file) and the move
//! counters, with FEN in and out.
//!
//! The piece vector holds one FEN letter (or nothing) per square. A square keeps its letter
//! while it has a positive probability of being occupied (section 5: "occupied, or partially
//! occupied"); the game clears it when that probability reaches zero.

use qchess_board::{Color, Piece, PieceKind, Square};
use std::fmt;

/// A square counts as occupied (keeps its letter) while its probability exceeds this. Far
/// below any genuine branch a game reaches (2^-60 ~ 1e-18) and far above the rounding noise
/// of a cancelled amplitude (~1e-32).
pub const OCCUPIED_EPS: f64 = 1e-24;

/// One piece letter or nothing for each of the 64 squares (the paper's vector `v`, eq. 2).
///
/// ```
/// use qchess_cantwell::PieceVector;
/// use qchess_board::Square;
/// let v: PieceVector = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR".parse().unwrap();
/// assert_eq!(v.get(Square::E1).unwrap().fen_char(), 'K');
/// assert_eq!(v.to_string(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PieceVector([Option<Piece>; 64]);

impl Default for PieceVector {
    fn default() -> Self {
        Self([None; 64])
    }
}

impl PieceVector {
    /// The empty board.
    pub const EMPTY: PieceVector = PieceVector([None; 64]);

    /// The letter on `sq`, if any.
    #[inline]
    pub fn get(&self, sq: Square) -> Option<Piece> {
        self.0[sq.index() as usize]
    }

    /// Puts `piece` (or nothing) on `sq`.
    #[inline]
    pub fn set(&mut self, sq: Square, piece: Option<Piece>) {
        self.0[sq.index() as usize] = piece;
    }

    /// The letters as an array indexed by square.
    pub fn as_array(&self) -> &[Option<Piece>; 64] {
        &self.0
    }

    /// Squares holding a letter, as a bitboard mask (bit i = square i).
    pub fn occupied_mask(&self) -> u64 {
        self.mask_where(|_| true)
    }

    /// Squares whose letter satisfies `pred`, as a bitboard mask.
    pub fn mask_where(&self, pred: impl Fn(Piece) -> bool) -> u64 {
        let mut mask = 0u64;
        for (i, p) in self.0.iter().enumerate() {
            if p.is_some_and(&pred) {
                mask |= 1u64 << i;
            }
        }
        mask
    }

    /// Squares holding exactly `piece`, as a bitboard mask.
    pub fn mask_of(&self, piece: Piece) -> u64 {
        self.mask_where(|p| p == piece)
    }
}

/// Why a FEN string (or its board part) was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FenError {
    /// Character position (0-based) in the FEN string where the problem was found.
    pub position: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad FEN at character {}: {}", self.position, self.reason)
    }
}

impl std::error::Error for FenError {}

fn fen_err(position: usize, reason: impl Into<String>) -> FenError {
    FenError {
        position,
        reason: reason.into(),
    }
}

impl std::str::FromStr for PieceVector {
    type Err = FenError;

    /// Parses the board part of a FEN (8 ranks, rank 8 first, separated by `/`).
    fn from_str(s: &str) -> Result<Self, FenError> {
        parse_board(s, 0)
    }
}

fn parse_board(s: &str, offset: usize) -> Result<PieceVector, FenError> {
    let mut v = PieceVector::EMPTY;
    let mut rank: i32 = 7;
    let mut file: u8 = 0;
    for (i, c) in s.char_indices() {
        let pos = offset + i;
        match c {
            '/' => {
                if file != 8 {
                    return Err(fen_err(
                        pos,
                        format!("rank {} has {file} squares, not 8", rank + 1),
                    ));
                }
                rank -= 1;
                file = 0;
                if rank < 0 {
                    return Err(fen_err(pos, "more than 8 ranks"));
                }
            }
            '1'..='8' => {
                file += c as u8 - b'0';
                if file > 8 {
                    return Err(fen_err(
                        pos,
                        format!("rank {} has more than 8 squares", rank + 1),
                    ));
                }
            }
            _ => {
                let piece = Piece::from_fen_char(c).ok_or_else(|| {
                    fen_err(
                        pos,
                        format!("{c:?} is not a piece letter (PNBRQK or pnbrqk) or 1-8"),
                    )
                })?;
                if file >= 8 {
                    return Err(fen_err(
                        pos,
                        format!("rank {} has more than 8 squares", rank + 1),
                    ));
                }
                v.set(Square::new(file, rank as u8), Some(piece));
                file += 1;
            }
        }
    }
    if rank != 0 {
        return Err(fen_err(
            offset + s.len(),
            format!("{} ranks, not 8", 8 - rank),
        ));
    }
    if file != 8 {
        return Err(fen_err(
            offset + s.len(),
            format!("rank 1 has {file} squares, not 8"),
        ));
    }
    Ok(v)
}

impl fmt::Display for PieceVector {
    /// Prints the board part of a FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..8u8).rev() {
            let mut empty = 0;
            for file in 0..8u8 {
                match self.get(Square::new(file, rank)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            write!(f, "{empty}")?;
                            empty = 0;
                        }
                        write!(f, "{}", p.fen_char())?;
                    }
                }
            }
            if empty > 0 {
                write!(f, "{empty}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        Ok(())
    }
}

/// Castling rights `F_K, F_Q, F_k, F_q` (eq. 3c-3f).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct CastlingRights {
    /// White king side (`K`).
    pub white_king_side: bool,
    /// White queen side (`Q`).
    pub white_queen_side: bool,
    /// Black king side (`k`).
    pub black_king_side: bool,
    /// Black queen side (`q`).
    pub black_queen_side: bool,
}

impl CastlingRights {
    /// All four rights.
    pub const ALL: CastlingRights = CastlingRights {
        white_king_side: true,
        white_queen_side: true,
        black_king_side: true,
        black_queen_side: true,
    };

    /// The right of `color` on the king side (`true`) or queen side (`false`).
    pub fn get(&self, color: Color, king_side: bool) -> bool {
        match (color, king_side) {
            (Color::White, true) => self.white_king_side,
            (Color::White, false) => self.white_queen_side,
            (Color::Black, true) => self.black_king_side,
            (Color::Black, false) => self.black_queen_side,
        }
    }

    /// Drops every right whose king or rook start square is in `involved` (a square mask):
    /// section 8.12 and rules-notes D13, any involvement counts.
    pub fn drop_involved(&mut self, involved: u64) {
        let hit = |sq: Square| involved & (1u64 << sq.index()) != 0;
        if hit(Square::E1) {
            self.white_king_side = false;
            self.white_queen_side = false;
        }
        if hit(Square::H1) {
            self.white_king_side = false;
        }
        if hit(Square::A1) {
            self.white_queen_side = false;
        }
        if hit(Square::E8) {
            self.black_king_side = false;
            self.black_queen_side = false;
        }
        if hit(Square::H8) {
            self.black_king_side = false;
        }
        if hit(Square::A8) {
            self.black_queen_side = false;
        }
    }
}

impl fmt::Display for CastlingRights {
    /// The FEN castling field (`KQkq`, `-` when none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for (on, c) in [
            (self.white_king_side, 'K'),
            (self.white_queen_side, 'Q'),
            (self.black_king_side, 'k'),
            (self.black_queen_side, 'q'),
        ] {
            if on {
                write!(f, "{c}")?;
                any = true;
            }
        }
        if !any {
            f.write_str("-")?;
        }
        Ok(())
    }
}

/// The flags `F` of eq. 3 plus the move counters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Flags {
    /// `F_c`: the side to move.
    pub side_to_move: Color,
    /// `F_K .. F_q`.
    pub castling: CastlingRights,
    /// `F_ep`: the file (0 = a) of the pawn that may be taken en passant.
    pub en_passant_file: Option<u8>,
    /// Plies since the 50-move counter was last reset (FEN's halfmove clock).
    pub halfmove_clock: u32,
    /// The move number, starting at 1 and incremented after Black moves.
    pub fullmove_number: u32,
}

impl Default for Flags {
    fn default() -> Self {
        Self {
            side_to_move: Color::White,
            castling: CastlingRights::ALL,
            en_passant_file: None,
            halfmove_clock: 0,
            fullmove_number: 1,
        }
    }
}

/// The whole classical layer: piece vector and flags.
///
/// ```
/// use qchess_cantwell::ClassicalLayer;
/// let start = ClassicalLayer::from_fen(qchess_cantwell::STARTPOS_FEN).unwrap();
/// assert_eq!(start.to_fen(), qchess_cantwell::STARTPOS_FEN);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ClassicalLayer {
    /// The piece letters `v`.
    pub pieces: PieceVector,
    /// The flags `F` and counters.
    pub flags: Flags,
}

/// The FEN of the standard starting position.
pub const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

impl ClassicalLayer {
    /// Parses a FEN. The counters may be left out (they default to `0 1`); `startpos` is
    /// accepted as the standard start. Castling rights whose king or rook is not on its start
    /// square are rejected, as is an en-passant square without the pawn that just moved two.
    pub fn from_fen(fen: &str) -> Result<Self, FenError> {
        let trimmed = fen.trim();
        if trimmed == "startpos" {
            return Self::from_fen(STARTPOS_FEN);
        }
        let lead = fen.len() - fen.trim_start().len();
        let mut fields = Vec::new();
        let mut start = None;
        for (i, c) in fen.char_indices() {
            if c.is_whitespace() {
                if let Some(s) = start.take() {
                    fields.push((s, &fen[s..i]));
                }
            } else if start.is_none() {
                start = Some(i);
            }
        }
        if let Some(s) = start {
            fields.push((s, &fen[s..]));
        }
        if fields.is_empty() {
            return Err(fen_err(lead, "empty FEN"));
        }
        if fields.len() != 4 && fields.len() != 6 && fields.len() != 2 {
            return Err(fen_err(
                fields.last().map_or(0, |f| f.0),
                format!(
                    "{} fields: expected board, side, castling, en passant (and the two counters)",
                    fields.len()
                ),
            ));
        }
        let pieces = parse_board(fields[0].1, fields[0].0)?;
        let (spos, side) = fields[1];
        let side_to_move = match side {
            "w" => Color::White,
            "b" => Color::Black,
            _ => {
                return Err(fen_err(
                    spos,
                    format!("side to move {side:?} is not w or b"),
                ));
            }
        };
        let mut flags = Flags {
            side_to_move,
            castling: CastlingRights::default(),
            ..Flags::default()
        };
        if fields.len() >= 4 {
            let (cpos, castling) = fields[2];
            if castling != "-" {
                for (i, c) in castling.char_indices() {
                    let r = &mut flags.castling;
                    let slot = match c {
                        'K' => &mut r.white_king_side,
                        'Q' => &mut r.white_queen_side,
                        'k' => &mut r.black_king_side,
                        'q' => &mut r.black_queen_side,
                        _ => {
                            return Err(fen_err(
                                cpos + i,
                                format!("{c:?} is not a castling letter (KQkq)"),
                            ));
                        }
                    };
                    if *slot {
                        return Err(fen_err(cpos + i, format!("castling letter {c:?} repeated")));
                    }
                    *slot = true;
                }
                check_castling(&pieces, &flags.castling).map_err(|r| fen_err(cpos, r))?;
            }
            let (epos, ep) = fields[3];
            if ep != "-" {
                let sq: Square = ep.parse().map_err(|_| {
                    fen_err(
                        epos,
                        format!("en-passant field {ep:?} is not a square or -"),
                    )
                })?;
                let (rank, pawn_rank, pawn) = match side_to_move {
                    Color::White => (5, 4, Piece::new(Color::Black, PieceKind::Pawn)),
                    Color::Black => (2, 3, Piece::new(Color::White, PieceKind::Pawn)),
                };
                if sq.rank() != rank {
                    return Err(fen_err(
                        epos,
                        format!("en-passant square {ep} is on the wrong rank"),
                    ));
                }
                if pieces.get(Square::new(sq.file(), pawn_rank)) != Some(pawn) {
                    return Err(fen_err(
                        epos,
                        format!("en-passant square {ep} has no pawn in front of it"),
                    ));
                }
                flags.en_passant_file = Some(sq.file());
            }
        }
        if fields.len() == 6 {
            let (hpos, h) = fields[4];
            flags.halfmove_clock = h
                .parse()
                .map_err(|_| fen_err(hpos, format!("halfmove clock {h:?} is not a number")))?;
            let (fpos, fm) = fields[5];
            flags.fullmove_number =
                fm.parse().ok().filter(|&n: &u32| n >= 1).ok_or_else(|| {
                    fen_err(fpos, format!("move number {fm:?} is not a number >= 1"))
                })?;
        }
        Ok(Self { pieces, flags })
    }

    /// The FEN of this layer (for a quantum position, the letters of every partly occupied
    /// square: the classical layer only).
    pub fn to_fen(&self) -> String {
        let ep = match self.flags.en_passant_file {
            None => "-".to_string(),
            Some(file) => {
                let rank = if self.flags.side_to_move == Color::White {
                    5
                } else {
                    2
                };
                Square::new(file, rank).to_string()
            }
        };
        format!(
            "{} {} {} {} {} {}",
            self.pieces,
            self.flags.side_to_move.fen_char(),
            self.flags.castling,
            ep,
            self.flags.halfmove_clock,
            self.flags.fullmove_number
        )
    }
}

fn check_castling(pieces: &PieceVector, rights: &CastlingRights) -> Result<(), String> {
    let need = |sq: Square, c: char| pieces.get(sq).map(|p| p.fen_char()) == Some(c);
    let checks = [
        (rights.white_king_side, 'K', Square::E1, Square::H1, 'R'),
        (rights.white_queen_side, 'Q', Square::E1, Square::A1, 'R'),
        (rights.black_king_side, 'k', Square::E8, Square::H8, 'r'),
        (rights.black_queen_side, 'q', Square::E8, Square::A8, 'r'),
    ];
    for (on, letter, king_sq, rook_sq, rook) in checks {
        let king = if rook == 'R' { 'K' } else { 'k' };
        if on && !(need(king_sq, king) && need(rook_sq, rook)) {
            return Err(format!(
                "castling right {letter} needs the king on {king_sq} and the rook on {rook_sq}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fen_round_trip_and_errors() {
        let fen = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 3 17";
        let layer = ClassicalLayer::from_fen(fen).unwrap();
        assert_eq!(layer.flags.en_passant_file, Some(3));
        assert_eq!(layer.flags.halfmove_clock, 3);
        assert_eq!(layer.to_fen(), fen);
        assert_eq!(
            ClassicalLayer::from_fen("startpos").unwrap().to_fen(),
            STARTPOS_FEN
        );
        let err =
            ClassicalLayer::from_fen("rnbqkbnr/ppppXppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
                .unwrap_err();
        assert_eq!(err.position, 13);
        let err = ClassicalLayer::from_fen("8/8/8/8/8/8/8/8 x - - 0 1").unwrap_err();
        assert_eq!(err.position, 16);
        let err = ClassicalLayer::from_fen("8/8/8/8/8/8/8/4K3 w K - 0 1").unwrap_err();
        assert!(err.reason.contains("rook on h1"), "{err}");
        assert!(ClassicalLayer::from_fen("8/8/8/8/8/8/8/8/8 w - - 0 1").is_err());
        assert!(ClassicalLayer::from_fen("8/8/8/8/8/8/8/7 w - - 0 1").is_err());
        assert!(ClassicalLayer::from_fen("8/8/8/8/8/8/8/8 w - e6 0 1").is_err());
        assert!(ClassicalLayer::from_fen("").is_err());
    }
}
