//! Bounds on one `qchess eval` request: the line length, the number of moves, and how much of
//! a bad input an answer quotes back.
//!
//! A line longer than [`Limits::max_line_bytes`](super::Limits::max_line_bytes) is never held whole: the first bytes are kept
//! to count, the rest is skipped up to the newline, and the line is answered with an error of
//! kind `"limit"`. A request with more than [`Limits::max_moves`](super::Limits::max_moves) moves is answered the same
//! way (at `"moves"`). In every answer, the echo of a move (`"move"`) and an error location
//! (`"at"`) are cut to [`QUOTE_LIMIT`](crate::error::QUOTE_LIMIT) characters and an error `"message"` to
//! [`MESSAGE_LIMIT`], each ending with `...` when cut, so a huge bad move string gets a small
//! answer. The run goes on after each of these.

use super::EvalError;
use crate::error::{prefix_of, quote_prefix};
use serde_json::Value;
use std::io::BufRead;

/// Default of `--max-line-bytes`: 1 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;
/// Default of `--max-moves`: 10 000 moves per request.
pub const DEFAULT_MAX_MOVES: usize = 10_000;
/// At most this many characters of an error message are kept in an answer (a message quotes
/// at most [`QUOTE_LIMIT`](crate::error::QUOTE_LIMIT) characters of the input, but may hold several quotes).
pub const MESSAGE_LIMIT: usize = 256;

/// One line read by [`read_line`].
pub(super) enum Line {
    /// End of input.
    End,
    /// A whole line (without its newline, when it had one) in the buffer.
    Whole,
    /// A line of this many bytes, over the limit: the buffer holds nothing of it.
    TooLong(usize),
}

/// Reads one line into `raw` (cleared first), holding at most `max` bytes of it: a longer line
/// is read to its end and dropped.
pub(super) fn read_line(
    input: &mut impl BufRead,
    raw: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    raw.clear();
    let mut total = 0usize;
    let mut any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        total = total.saturating_add(chunk);
        if total <= max {
            raw.extend_from_slice(&buf[..chunk]);
        } else if !raw.is_empty() {
            raw.clear();
            raw.shrink_to(max.min(1 << 16));
        }
        input.consume(if done { chunk + 1 } else { chunk });
        if done {
            break;
        }
    }
    Ok(if !any {
        Line::End
    } else if total > max {
        Line::TooLong(total)
    } else {
        Line::Whole
    })
}

/// Cuts every `"move"` and `"at"` string of an answer (echoes of the input) to
/// [`QUOTE_LIMIT`](crate::error::QUOTE_LIMIT) characters and every `"message"` to [`MESSAGE_LIMIT`].
pub(super) fn clip_answer(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(clip_answer),
        Value::Object(fields) => {
            for (key, v) in fields.iter_mut() {
                match (key.as_str(), &mut *v) {
                    ("move" | "at", Value::String(s)) => *s = quote_prefix(s),
                    ("message", Value::String(s)) => *s = prefix_of(s, MESSAGE_LIMIT),
                    _ => clip_answer(v),
                }
            }
        }
        _ => {}
    }
}

/// The error answering a line of `len` bytes, over `max`.
pub(super) fn too_long(len: usize, max: usize) -> EvalError {
    EvalError::new(
        "limit",
        format!("the line is {len} bytes, over the limit of {max} (--max-line-bytes)"),
    )
}

/// An error message cut to [`MESSAGE_LIMIT`] characters.
pub(super) fn clip_message(message: &str) -> String {
    prefix_of(message, MESSAGE_LIMIT)
}

/// An error location: a string (an echo of the input) cut to
/// [`QUOTE_LIMIT`](crate::error::QUOTE_LIMIT) characters; anything else as it is.
pub(super) fn clip_at(at: &Value) -> Value {
    match at {
        Value::String(s) => Value::String(quote_prefix(s)),
        other => other.clone(),
    }
}

/// Read-outs smaller than this many bytes in all are made without asking the budget: they are
/// not state-sized, and the measured default budget keeps a fixed margin (64 MiB) for
/// everything that is not ([`qchess_sim::default_memory_budget`]). It keeps a tiny `--memory`
/// (set to refuse a move) from refusing the few entries such a small state shows.
pub const SMALL_READOUT_BYTES: usize = 64 << 10;

/// What the read-outs of one answer may hold in memory until the answer is written: the
/// state's memory budget less what the state holds (issue 10, Deliver 5). Each bounded
/// read-out asks for its bytes before it is made ([`AnswerBudget::ask`]) and reserves them
/// fallibly ([`AnswerBudget::reserve`]); running out is the line's error of kind
/// `"state_too_large"` (bytes asked and available), never an abort, and the next line is read.
/// Listings written incrementally (`"distribution_limit": "all"`) ask nothing.
#[derive(Debug, Clone, Copy)]
pub(super) struct AnswerBudget {
    /// Bytes the budget had left when the read-outs began.
    available: usize,
    /// Bytes asked so far.
    used: usize,
}

impl AnswerBudget {
    /// A budget of `budget` bytes of which `held` are taken (by the state).
    pub(super) fn new(budget: usize, held: usize) -> Self {
        Self {
            available: budget.saturating_sub(held),
            used: 0,
        }
    }

    /// Bytes still free (the small-read-out allowance not included).
    pub(super) fn left(&self) -> usize {
        self.available.saturating_sub(self.used)
    }

    /// Asks for `bytes` more for the read-out requested at the field `at`: `state_too_large`
    /// when they are over what is left and the read-outs would then hold more than
    /// [`SMALL_READOUT_BYTES`].
    pub(super) fn ask(&mut self, bytes: usize, at: &str) -> Result<(), EvalError> {
        let used = self.used.saturating_add(bytes);
        if used > self.available && used > SMALL_READOUT_BYTES {
            return Err(too_large(bytes, self.left(), at));
        }
        self.used = used;
        Ok(())
    }

    /// [`AnswerBudget::ask`] for `n` more entries of `vec`, then reserves them fallibly.
    pub(super) fn reserve<T>(
        &mut self,
        vec: &mut Vec<T>,
        n: usize,
        at: &str,
    ) -> Result<(), EvalError> {
        let bytes = n.saturating_mul(std::mem::size_of::<T>());
        self.ask(bytes, at)?;
        vec.try_reserve_exact(n)
            .map_err(|_| too_large(bytes, self.left(), at))
    }
}

/// The error of a read-out that does not fit: `bytes` asked, `available` left.
pub(super) fn too_large(bytes: usize, available: usize, at: &str) -> EvalError {
    EvalError::new(
        "state_too_large",
        format!(
            "state too large: the answer's read-out needs {bytes} bytes, the memory budget has {available} left (a smaller \"distribution_limit\", \"all\" to stream it, or a larger --memory)"
        ),
    )
    .at(at)
}
