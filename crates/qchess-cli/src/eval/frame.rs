//! The frame every variant of `qchess eval` shares: reading a request's common fields,
//! building and writing answers (every answer carries `"ok": true|false`), per-move reports,
//! refusals with stable reason codes, and the limits on what an answer may hold.
//!
//! A variant module (`cantwell`, `niels`, `akl`) only reads its own fields and fills an
//! [`Answer`]; everything the variants have in common lives here, so new request-wide
//! settings (budgets, line and move-count limits) have one place to go: [`Context`].

use super::EvalError;
use serde_json::{Map, Value, json};
use std::io::{self, Write};

/// Settings of one `qchess eval` run that every request sees (the command line's, not the
/// request's). New run-wide limits and budgets are added here.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Limits of what one answer may hold.
    pub limits: Limits,
}

/// Limits of one request and its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries of a bounded listing (`distribution`, `amplitudes`) when the request does not
    /// say `"distribution_limit"`.
    pub distribution: Limit,
    /// Longest line read, in bytes, not counting the newline (`--max-line-bytes`).
    pub max_line_bytes: usize,
    /// Most moves (entries of `"moves"`) in one request (`--max-moves`).
    pub max_moves: usize,
}

/// The default of `"distribution_limit"`.
pub const DEFAULT_DISTRIBUTION_LIMIT: usize = 1000;

impl Default for Limits {
    fn default() -> Self {
        Self {
            distribution: Limit::At(DEFAULT_DISTRIBUTION_LIMIT),
            max_line_bytes: super::limits::DEFAULT_MAX_LINE_BYTES,
            max_moves: super::limits::DEFAULT_MAX_MOVES,
        }
    }
}

/// How many entries of a listing an answer carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most this many (the most probable first).
    At(usize),
    /// Every entry, written incrementally as the answer is written.
    All,
}

/// One request object, with readers of the fields every variant understands.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    map: &'a Map<String, Value>,
    ctx: &'a Context,
}

impl<'a> Request<'a> {
    /// The request `map`, read under the run's `ctx`.
    pub fn new(map: &'a Map<String, Value>, ctx: &'a Context) -> Self {
        Self { map, ctx }
    }

    /// The raw field `key`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// `"seed"`: a non-negative integer, default 0. Every variant seeds its ChaCha8 stream
    /// with it, so the same request always gets the same answer.
    pub fn seed(&self) -> Result<u64, EvalError> {
        match self.get("seed") {
            None => Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| {
                EvalError::new("request", "\"seed\" must be a non-negative integer").at("seed")
            }),
        }
    }

    /// `"moves"`: the move strings, in order; absent means none.
    pub fn moves(&self) -> Result<Vec<String>, EvalError> {
        self.strings("moves")
    }

    /// The field `key` as a list of strings; absent means empty.
    pub fn strings(&self, key: &str) -> Result<Vec<String>, EvalError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => string_list(items, key),
            Some(_) => Err(EvalError::new(
                "request",
                format!("\"{key}\" must be an array of strings"),
            )
            .at(key)),
        }
    }

    /// A switch such as `"legal_moves": true`: absent means `false`; anything but a boolean
    /// is an error.
    pub fn flag(&self, key: &str) -> Result<bool, EvalError> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(EvalError::new(
                "request",
                format!("\"{key}\" must be true or false, not {other}"),
            )
            .at(key)),
        }
    }

    /// A string field that takes one of `allowed` (the first is the default).
    pub fn choice(&self, key: &str, allowed: &[&'static str]) -> Result<&'static str, EvalError> {
        match self.get(key) {
            None => Ok(allowed[0]),
            Some(Value::String(s)) => allowed
                .iter()
                .copied()
                .find(|a| a == s)
                .ok_or_else(|| choice_error(key, allowed, &Value::String(s.clone()))),
            Some(other) => Err(choice_error(key, allowed, other)),
        }
    }

    /// `"distribution_limit"`: a non-negative integer or `"all"`; the run's default when
    /// absent. It bounds every listing of basis boards (`distribution`, `amplitudes`).
    pub fn distribution_limit(&self) -> Result<Limit, EvalError> {
        match self.get("distribution_limit") {
            None => Ok(self.ctx.limits.distribution),
            Some(Value::String(s)) if s == "all" => Ok(Limit::All),
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .map(Limit::At)
                .ok_or_else(|| {
                    EvalError::new(
                        "request",
                        "\"distribution_limit\" must be a non-negative integer or \"all\"",
                    )
                    .at("distribution_limit")
                }),
        }
    }
}

fn choice_error(key: &str, allowed: &[&str], got: &Value) -> EvalError {
    let names: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
    EvalError::new(
        "request",
        format!("\"{key}\" must be {}, not {got}", names.join(" or ")),
    )
    .at(key)
}

/// The strings of a JSON array found under `key`; an error names the entry `key[i]`.
pub fn string_list(items: &[Value], key: &str) -> Result<Vec<String>, EvalError> {
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

/// A field whose value is written straight to the output when the answer is written, never
/// held whole in memory.
type Stream = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()>>;

/// The answer to one request that succeeded: its fields, and fields written incrementally.
/// [`Answer::write`] adds `"ok": true`.
#[derive(Default)]
pub struct Answer {
    fields: Map<String, Value>,
    streams: Vec<(String, Stream)>,
}

impl Answer {
    /// An empty answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the field `key`.
    pub fn insert(&mut self, key: &str, value: impl Into<Value>) {
        self.fields.insert(key.to_string(), value.into());
    }

    /// Sets the field `key` to what `write` writes (one JSON value) when the answer is
    /// written.
    pub fn stream(
        &mut self,
        key: &str,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()> + 'static,
    ) {
        self.streams.push((key.to_string(), Box::new(write)));
    }

    /// A listing of `total` entries of which `shown` are written: `key_total`,
    /// `key_truncated` (`shown < total`) and `key`, a JSON object or array (`shape`) whose
    /// entries `write` writes one by one, straight to the output, when the answer is written.
    /// The listing is never held as JSON in memory: what `write` reads from (a bounded top
    /// list, or the state itself) is all it holds.
    pub fn listing(
        &mut self,
        key: &str,
        total: usize,
        shown: usize,
        shape: Shape,
        write: impl FnOnce(&mut Entries) + 'static,
    ) {
        self.insert(&format!("{key}_total"), total);
        self.insert(&format!("{key}_truncated"), shown < total);
        self.entries(key, shape, write);
    }

    /// The field `key`, a JSON object or array (`shape`) whose entries `write` writes one by
    /// one, straight to the output, when the answer is written.
    pub fn entries(&mut self, key: &str, shape: Shape, write: impl FnOnce(&mut Entries) + 'static) {
        self.stream(key, move |w| {
            let (open, close) = match shape {
                Shape::Object => (b"{", b"}"),
                Shape::Array => (b"[", b"]"),
            };
            w.write_all(open)?;
            let mut entries = Entries {
                out: &mut *w,
                count: 0,
                error: None,
            };
            write(&mut entries);
            if let Some(e) = entries.error {
                return Err(e);
            }
            w.write_all(close)
        });
    }

    /// Writes the answer as one JSON object (no newline), `"ok": true` included.
    pub fn write(mut self, out: &mut dyn Write) -> io::Result<()> {
        self.fields.insert("ok".into(), Value::Bool(true));
        if self.streams.is_empty() {
            return serde_json::to_writer(&mut *out, &self.fields).map_err(io::Error::from);
        }
        // Field by field: the answer is never held as one JSON text in memory.
        out.write_all(b"{")?;
        let mut first = true;
        for (key, value) in &self.fields {
            if !first {
                out.write_all(b",")?;
            }
            first = false;
            serde_json::to_writer(&mut *out, key)?;
            out.write_all(b":")?;
            serde_json::to_writer(&mut *out, value)?;
        }
        for (key, write) in self.streams {
            if !first {
                out.write_all(b",")?;
            }
            first = false;
            serde_json::to_writer(&mut *out, &key)?;
            out.write_all(b":")?;
            write(out)?;
        }
        out.write_all(b"}")
    }

    /// The whole answer as one JSON value, streamed fields included (tests, and callers
    /// that want a value, such as [`super::answer_line`]).
    pub fn into_value(self) -> Value {
        let mut bytes = Vec::new();
        self.write(&mut bytes).expect("writing to memory");
        serde_json::from_slice(&bytes).expect("the frame writes JSON")
    }
}

/// Whether a [`Answer::listing`] is a JSON object (`"key": value` entries) or an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `{"k": v, ...}`: entries written with [`Entries::entry`].
    Object,
    /// `[v, ...]`: entries written with [`Entries::item`].
    Array,
}

/// The entries of one listing, written straight to the output as they come. The first write
/// error is kept (and later entries skipped), so entries can be written from a callback that
/// returns nothing, such as a state's visit of its boards.
pub struct Entries<'a> {
    out: &'a mut dyn Write,
    count: usize,
    error: Option<io::Error>,
}

impl Entries<'_> {
    /// Writes one `"key": value` entry of an object listing.
    pub fn entry<V: serde::Serialize + ?Sized>(&mut self, key: &str, value: &V) {
        self.write_with(|out| {
            serde_json::to_writer(&mut *out, key)?;
            out.write_all(b":")?;
            serde_json::to_writer(&mut *out, value).map_err(io::Error::from)
        });
    }

    /// Writes one value of an array listing.
    pub fn item<V: serde::Serialize + ?Sized>(&mut self, value: &V) {
        self.write_with(|out| serde_json::to_writer(&mut *out, value).map_err(io::Error::from));
    }

    /// Entries written so far.
    pub fn count(&self) -> usize {
        self.count
    }

    fn write_with(&mut self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        if self.error.is_some() {
            return;
        }
        let r = if self.count > 0 {
            self.out.write_all(b",")
        } else {
            Ok(())
        }
        .and_then(|()| f(&mut *self.out));
        match r {
            Ok(()) => self.count += 1,
            Err(e) => self.error = Some(e),
        }
    }
}

/// The stable reason codes of refusals, the same across variants where the cause is the same
/// (listed in docs/architecture.md). An error object's `kind` stays the variant's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonCode {
    /// The move text does not parse.
    ParseError,
    /// There is no piece on the from-square.
    NoPiece,
    /// The piece on the from-square belongs to the side not to move.
    WrongColour,
    /// A piece stands (for certain) in the way.
    PathBlocked,
    /// The target holds a piece of the mover's own side.
    TargetOccupiedByOwn,
    /// The move would leave (or put) the mover's king in check.
    LeavesKingInCheck,
    /// The piece does not move that way.
    NotAMoveOfThisPiece,
    /// The move is forbidden by a rule option of this game.
    ForbiddenByRulesVariant,
    /// A forced outcome cannot happen (probability 0).
    OutcomeImpossible,
    /// The move would change nothing (Cantwell's Definition 2).
    NoEffect,
    /// The game is over.
    GameOver,
    /// Forced dice results cannot be used.
    BadRolls,
    /// Touch-move order broken: a move came before any touch, or names another piece than
    /// the one touched (or, in Niel's, than the one a remote collapse made move).
    TouchMove,
    /// A written outcome (a recorded collapse or capture) differs from what the game did.
    EntryMismatch,
    /// The simulator refused (size, memory).
    ResourceLimit,
    /// Refused for a reason none of the other codes names.
    Other,
}

impl ReasonCode {
    /// Every code, in the order docs/architecture.md lists them.
    #[cfg(test)]
    pub const ALL: [ReasonCode; 16] = [
        ReasonCode::ParseError,
        ReasonCode::NoPiece,
        ReasonCode::WrongColour,
        ReasonCode::PathBlocked,
        ReasonCode::TargetOccupiedByOwn,
        ReasonCode::LeavesKingInCheck,
        ReasonCode::NotAMoveOfThisPiece,
        ReasonCode::ForbiddenByRulesVariant,
        ReasonCode::OutcomeImpossible,
        ReasonCode::NoEffect,
        ReasonCode::GameOver,
        ReasonCode::BadRolls,
        ReasonCode::TouchMove,
        ReasonCode::EntryMismatch,
        ReasonCode::ResourceLimit,
        ReasonCode::Other,
    ];

    /// The code as it appears in `"reason_code"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::ParseError => "parse_error",
            ReasonCode::NoPiece => "no_piece",
            ReasonCode::WrongColour => "wrong_colour",
            ReasonCode::PathBlocked => "path_blocked",
            ReasonCode::TargetOccupiedByOwn => "target_occupied_by_own",
            ReasonCode::LeavesKingInCheck => "leaves_king_in_check",
            ReasonCode::NotAMoveOfThisPiece => "not_a_move_of_this_piece",
            ReasonCode::ForbiddenByRulesVariant => "forbidden_by_rules_variant",
            ReasonCode::OutcomeImpossible => "outcome_impossible",
            ReasonCode::NoEffect => "no_effect",
            ReasonCode::GameOver => "game_over",
            ReasonCode::BadRolls => "bad_rolls",
            ReasonCode::TouchMove => "touch_move",
            ReasonCode::EntryMismatch => "entry_mismatch",
            ReasonCode::ResourceLimit => "resource_limit",
            ReasonCode::Other => "other",
        }
    }
}

/// Why one move was refused: the error object of a refused move's report.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The variant's own class of error (kept as it always was).
    pub kind: String,
    /// The stable code, the same across variants for the same cause.
    pub reason_code: ReasonCode,
    /// What is wrong, in words.
    pub message: String,
    /// Where (`{"column": n}` in the move text), or null.
    pub at: Value,
}

impl Refusal {
    /// A refusal of class `kind` for `reason_code`, said in `message`.
    pub fn new(kind: &str, reason_code: ReasonCode, message: impl Into<String>) -> Self {
        Self {
            kind: kind.to_string(),
            reason_code,
            message: message.into(),
            at: Value::Null,
        }
    }

    /// The same refusal pointing at character `column` of the move text.
    pub fn at_column(mut self, column: usize) -> Self {
        self.at = json!({"column": column});
        self
    }

    /// The error object: `{"kind", "reason_code", "message", "at"}`.
    pub fn to_json(&self) -> Value {
        json!({"kind": self.kind, "reason_code": self.reason_code.as_str(),
               "message": super::limits::clip_message(&self.message),
               "at": super::limits::clip_at(&self.at)})
    }
}

/// The report of one move of a request's `"moves"`: `{"move", "applied", "outcome",
/// "notation", "error"}` plus whatever the variant adds.
#[derive(Debug, Clone)]
pub struct MoveReport {
    fields: Map<String, Value>,
}

impl MoveReport {
    /// `text` was applied: what happened (`outcome`) and how it is written (`notation`).
    pub fn applied(text: &str, outcome: Value, notation: Value) -> Self {
        let mut fields = Map::new();
        fields.insert("move".into(), json!(crate::error::quote_prefix(text)));
        fields.insert("applied".into(), Value::Bool(true));
        fields.insert("outcome".into(), outcome);
        fields.insert("notation".into(), notation);
        fields.insert("error".into(), Value::Null);
        Self { fields }
    }

    /// `text` was refused and changed nothing.
    pub fn refused(text: &str, why: &Refusal) -> Self {
        let mut fields = Map::new();
        // The echo of the input is cut: a huge bad move string gets a small answer.
        fields.insert("move".into(), json!(crate::error::quote_prefix(text)));
        fields.insert("applied".into(), Value::Bool(false));
        fields.insert("outcome".into(), Value::Null);
        fields.insert("notation".into(), Value::Null);
        fields.insert("error".into(), why.to_json());
        Self { fields }
    }

    /// Adds (or replaces) the field `key`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    /// Removes the field `key` (for a variant whose reports never had it).
    pub fn without(mut self, key: &str) -> Self {
        self.fields.remove(key);
        self
    }

    /// The report as JSON.
    pub fn into_value(self) -> Value {
        Value::Object(self.fields)
    }
}

/// `"w"` or `"b"`.
pub fn side_letter(c: qchess_board::Color) -> &'static str {
    if c == qchess_board::Color::White {
        "w"
    } else {
        "b"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_are_written_entry_by_entry() {
        let mut a = Answer::new();
        a.listing("d", 5, 2, Shape::Object, |e| {
            for i in 0..2 {
                e.entry(&format!("k{i}"), &i);
            }
        });
        a.insert("x", 1);
        a.listing("l", 3, 3, Shape::Array, |e| {
            for i in 0..3 {
                e.item(&json!({"i": i}));
            }
            assert_eq!(e.count(), 3);
        });
        let mut bytes = Vec::new();
        a.write(&mut bytes).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.ends_with(r#""d":{"k0":0,"k1":1},"l":[{"i":0},{"i":1},{"i":2}]}"#),
            "{text}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["d_total"], 5);
        assert_eq!(v["d_truncated"], true);
        assert_eq!(v["l_truncated"], false);
        assert_eq!(v["x"], 1);
        assert_eq!(v["ok"], true);
        // No field at all, and only streamed fields: still one object.
        assert_eq!(Answer::new().into_value(), json!({"ok": true}));
        let mut a = Answer::new();
        a.listing("e", 0, 0, Shape::Array, |_| {});
        assert_eq!(a.into_value()["e"], json!([]));
    }

    #[test]
    fn a_write_error_inside_a_listing_is_the_answers_error() {
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.0 < buf.len() {
                    return Err(io::Error::other("full"));
                }
                self.0 -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut a = Answer::new();
        a.listing("d", 1000, 1000, Shape::Array, |e| {
            for i in 0..1000 {
                e.item(&i);
            }
        });
        assert!(a.write(&mut Full(100)).is_err());
    }

    #[test]
    fn docs_list_every_reason_code() {
        let doc = include_str!("../../../../docs/architecture.md");
        for code in ReasonCode::ALL {
            assert!(
                doc.contains(&format!("`{}`", code.as_str())),
                "{} is not listed in docs/architecture.md",
                code.as_str()
            );
        }
    }

    #[test]
    fn every_reason_code_is_distinct_and_snake_case() {
        let mut names: Vec<&str> = ReasonCode::ALL.iter().map(|c| c.as_str()).collect();
        assert!(
            names
                .iter()
                .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ReasonCode::ALL.len());
    }
}
