//! Cantwell quantum chess behind the API: the `qchess_cantwell::Game` calls and their JSON,
//! with the field names of `qchess eval --variant cantwell`.

use crate::error::ApiError;
use crate::wire::side;
use qchess_board::Square;
use qchess_cantwell::game::OCCUPIED_EPS;
use qchess_cantwell::position::board_squares;
use qchess_cantwell::{Game, GameError, Position, RuleOptions};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Boards listed in `"distribution"` at most (the state may hold many more).
const DISTRIBUTION_LIMIT: usize = 64;

/// The game record: the start position and the moves that replay it exactly (the file
/// `qchess play --variant cantwell` saves and loads).
#[derive(Serialize, Deserialize)]
struct SavedGame {
    start: Position,
    moves: Vec<String>,
    #[serde(default)]
    fifty_move_measurement: bool,
    #[serde(default)]
    repetition_claim_measurement: bool,
}

/// A rule crate error as an API error (422, the crate's own kind).
pub fn game_error(e: &GameError) -> ApiError {
    let err = ApiError::rules(e.kind(), e.to_string());
    match e.position() {
        Some(p) => err.at(json!({"column": p})),
        None => err,
    }
}

/// The rule options named in `rules`.
pub fn options(rules: &[String]) -> Result<RuleOptions, ApiError> {
    let mut options = RuleOptions::default();
    for r in rules {
        match r.as_str() {
            "fifty-move-measurement" => options.fifty_move_measurement = true,
            "repetition-claim" => options.repetition_claim_measurement = true,
            other => {
                return Err(ApiError::request(
                    format!(
                        "unknown cantwell rule option {other:?}: expected fifty-move-measurement or repetition-claim"
                    ),
                    "rules",
                ));
            }
        }
    }
    Ok(options)
}

/// A new game; Cantwell chess is played on the 8x8 board only.
pub fn create(rules: &[String], board: Option<&str>) -> Result<Game, ApiError> {
    if let Some(b) = board
        && !b.trim().eq_ignore_ascii_case("8x8")
    {
        return Err(ApiError::request(
            format!("board {b:?}: Cantwell quantum chess is played on the 8x8 board only"),
            "board",
        ));
    }
    Ok(Game::new().with_options(options(rules)?))
}

/// Replays a saved record.
pub fn import(text: &str) -> Result<Game, ApiError> {
    let saved: SavedGame = serde_json::from_str(text)
        .map_err(|e| ApiError::request(format!("not a Cantwell game record: {e}"), "record"))?;
    let options = RuleOptions {
        fifty_move_measurement: saved.fifty_move_measurement,
        repetition_claim_measurement: saved.repetition_claim_measurement,
    };
    Game::replay(&saved.start, options, &saved.moves).map_err(|e| game_error(&e).at("record"))
}

/// The record as text (JSON). The start position's amplitude list is built within the
/// game's memory budget ([`Game::try_start_position`]): when it does not fit the answer is
/// the error `state_too_large` (422, bytes asked and available) and the game is unchanged.
pub fn record(game: &Game) -> Result<String, ApiError> {
    let saved = SavedGame {
        start: game.try_start_position().map_err(|e| game_error(&e))?,
        moves: game.history_notation(),
        fifty_move_measurement: game.options().fifty_move_measurement,
        repetition_claim_measurement: game.options().repetition_claim_measurement,
    };
    Ok(serde_json::to_string_pretty(&saved).unwrap_or_default())
}

/// The whole state (nothing in Cantwell chess is hidden). The `"distribution"` (the 64
/// most probable boards at most) is selected within the game's memory budget
/// ([`Game::try_distribution_top`]): when it does not fit the answer is the error
/// `state_too_large` (422, bytes asked and available) and the game is unchanged.
pub fn state(game: &Game) -> Result<Map<String, Value>, ApiError> {
    let (top, _) = game
        .try_distribution_top(DISTRIBUTION_LIMIT)
        .map_err(|e| game_error(&e))?;
    let mut out = Map::new();
    let probs = game.probabilities();
    let mut p = Map::new();
    let mut pieces = Map::new();
    for sq in Square::ALL {
        let v = probs[sq.index() as usize];
        if v > OCCUPIED_EPS {
            p.insert(sq.to_string(), json!(v));
            if let Some(pc) = game.piece_at(sq) {
                pieces.insert(sq.to_string(), json!(pc.fen_char().to_string()));
            }
        }
    }
    let mut dist = Map::new();
    for (board, prob) in top {
        dist.insert(board_squares(board), json!(prob));
    }
    out.insert("probabilities".into(), Value::Object(p));
    out.insert("pieces".into(), Value::Object(pieces));
    out.insert("distribution".into(), Value::Object(dist));
    out.insert("state_size".into(), json!(game.state_size()));
    out.insert("side_to_move".into(), json!(side(game.side_to_move())));
    out.insert("status".into(), json!(game.status().name()));
    out.insert("fen".into(), json!(game.fen()));
    out.insert("history".into(), json!(game.history_notation()));
    Ok(out)
}

/// Plays `text` (QCAN); the report has the fields of an eval move report plus the outcome's
/// probability.
pub fn apply(game: &mut Game, text: &str, rng: &mut ChaCha8Rng) -> Result<Value, ApiError> {
    let rec = game.apply(text, rng).map_err(|e| game_error(&e))?;
    Ok(json!({
        "move": text,
        "applied": true,
        "outcome": rec.measured.map(u8::from),
        "probability": rec.probability,
        "notation": rec.notation,
        "error": Value::Null,
    }))
}

/// The random mover's move, if it has one.
pub fn random(game: &mut Game, rng: &mut ChaCha8Rng) -> Result<Option<Value>, ApiError> {
    let rec = game.play_random_move(rng).map_err(|e| game_error(&e))?;
    Ok(rec.map(|rec| {
        json!({"move": rec.notation, "applied": true, "outcome": rec.measured.map(u8::from),
               "probability": rec.probability, "notation": rec.notation, "error": Value::Null})
    }))
}

/// The engine's move, if the side to move has one (searched within
/// [`crate::session::engine_limits`]).
pub fn engine(
    game: &mut Game,
    engine: &mut qchess_engine::Engine,
    rng: &mut ChaCha8Rng,
) -> Result<Option<Value>, ApiError> {
    match engine.search(&*game, &crate::session::engine_limits()) {
        Ok(r) => apply(game, &r.best, rng).map(Some),
        Err(qchess_engine::EngineError::NoMove) => Ok(None),
        // The search's copies are counted against the game's memory budget.
        Err(e @ qchess_engine::EngineError::StateTooLarge { .. }) => {
            Err(ApiError::rules("state_too_large", e.to_string()))
        }
        Err(e) => Err(ApiError::rules("engine", e.to_string())),
    }
}

/// Takes back the last move.
pub fn undo(game: &mut Game) -> Result<(), ApiError> {
    game.undo().map(|_| ()).map_err(|e| game_error(&e))
}

/// The legal moves in QCAN, decided within the game's memory budget: a copy of the state
/// the rules would simulate a candidate on that does not fit is the error
/// `state_too_large` (422, bytes asked and available), never an allocation beyond the budget.
pub fn legal(game: &Game) -> Result<Vec<String>, ApiError> {
    game.try_legal_moves().map_err(|e| game_error(&e))
}

/// The eight Bell measures of squares `a` and `b`.
pub fn bell(game: &Game, a: Square, b: Square) -> Value {
    let m = game.bell_measures(a, b);
    let (name, max) = m.max();
    json!({"a": a.to_string(), "b": b.to_string(), "psi": m.psi, "phi": m.phi,
           "max": {"name": name, "value": max},
           "log_negativity": game.pair_log_negativity(a, b)})
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Close to the memory budget the legal-move list is the error `state_too_large` (422),
    /// not a copy of the state beyond the budget, and the game is unchanged; with the budget
    /// back it is the reference list.
    #[test]
    fn legal_moves_over_the_budget_are_state_too_large() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut game = Game::new();
        for mv in ["g1^f3h3", "b8^a6c6", "b1^a3c3", "g8^f6h6", "e2e4", "e7e5"] {
            game.apply(mv, &mut rng).unwrap();
        }
        let want = game.legal_moves_reference();
        let before = game.position();
        let budget = game.memory_budget();
        game.set_memory_budget(usize::MAX);
        let held = usize::MAX - game.state().memory_budget();
        game.set_memory_budget(held + game.state().bytes() + 256);
        let err = legal(&game).unwrap_err();
        assert_eq!(err.kind, "state_too_large", "{err:?}");
        assert_eq!(err.status, axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        assert!(err.message.contains("bytes"), "{}", err.message);
        assert_eq!(game.position(), before);
        game.set_memory_budget(budget);
        assert_eq!(legal(&game).unwrap(), want);
    }

    /// With room in the memory budget the state answer lists the distribution of
    /// `game.distribution(Some(64))`; under a budget that leaves room for one board (not for
    /// the selection of the state's boards) it is the error `state_too_large` (422, bytes
    /// asked and available) and the game is unchanged; with the budget back it is the
    /// normal answer again.
    #[test]
    fn state_over_the_budget_is_state_too_large() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut game = Game::new();
        for mv in ["g1^f3h3", "b8^a6c6", "b1^a3c3", "e7e5"] {
            game.apply(mv, &mut rng).unwrap();
        }
        let want: Map<String, Value> = game
            .distribution(Some(64))
            .into_iter()
            .map(|(b, p)| (board_squares(b), json!(p)))
            .collect();
        assert!(want.len() >= 8, "{} boards", want.len());
        let ok = state(&game).unwrap();
        assert_eq!(ok["distribution"], Value::Object(want.clone()));
        assert_eq!(ok["state_size"], json!(game.state_size()));
        assert_eq!(ok["fen"], json!(game.fen()));
        let before = game.position();
        let budget = game.memory_budget();
        game.set_memory_budget(usize::MAX);
        let held = usize::MAX - game.state().memory_budget();
        game.set_memory_budget(held + game.state().bytes() + 16);
        let err = state(&game).unwrap_err();
        assert_eq!(err.kind, "state_too_large", "{err:?}");
        assert_eq!(err.status, axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        let asked = 16 * game.state_size().min(64);
        assert!(
            err.message.contains(&format!("{asked} bytes needed"))
                && err.message.contains("has 16 left"),
            "{}",
            err.message
        );
        assert_eq!(game.position(), before);
        game.set_memory_budget(budget);
        assert_eq!(state(&game).unwrap(), ok);
    }

    /// Close to the memory budget the record is the error `state_too_large` (422), not a
    /// start position built beyond the budget, and the game is unchanged; with the budget
    /// back the record holds the start position and the moves.
    #[test]
    fn record_over_the_budget_is_state_too_large() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut game = Game::new();
        for mv in ["g1^f3h3", "b8^a6c6", "e2e4"] {
            game.apply(mv, &mut rng).unwrap();
        }
        let before = game.position();
        let budget = game.memory_budget();
        game.set_memory_budget(usize::MAX);
        let held = usize::MAX - game.state().memory_budget();
        game.set_memory_budget(held + game.state().bytes() + 1);
        let err = record(&game).unwrap_err();
        assert_eq!(err.kind, "state_too_large", "{err:?}");
        assert_eq!(err.status, axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        assert!(err.message.contains("bytes"), "{}", err.message);
        assert_eq!(game.position(), before);
        game.set_memory_budget(budget);
        let saved: SavedGame = serde_json::from_str(&record(&game).unwrap()).unwrap();
        assert_eq!(saved.start, game.start_position());
        assert_eq!(saved.moves, game.history_notation());
        let replayed = import(&record(&game).unwrap()).unwrap();
        assert_eq!(replayed.position(), before);
    }
}
