//! End-to-end tests of `qchess perft`: the published node counts, `--no-bulk`, `--divide`,
//! `--json`, `--board`, `--fen` and the usage errors (exit code 2), through the real binary.

use crate::common;
use common::{Run, qchess_bytes};

fn qchess(args: &[&str], stdin: &str) -> Run {
    qchess_bytes(args, stdin.as_bytes())
}

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
/// Positions 3, 4 and 5 of the Chess Programming Wiki's perft results page.
const CPW_POSITION_3: &str = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
const CPW_POSITION_4: &str = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
const CPW_POSITION_5: &str = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";

/// The count printed by a successful plain `qchess perft` (the whole stdout is that number).
fn count(args: &[&str]) -> u64 {
    let run = qchess(args, "");
    assert_eq!(run.code, Some(0), "qchess {args:?}: {}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "one line: {:?}", run.stdout);
    run.stdout
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("qchess {args:?} printed {:?}: {e}", run.stdout))
}

#[test]
fn start_position_published_counts() {
    for (depth, nodes) in [(1, 20), (2, 400), (3, 8902), (4, 197_281)] {
        let d = depth.to_string();
        assert_eq!(count(&["perft", "--depth", &d]), nodes, "depth {depth}");
    }
}

#[test]
fn kiwipete_published_counts() {
    for (depth, nodes) in [(1, 48), (2, 2039), (3, 97_862)] {
        let d = depth.to_string();
        assert_eq!(
            count(&["perft", "--fen", KIWIPETE, "--depth", &d]),
            nodes,
            "depth {depth}"
        );
    }
}

#[test]
fn more_published_positions() {
    for (fen, counts) in [
        (CPW_POSITION_3, &[14u64, 191, 2812, 43_238][..]),
        (CPW_POSITION_4, &[6, 264, 9467][..]),
        (CPW_POSITION_5, &[44, 1486, 62_379][..]),
    ] {
        for (i, &nodes) in counts.iter().enumerate() {
            let d = (i + 1).to_string();
            assert_eq!(
                count(&["perft", "--fen", fen, "--depth", &d]),
                nodes,
                "{fen} depth {d}"
            );
        }
    }
}

#[test]
fn no_bulk_gives_the_same_numbers() {
    assert_eq!(count(&["perft", "--depth", "3", "--no-bulk"]), 8902);
    assert_eq!(count(&["perft", "--depth", "4", "--no-bulk"]), 197_281);
    assert_eq!(
        count(&["perft", "--fen", KIWIPETE, "--depth", "3", "--no-bulk"]),
        97_862
    );
    assert_eq!(
        count(&[
            "perft",
            "--fen",
            CPW_POSITION_3,
            "--depth",
            "4",
            "--no-bulk"
        ]),
        43_238
    );
}

#[test]
fn depth_zero_counts_the_root_and_a_mate_has_no_moves() {
    assert_eq!(count(&["perft", "--depth", "0"]), 1);
    // Black is mated (queen g7 protected by the king on g6).
    assert_eq!(
        count(&[
            "perft",
            "--fen",
            "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1",
            "--depth",
            "1"
        ]),
        0
    );
}

/// `--divide` output: the "move: count" lines and the total on the last line.
fn divide(args: &[&str]) -> (Vec<(String, u64)>, u64) {
    let run = qchess(args, "");
    assert_eq!(run.code, Some(0), "qchess {args:?}: {}", run.stderr);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let (total, moves) = lines.split_last().expect("a total line");
    let total = total.trim().parse().expect("the last line is the total");
    let moves = moves
        .iter()
        .map(|l| {
            let (mv, n) = l
                .split_once(':')
                .unwrap_or_else(|| panic!("not 'move: n': {l:?}"));
            (
                mv.trim().to_string(),
                n.trim().parse().expect("a count after the colon"),
            )
        })
        .collect();
    (moves, total)
}

#[test]
fn divide_lines_sum_to_the_total() {
    for (args, root_moves, total) in [
        (vec!["perft", "--depth", "3", "--divide"], 20, 8902),
        (
            vec!["perft", "--fen", KIWIPETE, "--depth", "2", "--divide"],
            48,
            2039,
        ),
        (
            vec!["perft", "--fen", CPW_POSITION_3, "--depth", "3", "--divide"],
            14,
            2812,
        ),
    ] {
        let (moves, printed_total) = divide(&args);
        assert_eq!(printed_total, total, "{args:?}");
        assert_eq!(moves.len(), root_moves, "{args:?}: one line per root move");
        assert_eq!(moves.iter().map(|(_, n)| n).sum::<u64>(), total, "{args:?}");
        let mut names: Vec<&str> = moves.iter().map(|(m, _)| m.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), root_moves, "{args:?}: root moves are distinct");
    }
    // Each start-position root move has 20 replies at depth 2.
    let (moves, _) = divide(&["perft", "--depth", "2", "--divide"]);
    assert!(moves.iter().all(|(_, n)| *n == 20), "{moves:?}");
    assert!(moves.iter().any(|(m, _)| m == "e2e4") && moves.iter().any(|(m, _)| m == "g1f3"));
}

#[test]
fn divide_with_no_bulk_matches_bulk() {
    let bulk = divide(&["perft", "--fen", KIWIPETE, "--depth", "2", "--divide"]);
    let no_bulk = divide(&[
        "perft",
        "--fen",
        KIWIPETE,
        "--depth",
        "2",
        "--divide",
        "--no-bulk",
    ]);
    let sorted = |mut v: Vec<(String, u64)>| {
        v.sort();
        v
    };
    assert_eq!(bulk.1, no_bulk.1);
    assert_eq!(sorted(bulk.0), sorted(no_bulk.0));
}

#[test]
fn json_is_exactly_one_object() {
    for args in [
        vec!["perft", "--depth", "3", "--json"],
        vec!["perft", "--depth", "3", "--json", "--no-bulk"],
        vec!["perft", "--depth", "3", "--json", "--divide"],
    ] {
        let run = qchess(&args, "");
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout.lines().count(), 1, "{args:?}: {:?}", run.stdout);
        let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("valid JSON");
        let obj = v.as_object().expect("an object");
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["nodes", "nps", "seconds"], "{args:?}");
        assert_eq!(v["nodes"].as_u64(), Some(8902), "{args:?}");
        let seconds = v["seconds"].as_f64().expect("seconds is a number");
        let nps = v["nps"].as_f64().expect("nps is a number");
        assert!(seconds.is_finite() && seconds >= 0.0, "{v}");
        assert!(nps.is_finite() && nps >= 0.0, "{v}");
        if seconds > 0.0 {
            let expected = 8902.0 / seconds;
            assert!(
                (nps - expected).abs() <= 1e-6 * expected,
                "nps = nodes / seconds: {v}"
            );
        }
    }
}

#[test]
fn fen_and_board_select_the_start() {
    let startpos = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    assert_eq!(count(&["perft", "--fen", startpos, "--depth", "3"]), 8902);
    assert_eq!(count(&["perft", "--board", "8x8", "--depth", "3"]), 8902);
    // Petty chess (5x6): 5 pawn steps and 2 knight moves (no double step on a 6-rank board),
    // and the same 7 replies for Black whatever White did (rank 4 stays empty).
    assert_eq!(count(&["perft", "--board", "5x6", "--depth", "1"]), 7);
    assert_eq!(count(&["perft", "--board", "5x6", "--depth", "2"]), 49);
    let petty = "rnbqk/ppppp/5/5/PPPPP/RNBQK w - - 0 1";
    for depth in ["1", "2", "3", "4"] {
        assert_eq!(
            count(&["perft", "--board", "5x6", "--fen", petty, "--depth", depth]),
            count(&["perft", "--board", "5x6", "--depth", depth]),
            "depth {depth}: the 5x6 start position read from its FEN"
        );
    }
}

fn assert_usage_error(args: &[&str]) {
    let run = qchess(args, "");
    assert_eq!(
        run.code,
        Some(2),
        "qchess {args:?} exit code; stderr {:?}",
        run.stderr
    );
    assert!(
        run.stdout.trim().is_empty(),
        "qchess {args:?} printed {:?}",
        run.stdout
    );
    assert!(
        !run.stderr.trim().is_empty(),
        "qchess {args:?}: no message on stderr"
    );
}

#[test]
fn bad_arguments_exit_2_with_a_message() {
    assert_usage_error(&["perft"]);
    assert_usage_error(&["perft", "--fen", KIWIPETE]);
    assert_usage_error(&["perft", "--depth", "x"]);
    assert_usage_error(&["perft", "--depth", "-1"]);
    assert_usage_error(&["perft", "--depth", "1", "--fen", "not a fen"]);
    assert_usage_error(&[
        "perft",
        "--depth",
        "1",
        "--fen",
        "rnbqkbnr/pppppppp/8/8 w - - 0 1",
    ]);
    assert_usage_error(&[
        "perft",
        "--depth",
        "1",
        "--fen",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
    ]);
    // Positions no game can reach, and malformed fields.
    for fen in [
        "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1",
        "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/8/4K2K w - - 0 1",
        "8/8/8/8/8/8/8/8 w - - 0 1",
        "4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1",
        "4k3/8/8/8/8/8/8/4K3 w - e5 0 1",
        "4k3/8/8/8/8/8/8/4K3 w - - -1 1",
        "4k3/9/8/8/8/8/8/4K3 w - - 0 1",
        "4k3/8/8/8/8/8/8/4K3 W - - 0 1",
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra",
    ] {
        assert_usage_error(&["perft", "--depth", "1", "--fen", fen]);
    }
    assert_usage_error(&["perft", "--depth", "1", "--board", "9x9"]);
    assert_usage_error(&["perft", "--depth", "1", "--board", "3x3"]);
    assert_usage_error(&["perft", "--depth", "1", "--board", "big"]);
    assert_usage_error(&["perft", "--depth", "1", "--board", "8x"]);
    // An 8x8 FEN on a 5x6 board.
    assert_usage_error(&[
        "perft",
        "--depth",
        "1",
        "--board",
        "5x6",
        "--fen",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    ]);
    assert_usage_error(&["perft", "--depth", "1", "--frobnicate"]);
    // The message says what is wrong.
    let run = qchess(&["perft", "--depth", "1", "--board", "9x9"], "");
    assert!(run.stderr.contains("9x9"), "{}", run.stderr);
}
