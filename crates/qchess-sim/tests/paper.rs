//! The paper's equations, checked gate by gate on basis states and through its examples
//! (Cantwell 2019, with the errata of rules-notes E1, E4, E5).

use crate::common;

use common::{C, H, c};
use qchess_sim::{Controls, Key, Predicate, State};

const TOL: f64 = 1e-15;

fn amp(s: &State<f64>, board: u64) -> C {
    s.amplitude(Key::board(board))
}

/// Asserts the state's amplitudes are exactly `want` (every other amplitude zero).
fn assert_state(s: &State<f64>, want: &[(Key, C)]) {
    for (k, a) in want {
        let got = s.amplitude(*k);
        assert!((got - a).norm() < 1e-15, "{k:?}: got {got}, want {a}");
    }
    for (k, a) in s.entries() {
        if !want.iter().any(|(w, _)| *w == k) {
            assert!(a.norm() < 1e-15, "unexpected {k:?} = {a}");
        }
    }
}

fn kb(board: u64) -> Key {
    Key::board(board)
}

/// Three-qubit basis states in the paper's |q2 q1 q0> order mapped to qubits (q0, q1, q2).
fn ket3(bits: u8, q: [u8; 3]) -> u64 {
    (0..3)
        .filter(|i| bits >> i & 1 == 1)
        .fold(0, |m, i| m | 1u64 << q[i])
}

#[test]
fn eq4a_iswap_on_each_basis_state() {
    let (a, b) = (3u8, 50u8);
    for (input, out, f) in [
        (0u64, 0u64, c(1.0, 0.0)),
        (1 << a, 1 << b, c(0.0, 1.0)),
        (1 << b, 1 << a, c(0.0, 1.0)),
        (1 << a | 1 << b, 1 << a | 1 << b, c(1.0, 0.0)),
    ] {
        let mut s = State::<f64>::classical(input | 1 << 20);
        s.iswap(a, b, Controls::NONE).unwrap();
        assert_state(&s, &[(kb(out | 1 << 20), f)]);
        let mut s = State::<f64>::classical(input);
        s.iswap_inv(a, b, Controls::NONE).unwrap();
        assert_state(&s, &[(kb(out), f.conj())]);
    }
}

#[test]
fn eq4b_sqrt_iswap_on_each_basis_state() {
    let (a, b) = (63u8, 0u8);
    let mut s = State::<f64>::classical(1 << a);
    s.sqrt_iswap(a, b, Controls::NONE).unwrap();
    assert_state(&s, &[(kb(1 << a), c(H, 0.0)), (kb(1 << b), c(0.0, H))]);
    let mut s = State::<f64>::classical(1 << b);
    s.sqrt_iswap(a, b, Controls::NONE).unwrap();
    assert_state(&s, &[(kb(1 << a), c(0.0, H)), (kb(1 << b), c(H, 0.0))]);
    for fixed in [0u64, 1 << a | 1 << b] {
        let mut s = State::<f64>::classical(fixed);
        s.sqrt_iswap(a, b, Controls::NONE).unwrap();
        assert_state(&s, &[(kb(fixed), c(1.0, 0.0))]);
    }
    // Controlled: nothing happens where a control fails.
    let mut s = State::<f64>::classical(1 << a | 1 << 7);
    s.sqrt_iswap(a, b, Controls::empty_path(1 << 7)).unwrap();
    assert_state(&s, &[(kb(1 << a | 1 << 7), c(1.0, 0.0))]);
}

/// eq. 7 by its definition and eq. 8a-8f. E5: the printed matrix's row |101> is i times the
/// definition's, so in 8e and 8f the |101> component is the printed one divided by i.
#[test]
fn eq8_split_on_each_basis_state() {
    let q = [10u8, 2, 33]; // s, t1, t2
    let cases: [(u8, Vec<(u8, C)>); 8] = [
        (0b000, vec![(0b000, c(1.0, 0.0))]),
        (0b001, vec![(0b010, c(0.0, H)), (0b100, c(0.0, H))]), // 8a
        (0b010, vec![(0b010, c(H, 0.0)), (0b100, c(-H, 0.0))]), // 8b
        (0b100, vec![(0b001, c(0.0, 1.0))]),                   // 8c
        (0b011, vec![(0b110, c(0.0, 1.0))]),                   // 8d
        (0b101, vec![(0b011, c(-H, 0.0)), (0b101, c(H, 0.0))]), // 8e corrected
        (0b110, vec![(0b011, c(0.0, H)), (0b101, c(0.0, H))]), // 8f corrected
        (0b111, vec![(0b111, c(1.0, 0.0))]),
    ];
    for (input, want) in cases {
        let mut s = State::<f64>::classical(ket3(input, q));
        s.split(q[0], q[1], q[2], Controls::NONE).unwrap();
        let want: Vec<(Key, C)> = want.iter().map(|&(b, a)| (kb(ket3(b, q)), a)).collect();
        assert_state(&s, &want);
    }
}

/// eq. 10 / 11a-11f in the basis |s1 s2 t> (11e corrected: i times the printed value).
#[test]
fn eq11_merge_on_each_basis_state() {
    let q = [40u8, 9, 12]; // t, s2, s1
    let cases: [(u8, Vec<(u8, C)>); 8] = [
        (0b000, vec![(0b000, c(1.0, 0.0))]),
        (0b001, vec![(0b100, c(0.0, -1.0))]), // 11a
        (0b010, vec![(0b001, c(0.0, -H)), (0b010, c(H, 0.0))]), // 11b
        (0b100, vec![(0b001, c(0.0, -H)), (0b010, c(-H, 0.0))]), // 11c
        (0b011, vec![(0b101, c(-H, 0.0)), (0b110, c(0.0, -H))]), // 11d
        (0b101, vec![(0b101, c(H, 0.0)), (0b110, c(0.0, -H))]), // 11e corrected
        (0b110, vec![(0b011, c(0.0, -1.0))]), // 11f
        (0b111, vec![(0b111, c(1.0, 0.0))]),
    ];
    for (input, want) in cases {
        let mut s = State::<f64>::classical(ket3(input, q));
        s.merge(q[2], q[1], q[0], Controls::NONE).unwrap();
        let want: Vec<(Key, C)> = want.iter().map(|&(b, a)| (kb(ket3(b, q)), a)).collect();
        assert_state(&s, &want);
    }
}

/// eq. 9: the four path blocks of the split slide, and eq. 12 undoing each.
#[test]
fn eq9_eq12_split_and_merge_slide_blocks() {
    let (s, t1, t2) = (0u8, 16u8, 2u8); // a1 -> a3 (path a2 = 8), c1 (path b1 = 1)
    let (p1, p2) = (1u64 << 8, 1u64 << 1);
    // Both paths clear: the split.
    let mut st = State::<f64>::classical(1 << s);
    st.split_slide(s, t1, t2, p1, p2).unwrap();
    assert_state(&st, &[(kb(1 << t1), c(0.0, H)), (kb(1 << t2), c(0.0, H))]);
    st.merge_slide(t2, t1, s, p2, p1).unwrap();
    assert_state(&st, &[(kb(1 << s), c(1.0, 0.0))]);
    // Path 1 blocked: iSwap(s, t2).
    let mut st = State::<f64>::classical(1 << s | p1);
    st.split_slide(s, t1, t2, p1, p2).unwrap();
    assert_state(&st, &[(kb(1 << t2 | p1), c(0.0, 1.0))]);
    st.merge_slide(t2, t1, s, p2, p1).unwrap();
    assert_state(&st, &[(kb(1 << s | p1), c(1.0, 0.0))]);
    // Path 2 blocked: iSwap(s, t1).
    let mut st = State::<f64>::classical(1 << s | p2);
    st.split_slide(s, t1, t2, p1, p2).unwrap();
    assert_state(&st, &[(kb(1 << t1 | p2), c(0.0, 1.0))]);
    // Both blocked: identity.
    let mut st = State::<f64>::classical(1 << s | p1 | p2);
    st.split_slide(s, t1, t2, p1, p2).unwrap();
    assert_state(&st, &[(kb(1 << s | p1 | p2), c(1.0, 0.0))]);
}

/// Fig. 17 and 19: rook a1^a3c1 with the a1-a3 path (a2) half blocked, then b1... merged back.
#[test]
fn fig17_fig19_split_slide_in_superposition() {
    let (a1, b1, c1, a2, a3) = (0u8, 1u8, 2u8, 8u8, 16u8);
    // a|rook a1> + b|rook a1, knight a2>, a = 0.6, b = 0.8.
    let mut s = State::<f64>::from_amplitudes(
        vec![
            (kb(1 << a1), c(0.6, 0.0)),
            (kb(1 << a1 | 1 << a2), c(0.8, 0.0)),
        ],
        qchess_sim::Normalization::RequireUnit,
    )
    .unwrap();
    s.split_slide(a1, a3, c1, 1 << a2, 1 << b1).unwrap();
    assert_state(
        &s,
        &[
            (kb(1 << a3), c(0.0, 0.6 * H)),
            (kb(1 << c1), c(0.0, 0.6 * H)),
            (kb(1 << c1 | 1 << a2), c(0.0, 0.8)),
        ],
    );
    s.merge_slide(c1, a3, a1, 1 << b1, 1 << a2).unwrap();
    assert_state(
        &s,
        &[
            (kb(1 << a1), c(0.6, 0.0)),
            (kb(1 << a1 | 1 << a2), c(0.8, 0.0)),
        ],
    );
}

/// E5's observable consequence: pieces on a1 and c1, a1^b1c1 then b1c1^a1 ends on {a1, b1}.
#[test]
fn e5_split_then_merge_with_occupied_target() {
    let (a1, b1, c1) = (0u8, 1u8, 2u8);
    let mut s = State::<f64>::classical(1 << a1 | 1 << c1);
    s.split(a1, b1, c1, Controls::NONE).unwrap();
    s.merge(b1, c1, a1, Controls::NONE).unwrap();
    assert!(
        (s.probability(Predicate::Equals {
            mask: 0b111,
            value: 0b011
        }) - 1.0)
            .abs()
            < TOL
    );
}

/// Section 11.2 with E1: p(a1) = 0.7285533905932737, p(b1) = 1/4, p(b2) = 0.0214466094067262.
#[test]
fn section_11_2_interference() {
    let (a1, b1, a2, b2) = (0u8, 1u8, 8u8, 9u8);
    let mut s = State::<f64>::classical(1 << a1);
    s.split(a1, a2, b1, Controls::NONE).unwrap();
    assert_state(&s, &[(kb(1 << a2), c(0.0, H)), (kb(1 << b1), c(0.0, H))]);
    s.split(a2, a1, b2, Controls::NONE).unwrap();
    assert_state(
        &s,
        &[
            (kb(1 << a1), c(-0.5, 0.0)),
            (kb(1 << b2), c(-0.5, 0.0)),
            (kb(1 << b1), c(0.0, H)),
        ],
    );
    let mut other = s.clone();
    s.split(b1, a1, b2, Controls::NONE).unwrap();
    let r = 1.0 / (2.0 * 2f64.sqrt());
    assert_state(
        &s,
        &[
            (kb(1 << a1), c(-(0.5 + r), 0.0)),
            (kb(1 << b1), c(0.0, -0.5)),
            (kb(1 << b2), c(-(0.5 - r), 0.0)),
        ],
    );
    let p = s.qubit_probabilities();
    assert!((p[a1 as usize] - 0.7285533905932737).abs() < TOL);
    assert!((p[b1 as usize] - 0.25).abs() < TOL);
    assert!((p[b2 as usize] - 0.0214466094067262).abs() < TOL);
    assert_eq!(p[a2 as usize], 0.0);
    // Ending with b1^b2a1 swaps the a1 and b2 values.
    other.split(b1, b2, a1, Controls::NONE).unwrap();
    let q = other.qubit_probabilities();
    assert!((q[b2 as usize] - 0.7285533905932737).abs() < TOL);
    assert!((q[a1 as usize] - 0.0214466094067262).abs() < TOL);
}

/// eq. 45-48 (E4): king-only Bell states, genuinely pure.
#[test]
fn eq45_to_48_king_bell_states() {
    let (a1, b1, a2) = (0u8, 1u8, 8u8);
    let mut s = State::<f64>::classical(1 << a1);
    s.split(a1, a2, b1, Controls::NONE).unwrap(); // 45a
    assert_state(&s, &[(kb(1 << a2), c(0.0, H)), (kb(1 << b1), c(0.0, H))]);
    s.iswap(b1, a1, Controls::NONE).unwrap(); // 45b
    assert_state(&s, &[(kb(1 << a2), c(0.0, H)), (kb(1 << a1), c(-H, 0.0))]);
    s.iswap(b1, a2, Controls::NONE).unwrap(); // 45c
    assert_state(&s, &[(kb(1 << b1), c(-H, 0.0)), (kb(1 << a1), c(-H, 0.0))]);
    // eq. 46: |Psi+> on (b1, a1): rho index 2*b1 + a1; rho[2][1] = +1/2.
    let rho = s.reduced_density_matrix(b1, a1);
    assert!((rho[1][1].re - 0.5).abs() < TOL && (rho[2][2].re - 0.5).abs() < TOL);
    assert!((rho[2][1] - c(0.5, 0.0)).norm() < TOL);
    s.iswap(a1, a2, Controls::NONE).unwrap(); // 47a
    assert_state(&s, &[(kb(1 << b1), c(-H, 0.0)), (kb(1 << a2), c(0.0, -H))]);
    s.iswap(a2, a1, Controls::NONE).unwrap(); // 47b
    assert_state(&s, &[(kb(1 << b1), c(-H, 0.0)), (kb(1 << a1), c(H, 0.0))]);
    // eq. 48: |Psi->: rho[2][1] = -1/2.
    let rho = s.reduced_density_matrix(b1, a1);
    assert!((rho[2][1] - c(-0.5, 0.0)).norm() < TOL);
}

/// eq. 49a-49d and 51 (E4): Bell states through captures; ancillas kept.
#[test]
fn eq49_to_51_bell_states_through_captures() {
    let (c1, b1, b2, b3, a3) = (2u8, 1u8, 9u8, 17u8, 16u8);
    let board = |sq: &[u8]| sq.iter().fold(0u64, |m, &q| m | 1 << q);
    let key = |x: u128, sq: &[u8]| Key {
        board: board(sq),
        ancillas: x,
    };
    let mut s = State::<f64>::classical(board(&[b3, b1, c1]));
    s.split(b3, b2, a3, Controls::NONE).unwrap(); // 49a: b3^b2a3
    assert_state(
        &s,
        &[
            (key(0, &[b2, b1, c1]), c(0.0, H)),
            (key(0, &[a3, b1, c1]), c(0.0, H)),
        ],
    );
    // 49b: capture slide c1a3 through b2: U_slide(b2, a3, c1) U_slide(b2, x1, a3).
    assert_eq!(s.capture(a3).unwrap(), 0); // a3 is empty where b2 blocks
    s.iswap(c1, a3, Controls::empty_path(1 << b2)).unwrap();
    assert_state(
        &s,
        &[
            (key(0, &[b2, b1, c1]), c(0.0, H)),
            (key(0b01, &[a3, b1]), c(0.0, -H)),
        ],
    );
    // 49c: capture jump b1a3: U_jump(b1, a3) U_jump(x2, a3).
    assert_eq!(s.capture(a3).unwrap(), 1);
    s.iswap(b1, a3, Controls::NONE).unwrap();
    assert_state(
        &s,
        &[
            (key(0, &[a3, b2, c1]), c(-H, 0.0)),
            (key(0b11, &[a3]), c(0.0, H)),
        ],
    );
    // 49d: jump b2b1.
    s.iswap(b2, b1, Controls::NONE).unwrap();
    assert_state(
        &s,
        &[
            (key(0, &[a3, b1, c1]), c(0.0, -H)),
            (key(0b11, &[a3]), c(0.0, H)),
        ],
    );
    // eq. 50: board amplitudes i/sqrt2 (|00> - |11>) on (b1, c1) with a3 occupied, but the
    // ancillas differ, so the reduced board state is a mixture: no coherence.
    let rho = s.reduced_density_matrix(b1, c1);
    assert!((rho[0][0].re - 0.5).abs() < TOL && (rho[3][3].re - 0.5).abs() < TOL);
    assert!(rho[0][3].norm() < TOL && rho[3][0].norm() < TOL);
    // eq. 51: b1b2, b2b1 flip the sign of the |11> branch.
    s.iswap(b1, b2, Controls::NONE).unwrap();
    s.iswap(b2, b1, Controls::NONE).unwrap();
    assert_state(
        &s,
        &[
            (key(0, &[a3, b1, c1]), c(0.0, H)),
            (key(0b11, &[a3]), c(0.0, H)),
        ],
    );
    let dist = s.board_distribution(None);
    assert_eq!(dist.len(), 2);
    assert!((dist[0].1 - 0.5).abs() < TOL && (dist[1].1 - 0.5).abs() < TOL);
    assert!(dist[0].0 < dist[1].0, "ties ordered by board key");
    assert_eq!(
        amp(&s, board(&[a3])),
        c(0.0, 0.0),
        "the |11> branch lives in ancilla sector 0b11"
    );
}
