//! `qchess eval` for `"variant": "akl"`. Owned by the qchess-akl work.
//!
//! Request fields:
//! * `"position"`: `"startpos"` (default: the standard start, secondary types drawn from the
//!   seed) or an AKL-FEN string (docs/akl.md, "Position text").
//! * `"moves"`: turn entries in the bra-ket notation, applied in order: `"<P|e2> -> e4"`,
//!   `"f2 -> f3"` (collapse inferred from the move; also written `"f2f3"`, `"f2-f3"`,
//!   `"f2 f3"`, promotions `"e7e8q"` or `"e7e8=Q"`, as `qchess play` takes them), `"<Q|d1>"`
//!   (touch only). A bare touch of a
//!   quantum piece, `"g1"`, collapses at random; when the piece can move, the next entry may
//!   finish the turn with its destination alone: `"-> f3"`, or the rules text's `"|psi> -> e5"`
//!   (the piece ends on e5 in superposition). A refused entry is reported with
//!   `"applied": false` and its error, changes nothing, and the next entry is still tried.
//! * `"seed"`: seed of the set-up and of every unrecorded collapse (ChaCha8), default 0. One
//!   stream serves both, set-up first.
//! * `"visibility"`: `"revealed"` (default) or `"own-pairs"`.
//!
//! Answer: `moves` (one `{"move", "applied", "outcome", "notation", "error"}` each), `pieces`
//! (square -> `{"color", "types", "quantum", "type", "known"}`: the truth), `views`
//! (`"white"` / `"black"` -> square -> `{"color", "quantum", "type", "known", "pair"}`, where
//! `pair` is both types, primary first, when that player knows them, else null), `pending`
//! (the touched piece waiting to move, or null), `position` (AKL-FEN), `record` (the game
//! record), `quiet_plies`, `side_to_move` (`"w"` / `"b"`), `status` and `reason`.

use super::frame::{MoveReport, ReasonCode, Refusal};
use super::{Answer, EvalError, Request};
use qchess_akl::{
    AklError, AklPosition, Game, PieceState, PlayerView, Rules, Style, TouchResult, TurnEntry,
    Visibility, attacks_of, parse_destination,
};
use qchess_board::{Bitboard, Color, Fraction, PieceKind, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

/// Evaluates one request object of this variant; the frame adds `"ok": true`.
pub fn eval(request: Request) -> Result<Answer, EvalError> {
    let seed = request.seed()?;
    // The position object (an earlier answer's `position_json`) may name the visibility;
    // the request's own field wins.
    let object = match request.get("position") {
        Some(Value::Object(o)) => Some(o),
        _ => None,
    };
    let object_visibility = object
        .and_then(|o| o.get("visibility"))
        .and_then(Value::as_str);
    let visibility = match request.get("visibility").is_some() {
        true => request.choice("visibility", &["revealed", "own-pairs"])?,
        false => match object_visibility {
            None => "revealed",
            Some(v @ ("revealed" | "own-pairs")) => v,
            Some(_) => {
                return Err(EvalError::new(
                    "position",
                    "\"position\".\"visibility\" must be \"revealed\" or \"own-pairs\"",
                )
                .at("position.visibility"));
            }
        },
    };
    let visibility = match visibility {
        "revealed" => Visibility::Revealed,
        _ => Visibility::OwnPairs,
    };
    let moves = request.moves()?;
    let legal_moves = request.flag("legal_moves")?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let bad_position = || {
        EvalError::new(
            "position",
            "\"position\" must be \"startpos\", an AKL-FEN string or an object \
             {\"fen\", \"visibility\", \"pending\"} (an answer's \"position_json\")",
        )
        .at("position")
    };
    let (text, pending) = match request.get("position") {
        None => (None, None),
        Some(Value::String(s)) => (Some(s.as_str()), None),
        Some(Value::Object(o)) => {
            let fen = o
                .get("fen")
                .and_then(Value::as_str)
                .ok_or_else(bad_position)?;
            let pending = match o.get("pending") {
                None | Some(Value::Null) => None,
                Some(Value::String(sq)) => Some(sq.parse::<Square>().map_err(|_| {
                    EvalError::new("position", format!("\"pending\" is not a square: {sq:?}"))
                        .at("position.pending")
                })?),
                Some(_) => return Err(bad_position().at("position.pending")),
            };
            (Some(fen), pending)
        }
        Some(_) => return Err(bad_position()),
    };
    // A true position, or a player's view with unseen types left out (drawn from the seed):
    // then the chances an answer gives are the ones that view implies (`viewer`).
    let (position, viewer) = match text {
        None | Some("startpos") => (AklPosition::startpos_random(&mut rng), None),
        Some(s) => match AklPosition::parse(s) {
            Ok(p) => (p, None),
            Err(e) => {
                let p = AklPosition::parse_view(s, visibility, &mut rng)
                    .map_err(|_| EvalError::new("position", e.to_string()).at("position"))?;
                let side = p.side_to_move;
                (p, Some(side))
            }
        },
    };
    let mut game = Game::with_rules(position, Rules { visibility });
    if let Some(sq) = pending {
        // The piece was touched and is classical now: touching it again draws nothing.
        game.touch_forced(sq, None).map_err(|e| {
            EvalError::new("position", format!("\"pending\": {e}")).at("position.pending")
        })?;
    }
    let reports: Vec<Value> = moves
        .iter()
        .map(|m| apply_one(&mut game, m, &mut rng, viewer))
        .collect();
    let mut out = Answer::new();
    out.insert("moves", reports);
    out.insert("pieces", true_pieces(&game));
    out.insert(
        "views",
        json!({
            "white": view_json(&game.view(Color::White)),
            "black": view_json(&game.view(Color::Black)),
        }),
    );
    out.insert(
        "pending",
        match game.pending_touch() {
            None => Value::Null,
            Some((sq, kind, moves)) => json!({
                "square": sq.to_string(),
                "type": qchess_web::wire::akl_letter(kind),
                "legal_moves": moves.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            }),
        },
    );
    if legal_moves {
        out.insert("legal_moves", legal_entries(&game));
    }
    out.insert("position", game.position().to_string());
    out.insert(
        "position_json",
        json!({
            "fen": game.position().to_string(),
            "visibility": match visibility {
                Visibility::Revealed => "revealed",
                Visibility::OwnPairs => "own-pairs",
            },
            "pending": game.pending_touch().map(|(sq, _, _)| sq.to_string()),
        }),
    );
    out.insert("record", game.record().to_text(Style::Ascii));
    out.insert("quiet_plies", game.position().quiet_plies);
    out.insert("side_to_move", game.side_to_move().fen_char().to_string());
    out.insert("status", game.status().name());
    out.insert(
        "reason",
        game.status().reason().map_or(Value::Null, Value::from),
    );
    Ok(out)
}

/// The side to move's legal entries as text `"moves"` accepts: whole turns
/// (`"<N|b1> -> c3"`, `"e1 -> d1"`, a touch alone such as `"<Q|d1>"`), or, while a touch is
/// pending, the touched piece's destinations (`"-> c3"`).
fn legal_entries(game: &Game) -> Vec<String> {
    let pending = game.pending_touch().is_some();
    game.legal_entries()
        .iter()
        .map(|e| {
            let text = e.to_string();
            match (pending, text.find("->")) {
                (true, Some(i)) => text[i..].to_string(),
                _ => text,
            }
        })
        .collect()
}

/// Applies one entry string and reports it. A refused entry changes nothing, the random
/// stream included: an entry may draw a capture's collapse before it is found wrong.
fn apply_one(game: &mut Game, text: &str, rng: &mut ChaCha8Rng, viewer: Option<Color>) -> Value {
    let saved_rng = rng.clone();
    let result = apply_entry_text(game, text, rng, viewer);
    if result.is_err() {
        *rng = saved_rng;
    }
    match result {
        Ok((outcome, notation)) => MoveReport::applied(text, outcome, notation),
        Err(e) => MoveReport::refused(text, &refusal(game, &e)),
    }
    .into_value()
}

fn apply_entry_text(
    game: &mut Game,
    text: &str,
    rng: &mut ChaCha8Rng,
    viewer: Option<Color>,
) -> Result<(Value, Value), AklError> {
    let trimmed = text.trim_start();
    // A destination alone finishes a pending touch: `-> f3`, or the rules text's `|psi> -> e5`
    // (no entry starts with `|`).
    let entry = if trimmed.starts_with("->") || trimmed.starts_with('→') || trimmed.starts_with('|')
    {
        let dest = parse_destination(text)?;
        let (from, _, _) = game.pending_touch().ok_or(AklError::NothingTouched)?;
        TurnEntry {
            from,
            collapse: None,
            dest: Some(dest),
            check: false,
        }
    } else {
        text.parse::<TurnEntry>()?
    };
    // The pieces as they stand before the entry: what a touch and a capture can reveal, with
    // the chances the truth gives (or, for a request that sent a view, the view implies).
    let touched = game.position().piece(entry.from).copied();
    let chances_at = |sq: Square| -> Option<Vec<(PieceKind, Fraction)>> {
        let piece = game.position().piece(sq)?;
        Some(match viewer {
            Some(v) => game
                .position()
                .collapse_chances_seen_by(sq, v, game.rules().visibility),
            None => piece.collapse_chances(),
        })
    };
    let touched_chances = chances_at(entry.from);
    let target_chances = entry.dest.and_then(|d| chances_at(d.to));
    let chances = |outcome: Value, collapse: Option<PieceKind>, captured: Option<PieceKind>| {
        with_probabilities(
            outcome,
            touched_chances.as_deref(),
            collapse,
            target_chances.as_deref(),
            captured,
        )
    };
    let pending_here = game
        .pending_touch()
        .is_some_and(|(sq, _, _)| sq == entry.from);
    if entry.dest.is_none() && !pending_here {
        // A touch alone: it may end the turn, or leave the piece waiting for its move.
        let piece = game.position().piece(entry.from).copied();
        let out = match (entry.collapse, piece.is_some_and(|p| p.is_quantum())) {
            (None, true) => game.touch(entry.from, rng)?,
            (collapse, _) => game.touch_forced(entry.from, collapse)?,
        };
        return Ok(match out.result {
            TouchResult::MustMove(moves) => (
                chances(
                    json!({
                        "turn": "awaiting_move",
                        "collapse": out.collapsed.map(qchess_web::wire::akl_letter),
                        "type": qchess_web::wire::akl_letter(out.kind),
                        "legal_moves": moves.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
                    }),
                    Some(out.kind),
                    None,
                ),
                Value::Null,
            ),
            _ => {
                let done = *game.history().last().expect("the touch ended the turn");
                (
                    chances(qchess_web::wire::akl_turn(&done), Some(out.kind), None),
                    Value::String(done.to_string()),
                )
            }
        });
    }
    let done = game.apply_entry(&entry, Some(rng))?;
    // The type the touched piece has now: its collapse, or the type it already had.
    let kind = done.collapse.or_else(|| touched.and_then(|p| p.current()));
    let captured = done.dest.and_then(|d| d.capture).map(|c| c.captured);
    Ok((
        chances(qchess_web::wire::akl_turn(&done), kind, captured),
        Value::String(done.to_string()),
    ))
}

/// Adds the entry's chances to its outcome: `collapse_probabilities` of the touched piece
/// (each type it could have been revealed as), `captured_probabilities` when a capture
/// revealed the captured piece's type, and `probability`, the chance of what happened (the
/// product of the two), each with its exact twin (`_exact`, a fraction string).
fn with_probabilities(
    mut outcome: Value,
    touched: Option<&[(PieceKind, Fraction)]>,
    collapse: Option<PieceKind>,
    target: Option<&[(PieceKind, Fraction)]>,
    captured: Option<PieceKind>,
) -> Value {
    let chance_of = |chances: Option<&[(PieceKind, Fraction)]>, kind: Option<PieceKind>| match (
        chances, kind,
    ) {
        (Some(list), Some(k)) => list
            .iter()
            .find(|(t, _)| *t == k)
            .map_or(Fraction::ZERO, |(_, c)| *c),
        _ => Fraction::ONE,
    };
    let mut probability = chance_of(touched, collapse);
    let Value::Object(map) = &mut outcome else {
        return outcome;
    };
    if let Some(list) = touched {
        let (floats, exact) = chance_maps(list);
        map.insert("collapse_probabilities".into(), floats);
        map.insert("collapse_probabilities_exact".into(), exact);
    }
    if let (Some(list), Some(_)) = (target, captured) {
        let (floats, exact) = chance_maps(list);
        map.insert("captured_probabilities".into(), floats);
        map.insert("captured_probabilities_exact".into(), exact);
        probability = probability * chance_of(target, captured);
    }
    map.insert("probability".into(), json!(probability.to_f64()));
    map.insert("probability_exact".into(), json!(probability.to_string()));
    outcome
}

/// Collapse chances as `{"N": 0.5, ...}` and `{"N": "1/2", ...}`.
fn chance_maps(chances: &[(PieceKind, Fraction)]) -> (Value, Value) {
    let (mut floats, mut exact) = (Map::new(), Map::new());
    for (kind, c) in chances {
        floats.insert(qchess_web::wire::akl_letter(*kind), json!(c.to_f64()));
        exact.insert(qchess_web::wire::akl_letter(*kind), json!(c.to_string()));
    }
    (Value::Object(floats), Value::Object(exact))
}

/// The refusal of an entry the game rejected, with its stable reason code.
fn refusal(game: &Game, e: &AklError) -> Refusal {
    let r = Refusal::new(e.kind(), reason_code(game, e), e.to_string());
    match e {
        AklError::Notation { at, .. } => r.at_column(*at),
        _ => r,
    }
}

fn reason_code(game: &Game, e: &AklError) -> ReasonCode {
    match e {
        AklError::GameOver => ReasonCode::GameOver,
        AklError::TouchPending { .. } | AklError::NothingTouched => ReasonCode::TouchMove,
        AklError::EmptySquare { .. } => ReasonCode::NoPiece,
        AklError::NotYourPiece { .. } => ReasonCode::WrongColour,
        AklError::ImpossibleCollapse { .. }
        | AklError::NotQuantum { .. }
        | AklError::CollapseNotRecorded { .. } => ReasonCode::OutcomeImpossible,
        AklError::EntryMismatch { .. } => ReasonCode::EntryMismatch,
        AklError::Notation { .. } => ReasonCode::ParseError,
        AklError::IllegalMove { mv, reason } => {
            if reason.contains("it must be the one to move") {
                ReasonCode::TouchMove
            } else {
                illegal_code(game, mv)
            }
        }
        AklError::Position { .. } | AklError::Record { .. } | AklError::Replay { .. } => {
            ReasonCode::Other
        }
    }
}

/// Why a move `mv` (UCI form) the piece cannot make is refused: its target holds a piece of
/// the mover's side, a piece stands in the way, or the piece does not move that way.
fn illegal_code(game: &Game, mv: &str) -> ReasonCode {
    let (Some(from), Some(to)) = (
        mv.get(0..2).and_then(|s| s.parse::<Square>().ok()),
        mv.get(2..4).and_then(|s| s.parse::<Square>().ok()),
    ) else {
        return ReasonCode::NotAMoveOfThisPiece;
    };
    let pos = game.position();
    let Some(mover) = pos.piece(from) else {
        return ReasonCode::NotAMoveOfThisPiece;
    };
    if pos.piece(to).is_some_and(|p| p.color == mover.color) {
        return ReasonCode::TargetOccupiedByOwn;
    }
    // The piece's type now (touched pieces are collapsed); a quantum piece: either type.
    let kinds: Vec<PieceKind> = match mover.state {
        PieceState::Classical(k) => vec![k],
        PieceState::Quantum => mover.pair.types().into_iter().collect(),
    };
    let reach = |occupied| {
        kinds
            .iter()
            .any(|k| attacks_of(*k, mover.color, from, occupied).contains(to))
    };
    if reach(Bitboard::EMPTY) && !reach(pos.occupied()) {
        ReasonCode::PathBlocked
    } else {
        ReasonCode::NotAMoveOfThisPiece
    }
}

fn color_letter(c: Color) -> String {
    c.fen_char().to_string()
}

fn state_fields(state: PieceState) -> (bool, Value) {
    match state {
        PieceState::Quantum => (true, Value::Null),
        PieceState::Classical(k) => (false, Value::String(qchess_web::wire::akl_letter(k))),
    }
}

fn true_pieces(game: &Game) -> Value {
    let mut map = Map::new();
    for (sq, p) in game.position().pieces() {
        let (quantum, current) = state_fields(p.state);
        let types: Vec<String> = if p.is_king() {
            vec![qchess_web::wire::akl_letter(PieceKind::King)]
        } else {
            p.pair
                .types()
                .into_iter()
                .map(qchess_web::wire::akl_letter)
                .collect()
        };
        map.insert(
            sq.to_string(),
            json!({"color": color_letter(p.color), "types": types, "quantum": quantum,
                   "type": current, "known": qchess_web::wire::akl_letters(p.known)}),
        );
    }
    Value::Object(map)
}

fn view_json(view: &PlayerView) -> Value {
    let mut map = Map::new();
    for p in &view.pieces {
        let (quantum, current) = state_fields(p.state);
        let pair = p.pair.map(|pair| {
            vec![
                qchess_web::wire::akl_letter(pair.primary),
                qchess_web::wire::akl_letter(pair.secondary),
            ]
        });
        map.insert(
            p.square.to_string(),
            json!({"color": color_letter(p.color), "quantum": quantum, "type": current,
                   "known": qchess_web::wire::akl_letters(p.known), "pair": pair}),
        );
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> Value {
        let Value::Object(req) = serde_json::from_str(line).unwrap() else {
            panic!()
        };
        eval_req(&req).unwrap()
    }

    /// `eval` on a request object, as the frame calls it.
    fn eval_req(req: &Map<String, Value>) -> Result<Value, EvalError> {
        let ctx = super::super::Context::default();
        eval(Request::new(req, &ctx)).map(Answer::into_value)
    }

    #[test]
    fn plain_moves_read_as_in_qchess_play() {
        // `e2e4`, `e2-e4` and `e2 e4` are the arrow form `e2 -> e4` (collapse inferred): the
        // same answer for the same seed, the record in the canonical notation.
        let arrow = run(r#"{"variant": "akl", "seed": 5, "moves": ["e2 -> e4", "g8 -> f6"]}"#);
        assert_eq!(arrow["moves"][0]["applied"], true);
        for (white, black) in [("e2e4", "g8f6"), ("e2-e4", "g8 f6")] {
            let plain = run(&format!(
                r#"{{"variant": "akl", "seed": 5, "moves": ["{white}", "{black}"]}}"#
            ));
            assert_eq!(plain["moves"][0]["notation"], arrow["moves"][0]["notation"]);
            assert_eq!(plain["record"], arrow["record"], "{white} {black}");
            assert_eq!(plain["position"], arrow["position"]);
        }
    }

    #[test]
    fn fools_mate_in_the_texts_notation() {
        let v = run(r#"{"variant": "akl", "position": "startpos", "seed": 3,
                "moves": ["f2 -> f3", "e7 -> e5", "g2 -> g4", "⟨Q|d8⟩ → h4#"]}"#);
        let notations: Vec<&str> = (0..4)
            .map(|i| v["moves"][i]["notation"].as_str().unwrap())
            .collect();
        assert_eq!(
            notations,
            [
                "<P|f2> -> f3",
                "<P|e7> -> e5|psi>",
                "<P|g2> -> g4",
                "<Q|d8> -> h4|psi>"
            ]
        );
        assert_eq!(v["pieces"]["h4"]["quantum"], true);
        assert_eq!(v["pieces"]["h4"]["types"][0], "Q");
        assert_eq!(v["pieces"]["f3"]["type"], "P");
        assert_eq!(v["side_to_move"], "w");
        assert_eq!(v["status"], "ongoing");
        assert_eq!(v["quiet_plies"], 1);
        // The views show the queen piece as known only to be a queen (its other type is
        // secret), and the same seed gives the same answer.
        assert_eq!(v["views"]["white"]["h4"]["known"], json!(["Q"]));
        let ascii = run(
            r#"{"variant": "akl", "seed": 3, "moves": ["f2 -> f3", "e7 -> e5", "g2 -> g4", "<Q|d8> -> h4"]}"#,
        );
        for field in ["pieces", "views", "position", "record"] {
            assert_eq!(v[field], ascii[field], "{field}");
        }
    }

    #[test]
    fn touch_then_destination_and_refused_entries() {
        let v = run(
            r#"{"variant": "akl", "position": "4k3/8/8/8/8/8/8/1(NN)2K3 w - 0 1",
                "moves": ["b1", "-> zz", "-> c3", "e8 -> e9", "<Q|e8>", "<K|e8>", "e8 -> d8"]}"#,
        );
        let m = &v["moves"];
        assert_eq!(m[0]["applied"], true);
        assert_eq!(m[0]["outcome"]["turn"], "awaiting_move");
        assert_eq!(m[0]["outcome"]["collapse"], "N");
        assert_eq!(
            m[0]["outcome"]["legal_moves"],
            json!(["b1d2", "b1a3", "b1c3"])
        );
        assert_eq!(m[1]["applied"], false);
        assert_eq!(m[1]["error"]["kind"], "notation");
        assert_eq!(m[1]["error"]["at"]["column"], 3);
        assert_eq!(m[2]["applied"], true);
        assert_eq!(m[2]["notation"], "<N|b1> -> c3|psi>", "c3 is dark");
        assert_eq!(m[3]["error"]["kind"], "notation");
        assert_eq!(
            m[4]["error"]["kind"], "impossible_outcome",
            "the king is classical"
        );
        assert_eq!(m[5]["error"]["kind"], "notation", "a king never collapses");
        assert_eq!(m[6]["applied"], true);
        assert_eq!(v["pieces"]["c3"]["quantum"], true);
        assert_eq!(v["pieces"]["d8"]["type"], "K");
        assert_eq!(v["side_to_move"], "w");
    }

    #[test]
    fn refused_entries_change_nothing() {
        // The same game with refused entries interleaved ends in the same state.
        let clean =
            run(r#"{"variant": "akl", "seed": 8, "moves": ["f2 -> f3", "e7 -> e5", "<Q|d1>"]}"#);
        let noisy = run(
            r#"{"variant": "akl", "seed": 8, "moves": ["e4", "f2 -> f5", "f2 -> f3", "e2 -> e4",
                "<K|e8>", "<N|e7> -> e5", "e7 -> e5", "<Q|d1> -> d2", "<Q|d1>"]}"#,
        );
        let applied: Vec<bool> = (0..9)
            .map(|i| noisy["moves"][i]["applied"].as_bool().unwrap())
            .collect();
        assert_eq!(
            applied,
            [false, false, true, false, false, false, true, false, true]
        );
        let kinds: Vec<&str> = [0, 1, 3, 4, 5, 7]
            .iter()
            .map(|&i| noisy["moves"][i]["error"]["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "illegal_move",
                "illegal_move",
                "illegal_move",
                "notation",
                "impossible_outcome",
                "entry_mismatch"
            ]
        );
        for field in [
            "pieces",
            "views",
            "position",
            "record",
            "side_to_move",
            "quiet_plies",
        ] {
            assert_eq!(clean[field], noisy[field], "{field}");
        }
    }

    #[test]
    fn a_refused_entry_does_not_use_up_randomness() {
        // `d1 -> d5|psi>` draws the capture's collapse, then is refused (d5 is light). The
        // next entry must draw the same collapse as without the refused one, for every seed.
        let fen = "4k3/8/8/3(pq?)4/8/8/8/3[R*R]K3 w - 0 1";
        for seed in 0..16 {
            let clean = run(&format!(
                r#"{{"variant": "akl", "seed": {seed}, "position": "{fen}", "moves": ["d1 -> d5"]}}"#
            ));
            let noisy = run(&format!(
                r#"{{"variant": "akl", "seed": {seed}, "position": "{fen}",
                    "moves": ["d1 -> d5|psi>", "d1 -> d5"]}}"#
            ));
            assert_eq!(noisy["moves"][0]["error"]["kind"], "entry_mismatch");
            assert_eq!(clean["moves"][0]["notation"], noisy["moves"][1]["notation"]);
            assert_eq!(clean["record"], noisy["record"], "seed {seed}");
        }
    }

    /// A random request: real and mutated entries of a random game, bare touches and
    /// destinations, odd field values.
    fn random_request(rng: &mut ChaCha8Rng) -> Value {
        use qchess_akl::RandomMover;
        use rand::Rng;
        let game_seed = rng.random_range(0..1000u64);
        let mut game_rng = ChaCha8Rng::seed_from_u64(game_seed);
        let mut game = Game::new_random(&mut game_rng);
        for _ in 0..rng.random_range(0..40) {
            if game.status() != qchess_akl::GameStatus::Ongoing {
                break;
            }
            RandomMover.play_turn(&mut game, &mut game_rng).unwrap();
        }
        const ODD: [&str; 14] = [
            "g1",
            "-> f3",
            "→ c3",
            "<Q|d1>",
            "e1 -> g1",
            "e2",
            "-> e4",
            "",
            "->",
            "<P|e7> -> e8=Q",
            "|psi> -> e5",
            "d1 -> <R|Q>d5",
            "⟨ψ|ψ⟩",
            "e7 -> e8=P|psi>_prom",
        ];
        const CHARS: &str = "abcdefgh12345678<>|-=+#_PNBRQKpnbrqk→⟨⟩ψ ";
        let mut moves = Vec::new();
        for e in game.history() {
            let mut text = e.to_string();
            if rng.random_bool(0.2) {
                let mut chars: Vec<char> = text.chars().collect();
                let i = rng.random_range(0..chars.len());
                let c = CHARS
                    .chars()
                    .nth(rng.random_range(0..CHARS.chars().count()));
                chars[i] = c.unwrap();
                text = chars.into_iter().collect();
            }
            moves.push(Value::String(text));
            if rng.random_bool(0.15) {
                moves.push(Value::String(ODD[rng.random_range(0..ODD.len())].into()));
            }
        }
        let mut req = Map::new();
        req.insert("variant".into(), json!("akl"));
        let seed = match rng.random_range(0..6) {
            0 => json!(-3),
            1 => json!(1.5),
            2 => json!("7"),
            3 => json!(u64::MAX),
            _ => json!(game_seed),
        };
        req.insert("seed".into(), seed);
        let fen = game.position().to_string();
        let position = match rng.random_range(0..6) {
            0 => json!("startpos"),
            1 => json!(fen),
            2 => json!(fen.replacen('/', "", 1)),
            3 => json!(null),
            _ => json!(game.start_position().to_string()),
        };
        req.insert("position".into(), position);
        req.insert(
            "moves".into(),
            if rng.random_bool(0.05) {
                json!({"a": 1})
            } else {
                Value::Array(moves)
            },
        );
        if rng.random_bool(0.2) {
            req.insert(
                "visibility".into(),
                [json!("own-pairs"), json!("revealed"), json!("x"), json!(3)]
                    [rng.random_range(0..4)]
                .clone(),
            );
        }
        Value::Object(req)
    }

    #[test]
    fn random_requests_never_panic_and_refused_entries_change_nothing() {
        // Every answer is the same as that of the request with only its applied entries.
        let mut rng = ChaCha8Rng::seed_from_u64(2026);
        let mut refused = 0;
        for _ in 0..300 {
            let Value::Object(req) = random_request(&mut rng) else {
                unreachable!()
            };
            let Ok(out) = eval_req(&req) else { continue };
            let applied: Vec<Value> = out["moves"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["applied"] == true)
                .map(|m| m["move"].clone())
                .collect();
            refused += out["moves"].as_array().unwrap().len() - applied.len();
            let mut clean = req.clone();
            clean.insert("moves".into(), Value::Array(applied));
            let again = eval_req(&clean).unwrap();
            for field in ["pieces", "views", "pending", "position", "record", "status"] {
                assert_eq!(out[field], again[field], "{field} of {req:?}");
            }
        }
        assert!(
            refused > 50,
            "only {refused} refused entries: the test is too tame"
        );
    }

    #[test]
    fn the_texts_sourceless_ket_finishes_a_touch() {
        // `|psi> -> e5`: the touched piece goes to e5 and ends in superposition (dark e5).
        let v = run(
            r#"{"variant": "akl", "position": "4k3/4(pn?)3/8/8/8/8/8/4K3 b - 0 1",
                "moves": ["<P|e7>", "|psi> -> e6", "|ψ⟩ → e5"]}"#,
        );
        assert_eq!(
            v["moves"][1]["error"]["kind"], "entry_mismatch",
            "e6 is light"
        );
        assert_eq!(v["moves"][2]["notation"], "<P|e7> -> e5|psi>");
        assert_eq!(v["pieces"]["e5"]["quantum"], true);
    }

    #[test]
    fn bad_requests_are_errors() {
        for (line, kind, at) in [
            (r#"{"variant": "akl", "seed": -1}"#, "request", "seed"),
            (r#"{"variant": "akl", "moves": "e2e4"}"#, "request", "moves"),
            (r#"{"variant": "akl", "moves": [3]}"#, "request", "moves[0]"),
            (
                r#"{"variant": "akl", "position": "8/8 w"}"#,
                "position",
                "position",
            ),
            (
                r#"{"variant": "akl", "position": 5}"#,
                "position",
                "position",
            ),
            (
                r#"{"variant": "akl", "visibility": "all"}"#,
                "request",
                "visibility",
            ),
        ] {
            let Value::Object(req) = serde_json::from_str(line).unwrap() else {
                panic!()
            };
            let err = eval_req(&req).unwrap_err();
            assert_eq!(
                (err.kind.as_str(), err.at.as_str().unwrap()),
                (kind, at),
                "{line}"
            );
        }
    }

    #[test]
    fn own_pairs_views_differ_between_players() {
        let v = run(r#"{"variant": "akl", "seed": 9, "visibility": "own-pairs"}"#);
        let truth = &v["pieces"]["b1"]["types"];
        let mut pair: Vec<String> = truth
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .collect();
        pair.sort_by_key(|l| "PNBRQK".find(l.as_str()));
        pair.dedup();
        assert_eq!(v["views"]["white"]["b1"]["known"], json!(pair));
        assert_eq!(v["views"]["black"]["b1"]["known"], json!(["N"]));
        assert_eq!(v["views"]["white"]["b1"]["pair"], *truth);
        assert_eq!(v["views"]["black"]["b1"]["pair"], Value::Null);
    }

    #[test]
    fn a_king_capture_ends_the_game() {
        let v = run(
            r#"{"variant": "akl", "position": "3[r*r]k3/8/8/8/8/8/8/4K3 w - 0 1",
                "moves": ["e1 -> d1", "d8 -> <R|K>d1", "e8 -> e7"]}"#,
        );
        assert_eq!(v["moves"][1]["outcome"]["captured"], "K");
        assert_eq!(v["status"], "black_wins");
        assert_eq!(v["reason"], "king_captured");
        assert_eq!(v["moves"][2]["error"]["kind"], "game_over");
    }
}
