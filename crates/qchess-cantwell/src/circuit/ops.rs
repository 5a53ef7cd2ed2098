//! The building blocks the move circuits share: measurements with the paper's M1 sets, and
//! the few controlled operations the simulator has no gate for (a capture controlled on board
//! qubits, an iSwap controlled on a capture ancilla, eq. 23b's outcome-0 projection). Those
//! rebuild the state from its entries; each first checks whether the plain gate already does
//! the same thing on this state, so the rebuild only runs when the control genuinely splits the
//! state. Eq. 23b's outcome 1 is a product of native projections.

use super::error::CircuitError;
use num_complex::Complex;
use qchess_sim::{Amplitude, Controls, Key, Normalization, Predicate, SimError, State};
use rand::Rng;

/// Probabilities at or below this are treated as zero: such an outcome is never drawn and
/// cannot be forced. Replayed games only force outcomes that were drawn, so they never hit it.
pub const PROBABILITY_FLOOR: f64 = 1e-12;

use qchess_sim::MAX_ANCILLAS;

/// `i` in the state's amplitude type.
fn i<T: Amplitude>() -> Complex<T> {
    Complex::new(T::zero(), T::one())
}

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
    fn probability<T: Amplitude>(self, state: &State<T>) -> f64 {
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

/// Measures `condition` (or forces `forced`), projects the state and returns the outcome with
/// its probability. One `f64` is drawn from `rng` whenever the outcome is not forced, even when
/// it is certain, so that a replay consumes the same random numbers. On error (a forced outcome
/// of probability 0) the state is unchanged.
pub(crate) fn measure<T: Amplitude, R: Rng + ?Sized>(
    state: &mut State<T>,
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
            let keep = |key: &Key| condition.holds(key.board) == outcome;
            if !state.entries().all(|(key, _)| keep(&key)) {
                let kept: Vec<_> = state.entries().filter(|(key, _)| keep(key)).collect();
                rebuild(state, kept, Normalization::Renormalize)?;
            }
        }
    }
    Ok((outcome, probability))
}

fn controls_hold(controls: Controls, board: u64) -> bool {
    board & controls.zeros == 0 && board & controls.ones == controls.ones
}

/// Captures the piece on `q` into a fresh ancilla (iSwap(q, c): |1>|0> -> i|0>|1>) on the
/// branches where `controls` hold. Returns the ancilla's index, or `None` when no branch has
/// `q` occupied under the controls (then no ancilla is taken).
pub(crate) fn capture_where<T: Amplitude>(
    state: &mut State<T>,
    q: u8,
    controls: Controls,
) -> Result<Option<u32>, CircuitError> {
    let qbit = 1u64 << q;
    let (mut fires, mut plain) = (false, true);
    for (key, _) in state.entries() {
        if key.board & qbit != 0 {
            let hold = controls_hold(controls, key.board);
            fires |= hold;
            plain &= hold;
        }
    }
    if !fires {
        return Ok(None);
    }
    if plain {
        return Ok(Some(state.capture(q)?));
    }
    let index = state.ancilla_count();
    if index >= MAX_ANCILLAS {
        return Err(SimError::TooManyAncillas { max: MAX_ANCILLAS }.into());
    }
    let moved: Vec<_> = state
        .entries()
        .map(|(key, amp)| {
            if key.board & qbit != 0 && controls_hold(controls, key.board) {
                let key = Key {
                    board: key.board & !qbit,
                    ancillas: key.ancillas | 1u128 << index,
                };
                (key, amp * i::<T>())
            } else {
                (key, amp)
            }
        })
        .collect();
    // The new ancilla bit is set on some branch, so the rebuilt state counts it.
    rebuild(state, moved, Normalization::RequireUnit)?;
    Ok(Some(index))
}

/// iSwap(s, t) on the branches where any of the `ancillas` bits is set: the move of a pawn
/// capture or en passant, controlled (through the paper's control qubit p) on a capture having
/// happened in that branch.
pub(crate) fn iswap_where_captured<T: Amplitude>(
    state: &mut State<T>,
    s: u8,
    t: u8,
    ancillas: u128,
) -> Result<(), CircuitError> {
    let captured = |key: &Key| key.ancillas & ancillas != 0;
    let (mut any, mut all) = (false, true);
    for (key, _) in state.entries() {
        let c = captured(&key);
        any |= c;
        all &= c;
    }
    if !any {
        return Ok(());
    }
    if all {
        return Ok(state.iswap(s, t, Controls::NONE)?);
    }
    let (sbit, tbit) = (1u64 << s, 1u64 << t);
    let moved: Vec<_> = state
        .entries()
        .map(|(key, amp)| {
            let occupied = (key.board & sbit != 0, key.board & tbit != 0);
            if captured(&key) && occupied.0 != occupied.1 {
                (
                    Key {
                        board: key.board ^ (sbit | tbit),
                        ..key
                    },
                    amp * i::<T>(),
                )
            } else {
                (key, amp)
            }
        })
        .collect();
    rebuild(state, moved, Normalization::RequireUnit)
}

/// Replaces the state by one holding `entries`, keeping its size cap.
fn rebuild<T: Amplitude>(
    state: &mut State<T>,
    entries: Vec<(Key, Complex<T>)>,
    normalization: Normalization,
) -> Result<(), CircuitError> {
    // Exact states are kept unnormalised: their norm is not 1 after a measurement.
    let normalization = if T::RENORMALIZES {
        normalization
    } else {
        Normalization::Renormalize
    };
    let cap = state.cap();
    let fresh = State::from_amplitudes(entries, normalization)?.with_cap(cap);
    *state = fresh;
    Ok(())
}
