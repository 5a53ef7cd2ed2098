//! The building blocks the move circuits share: measurements with the paper's M1 sets, and
//! the few controlled operations the simulator has no gate for (a capture controlled on board
//! qubits, an iSwap controlled on a capture ancilla, eq. 23b's outcome-0 projection). Those
//! rebuild the state from its entries; each first checks whether the plain gate already does
//! the same thing on this state, so the rebuild only runs when the control genuinely splits the
//! state. Eq. 23b's outcome 1 is a product of native projections.

use super::error::CircuitError;
use super::journal::Recorder;
use qchess_sim::{Controls, Predicate, QuantumState};
use rand::Rng;

/// Probabilities at or below this are treated as zero: such an outcome is never drawn and
/// cannot be forced. Replayed games only force outcomes that were drawn, so they never hit it.
pub const PROBABILITY_FLOOR: f64 = 1e-12;

/// The condition a measurement projects onto for outcome 1 (the move proceeds).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Condition {
    /// A predicate the simulator measures natively.
    Board(Predicate),
    /// Eq. 23b: (path clear and source occupied) or (path blocked and target empty).
    CaptureSlide { path: u64, source: u64, target: u64 },
}

impl Condition {
    fn holds(self, board: u64) -> bool {
        match self {
            Condition::Board(p) => p.holds(board),
            Condition::CaptureSlide {
                path,
                source,
                target,
            } => {
                if board & path == 0 {
                    board & source != 0
                } else {
                    board & target == 0
                }
            }
        }
    }

    /// The probability of outcome 1.
    fn probability<S: QuantumState>(self, state: &Recorder<'_, S>) -> f64 {
        match self {
            Condition::Board(p) => state.probability(p),
            // p(path clear, source occupied) + p(target empty) - p(path clear, target empty).
            Condition::CaptureSlide {
                path,
                source,
                target,
            } => {
                state.probability(Predicate::Equals {
                    mask: path | source,
                    value: source,
                }) + state.probability(Predicate::AllZero(target))
                    - state.probability(Predicate::AllZero(path | target))
            }
        }
    }
}

/// The smallest outcome probability [`measure`] hands to the backend for scaling the
/// survivors (see [`Recorder::force_given`]).
const GIVEN_MIN: f64 = 1.0 / 16.0;

/// Measures `condition` (or forces `forced`), projects the state and returns the outcome with
/// its probability. One `f64` is drawn from `rng` whenever the outcome is not forced, even when
/// it is certain, so that a replay consumes the same random numbers. On error (a forced outcome
/// of probability 0) the state is unchanged.
pub(crate) fn measure<S: QuantumState, R: Rng + ?Sized>(
    state: &mut Recorder<'_, S>,
    condition: Condition,
    forced: Option<bool>,
    rng: &mut R,
) -> Result<(bool, f64), CircuitError> {
    let p1 = condition.probability(state).clamp(0.0, 1.0);
    let outcome = match forced {
        Some(outcome) => outcome,
        None => {
            let draw: f64 = rng.random();
            if p1 <= PROBABILITY_FLOOR {
                false
            } else if p1 >= 1.0 - PROBABILITY_FLOOR {
                true
            } else {
                draw < p1
            }
        }
    };
    let probability = if outcome { p1 } else { 1.0 - p1 };
    if probability <= PROBABILITY_FLOOR {
        return Err(CircuitError::ImpossibleOutcome {
            outcome,
            probability,
        });
    }
    match condition {
        // An outcome of probability at least GIVEN_MIN: the survivors are scaled by the
        // probability just read, in the projection's pass (its relative error is then at
        // most a few ulps; a rarer outcome's `1 - p` would lose digits, so the backend sums
        // its mass itself).
        Condition::Board(p) if probability >= GIVEN_MIN => {
            state.force_given(p, outcome, probability)?;
        }
        Condition::Board(p) => {
            state.force(p, outcome)?;
        }
        Condition::CaptureSlide {
            path,
            source,
            target,
        } if outcome => {
            // M1 is the intersection of the complements of "path clear and source empty" and,
            // for each path square x, "x and the target occupied": a product of commuting
            // diagonal projections, each one native. Their probabilities are at least p(M1).
            let clear_and_empty = Predicate::AllZero(path | source);
            if state.probability(clear_and_empty) > 0.0 {
                state.force(clear_and_empty, false)?;
            }
            let mut rest = path;
            while rest != 0 {
                let x = rest & rest.wrapping_neg();
                rest &= rest - 1;
                let both = Predicate::Equals {
                    mask: x | target,
                    value: x | target,
                };
                if state.probability(both) > 0.0 {
                    state.force(both, false)?;
                }
            }
        }
        Condition::CaptureSlide { .. } => {
            state.project_boards(&|board| condition.holds(board) == outcome)?;
        }
    }
    Ok((outcome, probability))
}

/// Captures the piece on `q` into a fresh ancilla (iSwap(q, c): |1>|0> -> i|0>|1>) on the
/// branches where `controls` hold. Returns the ancilla's index, or `None` when no branch has
/// `q` occupied under the controls (then no ancilla is taken).
pub(crate) fn capture_where<S: QuantumState>(
    state: &mut Recorder<'_, S>,
    q: u8,
    controls: Controls,
) -> Result<Option<u32>, CircuitError> {
    Ok(state.capture_controlled(q, controls)?)
}

/// iSwap(s, t) on the branches where any of the `ancillas` bits is set: the move of a pawn
/// capture or en passant, controlled (through the paper's control qubit p) on a capture having
/// happened in that branch.
pub(crate) fn iswap_where_captured<S: QuantumState>(
    state: &mut Recorder<'_, S>,
    s: u8,
    t: u8,
    ancillas: u128,
) -> Result<(), CircuitError> {
    Ok(state.iswap_where_ancillas(s, t, ancillas)?)
}
