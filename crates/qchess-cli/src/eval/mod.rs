//! `qchess eval`: JSON lines in, JSON lines out.
//!
//! Each input line is one JSON object with a `"variant"` field (`"cantwell"`, `"niels"` or
//! `"akl"`; default `"cantwell"`). Each produces exactly one output line: the variant's
//! answer with `"ok": true`, or `{"ok": false, "error": {"kind", "message", "at"}}`. A bad line
//! never stops the run: the next line is still read. Blank lines are skipped.

mod akl;
mod cantwell;
mod niels;

use crate::error::CliError;
use clap::Args;
use serde_json::{Map, Value, json};
use std::io::{BufRead, Write};

/// Arguments of `qchess eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Memory budget in bytes for every state built (default: the smallest of the
    /// address-space/data limits, the cgroup limit and MemAvailable, less a margin).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<usize>,
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

    fn to_json(&self) -> Value {
        json!({"ok": false, "error": {"kind": self.kind, "message": self.message, "at": self.at}})
    }
}

/// Runs `qchess eval` over standard input.
pub fn run(args: &EvalArgs) -> Result<(), CliError> {
    qchess_sim::set_default_memory_budget(args.memory);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    eval_stream(stdin.lock(), &mut stdout.lock())
}

/// Evaluates every line of `input`, writing one JSON line per non-blank input line.
pub fn eval_stream(mut input: impl BufRead, output: &mut impl Write) -> Result<(), CliError> {
    let mut raw = Vec::new();
    loop {
        raw.clear();
        if input.read_until(b'\n', &mut raw)? == 0 {
            return Ok(());
        }
        // Bytes, not `lines()`: a line that is not UTF-8 is that line's error, not the run's.
        let answer = match std::str::from_utf8(&raw) {
            Err(e) => EvalError::new("json", format!("the line is not valid UTF-8: {e}"))
                .at(json!({"column": e.valid_up_to() + 1}))
                .to_json(),
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => answer_line(line),
        };
        writeln!(output, "{answer}")?;
        output.flush()?;
    }
}

fn answer_line(line: &str) -> Value {
    match eval_line(line) {
        Ok(mut fields) => {
            fields.insert("ok".into(), Value::Bool(true));
            Value::Object(fields)
        }
        Err(err) => err.to_json(),
    }
}

fn eval_line(line: &str) -> Result<Map<String, Value>, EvalError> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        EvalError::new("json", format!("invalid JSON: {e}")).at(json!({"column": e.column()}))
    })?;
    let Value::Object(request) = value else {
        return Err(EvalError::new("request", "each line must be a JSON object"));
    };
    match request.get("variant") {
        None => cantwell::eval(&request),
        Some(Value::String(v)) => match v.as_str() {
            "cantwell" => cantwell::eval(&request),
            "niels" => niels::eval(&request),
            "akl" => akl::eval(&request),
            other => Err(EvalError::new(
                "request",
                format!("unknown variant {other:?}: expected \"cantwell\", \"niels\" or \"akl\""),
            )
            .at("variant")),
        },
        Some(_) => Err(EvalError::new("request", "\"variant\" must be a string").at("variant")),
    }
}

/// The request's `"seed"`: a non-negative integer, default 0. Every variant seeds its
/// ChaCha8 stream with it, so the same request always gets the same answer.
fn seed_field(request: &Map<String, Value>) -> Result<u64, EvalError> {
    match request.get("seed") {
        None => Ok(0),
        Some(v) => v.as_u64().ok_or_else(|| {
            EvalError::new("request", "\"seed\" must be a non-negative integer").at("seed")
        }),
    }
}

/// The request's `key` as a list of strings; absent means empty.
fn string_list_field(request: &Map<String, Value>, key: &str) -> Result<Vec<String>, EvalError> {
    match request.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => string_list(items, key),
        Some(_) => {
            Err(EvalError::new("request", format!("\"{key}\" must be an array of strings")).at(key))
        }
    }
}

/// The strings of a JSON array found under `key`; an error names the entry `key[i]`.
fn string_list(items: &[Value], key: &str) -> Result<Vec<String>, EvalError> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str().map(str::to_string).ok_or_else(|| {
                EvalError::new(
                    "request",
                    format!("each entry of \"{key}\" must be a string"),
                )
                .at(format!("{key}[{i}]"))
            })
        })
        .collect()
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
