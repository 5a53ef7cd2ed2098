//! `qubit_probabilities_of` (a few marginals in one pass) against the full 64-qubit pass.

use qchess_sim::{Controls, QuantumState, State};

fn game_like_state() -> State<f64> {
    // A split walk: a few pieces in superposition, relabelled qubits (uncontrolled iSwaps
    // permute the bit map), an ancilla sector from a capture.
    let mut s = State::<f64>::classical(0b1001_0011 | (1 << 40));
    s.split(0, 10, 20, Controls::NONE).unwrap();
    s.split(1, 11, 21, Controls::NONE).unwrap();
    s.iswap(4, 30, Controls::NONE).unwrap();
    s.split(7, 17, 27, Controls::NONE).unwrap();
    s.iswap(20, 21, Controls::empty_path(1 << 10)).unwrap();
    s.capture(11).unwrap();
    s.split(40, 41, 42, Controls::NONE).unwrap();
    s
}

#[test]
fn a_few_marginals_match_the_full_pass() {
    for s in [
        game_like_state(),
        // An odd length: the kernel's two lanes of entries leave one over.
        qchess_sim::bench::random_state::<f64>(200_003).unwrap(),
    ] {
        let all = s.qubit_probabilities();
        let qubits: Vec<u8> = vec![0, 10, 20, 21, 11, 30, 41, 63];
        // Every count from one to MARGINALS_OF_MAX (`State::marginals_of` compiles one
        // kernel per count up to four, one for five to eight).
        for len in 1..=qubits.len() {
            let few = s.qubit_probabilities_of(&qubits[..len]);
            assert_eq!(few.len(), len);
            for (&q, p) in qubits.iter().zip(&few) {
                assert!(
                    (p - all[usize::from(q)]).abs() < 1e-13,
                    "{len} qubits, qubit {q}: {p} vs {}",
                    all[usize::from(q)]
                );
            }
        }
        // More than MARGINALS_OF_MAX qubits and out-of-range ones.
        let many: Vec<u8> = (0..12).chain([64, 200]).collect();
        let got = QuantumState::qubit_probabilities_of(&s, &many);
        for (&q, p) in many.iter().zip(&got) {
            let want = all.get(usize::from(q)).copied().unwrap_or(0.0);
            assert!((p - want).abs() < 1e-13, "qubit {q}");
        }
        assert_eq!(s.qubit_probabilities_of(&[64]), vec![0.0]);
    }
}
