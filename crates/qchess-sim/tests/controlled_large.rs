//! The controlled operations of `controlled.rs` on states large enough for the in-place
//! kernels (above the 16 384 entries where an iSwap permutes in place), in several capture
//! sectors and with relabelled qubits, against the plain definition over the entries (what
//! those operations computed before they ran in place), and their memory-budget refusals.

use qchess_sim::bench::random_state;
use qchess_sim::{Complex, Controls, Key, SimError, State};

pub(crate) type Entries = Vec<(Key, Complex<f64>)>;

const I: Complex<f64> = Complex::new(0.0, 1.0);

pub(crate) fn sorted(s: &State<f64>) -> Entries {
    let mut e: Entries = s.entries().collect();
    e.sort_by_key(|x| x.0);
    e
}

fn holds(c: Controls, board: u64) -> bool {
    board & c.zeros == 0 && board & c.ones == c.ones
}

/// A pool of `threads` rayon threads, the load-adaptive thread count off (so a pass runs on
/// exactly that many).
pub(crate) fn pool(threads: usize) -> rayon::ThreadPool {
    qchess_sim::set_adaptive_threads(false);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Each entry's key and amplitude bits.
pub(crate) fn bits(e: &Entries) -> Vec<(Key, u64, u64)> {
    e.iter()
        .map(|(k, a)| (*k, a.re.to_bits(), a.im.to_bits()))
        .collect()
}

/// `got` holds the entries of `start`, each amplitude within 1e-15 (a projection taken
/// back).
pub(crate) fn assert_restored(got: &Entries, start: &Entries) {
    assert_eq!(got.len(), start.len());
    for ((k, a), (bk, b)) in got.iter().zip(start) {
        assert_eq!(k, bk);
        assert!((a - b).norm() < 1e-15, "{k:?}");
    }
}

/// 60 000 entries in three sectors (captures of qubits 3 and 9), qubits 2 and 12
/// relabelled by an uncontrolled iSwap.
fn sectored() -> State<f64> {
    sectored_of(60_000)
}

/// [`sectored`] of `n` random entries.
pub(crate) fn sectored_of(n: usize) -> State<f64> {
    let mut s = random_state::<f64>(n).unwrap();
    s.capture(3).unwrap();
    s.capture(9).unwrap();
    s.iswap(2, 12, Controls::NONE).unwrap();
    assert!(s.len() >= n * 5 / 6);
    s
}

/// The entries of each capture sector (by ancilla value), in ancilla order.
fn sector_sizes(e: &Entries) -> Vec<(u128, usize)> {
    let mut sizes = std::collections::BTreeMap::new();
    for (k, _) in e {
        *sizes.entry(k.ancillas).or_insert(0) += 1;
    }
    sizes.into_iter().collect()
}

/// Each entry mapped by `f`, sorted by key.
fn mapped(e: &Entries, f: impl Fn(Key, Complex<f64>) -> (Key, Complex<f64>)) -> Entries {
    let mut out: Entries = e.iter().map(|&(k, a)| f(k, a)).collect();
    out.sort_by_key(|x| x.0);
    out
}

/// The capture on the branches where `controls` hold, by its definition over the entries.
fn capture_where_reference(e: &Entries, q: u8, c: Controls, index: u32) -> Entries {
    mapped(e, |k, a| {
        if k.board >> q & 1 == 1 && holds(c, k.board) {
            let key = Key {
                board: k.board & !(1 << q),
                ancillas: k.ancillas | 1 << index,
            };
            (key, a * I)
        } else {
            (k, a)
        }
    })
}

fn iswap_where_reference(e: &Entries, s: u8, t: u8, ancillas: u128) -> Entries {
    mapped(e, |k, a| {
        if k.ancillas & ancillas != 0 && (k.board >> s & 1) != (k.board >> t & 1) {
            let board = k.board ^ (1 << s | 1 << t);
            (Key { board, ..k }, a * I)
        } else {
            (k, a)
        }
    })
}

#[test]
fn capture_where_matches_its_definition_on_a_large_sectored_state() {
    let mut s = sectored();
    let before = sorted(&s);
    let index = s.ancilla_count();
    let controls = Controls {
        zeros: 1 << 5,
        ones: 1 << 12,
    };
    let moved = before
        .iter()
        .filter(|(k, _)| k.board >> 7 & 1 == 1 && holds(controls, k.board))
        .count();
    // Some entries move and some with qubit 7 stay: the controls genuinely split the state.
    let occupied = before.iter().filter(|(k, _)| k.board >> 7 & 1 == 1).count();
    assert!(
        moved > 1000 && occupied - moved > 1000,
        "{moved} of {occupied}"
    );
    assert_eq!(s.capture_where(7, controls).unwrap(), index);
    assert_eq!(s.ancilla_count(), index + 1);
    assert_eq!(
        sorted(&s),
        capture_where_reference(&before, 7, controls, index)
    );
    // Taken back by the undo step the game records for it.
    s.uncapture(7, index).unwrap();
    assert_eq!(sorted(&s), before);
}

#[test]
fn iswap_where_ancillas_matches_its_definition_on_a_large_sectored_state() {
    let mut s = sectored();
    let before = sorted(&s);
    // The sectors of the first capture (ancilla bit 0): two of the three.
    let picked = before.iter().filter(|(k, _)| k.ancillas & 1 != 0).count();
    assert!(picked > 10_000 && picked < before.len());
    s.iswap_where_ancillas_always(4, 12, 1).unwrap();
    let expected = iswap_where_reference(&before, 4, 12, 1);
    assert_ne!(expected, before);
    assert_eq!(sorted(&s), expected);
    // The shortcut entry point agrees, and its inverse (three more iSwaps: i^4 = 1) restores.
    for _ in 0..3 {
        s.iswap_where_ancillas(4, 12, 1).unwrap();
    }
    assert_eq!(sorted(&s), before);
}

#[test]
fn project_boards_matches_its_definition_on_a_large_sectored_state() {
    let mut s = sectored();
    let before = sorted(&s);
    // Not one predicate: qubit 4 set, or qubits 6 and 12 both clear.
    let keep = |b: u64| b >> 4 & 1 == 1 || b & (1 << 6 | 1 << 12) == 0;
    let kept: Entries = before
        .iter()
        .copied()
        .filter(|(k, _)| keep(k.board))
        .collect();
    let mass: f64 = kept.iter().map(|(_, a)| a.norm_sqr()).sum();
    let total: f64 = before.iter().map(|(_, a)| a.norm_sqr()).sum();
    assert!(kept.len() > 1000 && kept.len() < before.len());
    let bytes_before = s.bytes();
    let p = s.project_boards(&keep).unwrap();
    assert!(
        (p - mass / total).abs() < 1e-14,
        "{p} against {}",
        mass / total
    );
    let after = sorted(&s);
    assert_eq!(after.len(), kept.len());
    let scale = 1.0 / mass.sqrt();
    for ((k, a), (rk, ra)) in after.iter().zip(&kept) {
        assert_eq!(k, rk);
        assert!((a - ra * scale).norm() < 1e-15, "{k:?}");
    }
    assert!((s.norm_sqr() - 1.0).abs() < 1e-12);
    // The removed entries' room is given back.
    assert!(s.bytes() < bytes_before);
    assert!(
        s.bytes() <= s.len() * 24 + 4096 * 3,
        "{} for {}",
        s.bytes(),
        s.len()
    );
}

#[test]
fn controlled_operations_refuse_over_the_budget_and_change_nothing() {
    let s = sectored();
    let before = sorted(&s);
    let mut tight = s.clone().with_memory_budget(s.bytes());
    let controls = Controls {
        zeros: 1 << 5,
        ones: 1 << 12,
    };
    // The capture's moved entries need new arrays; the iSwap's permutation a scratch.
    assert!(matches!(
        tight.capture_where(7, controls),
        Err(SimError::StateTooLarge { .. })
    ));
    assert_eq!(sorted(&tight), before);
    assert_eq!(tight.ancilla_count(), s.ancilla_count());
    assert!(matches!(
        tight.iswap_where_ancillas_always(4, 12, 1),
        Err(SimError::StateTooLarge { .. })
    ));
    assert_eq!(sorted(&tight), before);
    assert_eq!(tight.memory_budget(), s.bytes());
    // With room, both run (and the budget is the state's own again after the iSwap).
    let mut roomy = s.clone().with_memory_budget(3 * s.bytes());
    roomy.iswap_where_ancillas_always(4, 12, 1).unwrap();
    assert_eq!(roomy.memory_budget(), 3 * s.bytes());
    assert!(roomy.peak_bytes() <= 3 * s.bytes());
    roomy.capture_where(7, controls).unwrap();
}

#[test]
fn a_projection_onto_boards_keeps_its_removed_entries_for_undo() {
    let mut s = sectored();
    let before = sorted(&s);
    let keep = |b: u64| b >> 4 & 1 == 1 || b & (1 << 6 | 1 << 12) == 0;
    let mut plain = s.clone();
    let p_plain = plain.project_boards(&keep).unwrap();
    let (p, removed) = s.project_boards_keeping(&keep).unwrap();
    // The same projection, bit for bit, as the one without a record.
    assert_eq!(p, p_plain);
    assert_eq!(sorted(&s), sorted(&plain));
    assert_eq!(removed.len(), before.len() - s.len());
    // The record holds the removed entries only (not a copy of the state), and undoes it.
    assert!(removed.bytes() < before.len() * 24);
    s.unproject(removed).unwrap();
    let after = sorted(&s);
    assert_restored(&after, &before);
    // Keeping everything changes nothing and records nothing.
    let (p, removed) = s.project_boards_keeping(&|_| true).unwrap();
    assert_eq!((p, removed.len()), (1.0, 0));
    assert_eq!(sorted(&s), after);
    // No room beside the state for the removed entries: refused, nothing changed.
    let mut tight = s.clone();
    tight.set_memory_budget(tight.bytes());
    assert!(matches!(
        tight.project_boards_keeping(&keep),
        Err(SimError::StateTooLarge { .. })
    ));
    assert_eq!(sorted(&tight), after);
}

/// A projection onto boards that removes more than half of every sector (about three
/// quarters: qubits 6 and 7 must both be occupied) writes the survivors out and keeps the
/// sector's old arrays as its record (issue 10's peak target): the state and the
/// probability are those of the projection without a record, bit for bit, on one thread
/// and two; the record holds the removed entries with no room above them; the projection
/// holds at most 1.5x the state, and leaves the state and its record at the state's size;
/// the undo gives the state back.
#[test]
fn a_projection_onto_boards_of_more_than_half_keeps_the_old_arrays_as_its_record() {
    let base = sectored_of(700_000);
    let start = sorted(&base);
    let keep = |b: u64| b >> 7 & 1 == 1 && b >> 6 & 1 == 1;
    let kept = start.iter().filter(|(k, _)| keep(k.board)).count();
    assert!(3 * kept < start.len() && 5 * kept > start.len(), "{kept}");
    qchess_sim::set_adaptive_threads(false);
    let bytes = base.bytes();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut plain = base.clone();
            let p_plain = plain.project_boards(&keep).unwrap();
            let mut s = base.clone();
            s.reset_peak_bytes();
            let (p, removed) = s.project_boards_keeping(&keep).unwrap();
            assert_eq!(p.to_bits(), p_plain.to_bits(), "{threads} threads");
            assert!(sorted(&s) == sorted(&plain), "{threads} threads");
            assert_eq!(removed.len(), start.len() - kept);
            let gone: Entries = start
                .iter()
                .copied()
                .filter(|(k, _)| !keep(k.board))
                .collect();
            let mut recorded: Entries = removed.part().entries().collect();
            recorded.sort_by_key(|e| e.0);
            assert!(
                recorded == gone,
                "{threads} threads: the removed entries as they were"
            );
            assert!(
                removed.bytes() <= removed.len() * 24 + 64 * 24,
                "{}",
                removed.bytes()
            );
            assert!(
                2 * s.peak_bytes() <= 3 * bytes,
                "{threads} threads: peak {} of {bytes}",
                s.peak_bytes()
            );
            assert!(s.bytes() + removed.bytes() <= bytes + 64 * 24);
            s.unproject(removed).unwrap();
            let after = sorted(&s);
            assert_restored(&after, &start);
        });
    }
}

/// The sum of `terms`, each term's rounding carried (Neumaier): accurate to about one
/// rounding whatever their number.
pub(crate) fn compensated_sum(terms: impl Iterator<Item = f64>) -> f64 {
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

/// The squared norm of `e`, summed with Neumaier's compensation (a plain sum of 700 000
/// terms drifts by about 1e-12).
fn exact_sum(e: &Entries) -> f64 {
    compensated_sum(e.iter().map(|(_, a)| a.norm_sqr()))
}

/// Above `PARALLEL_MIN` (131 072 entries) a sector's projection onto boards and a capture
/// that splits it run as parallel block jobs (`split_project`): on pools of one and two
/// threads they give their definitions' entries, the same bits on both, and are taken back.
/// The projection leaves qubit 7 occupied in about two thirds of each sector, so the capture
/// of 7 keeps its moved entries in place (the ones that stay are copied); the controlled
/// capture of 12 that follows copies its moved entries (fewer than stay).
#[test]
fn large_partitions_match_their_definitions_on_any_thread_count() {
    let base = sectored_of(700_000);
    let start = sorted(&base);
    let keep = |b: u64| b >> 7 & 1 == 1 || b >> 6 & 1 == 1;
    qchess_sim::set_adaptive_threads(false);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = base.clone();
            let (p, removed) = s.project_boards_keeping(&keep).unwrap();
            let kept: Entries = start
                .iter()
                .copied()
                .filter(|(k, _)| keep(k.board))
                .collect();
            let (mass, total) = (exact_sum(&kept), exact_sum(&start));
            assert!(
                (p - mass / total).abs() < 1e-12,
                "{p} against {mass} / {total}"
            );
            let projected = sorted(&s);
            assert_eq!(projected.len(), kept.len());
            for ((k, a), (rk, ra)) in projected.iter().zip(&kept) {
                assert_eq!(k, rk);
                assert!((a - ra / mass.sqrt()).norm() < 1e-15, "{k:?}");
            }
            // A sector above the parallel threshold, where qubit 7 is occupied in most
            // entries of every sector.
            let sizes = sector_sizes(&projected);
            assert!(sizes.iter().any(|&(_, n)| n >= 1 << 17), "{sizes:?}");
            for &(anc, n) in &sizes {
                let occupied = (projected.iter())
                    .filter(|(k, _)| k.ancillas == anc && k.board >> 7 & 1 == 1)
                    .count();
                assert!(2 * occupied > n + n / 10, "{occupied} of {n}");
            }
            let first = s.ancilla_count();
            assert_eq!(s.capture(7).unwrap(), first);
            let captured = sorted(&s);
            assert_eq!(
                captured,
                capture_where_reference(&projected, 7, Controls::NONE, first)
            );
            let controls = Controls {
                zeros: 1 << 5,
                ones: 0,
            };
            let second = s.capture_where(12, controls).unwrap();
            let twice = sorted(&s);
            assert_eq!(
                twice,
                capture_where_reference(&captured, 12, controls, second)
            );
            let bits: Vec<(Key, u64, u64)> = (twice.iter())
                .map(|(k, a)| (*k, a.re.to_bits(), a.im.to_bits()))
                .collect();
            // Taken back, capture by capture, then the projection.
            s.uncapture(12, second).unwrap();
            assert_eq!(sorted(&s), captured);
            s.uncapture(7, first).unwrap();
            assert_eq!(sorted(&s), projected);
            s.unproject(removed).unwrap();
            let back = sorted(&s);
            assert_restored(&back, &start);
            (p.to_bits(), bits)
        })
    };
    let one = run(1);
    let two = run(2);
    assert!(one == two, "one and two threads differ");
}
