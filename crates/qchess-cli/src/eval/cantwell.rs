//! `qchess eval` for `"variant": "cantwell"`. Owned by the qchess-cantwell work.
//!
//! Request fields:
//! * `"mode"`: `"game"` (default; QCAN moves through the full rules) or `"occupancy"` (layer 1
//!   only: long-form moves like `b1^a3c3:SPLIT_JUMP:BASIC`, pieces may be `"?"`).
//! * `"position"`: `"startpos"`, a FEN, `{"pieces": {"e2": "P", "d4": "?"}, "side_to_move":
//!   "w", "castling": "KQkq", "en_passant": "e3"}` (castling and e.p. default to `-`), or a
//!   serialised quantum position `{"fen": .., "amplitudes": [..]}` (game mode).
//! * `"moves"`: move strings, applied in order. A move that is refused is reported with
//!   `"applied": false` and its error, changes nothing, and the next move is still tried
//!   (a refused move in the game leaves the same player to move, as the rules say).
//! * `"seed"`: seed of the measurements (ChaCha8), default 0.
//! * `"distribution_limit"`: at most this many boards in `"distribution"` and basis states in
//!   `"amplitudes"`, the most probable first (default 1000), computed in memory proportional
//!   to the answer and asked of the memory budget first (`state_too_large` when it does not
//!   fit); `"all"`: every entry, written to the output as the state is visited (in the state's
//!   order, not by probability), never built in memory.
//! * `"arithmetic"`: `"f64"` (default), `"f32"` or `"exact"`: the amplitude type the game (or
//!   the occupancy state) runs on. One generic path drives `Game<S>` / `S`; what differs per
//!   arithmetic (the exact twins) is `cantwell/arith.rs`.
//!
//! Answer: `moves` (one `{"move", "applied", "outcome", "notation", "error"}` each; an applied
//! move adds `"probability"`, that of the outcome that happened, 1 when it measured nothing),
//! `probabilities` (square -> probability, squares with positive probability), `pieces`
//! (square -> letter), `distribution` ("a3 c3" -> probability), `state_size`,
//! `side_to_move`, `status`. With `"arithmetic": "exact"` every probability field `K` also
//! has its exact twin `K_exact` (docs/exact.md).

use super::frame::{Limit, MoveReport, ReasonCode, Refusal, Shape, side_letter};
use super::limits::AnswerBudget;
use super::{Answer, EvalError, Request};
use num_complex::Complex64;
use qchess_board::Square;
use qchess_board::attacks::between;
use qchess_cantwell::circuit::{self, OccupancyMove};
use qchess_cantwell::game::OCCUPIED_EPS;
use qchess_cantwell::position::{AmplitudeEntry, board_squares};
use qchess_cantwell::{ClassicalLayer, Game, GameError, Position};
use qchess_sim::{Exact, Key, QuantumState, State};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

mod arith;
use arith::{Arith, Twins};

/// Evaluates one request object of this variant; the frame adds `"ok": true`.
pub fn eval(request: Request) -> Result<Answer, EvalError> {
    let mode = request.choice("mode", &["game", "occupancy"])?;
    let seed = request.seed()?;
    let limit = request.distribution_limit()?;
    let moves = request.moves()?;
    let legal_moves = request.flag("legal_moves")?;
    let amplitudes = request.flag("amplitudes")?;
    let position = request.get("position").unwrap_or(&Value::Null);
    let arithmetic = request.choice("arithmetic", &["f64", "f32", "exact"])?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shown = Shown { limit, amplitudes };
    if mode != "game" && legal_moves {
        return Err(EvalError::new(
            "request",
            "\"legal_moves\" needs game mode: occupancy mode knows no piece types",
        )
        .at("legal_moves"));
    }
    match arithmetic {
        "f32" => eval_on::<State<f32>>(mode, position, &moves, &mut rng, shown, legal_moves),
        "exact" => eval_on::<State<Exact>>(mode, position, &moves, &mut rng, shown, legal_moves),
        _ => eval_on::<State<f64>>(mode, position, &moves, &mut rng, shown, legal_moves),
    }
}

/// The request on the simulator backend `S`: the one path every arithmetic shares.
fn eval_on<S: Arith>(
    mode: &str,
    position: &Value,
    moves: &[String],
    rng: &mut ChaCha8Rng,
    shown: Shown,
    legal_moves: bool,
) -> Result<Answer, EvalError> {
    if mode == "game" {
        eval_game::<S>(position, moves, rng, shown, legal_moves)
    } else {
        eval_occupancy::<S>(position, moves, rng, shown)
    }
}

/// A move report with the probability of the outcome that happened (`probability`: the
/// measurement's, `None` when the move measured nothing, then 1) and its exact twin when the
/// arithmetic gives one.
fn with_probability(
    report: MoveReport,
    probability: Option<f64>,
    exact: Option<String>,
) -> MoveReport {
    let report = report.with("probability", json!(probability.unwrap_or(1.0)));
    match exact {
        Some(e) => report.with("probability_exact", e),
        None => report,
    }
}

/// What the read-outs of the final state show.
#[derive(Clone, Copy)]
struct Shown {
    /// Bound of `distribution` and `amplitudes`.
    limit: Limit,
    /// Whether `amplitudes` is asked for.
    amplitudes: bool,
}

/// The refusal of a move the game rejected, with its stable reason code.
fn refusal(e: &GameError) -> Refusal {
    let code = match e {
        GameError::Notation(_) => ReasonCode::ParseError,
        GameError::Illegal { reason, .. } => illegal_code(reason),
        GameError::NoEffect { .. } => ReasonCode::NoEffect,
        GameError::ImpossibleOutcome { .. } => ReasonCode::OutcomeImpossible,
        GameError::GameOver(_) => ReasonCode::GameOver,
        GameError::Simulation(_) | GameError::StateTooLarge { .. } => ReasonCode::ResourceLimit,
        GameError::OptionOff(_) => ReasonCode::ForbiddenByRulesVariant,
        _ => ReasonCode::Other,
    };
    let r = Refusal::new(e.kind(), code, e.to_string());
    match e.position() {
        Some(p) => r.at_column(p),
        None => r,
    }
}

/// [`refusal`], with a move that would change nothing (Definition 2) told apart by its cause
/// where the position shows it: a target holding, for certain, a piece of the mover's side,
/// or a square on the path occupied for certain.
fn refusal_in<S: QuantumState>(game: &Game<S>, mv: &str, e: &GameError) -> Refusal {
    let r = refusal(e);
    if !matches!(e, GameError::NoEffect { .. }) {
        return r;
    }
    let (Some(from), Some(to)) = (
        mv.get(0..2).and_then(|s| s.parse::<Square>().ok()),
        mv.get(2..4).and_then(|s| s.parse::<Square>().ok()),
    ) else {
        return r;
    };
    let certain = |sq: Square| game.probability(sq) >= 1.0 - 1e-12;
    let side = game.side_to_move();
    let code = if game.piece_at(to).is_some_and(|p| p.color == side) && certain(to) {
        ReasonCode::TargetOccupiedByOwn
    } else if between(from, to).iter().any(certain) {
        ReasonCode::PathBlocked
    } else {
        return r;
    };
    Refusal {
        reason_code: code,
        ..r
    }
}

/// The code of an illegal move, from the possibility check's reason (qchess-cantwell's
/// `possibility::classify` words each cause in one fixed way).
fn illegal_code(reason: &str) -> ReasonCode {
    if reason.contains("the source must hold a piece of the side to move") {
        if reason.contains("holds nothing") {
            ReasonCode::NoPiece
        } else {
            ReasonCode::WrongColour
        }
    } else {
        ReasonCode::NotAMoveOfThisPiece
    }
}

/// The FEN of a `{"pieces": .., "side_to_move": ..}` object; `unknown` collects the `?`
/// squares (occupied, type unknown), which get a placeholder letter here.
fn fen_of_pieces(obj: &Map<String, Value>, unknown: &mut u64) -> Result<String, EvalError> {
    let Some(Value::Object(pieces)) = obj.get("pieces") else {
        return Err(EvalError::new(
            "position",
            "a position object needs \"pieces\": {\"e2\": \"P\", ...}",
        )
        .at("position.pieces"));
    };
    let mut letters = [None::<char>; 64];
    for (name, v) in pieces {
        let at = format!("position.pieces.{name}");
        let sq: Square = name
            .parse()
            .map_err(|e| EvalError::new("position", format!("{e}")).at(at.clone()))?;
        let letter = v
            .as_str()
            .filter(|s| s.chars().count() == 1)
            .and_then(|s| s.chars().next())
            .ok_or_else(|| {
                EvalError::new(
                    "position",
                    "a piece is one FEN letter (PNBRQK, pnbrqk) or \"?\"",
                )
                .at(at.clone())
            })?;
        if letter == '?' {
            *unknown |= 1u64 << sq.index();
            letters[sq.index() as usize] = Some('P');
        } else if "PNBRQKpnbrqk".contains(letter) {
            letters[sq.index() as usize] = Some(letter);
        } else {
            return Err(EvalError::new(
                "position",
                format!("{letter:?} is not a FEN piece letter or \"?\""),
            )
            .at(at));
        }
    }
    let side = match obj.get("side_to_move") {
        None => "w",
        Some(Value::String(s)) if s == "w" || s == "b" => s.as_str(),
        Some(_) => {
            return Err(
                EvalError::new("position", "\"side_to_move\" must be \"w\" or \"b\"")
                    .at("position.side_to_move"),
            );
        }
    };
    let field = |key: &str| -> Result<String, EvalError> {
        match obj.get(key) {
            None => Ok("-".into()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(
                EvalError::new("position", format!("\"{key}\" must be a string"))
                    .at(format!("position.{key}")),
            ),
        }
    };
    let mut board = String::new();
    for rank in (0..8u8).rev() {
        let mut empty = 0;
        for file in 0..8u8 {
            match letters[Square::new(file, rank).index() as usize] {
                None => empty += 1,
                Some(c) => {
                    if empty > 0 {
                        board.push_str(&empty.to_string());
                        empty = 0;
                    }
                    board.push(c);
                }
            }
        }
        if empty > 0 {
            board.push_str(&empty.to_string());
        }
        if rank > 0 {
            board.push('/');
        }
    }
    Ok(format!(
        "{board} {side} {} {} 0 1",
        field("castling")?,
        field("en_passant")?
    ))
}

fn load_game<S: Arith>(position: &Value) -> Result<Game<S>, EvalError> {
    match position {
        Value::Null => Ok(Game::new_backend()),
        Value::String(fen) => Game::from_fen_backend(fen).map_err(|e| {
            EvalError::new("fen", e.to_string())
                .at(json!({"path": "position", "column": e.position()}))
        }),
        Value::Object(obj) if obj.contains_key("amplitudes") => {
            let pos: Position = serde_json::from_value(position.clone()).map_err(|e| {
                EvalError::new("position", format!("bad serialised position: {e}")).at("position")
            })?;
            // Exact arithmetic reads the exact amplitudes when the position has them (an exact
            // answer's position does); the floats beside them are for the float modes.
            if let Some(state) = obj
                .get("amplitudes_exact")
                .and_then(S::from_exact_amplitudes)
            {
                let layer = ClassicalLayer::from_fen(&pos.fen)
                    .map_err(|e| EvalError::new("position", e.to_string()).at("position.fen"))?;
                return Game::from_state_parts(state?, layer, pos.fifty_move_reference)
                    .map_err(position_error);
            }
            Game::from_position_backend(&pos).map_err(position_error)
        }
        Value::Object(obj) => {
            let mut unknown = 0u64;
            let fen = fen_of_pieces(obj, &mut unknown)?;
            if unknown != 0 {
                return Err(EvalError::new(
                    "position",
                    format!(
                        "squares {} are \"?\" (type unknown): game mode needs every piece's type; use \"mode\": \"occupancy\"",
                        board_squares(unknown)
                    ),
                )
                .at("position.pieces"));
            }
            Game::from_fen_backend(&fen)
                .map_err(|e| EvalError::new("position", e.to_string()).at("position"))
        }
        _ => Err(EvalError::new(
            "position",
            "\"position\" must be \"startpos\", a FEN or an object",
        )
        .at("position")),
    }
}

fn eval_game<S: Arith>(
    position: &Value,
    moves: &[String],
    rng: &mut ChaCha8Rng,
    shown: Shown,
    legal_moves: bool,
) -> Result<Answer, EvalError> {
    let mut game = load_game::<S>(position)?;
    let mut reports = Vec::with_capacity(moves.len());
    for mv in moves {
        let before = game.state().norm_before();
        // `e2 e4`, `e2-e4`, `e7e8=q` read as `qchess play` reads them (echoed as sent).
        let text = crate::plain_move::rewrite(mv, crate::plain_move::cantwell_text);
        let report = match game.apply(&text, rng) {
            Ok(rec) => {
                let exact = game.state().outcome_exact(before.as_ref(), rec.probability);
                let report =
                    MoveReport::applied(mv, json!(rec.measured.map(u8::from)), json!(rec.notation));
                with_probability(report, rec.probability, exact)
            }
            Err(e) => MoveReport::refused(mv, &refusal_in(&game, mv, &e)),
        };
        reports.push(report.into_value());
    }
    let mut out = Answer::new();
    let mut pieces = Map::new();
    for sq in Square::ALL {
        if let Some(p) = game.piece_at(sq) {
            pieces.insert(sq.to_string(), Value::String(p.fen_char().to_string()));
        }
    }
    out.insert("moves", reports);
    out.insert("pieces", pieces);
    out.insert("side_to_move", side_letter(game.side_to_move()));
    out.insert("status", game.status().name());
    out.insert("fen", game.fen());
    out.insert("history", json!(game.history_notation()));
    // What the read-outs may hold until the answer is written (issue 10, Deliver 5).
    let mut budget = AnswerBudget::new(game.state().memory_budget(), game.state().bytes());
    // Budgeted (issue 10, Deliver 5): the copies the rules may simulate a candidate on are
    // asked of the game's memory budget; one that does not fit is this line's error.
    let legal = if legal_moves {
        Some(game.try_legal_moves().map_err(legal_moves_error)?)
    } else {
        None
    };
    // The position object a request's "position" takes back, bounded like the distribution
    // and written entry by entry from the state when the answer is written (never built).
    let size = game.state_size();
    let fits = match shown.limit {
        Limit::At(n) => size <= n,
        Limit::All => true,
    };
    // An exact state is kept unnormalised: its floats are scaled to norm 1.
    let scale = float_scale(game.state());
    // Exact arithmetic adds the exact amplitudes, which a request's position reads back.
    let exact = if fits {
        game.state().position_exact(&mut budget)?
    } else {
        None
    };
    let held = Rc::new(Held::Game(Box::new(game)));
    if fits {
        let owner = Rc::clone(&held);
        out.stream("position", move |w| match owner.as_ref() {
            Held::Game(game) => game.write_position_json_with(
                scale,
                &mut |w| w.write_all(exact.as_deref().unwrap_or_default()),
                w,
            ),
            Held::State(_) => Ok(()),
        });
    } else {
        out.insert("position", Value::Null);
    }
    if let Some(list) = legal {
        out.insert("legal_moves", json!(list));
    }
    readouts(&mut out, held, shown, &mut budget)?;
    Ok(out)
}

/// The error of a `"legal_moves"` list the game could not make: `state_too_large` (bytes
/// asked and available) when a copy of the state the rules simulate a candidate on does not
/// fit the memory budget.
fn legal_moves_error(e: GameError) -> EvalError {
    let message = match &e {
        GameError::StateTooLarge { asked, available } => format!(
            "state too large: deciding the legal moves needs {asked} bytes, the memory budget has {available} left (a larger --memory)"
        ),
        e => e.to_string(),
    };
    EvalError::new(e.kind(), message).at("legal_moves")
}

/// What owns the state the read-outs show (a game, or a bare state in occupancy mode); the
/// read-outs written incrementally keep it alive until the answer is written.
pub(super) enum Held<S: QuantumState> {
    /// Game mode.
    Game(Box<Game<S>>),
    /// Occupancy mode.
    State(S),
}

impl<S: QuantumState> Held<S> {
    /// The state the read-outs show.
    pub(super) fn state(&self) -> &S {
        match self {
            Held::Game(g) => g.state(),
            Held::State(s) => s,
        }
    }
}

/// The factor that brings the float amplitudes of `state` to norm 1: 1 for the floats (kept
/// as the simulator gives them), `1/sqrt(N)` for an exact state (kept unnormalised).
fn float_scale<S: QuantumState>(state: &S) -> f64 {
    let n = state.norm_sqr();
    if (n - 1.0).abs() <= 1e-12 || n.is_nan() || n <= 0.0 {
        1.0
    } else {
        1.0 / n.sqrt()
    }
}

/// One entry of a running top-k: probability, key (ties: the smaller key first), payload.
/// Ordered so that "less" is "shown first": a max-heap's top is the worst entry kept.
struct Ranked<K, V>(f64, K, V);

impl<K: Ord, V> Ord for Ranked<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .0
            .total_cmp(&self.0)
            .then_with(|| self.1.cmp(&other.1))
    }
}
impl<K: Ord, V> PartialOrd for Ranked<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: Ord, V> PartialEq for Ranked<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<K: Ord, V> Eq for Ranked<K, V> {}

/// The `k` most probable of the entries `visit` gives (most probable first, ties by the
/// smaller key) and how many it gave. Memory: at most `min(k, bound)` entries (`bound`: how
/// many entries there can be), asked of `budget` for the field `at` and reserved fallibly
/// before the visit; nothing else grows with the state.
fn top_k<K: Ord, V>(
    k: usize,
    bound: usize,
    budget: &mut AnswerBudget,
    at: &str,
    visit: impl FnOnce(&mut dyn FnMut(f64, K, V)),
) -> Result<(Vec<Ranked<K, V>>, usize), EvalError> {
    let k = k.min(bound);
    let mut buf = Vec::new();
    budget.reserve(&mut buf, k, at)?;
    let mut heap = BinaryHeap::from(buf);
    let mut total = 0usize;
    visit(&mut |p, key, v| {
        total += 1;
        let e = Ranked(p, key, v);
        if heap.len() < k {
            heap.push(e);
        } else if let Some(mut worst) = heap.peek_mut() {
            if e < *worst {
                *worst = e;
            }
        }
    });
    Ok((heap.into_sorted_vec(), total))
}

/// The number of distinct boards of `state` (ancillas summed over): its size when it has no
/// capture ancilla (one sector, every key a board), else one visit that keeps nothing.
fn board_count<S: QuantumState>(state: &S) -> usize {
    if state.ancilla_count() == 0 {
        return state.len();
    }
    let mut n = 0usize;
    state.for_each_board(&mut |_, _| n += 1);
    n
}

/// One basis state with its amplitude, as a serialised position writes it:
/// `{"board": "a3 e1", "ancillas": "0", "re": .., "im": ..}`.
fn amplitude_entry(k: Key, a: Complex64) -> AmplitudeEntry {
    AmplitudeEntry {
        board: board_squares(k.board),
        ancillas: format!("{:x}", k.ancillas),
        re: a.re,
        im: a.im,
    }
}

/// `probabilities`, `state_size`, `distribution` (bounded) and, when asked, `amplitudes`
/// (bounded alike); then the arithmetic's exact twins of the same entries. A bounded
/// listing keeps its top entries (asked of `budget`, reserved fallibly) and is written as
/// JSON entry by entry when the answer is written; `"all"` keeps nothing and writes each
/// entry as the state is visited.
fn readouts<S: Arith>(
    out: &mut Answer,
    owner: Rc<Held<S>>,
    shown: Shown,
    budget: &mut AnswerBudget,
) -> Result<(), EvalError> {
    let state = owner.state();
    let probs = state.qubit_probabilities();
    let mut p = Map::new();
    let mut squares = Vec::new();
    for sq in Square::ALL {
        let v = probs[sq.index() as usize];
        if v > OCCUPIED_EPS {
            p.insert(sq.to_string(), json!(v));
            squares.push(sq);
        }
    }
    out.insert("probabilities", p);
    out.insert("state_size", state.len());
    // The distribution in memory proportional to its answer (issue 10, Deliver 6).
    let boards: Option<Vec<u64>> = match shown.limit {
        Limit::At(n) => {
            let (top, total) = top_k(n, state.len(), budget, "distribution_limit", |f| {
                state.for_each_board(&mut |b, p| f(p, b, ()))
            })?;
            let mut boards = Vec::new();
            budget.reserve(&mut boards, top.len(), "distribution_limit")?;
            boards.extend(top.iter().map(|e| e.1));
            out.listing("distribution", total, top.len(), Shape::Object, move |e| {
                for Ranked(p, b, ()) in &top {
                    e.entry(&board_squares(*b), p);
                }
            });
            Some(boards)
        }
        Limit::All => {
            let total = board_count(state);
            let owner = Rc::clone(&owner);
            out.listing("distribution", total, total, Shape::Object, move |e| {
                owner
                    .state()
                    .for_each_board(&mut |b, p| e.entry(&board_squares(b), &p));
            });
            None
        }
    };
    if !shown.amplitudes {
        return S::twins(
            &owner,
            out,
            Twins {
                squares: &squares,
                boards: boards.as_deref(),
                amplitudes: None,
            },
            budget,
        );
    }
    let total = state.len();
    let scale = float_scale(state);
    let keys = match shown.limit {
        Limit::At(n) => {
            let (top, _) = top_k(n, total, budget, "amplitudes", |f| {
                state.for_each_entry_f64(&mut |k, a| f(a.norm_sqr(), k, a))
            })?;
            let mut keys = Vec::new();
            budget.reserve(&mut keys, top.len(), "amplitudes")?;
            keys.extend(top.iter().map(|e| e.1));
            out.listing("amplitudes", total, top.len(), Shape::Array, move |e| {
                for Ranked(_, k, a) in &top {
                    e.item(&amplitude_entry(*k, *a * scale));
                }
            });
            Some(keys)
        }
        Limit::All => {
            let owner = Rc::clone(&owner);
            out.listing("amplitudes", total, total, Shape::Array, move |e| {
                owner
                    .state()
                    .for_each_entry_f64(&mut |k, a| e.item(&amplitude_entry(k, a * scale)));
            });
            None
        }
    };
    S::twins(
        &owner,
        out,
        Twins {
            squares: &squares,
            boards: boards.as_deref(),
            amplitudes: Some(keys.as_deref()),
        },
        budget,
    )
}

/// A serialised position the game could not load: kind `position`, or `state_too_large`
/// when its state (or the game's start copy of it) does not fit the memory budget.
fn position_error(e: GameError) -> EvalError {
    let kind = match e {
        GameError::StateTooLarge { .. } => "state_too_large",
        _ => "position",
    };
    EvalError::new(kind, e.to_string()).at("position")
}

/// The loaded game's state for occupancy mode: a copy made within the memory budget
/// (issue 10, Deliver 5), `state_too_large` at `position` when it does not fit.
fn occupancy_copy<S: Arith>(game: &Game<S>) -> Result<S, EvalError> {
    game.state().try_clone(0).map_err(|e| {
        let kind = match e {
            qchess_sim::SimError::StateTooLarge { .. } => "state_too_large",
            _ => "simulation",
        };
        EvalError::new(kind, format!("copying the position's state: {e}")).at("position")
    })
}

fn eval_occupancy<S: Arith>(
    position: &Value,
    moves: &[String],
    rng: &mut ChaCha8Rng,
    shown: Shown,
) -> Result<Answer, EvalError> {
    let (mut state, mut side): (S, _) = match position {
        Value::Object(obj) if obj.contains_key("amplitudes") => {
            let game = load_game::<S>(position)?;
            (occupancy_copy(&game)?, game.side_to_move())
        }
        Value::Object(obj) => {
            let mut unknown = 0u64;
            let fen = fen_of_pieces(obj, &mut unknown)?;
            let game = Game::from_fen(&fen)
                .map_err(|e| EvalError::new("position", e.to_string()).at("position"))?;
            (
                S::classical(game.pieces().occupied_mask()),
                game.side_to_move(),
            )
        }
        _ => {
            let game = load_game::<S>(position)?;
            (occupancy_copy(&game)?, game.side_to_move())
        }
    };
    let mut reports = Vec::with_capacity(moves.len());
    for mv in moves {
        let report = match mv.parse::<OccupancyMove>() {
            Err(e) => {
                let r = Refusal::new("notation", ReasonCode::ParseError, e.to_string());
                let r = match &e {
                    circuit::CircuitError::Parse { position, .. } => r.at_column(*position),
                    _ => r,
                };
                MoveReport::refused(mv, &r)
            }
            Ok(om) => match (state.norm_before(), circuit::apply_on(&mut state, &om, rng)) {
                (before, Ok(a)) => {
                    side = side.opposite();
                    let exact = state.outcome_exact(before.as_ref(), a.probability);
                    let report =
                        MoveReport::applied(mv, json!(a.measured.map(u8::from)), Value::Null);
                    with_probability(report, a.probability, exact)
                }
                (_, Err(e)) => {
                    let (kind, code) = match e {
                        circuit::CircuitError::ImpossibleOutcome { .. }
                        | circuit::CircuitError::NoMeasurement => {
                            ("impossible_outcome", ReasonCode::OutcomeImpossible)
                        }
                        circuit::CircuitError::Sim(qchess_sim::SimError::StateTooLarge {
                            ..
                        }) => ("state_too_large", ReasonCode::ResourceLimit),
                        circuit::CircuitError::Sim(_) => ("simulation", ReasonCode::ResourceLimit),
                        _ => ("illegal_move", ReasonCode::NotAMoveOfThisPiece),
                    };
                    MoveReport::refused(mv, &Refusal::new(kind, code, e.to_string()))
                }
            },
        };
        // Occupancy reports never had a notation.
        reports.push(report.without("notation").into_value());
    }
    let mut out = Answer::new();
    // Occupancy mode tracks no piece types: every square with positive probability is "?".
    let mut pieces = Map::new();
    let probs = state.qubit_probabilities();
    for sq in Square::ALL {
        if probs[sq.index() as usize] > OCCUPIED_EPS {
            pieces.insert(sq.to_string(), Value::String("?".into()));
        }
    }
    out.insert("moves", reports);
    out.insert("pieces", pieces);
    out.insert("side_to_move", side_letter(side));
    out.insert("status", "unknown");
    let mut budget = AnswerBudget::new(state.memory_budget(), state.bytes());
    readouts(&mut out, Rc::new(Held::State(state)), shown, &mut budget)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::eval_one as run;
    use super::super::frame::ReasonCode;
    use qchess_cantwell::GameError;

    #[test]
    fn refusals_the_eval_cannot_provoke_still_have_codes() {
        // The simulator's refusals (size, memory) and anything unnamed.
        let r = super::refusal(&GameError::Simulation("state cap".into()));
        assert_eq!(
            (r.kind.as_str(), r.reason_code),
            ("simulation", ReasonCode::ResourceLimit)
        );
        assert_eq!(r.to_json()["reason_code"], "resource_limit");
        let r = super::refusal(&GameError::NothingToUndo);
        assert_eq!(r.reason_code, ReasonCode::Other);
        assert_eq!(r.to_json()["reason_code"], "other");
        let r = super::refusal(&GameError::OptionOff("x"));
        assert_eq!(r.reason_code, ReasonCode::ForbiddenByRulesVariant);
    }

    #[test]
    fn game_mode_split_and_readouts() {
        let v = run(
            r#"{"variant": "cantwell", "position": "startpos", "moves": ["b1^a3c3", "e7e5", "zz", "a3b5"], "seed": 7}"#,
        );
        assert_eq!(v["ok"], true, "{v}");
        assert!((v["probabilities"]["b5"].as_f64().unwrap() - 0.5).abs() < 1e-12);
        assert!(v["probabilities"].get("a3").is_none());
        assert_eq!(v["pieces"]["c3"], "N");
        assert_eq!(v["moves"][0]["applied"], true);
        assert_eq!(v["moves"][2]["applied"], false);
        assert_eq!(v["moves"][2]["error"]["kind"], "notation");
        assert_eq!(v["moves"][2]["error"]["at"]["column"], 0);
        assert_eq!(v["moves"][3]["applied"], true);
        assert_eq!(v["side_to_move"], "b");
        assert_eq!(v["status"], "ongoing");
        assert_eq!(v["state_size"], 2);
        let dist = v["distribution"].as_object().unwrap();
        assert_eq!(dist.len(), 2);
        assert!(dist.keys().all(|k| k.contains("e5") && k.contains("e1")));
    }

    #[test]
    fn occupancy_mode_with_unknown_types() {
        let v = run(
            r#"{"variant": "cantwell", "mode": "occupancy", "position": {"pieces": {"b1": "?", "a1": "?"}, "side_to_move": "w"}, "moves": ["b1^a3c3:SPLIT_JUMP:BASIC", "a1a4:SLIDE:BASIC"]}"#,
        );
        assert_eq!(v["ok"], true, "{v}");
        assert!((v["probabilities"]["a3"].as_f64().unwrap() - 0.5).abs() < 1e-12);
        // The rook's path a2-a3 is half blocked by the knight: it slides in half the branches.
        assert!((v["probabilities"]["a4"].as_f64().unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(v["pieces"]["a4"], "?");
        let g = run(r#"{"variant": "cantwell", "position": {"pieces": {"d4": "?", "e1": "K"}}}"#);
        assert_eq!(g["ok"], false);
        assert_eq!(g["error"]["kind"], "position");
    }

    #[test]
    fn bad_requests() {
        let v = run(r#"{"variant": "cantwell", "position": "rnbqkbnr/8 w - - 0 1"}"#);
        assert_eq!(v["ok"], false);
        assert_eq!(v["error"]["kind"], "fen");
        let v = run(r#"{"variant": "cantwell", "moves": [3]}"#);
        assert_eq!(v["error"]["at"], "moves[0]");
        let v = run(r#"{"variant": "cantwell", "mode": "quantum"}"#);
        assert_eq!(v["error"]["at"], "mode");
    }
}
