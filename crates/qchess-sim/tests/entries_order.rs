//! `State::entries` lists every stored basis state once, in canonical order (ancillas, then
//! logical board key), with its amplitude, whether or not an uncontrolled iSwap relabelled
//! the qubits (then it sorts one sector's logical keys at a time, else it reads in place).

use crate::states::game_shaped_with;
use qchess_sim::State;

fn check(s: &State<f64>) {
    let listed: Vec<_> = s.entries().collect();
    assert_eq!(listed.len(), s.len());
    for w in listed.windows(2) {
        assert!(
            (w[0].0.ancillas, w[0].0.board) < (w[1].0.ancillas, w[1].0.board),
            "{w:?}"
        );
    }
    for (k, a) in &listed {
        assert_eq!(s.amplitude(*k), *a);
        assert!(a.norm_sqr() > 0.0);
    }
    let norm: f64 = listed.iter().map(|(_, a)| a.norm_sqr()).sum();
    assert!((norm - s.norm_sqr()).abs() < 1e-12);
}

#[test]
fn entries_are_canonical_with_and_without_relabelled_qubits() {
    let (mut relabelled, mut in_place) = (0, 0);
    for seed in 0..30u64 {
        let (s, swapped) = game_shaped_with(seed, seed % 2 == 0);
        check(&s);
        if swapped {
            relabelled += 1;
        } else {
            in_place += 1;
        }
    }
    assert!(relabelled > 3 && in_place > 3, "{relabelled} {in_place}");
}
