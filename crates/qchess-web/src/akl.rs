//! Akl-style quantum chess behind the API. Everything sent to a player comes from that
//! player's [`PlayerView`] (the Akl crate's view API) or from what both players saw happen
//! (collapses, the turns played): the true position, with its secret secondary types, never
//! leaves the server while the game goes on.
//!
//! Moves: a square alone (`"g1"`) touches that piece (a piece in superposition collapses at
//! random, drawn by the server); a UCI move (`"g1f3"`, `"e7e8q"`) or a destination (`"-> f3"`)
//! moves the touched piece. A UCI move of an untouched classical piece touches and moves it in
//! one request. A player never names a collapse: the entry forms of `qchess eval`
//! (`"<N|g1> -> f3"`, or `"g1 -> f3"`, whose collapse is inferred from the move) are refused,
//! since they would let a player choose the outcome of a random collapse.

use crate::error::ApiError;
use qchess_akl::{
    AklError, AklMove, Game, GameRecord, GameStatus, PieceState, PlayerView, RandomMover, Rules,
    Style, TouchOutcome, TouchResult, TurnEntry, Visibility, parse_destination,
};
use qchess_board::{Color, Square};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

/// A rule crate error as an API error, with the crate's (and `qchess eval`'s) kinds.
pub fn akl_error(e: &AklError) -> ApiError {
    let err = ApiError::rules(e.kind(), e.to_string());
    match e {
        AklError::Notation { at, .. } => err.at(json!({"column": at})),
        _ => err,
    }
}

/// The rule options named in `rules`: `revealed` (default) or `own-pairs`.
pub fn rules_of(list: &[String]) -> Result<Rules, ApiError> {
    let mut rules = Rules::default();
    for r in list.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        rules.visibility = match r {
            "revealed" => Visibility::Revealed,
            "own-pairs" => Visibility::OwnPairs,
            other => {
                return Err(ApiError::request(
                    format!("unknown akl rule option {other:?}: expected revealed or own-pairs"),
                    "rules",
                ));
            }
        };
    }
    Ok(rules)
}

/// A new game: the standard start with secondary types drawn from `rng`.
pub fn create(
    rules: &[String],
    board: Option<&str>,
    rng: &mut ChaCha8Rng,
) -> Result<Game, ApiError> {
    if let Some(b) = board
        && !b.trim().eq_ignore_ascii_case("8x8")
    {
        return Err(ApiError::request(
            format!("board {b:?}: Akl-style quantum chess is played on the 8x8 board only"),
            "board",
        ));
    }
    let rules = rules_of(rules)?;
    let start = qchess_akl::AklPosition::startpos_random(rng);
    Ok(Game::with_rules(start, rules))
}

/// Replays a game record (its text form).
pub fn import(text: &str) -> Result<Game, ApiError> {
    let record = GameRecord::parse(text).map_err(|e| akl_error(&e).at("record"))?;
    record.replay().map_err(|e| akl_error(&e).at("record"))
}

/// The record as far as it may be published: the turns only while the game goes on (the start
/// position holds the secret secondary types), the whole record once it is over.
pub fn record(game: &Game) -> (String, bool) {
    if game.status() == GameStatus::Ongoing {
        (game.record().entries_text(Style::Ascii), false)
    } else {
        (game.record().to_text(Style::Ascii), true)
    }
}

/// What `viewer` may know, and only that: built from [`PlayerView`] alone.
pub fn state(view: &PlayerView) -> Map<String, Value> {
    let mut pieces = Map::new();
    for p in &view.pieces {
        let (quantum, current) = match p.state {
            PieceState::Quantum => (true, Value::Null),
            PieceState::Classical(k) => (false, Value::String(crate::wire::akl_letter(k))),
        };
        let pair = p.pair.map(|pair| {
            vec![
                crate::wire::akl_letter(pair.primary),
                crate::wire::akl_letter(pair.secondary),
            ]
        });
        pieces.insert(
            p.square.to_string(),
            json!({"color": p.color.fen_char().to_string(), "quantum": quantum, "type": current,
                   "known": crate::wire::akl_letters(p.known), "pair": pair}),
        );
    }
    let mut out = Map::new();
    out.insert("viewer".into(), json!(view.viewer.fen_char().to_string()));
    out.insert("pieces".into(), Value::Object(pieces));
    out.insert(
        "pending".into(),
        match &view.pending {
            None => Value::Null,
            Some((sq, kind, moves)) => json!({
                "square": sq.to_string(),
                "type": crate::wire::akl_letter(*kind),
                "legal_moves": moves.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            }),
        },
    );
    out.insert(
        "side_to_move".into(),
        json!(view.side_to_move.fen_char().to_string()),
    );
    out.insert("status".into(), json!(view.status.name()));
    out.insert(
        "reason".into(),
        view.status.reason().map_or(Value::Null, Value::from),
    );
    out.insert("quiet_plies".into(), json!(view.quiet_plies));
    out.insert(
        "captured".into(),
        json!(
            view.captured
                .iter()
                .map(|(c, k)| format!("{}{}", c.fen_char(), crate::wire::akl_letter(*k)))
                .collect::<Vec<_>>()
        ),
    );
    out.insert(
        "history".into(),
        json!(
            view.history
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        ),
    );
    out
}

fn touch_json(game: &Game, t: &TouchOutcome) -> Value {
    match &t.result {
        TouchResult::MustMove(moves) => json!({
            "turn": "awaiting_move",
            "from": t.square.to_string(),
            "collapse": t.collapsed.map(crate::wire::akl_letter),
            "type": crate::wire::akl_letter(t.kind),
            "legal_moves": moves.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        }),
        _ => game
            .history()
            .last()
            .map_or(Value::Null, crate::wire::akl_turn),
    }
}

fn report(text: &str, outcome: Value, game: &Game) -> Value {
    let notation = match outcome.get("turn").and_then(Value::as_str) {
        Some("awaiting_move") | None => Value::Null,
        Some(_) => game
            .history()
            .last()
            .map_or(Value::Null, |e| json!(e.to_string())),
    };
    json!({"move": text, "applied": true, "outcome": outcome, "notation": notation, "error": Value::Null})
}

/// Plays one request's move for the side to move (see the module text for the forms).
pub fn apply(game: &mut Game, text: &str, rng: &mut ChaCha8Rng) -> Result<Value, ApiError> {
    let t = text.trim();
    if t.len() == 2
        && let Ok(sq) = t.parse::<Square>()
    {
        let out = game.touch(sq, rng).map_err(|e| akl_error(&e))?;
        let outcome = touch_json(game, &out);
        return Ok(report(text, outcome, game));
    }
    let mv: AklMove = if t.starts_with("->") || t.starts_with('→') || t.starts_with('|') {
        let dest = parse_destination(t).map_err(|e| akl_error(&e))?;
        let (from, _, _) = game
            .pending_touch()
            .ok_or_else(|| akl_error(&AklError::NothingTouched))?;
        AklMove {
            from,
            to: dest.to,
            promotion: dest.promotion,
        }
    } else {
        match t.parse::<AklMove>() {
            Ok(mv) => mv,
            Err(e) => {
                if t.parse::<TurnEntry>().is_ok() {
                    return Err(ApiError::request(
                        "a player never names a collapse: touch the piece (send its square, \"g1\"), then send its move (\"g1f3\" or \"-> f3\")",
                        "move",
                    ));
                }
                return Err(akl_error(&e));
            }
        }
    };
    let pending = game.pending_touch().map(|(sq, _, _)| sq);
    if pending.is_none() {
        // Touch and move at once: only for a classical piece, whose touch draws nothing.
        let quantum = game
            .position()
            .piece(mv.from)
            .is_some_and(|p| p.state == PieceState::Quantum);
        if quantum {
            return Err(ApiError::rules(
                "illegal_move",
                format!(
                    "the piece on {} is in superposition: touch it first (send \"{}\"), its collapse decides how it may move",
                    mv.from, mv.from
                ),
            ));
        }
        let mut trial = game.clone();
        trial.touch(mv.from, rng).map_err(|e| akl_error(&e))?;
        let entry = trial.play(mv, rng).map_err(|e| akl_error(&e))?;
        *game = trial;
        return Ok(report(text, crate::wire::akl_turn(&entry), game));
    }
    let entry = game.play(mv, rng).map_err(|e| akl_error(&e))?;
    Ok(report(text, crate::wire::akl_turn(&entry), game))
}

/// The random mover plays one whole turn for the side to move.
pub fn random(game: &mut Game, rng: &mut ChaCha8Rng) -> Result<Option<Value>, ApiError> {
    if game.status() != GameStatus::Ongoing {
        return Ok(None);
    }
    let before = game.history().len();
    RandomMover
        .play_turn(game, rng)
        .map_err(|e| akl_error(&e))?;
    Ok(game.history().get(before).map(|e| {
        json!({"move": e.to_string(), "applied": true, "outcome": crate::wire::akl_turn(e),
               "notation": e.to_string(), "error": Value::Null})
    }))
}

/// The engine plays one whole turn for the side to move: it touches a piece chosen from its
/// own view (the types it has not seen drawn from its seed, never the true ones), the server
/// draws the collapse, and the engine then moves the piece.
pub fn engine(
    game: &mut Game,
    engine: &mut qchess_engine::Engine,
    rng: &mut ChaCha8Rng,
) -> Result<Option<Value>, ApiError> {
    use qchess_engine::{AklChoice, EngineError};
    if game.status() != GameStatus::Ongoing {
        return Ok(None);
    }
    let before = game.history().len();
    let limits = crate::session::engine_limits();
    let square = match engine.search(&*game, &limits) {
        Ok(r) => match r.best {
            AklChoice::Touch(sq) => sq,
            AklChoice::Move(m) => m.from,
        },
        Err(EngineError::NoMove) => return Ok(None),
        Err(e) => return Err(ApiError::rules("engine", e.to_string())),
    };
    let touch = game.touch(square, rng).map_err(|e| akl_error(&e))?;
    if let TouchResult::MustMove(moves) = &touch.result {
        // The touch is played: the turn must end with one of the piece's moves, so a failed
        // search falls back to the first of them rather than leave the turn half done.
        let mv = match engine.search(&*game, &limits) {
            Ok(r) => match r.best {
                AklChoice::Move(m) if moves.contains(&m) => Some(m),
                _ => moves.first().copied(),
            },
            Err(_) => moves.first().copied(),
        };
        if let Some(mv) = mv {
            game.play(mv, rng).map_err(|e| akl_error(&e))?;
        }
    }
    Ok(game.history().get(before).map(|e| {
        json!({"move": e.to_string(), "applied": true, "outcome": crate::wire::akl_turn(e),
               "notation": e.to_string(), "error": Value::Null})
    }))
}

/// The moves `viewer` may make now: the touched piece's moves, or the squares they may touch.
pub fn legal(game: &Game, viewer: Color) -> (Vec<String>, Vec<String>) {
    if game.side_to_move() != viewer {
        return (Vec::new(), Vec::new());
    }
    match game.pending_touch() {
        Some((_, _, moves)) => (moves.iter().map(|m| m.to_string()).collect(), Vec::new()),
        None => (
            Vec::new(),
            game.touchable().iter().map(|s| s.to_string()).collect(),
        ),
    }
}
