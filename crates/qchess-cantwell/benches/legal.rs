//! Criterion benchmarks of the Cantwell legal-move list: the fast decision (read-only
//! questions to the simulator, `Game::legal_moves`) against the slow reference that
//! simulates every candidate (`Game::legal_moves_reference`), on game-shaped states reached
//! by real moves:
//!
//! * "pawnless": a walk of splits from a pawnless position (every piece splits once, then
//!   the most likely halves split again) at about 10^2, 10^4 and 10^6 basis states (this walk
//!   runs out of splits onto empty squares at about 1.3 x 10^6);
//! * "knights": the position of `qchess bench move` ([`qchess_cantwell::growth`]: eight growth knights a side, set-up
//!   `b1^a3d2` then knight splits, `e8d8` if Black is to move) at 10^6 and 10^7 (1 492 992
//!   and 10 077 696 basis states; it reaches 3.0 x 10^7).
//!
//! `cargo bench -p qchess-cantwell --bench legal`. `QCHESS_BENCH_LEGAL_MAX=10000` stops after
//! the smaller states; `QCHESS_BENCH_LEGAL_FAST_ONLY=1` skips the reference (about a minute
//! per call at 10^6; it is never run at 10^7).
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use qchess_cantwell::{Game, growth};
use rand::SeedableRng;
use std::hint::black_box;
use std::time::Duration;

/// The pawnless split walk of [`qchess_cantwell::growth::split_walk`].
fn pawnless_walk(states: usize) -> (Game, Vec<String>) {
    let mut game = Game::from_fen(growth::PAWNLESS_FEN).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let plies = growth::split_walk(&mut game, states, &mut rng);
    (game, plies)
}

fn legal_moves(c: &mut Criterion) {
    let max: usize = std::env::var("QCHESS_BENCH_LEGAL_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let fast_only = std::env::var_os("QCHESS_BENCH_LEGAL_FAST_ONLY").is_some();
    let mut group = c.benchmark_group("cantwell legal_moves");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    let cases = [
        ("pawnless", 100usize),
        ("pawnless", 10_000),
        ("pawnless", 1_000_000),
        ("knights", 1_000_000),
        ("knights", 10_000_000),
    ];
    for (walk, target) in cases {
        if target > max {
            continue;
        }
        let (game, plies) = if walk == "pawnless" {
            pawnless_walk(target)
        } else {
            growth::growth_position(target).unwrap()
        };
        let (moves, stats) = game.legal_moves_with_stats();
        eprintln!(
            "{} states after {} splits ({}): {} legal of {stats:?}",
            game.state_size(),
            plies.len(),
            plies.join(" "),
            moves.len(),
        );
        let label = format!("{walk} {target:.0e} ({} states)", game.state_size());
        group.measurement_time(Duration::from_secs(if target >= 1_000_000 {
            20
        } else {
            5
        }));
        group.bench_function(format!("fast {label}"), |b| {
            b.iter(|| black_box(game.legal_moves().len()))
        });
        if !fast_only && target <= 1_000_000 {
            assert_eq!(moves, game.legal_moves_reference(), "fast != reference");
            group.bench_function(format!("reference {label}"), |b| {
                b.iter(|| black_box(game.legal_moves_reference().len()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, legal_moves);
criterion_main!(benches);
