//! A plain jump played with no undo snapshot skips the game's copy of the state (the jump is
//! an in-place relabelling that surely changes a marginal). The result, and undo by replay,
//! must be bit for bit those of the path that copies.

use crate::common::{OPENING, entry_bits as entries, played};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn jump_without_snapshot_matches_copying_path_bit_for_bit() {
    // f3 (probability 1/2) jumps to the empty g5: the no-copy path with budget 0.
    let mut moves = OPENING.to_vec();
    moves.push("f3g5");
    let copying = played(None, &moves);
    let in_place = played(Some(0), &moves);
    assert_eq!(copying.state_size(), 16);
    assert_eq!(entries(&copying), entries(&in_place));
    assert_eq!(copying.probabilities(), in_place.probabilities());
    assert_eq!(copying.fen(), in_place.fen());
    assert!((in_place.probabilities()[38] - 0.5).abs() < 1e-12); // g5
    assert_eq!(in_place.probabilities()[21], 0.0); // f3 emptied
}

#[test]
fn undo_of_a_jump_without_snapshot_restores_exactly() {
    let before = played(None, &OPENING);
    let mut moves = OPENING.to_vec();
    moves.push("f3g5");
    let mut game = played(Some(0), &moves);
    game.undo().unwrap();
    assert_eq!(entries(&game), entries(&before));
    assert_eq!(game.probabilities(), before.probabilities());
    assert_eq!(game.fen(), before.fen());
    assert_eq!(game.history_notation(), before.history_notation());
}

#[test]
fn refused_jump_without_snapshot_leaves_the_game_unchanged() {
    // A jump to a square of the mover's own colour is illegal: refused before any circuit.
    let mut game = played(Some(0), &OPENING);
    let before = entries(&game);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert!(game.apply("f3d2", &mut rng).is_err());
    assert_eq!(entries(&game), before);
}
