//! `qchess eval`: JSON lines in, JSON lines out.
//!
//! Each input line is one JSON object with a `"variant"` field (`"cantwell"`, `"niels"` or
//! `"akl"`; default `"cantwell"`). Each produces exactly one output line: the variant's
//! answer with `"ok": true`, or `{"ok": false, "error": {"kind", "message", "at"}}`. A bad line
//! never stops the run: the next line is still read. Blank lines are skipped.
//!
//! What the variants share (reading common fields, answers, move reports, refusals and their
//! reason codes, limits) is the frame, [`frame`]; a variant module holds only its own rules.

mod akl;
mod cantwell;
mod frame;
mod niels;

use crate::error::CliError;
use clap::Args;
pub use frame::{Answer, Context, Request};
use serde_json::{Value, json};
use std::io::{BufRead, Write};

/// Arguments of `qchess eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {}

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

    fn to_json(&self) -> Value {
        json!({"ok": false, "error": {"kind": self.kind, "message": self.message, "at": self.at}})
    }
}

/// Runs `qchess eval` over standard input.
pub fn run(_args: &EvalArgs) -> Result<(), CliError> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    eval_stream_with(&Context::default(), stdin.lock(), &mut stdout.lock())
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
        raw.clear();
        if input.read_until(b'\n', &mut raw)? == 0 {
            return Ok(());
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

    fn run_lines(input: &str) -> Vec<Value> {
        let mut out = Vec::new();
        eval_stream(input.as_bytes(), &mut out).unwrap();
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
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
