//! `qchess play`: a terminal game of any rule system, between two people or against a
//! built-in random mover.

mod akl;
mod cantwell;
mod niels;
mod shell;

use crate::error::CliError;
use clap::{Args, ValueEnum};

/// Which rule system to play.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Cantwell quantum chess.
    Cantwell,
    /// Niel's Chess (independent implementation of the published rules).
    Niels,
    /// Akl-style quantum chess.
    Akl,
}

/// Who plays the other side: `human`, `random`, or `engine[:level=L]` (level 1..5, default 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Opponent {
    /// Two people at one terminal.
    #[default]
    Human,
    /// The built-in random mover.
    Random,
    /// The engine (`qchess-engine`) at this level.
    Engine(u8),
}

impl Opponent {
    /// Whether the computer plays the other side.
    pub fn is_computer(self) -> bool {
        self != Opponent::Human
    }
}

/// Parses `--opponent`.
fn parse_opponent(text: &str) -> Result<Opponent, String> {
    match text {
        "human" => Ok(Opponent::Human),
        "random" => Ok(Opponent::Random),
        "engine" => Ok(Opponent::Engine(3)),
        _ => text
            .strip_prefix("engine:level=")
            .and_then(|l| l.parse().ok())
            .filter(|l| (1..=5).contains(l))
            .map(Opponent::Engine)
            .ok_or_else(|| {
                format!("{text:?}: expected human, random, engine or engine:level=L (L in 1..5)")
            }),
    }
}

/// The engine's limits in a terminal game: its level's depth, at most 2 s a move.
pub(crate) fn engine_limits() -> qchess_engine::Limits {
    qchess_engine::Limits {
        movetime: Some(std::time::Duration::from_secs(2)),
        ..qchess_engine::Limits::default()
    }
}

/// The engine of level `level`, seeded by the game's seed.
pub(crate) fn engine_of(level: u8, seed: u64) -> qchess_engine::Engine {
    qchess_engine::Engine::new(qchess_engine::EngineOptions {
        level,
        seed,
        ..qchess_engine::EngineOptions::default()
    })
}

/// Arguments of `qchess play`.
#[derive(Args, Debug, Clone)]
pub struct PlayArgs {
    /// Rule system.
    #[arg(long, value_enum)]
    pub variant: Variant,
    /// Comma-separated rule options of the variant; every value is listed below.
    #[arg(long, value_delimiter = ',')]
    pub rules: Vec<String>,
    /// Board size as WxH where the variant allows other sizes (Niel's Chess: 4x4 ... 8x8).
    #[arg(long, value_name = "WxH")]
    pub board: Option<String>,
    /// Opponent: human (another person at the same terminal), random (the random mover), or
    /// engine[:level=L] (the engine, level 1..5, default 3).
    #[arg(long, default_value = "human", value_parser = parse_opponent)]
    pub opponent: Opponent,
    /// The colour the person plays against the random mover: w or b.
    #[arg(long, default_value = "w")]
    pub color: String,
    /// Seed of every random choice (dice, measurements, collapses, the random mover).
    /// Default: a fresh seed from the operating system, so that no two games share hidden
    /// information (Akl's secret types); every game record still replays exactly, because
    /// records carry their outcomes.
    #[arg(long, default_value_t = fresh_seed(), hide_default_value = true)]
    pub seed: u64,
    /// Load a saved game record before playing on.
    #[arg(long)]
    pub load: Option<std::path::PathBuf>,
    /// Memory budget in bytes for the game's state (default: measured from the limits).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<usize>,
}

/// A seed from the operating system's entropy; the one place the CLI draws randomness that is
/// not from a seed, and it only ever becomes a seed.
fn fresh_seed() -> u64 {
    rand::random()
}

/// The colour the person plays against the built-in mover (`--color`).
fn human_color(args: &PlayArgs) -> Result<qchess_board::Color, CliError> {
    match args.color.as_str() {
        "w" | "white" => Ok(qchess_board::Color::White),
        "b" | "black" => Ok(qchess_board::Color::Black),
        other => Err(CliError::usage(format!(
            "--color must be w or b, not {other:?}"
        ))),
    }
}

/// Who sits at the board: the person's colour, and whether the computer (the random mover
/// or the engine) plays the other side; the engine's level and seed when it is the engine.
#[derive(Clone, Copy, Debug)]
struct Seats {
    human: qchess_board::Color,
    computer: bool,
    engine: Option<(u8, u64)>,
}

impl Seats {
    /// From `--color`, `--opponent` and `--seed`.
    fn of(args: &PlayArgs) -> Result<Self, CliError> {
        Ok(Seats {
            human: human_color(args)?,
            computer: args.opponent.is_computer(),
            engine: match args.opponent {
                Opponent::Engine(level) => Some((level, args.seed)),
                _ => None,
            },
        })
    }

    /// Two people at one board: neither side is the computer's.
    #[cfg(test)]
    fn two_people() -> Self {
        Seats {
            human: qchess_board::Color::White,
            computer: false,
            engine: None,
        }
    }

    /// Whether the computer moves when `side` is to move.
    fn computer_moves(&self, side: qchess_board::Color) -> bool {
        self.computer && side != self.human
    }
}

/// Runs `qchess play` on the terminal.
pub fn run(args: &PlayArgs) -> Result<(), CliError> {
    qchess_sim::set_default_memory_budget(args.memory);
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut input = stdin.lock();
    let mut output = stdout.lock();
    match args.variant {
        Variant::Cantwell => cantwell::play(args, &mut input, &mut output),
        Variant::Niels => niels::play(args, &mut input, &mut output),
        Variant::Akl => akl::play(args, &mut input, &mut output),
    }
}
