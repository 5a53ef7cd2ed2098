//! `qchess eval` bounds every request: a line over `--max-line-bytes` (default 1 MiB) or a
//! request over `--max-moves` (default 10 000) is answered with an error of kind "limit" and
//! the run goes on; an answer quotes at most a bounded prefix of a bad input (64 characters
//! of a move, 256 of a message). Before, a line
//! was read whole and a 64 MiB bad move got a 64 MiB answer.

use serde_json::Value;

use crate::common;
use common::qchess_bytes;

fn answers(args: &[&str], input: &[u8]) -> (Vec<String>, Vec<Value>) {
    let mut full = vec!["eval"];
    full.extend_from_slice(args);
    let run = qchess_bytes(&full, input);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let lines: Vec<String> = run.stdout.lines().map(str::to_string).collect();
    let values = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("each answer is JSON"))
        .collect();
    (lines, values)
}

#[test]
fn a_huge_bad_move_gets_a_small_answer() {
    let huge = "x".repeat(4 << 20);
    let input = format!(
        "{{\"variant\": \"cantwell\", \"moves\": [\"{huge}\"]}}\n{{\"variant\": \"niels\", \"moves\": [\"{huge}\"]}}\n{{\"variant\": \"akl\", \"moves\": [\"{huge}\"]}}\n"
    );
    let (lines, values) = answers(&["--max-line-bytes", "8000000"], input.as_bytes());
    assert_eq!(values.len(), 3);
    for (line, v) in lines.iter().zip(&values) {
        assert_eq!(v["ok"], true, "{}", &line[..line.len().min(300)]);
        assert_eq!(v["moves"][0]["applied"], false);
        let echo = v["moves"][0]["move"].as_str().unwrap();
        assert_eq!(echo, format!("{}...", "x".repeat(64)));
        assert!(
            v["moves"][0]["error"]["message"].as_str().unwrap().len() <= 259,
            "message not bounded"
        );
        assert!(line.len() < 64 << 10, "answer of {} bytes", line.len());
    }
}

#[test]
fn a_line_over_the_limit_is_refused_and_the_run_goes_on() {
    // Default limit, 1 MiB: a 2 MiB line is refused without being echoed.
    let long = format!("{{\"moves\": [\"{}\"]}}\n", "e".repeat(2 << 20));
    let input = format!("{long}{{\"variant\": \"cantwell\", \"moves\": [\"e2e4\"]}}\n");
    let (lines, values) = answers(&[], input.as_bytes());
    assert_eq!(values.len(), 2);
    assert_eq!(values[0]["ok"], false);
    assert_eq!(values[0]["error"]["kind"], "limit");
    let message = values[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains(&(long.len() - 1).to_string()), "{message}");
    assert!(message.contains("1048576"), "{message}");
    assert!(lines[0].len() < 512);
    assert_eq!(values[1]["ok"], true);
    assert_eq!(values[1]["moves"][0]["applied"], true);

    // A smaller limit by flag; a line exactly at the limit is still read.
    let line = "{\"variant\": \"cantwell\", \"moves\": [\"e2e4\"]}";
    let exact = line.len().to_string();
    let below = (line.len() - 1).to_string();
    let (_, v) = answers(
        &["--max-line-bytes", &exact],
        format!("{line}\n").as_bytes(),
    );
    assert_eq!(v[0]["ok"], true);
    let (_, v) = answers(
        &["--max-line-bytes", &below],
        format!("{line}\n{line}").as_bytes(),
    );
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["error"]["kind"], "limit");
    assert_eq!(v[1]["error"]["kind"], "limit");
}

#[test]
fn too_many_moves_are_refused_and_the_run_goes_on() {
    let (_, v) = answers(
        &["--max-moves", "3"],
        b"{\"variant\": \"niels\", \"moves\": [\"e2e4\", \"e7e5\", \"g1f3\", \"b8c6\"]}\n\
          {\"variant\": \"niels\", \"moves\": [\"e2e4\", \"e7e5\", \"g1f3\"]}\n",
    );
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["ok"], false);
    assert_eq!(v[0]["error"]["kind"], "limit");
    assert_eq!(v[0]["error"]["at"], "moves");
    assert_eq!(v[1]["ok"], true);
    assert_eq!(v[1]["moves"].as_array().unwrap().len(), 3);

    // The default, 10 000.
    let moves = vec!["\"zz\""; 10_001].join(",");
    let (_, v) = answers(&[], format!("{{\"moves\": [{moves}]}}\n").as_bytes());
    assert_eq!(v[0]["error"]["kind"], "limit");
    let moves = vec!["\"zz\""; 10_000].join(",");
    let (_, v) = answers(&[], format!("{{\"moves\": [{moves}]}}\n").as_bytes());
    assert_eq!(v[0]["ok"], true);
}

#[test]
fn the_defaults_are_in_the_help() {
    let run = qchess_bytes(&["eval", "--help"], b"");
    assert_eq!(run.code, Some(0));
    assert!(run.stdout.contains("--max-line-bytes"), "{}", run.stdout);
    assert!(run.stdout.contains("1048576"), "{}", run.stdout);
    assert!(run.stdout.contains("--max-moves"), "{}", run.stdout);
    assert!(run.stdout.contains("10000"), "{}", run.stdout);
}
