//! Quantum Chess Algebraic Notation (QCAN, the paper's section 4), with the official engine's
//! additions: an optional leading piece letter and the variant marks `x` (capture) and `w`
//! (excluded, i.e. blocked). The grammar is in `docs/notation-cantwell.md`:
//!
//! ```text
//! move    = [piece] body [".m0" | ".m1"]
//! body    = square [mark] square [promo]      standard move (incl. pawns, castling, e.p.)
//!         | square "^" square square          split  s^t1t2
//!         | square square "^" square          merge  s1s2^t
//! piece   = one of PNBRQK (either case)       must match the piece on the source
//! mark    = "x" | "w"                         must match the variant the position gives
//! promo   = one of NBRQ (either case)
//! ```
//!
//! ```
//! use qchess_cantwell::{QcanMove, MoveShape};
//! let m: QcanMove = "Nb1^a3c3".parse().unwrap();
//! assert!(matches!(m.shape, MoveShape::Split { .. }));
//! assert_eq!(m.to_string(), "Nb1^a3c3");
//! let err = "b1^a3c9".parse::<QcanMove>().unwrap_err();
//! assert_eq!(err.position, 6);
//! ```

use qchess_board::{PieceKind, Square};
use std::fmt;
use std::str::FromStr;

/// The squares of a move: what the player typed, before the position is consulted.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum MoveShape {
    /// A two-square move `st` (every standard-equivalent move, castling and e.p. included).
    Standard {
        /// Source.
        from: Square,
        /// Target.
        to: Square,
    },
    /// A split `s^t1t2`.
    Split {
        /// Source.
        from: Square,
        /// First target (the sqrt-iSwap arm).
        to1: Square,
        /// Second target (the iSwap arm).
        to2: Square,
    },
    /// A merge `s1s2^t`.
    Merge {
        /// First source.
        from1: Square,
        /// Second source.
        from2: Square,
        /// Target.
        to: Square,
    },
}

impl MoveShape {
    /// The source squares (one or two).
    pub fn sources(&self) -> Vec<Square> {
        match *self {
            MoveShape::Standard { from, .. } | MoveShape::Split { from, .. } => vec![from],
            MoveShape::Merge { from1, from2, .. } => vec![from1, from2],
        }
    }

    /// The target squares (one or two).
    pub fn targets(&self) -> Vec<Square> {
        match *self {
            MoveShape::Standard { to, .. } | MoveShape::Merge { to, .. } => vec![to],
            MoveShape::Split { to1, to2, .. } => vec![to1, to2],
        }
    }
}

/// The official engine's variant marks (rules-notes D10).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum VariantMark {
    /// `x`: the move captures.
    Capture,
    /// `w`: the move is the excluded (blocked) variant.
    Excluded,
}

/// A parsed QCAN move string.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct QcanMove {
    /// The optional leading piece letter (its kind; the colour comes from the position).
    pub piece: Option<PieceKind>,
    /// The squares.
    pub shape: MoveShape,
    /// The optional variant mark of a standard move.
    pub mark: Option<VariantMark>,
    /// The promotion piece of a pawn reaching the last rank.
    pub promotion: Option<PieceKind>,
    /// The forced measurement outcome: `.m1` (`Some(true)`, the move proceeds) or `.m0`.
    pub outcome: Option<bool>,
}

impl QcanMove {
    /// A plain move of `shape`: no piece letter, mark, promotion or outcome.
    pub fn plain(shape: MoveShape) -> Self {
        Self {
            piece: None,
            shape,
            mark: None,
            promotion: None,
            outcome: None,
        }
    }
}

/// Why a move string is not QCAN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotationError {
    /// Character position (0-based) of the problem in the move string.
    pub position: usize,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad move at character {}: {}",
            self.position, self.reason
        )
    }
}

impl std::error::Error for NotationError {}

struct Cursor<'a> {
    chars: Vec<char>,
    pos: usize,
    _src: &'a str,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }
    fn err(&self, reason: impl Into<String>) -> NotationError {
        NotationError {
            position: self.pos,
            reason: reason.into(),
        }
    }
    fn at_square(&self) -> bool {
        matches!(self.peek(), Some('a'..='h')) && matches!(self.peek_at(1), Some('1'..='8'))
    }
    fn square(&mut self, what: &str) -> Result<Square, NotationError> {
        let f = self.peek();
        match f {
            Some(c @ 'a'..='h') => match self.peek_at(1) {
                Some(r @ '1'..='8') => {
                    self.pos += 2;
                    Ok(Square::new(c as u8 - b'a', r as u8 - b'1'))
                }
                Some(other) => {
                    self.pos += 1;
                    Err(self.err(format!(
                        "expected the rank (1-8) of the {what}, found {other:?}"
                    )))
                }
                None => {
                    self.pos += 1;
                    Err(self.err(format!("the move ends before the rank of the {what}")))
                }
            },
            Some(other) => Err(self.err(format!(
                "expected the {what} (a square like e4), found {other:?}"
            ))),
            None => Err(self.err(format!("the move ends before the {what}"))),
        }
    }
    fn caret(&mut self) -> bool {
        if matches!(self.peek(), Some('^') | Some('\u{2227}')) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
}

impl FromStr for QcanMove {
    type Err = NotationError;

    fn from_str(s: &str) -> Result<Self, NotationError> {
        let chars: Vec<char> = s.chars().collect();
        let mut c = Cursor {
            chars,
            pos: 0,
            _src: s,
        };
        while c.peek().is_some_and(char::is_whitespace) {
            c.pos += 1;
        }
        if c.peek().is_none() {
            return Err(c.err("empty move"));
        }
        // A leading letter is a piece letter unless it starts a square ("b1" is a square,
        // "Bb1"/"bb1" a bishop on b1).
        let mut piece = None;
        if !c.at_square() {
            if let Some(k) = c
                .peek()
                .and_then(|ch| PieceKind::from_char(ch.to_ascii_lowercase()))
            {
                piece = Some(k);
                c.pos += 1;
            }
        }
        let first = c.square("source")?;
        let shape = if c.caret() {
            let to1 = c.square("first split target")?;
            let to2 = c.square("second split target")?;
            MoveShape::Split {
                from: first,
                to1,
                to2,
            }
        } else {
            let mut mark = None;
            match c.peek() {
                Some('x') => mark = Some(VariantMark::Capture),
                Some('w') => mark = Some(VariantMark::Excluded),
                _ => {}
            }
            if mark.is_some() {
                c.pos += 1;
            }
            let second = c.square(if mark.is_some() {
                "target"
            } else {
                "second square"
            })?;
            if mark.is_none() && c.caret() {
                let to = c.square("merge target")?;
                MoveShape::Merge {
                    from1: first,
                    from2: second,
                    to,
                }
            } else {
                let shape = MoveShape::Standard {
                    from: first,
                    to: second,
                };
                let mut promotion = None;
                if let Some(ch) = c.peek().filter(|ch| *ch != '.' && !ch.is_whitespace()) {
                    match PieceKind::from_char(ch.to_ascii_lowercase()) {
                        Some(
                            k @ (PieceKind::Knight
                            | PieceKind::Bishop
                            | PieceKind::Rook
                            | PieceKind::Queen),
                        ) => {
                            promotion = Some(k);
                            c.pos += 1;
                        }
                        _ => {
                            return Err(c.err(format!(
                                "unexpected {ch:?}: after the target only a promotion piece (Q, R, B, N) or .m0/.m1 may follow"
                            )));
                        }
                    }
                }
                let outcome = parse_outcome(&mut c)?;
                return Ok(QcanMove {
                    piece,
                    shape,
                    mark,
                    promotion,
                    outcome,
                });
            }
        };
        let outcome = parse_outcome(&mut c)?;
        Ok(QcanMove {
            piece,
            shape,
            mark: None,
            promotion: None,
            outcome,
        })
    }
}

fn parse_outcome(c: &mut Cursor<'_>) -> Result<Option<bool>, NotationError> {
    let mut outcome = None;
    if c.peek() == Some('.') {
        c.pos += 1;
        if c.peek() != Some('m') {
            return Err(c.err("expected \"m\" of a measurement outcome .m0 or .m1"));
        }
        c.pos += 1;
        outcome = match c.peek() {
            Some('0') => Some(false),
            Some('1') => Some(true),
            _ => return Err(c.err("a measurement outcome is .m0 or .m1")),
        };
        c.pos += 1;
    }
    while c.peek().is_some_and(char::is_whitespace) {
        c.pos += 1;
    }
    if let Some(ch) = c.peek() {
        return Err(c.err(format!("unexpected {ch:?} after the end of the move")));
    }
    Ok(outcome)
}

impl fmt::Display for QcanMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(k) = self.piece {
            write!(f, "{}", k.to_char().to_ascii_uppercase())?;
        }
        match self.shape {
            MoveShape::Standard { from, to } => {
                write!(f, "{from}")?;
                match self.mark {
                    Some(VariantMark::Capture) => f.write_str("x")?,
                    Some(VariantMark::Excluded) => f.write_str("w")?,
                    None => {}
                }
                write!(f, "{to}")?;
            }
            MoveShape::Split { from, to1, to2 } => write!(f, "{from}^{to1}{to2}")?,
            MoveShape::Merge { from1, from2, to } => write!(f, "{from1}{from2}^{to}")?,
        }
        if let Some(k) = self.promotion {
            write!(f, "{}", k.to_char().to_ascii_uppercase())?;
        }
        match self.outcome {
            Some(true) => f.write_str(".m1"),
            Some(false) => f.write_str(".m0"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> QcanMove {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn paper_examples_round_trip() {
        for s in [
            "a2a4", "b1^a3c3", "a3c3^b5", "a7a8Q", "a1a2.m0", "a1a2.m1", "Nb1^a3c3", "e4xd5",
            "c1wa3",
        ] {
            assert_eq!(p(s).to_string(), s);
        }
        let m = p("b1^a3c3");
        assert_eq!(
            m.shape,
            MoveShape::Split {
                from: Square::B1,
                to1: Square::A3,
                to2: Square::C3
            }
        );
        let m = p("a3c3^b5");
        assert_eq!(
            m.shape,
            MoveShape::Merge {
                from1: Square::A3,
                from2: Square::C3,
                to: Square::B5
            }
        );
        let m = p("bb7c6");
        assert_eq!(m.piece, Some(PieceKind::Bishop));
        assert_eq!(m.to_string(), "Bb7c6");
        assert_eq!(p("a7a8q").promotion, Some(PieceKind::Queen));
        assert_eq!(p("b1\u{2227}a3c3").to_string(), "b1^a3c3");
        assert_eq!(p(" e2e4 ").to_string(), "e2e4");
    }

    #[test]
    fn errors_say_where() {
        let cases = [
            ("", 0),
            ("e2", 2),
            ("e9e4", 1),
            ("z2e4", 0),
            ("e2e4K", 4),
            ("e2e4.m2", 6),
            ("e2e4.x1", 5),
            ("e2e4 e5", 5),
            ("b1^a3", 5),
            ("a3c3^", 5),
            ("e2xe4^d5", 5),
        ];
        for (s, pos) in cases {
            let err = s.parse::<QcanMove>().unwrap_err();
            assert_eq!(err.position, pos, "{s}: {err}");
            assert!(!err.reason.is_empty());
        }
    }
}
