//! Invariants: unitarity, exact undo, repeatable measurement, refusals that change nothing,
//! many ancillas, and results independent of the thread count.

use num_complex::Complex;
use qchess_sim::{Controls, Key, Normalization, Predicate, SimError, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn same<T: qchess_sim::Amplitude>(a: &State<T>, b: &State<T>) -> bool {
    let ea: Vec<_> = a.entries().collect();
    let eb: Vec<_> = b.entries().collect();
    ea == eb && a.ancilla_count() == b.ancilla_count()
}

/// Three distinct qubits among the first `n`.
fn three(rng: &mut ChaCha8Rng, n: u8) -> (u8, u8, u8) {
    let a = rng.random_range(0..n);
    let mut b = rng.random_range(0..n);
    while b == a {
        b = rng.random_range(0..n);
    }
    let mut c = rng.random_range(0..n);
    while c == a || c == b {
        c = rng.random_range(0..n);
    }
    (a, b, c)
}

/// One random unitary move on a 12-square board: jump, split, merge, slide, split/merge slide.
fn random_unitary(s: &mut State<f64>, rng: &mut ChaCha8Rng) {
    let (a, b, c) = three(rng, 12);
    let path = |rng: &mut ChaCha8Rng| -> u64 {
        let m: u64 = rng.random::<u64>() & 0xfff & rng.random::<u64>();
        m & !(1 << a | 1 << b | 1 << c)
    };
    match rng.random_range(0..6) {
        0 => s.iswap(a, b, Controls::NONE).unwrap(),
        1 => s.split(a, b, c, Controls::NONE).unwrap(),
        2 => s.merge(a, b, c, Controls::NONE).unwrap(),
        3 => {
            let p = path(rng);
            s.iswap(a, b, Controls::empty_path(p)).unwrap()
        }
        4 => {
            let (p1, p2) = (path(rng), path(rng));
            s.split_slide(a, b, c, p1, p2).unwrap()
        }
        _ => {
            let (p1, p2) = (path(rng), path(rng));
            s.merge_slide(a, b, c, p1, p2).unwrap()
        }
    }
}

#[test]
fn norm_stays_one_after_ten_thousand_random_unitaries() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut s = State::<f64>::classical(0b0000_0110_1101);
    for _ in 0..10_000 {
        random_unitary(&mut s, &mut rng);
    }
    assert!(
        (s.norm_sqr() - 1.0).abs() < 1e-12,
        "norm^2 = {}",
        s.norm_sqr()
    );
    assert!(s.len() > 1);
}

#[test]
fn split_then_matching_merge_is_identity() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut s = State::<f64>::classical(0b1011_0001);
    for _ in 0..40 {
        random_unitary(&mut s, &mut rng);
    }
    for _ in 0..200 {
        let before = s.clone();
        let (a, t1, t2) = three(&mut rng, 12);
        let ctl = Controls {
            zeros: 1 << 13,
            ones: 0,
        };
        s.split(a, t1, t2, ctl).unwrap();
        s.merge(t2, t1, a, ctl).unwrap();
        assert!((s.inner(&before).re - 1.0).abs() < 1e-12);
        let (p1, p2) = (rng.random::<u64>() & 0xfff, rng.random::<u64>() & 0xfff);
        let (p1, p2) = (p1 & !(1 << a | 1 << t1), p2 & !(1 << a | 1 << t2));
        s.split_slide(a, t1, t2, p1, p2).unwrap();
        s.merge_slide(t2, t1, a, p2, p1).unwrap();
        assert!((s.inner(&before).re - 1.0).abs() < 1e-12);
        assert_eq!(s.len(), before.len(), "cancellations drop every residue");
    }
}

#[test]
fn measuring_twice_gives_the_same_outcome() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for round in 0..200 {
        let mut s = State::<f64>::classical(0b1011);
        for _ in 0..10 {
            random_unitary(&mut s, &mut rng);
        }
        let q = (round % 12) as u8;
        let first = s.measure(Predicate::One(q), &mut rng).unwrap();
        assert_eq!(
            s.probability(Predicate::One(q)),
            if first { 1.0 } else { 0.0 }
        );
        for _ in 0..5 {
            assert_eq!(s.measure(Predicate::One(q), &mut rng).unwrap(), first);
        }
        assert!((s.norm_sqr() - 1.0).abs() < 1e-12);
    }
}

#[test]
fn measurement_frequencies_follow_probabilities() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut base = State::<f64>::classical(0b01);
    base.sqrt_iswap(0, 1, Controls::NONE).unwrap();
    base.sqrt_iswap(0, 2, Controls::NONE).unwrap(); // p(q0) = 1/4
    let n = 4000;
    let hits = (0..n)
        .filter(|_| base.clone().measure(Predicate::One(0), &mut rng).unwrap())
        .count();
    let f = hits as f64 / f64::from(n);
    assert!((f - 0.25).abs() < 0.03, "frequency {f}");
}

#[test]
fn forcing_a_zero_probability_outcome_errors_and_changes_nothing() {
    let mut s = State::<f64>::classical(0b001);
    s.split(0, 1, 2, Controls::NONE).unwrap();
    let before = s.clone();
    let err = s.force(Predicate::One(0), true).unwrap_err();
    assert_eq!(
        err,
        SimError::ZeroProbabilityOutcome {
            outcome: true,
            probability: 0.0
        }
    );
    assert!(same(&before, &s));
    assert!(err.to_string().contains("probability"));
    let err = s.force(Predicate::AllZero(0b110), true).unwrap_err();
    assert!(matches!(err, SimError::ZeroProbabilityOutcome { .. }));
    assert!(same(&before, &s));
    assert!((s.force(Predicate::One(1), true).unwrap() - 0.5).abs() < 1e-15);
    assert_eq!(s.len(), 1);
}

#[test]
fn exceeding_the_cap_errors_and_changes_nothing() {
    let mut s = State::<f64>::classical(0b1).with_cap(3);
    s.split(0, 1, 2, Controls::NONE).unwrap();
    s.sqrt_iswap(1, 3, Controls::NONE).unwrap(); // 3 states
    let before = s.clone();
    for r in [
        s.sqrt_iswap(2, 4, Controls::NONE),
        s.split(2, 4, 5, Controls::NONE),
        s.merge(4, 2, 6, Controls::NONE),
        s.split_slide(2, 4, 5, 1 << 9, 1 << 10),
        s.merge_slide(4, 2, 6, 1 << 9, 1 << 10),
        // Its iSwap^-1 half changes the state before the sqrt half is refused: undone.
        s.merge(
            2,
            4,
            1,
            Controls {
                zeros: 1 << 9,
                ones: 0,
            },
        ),
    ] {
        assert_eq!(r, Err(SimError::CapExceeded { needed: 4, cap: 3 }));
        assert!(same(&before, &s));
    }
    assert!(
        SimError::CapExceeded { needed: 4, cap: 3 }
            .to_string()
            .contains("4 basis states")
    );
    // Gates that do not grow the state still work at the cap; an exact undo fits.
    s.iswap(2, 4, Controls::empty_path(1 << 9)).unwrap();
    s.sqrt_iswap_inv(1, 3, Controls::NONE).unwrap();
    assert_eq!(s.len(), 2);
}

#[test]
fn bad_input_errors_and_changes_nothing() {
    let mut s = State::<f64>::classical(0b11);
    s.sqrt_iswap(1, 2, Controls::NONE).unwrap();
    let before = s.clone();
    let errs = [
        s.iswap(0, 64, Controls::NONE),
        s.iswap(3, 3, Controls::NONE),
        s.sqrt_iswap(0, 1, Controls { zeros: 1, ones: 0 }),
        s.split(0, 1, 1, Controls::NONE),
        s.merge(0, 1, 2, Controls::empty_path(1 << 2)),
        s.split_slide(0, 1, 2, 1 << 0, 0),
        s.merge_slide(0, 1, 2, 0, 1 << 2),
        s.flip(70),
        s.phase(Predicate::One(0), Complex::new(2.0, 0.0)),
        s.phase(Predicate::One(0), Complex::new(f64::NAN, 0.0)),
        s.phase(
            Predicate::Equals { mask: 1, value: 2 },
            Complex::new(1.0, 0.0),
        ),
        s.force(Predicate::One(64), true).map(|_| ()),
    ];
    for e in errs {
        let e = e.unwrap_err();
        assert!(!e.to_string().is_empty());
        assert!(same(&before, &s), "{e}");
    }
    assert_eq!(s.capture(99), Err(SimError::QubitOutOfRange { qubit: 99 }));
    assert_eq!(s.probability(Predicate::One(64)), 0.0);
    let z = Complex::new(0.0, 0.0);
    assert_eq!(
        State::<f64>::from_amplitudes(vec![(Key::board(1), z)], Normalization::Renormalize)
            .unwrap_err(),
        SimError::ZeroNorm
    );
    assert!(matches!(
        State::<f64>::from_amplitudes(
            vec![(Key::board(1), Complex::new(f64::INFINITY, 0.0))],
            Normalization::Renormalize
        ),
        Err(SimError::NonFinite { .. })
    ));
    assert!(matches!(
        State::<f64>::from_amplitudes(
            vec![(Key::board(1), Complex::new(0.5, 0.0))],
            Normalization::RequireUnit
        ),
        Err(SimError::NotNormalized { .. })
    ));
    // Duplicates are summed.
    let h = Complex::new(0.5, 0.0);
    let d = State::<f64>::from_amplitudes(
        vec![(Key::board(1), h), (Key::board(1), h)],
        Normalization::RequireUnit,
    )
    .unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(d.amplitude(Key::board(1)).re, 1.0);
}

#[test]
fn more_than_64_ancillas_then_refusal_past_128() {
    // A piece repeatedly captured: each capture moves it into a fresh ancilla, the board
    // square is refilled by a flip, and half the branches stay behind each time.
    let mut s = State::<f64>::classical(0b1);
    s.sqrt_iswap(0, 1, Controls::NONE).unwrap();
    for i in 0..qchess_sim::MAX_ANCILLAS {
        assert_eq!(s.capture(0).unwrap(), i);
        s.flip_controlled(0, Controls { zeros: 0, ones: 0 })
            .unwrap();
    }
    assert_eq!(s.ancilla_count(), 128);
    assert!((s.norm_sqr() - 1.0).abs() < 1e-12);
    // The branch where a1 was occupied from the start went through every capture.
    let top = Key {
        board: 1,
        ancillas: u128::MAX,
    };
    assert!(s.amplitude(top).norm() > 0.0);
    let entries: Vec<Key> = s.entries().map(|(k, _)| k).collect();
    assert!(entries.windows(2).all(|w| w[0] < w[1]), "canonical order");
    assert!(
        entries
            .iter()
            .any(|k| k.ancillas >> 64 != 0 && k.ancillas & 1 == 1)
    );
    let before = s.clone();
    assert_eq!(s.capture(0), Err(SimError::TooManyAncillas { max: 128 }));
    assert!(same(&before, &s));
    // Ancilla sectors never interfere: a sqrt on the board acts inside each sector.
    s.sqrt_iswap(0, 1, Controls::NONE).unwrap();
    assert!((s.norm_sqr() - 1.0).abs() < 1e-12);
}

/// A random state over `n` entries with keys in 40 scattered bits, in `sectors` ancilla
/// sectors (one sector exercises the parallel key-range path of a single sector).
fn big_state(n: usize, seed: u64, sectors: u8) -> State<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let entries: Vec<(Key, Complex<f64>)> = (0..n)
        .map(|_| {
            let board = rng.random::<u64>() & 0x0f0f_ffff_ff0f_f0ff;
            let anc = u128::from(rng.random_range(0..sectors));
            (
                Key {
                    board,
                    ancillas: anc,
                },
                Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5),
            )
        })
        .collect();
    State::from_amplitudes(entries, Normalization::Renormalize).unwrap()
}

fn workload(s: &mut State<f64>) -> (Vec<f64>, Vec<(u64, f64)>) {
    let mut out = Vec::new();
    s.split(3, 17, 42, Controls::NONE).unwrap();
    s.sqrt_iswap(0, 63, Controls::empty_path(1 << 9)).unwrap();
    s.merge(42, 17, 3, Controls::NONE).unwrap();
    s.iswap(8, 40, Controls::NONE).unwrap();
    s.split_slide(5, 12, 33, 1 << 20, 1 << 21).unwrap();
    // Slides that sum the masses they move: by blocks (the path above the lower square)
    // and entry by entry (a path bit below it); the sums are those of the entries that move.
    for (a, b, path) in [(13u8, 44u8, 1u64 << 30), (50, 36, 1 << 2)] {
        let moving = |from: u8, to: u8| -> f64 {
            s.entries()
                .filter(|(k, _)| k.board >> from & 1 == 1 && k.board >> to & 1 == 0)
                .filter(|(k, _)| k.board & path == 0)
                .map(|(_, v)| v.norm_sqr())
                .sum()
        };
        let naive = [moving(a, b), moving(b, a)];
        let flows = s
            .iswap_with_flows(a, b, Controls::empty_path(path))
            .unwrap();
        let flows = flows.expect("a large state's slide sums its flows");
        assert!(naive[0] > 0.01 && naive[1] > 0.01, "{naive:?}");
        for (f, n) in flows.iter().zip(naive) {
            assert!((f - n).abs() < 1e-12, "{flows:?} against {naive:?}");
        }
        out.extend(flows);
    }
    out.push(s.probability(Predicate::One(12)));
    out.push(s.norm_sqr());
    s.force(Predicate::One(5), false).unwrap();
    out.extend(s.qubit_probabilities());
    (out, s.board_distribution(Some(1000)))
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    for sectors in [1, 3] {
        let base = big_state(400_000, 1, sectors);
        same_for_any_pool(&base);
    }
}

fn same_for_any_pool(base: &State<f64>) {
    // Every pool really runs its threads, however loaded the test machine is.
    qchess_sim::set_adaptive_threads(false);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = base.clone();
            let (nums, dist) = workload(&mut s);
            let entries: Vec<(Key, u64, u64)> = s
                .entries()
                .map(|(k, a)| (k, a.re.to_bits(), a.im.to_bits()))
                .collect();
            (
                nums.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                dist,
                entries,
            )
        })
    };
    let one = run(1);
    let two = run(2);
    let four = run(4);
    assert_eq!(one, two);
    assert_eq!(one, four);
}

#[test]
fn f32_state_tracks_f64_over_random_moves() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut s64 = State::<f64>::classical(0b1010_0110_0101);
    let mut s32 = State::<f32>::classical(0b1010_0110_0101);
    for _ in 0..300 {
        let (a, b, c) = three(&mut rng, 12);
        match rng.random_range(0..3) {
            0 => {
                s64.iswap(a, b, Controls::NONE).unwrap();
                s32.iswap(a, b, Controls::NONE).unwrap();
            }
            1 => {
                s64.split(a, b, c, Controls::NONE).unwrap();
                s32.split(a, b, c, Controls::NONE).unwrap();
            }
            _ => {
                s64.merge(a, b, c, Controls::NONE).unwrap();
                s32.merge(a, b, c, Controls::NONE).unwrap();
            }
        }
    }
    let (p64, p32) = (s64.qubit_probabilities(), s32.qubit_probabilities());
    for q in 0..12 {
        assert!(
            (p64[q] - p32[q]).abs() < 1e-5,
            "qubit {q}: {} vs {}",
            p64[q],
            p32[q]
        );
    }
    assert!((s32.norm_sqr() - 1.0).abs() < 1e-4);
    assert!(s32.bytes() / s32.len().max(1) >= 16);
}

/// The controlled iSwap of bits `a`, `b` where every square of `path` is empty, computed by
/// flipping each moving key (times `i`) and sorting.
fn flip_and_sort(s: &State<f64>, a: u8, b: u8, path: u64) -> Vec<(Key, Complex<f64>)> {
    let ab = (1u64 << a) | (1u64 << b);
    let mut e: Vec<(Key, Complex<f64>)> = s
        .entries()
        .map(|(k, v)| {
            let board = k.board;
            if (board >> a ^ board >> b) & 1 == 1 && board & path == 0 {
                let flipped = Key {
                    board: board ^ ab,
                    ancillas: k.ancillas,
                };
                (flipped, v * Complex::new(0.0, 1.0))
            } else {
                (k, v)
            }
        })
        .collect();
    e.sort_by_key(|x| x.0);
    e
}

/// Large states take the in-place controlled-iSwap kernel (small ones the merge kernel), as
/// tasks of whole key groups for the higher bit (at most 16 384 entries where the groups
/// allow) gathered into jobs: groups of about one entry (bits 4 and 37), about 12 500 entries
/// a sector (bits 13 and 51: only bits 56-59 of `big_state` vary above 51) and one group a
/// sector (bits 3 and 59). Paths between the gate bits, on both sides of the higher one (the
/// short tasks go by blocks: `kernels::permute::permute_groups`), and on both sides of the
/// lower one (entry by entry). On one and three sectors and pools of one and two threads the
/// result must be the flip-and-sort, the inverse must give back every amplitude exactly, and
/// the peak stays under 1.5x the state.
#[test]
fn large_controlled_iswap_matches_flip_and_sort() {
    qchess_sim::set_adaptive_threads(false);
    for sectors in [1, 3] {
        let base = big_state(200_000, 5, sectors);
        for (lo, hi, path) in [
            (4u8, 37u8, 1u64 << 26),
            (13, 51, 1 << 30),
            (3, 59, 1 << 45),
            (13, 51, 1 << 57 | 1 << 30),
            (4, 37, 1 << 2 | 1 << 45),
        ] {
            let want = flip_and_sort(&base, lo, hi, path);
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut s = base.clone();
                let controls = Controls::empty_path(path);
                pool.install(|| s.iswap(hi, lo, controls)).unwrap();
                let got: Vec<(Key, Complex<f64>)> = s.entries().collect();
                let case = format!("sectors {sectors}, bits {lo} {hi}, threads {threads}");
                assert_eq!(got, want, "{case}");
                assert!(s.peak_bytes() as f64 <= 1.5 * base.bytes() as f64, "{case}");
                pool.install(|| s.iswap_inv(lo, hi, controls)).unwrap();
                let back: Vec<(Key, Complex<f64>)> = s.entries().collect();
                let orig: Vec<(Key, Complex<f64>)> = base.entries().collect();
                assert_eq!(back, orig, "{case}: the inverse");
            }
        }
    }
}
