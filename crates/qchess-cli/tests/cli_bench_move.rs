//! `qchess bench move`: for every kind, the binary prints one JSON line with the contract's
//! fields and sane values, and the move it timed really is of that kind. The test checks that
//! with the library, independently of the binary: it replays the set-up moves the JSON lists
//! from its start FEN with `Game::apply`, compares the state size, and classifies the timed
//! move in the replayed game (`Game::classify`), with the superposition each kind needs read
//! from the replayed game's square probabilities. No timing is asserted.

use crate::common;

use qchess_board::Square;
use qchess_cantwell::Game;
use qchess_cantwell::circuit::{MoveType, Variant};
use rand::SeedableRng;
use serde_json::Value;

const N: u64 = 1000;

fn run(kind: &str, extra: &[&str]) -> Value {
    let states = N.to_string();
    let mut args = vec![
        "bench", "move", "--kind", kind, "--states", &states, "--json",
    ];
    args.extend_from_slice(extra);
    let out = common::qchess_bytes(&args, b"");
    assert_eq!(out.code, Some(0), "{kind}: {}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{kind}: one JSON line: {}", out.stdout);
    serde_json::from_str(lines[0]).expect("a JSON line")
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

/// The game the JSON's set-up moves lead to, replayed with the library.
fn replay(v: &Value) -> Game {
    let mut game = Game::from_fen(v["start_fen"].as_str().unwrap()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    for mv in v["setup"].as_array().unwrap() {
        game.apply(mv.as_str().unwrap(), &mut rng).unwrap();
    }
    game
}

fn strictly_between(p: f64) -> bool {
    p > 1e-9 && p < 1.0 - 1e-9
}

/// The fields of the contract, in order, with sane values; returns the replayed game.
fn check_fields(kind: &str, v: &Value) -> Game {
    let obj = v.as_object().expect("an object");
    let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    for field in [
        "kind",
        "states",
        "seconds",
        "gate_seconds",
        "peak_bytes",
        "state_bytes",
    ] {
        assert!(keys.contains(&field), "{kind}: no {field} in {v}");
    }
    assert_eq!(v["kind"], kind);
    assert!(v["adaptive_threads"].is_boolean(), "{kind}: {v}");
    assert!(v["pin_threads"].is_boolean(), "{kind}: {v}");
    let states = v["states"].as_u64().unwrap();
    assert!(states >= N, "{kind}: {states} states");
    assert!(v["seconds"].as_f64().unwrap() > 0.0, "{kind}: {v}");
    assert!(v["gate_seconds"].as_f64().unwrap() > 0.0, "{kind}: {v}");
    let state_bytes = v["state_bytes"].as_u64().unwrap();
    // Every basis state takes at least a key (8 bytes) and an f64 complex amplitude (16).
    assert!(state_bytes >= 24 * states, "{kind}: {v}");
    assert!(
        v["peak_bytes"].as_u64().unwrap() >= state_bytes,
        "{kind}: {v}"
    );
    let game = replay(v);
    assert_eq!(game.state_size() as u64, states, "{kind}: replayed size");
    assert_eq!(
        game.fen(),
        v["fen"].as_str().unwrap(),
        "{kind}: replayed layer"
    );
    assert_eq!(game.side_to_move(), qchess_board::Color::White);
    game
}

/// The timed move's type and variant, from the library on the replayed game.
fn classified(game: &Game, mv: &str) -> (MoveType, Variant) {
    let c = game.classify(mv).unwrap();
    (c.move_type, c.variant)
}

#[test]
fn jump_is_a_basic_jump_of_a_classical_piece() {
    let v = run("jump", &[]);
    let game = check_fields("jump", &v);
    assert_eq!(classified(&game, "g1h3"), (MoveType::Jump, Variant::Basic));
    assert!((game.probability(sq("g1")) - 1.0).abs() < 1e-12);
    assert_eq!(v["move_type"], "JUMP:BASIC");
}

#[test]
fn slide_goes_through_a_superposed_path() {
    let v = run("slide", &[]);
    let game = check_fields("slide", &v);
    assert_eq!(classified(&game, "a1a5"), (MoveType::Slide, Variant::Basic));
    assert!(strictly_between(game.probability(sq("a3"))));
    assert_eq!(v["move_type"], "SLIDE:BASIC");
}

#[test]
fn split_is_a_split_jump() {
    let v = run("split", &[]);
    let game = check_fields("split", &v);
    assert_eq!(
        classified(&game, "g1^f3h3"),
        (MoveType::SplitJump, Variant::Basic)
    );
    assert_eq!(v["move_type"], "SPLIT_JUMP:BASIC");
}

#[test]
fn merge_joins_the_two_halves_of_a_split_piece() {
    let v = run("merge", &[]);
    let game = check_fields("merge", &v);
    assert_eq!(
        classified(&game, "a3d2^b1"),
        (MoveType::MergeJump, Variant::Basic)
    );
    // The two halves of the knight split by the set-up's first move, b1^a3d2.
    assert_eq!(v["setup"][0], "b1^a3d2");
    assert!((game.probability(sq("a3")) - 0.5).abs() < 1e-12);
    assert!((game.probability(sq("d2")) - 0.5).abs() < 1e-12);
    assert_eq!(v["move_type"], "MERGE_JUMP:BASIC");
}

#[test]
fn capture_is_a_measured_capture_by_a_piece_in_superposition() {
    let v = run("capture", &[]);
    let game = check_fields("capture", &v);
    assert_eq!(
        classified(&game, "d2xe4.m1"),
        (MoveType::Jump, Variant::Capture)
    );
    assert!(strictly_between(game.probability(sq("d2"))));
    assert!((v["probability"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(v["move_type"], "JUMP:CAPTURE");
}

#[test]
fn measure_is_an_excluded_jump_into_a_half_occupied_square() {
    let v = run("measure", &[]);
    let game = check_fields("measure", &v);
    assert_eq!(
        classified(&game, "e1d2.m1"),
        (MoveType::Jump, Variant::Excluded)
    );
    assert!((game.probability(sq("d2")) - 0.5).abs() < 1e-12);
    assert!((v["probability"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(v["move_type"], "JUMP:EXCLUDED");
}

#[test]
fn measure_slide_is_an_excluded_slide_into_a_half_occupied_square() {
    let v = run("measure-slide", &[]);
    let game = check_fields("measure-slide", &v);
    assert_eq!(
        classified(&game, "a1a3.m1"),
        (MoveType::Slide, Variant::Excluded)
    );
    assert!((game.probability(sq("a3")) - 0.5).abs() < 1e-12);
    assert_eq!(game.probability(sq("a2")), 0.0);
    assert!((v["probability"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(v["move_type"], "SLIDE:EXCLUDED");
}

#[test]
fn capture_slide_is_a_measured_capture_slide_through_a_superposed_path() {
    let v = run("capture-slide", &[]);
    assert_eq!(
        v["start_fen"],
        qchess_cantwell::growth::GROWTH_CAPTURE_SLIDE_FEN
    );
    let game = check_fields("capture-slide", &v);
    assert_eq!(
        classified(&game, "a1xa5.m1"),
        (MoveType::Slide, Variant::Capture)
    );
    // The rook and its target are classical; only a3, on the path, is superposed.
    assert_eq!(game.probability(sq("a1")), 1.0);
    assert_eq!(game.probability(sq("a5")), 1.0);
    assert!((game.probability(sq("a3")) - 0.5).abs() < 1e-12);
    assert_eq!(game.probability(sq("a2")) + game.probability(sq("a4")), 0.0);
    // M1 of eq. 23b is "path clear" here: probability 1/2.
    assert!((v["probability"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(v["move_type"], "SLIDE:CAPTURE");
}

/// The capture slide onto a superposed target: its set-up splits a black knight from b3
/// onto a5 (and c1) after the first split, so that the path square a3 and the target a5
/// are each occupied half the time, independently; eq. 23b's M1 then has probability
/// 1 - 1/4 (blocked and the target occupied).
fn check_superposed_target(kind: &str, mv: &str, probability: f64) {
    let v = run(kind, &[]);
    assert_eq!(
        v["start_fen"],
        qchess_cantwell::growth::GROWTH_SUPERPOSED_TARGET_FEN
    );
    assert_eq!(v["setup"][0], "b1^a3d2");
    assert_eq!(v["setup"][1], "b3^a5c1");
    let game = check_fields(kind, &v);
    assert_eq!(classified(&game, mv), (MoveType::Slide, Variant::Capture));
    assert_eq!(game.probability(sq("a1")), 1.0);
    assert!((game.probability(sq("a3")) - 0.5).abs() < 1e-12);
    assert!((game.probability(sq("a5")) - 0.5).abs() < 1e-12);
    assert_eq!(game.probability(sq("a2")) + game.probability(sq("a4")), 0.0);
    let both = (1u64 << sq("a3").index()) | (1u64 << sq("a5").index());
    let blocked = game.state().probability(qchess_sim::Predicate::Equals {
        mask: both,
        value: both,
    });
    assert!((blocked - 0.25).abs() < 1e-12, "{blocked}");
    assert!(
        (v["probability"].as_f64().unwrap() - probability).abs() < 1e-12,
        "{v}"
    );
    assert_eq!(v["move_type"], "SLIDE:CAPTURE");
    assert_eq!(v["move"], mv.replace('x', ""));
}

#[test]
fn capture_slide_superposed_measures_eq_23b_in_general() {
    check_superposed_target("capture-slide-superposed", "a1xa5.m1", 0.75);
}

#[test]
fn capture_slide_blocked_is_the_same_move_failing() {
    check_superposed_target("capture-slide-blocked", "a1xa5.m0", 0.25);
}

#[test]
fn castle_is_queen_side_castling_that_measures_its_targets() {
    let v = run("castle", &[]);
    assert_eq!(v["start_fen"], qchess_cantwell::growth::GROWTH_CASTLE_FEN);
    let game = check_fields("castle", &v);
    assert_eq!(
        classified(&game, "e1c1.m1"),
        (MoveType::QsCastle, Variant::Basic)
    );
    // b1, the control of both iSwaps, was emptied by the first split.
    assert_eq!(game.probability(sq("b1")), 0.0);
    let empty = game.state().probability(qchess_sim::Predicate::AllZero(
        (1u64 << sq("c1").index()) | (1u64 << sq("d1").index()),
    ));
    assert!(
        (v["probability"].as_f64().unwrap() - empty).abs() < 1e-12,
        "{v}"
    );
    // Growth knights reach c1 or d1: the measurement is a real one.
    assert!(strictly_between(empty), "{empty}");
    assert_eq!(v["move_type"], "QS_CASTLE:BASIC");
}

#[test]
fn legal_lists_the_same_moves_as_the_library() {
    let v = run("legal", &["--threads", "1"]);
    let game = check_fields("legal", &v);
    assert_eq!(
        v["legal_moves"].as_u64().unwrap(),
        game.legal_moves().len() as u64
    );
    assert_eq!(v["threads"], 1);
}

#[test]
fn f32_and_readable_output() {
    let v = run("split", &["--f32"]);
    assert_eq!(v["amplitude"], "f32");
    assert!(v["state_bytes"].as_u64().unwrap() >= 16 * v["states"].as_u64().unwrap());
    let out = common::qchess_bytes(&["bench", "move", "--kind", "jump", "--states", "100"], b"");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(out.stdout.starts_with("jump (g1h3) on "), "{}", out.stdout);
}

#[test]
fn errors_are_clean() {
    // A budget far below the set-up's state: state_too_large, exit 1, no panic.
    let out = common::qchess_bytes(
        &[
            "bench", "move", "--kind", "split", "--states", "100000", "--memory", "100000",
            "--json",
        ],
        b"",
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("state_too_large"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    // More states than the set-up position can reach.
    let out = common::qchess_bytes(
        &[
            "bench",
            "move",
            "--kind",
            "jump",
            "--states",
            "1000000000000",
            "--memory",
            "100000",
        ],
        b"",
    );
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    // An unknown kind and zero states are refused by the argument parser (exit 2).
    for args in [
        ["bench", "move", "--kind", "teleport", "--states", "10"],
        ["bench", "move", "--kind", "jump", "--states", "0"],
    ] {
        let out = common::qchess_bytes(&args, b"");
        assert_eq!(out.code, Some(2), "{args:?}: {}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(!out.stderr.trim().is_empty());
    }
}

/// `--repeat N` times the bare operation, the move and its undo N times: the JSON lists every
/// run, `seconds`, `gate_seconds` and `undo_seconds` are their medians (the mean of the middle
/// two for an even count), `ratio` the median of the pairs' move-over-operation ratios, and
/// the move reported is the same one. `--repeat 0` is a usage error.
#[test]
fn repeated_runs_report_their_medians() {
    // A list of positive run times (or ratios) as numbers.
    let runs_of = |v: &Value| -> Vec<f64> {
        let runs: Vec<f64> = v
            .as_array()
            .expect("a list of runs")
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(runs.iter().all(|&x| x > 0.0), "{v}");
        runs
    };
    let median = |v: &Value| qchess_sim::bench::median(&mut runs_of(v));
    for (kind, repeat) in [("measure", "3"), ("split", "4"), ("legal", "2")] {
        let v = run(kind, &["--repeat", repeat]);
        check_fields(kind, &v);
        let n: usize = repeat.parse().unwrap();
        assert_eq!(v["repeat"].as_u64(), Some(n as u64), "{kind}: {v}");
        // `field` is the median of `field_runs`, which lists `n` runs.
        let runs_and_median = |field: &str| {
            let runs = &v[format!("{field}_runs")];
            assert_eq!(runs.as_array().unwrap().len(), n, "{kind}: {field}");
            assert_eq!(v[field].as_f64(), Some(median(runs)), "{kind}: {field}");
        };
        runs_and_median("seconds");
        runs_and_median("gate_seconds");
        runs_and_median("ratio");
        // Each pair's ratio is its move's seconds over its bare operation's.
        for ((r, m), g) in runs_of(&v["ratio_runs"])
            .iter()
            .zip(runs_of(&v["seconds_runs"]))
            .zip(runs_of(&v["gate_seconds_runs"]))
        {
            assert_eq!(*r, m / g, "{kind}: {v}");
        }
        // Each timed move is taken back, and the undo is timed too (none for the list).
        if kind == "legal" {
            assert!(v["undo_seconds"].is_null(), "{kind}: {v}");
            assert_eq!(v["undo_seconds_runs"].as_array().unwrap().len(), 0);
        } else {
            runs_and_median("undo_seconds");
        }
        let once = run(kind, &[]);
        assert_eq!(v["move"], once["move"], "{kind}");
        assert_eq!(v["probability"], once["probability"], "{kind}");
        assert_eq!(once["seconds_runs"].as_array().unwrap().len(), 1, "{kind}");
    }
    let states = N.to_string();
    let out = common::qchess_bytes(
        &[
            "bench", "move", "--kind", "jump", "--states", &states, "--repeat", "0", "--json",
        ],
        b"",
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--repeat"), "{}", out.stderr);
}
