//! `cargo run --release -p qchess-sim --example sim_bench -- OP STATES THREADS [f32]`: the
//! same measurement as `qchess bench sim`, one JSON line, without building the CLI.

use qchess_sim::bench::{BenchOp, BenchResult, run_op};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = match args.get(1).map(String::as_str) {
        Some("iswap") => BenchOp::Iswap,
        Some("slide") => BenchOp::SlideIswap,
        Some("split") => BenchOp::Split,
        Some("merge") => BenchOp::Merge,
        Some("measure") => BenchOp::Measure,
        _ => {
            eprintln!("usage: sim_bench iswap|slide|split|merge|measure STATES THREADS [f32]");
            std::process::exit(2);
        }
    };
    let n: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let f32 = args.get(4).is_some_and(|s| s == "f32");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let r: BenchResult = pool
        .install(|| {
            if f32 {
                run_op::<f32>(op, n)
            } else {
                run_op::<f64>(op, n)
            }
        })
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        });
    println!(
        "{{\"op\":\"{}\",\"states\":{},\"threads\":{threads},\"f32\":{f32},\"seconds\":{},\"cpu_seconds\":{},\"states_per_sec\":{},\"cpu_states_per_sec\":{},\"bytes_per_state\":{},\"peak_bytes\":{}}}",
        args[1],
        r.states,
        r.seconds,
        r.cpu_seconds.map_or("null".into(), |c| c.to_string()),
        r.states as f64 / r.seconds,
        r.cpu_seconds
            .map_or("null".into(), |c| (r.states as f64 / c).to_string()),
        r.bytes_per_state,
        r.peak_bytes
    );
}
