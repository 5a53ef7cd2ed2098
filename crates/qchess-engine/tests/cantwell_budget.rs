//! Issue 10, Deliver 5: the engine's Cantwell search counts its copies against the game's
//! memory budget. The copy of the game the search plays on, and the copies the rules
//! simulate candidates on, are asked of the budget first; when one does not fit the search
//! answers `EngineError::StateTooLarge` (bytes asked above bytes available), never a copy
//! beyond the budget, and the caller's game is unchanged.

use qchess_cantwell::Game;
use qchess_engine::{
    CantwellNode, Engine, EngineError, EngineOptions, Limits, SearchNode, Searchable,
};
use rand::SeedableRng;

fn split_game() -> Game {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut g = Game::new();
    for mv in ["g1^f3h3", "b8^a6c6", "b1^a3c3", "g8^f6h6", "e2e4", "e7e5"] {
        g.apply(mv, &mut rng).unwrap();
    }
    g
}

/// Sets the game's budget so that its state has `room` bytes left beyond what it holds.
fn leave_room(g: &mut Game, room: usize) {
    g.set_memory_budget(usize::MAX);
    let held = usize::MAX - g.state().memory_budget();
    g.set_memory_budget(held + g.state().bytes() + room);
}

fn search(g: &Game) -> Result<qchess_engine::SearchResult<String>, EngineError> {
    let mut engine = Engine::new(EngineOptions {
        seed: 1,
        ..EngineOptions::default()
    });
    engine.search(g, &Limits::depth(2))
}

#[test]
fn a_search_beyond_the_budget_is_state_too_large_and_the_game_is_unchanged() {
    let mut g = split_game();
    let free = search(&g).unwrap();
    assert!(g.legal_moves().contains(&free.best));
    let before = g.position();
    let history = g.history_notation();
    // No room for the search's copy of the game, then room for the copy but not for the
    // copies its legal-move decision simulates candidates on.
    let copy = g.state().state_bytes();
    for room in [64, copy + 2048] {
        leave_room(&mut g, room);
        match search(&g) {
            Err(EngineError::StateTooLarge { asked, available }) => {
                assert!(asked > available, "room {room}: {asked} <= {available}");
            }
            other => panic!("room {room}: expected StateTooLarge, got {other:?}"),
        }
        assert_eq!(g.position(), before);
        assert_eq!(g.history_notation(), history);
    }
    // A budget that binds nowhere gives the same answer as no budget at all.
    leave_room(&mut g, 64 << 20);
    let bounded = search(&g).unwrap();
    assert_eq!((bounded.best, bounded.score), (free.best, free.score));
}

/// The copy the search undoes to find the earlier positions (repetitions) is made within
/// the budget: with room for the search's own copy but not for that one, the root node's
/// `earlier_keys` is `None` with `StateTooLarge` noted (the node unchanged) and the search
/// answers `StateTooLarge`; with room, the keys are those of the game's own undo.
#[test]
fn the_earlier_positions_copy_is_within_the_budget() {
    let mut g = split_game();
    let mut want = Vec::new();
    let mut undone = g.clone();
    while want.len() < 16 && undone.undo().is_ok() {
        want.push(CantwellNode::new(undone.clone()).key());
    }
    assert_eq!(want.len(), 6);
    leave_room(&mut g, 64 << 20);
    let mut node = g.search_root(0).unwrap();
    assert_eq!(node.earlier_keys(), Some(want));
    assert!(node.take_error().is_none());
    // Room for the root copy (state and records, and a little for the copy's bookkeeping:
    // its sector structs) but not for a second one beside it.
    let records = g.memory_budget() - g.state().memory_budget();
    let room = g.state().state_bytes() + records + 256;
    leave_room(&mut g, room);
    let mut node = g.search_root(0).unwrap();
    let before = node.game().position();
    assert_eq!(node.earlier_keys(), None);
    match node.take_error() {
        Some(EngineError::StateTooLarge { asked, available }) => assert!(asked > available),
        other => panic!("expected StateTooLarge, got {other:?}"),
    }
    assert_eq!(node.game().position(), before);
    assert_eq!(node.game().history_notation(), g.history_notation());
    assert!(matches!(search(&g), Err(EngineError::StateTooLarge { .. })));
}
