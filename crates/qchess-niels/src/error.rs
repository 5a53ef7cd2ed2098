//! The crate's error type: every failure says what is wrong and where.

use std::fmt;

/// Everything that can go wrong in this crate. Functions that return it leave the position or
/// game exactly as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NielsError {
    /// A move, record or position text that does not parse.
    Parse {
        /// The text that was read.
        input: String,
        /// Character position (0-based) where the problem starts.
        at: usize,
        /// What was expected there.
        message: String,
    },
    /// A well-formed move that is not legal in the position.
    Illegal {
        /// The move as written.
        mv: String,
        /// Why it is not allowed.
        reason: String,
    },
    /// A position that breaks an invariant of the game (bad serialised position).
    Position(String),
    /// Forced dice rolls that cannot be used (wrong count, value outside 1..=6).
    Rolls(String),
    /// Unknown or contradictory rule options.
    Rules(String),
    /// The game is over; no more moves.
    GameOver(String),
}

impl NielsError {
    /// A parse error at byte offset `byte_at` of `input`, reported as a character index.
    pub(crate) fn parse(input: &str, byte_at: usize, message: impl Into<String>) -> NielsError {
        // Parsers walk bytes; a person (and `Parse::at`) counts characters.
        let at = input
            .char_indices()
            .take_while(|(i, _)| *i < byte_at)
            .count();
        NielsError::Parse {
            input: input.to_string(),
            at,
            message: message.into(),
        }
    }

    pub(crate) fn illegal(mv: impl fmt::Display, reason: impl Into<String>) -> NielsError {
        NielsError::Illegal {
            mv: mv.to_string(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for NielsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NielsError::Parse { input, at, message } => {
                write!(f, "cannot parse {input:?} at character {at}: {message}")
            }
            NielsError::Illegal { mv, reason } => write!(f, "illegal move {mv}: {reason}"),
            NielsError::Position(m) => write!(f, "invalid position: {m}"),
            NielsError::Rolls(m) => write!(f, "invalid dice rolls: {m}"),
            NielsError::Rules(m) => write!(f, "invalid rules: {m}"),
            NielsError::GameOver(m) => write!(f, "the game is over: {m}"),
        }
    }
}

impl std::error::Error for NielsError {}
