//! qchess-sim gates against a straightforward `hashbrown::HashMap<u64, Complex<f64>>`
//! simulator (kept here, in the bench, only), on the same random states.
//!
//! `cargo bench --bench sim` (add `-- --measurement-time 2` for a quicker run). Each group is
//! one operation at one size; `sorted` is qchess-sim (f64), `hashmap` the reference, both with
//! throughput in input basis states per second. Every input is checked first: both
//! implementations must give the same probabilities. After criterion's groups a summary
//! prints the hash-map / qchess-sim time ratio per operation (median of 5 plain timings).

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_main};
use hashbrown::HashMap;
use num_complex::Complex;
use qchess_sim::State;
use qchess_sim::bench::{BenchOp, apply_op, random_state};
use std::hint::black_box;
use std::time::{Duration, Instant};

type Map = HashMap<u64, Complex<f64>>;

const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];
/// The ratio summary also runs at 10^7 (issue 10's ">= 8x at 10^7" target); criterion's
/// groups stop at 10^6.
const RATIO_SIZES: [usize; 4] = [1_000, 100_000, 1_000_000, 10_000_000];
const OPS: [(BenchOp, &str); 5] = [
    (BenchOp::Iswap, "iswap"),
    (BenchOp::SlideIswap, "slide_iswap"),
    (BenchOp::Split, "split"),
    (BenchOp::Merge, "merge"),
    (BenchOp::Measure, "measure"),
];

/// The qubits `qchess_sim::bench` uses for a state of `n` keys (low, middle, high).
fn qubits(n: usize) -> (u32, u32, u32) {
    let bits = (64 - (n as u64 * 5 / 2 + 16).leading_zeros()).clamp(8, 60);
    (2, bits / 2, bits - 2)
}

fn to_map(s: &State<f64>) -> Map {
    s.entries().map(|(k, a)| (k.board, a)).collect()
}

fn differ(k: u64, a: u32, b: u32) -> bool {
    ((k >> a) ^ (k >> b)) & 1 == 1
}

/// iSwap (phase `i`) where `ctl_zero` bits are clear: rebuild the map.
fn map_iswap(m: &Map, a: u32, b: u32, ctl_zero: u64) -> Map {
    let mut out = Map::with_capacity(m.len());
    let flip = (1u64 << a) | (1u64 << b);
    for (&k, &v) in m {
        if differ(k, a, b) && k & ctl_zero == 0 {
            out.insert(k ^ flip, v * Complex::i());
        } else {
            out.insert(k, v);
        }
    }
    out
}

/// sqrt-iSwap^(+-1): scatter each pair entry into itself and its partner, drop cancellations.
fn map_sqrt(m: &Map, a: u32, b: u32, inverse: bool) -> Map {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let (d, o) = (
        Complex::new(h, 0.0),
        Complex::new(0.0, if inverse { -h } else { h }),
    );
    let flip = (1u64 << a) | (1u64 << b);
    let mut out = Map::with_capacity(m.len() * 3 / 2);
    for (&k, &v) in m {
        if differ(k, a, b) {
            *out.entry(k).or_default() += d * v;
            *out.entry(k ^ flip).or_default() += o * v;
        } else {
            *out.entry(k).or_default() += v;
        }
    }
    out.retain(|_, v| v.norm_sqr() > 1e-30);
    out
}

/// The hash-map version of `op`; a measurement keeps `keep` (default: the likelier outcome).
fn map_op(op: BenchOp, m: &Map, n: usize, keep: Option<bool>) -> Map {
    let (lo, mid, hi) = qubits(n);
    match op {
        BenchOp::Iswap => map_iswap(m, lo, hi, 0),
        BenchOp::SlideIswap => map_iswap(m, lo, hi, 1 << mid),
        // split(mid, lo, hi) = iSwap(mid, hi) sqrt(mid, lo)
        BenchOp::Split => map_iswap(&map_sqrt(m, mid, lo, false), mid, hi, 0),
        // merge(lo, hi, mid) = sqrt^-1(mid, hi) iSwap^-1(mid, lo)
        BenchOp::Merge => {
            let mut y = Map::with_capacity(m.len());
            let flip = (1u64 << mid) | (1u64 << lo);
            for (&k, &v) in m {
                if differ(k, mid, lo) {
                    y.insert(k ^ flip, v * Complex::new(0.0, -1.0));
                } else {
                    y.insert(k, v);
                }
            }
            map_sqrt(&y, mid, hi, true)
        }
        // The projection alone keeps what the measurement keeps.
        BenchOp::Measure | BenchOp::Project => {
            let bit = 1u64 << mid;
            let p: f64 = m
                .iter()
                .filter(|(k, _)| *k & bit != 0)
                .map(|(_, v)| v.norm_sqr())
                .sum();
            let all: f64 = m.values().map(|v| v.norm_sqr()).sum();
            let keep = keep.unwrap_or(p >= 0.5 * all);
            let scale = 1.0 / (if keep { p } else { all - p }).sqrt();
            let mut out = m.clone();
            out.retain(|k, _| (*k & bit != 0) == keep);
            out.values_mut().for_each(|v| *v *= scale);
            out
        }
    }
}

/// Both implementations agree on every qubit probability after the operation.
fn check(op: BenchOp, n: usize) {
    let mut s = random_state::<f64>(n).expect("state");
    let base = to_map(&s);
    apply_op(op, &mut s, n).expect("op");
    let mid = qubits(n).1 as u8;
    let m = map_op(
        op,
        &base,
        n,
        Some(s.probability(qchess_sim::Predicate::One(mid)) > 0.5),
    );
    assert_eq!(s.len(), m.len(), "{op:?} at {n}: sizes differ");
    let all: f64 = m.values().map(|v| v.norm_sqr()).sum();
    let probs = s.qubit_probabilities();
    for (q, p) in probs.iter().enumerate() {
        let pm: f64 = m
            .iter()
            .filter(|(k, _)| *k >> q & 1 == 1)
            .map(|(_, v)| v.norm_sqr())
            .sum();
        assert!((p - pm / all).abs() < 1e-9, "{op:?} at {n}: qubit {q}");
    }
}

fn gates(c: &mut Criterion) {
    for (op, name) in OPS {
        for n in SIZES {
            check(op, n);
            let base = random_state::<f64>(n).expect("state");
            let map = to_map(&base);
            let mut g = c.benchmark_group(format!("sim/{name}"));
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(BenchmarkId::new("sorted", n), |b| {
                b.iter_batched(
                    || {
                        let mut s = base.clone();
                        s.reserve_buffers(2 * n).expect("buffers");
                        s
                    },
                    |mut s| {
                        apply_op(op, &mut s, n).expect("op");
                        s
                    },
                    BatchSize::LargeInput,
                )
            });
            g.bench_function(BenchmarkId::new("hashmap", n), |b| {
                b.iter(|| black_box(map_op(op, &map, n, None)))
            });
            g.finish();
        }
    }
}

fn median_secs(mut f: impl FnMut() -> Duration) -> f64 {
    let mut t: Vec<f64> = (0..5).map(|_| f().as_secs_f64()).collect();
    t.sort_by(f64::total_cmp);
    t[2]
}

/// Hash-map time / sorted time per operation and size.
fn ratios(_: &mut Criterion) {
    println!("\nhash-map time / qchess-sim time (median of 5, f64, 1 call each):");
    println!(
        "{:<12} {:>10} {:>14} {:>14} {:>8}",
        "op", "states", "sorted s", "hashmap s", "ratio"
    );
    for (op, name) in OPS {
        for n in RATIO_SIZES {
            let base = random_state::<f64>(n).expect("state");
            let map = to_map(&base);
            let sorted = median_secs(|| {
                let mut s = base.clone();
                s.reserve_buffers(2 * n).expect("buffers");
                let t = Instant::now();
                apply_op(op, &mut s, n).expect("op");
                t.elapsed()
            });
            let hashed = median_secs(|| {
                let t = Instant::now();
                black_box(map_op(op, &map, n, None));
                t.elapsed()
            });
            println!(
                "{name:<12} {n:>10} {sorted:>14.6} {hashed:>14.6} {:>8.1}",
                hashed / sorted
            );
        }
    }
}

/// Private, so the macro's generated `pub fn` needs no rustdoc.
mod group {
    use super::{gates, ratios};
    criterion::criterion_group!(benches, gates, ratios);
}
criterion_main!(group::benches);
