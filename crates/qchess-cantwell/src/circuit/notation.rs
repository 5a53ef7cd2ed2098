//! The long move form `<squares>[.m0|.m1]:<TYPE>:<VARIANT>` (rules-notes D7): parse and print.
//!
//! Squares: `e2e4` (optionally with a promotion letter, `a7a8q`), a split `b1^a3c3`, a merge
//! `c3a3^b1`. Positions in parse errors are 0-based character indices.

use super::error::CircuitError;
use super::move_type::{MoveType, Variant};
use super::occupancy_move::OccupancyMove;
use qchess_board::Square;
use std::fmt;
use std::str::FromStr;

impl fmt::Display for OccupancyMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.source2, self.target2) {
            (_, Some(t2)) => write!(f, "{}^{}{}", self.source, self.target, t2)?,
            (Some(s2), None) => write!(f, "{}{}^{}", self.source, s2, self.target)?,
            (None, None) => write!(f, "{}{}", self.source, self.target)?,
        }
        if let Some(letter) = self.promotion {
            write!(f, "{letter}")?;
        }
        if let Some(outcome) = self.forced {
            write!(f, ".m{}", u8::from(outcome))?;
        }
        write!(f, ":{}:{}", self.move_type, self.variant)
    }
}

impl FromStr for OccupancyMove {
    type Err = CircuitError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Reader::new(text).read_move()
    }
}

/// The shape of the squares part.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Plain,
    Split,
    Merge,
}

/// A cursor over the input's characters.
struct Reader {
    chars: Vec<char>,
    pos: usize,
}

fn error(position: usize, reason: impl Into<String>) -> CircuitError {
    CircuitError::Parse {
        position,
        reason: reason.into(),
    }
}

impl Reader {
    fn new(text: &str) -> Self {
        Reader {
            chars: text.chars().collect(),
            pos: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), CircuitError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(error(self.pos, what))
        }
    }

    fn square(&mut self) -> Result<Square, CircuitError> {
        let file = match self.peek() {
            Some(c @ 'a'..='h') => c as u8 - b'a',
            Some(_) => return Err(error(self.pos, "file must be a-h")),
            None => return Err(error(self.pos, "expected a square")),
        };
        self.pos += 1;
        let rank = match self.peek() {
            Some(c @ '1'..='8') => c as u8 - b'1',
            Some(_) => return Err(error(self.pos, "rank must be 1-8")),
            None => return Err(error(self.pos, "expected the rank of the square")),
        };
        self.pos += 1;
        Ok(Square::new(file, rank))
    }

    /// A token up to the next ':' or the end, with its start position.
    fn token(&mut self) -> (usize, String) {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == ':' {
                break;
            }
            self.pos += 1;
        }
        (start, self.chars[start..self.pos].iter().collect())
    }

    fn read_move(&mut self) -> Result<OccupancyMove, CircuitError> {
        let source = self.square()?;
        let (shape, source2, target, target2);
        let mut promotion = None;
        let caret = self.pos;
        if self.eat('^') {
            shape = Shape::Split;
            target = self.square()?;
            target2 = Some(self.square()?);
            source2 = None;
        } else {
            let second = self.square()?;
            if self.eat('^') {
                shape = Shape::Merge;
                source2 = Some(second);
                target = self.square()?;
            } else {
                shape = Shape::Plain;
                source2 = None;
                target = second;
            }
            target2 = None;
        }
        let promotion_pos = self.pos;
        if shape == Shape::Plain {
            if let Some(c) = self.peek().filter(|c| c.is_ascii_alphabetic()) {
                if !matches!(c.to_ascii_lowercase(), 'q' | 'r' | 'b' | 'n') {
                    return Err(error(self.pos, "promotion letter must be q, r, b or n"));
                }
                promotion = Some(c.to_ascii_lowercase());
                self.pos += 1;
            }
        }
        let dot = self.pos;
        let mut forced = None;
        if self.eat('.') {
            self.expect(
                'm',
                "expected 'm' after '.' (a measurement outcome .m0 or .m1)",
            )?;
            forced = match self.peek() {
                Some('0') => Some(false),
                Some('1') => Some(true),
                _ => return Err(error(self.pos, "measurement outcome must be 0 or 1")),
            };
            self.pos += 1;
        }
        self.expect(':', "expected ':' and the move type (e.g. ':JUMP:BASIC')")?;
        let (type_pos, type_name) = self.token();
        let move_type = MoveType::from_name(&type_name).ok_or_else(|| {
            error(
                type_pos,
                format!(
                    "unknown move type '{type_name}' (one of {})",
                    MoveType::ALL.map(MoveType::name).join(", ")
                ),
            )
        })?;
        self.expect(
            ':',
            "expected ':' and the variant (BASIC, EXCLUDED or CAPTURE)",
        )?;
        let (variant_pos, variant_name) = self.token();
        let variant = Variant::from_name(&variant_name).ok_or_else(|| {
            error(
                variant_pos,
                format!("unknown variant '{variant_name}' (one of BASIC, EXCLUDED, CAPTURE)"),
            )
        })?;
        if self.pos < self.chars.len() {
            return Err(error(self.pos, "unexpected text after the variant"));
        }
        let wanted = if move_type.is_split() {
            Shape::Split
        } else if move_type.is_merge() {
            Shape::Merge
        } else {
            Shape::Plain
        };
        if wanted != shape {
            let (at, form) = match wanted {
                Shape::Split => (type_pos, "the split form s^t1t2"),
                Shape::Merge => (type_pos, "the merge form s1s2^t"),
                Shape::Plain => (caret, "two squares without '^'"),
            };
            return Err(error(at, format!("{move_type} needs {form}")));
        }
        if !move_type.accepts(variant) {
            return Err(error(
                variant_pos,
                format!(
                    "{move_type}:{variant} is not a move of the paper (pawns never capture straight ahead)"
                ),
            ));
        }
        if promotion.is_some() && !move_type.may_promote() {
            return Err(error(promotion_pos, format!("{move_type} cannot promote")));
        }
        if forced == Some(false) && !move_type.measures(variant) {
            return Err(error(
                dot,
                format!("{move_type}:{variant} makes no measurement, so outcome .m0 is impossible"),
            ));
        }
        let mv = OccupancyMove {
            move_type,
            variant,
            source,
            source2,
            target,
            target2,
            promotion,
            forced,
        };
        mv.validate().map_err(|err| match err {
            CircuitError::InvalidMove { reason } => error(0, reason),
            other => other,
        })?;
        Ok(mv)
    }
}
