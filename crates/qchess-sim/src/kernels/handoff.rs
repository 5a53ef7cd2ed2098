//! Regions of a pair of parallel arrays (keys and amplitudes) handed from finished block jobs
//! to later ones, so that block jobs running in parallel can compact a sector **in place**
//! straight to the entries' final positions.
//!
//! Every job owns its block's slices while it reads them. A compacting job's output goes
//! below its own block, into places other blocks were read from: when a job is done with
//! its block, it gives the part it did not write ([`Regions::give`]); a later job takes
//! exactly the range its output needs ([`Regions::take`]), waiting until every block under
//! that range has been given. Blocks are claimed in increasing order, and a job waits only
//! for blocks below its own, so the lowest unfinished block never waits: no deadlock, and
//! with one thread nothing ever waits. All of it is safe Rust: the regions are disjoint
//! `&mut` slices split off the arrays and moved between threads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// One region: its keys and amplitudes (equally long).
pub(crate) type Piece<'a, K, A> = (&'a mut [K], &'a mut [A]);

/// The regions given and not yet taken, by start index, and a wake-up for waiting takers.
pub(crate) struct Regions<'a, K, A> {
    free: Mutex<BTreeMap<usize, Piece<'a, K, A>>>,
    given: Condvar,
    /// Set when a job unwound (a bug): its regions will never be given, so a waiting taker
    /// panics too instead of waiting for ever.
    abandoned: AtomicBool,
}

/// Marks the [`Regions`] abandoned if the job holding it unwinds ([`Regions::watch`]).
pub(crate) struct Watch<'r, 'a, K, A>(&'r Regions<'a, K, A>);

impl<K, A> Drop for Watch<'_, '_, K, A> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abandoned.store(true, Ordering::SeqCst);
            let _guard = self.0.lock();
            self.0.given.notify_all();
        }
    }
}

impl<'a, K, A> Regions<'a, K, A> {
    /// No region given yet.
    pub(crate) fn new() -> Self {
        Regions {
            free: Mutex::new(BTreeMap::new()),
            given: Condvar::new(),
            abandoned: AtomicBool::new(false),
        }
    }

    /// A guard for one worker: if the worker unwinds while holding it, every taker waiting
    /// now or later panics as well (so the parallel section ends with the panic instead of
    /// waiting for regions that will never come).
    pub(crate) fn watch(&self) -> Watch<'_, 'a, K, A> {
        Watch(self)
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<usize, Piece<'a, K, A>>> {
        // A job that panicked leaves consistent regions behind (each insert is whole).
        self.free.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Gives the region starting at index `start` (nothing for an empty one) and wakes the
    /// waiting takers.
    pub(crate) fn give(&self, start: usize, keys: &'a mut [K], amps: &'a mut [A]) {
        debug_assert_eq!(keys.len(), amps.len());
        if keys.is_empty() {
            return;
        }
        self.lock().insert(start, (keys, amps));
        self.given.notify_all();
    }

    /// Takes the range `[lo, hi)` (`lo < hi`), as the pieces that cover it in index order,
    /// once all of it has been given; the parts of those regions outside the range stay.
    pub(crate) fn take(&self, lo: usize, hi: usize) -> Vec<Piece<'a, K, A>> {
        debug_assert!(lo < hi);
        let mut free = self.lock();
        while !covers(&free, lo, hi) {
            assert!(
                !self.abandoned.load(Ordering::SeqCst),
                "a block job below this one failed; its places will never be handed over"
            );
            free = self.given.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        let starts: Vec<usize> = free
            .range(..hi)
            .rev()
            .take_while(|(s, (k, _))| **s + k.len() > lo)
            .map(|(s, _)| *s)
            .collect();
        let mut pieces = Vec::with_capacity(starts.len());
        for &s in starts.iter().rev() {
            let Some((mut k, mut a)) = free.remove(&s) else {
                continue;
            };
            if s < lo {
                let (left_k, right_k) = k.split_at_mut(lo - s);
                let (left_a, right_a) = a.split_at_mut(lo - s);
                free.insert(s, (left_k, left_a));
                (k, a) = (right_k, right_a);
            }
            let from = s.max(lo);
            if from + k.len() > hi {
                let (in_k, rest_k) = k.split_at_mut(hi - from);
                let (in_a, rest_a) = a.split_at_mut(hi - from);
                free.insert(hi, (rest_k, rest_a));
                (k, a) = (in_k, in_a);
            }
            pieces.push((k, a));
        }
        pieces
    }
}

/// Whether the given regions cover `[lo, hi)` without a gap.
fn covers<K, A>(free: &BTreeMap<usize, Piece<'_, K, A>>, lo: usize, hi: usize) -> bool {
    let mut need = hi;
    for (&s, (k, _)) in free.range(..hi).rev() {
        if s + k.len() < need {
            return false;
        }
        if s <= lo {
            return true;
        }
        need = s;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_exactly_the_range_from_several_regions_and_keeps_the_rest() {
        let mut keys: Vec<u32> = (0..100).collect();
        let mut amps: Vec<u32> = (100..200).collect();
        let (k0, k1) = keys.split_at_mut(40);
        let (a0, a1) = amps.split_at_mut(40);
        let (k1, k2) = k1.split_at_mut(30);
        let (a1, a2) = a1.split_at_mut(30);
        let r = Regions::new();
        r.give(0, k0, a0);
        r.give(70, k2, a2);
        {
            let free = r.lock();
            assert!(covers(&free, 5, 40));
            assert!(!covers(&free, 35, 45));
            assert!(covers(&free, 75, 100));
        }
        r.give(40, k1, a1);
        let pieces = r.take(35, 75);
        let got: Vec<(u32, u32)> = pieces
            .iter()
            .flat_map(|(k, a)| k.iter().copied().zip(a.iter().copied()))
            .collect();
        let want: Vec<(u32, u32)> = (35..75).map(|i| (i, i + 100)).collect();
        assert_eq!(got, want);
        assert_eq!(pieces.len(), 3);
        // What is left: [0, 35) and [75, 100).
        let rest = r.take(0, 35);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].0.len(), 35);
        assert_eq!(r.take(75, 100)[0].0[0], 75);
        assert!(r.lock().is_empty());
    }

    #[test]
    fn a_waiting_taker_panics_when_the_giver_unwinds() {
        let r: Regions<'_, u8, u8> = Regions::new();
        std::thread::scope(|s| {
            let giver = s.spawn(|| {
                let _w = r.watch();
                std::thread::sleep(std::time::Duration::from_millis(5));
                panic!("the giver fails before it gives");
            });
            let taker = s.spawn(|| {
                let _w = r.watch();
                let _ = r.take(0, 4);
            });
            assert!(giver.join().is_err());
            assert!(
                taker.join().is_err(),
                "the taker gave up instead of waiting for ever"
            );
        });
    }

    #[test]
    fn a_taker_waits_for_the_region_another_thread_gives() {
        let mut keys = [0u8; 64];
        let mut amps = [0u8; 64];
        let (k0, k1) = keys.split_at_mut(32);
        let (a0, a1) = amps.split_at_mut(32);
        let r = Regions::new();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let pieces = r.take(16, 48);
                for (k, a) in pieces {
                    k.fill(1);
                    a.fill(2);
                }
            });
            r.give(32, k1, a1);
            std::thread::sleep(std::time::Duration::from_millis(5));
            r.give(0, k0, a0);
            waiter.join().expect("the waiting taker finishes");
        });
        let ones: Vec<usize> = (0..64).filter(|&i| keys[i] == 1).collect();
        assert_eq!(ones, (16..48).collect::<Vec<_>>());
        assert!(amps[16..48].iter().all(|&a| a == 2));
    }
}
