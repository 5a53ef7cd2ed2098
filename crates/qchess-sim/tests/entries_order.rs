//! `State::entries` lists every stored basis state once, in canonical order (ancillas, then
//! logical board key), with its amplitude, whether or not an uncontrolled iSwap relabelled
//! the qubits (then it sorts one sector's logical keys at a time, else it reads in place).

use qchess_sim::{Controls, State};
use rand::{Rng, SeedableRng};

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
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut s = State::<f64>::classical(0x0000_0000_0000_00ff);
        let mut swapped = false;
        for _ in 0..14 {
            let a = rng.random_range(0..16u8);
            let b = rng.random_range(0..16u8);
            let c = rng.random_range(0..16u8);
            if a == b || b == c || a == c {
                continue;
            }
            match rng.random_range(0..4) {
                0 => s.split(a, b, c, Controls::NONE).unwrap(),
                1 if seed % 2 == 0 => {
                    s.iswap(a, b, Controls::NONE).unwrap();
                    swapped = true;
                }
                2 => {
                    s.capture(a).unwrap();
                }
                _ => s.sqrt_iswap(a, b, Controls::empty_path(1 << c)).unwrap(),
            }
        }
        check(&s);
        if swapped {
            relabelled += 1;
        } else {
            in_place += 1;
        }
    }
    assert!(relabelled > 3 && in_place > 3, "{relabelled} {in_place}");
}
