//! `qchess eval` for `"variant": "niels"` (Niel's Chess, an independent implementation of the
//! published rules). Owned by the qchess-niels work; see docs/niels.md.
//!
//! Request fields:
//! * `"position"`: `"startpos"` (default) or a serialised position (FEN with indefinite halves
//!   such as `[Nro|1]`, docs/niels.md).
//! * `"board"`: `"8x8"` (default), `"5x6"`, `"4x6"`, `"4x5"`, `"4x4"` (any WxH from 4 to 8); with a serialised
//!   position the size is read from it when `"board"` is absent.
//! * `"rules"`: rule options, an array of names or one comma-separated string
//!   (`simplified`, `hadamard`, `hadamard-plus`, `deterministic`, `tunnelling`, `no-box`,
//!   `stay-only`, `remote-collapse`, `unitary-hadamard`).
//! * `"moves"`: move strings, applied in order; a refused move is reported with
//!   `"applied": false` and its error, changes nothing, and the next move is still tried.
//! * `"seed"`: seed of the dice (ChaCha8), default 0.
//! * `"rolls"`: optional forced dice: either one entry per move (an array of results 1..6 used
//!   in order, or `null` to roll with the seeded RNG), or one flat array of results consumed
//!   in order by the moves that roll (a move that finds it empty is refused).
//! * `"legal_moves"`: `true` to list the legal moves of the final position.
//!
//! Answer: `moves` (one `{"move", "applied", "outcome", "notation", "error"}` each; `outcome`
//! lists rolls, collapses, the captured piece and tunnelling), `pieces` (square -> letter of
//! conventional pieces), `pairs` (every indefinite pair: squares, marks, facings, kind,
//! diagonal, collapse probabilities per square, amplitudes), `groups` (entangled groups with
//! their joint outcomes and probabilities), `position` (serialised), `side_to_move`,
//! `in_check`, `status` (`ongoing`, `checkmate`, `stalemate`, `insufficient_material`,
//! `fifty_moves`, `repetition`), `result`, `record`.

use super::frame::{MoveReport, ReasonCode, Refusal, side_letter as side, string_list};
use super::{Answer, EvalError, Request};
use qchess_board::{Color, Geometry};
use qchess_niels::{CheckInfo, Fraction, Game, MoveOutcome, NielsError, Position, Rules};
use qchess_web::wire;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// Evaluates one request object of this variant; the frame adds `"ok": true`.
pub fn eval(request: Request) -> Result<Answer, EvalError> {
    // The position object (an earlier answer's `position_json`) carries its board and rules;
    // the request's own fields win.
    let object = match request.get("position") {
        Some(Value::Object(o)) => Some(o),
        _ => None,
    };
    let from_object = |key: &str| object.and_then(|o| o.get(key));
    let rules = parse_rules(request.get("rules").or(from_object("rules")))?;
    let seed = request.seed()?;
    let moves = request.moves()?;
    let legal_moves = request.flag("legal_moves")?;
    let want_outcomes = request.flag("outcomes")?;
    let flat = flat_rolls(request.get("rolls"))?;
    let flat_mode = flat.is_some();
    let rolls = match flat {
        Some(_) => vec![None; moves.len()],
        None => parse_rolls(request.get("rolls"), moves.len())?,
    };
    let mut queue: std::collections::VecDeque<u8> = flat.unwrap_or_default().into();
    let start = match object {
        Some(o) => parse_position(
            Some(o.get("fen").unwrap_or(&Value::Null)),
            request.get("board").or(from_object("board")),
        )?,
        None => parse_position(request.get("position"), request.get("board"))?,
    };
    let mut game = Game::from_position(rules, start);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut reports = Vec::with_capacity(moves.len());
    for (i, sent) in moves.iter().enumerate() {
        // `e2 e4`, `e2-e4`, `e7e8Q` read as `qchess play` reads them; answers echo `sent`.
        let canonical = crate::plain_move::rewrite(sent, crate::plain_move::niels_text);
        let text: &str = &canonical;
        // The full distribution, from the position before the move (a refused move has none).
        let outcomes = match qchess_niels::parse_token(text) {
            Ok((mv, _)) if want_outcomes => game.outcomes_exact(&mv).ok().map(|list| {
                list.iter()
                    .map(|(p, pr, o)| {
                        json!({"probability": pr.to_f64(), "probability_exact": pr.to_string(),
                               "outcome": qchess_web::wire::niels_outcome(o), "position": p.to_string()})
                    })
                    .collect::<Vec<_>>()
            }),
            _ => None,
        };
        // A move token may carry its rolls (`b1a3[3,4]`); they win over a "rolls" entry.
        let mut dice = Dice {
            forced: rolls[i].as_ref(),
            flat_mode,
            queue: &mut queue,
            rng: &mut rng,
        };
        let report = match remote_collapse_turn(text) {
            // A remote collapse and the move it makes: one entry, applied whole or not at all.
            Some((collapse, then)) => match play_turn(&mut game, collapse, then, &mut dice) {
                Ok((outcome, notation)) => MoveReport::applied(sent, outcome, json!(notation)),
                Err(e) => MoveReport::refused(sent, &refusal(&e)),
            },
            None => match play_token(&mut game, text, &mut dice) {
                Ok(outcome) => {
                    let notation = game.history().last().map(|h| h.mv.to_string());
                    MoveReport::applied(
                        sent,
                        qchess_web::wire::niels_outcome(&outcome),
                        json!(notation),
                    )
                }
                Err(e) => MoveReport::refused(sent, &refusal(&e)),
            },
        };
        let report = match (want_outcomes, outcomes) {
            (false, _) => report,
            (true, list) => report.with("outcomes", json!(list)),
        };
        reports.push(report.into_value());
    }
    let mut out = describe(&game);
    out.insert("moves", reports);
    if legal_moves {
        let list: Vec<String> = game.legal_moves().iter().map(|m| m.to_string()).collect();
        out.insert("legal_moves", json!(list));
    }
    Ok(out)
}

/// Where a move's dice come from: the entry's forced rolls, the flat queue, or the seed.
struct Dice<'a> {
    forced: Option<&'a Vec<u8>>,
    flat_mode: bool,
    queue: &'a mut std::collections::VecDeque<u8>,
    rng: &'a mut ChaCha8Rng,
}

/// Plays one move token; rolls attached to it (`b1a3[3,4]`) win over the entry's.
fn play_token(game: &mut Game, text: &str, dice: &mut Dice) -> Result<MoveOutcome, NielsError> {
    let (mv, attached) = qchess_niels::parse_token(text)?;
    match attached.as_ref().or(dice.forced) {
        Some(r) => game.play_with_rolls(&mv, r),
        None if dice.flat_mode => {
            let before = dice.queue.clone();
            let r = game.play_with_dice(&mv, &mut |_| dice.queue.pop_front());
            if r.is_err() {
                *dice.queue = before;
            }
            r
        }
        None => game.play(&mv, dice.rng),
    }
}

/// `"c:c3 a3b5"` (also with rolls, `"c:c3[4] a3b5"`): a remote collapse (competitive rule 3)
/// and the move of the piece it left, as one entry. `None` for any other text.
fn remote_collapse_turn(text: &str) -> Option<(&str, &str)> {
    let mut parts = text.split_whitespace();
    let (first, second) = (parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    match qchess_niels::parse_token(first) {
        Ok((qchess_niels::Move::RemoteCollapse { .. }, _)) => Some((first, second)),
        _ => None,
    }
}

/// Plays a remote collapse and the move after it as one entry: when either is refused the game
/// and the dice (the seeded stream and the flat queue) are left as they were. The outcome is
/// the move's, with the collapse's rolls and collapses first and the collapse's own outcome
/// under `"remote_collapse"`; the notation is both tokens.
fn play_turn(
    game: &mut Game,
    collapse: &str,
    then: &str,
    dice: &mut Dice,
) -> Result<(Value, String), NielsError> {
    let (saved_game, saved_queue, saved_rng) = (game.clone(), dice.queue.clone(), dice.rng.clone());
    // Forced rolls of the entry feed the collapse; the move after it rolls from its own token,
    // the flat queue or the seed.
    let result = play_token(game, collapse, dice).and_then(|first| {
        let notation = game.history().last().map(|h| h.mv.to_string());
        let mut rest = Dice {
            forced: None,
            flat_mode: dice.flat_mode,
            queue: dice.queue,
            rng: dice.rng,
        };
        let second = play_token(game, then, &mut rest)?;
        Ok((first, notation, second))
    });
    let (first, first_notation, second) = match result {
        Ok(done) => done,
        Err(e) => {
            *game = saved_game;
            *dice.queue = saved_queue;
            *dice.rng = saved_rng;
            return Err(e);
        }
    };
    let mut outcome = qchess_web::wire::niels_outcome(&second);
    let head = qchess_web::wire::niels_outcome(&first);
    if let (Value::Object(map), Value::Object(h)) = (&mut outcome, &head) {
        for key in ["rolls", "collapses"] {
            let mut joined = h
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            joined.extend(
                map.get(key)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
            map.insert(key.into(), Value::Array(joined));
        }
        map.insert("remote_collapse".into(), head.clone());
    }
    let second_notation = game.history().last().map(|h| h.mv.to_string());
    let notation = [first_notation, second_notation]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    Ok((outcome, notation))
}

fn parse_rules(v: Option<&Value>) -> Result<Rules, EvalError> {
    let list = match v {
        None => return Ok(Rules::default()),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => string_list(items, "rules")?.join(","),
        Some(_) => {
            return Err(
                EvalError::new("request", "\"rules\" must be an array of option names").at("rules"),
            );
        }
    };
    Rules::parse_list(&list).map_err(|e| EvalError::new("request", e.to_string()).at("rules"))
}

/// A flat array of dice results (`[3, 4]`), or `None` when `"rolls"` is absent or per move.
fn flat_rolls(v: Option<&Value>) -> Result<Option<Vec<u8>>, EvalError> {
    let Some(Value::Array(items)) = v else {
        return Ok(None);
    };
    if items.is_empty() || !items.iter().all(Value::is_number) {
        return Ok(None);
    }
    items
        .iter()
        .enumerate()
        .map(|(i, r)| {
            r.as_u64()
                .filter(|x| (1..=6).contains(x))
                .map(|x| x as u8)
                .ok_or_else(|| {
                    EvalError::new("request", "a dice result is an integer 1..6")
                        .at(format!("rolls[{i}]"))
                })
        })
        .collect::<Result<Vec<u8>, _>>()
        .map(Some)
}

fn parse_rolls(v: Option<&Value>, n: usize) -> Result<Vec<Option<Vec<u8>>>, EvalError> {
    let mut out = vec![None; n];
    let Some(v) = v else { return Ok(out) };
    let Value::Array(items) = v else {
        return Err(EvalError::new(
            "request",
            "\"rolls\" must be an array with one entry per move",
        )
        .at("rolls"));
    };
    if items.len() > n {
        return Err(EvalError::new(
            "request",
            format!("{} roll entries for {n} moves", items.len()),
        )
        .at("rolls"));
    }
    for (i, item) in items.iter().enumerate() {
        out[i] = match item {
            Value::Null => None,
            Value::Array(rs) => Some(
                rs.iter()
                    .enumerate()
                    .map(|(j, r)| {
                        r.as_u64()
                            .filter(|x| (1..=6).contains(x))
                            .map(|x| x as u8)
                            .ok_or_else(|| {
                                EvalError::new("request", "a dice result is an integer 1..6")
                                    .at(format!("rolls[{i}][{j}]"))
                            })
                    })
                    .collect::<Result<_, _>>()?,
            ),
            _ => {
                return Err(EvalError::new(
                    "request",
                    "each roll entry is an array of dice results or null",
                )
                .at(format!("rolls[{i}]")));
            }
        };
    }
    Ok(out)
}

fn parse_position(pos: Option<&Value>, board: Option<&Value>) -> Result<Position, EvalError> {
    let geometry = match board {
        None => None,
        Some(Value::String(s)) => Some(
            s.parse::<Geometry>()
                .map_err(|e| EvalError::new("request", e.to_string()).at("board"))?,
        ),
        Some(_) => {
            return Err(
                EvalError::new("request", "\"board\" must be a string such as \"5x6\"").at("board"),
            );
        }
    };
    let fen_error = |e: NielsError| {
        let column = match &e {
            NielsError::Parse { at, .. } => json!(at),
            _ => Value::Null,
        };
        EvalError::new("fen", e.to_string()).at(json!({"path": "position", "column": column}))
    };
    match pos {
        None => Position::startpos(geometry.unwrap_or_default()).map_err(fen_error),
        Some(Value::String(s)) if s == "startpos" => {
            Position::startpos(geometry.unwrap_or_default()).map_err(fen_error)
        }
        Some(Value::String(s)) => match geometry {
            Some(g) => Position::from_fen(s, g).map_err(fen_error),
            None => s.parse::<Position>().map_err(fen_error),
        },
        Some(_) => Err(EvalError::new(
            "request",
            "\"position\" must be \"startpos\", a serialised position or an object \
             {\"fen\", \"board\", \"rules\"} (an answer's \"position_json\")",
        )
        .at("position")),
    }
}

/// The refusal of a move the game rejected, with its stable reason code.
fn refusal(e: &NielsError) -> Refusal {
    let message = e.to_string();
    match e {
        NielsError::Parse { at, .. } => {
            Refusal::new("notation", ReasonCode::ParseError, message).at_column(*at)
        }
        NielsError::Illegal { reason, .. } => {
            Refusal::new("illegal_move", illegal_code(reason), message)
        }
        NielsError::Rolls(_) => Refusal::new("rolls", ReasonCode::BadRolls, message),
        NielsError::GameOver(_) => Refusal::new("game_over", ReasonCode::GameOver, message),
        NielsError::Position(_) => Refusal::new("position", ReasonCode::Other, message),
        NielsError::Rules(_) => Refusal::new("rules", ReasonCode::ForbiddenByRulesVariant, message),
    }
}

/// The code of an illegal move, from qchess-niels' reason (its legality check words each
/// cause in one fixed way; see `legal.rs`).
fn illegal_code(reason: &str) -> ReasonCode {
    let has = |w: &str| reason.contains(w);
    if has("no piece on") {
        ReasonCode::NoPiece
    } else if has("is not the mover's") {
        ReasonCode::WrongColour
    } else if has("leaves the mover's king in check")
        || has("castling is not allowed out of check")
        || has("would cross the attacked square")
    {
        ReasonCode::LeavesKingInCheck
    } else if has("after the remote collapse the piece on") {
        ReasonCode::TouchMove
    } else if has("rule option")
        || has("Simplified Game")
        || has("competitive rule")
        || has("Hadamard+ Game")
    {
        ReasonCode::ForbiddenByRulesVariant
    } else {
        ReasonCode::NotAMoveOfThisPiece
    }
}

/// One colour's check (8.7) and mate status: `"check"` is `"certain"`, `"possible"` or
/// `"none"`, with the chance (the likeliest attacker's hypothetical capture of the king) and
/// its exact twin; `"mate"` is `"checkmate"`, `"stalemate"` or `"none"` as if that colour
/// were to move.
fn check_json(c: CheckInfo) -> Value {
    let check = if c.chance == Fraction::ONE {
        "certain"
    } else if c.chance > Fraction::ZERO {
        "possible"
    } else {
        "none"
    };
    let mate = if c.checkmated {
        "checkmate"
    } else if c.stalemated {
        "stalemate"
    } else {
        "none"
    };
    json!({"check": check, "probability": c.chance.to_f64(),
           "probability_exact": c.chance.to_string(), "mate": mate})
}

fn describe(game: &Game) -> Answer {
    let pos = game.position();
    let rules = game.rules();
    let status = game.status();
    let mut out = Answer::new();
    out.insert("pieces", wire::niels_pieces(pos));
    out.insert("pairs", wire::niels_pairs(pos, rules));
    out.insert("groups", wire::niels_groups(pos, rules));
    out.insert("position", pos.to_string());
    out.insert(
        "position_json",
        json!({"fen": pos.to_string(), "board": pos.geometry().to_string(),
               "rules": rules.names()}),
    );
    out.insert("board", pos.geometry().to_string());
    out.insert("rules", json!(rules.names()));
    out.insert("side_to_move", side(pos.side_to_move()));
    out.insert("in_check", game.in_check());
    out.insert(
        "check",
        json!({"white": check_json(game.check_info(Color::White)),
               "black": check_json(game.check_info(Color::Black))}),
    );
    out.insert("status", wire::niels_status(status));
    out.insert("result", status.result());
    out.insert("record", game.record().to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::super::eval_one as run;
    use super::super::{Answer, Context, EvalError, Request};
    use serde_json::{Map, Value};

    /// `eval` on a request object, as the frame calls it.
    fn eval_req(req: &Map<String, Value>) -> Result<Value, EvalError> {
        let ctx = Context::default();
        super::eval(Request::new(req, &ctx)).map(Answer::into_value)
    }

    #[test]
    fn fig_4_5_through_eval() {
        let v = run(
            r#"{"variant":"niels","position":"4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1","moves":["f5e6"],"rolls":[[3]]}"#,
        );
        assert_eq!(v["ok"], true, "{v}");
        let m = &v["moves"][0];
        assert_eq!(m["applied"], true);
        assert_eq!(m["outcome"]["rolls"][0]["value"], 3);
        assert_eq!(m["outcome"]["rolls"][0]["player"], "b");
        assert_eq!(m["outcome"]["captured"], "r");
        assert_eq!(v["pieces"]["e6"], "P");
        assert_eq!(v["side_to_move"], "b");
        assert_eq!(v["status"], "ongoing");
    }

    #[test]
    fn pairs_groups_and_errors() {
        let v = run(
            r#"{"variant":"niels","board":"5x6","rules":["simplified"],"moves":["b1^a3c3:oo","e5e4","b1^a3c3:po","zz"],"seed":3}"#,
        );
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["moves"][0]["applied"], true);
        assert_eq!(v["moves"][1]["applied"], true);
        assert_eq!(v["moves"][2]["applied"], false);
        assert_eq!(v["moves"][2]["error"]["kind"], "illegal_move");
        assert_eq!(v["moves"][3]["error"]["kind"], "notation");
        assert_eq!(v["pairs"][0]["probabilities"]["a3"], 0.5);
        assert_eq!(v["pairs"][0]["kind"], "equal");
        let bad = run(r#"{"variant":"niels","rules":["quantum"]}"#);
        assert_eq!(bad["error"]["at"], "rules");
        let bad = run(r#"{"variant":"niels","position":"8/8 w - - 0 1"}"#);
        assert_eq!(bad["error"]["kind"], "fen");
        let bad = run(r#"{"variant":"niels","moves":["e2e4"],"rolls":[[7]]}"#);
        assert_eq!(bad["error"]["at"], "rolls[0][0]");
        let bad = run(r#"{"variant":"niels","moves":["e2e4"],"rolls":[3, 9]}"#);
        assert_eq!(bad["error"]["at"], "rolls[1]");
    }

    #[test]
    fn fig_9_group_through_eval() {
        let v = run(
            r#"{"variant":"niels","position":"5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1","moves":["f6&f6d5:oo@e4","e2&c4e2:oo@d5","a4c4"]}"#,
        );
        assert_eq!(v["ok"], true, "{v}");
        assert_eq!(v["moves"][0]["notation"], "f6&f6d5:oo@e4-");
        assert_eq!(v["moves"][2]["applied"], false);
        assert_eq!(v["moves"][2]["error"]["kind"], "illegal_move");
        let group = &v["groups"][0];
        assert_eq!(group["diagonal"], "-");
        assert_eq!(group["pairs"], serde_json::json!(["R1", "n1", "B1"]));
        assert_eq!(group["outcomes"].as_array().unwrap().len(), 2);
        assert_eq!(group["outcomes"][1]["probability"], 0.5);
        assert_eq!(group["outcomes"][1]["squares"]["B1"], "c4");
        assert_eq!(v["pairs"][2]["diagonal"], "-");
        assert_eq!(v["side_to_move"], "b");
        assert_eq!(v["in_check"], false);
    }

    #[test]
    fn flat_rolls_are_consumed_in_order() {
        let v = run(
            r#"{"variant":"niels","rules":"tunnelling","position":"4k3/8/8/8/4p3/8/4R3/4K3 w - - 0 1","moves":["e2~e5","e8d8","e5e6","e4e3","e1d1"],"rolls":[6]}"#,
        );
        assert_eq!(v["moves"][0]["outcome"]["tunnelled"], true, "{v}");
        assert_eq!(v["pieces"]["e6"], "R", "{v}");
        let v = run(
            r#"{"variant":"niels","rules":"tunnelling","position":"4k3/8/8/8/4p3/8/4R3/4K3 w - - 0 1","moves":["e2~e5","e2~e5"],"rolls":[]}"#,
        );
        assert_eq!(v["moves"][0]["applied"], true, "{v}");
    }

    /// Random and malformed requests, fed to `eval` directly: it never panics, and a request
    /// with its refused moves left out ends in exactly the same position and record (a refused
    /// move changes nothing, not even the dice stream).
    #[test]
    fn random_requests_never_panic_and_refused_moves_change_nothing() {
        use rand::{Rng, SeedableRng, seq::IndexedRandom};
        use serde_json::json;
        const POSITIONS: [&str; 6] = [
            "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1",
            "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1",
            "4k3/8/8/8/4p3/8/4R3/4K3 w - - 0 1",
            "3rk/3p1/5/r4/5/2Q1K w - - 0 1",
            "4k3/8/8/8/8/2[Nro|1]5/8/1[Nbo|1]2K3 w - - 0 1",
            "startpos",
        ];
        const MOVES: [&str; 16] = [
            "f5e6",
            "f6&f6d5:oo@e4",
            "e2&c4e2:oo@d5",
            "a4c4",
            "f4f6",
            "e2~e5",
            "c1^c3e3:oo",
            "a3e3",
            "f:c3",
            "h:c3",
            "z:b1",
            "c:c3",
            "e2e4",
            "e7e5",
            "b1^a3c3:oo",
            "e1d1",
        ];
        const JUNK: [&str; 8] = ["", "zz", "e2e9", "é:e4", "f5e6 ", "[", "e7e8=k", "h:"];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut n_applied, mut n_refused) = (0, 0);
        for case in 0..300 {
            let mut req = Map::new();
            req.insert("variant".into(), json!("niels"));
            let pos = *POSITIONS.choose(&mut rng).unwrap();
            match rng.random_range(0..8) {
                0 => {}
                1 => {
                    req.insert("position".into(), json!(42));
                }
                2 => {
                    // A corrupted position: one character replaced.
                    let mut chars: Vec<char> = pos.chars().collect();
                    let i = rng.random_range(0..chars.len());
                    chars[i] = *['[', ']', '9', 'x', '/', ' ', 'é']
                        .choose(&mut rng)
                        .unwrap();
                    req.insert(
                        "position".into(),
                        json!(chars.into_iter().collect::<String>()),
                    );
                }
                _ => {
                    req.insert("position".into(), json!(pos));
                }
            }
            if rng.random_bool(0.2) {
                let b = *["5x6", "8x8", "4x4", "9x9", "", "x"]
                    .choose(&mut rng)
                    .unwrap();
                req.insert("board".into(), json!(b));
            }
            match rng.random_range(0..6) {
                0 => {}
                1 => {
                    req.insert("rules".into(), json!("tunnelling,remote-collapse,hadamard"));
                }
                2 => {
                    req.insert("rules".into(), json!(["no-box", "deterministic"]));
                }
                3 => {
                    req.insert("rules".into(), json!(["quantum"]));
                }
                4 => {
                    req.insert("rules".into(), json!(7));
                }
                _ => {
                    req.insert("rules".into(), json!("tunnelling"));
                }
            }
            // A shadow game supplies moves that are often legal (its dice differ from the
            // request's, so later ones may be refused).
            let mut shadow = match (
                super::parse_position(req.get("position"), req.get("board")),
                super::parse_rules(req.get("rules")),
            ) {
                (Ok(p), Ok(r)) => Some(qchess_niels::Game::from_position(r, p)),
                _ => None,
            };
            let n = rng.random_range(0..6);
            let moves: Vec<String> = (0..n)
                .map(|_| {
                    let legal = shadow.as_ref().map(|g| g.legal_moves()).unwrap_or_default();
                    match (rng.random_range(0..10), legal.choose(&mut rng)) {
                        (0..6, Some(m)) => {
                            if let Some(g) = shadow.as_mut() {
                                g.play(m, &mut rng).unwrap();
                            }
                            m.to_string()
                        }
                        (0..9, _) => MOVES.choose(&mut rng).unwrap().to_string(),
                        _ => JUNK.choose(&mut rng).unwrap().to_string(),
                    }
                })
                .collect();
            if rng.random_bool(0.05) {
                req.insert("moves".into(), json!({"not": "an array"}));
            } else {
                req.insert("moves".into(), json!(moves));
            }
            let per_move = match rng.random_range(0..5) {
                0 => {
                    let r: Vec<u64> = (0..rng.random_range(0..4))
                        .map(|_| rng.random_range(0..8))
                        .collect();
                    req.insert("rolls".into(), json!(r));
                    false
                }
                1 => {
                    let r: Vec<Value> = (0..n)
                        .map(|_| match rng.random_range(0..3) {
                            0 => Value::Null,
                            _ => json!(
                                (0..rng.random_range(0..3))
                                    .map(|_| rng.random_range(1..7))
                                    .collect::<Vec<u64>>()
                            ),
                        })
                        .collect();
                    req.insert("rolls".into(), json!(r));
                    true
                }
                2 => {
                    req.insert("rolls".into(), json!("3"));
                    false
                }
                _ => false,
            };
            match rng.random_range(0..4) {
                0 => {
                    req.insert("seed".into(), json!(-1));
                }
                1 => {
                    req.insert("seed".into(), json!(rng.random::<u64>()));
                }
                _ => {}
            }
            if rng.random_bool(0.1) {
                req.insert("legal_moves".into(), json!(true));
            }
            let Ok(answer) = eval_req(&req) else {
                continue;
            };
            let reports = answer["moves"].as_array().unwrap();
            assert_eq!(reports.len(), moves.len(), "case {case}: {req:?}");
            let applied: Vec<bool> = reports.iter().map(|r| r["applied"] == true).collect();
            n_applied += applied.iter().filter(|a| **a).count();
            n_refused += applied.iter().filter(|a| !**a).count();
            for r in reports.iter().filter(|r| r["applied"] == false) {
                assert!(
                    r["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty())
                );
            }
            // The same request without the refused moves (and their roll entries).
            let mut kept = req.clone();
            let keep = |v: &[Value]| -> Vec<Value> {
                v.iter()
                    .zip(&applied)
                    .filter(|(_, a)| **a)
                    .map(|(x, _)| x.clone())
                    .collect()
            };
            kept.insert(
                "moves".into(),
                json!(keep(&req["moves"].as_array().unwrap().clone())),
            );
            if per_move {
                let mut rolls = req["rolls"].as_array().unwrap().clone();
                rolls.resize(moves.len(), Value::Null);
                kept.insert("rolls".into(), json!(keep(&rolls)));
            }
            let again = eval_req(&kept).unwrap();
            assert_eq!(
                again["position"], answer["position"],
                "case {case}: {req:?}"
            );
            assert_eq!(again["record"], answer["record"], "case {case}: {req:?}");
            assert!(
                again["moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|r| r["applied"] == true)
            );
        }
        // Both kinds were exercised (the generator is seeded, so these counts are fixed).
        assert!(
            n_applied >= 30 && n_refused >= 30,
            "{n_applied} {n_refused}"
        );
    }
}
