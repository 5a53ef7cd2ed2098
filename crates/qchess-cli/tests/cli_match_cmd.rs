//! `qchess match` with `cmd:<command line>` players: `qchess engine` itself driven through
//! pipes in every variant (fixed movetime and a game clock), and misbehaving programs (an
//! illegal move, an unparsable line, an exit, a hang, a refused setup) that lose their games,
//! are reported, and never stop the match.

use serde_json::Value;

use crate::common;
use common::qchess_bytes;

/// The `cmd:` spec of this build's `qchess engine`.
fn qchess_engine() -> String {
    format!("cmd:{} engine", env!("CARGO_BIN_EXE_qchess"))
}

/// Runs `qchess match` with `args` after the common ones and returns its JSON answer,
/// checked for the contract's fields and their arithmetic.
fn run_match(args: &[&str]) -> Value {
    let mut all = vec!["match", "--json"];
    all.extend_from_slice(args);
    let run = qchess_bytes(&all, b"");
    assert_eq!(run.code, Some(0), "{all:?}: {}", run.stderr);
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "draws",
            "elo",
            "elo_error",
            "games",
            "losses",
            "results",
            "score",
            "wins"
        ]
    );
    let n = v["games"].as_u64().unwrap();
    let (w, d, l) = (
        v["wins"].as_u64().unwrap(),
        v["draws"].as_u64().unwrap(),
        v["losses"].as_u64().unwrap(),
    );
    assert_eq!(w + d + l, n, "{v}");
    assert_eq!(
        v["score"].as_f64().unwrap(),
        (w as f64 + d as f64 / 2.0) / n as f64,
        "{v}"
    );
    assert!(v["elo"].as_f64().unwrap().is_finite(), "{v}");
    assert!(v["elo_error"].as_f64().unwrap() >= 0.0, "{v}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len() as u64, n);
    // Each result's score is engine1's points, and they add up to wins + draws/2.
    let total: f64 = results.iter().map(|r| r["score"].as_f64().unwrap()).sum();
    assert_eq!(total, w as f64 + d as f64 / 2.0, "{v}");
    v
}

const FORFEITS: [&str; 4] = ["illegal move", "time forfeit", "crash", "protocol error"];

/// Asserts that `qchess engine` played whole games: no forfeit of any kind, moves made.
fn assert_clean_games(v: &Value) {
    for r in v["results"].as_array().unwrap() {
        let reason = r["reason"].as_str().unwrap();
        assert!(
            !FORFEITS.iter().any(|k| reason.starts_with(k)),
            "a qchess engine game ended by a forfeit: {r}"
        );
        assert!(r["plies"].as_u64().unwrap() > 0, "{r}");
    }
}

#[test]
fn qchess_engine_as_a_cmd_player_plays_cantwell() {
    let engine = qchess_engine();
    // A generous margin: this checks the protocol, not the loaded test machine's latency.
    let v = run_match(&[
        "--variant",
        "cantwell",
        "--engine1",
        &engine,
        "--engine2",
        "random",
        "--games",
        "2",
        "--movetime",
        "20",
        "--timemargin",
        "5000",
        "--seed",
        "5",
    ]);
    assert_eq!(v["games"], 2);
    assert_clean_games(&v);
}

#[test]
fn qchess_engine_as_a_cmd_player_plays_niels_on_a_small_board() {
    let engine = qchess_engine();
    let v = run_match(&[
        "--variant",
        "niels",
        "--board",
        "5x6",
        "--engine1",
        "random",
        "--engine2",
        &engine,
        "--games",
        "2",
        "--movetime",
        "20",
        "--timemargin",
        "5000",
        "--seed",
        "2",
    ]);
    assert_eq!(v["games"], 2);
    assert_clean_games(&v);
}

#[test]
fn qchess_engine_as_a_cmd_player_plays_akl_from_its_view_on_a_clock() {
    let engine = qchess_engine();
    // Two cmd: players in one game, with a game clock (go wtime .. btime .. winc .. binc ..).
    let v = run_match(&[
        "--variant",
        "akl",
        "--rules",
        "own-pairs",
        "--engine1",
        &engine,
        "--engine2",
        &engine,
        "--games",
        "2",
        "--tc",
        "3+0.05",
        "--timemargin",
        "5000",
        "--seed",
        "11",
    ]);
    assert_eq!(v["games"], 2);
    assert_clean_games(&v);
    // And against random with a fixed movetime.
    let v = run_match(&[
        "--variant",
        "akl",
        "--engine1",
        &engine,
        "--engine2",
        "random",
        "--games",
        "2",
        "--movetime",
        "20",
        "--timemargin",
        "5000",
    ]);
    assert_clean_games(&v);
}

/// A protocol-speaking shell script: `uciok`, `readyok`, and `on_go` for every `go`.
#[cfg(unix)]
fn script(on_go: &str) -> String {
    format!(
        "cmd:sh -c 'while read -r line; do case \"$line\" in uci) echo uciok;; \
         isready) echo readyok;; go*) {on_go};; quit) exit 0;; esac; done'"
    )
}

/// Plays `bad` as engine1 against `random` for two games of `variant` and checks that it
/// lost both by a forfeit of `kind` whose details contain `detail`, named for its colour.
#[cfg(unix)]
fn assert_forfeits(variant: &str, bad: &str, kind: &str, detail: &str, extra: &[&str]) {
    let mut args = vec![
        "--variant",
        variant,
        "--engine1",
        bad,
        "--engine2",
        "random",
        "--games",
        "2",
        "--movetime",
        "50",
    ];
    // A wide margin unless the test sets one: a loaded machine must not turn an illegal move
    // into a time forfeit.
    if extra.is_empty() {
        args.extend_from_slice(&["--timemargin", "5000"]);
    }
    args.extend_from_slice(extra);
    let v = run_match(&args);
    assert_eq!(
        (v["games"].as_u64(), v["losses"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
    assert_eq!(v["score"].as_f64(), Some(0.0));
    for r in v["results"].as_array().unwrap() {
        let color = r["engine1_color"].as_str().unwrap();
        let reason = r["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!("{kind} by {color}: ")) && reason.contains(detail),
            "expected {kind} ({detail}) by {color}: {r}"
        );
    }
}

#[cfg(unix)]
#[test]
fn an_illegal_bestmove_loses_and_is_reported() {
    assert_forfeits(
        "cantwell",
        &script("echo bestmove a1a1"),
        "illegal move",
        "a1a1",
        &[],
    );
    // An outcome attached to a move: the runner measures, not the engine.
    assert_forfeits(
        "cantwell",
        &script("echo bestmove e2e4.m1"),
        "illegal move",
        "the runner measures",
        &[],
    );
    // An Akl turn starts with the square to touch, not a move.
    assert_forfeits(
        "akl",
        &script("echo bestmove e2e4"),
        "illegal move",
        "the square of the piece to touch",
        &[],
    );
}

#[cfg(unix)]
#[test]
fn an_unparsable_line_a_crash_and_a_hang_lose_and_the_match_goes_on() {
    assert_forfeits(
        "niels",
        &script("echo hello there"),
        "protocol error",
        "unparsable line \"hello there\"",
        &[],
    );
    assert_forfeits("niels", &script("exit 3"), "crash", "exit status: 3", &[]);
    // `sleep` is a child of the script: the whole process group is killed after half the
    // 50 ms (an Akl turn asks twice) plus the 100 ms margin, so this match ends in well under the 30 s the sleep would take.
    let start = std::time::Instant::now();
    assert_forfeits(
        "akl",
        &script("sleep 30"),
        "time forfeit",
        "no bestmove within 125 ms",
        &["--timemargin", "100"],
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(25));
}

#[cfg(unix)]
#[test]
fn an_engine_that_refuses_the_setup_loses() {
    // It answers the Rules option with an error before readyok.
    let bad = "cmd:sh -c 'while read -r line; do case \"$line\" in uci) echo uciok;; \
               *Rules*) echo \"info string error: no rules here\";; \
               isready) echo readyok;; esac; done'";
    assert_forfeits(
        "cantwell",
        bad,
        "protocol error",
        "refused the game's setup",
        &[],
    );
}

#[test]
fn a_cmd_player_that_cannot_start_or_is_malformed_is_a_usage_error() {
    for spec in [
        "cmd:",
        "cmd:   ",
        "cmd:./bot 'unterminated",
        "cmd:/nonexistent/qchess-bot --uci",
    ] {
        let run = qchess_bytes(
            &[
                "match",
                "--variant",
                "cantwell",
                "--engine1",
                spec,
                "--engine2",
                "random",
            ],
            b"",
        );
        assert_eq!(run.code, Some(2), "{spec}: {}", run.stderr);
        assert!(run.stderr.contains(spec), "{spec}: {}", run.stderr);
    }
}

#[test]
fn text_output_names_the_forfeits() {
    #[cfg(unix)]
    {
        let run = qchess_bytes(
            &[
                "match",
                "--variant",
                "cantwell",
                "--engine1",
                "random",
                "--engine2",
                &script("echo bestmove a1a1"),
                "--games",
                "2",
                "--movetime",
                "50",
                "--timemargin",
                "5000",
            ],
            b"",
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(run.stdout.contains("+2 =0 -0"), "{}", run.stdout);
        assert_eq!(
            run.stdout.matches("illegal move by ").count(),
            2,
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("lost)"), "{}", run.stdout);
    }
}
