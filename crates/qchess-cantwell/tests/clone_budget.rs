//! The budgeted game copy and start position (issue 10, Deliver 5): `Game::try_clone` and
//! `Game::try_start_position` give the unbudgeted answers when the budget has room, and
//! otherwise `StateTooLarge` (bytes asked above bytes available) with the game unchanged.

use crate::common;
use qchess_cantwell::{Game, GameError};

use common::random_game;
use rand::{Rng, SeedableRng};

fn games() -> Vec<Game> {
    let games: Vec<Game> = (0..8).filter_map(random_game).collect();
    assert!(games.len() >= 3, "{} games", games.len());
    games
}

/// Sets the game's budget so that its state has exactly `room` bytes left.
fn leave_room(g: &mut Game, room: usize) {
    g.set_memory_budget(usize::MAX);
    let held = usize::MAX - g.state().memory_budget();
    g.set_memory_budget(held + g.state().bytes() + room);
    assert_eq!(g.state().memory_budget() - g.state().bytes(), room);
}

fn assert_too_large<T: std::fmt::Debug>(r: Result<T, GameError>) {
    match r {
        Err(e @ GameError::StateTooLarge { asked, available }) => {
            assert_eq!(e.kind(), "state_too_large");
            assert!(asked > available, "{asked} <= {available}");
        }
        other => panic!("expected StateTooLarge, got {other:?}"),
    }
}

/// Plays `n` random legal moves on `g` with `rng`; the notation of each.
fn play_on(g: &mut Game, rng: &mut rand_chacha::ChaCha8Rng, n: usize) -> Vec<String> {
    let mut played = Vec::new();
    for _ in 0..n {
        let moves = g.legal_moves();
        if moves.is_empty() {
            break;
        }
        let mv = moves[rng.random_range(0..moves.len())].clone();
        g.apply(&mv, rng).unwrap();
        played.push(mv);
    }
    played
}

#[test]
fn with_room_try_clone_is_clone() {
    for (i, g) in games().into_iter().enumerate() {
        let mut copy = g.try_clone().unwrap();
        let mut cloned = g.clone();
        assert_eq!(copy.distribution(None), cloned.distribution(None));
        assert_eq!(copy.position(), cloned.position());
        assert_eq!(copy.history(), cloned.history());
        assert_eq!(copy.state_size(), cloned.state_size());
        assert_eq!(copy.undo_bytes(), cloned.undo_bytes());
        assert_eq!(copy.memory_budget(), cloned.memory_budget());
        assert_eq!(copy.state().memory_budget(), cloned.state().memory_budget());
        assert_eq!(copy.start_position(), cloned.start_position());
        // Both play on identically with the same seeded generator, and both undo alike.
        let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(100 + i as u64);
        let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(100 + i as u64);
        assert_eq!(
            play_on(&mut copy, &mut r1, 6),
            play_on(&mut cloned, &mut r2, 6)
        );
        assert_eq!(copy.position(), cloned.position());
        assert_eq!(copy.history(), cloned.history());
        for _ in 0..4 {
            assert_eq!(copy.undo().is_ok(), cloned.undo().is_ok());
            assert_eq!(copy.position(), cloned.position());
        }
        // The original is untouched by the copies' moves.
        assert_eq!(g.try_clone().unwrap().position(), g.position());
    }
}

#[test]
fn beyond_the_budget_try_clone_is_state_too_large_and_nothing_changes() {
    for mut g in games() {
        let pos = g.position();
        let hist = g.history_notation();
        let size = g.state_size();
        let undo = g.undo_bytes();
        // Room for a few entries, not for a copy of the state.
        leave_room(&mut g, 64);
        let bytes = g.state().bytes();
        let budget = g.memory_budget();
        assert_too_large(g.try_clone());
        assert_eq!(g.state().bytes(), bytes);
        assert_eq!(g.memory_budget(), budget);
        assert_eq!(g.state_size(), size);
        assert_eq!(g.position(), pos);
        assert_eq!(g.history_notation(), hist);
        assert_eq!(g.undo_bytes(), undo);
        // With the budget back, the copy is made.
        g.set_memory_budget(usize::MAX);
        assert_eq!(g.try_clone().unwrap().position(), pos);
    }
}

#[test]
fn try_start_position_within_the_budget() {
    for g in games() {
        // A game that starts from a position of many basis states.
        let start = g.position();
        let mut h = Game::from_position(&start).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        play_on(&mut h, &mut rng, 2);
        assert_eq!(h.try_start_position().unwrap(), h.start_position());
        assert_eq!(h.try_start_position().unwrap(), start);
        let pos = h.position();
        let hist = h.history_notation();
        leave_room(&mut h, 32);
        let bytes = h.state().bytes();
        assert_too_large(h.try_start_position());
        assert_eq!(h.state().bytes(), bytes);
        assert_eq!(h.position(), pos);
        assert_eq!(h.history_notation(), hist);
        assert_eq!(h.start_position(), start);
        h.set_memory_budget(usize::MAX);
        assert_eq!(h.try_start_position().unwrap(), start);
    }
}
