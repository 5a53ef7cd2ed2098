//! `qchess match`: the JSON object from engine1's side, paired games with colours swapped and
//! the same seed, the PGN file, SPRT, and usage errors.

use serde_json::Value;

use crate::common;
use common::qchess_bytes;

#[test]
fn json_fields_are_engine1s_side_of_paired_games() {
    let pgn = std::env::temp_dir().join(format!("qchess-match-{}.pgn", std::process::id()));
    let run = qchess_bytes(
        &[
            "match",
            "--variant",
            "akl",
            "--engine1",
            "builtin:level=2",
            "--engine2",
            "random",
            "--games",
            "4",
            "--movetime",
            "20",
            "--seed",
            "9",
            "--concurrency",
            "2",
            "--json",
            "--pgn",
            pgn.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    let mut want = vec![
        "draws",
        "elo",
        "elo_error",
        "games",
        "losses",
        "results",
        "score",
        "wins",
    ];
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(v["games"], 4);
    let (w, d, l) = (
        v["wins"].as_u64().unwrap(),
        v["draws"].as_u64().unwrap(),
        v["losses"].as_u64().unwrap(),
    );
    assert_eq!(w + d + l, 4);
    assert_eq!(
        v["score"].as_f64().unwrap(),
        (w as f64 + d as f64 / 2.0) / 4.0
    );
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    for (i, r) in results.iter().enumerate() {
        // Pair k: same seed, engine1 White then Black.
        assert_eq!(r["seed"], 9 + (i / 2) as u64);
        assert_eq!(
            r["engine1_color"],
            if i % 2 == 0 { "white" } else { "black" }
        );
        let white_points = match r["result"].as_str().unwrap() {
            "1-0" => 1.0,
            "0-1" => 0.0,
            _ => 0.5,
        };
        let e1 = if i % 2 == 0 {
            white_points
        } else {
            1.0 - white_points
        };
        assert_eq!(r["score"].as_f64().unwrap(), e1);
    }
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Event \"qchess match\"]").count(), 4);
    assert!(
        text.contains("[White \"builtin:level=2\"]")
            && text.contains("[Black \"builtin:level=2\"]")
    );
    let _ = std::fs::remove_file(&pgn);
}

#[test]
fn text_output_with_sprt() {
    let run = qchess_bytes(
        &[
            "match",
            "--variant",
            "cantwell",
            "--engine1",
            "random",
            "--engine2",
            "random",
            "--games",
            "2",
            "--movetime",
            "5",
            "--sprt",
            "elo0=0",
            "elo1=10",
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("Elo difference: "), "{}", run.stdout);
    assert!(run.stdout.contains("SPRT: llr "), "{}", run.stdout);
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        vec![
            "match",
            "--variant",
            "chess",
            "--engine1",
            "random",
            "--engine2",
            "random",
        ],
        vec![
            "match",
            "--variant",
            "akl",
            "--engine1",
            "builtin:level=7",
            "--engine2",
            "random",
        ],
        vec![
            "match",
            "--variant",
            "akl",
            "--engine1",
            "cmd:./bot",
            "--engine2",
            "random",
        ],
        vec![
            "match",
            "--variant",
            "akl",
            "--engine1",
            "random",
            "--engine2",
            "random",
            "--tc",
            "x",
        ],
        vec![
            "match",
            "--variant",
            "niels",
            "--rules",
            "nonsense",
            "--engine1",
            "random",
            "--engine2",
            "random",
        ],
    ] {
        let run = qchess_bytes(&args, b"");
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.is_empty());
    }
}
