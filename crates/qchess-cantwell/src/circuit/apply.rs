//! Applying a layer-1 move: the measurement (if any) and the unitary of each circuit of the
//! paper's section 8, with the readings of rules-notes D1-D8.

use super::error::CircuitError;
use super::journal::{Journal, Recorder, Tracked};
use super::move_type::{MoveType, Variant};
use super::occupancy_move::{OccupancyMove, bit};
use super::ops::{self, Condition};
use qchess_sim::{Controls, MAX_ANCILLAS, Predicate, QuantumState, SimError, State};
use rand::Rng;

/// What applying a move did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Applied {
    /// The measurement outcome (1 = the move proceeds), or `None` for a move that measures
    /// nothing.
    pub measured: Option<bool>,
    /// The probability of that outcome before the measurement.
    pub probability: Option<f64>,
    /// The fresh capture ancilla, when the move ran a capture. Capture E.P. takes two: this one
    /// for the e.p. pawn and the next index for the target.
    pub ancilla: Option<u32>,
}

/// Applies `mv` to `state`: the move's measurement (drawn from `rng`, or `mv.forced`), then,
/// on outcome 1, its unitary. Captured pieces go to fresh ancillas (rules-notes D11).
///
/// Any error leaves `state` exactly as it was.
///
/// ```
/// use qchess_cantwell::circuit::{apply, OccupancyMove};
/// use qchess_sim::{Key, State};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let mut state = State::classical(1 << 0); // a king on a1
/// let split: OccupancyMove = "a1^a2b1:SPLIT_JUMP:BASIC".parse().unwrap();
/// apply(&mut state, &split, &mut rng).unwrap();
/// let a2 = state.amplitude(Key::board(1 << 8));
/// assert!((a2.im - 0.5f64.sqrt()).abs() < 1e-12); // i/sqrt 2 on a2 (eq. 45a)
/// ```
pub fn apply<R: Rng + ?Sized>(
    state: &mut State,
    mv: &OccupancyMove,
    rng: &mut R,
) -> Result<Applied, CircuitError> {
    apply_on(state, mv, rng)
}

/// [`apply`] on any simulator backend ([`QuantumState`]): the same circuits, gate for gate.
///
/// ```
/// use qchess_cantwell::circuit::{apply_on, OccupancyMove};
/// use qchess_sim::{Predicate, QuantumState, State};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let mut state = State::<f32>::classical(1 << 0);
/// let split: OccupancyMove = "a1^a2b1:SPLIT_JUMP:BASIC".parse().unwrap();
/// apply_on(&mut state, &split, &mut rng).unwrap();
/// assert!((state.probability(Predicate::One(8)) - 0.5).abs() < 1e-6);
/// ```
pub fn apply_on<S: QuantumState, R: Rng + ?Sized>(
    state: &mut S,
    mv: &OccupancyMove,
    rng: &mut R,
) -> Result<Applied, CircuitError> {
    let mut journal = Journal::new();
    apply_recorded(state, mv, rng, &mut journal)
}

/// [`apply_on`] that records every step the move takes in `journal`, so that
/// [`Journal::rollback`] takes the move back without a copy of the state (on backends that
/// keep undo records, [`QuantumState::keeps_undo_records`]; on others the journal stays
/// empty). Any error leaves `state` exactly as it was and `journal` as it was given.
///
/// ```
/// use qchess_cantwell::circuit::{apply_recorded, Journal, OccupancyMove};
/// use qchess_sim::{QuantumState, State};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let mut state = State::<f64>::classical(1 << 0);
/// let mut journal = Journal::new();
/// let split: OccupancyMove = "a1^a2b1:SPLIT_JUMP:BASIC".parse().unwrap();
/// apply_recorded(&mut state, &split, &mut rng, &mut journal).unwrap();
/// assert_eq!(state.len(), 2);
/// journal.rollback(&mut state).unwrap();
/// assert_eq!(state.len(), 1);
/// ```
pub fn apply_recorded<S: QuantumState, R: Rng + ?Sized>(
    state: &mut S,
    mv: &OccupancyMove,
    rng: &mut R,
    journal: &mut Journal<S>,
) -> Result<Applied, CircuitError> {
    apply_recorded_within(state, mv, rng, journal, None, None).map(|(applied, ..)| applied)
}

/// [`apply_recorded`] for a caller that keeps the squares' marginals of `state` (the game):
/// a measurement of one square before any step of the move takes its probability from
/// `marginals` instead of reading the state for it (issue 10, Deliver 2), and keeps its
/// projection's record only when it takes at most `room` bytes ([`Recorder::within`];
/// `None`: always). Returns also what the move's steps tell of the marginals after it
/// ([`Tracked`]) and whether a projection dropped its record (the journal then lacks it and
/// cannot take the move back). `room` is for a move that no step after its measurement can
/// fail (an error after a dropped projection is reported with the state changed).
pub(crate) fn apply_recorded_within<S: QuantumState, R: Rng + ?Sized>(
    state: &mut S,
    mv: &OccupancyMove,
    rng: &mut R,
    journal: &mut Journal<S>,
    marginals: Option<[f64; 64]>,
    room: Option<usize>,
) -> Result<(Applied, Tracked, bool), CircuitError> {
    let mut rec = Recorder::new(state, journal)
        .knowing(marginals)
        .within(room);
    let mark = rec.mark();
    match run(&mut rec, mv, rng) {
        Ok(applied) => Ok((applied, rec.marginals(), rec.dropped())),
        Err(e) => {
            if rec.recording() {
                rec.rollback_to(mark)?;
            }
            Err(e)
        }
    }
}

fn run<S: QuantumState, R: Rng + ?Sized>(
    state: &mut Recorder<'_, S>,
    mv: &OccupancyMove,
    rng: &mut R,
) -> Result<Applied, CircuitError> {
    mv.validate()?;
    let needed = captures_needed(mv);
    if needed > 0 && state.ancilla_count() + needed > MAX_ANCILLAS {
        return Err(SimError::TooManyAncillas { max: MAX_ANCILLAS }.into());
    }
    let (s, t) = (mv.source.index(), mv.target.index());
    let tb = bit(mv.target);
    match (mv.move_type, mv.variant) {
        (MoveType::SplitJump, _) => {
            let t2 = mv.target2.map_or(t, |sq| sq.index());
            state.split(s, t, t2)?;
            Ok(Applied::default())
        }
        (MoveType::SplitSlide, _) => {
            let t2 = mv.target2.map_or(t, |sq| sq.index());
            let (p1, p2) = mv.paths();
            state.split_slide(s, t, t2, p1, p2)?;
            Ok(Applied::default())
        }
        (MoveType::MergeJump, _) => {
            let s2 = mv.source2.map_or(s, |sq| sq.index());
            state.merge(s, s2, t)?;
            Ok(Applied::default())
        }
        (MoveType::MergeSlide, _) => {
            let s2 = mv.source2.map_or(s, |sq| sq.index());
            let (p1, p2) = mv.paths();
            state.merge_slide(s, s2, t, p1, p2)?;
            Ok(Applied::default())
        }
        (MoveType::Jump | MoveType::PawnStep, Variant::Basic) => {
            state.iswap(s, t, Controls::NONE)?;
            Ok(Applied::default())
        }
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Basic) => {
            state.iswap(s, t, Controls::empty_path(mv.path()))?;
            Ok(Applied::default())
        }
        (MoveType::Jump | MoveType::PawnStep, Variant::Excluded) => {
            // Eq. 16b: M1 = target empty, then U_jump.
            measured(
                state,
                mv,
                rng,
                Condition::Board(Predicate::AllZero(tb)),
                |state| {
                    state.iswap(s, t, Controls::NONE)?;
                    Ok(None)
                },
            )
        }
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Excluded) => {
            // Eq. 21b: M1 = target empty, then U_slide.
            measured(
                state,
                mv,
                rng,
                Condition::Board(Predicate::AllZero(tb)),
                |state| {
                    state.iswap(s, t, Controls::empty_path(mv.path()))?;
                    Ok(None)
                },
            )
        }
        (MoveType::Jump, _) => {
            // Eq. 18b: M1 = source occupied; U_jump(s, t) U_jump(t, c), the capture first (D1).
            measured(
                state,
                mv,
                rng,
                Condition::Board(Predicate::One(s)),
                |state| {
                    let c = state.capture(t)?;
                    state.iswap(s, t, Controls::NONE)?;
                    Ok(Some(c))
                },
            )
        }
        (MoveType::Slide, _) => capture_slide(state, mv, rng),
        (MoveType::PawnCapture, _) => atomic(state, |state| {
            // Eq. 32 with 18b: M1 = source occupied; U_slide(p, t, s) U_slide(p, c, t) with
            // p = 0 iff source and target are occupied. After M1 the source is occupied, so the
            // capture fires exactly where the target is occupied, and the move follows it.
            measured(
                state,
                mv,
                rng,
                Condition::Board(Predicate::One(s)),
                |state| {
                    let c = state.capture(t)?;
                    ops::iswap_where_captured(state, s, t, 1u128 << c)?;
                    Ok(Some(c))
                },
            )
        }),
        (MoveType::PawnEp, variant) => en_passant(state, mv, variant, rng),
        (MoveType::KsCastle | MoveType::QsCastle, _) => castle(state, mv, rng),
        (MoveType::PawnStep | MoveType::PawnTwoStep, Variant::Capture) => {
            // Rejected by validate(); kept for exhaustiveness.
            Err(CircuitError::invalid(format!(
                "{}:CAPTURE is not a move of the paper",
                mv.move_type
            )))
        }
    }
}

/// How many fresh ancillas the move may take (a move that needs more than are left fails
/// before doing anything; the legal-move rules ask the same).
pub(crate) fn captures_needed(mv: &OccupancyMove) -> u32 {
    match (mv.move_type, mv.variant) {
        (MoveType::Jump | MoveType::Slide, Variant::Capture) => 1,
        (MoveType::PawnCapture, _) => 1,
        (MoveType::PawnEp, Variant::Capture) => 2,
        (MoveType::PawnEp, _) => 1,
        _ => 0,
    }
}

/// Runs `body` so that it changes the state only on success: for the moves whose circuits
/// take several simulator steps that could each fail. With undo records the failed steps are
/// taken back from the journal; otherwise `body` runs on a copy committed only on success.
fn atomic<S: QuantumState>(
    state: &mut Recorder<'_, S>,
    body: impl FnOnce(&mut Recorder<'_, S>) -> Result<Applied, CircuitError>,
) -> Result<Applied, CircuitError> {
    if state.recording() {
        // A failure is taken back from the journal by `apply_recorded`.
        return body(state);
    }
    // The copy is asked of the state's memory budget first (an error changes nothing).
    let mut work = state.state.try_clone(0)?;
    let mut journal = Journal::new();
    let applied = body(&mut Recorder::new(&mut work, &mut journal))?;
    *state.state = work;
    Ok(applied)
}

/// Algorithm 2: measure `condition`; on outcome 1 run `unitary`, which returns the capture
/// ancilla it used, if any.
fn measured<S: QuantumState, R: Rng + ?Sized>(
    state: &mut Recorder<'_, S>,
    mv: &OccupancyMove,
    rng: &mut R,
    condition: Condition,
    unitary: impl FnOnce(&mut Recorder<'_, S>) -> Result<Option<u32>, CircuitError>,
) -> Result<Applied, CircuitError> {
    let (outcome, probability) = ops::measure(state, condition, mv.forced, rng)?;
    let ancilla = if outcome { unitary(state)? } else { None };
    Ok(Applied {
        measured: Some(outcome),
        probability: Some(probability),
        ancilla,
    })
}

/// Capture Slide (section 8.6): M1 of eq. 23b exactly (D4), then
/// U_slide(s, t) U_slide(t, c). After M1 the target is empty wherever the path is blocked,
/// so the capture needs no path control; the move keeps it.
fn capture_slide<S: QuantumState, R: Rng + ?Sized>(
    state: &mut Recorder<'_, S>,
    mv: &OccupancyMove,
    rng: &mut R,
) -> Result<Applied, CircuitError> {
    let (s, t) = (mv.source.index(), mv.target.index());
    let path = mv.path();
    let condition = if path == 0 {
        Condition::Board(Predicate::One(s))
    } else {
        Condition::CaptureSlide {
            path,
            source: bit(mv.source),
            target: bit(mv.target),
        }
    };
    atomic(state, |state| {
        measured(state, mv, rng, condition, |state| {
            let c = state.capture(t)?;
            state.iswap(s, t, Controls::empty_path(path))?;
            Ok(Some(c))
        })
    })
}

/// En passant (sections 8.11.6-8.11.8, D6). The e.p. pawn stands on the target's file and the
/// source's rank.
/// - Standard: no measurement; U_slide(p, t, s) U_slide(p, c, ep), p = 0 iff source and e.p.
///   square are occupied.
/// - Blocked: M1 = target empty (eq. 16b), then the same unitary.
/// - Capture: M1 = source occupied (eq. 18b), then U_slide(p, t, s) U_slide(p, c2, t)
///   U_slide(p, c1, ep), p = 0 iff the source is occupied and the target or the e.p. square is.
fn en_passant<S: QuantumState, R: Rng + ?Sized>(
    state: &mut Recorder<'_, S>,
    mv: &OccupancyMove,
    variant: Variant,
    rng: &mut R,
) -> Result<Applied, CircuitError> {
    let (s, t) = (mv.source.index(), mv.target.index());
    let ep = mv.ep_square().map_or(t, |sq| sq.index());
    let standard = move |state: &mut Recorder<'_, S>| -> Result<Option<u32>, CircuitError> {
        let c = ops::capture_where(
            state,
            ep,
            Controls {
                zeros: 0,
                ones: 1u64 << s,
            },
        )?;
        if let Some(c) = c {
            ops::iswap_where_captured(state, s, t, 1u128 << c)?;
        }
        Ok(c)
    };
    atomic(state, |state| match variant {
        Variant::Basic => {
            let ancilla = standard(state)?;
            Ok(Applied {
                measured: None,
                probability: None,
                ancilla,
            })
        }
        Variant::Excluded => measured(
            state,
            mv,
            rng,
            Condition::Board(Predicate::AllZero(1u64 << t)),
            standard,
        ),
        Variant::Capture => measured(
            state,
            mv,
            rng,
            Condition::Board(Predicate::One(s)),
            |state| {
                // The source is occupied on every branch now, so each capture fires exactly where
                // its square is occupied; the move follows either capture.
                let c1 = state.capture(ep)?;
                let c2 = state.capture(t)?;
                ops::iswap_where_captured(state, s, t, (1u128 << c1) | (1u128 << c2))?;
                Ok(Some(c1))
            },
        ),
    })
}

/// Castling (section 8.12, D5): M1 = the king's and rook's targets empty (eq. 36b), then
/// U_jump(e, g) U_jump(f, h) on the king side, U_slide(b, a, d) U_slide(b, c, e) on the queen
/// side (both iSwaps controlled on b empty).
fn castle<S: QuantumState, R: Rng + ?Sized>(
    state: &mut Recorder<'_, S>,
    mv: &OccupancyMove,
    rng: &mut R,
) -> Result<Applied, CircuitError> {
    let Some(sq) = mv.castling_squares() else {
        return Err(CircuitError::invalid("castling squares"));
    };
    let empty = bit(sq.king_to) | bit(sq.rook_to);
    let controls = Controls::empty_path(sq.control.map_or(0, bit));
    measured(
        state,
        mv,
        rng,
        Condition::Board(Predicate::AllZero(empty)),
        |state| {
            state.iswap(sq.rook_from.index(), sq.rook_to.index(), controls)?;
            state.iswap(sq.king_from.index(), sq.king_to.index(), controls)?;
            Ok(None)
        },
    )
}
