//! The paper's equations as exact equalities on `State<Exact>` (Cantwell 2019 with the
//! errata of rules-notes E1, E4, E5: the same cases as `paper.rs`, compared with `==`), and
//! random gate sequences run in exact and f64 arithmetic side by side.

use num_complex::Complex;
use num_traits::Zero;
use qchess_sim::{Controls, Exact, Key, Predicate, Probability, State};
use rand::{Rng, SeedableRng};

type E = Complex<Exact>;

fn h() -> Exact {
    Exact::frac_1_sqrt_2()
}
fn one() -> Exact {
    Exact::ONE
}
fn z() -> Exact {
    Exact::ZERO
}
fn e(re: Exact, im: Exact) -> E {
    Complex::new(re, im)
}
fn kb(board: u64) -> Key {
    Key::board(board)
}
fn p(s: &str) -> Probability {
    s.parse().unwrap()
}

/// Asserts the state is exactly `want` (every listed amplitude equal, nothing else stored).
fn assert_exact(s: &State<Exact>, want: &[(Key, E)]) {
    for (k, a) in want {
        assert_eq!(s.amplitude(*k), *a, "{k:?}");
    }
    let stored: Vec<Key> = s.entries().map(|(k, _)| k).collect();
    assert_eq!(stored.len(), want.len(), "stored {stored:?}");
}

fn ket3(bits: u8, q: [u8; 3]) -> u64 {
    (0..3)
        .filter(|i| bits >> i & 1 == 1)
        .fold(0, |m, i| m | 1u64 << q[i])
}

#[test]
fn eq4a_eq4b_exact() {
    let (a, b) = (3u8, 50u8);
    let mut s = State::<Exact>::classical(1 << a);
    s.iswap(a, b, Controls::NONE).unwrap();
    assert_exact(&s, &[(kb(1 << b), e(z(), one()))]);
    let mut s = State::<Exact>::classical(1 << a);
    s.sqrt_iswap(a, b, Controls::NONE).unwrap();
    assert_exact(&s, &[(kb(1 << a), e(h(), z())), (kb(1 << b), e(z(), h()))]);
    // Twice is the iSwap, exactly: the |01> term cancels to an exact zero and is dropped.
    s.sqrt_iswap(a, b, Controls::NONE).unwrap();
    assert_exact(&s, &[(kb(1 << b), e(z(), one()))]);
    s.iswap_inv(a, b, Controls::NONE).unwrap();
    assert_exact(&s, &[(kb(1 << a), e(one(), z()))]);
}

/// eq. 7 / 8a-8f (8e, 8f as corrected by E5) and eq. 10 / 11a-11f (11e corrected).
#[test]
fn eq8_and_eq11_exact_on_each_basis_state() {
    let q = [10u8, 2, 33];
    let m = |x: Exact| -x;
    let split: [(u8, Vec<(u8, E)>); 8] = [
        (0b000, vec![(0b000, e(one(), z()))]),
        (0b001, vec![(0b010, e(z(), h())), (0b100, e(z(), h()))]),
        (0b010, vec![(0b010, e(h(), z())), (0b100, e(m(h()), z()))]),
        (0b100, vec![(0b001, e(z(), one()))]),
        (0b011, vec![(0b110, e(z(), one()))]),
        (0b101, vec![(0b011, e(m(h()), z())), (0b101, e(h(), z()))]),
        (0b110, vec![(0b011, e(z(), h())), (0b101, e(z(), h()))]),
        (0b111, vec![(0b111, e(one(), z()))]),
    ];
    for (input, want) in split {
        let mut s = State::<Exact>::classical(ket3(input, q));
        s.split(q[0], q[1], q[2], Controls::NONE).unwrap();
        let want: Vec<(Key, E)> = want.iter().map(|&(b, a)| (kb(ket3(b, q)), a)).collect();
        assert_exact(&s, &want);
        // The merge that inverts it returns the basis state exactly.
        s.merge(q[2], q[1], q[0], Controls::NONE).unwrap();
        assert_exact(&s, &[(kb(ket3(input, q)), e(one(), z()))]);
    }
    let q = [40u8, 9, 12]; // t, s2, s1
    let merge: [(u8, Vec<(u8, E)>); 8] = [
        (0b000, vec![(0b000, e(one(), z()))]),
        (0b001, vec![(0b100, e(z(), m(one())))]),
        (0b010, vec![(0b001, e(z(), m(h()))), (0b010, e(h(), z()))]),
        (
            0b100,
            vec![(0b001, e(z(), m(h()))), (0b010, e(m(h()), z()))],
        ),
        (
            0b011,
            vec![(0b101, e(m(h()), z())), (0b110, e(z(), m(h())))],
        ),
        (0b101, vec![(0b101, e(h(), z())), (0b110, e(z(), m(h())))]),
        (0b110, vec![(0b011, e(z(), m(one())))]),
        (0b111, vec![(0b111, e(one(), z()))]),
    ];
    for (input, want) in merge {
        let mut s = State::<Exact>::classical(ket3(input, q));
        s.merge(q[2], q[1], q[0], Controls::NONE).unwrap();
        let want: Vec<(Key, E)> = want.iter().map(|&(b, a)| (kb(ket3(b, q)), a)).collect();
        assert_exact(&s, &want);
    }
}

/// eq. 9 and 12: the slide blocks, exactly, and fig. 17/19 with amplitudes 3/5 and 4/5
/// (not dyadic: given as an unnormalised 3|a1> + 4|a1 a2>, N = 25).
#[test]
fn eq9_eq12_and_fig17_exact() {
    let (s0, t1, t2) = (0u8, 16u8, 2u8);
    let (p1, p2) = (1u64 << 8, 1u64 << 1);
    let mut st = State::<Exact>::classical(1 << s0);
    st.split_slide(s0, t1, t2, p1, p2).unwrap();
    assert_exact(
        &st,
        &[(kb(1 << t1), e(z(), h())), (kb(1 << t2), e(z(), h()))],
    );
    st.merge_slide(t2, t1, s0, p2, p1).unwrap();
    assert_exact(&st, &[(kb(1 << s0), e(one(), z()))]);
    let three = Exact::from_dyadic(3, 0);
    let four = Exact::from_dyadic(4, 0);
    let mut s = State::<Exact>::from_amplitudes(
        vec![(kb(1), e(three, z())), (kb(1 | 1 << 8), e(four, z()))],
        qchess_sim::Normalization::Renormalize, // exact states stay unnormalised
    )
    .unwrap();
    assert_eq!(s.norm_exact().unwrap(), p("25"));
    s.split_slide(0, 16, 2, 1 << 8, 1 << 1).unwrap();
    assert_exact(
        &s,
        &[
            (kb(1 << 16), e(z(), three * h())),
            (kb(1 << 2), e(z(), three * h())),
            (kb(1 << 2 | 1 << 8), e(z(), four)),
        ],
    );
    assert_eq!(s.probability_exact(Predicate::One(16)).unwrap(), p("9/50"));
    s.merge_slide(2, 16, 0, 1 << 1, 1 << 8).unwrap();
    assert_exact(
        &s,
        &[(kb(1), e(three, z())), (kb(1 | 1 << 8), e(four, z()))],
    );
}

/// Section 11.2 (E1): the interference term on a2 is exactly 0, and the probabilities are
/// exactly 3/8 + sqrt2/4, 1/4 and 3/8 - sqrt2/4.
#[test]
fn section_11_2_interference_exact() {
    let (a1, b1, a2, b2) = (0u8, 1u8, 8u8, 9u8);
    let half = Exact::from_dyadic(1, 1);
    let r = Exact::new(0, 1, 2); // 1/(2 sqrt2) = sqrt2/4
    let mut s = State::<Exact>::classical(1 << a1);
    s.split(a1, a2, b1, Controls::NONE).unwrap();
    s.split(a2, a1, b2, Controls::NONE).unwrap();
    assert_exact(
        &s,
        &[
            (kb(1 << a1), e(-half, z())),
            (kb(1 << b2), e(-half, z())),
            (kb(1 << b1), e(z(), h())),
        ],
    );
    s.split(b1, a1, b2, Controls::NONE).unwrap();
    assert_exact(
        &s,
        &[
            (kb(1 << a1), e(-(half + r), z())),
            (kb(1 << b1), e(z(), -half)),
            (kb(1 << b2), e(-(half - r), z())),
        ],
    );
    assert_eq!(s.amplitude(kb(1 << a2)), e(z(), z()));
    assert!(s.probability_exact(Predicate::One(a2)).unwrap().is_zero());
    assert_eq!(
        s.probability_exact(Predicate::One(a1)).unwrap(),
        p("3/8+1/4*sqrt2")
    );
    assert_eq!(s.probability_exact(Predicate::One(b1)).unwrap(), p("1/4"));
    assert_eq!(
        s.probability_exact(Predicate::One(b2)).unwrap(),
        p("3/8-1/4*sqrt2")
    );
    assert_eq!(s.norm_exact().unwrap(), p("1"));
    // The f64 read-outs of the exact state round the exact values once.
    assert!((s.probability(Predicate::One(a1)) - 0.7285533905932737).abs() < 1e-16);
    assert_eq!(s.probability(Predicate::One(a2)), 0.0);
}

/// eq. 45-48 (E4) and 49-51: Bell states, exactly, through captures.
#[test]
fn eq45_to_51_bell_states_exact() {
    let (a1, b1, a2) = (0u8, 1u8, 8u8);
    let mut s = State::<Exact>::classical(1 << a1);
    s.split(a1, a2, b1, Controls::NONE).unwrap();
    s.iswap(b1, a1, Controls::NONE).unwrap();
    assert_exact(
        &s,
        &[(kb(1 << a2), e(z(), h())), (kb(1 << a1), e(-h(), z()))],
    );
    s.iswap(b1, a2, Controls::NONE).unwrap(); // 45c: |Psi+> up to -1/sqrt2
    assert_exact(
        &s,
        &[(kb(1 << b1), e(-h(), z())), (kb(1 << a1), e(-h(), z()))],
    );
    s.iswap(a1, a2, Controls::NONE).unwrap();
    s.iswap(a2, a1, Controls::NONE).unwrap(); // 47b: |Psi->
    assert_exact(
        &s,
        &[(kb(1 << b1), e(-h(), z())), (kb(1 << a1), e(h(), z()))],
    );

    let (c1, b1, b2, b3, a3) = (2u8, 1u8, 9u8, 17u8, 16u8);
    let board = |sq: &[u8]| sq.iter().fold(0u64, |m, &q| m | 1 << q);
    let key = |x: u128, sq: &[u8]| Key {
        board: board(sq),
        ancillas: x,
    };
    let mut s = State::<Exact>::classical(board(&[b3, b1, c1]));
    s.split(b3, b2, a3, Controls::NONE).unwrap(); // 49a
    assert_eq!(s.capture(a3).unwrap(), 0); // 49b
    s.iswap(c1, a3, Controls::empty_path(1 << b2)).unwrap();
    assert_exact(
        &s,
        &[
            (key(0, &[b2, b1, c1]), e(z(), h())),
            (key(0b01, &[a3, b1]), e(z(), -h())),
        ],
    );
    assert_eq!(s.capture(a3).unwrap(), 1); // 49c
    s.iswap(b1, a3, Controls::NONE).unwrap();
    s.iswap(b2, b1, Controls::NONE).unwrap(); // 49d
    assert_exact(
        &s,
        &[
            (key(0, &[a3, b1, c1]), e(z(), -h())),
            (key(0b11, &[a3]), e(z(), h())),
        ],
    );
    s.iswap(b1, b2, Controls::NONE).unwrap(); // 51
    s.iswap(b2, b1, Controls::NONE).unwrap();
    assert_exact(
        &s,
        &[
            (key(0, &[a3, b1, c1]), e(z(), h())),
            (key(0b11, &[a3]), e(z(), h())),
        ],
    );
    let d = s.board_distribution_exact(None).unwrap();
    assert_eq!(
        d,
        vec![(board(&[a3]), p("1/2")), (board(&[a3, b1, c1]), p("1/2"))]
    );
}

#[test]
fn forced_outcomes_and_exact_sampling() {
    let mut s = State::<Exact>::classical(0b001);
    s.split(0, 1, 2, Controls::NONE).unwrap();
    let before = s.clone();
    // Exactly zero probability: an error, nothing changed.
    assert!(s.force_exact(Predicate::One(0), true).is_err());
    assert!(s.force(Predicate::One(0), true).is_err());
    assert_eq!(s.len(), before.len());
    assert_eq!(s.force_exact(Predicate::One(2), false).unwrap(), p("1/2"));
    assert_exact(&s, &[(kb(0b010), e(z(), Exact::sqrt2()))]); // rescaled by 2
    assert_eq!(s.norm_exact().unwrap(), p("2"));
    // Sampling: the outcome is r < p with the exact p; both outcomes occur over seeds, and
    // the same seed replays the same outcome.
    let mut seen = [false; 2];
    for seed in 0..40 {
        let mut a = before.clone();
        let mut b = before.clone();
        let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (o, pr) = a.measure_exact(Predicate::One(1), &mut r1).unwrap();
        assert_eq!(b.measure(Predicate::One(1), &mut r2).unwrap(), o);
        let mut r3 = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        assert_eq!(o, r3.random::<f64>() < 0.5);
        assert_eq!(pr, p("1/2"));
        seen[usize::from(o)] = true;
    }
    assert_eq!(seen, [true, true]);
}

/// `project_onto` (a distributed state's per-piece projection, given the global mass) keeps
/// an exact state exact and unnormalised, as `force_exact` does: the same entries up to one
/// common factor, so the same exact probabilities, however many projections follow (it
/// multiplied by the rounded `1/sqrt(mass)`, whose 53-bit mantissa overflowed the `i128`
/// coefficients by the third projection).
#[test]
fn a_projection_given_its_mass_keeps_an_exact_state_exact() {
    let mut s = State::<Exact>::classical(0b1);
    for q in 0..8u8 {
        s.sqrt_iswap(q, q + 1, Controls::NONE).unwrap();
    }
    let mut forced = s.clone();
    for q in [8u8, 3, 5, 1] {
        let (yes, all) = s.masses(Predicate::One(q)).unwrap();
        s.project_onto(Predicate::One(q), false, all - yes).unwrap();
        forced.force_exact(Predicate::One(q), false).unwrap();
        assert_eq!(s.len(), forced.len(), "qubit {q}");
        for qubit in 0..10u8 {
            assert_eq!(
                s.probability_exact(Predicate::One(qubit)).unwrap(),
                forced.probability_exact(Predicate::One(qubit)).unwrap(),
                "qubit {qubit} after projecting qubit {q}"
            );
        }
    }
    // Unnormalised: the gates' exact values, no rounded factor, none overflowed; the norm is
    // the kept mass of the state before the projections.
    assert!(
        s.entries()
            .all(|(_, a)| !a.re.is_poisoned() && !a.im.is_poisoned())
    );
    let mut unprojected = State::<Exact>::classical(0b1);
    for q in 0..8u8 {
        unprojected.sqrt_iswap(q, q + 1, Controls::NONE).unwrap();
    }
    let kept: Vec<(Key, E)> = unprojected
        .entries()
        .filter(|(k, _)| [8u8, 3, 5, 1].iter().all(|q| k.board >> q & 1 == 0))
        .collect();
    assert_exact(&s, &kept);
}

/// `project_boards_with_mass` (a distributed state's per-piece board projection) keeps an
/// exact state exact as `project_boards` does: the same exact probabilities after several
/// projections, no coefficient overflowed (the rounded `1/sqrt(mass)` overflowed them).
#[test]
fn a_board_projection_given_its_mass_keeps_an_exact_state_exact() {
    let pieces = [0u8, 9, 20, 40, 3, 17];
    let mut s = State::<Exact>::classical(pieces.iter().map(|q| 1u64 << q).sum());
    for q in pieces {
        s.sqrt_iswap(q, q + 1, Controls::NONE).unwrap();
    }
    let mut local = s.clone();
    for q in [21u8, 1, 41, 10] {
        let keep = move |b: u64| b >> q & 1 == 0;
        let (yes, all) = s.masses(Predicate::One(q)).unwrap();
        s.project_boards_with_mass(&keep, all - yes).unwrap();
        local.project_boards(&keep).unwrap();
        assert_eq!(s.len(), local.len(), "qubit {q}");
        for qubit in 0..42u8 {
            assert_eq!(
                s.probability_exact(Predicate::One(qubit)).unwrap(),
                local.probability_exact(Predicate::One(qubit)).unwrap(),
                "qubit {qubit} after projecting qubit {q}"
            );
        }
    }
    assert!(
        s.entries()
            .all(|(_, a)| !a.re.is_poisoned() && !a.im.is_poisoned())
    );
}

#[test]
fn overflow_is_an_error_that_changes_nothing() {
    // A huge amplitude leaves no headroom: the gate is refused before anything changes.
    let big = Exact::from_dyadic(1i128 << 124, 0);
    let mut s = State::<Exact>::from_amplitudes(
        vec![(kb(1), e(big, z())), (kb(2), e(one(), z()))],
        qchess_sim::Normalization::Renormalize,
    )
    .unwrap();
    let before: Vec<(Key, E)> = s.entries().collect();
    assert!(matches!(
        s.sqrt_iswap(0, 1, Controls::NONE),
        Err(qchess_sim::SimError::ExactOverflow { .. })
    ));
    assert_eq!(s.entries().collect::<Vec<_>>(), before);
    // Long games: split/measure cycles keep coefficients small (powers of two divided out).
    let mut s = State::<Exact>::classical(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for i in 0..500 {
        let (a, b) = ((i % 60) as u8, (i % 60 + 1) as u8);
        let at = s.entries().next().unwrap().0.board;
        let from = at.trailing_zeros() as u8;
        let to = if from == a { b } else { a };
        s.sqrt_iswap(from, to, Controls::NONE).unwrap();
        s.measure_exact(Predicate::One(to), &mut rng).unwrap();
        assert_eq!(s.len(), 1);
    }
    let (_, a) = s.entries().next().unwrap();
    let k = |x: Exact| x.parts().map_or(0, |p| p.2);
    assert!(k(a.re) + k(a.im) <= 1, "{a:?}");
}

/// Random sequences of 200 operations (splits, merges, slides, jumps, captures, forced
/// outcomes and measurements) in exact and f64 arithmetic: the exact state divided by
/// sqrt(N) equals the f64 state to 1e-12 at every step, and the exact probabilities round to
/// the f64 ones.
#[test]
fn exact_and_f64_agree_on_random_sequences() {
    const QS: [u8; 6] = [0, 1, 9, 20, 40, 63];
    for seed in 0..6u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let start = 1u64 << QS[0] | 1 << QS[3];
        let mut x = State::<Exact>::classical(start);
        let mut f = State::<f64>::classical(start);
        for step in 0..200 {
            let pick = |rng: &mut rand_chacha::ChaCha8Rng, n: usize| -> Vec<u8> {
                let mut v = QS.to_vec();
                for i in 0..n {
                    let j = rng.random_range(i..v.len());
                    v.swap(i, j);
                }
                v.truncate(n);
                v
            };
            let op = rng.random_range(0..9);
            let q = pick(&mut rng, 4);
            let path = 1u64 << q[3];
            let (rx, rf) = match op {
                0 => (
                    x.split(q[0], q[1], q[2], Controls::NONE),
                    f.split(q[0], q[1], q[2], Controls::NONE),
                ),
                1 => (
                    x.merge(q[0], q[1], q[2], Controls::NONE),
                    f.merge(q[0], q[1], q[2], Controls::NONE),
                ),
                2 => (
                    x.split_slide(q[0], q[1], q[2], path, 0),
                    f.split_slide(q[0], q[1], q[2], path, 0),
                ),
                3 => (
                    x.merge_slide(q[0], q[1], q[2], 0, path),
                    f.merge_slide(q[0], q[1], q[2], 0, path),
                ),
                4 => (
                    x.iswap(q[0], q[1], Controls::empty_path(path)),
                    f.iswap(q[0], q[1], Controls::empty_path(path)),
                ),
                5 if x.ancilla_count() < 6 => {
                    (x.capture(q[0]).map(|_| ()), f.capture(q[0]).map(|_| ()))
                }
                6 => {
                    let o = rng.random::<bool>();
                    (
                        x.force(Predicate::One(q[0]), o).map(|_| ()),
                        f.force(Predicate::One(q[0]), o).map(|_| ()),
                    )
                }
                7 => {
                    let r = rng.random::<u64>();
                    let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(r);
                    let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(r);
                    let a = x.measure(Predicate::One(q[0]), &mut r1);
                    let b = f.measure(Predicate::One(q[0]), &mut r2);
                    assert_eq!(a, b, "seed {seed} step {step}");
                    (a.map(|_| ()), b.map(|_| ()))
                }
                _ => (
                    x.sqrt_iswap_inv(q[0], q[1], Controls::empty_path(path)),
                    f.sqrt_iswap_inv(q[0], q[1], Controls::empty_path(path)),
                ),
            };
            assert_eq!(rx.is_ok(), rf.is_ok(), "seed {seed} step {step} op {op}");
            let n = x.norm_exact().unwrap().to_f64();
            let nf = f.norm_sqr();
            for (k, a) in x.entries() {
                let want = f.amplitude(k) / nf.sqrt();
                let got = Complex::new(a.re.to_f64(), a.im.to_f64()) / n.sqrt();
                assert!(
                    (got - want).norm() < 1e-12,
                    "seed {seed} step {step}: {k:?}"
                );
            }
            for (k, a) in f.entries() {
                if a.norm() > 1e-9 {
                    assert!(!x.amplitude(k).is_zero(), "seed {seed} step {step}: {k:?}");
                }
            }
            for &qb in &QS {
                let pe = x.probability_exact(Predicate::One(qb)).unwrap().to_f64();
                let pf = f.probability(Predicate::One(qb));
                assert!((pe - pf).abs() < 1e-12, "seed {seed} step {step} q {qb}");
            }
        }
    }
}
