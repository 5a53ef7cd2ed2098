//! The error every subcommand returns: a message for stderr and the process exit code.

use std::fmt;

/// A failed subcommand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// Exit code: 2 for bad arguments or bad input, 1 for anything else.
    pub code: u8,
    /// What went wrong, in words a user can act on.
    pub message: String,
}

impl CliError {
    /// Bad arguments or input (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: 2,
            message: message.into(),
        }
    }

    /// A failure that is not the user's input (exit code 1).
    pub fn failure(message: impl Into<String>) -> Self {
        Self {
            code: 1,
            message: message.into(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<std::io::Error> for CliError {
    fn from(err: std::io::Error) -> Self {
        Self::failure(format!("I/O error: {err}"))
    }
}

/// At most this many characters of a user's bad input are quoted back in a message.
pub const QUOTE_LIMIT: usize = 64;

/// `text` cut to [`QUOTE_LIMIT`] characters, with `...` when it was longer, for quoting bad
/// input back without echoing an unbounded string.
pub fn quote_prefix(text: &str) -> String {
    prefix_of(text, QUOTE_LIMIT)
}

/// `text` cut to `limit` characters, with `...` when it was longer.
pub fn prefix_of(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_string(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_bounded() {
        assert_eq!(quote_prefix("hlep"), "hlep");
        let long = "x".repeat(1000);
        let q = quote_prefix(&long);
        assert_eq!(q.len(), QUOTE_LIMIT + 3);
        assert!(q.ends_with("..."));
        // Multi-byte characters are cut on a character boundary.
        let wide = "\u{e9}".repeat(100);
        assert_eq!(quote_prefix(&wide).chars().count(), QUOTE_LIMIT + 3);
    }
}
