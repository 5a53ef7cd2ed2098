//! `qchess perft`: classical perft on any geometry. Owned by the qchess-board work.

use crate::error::CliError;
use clap::Args;

/// Arguments of `qchess perft`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Start from this FEN instead of the start position of the board.
    #[arg(long)]
    pub fen: Option<String>,
    /// Board size as WxH (4..=8 each); default 8x8.
    #[arg(long, value_name = "WxH")]
    pub board: Option<String>,
    /// Depth of the tree to count.
    #[arg(long)]
    pub depth: u32,
    /// Make every leaf move instead of counting the last ply from the move list.
    #[arg(long)]
    pub no_bulk: bool,
    /// Print the count below each root move.
    #[arg(long)]
    pub divide: bool,
    /// Print one JSON object `{"nodes", "seconds", "nps"}`.
    #[arg(long)]
    pub json: bool,
}

/// Runs `qchess perft`.
pub fn run(_args: &PerftArgs) -> Result<(), CliError> {
    Err(CliError::failure("perft is not implemented yet"))
}
