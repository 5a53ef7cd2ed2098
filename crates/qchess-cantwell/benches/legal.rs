//! Criterion benchmarks of the Cantwell legal-move list: the fast decision (pattern weights,
//! `Game::legal_moves`) against the slow reference that simulates every candidate
//! (`Game::legal_moves_reference`), on game-shaped states of about 10^2, 10^4, 10^6 and
//! 10^7 basis states reached by real moves (a walk of splits: every piece of a pawnless
//! position splits once, then the most likely halves split again).
//!
//! `cargo bench -p qchess-cantwell --bench legal`. The walk from this pawnless position runs
//! out of splits onto empty squares at about 1.3 x 10^6 states, so there is no 10^7 row.
//! `QCHESS_BENCH_LEGAL_MAX=10000` stops after the smaller states;
//! `QCHESS_BENCH_LEGAL_FAST_ONLY=1` skips the reference (about a minute per call at 10^6).
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use qchess_cantwell::Game;
use rand::SeedableRng;
use std::hint::black_box;
use std::time::Duration;

/// Pieces on both back ranks, no pawns: every piece can split at once.
const FEN: &str = "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1";

/// Plays splits until the state holds at least `states` basis states: each ply the side to
/// move splits its most likely piece onto two squares that are empty in every branch
/// (preferring the split that leaves most pieces unsplit). Returns the game and the plies.
fn split_walk(states: usize) -> (Game, Vec<String>) {
    let mut game = Game::from_fen(FEN).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut plies = Vec::new();
    while game.state_size() < states {
        let probs = game.probabilities();
        let p = |sq: qchess_board::Square| probs[sq.index() as usize];
        let best = game
            .possible_moves()
            .into_iter()
            .filter_map(|c| match c.shape {
                qchess_cantwell::MoveShape::Split { from, to1, to2 }
                    if p(to1) == 0.0 && p(to2) == 0.0 && !game.classically_blocked(&c, &probs) =>
                {
                    // Most likely source first; then targets near the centre (more room).
                    let centre = |s: qchess_board::Square| {
                        (2 * s.rank() as i32 - 7).abs() + (2 * s.file() as i32 - 7).abs()
                    };
                    let score = (p(from) * 1e6) as i64 * 100 - i64::from(centre(to1) + centre(to2));
                    Some((score, qchess_cantwell::legal::notation_of(&c)))
                }
                _ => None,
            })
            .max_by_key(|(score, _)| *score);
        let Some((_, mv)) = best else { break };
        game.apply(&mv, &mut rng).unwrap();
        plies.push(mv);
    }
    (game, plies)
}

fn legal_moves(c: &mut Criterion) {
    let max: usize = std::env::var("QCHESS_BENCH_LEGAL_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let fast_only = std::env::var_os("QCHESS_BENCH_LEGAL_FAST_ONLY").is_some();
    let mut group = c.benchmark_group("cantwell legal_moves");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    for target in [100usize, 10_000, 1_000_000] {
        if target > max {
            break;
        }
        let (game, plies) = split_walk(target);
        let (moves, stats) = game.legal_moves_with_stats();
        eprintln!(
            "{} states after {} splits ({}): {} legal of {stats:?}",
            game.state_size(),
            plies.len(),
            plies.join(" "),
            moves.len(),
        );
        let label = format!("{target:.0e} ({} states)", game.state_size());
        group.measurement_time(Duration::from_secs(if target >= 1_000_000 {
            20
        } else {
            5
        }));
        group.bench_function(format!("fast {label}"), |b| {
            b.iter(|| black_box(game.legal_moves().len()))
        });
        if !fast_only {
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
