//! The budgeted read-outs (issue 10, Deliver 5): `Game::try_distribution`,
//! `Game::try_distribution_top`, `Game::try_for_each_board` and `Game::try_position` give the
//! unbudgeted answers when the budget has room, and otherwise `StateTooLarge` (bytes asked
//! above bytes available) with the game unchanged (the local state's board pass streams and
//! never refuses).

use crate::common;
use qchess_cantwell::{Game, GameError};

use common::random_game;

fn games() -> Vec<Game> {
    let games: Vec<Game> = (0..12).filter_map(random_game).collect();
    assert!(games.len() >= 4, "{} games", games.len());
    assert!(games.iter().any(|g| g.state().ancilla_count() > 0));
    games
}

/// Sets the game's budget so that its state has exactly `room` bytes left.
fn leave_room(g: &mut Game, room: usize) {
    g.set_memory_budget(usize::MAX);
    let held = usize::MAX - g.state().memory_budget();
    g.set_memory_budget(held + g.state().bytes() + room);
    assert_eq!(
        g.state().memory_budget() - g.state().bytes(),
        room,
        "the state's share of the budget"
    );
}

fn assert_too_large<T: std::fmt::Debug>(r: Result<T, GameError>, room: usize) {
    match r {
        Err(e @ GameError::StateTooLarge { asked, available }) => {
            assert_eq!(e.kind(), "state_too_large");
            assert_eq!(available, room);
            assert!(asked > available, "{asked} <= {available}");
        }
        other => panic!("expected StateTooLarge, got {other:?}"),
    }
}

#[test]
fn with_room_the_budgeted_read_outs_are_the_unbudgeted_ones() {
    for g in games() {
        let all = g.distribution(None);
        assert_eq!(g.try_distribution(None).unwrap(), all);
        for k in [0, 1, 5, all.len(), all.len() + 3] {
            assert_eq!(
                g.try_distribution(Some(k)).unwrap(),
                g.distribution(Some(k))
            );
        }
        assert_eq!(g.try_position().unwrap(), g.position());
        assert_eq!(g.try_position().unwrap().to_json(), g.position().to_json());
    }
}

#[test]
fn beyond_the_budget_the_read_outs_are_state_too_large_and_nothing_changes() {
    for mut g in games() {
        let dist = g.distribution(None);
        let pos = g.position();
        let hist = g.history_notation();
        let size = g.state_size();
        // Room for two boards: not for the whole distribution nor for the position.
        leave_room(&mut g, 32);
        let bytes = g.state().bytes();
        assert_too_large(g.try_distribution(None), 32);
        assert_too_large(g.try_distribution(Some(3)), 32);
        assert_too_large(g.try_position(), 32);
        // An answer that fits is still given, and it is the unbudgeted one.
        assert_eq!(g.try_distribution(Some(2)).unwrap(), dist[..2].to_vec());
        assert_eq!(g.state().bytes(), bytes);
        assert_eq!(g.state_size(), size);
        assert_eq!(g.distribution(None), dist);
        assert_eq!(g.position(), pos);
        assert_eq!(g.history_notation(), hist);
        // With the budget back, the same answers.
        g.set_memory_budget(usize::MAX);
        assert_eq!(g.try_distribution(None).unwrap(), dist);
        assert_eq!(g.try_position().unwrap(), pos);
    }
}

/// Every board of `g`'s board pass, budgeted or not.
fn boards(g: &Game, budgeted: bool) -> Vec<(u64, f64)> {
    let mut all = Vec::new();
    if budgeted {
        g.try_for_each_board(|b, p| all.push((b, p))).unwrap();
    } else {
        g.for_each_board(|b, p| all.push((b, p)));
    }
    all
}

#[test]
fn with_room_the_budgeted_top_and_board_pass_are_the_unbudgeted_ones() {
    for g in games() {
        let all = g.distribution(None);
        for k in [0, 1, 5, all.len(), all.len() + 3] {
            let top = g.distribution_top(k);
            assert_eq!(g.try_distribution_top(k).unwrap(), top);
            assert_eq!(top.1, all.len());
            assert_eq!(top.0, all[..k.min(all.len())].to_vec());
        }
        let pass = boards(&g, false);
        assert_eq!(boards(&g, true), pass);
        assert_eq!(pass.len(), all.len());
    }
}

#[test]
fn beyond_the_budget_the_top_is_state_too_large_and_nothing_changes() {
    for mut g in games() {
        let dist = g.distribution(None);
        let pass = boards(&g, false);
        let pos = g.position();
        let hist = g.history_notation();
        let size = g.state_size();
        // Room for two boards: not for a top three.
        leave_room(&mut g, 32);
        let bytes = g.state().bytes();
        assert_too_large(g.try_distribution_top(3), 32);
        assert_too_large(g.try_distribution_top(usize::MAX), 32);
        // A top that fits is still given, and it is the unbudgeted one.
        assert_eq!(
            g.try_distribution_top(2).unwrap(),
            (dist[..2].to_vec(), dist.len())
        );
        // The local state's board pass holds nothing state-sized: it is not refused.
        assert_eq!(boards(&g, true), pass);
        assert_eq!(g.state().bytes(), bytes);
        assert_eq!(g.state_size(), size);
        assert_eq!(g.distribution(None), dist);
        assert_eq!(g.position(), pos);
        assert_eq!(g.history_notation(), hist);
        // With the budget back, the same answers.
        g.set_memory_budget(usize::MAX);
        assert_eq!(g.try_distribution_top(3).unwrap(), g.distribution_top(3));
        assert_eq!(g.try_distribution_top(3).unwrap().0, dist[..3].to_vec());
    }
}
