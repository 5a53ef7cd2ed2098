//! The Bell states of Cantwell (2019), eq. 45-51, through the layer-1 circuits.
//!
//! Run with `cargo run --example bell_states`.

use qchess::cantwell::analysis::{BellMeasures, pair_log_negativity};
use qchess::cantwell::circuit::{OccupancyMove, apply};
use qchess::sim::Complex;
use qchess::sim::State;
use rand::SeedableRng;

/// `a+bi` with rounding noise (|x| < 1e-12, and -0) shown as 0.
fn show(z: Complex<f64>) -> String {
    let clean = |x: f64| if x.abs() < 1e-12 { 0.0 } else { x };
    format!("{:+.10}{:+.10}i", clean(z.re), clean(z.im))
}

/// Squares by name: a1 = 0, b1 = 1, ..., a2 = 8.
fn sq(name: &str) -> u8 {
    let b = name.as_bytes();
    (b[1] - b'1') * 8 + (b[0] - b'a')
}

fn play(state: &mut State, moves: &[&str]) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    for text in moves {
        let mv: OccupancyMove = text.parse().expect("a valid long-form move");
        apply(state, &mv, &mut rng).expect("the paper's move applies");
        println!("after {text}:");
        for (key, amp) in state.entries() {
            let squares: Vec<String> = (0..64u8)
                .filter(|i| key.board >> i & 1 == 1)
                .map(|i| format!("{}{}", (b'a' + i % 8) as char, i / 8 + 1))
                .collect();
            println!(
                "    {{{}}} ancillas {:02b}: {}",
                squares.join(","),
                key.ancillas,
                show(amp)
            );
        }
    }
}

fn report(state: &State, a: &str, b: &str) {
    let m = BellMeasures::of_squares(state, sq(a), sq(b));
    let ln = pair_log_negativity(state, sq(a), sq(b));
    println!(
        "Bell measures of ({a}, {b}): Psi+ {:.3} Psi- {:.3} Phi+ {:.3} Phi- {:.3}; log negativity {ln:.3}\n",
        m.psi[0], m.psi[2], m.phi[0], m.phi[2]
    );
}

fn main() {
    println!("Eq. 45-48: a king on a1 (no capture: pure Bell states of b1 and a1)");
    let mut king = State::classical(1 << sq("a1"));
    play(
        &mut king,
        &[
            "a1^a2b1:SPLIT_JUMP:BASIC",
            "b1a1:JUMP:BASIC",
            "b1a2:JUMP:BASIC",
        ],
    );
    report(&king, "b1", "a1"); // Psi+ (eq. 46)
    play(&mut king, &["a1a2:JUMP:BASIC", "a2a1:JUMP:BASIC"]);
    report(&king, "b1", "a1"); // Psi- (eq. 48)

    println!("Eq. 49-51: king b3, knight b1, opposing bishop c1 (captures fill ancillas x1, x2)");
    let mut board = State::classical(1 << sq("b3") | 1 << sq("b1") | 1 << sq("c1"));
    play(
        &mut board,
        &[
            "b3^b2a3:SPLIT_JUMP:BASIC",
            "c1a3:SLIDE:CAPTURE",
            "b1a3:JUMP:CAPTURE",
            "b2b1:JUMP:BASIC",
        ],
    );
    // The board part is i Phi- (eq. 50), but the branches differ in the ancillas, so the
    // reduced (b1, c1) state is a mixture: Phi+ and Phi- overlaps 1/2, log negativity 0.
    report(&board, "b1", "c1");
    play(&mut board, &["b1b2:JUMP:BASIC", "b2b1:JUMP:BASIC"]); // eq. 51: i Phi+ on the board
    report(&board, "b1", "c1");
}
