//! `qchess bench`: benchmarks that print JSON for scripts.

mod game;
mod moves;
mod sim;

use crate::error::CliError;
use clap::Subcommand;

/// The benchmark to run.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// One simulator operation on a random sparse state of a given size.
    #[command(after_help = "Every JSON field and the measured tables: docs/benchmarks.md.")]
    Sim(sim::SimArgs),
    /// Random legal Cantwell games with a fixed seed: moves/s and the largest state reached.
    #[command(after_help = "The JSON fields and the measured tables: docs/benchmarks.md.")]
    Game(game::GameArgs),
    /// One real Cantwell move (or the legal-move list) on a state of at least N basis states,
    /// beside the bare simulator operation on a copy of the same state.
    #[command(
        after_help = "The JSON fields, the positions and the measured tables: docs/benchmarks.md."
    )]
    Move(moves::MoveArgs),
}

/// Runs `qchess bench ...`.
pub fn run(cmd: &BenchCommand) -> Result<(), CliError> {
    match cmd {
        BenchCommand::Sim(args) => sim::run(args),
        BenchCommand::Game(args) => game::run(args),
        BenchCommand::Move(args) => moves::run(args),
    }
}
