//! `qchess bench sim`. Owned by the qchess-sim work.

use crate::error::CliError;
use clap::{Args, ValueEnum};

/// The simulator operation to time.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimOp {
    /// iSwap of two qubits (a jump).
    Iswap,
    /// Split: sqrt-iSwap then iSwap.
    Split,
    /// Merge: the inverse of a split.
    Merge,
    /// Probability of a qubit and projection onto an outcome.
    Measure,
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
    /// Print one JSON object per run.
    #[arg(long)]
    pub json: bool,
}

/// Runs `qchess bench sim`.
pub fn run(_args: &SimArgs) -> Result<(), CliError> {
    Err(CliError::failure("bench sim is not implemented yet"))
}
