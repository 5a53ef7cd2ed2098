//! `cargo run --release -p qchess-cli --example marginals -- [STATES] [THREADS]`: times the two
//! marginal passes a Cantwell move runs after its gates, on the position `qchess bench move`
//! plays in (`qchess_cantwell::growth::growth_position`, at least `STATES` basis states,
//! default 10^7; `THREADS` rayon threads, default 1): the 64-square pass
//! (`State::qubit_probabilities`) on the state after the measuring move's projection (`d2`
//! found empty: about half the entries survive), and the two-square pass
//! (`State::qubit_probabilities_of` for `a1` and `a5`, the slide's touched squares) on the
//! position's state. Prints one JSON line: medians and bests of 11 calls each, in ms.
//! (docs/benchmarks.md, "A fourth machine: an Intel Xeon VM".)

use qchess_sim::{Predicate, State};
use std::time::Instant;

/// Median and best of `runs` timed calls of `f`, in ms; `f`'s results are summed into `sink`.
fn time(runs: usize, sink: &mut f64, mut f: impl FnMut() -> f64) -> (f64, f64) {
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            *sink += f();
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], t[0])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let states: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let threads: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    pool.install(|| {
        let (game, _) = qchess_cantwell::growth::growth_position::<State<f64>>(states)
            .expect("the bench-move position");
        let mut after = game.state().try_clone(0).expect("a copy of the state");
        let d2 = 11u8;
        after
            .force(Predicate::AllZero(1u64 << d2), true)
            .expect("d2 is empty in some branch");
        let mut sink = 0.0;
        let (all, all_best) = time(11, &mut sink, || {
            after.qubit_probabilities().iter().sum::<f64>()
        });
        let (two, two_best) = time(11, &mut sink, || {
            game.state().qubit_probabilities_of(&[0, 32]).iter().sum::<f64>()
        });
        assert!(sink.is_finite());
        println!(
            "{{\"states\":{},\"survivors\":{},\"threads\":{threads},\"all_squares_ms\":{all},\"all_squares_best_ms\":{all_best},\"two_squares_ms\":{two},\"two_squares_best_ms\":{two_best}}}",
            game.state_size(),
            after.len()
        );
    });
}
