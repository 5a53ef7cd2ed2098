//! Random sequences of every operation agree with the dense reference to 1e-12.

use crate::common;

use common::*;
use proptest::prelude::*;
use qchess_sim::{Controls, Key, Predicate, SimError, State};

#[derive(Clone, Debug)]
enum Op {
    Iswap(u8, u8, Controls, bool),
    Sqrt(u8, u8, Controls, bool),
    Split(u8, u8, u8, Controls),
    Merge(u8, u8, u8, Controls),
    SplitSlide(u8, u8, u8, u64, u64),
    MergeSlide(u8, u8, u8, u64, u64),
    Capture(u8),
    Flip(u8, Controls),
    Phase(u64, u64, f64),
    Force(u64, u64, bool),
    CaptureWhere(u8, Controls),
    IswapWhere(u8, u8, u128),
    /// Keep the boards with some qubit of the first mask set or every qubit of the second
    /// clear (a set no single predicate describes).
    ProjectBoards(u64, u64),
}

/// Builds an operation from raw random numbers: three distinct tracked qubits, then masks
/// over the other five.
fn op_from(kind: u8, pick: [u8; 8], m1: u8, m2: u8, flag: bool, angle: f64) -> Op {
    let mut order: Vec<usize> = (0..8).collect();
    for (i, p) in pick.iter().enumerate() {
        order.swap(i, i + usize::from(*p) % (8 - i));
    }
    let q: Vec<u8> = order.iter().map(|&i| QUBITS[i]).collect();
    let rest = |m: u8| -> u64 {
        (0..5)
            .filter(|i| m >> i & 1 == 1)
            .map(|i| 1u64 << q[3 + i])
            .fold(0, |a, b| a | b)
    };
    let (r1, r2) = (rest(m1), rest(m2));
    let controls = Controls {
        zeros: r1 & !r2,
        ones: r2 & !r1,
    };
    let none_or = |c: Controls| if m1 % 3 == 0 { Controls::NONE } else { c };
    match kind % 14 {
        0 => Op::Iswap(q[0], q[1], none_or(controls), flag),
        1 => Op::Sqrt(q[0], q[1], none_or(controls), flag),
        2 | 3 => Op::Split(q[0], q[1], q[2], none_or(controls)),
        4 => Op::Merge(q[0], q[1], q[2], none_or(controls)),
        5 => Op::SplitSlide(q[0], q[1], q[2], r1 | if flag { 1 << q[2] } else { 0 }, r2),
        6 => Op::MergeSlide(q[0], q[1], q[2], r1, r2 | if flag { 1 << q[0] } else { 0 }),
        7 => Op::Capture(q[0]),
        8 => Op::Flip(q[0], if flag { Controls::NONE } else { controls }),
        9 => Op::Phase(
            r1 | 1 << q[0],
            r2 & r1 | if flag { 1 << q[0] } else { 0 },
            angle,
        ),
        11 => Op::CaptureWhere(q[0], controls),
        12 => Op::IswapWhere(q[0], q[1], u128::from(m2 % 15 + 1)),
        13 => Op::ProjectBoards(r1 | 1 << q[0], r2),
        _ => Op::Force(
            r1 | 1 << q[0],
            (r2 & r1) | if flag { 1 << q[0] } else { 0 },
            flag ^ (m2 & 1 == 1),
        ),
    }
}

fn cond(c: Controls) -> impl Fn(usize) -> bool {
    let (z, o) = (mask_local(c.zeros), mask_local(c.ones));
    move |bits| bits & z == 0 && bits & o == o
}

fn clear(m: u64) -> impl Fn(usize) -> bool + Copy {
    let l = mask_local(m);
    move |bits| bits & l == 0
}

/// Applies `op` to both; returns false if the operation was (correctly) skipped.
fn apply(op: &Op, s: &mut State<f64>, d: &mut Dense) {
    match *op {
        Op::Iswap(a, b, ctl, inv) => {
            if inv {
                s.iswap_inv(a, b, ctl)
            } else {
                s.iswap(a, b, ctl)
            }
            .unwrap();
            d.apply2(a, b, iswap4(inv), cond(ctl));
        }
        Op::Sqrt(a, b, ctl, inv) => {
            if inv {
                s.sqrt_iswap_inv(a, b, ctl)
            } else {
                s.sqrt_iswap(a, b, ctl)
            }
            .unwrap();
            d.apply2(a, b, sqrt4(inv), cond(ctl));
        }
        Op::Split(a, t1, t2, ctl) => {
            s.split(a, t1, t2, ctl).unwrap();
            d.apply3([a, t1, t2], &u_split(), cond(ctl));
        }
        Op::Merge(s1, s2, t, ctl) => {
            s.merge(s1, s2, t, ctl).unwrap();
            d.apply3([t, s2, s1], &dagger(&u_split()), cond(ctl));
        }
        Op::SplitSlide(a, t1, t2, p1, p2) => {
            s.split_slide(a, t1, t2, p1, p2).unwrap();
            // eq. 9 with D2: each arm's path leaves out the other target.
            let (c1, c2) = (clear(p1 & !(1 << t2)), clear(p2 & !(1 << t1)));
            let q = [a, t1, t2];
            d.apply3(q, &u_split(), move |b| c1(b) && c2(b));
            d.apply3(q, &two_qubit_in_3(iswap4(false), 0, 2), move |b| {
                !c1(b) && c2(b)
            });
            d.apply3(q, &two_qubit_in_3(iswap4(false), 0, 1), move |b| {
                c1(b) && !c2(b)
            });
        }
        Op::MergeSlide(s1, s2, t, p1, p2) => {
            s.merge_slide(s1, s2, t, p1, p2).unwrap();
            // eq. 12 in the basis |p2 p1 s1 s2 t>, each path leaving out the other source.
            let (c1, c2) = (clear(p1 & !(1 << s2)), clear(p2 & !(1 << s1)));
            let q = [t, s2, s1];
            d.apply3(q, &dagger(&u_split()), move |b| c1(b) && c2(b));
            d.apply3(q, &two_qubit_in_3(iswap4(true), 0, 1), move |b| {
                !c1(b) && c2(b)
            });
            d.apply3(q, &two_qubit_in_3(iswap4(true), 0, 2), move |b| {
                c1(b) && !c2(b)
            });
        }
        Op::Capture(t) => {
            if d.ancillas < MAX_ANC {
                assert_eq!(s.capture(t).unwrap(), d.capture(t));
            }
        }
        Op::Flip(q, ctl) => {
            s.flip_controlled(q, ctl).unwrap();
            d.flip(q, cond(ctl));
        }
        Op::CaptureWhere(t, ctl) => {
            if d.ancillas < MAX_ANC {
                assert_eq!(
                    s.capture_where(t, ctl).unwrap(),
                    d.capture_where(t, cond(ctl))
                );
            }
        }
        Op::IswapWhere(a, b, ancillas) => {
            s.iswap_where_ancillas(a, b, ancillas).unwrap();
            d.iswap_where_ancillas(a, b, ancillas);
        }
        Op::ProjectBoards(any, none) => {
            let keep = move |b: u64| b & any != 0 || b & none == 0;
            let (la, ln) = (mask_local(any), mask_local(none));
            let keep_local = move |b: usize| b & la != 0 || b & ln == 0;
            let kept = (0..d.amps.len())
                .filter(|&i| keep_local(i & ((1 << QUBITS.len()) - 1)))
                .map(|i| d.amps[i].norm_sqr())
                .sum::<f64>();
            let before = s.clone();
            match s.project_boards(&keep) {
                Ok(p) => {
                    assert!((p - kept).abs() < 1e-12, "{p} against {kept}");
                    d.project_boards(keep_local);
                }
                Err(e) => {
                    assert!(kept < 1e-20, "{e} with {kept} kept");
                    assert_same(&before, s);
                }
            }
        }
        Op::Phase(m, v, angle) => {
            let f = c(angle.cos(), angle.sin());
            s.phase(Predicate::Equals { mask: m, value: v }, f).unwrap();
            d.phase(m, v, f);
        }
        Op::Force(m, v, outcome) => {
            let pt = d.probability(m, v);
            let p = if outcome { pt } else { 1.0 - pt };
            let before = s.clone();
            let r = s.force(Predicate::Equals { mask: m, value: v }, outcome);
            if p < 1e-9 {
                assert!(
                    matches!(r, Err(SimError::ZeroProbabilityOutcome { .. })),
                    "{r:?} p={p}"
                );
                assert_same(&before, s);
            } else {
                assert!((r.unwrap() - p).abs() < 1e-12);
                d.force(m, v, outcome);
            }
        }
    }
}

fn assert_same(a: &State<f64>, b: &State<f64>) {
    let ea: Vec<_> = a.entries().collect();
    let eb: Vec<_> = b.entries().collect();
    assert_eq!(ea, eb);
}

fn compare(s: &State<f64>, d: &Dense, tol: f64) {
    let tracked = QUBITS.iter().fold(0u64, |m, &q| m | 1 << q);
    for (k, a) in s.entries() {
        assert_eq!(k.board & !tracked, 0, "untracked qubit set in {k:?}");
        assert!(
            (a - d.get(k)).norm() < tol,
            "{k:?}: sparse {a} dense {}",
            d.get(k)
        );
    }
    for (idx, a) in d.amps.iter().enumerate() {
        let board = (0..QUBITS.len())
            .filter(|i| idx >> i & 1 == 1)
            .fold(0u64, |m, i| m | 1 << QUBITS[i]);
        let key = Key {
            board,
            ancillas: (idx >> QUBITS.len()) as u128,
        };
        assert!(
            (s.amplitude(key) - a).norm() < tol,
            "{key:?}: dense {a} sparse {}",
            s.amplitude(key)
        );
    }
    assert!((s.norm_sqr() - 1.0).abs() < 1e-12);
}

fn op_strategy() -> impl Strategy<Value = Op> {
    (
        any::<u8>(),
        any::<[u8; 8]>(),
        any::<u8>(),
        any::<u8>(),
        any::<bool>(),
        0.0..6.3f64,
    )
        .prop_map(|(k, p, m1, m2, f, a)| op_from(k, p, m1, m2, f, a))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_sequences_match_dense_reference(
        start in any::<u8>(),
        ops in proptest::collection::vec(op_strategy(), 1..40),
    ) {
        let board = QUBITS.iter().enumerate().filter(|(i, _)| start >> i & 1 == 1)
            .fold(0u64, |m, (_, &q)| m | 1 << q);
        let mut s = State::<f64>::classical(board);
        let mut d = Dense::classical(board);
        for op in &ops {
            apply(op, &mut s, &mut d);
            compare(&s, &d, 1e-12);
        }
        // Derived views agree with the dense amplitudes too.
        let probs = s.qubit_probabilities();
        for &q in &QUBITS {
            prop_assert!((probs[q as usize] - d.probability(1 << q, 1 << q)).abs() < 1e-12);
        }
    }

    #[test]
    fn f32_sequences_stay_close_to_f64(
        start in any::<u8>(),
        ops in proptest::collection::vec(op_strategy(), 1..30),
    ) {
        let board = QUBITS.iter().enumerate().filter(|(i, _)| start >> i & 1 == 1)
            .fold(0u64, |m, (_, &q)| m | 1 << q);
        let mut s = State::<f64>::classical(board);
        let mut d = Dense::classical(board);
        let mut s32 = State::<f32>::classical(board);
        for op in &ops {
            if let Op::Force(m, v, o) = *op {
                // Only outcomes clearly possible: f32 rounding may not reach exact zeros.
                let pt = d.probability(m, v);
                if (if o { pt } else { 1.0 - pt }) < 1e-3 { continue; }
                s32.force(Predicate::Equals { mask: m, value: v }, o).unwrap();
            } else if let Op::ProjectBoards(any, none) = *op {
                let (la, ln) = (mask_local(any), mask_local(none));
                let kept = (0..d.amps.len())
                    .filter(|&i| { let b = i & ((1 << QUBITS.len()) - 1); b & la != 0 || b & ln == 0 })
                    .map(|i| d.amps[i].norm_sqr())
                    .sum::<f64>();
                if kept < 1e-3 { continue; }
                s32.project_boards(&move |b: u64| b & any != 0 || b & none == 0).unwrap();
            } else {
                let mut tmp = s32.clone();
                apply_f32(op, &mut tmp);
                s32 = tmp;
            }
            apply(op, &mut s, &mut d);
        }
        for (k, a) in s.entries() {
            let b = s32.amplitude(k);
            prop_assert!((a.re - f64::from(b.re)).abs() < 1e-5 && (a.im - f64::from(b.im)).abs() < 1e-5);
        }
    }
}

fn apply_f32(op: &Op, s: &mut State<f32>) {
    match *op {
        Op::Iswap(a, b, ctl, inv) => if inv {
            s.iswap_inv(a, b, ctl)
        } else {
            s.iswap(a, b, ctl)
        }
        .unwrap(),
        Op::Sqrt(a, b, ctl, inv) => if inv {
            s.sqrt_iswap_inv(a, b, ctl)
        } else {
            s.sqrt_iswap(a, b, ctl)
        }
        .unwrap(),
        Op::Split(a, t1, t2, ctl) => s.split(a, t1, t2, ctl).unwrap(),
        Op::Merge(s1, s2, t, ctl) => s.merge(s1, s2, t, ctl).unwrap(),
        Op::SplitSlide(a, t1, t2, p1, p2) => s.split_slide(a, t1, t2, p1, p2).unwrap(),
        Op::MergeSlide(s1, s2, t, p1, p2) => s.merge_slide(s1, s2, t, p1, p2).unwrap(),
        Op::Capture(t) => {
            if s.ancilla_count() < MAX_ANC as u32 {
                s.capture(t).unwrap();
            }
        }
        Op::Flip(q, ctl) => s.flip_controlled(q, ctl).unwrap(),
        Op::Phase(m, v, angle) => s
            .phase(
                Predicate::Equals { mask: m, value: v },
                qchess_sim::Complex::new(angle.cos() as f32, angle.sin() as f32),
            )
            .unwrap(),
        Op::Force(..) => {}
        Op::CaptureWhere(t, ctl) => {
            if s.ancilla_count() < MAX_ANC as u32 {
                s.capture_where(t, ctl).unwrap();
            }
        }
        Op::IswapWhere(a, b, ancillas) => s.iswap_where_ancillas(a, b, ancillas).unwrap(),
        Op::ProjectBoards(..) => {}
    }
}
