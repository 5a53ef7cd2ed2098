//! `--memory BYTES`: a move beyond the budget is refused with `state_too_large` (bytes asked
//! and available), leaves the game as it was, and the run goes on.

mod common;

use common::qchess_bytes;
use serde_json::Value;

fn eval(args: &[&str], lines: &[&str]) -> Vec<Value> {
    let input = lines.join("\n");
    let run = qchess_bytes(args, input.as_bytes());
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn eval_refuses_a_move_beyond_the_budget_and_leaves_the_game_unchanged() {
    let with = r#"{"moves":["g1^f3h3","b8^a6c6","b1^a3c3","g8^f6h6","f3^e5g5"]}"#;
    let without = r#"{"moves":["g1^f3h3","b8^a6c6","b1^a3c3","g8^f6h6"]}"#;
    let answers = eval(&["eval", "--memory", "3000"], &[with, without]);
    assert_eq!(answers.len(), 2);
    let refused = &answers[0]["moves"][4];
    assert_eq!(refused["applied"], false);
    let error = &refused["error"];
    assert_eq!(error["kind"], "state_too_large", "{refused}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("bytes"), "{message}");
    let applied: Vec<&Value> = (0..4).map(|i| &answers[0]["moves"][i]["applied"]).collect();
    assert!(applied.iter().all(|a| **a == true), "{applied:?}");
    // The refused move changed nothing: the same answer as the line without it.
    for field in [
        "probabilities",
        "distribution",
        "state_size",
        "side_to_move",
        "pieces",
    ] {
        assert_eq!(answers[0][field], answers[1][field], "{field}");
    }
    assert_eq!(answers[1]["state_size"], 16);
    // Without the budget the same move is played.
    let free = eval(&["eval"], &[with]);
    assert_eq!(free[0]["moves"][4]["applied"], true);
    assert!(free[0]["state_size"].as_u64().unwrap() > 16);
}

#[test]
fn occupancy_mode_reports_state_too_large() {
    let line = r#"{"mode":"occupancy","position":{"pieces":{"a1":"?","c1":"?","e1":"?","g1":"?"}},"moves":["a1^a2b1:SPLIT_JUMP:BASIC","c1^c2d1:SPLIT_JUMP:BASIC","e1^e2f1:SPLIT_JUMP:BASIC","g1^g2h1:SPLIT_JUMP:BASIC"]}"#;
    // 8 entries after three splits hold 192 bytes; the fourth split (in place since the
    // sqrt-iSwap kernel grows the state where it stands) asks 192 more, over a 400-byte budget.
    let answers = eval(&["eval", "--memory", "400"], &[line, line]);
    for a in &answers {
        let kinds: Vec<&str> = a["moves"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["error"]["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"state_too_large"), "{a}");
    }
    assert_eq!(answers[0], answers[1]);
}

#[test]
fn bench_sim_beyond_the_budget_is_a_clean_error() {
    let run = qchess_bytes(
        &[
            "bench", "sim", "--op", "split", "--states", "1000000", "--memory", "1000000",
        ],
        b"",
    );
    assert_ne!(run.code, Some(0));
    assert!(run.code.is_some(), "killed by a signal: {}", run.stderr);
    assert!(run.stderr.contains("state too large"), "{}", run.stderr);
}

#[test]
fn bench_sim_slide_runs() {
    let run = qchess_bytes(
        &[
            "bench", "sim", "--op", "slide", "--states", "1000", "--json",
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v: Value = serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(v["op"], "slide");
    assert_eq!(v["states"], 1000);
}
