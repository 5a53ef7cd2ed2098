//! The undo records in the budgeted game copy (issue 10, Deliver 5): `Game::try_clone` copies
//! each move's undo record with fallible allocations (`Journal::try_clone`: a measurement's
//! removed entries, a whole-state copy on backends without undo records), and the copy takes
//! its moves back exactly as `Clone::clone` of the game does.

use qchess_cantwell::Game;
use qchess_sim::{Exact, QuantumState, State};
use rand::SeedableRng;

/// A knight split, then its half on f3 takes e5 (the attacker's presence is measured, m1:
/// the h3 half is removed and kept in the undo record), then a second split.
const MOVES: [&str; 5] = ["g1^f3h3", "e7e5", "f3e5.m1", "b8^a6c6", "b1^a3c3"];

fn played<S: QuantumState>() -> Game<S> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let mut g = Game::<S>::new_backend();
    for mv in MOVES {
        g.apply(mv, &mut rng)
            .unwrap_or_else(|e| panic!("{mv}: {e}"));
    }
    g
}

/// `try_clone` and `clone` of `g` take back every move alike: the same distribution and
/// position after each undo, down to the start; the original is untouched.
fn undo_alike<S: QuantumState>(g: &Game<S>) {
    let before = g.distribution(None);
    let mut copy = g.try_clone().unwrap();
    let mut cloned = g.clone();
    assert_eq!(copy.undo_bytes(), cloned.undo_bytes());
    assert_eq!(copy.history(), cloned.history());
    for i in 0..MOVES.len() {
        let (a, b) = (copy.undo().unwrap(), cloned.undo().unwrap());
        assert_eq!(a, b, "undo {i}");
        assert_eq!(
            copy.distribution(None),
            cloned.distribution(None),
            "undo {i}"
        );
        assert_eq!(copy.state_size(), cloned.state_size(), "undo {i}");
        assert_eq!(copy.position(), cloned.position(), "undo {i}");
        assert_eq!(copy.undo_bytes(), cloned.undo_bytes(), "undo {i}");
    }
    assert!(copy.undo().is_err() && cloned.undo().is_err());
    assert_eq!(copy.state_size(), 1);
    // Back at the start (undo restores amplitudes within rounding, both copies alike).
    assert_eq!(copy.fen(), Game::<S>::new_backend().fen());
    assert_eq!(g.distribution(None), before);
    assert_eq!(g.history().len(), MOVES.len());
}

#[test]
fn try_clone_copies_a_measurements_removed_entries_and_undoes_as_clone() {
    let g = played::<State>();
    assert!(g.state().keeps_undo_records());
    assert_eq!(g.history()[2].measured, Some(true));
    // The measurement's record holds the removed entries (the h3 half).
    let mut before_measure = g.clone();
    before_measure.undo().unwrap();
    before_measure.undo().unwrap();
    let measure_record = {
        let mut m = before_measure.clone();
        let held = m.undo_bytes();
        m.undo().unwrap();
        held - m.undo_bytes()
    };
    assert!(measure_record >= 24, "{measure_record}");
    undo_alike(&g);
}

#[test]
fn try_clone_copies_whole_state_records_and_undoes_as_clone() {
    // Exact amplitudes keep whole-state copies as their undo records.
    let g = played::<State<Exact>>();
    assert!(!g.state().keeps_undo_records());
    undo_alike(&g);
}
