//! Moves and their text notation (docs/niels.md, "Notation").
//!
//! | kind | form | example |
//! |---|---|---|
//! | ordinary move, attempted capture, en passant, castling (king two files) | `<from><to>[=<p>]` | `f5e6`, `e7e8=q` |
//! | superposition (7.1) | `<from>^<red><blue>:<facings>[=<p>]` | `c6^d4e5:oo` |
//! | entanglement (8.1) | `<from>&<red><blue>:<facings>[=<p>]@<target>[<diag>]` | `f6&f6d5:oo@e4-` |
//! | flip (7.7) | `f:<square>` | `f:e4` |
//! | Z move (App. D) | `z:<square>` | `z:e5` |
//! | Hadamard move (App. D) | `h:<square>` | `h:e4` |
//! | tunnelling (schools paper App. C) | `<from>~<to>` | `e1~e5` |
//! | remote collapse (competitive rule 3) | `c:<square>` | `c:d4` |
//!
//! `<facings>` is the red mark's facing then the blue mark's: `o` towards the opponent, `p`
//! towards the player who owns the pair. In a move-and-stay, one of `<red>`, `<blue>` is
//! `<from>`. `<diag>` is `+` or `-`.

use crate::error::NielsError;
use crate::pair::{Diagonal, Facings};
use qchess_board::{PieceKind, Square};
use std::fmt;
use std::str::FromStr;

/// One move of any kind.
///
/// ```
/// use qchess_niels::Move;
/// for text in ["e2e4", "c6^d4e5:oo", "f6&f6d5:oo@e4-", "f:e4", "h:e4", "e1~e5", "c:d4", "e7e8=q"] {
///     let mv: Move = text.parse().unwrap();
///     assert_eq!(mv.to_string(), text);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    /// An ordinary move of a conventional piece or an indefinite half; an attempted capture
    /// when the target holds an opponent's piece; en passant; castling (the king moves two
    /// files).
    Step {
        /// Square of departure.
        from: Square,
        /// Square of arrival.
        to: Square,
        /// Promotion piece when a pawn (or pawn half) reaches the last rank.
        promotion: Option<PieceKind>,
    },
    /// A superposition move (7.1): the conventional piece on `from` becomes a pair with its red
    /// half on `red` and its blue half on `blue` (one of them may be `from`).
    Superposition {
        /// Square of the conventional piece.
        from: Square,
        /// Square of the red half.
        red: Square,
        /// Square of the blue half.
        blue: Square,
        /// Facings of the marks.
        facings: Facings,
        /// Promotion of a pawn half reaching the last rank (7.8).
        promotion: Option<PieceKind>,
    },
    /// An entanglement move (8.1): move and stay, joining the superposition of the opponent's
    /// pair that has a half on `target`.
    Entanglement {
        /// Square of the conventional piece (one half stays here).
        from: Square,
        /// Square of the red half.
        red: Square,
        /// Square of the blue half.
        blue: Square,
        /// Facings of the marks (same type as the target pair's).
        facings: Facings,
        /// Promotion of a pawn half reaching the last rank (7.8).
        promotion: Option<PieceKind>,
        /// A half of the opponent's pair that is joined.
        target: Square,
        /// The diagonal of the group; `None` lets the engine pick (the target's group, or the
        /// first free diagonal, -45 before +45).
        diagonal: Option<Diagonal>,
    },
    /// Inverting the facing of both marks of the pair with a half on `square` (7.7, 8.6).
    Flip {
        /// A square of one of the pair's halves.
        square: Square,
    },
    /// Z move (Appendix D): inverting the facing of the mark of the half on `square`.
    Z {
        /// The half whose mark is rotated.
        square: Square,
    },
    /// Hadamard move (Appendix D; on a whole group in the Hadamard+ Game).
    Hadamard {
        /// A square of one of the pair's halves.
        square: Square,
    },
    /// Tunnelling (schools paper Appendix C): through one conventional opponent piece to the
    /// empty square right behind it; succeeds on a 6.
    Tunnel {
        /// Square of the rook, bishop or queen.
        from: Square,
        /// The empty square right behind the opponent's piece.
        to: Square,
    },
    /// Remote collapse of one's own pair (competitive rule 3); the same player then moves the
    /// resulting conventional piece.
    RemoteCollapse {
        /// A square of one of the pair's halves.
        square: Square,
    },
}

impl Move {
    /// The ordinary move `from` -> `to`.
    pub const fn step(from: Square, to: Square) -> Move {
        Move::Step {
            from,
            to,
            promotion: None,
        }
    }

    /// The square the move starts from (the half's square for flip, Z, Hadamard, collapse).
    pub fn from_square(&self) -> Square {
        match *self {
            Move::Step { from, .. }
            | Move::Superposition { from, .. }
            | Move::Entanglement { from, .. }
            | Move::Tunnel { from, .. } => from,
            Move::Flip { square }
            | Move::Z { square }
            | Move::Hadamard { square }
            | Move::RemoteCollapse { square } => square,
        }
    }
}

fn promo_suffix(f: &mut fmt::Formatter<'_>, p: Option<PieceKind>) -> fmt::Result {
    match p {
        Some(k) => write!(f, "={}", k.to_char()),
        None => Ok(()),
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Move::Step {
                from,
                to,
                promotion,
            } => {
                write!(f, "{from}{to}")?;
                promo_suffix(f, promotion)
            }
            Move::Superposition {
                from,
                red,
                blue,
                facings,
                promotion,
            } => {
                write!(f, "{from}^{red}{blue}:{facings}")?;
                promo_suffix(f, promotion)
            }
            Move::Entanglement {
                from,
                red,
                blue,
                facings,
                promotion,
                target,
                diagonal,
            } => {
                write!(f, "{from}&{red}{blue}:{facings}")?;
                promo_suffix(f, promotion)?;
                write!(f, "@{target}")?;
                if let Some(d) = diagonal {
                    write!(f, "{}", d.to_char())?;
                }
                Ok(())
            }
            Move::Flip { square } => write!(f, "f:{square}"),
            Move::Z { square } => write!(f, "z:{square}"),
            Move::Hadamard { square } => write!(f, "h:{square}"),
            Move::Tunnel { from, to } => write!(f, "{from}~{to}"),
            Move::RemoteCollapse { square } => write!(f, "c:{square}"),
        }
    }
}

/// A cursor over move text that reports character positions.
struct Reader<'a> {
    text: &'a str,
    pos: usize,
}

impl Reader<'_> {
    fn err(&self, message: impl Into<String>) -> NielsError {
        NielsError::parse(self.text, self.pos, message)
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), NielsError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(format!("expected {what}")))
        }
    }

    fn square(&mut self) -> Result<Square, NielsError> {
        let rest = &self.text[self.pos..];
        let mut it = rest.chars();
        match (it.next(), it.next()) {
            (Some(f @ 'a'..='h'), Some(r @ '1'..='8')) => {
                self.pos += 2;
                Ok(Square::new(f as u8 - b'a', r as u8 - b'1'))
            }
            _ => Err(self.err("expected a square such as e4")),
        }
    }

    fn facings(&mut self) -> Result<Facings, NielsError> {
        let rest = &self.text[self.pos..];
        let two: String = rest.chars().take(2).collect();
        let f = Facings::parse(&two).ok_or_else(|| {
            self.err("expected the facings of the red and blue marks: oo, op, po or pp")
        })?;
        self.pos += 2;
        Ok(f)
    }

    fn promotion(&mut self) -> Result<Option<PieceKind>, NielsError> {
        if !self.eat('=') {
            return Ok(None);
        }
        match self.peek().and_then(PieceKind::from_char) {
            Some(k) if !matches!(k, PieceKind::Pawn | PieceKind::King) => {
                self.pos += 1;
                Ok(Some(k))
            }
            _ => Err(self.err("expected a promotion piece q, r, b or n")),
        }
    }

    fn end(&self) -> Result<(), NielsError> {
        if self.pos == self.text.len() {
            Ok(())
        } else {
            Err(self.err("unexpected text after the move"))
        }
    }
}

impl FromStr for Move {
    type Err = NielsError;

    fn from_str(text: &str) -> Result<Move, NielsError> {
        let mut r = Reader { text, pos: 0 };
        if text.len() >= 2 && text.as_bytes()[1] == b':' {
            let kind = text.as_bytes()[0];
            r.pos = 2;
            let square = r.square()?;
            r.end()?;
            return match kind {
                b'f' => Ok(Move::Flip { square }),
                b'z' => Ok(Move::Z { square }),
                b'h' => Ok(Move::Hadamard { square }),
                b'c' => Ok(Move::RemoteCollapse { square }),
                _ => Err(NielsError::parse(
                    text,
                    0,
                    "expected f:, z:, h: or c: before the square",
                )),
            };
        }
        let from = r.square()?;
        let mv = if r.eat('^') {
            let red = r.square()?;
            let blue = r.square()?;
            r.expect(':', "':' and the facings of the marks")?;
            let facings = r.facings()?;
            let promotion = r.promotion()?;
            Move::Superposition {
                from,
                red,
                blue,
                facings,
                promotion,
            }
        } else if r.eat('&') {
            let red = r.square()?;
            let blue = r.square()?;
            r.expect(':', "':' and the facings of the marks")?;
            let facings = r.facings()?;
            let promotion = r.promotion()?;
            r.expect('@', "'@' and a square of the opponent's pair being joined")?;
            let target = r.square()?;
            let diagonal = match r.peek() {
                Some(c @ ('+' | '-')) => {
                    r.pos += 1;
                    Diagonal::from_char(c)
                }
                _ => None,
            };
            Move::Entanglement {
                from,
                red,
                blue,
                facings,
                promotion,
                target,
                diagonal,
            }
        } else if r.eat('~') {
            let to = r.square()?;
            Move::Tunnel { from, to }
        } else {
            let to = r.square()?;
            let promotion = r.promotion()?;
            Move::Step {
                from,
                to,
                promotion,
            }
        };
        r.end()?;
        Ok(mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_point_at_the_problem() {
        let at = |s: &str| match s.parse::<Move>().unwrap_err() {
            NielsError::Parse { at, .. } => at,
            e => panic!("{e:?}"),
        };
        assert_eq!(at("e2e9"), 2);
        assert_eq!(at("c6^d4e5:ox"), 8);
        assert_eq!(at("c6^d4e5"), 7);
        assert_eq!(at("f6&f6d5:oo"), 10);
        assert_eq!(at("e7e8=k"), 5);
        assert_eq!(at("x:e4"), 0);
        assert_eq!(at("e2e4 "), 4);
        assert_eq!(at(""), 0);
        for junk in [
            "é:e4",
            "eé",
            "e2^",
            "e2^e4é",
            "h:",
            "c:e9",
            "e2&e3e2:oo@",
            "e2~",
            "=q",
            "e2e4=",
            "e2e4=é",
        ] {
            assert!(junk.parse::<Move>().is_err(), "{junk}");
        }
    }

    #[test]
    fn every_kind_round_trips() {
        for s in [
            "a1a8",
            "e7^e8e7:op=n",
            "e2^e4e3:pp",
            "b1&b1c3:po@d5+",
            "b1&b1c3:po@d5",
            "z:a1",
            "c:h8",
            "a1~a8",
        ] {
            assert_eq!(s.parse::<Move>().unwrap().to_string(), s);
        }
    }
}
