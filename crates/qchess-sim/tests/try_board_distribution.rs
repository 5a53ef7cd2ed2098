//! The budgeted board distribution (issue 10, Deliver 5): `try_board_distribution` answers
//! exactly what `board_distribution` answers when the budget has room, and otherwise refuses
//! with `StateTooLarge` (bytes asked above bytes available) without changing the state.

use crate::states::game_shaped;
use num_complex::Complex;
use qchess_sim::{Controls, Key, Normalization, QuantumState, SimError, State};

/// Eight boards, each in three ancilla sectors with different weights, qubits relabelled
/// by an uncontrolled iSwap: 24 basis states, 8 distinct boards.
fn repeated_boards() -> State<f64> {
    let mut entries = Vec::new();
    for b in 0..8u64 {
        for anc in 0..3u128 {
            let board = 0b1_0000_0000 | b;
            let w = (1 + b as usize * 3 + anc as usize) as f64;
            entries.push((
                Key {
                    board,
                    ancillas: anc,
                },
                Complex::new(w, 0.5 * w),
            ));
        }
    }
    let mut s = State::<f64>::from_amplitudes(entries, Normalization::Renormalize).unwrap();
    s.iswap(8, 20, Controls::NONE).unwrap();
    s
}

#[test]
fn with_room_the_budgeted_answer_is_the_unbudgeted_one() {
    let mut repeated = false;
    let states = (0..40).map(game_shaped).chain([repeated_boards()]);
    for (seed, s) in states.enumerate() {
        let all = s.board_distribution(None);
        assert_eq!(s.try_board_distribution(None).unwrap(), all, "seed {seed}");
        assert_eq!(
            QuantumState::try_board_distribution(&s, None).unwrap(),
            all,
            "seed {seed}"
        );
        for k in [0, 1, 3, 10, all.len(), s.len(), s.len() + 5] {
            let want = s.board_distribution(Some(k));
            assert_eq!(want, all[..k.min(all.len())].to_vec());
            assert_eq!(s.try_board_distribution(Some(k)).unwrap(), want, "k {k}");
        }
        // Exactly the answer's bytes is enough: 16 per distinct board.
        let mut tight = s.clone();
        tight.set_memory_budget(s.bytes() + 16 * all.len());
        assert_eq!(tight.try_board_distribution(None).unwrap(), all);
        repeated |= all.len() < s.len();
    }
    // Some seeds have a board in several ancilla sectors (the distinct count is smaller).
    assert!(repeated);
}

#[test]
fn beyond_the_budget_it_is_state_too_large_and_nothing_changes() {
    let states = (0..40).map(game_shaped).chain([repeated_boards()]);
    let mut checked = 0;
    for (seed, mut s) in states.enumerate() {
        let all = s.board_distribution(None);
        if all.len() <= 4 {
            continue;
        }
        checked += 1;
        let entries: Vec<_> = s.entries().collect();
        // Room for what the state holds and three boards.
        let budget = s.bytes() + 3 * 16;
        s.set_memory_budget(budget);
        let bytes = s.bytes();
        match s.try_board_distribution(None) {
            Err(SimError::StateTooLarge { asked, available }) => {
                assert_eq!(asked, 16 * all.len());
                assert_eq!(available, 48);
                assert!(asked > available);
            }
            other => panic!("seed {seed}: expected StateTooLarge, got {other:?}"),
        }
        match s.try_board_distribution(Some(4)) {
            Err(SimError::StateTooLarge { asked, available }) => {
                assert_eq!((asked, available), (64, 48));
            }
            other => panic!("seed {seed}: expected StateTooLarge, got {other:?}"),
        }
        // The trait's entry point refuses too (the local state counts exactly).
        assert!(matches!(
            QuantumState::try_board_distribution(&s, None),
            Err(SimError::StateTooLarge { .. })
        ));
        // A bounded answer that fits is still given.
        assert_eq!(
            s.try_board_distribution(Some(3)).unwrap(),
            all[..3].to_vec()
        );
        assert_eq!(s.entries().collect::<Vec<_>>(), entries);
        assert_eq!(s.bytes(), bytes);
        assert_eq!(s.board_distribution(None), all);
    }
    assert!(checked > 5, "{checked} states checked");
}
