//! `cargo run --release -p qchess-sim --example split_loop -- [STATES] [REPS] [THREADS]`:
//! the game-shaped split of `sim_bench split STATES THREADS game` (its state,
//! `qchess_sim::bench::game_state`, and its operations, `bench::apply_game_op`), timed
//! `REPS` times in one process on one state, each split undone by its merge before the next
//! (one split and merge first, untimed). Prints one JSON line: `states`, `threads`, `reps`, and the
//! split's `median_states_per_sec` and `best_states_per_sec`.
//!
//! At 1e7 `sim_bench` times two splits a process (each on a fresh copy), so on a noisy VM
//! its medians swing by a third from minute to minute; fifteen splits a process give a
//! steadier median and best (docs/benchmarks.md, "The split's grown room without zeros").
//! Defaults: 10^7 states, 15 repetitions, one thread.

use qchess_sim::State;
use qchess_sim::bench::{self, BenchOp, apply_game_op};
use std::time::Instant;

fn main() -> Result<(), qchess_sim::SimError> {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let (n, reps, threads) = (arg(1, 10_000_000), arg(2, 15).max(1), arg(3, 1).max(1));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let mut times = pool.install(|| -> Result<Vec<f64>, qchess_sim::SimError> {
        let mut s: State<f64> = bench::game_state(n)?;
        apply_game_op(BenchOp::Split, &mut s, n)?;
        apply_game_op(BenchOp::Merge, &mut s, n)?;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = Instant::now();
            apply_game_op(BenchOp::Split, &mut s, n)?;
            times.push(t.elapsed().as_secs_f64());
            apply_game_op(BenchOp::Merge, &mut s, n)?;
        }
        Ok(times)
    })?;
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{{\"states\":{n},\"threads\":{threads},\"reps\":{reps},\"median_states_per_sec\":{},\"best_states_per_sec\":{}}}",
        n as f64 / median,
        n as f64 / times[0]
    );
    Ok(())
}
