//! The projection onto a union of native patterns (`State::project_any` and its recording
//! and given-probability forms; eq. 23b's failed capture slide) against the projection onto
//! boards by a predicate (`State::project_boards`, its definition): on a state in three
//! capture sectors with relabelled qubits, large enough for the parallel block jobs, on one
//! and two threads, with the patterns in a fixed array (up to eight) and in a slice (more).

use crate::controlled_large::{Entries, assert_restored, bits, pool, sectored_of, sorted};
use qchess_sim::{Predicate, SimError, State};

/// Qubits 2 and 12 are relabelled in [`sectored_of`]'s state, so these read physical bits
/// other than their logical ones. The union keeps about five eighths of the entries.
fn union() -> Vec<Predicate> {
    vec![
        Predicate::Equals {
            mask: 1 << 4 | 1 << 12,
            value: 1 << 4,
        },
        Predicate::AllZero(1 << 6 | 1 << 2),
        Predicate::One(11),
    ]
}

/// Nine patterns (more than the fixed array holds): each a pair of qubits both occupied.
fn wide_union() -> Vec<Predicate> {
    (0..9u8)
        .map(|i| {
            let both = 1u64 << (2 * i + 4) | 1u64 << (2 * i + 5);
            Predicate::Equals {
                mask: both,
                value: both,
            }
        })
        .collect()
}

fn holds_any(patterns: &[Predicate], board: u64) -> bool {
    patterns.iter().any(|p| p.holds(board))
}

#[test]
fn a_projection_onto_a_union_of_patterns_is_the_projection_onto_its_boards() {
    let base = sectored_of(300_000);
    let start = sorted(&base);
    for patterns in [union(), wide_union()] {
        let kept = start
            .iter()
            .filter(|(k, _)| holds_any(&patterns, k.board))
            .count();
        assert!(kept > 1000 && kept < start.len(), "{kept}");
        let keep = |b: u64| holds_any(&patterns, b);
        let mut runs = Vec::new();
        for threads in [1, 2] {
            pool(threads).install(|| {
                let mut by_boards = base.clone();
                let p_boards = by_boards.project_boards(&keep).unwrap();
                let mut s = base.clone();
                let p = s.project_any(&patterns).unwrap();
                // The same projection, bit for bit.
                assert_eq!(p.to_bits(), p_boards.to_bits(), "{threads} threads");
                assert!(sorted(&s) == sorted(&by_boards), "{threads} threads");
                // Recorded: the same state and the same record as the projection onto
                // boards makes, and the record takes it back.
                let mut s = base.clone();
                let (p, removed) = s.project_any_keeping(&patterns).unwrap();
                let mut by_boards = base.clone();
                let (p_boards, removed_boards) = by_boards.project_boards_keeping(&keep).unwrap();
                assert_eq!(p.to_bits(), p_boards.to_bits());
                assert!(sorted(&s) == sorted(&by_boards));
                let record: Entries = removed.part().entries().collect();
                let record_boards: Entries = removed_boards.part().entries().collect();
                assert!(record == record_boards);
                assert_eq!(removed.len(), start.len() - kept);
                let projected = bits(&sorted(&s));
                s.unproject(removed).unwrap();
                let back = sorted(&s);
                assert_restored(&back, &start);
                runs.push((p.to_bits(), projected));
            });
        }
        assert!(runs[0] == runs[1], "one and two threads differ");
    }
}

/// With the union's probability given, the survivors are scaled by it in the pass, and the
/// marginals after it come from that pass: where one pattern describes the set, exactly
/// what the given forced measurement makes (the same pass, bit for bit); for a union,
/// within rounding of the projection onto its boards, the marginals within rounding of a
/// fresh read, and the record takes it back.
#[test]
fn a_given_projection_onto_a_union_is_the_given_measurement_of_its_pattern() {
    let base = sectored_of(300_000);
    let start = sorted(&base);
    for threads in [1, 2] {
        pool(threads).install(|| {
            // One pattern: the given forced measurement of it.
            let pred = Predicate::Equals {
                mask: 1 << 4 | 1 << 12,
                value: 1 << 12,
            };
            let p = base.probability(pred);
            let mut s = base.clone();
            let (q, removed, marginals) = s.project_any_given_marginals(&[pred], p).unwrap();
            let mut forced = base.clone();
            let (q_forced, removed_forced, marginals_forced) =
                forced.force_keeping_given_marginals(pred, true, p).unwrap();
            assert_eq!(q.to_bits(), q_forced.to_bits());
            assert!(
                bits(&sorted(&s)) == bits(&sorted(&forced)),
                "{threads} threads"
            );
            assert_eq!(marginals, marginals_forced);
            let record: Entries = removed.part().entries().collect();
            let record_forced: Entries = removed_forced.part().entries().collect();
            assert!(record == record_forced);

            // A union: within rounding of the projection onto its boards.
            let patterns = union();
            let keep = |b: u64| holds_any(&patterns, b);
            let mut by_boards = base.clone();
            let p = by_boards.project_boards(&keep).unwrap();
            let mut s = base.clone();
            let (q, removed, marginals) = s.project_any_given_marginals(&patterns, p).unwrap();
            assert_eq!(q, p);
            let (got, want) = (sorted(&s), sorted(&by_boards));
            assert_eq!(got.len(), want.len());
            for ((k, a), (wk, w)) in got.iter().zip(&want) {
                assert_eq!(k, wk);
                assert!((a - w).norm() <= 1e-12 * w.norm(), "{k:?}: {a} against {w}");
            }
            let marginals = marginals.expect("entries were removed");
            let read = s.qubit_probabilities();
            for (q, (m, r)) in marginals.iter().zip(&read).enumerate() {
                assert!((m - r).abs() < 1e-12, "qubit {q}: {m} against {r}");
            }
            s.unproject(removed).unwrap();
            let back = sorted(&s);
            assert_restored(&back, &start);
        });
    }
}

/// With a room smaller than its record, the given projection drops the removed entries in
/// its pass (no record) and leaves the state the recording one leaves, bit for bit, with
/// the same marginals; with room, it is the recording one.
#[test]
fn a_given_projection_onto_a_union_drops_a_record_larger_than_its_room() {
    let base = sectored_of(300_000);
    let patterns = union();
    let keep = |b: u64| holds_any(&patterns, b);
    let p = base.clone().project_boards(&keep).unwrap();
    for threads in [1, 2] {
        pool(threads).install(|| {
            let mut recorded = base.clone();
            let (q, removed, marginals) =
                recorded.project_any_given_marginals(&patterns, p).unwrap();
            let mut lean = base.clone();
            let (q_lean, none, marginals_lean) =
                lean.project_any_given_within(&patterns, p, 0).unwrap();
            assert!(none.is_none());
            assert_eq!(q.to_bits(), q_lean.to_bits());
            assert!(
                bits(&sorted(&lean)) == bits(&sorted(&recorded)),
                "{threads}"
            );
            assert_eq!(marginals, marginals_lean);
            let mut roomy = base.clone();
            let (_, some, _) = roomy
                .project_any_given_within(&patterns, p, usize::MAX)
                .unwrap();
            assert_eq!(some.map(|r| r.len()), Some(removed.len()));
            assert!(bits(&sorted(&roomy)) == bits(&sorted(&recorded)));
        });
    }
}

/// Bad input is an error that names it and leaves the state as it was.
#[test]
fn a_projection_onto_a_union_refuses_bad_input_and_changes_nothing() {
    let base: State<f64> = sectored_of(20_000);
    let start = sorted(&base);
    let mut s = base.clone();
    let malformed = Predicate::Equals {
        mask: 0b01,
        value: 0b10,
    };
    assert!(matches!(
        s.project_any(&[Predicate::One(4), malformed]),
        Err(SimError::InvalidPredicate {
            mask: 0b01,
            value: 0b10
        })
    ));
    assert!(matches!(
        s.project_any_keeping(&[Predicate::One(64)]),
        Err(SimError::QubitOutOfRange { qubit: 64 })
    ));
    // No pattern, or patterns that hold nowhere (qubit 3 is captured: never occupied).
    assert!(matches!(
        s.project_any(&[]),
        Err(SimError::ZeroProbabilityOutcome { .. })
    ));
    assert!(matches!(
        s.project_any_keeping(&[Predicate::One(3)]),
        Err(SimError::ZeroProbabilityOutcome { .. })
    ));
    assert!(matches!(
        s.project_any_given_marginals(&[], 0.5),
        Err(SimError::ZeroProbabilityOutcome { .. })
    ));
    // A given probability that is no probability.
    assert!(matches!(
        s.project_any_given_marginals(&union(), 0.0),
        Err(SimError::ZeroProbabilityOutcome { .. })
    ));
    assert!(matches!(
        s.project_any_given_within(&union(), 1.5, 0),
        Err(SimError::InvalidProbability { .. })
    ));
    // No room beside the state for the record.
    s.set_memory_budget(s.bytes());
    assert!(matches!(
        s.project_any_keeping(&union()),
        Err(SimError::StateTooLarge { .. })
    ));
    assert!(sorted(&s) == start);
}

/// Outcome 0 of "some pattern holds" (eq. 23b's M1: the boards on which none does) and the
/// read before it: `probability_any` sums each outcome's mass as the boards' do (within
/// rounding, the same bits on one and two threads); `force_any(.., false)` and its recording
/// form are the projection onto the complement's boards bit for bit, with the same record;
/// the given form is within rounding of it, with fresh marginals, and its lean form without
/// room leaves the same state; every record takes its projection back.
#[test]
fn the_complement_of_a_union_is_the_projection_onto_its_boards() {
    let base = sectored_of(300_000);
    let start = sorted(&base);
    let total: f64 = start.iter().map(|(_, a)| a.norm_sqr()).sum();
    for patterns in [union(), wide_union()] {
        let none = |b: u64| !holds_any(&patterns, b);
        let mass_none: f64 = (start.iter())
            .filter(|(k, _)| none(k.board))
            .map(|(_, a)| a.norm_sqr())
            .sum();
        let gone = start.iter().filter(|(k, _)| !none(k.board)).count();
        assert!(gone > 1000 && gone < start.len(), "{gone}");
        let mut reads = Vec::new();
        for threads in [1, 2] {
            pool(threads).install(|| {
                let (p_any, p_none) = base.probability_any(&patterns).unwrap();
                assert!(
                    (p_none - mass_none / total).abs() < 1e-10,
                    "{p_none} against {} (any {p_any})",
                    mass_none / total
                );
                assert!((p_any + p_none - 1.0).abs() < 1e-12);
                reads.push((p_any.to_bits(), p_none.to_bits()));

                let mut by_boards = base.clone();
                let p_boards = by_boards.project_boards(&none).unwrap();
                let mut s = base.clone();
                let p = s.force_any(&patterns, false).unwrap();
                assert_eq!(p.to_bits(), p_boards.to_bits(), "{threads} threads");
                assert!(sorted(&s) == sorted(&by_boards), "{threads} threads");

                let mut s = base.clone();
                let (p, removed) = s.force_any_keeping(&patterns, false).unwrap();
                let mut by_boards = base.clone();
                let (_, removed_boards) = by_boards.project_boards_keeping(&none).unwrap();
                assert_eq!(p.to_bits(), p_boards.to_bits());
                assert!(sorted(&s) == sorted(&by_boards));
                let record: Entries = removed.part().entries().collect();
                let record_boards: Entries = removed_boards.part().entries().collect();
                assert!(record == record_boards);
                assert_eq!(removed.len(), gone);
                s.unproject(removed).unwrap();
                assert_restored(&sorted(&s), &start);

                let mut s = base.clone();
                let (q, removed, marginals) = s
                    .force_any_given_marginals(&patterns, false, p_none)
                    .unwrap();
                assert_eq!(q, p_none);
                let (got, want) = (sorted(&s), sorted(&by_boards));
                assert_eq!(got.len(), want.len());
                for ((k, a), (wk, w)) in got.iter().zip(&want) {
                    assert_eq!(k, wk);
                    assert!((a - w).norm() <= 1e-12 * w.norm(), "{k:?}: {a} against {w}");
                }
                let marginals = marginals.expect("entries were removed");
                for (q, (m, r)) in marginals.iter().zip(&s.qubit_probabilities()).enumerate() {
                    assert!((m - r).abs() < 1e-12, "qubit {q}: {m} against {r}");
                }
                let given = bits(&got);
                let mut lean = base.clone();
                let (_, dropped, marginals_lean) = lean
                    .force_any_given_within(&patterns, false, p_none, 0)
                    .unwrap();
                assert!(dropped.is_none());
                assert!(bits(&sorted(&lean)) == given, "{threads} threads");
                assert_eq!(Some(marginals), marginals_lean);
                s.unproject(removed).unwrap();
                assert_restored(&sorted(&s), &start);
            });
        }
        assert_eq!(reads[0], reads[1], "one and two threads read differently");
    }
    // No pattern never holds: outcome 0 keeps every entry, outcome 1 none.
    let mut s = base.clone();
    assert_eq!(s.probability_any(&[]).unwrap(), (0.0, 1.0));
    assert_eq!(s.force_any(&[], false).unwrap(), 1.0);
    assert!(sorted(&s) == start);
    assert!(matches!(
        s.force_any_given_marginals(&[], true, 0.5),
        Err(SimError::ZeroProbabilityOutcome { outcome: true, .. })
    ));
    assert!(matches!(
        s.probability_any(&[Predicate::One(64)]),
        Err(SimError::QubitOutOfRange { qubit: 64 })
    ));
    assert!(sorted(&s) == start);
}
