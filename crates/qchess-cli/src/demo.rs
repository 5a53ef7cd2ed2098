//! `qchess demo`: the Cantwell paper's results through real moves. Owned by the Cantwell work.

use crate::error::CliError;
use clap::Args;

/// Arguments of `qchess demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {}

/// Runs `qchess demo`.
pub fn run(_args: &DemoArgs) -> Result<(), CliError> {
    Err(CliError::failure("demo is not implemented yet"))
}
