//! Criterion benchmarks of Niel's Chess: legal move generation (which enumerates the collapse
//! outcomes of every candidate move) and whole random games.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use qchess_niels::{Game, Rules, Status};
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use std::hint::black_box;

/// A game after `plies` random moves (seeded, so the same position every run).
fn midgame(board: &str, plies: usize, seed: u64) -> Game {
    let mut game = Game::new(Rules::default(), board.parse().unwrap()).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..plies {
        if game.status() != Status::Ongoing {
            break;
        }
        let moves = game.legal_moves();
        let mv = *moves.choose(&mut rng).unwrap();
        game.play(&mv, &mut rng).unwrap();
    }
    game
}

fn legal_moves(c: &mut Criterion) {
    let start = Game::new(Rules::default(), "8x8".parse().unwrap()).unwrap();
    c.bench_function("niels legal_moves 8x8 start", |b| {
        b.iter(|| black_box(start.legal_moves().len()))
    });
    let mid = midgame("8x8", 30, 5);
    c.bench_function("niels legal_moves 8x8 after 30 random plies", |b| {
        b.iter(|| black_box(mid.legal_moves().len()))
    });
}

fn random_game(c: &mut Criterion) {
    c.bench_function("niels random game 5x6 (<= 100 plies)", |b| {
        b.iter(|| black_box(midgame("5x6", 100, 9).history().len()))
    });
}

criterion_group!(benches, legal_moves, random_game);
criterion_main!(benches);
