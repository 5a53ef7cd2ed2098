//! The memory budget's error paths (a tiny budget refuses, nothing changes) and the bounded
//! board distribution against a reference summed from the entries.

use crate::states::game_shaped;
use qchess_sim::{Controls, Key, Predicate, SimError, State};
use std::collections::BTreeMap;

fn reference(s: &State<f64>) -> Vec<(u64, f64)> {
    let mut by_board: BTreeMap<u64, f64> = BTreeMap::new();
    for (k, a) in s.entries() {
        *by_board.entry(k.board).or_default() += a.norm_sqr();
    }
    let norm = s.norm_sqr();
    by_board.into_iter().map(|(b, p)| (b, p / norm)).collect()
}

#[test]
fn bounded_distribution_matches_the_reference() {
    let mut checked_multi_sector = false;
    for seed in 0..40 {
        let s = game_shaped(seed);
        let want = reference(&s);
        let mut streamed: Vec<(u64, f64)> = s.board_distribution_iter().collect();
        streamed.sort_by_key(|e| e.0);
        assert_eq!(streamed.len(), want.len(), "seed {seed}");
        for (x, y) in streamed.iter().zip(&want) {
            assert_eq!(x.0, y.0);
            assert!((x.1 - y.1).abs() < 1e-14, "seed {seed}: {x:?} vs {y:?}");
        }
        let all = s.board_distribution(None);
        for k in [0, 1, 3, 10, all.len() + 5] {
            let (top, total) = s.board_distribution_top(k);
            assert_eq!(total, want.len());
            assert_eq!(top, all[..k.min(all.len())].to_vec(), "seed {seed} k {k}");
            assert_eq!(s.board_distribution(Some(k)), top);
        }
        // Most probable first, ties by board.
        assert!(
            all.windows(2)
                .all(|w| w[0].1 > w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0))
        );
        checked_multi_sector |= s.entries().any(|(k, _)| k.ancillas != 0) && want.len() > 4;
    }
    assert!(checked_multi_sector);
}

#[test]
fn a_tiny_budget_refuses_every_growing_operation_and_changes_nothing() {
    let mut s = game_shaped(3);
    let before: Vec<(Key, num_complex::Complex<f64>)> = s.entries().collect();
    s.release_buffers();
    s.set_memory_budget(s.bytes() + 8);
    let too_large = |r: Result<(), SimError>| {
        assert!(
            matches!(r, Err(SimError::StateTooLarge { asked, available }) if asked > available),
            "{r:?}"
        );
    };
    too_large(s.split(0, 20, 21, Controls::NONE));
    too_large(s.sqrt_iswap(0, 20, Controls::NONE));
    // A capture copies the smaller part of a sector it splits into new arrays: pick a
    // square occupied in some branches and empty in others (one occupied in every branch
    // moves its sectors whole, asking nothing: the next test).
    let q = (0..64u8)
        .find(|&q| (0.1..0.9).contains(&s.probability(Predicate::One(q))))
        .unwrap();
    too_large(s.capture(q).map(|_| ()));
    too_large(s.reserve_buffers(1000));
    too_large(s.try_clone(0).map(|_| ()));
    let after: Vec<(Key, num_complex::Complex<f64>)> = s.entries().collect();
    assert_eq!(before, after);
    // With room again the same gate runs.
    s.set_memory_budget(usize::MAX);
    s.sqrt_iswap(0, 20, Controls::NONE).unwrap();
}

/// A capture of a square occupied in every branch moves every sector whole, in place: it asks
/// the budget for nothing (so it runs under a budget of the state's bytes), and gives what
/// eq. 18 gives: each key without the square, under the fresh ancilla, amplitude times `i`.
#[test]
fn a_capture_of_a_square_occupied_everywhere_moves_the_sectors_in_place() {
    let mut checked = 0;
    for seed in 0..20 {
        let mut s = game_shaped(seed);
        let Some(q) = (0..64u8).find(|&q| s.probability(Predicate::One(q)) == 1.0) else {
            continue;
        };
        let before: Vec<(Key, num_complex::Complex<f64>)> = s.entries().collect();
        s.release_buffers();
        let bytes = s.bytes();
        s.set_memory_budget(bytes);
        let x = s.capture(q).unwrap();
        assert_eq!(s.bytes(), bytes, "seed {seed}: nothing allocated");
        let mut want: Vec<(Key, num_complex::Complex<f64>)> = before
            .iter()
            .map(|&(k, a)| {
                let key = Key {
                    board: k.board & !(1u64 << q),
                    ancillas: k.ancillas | (1u128 << x),
                };
                (key, a * num_complex::Complex::new(0.0, 1.0))
            })
            .collect();
        want.sort_by_key(|e| (e.0.ancillas, e.0.board));
        let mut got: Vec<(Key, num_complex::Complex<f64>)> = s.entries().collect();
        got.sort_by_key(|e| (e.0.ancillas, e.0.board));
        assert_eq!(got, want, "seed {seed}");
        checked += 1;
    }
    assert!(checked >= 10, "{checked}");
}

/// A capture of a square occupied in most branches of a sector copies the entries that stay,
/// not the moved ones: it asks the budget for the smaller part only (24 bytes an entry), so
/// it holds at most 1.5x the state, and it gives what eq. 18 gives (each moved key without
/// the square, under the fresh ancilla, amplitude times `i`). One byte less is refused with
/// nothing changed.
#[test]
fn a_capture_copies_the_smaller_part_of_each_sector() {
    use num_complex::Complex;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let q = 5u8;
    // Random 20-bit boards in two sectors: `q` occupied in about 90 % of sector 0's entries
    // and 30 % of sector 1's (there the moved entries are the smaller part).
    let mut picked: BTreeMap<(u128, u64), Complex<f64>> = BTreeMap::new();
    while picked.len() < 20_000 {
        let ancillas = rng.random_range(0..2u128);
        let occupied = rng.random_bool(if ancillas == 0 { 0.9 } else { 0.3 });
        let board = (rng.random::<u64>() & 0xf_ffff & !(1 << q)) | u64::from(occupied) << q;
        let a = Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
        picked.insert((ancillas, board), a);
    }
    let list = (picked.iter())
        .map(|(&(ancillas, board), &a)| (Key { board, ancillas }, a))
        .collect();
    let mut s =
        State::<f64>::from_amplitudes(list, qchess_sim::Normalization::Renormalize).unwrap();
    let before: Vec<(Key, Complex<f64>)> = s.entries().collect();
    let part = |ancillas: u128| {
        let (mut moved, mut stay) = (0, 0);
        for (k, _) in before.iter().filter(|(k, _)| k.ancillas == ancillas) {
            if k.board >> q & 1 == 1 {
                moved += 1;
            } else {
                stay += 1;
            }
        }
        assert!(moved > 0 && stay > 0);
        usize::min(moved, stay)
    };
    let smaller = part(0) + part(1);
    s.release_buffers();
    let bytes = s.bytes();
    s.set_memory_budget(bytes + smaller * 24 - 1);
    assert!(matches!(s.capture(q), Err(SimError::StateTooLarge { .. })));
    assert_eq!(s.entries().collect::<Vec<_>>(), before);
    s.set_memory_budget(bytes + smaller * 24);
    s.reset_peak_bytes();
    let x = s.capture(q).unwrap();
    assert_eq!(x, 1);
    assert!(
        s.peak_bytes() <= bytes + smaller * 24,
        "{} > {bytes} + {smaller} * 24",
        s.peak_bytes()
    );
    let mut want: Vec<(Key, Complex<f64>)> = (before.iter())
        .map(|&(k, a)| {
            if k.board >> q & 1 == 1 {
                let key = Key {
                    board: k.board & !(1u64 << q),
                    ancillas: k.ancillas | 1 << x,
                };
                (key, a * Complex::new(0.0, 1.0))
            } else {
                (k, a)
            }
        })
        .collect();
    want.sort_by_key(|e| (e.0.ancillas, e.0.board));
    let mut got: Vec<(Key, Complex<f64>)> = s.entries().collect();
    got.sort_by_key(|e| (e.0.ancillas, e.0.board));
    assert_eq!(got, want);
    assert_eq!(s.len(), before.len());
    // And back.
    s.uncapture(q, x).unwrap();
    assert_eq!(s.entries().collect::<Vec<_>>(), before);
}
