//! Legal-move generation within the memory budget (issue 10, Deliver 5): the fallback that
//! simulates a candidate on a copy of the state asks the budget for the copy, and running
//! out is `StateTooLarge`, not an allocation beyond the budget; the game is unchanged.

use qchess_cantwell::{Game, GameError};
use rand::SeedableRng;

fn split_game() -> Game {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut g = Game::new();
    for mv in ["g1^f3h3", "b8^a6c6", "b1^a3c3", "g8^f6h6", "e2e4", "e7e5"] {
        g.apply(mv, &mut rng).unwrap();
    }
    g
}

#[test]
fn legal_moves_beyond_the_budget_are_an_error_that_changes_nothing() {
    let mut g = split_game();
    let want = g.legal_moves_reference();
    assert_eq!(g.try_legal_moves().unwrap(), want);
    let before_pos = g.position();
    let before_hist = g.history_notation();
    // Room for what the game holds and a little more, not for a copy of the state: close
    // to the budget the candidates are simulated on copies, and the first copy is refused.
    let held = g.state().bytes() + 256;
    g.set_memory_budget(held);
    match g.try_legal_moves() {
        Err(e @ GameError::StateTooLarge { asked, available }) => {
            assert!(asked > available, "{asked} <= {available}");
            assert_eq!(e.kind(), "state_too_large");
        }
        other => panic!("expected StateTooLarge, got {other:?}"),
    }
    assert_eq!(g.position(), before_pos);
    assert_eq!(g.history_notation(), before_hist);
    assert!(g.state().bytes() <= held);
    // The budgeted reference for one candidate says the same.
    let c = g.classify("f3g5").unwrap();
    assert!(matches!(
        g.try_changes_state_reference(&c),
        Err(GameError::StateTooLarge { .. })
    ));
    // With the budget back, the same list as the reference.
    g.set_memory_budget(usize::MAX);
    assert_eq!(g.try_legal_moves().unwrap(), want);
    assert_eq!(g.legal_moves(), want);
}
