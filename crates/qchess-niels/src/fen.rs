//! The serialised position: FEN extended with indefinite halves.
//!
//! A half is written in brackets: `[Nro|1]` = knight (upper case White), red mark (`r`/`b`),
//! this mark faces the opponent (`o`) or its player (`p`), marks on the vertical mid-line (`|`)
//! or on the `+`/`-` diagonal of an entangled group, fill pattern 1 (Article 6.3). The two
//! halves with the same letter and pattern are paired. The other fields are FEN's.

use crate::error::NielsError;
use crate::pair::{Diagonal, Facing, Facings, Mark};
use crate::position::{CastlingRights, Occupant, Position};
use qchess_board::{Color, Geometry, Piece, PieceKind, Square};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The board sizes of the papers (full rules Appendix E, schools paper Appendix C).
pub const PAPER_BOARDS: [&str; 5] = ["8x8", "5x6", "4x6", "4x5", "4x4"];

impl Position {
    /// The starting position of `geometry`, taken from qchess-board's
    /// `Position::startpos_for` (FIDE on 8x8; Petty chess 5x6, Silverman's array on 4x6 and
    /// 4x4, Microchess 4x5; other sizes follow its back-rank-and-pawns pattern).
    pub fn startpos(geometry: Geometry) -> Result<Position, NielsError> {
        Position::from_fen(
            &qchess_board::Position::startpos_for(geometry).to_fen(),
            geometry,
        )
    }

    /// Parses a serialised position on a board of `geometry`.
    pub fn from_fen(text: &str, geometry: Geometry) -> Result<Position, NielsError> {
        parse(text, geometry)
    }
}

pub(crate) fn half_token(pos: &Position, sq: Square) -> Option<String> {
    match pos.occupant(sq)? {
        Occupant::Piece(p) => Some(p.fen_char().to_string()),
        Occupant::Half { pair, mark } => {
            let p = pos.pair_ref(pair);
            let diag = p.diagonal.map_or('|', Diagonal::to_char);
            Some(format!(
                "{}{}{}{}{}",
                p.piece.fen_char(),
                mark.to_char(),
                p.facings.of(mark).to_char(),
                diag,
                p.pattern
            ))
        }
    }
}

pub(crate) fn board_field(pos: &Position) -> String {
    let g = pos.geometry;
    let mut s = String::new();
    for rank in (0..g.height()).rev() {
        let mut empty = 0;
        for file in 0..g.width() {
            let sq = Square::new(file, rank);
            match half_token(pos, sq) {
                None => empty += 1,
                Some(tok) => {
                    if empty > 0 {
                        s.push_str(&empty.to_string());
                        empty = 0;
                    }
                    if tok.len() == 1 {
                        s.push_str(&tok);
                    } else {
                        s.push('[');
                        s.push_str(&tok);
                        s.push(']');
                    }
                }
            }
        }
        if empty > 0 {
            s.push_str(&empty.to_string());
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s
}

pub(crate) fn castling_field(pos: &Position) -> String {
    let c = pos.castling;
    let mut s = String::new();
    for (on, ch) in [
        (c.white_king, 'K'),
        (c.white_queen, 'Q'),
        (c.black_king, 'k'),
        (c.black_queen, 'q'),
    ] {
        if on {
            s.push(ch);
        }
    }
    if s.is_empty() { "-".into() } else { s }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {} {} {} {}",
            board_field(self),
            self.side.fen_char(),
            castling_field(self),
            self.en_passant.map_or("-".to_string(), |s| s.to_string()),
            self.halfmove_clock,
            self.fullmove_number
        )?;
        if let Some(sq) = self.must_move {
            write!(f, " {sq}")?;
        }
        Ok(())
    }
}

impl FromStr for Position {
    type Err = NielsError;

    /// Parses a position on the 8x8 board, or infers the size from the board field.
    fn from_str(s: &str) -> Result<Position, NielsError> {
        let board = s.split_whitespace().next().unwrap_or("");
        let height = board.split('/').count() as u8;
        let width = board.split('/').next().map(rank_width).unwrap_or(0);
        let geometry = Geometry::new(width, height)
            .map_err(|e| NielsError::parse(s, 0, format!("board size: {e}")))?;
        parse(s, geometry)
    }
}

fn rank_width(rank: &str) -> u8 {
    let mut w = 0u32;
    let mut in_bracket = false;
    for c in rank.chars() {
        match c {
            '[' => {
                in_bracket = true;
                w += 1;
            }
            ']' => in_bracket = false,
            _ if in_bracket => {}
            d if d.is_ascii_digit() => w += d.to_digit(10).unwrap_or(0),
            _ => w += 1,
        }
    }
    w.min(255) as u8
}

struct HalfSpec {
    sq: Square,
    piece: Piece,
    mark: Mark,
    facing: Facing,
    diagonal: Option<Diagonal>,
    pattern: u8,
    at: usize,
}

fn parse(text: &str, geometry: Geometry) -> Result<Position, NielsError> {
    let err = |at: usize, m: String| NielsError::parse(text, at, m);
    let fields: Vec<(usize, &str)> = {
        let mut v = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            if c.is_whitespace() {
                if let Some(s) = start.take() {
                    v.push((s, &text[s..i]));
                }
            } else if start.is_none() {
                start = Some(i);
            }
        }
        if let Some(s) = start {
            v.push((s, &text[s..]));
        }
        v
    };
    if !matches!(fields.len(), 4 | 6 | 7) {
        return Err(err(
            0,
            format!(
                "expected 6 fields (board side castling en-passant halfmove fullmove), found {}",
                fields.len()
            ),
        ));
    }
    let mut pos = Position::empty(geometry);
    let (board_at, board) = fields[0];
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != geometry.height() as usize {
        return Err(err(
            board_at,
            format!(
                "{} ranks for a {geometry} board, found {}",
                geometry.height(),
                ranks.len()
            ),
        ));
    }
    let mut halves = Vec::new();
    let mut offset = board_at;
    for (ri, rank_text) in ranks.iter().enumerate() {
        let rank = geometry.height() - 1 - ri as u8;
        let mut file = 0u8;
        let chars: Vec<(usize, char)> = rank_text.char_indices().collect();
        let mut i = 0;
        while i < chars.len() {
            let (ci, c) = chars[i];
            let at = offset + ci;
            if file >= geometry.width() {
                return Err(err(
                    at,
                    format!("rank {} has more than {} files", rank + 1, geometry.width()),
                ));
            }
            if let Some(d) = c.to_digit(10) {
                if d == 0 || file + d as u8 > geometry.width() {
                    return Err(err(
                        at,
                        format!("empty-square count {d} does not fit the rank"),
                    ));
                }
                file += d as u8;
                i += 1;
            } else if c == '[' {
                let close = rank_text[ci..]
                    .find(']')
                    .ok_or_else(|| err(at, "unclosed '[' of an indefinite half".into()))?;
                let tok = &rank_text[ci + 1..ci + close];
                halves.push(parse_half(text, at + 1, tok, Square::new(file, rank))?);
                file += 1;
                while i < chars.len() && chars[i].0 <= ci + close {
                    i += 1;
                }
            } else {
                let piece = Piece::from_fen_char(c)
                    .ok_or_else(|| err(at, format!("{c:?} is not a piece letter, digit or '['")))?;
                pos.put(Square::new(file, rank), piece);
                file += 1;
                i += 1;
            }
        }
        if file != geometry.width() {
            return Err(err(
                offset,
                format!(
                    "rank {} has {file} files, expected {}",
                    rank + 1,
                    geometry.width()
                ),
            ));
        }
        offset += rank_text.len() + 1;
    }
    // Pair up the halves by piece and pattern.
    let mut by_instance: BTreeMap<(char, u8), Vec<HalfSpec>> = BTreeMap::new();
    for h in halves {
        by_instance
            .entry((h.piece.fen_char(), h.pattern))
            .or_default()
            .push(h);
    }
    let mut order: Vec<(usize, (char, u8))> =
        by_instance.iter().map(|(k, v)| (v[0].at, *k)).collect();
    order.sort();
    for (_, key) in order {
        let hs = &by_instance[&key];
        let first = &hs[0];
        if hs.len() != 2 {
            return Err(err(
                first.at,
                format!(
                    "instance {}{} has {} halves, expected 2",
                    key.0,
                    key.1,
                    hs.len()
                ),
            ));
        }
        let (a, b) = (&hs[0], &hs[1]);
        if a.mark == b.mark {
            return Err(err(
                b.at,
                format!("both halves of {}{} carry the same mark", key.0, key.1),
            ));
        }
        if a.diagonal != b.diagonal {
            return Err(err(
                b.at,
                format!(
                    "the halves of {}{} lie on different diagonals",
                    key.0, key.1
                ),
            ));
        }
        let (red, blue) = if a.mark == Mark::Red { (a, b) } else { (b, a) };
        let facings = Facings {
            red: red.facing,
            blue: blue.facing,
        };
        pos.add_pair_with_pattern(a.piece, red.sq, blue.sq, facings, a.diagonal, key.1);
    }
    let (side_at, side) = fields[1];
    pos.side = match side {
        "w" => Color::White,
        "b" => Color::Black,
        _ => {
            return Err(err(
                side_at,
                format!("side to move must be w or b, found {side:?}"),
            ));
        }
    };
    let (c_at, castling) = fields[2];
    let mut rights = CastlingRights::default();
    if castling != "-" {
        for (i, c) in castling.char_indices() {
            match c {
                'K' => rights.white_king = true,
                'Q' => rights.white_queen = true,
                'k' => rights.black_king = true,
                'q' => rights.black_queen = true,
                _ => return Err(err(c_at + i, format!("{c:?} is not a castling right"))),
            }
        }
    }
    pos.castling = rights;
    let (ep_at, ep) = fields[3];
    if ep != "-" {
        let sq: Square = ep
            .parse()
            .map_err(|_| err(ep_at, format!("{ep:?} is not a square")))?;
        if !geometry.contains(sq) {
            return Err(err(ep_at, format!("{sq} is off the {geometry} board")));
        }
        pos.en_passant = Some(sq);
    }
    if fields.len() >= 6 {
        let (h_at, h) = fields[4];
        pos.halfmove_clock = h
            .parse()
            .map_err(|_| err(h_at, format!("{h:?} is not a halfmove count")))?;
        let (f_at, f) = fields[5];
        pos.fullmove_number = f
            .parse()
            .map_err(|_| err(f_at, format!("{f:?} is not a move number")))?;
        if pos.fullmove_number == 0 {
            return Err(err(f_at, "the move number starts at 1".into()));
        }
    }
    if let Some(&(m_at, m)) = fields.get(6) {
        let sq: Square = m
            .parse()
            .map_err(|_| err(m_at, format!("{m:?} is not a square")))?;
        if !matches!(pos.occupant(sq), Some(Occupant::Piece(p)) if p.color == pos.side) {
            return Err(err(
                m_at,
                format!("the piece that must move after a remote collapse is not on {sq}"),
            ));
        }
        pos.must_move = Some(sq);
    }
    validate(&pos).map_err(|m| err(0, m))?;
    Ok(pos)
}

fn parse_half(text: &str, at: usize, tok: &str, sq: Square) -> Result<HalfSpec, NielsError> {
    let err = |i: usize, m: &str| NielsError::parse(text, at + i, m.to_string());
    let chars: Vec<char> = tok.chars().collect();
    if chars.len() < 5 {
        return Err(err(
            0,
            "an indefinite half is [<piece><r|b><o|p><||+|-><pattern>], e.g. [Nro|1]",
        ));
    }
    let piece = Piece::from_fen_char(chars[0]).ok_or_else(|| err(0, "expected a piece letter"))?;
    let mark = match chars[1] {
        'r' => Mark::Red,
        'b' => Mark::Blue,
        _ => return Err(err(1, "expected the mark colour r or b")),
    };
    let facing = Facing::from_char(chars[2]).ok_or_else(|| err(2, "expected the facing o or p"))?;
    let diagonal = match chars[3] {
        '|' => None,
        c => Some(Diagonal::from_char(c).ok_or_else(|| err(3, "expected |, + or -"))?),
    };
    let digits: String = chars[4..].iter().collect();
    let pattern: u8 = digits
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| err(4, "expected the fill pattern number 1..255"))?;
    Ok(HalfSpec {
        sq,
        piece,
        mark,
        facing,
        diagonal,
        pattern,
        at,
    })
}

/// Invariants every position must satisfy; returns what is broken.
pub(crate) fn validate(pos: &Position) -> Result<(), String> {
    let g = pos.geometry;
    for color in Color::ALL {
        let kings = pos
            .pairs
            .iter()
            .filter(|p| p.piece == Piece::new(color, PieceKind::King))
            .count()
            + Square::ALL
                .iter()
                .filter(|s| {
                    pos.occupant(**s) == Some(Occupant::Piece(Piece::new(color, PieceKind::King)))
                })
                .count();
        if kings != 1 {
            return Err(format!(
                "{color:?} must have exactly one king (conventional or one pair), found {kings}"
            ));
        }
    }
    for sq in Square::ALL {
        if let Some(p) = pos.piece_at(sq) {
            if p.kind == PieceKind::Pawn && (sq.rank() == 0 || sq.rank() == g.height() - 1) {
                return Err(format!("a pawn on {sq}, on the first or last rank"));
            }
        }
    }
    let groups = pos
        .pairs
        .iter()
        .filter_map(|p| p.diagonal)
        .collect::<std::collections::BTreeSet<_>>();
    for d in groups {
        let members = pos.group(d);
        let colors: std::collections::BTreeSet<_> = members
            .iter()
            .map(|id| pos.pair_ref(*id).piece.color.index())
            .collect();
        if members.len() < 2 || colors.len() < 2 {
            return Err(format!(
                "the entangled group on the {} diagonal needs pairs of both players",
                d.to_char()
            ));
        }
    }
    for p in &pos.pairs {
        if pos.rules_violation_pawn(p) {
            return Err(format!(
                "pawn pair {}{}: the red half must stand farther from the start (7.3)",
                p.piece.fen_char(),
                p.pattern
            ));
        }
    }
    if let Some(ep) = pos.en_passant {
        let rank_ok = match pos.side {
            Color::White => ep.rank() + 3 == g.height(),
            Color::Black => ep.rank() == 2,
        };
        if !rank_ok {
            return Err(format!(
                "en passant square {ep} is not on the rank a pawn passes"
            ));
        }
    }
    Ok(())
}

impl Position {
    fn rules_violation_pawn(&self, p: &crate::pair::Pair) -> bool {
        if p.piece.kind != PieceKind::Pawn || p.red.file() != p.blue.file() {
            return false;
        }
        let ahead = |a: Square, b: Square| match p.piece.color {
            Color::White => a.rank() > b.rank(),
            Color::Black => a.rank() < b.rank(),
        };
        ahead(p.blue, p.red)
    }
}

// The text key of a position lives with the text forms it is made of (so `position` does
// not depend on `fen`, which depends on `position`).
impl Position {
    /// A key equal for positions FIDE 9.2 treats as the same (pair identities replaced by
    /// their fill patterns; counters left out).
    pub fn repetition_key(&self) -> String {
        let mut s = board_field(self);
        s.push(' ');
        s.push(self.side.fen_char());
        s.push(' ');
        s.push_str(&castling_field(self));
        s.push(' ');
        match self.en_passant {
            Some(sq) => s.push_str(&sq.to_string()),
            None => s.push('-'),
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_round_trip() {
        let expected = [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "rnbqk/ppppp/5/5/PPPPP/RNBQK w - - 0 1",
            "rqkr/pppp/4/4/PPPP/RQKR w - - 0 1",
            "knbr/p3/4/3P/RBNK w - - 0 1",
            "rqkr/pppp/PPPP/RQKR w - - 0 1",
        ];
        for (g, fen) in PAPER_BOARDS.iter().zip(expected) {
            let geometry: Geometry = g.parse().unwrap();
            let p = Position::startpos(geometry).unwrap();
            assert_eq!(p.to_string(), fen);
            assert_eq!(fen.parse::<Position>().unwrap(), p);
        }
    }

    #[test]
    fn halves_round_trip_and_errors() {
        let fen = "8/8/2[nro|1]5/4[nbo|1]3/8/6K1/8/k7 w - - 0 1";
        let p: Position = fen.parse().unwrap();
        assert_eq!(p.pairs().len(), 1);
        assert_eq!(p.to_string(), fen);
        let e = "8/8/2[nro|1]5/8/8/6K1/8/k7 w - - 0 1"
            .parse::<Position>()
            .unwrap_err();
        assert!(e.to_string().contains("1 halves"), "{e}");
        let e = "8/8/2[nxo|1]5/4[nbo|1]3/8/6K1/8/k7 w - - 0 1"
            .parse::<Position>()
            .unwrap_err();
        assert!(matches!(e, NielsError::Parse { at: 7, .. }), "{e:?}");
        assert!("8/8/8/8/8/8/8/8 w - - 0 1".parse::<Position>().is_err());
        for junk in [
            "",
            "[",
            "[Nro|1",
            "4k3/8/8/8/8/8/8/[é] w - - 0 1",
            "é",
            "k3/4/4/K3 x - - 0 1",
            "k3/4/4/K3 w - e9 0 1",
            "k3/4/4/K3 w - - -1 1",
            "k3/4/4/K3 w - - 0 0 a1",
        ] {
            assert!(junk.parse::<Position>().is_err(), "{junk}");
        }
    }
}
