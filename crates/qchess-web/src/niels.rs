//! Niel's Chess behind the API: the `qchess_niels::Game` calls and their JSON, with the field
//! names of `qchess eval --variant niels`.

use crate::error::ApiError;
use crate::wire::{self, side};
use qchess_board::Geometry;
use qchess_niels::{Game, GameRecord, Move, NielsError, Rules, Status};
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

/// A rule crate error as an API error, with `qchess eval`'s kinds.
pub fn niels_error(e: &NielsError) -> ApiError {
    let (kind, at) = match e {
        NielsError::Parse { at, .. } => ("notation", json!({"column": at})),
        NielsError::Illegal { .. } => ("illegal_move", Value::Null),
        NielsError::Rolls(_) => ("rolls", Value::Null),
        NielsError::GameOver(_) => ("game_over", Value::Null),
        NielsError::Position(_) => ("position", Value::Null),
        NielsError::Rules(_) => ("rules", Value::Null),
    };
    ApiError::rules(kind, e.to_string()).at(at)
}

/// A new game under the named rule options on `board` (default 8x8).
pub fn create(rules: &[String], board: Option<&str>) -> Result<Game, ApiError> {
    let rules = Rules::parse_list(&rules.join(","))
        .map_err(|e| ApiError::request(e.to_string(), "rules"))?;
    let geometry: Geometry = match board {
        None => Geometry::STANDARD,
        Some(b) => b
            .parse()
            .map_err(|e| ApiError::request(format!("board: {e}"), "board"))?,
    };
    Game::new(rules, geometry).map_err(|e| niels_error(&e).at("board"))
}

/// Replays a game record (its text form).
pub fn import(text: &str) -> Result<Game, ApiError> {
    let record: GameRecord = text.parse().map_err(|e: NielsError| {
        ApiError::request(format!("not a Niel's Chess record: {e}"), "record")
    })?;
    record.replay().map_err(|e| niels_error(&e).at("record"))
}

/// The record as text.
pub fn record(game: &Game) -> String {
    game.record().to_string()
}

/// Whether the game goes on.
pub fn ongoing(game: &Game) -> bool {
    game.status() == Status::Ongoing
}

/// The whole state (nothing in Niel's Chess is hidden).
pub fn state(game: &Game) -> Map<String, Value> {
    let pos = game.position();
    let rules = game.rules();
    let status = game.status();
    let mut out = Map::new();
    out.insert("pieces".into(), Value::Object(wire::niels_pieces(pos)));
    out.insert("pairs".into(), Value::Array(wire::niels_pairs(pos, rules)));
    out.insert(
        "groups".into(),
        Value::Array(wire::niels_groups(pos, rules)),
    );
    out.insert("position".into(), json!(pos.to_string()));
    out.insert("board".into(), json!(pos.geometry().to_string()));
    out.insert("rules".into(), json!(rules.names()));
    out.insert("side_to_move".into(), json!(side(pos.side_to_move())));
    out.insert("in_check".into(), json!(game.in_check()));
    out.insert("status".into(), json!(wire::niels_status(status)));
    out.insert("result".into(), json!(status.result()));
    out.insert(
        "history".into(),
        json!(
            game.history()
                .iter()
                .map(|h| h.mv.to_string())
                .collect::<Vec<_>>()
        ),
    );
    out
}

/// Plays `text`, with the given dice results (`rolls`) or dice from `rng`.
pub fn apply(
    game: &mut Game,
    text: &str,
    rolls: Option<&[u8]>,
    rng: &mut ChaCha8Rng,
) -> Result<Value, ApiError> {
    let mv: Move = text.trim().parse().map_err(|e| niels_error(&e))?;
    let outcome = match rolls {
        Some(r) => game.play_with_rolls(&mv, r),
        None => game.play(&mv, rng),
    }
    .map_err(|e| niels_error(&e))?;
    let notation = game.history().last().map(|h| h.mv.to_string());
    Ok(
        json!({"move": text, "applied": true, "outcome": crate::wire::niels_outcome(&outcome),
              "notation": notation, "error": Value::Null}),
    )
}

/// The random mover's move, if it has one.
pub fn random(game: &mut Game, rng: &mut ChaCha8Rng) -> Result<Option<Value>, ApiError> {
    let moves = game.legal_moves();
    let Some(mv) = moves.choose(rng).copied() else {
        return Ok(None);
    };
    apply(game, &mv.to_string(), None, rng).map(Some)
}

/// The engine's move, if the side to move has one (searched within
/// [`crate::session::engine_limits`]).
pub fn engine(
    game: &mut Game,
    engine: &mut qchess_engine::Engine,
    rng: &mut ChaCha8Rng,
) -> Result<Option<Value>, ApiError> {
    match engine.search(&*game, &crate::session::engine_limits()) {
        Ok(r) => apply(game, &r.best.to_string(), None, rng).map(Some),
        Err(qchess_engine::EngineError::NoMove) => Ok(None),
        Err(e) => Err(ApiError::rules("engine", e.to_string())),
    }
}

/// Takes back the last move.
pub fn undo(game: &mut Game) -> Result<(), ApiError> {
    game.undo()
        .map(|_| ())
        .ok_or_else(|| ApiError::rules("undo", "there is no move to undo"))
}

/// The legal moves in the notation of docs/niels.md.
pub fn legal(game: &Game) -> Vec<String> {
    game.legal_moves().iter().map(|m| m.to_string()).collect()
}
