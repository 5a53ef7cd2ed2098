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
    write_report(args, &mut std::io::stdout().lock())
}

/// The start position the arguments ask for: `--fen` read on `--board` (default 8x8), or that
/// board's start position.
fn start_position(args: &PerftArgs) -> Result<Position, CliError> {
    let geometry = match &args.board {
        Some(text) => Geometry::parse(text).map_err(|e| CliError::usage(e.to_string()))?,
        None => Geometry::STANDARD,
    };
    match &args.fen {
        Some(fen) => Position::from_fen(fen, geometry).map_err(|e| CliError::usage(e.to_string())),
        None => Ok(Position::startpos_for(geometry)),
    }
}

/// Counts and writes the report to `out`.
fn write_report(args: &PerftArgs, out: &mut impl Write) -> Result<(), CliError> {
    let pos = start_position(args)?;
    let bulk = !args.no_bulk;
    let start = Instant::now();
    let (nodes, divide) = if args.divide {
        let counts = perft_divide(&pos, args.depth, bulk);
        (counts.iter().map(|&(_, n)| n).sum(), counts)
    } else {
        (perft(&pos, args.depth, bulk), Vec::new())
    };
    let seconds = start.elapsed().as_secs_f64();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn args(depth: u32) -> PerftArgs {
        PerftArgs {
            fen: None,
            board: None,
            depth,
            no_bulk: false,
            divide: false,
            json: false,
        }
    }

    fn output(args: &PerftArgs) -> Result<String, CliError> {
        let mut out = Vec::new();
        write_report(args, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn prints_the_published_count() {
        assert_eq!(output(&args(4)).unwrap(), "197281\n");
        let no_bulk = PerftArgs {
            no_bulk: true,
            ..args(3)
        };
        assert_eq!(output(&no_bulk).unwrap(), "8902\n");
    }

    #[test]
    fn divide_lists_every_root_move_then_the_total() {
        let text = output(&PerftArgs {
            divide: true,
            ..args(2)
        })
        .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 22);
        assert!(lines.contains(&"e2e4: 20"));
        assert_eq!(lines[20], "");
        assert_eq!(lines[21], "400");
    }

    #[test]
    fn json_is_one_object() {
        let text = output(&PerftArgs {
            json: true,
            ..args(3)
        })
        .unwrap();
        let value: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(value["nodes"], 8902);
        assert!(value["seconds"].is_f64() && value["nps"].is_f64());
        assert_eq!(text.lines().count(), 1);
    }

    #[test]
    fn board_and_fen_select_the_start() {
        // Kiwipete depth 2 (published: 2039).
        let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        let kiwi = PerftArgs {
            fen: Some(fen.into()),
            ..args(2)
        };
        assert_eq!(output(&kiwi).unwrap(), "2039\n");
        // Microchess (4x5): 11 moves at depth 1 (counted by hand in qchess-board/tests/minichess.rs).
        let micro = PerftArgs {
            board: Some("4x5".into()),
            ..args(1)
        };
        assert_eq!(output(&micro).unwrap(), "11\n");
        // A 5x6 FEN read on the 5x6 board.
        let petty = PerftArgs {
            board: Some("5x6".into()),
            fen: Some("rnbqk/ppppp/5/5/PPPPP/RNBQK w - - 0 1".into()),
            ..args(1)
        };
        assert_eq!(output(&petty).unwrap(), "7\n");
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        for bad in [
            PerftArgs {
                board: Some("9x9".into()),
                ..args(1)
            },
            PerftArgs {
                board: Some("big".into()),
                ..args(1)
            },
            PerftArgs {
                fen: Some("not a fen".into()),
                ..args(1)
            },
            // An 8x8 FEN read on a 5x6 board.
            PerftArgs {
                board: Some("5x6".into()),
                fen: Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into()),
                ..args(1)
            },
        ] {
            let err = output(&bad).unwrap_err();
            assert_eq!(err.code, 2, "{}", err.message);
        }
    }
}
