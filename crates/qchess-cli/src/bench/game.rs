//! `qchess bench game`. Owned by the Cantwell work.

use crate::error::CliError;
use clap::Args;

/// Arguments of `qchess bench game`.
#[derive(Args, Debug)]
pub struct GameArgs {
    /// Seed of the random games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of games to play.
    #[arg(long, default_value_t = 10)]
    pub games: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `qchess bench game`.
pub fn run(_args: &GameArgs) -> Result<(), CliError> {
    Err(CliError::failure("bench game is not implemented yet"))
}
