//! Everything that can go wrong, said with what and where.

use qchess_board::{PieceKind, Square};
use std::fmt;

/// An error of the Akl-style engine. Every failed call leaves the game exactly as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AklError {
    /// The game has ended; nothing more can be played.
    GameOver,
    /// A piece was touched this turn and must now move (touch-move).
    TouchPending {
        /// The touched piece's square.
        square: Square,
    },
    /// A move was given before any piece was touched.
    NothingTouched,
    /// The square holds no piece.
    EmptySquare {
        /// The square.
        square: Square,
    },
    /// The square holds a piece of the side not to move.
    NotYourPiece {
        /// The square.
        square: Square,
    },
    /// A recorded collapse names a type the piece cannot be.
    ImpossibleCollapse {
        /// The square of the piece.
        square: Square,
        /// The recorded type.
        kind: PieceKind,
    },
    /// A collapse was recorded for a piece that is not in superposition.
    NotQuantum {
        /// The square of the piece.
        square: Square,
    },
    /// The move is not one the touched piece can make.
    IllegalMove {
        /// The move, in UCI form.
        mv: String,
        /// Why.
        reason: String,
    },
    /// A record or request left out a random outcome and no random source was given.
    CollapseNotRecorded {
        /// The square of the piece whose collapse is missing.
        square: Square,
    },
    /// A record entry does not match what the game did.
    EntryMismatch {
        /// What differs.
        message: String,
    },
    /// Malformed move notation.
    Notation {
        /// The text that was given.
        input: String,
        /// Character offset of the problem in `input`.
        at: usize,
        /// What is wrong.
        message: String,
    },
    /// Malformed or impossible position text.
    Position {
        /// What is wrong.
        message: String,
    },
    /// A game record could not be read.
    Record {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A record entry failed while replaying.
    Replay {
        /// 1-based ply of the failing entry.
        ply: usize,
        /// The entry's text.
        entry: String,
        /// The underlying error.
        source: Box<AklError>,
    },
}

impl fmt::Display for AklError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AklError::GameOver => write!(f, "the game is over"),
            AklError::TouchPending { square } => {
                write!(
                    f,
                    "the piece on {square} was touched and must move (touch-move)"
                )
            }
            AklError::NothingTouched => write!(f, "touch a piece before moving"),
            AklError::EmptySquare { square } => write!(f, "there is no piece on {square}"),
            AklError::NotYourPiece { square } => {
                write!(f, "the piece on {square} belongs to the side not to move")
            }
            AklError::ImpossibleCollapse { square, kind } => write!(
                f,
                "the piece on {square} cannot collapse to {}: that is not one of its two types",
                kind_name(*kind)
            ),
            AklError::NotQuantum { square } => write!(
                f,
                "the piece on {square} is classical: it does not collapse, write the square alone"
            ),
            AklError::IllegalMove { mv, reason } => write!(f, "illegal move {mv}: {reason}"),
            AklError::CollapseNotRecorded { square } => write!(
                f,
                "the collapse of the quantum piece on {square} is not recorded; write it as <T|{square}> \
                 (or <x|T> for a captured piece)"
            ),
            AklError::EntryMismatch { message } => {
                write!(f, "entry does not match the game: {message}")
            }
            AklError::Notation { input, at, message } => {
                write!(
                    f,
                    "bad move notation {input:?} at character {at}: {message}"
                )
            }
            AklError::Position { message } => write!(f, "bad position: {message}"),
            AklError::Record { line, message } => {
                write!(f, "bad game record, line {line}: {message}")
            }
            AklError::Replay { ply, entry, source } => {
                write!(f, "replay failed at ply {ply} ({entry:?}): {source}")
            }
        }
    }
}

impl AklError {
    /// A machine-readable class: `game_over`, `illegal_move`, `impossible_outcome`,
    /// `entry_mismatch`, `notation`, `position` or `record`.
    pub fn kind(&self) -> &'static str {
        match self {
            AklError::GameOver => "game_over",
            AklError::TouchPending { .. }
            | AklError::NothingTouched
            | AklError::EmptySquare { .. }
            | AklError::NotYourPiece { .. }
            | AklError::IllegalMove { .. } => "illegal_move",
            AklError::ImpossibleCollapse { .. }
            | AklError::NotQuantum { .. }
            | AklError::CollapseNotRecorded { .. } => "impossible_outcome",
            AklError::EntryMismatch { .. } => "entry_mismatch",
            AklError::Notation { .. } => "notation",
            AklError::Position { .. } => "position",
            AklError::Record { .. } | AklError::Replay { .. } => "record",
        }
    }
}

impl std::error::Error for AklError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AklError::Replay { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// The English name of a piece type.
pub(crate) fn kind_name(kind: PieceKind) -> &'static str {
    match kind {
        PieceKind::Pawn => "a pawn",
        PieceKind::Knight => "a knight",
        PieceKind::Bishop => "a bishop",
        PieceKind::Rook => "a rook",
        PieceKind::Queen => "a queen",
        PieceKind::King => "a king",
    }
}
