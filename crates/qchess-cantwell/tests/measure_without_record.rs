//! A measuring move whose undo record would not fit the undo budget drops the entries its
//! projection removes instead of writing them out (issue 10: a measuring move within 1.5x
//! of its bare gate with the budget full). The state, marginals and letters after it must
//! be bit for bit those of the move that keeps its record, and undo (by replay) must give
//! the position before it back.

use crate::common::{OPENING, entry_bits as entries, played, played_from};
use qchess_board::Square;
use qchess_cantwell::Game;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

// With the opening (`common::OPENING`: the queen's knight split onto a3 and c3) a pawn step
// a2a3 is an excluded step (M1 = a3 empty, probability 1/2).

/// The two games are the same bit for bit: entries, marginals, letters and history.
fn assert_same(a: &Game, b: &Game, what: &str) {
    assert_eq!(entries(a), entries(b), "{what}");
    assert_eq!(
        a.probabilities().map(f64::to_bits),
        b.probabilities().map(f64::to_bits),
        "{what}"
    );
    assert_eq!(a.fen(), b.fen(), "{what}");
    assert_eq!(a.history_notation(), b.history_notation(), "{what}");
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

#[test]
fn the_opening_makes_a2a3_an_excluded_step() {
    let game = played(None, &OPENING);
    assert!((game.probability(sq("a3")) - 0.5).abs() < 1e-15);
    assert_eq!(game.probability(sq("a2")), 1.0);
    let c = game.classify("a2a3").unwrap();
    assert_eq!(c.variant.name(), "EXCLUDED", "{c:?}");
}

#[test]
fn a_measuring_step_without_room_equals_the_recorded_one_bit_for_bit() {
    for mv in ["a2a3.m1", "a2a3.m0"] {
        let mut moves = OPENING.to_vec();
        moves.push(mv);
        let recorded = played(None, &moves);
        let dropped = played(Some(0), &moves);
        assert_eq!(recorded.state_size(), 8, "{mv}");
        assert_same(&recorded, &dropped, mv);
        // The recorded game keeps what the projection removed; the other keeps nothing.
        assert!(
            recorded.undo_bytes() >= 8 * 24,
            "{mv}: {}",
            recorded.undo_bytes()
        );
        assert_eq!(dropped.undo_bytes(), 0, "{mv}");
        // Either outcome moved a marginal: a3 to 0 then a2's pawn onto it, or a3 to 1.
        let a3 = dropped.probability(sq("a3"));
        if mv.ends_with("m1") {
            assert_eq!((a3, dropped.probability(sq("a2"))), (1.0, 0.0));
        } else {
            assert_eq!((a3, dropped.probability(sq("a2"))), (1.0, 1.0));
        }
    }
}

#[test]
fn undo_of_a_step_without_its_record_replays_the_position_before() {
    let before = played(None, &OPENING);
    for mv in ["a2a3.m1", "a2a3.m0"] {
        let mut moves = OPENING.to_vec();
        moves.push(mv);
        let mut game = played(Some(0), &moves);
        game.undo().unwrap();
        assert_same(&game, &before, mv);
        // And the move plays again as before.
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        game.apply(mv, &mut rng).unwrap();
        assert_eq!(entries(&game), entries(&played(None, &moves)));
    }
}

#[test]
fn a_budget_with_room_for_the_record_keeps_it() {
    let mut moves = OPENING.to_vec();
    moves.push("a2a3.m1");
    let recorded = played(None, &moves);
    let need = recorded.undo_bytes();
    // Exactly the bytes the recorded game holds: the record is kept and undone by it.
    let mut game = played(Some(need), &moves);
    assert_eq!(game.undo_bytes(), need);
    assert_eq!(entries(&game), entries(&recorded));
    let before = played(None, &OPENING);
    game.undo().unwrap();
    let close = entries(&game)
        .iter()
        .zip(&entries(&before))
        .all(|(a, b)| a.0 == b.0 && a.1 == b.1);
    assert!(close && game.state_size() == before.state_size());
    assert!(game.state().inner(before.state()).norm() > 1.0 - 1e-12);
}

#[test]
fn a_refused_measuring_step_without_room_changes_nothing() {
    let mut game = played(Some(0), &OPENING);
    let before = entries(&game);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    // A malformed outcome is refused before any projection.
    assert!(game.apply("a2a3.m2", &mut rng).is_err());
    assert_eq!(entries(&game), before);
    assert_eq!(game.history_notation().len(), 4);
}

#[test]
fn a_measuring_step_without_room_needs_no_memory_for_a_record() {
    // A memory budget with room for the state but not for the removed entries beside it
    // (four of 24 bytes): whatever room the undo budget has, the record is not written and
    // the move is played (bit for bit the recorded move); undo then replays the position
    // before.
    let mut moves = OPENING.to_vec();
    moves.push("a2a3.m1");
    let recorded = played(None, &moves);
    let before = played(None, &OPENING);
    for undo_budget in [1 << 20, 0] {
        let mut game = played(Some(undo_budget), &OPENING);
        // The state's budget is the game's less the undo records and the start position.
        let held = game.memory_budget() - game.state().memory_budget();
        game.set_memory_budget(held + game.state().bytes() + 90);
        assert_eq!(game.state().memory_budget(), game.state().bytes() + 90);
        let records = game.undo_bytes();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        game.apply("a2a3.m1", &mut rng).unwrap();
        assert_same(&game, &recorded, "a2a3.m1");
        assert_eq!(game.undo_bytes(), records, "undo budget {undo_budget}");
        game.undo().unwrap();
        assert_same(&game, &before, "undone");
    }
}

#[test]
fn a_move_that_needs_its_record_is_refused_without_memory_for_it() {
    // A capture slide through a path (c1xc5 past c2-c4) may drop its record only with
    // memory for its capture and controlled iSwap beside the state: without it the record
    // is kept, there is no memory for it either, and the move is refused and changes
    // nothing.
    let fen = "4k3/8/8/2n5/8/8/1n6/R3K3 w - - 0 1";
    let mut game = Game::from_fen(fen).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for mv in ["a1^b1c1", "e8d8"] {
        game.apply(mv, &mut rng).unwrap();
    }
    let before = entries(&game);
    let held = game.memory_budget() - game.state().memory_budget();
    game.set_memory_budget(held + game.state().bytes() + 10);
    let err = game.apply("c1xc5.m0", &mut rng).unwrap_err();
    assert!(err.to_string().contains("memory"), "{err}");
    assert_eq!(entries(&game), before);
    assert_eq!(game.history_notation().len(), 2);
}

#[test]
fn a_budget_short_of_the_removed_entries_undoes_by_replay() {
    // Room for a move's record of gate steps but not for the entries the projection removes:
    // the journal without them must not be kept (it would take back only the pawn's step).
    let mut opening = OPENING.to_vec();
    opening.extend(["c3^b5d5", "c6^b4d4", "h3^g5f4", "h6^g4f5"]);
    let start = played(None, &opening);
    assert!((start.probability(sq("a3")) - 0.5).abs() < 1e-12);
    // The entries the pawn's step (onto an empty a3) removes: those with a3 occupied.
    let a3 = 1u64 << sq("a3").index();
    let removed = start
        .state()
        .entries()
        .filter(|(k, _)| k.board & a3 != 0)
        .count();
    assert!(removed * 24 > 600, "{removed}");
    let mut probe = start.try_clone().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let held = probe.undo_bytes();
    probe.apply("h2h3", &mut rng).unwrap();
    let gate_record = probe.undo_bytes() - held;
    let mut moves = opening.clone();
    moves.push("a2a3.m1");
    let mut game = start.try_clone().unwrap();
    game.set_snapshot_budget(game.undo_bytes() + gate_record + 300);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let undo_before = game.undo_bytes();
    game.apply("a2a3.m1", &mut rng).unwrap();
    assert_eq!(game.undo_bytes(), undo_before, "no record kept");
    assert_eq!(entries(&game), entries(&played(None, &moves)));
    game.undo().unwrap();
    assert_eq!(entries(&game), entries(&start));
    // With room for the removed entries the record is kept.
    let mut game = start.try_clone().unwrap();
    game.set_snapshot_budget(game.undo_bytes() + gate_record + removed * 24 + 1000);
    game.apply("a2a3.m1", &mut rng).unwrap();
    assert!(game.undo_bytes() >= undo_before + removed * 24);
}

/// A white knight split onto a3 and c3; black's pawn on b5, in reach of a3 only.
const CAPTURE_FEN: &str = "4k3/8/8/1p6/8/8/8/1N2K3 w - - 0 1";

#[test]
fn a_capture_without_room_equals_the_recorded_one_bit_for_bit() {
    let start = played_from(CAPTURE_FEN, None, &["b1^a3c3", "e8d8"]);
    assert!((start.probability(sq("a3")) - 0.5).abs() < 1e-15);
    assert_eq!(start.classify("a3xb5").unwrap().variant.name(), "CAPTURE");
    for mv in ["a3xb5.m1", "a3xb5.m0"] {
        let moves = ["b1^a3c3", "e8d8", mv];
        let recorded = played_from(CAPTURE_FEN, None, &moves);
        let dropped = played_from(CAPTURE_FEN, Some(0), &moves);
        assert_same(&recorded, &dropped, mv);
        assert_eq!(dropped.undo_bytes(), 0);
        assert_eq!(dropped.probability(sq("a3")), 0.0, "{mv}");
        // The knight took the pawn (m1), or was on c3 (m0).
        let b5 = dropped.probability(sq("b5"));
        let c3 = dropped.probability(sq("c3"));
        if mv.ends_with("m1") {
            assert_eq!((b5, c3), (1.0, 0.0));
        } else {
            assert_eq!((b5, c3), (1.0, 1.0));
        }
        // Undo by replay gives the position before back, bit for bit.
        let mut game = dropped;
        game.undo().unwrap();
        assert_eq!(entries(&game), entries(&start), "{mv}");
        assert_eq!(game.fen(), start.fen());
    }
}

/// The other moves that measure one square first (`may_drop_projection`): an excluded
/// slide (the rook into a3, held by a knight in half the branches), a capture slide to an
/// adjacent square by a rook in superposition, and a pawn capture by a pawn in
/// superposition (it took a knight on b3 where the knight was). Each outcome played with
/// the undo budget at 0 is bit for bit the move that keeps its record, keeps nothing, and
/// is undone by replay.
#[test]
fn slides_and_pawn_captures_without_room_equal_the_recorded_ones_bit_for_bit() {
    let cases: [(&str, &[&str], &str, &str); 3] = [
        (
            "4k3/8/8/8/8/8/8/RN2K3 w - - 0 1",
            &["b1^a3c3", "e8d8"],
            "a1a3",
            "SLIDE:EXCLUDED",
        ),
        (
            "4k3/8/8/8/8/8/1n6/R3K3 w - - 0 1",
            &["a1^b1c1", "e8d8"],
            "b1xb2",
            "SLIDE:CAPTURE",
        ),
        (
            "4k3/8/8/8/2pn4/8/P7/4K3 b - - 0 1",
            &["d4^b3b5", "a2xb3", "e8d8"],
            "b3xc4",
            "PAWN_CAPTURE:CAPTURE",
        ),
    ];
    for (fen, setup, mv, kind) in cases {
        both_outcomes_without_room_equal_the_recorded_ones(fen, setup, mv, kind);
    }
}

/// `mv` (of type and variant `kind`) after `setup` from `fen`: each outcome played with the
/// undo budget at 0 is bit for bit the move that keeps its record, keeps nothing, and is
/// undone by replay.
fn both_outcomes_without_room_equal_the_recorded_ones(
    fen: &str,
    setup: &[&str],
    mv: &str,
    kind: &str,
) {
    let start = played_from(fen, None, setup);
    let c = start.classify(mv).unwrap();
    assert_eq!(
        format!("{}:{}", c.move_type.name(), c.variant.name()),
        kind,
        "{mv}"
    );
    for outcome in [".m1", ".m0"] {
        let what = format!("{mv}{outcome}");
        let mut moves = setup.to_vec();
        moves.push(&what);
        let recorded = played_from(fen, None, &moves);
        let dropped = played_from(fen, Some(0), &moves);
        assert_same(&recorded, &dropped, &what);
        assert!(recorded.undo_bytes() > 0, "{what}");
        // Nothing kept: the move's projection dropped its removed entries.
        assert_eq!(dropped.undo_bytes(), 0, "{what}");
        let mut game = dropped;
        game.undo().unwrap();
        assert_eq!(entries(&game), entries(&start), "{what}");
        assert_eq!(game.fen(), start.fen(), "{what}");
    }
}

#[test]
fn a_capture_jump_drops_its_record_to_leave_the_capture_its_memory() {
    // The knight on a3 or c3 takes on b5 (M1 = a3 occupied, then the capture and the jump).
    // The memory budget has room for the capture's arrays (24 bytes an entry) and a few
    // bytes more: the record is dropped so that the capture fits, and the move is played as
    // the recorded one is.
    let fen = "4k3/8/8/1p6/8/8/8/1N2K3 w - - 0 1";
    let moves = ["b1^a3c3", "e8d8", "a3xb5.m1"];
    let recorded = played_from(fen, None, &moves);
    let mut game = played_from(fen, None, &moves[..2]);
    let held = game.memory_budget() - game.state().memory_budget();
    let len = game.state_size();
    game.set_memory_budget(held + game.state().bytes() + len * 24 + 10);
    let records = game.undo_bytes();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    game.apply(moves[2], &mut rng).unwrap();
    assert_same(&game, &recorded, moves[2]);
    assert_eq!(game.undo_bytes(), records);
    game.undo().unwrap();
    assert_same(&game, &played_from(fen, None, &moves[..2]), "undone");
}

/// Castling (eq. 36b: M1 = the king's and rook's targets empty, two squares) and a capture
/// slide through a path (eq. 23b: a set no one square describes) drop their projections'
/// records too. On the king side a knight split onto g1; on the queen side onto d1 (the
/// iSwaps then controlled on b1); the rook on a1 or c1 takes on c5 past c2-c4, clear
/// everywhere, or past a knight split onto c4, and on a knight split onto c5. Each outcome played with the undo budget at
/// 0 is bit for bit the move that keeps its record, keeps nothing, and is undone by replay.
#[test]
fn castling_and_capture_slides_through_a_path_without_room_equal_the_recorded_ones() {
    let cases: [(&str, &[&str], &str, &str); 5] = [
        (
            "4k3/8/8/8/8/7N/8/4K2R w K - 0 1",
            &["h3^g1f4", "e8d8"],
            "e1g1",
            "KS_CASTLE:BASIC",
        ),
        (
            "4k3/8/8/8/8/4N3/8/R3K3 w Q - 0 1",
            &["e3^d1c2", "e8d8"],
            "e1c1",
            "QS_CASTLE:BASIC",
        ),
        (
            "4k3/8/8/2n5/8/8/1n6/R3K3 w - - 0 1",
            &["a1^b1c1", "e8d8"],
            "c1xc5",
            "SLIDE:CAPTURE",
        ),
        (
            "4k3/8/8/2n5/8/8/1n6/R3K3 w - - 0 1",
            &["a1^b1c1", "b2^c4d1"],
            "c1xc5",
            "SLIDE:CAPTURE",
        ),
        // Eq. 23b in general: the source (c1), the path (c4) and the target (c5, a knight
        // split from b7) each occupied half the time; outcome 0 is a projection onto a
        // union of patterns, scaled by the probability read before it.
        (
            "4k3/1n6/8/8/8/8/1n6/R3K3 w - - 0 1",
            &["a1^b1c1", "b7^c5d6", "e1f1", "b2^c4d1"],
            "c1xc5",
            "SLIDE:CAPTURE",
        ),
    ];
    for (fen, setup, mv, kind) in cases {
        both_outcomes_without_room_equal_the_recorded_ones(fen, setup, mv, kind);
    }
}

#[test]
fn castling_and_a_capture_slide_drop_their_records_to_leave_their_gates_the_memory() {
    // The memory budget has room for the later steps (`may_drop_projection`: 24 bytes an
    // entry and 4 MiB of page rounding per allocating step) but not for a record beside
    // them: the record is dropped, the move played as the recorded one and undone by replay.
    let cases: [(&str, &[&str], &str, usize); 2] = [
        (
            "4k3/8/8/8/8/4N3/8/R3K3 w Q - 0 1",
            &["e3^d1c2", "e8d8"],
            "e1c1.m1",
            2,
        ),
        (
            "4k3/8/8/2n5/8/8/1n6/R3K3 w - - 0 1",
            &["a1^b1c1", "b2^c4d1"],
            "c1xc5.m0",
            2,
        ),
    ];
    for (fen, setup, mv, steps) in cases {
        let mut moves = setup.to_vec();
        moves.push(mv);
        let recorded = played_from(fen, None, &moves);
        let start = played_from(fen, None, setup);
        let mut game = played_from(fen, None, setup);
        let held = game.memory_budget() - game.state().memory_budget();
        let later = game.state_size() * 24 * steps + (4 << 20) * steps;
        game.set_memory_budget(held + game.state().bytes() + later + 10);
        let records = game.undo_bytes();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        game.apply(mv, &mut rng).unwrap();
        assert_same(&game, &recorded, mv);
        assert_eq!(game.undo_bytes(), records, "{mv}");
        game.undo().unwrap();
        assert_same(&game, &start, "undone");
    }
}

/// A projection keeps its record whatever share of the state it removes (a search on
/// small states undoes from records, not by replay). The knight is on d2 in one branch of
/// three (amplitude 1/sqrt 2) and on a4 or b5 in the two others: the king's excluded jump
/// into d2 removes one entry when it goes (`.m1`) and two when it is blocked (`.m0`); both
/// keep their records, and undo gives the position back.
#[test]
fn a_small_state_keeps_a_record_of_any_share() {
    const FEN: &str = "4k3/8/8/8/8/8/8/1N2K3 w - - 0 1";
    let start = ["b1^c3d2", "e8d8", "c3^a4b5", "d8e8"];
    let before = played_from(FEN, None, &start);
    assert_eq!(before.state_size(), 3);
    assert!((before.probability(sq("d2")) - 0.5).abs() < 1e-15);
    for (mv, left) in [("e1d2.m1", 2), ("e1d2.m0", 1)] {
        let mut moves = start.to_vec();
        moves.push(mv);
        let mut game = played_from(FEN, None, &moves);
        assert_eq!(game.state_size(), left, "{mv}");
        let record = game.undo_bytes() - before.undo_bytes();
        assert!(record >= 24 * (3 - left), "{mv}: {record}");
        assert_same(&game, &played_from(FEN, Some(0), &moves), mv);
        game.undo().unwrap();
        assert!(close(&entries(&game), &entries(&before)), "{mv}");
    }
}

/// The same keys with amplitudes within 1e-12 (an undo by record rescales the survivors).
fn close(a: &[(u64, u128, u64, u64)], b: &[(u64, u128, u64, u64)]) -> bool {
    let near = |x: u64, y: u64| (f64::from_bits(x) - f64::from_bits(y)).abs() < 1e-12;
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.0 == y.0 && x.1 == y.1 && near(x.2, y.2) && near(x.3, y.3))
}

/// A projection whose record holds more than half the state's entries keeps it: its
/// survivors are written out and the state's old arrays hold the removed entries (or,
/// where at most a third survives, are kept whole as the record; issue 10's peak target,
/// 1.5x the state), so the move leaves the state and its record within 1.5x the state's
/// bytes before, and undo takes it back from the record. Queen-side castling in
/// the growth position of 1.49e6 entries measures c1 and d1 empty, which removes 5/9 of the
/// entries (`.m1`); a king's excluded jump into d2, held by a knight with probability 1/2,
/// removes half of them. Both are replayed bit for bit with no undo budget (no record).
#[test]
fn a_large_state_keeps_a_record_of_more_than_half_and_undoes_from_it() {
    use qchess_cantwell::growth::{GROWTH_CASTLE_FEN, growth_position_from};
    for (mv, more_than_half) in [("e1c1.m1", true), ("e1d2.m1", false)] {
        let (mut game, setup) =
            growth_position_from::<qchess_sim::State<f64>>(GROWTH_CASTLE_FEN, 1_000_000).unwrap();
        let n = game.state_size();
        assert_eq!(n, 1_492_992);
        game.set_snapshot_budget(usize::MAX);
        let before = entries(&game);
        let held = game.undo_bytes();
        let bytes_before = game.state().bytes();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let record = game.apply(mv, &mut rng).unwrap();
        let removed = n - game.state_size();
        assert_eq!(removed * 2 > n, more_than_half, "{mv}: {removed} of {n}");
        let bytes = game.undo_bytes() - held;
        // The record is the removed entries, with no room above them, or (at most a third
        // kept) the state's old arrays whole.
        let whole = 3 * (n - removed) <= n;
        let kept = if whole { n } else { removed };
        assert!(
            bytes >= kept * 24 && bytes <= kept * 24 + 4096,
            "{mv}: a record of {bytes} bytes"
        );
        assert!(
            2 * (game.state().bytes() + bytes) <= 3 * bytes_before,
            "{mv}: {} + {bytes} of {bytes_before}",
            game.state().bytes()
        );
        assert!(
            record.probability.is_some_and(|p| p > 0.0 && p < 1.0),
            "{mv}"
        );
        // The state after is the one a replay without any record reaches, bit for bit.
        let mut moves: Vec<&str> = setup.iter().map(String::as_str).collect();
        moves.push(mv);
        let replayed = played_from(GROWTH_CASTLE_FEN, Some(0), &moves);
        assert_eq!(entries(&game), entries(&replayed), "{mv}");
        game.undo().unwrap();
        assert_eq!(game.state_size(), n, "{mv}");
        // From the record: within rounding of the rescaling, or, from the old arrays
        // whole, bit for bit.
        assert!(close(&entries(&game), &before), "{mv}");
        if whole {
            assert!(entries(&game) == before, "{mv}");
        }
    }
}
