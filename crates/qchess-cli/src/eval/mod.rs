//! `qchess eval`: JSON lines in, JSON lines out.
//!
//! Each input line is one JSON object with a `"variant"` field (`"cantwell"`, `"niels"` or
//! `"akl"`; default `"cantwell"`). Each produces exactly one output line: the variant's
//! answer with `"ok": true`, or `{"ok": false, "error": {"kind", "message", "at"}}`. A bad line
//! never stops the run: the next line is still read. Blank lines are skipped. Each line is
//! bounded ([`limits`]: `--max-line-bytes`, default 1 MiB; `--max-moves`, default 10 000):
//! over a bound, the line is answered with an error of kind `"limit"` and the run goes on.
//!
//! What the variants share (reading common fields, answers, move reports, refusals and their
//! reason codes, limits) is the frame (`eval/frame.rs`); a variant module holds only its own rules.

mod akl;
mod cantwell;
mod frame;
pub mod limits;
mod niels;

use crate::error::CliError;
use clap::Args;
pub use frame::{Answer, Context, Limit, Limits, Request};
use serde_json::{Value, json};
use std::io::{BufRead, Write};

/// Arguments of `qchess eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Memory budget in bytes for every state built (default: the smallest of the
    /// address-space/data limits, the cgroup limit and MemAvailable, less a margin).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<usize>,
    /// Longest input line in bytes; a longer line is answered with a "limit" error.
    #[arg(long, default_value_t = limits::DEFAULT_MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// Most moves in one request; more are answered with a "limit" error.
    #[arg(long, default_value_t = limits::DEFAULT_MAX_MOVES)]
    pub max_moves: usize,
}

/// A failed evaluation of one input line.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    /// Machine-readable class: `"json"`, `"request"`, `"fen"`, `"move"`, `"illegal_move"`, ...
    pub kind: String,
    /// What is wrong, for a person.
    pub message: String,
    /// Where: a JSON path, a move index, a character position; `null` when not applicable.
    pub at: Value,
}

impl EvalError {
    /// An error of `kind` with `message` and no location.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
            at: Value::Null,
        }
    }

    /// The same error, located at `at`.
    pub fn at(mut self, at: impl Into<Value>) -> Self {
        self.at = at.into();
        self
    }

    /// The error as a whole line's answer; the message and a textual location are cut
    /// ([`limits::clip_message`], [`limits::clip_at`]) so bad input is never echoed whole.
    fn to_json(&self) -> Value {
        json!({"ok": false, "error": {"kind": self.kind,
               "message": limits::clip_message(&self.message), "at": limits::clip_at(&self.at)}})
    }
}

/// Runs `qchess eval` over standard input.
pub fn run(args: &EvalArgs) -> Result<(), CliError> {
    qchess_sim::set_default_memory_budget(args.memory);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut ctx = Context::default();
    ctx.limits.max_line_bytes = args.max_line_bytes;
    ctx.limits.max_moves = args.max_moves;
    eval_stream_with(&ctx, stdin.lock(), &mut stdout.lock())
}

/// Evaluates one request line (JSON object) under `limits` and returns its answer: the
/// variant's fields with `"ok": true`, or `{"ok": false, "error": ..}`. Never panics on any
/// input; the library entry point for embedding and fuzzing. Quotes of the input in the
/// answer are cut ([`limits::MESSAGE_LIMIT`], [`crate::error::QUOTE_LIMIT`]). The whole answer
/// is built in memory (a `"distribution_limit": "all"` listing included).
pub fn answer_line(line: &str, limits: &Limits) -> Value {
    let ctx = Context { limits: *limits };
    if line.len() > limits.max_line_bytes {
        return limits::too_long(line.len(), limits.max_line_bytes).to_json();
    }
    let mut answer = match eval_line(&ctx, line) {
        Ok(answer) => answer.into_value(),
        Err(err) => err.to_json(),
    };
    limits::clip_answer(&mut answer);
    answer
}

/// Evaluates every line of `input` under the default [`Context`], writing one JSON line per
/// non-blank input line.
#[cfg(test)]
pub fn eval_stream(input: impl BufRead, output: &mut impl Write) -> Result<(), CliError> {
    eval_stream_with(&Context::default(), input, output)
}

/// Evaluates every line of `input` under `ctx`, writing one JSON line per non-blank input
/// line: the answer (`"ok": true`) or the line's error (`"ok": false`).
pub fn eval_stream_with(
    ctx: &Context,
    mut input: impl BufRead,
    output: &mut impl Write,
) -> Result<(), CliError> {
    let mut raw = Vec::new();
    loop {
        match limits::read_line(&mut input, &mut raw, ctx.limits.max_line_bytes)? {
            limits::Line::End => return Ok(()),
            limits::Line::TooLong(len) => {
                let err = limits::too_long(len, ctx.limits.max_line_bytes);
                serde_json::to_writer(&mut *output, &err.to_json())
                    .map_err(std::io::Error::from)?;
                output.write_all(b"\n")?;
                output.flush()?;
                continue;
            }
            limits::Line::Whole => {}
        }
        // Bytes, not `lines()`: a line that is not UTF-8 is that line's error, not the run's.
        let answer = match std::str::from_utf8(&raw) {
            Err(e) => Err(
                EvalError::new("json", format!("the line is not valid UTF-8: {e}"))
                    .at(json!({"column": e.valid_up_to() + 1})),
            ),
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => eval_line(ctx, line),
        };
        match answer {
            Ok(answer) => answer.write(output)?,
            Err(err) => {
                serde_json::to_writer(&mut *output, &err.to_json()).map_err(std::io::Error::from)?
            }
        }
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

fn eval_line(ctx: &Context, line: &str) -> Result<Answer, EvalError> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        EvalError::new("json", format!("invalid JSON: {e}")).at(json!({"column": e.column()}))
    })?;
    let Value::Object(map) = value else {
        return Err(EvalError::new("request", "each line must be a JSON object"));
    };
    if let Some(Value::Array(moves)) = map.get("moves") {
        if moves.len() > ctx.limits.max_moves {
            return Err(EvalError::new(
                "limit",
                format!(
                    "{} moves, over the limit of {} per request (--max-moves)",
                    moves.len(),
                    ctx.limits.max_moves
                ),
            )
            .at("moves"));
        }
    }
    let request = Request::new(&map, ctx);
    match map.get("variant") {
        None => cantwell::eval(request),
        Some(Value::String(v)) => match v.as_str() {
            "cantwell" => cantwell::eval(request),
            "niels" => niels::eval(request),
            "akl" => akl::eval(request),
            other => Err(EvalError::new(
                "request",
                format!("unknown variant {other:?}: expected \"cantwell\", \"niels\" or \"akl\""),
            )
            .at("variant")),
        },
        Some(_) => Err(EvalError::new("request", "\"variant\" must be a string").at("variant")),
    }
}

/// Evaluates one line and returns its one answer (for the variants' unit tests).
#[cfg(test)]
fn eval_one(line: &str) -> Value {
    let mut out = Vec::new();
    eval_stream(line.as_bytes(), &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run_lines(input: &str) -> Vec<Value> {
        let mut out = Vec::new();
        eval_stream(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The answer to one line with each move's echoed text (`"move"`) removed.
    fn without_echo(line: &str) -> Value {
        let mut v = run_lines(line).remove(0);
        for m in v["moves"].as_array_mut().unwrap() {
            m.as_object_mut().unwrap().remove("move");
        }
        v
    }

    #[test]
    fn every_variant_reads_the_plain_move_forms_of_qchess_play() {
        let promote = "k7/4P3/8/8/8/8/8/K7 w - - 0 1";
        for (variant, position, plain, canonical) in [
            ("cantwell", "startpos", ["e2 e4", "e7-e5"], ["e2e4", "e7e5"]),
            ("niels", "startpos", ["e2 e4", "e7-e5"], ["e2e4", "e7e5"]),
            (
                "akl",
                "startpos",
                ["e2 e4", "e7-e5"],
                ["e2 -> e4", "e7 -> e5"],
            ),
            ("cantwell", promote, ["e7e8=q", "a8b7"], ["e7e8Q", "a8b7"]),
            ("niels", promote, ["e7 e8Q", "a8b7"], ["e7e8=q", "a8b7"]),
        ] {
            let line = |m: [&str; 2]| {
                json!({"variant": variant, "position": position, "seed": 9, "moves": m}).to_string()
            };
            let (a, b) = (without_echo(&line(plain)), without_echo(&line(canonical)));
            assert_eq!(a["moves"][0]["applied"], true, "{variant} {plain:?}: {a}");
            assert_eq!(a["moves"][1]["applied"], true, "{variant} {plain:?}: {a}");
            assert_eq!(a, b, "{variant} {plain:?}");
        }
        // The answer echoes what was sent.
        let v = run_lines(r#"{"variant": "niels", "moves": ["e2-e4"]}"#).remove(0);
        assert_eq!(v["moves"][0]["move"], "e2-e4");
        assert_eq!(v["moves"][0]["notation"], "e2e4");
    }

    #[test]
    fn bad_lines_give_errors_and_the_next_line_is_read() {
        let out = run_lines("{not json\n\n[1,2]\n{\"variant\": \"chess960\"}\n{\"variant\": 3}\n");
        assert_eq!(out.len(), 4);
        assert_eq!(out[0]["ok"], false);
        assert_eq!(out[0]["error"]["kind"], "json");
        assert_eq!(out[1]["error"]["kind"], "request");
        assert_eq!(out[2]["error"]["at"], "variant");
        assert!(
            out[2]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("chess960")
        );
        assert_eq!(out[3]["error"]["kind"], "request");
    }

    #[test]
    fn a_line_that_is_not_utf8_is_answered_and_the_run_goes_on() {
        let mut out = Vec::new();
        eval_stream(&b"{\"a\": \"\xff\"}\n[1]\n"[..], &mut out).unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["error"]["kind"], "json");
        assert_eq!(lines[0]["error"]["at"]["column"], 8);
        assert_eq!(lines[1]["error"]["kind"], "request");
    }
}
