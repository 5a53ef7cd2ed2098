//! End-to-end tests of `qchess play`: a short scripted game of each rule system through
//! standard input (moves, an error, quitting), reproducible transcripts against the random
//! mover, `--load` of a saved game, and usage errors (exit code 2), through the real binary.

use crate::common;
use common::{Run, qchess_bytes};

fn qchess(args: &[&str], stdin: &str) -> Run {
    qchess_bytes(args, stdin.as_bytes())
}

/// Runs `qchess play` with `args` on `script`; asserts exit 0 and no stderr.
fn play(args: &[&str], script: &str) -> String {
    let mut full = vec!["play"];
    full.extend_from_slice(args);
    let run = qchess(&full, script);
    assert_eq!(
        run.code,
        Some(0),
        "qchess {full:?}: {}\n{}",
        run.stderr,
        run.stdout
    );
    run.stdout
}

/// The board's file-label row (`a b c ... h` on 8x8) appears in `out`.
fn shows_board(out: &str, files: &str) -> bool {
    let want: Vec<String> = files.chars().map(String::from).collect();
    out.lines().any(|l| {
        let tokens: Vec<&str> = l.split_whitespace().collect();
        tokens == want
    })
}

/// The last rendered row of `rank` in `out`.
fn rank_row(out: &str, rank: char) -> &str {
    out.lines()
        .rev()
        .find(|l| l.trim_start().starts_with(rank) && l.contains("  "))
        .unwrap_or_else(|| panic!("no rank {rank} row in:\n{out}"))
}

fn temp_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("qchess-cli-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

// ---------------------------------------------------------------- Cantwell

#[test]
fn cantwell_scripted_game_between_two_people() {
    let out = play(
        &["--variant", "cantwell"],
        "help\ne2e4\ne7e5\nb1^a3c3\nzz\ne2e5\nhistory\nquit\n",
    );
    assert!(shows_board(&out, "abcdefgh"), "{out}");
    assert!(
        out.contains("played e2e4") && out.contains("played e7e5"),
        "{out}"
    );
    assert!(out.contains("played b1^a3c3"), "{out}");
    // The knight is half on a3, half on c3; the e-pawns stand on e4 and e5 for certain.
    let rank3 = rank_row(&out, '3');
    assert_eq!(rank3.matches("N 50").count(), 2, "{rank3}");
    assert!(rank_row(&out, '4').contains("P100"), "{out}");
    assert!(rank_row(&out, '5').contains("p100"), "{out}");
    assert!(out.contains("Black to move, state size 2"), "{out}");
    // Errors are printed and the game goes on: the history has the three good moves only.
    assert!(out.contains("e2e4 e7e5 b1^a3c3"), "{out}");
    assert!(
        !out.contains("e2e4 e7e5 b1^a3c3 "),
        "refused moves are not recorded: {out}"
    );
}

#[test]
fn cantwell_end_of_input_ends_the_session() {
    let out = play(&["--variant", "cantwell"], "e2e4\n");
    assert!(out.contains("played e2e4"), "{out}");
    let out = play(&["--variant", "cantwell"], "");
    assert!(shows_board(&out, "abcdefgh"), "{out}");
}

#[test]
fn cantwell_random_opponent_is_reproducible() {
    let args = [
        "--variant",
        "cantwell",
        "--opponent",
        "random",
        "--seed",
        "11",
    ];
    let script = "b1^a3c3\ng1f3\nhistory\nquit\n";
    let first = play(&args, script);
    assert_eq!(first, play(&args, script), "same seed, same transcript");
    assert_eq!(first.matches("random mover plays").count(), 2, "{first}");
    // The seed is used: some seed gives a different first reply.
    let replies: std::collections::BTreeSet<String> = (0..6)
        .map(|s| {
            let seed = s.to_string();
            let out = play(
                &[
                    "--variant",
                    "cantwell",
                    "--opponent",
                    "random",
                    "--seed",
                    &seed,
                ],
                "e2e4\nquit\n",
            );
            out.lines()
                .find(|l| l.contains("random mover plays"))
                .expect("a reply")
                .to_string()
        })
        .collect();
    assert!(replies.len() >= 2, "{replies:?}");
    // As Black, the person lets the random mover open.
    let out = play(
        &[
            "--variant",
            "cantwell",
            "--opponent",
            "random",
            "--color",
            "b",
            "--seed",
            "2",
        ],
        "quit\n",
    );
    assert!(out.contains("random mover plays"), "{out}");
    assert!(out.contains("Black to move"), "{out}");
}

#[test]
fn cantwell_save_then_load() {
    let file = temp_path("cantwell.json");
    let f = file.to_str().expect("UTF-8 temp path");
    play(
        &["--variant", "cantwell"],
        &format!("g1^f3h3\ne7e5\nsave {f}\nquit\n"),
    );
    let out = play(&["--variant", "cantwell", "--load", f], "history\nquit\n");
    assert!(out.contains("g1^f3h3 e7e5"), "{out}");
    assert_eq!(rank_row(&out, '3').matches("N 50").count(), 2, "{out}");
    std::fs::remove_file(&file).ok();
}

// ---------------------------------------------------------------- Niel's Chess

#[test]
fn niels_scripted_game_on_petty_chess() {
    let out = play(
        &[
            "--variant",
            "niels",
            "--board",
            "5x6",
            "--rules",
            "simplified",
        ],
        "b1^a3c3:oo\nzz\ne5e9\ne5e4\nmoves\nrecord\nquit\n",
    );
    assert!(shows_board(&out, "abcde"), "{out}");
    assert!(out.contains("white played b1^a3c3:oo"), "{out}");
    assert!(out.contains("black played e5e4"), "{out}");
    assert!(out.contains("unknown command \"zz\"; type help"), "{out}");
    assert!(out.contains("cannot parse \"e5e9\""), "{out}");
    assert!(
        out.contains("Nro|1") && out.contains("Nbo|1"),
        "the two halves: {out}"
    );
    assert!(out.contains("P(red) = 0.5000"), "{out}");
    assert!(out.contains("legal moves:"), "{out}");
    assert!(
        out.contains("Board: 5x6") && out.contains("b1^a3c3:oo\ne5e4\n"),
        "{out}"
    );
}

#[test]
fn niels_random_opponent_is_reproducible() {
    let args = ["--variant", "niels", "--opponent", "random", "--seed", "4"];
    let script = "e2e4\nd2d4\nrecord\nquit\n";
    let first = play(&args, script);
    assert_eq!(first, play(&args, script), "same seed, same transcript");
    assert!(first.contains("white played e2e4"), "{first}");
    assert!(first.matches("black plays ").count() >= 1, "{first}");
    assert!(shows_board(&first, "abcdefgh"), "{first}");
}

#[test]
fn niels_save_then_load() {
    let file = temp_path("niels.txt");
    let f = file.to_str().expect("UTF-8 temp path");
    play(
        &["--variant", "niels", "--board", "5x6"],
        &format!("b1^a3c3:oo\ne5e4\nsave {f}\nquit\n"),
    );
    let out = play(&["--variant", "niels", "--load", f], "record\nquit\n");
    assert!(out.contains("b1^a3c3:oo\ne5e4\n"), "{out}");
    assert!(
        shows_board(&out, "abcde"),
        "the loaded game keeps its board: {out}"
    );
    std::fs::remove_file(&file).ok();
}

// ---------------------------------------------------------------- Akl-style

#[test]
fn akl_scripted_game_of_king_touches() {
    // A king walled in by its own pieces has no legal move: touching it ends the turn,
    // whatever the seeded set-up is.
    let out = play(
        &["--variant", "akl", "--seed", "2"],
        "help\nzz\ne9\ne1\ne8\nrecord\nquit\n",
    );
    assert!(shows_board(&out, "abcdefgh"), "{out}");
    assert!(out.contains("unknown command \"zz\"; type help"), "{out}");
    assert!(out.contains("invalid square \"e9\""), "{out}");
    assert_eq!(
        out.matches("it has no legal move, the turn is over")
            .count(),
        2,
        "{out}"
    );
    assert!(out.contains("1. e1") && out.contains("2. e8"), "{out}");
}

#[test]
fn akl_random_opponent_is_reproducible() {
    let args = ["--variant", "akl", "--opponent", "random", "--seed", "7"];
    let script = "e1\ne1\nrecord\nquit\n";
    let first = play(&args, script);
    assert_eq!(first, play(&args, script), "same seed, same transcript");
    assert!(first.contains("(random mover)"), "{first}");
    let args_b = [
        "--variant",
        "akl",
        "--opponent",
        "random",
        "--seed",
        "7",
        "--color",
        "b",
    ];
    let out = play(&args_b, "quit\n");
    assert!(out.contains("White (random mover)"), "{out}");
}

#[test]
fn akl_save_then_load() {
    let file = temp_path("akl.txt");
    let f = file.to_str().expect("UTF-8 temp path");
    play(
        &["--variant", "akl", "--seed", "3"],
        &format!("e1\ne8\nsave {f}\nquit\n"),
    );
    let saved = std::fs::read_to_string(&file).expect("the record was saved");
    assert!(saved.contains("[Variant \"akl\"]"), "{saved}");
    let out = play(&["--variant", "akl", "--load", f], "record\nquit\n");
    assert!(out.contains("1. e1") && out.contains("2. e8"), "{out}");
    std::fs::remove_file(&file).ok();
}

// ---------------------------------------------------------------- usage errors

fn assert_usage_error(args: &[&str]) {
    let mut full = vec!["play"];
    full.extend_from_slice(args);
    let run = qchess(&full, "quit\n");
    assert_eq!(
        run.code,
        Some(2),
        "qchess {full:?}: stdout {:?}",
        run.stdout
    );
    assert!(!run.stderr.trim().is_empty(), "qchess {full:?}: no message");
}

#[test]
fn bad_arguments_exit_2() {
    assert_usage_error(&[]);
    assert_usage_error(&["--variant", "chess"]);
    assert_usage_error(&["--variant", "cantwell", "--opponent", "god"]);
    assert_usage_error(&["--variant", "akl", "--seed", "x"]);
    for variant in ["cantwell", "niels", "akl"] {
        assert_usage_error(&["--variant", variant, "--color", "x"]);
        assert_usage_error(&["--variant", variant, "--rules", "bogus"]);
        assert_usage_error(&["--variant", variant, "--load", "/nonexistent/qchess-game"]);
    }
    assert_usage_error(&["--variant", "niels", "--board", "9x9"]);
    assert_usage_error(&["--variant", "akl", "--board", "5x6"]);
    // A file that is not a saved game.
    let file = temp_path("garbage.txt");
    std::fs::write(&file, "this is not a game\n").expect("write");
    for variant in ["cantwell", "niels", "akl"] {
        assert_usage_error(&["--variant", variant, "--load", file.to_str().unwrap()]);
    }
    std::fs::remove_file(&file).ok();
}

#[test]
fn cantwell_is_played_on_8x8_only() {
    assert_usage_error(&["--variant", "cantwell", "--board", "9x9"]);
    assert_usage_error(&["--variant", "cantwell", "--board", "5x6"]);
    let out = play(&["--variant", "cantwell", "--board", "8x8"], "quit\n");
    assert!(shows_board(&out, "abcdefgh"), "{out}");
}
