//! Why a layer-1 move was refused. Whatever the error, the state is left exactly as it was.

use qchess_sim::SimError;
use std::fmt;

/// The error of [`apply`](super::apply) and of parsing an [`OccupancyMove`](super::OccupancyMove).
///
/// ```
/// use qchess_cantwell::circuit::{CircuitError, OccupancyMove};
/// let err = "a1a9:JUMP:BASIC".parse::<OccupancyMove>().unwrap_err();
/// assert!(matches!(err, CircuitError::Parse { position: 3, .. }));
/// assert_eq!(err.to_string(), "bad move at character 3: rank must be 1-8");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum CircuitError {
    /// The long form could not be read. `position` is the 0-based character index where
    /// reading failed.
    Parse {
        /// 0-based character index in the input.
        position: usize,
        /// What was expected there.
        reason: String,
    },
    /// The move's squares do not fit its type (a repeated square, a missing second target,
    /// castling or en passant squares that are not on the right files and ranks, ...).
    InvalidMove {
        /// What is wrong, in words.
        reason: String,
    },
    /// Outcome 0 was forced (`.m0`) on a move that makes no measurement (rules-notes D7).
    NoMeasurement,
    /// The forced outcome has probability 0 (within 1e-12) in this state.
    ImpossibleOutcome {
        /// The outcome asked for (1 = the move proceeds).
        outcome: bool,
        /// Its probability.
        probability: f64,
    },
    /// The simulator refused an operation (state-size cap, too many captures, ...).
    Sim(SimError),
}

impl fmt::Display for CircuitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CircuitError::Parse { position, reason } => {
                write!(f, "bad move at character {position}: {reason}")
            }
            CircuitError::InvalidMove { reason } => write!(f, "invalid move: {reason}"),
            CircuitError::NoMeasurement => {
                f.write_str("outcome 0 (.m0) was given for a move that makes no measurement")
            }
            CircuitError::ImpossibleOutcome {
                outcome,
                probability,
            } => write!(
                f,
                "measurement outcome {} is impossible here (probability {probability:e})",
                u8::from(*outcome)
            ),
            CircuitError::Sim(err) => write!(f, "simulator: {err}"),
        }
    }
}

impl std::error::Error for CircuitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CircuitError::Sim(err) => Some(err),
            _ => None,
        }
    }
}

impl From<SimError> for CircuitError {
    fn from(err: SimError) -> Self {
        match err {
            SimError::ZeroProbabilityOutcome {
                outcome,
                probability,
            } => CircuitError::ImpossibleOutcome {
                outcome,
                probability,
            },
            other => CircuitError::Sim(other),
        }
    }
}

impl CircuitError {
    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        CircuitError::InvalidMove {
            reason: reason.into(),
        }
    }
}
