//! `cargo run --release -p qchess-sim --example split_loop -- [STATES] [REPS] [THREADS] [game|random] [split|merge]`:
//! the split (or merge) of `sim_bench split STATES THREADS game` (its state,
//! `qchess_sim::bench::game_state`, and its operations, `bench::apply_game_op`), or with
//! `random` of `sim_bench split STATES THREADS` (`bench::random_state`, `bench::apply_op`),
//! timed `REPS` times in one process on one state, each undone by its inverse before the next
//! (one gate and its inverse first, untimed). Prints one JSON line: `states`, `threads`,
//! `reps`, `shape`, `op`, and the gate's `median_states_per_sec` and `best_states_per_sec`.
//!
//! At 1e7 `sim_bench` times two gates a process (each on a fresh copy), so on a noisy VM
//! its medians swing by a third from minute to minute; fifteen gates a process give a
//! steadier median and best (docs/benchmarks.md, "The split's grown room without zeros").
//! Defaults: 10^7 states, 15 repetitions, one thread, game-shaped, split.

use qchess_sim::State;
use qchess_sim::bench::{self, BenchOp, apply_game_op, apply_inverse, apply_op};
use std::time::Instant;

/// One gate on the benchmark's state of `n` basis states.
type Gate = fn(&mut State<f64>, usize) -> Result<(), qchess_sim::SimError>;

fn main() -> Result<(), qchess_sim::SimError> {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let (n, reps, threads) = (arg(1, 10_000_000), arg(2, 15).max(1), arg(3, 1).max(1));
    let random = std::env::args().nth(4).as_deref() == Some("random");
    let merge = std::env::args().nth(5).as_deref() == Some("merge");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let (states, mut times) =
        pool.install(|| -> Result<(usize, Vec<f64>), qchess_sim::SimError> {
            // The timed gate and its inverse, each as `sim_bench` runs it.
            let (gate, inverse): (Gate, Gate) = match (random, merge) {
                (false, false) => (
                    |s, n| apply_game_op(BenchOp::Split, s, n),
                    |s, n| apply_game_op(BenchOp::Merge, s, n),
                ),
                (false, true) => (
                    |s, n| apply_game_op(BenchOp::Merge, s, n),
                    |s, n| apply_game_op(BenchOp::Split, s, n),
                ),
                (true, false) => (
                    |s, n| apply_op(BenchOp::Split, s, n),
                    |s, n| apply_inverse(BenchOp::Split, s, n),
                ),
                (true, true) => (
                    |s, n| apply_op(BenchOp::Merge, s, n),
                    |s, n| apply_inverse(BenchOp::Merge, s, n),
                ),
            };
            let mut s: State<f64> = if random {
                bench::random_state(n)?
            } else {
                bench::game_state(n)?
            };
            if merge && !random {
                // `sim_bench merge ... game` merges the game-shaped state's split.
                apply_game_op(BenchOp::Split, &mut s, n)?;
            }
            gate(&mut s, n)?;
            inverse(&mut s, n)?;
            // The gate's input, as `sim_bench` counts it (a game-shaped merge's: the split state).
            let states = s.len();
            let mut times = Vec::with_capacity(reps);
            for _ in 0..reps {
                let t = Instant::now();
                gate(&mut s, n)?;
                times.push(t.elapsed().as_secs_f64());
                inverse(&mut s, n)?;
            }
            Ok((states, times))
        })?;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{{\"states\":{states},\"threads\":{threads},\"reps\":{reps},\"shape\":\"{}\",\"op\":\"{}\",\"median_states_per_sec\":{},\"best_states_per_sec\":{}}}",
        if random { "random" } else { "game" },
        if merge { "merge" } else { "split" },
        states as f64 / median,
        states as f64 / times[0]
    );
    Ok(())
}
