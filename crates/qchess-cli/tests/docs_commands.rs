//! Every shell command written in README.md and docs/*.md runs as written, so the docs cannot
//! go stale.
//!
//! The commands are the lines of fenced blocks tagged `sh` (a synopsis with placeholders goes
//! in a `text` block instead). Each line is classified:
//! * `qchess ...`, or a pipe into `qchess`, runs through `sh` with this build's `qchess` first
//!   on `PATH` (interactive `qchess play` gets `quit` on its standard input) and must exit 0;
//!   a trailing comment that is a plain number (`# 4865609`) must appear in its output;
//! * `cargo run --release -p qchess-cli -- ARGS` runs as `qchess ARGS`;
//! * other cargo, pip and mpirun commands are too heavy to run from a test: what they name
//!   (a path, a package, an example, a bench, a feature) must exist, and `.ci/run` runs the
//!   README's two cargo commands itself;
//! * a line ending in `# slow` (a benchmark of large states) runs only in the `#[ignore]`d
//!   test `slow_documented_commands_run`.
//!
//! An unknown kind of command fails the test: teach it here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}

/// One documented command: where it is written, the command, its trailing comment.
#[derive(Debug, Clone)]
struct DocCommand {
    file: String,
    line: usize,
    command: String,
    comment: String,
}

/// Splits `line` into the command and its trailing `# comment` (a `#` outside quotes that
/// starts a word).
fn split_comment(line: &str) -> (String, String) {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && prev.is_whitespace() => {
                return (
                    line[..i].trim().to_string(),
                    line[i + 1..].trim().to_string(),
                );
            }
            None => {}
        }
        prev = c;
    }
    (line.trim().to_string(), String::new())
}

/// Every line of every `sh` block of README.md and docs/*.md.
fn documented_commands() -> Vec<DocCommand> {
    let root = workspace_root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable doc");
        let name = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let mut in_sh = false;
        let mut in_other = false;
        for (i, raw) in text.lines().enumerate() {
            let trimmed = raw.trim_start();
            if let Some(tag) = trimmed.strip_prefix("```") {
                if in_sh || in_other {
                    in_sh = false;
                    in_other = false;
                } else if matches!(tag.trim(), "sh" | "bash" | "shell" | "console") {
                    in_sh = true;
                } else {
                    in_other = true;
                }
                continue;
            }
            if !in_sh || trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let (command, comment) = split_comment(trimmed);
            out.push(DocCommand {
                file: name.clone(),
                line: i + 1,
                command,
                comment,
            });
        }
    }
    out
}

/// What the test does with one command.
#[derive(Debug, PartialEq)]
enum Action {
    /// Run this shell command line.
    Run(String),
    /// Check that these paths exist (relative to the workspace root).
    Exists(Vec<String>),
    /// Nothing to check beyond the line being known (the test command itself).
    Known,
}

fn words(command: &str) -> Vec<&str> {
    command.split_whitespace().collect()
}

/// The value after `flag` in `w`.
fn flag_value<'a>(w: &[&'a str], flag: &str) -> Option<&'a str> {
    w.iter()
        .position(|x| *x == flag)
        .and_then(|i| w.get(i + 1).copied())
}

/// Where an example or bench named `name` of any workspace package lives.
fn target_file(kind: &str, name: &str) -> Vec<String> {
    let root = workspace_root();
    let mut found = Vec::new();
    let mut dirs = vec![root.clone()];
    if let Ok(entries) = std::fs::read_dir(root.join("crates")) {
        dirs.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
    }
    for dir in dirs {
        let file = dir.join(kind).join(format!("{name}.rs"));
        if file.exists() {
            found.push(file.strip_prefix(&root).unwrap().display().to_string());
        }
    }
    if found.is_empty() {
        found.push(format!("{kind}/{name}.rs (in some package)"));
    }
    found
}

fn classify(cmd: &DocCommand) -> Result<Action, String> {
    let c = cmd.command.as_str();
    let w = words(c);
    if w.first() == Some(&"qchess") || c.contains("| qchess ") {
        return Ok(Action::Run(c.to_string()));
    }
    if let Some(rest) = c.strip_prefix("cargo run --release -p qchess-cli -- ") {
        return Ok(Action::Run(format!("qchess {rest}")));
    }
    match (w.first().copied(), w.get(1).copied()) {
        (Some("cargo"), Some("install")) => {
            let path = flag_value(&w, "--path").ok_or("cargo install without --path")?;
            Ok(Action::Exists(vec![format!("{path}/Cargo.toml")]))
        }
        (Some("cargo"), Some("test")) if c == "cargo test --workspace --release" => {
            Ok(Action::Known)
        }
        (Some("cargo"), Some("run" | "bench" | "build")) => {
            let mut paths = Vec::new();
            if let Some(p) = flag_value(&w, "-p") {
                paths.push(format!("crates/{p}/Cargo.toml"));
            }
            if let Some(e) = flag_value(&w, "--example") {
                paths.extend(target_file("examples", e));
            }
            if let Some(b) = flag_value(&w, "--bench") {
                paths.extend(target_file("benches", b));
            }
            Ok(Action::Exists(paths))
        }
        (Some("pip" | "pip3"), Some("install")) => {
            let target = w.last().copied().unwrap_or("");
            Ok(Action::Exists(vec![format!("{target}/pyproject.toml")]))
        }
        (Some("mpirun"), _) => Ok(Action::Known),
        _ => Err(format!(
            "{}:{}: `{c}` is a kind of command this test does not know; teach it in \
             crates/qchess-cli/tests/docs_commands.rs",
            cmd.file, cmd.line
        )),
    }
}

/// Runs one documented command line; `Err` says why it failed.
fn run_line(cmd: &DocCommand, line: &str) -> Result<(), String> {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_qchess"));
    let bin_dir = bin.parent().expect("the binary has a directory");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(std::env::temp_dir())
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped");
        // An interactive game ends at once.
        let _ = stdin.write_all(b"quit\n");
    }
    let start = Instant::now();
    let limit = Duration::from_secs(180);
    loop {
        if child.try_wait().map_err(|e| e.to_string())?.is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            return Err(format!("ran for more than {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "exit {:?}\nstdout: {stdout}\nstderr: {stderr}",
            out.status.code()
        ));
    }
    let number = !cmd.comment.is_empty() && cmd.comment.chars().all(|c| c.is_ascii_digit());
    if number && !stdout.contains(&cmd.comment) {
        return Err(format!(
            "the doc says it prints {}, it printed: {stdout}",
            cmd.comment
        ));
    }
    Ok(())
}

fn check_all(slow: bool) {
    let commands = documented_commands();
    assert!(
        commands.len() >= 10,
        "the README's commands were found: {commands:?}"
    );
    let root = workspace_root();
    let mut failures = Vec::new();
    let mut ran = 0;
    for cmd in &commands {
        let is_slow = cmd.comment.split_whitespace().any(|w| w == "slow");
        if is_slow != slow {
            continue;
        }
        match classify(cmd) {
            Err(e) => failures.push(e),
            Ok(Action::Known) => {}
            Ok(Action::Exists(paths)) => {
                for p in paths {
                    if !root.join(&p).exists() {
                        failures.push(format!(
                            "{}:{}: `{}` names {p}, which does not exist",
                            cmd.file, cmd.line, cmd.command
                        ));
                    }
                }
            }
            Ok(Action::Run(line)) => {
                ran += 1;
                if let Err(e) = run_line(cmd, &line) {
                    failures.push(format!("{}:{}: `{}`: {e}", cmd.file, cmd.line, cmd.command));
                }
            }
        }
    }
    if !slow {
        assert!(ran >= 8, "only {ran} documented commands ran");
    }
    assert!(
        failures.is_empty(),
        "documented commands that fail:\n{}",
        failures.join("\n")
    );
}

#[test]
fn documented_commands_run() {
    check_all(false);
}

#[test]
#[ignore = "large-state benchmarks written in the docs; run with --ignored"]
fn slow_documented_commands_run() {
    check_all(true);
}

#[test]
fn comments_and_classification() {
    assert_eq!(
        split_comment("qchess perft --depth 5   # 4865609"),
        ("qchess perft --depth 5".into(), "4865609".into())
    );
    assert_eq!(
        split_comment("echo '{\"a\":\"#b\"}' | qchess eval # x"),
        ("echo '{\"a\":\"#b\"}' | qchess eval".into(), "x".into())
    );
    let doc = |c: &str| DocCommand {
        file: "t".into(),
        line: 1,
        command: c.into(),
        comment: String::new(),
    };
    assert_eq!(
        classify(&doc("cargo run --release -p qchess-cli -- demo")),
        Ok(Action::Run("qchess demo".into()))
    );
    assert!(classify(&doc("rm -rf /")).is_err());
    // A wrong path is caught.
    let missing = classify(&doc("cargo install --path crates/nope")).unwrap();
    assert_eq!(
        missing,
        Action::Exists(vec!["crates/nope/Cargo.toml".into()])
    );
}
