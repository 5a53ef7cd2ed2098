//! The game runs unchanged on another simulator backend: the same moves on `State<f32>` give
//! the `f64` game's probabilities (to f32 precision), measurements, undo and replay included. (Legal-move lists
//! are not compared: Definition 2's tolerances are set for f64 rounding.)

use qchess_cantwell::Game;
use qchess_sim::State;
use rand::SeedableRng;

#[test]
fn an_f32_game_follows_the_f64_game() {
    let moves = [
        "b1^a3c3", "g8^f6h6", "e2e4", "d7d5", "e4d5", "f6d5", "c3d5", "h6g4", "a3b5", "g4e5",
        "g1^f3h3", "b8^a6c6",
    ];
    let mut rng64 = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut rng32 = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut g64 = Game::new();
    let mut g32 = Game::<State<f32>>::new_backend();
    for mv in moves {
        let a = g64.apply(mv, &mut rng64).map(|r| r.notation);
        let b = g32.apply(mv, &mut rng32).map(|r| r.notation);
        assert_eq!(a, b, "move {mv}");
        for (p, q) in g64.probabilities().iter().zip(g32.probabilities()) {
            assert!((p - q).abs() < 1e-5, "{mv}: {p} vs {q}");
        }
        assert_eq!(g64.state_size(), g32.state_size(), "{mv}");
    }
    assert!(g64.state_size() > 1);
    // Undo and replay work through the trait as well.
    let record = g32.history_notation();
    let replayed =
        Game::<State<f32>>::replay_backend(&g32.start_position(), g32.options(), &record).unwrap();
    assert_eq!(replayed.state().entries().count(), g32.state_size());
    while g32.undo().is_ok() {}
    assert_eq!(g32.state_size(), 1);
}
