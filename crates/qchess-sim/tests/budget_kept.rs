//! A state keeps the memory budget it was given through the gates that rebuild it (the
//! capture and projection paths of `controlled.rs`): before, they measured a new default
//! budget, dropping a budget set by the caller (and re-reading `/proc` on every such gate).

use qchess_sim::{Controls, State};

#[test]
fn rebuilding_gates_keep_the_states_own_budget() {
    let budget = 123_456_789;
    let mut s = State::<f64>::classical(0b101);
    s.set_memory_budget(budget);
    s.sqrt_iswap(0, 1, Controls::NONE).unwrap();
    assert_eq!(
        s.capture_where(
            2,
            Controls {
                zeros: 0,
                ones: 0b001
            }
        )
        .unwrap(),
        0
    );
    assert_eq!(s.memory_budget(), budget);
    s.iswap_where_ancillas_always(0, 1, 1).unwrap();
    assert_eq!(s.memory_budget(), budget);
    let p = s.project_boards(&|b| b & 0b100 != 0).unwrap();
    assert!((p - 0.5).abs() < 1e-15, "{p}");
    assert_eq!(s.memory_budget(), budget);
    assert_eq!(s.len(), 1);
}
