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
