//! The research read-outs: Hermitian eigenvalues, Bell measures, log negativity, square
//! entanglement, and the section 9 bounds (eq. 38-40, Figure 37).

use num_complex::Complex64 as C;
use qchess_cantwell::analysis::*;
use qchess_sim::{Key, Normalization, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn z() -> C {
    C::new(0.0, 0.0)
}

/// |v><v| for a 4-vector.
fn projector(v: [C; 4]) -> DensityMatrix {
    let mut m = [[z(); 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            m[i][j] = v[i] * v[j].conj();
        }
    }
    m
}

fn random_unitary(rng: &mut ChaCha8Rng) -> [[C; 4]; 4] {
    // Gram-Schmidt on random complex vectors.
    let mut cols: Vec<[C; 4]> = Vec::new();
    while cols.len() < 4 {
        let mut v = [z(); 4];
        for x in &mut v {
            *x = C::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
        }
        for u in &cols {
            let dot: C = (0..4).map(|i| u[i].conj() * v[i]).sum();
            for i in 0..4 {
                v[i] -= dot * u[i];
            }
        }
        let n = v.iter().map(|x| x.norm_sqr()).sum::<f64>().sqrt();
        if n > 1e-6 {
            cols.push(v.map(|x| x / n));
        }
    }
    let mut u = [[z(); 4]; 4];
    for (j, col) in cols.iter().enumerate() {
        for i in 0..4 {
            u[i][j] = col[i];
        }
    }
    u
}

#[test]
fn hermitian_eigenvalues_of_u_d_u_dagger() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..200 {
        let u = random_unitary(&mut rng);
        let mut d: [f64; 4] = std::array::from_fn(|_| rng.random::<f64>() * 4.0 - 2.0);
        if rng.random_bool(0.3) {
            d[1] = d[0]; // degenerate eigenvalues too
        }
        let mut m = [[z(); 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                m[i][j] = (0..4).map(|k| u[i][k] * d[k] * u[j][k].conj()).sum();
            }
        }
        let ev = hermitian_eigenvalues(&m);
        d.sort_by(f64::total_cmp);
        for (a, b) in ev.iter().zip(&d) {
            assert!((a - b).abs() < 1e-10, "{ev:?} vs {d:?}");
        }
    }
}

#[test]
fn log_negativity_of_known_states() {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let bell = projector([C::new(h, 0.0), z(), z(), C::new(h, 0.0)]);
    assert!((log_negativity(&bell) - 1.0).abs() < 1e-12);
    let psi_minus = projector([z(), C::new(h, 0.0), C::new(-h, 0.0), z()]);
    assert!((log_negativity(&psi_minus) - 1.0).abs() < 1e-12);
    // A product state |+>|0> and a classical mixture: 0.
    let product = projector([C::new(h, 0.0), z(), C::new(h, 0.0), z()]);
    assert!(log_negativity(&product).abs() < 1e-12);
    let mut mixture = [[z(); 4]; 4];
    mixture[0][0] = C::new(0.5, 0.0);
    mixture[3][3] = C::new(0.5, 0.0);
    assert!(log_negativity(&mixture).abs() < 1e-12);
    // cos t |00> + sin t |11>: log2(1 + sin 2t).
    for t in [0.1f64, 0.3, 0.7] {
        let v = projector([C::new(t.cos(), 0.0), z(), z(), C::new(0.0, t.sin())]);
        let expected = (1.0 + (2.0 * t).sin()).log2();
        assert!((log_negativity(&v) - expected).abs() < 1e-12, "t = {t}");
    }
    // Werner state p Phi+ + (1 - p) I/4: log2((1 + 3p)/2) above p = 1/3, 0 below.
    for p in [0.2f64, 0.5, 0.8] {
        let mut w = [[z(); 4]; 4];
        for i in 0..4 {
            for j in 0..4 {
                w[i][j] = bell[i][j] * p;
            }
            w[i][i] += C::new((1.0 - p) / 4.0, 0.0);
        }
        let expected = if p > 1.0 / 3.0 {
            ((1.0 + 3.0 * p) / 2.0).log2()
        } else {
            0.0
        };
        assert!((log_negativity(&w) - expected).abs() < 1e-12, "p = {p}");
    }
}

#[test]
fn bell_measures_pick_out_each_of_the_eight_states() {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let mut phase = C::new(1.0, 0.0);
    for k in 0..4 {
        let psi = projector([z(), C::new(h, 0.0), phase * h, z()]);
        let phi = projector([C::new(h, 0.0), z(), z(), phase * h]);
        let (mp, mf) = (BellMeasures::of(&psi), BellMeasures::of(&phi));
        for j in 0..4 {
            let want = if j == k {
                1.0
            } else if (j + 2) % 4 == k {
                0.0
            } else {
                0.5
            };
            assert!((mp.psi[j] - want).abs() < 1e-12 && mp.phi[j].abs() < 1e-12);
            assert!((mf.phi[j] - want).abs() < 1e-12 && mf.psi[j].abs() < 1e-12);
        }
        assert_eq!(mp.max().0, ["psi0", "psi1", "psi2", "psi3"][k]);
        phase *= C::i();
    }
    // k = {0, 2} and k = {1, 3} each form a basis: their measures sum to 1 on any state.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let u = random_unitary(&mut rng);
    let m = BellMeasures::of(&projector([u[0][0], u[1][0], u[2][0], u[3][0]]));
    assert!((m.psi[0] + m.psi[2] + m.phi[0] + m.phi[2] - 1.0).abs() < 1e-12);
    assert!((m.psi[1] + m.psi[3] + m.phi[1] + m.phi[3] - 1.0).abs() < 1e-12);
}

#[test]
fn square_entanglement_sees_captured_pieces_in_ancillas() {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    // A piece on a1, or captured into ancilla 0: a1 is maximally entangled with the ancilla.
    let state = State::from_amplitudes(
        vec![
            (Key::board(1), C::new(h, 0.0)),
            (
                Key {
                    board: 0,
                    ancillas: 1,
                },
                C::new(0.0, h),
            ),
        ],
        Normalization::RequireUnit,
    )
    .unwrap();
    let e = square_entanglement(&state, 0);
    assert!((e.occupied - 0.5).abs() < 1e-12);
    assert!((e.entropy - 1.0).abs() < 1e-12 && (e.log_negativity - 1.0).abs() < 1e-12);
    // Unequal split 0.9 / 0.1 between a1 and b1: entropy H(0.1), LN 2 log2(sqrt.9 + sqrt.1).
    let state = State::from_amplitudes(
        vec![
            (Key::board(1), C::new(0.9f64.sqrt(), 0.0)),
            (Key::board(2), C::new(0.1f64.sqrt(), 0.0)),
        ],
        Normalization::RequireUnit,
    )
    .unwrap();
    let e = square_entanglement(&state, 1);
    let entropy = -(0.9f64 * 0.9f64.log2() + 0.1 * 0.1f64.log2());
    assert!((e.entropy - entropy).abs() < 1e-12);
    assert!((e.log_negativity - 2.0 * (0.9f64.sqrt() + 0.1f64.sqrt()).log2()).abs() < 1e-12);
    // A classical square: nothing.
    let e = square_entanglement(&State::classical(1), 0);
    assert_eq!((e.occupied, e.entropy, e.log_negativity), (1.0, 0.0, 0.0));
}

#[test]
fn eq_38_naive_bound() {
    let naive = naive_superposition_bound();
    assert_eq!(naive, 10_139_684_107_326_071_075);
    assert_eq!(format!("{:.1e}", naive as f64), "1.0e19");
    assert_eq!(binomial(64, 32), 1_832_624_140_942_590_534);
}

#[test]
fn eq_39_40_refined_bound_and_the_papers_allocation() {
    let bound = superposition_upper_bound();
    assert_eq!(bound.refined, 791_949_874_793_910_336);
    assert_eq!(format!("{:.1e}", bound.refined as f64), "7.9e17");
    assert!(allocation_is_valid(&bound.white, &bound.black));
    assert_eq!(occupancy_bound(&bound.white, &bound.black), bound.refined);
    // The paper's zeta: pawns {0,0}, N = B = {3,2}, R = {24,10}, Q = K = {1,1}, both sides.
    let zeta = |squares, multiplicity| Zeta {
        squares,
        multiplicity,
    };
    let paper = [
        zeta(0, 0),
        zeta(3, 2),
        zeta(3, 2),
        zeta(24, 10),
        zeta(1, 1),
        zeta(1, 1),
    ];
    assert!(allocation_is_valid(&paper, &paper));
    assert_eq!(occupancy_bound(&paper, &paper), bound.refined);
    // Footnote 12: rooks and knights swapped give the same bound.
    let swapped = [
        zeta(0, 0),
        zeta(24, 10),
        zeta(3, 2),
        zeta(3, 2),
        zeta(1, 1),
        zeta(1, 1),
    ];
    assert_eq!(occupancy_bound(&swapped, &swapped), bound.refined);
    // The promotion rule binds: eleven rooks are not allowed.
    let eleven = [
        zeta(0, 0),
        zeta(3, 1),
        zeta(3, 2),
        zeta(24, 11),
        zeta(1, 1),
        zeta(1, 1),
    ];
    assert!(!allocation_is_valid(&eleven, &paper));
    assert_eq!(piece_value_size(24, 10), 4_540_386);
}

#[test]
fn figure_37_series() {
    let cells = figure37_series(10, 64);
    assert_eq!(cells.len(), 640);
    let at = |m: u32, s: u32| {
        cells
            .iter()
            .find(|c| c.multiplicity == m && c.squares == s)
            .unwrap()
            .log10_size
    };
    assert!((at(5, 40) - 760_099f64.log10()).abs() < 1e-12);
    assert!((at(10, 64) - 184_144_458_889f64.log10()).abs() < 1e-12);
    // The 10^6 contour: never crossed for m <= 4; at s = 43, 32, 27, 24, 22, 21 for m = 5..10.
    let crossing = |m: u32, level: f64| (1..=64).find(|&s| at(m, s) >= level);
    for m in 1..=4 {
        assert_eq!(crossing(m, 6.0), None);
    }
    let sixes: Vec<_> = (5..=10).map(|m| crossing(m, 6.0).unwrap()).collect();
    assert_eq!(sixes, [43, 32, 27, 24, 22, 21]);
    // The 10^9 contour appears from m = 8 (s = 53, 45, 40 for m = 8, 9, 10).
    let nines: Vec<_> = (1..=10).map(|m| crossing(m, 9.0)).collect();
    assert_eq!(nines[..7], [None; 7]);
    assert_eq!(nines[7..], [Some(53), Some(45), Some(40)]);
}
