//! Every recording projection (the undoable measurements of issue 10, Deliver 1) against a
//! slow reference made from the state's entries, on states large enough for every pass the
//! simulator picks between: blocks of 65 536 entries in parallel, the record sized from a
//! sample, the survivors written out where a sector loses more than half, the old arrays
//! kept whole where it keeps at most a third. Random states (keys with small gaps, so a low
//! qubit interleaves the two outcomes entry by entry), game-shaped ones (few values of the
//! high bits, so a high qubit splits them into runs) and ones in three capture sectors with
//! relabelled qubits; one to three measured qubits, so each outcome keeps from an eighth to
//! seven eighths; one and two threads; f64 and f32 amplitudes (whose kernels move 16 or 8
//! bytes per amplitude).
//!
//! Checked for each: the outcome's probability against the reference's kept mass over the
//! total; the state after it against the kept entries scaled by `1/sqrt(probability)`; the
//! qubit marginals a pass sums against the kept entries'; the record's length against the
//! entries removed (kept whenever its room holds every entry); the state after
//! `State::unproject` against the state before, entry by entry. An outcome with nothing kept is an error that leaves
//! every entry as it was, bit for bit.

use crate::controlled_large::{Entries, bits, compensated_sum, pool};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use qchess_sim::bench::{game_state, random_state};
use qchess_sim::{Amplitude, Controls, Pick, Predicate, SimError, State};

/// How the projection is asked for.
#[derive(Clone, Copy, Debug)]
enum Ask {
    /// `force_keeping`: counted or sampled, the probability summed by the pass.
    Force,
    /// `force_keeping_given` with the reference's probability.
    Given,
    /// `measure_keeping`: the read and the projection in one, the pick given the read
    /// probability (`given`) or not.
    Measure {
        given: bool,
    },
    /// `force_within` with room for no record: the state projected alike, the record
    /// dropped.
    NoRoom,
    /// `force_any_keeping` of the pattern and of a second one on other qubits.
    Any,
    /// `force_keeping_marginals`: the survivors' marginals summed in the pass.
    Marginals,
    /// `force_given_marginals_within`, `measure_within` (given the read probability) and
    /// `force_any_given_within` (the union of [`Ask::Any`]) with room for `quarters`
    /// quarters of the state's entries in the record (4: all of them, so it is kept): a
    /// record larger than the room is dropped, the state projected alike.
    GivenWithin {
        quarters: u8,
    },
    MeasureWithin {
        quarters: u8,
    },
    AnyWithin {
        quarters: u8,
    },
}

fn ask_strategy() -> impl Strategy<Value = Ask> {
    prop_oneof![
        Just(Ask::Force),
        Just(Ask::Given),
        any::<bool>().prop_map(|given| Ask::Measure { given }),
        Just(Ask::NoRoom),
        Just(Ask::Any),
        Just(Ask::Marginals),
        (0u8..=4).prop_map(|quarters| Ask::GivenWithin { quarters }),
        (0u8..=4).prop_map(|quarters| Ask::MeasureWithin { quarters }),
        (0u8..=4).prop_map(|quarters| Ask::AnyWithin { quarters }),
    ]
}

/// The input state: `shape` 0 random, 1 game-shaped, 2 three capture sectors (captures
/// of qubits 3 and 9, qubits 2 and 12 relabelled by an uncontrolled iSwap).
fn state_of<T: Amplitude>(shape: u8, n: usize) -> State<T> {
    match shape {
        0 => random_state::<T>(n).unwrap(),
        1 => game_state::<T>(n).unwrap(),
        _ => {
            let mut s = random_state::<T>(n).unwrap();
            s.capture(3).unwrap();
            s.capture(9).unwrap();
            s.iswap(2, 12, Controls::NONE).unwrap();
            s
        }
    }
}

/// The entries of `s` in f64, sorted by key.
fn sorted<T: Amplitude>(s: &State<T>) -> Entries {
    let mut e: Entries = s
        .entries()
        .map(|(k, a)| (k, num_complex::Complex::new(a.re.as_f64(), a.im.as_f64())))
        .collect();
    e.sort_by_key(|x| x.0);
    e
}

/// The highest logical qubit any board of `e` occupies, plus one.
fn used_bits(e: &Entries) -> u32 {
    let all = e.iter().fold(0u64, |m, (k, _)| m | k.board);
    64 - all.leading_zeros()
}

/// A pattern on up to `count` distinct qubits below `bits` (fewer where `picks` repeat
/// one), picked by `picks`, its value by
/// `values`.
fn pattern(bits: u32, count: usize, picks: &[u32], values: u8) -> Predicate {
    let mut mask = 0u64;
    for &p in picks {
        if mask.count_ones() as usize == count {
            break;
        }
        mask |= 1 << (p % bits);
    }
    let mut value = 0u64;
    for (i, q) in (0..64).filter(|q| mask >> q & 1 == 1).enumerate() {
        value |= u64::from(values >> i & 1) << q;
    }
    Predicate::Equals { mask, value }
}

/// The relative tolerance of a probability and of a kept amplitude against the reference,
/// and of an amplitude taken back, for f64 amplitudes. The simulator sums in four lanes per
/// block of 65 536 entries: for equal magnitudes a lane's rounding grows with its 16 384
/// terms, about 1e-12 relative (a wrong entry moves a probability by 1/n, above 5e-6 here).
const F64_TOLERANCE: f64 = 1e-11;

/// The same for f32 amplitudes: each survivor scaled in f32 (and back), about 1e-7.
const F32_TOLERANCE: f64 = 1e-6;

/// One case of the property: the input, the pattern, the outcome, how it is asked for.
#[derive(Clone, Debug)]
struct Case {
    shape: u8,
    n: usize,
    count: usize,
    picks: Vec<u32>,
    values: u8,
    outcome: bool,
    ask: Ask,
    threads: usize,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        0u8..3,
        70_000usize..200_000,
        1usize..=3,
        proptest::collection::vec(0u32..64, 6),
        any::<u8>(),
        any::<bool>(),
        ask_strategy(),
        1usize..=2,
    )
        .prop_map(
            |(shape, n, count, picks, values, outcome, ask, threads)| Case {
                shape,
                n,
                count,
                picks,
                values,
                outcome,
                ask,
                threads,
            },
        )
}

/// Runs `case` on amplitudes of type `T`, each comparison within `tolerance` (relative).
fn check<T: Amplitude>(case: &Case, tolerance: f64) -> Result<(), TestCaseError> {
    let &Case {
        shape,
        n,
        count,
        ref picks,
        values,
        outcome,
        ask,
        threads,
    } = case;
    let mut s = state_of::<T>(shape, n);
    let start = sorted(&s);
    let bits_used = used_bits(&start);
    let pred = pattern(bits_used, count, picks, values);
    // The second pattern of `Ask::Any`: the qubits the first one does not read first.
    let reversed: Vec<u32> = picks.iter().rev().copied().collect();
    let other = pattern(bits_used, count, &reversed, !values);
    let holds = |board: u64| match ask {
        Ask::Any | Ask::AnyWithin { .. } => pred.holds(board) || other.holds(board),
        _ => pred.holds(board),
    };
    let norm2 = |e: &Entries| compensated_sum(e.iter().map(|(_, a)| a.norm_sqr()));
    let kept: Entries = start
        .iter()
        .copied()
        .filter(|(k, _)| holds(k.board) == outcome)
        .collect();
    let p_ref = norm2(&kept) / norm2(&start);
    // The record's room: `quarters` quarters of the state's entries, in bytes.
    let len = s.len();
    let room = |quarters: u8| {
        len * usize::from(quarters) / 4 * std::mem::size_of::<(u64, num_complex::Complex<T>)>()
    };
    let result = pool(threads).install(|| match ask {
        Ask::Force => s
            .force_keeping(pred, outcome)
            .map(|(p, r)| (p, Some(r), None)),
        Ask::Given => s
            .force_keeping_given(pred, outcome, p_ref)
            .map(|(p, r)| (p, Some(r), None)),
        Ask::Measure { given } => s
            .measure_keeping(pred, &mut |p| {
                // `p` is the probability that the pattern holds; the pick gives the
                // outcome's own.
                let own = if outcome { p } else { 1.0 - p };
                Some(Pick {
                    outcome,
                    given: given.then_some(own),
                })
            })
            .map(|got| {
                let (p, r) = got.expect("an outcome was picked");
                (p, Some(r), None)
            }),
        Ask::NoRoom => s.force_within(pred, outcome, 0).map(|(p, r)| (p, r, None)),
        Ask::Any => s
            .force_any_keeping(&[pred, other], outcome)
            .map(|(p, r)| (p, Some(r), None)),
        Ask::Marginals => s
            .force_keeping_marginals(pred, outcome)
            .map(|(p, r, m)| (p, Some(r), m)),
        Ask::GivenWithin { quarters } => {
            let room = room(quarters);
            s.force_given_marginals_within(pred, outcome, p_ref, room)
        }
        Ask::MeasureWithin { quarters } => {
            let room = room(quarters);
            s.measure_within(pred, &mut |p| {
                let own = if outcome { p } else { 1.0 - p };
                Some((
                    Pick {
                        outcome,
                        given: Some(own),
                    },
                    room,
                ))
            })
            .map(|got| {
                let (p, r) = got.expect("an outcome was picked");
                (p, r, None)
            })
        }
        Ask::AnyWithin { quarters } => {
            let room = room(quarters);
            s.force_any_given_within(&[pred, other], outcome, p_ref, room)
        }
    });
    if kept.is_empty() {
        // Nothing kept: refused, every entry as it was.
        prop_assert!(
            matches!(result, Err(SimError::ZeroProbabilityOutcome { .. })),
            "{result:?}"
        );
        prop_assert_eq!(bits(&sorted(&s)), bits(&start));
        return Ok(());
    }
    let (p, record, marginals) = result.unwrap();
    prop_assert!(
        (p - p_ref).abs() <= tolerance * p_ref,
        "p {p} against {p_ref}"
    );
    // The survivors, each scaled by 1/sqrt(p) (the state is normalised: total 1).
    let got = sorted(&s);
    prop_assert_eq!(got.len(), kept.len());
    let scale = 1.0 / p_ref.sqrt();
    for ((k, a), (rk, ra)) in got.iter().zip(&kept) {
        prop_assert_eq!(k, rk);
        let want = ra * scale;
        prop_assert!(
            (a - want).norm() <= tolerance * want.norm(),
            "{k:?}: {a} against {want}"
        );
    }
    // The marginals the pass summed, against the kept entries': each qubit's kept mass
    // where it is occupied over the kept mass.
    if let Some(m) = marginals {
        let mass = norm2(&kept);
        for (q, &got) in m.iter().enumerate() {
            let want = compensated_sum(
                kept.iter()
                    .filter(|(k, _)| k.board >> q & 1 == 1)
                    .map(|(_, a)| a.norm_sqr()),
            ) / mass;
            prop_assert!(
                (got - want).abs() <= tolerance,
                "qubit {q}: {got} against {want}"
            );
        }
    }
    let removed = start.len() - kept.len();
    let may_drop = matches!(
        ask,
        Ask::NoRoom | Ask::GivenWithin { .. } | Ask::MeasureWithin { .. } | Ask::AnyWithin { .. }
    );
    match (ask, record) {
        (Ask::GivenWithin { quarters: 4 }, None)
        | (Ask::MeasureWithin { quarters: 4 }, None)
        | (Ask::AnyWithin { quarters: 4 }, None) => {
            prop_assert!(false, "{ask:?}: room for every entry, yet no record")
        }
        (_, None) if may_drop => {}
        (_, None) => prop_assert!(false, "{ask:?} returned no record"),
        (_, Some(r)) => {
            prop_assert_eq!(r.len(), removed);
            pool(threads).install(|| s.unproject(r)).unwrap();
            let back = sorted(&s);
            prop_assert_eq!(back.len(), start.len());
            for ((k, a), (bk, b)) in back.iter().zip(&start) {
                prop_assert_eq!(k, bk);
                prop_assert!(
                    (a - b).norm() <= tolerance * b.norm(),
                    "{k:?}: {a} against {b}"
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_recording_projection_matches_the_entries_and_is_taken_back(case in case_strategy()) {
        check::<f64>(&case, F64_TOLERANCE)?;
    }

    #[test]
    fn every_recording_projection_of_f32_amplitudes_matches_and_is_taken_back(
        case in case_strategy()
    ) {
        check::<f32>(&case, F32_TOLERANCE)?;
    }
}
