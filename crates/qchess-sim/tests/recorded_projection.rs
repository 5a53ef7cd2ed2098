//! Every recording projection (the undoable measurements of issue 10, Deliver 1) against a
//! slow reference made from the state's entries, on states large enough for every pass the
//! simulator picks between: blocks of 65 536 entries in parallel, the record sized from a
//! sample, the survivors written out where a sector loses more than half, the old arrays
//! kept whole where it keeps at most a third. Random states (keys with small gaps, so a low
//! qubit interleaves the two outcomes entry by entry), game-shaped ones (few values of the
//! high bits, so a high qubit splits them into runs) and ones in three capture sectors with
//! relabelled qubits; one to three measured qubits, so each outcome keeps from an eighth to
//! seven eighths; one and two threads.
//!
//! Checked for each: the outcome's probability against the reference's kept mass over the
//! total; the state after it against the kept entries scaled by `1/sqrt(probability)`; the
//! record's length against the entries removed; the state after `State::unproject` against
//! the state before, entry by entry. An outcome with nothing kept is an error that leaves
//! every entry as it was, bit for bit.

use crate::controlled_large::{Entries, assert_restored, sectored_of, sorted};
use proptest::prelude::*;
use qchess_sim::bench::{game_state, random_state};
use qchess_sim::{Pick, Predicate, SimError, State};

/// How the projection is asked for.
#[derive(Clone, Copy, Debug)]
enum Ask {
    /// `force_keeping`: counted or sampled, the probability summed by the pass.
    Force,
    /// `force_keeping_given` with the reference's probability.
    Given,
    /// `measure_keeping`: the read and the projection in one, the pick given the read
    /// probability (`given`) or not.
    Measure { given: bool },
    /// `force_within` with room for no record: the state projected alike, the record
    /// dropped.
    NoRoom,
    /// `force_any_keeping` of the pattern and of a second one on other qubits.
    Any,
}

fn ask_strategy() -> impl Strategy<Value = Ask> {
    prop_oneof![
        Just(Ask::Force),
        Just(Ask::Given),
        any::<bool>().prop_map(|given| Ask::Measure { given }),
        Just(Ask::NoRoom),
        Just(Ask::Any),
    ]
}

/// The input state: `shape` 0 random, 1 game-shaped, 2 three capture sectors.
fn state_of(shape: u8, n: usize) -> State<f64> {
    match shape {
        0 => random_state::<f64>(n).unwrap(),
        1 => game_state::<f64>(n).unwrap(),
        _ => sectored_of(n),
    }
}

/// The highest logical qubit any board of `e` occupies, plus one.
fn used_bits(e: &Entries) -> u32 {
    let all = e.iter().fold(0u64, |m, (k, _)| m | k.board);
    64 - all.leading_zeros()
}

/// A pattern on `count` distinct qubits below `bits`, picked by `picks`, its value by
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

/// The relative tolerance of a probability and of a kept amplitude against the reference.
const TOLERANCE: f64 = 1e-11;

/// The sum of `terms`, each term's rounding carried (Neumaier): the reference's masses,
/// accurate to about one rounding whatever their number.
fn compensated_sum(terms: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for x in terms {
        let t = sum + x;
        carry += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
    }
    sum + carry
}

fn pool(threads: usize) -> rayon::ThreadPool {
    qchess_sim::set_adaptive_threads(false);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Each entry's key and amplitude bits.
fn bits(e: &Entries) -> Vec<(qchess_sim::Key, u64, u64)> {
    e.iter()
        .map(|(k, a)| (*k, a.re.to_bits(), a.im.to_bits()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn every_recording_projection_matches_the_entries_and_is_taken_back(
        shape in 0u8..3,
        n in 70_000usize..200_000,
        count in 1usize..=3,
        picks in proptest::collection::vec(0u32..64, 6),
        values in any::<u8>(),
        outcome in any::<bool>(),
        ask in ask_strategy(),
        threads in 1usize..=2,
    ) {
        let mut s = state_of(shape, n);
        let start = sorted(&s);
        let bits_used = used_bits(&start);
        let pred = pattern(bits_used, count, &picks, values);
        // The second pattern of `Ask::Any`: the qubits the first one does not read.
        let other = pattern(bits_used, count, &picks.iter().rev().copied().collect::<Vec<_>>(), !values);
        let holds = |board: u64| match ask {
            Ask::Any => pred.holds(board) || other.holds(board),
            _ => pred.holds(board),
        };
        let norm2 = |e: &[(qchess_sim::Key, num_complex::Complex<f64>)]| {
            compensated_sum(e.iter().map(|(_, a)| a.norm_sqr()))
        };
        let kept: Entries = start.iter().copied().filter(|(k, _)| holds(k.board) == outcome).collect();
        let (mass, total) = (norm2(&kept), norm2(&start));
        let p_ref = mass / total;
        let result = pool(threads).install(|| match ask {
            Ask::Force => s.force_keeping(pred, outcome).map(|(p, r)| (p, Some(r))),
            Ask::Given => s.force_keeping_given(pred, outcome, p_ref).map(|(p, r)| (p, Some(r))),
            Ask::Measure { given } => s
                .measure_keeping(pred, &mut |p| {
                    // `p` is the probability that the pattern holds; the pick gives the
                    // outcome's own.
                    let own = if outcome { p } else { 1.0 - p };
                    Some(Pick { outcome, given: given.then_some(own) })
                })
                .map(|got| {
                    let (p, r) = got.expect("an outcome was picked");
                    (p, Some(r))
                }),
            Ask::NoRoom => s.force_within(pred, outcome, 0),
            Ask::Any => s.force_any_keeping(&[pred, other], outcome).map(|(p, r)| (p, Some(r))),
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
        let (p, record) = result.unwrap();
        // The simulator sums in four lanes per block of 65 536 entries: for equal
        // magnitudes a lane's rounding grows with its 16 384 terms, about 1e-12 relative
        // (a wrong entry moves p by 1/n, above 5e-6 here).
        prop_assert!((p - p_ref).abs() <= TOLERANCE * p_ref, "p {p} against {p_ref}");
        // The survivors, each scaled by 1/sqrt(p) (the state is normalised: total 1).
        let got = sorted(&s);
        prop_assert_eq!(got.len(), kept.len());
        let scale = 1.0 / p_ref.sqrt();
        for ((k, a), (rk, ra)) in got.iter().zip(&kept) {
            prop_assert_eq!(k, rk);
            let want = ra * scale;
            prop_assert!((a - want).norm() <= TOLERANCE * want.norm(), "{k:?}: {a} against {want}");
        }
        match (ask, record) {
            (Ask::NoRoom, None) => {}
            (Ask::NoRoom, Some(r)) => {
                // A state that needs no record room (nothing would be recorded) keeps it.
                prop_assert_eq!(r.len(), start.len() - kept.len());
            }
            (_, None) => prop_assert!(false, "{ask:?} returned no record"),
            (_, Some(r)) => {
                prop_assert_eq!(r.len(), start.len() - kept.len());
                pool(threads).install(|| s.unproject(r)).unwrap();
                assert_restored(&sorted(&s), &start);
            }
        }
    }
}
