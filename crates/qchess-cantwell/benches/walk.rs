//! Criterion benchmark of issue 10's target "a knight-split walk of 40 splits still < 1 ms
//! per move": the 40 plies of [`qchess_cantwell::growth::knight_split_walk`] from
//! [`qchess_cantwell::growth::KNIGHT_WALK_FEN`] (each side's knight splits its most likely
//! part onto two empty squares; the state ends at 21 x 21 = 441 basis states), replayed
//! with `Game::apply` from a fresh copy of the start. The throughput is in moves, so
//! criterion prints moves per second; the time per move is the time per walk over 40.
//!
//! `cargo bench -p qchess-cantwell --bench walk`.
#![allow(missing_docs)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use qchess_cantwell::{Game, growth};
use rand::SeedableRng;
use std::hint::black_box;

const SPLITS: usize = 40;

fn knight_walk(c: &mut Criterion) {
    let start: Game = Game::from_fen(growth::KNIGHT_WALK_FEN).unwrap();
    let mut walked = start.clone();
    let plies = growth::knight_split_walk(
        &mut walked,
        SPLITS,
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
    );
    assert_eq!(plies.len(), SPLITS, "the walk ran out of splits");
    eprintln!(
        "knight-split walk: {} plies, {} basis states at the end",
        plies.len(),
        walked.state_size()
    );
    let mut group = c.benchmark_group("cantwell knight-split walk");
    group.throughput(Throughput::Elements(SPLITS as u64));
    group.bench_function("40 splits, replayed with apply", |b| {
        b.iter_batched(
            || (start.clone(), rand_chacha::ChaCha8Rng::seed_from_u64(1)),
            |(mut game, mut rng)| {
                for mv in &plies {
                    game.apply(mv, &mut rng).unwrap();
                }
                black_box(game.state_size())
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, knight_walk);
criterion_main!(benches);
