//! `qchess`: the command-line tool of the qchess workspace.
//!
//! Subcommands: `perft` (classical move-generation counts), `eval` (JSON lines in, JSON lines
//! out, for every rule system), `play` (a terminal game), `bench` (simulator and game
//! benchmarks), `demo` (the Cantwell paper's Bell states and interference, reproduced), `render` (an SVG
//! picture of a position) and `plot` (SVG charts of benchmark lines).
#![forbid(unsafe_code)]

mod bench;
mod demo;
mod match_cmd;
mod perft;
mod play;
mod plot;
mod render;
mod serve;
mod threads;

use clap::{Parser, Subcommand};
// The request evaluator lives in the library target (src/lib.rs) so it can be embedded and fuzzed.
use qchess_cli::{error, eval, protocol};
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
    #[command(after_help = PERFT_HELP)]
    Perft(perft::PerftArgs),
    /// Evaluate positions and move lists given as JSON lines on standard input.
    #[command(after_help = EVAL_HELP)]
    Eval(eval::EvalArgs),
    /// Play a game in the terminal.
    #[command(after_help = PLAY_HELP)]
    Play(play::PlayArgs),
    /// Benchmarks of the simulator and of whole games.
    #[command(subcommand, after_help = BENCH_HELP)]
    Bench(bench::BenchCommand),
    /// Reproduce the Cantwell paper's Bell states and interference through real moves.
    #[command(after_help = DEMO_HELP)]
    Demo(demo::DemoArgs),
    /// Serve the web board and its JSON API (http://127.0.0.1:8080/ by default).
    #[command(after_help = SERVE_HELP)]
    Serve(serve::ServeArgs),
    /// Run the engine over the UCI-shaped protocol on stdin/stdout.
    #[command(after_help = ENGINE_HELP)]
    Engine(protocol::EngineArgs),
    /// Play paired games between two players and report the score and Elo difference.
    #[command(after_help = MATCH_HELP)]
    Match(match_cmd::MatchArgs),
    /// Draw a position or an eval answer as an SVG picture.
    #[command(after_help = RENDER_HELP)]
    Render(render::RenderArgs),
    /// Draw `qchess bench sim --json` lines as SVG scaling charts.
    #[command(after_help = PLOT_HELP)]
    Plot(plot::PlotArgs),
}

const PERFT_HELP: &str = "\
Examples:
  qchess perft --depth 5                      # 4865609
  qchess perft --board 5x6 --depth 4 --json   # minichess
Details: docs/board.md (boards, FEN, published perft counts).";

const EVAL_HELP: &str = "\
Reads one JSON object per line and answers each with one JSON line; a bad line gets
{\"ok\": false, \"error\": {\"kind\", \"message\", \"at\"}} and the run goes on.
Request fields (all variants): \"variant\" (\"cantwell\" | \"niels\" | \"akl\", default
\"cantwell\"), \"position\" (\"startpos\" or the variant's position text), \"moves\" (a list in
the variant's notation), \"seed\" (the outcomes' random source). Each variant adds its own:
Cantwell (\"mode\": \"game\" | \"occupancy\", \"distribution_limit\"): docs/cantwell.md;
Niel's (\"rules\", \"board\", \"rolls\", \"legal_moves\"): docs/niels.md;
Akl (\"visibility\": \"revealed\" | \"own-pairs\"): docs/akl.md.
The whole contract, answers and error kinds: docs/architecture.md.
Example:
  echo '{\"variant\":\"cantwell\",\"moves\":[\"b1^a3c3\"],\"seed\":7}' | qchess eval";

const PLAY_HELP: &str = "\
Rule options (--rules, comma-separated):
  cantwell: fifty-move-measurement, repetition-claim                      (docs/cantwell.md)
  niels:    simplified, hadamard, hadamard-plus, deterministic, tunnelling, no-box,
            stay-only, remote-collapse, unitary-hadamard, competitive
            (competitive = stay-only + remote-collapse, section 7)       (docs/niels.md)
  akl:      revealed, own-pairs                                           (docs/akl.md)
Boards (--board): cantwell and akl 8x8; niels 4x4 ... 8x8 (the papers' 8x8, 5x6, 4x6, 4x5, 4x4).
At the prompt every variant understands: help [topic], moves [square], undo, redo, history,
board, save FILE, load FILE, flip, quit, and moves typed e2e4, e2 e4 or e2-e4 (promotion
e7e8q or e7e8=Q). Type help in the game for the notation and the rules.";

const BENCH_HELP: &str = "\
Examples:
  qchess bench sim --op split --states 1000000 --json
  qchess bench game --games 10 --json
Details and measured figures: docs/benchmarks.md.";

const DEMO_HELP: &str = "\
Replays the paper's Bell states (eq. 45-51) and interference (section 11.2) through real
moves and prints every amplitude beside the paper's value. Details: docs/cantwell-circuits.md.";

const SERVE_HELP: &str = "\
Open the address it prints in a browser and play any variant by mouse. The JSON API, its
fields, error kinds and limits: docs/web.md.";

const ENGINE_HELP: &str = "\
Commands on stdin: uci, setoption name <N> value <V> (UCI_Variant: cantwell | niels | akl;
Rules; Board; Level 1-5; Seed), isready, ucinewgame, position startpos|fen <FEN> [moves ...],
go [depth D] [nodes N] [movetime MS] [wtime MS btime MS winc MS binc MS] [infinite], stop,
quit. The protocol, a transcript and the evaluation: docs/engine.md.";

const MATCH_HELP: &str = "\
Players (--engine1, --engine2): builtin[:level=L] (L = 1..5), random, or cmd:<command line>,
any program speaking the qchess engine protocol (the line is split into words like a shell
does, quotes and backslashes, no expansion; use cmd:sh -c '...' for pipes or variables).
A cmd: player runs as a new process per game, told the position (Akl: its view) and asked
with go movetime MS or go wtime .. btime .. winc .. binc ..; an answer later than its time
plus --timemargin, an illegal move, an unparsable line or an exit loses that game and is
reported; its process group is killed at the end of every game.
--variant: cantwell, niels or akl. Details and measured results: docs/engine.md.
Example:
  qchess match --variant akl --engine1 'cmd:qchess engine' --engine2 random --games 2 --json";

const RENDER_HELP: &str = "\
Input: a position (FEN, Niel's or Akl position text, or a serialised Cantwell position) or a
qchess eval answer line. Output: an SVG file. Details and an example picture: docs/pictures.md.";

const PLOT_HELP: &str = "\
Input: qchess bench sim --json lines (one JSON object per line). Output: SVG charts of time
and throughput against basis states, log axes, one line per op and thread count.
Details: docs/pictures.md and docs/benchmarks.md.";

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Every subcommand runs in a pool that falls back to one thread (see `threads`).
    let result = threads::run_in_pool(move || match cli.command {
        Command::Perft(args) => perft::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Play(args) => play::run(&args),
        Command::Bench(cmd) => bench::run(&cmd),
        Command::Demo(args) => demo::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Engine(args) => protocol::run(&args),
        Command::Match(args) => match_cmd::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Plot(args) => plot::run(&args),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("qchess: {}", err.message);
            ExitCode::from(err.code)
        }
    }
}
