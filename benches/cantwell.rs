//! Cantwell game-level moves on large superpositions: the time of one `Game::apply` (parse,
//! possibility equations, circuit, Definition 2 check, letter bookkeeping) on states of
//! 1e3 .. 1e7 basis states, reported as basis states per second of the input state.
//!
//! The state: white king e1, knight b1, rook a1, queen d1, black king e8, and black pawns on
//! a4..h7 (32 squares) in a random superposition of N distinct occupancy patterns. Moves:
//! * `b1c3`   jump (iSwap, no controls),
//! * `a1a8`   slide whose path a4..a7 is partly occupied (controlled iSwap),
//! * `b1^a3c3` split jump (sqrt-iSwap: the state doubles),
//! * `d1xd5.m1` capture slide with a measurement (path d4 partly occupied).
//!
//! Run: `cargo bench --bench cantwell` (set `QCHESS_BENCH_MAX=1000000` to stop earlier).
// criterion_group! generates undocumented public items.
#![allow(missing_docs)]

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use num_complex::Complex64;
use qchess_cantwell::{ClassicalLayer, Game};
use qchess_sim::{Key, Normalization, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const FEN: &str = "4k3/pppppppp/pppppppp/pppppppp/pppppppp/8/8/RN1QK3 w - - 0 1";

/// A game whose filler pawns (a4..h7) are in a random superposition of `n` patterns.
fn game_with_states(n: usize) -> Game {
    let layer = ClassicalLayer::from_fen(FEN).unwrap();
    let fixed = (1u64 << 0) | (1u64 << 1) | (1u64 << 3) | (1u64 << 4) | (1u64 << 60);
    let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
    let mut patterns: Vec<u32> = (0..n + n / 8 + 16).map(|_| rng.random::<u32>()).collect();
    patterns.sort_unstable();
    patterns.dedup();
    patterns.truncate(n);
    // Every filler square must be occupied in some branch (each letter needs a positive
    // probability): the all-ones pattern is always present.
    if let Some(last) = patterns.last_mut() {
        *last = u32::MAX;
    }
    patterns.sort_unstable();
    patterns.dedup();
    let norm = (patterns.len() as f64).sqrt();
    let entries: Vec<(Key, Complex64)> = patterns
        .iter()
        .map(|&p| {
            let board = fixed | ((p as u64) << 24);
            let phase: f64 = rng.random::<f64>() * std::f64::consts::TAU;
            (
                Key { board, ancillas: 0 },
                Complex64::from_polar(1.0 / norm, phase),
            )
        })
        .collect();
    let state = State::from_amplitudes(entries, Normalization::Renormalize).unwrap();
    let mut game = Game::from_state(state, layer).unwrap();
    game.set_snapshot_budget(0);
    game
}

fn bench_moves(c: &mut Criterion) {
    let max: usize = std::env::var("QCHESS_BENCH_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let mut group = c.benchmark_group("cantwell_game_move");
    group.sample_size(10);
    for exp in 3..=7u32 {
        let n = 10usize.pow(exp);
        if n > max {
            break;
        }
        let game = game_with_states(n);
        group.throughput(Throughput::Elements(game.state_size() as u64));
        for mv in ["b1c3", "a1a8", "b1^a3c3", "d1xd5.m1"] {
            group.bench_with_input(BenchmarkId::new(mv, n), &game, |b, game| {
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                b.iter_batched(
                    || game.clone(),
                    |mut g| {
                        g.apply(mv, &mut rng).unwrap();
                        g
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_moves);
criterion_main!(benches);
