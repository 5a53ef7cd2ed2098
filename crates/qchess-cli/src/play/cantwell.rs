//! `qchess play --variant cantwell`. Owned by the qchess-cantwell work.

use super::PlayArgs;
use crate::error::CliError;
use std::io::{BufRead, Write};

/// Plays a game on `input` / `output` (the terminal, or a script in tests).
pub fn play(_args: &PlayArgs, _input: &mut dyn BufRead, _output: &mut dyn Write) -> Result<(), CliError> {
    Err(CliError::failure("play --variant cantwell is not implemented yet"))
}
