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
//! * `"distribution_limit"`: at most this many boards in `"distribution"` (default: all).
//!
//! Answer: `moves` (one `{"move", "applied", "outcome", "notation", "error"}` each),
//! `probabilities` (square -> probability, squares with positive probability), `pieces`
//! (square -> letter), `distribution` ("a3 c3" -> probability), `state_size`,
//! `side_to_move`, `status`.

use super::EvalError;
use qchess_board::{Color, Square};
use qchess_cantwell::circuit::{self, OccupancyMove};
use qchess_cantwell::game::OCCUPIED_EPS;
use qchess_cantwell::position::board_squares;
use qchess_cantwell::{Game, GameError, Position};
use qchess_sim::State;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

/// Evaluates one request object of this variant; the dispatcher adds `"ok": true`.
pub fn eval(request: &Map<String, Value>) -> Result<Map<String, Value>, EvalError> {
    let mode = match request.get("mode") {
        None => "game",
        Some(Value::String(m)) if m == "game" || m == "occupancy" => m.as_str(),
        Some(other) => {
            return Err(EvalError::new(
                "request",
                format!("\"mode\" must be \"game\" or \"occupancy\", not {other}"),
            )
            .at("mode"));
        }
    };
    let seed = super::seed_field(request)?;
    let limit = match request.get("distribution_limit") {
        None => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            EvalError::new(
                "request",
                "\"distribution_limit\" must be a non-negative integer",
            )
            .at("distribution_limit")
        })? as usize),
    };
    let moves: Vec<String> = match request.get("moves") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    EvalError::new("request", "each move must be a string")
                        .at(format!("moves[{i}]"))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(
                EvalError::new("request", "\"moves\" must be an array of strings").at("moves"),
            );
        }
    };
    let position = request.get("position").unwrap_or(&Value::Null);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if mode == "game" {
        eval_game(position, &moves, &mut rng, limit)
    } else {
        eval_occupancy(position, &moves, &mut rng, limit)
    }
}

fn error_json(kind: &str, message: String, at: Value) -> Value {
    json!({"kind": kind, "message": message, "at": at})
}

fn game_error_json(e: &GameError) -> Value {
    let at = e.position().map_or(Value::Null, |p| json!({"column": p}));
    error_json(e.kind(), e.to_string(), at)
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

fn load_game(position: &Value) -> Result<Game, EvalError> {
    match position {
        Value::Null => Ok(Game::new()),
        Value::String(fen) => Game::from_fen(fen).map_err(|e| {
            EvalError::new("fen", e.to_string())
                .at(json!({"path": "position", "column": e.position()}))
        }),
        Value::Object(obj) if obj.contains_key("amplitudes") => {
            let pos: Position = serde_json::from_value(position.clone()).map_err(|e| {
                EvalError::new("position", format!("bad serialised position: {e}")).at("position")
            })?;
            Game::from_position(&pos)
                .map_err(|e| EvalError::new("position", e.to_string()).at("position"))
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
            Game::from_fen(&fen)
                .map_err(|e| EvalError::new("position", e.to_string()).at("position"))
        }
        _ => Err(EvalError::new(
            "position",
            "\"position\" must be \"startpos\", a FEN or an object",
        )
        .at("position")),
    }
}

fn eval_game(
    position: &Value,
    moves: &[String],
    rng: &mut ChaCha8Rng,
    limit: Option<usize>,
) -> Result<Map<String, Value>, EvalError> {
    let mut game = load_game(position)?;
    let mut reports = Vec::with_capacity(moves.len());
    for mv in moves {
        let report = match game.apply(mv, rng) {
            Ok(rec) => json!({
                "move": mv,
                "applied": true,
                "outcome": rec.measured.map(u8::from),
                "notation": rec.notation,
                "error": Value::Null,
            }),
            Err(e) => json!({
                "move": mv, "applied": false, "outcome": Value::Null, "notation": Value::Null,
                "error": game_error_json(&e),
            }),
        };
        reports.push(report);
    }
    let mut out = readouts(game.state(), limit);
    let mut pieces = Map::new();
    for sq in Square::ALL {
        if let Some(p) = game.piece_at(sq) {
            pieces.insert(sq.to_string(), Value::String(p.fen_char().to_string()));
        }
    }
    out.insert("moves".into(), Value::Array(reports));
    out.insert("pieces".into(), Value::Object(pieces));
    out.insert(
        "side_to_move".into(),
        Value::String(color_name(game.side_to_move()).into()),
    );
    out.insert("status".into(), Value::String(game.status().name().into()));
    out.insert("fen".into(), Value::String(game.fen()));
    out.insert("history".into(), json!(game.history_notation()));
    Ok(out)
}

fn color_name(c: Color) -> &'static str {
    if c == Color::White { "w" } else { "b" }
}

fn readouts(state: &State, limit: Option<usize>) -> Map<String, Value> {
    let mut out = Map::new();
    let probs = state.qubit_probabilities();
    let mut p = Map::new();
    for sq in Square::ALL {
        let v = probs[sq.index() as usize];
        if v > OCCUPIED_EPS {
            p.insert(sq.to_string(), json!(v));
        }
    }
    let mut dist = Map::new();
    for (board, prob) in state.board_distribution(limit) {
        dist.insert(board_squares(board), json!(prob));
    }
    out.insert("probabilities".into(), Value::Object(p));
    out.insert("distribution".into(), Value::Object(dist));
    out.insert("state_size".into(), json!(state.len()));
    out
}

fn eval_occupancy(
    position: &Value,
    moves: &[String],
    rng: &mut ChaCha8Rng,
    limit: Option<usize>,
) -> Result<Map<String, Value>, EvalError> {
    let (mut state, mut side) = match position {
        Value::Object(obj) if obj.contains_key("amplitudes") => {
            let game = load_game(position)?;
            (game.state().clone(), game.side_to_move())
        }
        Value::Object(obj) => {
            let mut unknown = 0u64;
            let fen = fen_of_pieces(obj, &mut unknown)?;
            let game = Game::from_fen(&fen)
                .map_err(|e| EvalError::new("position", e.to_string()).at("position"))?;
            (
                State::classical(game.pieces().occupied_mask()),
                game.side_to_move(),
            )
        }
        _ => {
            let game = load_game(position)?;
            (game.state().clone(), game.side_to_move())
        }
    };
    let mut reports = Vec::with_capacity(moves.len());
    for mv in moves {
        let parsed: Result<OccupancyMove, _> = mv.parse();
        let report = match parsed {
            Err(e) => {
                let at = match &e {
                    circuit::CircuitError::Parse { position, .. } => json!({"column": position}),
                    _ => Value::Null,
                };
                json!({"move": mv, "applied": false, "outcome": Value::Null, "error": error_json("notation", e.to_string(), at)})
            }
            Ok(om) => match circuit::apply(&mut state, &om, rng) {
                Ok(a) => {
                    side = side.opposite();
                    json!({"move": mv, "applied": true, "outcome": a.measured.map(u8::from), "error": Value::Null})
                }
                Err(e) => {
                    let kind = match e {
                        circuit::CircuitError::ImpossibleOutcome { .. }
                        | circuit::CircuitError::NoMeasurement => "impossible_outcome",
                        circuit::CircuitError::Sim(qchess_sim::SimError::StateTooLarge {
                            ..
                        }) => "state_too_large",
                        circuit::CircuitError::Sim(_) => "simulation",
                        _ => "illegal_move",
                    };
                    json!({"move": mv, "applied": false, "outcome": Value::Null, "error": error_json(kind, e.to_string(), Value::Null)})
                }
            },
        };
        reports.push(report);
    }
    let mut out = readouts(&state, limit);
    // Occupancy mode tracks no piece types: every square with positive probability is "?".
    let mut pieces = Map::new();
    let probs = state.qubit_probabilities();
    for sq in Square::ALL {
        if probs[sq.index() as usize] > OCCUPIED_EPS {
            pieces.insert(sq.to_string(), Value::String("?".into()));
        }
    }
    out.insert("moves".into(), Value::Array(reports));
    out.insert("pieces".into(), Value::Object(pieces));
    out.insert(
        "side_to_move".into(),
        Value::String(color_name(side).into()),
    );
    out.insert("status".into(), Value::String("unknown".into()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::eval_one as run;

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
