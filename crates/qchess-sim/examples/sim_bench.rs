//! `cargo run --release -p qchess-sim --example sim_bench -- OP STATES THREADS [f32|exact] [game]`:
//! the same measurement as `qchess bench sim`, one JSON line, without building the CLI. With
//! `game` the input is `qchess_sim::bench::game_state` (a game-shaped state: fixed
//! background, many small groups) instead of `random_state`.
//! `... --example sim_bench -- prob STATES [THREADS] [f32|exact]` times the probability scan
//! alone (for `exact`: the exact mass scan and the one division, rounded once).
//! `... --example sim_bench -- roofline STATES [THREADS]` measures the memory roofline a
//! measurement runs against: one read of f64 key and amplitude arrays of that many entries
//! (24 B each, what the probability scan must read) and one copy of them into mapped memory
//! (what a projection that keeps every entry would move), in GB/s and the states/s they allow.
//! `... --example sim_bench -- pages STATES` times, with `qchess_sim::set_huge_pages` off and
//! then on, what the huge-page advice changes (docs/benchmarks.md, "Huge pages for state
//! buffers"): a copy of a random state into fresh memory, a projection onto half of it (the
//! shrink to its survivors included) and dropping the copy, one thread, medians of 7.
//! `... --example sim_bench -- controlled STATES [THREADS]` times the controlled operations
//! of the pawn capture, en passant and the capture slide (docs/benchmarks.md, "The
//! controlled operations in place"), on `random_state(STATES)`, medians of 5: the iSwap
//! controlled on a capture's ancilla (after one qubit is forced occupied and another
//! captured, the pawn capture's circuit), beside the slide's iSwap on the same state; the
//! capture controlled on a board qubit, beside the plain capture of the same qubit; the
//! projection onto a set of boards no predicate describes; and the plain capture of a qubit
//! occupied in about two thirds of the entries (`capture_most_seconds`: most entries move).
//! Each with the growth of the resident set during it (`VmHWM` reset through
//! `/proc/self/clear_refs`) over the state's bytes, on Linux.
//! `... --example sim_bench -- projections STATES [THREADS]` times, on `random_state(STATES)`
//! and a qubit near 1/2, medians of 5: the probability scan, the plain projection (`force`),
//! the recording projection given the probability (`force_keeping_given`) on a fresh copy
//! and again after it is taken back (its record's arrays then from the pool), the same
//! summing the survivors' marginals (`force_keeping_given_marginals`, warm), and the
//! projection that drops its record (`force_given_marginals_within` with no room): the
//! parts of a game's measuring move against its bare operation.

use qchess_sim::bench::{BenchOp, BenchResult, Shape, run_op_shaped};

/// `prob STATES [THREADS] [f32|exact]`: the probability scan alone, as `qchess bench sim --op
/// prob` times it (`qchess_sim::bench::run_probability`: `State::probability` of one qubit,
/// median wall and calling-thread CPU seconds of up to 50 calls).
fn time_probability(n: usize, threads: usize, f32: bool, exact: bool) {
    use qchess_sim::bench::run_probability;
    let r = if f32 {
        run_probability::<f32>(n)
    } else if exact {
        run_probability::<qchess_sim::Exact>(n)
    } else {
        run_probability::<f64>(n)
    }
    .expect("the probability scan");
    let (w, c) = (r.seconds, r.cpu_seconds.unwrap_or(0.0));
    println!(
        "{{\"op\":\"prob\",\"states\":{n},\"threads\":{threads},\"f32\":{f32},\"exact\":{exact},\"seconds\":{w},\"cpu_seconds\":{c},\"states_per_sec\":{},\"cpu_states_per_sec\":{}}}",
        n as f64 / w,
        if c > 0.0 {
            (n as f64 / c).to_string()
        } else {
            "null".into()
        }
    );
}

/// `roofline STATES [THREADS]`: median GB/s of a read-only pass over `n` keys and f64
/// amplitudes (blocks of 65 536 entries, as the scans cut them) and of a copy of both arrays
/// into already-mapped memory, with the states/s each allows.
fn roofline(n: usize) {
    use rayon::prelude::*;
    let keys: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let amps: Vec<num_complex::Complex<f64>> = (0..n)
        .map(|i| num_complex::Complex::new(i as f64, 1.0))
        .collect();
    let (mut k2, mut a2) = (keys.clone(), amps.clone());
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (mut read, mut copy) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        let t = std::time::Instant::now();
        let s: f64 = keys
            .par_chunks(1 << 16)
            .zip(amps.par_chunks(1 << 16))
            .map(|(ks, as_)| {
                let x = ks.iter().fold(0u64, |a, &k| a ^ k);
                as_.iter().map(|a| a.re + a.im).sum::<f64>() + (x & 1) as f64
            })
            .sum();
        read.push(t.elapsed().as_secs_f64());
        std::hint::black_box(s);
        let t = std::time::Instant::now();
        k2.par_chunks_mut(1 << 16)
            .zip(keys.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        a2.par_chunks_mut(1 << 16)
            .zip(amps.par_chunks(1 << 16))
            .for_each(|(d, s)| d.copy_from_slice(s));
        copy.push(t.elapsed().as_secs_f64());
        std::hint::black_box((&k2, &a2));
    }
    let (r, c) = (median(read), median(copy));
    let bytes = (n * 24) as f64;
    println!(
        "{{\"op\":\"roofline\",\"states\":{n},\"threads\":{},\"read_gb_per_sec\":{},\"copy_gb_per_sec\":{},\"read_states_per_sec\":{},\"copy_states_per_sec\":{}}}",
        rayon::current_num_threads(),
        bytes / r / 1e9,
        2.0 * bytes / c / 1e9,
        n as f64 / r,
        n as f64 / c
    );
}

/// `pages STATES`: median seconds of `State::try_clone` (fresh pages), `State::force` of one
/// qubit (the read, the compaction and the shrink) and dropping the copy, with the huge-page
/// advice off and then on.
fn pages(n: usize) {
    use qchess_sim::{Predicate, State};
    use std::time::Instant;
    let s: State<f64> = qchess_sim::bench::random_state(n).expect("state");
    let q = qchess_sim::bench::qubits(n).1;
    for on in [false, true] {
        qchess_sim::set_huge_pages(on);
        let (mut copy, mut force, mut drop) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..7 {
            let t = Instant::now();
            let mut c = s.try_clone(0).expect("room for a copy");
            copy.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            c.force(Predicate::One(q), true)
                .expect("a possible outcome");
            force.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            std::mem::drop(c);
            drop.push(t.elapsed().as_secs_f64());
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        println!(
            "{{\"op\":\"pages\",\"states\":{n},\"huge_pages\":{on},\"copy_seconds\":{},\"force_seconds\":{},\"drop_seconds\":{}}}",
            median(&mut copy),
            median(&mut force),
            median(&mut drop)
        );
    }
}

/// The resident set's `field` (`VmRSS:`, `VmHWM:`) in bytes, on Linux.
fn status_bytes(field: &str) -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    Some(line.split_whitespace().nth(1)?.parse::<usize>().ok()? * 1024)
}

/// Runs `f` once: its wall seconds and the resident set's growth during it over `bytes`.
fn timed_growth(bytes: usize, f: impl FnOnce()) -> (f64, Option<f64>) {
    let rss = status_bytes("VmRSS:");
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let t = std::time::Instant::now();
    f();
    let seconds = t.elapsed().as_secs_f64();
    let growth = match (reset, rss, status_bytes("VmHWM:")) {
        (true, Some(rss), Some(hwm)) => Some(hwm.saturating_sub(rss) as f64 / bytes as f64),
        _ => None,
    };
    (seconds, growth)
}

/// `projections STATES [THREADS]`: see the module documentation.
fn projections(n: usize, threads: usize) {
    use qchess_sim::{Predicate, State};
    let base: State<f64> = qchess_sim::bench::random_state(n).expect("the random state");
    let probs = base.qubit_probabilities();
    let q = (0..64u8)
        .find(|&q| (0.4..0.6).contains(&probs[usize::from(q)]))
        .expect("a qubit near 1/2");
    let pred = Predicate::One(q);
    let p = base.probability(pred);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let time = |f: &mut dyn FnMut()| {
        let t = std::time::Instant::now();
        f();
        t.elapsed().as_secs_f64()
    };
    let mut rows: [Vec<f64>; 6] = Default::default();
    for _ in 0..5 {
        let mut s = base.try_clone(0).expect("a copy");
        rows[0].push(time(&mut || {
            s.probability(pred);
        }));
        rows[1].push(time(&mut || {
            s.force(pred, true).expect("the projection");
        }));
        drop(s);
        // Each recording projection twice: on a fresh copy, then again after it is taken
        // back (the record's arrays then come from the pool, as a game's next move's do).
        let mut s = base.try_clone(0).expect("a copy");
        for row in [2, 3] {
            let mut removed = None;
            rows[row].push(time(&mut || {
                removed = Some(s.force_keeping_given(pred, true, p).expect("kept").1);
            }));
            s.unproject(removed.take().expect("a record"))
                .expect("undone");
        }
        for row in [4, 4] {
            let mut removed = None;
            let t = time(&mut || {
                let r = s
                    .force_keeping_given_marginals(pred, true, p)
                    .expect("kept");
                removed = Some(r.1);
            });
            s.unproject(removed.take().expect("a record"))
                .expect("undone");
            rows[row].push(t);
        }
        rows[5].push(time(&mut || {
            s.force_given_marginals_within(pred, true, p, 0)
                .expect("dropped");
        }));
    }
    let m: Vec<f64> = rows.into_iter().map(median).collect();
    println!(
        "{{\"op\":\"projections\",\"states\":{n},\"threads\":{threads},\"probability_seconds\":{},\"force_seconds\":{},\"keeping_fresh_seconds\":{},\"keeping_warm_seconds\":{},\"keeping_marginals_seconds\":{},\"dropping_marginals_seconds\":{}}}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    );
}

/// `controlled STATES [THREADS]`: see the module documentation.
fn controlled(n: usize, threads: usize) {
    use qchess_sim::{Controls, Predicate, State};
    let base: State<f64> = qchess_sim::bench::random_state(n).expect("the random state");
    let probs = base.qubit_probabilities();
    let mixed: Vec<u8> = (0..64u8)
        .filter(|&q| (0.2..0.8).contains(&probs[usize::from(q)]))
        .collect();
    let (a, b, x) = (mixed[0], mixed[1], mixed[2]);
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (mut slide, mut where_, mut capture, mut project) = (vec![], vec![], vec![], vec![]);
    let (mut plain_capture, mut most_capture) = (vec![], vec![]);
    let mut growth = [0.0f64; 3];
    let mut len = 0;
    for _ in 0..5 {
        // The pawn capture's circuit: the source forced occupied, the target captured,
        // then the iSwap where the capture happened; the slide's iSwap on the same state.
        let mut s = base.try_clone(0).expect("a copy");
        s.force(Predicate::One(a), true).expect("the projection");
        len = s.len();
        let mut plain = s.try_clone(0).expect("a copy");
        let by = plain.bytes();
        let c = Controls::empty_path(1 << x);
        slide.push(timed_growth(by, || plain.iswap(a, b, c).expect("the slide")).0);
        drop(plain);
        let ancilla = s.capture(b).expect("the capture");
        let by = s.bytes();
        let (t, g) = timed_growth(by, || {
            s.iswap_where_ancillas(a, b, 1u128 << ancilla)
                .expect("the iSwap where captured")
        });
        where_.push(t);
        growth[0] = growth[0].max(g.unwrap_or(f64::NAN));
        drop(s);
        // The plain capture of the same qubit (reference), then the capture controlled on a
        // board qubit (en passant's), on the whole state.
        let mut s = base.try_clone(0).expect("a copy");
        plain_capture.push(
            timed_growth(0, || {
                s.capture(a).expect("the capture");
            })
            .0,
        );
        drop(s);
        let mut s = base.try_clone(0).expect("a copy");
        let by = s.bytes();
        let ones = Controls {
            zeros: 0,
            ones: 1 << x,
        };
        let (t, g) = timed_growth(by, || {
            s.capture_where(a, ones).expect("the controlled capture");
        });
        capture.push(t);
        growth[1] = growth[1].max(g.unwrap_or(f64::NAN));
        drop(s);
        // A projection onto boards no predicate describes (a capture slide's outcome 0).
        let mut s = base.try_clone(0).expect("a copy");
        let by = s.bytes();
        let keep = move |board: u64| board >> a & 1 == 1 || board >> x & 1 == 0;
        let (t, g) = timed_growth(by, || {
            s.project_boards(&keep).expect("the projection");
        });
        project.push(t);
        growth[2] = growth[2].max(g.unwrap_or(f64::NAN));
        // The plain capture of `a` where it is occupied in about two thirds of the entries
        // (after the projection onto the boards with `a` or `b` occupied): most entries
        // move, so they stay in place and the ones that stay are copied.
        let mut s = base.try_clone(0).expect("a copy");
        s.project_boards(&move |board: u64| board >> a & 1 == 1 || board >> b & 1 == 1)
            .expect("the projection");
        most_capture.push(
            timed_growth(0, || {
                s.capture(a).expect("the capture");
            })
            .0,
        );
    }
    println!(
        "{{\"op\":\"controlled\",\"states\":{n},\"threads\":{threads},\"forced_states\":{len},\"slide_seconds\":{},\"iswap_where_seconds\":{},\"capture_seconds\":{},\"capture_where_seconds\":{},\"project_boards_seconds\":{},\"capture_most_seconds\":{},\"growth_max\":[{},{},{}]}}",
        median(slide),
        median(where_),
        median(plain_capture),
        median(capture),
        median(project),
        median(most_capture),
        growth[0],
        growth[1],
        growth[2]
    );
}

/// The numeric argument at `i`, or `default`.
fn arg(args: &[String], i: usize, default: usize) -> usize {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Runs `f` on a rayon pool of `threads` threads.
fn on_threads(threads: usize, f: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("controlled") => {
            let (n, threads) = (arg(&args, 2, 10_000_000), arg(&args, 3, 1));
            return on_threads(threads, || controlled(n, threads));
        }
        Some("projections") => {
            let (n, threads) = (arg(&args, 2, 10_000_000), arg(&args, 3, 1));
            return on_threads(threads, || projections(n, threads));
        }
        Some("pages") => {
            let n = arg(&args, 2, 10_000_000);
            return on_threads(1, || pages(n));
        }
        Some("roofline") => {
            let (n, threads) = (arg(&args, 2, 10_000_000), arg(&args, 3, 1));
            return on_threads(threads, || roofline(n));
        }
        _ => {}
    }
    if args.get(1).map(String::as_str) == Some("prob") {
        let n = args
            .get(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(1_000_000);
        let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let f32 = args.iter().any(|s| s == "f32");
        let exact = args.iter().any(|s| s == "exact");
        pool.install(|| time_probability(n, threads, f32, exact));
        return;
    }
    let op = match args.get(1).map(String::as_str) {
        Some("iswap") => BenchOp::Iswap,
        Some("slide") => BenchOp::SlideIswap,
        Some("split") => BenchOp::Split,
        Some("merge") => BenchOp::Merge,
        Some("measure") => BenchOp::Measure,
        Some("project") => BenchOp::Project,
        _ => {
            eprintln!(
                "usage: sim_bench iswap|slide|split|merge|measure|project STATES THREADS [f32|exact] [game] | prob STATES [THREADS] [f32|exact] | roofline STATES [THREADS] | pages STATES"
            );
            std::process::exit(2);
        }
    };
    let n: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let threads: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let f32 = args.iter().skip(4).any(|s| s == "f32");
    let exact = args.iter().skip(4).any(|s| s == "exact");
    let shape = if args.iter().skip(4).any(|s| s == "game") {
        Shape::Game
    } else {
        Shape::Random
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    let r: BenchResult = pool
        .install(|| {
            if f32 {
                run_op_shaped::<f32>(op, n, shape)
            } else if exact {
                run_op_shaped::<qchess_sim::Exact>(op, n, shape)
            } else {
                run_op_shaped::<f64>(op, n, shape)
            }
        })
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        });
    println!(
        "{{\"op\":\"{}\",\"states\":{},\"threads\":{threads},\"f32\":{f32},\"exact\":{exact},\"game\":{},\"seconds\":{},\"cpu_seconds\":{},\"states_per_sec\":{},\"cpu_states_per_sec\":{},\"bytes_per_state\":{},\"peak_bytes\":{}}}",
        args[1],
        r.states,
        shape == Shape::Game,
        r.seconds,
        r.cpu_seconds.map_or("null".into(), |c| c.to_string()),
        r.states as f64 / r.seconds,
        r.cpu_seconds
            .filter(|&c| c > 0.0)
            .map_or("null".into(), |c| (r.states as f64 / c).to_string()),
        r.bytes_per_state,
        r.peak_bytes
    );
}
