//! End-to-end tests of `qchess bench sim`, `qchess bench game`, `qchess demo` and the
//! top-level usage errors, through the real binary. Inputs are tiny (1000 states, one game):
//! these tests check the JSON contract, not speed.

use serde_json::Value;

use crate::common;
use common::{Run, qchess_bytes};

fn qchess(args: &[&str], stdin: &str) -> Run {
    qchess_bytes(args, stdin.as_bytes())
}

/// Runs a bench that must print exactly one JSON object, and returns it.
fn one_json(args: &[&str]) -> Value {
    let run = qchess(args, "");
    assert_eq!(run.code, Some(0), "qchess {args:?}: {}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1, "one line: {:?}", run.stdout);
    let v: Value = serde_json::from_str(run.stdout.trim()).expect("valid JSON");
    assert!(v.is_object(), "{v}");
    v
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {v}"))
}

#[test]
fn bench_sim_prints_one_object_per_run_with_the_contract_keys() {
    for op in [
        "iswap", "slide", "split", "merge", "measure", "prob", "project",
    ] {
        for (f32, amplitude_bytes) in [(false, 16.0), (true, 8.0)] {
            let extra: &[&str] = if f32 { &["--f32"] } else { &[] };
            let v = one_thread_sim(op, "1000", extra);
            for key in [
                "op",
                "states",
                "threads",
                "seconds",
                "states_per_sec",
                "bytes_per_state",
                "peak_bytes",
            ] {
                assert!(v.get(key).is_some(), "{op} f32 {f32}: no {key:?} in {v}");
            }
            assert_eq!(v["op"], op);
            assert_eq!(v["shape"], "random", "the default shape: {v}");
            assert_eq!(v["states"].as_u64(), Some(1000), "{v}");
            assert_eq!(v["threads"].as_u64(), Some(1), "{v}");
            let seconds = num(&v, "seconds");
            assert!(seconds.is_finite() && seconds > 0.0, "{v}");
            let rate = num(&v, "states_per_sec");
            assert!(
                (rate - 1000.0 / seconds).abs() <= 1e-9 * rate,
                "states_per_sec = states / seconds: {v}"
            );
            // A stored basis state is at least its 8-byte key and its complex amplitude.
            let per_state = num(&v, "bytes_per_state");
            assert!(per_state >= 8.0 + amplitude_bytes, "{v}");
            let peak = v["peak_bytes"].as_u64().expect("peak_bytes is an integer");
            assert!(
                peak as f64 >= 1000.0 * (8.0 + amplitude_bytes),
                "the input state is held: {v}"
            );
            // The default runs: 200 gates on fresh copies of 1000 states, 50 scans for prob.
            let runs = seconds_runs(&v);
            assert_eq!(runs.len(), if op == "prob" { 50 } else { 200 }, "{v}");
            assert_eq!(
                seconds,
                median(runs),
                "seconds is the median of the runs: {v}"
            );
        }
    }
}

/// `"seconds_runs"` (every timed run's wall seconds, as many as `"runs"` says).
fn seconds_runs(v: &Value) -> Vec<f64> {
    let runs: Vec<f64> = v["seconds_runs"]
        .as_array()
        .unwrap_or_else(|| panic!("seconds_runs is not an array: {v}"))
        .iter()
        .map(|s| s.as_f64().expect("a number of seconds"))
        .collect();
    assert_eq!(v["runs"].as_u64(), Some(runs.len() as u64), "{v}");
    assert!(runs.iter().all(|&s| s.is_finite() && s > 0.0), "{v}");
    runs
}

/// The middle value, or the mean of the middle two of an even count.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// `qchess bench sim --op OP --states N --threads 1 EXTRA... --json`, its one JSON object.
fn one_thread_sim(op: &str, states: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "bench",
        "sim",
        "--op",
        op,
        "--states",
        states,
        "--threads",
        "1",
    ];
    args.extend_from_slice(extra);
    args.push("--json");
    one_json(&args)
}

/// `--shape game` times the game-shaped state of that many basis states (for `merge`, the
/// game-shaped split's output, more states), reported as `"shape": "game"`, the rate over
/// the input's states.
#[test]
fn bench_sim_game_shape_is_reported_with_its_input_size() {
    for op in [
        "iswap", "slide", "split", "merge", "measure", "prob", "project",
    ] {
        let v = one_thread_sim(op, "1000", &["--shape", "game", "--repeat", "3"]);
        assert_eq!(v["shape"], "game", "{v}");
        let states = num(&v, "states");
        if op == "merge" {
            // The split before it makes a state with partners: between 1x and 2x the states.
            assert!(1000.0 < states && states < 2000.0, "{v}");
        } else {
            assert_eq!(states, 1000.0, "{v}");
        }
        let rate = num(&v, "states_per_sec");
        assert!(
            (rate - states / num(&v, "seconds")).abs() <= 1e-9 * rate,
            "states_per_sec = states / seconds: {v}"
        );
    }
}

/// `--repeat N` times N runs (gates on fresh copies; for prob, scans of one state) and
/// reports their median as `seconds`, every run listed in `seconds_runs`.
#[test]
fn bench_sim_repeat_sets_the_number_of_timed_runs() {
    for (op, repeat) in [
        ("merge", 3usize),
        ("measure", 4),
        ("prob", 5),
        ("split", 1),
        ("project", 2),
    ] {
        let v = one_thread_sim(op, "20000", &["--repeat", &repeat.to_string()]);
        let runs = seconds_runs(&v);
        assert_eq!(runs.len(), repeat, "{v}");
        assert_eq!(num(&v, "seconds"), median(runs), "{v}");
        assert_eq!(v["states"].as_u64(), Some(20_000), "{v}");
    }
}

/// `--op prob` scans the state without changing it: the state is stored at exactly its key
/// and amplitude bytes (24 B f64, 16 B f32), and nothing state-sized is allocated beside it
/// (the peak is the state's bytes and a header).
#[test]
fn bench_sim_prob_allocates_nothing_beside_the_state() {
    for (flag, per_state) in [(None, 24.0), (Some("--f32"), 16.0)] {
        let mut args = vec![
            "bench", "sim", "--op", "prob", "--states", "100000", "--json",
        ];
        args.extend(flag);
        let v = one_json(&args);
        assert_eq!(v["op"], "prob", "{v}");
        assert_eq!(num(&v, "bytes_per_state"), per_state, "{v}");
        let peak = num(&v, "peak_bytes");
        let state = 100_000.0 * per_state;
        assert!(state <= peak && peak <= state + 4096.0, "{v}");
    }
}

/// `--op project` times the projection alone: it keeps what `--op measure` keeps (the same
/// outcome, so the same entries: 24 B each after, f64), and its peak is the input state,
/// nothing state-sized beside it, as for the measurement.
#[test]
fn bench_sim_project_shrinks_the_state_like_the_measurement() {
    for shape in ["random", "game"] {
        let extra = ["--shape", shape, "--repeat", "2"];
        let measured = one_thread_sim("measure", "100000", &extra);
        let projected = one_thread_sim("project", "100000", &extra);
        assert_eq!(projected["op"], "project", "{projected}");
        assert_eq!(num(&projected, "bytes_per_state"), 24.0, "{projected}");
        assert_eq!(projected["states"], measured["states"], "{projected}");
        let peak = num(&projected, "peak_bytes");
        assert!(
            peak <= num(&measured, "peak_bytes") && peak >= 100_000.0 * 24.0,
            "{projected} {measured}"
        );
    }
}

/// A small split on two threads, as JSON: the run the thread-reporting tests look at.
const SPLIT_ON_TWO_THREADS: [&str; 9] = [
    "bench",
    "sim",
    "--op",
    "split",
    "--states",
    "1000",
    "--threads",
    "2",
    "--json",
];

#[test]
fn bench_sim_threads_are_reported() {
    let v = one_json(&SPLIT_ON_TWO_THREADS);
    assert_eq!(v["threads"].as_u64(), Some(2), "{v}");
    let v = one_json(&[
        "bench", "sim", "--op", "iswap", "--states", "1000", "--json",
    ]);
    assert!(
        v["threads"].as_u64().is_some_and(|t| t >= 1),
        "default: all cores: {v}"
    );
}

/// The JSON object of the two-thread split bench with the environment variable `var` set to
/// `value` (removed for `None`).
fn split_with_env(var: &str, value: Option<&str>) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_qchess"));
    cmd.args(SPLIT_ON_TWO_THREADS);
    match value {
        Some(v) => cmd.env(var, v),
        None => cmd.env_remove(var),
    };
    let out = cmd.output().expect("the qchess binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// `"adaptive_threads"` says whether passes may drop to one thread on a busy machine: true by
/// default, false under `QCHESS_ADAPTIVE_THREADS=0` (any of `0`, `off`, `false`, `no`).
#[test]
fn bench_sim_reports_whether_threads_adapt_to_the_load() {
    let run = |value: Option<&str>| split_with_env("QCHESS_ADAPTIVE_THREADS", value);
    assert_eq!(run(None)["adaptive_threads"], Value::Bool(true));
    for off in ["0", "off", "false", "no"] {
        assert_eq!(
            run(Some(off))["adaptive_threads"],
            Value::Bool(false),
            "{off}"
        );
    }
    assert_eq!(run(Some("1"))["adaptive_threads"], Value::Bool(true));
}

/// `"pin_threads"` says whether the pool's workers were bound to one CPU each: false by
/// default, true under `QCHESS_PIN_THREADS=1` (or `on`, `true`, `yes`).
#[test]
fn bench_sim_reports_whether_workers_are_pinned() {
    let run = |value: Option<&str>| split_with_env("QCHESS_PIN_THREADS", value);
    assert_eq!(run(None)["pin_threads"], Value::Bool(false));
    for on in ["1", "on", "true", "yes"] {
        assert_eq!(run(Some(on))["pin_threads"], Value::Bool(true), "{on}");
    }
    assert_eq!(run(Some("0"))["pin_threads"], Value::Bool(false));
}

#[test]
fn bench_sim_iswap_keeps_the_exact_size_in_f64() {
    // An iSwap permutes basis states: 1000 states stay 1000 (8-byte key + 16-byte amplitude).
    let v = one_json(&[
        "bench",
        "sim",
        "--op",
        "iswap",
        "--states",
        "1000",
        "--threads",
        "1",
        "--json",
    ]);
    assert_eq!(num(&v, "bytes_per_state"), 24.0, "{v}");
}

fn assert_usage_error(args: &[&str]) {
    let run = qchess(args, "");
    assert_eq!(
        run.code,
        Some(2),
        "qchess {args:?}: stdout {:?} stderr {:?}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stderr.trim().is_empty(), "qchess {args:?}: no message");
}

#[test]
fn bench_bad_arguments_exit_2() {
    assert_usage_error(&["bench"]);
    assert_usage_error(&["bench", "nothing"]);
    assert_usage_error(&["bench", "sim", "--states", "1000", "--json"]);
    assert_usage_error(&["bench", "sim", "--op", "split", "--json"]);
    assert_usage_error(&[
        "bench", "sim", "--op", "teleport", "--states", "1000", "--json",
    ]);
    assert_usage_error(&["bench", "sim", "--op", "split", "--states", "0", "--json"]);
    assert_usage_error(&["bench", "sim", "--op", "split", "--states", "-5", "--json"]);
    assert_usage_error(&[
        "bench", "sim", "--op", "split", "--states", "1000", "--shape", "hex", "--json",
    ]);
    for bad in ["0", "-1", "many"] {
        assert_usage_error(&[
            "bench", "sim", "--op", "split", "--states", "1000", "--repeat", bad, "--json",
        ]);
    }
    assert_usage_error(&[
        "bench",
        "sim",
        "--op",
        "split",
        "--states",
        "1000",
        "--threads",
        "0",
        "--json",
    ]);
    assert_usage_error(&["bench", "game", "--games", "x"]);
}

#[test]
fn bench_game_reports_moves_per_second_and_the_largest_state() {
    let args = ["bench", "game", "--seed", "3", "--games", "1", "--json"];
    let v = one_json(&args);
    assert_eq!(v["games"].as_u64(), Some(1), "{v}");
    let moves = v["moves"].as_u64().expect("moves");
    assert!(moves > 0, "{v}");
    let seconds = num(&v, "seconds");
    assert!(seconds > 0.0, "{v}");
    let rate = num(&v, "moves_per_second");
    assert!(
        (rate - moves as f64 / seconds).abs() <= 1e-9 * rate,
        "moves/s = moves / seconds: {v}"
    );
    let largest = v["largest_state"].as_u64().expect("largest_state");
    assert!(largest >= 1, "{v}");
    // Same seed, same games (times aside).
    let again = one_json(&args);
    assert_eq!(
        (&again["moves"], &again["largest_state"]),
        (&v["moves"], &v["largest_state"])
    );
    // Without --json: one human-readable line with the same numbers.
    let run = qchess(&["bench", "game", "--seed", "3", "--games", "1"], "");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("{moves} moves")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("largest state {largest}")),
        "{}",
        run.stdout
    );
}

#[test]
fn demo_matches_the_paper() {
    let run = qchess(&["demo"], "");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let last = run
        .stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .expect("output");
    assert!(last.contains("match"), "last line: {last}");
    assert!(!run.stdout.contains("MISMATCH"), "{}", run.stdout);
    // Section 11.2's interference, printed in full precision.
    assert!(
        run.stdout.contains("p(a1) = 0.7285533905932737"),
        "{}",
        run.stdout
    );
    // A tolerance that is not a number is a usage error.
    assert_usage_error(&["demo", "--tolerance", "nan"]);
}

#[test]
fn demo_exact_equals_the_paper_exactly() {
    let run = qchess(&["demo", "--exact"], "");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stdout.contains("MISMATCH"), "{}", run.stdout);
    // Section 11.2: exact probabilities, the interference term exactly 0.
    assert!(
        run.stdout
            .contains("p(a1) = 3/8+1/4*sqrt2 | 3/8+1/4*sqrt2 exact"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("p(a2) = 0 | 0 exact"), "{}", run.stdout);
    assert!(run.stdout.contains("equal the paper's values exactly"));
    // Exact bench: 104 bytes per basis state, same JSON keys.
    let run = qchess(
        &[
            "bench", "sim", "--op", "split", "--states", "1000", "--exact", "--json",
        ],
        "",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(run.stdout.trim()).expect("json");
    assert!(v["bytes_per_state"].as_f64().unwrap() >= 104.0, "{v}");
    assert_usage_error(&[
        "bench", "sim", "--op", "split", "--states", "10", "--exact", "--f32",
    ]);
}

#[test]
fn top_level_usage() {
    assert_usage_error(&[]);
    assert_usage_error(&["frobnicate"]);
    assert_usage_error(&["--frobnicate"]);
    assert_usage_error(&["eval", "--frobnicate"]);
    assert_usage_error(&["demo", "--frobnicate"]);
    assert_usage_error(&["play", "--variant", "niels", "--frobnicate"]);
    let run = qchess(&["--help"], "");
    assert_eq!(run.code, Some(0));
    for sub in ["perft", "eval", "play", "bench", "demo"] {
        assert!(
            run.stdout.contains(sub),
            "--help lists {sub}: {}",
            run.stdout
        );
    }
    let run = qchess(&["--version"], "");
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.starts_with("qchess "), "{}", run.stdout);
}
