//! `qchess`: the command-line tool of the qchess workspace.
//!
//! Subcommands: `perft` (classical move-generation counts), `eval` (JSON lines in, JSON lines
//! out, for every rule system), `play` (a terminal game), `bench` (simulator and game
//! benchmarks) and `demo` (the Cantwell paper's Bell states and interference, reproduced).
#![forbid(unsafe_code)]

mod bench;
mod demo;
mod error;
mod eval;
mod match_cmd;
mod perft;
mod play;
mod protocol;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Quantum chess: Cantwell, Niel's Chess and Akl-style rules.
#[derive(Parser, Debug)]
#[command(name = "qchess", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count the leaf nodes of the classical move tree (perft).
    Perft(perft::PerftArgs),
    /// Evaluate positions and move lists given as JSON lines on standard input.
    Eval(eval::EvalArgs),
    /// Play a game in the terminal.
    Play(play::PlayArgs),
    /// Benchmarks of the simulator and of whole games.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Reproduce the Cantwell paper's Bell states and interference through real moves.
    Demo(demo::DemoArgs),
    /// Run the engine over the UCI-shaped protocol on stdin/stdout.
    Engine(protocol::EngineArgs),
    /// Play paired games between two players and report the score and Elo difference.
    Match(match_cmd::MatchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => perft::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Play(args) => play::run(&args),
        Command::Bench(cmd) => bench::run(&cmd),
        Command::Demo(args) => demo::run(&args),
        Command::Engine(args) => protocol::run(&args),
        Command::Match(args) => match_cmd::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("qchess: {}", err.message);
            ExitCode::from(err.code)
        }
    }
}
