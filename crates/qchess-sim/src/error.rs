//! The error every fallible simulator operation returns.

use std::fmt;

/// Why a simulator operation was refused. The state is always left exactly as it was.
///
/// ```
/// use qchess_sim::{SimError, State, Controls};
/// let mut s = State::<f64>::classical(1);
/// assert_eq!(s.iswap(0, 64, Controls::NONE), Err(SimError::QubitOutOfRange { qubit: 64 }));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SimError {
    /// The operation would need more basis states than the configured cap allows.
    CapExceeded {
        /// Basis states the result would hold (before any cancellation).
        needed: usize,
        /// The configured cap ([`State::cap`](crate::State::cap)).
        cap: usize,
    },
    /// A capture needs a fresh ancilla but every ancilla slot is used.
    TooManyAncillas {
        /// The number of ancillas supported.
        max: u32,
    },
    /// A forced outcome has (numerically) zero probability.
    ZeroProbabilityOutcome {
        /// The outcome that was asked for.
        outcome: bool,
        /// Its probability.
        probability: f64,
    },
    /// A board qubit index is not in `0..64`.
    QubitOutOfRange {
        /// The offending index.
        qubit: u8,
    },
    /// The same qubit was given twice to a gate that needs distinct qubits.
    RepeatedQubit {
        /// The repeated index.
        qubit: u8,
    },
    /// A control or path mask reads a qubit the gate acts on.
    ControlOnTarget {
        /// The bits that overlap.
        overlap: u64,
    },
    /// An amplitude (or a phase) is NaN or infinite.
    NonFinite {
        /// Where it was found.
        context: &'static str,
    },
    /// The amplitudes given have zero norm.
    ZeroNorm,
    /// `Normalization::RequireUnit` was asked for and the norm is not 1.
    NotNormalized {
        /// The squared norm found.
        norm_sqr: f64,
    },
    /// A phase factor does not have modulus 1.
    NotUnitPhase {
        /// Its modulus squared.
        modulus_sqr: f64,
    },
    /// A predicate's `value` has bits outside its `mask`.
    InvalidPredicate {
        /// The mask.
        mask: u64,
        /// The value.
        value: u64,
    },
    /// Key and amplitude arrays differ in length, or keys are not strictly increasing.
    UnsortedKeys,
    /// The operation needs more memory than the state's memory budget has left
    /// ([`State::memory_budget`](crate::State::memory_budget)); nothing was allocated.
    StateTooLarge {
        /// Bytes the operation asked for.
        asked: usize,
        /// Bytes the budget had left.
        available: usize,
    },
    /// The memory for the result could not be reserved (the cap is set above what the
    /// machine can hold).
    OutOfMemory {
        /// Basis states that were being reserved.
        states: usize,
    },
    /// Exact arithmetic ([`Exact`](crate::Exact)): the operation's coefficients could outgrow
    /// `i128` (checked before anything changes), or an amplitude overflowed earlier.
    ExactOverflow {
        /// What overflowed.
        context: &'static str,
    },
    /// An undo record was applied to a state it does not belong to (not the last pass, or a
    /// different state); nothing changed.
    UndoMismatch {
        /// What did not match.
        what: &'static str,
    },
    /// The backend does not implement this operation (e.g. undo records on a distributed
    /// state); nothing changed.
    Unsupported {
        /// The operation.
        what: &'static str,
    },
    /// A probability handed to the simulator is above 1 (or not a number); nothing changed.
    InvalidProbability {
        /// The probability given.
        probability: f64,
    },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CapExceeded { needed, cap } => write!(
                f,
                "state size cap exceeded: the operation needs {needed} basis states, the cap is {cap}"
            ),
            Self::TooManyAncillas { max } => {
                write!(
                    f,
                    "too many captures: at most {max} capture ancillas are supported"
                )
            }
            Self::ZeroProbabilityOutcome {
                outcome,
                probability,
            } => write!(
                f,
                "cannot force outcome {} : its probability is {probability:e}",
                u8::from(*outcome)
            ),
            Self::QubitOutOfRange { qubit } => {
                write!(
                    f,
                    "qubit index {qubit} is out of range (board qubits are 0..64)"
                )
            }
            Self::RepeatedQubit { qubit } => {
                write!(
                    f,
                    "qubit {qubit} is given twice to a gate that needs distinct qubits"
                )
            }
            Self::ControlOnTarget { overlap } => write!(
                f,
                "controls or path read qubits the gate acts on (mask {overlap:#018x})"
            ),
            Self::NonFinite { context } => write!(f, "non-finite number in {context}"),
            Self::ZeroNorm => f.write_str("the amplitudes have zero norm"),
            Self::NotNormalized { norm_sqr } => {
                write!(f, "the state is not normalised: squared norm {norm_sqr}")
            }
            Self::NotUnitPhase { modulus_sqr } => {
                write!(
                    f,
                    "phase factor does not have modulus 1 (|phase|^2 = {modulus_sqr})"
                )
            }
            Self::InvalidPredicate { mask, value } => write!(
                f,
                "predicate value {value:#018x} has bits outside its mask {mask:#018x}"
            ),
            Self::UnsortedKeys => f.write_str(
                "key and amplitude arrays must have equal lengths and strictly increasing keys",
            ),
            Self::StateTooLarge { asked, available } => write!(
                f,
                "state too large: the operation needs {asked} bytes, the memory budget has {available} left"
            ),
            Self::OutOfMemory { states } => {
                write!(f, "could not reserve memory for {states} basis states")
            }
            Self::ExactOverflow { context } => {
                write!(f, "exact arithmetic overflow: {context}")
            }
            Self::UndoMismatch { what } => write!(f, "cannot undo: {what}"),
            Self::InvalidProbability { probability } => {
                write!(
                    f,
                    "invalid probability {probability:e}: it must lie in (0, 1]"
                )
            }
            Self::Unsupported { what } => {
                write!(f, "this simulator backend does not support {what}")
            }
        }
    }
}

impl std::error::Error for SimError {}
