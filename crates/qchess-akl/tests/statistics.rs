//! Statistical tests with fixed seeds: collapses are fair coins, set-ups are uniform.

mod common;

use common::{game, mv, sq};
use qchess_akl::{AklPosition, Game};
use qchess_board::{Color, PieceKind, PieceKind::*, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Trials per frequency test and the tolerance on a frequency of 1/2: the standard deviation
/// is sqrt(0.25 / 40000) = 0.0025, so 0.01 is four standard deviations (a fair coin fails it
/// about once in 16 000 seeds; the seeds are fixed, so the tests are deterministic). A coin of
/// 0.6 / 0.4 is off by 0.1 (forty standard deviations), one of 0.52 by eight: both fail, as
/// `the_tolerance_rejects_a_biased_coin` checks.
const TRIALS: usize = 40_000;
const TOLERANCE: f64 = 0.01;

/// Whether `hits` out of `TRIALS` is within the tolerance of 1/2.
fn fair(hits: usize) -> bool {
    (hits as f64 / TRIALS as f64 - 0.5).abs() < TOLERANCE
}

#[test]
fn the_tolerance_rejects_a_biased_coin() {
    use rand::Rng;
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut count = |p: f64| (0..TRIALS).filter(|_| rng.random_bool(p)).count();
    assert!(fair(count(0.5)));
    for biased in [0.6, 0.4, 0.52, 0.48] {
        assert!(!fair(count(biased)), "a coin of {biased} passed");
    }
}

#[test]
fn a_touched_quantum_piece_collapses_to_each_type_half_the_time() {
    let start = game("4k3/8/8/8/8/8/8/1(NB)2K3 w - 0 1");
    let mut rng = ChaCha8Rng::seed_from_u64(20_241_121);
    let mut knights = 0;
    for _ in 0..TRIALS {
        let mut g = start.clone();
        let out = g.touch(sq("b1"), &mut rng).unwrap();
        match out.collapsed {
            Some(Knight) => knights += 1,
            Some(Bishop) => {}
            other => panic!("collapsed to {other:?}"),
        }
    }
    let freq = knights as f64 / TRIALS as f64;
    assert!(fair(knights), "knight frequency {freq}");
}

#[test]
fn a_captured_quantum_piece_collapses_to_each_type_half_the_time() {
    let start = game("4k3/8/8/3(rq)4/8/8/8/3[R*R]K3 w - 0 1");
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut queens = 0;
    for _ in 0..TRIALS {
        let mut g = start.clone();
        g.touch(sq("d1"), &mut rng).unwrap();
        g.play(mv("d1d5"), &mut rng).unwrap();
        match g.captured() {
            [(Color::Black, Queen)] => queens += 1,
            [(Color::Black, Rook)] => {}
            other => panic!("captured {other:?}"),
        }
    }
    let freq = queens as f64 / TRIALS as f64;
    assert!(fair(queens), "queen frequency {freq}");
}

#[test]
fn the_random_mover_collapses_fairly_over_whole_games() {
    // Every collapse in 200 random games, counted as primary or secondary type (pairs of
    // two different types only).
    let (mut primary, mut total) = (0usize, 0usize);
    for seed in 0..200 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut g = Game::new_random(&mut rng);
        for _ in 0..60 {
            if g.status() != qchess_akl::GameStatus::Ongoing {
                break;
            }
            let view = g.view(g.side_to_move());
            let square = qchess_akl::RandomMover
                .choose_touch(&view, &mut rng)
                .unwrap();
            let piece = *g.position().piece(square).unwrap();
            let out = g.touch(square, &mut rng).unwrap();
            if let (Some(k), true) = (out.collapsed, piece.pair.primary != piece.pair.secondary) {
                total += 1;
                primary += usize::from(k == piece.pair.primary);
            }
            if let qchess_akl::TouchResult::MustMove(moves) = out.result {
                let m = qchess_akl::RandomMover
                    .choose_move(&moves, &mut rng)
                    .unwrap();
                g.play(m, &mut rng).unwrap();
            }
        }
    }
    assert!(total > 2_000, "{total} collapses");
    let freq = primary as f64 / total as f64;
    // sd = 0.5 / sqrt(total) < 0.011; allow four of them.
    assert!(
        (freq - 0.5).abs() < 4.0 * 0.5 / (total as f64).sqrt(),
        "primary frequency {freq} of {total}"
    );
}

#[test]
fn secondary_types_are_a_uniform_permutation() {
    // Over many seeds the secondary type of each start square follows the multiset of the 15
    // standard types: pawn 8/15, knight, bishop, rook 2/15 each, queen 1/15.
    const SEEDS: u64 = 6_000;
    let squares: Vec<Square> = ["a1", "d1", "h2", "d8", "a7"]
        .iter()
        .map(|s| sq(s))
        .collect();
    let mut counts = vec![[0usize; 6]; squares.len()];
    for seed in 0..SEEDS {
        let pos = AklPosition::startpos_seeded(seed);
        for (i, s) in squares.iter().enumerate() {
            let k = pos.piece(*s).unwrap().pair.secondary;
            counts[i][k.index()] += 1;
        }
    }
    let expected = |k: PieceKind| match k {
        Pawn => 8.0 / 15.0,
        Queen => 1.0 / 15.0,
        King => 0.0,
        _ => 2.0 / 15.0,
    };
    for (i, s) in squares.iter().enumerate() {
        for k in PieceKind::ALL {
            let freq = counts[i][k.index()] as f64 / SEEDS as f64;
            let p = expected(k);
            // Four standard deviations of a binomial frequency (at least 0.005).
            let tol = (4.0 * (p * (1.0 - p) / SEEDS as f64).sqrt()).max(0.005);
            assert!(
                (freq - p).abs() < tol,
                "{s}: {k:?} frequency {freq}, expected {p}"
            );
        }
    }
}
