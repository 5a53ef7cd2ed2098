//! [`QuantumState`] for the sharded state: the Cantwell game (`qchess_cantwell::Game`) runs
//! on it unchanged. Every method is collective and returns the same value on every rank, so
//! the game takes the same decisions everywhere. The transport is this thread's
//! ([`comm::install`]); the local set starts with [`comm::default_capacity`] qubits.

use crate::comm::{self, max_f64, sum_f64, sum_u64};
use crate::plan::LocalSet;
use crate::sharded::ShardedState;
use num_complex::Complex;
use qchess_sim::{
    Amplitude, Controls, Key, Normalization, Predicate, QuantumState, SimError, State,
};

fn to64<T: Amplitude>(a: Complex<T>) -> Complex<f64> {
    Complex::new(a.re.as_f64(), a.im.as_f64())
}

fn fresh_set() -> LocalSet {
    LocalSet::new(comm::default_capacity(), &[])
}

/// `(or, and)` of one flag pair over all ranks.
pub(crate) fn any_all(flags: (bool, bool)) -> (bool, bool) {
    let all = comm::current().all_gather(&[u64::from(flags.0), u64::from(flags.1)]);
    let any = all.chunks(2).any(|w| w[0] == 1);
    let every = all.chunks(2).all(|w| w[1] == 1);
    (any, every)
}

impl<T: Amplitude> ShardedState<T>
where
    State<T>: QuantumState,
{
    /// The whole state as one local [`State`] on every rank (for read-outs that need pairs
    /// of entries a rank may not hold together). Collective, within the memory budget: the
    /// gather ([`ShardedState::gather_entries`]) asks each rank's budget for the gathered
    /// entries and, beside them, the local state built from them (a key and an amplitude an
    /// entry, twice for the arrays' growth); if any rank refuses, every rank answers
    /// [`SimError::StateTooLarge`] and nothing is gathered.
    fn gathered(&self) -> Result<State<T>, SimError> {
        let built = 2 * (8 + std::mem::size_of::<Complex<T>>());
        let entries = self.gather(Some(built))?;
        State::from_shard(entries, self.ancilla_count(), usize::MAX)
    }

    /// The reduced density matrix of `a`, `b` when both are in L: each rank's piece's
    /// matrix weighted by its norm, summed over the ranks (collective) and divided by the
    /// whole state's norm.
    fn summed_density_matrix(&self, a: u8, b: u8) -> [[Complex<f64>; 4]; 4] {
        let local_norm = self.local().norm_sqr();
        let norm = self.norm_sqr();
        let rho = self.local().reduced_density_matrix(a, b);
        let mut words = Vec::with_capacity(32);
        for row in &rho {
            for z in row {
                words.push(z.re * local_norm);
                words.push(z.im * local_norm);
            }
        }
        let s = sum_f64(&*comm::current(), &words);
        let mut out = [[Complex::new(0.0, 0.0); 4]; 4];
        for (i, row) in out.iter_mut().enumerate() {
            for (j, z) in row.iter_mut().enumerate() {
                let w = 2 * (4 * i + j);
                if norm > 0.0 {
                    *z = Complex::new(s[w] / norm, s[w + 1] / norm);
                }
            }
        }
        out
    }

    /// The budget check of [`QuantumState::try_board_distribution`] (collective; described
    /// there) for a gather of at most `limit` boards a rank: `Ok` on every rank or `Err` on
    /// every rank.
    fn ask_board_gather(&self, limit: Option<usize>) -> Result<(), SimError> {
        let local = self.local();
        let mine = limit.map_or(local.len(), |k| k.min(local.len()));
        let counts = comm::current().all_gather(&[mine as u64]);
        let gathered: usize = counts.iter().map(|&c| c as usize).sum();
        let entry = std::mem::size_of::<(u64, f64)>();
        let ranks = comm::current().size();
        let asked = mine
            .saturating_mul(ranks + 1)
            .saturating_add(gathered.saturating_mul(2))
            .saturating_mul(entry);
        let available = local.memory_budget().saturating_sub(local.bytes());
        let fits = asked <= available;
        let (_, all_fit) = any_all((false, fits));
        if !fits {
            return Err(SimError::StateTooLarge { asked, available });
        }
        if !all_fit {
            return Err(SimError::StateTooLarge {
                asked,
                available: 0,
            });
        }
        Ok(())
    }
}

impl<T: Amplitude> QuantumState for ShardedState<T>
where
    State<T>: QuantumState,
{
    fn classical(board: u64) -> Self {
        ShardedState::classical_with(board, fresh_set())
    }

    fn from_entries(
        entries: Vec<(Key, Complex<f64>)>,
        normalization: Normalization,
    ) -> Result<Self, SimError> {
        let entries = entries
            .into_iter()
            .map(|(k, a)| (k, Complex::new(T::of_f64(a.re), T::of_f64(a.im))))
            .collect();
        ShardedState::from_amplitudes(entries, normalization, fresh_set())
    }

    fn len(&self) -> usize {
        ShardedState::len(self)
    }

    /// The most heap bytes any rank holds (the same number on every rank).
    fn bytes(&self) -> usize {
        max_f64(&*comm::current(), &[self.local().bytes() as f64])[0] as usize
    }

    /// Per rank: the most basis states one rank's piece may hold.
    fn cap(&self) -> usize {
        ShardedState::cap(self)
    }

    fn set_cap(&mut self, max_states: usize) {
        ShardedState::set_cap(self, max_states);
    }

    fn ancilla_count(&self) -> u32 {
        ShardedState::ancilla_count(self)
    }

    /// The smallest budget of any rank (collective: the same number on every rank). Each
    /// rank's piece has its own budget, which its own allocations ask (per rank, like the
    /// cap); the trait's answer is what the game decides with, as `memory_budget() -
    /// bytes()` with [`QuantumState::bytes`] the largest rank's, so every rank must see the
    /// same number or the ranks could take different branches and wait for ever in the next
    /// collective.
    fn memory_budget(&self) -> usize {
        let mine = u64::try_from(self.local().memory_budget()).unwrap_or(u64::MAX);
        let least = comm::current().all_gather(&[mine]).into_iter().min();
        least.map_or(usize::MAX, |b| usize::try_from(b).unwrap_or(usize::MAX))
    }

    fn set_memory_budget(&mut self, bytes: usize) {
        self.local_mut().set_memory_budget(bytes);
    }

    /// Every rank copies its piece under its own budget; if any rank's budget refuses, every
    /// rank refuses (collective), so the ranks never disagree on whether the copy exists.
    fn try_clone(&self, also_held: usize) -> Result<Self, SimError> {
        let piece = self.local().try_clone(also_held);
        let (_, all_ok) = any_all((false, piece.is_ok()));
        match piece {
            Err(e) => Err(e),
            Ok(_) if !all_ok => Err(SimError::StateTooLarge {
                asked: self.local().bytes(),
                available: 0,
            }),
            Ok(piece) => Ok(self.with_piece(piece)),
        }
    }

    /// Collective, in memory proportional to `k` times the number of ranks (issue 10,
    /// Deliver 6): each rank selects its own top `k` boards and counts its distinct boards
    /// in one pass over its piece; only the tops are gathered (as
    /// [`ShardedState::board_distribution`] gathers them with `Some(k)`), and the counts are
    /// summed by one all-gather of a word a rank. All ancilla values of a board live on one
    /// rank, so the global top `k` is among the ranks' tops and the ranks' counts add up to
    /// the whole state's. The same answer on every rank.
    fn board_distribution_top(&self, k: usize) -> (Vec<(u64, f64)>, usize) {
        self.top_boards(k)
    }

    /// Collective, streamed in bounded rounds, nothing gathered (issue 10, Deliver 5):
    /// every rank walks its own piece's boards and each round all-gathers up to
    /// 4096 boards a rank (16 bytes a board), visited in rank
    /// order, so memory is proportional to that round times the number of ranks, whatever
    /// the state's size. Every rank calls `f` with the same boards in the same order (each
    /// board once, with its probability in the whole state). So
    /// [`QuantumState::try_for_each_board`] (the trait's default) never refuses.
    fn for_each_board(&self, f: &mut dyn FnMut(u64, f64)) {
        self.stream_boards(crate::readouts::BOARD_ROUND, f);
    }

    /// Collective, in memory proportional to `k` times the number of ranks: only each rank's
    /// top `k` boards are gathered (as [`QuantumState::board_distribution_top`] does), so
    /// every rank's budget is asked for that bounded gather first, as
    /// [`QuantumState::try_board_distribution`] asks it with `Some(k)`: if any rank's budget
    /// refuses, every rank refuses ([`SimError::StateTooLarge`]) and nothing is gathered.
    /// Otherwise the answer is the same as the unbudgeted one (top `k` and the number of
    /// distinct boards of the whole state).
    fn try_board_distribution_top(&self, k: usize) -> Result<(Vec<(u64, f64)>, usize), SimError> {
        self.ask_board_gather(Some(k))?;
        Ok(self.top_boards(k))
    }

    /// Collective, and nothing is gathered (issue 10, Deliver 5: the trait's default reads
    /// [`QuantumState::for_each_board`], which here gathers the whole distribution outside
    /// the memory budget): each rank reads its own piece ([`State::occupancy_bounds`]), then
    /// one all-gather of two words a rank ands the `always` masks and ors the `ever` masks.
    /// A rank with an empty piece gives `(!0, 0)`, which changes neither. The answer is the
    /// whole state's, the same on every rank.
    fn occupancy_bounds(&self) -> (u64, u64) {
        let (always, ever) = self.local().occupancy_bounds();
        let all = comm::current().all_gather(&[always, ever]);
        all.chunks_exact(2)
            .fold((!0u64, 0u64), |(a, e), w| (a & w[0], e | w[1]))
    }

    /// Collective, and nothing is gathered (issue 10, Deliver 5: the trait's default reads
    /// [`QuantumState::for_each_board`], which here gathers the whole distribution outside
    /// the memory budget): each rank weighs its own piece ([`State::pattern_weights`],
    /// relative to the piece's norm), scales by the piece's norm and one sum over the ranks
    /// ([`sum_f64`], one word a pattern) is divided by the whole state's norm, as
    /// [`ShardedState::qubit_probabilities`] is. A pattern no stored board with a non-zero
    /// weight matches is exactly `0.0`, as on the local state; memory is the patterns', never
    /// the state's.
    fn pattern_weights(&self, patterns: &[(u64, u64, u64)]) -> Vec<f64> {
        let local_norm = self.local().norm_sqr();
        let mut mine: Vec<f64> = self
            .local()
            .pattern_weights(patterns)
            .into_iter()
            .map(|w| w * local_norm)
            .collect();
        mine.push(local_norm);
        let mut s = sum_f64(&*comm::current(), &mine);
        let norm = s.pop().unwrap_or(0.0);
        for w in &mut s {
            *w = if norm > 0.0 { *w / norm } else { 0.0 };
        }
        s
    }

    fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        ShardedState::iswap(self, a, b, controls)
    }

    fn iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        ShardedState::iswap_inv(self, a, b, controls)
    }

    fn sqrt_iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        ShardedState::sqrt_iswap(self, a, b, controls)
    }

    fn sqrt_iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        ShardedState::sqrt_iswap_inv(self, a, b, controls)
    }

    fn split(&mut self, s: u8, t1: u8, t2: u8, controls: Controls) -> Result<(), SimError> {
        ShardedState::split(self, s, t1, t2, controls)
    }

    fn merge(&mut self, s1: u8, s2: u8, t: u8, controls: Controls) -> Result<(), SimError> {
        ShardedState::merge(self, s1, s2, t, controls)
    }

    fn split_slide(
        &mut self,
        s: u8,
        t1: u8,
        t2: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError> {
        ShardedState::split_slide(self, s, t1, t2, path1, path2)
    }

    fn merge_slide(
        &mut self,
        s1: u8,
        s2: u8,
        t: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError> {
        ShardedState::merge_slide(self, s1, s2, t, path1, path2)
    }

    fn capture(&mut self, t: u8) -> Result<u32, SimError> {
        ShardedState::capture(self, t)
    }

    /// The pieces' decisions combined (fires anywhere, plain everywhere), then each piece
    /// takes the same ancilla with `State::capture_where`.
    fn capture_controlled(&mut self, q: u8, controls: Controls) -> Result<Option<u32>, SimError> {
        let (fires, plain) = any_all(self.local().capture_flags(q, controls)?);
        if !fires {
            return Ok(None);
        }
        if plain {
            return ShardedState::capture(self, q).map(Some);
        }
        self.make_local(&[q])?;
        // Agreed: a piece's budget may refuse the new sector on one rank alone.
        self.agree(|s| s.capture_where(q, controls), |s, a| s.uncapture(q, a))
            .map(Some)
    }

    fn iswap_where_ancillas(&mut self, s: u8, t: u8, ancillas: u128) -> Result<(), SimError> {
        if s >= 64 || t >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: s.max(t) });
        }
        if s == t {
            return Err(SimError::RepeatedQubit { qubit: s });
        }
        let (any, all) = any_all(self.local().ancilla_flags(ancillas));
        if !any {
            return Ok(());
        }
        if all {
            return ShardedState::iswap(self, s, t, Controls::NONE);
        }
        self.make_local(&[s, t])?;
        // Agreed: the rebuild may be refused on one rank alone; taken back where it ran by
        // three more (iSwap^4 is the identity).
        self.agree(
            |x| x.iswap_where_ancillas_always(s, t, ancillas),
            |x, ()| {
                for _ in 0..3 {
                    x.iswap_where_ancillas_always(s, t, ancillas)?;
                }
                Ok(())
            },
        )
    }

    fn probability(&self, pred: Predicate) -> f64 {
        ShardedState::probability(self, pred)
    }

    fn force(&mut self, pred: Predicate, outcome: bool) -> Result<f64, SimError> {
        ShardedState::force(self, pred, outcome)
    }

    fn project_boards(&mut self, keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<f64, SimError> {
        let (kept, total, all) = self.local().board_masses(keep);
        let comm = comm::current();
        let sums = sum_f64(&*comm, &[kept, total]);
        let every = sum_u64(&*comm, &[u64::from(!all)])[0] == 0;
        if every {
            return Ok(1.0);
        }
        if sums[0] <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome: true,
                probability: 0.0,
            });
        }
        // Built aside and agreed before any piece is replaced: a piece's budget may refuse
        // its rebuilt piece on one rank alone, and a projection cannot be taken back.
        let piece = self.agree(|s| s.projected_boards(keep, sums[0]), |_, _| Ok(()))?;
        *self.local_mut() = piece;
        Ok(if sums[1] > 0.0 {
            sums[0] / sums[1]
        } else {
            0.0
        })
    }

    fn qubit_probabilities(&self) -> [f64; 64] {
        ShardedState::qubit_probabilities(self)
    }

    fn board_distribution(&self, limit: Option<usize>) -> Vec<(u64, f64)> {
        ShardedState::board_distribution(self, limit)
    }

    /// Collective. Each rank asks its own budget for what the gather makes it hold: its top
    /// boards once and once per rank in the send buffers, and the whole gathered answer
    /// twice (received, then flattened), 16 bytes a board, its boards bounded by its basis
    /// states and `limit`. If any rank's budget refuses, every rank refuses
    /// ([`SimError::StateTooLarge`], this rank's numbers, or `available` 0 when another rank
    /// refused), so the ranks never disagree on whether the gather runs.
    fn try_board_distribution(&self, limit: Option<usize>) -> Result<Vec<(u64, f64)>, SimError> {
        self.ask_board_gather(limit)?;
        Ok(ShardedState::board_distribution(self, limit))
    }

    /// Locally summed when both qubits are in L (their partners share a rank), else summed
    /// on a copy made local for them (issue 10, Deliver 5: nothing gathered;
    /// [`ShardedState::reading_copy`] and one exchange, both within every rank's budget):
    /// when any rank refuses the copy or the exchange the answer is the zero matrix on every
    /// rank, as for qubits out of range (the trait's answer cannot carry an error; a state's
    /// matrix always has trace 1, so zero means refused).
    fn reduced_density_matrix(&self, a: u8, b: u8) -> [[Complex<f64>; 4]; 4] {
        let zero = [[Complex::new(0.0, 0.0); 4]; 4];
        if a == b || a >= 64 || b >= 64 {
            return zero;
        }
        let mask = self.local_set().mask();
        if mask & (1 << a) != 0 && mask & (1 << b) != 0 {
            return self.summed_density_matrix(a, b);
        }
        let Ok(mut copy) = self.reading_copy() else {
            return zero;
        };
        match copy.make_local(&[a, b]) {
            Ok(()) => copy.summed_density_matrix(a, b),
            Err(_) => zero,
        }
    }

    fn amplitude_f64(&self, key: Key) -> Complex<f64> {
        to64(ShardedState::amplitude(self, key))
    }

    /// The whole state on every rank: for tests and small states only (the game reads none
    /// of it: its serialisation streams [`QuantumState::try_for_each_entry_f64`], its
    /// repetition digest [`QuantumState::amplitude_digest`], its Definition 2 comparison
    /// [`QuantumState::entries_close`] and [`QuantumState::local_effects`], all computed
    /// where the pieces lie). Collective and outside the memory budget (the trait's answer
    /// cannot carry [`SimError::StateTooLarge`]): every rank reserves the answer (one
    /// entry a basis state) fallibly and fills it from the streamed entry pass
    /// (`ShardedState::stream_entries`: bounded rounds, no gather buffers beside the
    /// answer), in key order. If some rank cannot reserve it (the machine is out of memory),
    /// every rank yields no entries, never an abort; a state always holds at least one
    /// entry, so an empty answer means exactly that. The budgeted gather is
    /// [`ShardedState::gather_entries`].
    fn entries_f64(&self) -> Box<dyn Iterator<Item = (Key, Complex<f64>)> + '_> {
        let total = ShardedState::len(self);
        let mut all = Vec::new();
        let reserved = all.try_reserve_exact(total).is_ok();
        let (_, every) = any_all((false, reserved));
        if !every {
            return Box::new(std::iter::empty());
        }
        self.stream_entries(crate::readouts::ENTRY_ROUND, &mut |k, a| all.push((k, a)));
        Box::new(all.into_iter())
    }

    /// The whole state gathered to every rank within the memory budget (collective):
    /// [`ShardedState::gather_entries`], so if any rank's budget refuses, every rank answers
    /// [`SimError::StateTooLarge`] and nothing is gathered; otherwise the same entries as
    /// [`QuantumState::entries_f64`]. The game reads none of it: its serialisation
    /// (`Position::try_capture`, `Position::write_json`) streams entries
    /// ([`QuantumState::try_for_each_entry_f64`]) and its position check (`check_letters`)
    /// streams boards, so neither gathers.
    #[allow(clippy::type_complexity)]
    fn try_entries_f64(
        &self,
    ) -> Result<Box<dyn Iterator<Item = (Key, Complex<f64>)> + '_>, SimError> {
        let all = self.gather_entries()?;
        Ok(Box::new(all.into_iter().map(|(k, a)| (k, to64(a)))))
    }

    /// Collective, streamed in bounded rounds, nothing gathered (issue 10, Deliver 5): the
    /// pieces (each sorted by key) are merged as they are sent, up to 2048 entries a rank a
    /// round (40 bytes an entry), so memory is proportional to that round times the number
    /// of ranks, whatever the state's size (`ShardedState::stream_entries`). Every rank
    /// calls `f` with the same entries in the order of [`QuantumState::entries_f64`]; it
    /// never refuses. What the game's serialisation reads (`Position::write_json`,
    /// `Position::try_capture`).
    fn try_for_each_entry_f64(&self, f: &mut dyn FnMut(Key, Complex<f64>)) -> Result<(), SimError> {
        self.stream_entries(crate::readouts::ENTRY_ROUND, f);
        Ok(())
    }

    /// Collective, nothing gathered: each rank digests its own piece with the whole state's
    /// phase reference (found by one all-gather of a key and an amplitude a rank), and the
    /// pieces' digests are added by one more all-gather. The same digest as the gathered
    /// state's, on every rank.
    fn amplitude_digest(&self, scale: f64) -> (u64, u64) {
        self.digest(scale)
    }

    /// Collective, nothing gathered: with the same local set each rank compares its own
    /// pieces and one all-gather ands the answers; with different sets a copy of `other`
    /// (asked of the budget on every rank) is first redistributed to this one's, and a
    /// refused copy answers `false` on every rank.
    fn entries_close(&self, other: &Self, tolerance: f64) -> bool {
        self.close_to(other, tolerance)
    }

    /// Collective, nothing gathered (the trait's default would gather every entry to every
    /// rank): presence questions and circuits on local qubits are read on each rank's piece;
    /// the other circuits on one copy of the state (asked of the budget on every rank) made
    /// local batch by batch; the ranks' shares ([`qchess_sim::LocalShare`]) are added by one
    /// all-gather. A refused copy or exchange is the same error on every rank.
    fn local_effects(
        &self,
        queries: &[qchess_sim::LocalQuery],
        threshold: f64,
    ) -> Result<Vec<qchess_sim::LocalAnswer>, SimError> {
        self.effects(queries, threshold)
    }

    fn norm_sqr(&self) -> f64 {
        ShardedState::norm_sqr(self)
    }

    /// Local overlaps summed; if the two states' local sets differ, a copy of `other` is
    /// first redistributed to this one's. The copy is asked of `other`'s budget on every rank
    /// ([`ShardedState::reading_copy`]: its exchange counts `other` as held, and asks the
    /// budget too); when any rank refuses it, the answer is zero on every
    /// rank (a gather would need more than the copy). If the redistribution is refused, both
    /// states are gathered ([`ShardedState::gather_entries`], each asked of its own rank's
    /// budget as it is gathered); when any rank refuses either gather, nothing more is
    /// gathered and the answer is zero on every rank (the trait's answer cannot carry an
    /// error).
    fn inner(&self, other: &Self) -> Complex<f64> {
        let aligned;
        let other = if other.local_set().mask() == self.local_set().mask() {
            other
        } else {
            let Ok(mut o) = other.reading_copy() else {
                return Complex::new(0.0, 0.0);
            };
            if o.realign(self.local_set()).is_err() {
                return self
                    .gathered()
                    .and_then(|a| other.gathered().map(|b| a.inner(&b)))
                    .unwrap_or(Complex::new(0.0, 0.0));
            }
            aligned = o;
            &aligned
        };
        let z = self.local().inner(other.local());
        let s = sum_f64(&*comm::current(), &[z.re, z.im]);
        Complex::new(s[0], s[1])
    }

    fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Key {
        ShardedState::sample(self, rng)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::comm::{ThreadComm, install};
    use std::rc::Rc;

    /// The classical `board` with a sqrt-iSwap on each of `pairs` (in order): the local
    /// state the sharded tests spread over their ranks.
    fn spread(board: u64, pairs: &[(u8, u8)]) -> State<f64> {
        let mut local = State::<f64>::classical(board);
        for &(a, b) in pairs {
            QuantumState::sqrt_iswap(&mut local, a, b, Controls::NONE).unwrap();
        }
        local
    }

    /// The budgeted distribution on 3 ranks: with room it is the gathered distribution;
    /// when one rank's budget is too small every rank refuses and nothing changes.
    #[test]
    fn budgeted_distribution_refuses_on_every_rank_together() {
        let results = ThreadComm::run(3, |c| {
            let rank = crate::comm::Comm::rank(&c);
            install(Rc::new(c), 3);
            let local = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
            let mut dist = ShardedState::from_state(&local, LocalSet::new(3, &[])).unwrap();
            let want = ShardedState::board_distribution(&dist, None);
            let ok_all = QuantumState::try_board_distribution(&dist, None).unwrap() == want;
            let top = ShardedState::board_distribution(&dist, Some(3));
            let ok_top = QuantumState::try_board_distribution(&dist, Some(3)).unwrap() == top;
            let before = dist.gather_entries().unwrap();
            if rank == 1 {
                let held = dist.local().bytes();
                dist.local_mut().set_memory_budget(held + 16);
            }
            let err = QuantumState::try_board_distribution(&dist, None);
            let unchanged = dist.gather_entries_unbudgeted().unwrap() == before;
            (rank, want.len(), ok_all && ok_top, err, unchanged)
        });
        for (rank, boards, ok, err, unchanged) in results {
            assert!(boards > 8 && ok && unchanged, "rank {rank}");
            assert_refused_together(rank, err.map(|_| ()));
        }
    }

    /// The overlap of two states sharded over different local sets on 3 ranks: with room it
    /// is the overlap of the unsharded states; when one rank's budget refuses the copy of
    /// `other` that the realignment needs, every rank answers zero and neither state changes.
    #[test]
    fn misaligned_overlap_copies_within_the_budget() {
        let results = ThreadComm::run(3, |c| {
            let rank = crate::comm::Comm::rank(&c);
            install(Rc::new(c), 3);
            let a = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
            let mut b = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10)]);
            QuantumState::iswap(&mut b, 4, 12, Controls::NONE).unwrap();
            let want = a.inner(&b);
            let da = ShardedState::from_state(&a, LocalSet::new(3, &[])).unwrap();
            let mut db = ShardedState::from_state(&b, LocalSet::new(3, &[9, 10, 16])).unwrap();
            let differ = da.local_set().mask() != db.local_set().mask();
            let got = QuantumState::inner(&da, &db);
            let mut ok = differ && (got - want).norm() < 1e-12 && want.norm() > 0.1;
            let before = (da.gather_entries().unwrap(), db.gather_entries().unwrap());
            if rank == 1 {
                let held = db.local().bytes();
                db.local_mut().set_memory_budget(held + 16);
            }
            let refused = QuantumState::inner(&da, &db);
            ok &= refused == Complex::new(0.0, 0.0);
            ok &= (
                da.gather_entries_unbudgeted().unwrap(),
                db.gather_entries_unbudgeted().unwrap(),
            ) == before;
            (rank, ok, got, want)
        });
        for (rank, ok, got, want) in results {
            assert!(ok, "rank {rank}: {got} against {want}");
        }
    }

    /// A capture and a projection onto boards refused by rank 1's budget alone (its piece
    /// holds entries on the captured square, which move to a new sector, and entries the
    /// projection keeps, which it rebuilds), on 3 ranks with the square local: every rank
    /// answers `StateTooLarge` (rank 1 its own numbers, the others rank 1's) and no piece
    /// changed, so the ranks stay in step; with room the capture gives the local state's
    /// entries.
    #[test]
    fn one_ranks_refused_capture_is_every_ranks() {
        let results = ThreadComm::run(3, |c| {
            let rank = crate::comm::Comm::rank(&c);
            install(Rc::new(c), 3);
            let local = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
            let mut dist = ShardedState::from_state(&local, LocalSet::new(3, &[4, 0, 1])).unwrap();
            let before = dist.gather_entries().unwrap();
            let budget = dist.local().memory_budget();
            let holds = dist.local().entries().any(|(k, _)| k.board & (1 << 4) != 0);
            if rank == 1 {
                let held = dist.local().bytes();
                dist.local_mut().set_memory_budget(held + 16);
            }
            let refused = QuantumState::capture(&mut dist, 4).map(|_| ());
            let keep = |b: u64| b & (1 << 12) == 0;
            let projected = QuantumState::project_boards(&mut dist, &keep).map(|_| ());
            let unchanged = dist.gather_entries_unbudgeted().unwrap() == before
                && QuantumState::ancilla_count(&dist) == 0;
            dist.local_mut().set_memory_budget(budget);
            let mut want = local.clone();
            QuantumState::capture(&mut want, 4).unwrap();
            let a = QuantumState::capture(&mut dist, 4).unwrap();
            let same =
                a == 0 && dist.gather_entries().unwrap() == want.entries().collect::<Vec<_>>();
            (rank, holds, [refused, projected], unchanged && same)
        });
        assert!(results[1].1, "rank 1 holds entries on the captured square");
        for (rank, _, refused, ok) in results {
            assert!(ok, "rank {rank}");
            for r in refused {
                assert!(
                    matches!(r, Err(SimError::StateTooLarge { .. })),
                    "rank {rank}: {r:?}"
                );
            }
        }
    }

    /// Every rank's answer when rank 1's budget leaves 16 bytes: `StateTooLarge` (asked
    /// above available), with exactly 16 available on rank 1.
    fn assert_refused_together(rank: usize, err: Result<(), SimError>) {
        match err {
            Err(SimError::StateTooLarge { asked, available }) => {
                assert!(asked > available, "rank {rank}: {asked} <= {available}");
                if rank == 1 {
                    assert_eq!(available, 16);
                }
            }
            other => panic!("rank {rank}: expected StateTooLarge, got {other:?}"),
        }
    }

    /// The budgeted top-k and board pass on 3 ranks: with room they are the unbudgeted
    /// answers; when one rank's budget is too small for the top-k gather every rank
    /// refuses and the state is unchanged, while the board pass, which gathers nothing
    /// (bounded rounds), still visits every board.
    #[test]
    fn budgeted_top_refuses_on_every_rank_together_and_the_board_pass_streams() {
        let results = ThreadComm::run(3, |c| {
            let rank = crate::comm::Comm::rank(&c);
            install(Rc::new(c), 3);
            let local = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
            let mut dist = ShardedState::from_state(&local, LocalSet::new(3, &[])).unwrap();
            let top = QuantumState::board_distribution_top(&dist, 3);
            let mut ok = QuantumState::try_board_distribution_top(&dist, 3).unwrap() == top;
            ok &= top.1 == QuantumState::board_distribution(&local, None).len();
            ok &= top.0.len() == 3;
            let mut want = Vec::new();
            QuantumState::for_each_board(&dist, &mut |b, p| want.push((b, p)));
            let mut got = Vec::new();
            QuantumState::try_for_each_board(&dist, &mut |b, p| got.push((b, p))).unwrap();
            ok &= got == want && want.len() == top.1;
            let before = dist.gather_entries().unwrap();
            if rank == 1 {
                let held = dist.local().bytes();
                dist.local_mut().set_memory_budget(held + 16);
            }
            let err_top = QuantumState::try_board_distribution_top(&dist, 3);
            let mut small = Vec::new();
            QuantumState::try_for_each_board(&dist, &mut |b, p| small.push((b, p))).unwrap();
            let unchanged = dist.gather_entries_unbudgeted().unwrap() == before;
            (rank, ok && small == want && unchanged, err_top.map(|_| ()))
        });
        for (rank, ok, err) in results {
            assert!(ok, "rank {rank}");
            assert_refused_together(rank, err);
        }
    }

    /// The bounded top-k on 3 ranks (issue 10, Deliver 6), with and without an ancilla:
    /// for k = 0, 1, 3 and more than the number of boards it is the local state's top k
    /// (same boards, probabilities within 1e-12) and the local state's number of distinct
    /// boards, exactly the gathered `board_distribution(Some(k))`, and the budgeted answer
    /// is the same; every rank answers the same.
    #[test]
    fn bounded_top_agrees_with_the_local_state() {
        for capture in [false, true] {
            let results = ThreadComm::run(3, |c| {
                install(Rc::new(c), 3);
                let mut local = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
                if capture {
                    QuantumState::capture(&mut local, 16).unwrap();
                }
                let dist = ShardedState::from_state(&local, LocalSet::new(3, &[])).unwrap();
                let mut out = Vec::new();
                for k in [0usize, 1, 3, 1000] {
                    let top = QuantumState::board_distribution_top(&dist, k);
                    let budgeted = QuantumState::try_board_distribution_top(&dist, k).unwrap();
                    let gathered = ShardedState::board_distribution(&dist, Some(k));
                    let same = budgeted == top && gathered == top.0;
                    out.push((
                        k,
                        top,
                        QuantumState::board_distribution_top(&local, k),
                        same,
                    ));
                }
                out
            });
            let first = results[0].clone();
            for out in results {
                assert_eq!(out, first, "every rank answers the same");
                for (k, (top, total), (want, want_total), same) in out {
                    assert!(same, "k {k}: budgeted or gathered differ");
                    assert!(want_total > 8, "k {k}: {want_total} boards");
                    assert_eq!(total, want_total, "k {k}");
                    assert_eq!(top.len(), k.min(want_total), "k {k}");
                    assert_eq!(top.len(), want.len(), "k {k}");
                    for ((b, p), (wb, wp)) in top.iter().zip(&want) {
                        assert_eq!(b, wb, "k {k}");
                        assert!((p - wp).abs() < 1e-12, "k {k}: {p} vs {wp}");
                    }
                }
            }
        }
    }

    /// The budgeted gather on 3 ranks: with room it is the local state's entries on every
    /// rank (as is the unbudgeted gather); when rank 1's budget leaves 16 bytes every rank
    /// refuses with `StateTooLarge`, the state is unchanged, the reduced density matrix of a
    /// non-local pair (whose copy is refused too) answers zero (documented), and
    /// `entries_f64` (outside the budget) still answers every entry.
    #[test]
    fn budgeted_gather_refuses_on_every_rank_together() {
        let results = ThreadComm::run(3, |c| {
            let rank = crate::comm::Comm::rank(&c);
            install(Rc::new(c), 3);
            let mut local = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
            QuantumState::capture(&mut local, 16).unwrap();
            let mut dist = ShardedState::from_state(&local, LocalSet::new(3, &[])).unwrap();
            let want: Vec<(Key, Complex<f64>)> = local.entries().collect();
            let got = dist.gather_entries().unwrap();
            let mut ok = got == want && want.len() > 8;
            ok &= dist.gather_entries_unbudgeted().unwrap() == want;
            // Qubits 0 and 8: 8 is not local, so the matrix is summed on a copy made local
            // for them (refused below with the copy, as the gather is).
            ok &= dist.local_set().mask() & (1 << 8) == 0;
            let rho = QuantumState::reduced_density_matrix(&local, 0, 8);
            let r = QuantumState::reduced_density_matrix(&dist, 0, 8);
            ok &= rho
                .iter()
                .flatten()
                .zip(r.iter().flatten())
                .all(|(x, y)| (x - y).norm() < 1e-12);
            ok &= r[0][0].norm() + r[3][3].norm() > 0.1;
            let (len, bytes) = (dist.local().len(), dist.local().bytes());
            if rank == 1 {
                let held = dist.local().bytes();
                dist.local_mut().set_memory_budget(held + 16);
            }
            let err = dist.gather_entries();
            let zero = QuantumState::reduced_density_matrix(&dist, 0, 8)
                .iter()
                .flatten()
                .all(|z| *z == Complex::new(0.0, 0.0));
            let entries: Vec<(Key, Complex<f64>)> = dist.entries_f64().collect();
            ok &= zero && entries == want;
            ok &= dist.gather_entries_unbudgeted().unwrap() == want;
            ok &= dist.local().len() == len && dist.local().bytes() == bytes;
            (rank, ok, err.map(|_| ()))
        });
        for (rank, ok, err) in results {
            assert!(ok, "rank {rank}");
            assert_refused_together(rank, err);
        }
    }

    /// The budgeted gather counts the send buffers (one copy per rank), the received words
    /// and the decoded entries (threads stage nothing): a budget exactly that large gathers,
    /// one byte less refuses (on 2 ranks, with rank 0's budget set; `available` is then this
    /// rank's room, 0 on rank 1).
    #[test]
    fn the_gather_asks_exactly_its_buffers() {
        let results = ThreadComm::run(2, |c| {
            let rank = crate::comm::Comm::rank(&c);
            install(Rc::new(c), 3);
            let local = spread(0b111, &[(0u8, 8u8), (1, 9), (2, 10)]);
            let mut dist = ShardedState::from_state(&local, LocalSet::new(3, &[])).unwrap();
            let (mine, total) = (dist.local().len(), local.len());
            let asked =
                (mine * 5 * 2 + total * 5) * 8 + total * std::mem::size_of::<(Key, Complex<f64>)>();
            let held = dist.local().bytes();
            if rank == 0 {
                dist.local_mut().set_memory_budget(held + asked);
            }
            let fits = dist.gather_entries();
            if rank == 0 {
                dist.local_mut().set_memory_budget(held + asked - 1);
            }
            let refused = dist.gather_entries();
            (rank, mine, total, asked, fits, refused)
        });
        let want: Vec<(Key, Complex<f64>)> = {
            let local = spread(0b111, &[(0u8, 8u8), (1, 9), (2, 10)]);
            local.entries().collect()
        };
        assert!(
            results[0].1 > 0 && results[1].1 > 0,
            "both ranks hold entries"
        );
        for (rank, _, total, asked, fits, refused) in results {
            assert_eq!(total, 8);
            assert_eq!(fits.unwrap(), want, "rank {rank}");
            let expected = if rank == 0 { asked - 1 } else { 0 };
            assert_eq!(
                refused,
                Err(SimError::StateTooLarge {
                    asked,
                    available: expected
                }),
                "rank {rank}"
            );
        }
    }

    /// The sharded occupancy bounds and pattern weights (each rank's piece read, a few words
    /// summed; nothing gathered) on 3 ranks: the local state's answers (bounds exactly,
    /// weights within 1e-12, a pattern no board matches exactly 0), the same on every
    /// rank, and the same as the board-by-board sum over the unbudgeted board pass.
    #[test]
    fn occupancy_bounds_and_pattern_weights_agree_with_the_local_state() {
        let results = ThreadComm::run(3, |c| {
            install(Rc::new(c), 3);
            let mut local = spread(0b1_0111, &[(0u8, 8u8), (1, 9), (2, 10), (4, 12), (8, 16)]);
            QuantumState::capture(&mut local, 16).unwrap();
            let dist = ShardedState::from_state(&local, LocalSet::new(3, &[])).unwrap();
            let patterns = [
                (0b1, 0b1, 0),
                (0b1_0000_0001, 0b1_0000_0000, 0),
                (0, 0, 0b1_0000_0110),
                (0b1_0000_0000_1000, 0b1_0000_0000_1000, 0), // squares 3 and 12 together
                (1 << 40, 1 << 40, 0),                       // no board: exactly 0
                (0xffff_ffff, 0b0001_0111, 0),               // wide: checked key by key
                (0, 0, 0),                                   // every board
            ];
            let bounds = QuantumState::occupancy_bounds(&dist);
            let w = QuantumState::pattern_weights(&dist, &patterns);
            let mut by_board = vec![0.0f64; patterns.len()];
            let (mut always, mut ever) = (!0u64, 0u64);
            QuantumState::for_each_board(&dist, &mut |b, p| {
                always &= b;
                ever |= b;
                for (x, &(m, v, a)) in by_board.iter_mut().zip(&patterns) {
                    if b & m == v & m && (a == 0 || b & a != 0) {
                        *x += p;
                    }
                }
            });
            let want = local.pattern_weights(&patterns);
            (
                bounds,
                local.occupancy_bounds(),
                (always, ever),
                w,
                want,
                by_board,
            )
        });
        let first = results[0].3.clone();
        for (bounds, local_bounds, pass_bounds, w, want, by_board) in results {
            assert_eq!(bounds, local_bounds);
            assert_eq!(bounds, pass_bounds);
            assert_ne!(bounds.0, bounds.1);
            assert_eq!(w, first, "every rank has the same weights");
            assert_eq!(w.len(), want.len());
            for ((x, y), z) in w.iter().zip(&want).zip(&by_board) {
                assert!((x - y).abs() < 1e-12, "{x} vs {y}");
                assert!((x - z).abs() < 1e-12, "{x} vs {z}");
            }
            assert_eq!(w[4], 0.0);
            assert!(w[0] > 0.0 && w[0] < 1.0);
            assert!((w[6] - 1.0).abs() < 1e-12);
        }
    }

    /// On one rank of `c` (installed with 3 local qubits): this rank and a Cantwell game on
    /// the sharded state after two knight splits (four boards).
    fn two_split_game(c: ThreadComm) -> (usize, qchess_cantwell::Game<ShardedState<f64>>) {
        use rand::SeedableRng;
        let rank = crate::comm::Comm::rank(&c);
        install(Rc::new(c), 3);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut g = qchess_cantwell::Game::<ShardedState<f64>>::new_backend();
        g.apply("g1^f3h3", &mut rng).unwrap();
        g.apply("b8^a6c6", &mut rng).unwrap();
        (rank, g)
    }

    /// Sets the game's budget on every rank (collective: the game's held bytes are the
    /// ranks' most) so that only rank 1's binds, leaving its state 16 bytes beyond its piece.
    /// Returns this rank's piece bytes.
    pub(crate) fn leave_rank_1_sixteen_bytes(
        rank: usize,
        g: &mut qchess_cantwell::Game<ShardedState<f64>>,
    ) -> usize {
        g.set_memory_budget(usize::MAX);
        let held = usize::MAX - g.state().memory_budget();
        let piece = g.state().local().bytes();
        g.set_memory_budget(if rank == 1 {
            held + piece + 16
        } else {
            usize::MAX
        });
        piece
    }

    /// The game's budgeted board read-outs on the sharded state (3 ranks): with room they
    /// are the unbudgeted answers; when one rank's game budget leaves room for only one
    /// board, every rank refuses the top-k (`StateTooLarge`: its gather is counted) and
    /// the game is unchanged, while the board pass (bounded rounds, nothing gathered)
    /// still visits the four boards.
    #[test]
    fn game_budgeted_board_read_outs_refuse_on_every_rank_together() {
        use qchess_cantwell::GameError;
        let results = ThreadComm::run(3, |c| {
            let (rank, mut g) = two_split_game(c);
            let top = g.distribution_top(3);
            let mut ok = g.try_distribution_top(3).unwrap() == top;
            let mut pass = Vec::new();
            g.for_each_board(|b, p| pass.push((b, p)));
            let mut got = Vec::new();
            g.try_for_each_board(|b, p| got.push((b, p))).unwrap();
            ok &= got == pass && pass.len() == 4 && top.1 == 4;
            let fen = g.fen();
            let dist = g.distribution(None);
            leave_rank_1_sixteen_bytes(rank, &mut g);
            let err_top = g.try_distribution_top(3);
            let mut small = Vec::new();
            g.try_for_each_board(|b, p| small.push((b, p))).unwrap();
            ok &= small == pass && g.fen() == fen && g.distribution(None) == dist;
            (rank, ok, [err_top.map(|_| ())])
        });
        for (rank, ok, errs) in results {
            assert!(ok, "rank {rank}");
            for err in errs {
                // The game's error carries the simulator's numbers unchanged.
                let err = err.map_err(|e| match e {
                    GameError::StateTooLarge { asked, available } => {
                        assert_eq!(e.kind(), "state_too_large");
                        SimError::StateTooLarge { asked, available }
                    }
                    other => panic!("rank {rank}: expected StateTooLarge, got {other:?}"),
                });
                assert_refused_together(rank, err);
            }
        }
    }

    /// The game's serialisation and position check on a sharded state, on 3 ranks: with
    /// room they give what the unbudgeted read-outs give (the same JSON text, the same
    /// position). When rank 1's budget leaves 16 bytes, the trait's budget is that rank's on
    /// every rank; every rank refuses the gather and the position (its amplitude list is
    /// state-sized) together, no rank left waiting in a collective, while the JSON text
    /// (entries streamed in bounded rounds, `QuantumState::try_for_each_entry_f64`) and
    /// the letters check (boards streamed) need no budget and still answer, the same text
    /// as with room. The game is unchanged.
    #[test]
    fn game_serialisation_asks_the_budget_on_every_rank_together() {
        use qchess_cantwell::GameError;
        let results = ThreadComm::run(3, |c| {
            let (rank, mut g) = two_split_game(c);
            let all: Vec<(Key, Complex<f64>)> = g.state().entries_f64().collect();
            let mut ok = all.len() == 4;
            ok &= g.state().try_entries_f64().unwrap().collect::<Vec<_>>() == all;
            let position = g.position();
            ok &= g.try_position().unwrap() == position && position.amplitudes.len() == 4;
            let mut text = Vec::new();
            g.write_position_json(1.0, &mut text).unwrap();
            ok &= text == position.to_json().into_bytes();
            ok &= qchess_cantwell::position::check_letters(g.state(), g.classical()).is_ok();
            let fen = g.fen();
            let piece = leave_rank_1_sixteen_bytes(rank, &mut g);
            // The trait's budget: rank 1's, on every rank (checked below).
            let budget = g.state().memory_budget();
            let gather = g.state().try_entries_f64().map(|_| ());
            let mut written = Vec::new();
            let json_streamed = g.write_position_json(1.0, &mut written).is_ok() && written == text;
            let position = g.try_position().map(|_| ());
            // The letters are checked on streamed boards: nothing state-sized, so the
            // budget that refuses the gather still answers (and the right answer).
            let letters = qchess_cantwell::position::check_letters(g.state(), g.classical());
            // And it still tells wrong letters: h3 (half a knight) without its letter, or a
            // letter on the empty e4.
            let square = |name: &str| name.parse::<qchess_board::Square>().unwrap();
            let mut unlettered = *g.classical();
            unlettered.pieces.set(square("h3"), None);
            let mut stray = *g.classical();
            stray
                .pieces
                .set(square("e4"), g.classical().pieces.get(square("h3")));
            for (layer, says) in [(&unlettered, "no piece letter"), (&stray, "probability 0")] {
                let told = qchess_cantwell::position::check_letters(g.state(), layer);
                ok &= matches!(&told, Err(GameError::Position(m)) if m.contains(says));
            }
            ok &= g.fen() == fen && g.state().entries_f64().collect::<Vec<_>>() == all;
            let to_sim = |r: Result<(), GameError>| {
                r.map_err(|e| match e {
                    GameError::StateTooLarge { asked, available } => {
                        SimError::StateTooLarge { asked, available }
                    }
                    other => panic!("rank {rank}: expected StateTooLarge, got {other:?}"),
                })
            };
            let refusals = (json_streamed, gather, to_sim(position), letters.is_ok());
            (rank, ok, budget, piece, refusals)
        });
        let rank1 = results[1].3 + 16;
        for (rank, ok, budget, _, (json_streamed, gather, position, letters)) in results {
            assert_eq!(budget, rank1, "rank {rank}: the trait's budget is rank 1's");
            assert!(ok, "rank {rank}");
            assert!(
                json_streamed,
                "rank {rank}: the JSON text under the tight budget is not the text with room"
            );
            assert_refused_together(rank, gather);
            assert!(
                letters,
                "rank {rank}: the letters check was refused by the budget"
            );
            assert!(
                matches!(position, Err(SimError::StateTooLarge { asked, available }) if asked > available),
                "rank {rank}: {position:?}"
            );
        }
    }

    /// The trait's controlled operations against the local state's, on 3 ranks.
    #[test]
    fn controlled_operations_agree_with_the_local_state() {
        let results = ThreadComm::run(3, |c| {
            install(Rc::new(c), 3);
            let mut local = State::<f64>::classical(0b1_0111);
            let mut dist = <ShardedState<f64> as QuantumState>::classical(0b1_0111);
            let mut ok = true;
            for (a, b) in [(0u8, 8u8), (1, 9), (2, 10), (4, 12)] {
                QuantumState::sqrt_iswap(&mut local, a, b, Controls::NONE).unwrap();
                QuantumState::sqrt_iswap(&mut dist, a, b, Controls::NONE).unwrap();
            }
            let ctl = Controls {
                zeros: 0,
                ones: 1 << 1,
            };
            let x = QuantumState::capture_controlled(&mut local, 2, ctl).unwrap();
            ok &= QuantumState::capture_controlled(&mut dist, 2, ctl).unwrap() == x;
            let anc = 1u128 << x.unwrap();
            QuantumState::iswap_where_ancillas(&mut local, 0, 20, anc).unwrap();
            QuantumState::iswap_where_ancillas(&mut dist, 0, 20, anc).unwrap();
            let keep = |b: u64| b & (1 << 9) == 0;
            let p1 = local.project_boards(&keep).unwrap();
            let p2 = QuantumState::project_boards(&mut dist, &keep).unwrap();
            ok &= (p1 - p2).abs() < 1e-12;
            let want: Vec<_> = local.entries().collect();
            let got: Vec<_> = dist.entries_f64().collect();
            ok &= want.len() == got.len() && want.len() > 4;
            for ((k1, a1), (k2, a2)) in want.iter().zip(&got) {
                ok &= k1 == k2 && (a1 - a2).norm() < 1e-12;
            }
            let r1 = QuantumState::reduced_density_matrix(&local, 0, 8);
            let r2 = QuantumState::reduced_density_matrix(&dist, 0, 8);
            for (x, y) in r1.iter().flatten().zip(r2.iter().flatten()) {
                ok &= (x - y).norm() < 1e-12;
            }
            let copy = dist.clone();
            QuantumState::iswap(&mut dist, 3, 30, Controls::NONE).unwrap();
            QuantumState::iswap_inv(&mut dist, 3, 30, Controls::NONE).unwrap();
            ok &= (QuantumState::inner(&dist, &copy).re - 1.0).abs() < 1e-12;
            ok &= QuantumState::ancilla_count(&dist) == local.ancilla_count();
            ok
        });
        assert!(results.iter().all(|&ok| ok));
    }
}
