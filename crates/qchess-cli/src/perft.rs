//! `qchess perft`: classical perft on any geometry. Owned by the qchess-board work.

use crate::error::CliError;
use clap::Args;
use qchess_board::{Geometry, Position, perft, perft_divide};
use std::io::Write;
use std::time::Instant;

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

/// Runs `qchess perft`: prints the node count (after one "move: count" line per root move with
/// `--divide`), or with `--json` exactly one object `{"nodes": N, "seconds": S, "nps": X}`.
pub fn run(args: &PerftArgs) -> Result<(), CliError> {
    let geometry = match &args.board {
        Some(text) => Geometry::parse(text).map_err(|e| CliError::usage(e.to_string()))?,
        None => Geometry::STANDARD,
    };
    let pos = match &args.fen {
        Some(fen) => {
            Position::from_fen(fen, geometry).map_err(|e| CliError::usage(e.to_string()))?
        }
        None => Position::startpos_for(geometry),
    };
    let bulk = !args.no_bulk;
    let start = Instant::now();
    let (nodes, divide) = if args.divide {
        let counts = perft_divide(&pos, args.depth, bulk);
        (counts.iter().map(|&(_, n)| n).sum(), counts)
    } else {
        (perft(&pos, args.depth, bulk), Vec::new())
    };
    let seconds = start.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    if args.json {
        let nps = if seconds > 0.0 {
            nodes as f64 / seconds
        } else {
            0.0
        };
        let json = serde_json::json!({ "nodes": nodes, "seconds": seconds, "nps": nps });
        writeln!(out, "{json}")?;
    } else {
        for (mv, n) in &divide {
            writeln!(out, "{mv}: {n}")?;
        }
        if args.divide {
            writeln!(out)?;
        }
        writeln!(out, "{nodes}")?;
    }
    Ok(())
}
