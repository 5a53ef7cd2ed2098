//! `qchess bench move`: one real Cantwell game move (or the legal-move list) on a position
//! whose state holds at least N basis states, reached by real moves, timed beside the bare
//! simulator operation the move stands for, run on an identical copy of the same state.
//!
//! The position ([`START_FEN`]): white Ke1 Ra1 Nb1 Ng1, black ke8 and pe4, and eight growth
//! knights a side (placed by a search for the largest state the set-up rule reaches; it stops
//! at 3.0 x 10^7 basis states). The set-up plays `b1^a3d2` (a knight in superposition, half
//! on the rook's a-file path and half beside the king), then, side by side, splits a growth
//! knight on its most likely square into two empty squares (each split multiplies the state
//! by `(k+1)/k` for a knight spread over `k` squares) until the state holds at least N basis
//! states, then, if Black is to move, `e8d8`. With undo snapshots switched off during the
//! set-up, it then restores the game's default snapshot budget (or `--snapshot-budget`) and
//! times White's move with [`Game::apply`]:
//!
//! | kind | move | what it is | bare operation (`qchess_sim::State`) |
//! |---|---|---|---|
//! | jump | `g1h3` | JUMP:BASIC of a classical knight | `iswap(g1, h3)` |
//! | slide | `a1a5` | SLIDE:BASIC, path a2-a4 with a3 occupied with probability 1/2 | `iswap(a1, a5, empty_path(a2 a3 a4))` |
//! | split | `g1^f3h3` | SPLIT_JUMP of a classical knight | `split(g1, f3, h3)` |
//! | merge | `a3d2^b1` | MERGE_JUMP of the two halves of the b1 knight | `merge(a3, d2, b1)` |
//! | capture | `d2xe4.m1` | JUMP:CAPTURE by the half knight on d2 (measures d2, p = 1/2) | `probability(d2)`, `force(d2)`, `capture(e4)`, `iswap(d2, e4)` |
//! | measure | `e1d2.m1` | JUMP:EXCLUDED of the king into d2 (measures "d2 empty", p = 1/2) | `probability(d2 empty)`, `force(d2 empty)`, `iswap(e1, d2)` |
//! | measure-slide | `a1a3.m1` | SLIDE:EXCLUDED of the rook into a3 (measures "a3 empty", p = 1/2), path a2 | `probability(a3 empty)`, `force(a3 empty)`, `iswap(a1, a3, empty_path(a2))` |
//! | capture-slide | `a1xa5.m1` | SLIDE:CAPTURE of the rook onto a black knight on a5, path a2-a4 (measures eq. 23b's M1, here "path clear", p = 1/2) | `probability(a2 a3 a4 empty)`, `force(a2 a3 a4 empty)`, `capture(a5)`, `iswap(a1, a5, empty_path(a2 a3 a4))` |
//! | capture-slide-superposed | `a1xa5.m1` | SLIDE:CAPTURE as above onto a black knight half on a5 (eq. 23b's M1 in general: "path clear" or "path blocked and target empty", p = 3/4), the capture controlled by the a5 ancilla | `probability(a3 a5 occupied)`, `force(not a3 a5 occupied)`, `capture(a5)`, `iswap(a1, a5, empty_path(a2 a3 a4))` |
//! | capture-slide-blocked | `a1xa5.m0` | the same move's other outcome (p = 1/4): M1 fails, the rook stays; eq. 23b's outcome 0 is not one native pattern: the game reads the union of its native patterns once (`State::probability_any`) and projects onto it (`State::force_any`) | `probability(a3 a5 occupied)`, `force(a3 a5 occupied)` (the same survivors, one native pattern) |
//! | castle | `e1c1.m1` | QS_CASTLE (measures "c1 and d1 empty"), both iSwaps controlled on b1 empty | `probability(c1 d1 empty)`, `force(c1 d1 empty)`, `iswap(a1, d1, empty_path(b1))`, `iswap(e1, c1, empty_path(b1))` |
//! | legal | [`Game::legal_moves`] | the full legal-move list of White | one `probability` scan |
//!
//! Two kinds start from a variant of the position ([`MoveKind::start_fen`]; the growth splits
//! are the same): `capture-slide` from [`GROWTH_CAPTURE_SLIDE_FEN`] (a black knight on a5)
//! and `castle` from [`GROWTH_CASTLE_FEN`] (White's queen-side castling right). The two
//! `capture-slide-*` kinds on a superposed target start from
//! [`GROWTH_SUPERPOSED_TARGET_FEN`] (a black knight on b3) and play
//! [`GROWTH_SUPERPOSED_TARGET_OPENING`] ([`MoveKind::opening`]: the first split, then Black's
//! `b3^a5c1`) before the growth splits, which then differ from the others'.
//!
//! The game is warmed first: the move is played once (timed as `cold_seconds`: its pass
//! buffers and undo record are allocated fresh, as after a split, which gives its buffers
//! back), taken back with [`Game::undo`] and checked to be the same state again. Then each
//! timed pair runs the bare operation on a copy made with `State::try_clone` whose pass
//! buffers were warmed by the operation and its inverse (as `qchess bench sim` does; the copy
//! is checked to be the same state as the game's, timed, and dropped), then the game move
//! (`seconds`), then its undo. So `seconds / gate_seconds` compares warm with warm
//! (2026-11-27; before, a cold move was compared with a warm gate).
//!
//! `--repeat N` times N such pairs, the move each time after the previous one was taken back.
//! Each undo is timed too (`undo_seconds`, `undo_seconds_runs`; `null` and empty for the
//! legal list). `seconds`, `gate_seconds` and `undo_seconds` are then the medians
//! (`qchess_sim::bench::median`), `seconds_runs` and `gate_seconds_runs` list every run, and
//! `peak_bytes` is the largest run's. `ratio_runs` is each pair's move seconds over its bare
//! operation's, and `ratio` their median: on a machine whose speed drifts between seconds
//! (a shared VM), a pair's two runs see the same machine, which the ratio of the two
//! separate medians does not promise (2026-11-30; before, all bare runs came first).
//!
//! `peak_bytes` is the process's resident memory: what the game holds right before the timed
//! move (`state().bytes()`, free pass buffers included, plus `undo_bytes()`) plus the
//! growth of the resident set during the move (`VmHWM` after the move less `VmRSS` before,
//! with `VmHWM` reset through `/proc/self/clear_refs` just before). Where that file cannot be
//! written (not Linux), it is the larger of the state's bytes before and after, and
//! `peak_source` says `"state"` instead of `"vmhwm"`. `gate_peak_bytes` is the simulator's
//! own accounting (`State::peak_bytes`) of the bare operation.

use crate::error::CliError;
use clap::{Args, ValueEnum};
use qchess_board::Square;
use qchess_cantwell::growth::{
    GROWTH_CAPTURE_SLIDE_FEN, GROWTH_CASTLE_FEN, GROWTH_FEN, GROWTH_FIRST_SPLIT,
    GROWTH_SUPERPOSED_TARGET_FEN, GROWTH_SUPERPOSED_TARGET_OPENING, growth_position_after,
};
use qchess_cantwell::{Game, GameError};
use qchess_sim::{Amplitude, Controls, Predicate, QuantumState, SimError, State};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// The position every run starts from ([`qchess_cantwell::growth`], shared with the
/// legal-move benchmark and tests).
pub const START_FEN: &str = GROWTH_FEN;

/// The move to time.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveKind {
    /// A basic jump of a classical knight (`g1h3`).
    Jump,
    /// A basic slide through a superposed path (`a1a5`).
    Slide,
    /// A split jump of a classical knight (`g1^f3h3`).
    Split,
    /// A merge of the two halves of a split knight (`a3d2^b1`).
    Merge,
    /// A capture jump by a knight in superposition, which measures (`d2xe4.m1`).
    Capture,
    /// An excluded jump into a square occupied with probability 1/2 (`e1d2.m1`).
    Measure,
    /// An excluded slide into a square occupied with probability 1/2 (`a1a3.m1`).
    MeasureSlide,
    /// A capture slide through a superposed path, which measures (`a1xa5.m1`).
    CaptureSlide,
    /// A capture slide through a superposed path onto a superposed target (`a1xa5.m1`):
    /// eq. 23b's measurement in general.
    CaptureSlideSuperposed,
    /// The same capture slide's failed outcome (`a1xa5.m0`): a projection onto boards.
    CaptureSlideBlocked,
    /// Queen-side castling, which measures its targets empty (`e1c1.m1`).
    Castle,
    /// The full legal-move list (`Game::legal_moves`).
    Legal,
}

impl MoveKind {
    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            MoveKind::Jump => "jump",
            MoveKind::Slide => "slide",
            MoveKind::Split => "split",
            MoveKind::Merge => "merge",
            MoveKind::Capture => "capture",
            MoveKind::Measure => "measure",
            MoveKind::MeasureSlide => "measure-slide",
            MoveKind::CaptureSlide => "capture-slide",
            MoveKind::CaptureSlideSuperposed => "capture-slide-superposed",
            MoveKind::CaptureSlideBlocked => "capture-slide-blocked",
            MoveKind::Castle => "castle",
            MoveKind::Legal => "legal",
        }
    }

    /// The QCAN move timed (none for the legal list).
    pub fn notation(self) -> Option<&'static str> {
        match self {
            MoveKind::Jump => Some("g1h3"),
            MoveKind::Slide => Some("a1a5"),
            MoveKind::Split => Some("g1^f3h3"),
            MoveKind::Merge => Some("a3d2^b1"),
            MoveKind::Capture => Some("d2xe4.m1"),
            MoveKind::Measure => Some("e1d2.m1"),
            MoveKind::MeasureSlide => Some("a1a3.m1"),
            MoveKind::CaptureSlide | MoveKind::CaptureSlideSuperposed => Some("a1xa5.m1"),
            MoveKind::CaptureSlideBlocked => Some("a1xa5.m0"),
            MoveKind::Castle => Some("e1c1.m1"),
            MoveKind::Legal => None,
        }
    }

    /// The FEN the set-up starts from: [`START_FEN`], or its variant with the piece or right
    /// the move needs.
    pub fn start_fen(self) -> &'static str {
        match self {
            MoveKind::CaptureSlide => GROWTH_CAPTURE_SLIDE_FEN,
            MoveKind::CaptureSlideSuperposed | MoveKind::CaptureSlideBlocked => {
                GROWTH_SUPERPOSED_TARGET_FEN
            }
            MoveKind::Castle => GROWTH_CASTLE_FEN,
            _ => START_FEN,
        }
    }

    /// The moves the set-up plays before its growth splits: [`GROWTH_FIRST_SPLIT`], and for
    /// the capture slides onto a superposed target [`GROWTH_SUPERPOSED_TARGET_OPENING`].
    pub fn opening(self) -> &'static [&'static str] {
        match self {
            MoveKind::CaptureSlideSuperposed | MoveKind::CaptureSlideBlocked => {
                &GROWTH_SUPERPOSED_TARGET_OPENING
            }
            _ => &[GROWTH_FIRST_SPLIT],
        }
    }
}

/// Arguments of `qchess bench move`.
#[derive(Args, Debug)]
pub struct MoveArgs {
    /// The move to time.
    #[arg(long, value_enum)]
    pub kind: MoveKind,
    /// Least number of basis states the state holds before the move.
    #[arg(long)]
    pub states: u64,
    /// Rayon threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Use f32 amplitudes instead of f64.
    #[arg(long)]
    pub f32: bool,
    /// Memory budget in bytes (default: measured from the limits).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<usize>,
    /// Undo snapshot budget of the timed move in bytes (default: the game's default).
    #[arg(long, value_name = "BYTES")]
    pub snapshot_budget: Option<usize>,
    /// Seed of the random numbers the game draws (the timed moves force their outcomes).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Times the bare operation and the move this many times (each on a fresh warmed copy,
    /// and each move taken back before the next); `seconds` and `gate_seconds` are then the
    /// medians, and the JSON lists every run.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: usize,
}

/// What one run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveBench {
    /// Basis states before the move.
    pub states: usize,
    /// Wall seconds of the game move (or of `Game::legal_moves`) alone.
    pub seconds: f64,
    /// Wall seconds of the bare simulator operation on a copy of the same state.
    pub gate_seconds: f64,
    /// Every timed run of the move (`--repeat`; `seconds` is their median).
    pub seconds_runs: Vec<f64>,
    /// Every timed run of the bare operation (`gate_seconds` is their median).
    pub gate_seconds_runs: Vec<f64>,
    /// The median of `ratio_runs`: the move's cost in bare operations, pair by pair.
    pub ratio: f64,
    /// Each run's move seconds over the bare operation's seconds of the same pair (the
    /// operation runs right before the move, so both see the machine as it was then).
    pub ratio_runs: Vec<f64>,
    /// Median wall seconds of taking the timed move back (`Game::undo`: its journal run
    /// backwards); `None` for the legal-move list.
    pub undo_seconds: Option<f64>,
    /// Every timed undo (one after each timed move).
    pub undo_seconds_runs: Vec<f64>,
    /// Wall seconds of the first play of the move, before it was taken back and timed again
    /// (fresh pass buffers and undo record); `None` for the legal-move list.
    pub cold_seconds: Option<f64>,
    /// Peak bytes of the move (see the module documentation).
    pub peak_bytes: usize,
    /// How `peak_bytes` was measured: `"vmhwm"` or `"state"`.
    pub peak_source: &'static str,
    /// `State::bytes` before the move (arrays and reusable pass buffers).
    pub state_bytes: usize,
    /// `State::state_bytes` before the move (the key and amplitude arrays alone).
    pub array_bytes: usize,
    /// The simulator's peak accounting of the bare operation.
    pub gate_peak_bytes: usize,
    /// The move as the game recorded it (the legal list: its length).
    pub played: String,
    /// `MOVE_TYPE:VARIANT` of the move, as the game recorded it.
    pub move_type: Option<String>,
    /// The probability of the measured outcome, for moves that measure.
    pub probability: Option<f64>,
    /// Legal moves listed (kind `legal`).
    pub legal_moves: Option<usize>,
    /// The classical layer (FEN) before the move.
    pub fen: String,
    /// The set-up moves played from [`START_FEN`].
    pub setup: Vec<String>,
    /// Wall seconds of the set-up.
    pub setup_seconds: f64,
}

fn sq(name: &str) -> Square {
    name.parse().expect("a square name of this module")
}

fn game_error(context: &str, e: GameError) -> CliError {
    CliError::failure(format!("bench move: {context}: {} ({e})", e.kind()))
}

fn sim_error(context: &str, e: SimError) -> CliError {
    CliError::failure(format!("bench move: {context}: {e}"))
}

/// Plays the set-up of `kind` ([`MoveKind::start_fen`], [`MoveKind::opening`];
/// [`qchess_cantwell::growth::growth_position_after`]): a position with at least `n` basis
/// states and White to move.
pub fn setup_for<S: QuantumState>(
    kind: MoveKind,
    n: usize,
) -> Result<(Game<S>, Vec<String>), CliError> {
    let (game, played) = growth_position_after::<S>(kind.start_fen(), kind.opening(), n)
        .map_err(|e| game_error("set-up", e))?;
    if game.state_size() < n {
        return Err(CliError::failure(format!(
            "bench move: the set-up position reaches at most {} basis states; ask for fewer",
            game.state_size()
        )));
    }
    Ok((game, played))
}

fn status_bytes(field: &str) -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Resets the process's peak resident size (`VmHWM`) to its current one; false where that
/// cannot be done.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok() && status_bytes("VmHWM:").is_some()
}

/// The bare operation of `kind` on `s` (the qubit of a square is its index). Through the
/// [`QuantumState`] methods, which `qchess-sim` compiles once for each amplitude type.
fn bare_op<S: QuantumState>(kind: MoveKind, s: &mut S) -> Result<(), SimError> {
    let q = |name: &str| sq(name).index();
    let path = (1u64 << q("a2")) | (1u64 << q("a3")) | (1u64 << q("a4"));
    match kind {
        MoveKind::Jump => s.iswap(q("g1"), q("h3"), Controls::NONE),
        MoveKind::Slide => s.iswap(q("a1"), q("a5"), Controls::empty_path(path)),
        MoveKind::Split => s.split(q("g1"), q("f3"), q("h3"), Controls::NONE),
        MoveKind::Merge => s.merge(q("a3"), q("d2"), q("b1"), Controls::NONE),
        MoveKind::Capture => {
            let p = Predicate::One(q("d2"));
            std::hint::black_box(s.probability(p));
            s.force(p, true)?;
            s.capture(q("e4"))?;
            s.iswap(q("d2"), q("e4"), Controls::NONE)
        }
        MoveKind::Measure => {
            let p = Predicate::AllZero(1u64 << q("d2"));
            std::hint::black_box(s.probability(p));
            s.force(p, true)?;
            s.iswap(q("e1"), q("d2"), Controls::NONE)
        }
        MoveKind::MeasureSlide => {
            let p = Predicate::AllZero(1u64 << q("a3"));
            std::hint::black_box(s.probability(p));
            s.force(p, true)?;
            s.iswap(q("a1"), q("a3"), Controls::empty_path(1u64 << q("a2")))
        }
        MoveKind::CaptureSlide => {
            let p = Predicate::AllZero(path);
            std::hint::black_box(s.probability(p));
            s.force(p, true)?;
            s.capture(q("a5"))?;
            s.iswap(q("a1"), q("a5"), Controls::empty_path(path))
        }
        MoveKind::CaptureSlideSuperposed | MoveKind::CaptureSlideBlocked => {
            // Eq. 23b's M1 here (a1 always occupied, a2 and a4 never): not "a3 and a5
            // occupied", one native pattern; the failed outcome keeps it.
            let both = (1u64 << q("a3")) | (1u64 << q("a5"));
            let p = Predicate::Equals {
                mask: both,
                value: both,
            };
            std::hint::black_box(s.probability(p));
            if kind == MoveKind::CaptureSlideBlocked {
                return s.force(p, true).map(|_| ());
            }
            s.force(p, false)?;
            s.capture(q("a5"))?;
            s.iswap(q("a1"), q("a5"), Controls::empty_path(path))
        }
        MoveKind::Castle => {
            let p = Predicate::AllZero((1u64 << q("c1")) | (1u64 << q("d1")));
            std::hint::black_box(s.probability(p));
            s.force(p, true)?;
            let b1 = Controls::empty_path(1u64 << q("b1"));
            s.iswap(q("a1"), q("d1"), b1)?;
            s.iswap(q("e1"), q("c1"), b1)
        }
        MoveKind::Legal => {
            std::hint::black_box(s.probability(Predicate::One(q("a3"))));
            Ok(())
        }
    }
}

/// Runs the bare operation's inverse after it, so the copy's pass buffers exist at working
/// size; for the measuring kinds (no inverse), an iSwap and its inverse controlled on a3.
fn warm_up<S: QuantumState>(kind: MoveKind, s: &mut S) -> Result<(), SimError> {
    let q = |name: &str| sq(name).index();
    let path = (1u64 << q("a2")) | (1u64 << q("a3")) | (1u64 << q("a4"));
    match kind {
        MoveKind::Jump => s
            .iswap(q("g1"), q("h3"), Controls::NONE)
            .and_then(|_| s.iswap_inv(q("g1"), q("h3"), Controls::NONE)),
        MoveKind::Slide => {
            let c = Controls::empty_path(path);
            s.iswap(q("a1"), q("a5"), c)
                .and_then(|_| s.iswap_inv(q("a1"), q("a5"), c))
        }
        MoveKind::Split => s
            .split(q("g1"), q("f3"), q("h3"), Controls::NONE)
            .and_then(|_| s.merge(q("h3"), q("f3"), q("g1"), Controls::NONE)),
        MoveKind::Merge => s
            .merge(q("a3"), q("d2"), q("b1"), Controls::NONE)
            .and_then(|_| s.split(q("b1"), q("d2"), q("a3"), Controls::NONE)),
        MoveKind::Castle => {
            let c = Controls::empty_path(1u64 << q("b1"));
            s.iswap(q("e1"), q("c1"), c)
                .and_then(|_| s.iswap_inv(q("e1"), q("c1"), c))
        }
        MoveKind::Capture
        | MoveKind::Measure
        | MoveKind::MeasureSlide
        | MoveKind::CaptureSlide
        | MoveKind::CaptureSlideSuperposed
        | MoveKind::CaptureSlideBlocked => {
            let c = Controls::empty_path(1u64 << q("a3"));
            s.iswap(q("e1"), q("d2"), c)
                .and_then(|_| s.iswap_inv(q("e1"), q("d2"), c))
        }
        MoveKind::Legal => Ok(()),
    }
}

/// One timed run of the bare operation of `kind` on a warmed copy of the game's state (for
/// `legal`, one probability read of the state itself): wall seconds and the simulator's peak
/// accounting.
fn time_bare_op<T: Amplitude>(
    kind: MoveKind,
    game: &Game<State<T>>,
) -> Result<(f64, usize), CliError>
where
    State<T>: QuantumState,
{
    if kind == MoveKind::Legal {
        let t = Instant::now();
        std::hint::black_box(game.state().probability(Predicate::One(sq("a3").index())));
        return Ok((t.elapsed().as_secs_f64(), game.state().bytes()));
    }
    let mut copy = game
        .state()
        .try_clone(0)
        .map_err(|e| sim_error("the copy for the bare operation", e))?;
    warm_up(kind, &mut copy).map_err(|e| sim_error("warming the copy", e))?;
    if !qchess_cantwell::game::same_state(&copy, game.state()) {
        return Err(CliError::failure(
            "bench move: the warmed copy differs from the game's state",
        ));
    }
    copy.reset_peak_bytes();
    let t = Instant::now();
    bare_op(kind, &mut copy).map_err(|e| sim_error("the bare operation", e))?;
    let seconds = t.elapsed().as_secs_f64();
    Ok((seconds, copy.peak_bytes()))
}

/// Sets up the position and times the move and its bare operation.
pub fn bench<T: Amplitude>(args: &MoveArgs) -> Result<MoveBench, CliError>
where
    State<T>: QuantumState,
{
    if args.states == 0 {
        return Err(CliError::usage("--states must be at least 1"));
    }
    if args.repeat == 0 {
        return Err(CliError::usage("--repeat must be at least 1"));
    }
    let n = usize::try_from(args.states).map_err(|_| CliError::usage("--states is too large"))?;
    let t0 = Instant::now();
    let (mut game, setup) = setup_for::<State<T>>(args.kind, n)?;
    let setup_seconds = t0.elapsed().as_secs_f64();
    let snapshot_budget = args
        .snapshot_budget
        .unwrap_or(qchess_cantwell::game::DEFAULT_SNAPSHOT_BUDGET_BYTES);
    let kind = args.kind;
    let states = game.state_size();
    let state_bytes = game.state().bytes();
    let array_bytes = game.state().state_bytes();
    let fen = game.fen();

    // The game move: played once cold, taken back (checked), then timed warm.
    let cold_seconds = match kind.notation() {
        Some(mv) => {
            let reference = game
                .state()
                .try_clone(0)
                .map_err(|e| sim_error("the copy for the warm-up check", e))?;
            // The warm-up keeps its undo record whatever budget the timed move gets.
            game.set_snapshot_budget(usize::MAX);
            let t = Instant::now();
            game.apply(mv, &mut ChaCha8Rng::seed_from_u64(args.seed))
                .map_err(|e| game_error(&format!("the warm-up move {mv}"), e))?;
            let cold = t.elapsed().as_secs_f64();
            game.undo()
                .map_err(|e| game_error(&format!("taking back the warm-up move {mv}"), e))?;
            if !qchess_cantwell::game::same_state(&reference, game.state()) {
                return Err(CliError::failure(
                    "bench move: the state after the warm-up move and its undo differs",
                ));
            }
            Some(cold)
        }
        None => None,
    };
    game.set_snapshot_budget(snapshot_budget);

    // `--repeat` pairs: the bare operation on a warmed copy of the same state (dropped before
    // the move), then the move, then its undo; a pair sees the machine as it was for both.
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut gate_seconds_runs = Vec::with_capacity(args.repeat);
    let mut gate_peak_bytes = 0;
    let mut seconds_runs = Vec::with_capacity(args.repeat);
    let mut undo_seconds_runs = Vec::with_capacity(args.repeat);
    let (mut peak_bytes, mut peak_source) = (0, "state");
    let mut timed = None;
    for _ in 0..args.repeat {
        let (gate, gate_peak) = time_bare_op(kind, &game)?;
        gate_seconds_runs.push(gate);
        gate_peak_bytes = gate_peak_bytes.max(gate_peak);
        let (seconds, peak, source, outcome) = time_move(&mut game, kind, &mut rng)?;
        seconds_runs.push(seconds);
        (peak_bytes, peak_source) = (peak_bytes.max(peak), source);
        timed = Some(outcome);
        if kind.notation().is_some() {
            // Each timed move is taken back (by its undo record, or replayed when the budget
            // kept none), timed, so that the next starts from the same state.
            let t = Instant::now();
            game.undo()
                .map_err(|e| game_error("taking back a timed move", e))?;
            undo_seconds_runs.push(t.elapsed().as_secs_f64());
        }
    }
    let gate_seconds = qchess_sim::bench::median(&mut gate_seconds_runs.clone());
    let ratio_runs: Vec<f64> = seconds_runs
        .iter()
        .zip(&gate_seconds_runs)
        .map(|(move_s, gate_s)| move_s / gate_s.max(1e-12))
        .collect();
    let ratio = qchess_sim::bench::median(&mut ratio_runs.clone());
    let undo_seconds = (!undo_seconds_runs.is_empty())
        .then(|| qchess_sim::bench::median(&mut undo_seconds_runs.clone()));
    let (played, move_type, probability, legal_moves) = timed.expect("at least one run");
    let seconds = qchess_sim::bench::median(&mut seconds_runs.clone());
    Ok(MoveBench {
        states,
        seconds,
        gate_seconds,
        seconds_runs,
        gate_seconds_runs,
        ratio,
        ratio_runs,
        undo_seconds,
        undo_seconds_runs,
        cold_seconds,
        peak_bytes,
        peak_source,
        state_bytes,
        array_bytes,
        gate_peak_bytes,
        played,
        move_type,
        probability,
        legal_moves,
        fen,
        setup,
        setup_seconds,
    })
}

/// What one timed move reports: the move as recorded, its `MOVE_TYPE:VARIANT`, the measured
/// outcome's probability, the legal-move count (kind `legal`).
type Timed = (String, Option<String>, Option<f64>, Option<usize>);

/// One timed play of `kind`'s move (or of the legal-move list) on `game`: wall seconds, the
/// peak bytes and how they were measured, and what the move reports.
fn time_move<T: Amplitude>(
    game: &mut Game<State<T>>,
    kind: MoveKind,
    rng: &mut ChaCha8Rng,
) -> Result<(f64, usize, &'static str, Timed), CliError>
where
    State<T>: QuantumState,
{
    // What the game holds right before the timed move: after the warm-up that includes free
    // pass buffers (an undone projection's record), which the move may reuse.
    let held_bytes = game.state().bytes() + game.undo_bytes();
    let hwm = reset_peak_rss();
    let rss_before = status_bytes("VmRSS:").unwrap_or(0);
    let t = Instant::now();
    let timed = match kind.notation() {
        Some(mv) => {
            let record = game
                .apply(mv, rng)
                .map_err(|e| game_error(&format!("the timed move {mv}"), e))?;
            let move_type = match (record.move_type, record.variant) {
                (Some(m), Some(v)) => Some(format!("{}:{}", m.name(), v.name())),
                _ => None,
            };
            (record.notation, move_type, record.probability, None)
        }
        None => {
            // Within the memory budget, as the move is: state_too_large when a copy the
            // rules simulate a candidate on does not fit.
            let list = game
                .try_legal_moves()
                .map_err(|e| game_error("the legal-move list", e))?;
            (
                format!("{} moves", list.len()),
                None,
                None,
                Some(list.len()),
            )
        }
    };
    let seconds = t.elapsed().as_secs_f64();
    let (peak_bytes, peak_source) = match (hwm, status_bytes("VmHWM:")) {
        (true, Some(high)) => (held_bytes + high.saturating_sub(rss_before), "vmhwm"),
        _ => (
            held_bytes.max(game.state().bytes() + game.undo_bytes()),
            "state",
        ),
    };
    Ok((seconds, peak_bytes, peak_source, timed))
}

/// Runs `qchess bench move`.
pub fn run(args: &MoveArgs) -> Result<(), CliError> {
    qchess_sim::set_default_memory_budget(args.memory);
    let (result, threads) = crate::threads::with_threads(args.threads, || {
        if args.f32 {
            bench::<f32>(args)
        } else {
            bench::<f64>(args)
        }
    })?;
    let r = result?;
    let kind = args.kind.name();
    if args.json {
        let obj = serde_json::json!({
            "kind": kind,
            "states": r.states,
            "seconds": r.seconds,
            "gate_seconds": r.gate_seconds,
            "repeat": args.repeat,
            "seconds_runs": r.seconds_runs,
            "gate_seconds_runs": r.gate_seconds_runs,
            "ratio": r.ratio,
            "ratio_runs": r.ratio_runs,
            "undo_seconds": r.undo_seconds,
            "undo_seconds_runs": r.undo_seconds_runs,
            "cold_seconds": r.cold_seconds,
            "peak_bytes": r.peak_bytes,
            "state_bytes": r.state_bytes,
            "array_bytes": r.array_bytes,
            "gate_peak_bytes": r.gate_peak_bytes,
            "peak_source": r.peak_source,
            "threads": threads,
            "adaptive_threads": qchess_sim::adaptive_threads(),
            "pin_threads": qchess_sim::pin_threads(),
            "amplitude": if args.f32 { "f32" } else { "f64" },
            "move": r.played,
            "move_type": r.move_type,
            "probability": r.probability,
            "legal_moves": r.legal_moves,
            "fen": r.fen,
            "start_fen": args.kind.start_fen(),
            "setup": r.setup,
            "setup_seconds": r.setup_seconds,
        });
        println!("{obj}");
    } else {
        println!(
            "{kind} ({}) on {} states ({threads} threads): move {:.6} s, bare operation {:.6} s ({:.2}x, paired {:.2}x); peak {:.1} MiB, state {:.1} MiB (arrays {:.1} MiB); set-up {} moves in {:.2} s",
            r.played,
            r.states,
            r.seconds,
            r.gate_seconds,
            r.seconds / r.gate_seconds.max(1e-12),
            r.ratio,
            r.peak_bytes as f64 / (1 << 20) as f64,
            r.state_bytes as f64 / (1 << 20) as f64,
            r.array_bytes as f64 / (1 << 20) as f64,
            r.setup.len(),
            r.setup_seconds,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_timed_move_classifies_in_the_start_layer_after_the_first_split() {
        for kind in MoveKind::value_variants() {
            let Some(mv) = kind.notation() else {
                assert_eq!(*kind, MoveKind::Legal);
                continue;
            };
            let (game, setup) = setup_for::<State<f64>>(*kind, 1).expect("a tiny set-up");
            let expected: Vec<String> = match kind.opening() {
                [first] => vec![
                    first.to_string(),
                    qchess_cantwell::growth::GROWTH_BLACK_TEMPO.to_string(),
                ],
                // White's first split and Black's reply: White to move, no tempo.
                opening => opening.iter().map(|m| m.to_string()).collect(),
            };
            assert_eq!(setup, expected);
            assert!(game.classify(mv).is_ok(), "{mv}");
        }
    }
}
