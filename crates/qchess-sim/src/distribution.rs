//! The board distribution (ancillas marginalised) in memory proportional to the answer: a
//! streaming iterator that merges the key-sorted sectors, and a bounded top-k selection.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::scan::norm2;
use crate::perm::{KeyTable, map_key};
use crate::state::State;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Every board of a state once with its probability (ancillas summed over), in an order
/// fixed by the state (not by probability). Holds one cursor per ancilla sector, never a
/// copy of the state. Made by [`State::board_distribution_iter`].
pub struct BoardDistributionIter<'a, T: Amplitude> {
    state: &'a State<T>,
    table: Option<Box<KeyTable>>,
    norm: f64,
    /// (next physical key, sector) of every sector not yet exhausted, smallest key on top.
    heads: BinaryHeap<Reverse<(u64, usize)>>,
    pos: Vec<usize>,
}

impl<T: Amplitude> Iterator for BoardDistributionIter<'_, T> {
    type Item = (u64, f64);

    fn next(&mut self) -> Option<(u64, f64)> {
        let Reverse((key, _)) = *self.heads.peek()?;
        let mut p = 0.0f64;
        // Equal boards from different sectors are summed in sector order (the heap pops
        // equal keys by sector index), as the sort-based distribution did.
        while let Some(&Reverse((k, si))) = self.heads.peek() {
            if k != key {
                break;
            }
            self.heads.pop();
            let s = &self.state.sectors[si];
            p += norm2(s.amps[self.pos[si]]);
            self.pos[si] += 1;
            if let Some(&next) = s.keys.get(self.pos[si]) {
                self.heads.push(Reverse((next, si)));
            }
        }
        if self.norm > 0.0 {
            p /= self.norm;
        }
        Some((map_key(self.table.as_deref(), key), p))
    }
}

/// Most probable first, ties by smaller board: `Less` means "comes first".
fn rank(x: &(u64, f64), y: &(u64, f64)) -> Ordering {
    y.1.total_cmp(&x.1).then(x.0.cmp(&y.0))
}

/// A `(board, probability)` ordered by [`rank`], so a max-heap's top is the worst kept.
pub(crate) struct Ranked((u64, f64));

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        rank(&self.0, &other.0) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        rank(&self.0, &other.0)
    }
}

impl<T: Amplitude> State<T> {
    /// Streams every board with its probability (ancillas summed over) without building the
    /// distribution: memory is one cursor per ancilla sector. Boards come in an order fixed
    /// by the state, not sorted by probability; use [`State::board_distribution_top`] for
    /// the most probable ones.
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let mut all: Vec<(u64, f64)> = s.board_distribution_iter().collect();
    /// all.sort_by_key(|e| e.0);
    /// assert_eq!(all.len(), 2);
    /// assert_eq!((all[0].0, all[1].0), (0b010, 0b100));
    /// assert!((all[0].1 - 0.5).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn board_distribution_iter(&self) -> BoardDistributionIter<'_, T> {
        let heads = self
            .sectors
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.keys.first().map(|&k| Reverse((k, i))))
            .collect();
        BoardDistributionIter {
            state: self,
            table: self.perm.logical_table(),
            norm: self.norm_sqr(),
            heads,
            pos: vec![0; self.sectors.len()],
        }
    }

    /// The `k` most probable boards (ancillas summed over), most probable first, ties by
    /// board key, and the number of distinct boards in the whole distribution. Memory is
    /// `O(k)` plus one cursor per ancilla sector, whatever the state's size.
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// s.sqrt_iswap(1, 3, Controls::NONE)?; // 0b010 -> 0b010 and 0b1000, a quarter each
    /// let (top, total) = s.board_distribution_top(1);
    /// assert_eq!(total, 3);
    /// assert_eq!(top.len(), 1);
    /// assert_eq!(top[0].0, 0b100);
    /// assert!((top[0].1 - 0.5).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn board_distribution_top(&self, k: usize) -> (Vec<(u64, f64)>, usize) {
        self.board_distribution_top_into(k, BinaryHeap::with_capacity(k.min(1 << 16) + 1))
    }

    /// [`State::board_distribution_top`] within the memory budget (issue 10, Deliver 5): the
    /// selection's bytes (16 per board, at most `k` and at most [`State::len`] boards) are
    /// asked of what the budget leaves after [`State::bytes`] before anything is allocated,
    /// then reserved fallibly. [`SimError::StateTooLarge`] (bytes asked and available) when
    /// they do not fit, [`SimError::OutOfMemory`] when the reservation fails; the state is
    /// never changed. The answer is the same as [`State::board_distribution_top`]'s.
    ///
    /// ```
    /// use qchess_sim::{Controls, SimError, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// assert_eq!(s.try_board_distribution_top(5)?, s.board_distribution_top(5));
    /// s.set_memory_budget(s.bytes() + 16); // room for one board, not two
    /// assert_eq!(s.try_board_distribution_top(1)?, s.board_distribution_top(1));
    /// assert_eq!(
    ///     s.try_board_distribution_top(2),
    ///     Err(SimError::StateTooLarge { asked: 32, available: 16 })
    /// );
    /// # Ok::<(), SimError>(())
    /// ```
    pub fn try_board_distribution_top(
        &self,
        k: usize,
    ) -> Result<(Vec<(u64, f64)>, usize), SimError> {
        let kept = k.min(self.len());
        self.ask(kept.saturating_mul(std::mem::size_of::<(u64, f64)>()))?;
        let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
        // The selection pops before it pushes once it holds k: it never grows this.
        heap.try_reserve_exact(kept)
            .map_err(|_| SimError::OutOfMemory { states: kept })?;
        Ok(self.board_distribution_top_into(k, heap))
    }

    /// [`State::board_distribution_top`] selecting into `heap` (empty; its capacity is
    /// reused: it never holds more than `k` boards, so a caller that reserved `min(k, boards)`
    /// allocates nothing more).
    pub(crate) fn board_distribution_top_into(
        &self,
        k: usize,
        mut heap: BinaryHeap<Ranked>,
    ) -> (Vec<(u64, f64)>, usize) {
        let mut total = 0usize;
        for e in self.board_distribution_iter() {
            total += 1;
            if k == 0 {
                continue;
            }
            if heap.len() < k {
                heap.push(Ranked(e));
            } else if heap.peek().is_some_and(|worst| rank(&e, &worst.0).is_lt()) {
                heap.pop();
                heap.push(Ranked(e));
            }
        }
        let top = heap.into_sorted_vec().into_iter().map(|r| r.0).collect();
        (top, total)
    }
}
