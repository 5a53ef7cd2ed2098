//! The paper's figures and results at circuit level (layer 1), with the errata of rules-notes
//! E1 (interference), E4 (Bell states with capture ancillas), E5 (the split's |101> row) and
//! E6 (Fig. 17/19).

use num_complex::Complex64 as C;
use qchess_board::Square;
use qchess_cantwell::analysis::{BellMeasures, pair_log_negativity, square_entanglement};
use qchess_cantwell::circuit::{Applied, OccupancyMove, apply};
use qchess_sim::{Key, Normalization, State};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const H: f64 = std::f64::consts::FRAC_1_SQRT_2;

fn bits(squares: &[Square]) -> u64 {
    squares.iter().fold(0, |m, s| m | 1 << s.index())
}

fn run(state: &mut State, moves: &[&str]) -> Vec<Applied> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    moves
        .iter()
        .map(|text| {
            let mv: OccupancyMove = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            apply(state, &mv, &mut rng).unwrap_or_else(|e| panic!("{text}: {e}"))
        })
        .collect()
}

/// Asserts the state is exactly `expected` (every other amplitude zero), to 1e-12.
fn assert_state(state: &State, expected: &[(Key, C)]) {
    for &(key, amp) in expected {
        let got = state.amplitude(key);
        assert!(
            (got - amp).norm() < 1e-12,
            "{key:?}: got {got}, expected {amp}"
        );
    }
    let weight: f64 = expected.iter().map(|(_, a)| a.norm_sqr()).sum();
    assert!(
        (weight - 1.0).abs() < 1e-12,
        "expected amplitudes are not normalised"
    );
    assert_eq!(state.len(), expected.len(), "extra basis states");
}

fn board(squares: &[Square]) -> Key {
    Key::board(bits(squares))
}

fn with_ancillas(squares: &[Square], ancillas: u128) -> Key {
    Key {
        board: bits(squares),
        ancillas,
    }
}

fn superposition(parts: &[(&[Square], C)]) -> State {
    let entries = parts.iter().map(|(sq, a)| (board(sq), *a)).collect();
    State::from_amplitudes(entries, Normalization::RequireUnit).unwrap()
}

use Square as S;

#[test]
fn figure_1_standard_jump_moves_only_the_branch_holding_the_knight() {
    // Fig. 1's kets are drawn, not written: a knight in superposition on b1 and a3 (amplitudes
    // a, b); b1c3 moves the b1 branch with amplitude i and leaves the a3 branch.
    let (a, b) = (C::new(0.6, 0.0), C::new(0.0, 0.8));
    let mut state = superposition(&[(&[S::B1], a), (&[S::A3], b)]);
    run(&mut state, &["b1c3:JUMP:BASIC"]);
    assert_state(
        &state,
        &[(board(&[S::C3]), a * C::i()), (board(&[S::A3]), b)],
    );
}

#[test]
fn figure_7_standard_slide_entangles_the_bishop_with_the_knight() {
    // Bishop on c1; a knight on b2 (blocking the c1-a3 path) or on d4, amplitudes a and b.
    let (a, b) = (C::new(H, 0.0), C::new(0.0, H));
    let mut state = superposition(&[(&[S::C1, S::B2], a), (&[S::C1, S::D4], b)]);
    run(&mut state, &["c1a3:SLIDE:BASIC"]);
    assert_state(
        &state,
        &[
            (board(&[S::C1, S::B2]), a),
            (board(&[S::A3, S::D4]), b * C::i()),
        ],
    );
    // The bishop's square is now correlated with the knight's: maximally, by log negativity.
    let ln = pair_log_negativity(&state, S::C1.index(), S::B2.index());
    assert!(
        ln.abs() < 1e-12,
        "c1 and b2 are perfectly correlated, not coherent: {ln}"
    );
    let e = square_entanglement(&state, S::A3.index());
    assert!((e.entropy - 1.0).abs() < 1e-12);
}

#[test]
fn figures_13_and_15_split_jump_then_merge_jump_undoes_it() {
    let mut state = State::classical(bits(&[S::B1]));
    run(&mut state, &["b1^a3c3:SPLIT_JUMP:BASIC"]);
    // Eq. 8a: U_split |001> = (i|010> + i|100>)/sqrt 2, t1 = a3, t2 = c3.
    assert_state(
        &state,
        &[
            (board(&[S::A3]), C::new(0.0, H)),
            (board(&[S::C3]), C::new(0.0, H)),
        ],
    );
    run(&mut state, &["c3a3^b1:MERGE_JUMP:BASIC"]);
    assert_state(&state, &[(board(&[S::B1]), C::new(1.0, 0.0))]);
}

#[test]
fn figures_17_and_19_split_slide_and_merge_slide_with_a_blocking_knight() {
    // Rook on a1; a knight on a2 (on the a1-a3 path) with amplitude b, elsewhere (h8) with a.
    let (a, b) = (C::new(0.8, 0.0), C::new(0.0, 0.6));
    let mut state = superposition(&[(&[S::A1, S::H8], a), (&[S::A1, S::A2], b)]);
    // Fig. 17's kets use b1 (its caption's c1 is a misprint, rules-notes E6).
    run(&mut state, &["a1^a3b1:SPLIT_SLIDE:BASIC"]);
    let i = C::i();
    assert_state(
        &state,
        &[
            (board(&[S::A3, S::H8]), i * a * H),
            (board(&[S::B1, S::H8]), i * a * H),
            (board(&[S::B1, S::A2]), i * b),
        ],
    );
    // Fig. 19 read from Fig. 17's output (E6): the merge b1a3^a1 restores it exactly.
    run(&mut state, &["b1a3^a1:MERGE_SLIDE:BASIC"]);
    assert_state(
        &state,
        &[(board(&[S::A1, S::H8]), a), (board(&[S::A1, S::A2]), b)],
    );
}

#[test]
fn e5_split_follows_its_definition_not_the_printed_matrix() {
    // Pieces on a1 and c1; a1^b1c1 acts on |t2 t1 s> = |c1 b1 a1> = |101>.
    let mut state = State::classical(bits(&[S::A1, S::C1]));
    run(&mut state, &["a1^b1c1:SPLIT_JUMP:BASIC"]);
    // The product iSwap(s,t2) sqrt-iSwap(s,t1) gives (|101> - |011>)/sqrt 2; the printed eq. 8e
    // has i/sqrt 2 on |101> (the printed row |101> is i times the product's).
    assert_state(
        &state,
        &[
            (board(&[S::A1, S::C1]), C::new(H, 0.0)),
            (board(&[S::A1, S::B1]), C::new(-H, 0.0)),
        ],
    );
    run(&mut state, &["b1c1^a1:MERGE_JUMP:BASIC"]);
    // Ends on {a1, b1} with certainty ({b1, c1} under the printed matrix).
    assert_state(&state, &[(board(&[S::A1, S::B1]), C::new(-1.0, 0.0))]);
}

#[test]
fn e5_eq_8f_and_11e_corrected() {
    // Eq. 8f: U_split |110> (t2, t1 occupied; s empty) = (i|011> + i|101>)/sqrt 2; printed
    // (i|011> - |101>)/sqrt 2.
    let mut state = State::classical(bits(&[S::B1, S::C1]));
    run(&mut state, &["a1^b1c1:SPLIT_JUMP:BASIC"]);
    assert_state(
        &state,
        &[
            (board(&[S::A1, S::B1]), C::new(0.0, H)),
            (board(&[S::A1, S::C1]), C::new(0.0, H)),
        ],
    );
    // Eq. 11e: U_merge |101> on |s1 s2 t> = (|101> - i|110>)/sqrt 2, i times the printed
    // -(i|101> + |110>)/sqrt 2. Merge c1b1^a1 with c1 = s1 and a1 = t occupied.
    let mut state = State::classical(bits(&[S::C1, S::A1]));
    run(&mut state, &["c1b1^a1:MERGE_JUMP:BASIC"]);
    assert_state(
        &state,
        &[
            (board(&[S::C1, S::A1]), C::new(H, 0.0)),
            (board(&[S::C1, S::B1]), C::new(0.0, -H)),
        ],
    );
}

/// Eq. 45-48: the king-only Bell states on b1 and a1 (no capture: genuinely pure).
#[test]
fn eq_45_to_48_pure_bell_states_with_a_king() {
    let mut state = State::classical(bits(&[S::A1]));
    run(&mut state, &["a1^a2b1:SPLIT_JUMP:BASIC"]);
    // 45a: (i|100> + i|010>)/sqrt 2 in |a2, b1, a1>.
    assert_state(
        &state,
        &[
            (board(&[S::A2]), C::new(0.0, H)),
            (board(&[S::B1]), C::new(0.0, H)),
        ],
    );
    run(&mut state, &["b1a1:JUMP:BASIC"]);
    // 45b: (i|100> - |001>)/sqrt 2.
    assert_state(
        &state,
        &[
            (board(&[S::A2]), C::new(0.0, H)),
            (board(&[S::A1]), C::new(-H, 0.0)),
        ],
    );
    run(&mut state, &["b1a2:JUMP:BASIC"]);
    // 45c: (-|010> - |001>)/sqrt 2 = -|0> (x) Psi+ on (b1, a1).
    assert_state(
        &state,
        &[
            (board(&[S::B1]), C::new(-H, 0.0)),
            (board(&[S::A1]), C::new(-H, 0.0)),
        ],
    );
    let m = BellMeasures::of_squares(&state, S::B1.index(), S::A1.index());
    assert!((m.psi[0] - 1.0).abs() < 1e-12, "Psi+ = {}", m.psi[0]);
    assert!((pair_log_negativity(&state, S::B1.index(), S::A1.index()) - 1.0).abs() < 1e-12);
    run(&mut state, &["a1a2:JUMP:BASIC"]);
    // 47a: (-|010> - i|100>)/sqrt 2.
    assert_state(
        &state,
        &[
            (board(&[S::B1]), C::new(-H, 0.0)),
            (board(&[S::A2]), C::new(0.0, -H)),
        ],
    );
    run(&mut state, &["a2a1:JUMP:BASIC"]);
    // 47b: (-|010> + |001>)/sqrt 2 = -|0> (x) Psi- (eq. 48).
    assert_state(
        &state,
        &[
            (board(&[S::B1]), C::new(-H, 0.0)),
            (board(&[S::A1]), C::new(H, 0.0)),
        ],
    );
    let m = BellMeasures::of_squares(&state, S::B1.index(), S::A1.index());
    assert!((m.psi[2] - 1.0).abs() < 1e-12, "Psi- = {}", m.psi[2]);
    assert!(m.psi[0].abs() < 1e-12);
}

/// Eq. 49a-49d, 50, 51 with the capture ancillas x1, x2 (rules-notes E4): king on b3 and
/// knight on b1 of one colour, bishop on c1 of the other.
#[test]
fn eq_49_to_51_bell_states_through_captures_with_ancillas() {
    let mut state = State::classical(bits(&[S::B3, S::B1, S::C1]));
    let i = C::i();
    run(&mut state, &["b3^b2a3:SPLIT_JUMP:BASIC"]);
    // 49a: (i|00>|00111> + i|00>|10011>)/sqrt 2 in |x2 x1> (x) |a3 b3 b2 b1 c1>.
    assert_state(
        &state,
        &[
            (board(&[S::B2, S::B1, S::C1]), i * H),
            (board(&[S::A3, S::B1, S::C1]), i * H),
        ],
    );
    let applied = run(&mut state, &["c1a3:SLIDE:CAPTURE"]);
    // D4: eq. 23b's outcome 1 is certain here (the blocker b2 and the target a3 are the two
    // halves of the split king).
    assert_eq!(applied[0].measured, Some(true));
    assert!((applied[0].probability.unwrap() - 1.0).abs() < 1e-12);
    let x1 = 1u128 << applied[0].ancilla.unwrap();
    // 49b: (i|00>|00111> - i|01>|10010>)/sqrt 2.
    assert_state(
        &state,
        &[
            (board(&[S::B2, S::B1, S::C1]), i * H),
            (with_ancillas(&[S::A3, S::B1], x1), -i * H),
        ],
    );
    let applied = run(&mut state, &["b1a3:JUMP:CAPTURE"]);
    let x2 = 1u128 << applied[0].ancilla.unwrap();
    // 49c: (-|00>|10101> + i|11>|10000>)/sqrt 2.
    assert_state(
        &state,
        &[
            (board(&[S::A3, S::B2, S::C1]), C::new(-H, 0.0)),
            (with_ancillas(&[S::A3], x1 | x2), i * H),
        ],
    );
    run(&mut state, &["b2b1:JUMP:BASIC"]);
    // 49d: (-i|00>|10011> + i|11>|10000>)/sqrt 2.
    assert_state(
        &state,
        &[
            (board(&[S::A3, S::B1, S::C1]), -i * H),
            (with_ancillas(&[S::A3], x1 | x2), i * H),
        ],
    );
    // Eq. 50: the board part on |b1 c1> is i (|00> - |11>)/sqrt 2 = i Phi-, but the two
    // branches carry different ancillas, so the reduced (b1, c1) state is the mixture
    // (|00><00| + |11><11|)/2: Phi- and Phi+ overlaps 1/2 each, no log negativity.
    let m = BellMeasures::of_squares(&state, S::B1.index(), S::C1.index());
    assert!((m.phi[2] - 0.5).abs() < 1e-12 && (m.phi[0] - 0.5).abs() < 1e-12);
    assert!(pair_log_negativity(&state, S::B1.index(), S::C1.index()).abs() < 1e-12);
    run(&mut state, &["b1b2:JUMP:BASIC", "b2b1:JUMP:BASIC"]);
    // Eq. 51: the |11> board branch picks up -1: i (|00> + |11>)/sqrt 2 = i Phi+.
    assert_state(
        &state,
        &[
            (board(&[S::A3, S::B1, S::C1]), i * H),
            (with_ancillas(&[S::A3], x1 | x2), i * H),
        ],
    );
}

/// Section 11.2 with rules-notes E1's exact values.
#[test]
fn section_11_2_interference() {
    let mut state = State::classical(bits(&[S::A1]));
    run(
        &mut state,
        &["a1^a2b1:SPLIT_JUMP:BASIC", "a2^a1b2:SPLIT_JUMP:BASIC"],
    );
    // -(|0001> + |1000>)/2 + i/sqrt 2 |0100> in |b2 b1 a2 a1>.
    assert_state(
        &state,
        &[
            (board(&[S::A1]), C::new(-0.5, 0.0)),
            (board(&[S::B2]), C::new(-0.5, 0.0)),
            (board(&[S::B1]), C::new(0.0, H)),
        ],
    );
    let mut other = state.clone();
    run(&mut state, &["b1^a1b2:SPLIT_JUMP:BASIC"]);
    let big = 0.5 + 0.5 * H;
    let small = 0.5 - 0.5 * H;
    assert_state(
        &state,
        &[
            (board(&[S::A1]), C::new(-big, 0.0)),
            (board(&[S::B1]), C::new(0.0, -0.5)),
            (board(&[S::B2]), C::new(-small, 0.0)),
        ],
    );
    let p = state.qubit_probabilities();
    assert!((p[S::A1.index() as usize] - 0.7285533905932737).abs() < 1e-15);
    assert!((p[S::B1.index() as usize] - 0.25).abs() < 1e-15);
    assert!((p[S::B2.index() as usize] - 0.0214466094067262).abs() < 1e-15);
    assert_eq!(p[S::A2.index() as usize], 0.0);
    // Ending with b1^b2a1 instead swaps the a1 and b2 values.
    run(&mut other, &["b1^b2a1:SPLIT_JUMP:BASIC"]);
    assert_state(
        &other,
        &[
            (board(&[S::B2]), C::new(-big, 0.0)),
            (board(&[S::B1]), C::new(0.0, -0.5)),
            (board(&[S::A1]), C::new(-small, 0.0)),
        ],
    );
}

#[test]
fn the_demo_reproductions_match_the_paper_and_show_the_ancilla_mixture() {
    let all = qchess_cantwell::analysis::paper_reproductions().unwrap();
    assert_eq!(all.len(), 5);
    for r in &all {
        assert!(r.matches(1e-12), "{}", r.title);
    }
    // Eq. 50/51 read-outs: the reduced (b1, c1) state is the ancilla-induced mixture.
    let captures = &all[1];
    let bell = captures.steps.last().unwrap().bell.unwrap();
    assert!((bell.measures.phi[0] - 0.5).abs() < 1e-12 && bell.log_negativity.abs() < 1e-12);
    assert_eq!(
        captures.ket(captures.steps[2].amplitudes[1].key),
        "|11>|10000>"
    );
    // Eq. 46/48: pure Psi+ then Psi-.
    let pure = &all[0];
    let psi_plus = pure.steps[2].bell.unwrap();
    assert!((psi_plus.measures.psi[0] - 1.0).abs() < 1e-12);
    assert!((psi_plus.log_negativity - 1.0).abs() < 1e-12);
}
