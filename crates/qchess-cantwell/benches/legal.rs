//! Criterion benchmarks of the Cantwell legal-move list: the fast decision (read-only
//! questions to the simulator, `Game::legal_moves`) against the slow reference that
//! simulates every candidate (`Game::legal_moves_reference`), on game-shaped states reached
//! by real moves:
//!
//! * "pawnless": a walk of splits from a pawnless position (every piece splits once, then
//!   the most likely halves split again) at about 10^2, 10^4 and 10^6 basis states (this walk
//!   runs out of splits onto empty squares at about 1.3 x 10^6);
//! * "knights": the position of `qchess bench move` (eight growth knights a side, set-up
//!   `b1^a3d2` then knight splits, `e8d8` if Black is to move) at 10^6 and 10^7 (1 492 992
//!   and 10 077 696 basis states; it reaches 3.0 x 10^7).
//!
//! `cargo bench -p qchess-cantwell --bench legal`. `QCHESS_BENCH_LEGAL_MAX=10000` stops after
//! the smaller states; `QCHESS_BENCH_LEGAL_FAST_ONLY=1` skips the reference (about a minute
//! per call at 10^6; it is never run at 10^7).
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use qchess_board::{Piece, PieceKind, Square};
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

/// The start position of `qchess bench move` (crates/qchess-cli/src/bench/moves.rs).
const KNIGHTS_FEN: &str = "N3k3/2NNn3/1n1n2N1/3N1nn1/1nN1p3/3n2N1/4N2n/RN2K1N1 w - - 0 1";

/// Squares the growth knights never use (as in `qchess bench move`).
const RESERVED: [&str; 15] = [
    "a1", "a2", "a3", "a4", "a5", "b1", "d2", "e1", "g1", "f3", "h3", "e4", "e8", "d8", "c3",
];

/// The set-up of `qchess bench move`: `b1^a3d2`, then the side to move splits a growth
/// knight on its most likely square into the two empty unreserved knight squares with the
/// most onward room, until the state holds at least `states` basis states; `e8d8` if Black
/// is to move.
fn knights_walk(states: usize) -> (Game, Vec<String>) {
    let sq = |n: &str| -> Square { n.parse().unwrap() };
    let reserved = |s: Square| RESERVED.iter().any(|r| sq(r) == s);
    let mut game = Game::from_fen(KNIGHTS_FEN).unwrap();
    game.set_snapshot_budget(0);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut plies = vec!["b1^a3d2".to_string()];
    game.apply("b1^a3d2", &mut rng).unwrap();
    while game.state_size() < states {
        let knight = Piece::new(game.side_to_move(), PieceKind::Knight);
        let pieces = game.pieces();
        let free = |t: &Square| pieces.get(*t).is_none() && !reserved(*t);
        let steps = |s: Square| qchess_board::knight_attacks(s).into_iter();
        let mut sources: Vec<(i64, Square)> = Square::ALL
            .iter()
            .copied()
            .filter(|&s| pieces.get(s) == Some(knight) && !reserved(s))
            .map(|s| (-(game.probability(s) * 1e6).round() as i64, s))
            .collect();
        sources.sort_by_key(|&(p, s)| (p, s.index()));
        let next = sources.into_iter().find_map(|(_, s)| {
            let mut targets: Vec<(usize, Square)> = steps(s)
                .filter(free)
                .map(|t| (steps(t).filter(free).count(), t))
                .collect();
            targets.sort_by_key(|&(room, t)| (std::cmp::Reverse(room), t.index()));
            (targets.len() >= 2).then(|| format!("{s}^{}{}", targets[0].1, targets[1].1))
        });
        let Some(mv) = next else { break };
        game.apply(&mv, &mut rng).unwrap();
        plies.push(mv);
    }
    if game.side_to_move() == qchess_board::Color::Black {
        game.apply("e8d8", &mut rng).unwrap();
        plies.push("e8d8".to_string());
    }
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
            split_walk(target)
        } else {
            knights_walk(target)
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
