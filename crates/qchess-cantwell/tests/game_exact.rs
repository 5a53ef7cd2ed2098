//! The Cantwell game on exact amplitudes (`Game<State<Exact>>`): random legal games of 200
//! plies (splits, merges, slides, captures with ancillas, measurements) played in f64 and
//! replayed move by move, with the same measurement outcomes forced, on the exact backend:
//! every square's probability agrees to 1e-12 at every step, and undo returns to the start.

use qchess_cantwell::Game;
use qchess_sim::{Exact, Predicate, State};
use rand::SeedableRng;

#[test]
fn exact_games_follow_random_f64_games() {
    let mut captured = false;
    let mut measured = false;
    for seed in [1u64, 2, 3] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut f = Game::new();
        for _ in 0..200 {
            if f.state_size() > 2000 || f.play_random_move(&mut rng).unwrap().is_none() {
                break;
            }
        }
        let record = f.history_notation();
        assert!(
            record.len() >= 20,
            "seed {seed}: only {} plies",
            record.len()
        );
        // Replay: the record carries every measurement outcome (.m0/.m1), so both games take
        // the same branch whatever the draws.
        let mut g = Game::new();
        let mut x = Game::<State<Exact>>::new_backend();
        let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(0);
        for mv in &record {
            let a = g.apply(mv, &mut r1).map(|r| r.notation);
            let b = x.apply(mv, &mut r2).map(|r| r.notation);
            assert_eq!(a, b, "seed {seed} move {mv}");
            measured |= mv.contains(".m");
            for (sq, (p, q)) in g.probabilities().iter().zip(x.probabilities()).enumerate() {
                assert!(
                    (p - q).abs() < 1e-12,
                    "seed {seed} {mv} square {sq}: {p} vs {q}"
                );
            }
            assert_eq!(g.state_size(), x.state_size(), "seed {seed} {mv}");
        }
        captured |= x.state().ancilla_count() > 0;
        // The exact probabilities are exact elements of Q(sqrt2) summing to the piece count.
        let s = x.state();
        let occupied: usize = (0..64u8)
            .filter(|&q| !s.probability_exact(Predicate::One(q)).unwrap().is_zero())
            .count();
        assert!(occupied >= 2);
        while x.undo().is_ok() {}
        assert_eq!(x.state_size(), 1, "seed {seed}");
    }
    assert!(captured, "no game captured");
    assert!(measured, "no game measured");
}
