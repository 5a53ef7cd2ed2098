//! `qchess bench sim`: one simulator operation on a random sparse state of a given size.
//!
//! The harness is `qchess_sim::bench`: the input state is built and the pass buffers warmed
//! outside the timed region; small states repeat on fresh clones and report the median
//! (`--op prob`, which leaves the state unchanged, repeats on the same state); `--repeat`
//! sets the number of timed runs, and the JSON lists every run's seconds.

use crate::error::CliError;
use clap::{Args, ValueEnum};
use qchess_sim::SimError;
use qchess_sim::bench::{
    BenchAmplitude, BenchOp, BenchRuns, Shape, run_op_repeated, run_probability_repeated,
};
use std::num::NonZeroUsize;

/// The simulator operation to time.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimOp {
    /// iSwap of two qubits (a jump).
    Iswap,
    /// iSwap controlled on an empty path square (a slide).
    Slide,
    /// Split: sqrt-iSwap then iSwap.
    Split,
    /// Merge: the inverse of a split.
    Merge,
    /// Probability of a qubit and projection onto an outcome.
    Measure,
    /// Probability of a qubit alone: one scan, the state unchanged.
    Prob,
    /// Projection alone onto the outcome `measure` picks, its probability read before the
    /// clock starts (as a game reads it from the marginals it keeps): one pass.
    Project,
}

/// The input state's shape (`qchess_sim::bench::Shape`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimShape {
    /// Consecutive keys with gaps of 1 to 4 over the low bits: large groups.
    Random,
    /// Like a position reached by real moves: a fixed background, few values of the high
    /// bits, many small groups (for `merge`, the game-shaped split's output).
    Game,
}

/// Arguments of `qchess bench sim`.
#[derive(Args, Debug)]
pub struct SimArgs {
    /// Operation to time.
    #[arg(long, value_enum)]
    pub op: SimOp,
    /// Number of basis states of the input state.
    #[arg(long)]
    pub states: u64,
    /// Rayon threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Use f32 amplitudes instead of f64.
    #[arg(long)]
    pub f32: bool,
    /// Use exact amplitudes (`qchess_sim::Exact`, Z[i][1/sqrt2]) instead of f64.
    #[arg(long, conflicts_with = "f32")]
    pub exact: bool,
    /// Print one JSON object per run.
    #[arg(long)]
    pub json: bool,
    /// Memory budget in bytes (default: measured from the limits).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<usize>,
    /// Timed runs, each on a fresh warmed copy of the input (`prob`: scans of the same
    /// state); `seconds` is their median (default: 200 runs of small states down to 1 from
    /// 2 x 10^7 states; `prob` 3 to 50).
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Shape of the input state.
    #[arg(long, value_enum, default_value_t = SimShape::Random)]
    pub shape: SimShape,
}

/// Runs `qchess bench sim`.
pub fn run(args: &SimArgs) -> Result<(), CliError> {
    qchess_sim::set_default_memory_budget(args.memory);
    if args.states == 0 {
        return Err(CliError::usage("--states must be at least 1"));
    }
    let n = usize::try_from(args.states).map_err(|_| CliError::usage("--states is too large"))?;
    let repeat = args
        .repeat
        .map(|r| NonZeroUsize::new(r).ok_or_else(|| CliError::usage("--repeat must be at least 1")))
        .transpose()?;
    let bop = match args.op {
        SimOp::Iswap => Some(BenchOp::Iswap),
        SimOp::Slide => Some(BenchOp::SlideIswap),
        SimOp::Split => Some(BenchOp::Split),
        SimOp::Merge => Some(BenchOp::Merge),
        SimOp::Measure => Some(BenchOp::Measure),
        SimOp::Project => Some(BenchOp::Project),
        SimOp::Prob => None,
    };
    let (shape, shape_name) = match args.shape {
        SimShape::Random => (Shape::Random, "random"),
        SimShape::Game => (Shape::Game, "game"),
    };
    fn time<T: BenchAmplitude>(
        op: Option<BenchOp>,
        n: usize,
        shape: Shape,
        repeat: Option<NonZeroUsize>,
    ) -> Result<BenchRuns, SimError> {
        match op {
            Some(op) => run_op_repeated::<T>(op, n, shape, repeat),
            None => run_probability_repeated::<T>(n, shape, repeat),
        }
    }
    let (runs, threads) = crate::threads::with_threads(args.threads, || {
        if args.f32 {
            time::<f32>(bop, n, shape, repeat)
        } else if args.exact {
            time::<qchess_sim::Exact>(bop, n, shape, repeat)
        } else {
            time::<f64>(bop, n, shape, repeat)
        }
    })?;
    let runs = runs.map_err(|e| CliError::failure(format!("bench sim: {e}")))?;
    let result = runs.result;
    let op = match args.op {
        SimOp::Iswap => "iswap",
        SimOp::Slide => "slide",
        SimOp::Split => "split",
        SimOp::Merge => "merge",
        SimOp::Measure => "measure",
        SimOp::Prob => "prob",
        SimOp::Project => "project",
    };
    // The input's basis states: `--states` itself, except for a game-shaped merge, whose
    // input is the game-shaped split's output.
    let states = result.states;
    let per_sec = states as f64 / result.seconds;
    if args.json {
        let obj = serde_json::json!({
            "op": op,
            "shape": shape_name,
            "states": states,
            "threads": threads,
            "adaptive_threads": qchess_sim::adaptive_threads(),
            "pin_threads": qchess_sim::pin_threads(),
            "seconds": result.seconds,
            "states_per_sec": per_sec,
            "bytes_per_state": result.bytes_per_state,
            "peak_bytes": result.peak_bytes,
            "cpu_seconds": result.cpu_seconds,
            "runs": runs.seconds_runs.len(),
            "seconds_runs": runs.seconds_runs,
        });
        println!("{obj}");
    } else {
        println!(
            "{op} on {states} {shape_name}-shaped states ({}, {threads} threads): {:.6} s, {:.1} M states/s, {:.1} B/state, peak {:.1} MiB",
            if args.f32 {
                "f32"
            } else if args.exact {
                "exact"
            } else {
                "f64"
            },
            result.seconds,
            per_sec / 1e6,
            result.bytes_per_state,
            result.peak_bytes as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}
