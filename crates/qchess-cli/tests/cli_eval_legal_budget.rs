//! Issue 10, Deliver 5: `qchess eval`'s `"legal_moves": true` (Cantwell) is decided within the
//! memory budget (`--memory`). Close to the budget the rules simulate candidates on copies of
//! the state; a copy that does not fit is the line's `state_too_large` error (bytes asked and
//! available), never an abort, and the next line is answered. With room, the list is the
//! reference's (`Game::legal_moves_reference`, computed here). A serialised position that
//! does not fit (the game's state with its start copy, or occupancy mode's copy of it) is
//! `state_too_large` at `position` likewise.

use crate::common;

use common::qchess_bytes;
use qchess_cantwell::Game;
use rand::SeedableRng;
use serde_json::Value;

const MOVES: [&str; 6] = ["g1^f3h3", "b8^a6c6", "b1^a3c3", "g8^f6h6", "e2e4", "e7e5"];

fn eval(args: &[&str], lines: &[String]) -> Vec<Value> {
    let mut full = vec!["eval"];
    full.extend_from_slice(args);
    let run = qchess_bytes(&full, lines.join("\n").as_bytes());
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

fn legal_request() -> String {
    let moves: Vec<String> = MOVES.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        "{{\"variant\": \"cantwell\", \"moves\": [{}], \"legal_moves\": true}}",
        moves.join(",")
    )
}

/// The reference list (the copy-and-simulate definition), none of the moves measures.
fn reference_legal_moves() -> Vec<String> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut game = Game::new();
    for m in MOVES {
        game.apply(m, &mut rng)
            .expect("the reference plays the move");
    }
    game.legal_moves_reference()
}

#[test]
fn legal_moves_over_the_budget_are_state_too_large_and_the_next_line_is_answered() {
    let next = r#"{"variant": "cantwell", "moves": ["e2e4"]}"#.to_string();
    // 2500 bytes: room for the six moves' states and pass buffers, not for a copy of the
    // state besides them.
    let v = eval(&["--memory", "2500"], &[legal_request(), next]);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["ok"], false, "{}", v[0]);
    let error = &v[0]["error"];
    assert_eq!(error["kind"], "state_too_large", "{error}");
    assert_eq!(error["at"], "legal_moves", "{error}");
    let message = error["message"].as_str().unwrap();
    // "... needs A bytes, the memory budget has B left ...": A > B.
    let numbers: Vec<usize> = message
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{message}");
    assert!(numbers[0] > numbers[1], "{message}");
    assert_eq!(v[1]["ok"], true, "{}", v[1]);
    assert_eq!(v[1]["history"], serde_json::json!(["e2e4"]));
    // With the default budget the same request lists the reference's moves.
    let free = eval(&[], &[legal_request()]);
    assert_eq!(free[0]["ok"], true, "{}", free[0]);
    let got: Vec<String> = free[0]["legal_moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, reference_legal_moves());
}

#[test]
fn a_position_over_the_budget_is_state_too_large_and_the_next_line_is_answered() {
    // The position after three splits (8 basis states), as eval writes it.
    let first = eval(
        &[],
        &[r#"{"variant": "cantwell", "moves": ["g1^f3h3", "b8^a6c6", "b1^a3c3"]}"#.to_string()],
    );
    let position = first[0]["position"].to_string();
    assert!(position.contains("amplitudes"), "{position}");
    let line = |mode: &str| {
        format!(
            r#"{{"variant": "cantwell", "mode": "{mode}", "position": {position}, "distribution_limit": 1}}"#
        )
    };
    let next = r#"{"variant": "cantwell", "moves": ["e2e4"]}"#.to_string();
    // 600 bytes: not even the game's state and its start copy; 1000: those, but not
    // occupancy mode's copy of the state besides them.
    for (memory, mode) in [("600", "game"), ("600", "occupancy"), ("1000", "occupancy")] {
        let v = eval(&["--memory", memory], &[line(mode), next.clone()]);
        assert_eq!(v[0]["ok"], false, "{memory} {mode}: {}", v[0]);
        assert_eq!(
            v[0]["error"]["kind"], "state_too_large",
            "{memory} {mode}: {}",
            v[0]
        );
        assert_eq!(v[0]["error"]["at"], "position", "{}", v[0]);
        assert_eq!(v[1]["ok"], true, "{}", v[1]);
    }
    // With the default budget both modes read it: 8 basis states.
    for mode in ["game", "occupancy"] {
        let v = eval(&[], &[line(mode)]);
        assert_eq!(v[0]["ok"], true, "{mode}: {}", v[0]);
        assert_eq!(v[0]["state_size"], 8, "{mode}: {}", v[0]);
    }
}
