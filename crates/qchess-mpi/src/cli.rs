//! The command line of `qchess-mpi` (feature `mpi`).

use clap::{Parser, Subcommand, ValueEnum};
use qchess_mpi::comm::Comm;
use qchess_mpi::mpi_comm::MpiComm;
use qchess_mpi::{bench, selftest};
use qchess_sim::bench::BenchOp;
use std::process::ExitCode;
use std::rc::Rc;

#[derive(Parser, Debug)]
#[command(
    name = "qchess-mpi",
    about = "The sparse state sharded over MPI ranks (run under mpirun)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Random gate sequences and a knight walk compared against the single-process state.
    Selftest {
        /// Random sequences.
        #[arg(long, default_value_t = 8)]
        seeds: u64,
        /// Operations per sequence.
        #[arg(long, default_value_t = 60)]
        steps: usize,
        /// Splits of the knight walk.
        #[arg(long, default_value_t = 30)]
        splits: usize,
    },
    /// Time one operation on the sharded random state of `qchess bench sim`.
    Bench {
        /// Operation to time.
        #[arg(long, value_enum)]
        op: Op,
        /// Basis states of the input state (over all ranks).
        #[arg(long)]
        states: u64,
        /// Rayon threads per rank (default 1).
        #[arg(long)]
        threads: Option<usize>,
        /// Use f32 amplitudes instead of f64.
        #[arg(long)]
        f32: bool,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Qubits in the local set L.
        #[arg(long, default_value_t = 8)]
        local_qubits: usize,
        /// Start with the op's qubits in L (no exchange); by default the timed op brings
        /// them in with one exchange.
        #[arg(long)]
        resident: bool,
    },
}

/// The operation to time (the ops of `qchess bench sim`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// iSwap of two qubits (a jump).
    Iswap,
    /// iSwap controlled on an empty path qubit (a slide).
    Slide,
    /// Split: sqrt-iSwap then iSwap.
    Split,
    /// Merge: the inverse of a split.
    Merge,
    /// Probability of a qubit and projection onto an outcome.
    Measure,
    /// Projection alone onto the outcome `measure` picks, its probability read before the
    /// clock starts: one pass, no message.
    Project,
    /// The full legal-move list of a Cantwell game position reached by real moves (the
    /// growth position of `qchess bench move`), sharded; `--f32` and `--resident` do not
    /// apply.
    Legal,
}

impl Op {
    /// The operation's name in the output (as `--op` spells it).
    fn name(self) -> &'static str {
        match self {
            Op::Iswap => "iswap",
            Op::Slide => "slide",
            Op::Split => "split",
            Op::Merge => "merge",
            Op::Measure => "measure",
            Op::Project => "project",
            Op::Legal => "legal",
        }
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let Some(comm) = MpiComm::init() else {
        eprintln!("qchess-mpi: MPI could not be initialised");
        return ExitCode::from(1);
    };
    let comm = Rc::new(comm);
    qchess_mpi::comm::install(comm.clone(), qchess_mpi::comm::DEFAULT_CAPACITY);
    match cli.command {
        Command::Selftest {
            seeds,
            steps,
            splits,
        } => {
            let report = selftest::run(seeds, steps, splits);
            if comm.rank() == 0 {
                for f in &report.failures {
                    println!("disagreement: {f}");
                }
                println!(
                    "exercised: {} exchanges, {} entries moved between ranks, {} operations refused by both, largest state {} basis states, {} knight splits in the Cantwell game",
                    report.exchanges,
                    report.entries_sent,
                    report.refused,
                    report.largest_state,
                    report.knight_splits
                );
                println!(
                    "selftest: {}/{} checks agree ({} ranks)",
                    report.agreed,
                    report.checks,
                    comm.size()
                );
            }
            if report.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Command::Bench {
            op,
            states,
            threads,
            f32,
            json,
            local_qubits,
            resident,
        } => bench_cmd(
            &comm,
            op,
            states,
            threads,
            f32,
            json,
            local_qubits,
            resident,
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn bench_cmd(
    comm: &Rc<MpiComm>,
    op: Op,
    states: u64,
    threads: Option<usize>,
    f32: bool,
    json: bool,
    local_qubits: usize,
    resident: bool,
) -> ExitCode {
    let fail = |msg: String| {
        if comm.rank() == 0 {
            eprintln!("qchess-mpi bench: {msg}");
        }
        ExitCode::from(2)
    };
    if states == 0 {
        return fail("--states must be at least 1".into());
    }
    let Ok(n) = usize::try_from(states) else {
        return fail("--states is too large".into());
    };
    let threads = threads.unwrap_or(1);
    if threads == 0 {
        return fail("--threads must be at least 1".into());
    }
    // The global pool: the sharded state is not Send (MPI communicators are per thread).
    if let Err(e) = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
    {
        return fail(format!("cannot start {threads} threads: {e}"));
    }
    let bop = match op {
        Op::Legal => {
            // The local set's capacity for the states the game makes.
            qchess_mpi::comm::install(comm.clone(), local_qubits);
            return legal_cmd(comm, n, threads, json, fail);
        }
        Op::Iswap => BenchOp::Iswap,
        Op::Slide => BenchOp::SlideIswap,
        Op::Split => BenchOp::Split,
        Op::Merge => BenchOp::Merge,
        Op::Measure => BenchOp::Measure,
        Op::Project => BenchOp::Project,
    };
    let name = op.name();
    let result = if f32 {
        bench::run::<f32>(bop, n, local_qubits, resident)
    } else {
        bench::run::<f64>(bop, n, local_qubits, resident)
    };
    let r = match result {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    if comm.rank() != 0 {
        return ExitCode::SUCCESS;
    }
    let per_sec = n as f64 / r.seconds;
    if json {
        let obj = serde_json::json!({
            "op": name,
            "states": n,
            "threads": threads,
            "seconds": r.seconds,
            "states_per_sec": per_sec,
            "bytes_per_state": r.bytes_per_state,
            "peak_bytes": r.peak_bytes,
            "cpu_seconds": r.cpu_seconds,
            "ranks": r.ranks,
            "bytes_sent": r.bytes_sent,
        });
        println!("{obj}");
    } else {
        println!(
            "{name} on {n} states ({}, {} ranks x {threads} threads): {:.6} s, {:.1} M states/s, {:.1} B/state, peak {:.1} MiB/rank, {} bytes sent",
            if f32 { "f32" } else { "f64" },
            r.ranks,
            r.seconds,
            per_sec / 1e6,
            r.bytes_per_state,
            r.peak_bytes as f64 / (1 << 20) as f64,
            r.bytes_sent
        );
    }
    ExitCode::SUCCESS
}

/// `qchess-mpi bench --op legal`: one line (or JSON object) on rank 0.
fn legal_cmd(
    comm: &Rc<MpiComm>,
    n: usize,
    threads: usize,
    json: bool,
    fail: impl Fn(String) -> ExitCode,
) -> ExitCode {
    let r = match bench::legal(n) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if comm.rank() != 0 {
        return ExitCode::SUCCESS;
    }
    if json {
        let obj = serde_json::json!({
            "op": Op::Legal.name(),
            "states": r.states,
            "threads": threads,
            "seconds": r.seconds,
            "moves": r.moves,
            "resident_bytes": r.resident_bytes,
            "listing_bytes": r.listing_bytes,
            "ranks": r.ranks,
        });
        println!("{obj}");
    } else {
        println!(
            "legal moves of a {}-state position ({} ranks x {threads} threads): {} moves in {:.6} s, resident {:.1} MiB/rank, the listing added {:.1} MiB/rank",
            r.states,
            r.ranks,
            r.moves,
            r.seconds,
            r.resident_bytes as f64 / (1 << 20) as f64,
            r.listing_bytes as f64 / (1 << 20) as f64,
        );
    }
    ExitCode::SUCCESS
}
