//! Every subcommand works (one thread) or says why not when no thread can be started: the
//! binary runs under a process limit of 1 (`prlimit --nproc=1`), so every `clone` of a thread
//! fails with EAGAIN. Root ignores RLIMIT_NPROC, so as root the binary runs as user `nobody`
//! (`setpriv --reuid=65534`); the test checks the limit bites (the binary's warning).
//! Before the fix, `qchess eval` panicked with exit 101 ("The global thread pool has not been
//! initialized").

use std::process::{Command, Stdio};

/// The effective user id, from `/proc/self/status`.
fn euid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

struct Limited {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `qchess args` under one process (task) at most.
fn run_limited(bin: &std::path::Path, args: &[&str], stdin: &str) -> Limited {
    use std::io::Write;
    let mut cmd = if euid() == Some(0) {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "prlimit",
        ]);
        c
    } else {
        Command::new("prlimit")
    };
    cmd.args(["--nproc=1", "--"]).arg(bin).args(args);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("qchess ends");
    Limited {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_subcommand_runs_on_one_thread_when_threads_cannot_start() {
    let root = euid() == Some(0);
    if !have("prlimit") || (root && !have("setpriv")) {
        let msg =
            "cli_threads: prlimit/setpriv (util-linux) missing: the thread-limit test DID NOT RUN";
        assert!(std::env::var_os("CI").is_none(), "{msg}");
        eprintln!("{msg}");
        return;
    }
    // A copy every user may run (user `nobody` may not reach the build directory).
    let dir = std::env::temp_dir().join(format!("qchess-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("qchess");
    std::fs::copy(env!("CARGO_BIN_EXE_qchess"), &bin).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let warned = |r: &Limited| r.stderr.contains("cannot start worker threads");
    let clean = |r: &Limited, what: &str| {
        assert_ne!(r.code, Some(101), "{what} panicked: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
    };

    let eval = run_limited(
        &bin,
        &["eval"],
        "{\"variant\": \"cantwell\", \"moves\": [\"b1^a3c3\"]}\n",
    );
    clean(&eval, "eval");
    assert!(
        warned(&eval),
        "the process limit did not bite: {}",
        eval.stderr
    );
    assert_eq!(eval.code, Some(0), "{}", eval.stderr);
    let v: serde_json::Value = serde_json::from_str(eval.stdout.trim()).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["state_size"], 2);
    assert!((v["probabilities"]["a3"].as_f64().unwrap() - 0.5).abs() < 1e-12);

    let perft = run_limited(&bin, &["perft", "--depth", "3"], "");
    clean(&perft, "perft");
    assert_eq!(perft.code, Some(0), "{}", perft.stderr);
    assert_eq!(perft.stdout.trim(), "8902");

    let demo = run_limited(&bin, &["demo"], "");
    clean(&demo, "demo");
    assert_eq!(demo.code, Some(0), "{}", demo.stderr);

    let play = run_limited(&bin, &["play", "--variant", "cantwell"], "b1^a3c3\n");
    clean(&play, "play");
    assert_eq!(play.code, Some(0), "{}", play.stderr);

    let game = run_limited(
        &bin,
        &["bench", "game", "--games", "1", "--plies", "20", "--json"],
        "",
    );
    clean(&game, "bench game");
    assert_eq!(game.code, Some(0), "{}", game.stderr);

    // An explicit thread count is a request: refused with a message, not a panic.
    let sim = run_limited(
        &bin,
        &[
            "bench",
            "sim",
            "--op",
            "split",
            "--states",
            "1000",
            "--threads",
            "2",
        ],
        "",
    );
    clean(&sim, "bench sim");
    assert_eq!(sim.code, Some(1), "{}", sim.stderr);
    assert!(
        sim.stderr.contains("cannot start 2 threads"),
        "{}",
        sim.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}
