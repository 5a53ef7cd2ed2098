//! Interference in Cantwell (2019), section 11.2: three splits of a king on a1.
//!
//! Run with `cargo run --example interference`. Expected (rules-notes E1):
//! p(a1) = 0.7285533905932737, p(b1) = 0.25, p(b2) = 0.0214466094067262, p(a2) = 0;
//! ending with b1^b2a1 instead swaps the a1 and b2 values.

use qchess::cantwell::circuit::{OccupancyMove, apply};
use qchess::sim::Complex;
use qchess::sim::State;
use rand::SeedableRng;

/// `a+bi` with rounding noise (|x| < 1e-12, and -0) shown as 0.
fn show(z: Complex<f64>) -> String {
    let clean = |x: f64| if x.abs() < 1e-12 { 0.0 } else { x };
    format!("{:+.10}{:+.10}i", clean(z.re), clean(z.im))
}

fn run(last: &str) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut state = State::classical(1); // a king on a1
    for text in ["a1^a2b1:SPLIT_JUMP:BASIC", "a2^a1b2:SPLIT_JUMP:BASIC", last] {
        let mv: OccupancyMove = text.parse().expect("a valid long-form move");
        apply(&mut state, &mv, &mut rng).expect("the paper's move applies");
    }
    println!("a1^a2b1, a2^a1b2, then {last}:");
    let p = state.qubit_probabilities();
    for (name, index) in [("a1", 0usize), ("b1", 1), ("a2", 8), ("b2", 9)] {
        let key = qchess::sim::Key::board(1 << index);
        println!(
            "    {name}: amplitude {}  p = {:.16}",
            show(state.amplitude(key)),
            p[index]
        );
    }
}

fn main() {
    run("b1^a1b2:SPLIT_JUMP:BASIC");
    run("b1^b2a1:SPLIT_JUMP:BASIC");
}
