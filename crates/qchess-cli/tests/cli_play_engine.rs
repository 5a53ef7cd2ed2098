//! `qchess play --opponent engine[:level=L]`: the engine answers in the terminal game.

use crate::common;
use common::qchess_bytes;

#[test]
fn the_engine_answers_a_move_in_each_variant() {
    let run = qchess_bytes(
        &[
            "play",
            "--variant",
            "cantwell",
            "--opponent",
            "engine:level=2",
            "--seed",
            "1",
        ],
        b"e2e4\nquit\n",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("engine plays "), "{}", run.stdout);
    let run = qchess_bytes(
        &[
            "play",
            "--variant",
            "niels",
            "--opponent",
            "engine",
            "--seed",
            "1",
        ],
        b"e2e4\nquit\n",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("black plays "), "{}", run.stdout);
    // Akl: the person plays Black, so the engine (White) touches and moves first.
    let run = qchess_bytes(
        &[
            "play",
            "--variant",
            "akl",
            "--opponent",
            "engine:level=1",
            "--color",
            "b",
            "--seed",
            "1",
        ],
        b"quit\n",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("White (engine) "), "{}", run.stdout);
}

#[test]
fn a_bad_opponent_is_a_usage_error() {
    for bad in ["engine:level=9", "engine:lvl=2", "robot"] {
        let run = qchess_bytes(&["play", "--variant", "cantwell", "--opponent", bad], b"");
        assert_eq!(run.code, Some(2), "{bad}: {}", run.stderr);
        assert!(run.stderr.contains("engine:level=L"), "{}", run.stderr);
    }
}
