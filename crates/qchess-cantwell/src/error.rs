//! The error of every fallible game operation. A failed operation leaves the game exactly as
//! it was.

use crate::classical::FenError;
use crate::notation::NotationError;
use crate::status::GameStatus;
use std::fmt;

/// Why a game operation was refused.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum GameError {
    /// The move string is not QCAN; says where and why.
    Notation(NotationError),
    /// The move fails its possibility equation (section 8) or a rule of section 10.
    Illegal {
        /// The move as given.
        mv: String,
        /// Why it is impossible.
        reason: String,
    },
    /// The move would leave the state unchanged (Definition 2); the same player moves again.
    NoEffect {
        /// The move as given.
        mv: String,
    },
    /// The forced measurement outcome cannot happen (probability 0, or `.m0` on a move that
    /// measures nothing).
    ImpossibleOutcome {
        /// The move as given.
        mv: String,
        /// Why.
        reason: String,
    },
    /// The game has ended.
    GameOver(GameStatus),
    /// A FEN was rejected.
    Fen(FenError),
    /// A serialised position was rejected.
    Position(String),
    /// The simulator refused (state size cap, too many captures, ...).
    Simulation(String),
    /// The move (or read-out) needs more memory than the game's memory budget has left;
    /// nothing changed.
    StateTooLarge {
        /// Bytes asked for.
        asked: usize,
        /// Bytes the budget had left.
        available: usize,
    },
    /// There is no move to undo.
    NothingToUndo,
    /// A repetition claim was made but the position has not occurred three times.
    NoRepetition {
        /// How often the current position has occurred.
        occurrences: usize,
    },
    /// A rule option needed for the request is off.
    OptionOff(&'static str),
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::Notation(e) => write!(f, "{e}"),
            GameError::Illegal { mv, reason } => write!(f, "illegal move {mv}: {reason}"),
            GameError::NoEffect { mv } => write!(
                f,
                "move {mv} would leave the state unchanged, so it is not legal (Definition 2); \
                 the same player moves again"
            ),
            GameError::ImpossibleOutcome { mv, reason } => {
                write!(f, "impossible outcome for {mv}: {reason}")
            }
            GameError::GameOver(s) => write!(f, "the game is over ({s})"),
            GameError::Fen(e) => write!(f, "{e}"),
            GameError::Position(r) => write!(f, "bad position: {r}"),
            GameError::Simulation(r) => write!(f, "simulation refused: {r}"),
            GameError::StateTooLarge { asked, available } => write!(
                f,
                "state too large: {asked} bytes needed, the memory budget has {available} left"
            ),
            GameError::NothingToUndo => f.write_str("there is no move to undo"),
            GameError::NoRepetition { occurrences } => write!(
                f,
                "repetition claim refused: the position has occurred {occurrences} time(s), not 3"
            ),
            GameError::OptionOff(name) => write!(f, "the rule option {name} is off"),
        }
    }
}

impl std::error::Error for GameError {}

impl From<NotationError> for GameError {
    fn from(e: NotationError) -> Self {
        GameError::Notation(e)
    }
}

impl From<FenError> for GameError {
    fn from(e: FenError) -> Self {
        GameError::Fen(e)
    }
}

impl GameError {
    /// A short machine-readable class: `notation`, `illegal_move`, `no_effect`,
    /// `impossible_outcome`, `game_over`, `fen`, `position`, `simulation`, `state_too_large`, `undo`,
    /// `repetition`, `option`.
    pub fn kind(&self) -> &'static str {
        match self {
            GameError::Notation(_) => "notation",
            GameError::Illegal { .. } => "illegal_move",
            GameError::NoEffect { .. } => "no_effect",
            GameError::ImpossibleOutcome { .. } => "impossible_outcome",
            GameError::GameOver(_) => "game_over",
            GameError::Fen(_) => "fen",
            GameError::Position(_) => "position",
            GameError::Simulation(_) => "simulation",
            GameError::StateTooLarge { .. } => "state_too_large",
            GameError::NothingToUndo => "undo",
            GameError::NoRepetition { .. } => "repetition",
            GameError::OptionOff(_) => "option",
        }
    }

    /// The character position the error points at, where there is one.
    pub fn position(&self) -> Option<usize> {
        match self {
            GameError::Notation(e) => Some(e.position),
            GameError::Fen(e) => Some(e.position),
            _ => None,
        }
    }
}
