//! The position's text form, a FEN with type pairs ("AKL-FEN").
//!
//! `<ranks> <side> <castling> <quiet plies> <move number>`, ranks from 8 to 1 separated by `/`,
//! digits for runs of empty squares. A king is `K` / `k`. Any other piece is its two types in
//! brackets, primary first, upper case for White: `(PN)` in superposition, `[PN]` classical.
//! In a classical piece the current type carries a `*` (`[P*N]` is a pawn now). A type not yet
//! revealed to the players carries a `?` (`(PN?)`: the knight is still secret). Castling is
//! `KQkq` or `-` as in FEN: a right means the king and that corner's rook were never touched.

use crate::error::AklError;
use crate::piece::{AklPiece, PieceState, TypePair, TypeSet};
use crate::position::AklPosition;
use qchess_board::{Color, PieceKind, Square};
use std::fmt;
use std::str::FromStr;

fn letter(kind: PieceKind, color: Color) -> char {
    let c = kind.to_char();
    if color == Color::White {
        c.to_ascii_uppercase()
    } else {
        c
    }
}

pub(crate) fn piece_token(p: &AklPiece) -> String {
    if p.is_king() {
        return letter(PieceKind::King, p.color).to_string();
    }
    let quantum = p.is_quantum();
    let mut s = String::from(if quantum { '(' } else { '[' });
    let mut current_marked = false;
    for kind in p.pair.types() {
        s.push(letter(kind, p.color));
        if !p.known.contains(kind) {
            s.push('?');
        }
        if !current_marked && p.current() == Some(kind) {
            s.push('*');
            current_marked = true;
        }
    }
    s.push(if quantum { ')' } else { ']' });
    s
}

impl AklPosition {
    /// The castling rights as in FEN (`KQkq`, `-` when none).
    pub fn castling_text(&self) -> String {
        use crate::moves::CastleSide;
        let mut s = String::new();
        for color in Color::ALL {
            for side in [CastleSide::King, CastleSide::Queen] {
                if self.castling_right(color, side) {
                    let c = if side == CastleSide::King { 'k' } else { 'q' };
                    s.push(if color == Color::White {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    });
                }
            }
        }
        if s.is_empty() { "-".into() } else { s }
    }

    /// Whether `color`'s king and the rook of `side` were never touched or moved.
    pub fn castling_right(&self, color: Color, side: crate::moves::CastleSide) -> bool {
        self.castling[color.index()][side as usize]
    }

    /// Parses the AKL-FEN text form (see the module docs of `fen`).
    ///
    /// ```
    /// use qchess_akl::AklPosition;
    /// let text = "4k3/8/8/8/8/8/4[P*N]3/4K2(RB?) w K 0 1";
    /// let pos = AklPosition::parse(text).unwrap();
    /// assert_eq!(pos.to_string(), text);
    /// assert!(pos.piece("h1".parse().unwrap()).unwrap().is_quantum());
    /// ```
    pub fn parse(text: &str) -> Result<AklPosition, AklError> {
        AklPosition::parse_with(text, false)
    }

    /// Parses a player's view in AKL-FEN: as [`AklPosition::parse`], and a piece of which
    /// only one type is written keeps a lone `?` for the type its viewer has not seen
    /// (`(p?)` for the true `(pn?)`, `[p*?]` for `[p*n?]`). Every unseen type is then drawn
    /// from `rng` as [`AklPosition::sample_hidden`] draws it for the side to move, so bots
    /// can sample what they cannot see.
    ///
    /// ```
    /// use qchess_akl::{AklPosition, Visibility};
    /// use rand::SeedableRng;
    /// let view = "4k3/8/8/8/8/8/4[P*?]3/4K2(r?) w - 0 1";
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let pos = AklPosition::parse_view(view, Visibility::Revealed, &mut rng).unwrap();
    /// let h1 = pos.piece("h1".parse().unwrap()).unwrap();
    /// assert_eq!(h1.pair.primary, qchess_board::PieceKind::Rook);
    /// assert!(h1.is_quantum() && h1.known.len() == 1);
    /// // A true position is a view too (with nothing left out).
    /// assert!(AklPosition::parse_view("4k3/8/8/8/8/8/8/4K3 w - 0 1", Visibility::Revealed, &mut rng).is_ok());
    /// ```
    pub fn parse_view<R: rand::Rng + ?Sized>(
        text: &str,
        visibility: crate::Visibility,
        rng: &mut R,
    ) -> Result<AklPosition, AklError> {
        let pos = AklPosition::parse_with(text, true)?;
        Ok(pos.sample_hidden(pos.side_to_move, visibility, rng))
    }

    fn parse_with(text: &str, view: bool) -> Result<AklPosition, AklError> {
        let bad = |message: String| AklError::Position { message };
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(bad(format!(
                "expected 5 fields (board, side, castling, quiet plies, move number), found {}",
                fields.len()
            )));
        }
        let mut pos = AklPosition::empty();
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != 8 {
            return Err(bad(format!(
                "expected 8 ranks separated by '/', found {}",
                ranks.len()
            )));
        }
        for (i, rank_text) in ranks.iter().enumerate() {
            let rank = 7 - i as u8;
            let mut file = 0u8;
            let mut chars = rank_text.chars().peekable();
            while let Some(c) = chars.next() {
                if file >= 8 {
                    return Err(bad(format!("rank {} has more than 8 squares", rank + 1)));
                }
                let sq = Square::new(file, rank);
                if let Some(d) = c.to_digit(10) {
                    if !(1..=8).contains(&d) || file as u32 + d > 8 {
                        return Err(bad(format!(
                            "rank {}: bad run of empty squares {c}",
                            rank + 1
                        )));
                    }
                    file += d as u8;
                    continue;
                }
                let piece = match c {
                    'K' => AklPiece::king(Color::White),
                    'k' => AklPiece::king(Color::Black),
                    '(' | '[' => {
                        let close = if c == '(' { ')' } else { ']' };
                        let mut body = String::new();
                        loop {
                            match chars.next() {
                                Some(ch) if ch == close => break,
                                Some(ch) => body.push(ch),
                                None => return Err(bad(format!("{sq}: missing {close:?}"))),
                            }
                        }
                        let token = if view {
                            parse_view_token(&body, c == '(')
                        } else {
                            parse_pair_token(&body, c == '(')
                        };
                        token.map_err(|m| bad(format!("{sq}: {m}")))?
                    }
                    other => {
                        return Err(bad(format!(
                            "{sq}: unexpected {other:?}; pieces are K, k, (XY) or [XY]"
                        )));
                    }
                };
                pos.set(sq, Some(piece));
                file += 1;
            }
            if file != 8 {
                return Err(bad(format!("rank {} has {file} squares, not 8", rank + 1)));
            }
        }
        // A side without its king has lost (its king was captured): allowed, for the final
        // position of a finished game; two kings of one side, or none at all, are not.
        let kings = Color::ALL.map(|c| {
            pos.pieces()
                .filter(|(_, p)| p.color == c && p.is_king())
                .count()
        });
        if kings.iter().any(|n| *n > 1) || kings == [0, 0] {
            return Err(bad(format!(
                "each side has at most one king and one side has its king; found {} white and {} black",
                kings[0], kings[1]
            )));
        }
        pos.side_to_move = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(bad(format!("side to move must be w or b, not {other:?}"))),
        };
        if fields[2] != "-" {
            for c in fields[2].chars() {
                let (color, side) = match c {
                    'K' => (Color::White, crate::moves::CastleSide::King),
                    'Q' => (Color::White, crate::moves::CastleSide::Queen),
                    'k' => (Color::Black, crate::moves::CastleSide::King),
                    'q' => (Color::Black, crate::moves::CastleSide::Queen),
                    other => return Err(bad(format!("bad castling letter {other:?}"))),
                };
                let home = Square::new(4, crate::position::home_rank(color));
                let rook_sq = side.rook_from(color);
                let ok_king = pos
                    .piece(home)
                    .is_some_and(|p| p.color == color && p.is_king());
                let ok_rook = pos.piece(rook_sq).is_some_and(|p| {
                    p.color == color && p.pair.primary == PieceKind::Rook && p.is_quantum()
                });
                if !ok_king || !ok_rook {
                    // An untouched piece is still in superposition: a collapsed corner piece
                    // was touched, which cost the right.
                    return Err(bad(format!(
                        "castling right {c} needs the king on {home} and an untouched piece (in \
                         superposition) of primary type rook on {rook_sq}"
                    )));
                }
                pos.castling[color.index()][side as usize] = true;
            }
        }
        pos.quiet_plies = fields[3]
            .parse()
            .map_err(|_| bad(format!("quiet plies must be a number, not {:?}", fields[3])))?;
        pos.fullmove = fields[4].parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
            bad(format!(
                "move number must be a number >= 1, not {:?}",
                fields[4]
            ))
        })?;
        Ok(pos)
    }
}

/// Parses the inside of a view's `(..)` / `[..]`: one letter with a lone `?` for the unseen
/// type (`p?`, `p*?`), or a full pair token. The unseen type is filled in with the known
/// one for now; [`AklPosition::sample_hidden`] redraws it (the pair is not public).
fn parse_view_token(body: &str, quantum: bool) -> Result<AklPiece, String> {
    let letters: Vec<char> = body.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    if letters.len() != 1 {
        return parse_pair_token(body, quantum);
    }
    let unseen = body.chars().filter(|c| *c == '?').count();
    let starred = body.chars().filter(|c| *c == '*').count();
    if unseen != 1
        || body
            .chars()
            .any(|c| !matches!(c, '?' | '*') && !c.is_ascii_alphabetic())
    {
        return Err(format!(
            "{body:?}: a view piece is one type and a '?' for the unseen one"
        ));
    }
    let c = letters[0];
    let kind = PieceKind::from_char(c.to_ascii_lowercase())
        .filter(|k| *k != PieceKind::King)
        .ok_or_else(|| format!("{c:?} is not a non-king piece letter"))?;
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    let state = match (quantum, starred) {
        (true, 0) => PieceState::Quantum,
        (false, 1) => PieceState::Classical(kind),
        (true, _) => return Err("'*' marks the current type of a classical piece [..]".into()),
        (false, _) => return Err("a classical piece [..] needs '*' after its type".into()),
    };
    Ok(AklPiece {
        color,
        pair: TypePair {
            primary: kind,
            secondary: kind,
        },
        state,
        known: TypeSet::EMPTY.with(kind),
    })
}

/// Parses the inside of `(..)` / `[..]`: two letters, each followed by optional `?` and `*`.
fn parse_pair_token(body: &str, quantum: bool) -> Result<AklPiece, String> {
    let mut types = Vec::new();
    let mut chars = body.chars().peekable();
    let mut color = None;
    let mut known = TypeSet::EMPTY;
    let mut current = None;
    while let Some(c) = chars.next() {
        let kind = PieceKind::from_char(c.to_ascii_lowercase())
            .filter(|k| *k != PieceKind::King)
            .ok_or_else(|| format!("{c:?} is not a non-king piece letter"))?;
        let this_color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        if color.is_some_and(|col| col != this_color) {
            return Err("both types must have the same case (colour)".into());
        }
        color = Some(this_color);
        let hidden = chars.next_if_eq(&'?').is_some();
        let starred = chars.next_if_eq(&'*').is_some();
        if !hidden {
            known = known.with(kind);
        }
        if starred {
            if quantum || current.is_some() {
                return Err("'*' marks the one current type of a classical piece [..]".into());
            }
            if hidden {
                return Err("a classical piece's current type is public: no '?' on it".into());
            }
            current = Some(kind);
        }
        types.push(kind);
    }
    if types.len() != 2 {
        return Err(format!("a piece has two types, found {}", types.len()));
    }
    let state = if quantum {
        PieceState::Quantum
    } else {
        PieceState::Classical(current.ok_or("a classical piece [..] needs '*' after its type")?)
    };
    let pair = TypePair::new(types[0], types[1]).ok_or("kings are written K / k")?;
    Ok(AklPiece {
        color: color.expect("two letters"),
        pair,
        state,
        known,
    })
}

impl fmt::Display for AklPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.piece(Square::new(file, rank)) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            write!(f, "{empty}")?;
                            empty = 0;
                        }
                        f.write_str(&piece_token(p))?;
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
        write!(
            f,
            " {} {} {} {}",
            self.side_to_move.fen_char(),
            self.castling_text(),
            self.quiet_plies,
            self.fullmove
        )
    }
}

impl FromStr for AklPosition {
    type Err = AklError;

    fn from_str(s: &str) -> Result<AklPosition, AklError> {
        AklPosition::parse(s)
    }
}
