//! The building blocks the move circuits share: measurements with the paper's M1 sets, and
//! the few controlled operations the simulator has no gate for (a capture controlled on board
//! qubits, an iSwap controlled on a capture ancilla, eq. 23b's outcome-0 projection). Those
//! rebuild the state from its entries; each first checks whether the plain gate already does
//! the same thing on this state, so the rebuild only runs when the control genuinely splits the
//! state. Eq. 23b's outcome 1 is a product of native projections.

use super::error::CircuitError;
use super::journal::Recorder;
use qchess_sim::{Controls, Pick, Predicate, QuantumState};
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
    /// Whether outcome 1 holds on `board` (eq. 23b as the paper writes it; the measurement
    /// itself projects by native patterns, which the tests check against this).
    #[cfg(test)]
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
}

/// The smallest outcome probability [`measure`] hands to the backend for scaling the
/// survivors (see [`Pick::given`]).
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
    let draw: Option<f64> = match forced {
        Some(_) => None,
        None => Some(rng.random()),
    };
    let (path, source, target) = match condition {
        Condition::Board(p) => return measure_board(state, p, forced, draw),
        Condition::CaptureSlide {
            path,
            source,
            target,
        } => (path, source, target),
    };
    // A target occupied on every stored board (a capture of a classical piece) leaves M1
    // "path clear and source occupied", and just "path clear" when the source is occupied on
    // every board too: one native pattern, measured as the one-square moves are (one read,
    // one projection), for either outcome. A read of the keys alone tells.
    let (always, _) = state.occupancy_bounds();
    if always & target == target {
        let pred = if always & source == source {
            Predicate::AllZero(path)
        } else {
            Predicate::Equals {
                mask: path | source,
                value: source,
            }
        };
        return measure_board(state, pred, forced, draw);
    }
    // Outcome 0 is the union of what the native projections of outcome 1 would remove
    // (M1 is the intersection of their complements): one read of the union's probability
    // and of its complement's, then one projection onto the outcome drawn (the boards on
    // which none of the patterns holds, or those on which one does), each pattern mapped to
    // the physical bits once. An outcome of probability at least GIVEN_MIN has its
    // survivors scaled by the probability just read, in the projection's pass (as
    // `measure_board`'s).
    let failed = capture_slide_removals(path, source, target);
    let (p0, p1) = state.probability_any(&failed)?;
    let (outcome, probability) = decide(p1, forced, draw);
    // Outcome 0's probability as summed from its own entries (not 1 - p1).
    let probability = if outcome { probability } else { p0 };
    if probability <= PROBABILITY_FLOOR {
        return Err(CircuitError::ImpossibleOutcome {
            outcome,
            probability,
        });
    }
    // With a room smaller than the state, an outcome that surely changes the state drops
    // its projection's record (the game's undo budget or memory cannot hold it).
    let given = (probability >= GIVEN_MIN).then_some(probability);
    if state.may_drop(probability) {
        state.force_any_within(&failed, !outcome, given)?;
    } else {
        state.force_any(&failed, !outcome, given)?;
    }
    Ok((outcome, probability))
}

/// The native patterns whose union is eq. 23b's outcome 0 of a capture slide (M1 fails):
/// "path clear and source empty", then "x and the target occupied" for each path square x,
/// lowest first.
fn capture_slide_removals(path: u64, source: u64, target: u64) -> Vec<Predicate> {
    let mut out = Vec::with_capacity(1 + path.count_ones() as usize);
    out.push(Predicate::Equals {
        mask: path | source,
        value: 0,
    });
    let mut rest = path;
    while rest != 0 {
        let x = rest & rest.wrapping_neg();
        rest &= rest - 1;
        out.push(Predicate::Equals {
            mask: x | target,
            value: x | target,
        });
    }
    out
}

/// [`measure`] of a predicate the simulator measures natively: one read and one projection
/// (the backend counts what each part of the state loses while it reads the probability).
/// An outcome of probability at least [`GIVEN_MIN`] has its survivors scaled by the
/// probability just read, in the projection's pass (its relative error is then at most a
/// few ulps; a rarer outcome's `1 - p` would lose digits, so the backend sums its mass).
fn measure_board<S: QuantumState>(
    state: &mut Recorder<'_, S>,
    pred: Predicate,
    forced: Option<bool>,
    draw: Option<f64>,
) -> Result<(bool, f64), CircuitError> {
    let mut chosen = None;
    state.measure(pred, &mut |read| {
        let (outcome, probability) = decide(read, forced, draw);
        chosen = Some((outcome, probability));
        (probability > PROBABILITY_FLOOR).then_some(Pick {
            outcome,
            given: (probability >= GIVEN_MIN).then_some(probability),
        })
    })?;
    // Without an error the backend always hands over its read.
    let (outcome, probability) = chosen.unwrap_or_else(|| decide(0.0, forced, draw));
    if probability <= PROBABILITY_FLOOR {
        return Err(CircuitError::ImpossibleOutcome {
            outcome,
            probability,
        });
    }
    Ok((outcome, probability))
}

/// The outcome of a measurement whose outcome 1 has probability `p1` (clamped to [0, 1]):
/// `forced`, or outcome 1 when the uniform `draw` falls below `p1` (never an outcome of
/// probability at most [`PROBABILITY_FLOOR`]); with that outcome's probability.
fn decide(p1: f64, forced: Option<bool>, draw: Option<f64>) -> (bool, f64) {
    let p1 = p1.clamp(0.0, 1.0);
    let outcome = match (forced, draw) {
        (Some(outcome), _) => outcome,
        (None, draw) => {
            if p1 <= PROBABILITY_FLOOR {
                false
            } else if p1 >= 1.0 - PROBABILITY_FLOOR {
                true
            } else {
                draw.unwrap_or(0.0) < p1
            }
        }
    };
    (outcome, if outcome { p1 } else { 1.0 - p1 })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Outcome 1 of eq. 23b is what the removals leave (their complements' product) and
    /// outcome 0 the boards on which any of them holds: on every board of the path's, the
    /// source's and the target's squares, for paths of one to six squares.
    #[test]
    fn the_capture_slide_removals_are_eq_23b_outcome_0() {
        for path_len in 1..=6u32 {
            // Source on bit 0, the path on the next bits, the target above them.
            let (source, target) = (1u64, 1u64 << (path_len + 1));
            let path = ((1u64 << path_len) - 1) << 1;
            let condition = Condition::CaptureSlide {
                path,
                source,
                target,
            };
            let removals = capture_slide_removals(path, source, target);
            assert_eq!(removals.len(), 1 + path_len as usize);
            for board in 0..1u64 << (path_len + 2) {
                let removed = removals.iter().any(|p| p.holds(board));
                assert_eq!(removed, !condition.holds(board), "{board:b}");
            }
        }
    }
}
