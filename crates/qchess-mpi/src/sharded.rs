//! The sharded state: each rank holds, as an ordinary [`qchess_sim::State`], the entries
//! whose key with the local qubits L masked out hashes to it ([`plan::owner`]). Gates on
//! qubits of L run the local simulator's own kernels on every rank; a gate on a qubit outside
//! L first changes L ([`LocalSet::plan`]) and redistributes the entries whose owner changes
//! in one all-to-all exchange.

use crate::backend::any_all;
use crate::comm::{self, Comm, broadcast_f64, sum_f64, sum_u64};
use crate::plan::{self, LocalSet};
use num_complex::Complex;
use qchess_sim::{Amplitude, Controls, Key, Predicate, QuantumState, SimError, State};
use std::rc::Rc;

/// Counters of the communication a sharded state has done (this rank's share).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes this rank sent to other ranks in exchanges.
    pub bytes_sent: u64,
    /// Entries this rank sent to other ranks.
    pub entries_sent: u64,
    /// Exchanges (changes of L) so far.
    pub exchanges: u64,
}

/// A pure state over 64 board qubits plus capture ancillas, distributed over the ranks of a
/// [`Comm`]. Every method is collective: all ranks call it in the same order with the same
/// arguments (and the same random draws); results are the same on every rank.
///
/// Its methods exist where `State<T>` is a [`QuantumState`] (`f32`, `f64` and
/// [`Exact`](qchess_sim::Exact)): each rank's piece runs its gates through those impls,
/// compiled once in qchess-sim (docs/decisions.md, "The local backend is compiled once").
///
/// ```
/// use qchess_mpi::{ShardedState, plan::LocalSet};
/// use qchess_sim::{Controls, Predicate};
/// // No transport installed: one rank.
/// let mut s = ShardedState::<f64>::classical_with(1, LocalSet::new(4, &[]));
/// s.split(0, 8, 1, Controls::NONE)?;
/// assert!((s.probability(Predicate::One(8)) - 0.5).abs() < 1e-15);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
#[derive(Clone)]
pub struct ShardedState<T: Amplitude> {
    local: State<T>,
    set: LocalSet,
    traffic: Traffic,
    /// Most bytes held during an exchange (the piece, the outgoing and incoming buffers).
    exchange_peak: usize,
}

impl<T: Amplitude> std::fmt::Debug for ShardedState<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let comm = comm::current();
        f.debug_struct("ShardedState")
            .field("rank", &comm.rank())
            .field("ranks", &comm.size())
            .field("local_len", &self.local.len())
            .field("l_mask", &format_args!("{:#x}", self.set.mask()))
            .finish()
    }
}

/// Words one entry of amplitude type `T` takes in [`push_wire`]'s form: the board, the
/// ancillas' low and high words, then the real and imaginary parts
/// ([`Amplitude::WIRE_WORDS`] each): 5 for `f64` and `f32`, 13 for an exact amplitude.
fn wire_words<T: Amplitude>() -> usize {
    3 + 2 * T::WIRE_WORDS
}

/// Appends an amplitude's real and imaginary parts in their wire form.
fn push_amplitude<T: Amplitude>(out: &mut Vec<u64>, a: Complex<T>) {
    a.re.to_wire(out);
    a.im.to_wire(out);
}

/// The amplitude [`push_amplitude`] wrote to `words` (`2 * T::WIRE_WORDS` of them).
fn read_amplitude<T: Amplitude>(words: &[u64]) -> Complex<T> {
    let (re, im) = words.split_at(T::WIRE_WORDS);
    Complex::new(T::from_wire(re), T::from_wire(im))
}

/// Appends one entry in the wire form of the exchange and the gather ([`wire_words`] words):
/// the amplitude exactly as stored, so an exact state stays exact across ranks.
fn push_wire<T: Amplitude>(out: &mut Vec<u64>, k: Key, a: Complex<T>) {
    out.extend_from_slice(&[k.board, k.ancillas as u64, (k.ancillas >> 64) as u64]);
    push_amplitude(out, a);
}

/// The entries [`push_wire`] wrote to `words`, appended to `out`.
fn decode_entries<T: Amplitude>(words: &[u64], out: &mut Vec<(Key, Complex<T>)>) {
    out.extend(words.chunks_exact(wire_words::<T>()).map(|e| {
        let key = Key {
            board: e[0],
            ancillas: u128::from(e[1]) | u128::from(e[2]) << 64,
        };
        (key, read_amplitude(&e[3..]))
    }));
}

/// Appends one entry as five words (board, ancillas low and high, re and im as `f64` bits):
/// the wire form of the streamed entry pass, whose read-outs are `f64`.
pub(crate) fn push_entry<T: Amplitude>(out: &mut Vec<u64>, k: Key, a: Complex<T>) {
    out.extend_from_slice(&[
        k.board,
        k.ancillas as u64,
        (k.ancillas >> 64) as u64,
        a.re.as_f64().to_bits(),
        a.im.as_f64().to_bits(),
    ]);
}

/// The entry of five words written by [`push_entry`].
pub(crate) fn decode_entry(w: &[u64]) -> (Key, Complex<f64>) {
    let key = Key {
        board: w[0],
        ancillas: u128::from(w[1]) | u128::from(w[2]) << 64,
    };
    (
        key,
        Complex::new(f64::from_bits(w[3]), f64::from_bits(w[4])),
    )
}

/// An error as three words, so every rank learns what refused an operation elsewhere.
fn encode_error(r: &Result<(), SimError>) -> [u64; 3] {
    match r {
        Ok(()) => [0, 0, 0],
        Err(SimError::CapExceeded { needed, cap }) => [1, *needed as u64, *cap as u64],
        Err(SimError::OutOfMemory { states }) => [2, *states as u64, 0],
        Err(SimError::StateTooLarge { asked, available }) => [4, *asked as u64, *available as u64],
        Err(_) => [3, 0, 0],
    }
}

/// The error another rank reported (its kind kept for the budget and the cap; any other
/// is reported as running out of memory).
fn decode_error(w: &[u64]) -> SimError {
    match w[0] {
        1 => SimError::CapExceeded {
            needed: w[1] as usize,
            cap: w[2] as usize,
        },
        4 => SimError::StateTooLarge {
            asked: w[1] as usize,
            available: w[2] as usize,
        },
        _ => SimError::OutOfMemory {
            states: w[1] as usize,
        },
    }
}

fn check_qubits(qs: &[u8]) -> Result<(), SimError> {
    match qs.iter().find(|&&q| q >= 64) {
        Some(&q) => Err(SimError::QubitOutOfRange { qubit: q }),
        None => Ok(()),
    }
}

impl<T: Amplitude> ShardedState<T>
where
    State<T>: QuantumState,
{
    /// The classical board `board`: its one entry lives on its owner rank.
    pub fn classical_with(board: u64, set: LocalSet) -> Self {
        let comm = comm::current();
        let cap = State::<T>::classical(0).cap();
        let mine = plan::owner(board, set.mask(), comm.size()) == comm.rank();
        let entries = if mine {
            vec![(Key::board(board), Complex::new(T::one(), T::zero()))]
        } else {
            Vec::new()
        };
        let local = State::from_shard(entries, 0, cap).unwrap_or_else(|_| State::classical(board));
        Self {
            local,
            set,
            traffic: Traffic::default(),
            exchange_peak: 0,
        }
    }

    /// This rank's share of `global` (every rank passes the same state): the entries it owns
    /// under `set`, with `global`'s ancilla count and cap.
    pub fn from_state(global: &State<T>, set: LocalSet) -> Result<Self, SimError> {
        let comm = comm::current();
        let (me, ranks, mask) = (comm.rank(), comm.size(), set.mask());
        let entries: Vec<(Key, Complex<T>)> = global
            .entries()
            .filter(|(k, _)| plan::owner(k.board, mask, ranks) == me)
            .collect();
        let local = State::from_shard(entries, global.ancilla_count(), global.cap())?;
        Ok(Self {
            local,
            set,
            traffic: Traffic::default(),
            exchange_peak: 0,
        })
    }

    /// This rank's piece (an ordinary, unnormalised state).
    pub fn local(&self) -> &State<T> {
        &self.local
    }

    /// This thread's transport (see [`comm::install`]).
    pub fn comm(&self) -> Rc<dyn Comm> {
        comm::current()
    }

    /// The same sharding (local set, traffic counters) around another piece for this rank.
    pub(crate) fn with_piece(&self, local: State<T>) -> Self {
        Self {
            local,
            set: self.set.clone(),
            traffic: self.traffic,
            exchange_peak: self.exchange_peak,
        }
    }

    /// This rank's piece, mutably (for per-piece steps the trait implementation calls).
    pub(crate) fn local_mut(&mut self) -> &mut State<T> {
        &mut self.local
    }

    /// Redistributes to the local set `set` (collective; a copy made for an overlap uses it
    /// to match another state's distribution).
    pub(crate) fn realign(&mut self, set: &LocalSet) -> Result<(), SimError> {
        if self.set.mask() == set.mask() {
            self.set = set.clone();
            return Ok(());
        }
        self.exchange(set.mask())?;
        self.set = set.clone();
        Ok(())
    }

    /// The local qubit set.
    pub fn local_set(&self) -> &LocalSet {
        &self.set
    }

    /// This rank's communication so far.
    pub fn traffic(&self) -> Traffic {
        self.traffic
    }

    /// Most heap bytes this rank held during a gate or an exchange since the last
    /// [`ShardedState::reset_peak_bytes`].
    pub fn peak_bytes(&self) -> usize {
        self.local.peak_bytes().max(self.exchange_peak)
    }

    /// Restarts [`ShardedState::peak_bytes`] from the piece's current size.
    pub fn reset_peak_bytes(&mut self) {
        self.local.reset_peak_bytes();
        self.exchange_peak = 0;
    }

    /// Sets the most basis states each rank's piece may hold.
    pub fn set_cap(&mut self, cap: usize) {
        self.local.set_cap(cap);
    }

    /// The per-rank cap.
    pub fn cap(&self) -> usize {
        self.local.cap()
    }

    /// Stored basis states over all ranks.
    pub fn len(&self) -> usize {
        sum_u64(&*comm::current(), &[self.local.len() as u64])[0] as usize
    }

    /// Whether no rank stores an entry (never true for a state built by this crate).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Capture ancillas created so far (the same on every rank).
    pub fn ancilla_count(&self) -> u32 {
        self.local.ancilla_count()
    }

    /// Squared norm over all ranks (summed in rank order).
    pub fn norm_sqr(&self) -> f64 {
        sum_f64(&*comm::current(), &[self.local.norm_sqr()])[0]
    }

    /// Makes `qubits` local, redistributing the entries if L changes. Collective; on error
    /// (a piece would exceed its cap) nothing changed on any rank.
    pub fn make_local(&mut self, qubits: &[u8]) -> Result<(), SimError> {
        check_qubits(qubits)?;
        let before = self.set.clone();
        let Some(new_mask) = self.set.plan(qubits) else {
            return Ok(());
        };
        let result = self.exchange(new_mask);
        if result.is_err() {
            self.set = before;
        }
        result
    }

    /// Redistributes every entry to its owner under the mask `new_mask`. Every check that
    /// can fail (memory budget, memory, caps, message sizes) is agreed by all ranks before
    /// anything moves. Each rank asks its piece's memory budget ([`State::memory_budget`],
    /// which counts the piece's own bytes) first for the list of its entries and then, once
    /// the counts per new owner are known, for the exchange's peak (the larger of: the piece
    /// with the list and the send buffers; the list with the send and receive buffers and
    /// the transport's staging; the list with the rebuilt piece); if any rank's budget
    /// refuses, every rank answers [`SimError::StateTooLarge`] (this rank's numbers, or
    /// `available` 0 where another rank refused) and nothing has moved.
    fn exchange(&mut self, new_mask: u64) -> Result<(), SimError> {
        let comm = comm::current();
        let (me, ranks) = (comm.rank(), comm.size());
        self.traffic.exchanges += 1;
        if ranks == 1 {
            return Ok(());
        }
        // The piece as a list, read once; counts per new owner, plus a flag: 1 listed, 0 the
        // list could not be reserved, 2 the budget refused it.
        let n = self.local.len();
        // Words one entry takes on the wire.
        let ew = wire_words::<T>();
        let entry_size = std::mem::size_of::<(Key, Complex<T>)>();
        let piece = self.local.bytes();
        let budget = self.local.memory_budget();
        let available = budget.saturating_sub(piece);
        let list_asked = n.saturating_mul(entry_size);
        let list_fits = list_asked <= available;
        let mut all: Vec<(Key, Complex<T>)> = Vec::new();
        let listed = list_fits && all.try_reserve_exact(n).is_ok();
        let mut mine = vec![0u64; ranks + 1];
        if listed {
            all.extend(self.local.entries());
            for (k, _) in &all {
                mine[plan::owner(k.board, new_mask, ranks)] += 1;
            }
            mine[ranks] = 1;
        } else if !list_fits {
            mine[ranks] = 2;
        }
        let gathered = comm.all_gather(&mine);
        let row = |from: usize| &gathered[from * (ranks + 1)..from * (ranks + 1) + ranks];
        if (0..ranks).any(|r| gathered[r * (ranks + 1) + ranks] == 2) {
            return Err(SimError::StateTooLarge {
                asked: list_asked,
                available: if list_fits { 0 } else { available },
            });
        }
        if let Some(r) = (0..ranks).find(|&r| gathered[r * (ranks + 1) + ranks] == 0) {
            return Err(SimError::OutOfMemory {
                states: row(r).iter().sum::<u64>() as usize,
            });
        }
        let limit = (crate::comm::MAX_MESSAGE_WORDS / ew) as u64;
        if let Some(&big) = (0..ranks).flat_map(row).find(|&&c| c > limit) {
            return Err(SimError::CapExceeded {
                needed: big as usize,
                cap: limit as usize,
            });
        }
        let cap = self.local.cap() as u64;
        for r in 0..ranks {
            let incoming: u64 = (0..ranks).map(|from| row(from)[r]).sum();
            if incoming > cap {
                return Err(SimError::CapExceeded {
                    needed: incoming as usize,
                    cap: cap as usize,
                });
            }
        }
        // Ask the budget for the exchange's peak, then reserve the send buffers and room
        // for the incoming entries; agree on both (flag: 1 reserved, 0 not, 2 refused).
        let counts = row(me).to_vec();
        let incoming: u64 = (0..ranks).map(|from| row(from)[me]).sum();
        let (stay, incoming_n) = (counts[me] as usize, incoming as usize);
        let (out_words, in_words) = ((n - stay) * ew, incoming_n.saturating_sub(stay) * ew);
        let list = (n + incoming_n.saturating_sub(stay)).saturating_mul(entry_size);
        let staging = comm.all_to_all_staging_words(out_words, in_words);
        let rebuilt = incoming_n.saturating_mul(8 + std::mem::size_of::<Complex<T>>());
        let peak = (piece + list + out_words * 8)
            .max(list + (out_words + in_words + staging) * 8)
            .max(list + rebuilt);
        let fits = peak <= budget;
        let mut send: Vec<Vec<u64>> = vec![Vec::new(); ranks];
        let reserved = fits
            && all
                .try_reserve_exact(incoming_n.saturating_sub(stay))
                .is_ok()
            && send
                .iter_mut()
                .enumerate()
                .all(|(r, v)| r == me || v.try_reserve_exact(counts[r] as usize * ew).is_ok());
        let flag = if !fits { 2 } else { u64::from(reserved) };
        let ok = comm.all_gather(&[flag]);
        if ok.contains(&2) {
            return Err(SimError::StateTooLarge {
                asked: peak.saturating_sub(piece),
                available: if fits { 0 } else { available },
            });
        }
        if let Some(r) = ok.iter().position(|&x| x == 0) {
            return Err(SimError::OutOfMemory {
                states: (0..ranks).map(|from| row(from)[r]).sum::<u64>() as usize,
            });
        }
        // From here nothing can fail: the piece is rebuilt from what stays and what comes.
        all.retain(|&(k, a)| {
            let r = plan::owner(k.board, new_mask, ranks);
            if r != me {
                push_wire(&mut send[r], k, a);
            }
            r == me
        });
        let sent_words: u64 = send.iter().map(|v| v.len() as u64).sum();
        let held = self.local.bytes() + all.capacity() * entry_size + sent_words as usize * 8;
        let cap = self.local.cap();
        let ancillas = self.local.ancilla_count();
        // The old piece is no longer needed: free it before the buffers arrive.
        self.local = State::from_shard(Vec::new(), ancillas, cap)?;
        let received = comm.all_to_all(send).map_err(|e| match e {
            crate::comm::CommError::MessageTooLarge { words } => SimError::CapExceeded {
                needed: words / ew,
                cap: crate::comm::MAX_MESSAGE_WORDS / ew,
            },
        })?;
        // Peaks: old piece + list + send buffers; then (old piece freed) list + send +
        // receive buffers; then list + the rebuilt piece (24 or 16 bytes an entry).
        let recv_words: usize = received.iter().map(Vec::len).sum();
        let list = all.capacity() * entry_size;
        let rebuilt = (all.len() + recv_words / ew) * (8 + std::mem::size_of::<Complex<T>>());
        self.exchange_peak = self
            .exchange_peak
            .max(held)
            .max(list + sent_words as usize * 8 + recv_words * 8)
            .max(list + rebuilt);
        for words in &received {
            decode_entries(words, &mut all);
        }
        drop(received);
        // The rebuilt piece keeps the piece's budget (a budget set on the state survives
        // its exchanges).
        self.local = State::from_shard(all, ancillas, cap)?.with_memory_budget(budget);
        self.traffic.bytes_sent += sent_words * 8;
        self.traffic.entries_sent += sent_words / ew as u64;
        Ok(())
    }

    /// Runs `op` on every rank's piece after making `qubits` local; if it fails on some rank,
    /// the ranks where it succeeded run `undo`, and every rank returns the error.
    fn gate<Op, Undo>(&mut self, qubits: &[u8], op: Op, undo: Undo) -> Result<(), SimError>
    where
        Op: FnOnce(&mut State<T>) -> Result<(), SimError>,
        Undo: FnOnce(&mut State<T>) -> Result<(), SimError>,
    {
        self.make_local(qubits)?;
        self.agree(op, |s, ()| undo(s))
    }

    /// Runs `op` on this rank's piece and agrees on its result with every rank (one
    /// all-gather of an error code, collective): a step that may fail on one rank alone
    /// (its piece's memory budget or cap) must not let the ranks take different branches
    /// and wait for ever in different collectives. If some rank failed, the ranks where it
    /// succeeded take it back with `undo` (given what `op` returned), and every rank
    /// returns the first failing rank's error.
    pub(crate) fn agree<R, Op, Undo>(&mut self, op: Op, undo: Undo) -> Result<R, SimError>
    where
        Op: FnOnce(&mut State<T>) -> Result<R, SimError>,
        Undo: FnOnce(&mut State<T>, R) -> Result<(), SimError>,
    {
        let mine = op(&mut self.local);
        let code = encode_error(&mine.as_ref().map(|_| ()).map_err(Clone::clone));
        let all = comm::current().all_gather(&code);
        let Some(first) = all.chunks(3).position(|w| w[0] != 0) else {
            return mine;
        };
        match mine {
            Err(e) => Err(e),
            Ok(r) => {
                undo(&mut self.local, r)?;
                Err(decode_error(&all[first * 3..first * 3 + 3]))
            }
        }
    }

    /// iSwap (eq. 4a) where the controls hold.
    pub fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[a, b],
            |s| QuantumState::iswap(s, a, b, controls),
            |s| QuantumState::iswap_inv(s, a, b, controls),
        )
    }

    /// Inverse iSwap where the controls hold.
    pub fn iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[a, b],
            |s| QuantumState::iswap_inv(s, a, b, controls),
            |s| QuantumState::iswap(s, a, b, controls),
        )
    }

    /// sqrt-iSwap (eq. 4b) where the controls hold.
    pub fn sqrt_iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[a, b],
            |s| QuantumState::sqrt_iswap(s, a, b, controls),
            |s| QuantumState::sqrt_iswap_inv(s, a, b, controls),
        )
    }

    /// Inverse sqrt-iSwap where the controls hold.
    pub fn sqrt_iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[a, b],
            |s| QuantumState::sqrt_iswap_inv(s, a, b, controls),
            |s| QuantumState::sqrt_iswap(s, a, b, controls),
        )
    }

    /// Split `s^t1t2` (see [`State::split`]).
    pub fn split(&mut self, s: u8, t1: u8, t2: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[s, t1, t2],
            |x| QuantumState::split(x, s, t1, t2, controls),
            |x| QuantumState::merge(x, t2, t1, s, controls),
        )
    }

    /// Merge `s1s2^t` (see [`State::merge`]).
    pub fn merge(&mut self, s1: u8, s2: u8, t: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[s1, s2, t],
            |x| QuantumState::merge(x, s1, s2, t, controls),
            |x| QuantumState::split(x, t, s2, s1, controls),
        )
    }

    /// Split slide (see [`State::split_slide`]).
    pub fn split_slide(
        &mut self,
        s: u8,
        t1: u8,
        t2: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError> {
        self.gate(
            &[s, t1, t2],
            |x| QuantumState::split_slide(x, s, t1, t2, path1, path2),
            |x| QuantumState::merge_slide(x, t2, t1, s, path2, path1),
        )
    }

    /// Merge slide (see [`State::merge_slide`]).
    pub fn merge_slide(
        &mut self,
        s1: u8,
        s2: u8,
        t: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError> {
        self.gate(
            &[s1, s2, t],
            |x| QuantumState::merge_slide(x, s1, s2, t, path1, path2),
            |x| QuantumState::split_slide(x, t, s2, s1, path2, path1),
        )
    }

    /// Controlled X of qubit `q`.
    pub fn flip_controlled(&mut self, q: u8, controls: Controls) -> Result<(), SimError> {
        self.gate(
            &[q],
            |x| x.flip_controlled(q, controls),
            |x| x.flip_controlled(q, controls),
        )
    }

    /// X of qubit `q`.
    pub fn flip(&mut self, q: u8) -> Result<(), SimError> {
        self.flip_controlled(q, Controls::NONE)
    }

    /// Capture of `t` into a fresh ancilla (see [`State::capture`]); `t` is made local first
    /// (the moved entries clear bit `t`), so nothing else moves. Returns the ancilla index.
    pub fn capture(&mut self, t: u8) -> Result<u32, SimError> {
        self.make_local(&[t])?;
        // The ancilla count is the same everywhere, but a piece's budget may refuse the new
        // sector: agreed, and taken back where it was made.
        self.agree(
            |s| QuantumState::capture(s, t),
            |s, a| QuantumState::uncapture(s, t, a),
        )
    }

    /// Multiplies the amplitude of every basis state where `pred` holds by `phase`: diagonal,
    /// so no entry moves.
    pub fn phase(&mut self, pred: Predicate, phase: Complex<T>) -> Result<(), SimError> {
        self.local.phase(pred, phase)
    }

    /// `(mass where pred holds, total mass)` over all ranks.
    pub fn masses(&self, pred: Predicate) -> Result<(f64, f64), SimError> {
        let (y, a) = self.local.masses(pred)?;
        let s = sum_f64(&*comm::current(), &[y, a]);
        Ok((s[0], s[1]))
    }

    /// Probability that `pred` holds: local sums plus one all-gather. Malformed: 0.
    pub fn probability(&self, pred: Predicate) -> f64 {
        match self.masses(pred) {
            Ok((yes, all)) if all > 0.0 => yes / all,
            _ => 0.0,
        }
    }

    /// Probability that each board qubit is 1 (64 local sums, one all-gather).
    pub fn qubit_probabilities(&self) -> [f64; 64] {
        let mut mine = Vec::with_capacity(65);
        for q in 0..64u8 {
            let (y, _) = self.local.masses(Predicate::One(q)).unwrap_or((0.0, 0.0));
            mine.push(y);
        }
        mine.push(self.local.norm_sqr());
        let s = sum_f64(&*comm::current(), &mine);
        let mut out = [0.0; 64];
        if s[64] > 0.0 {
            for (o, y) in out.iter_mut().zip(&s) {
                *o = y / s[64];
            }
        }
        out
    }

    /// Measures `pred` like [`State::measure`]: every rank draws one `f64` from `rng` (so all
    /// streams stay in step) and rank 0's draw decides; the projection is local.
    pub fn measure<R: rand::Rng + ?Sized>(
        &mut self,
        pred: Predicate,
        rng: &mut R,
    ) -> Result<bool, SimError> {
        let (yes, all) = self.masses(pred)?;
        let r = broadcast_f64(&*comm::current(), rng.random::<f64>());
        let (outcome, mass) = State::<T>::pick_outcome_of_masses(yes, all, r);
        self.project_onto(pred, outcome, mass)?;
        Ok(outcome)
    }

    /// Keeps the entries where `pred` has the value `outcome`, scaled by `1/sqrt(mass)` with
    /// `mass` the outcome's global mass (as [`ShardedState::masses`] sums it): the
    /// projection of [`ShardedState::measure`] and [`ShardedState::force`] alone, for a
    /// caller that knows the mass already. Every rank projects its own piece; no message is
    /// sent, but every rank must pass the same arguments. An exact state is not scaled
    /// ([`State::project_onto`]). A malformed predicate or a mass that is not positive and
    /// finite is an error that changes nothing.
    pub fn project_onto(
        &mut self,
        pred: Predicate,
        outcome: bool,
        mass: f64,
    ) -> Result<(), SimError> {
        self.local.project_onto(pred, outcome, mass)
    }

    /// Projects onto `outcome` of `pred` and renormalises; returns its probability. Errors
    /// (and changes nothing) if that is at most [`Amplitude::ZERO_PROBABILITY`].
    pub fn force(&mut self, pred: Predicate, outcome: bool) -> Result<f64, SimError> {
        let (yes, all) = self.masses(pred)?;
        let mass = if outcome { yes } else { all - yes };
        let p = if all > 0.0 { mass / all } else { 0.0 };
        if p <= T::ZERO_PROBABILITY || mass <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome,
                probability: p,
            });
        }
        self.project_onto(pred, outcome, mass)?;
        Ok(p)
    }

    /// Every entry of every rank, sorted by key, on every rank (for tests and small states:
    /// it moves the whole state to every rank). Collective, within the memory budget
    /// (issue 10, Deliver 5): first the ranks' entry counts are exchanged (one word a rank),
    /// then each rank asks its own budget (what its piece leaves, [`State::memory_budget`]
    /// less [`State::bytes`]) for what the gather makes it hold: its own entries once per
    /// rank in the send buffers and every rank's entries received (40 bytes an entry on the
    /// wire), the transport's own copies ([`Comm::all_to_all_staging_words`]: none between
    /// threads, the larger of the two under MPI), and the decoded answer
    /// (`size_of::<(Key, Complex<T>)>()` an entry). If any
    /// rank's budget refuses, every rank refuses with [`SimError::StateTooLarge`] (this
    /// rank's numbers, or `available` 0 when another rank refused) and nothing is
    /// allocated or sent. The buffers are then reserved fallibly; if any rank cannot reserve
    /// them every rank answers [`SimError::OutOfMemory`]. A message over the transport's
    /// limit is [`SimError::CapExceeded`] on every rank. The state is never changed.
    pub fn gather_entries(&self) -> Result<Vec<(Key, Complex<T>)>, SimError> {
        self.gather(Some(0))
    }

    /// [`ShardedState::gather_entries`] outside the memory budget: nothing is asked of it
    /// (for read-outs that cannot fail, such as [`qchess_sim::QuantumState::entries_f64`]),
    /// but the buffers are still reserved fallibly, so running out of memory is
    /// [`SimError::OutOfMemory`] on every rank, never an abort. Collective.
    pub fn gather_entries_unbudgeted(&self) -> Result<Vec<(Key, Complex<T>)>, SimError> {
        self.gather(None)
    }

    /// The gather behind [`ShardedState::gather_entries`]: `also` is `None` for no budget
    /// check, or the bytes per gathered entry the caller will hold beside the answer (asked
    /// together with it).
    pub(crate) fn gather(&self, also: Option<usize>) -> Result<Vec<(Key, Complex<T>)>, SimError> {
        let comm = comm::current();
        let ranks = comm.size();
        let mine = self.local.len();
        let counts = comm.all_gather(&[mine as u64]);
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        // The transport's limit (the same numbers on every rank): one rank's sends and the
        // words one rank receives.
        let ew = wire_words::<T>();
        let limit = crate::comm::MAX_MESSAGE_WORDS / ew;
        let most = counts.iter().map(|&c| c as usize).max().unwrap_or(0);
        let needed = most.saturating_mul(ranks).max(total);
        if needed > limit {
            return Err(SimError::CapExceeded { needed, cap: limit });
        }
        let words = mine * ew;
        let entry = std::mem::size_of::<(Key, Complex<T>)>();
        let (sent, received) = (words * ranks, total * ew);
        let asked = sent
            .saturating_add(received)
            .saturating_add(comm.all_to_all_staging_words(sent, received))
            .saturating_mul(8)
            .saturating_add(total.saturating_mul(entry.saturating_add(also.unwrap_or(0))));
        let available = self
            .local
            .memory_budget()
            .saturating_sub(self.local.bytes());
        let fits = also.is_none() || asked <= available;
        let mut send: Vec<Vec<u64>> = Vec::new();
        let mut out: Vec<(Key, Complex<T>)> = Vec::new();
        let reserved = fits
            && send.try_reserve_exact(ranks).is_ok()
            && (0..ranks).all(|_| {
                let mut v = Vec::new();
                let ok = v.try_reserve_exact(words).is_ok();
                send.push(v);
                ok
            })
            && out.try_reserve_exact(total).is_ok();
        let (refused, all_reserved) = any_all((!fits, reserved));
        if !fits {
            return Err(SimError::StateTooLarge { asked, available });
        }
        if refused {
            return Err(SimError::StateTooLarge {
                asked,
                available: 0,
            });
        }
        if !all_reserved {
            return Err(SimError::OutOfMemory { states: total });
        }
        // From here nothing allocates beyond what was reserved (and the transport's staging).
        if let Some((first, rest)) = send.split_first_mut() {
            for (k, a) in self.local.entries() {
                push_wire(first, k, a);
            }
            for v in rest {
                v.extend_from_slice(first);
            }
        }
        let got = comm.all_to_all(send).map_err(|e| match e {
            crate::comm::CommError::MessageTooLarge { words } => SimError::CapExceeded {
                needed: words / ew,
                cap: limit,
            },
        })?;
        for words in &got {
            decode_entries(words, &mut out);
        }
        drop(got);
        out.sort_unstable_by_key(|e| e.0);
        Ok(out)
    }

    /// A state from explicit amplitudes given identically on every rank (as
    /// [`State::from_amplitudes`]: duplicates summed, zeros dropped, normalised or checked);
    /// each rank keeps the entries it owns under `set`.
    pub fn from_amplitudes(
        entries: Vec<(Key, Complex<T>)>,
        normalization: qchess_sim::Normalization,
        set: LocalSet,
    ) -> Result<Self, SimError> {
        let global = State::from_amplitudes(entries, normalization)?;
        Self::from_state(&global, set)
    }

    /// Probability of each board (ancillas marginalised), most probable first, ties by board
    /// key; at most `limit` boards. All ancilla values of a board live on one rank (ancillas
    /// are not hashed), so each rank contributes its own top `limit` boards.
    pub fn board_distribution(&self, limit: Option<usize>) -> Vec<(u64, f64)> {
        let mine = self.local.board_distribution(limit);
        self.gather_boards(mine, limit)
    }

    /// [`ShardedState::board_distribution`] with `Some(k)`, and the number of distinct
    /// boards of the whole state (collective): one pass over each rank's piece gives its top
    /// `k` and its count ([`State::board_distribution_top`]); the tops are gathered as
    /// `board_distribution` gathers them, and the counts summed by one all-gather of a word a
    /// rank. A board lives on one rank, so the sum counts each board once. Memory is
    /// proportional to `k` times the number of ranks.
    pub(crate) fn top_boards(&self, k: usize) -> (Vec<(u64, f64)>, usize) {
        let (mine, local_total) = self.local.board_distribution_top(k);
        let top = self.gather_boards(mine, Some(k));
        let total = sum_u64(&*comm::current(), &[local_total as u64])[0] as usize;
        (top, total)
    }

    /// Gathers every rank's boards `mine` (its piece's distribution, probabilities relative
    /// to its piece) to every rank, rescaled to the whole state, most probable first, ties
    /// by board key, cut to `limit` (collective).
    fn gather_boards(&self, mut mine: Vec<(u64, f64)>, limit: Option<usize>) -> Vec<(u64, f64)> {
        let local_norm = self.local.norm_sqr();
        let norm = self.norm_sqr();
        let mut words = Vec::with_capacity(mine.len() * 2);
        for (b, p) in mine.drain(..) {
            words.extend_from_slice(&[b, (p * local_norm / norm).to_bits()]);
        }
        let got = comm::current()
            .all_to_all(vec![words; comm::current().size()])
            .unwrap_or_default();
        let mut all: Vec<(u64, f64)> = got
            .iter()
            .flat_map(|w| w.chunks_exact(2).map(|c| (c[0], f64::from_bits(c[1]))))
            .collect();
        all.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        if let Some(l) = limit {
            all.truncate(l);
        }
        all
    }

    /// The amplitude of one key (from its owner rank; exactly as stored, an exact one too).
    pub fn amplitude(&self, key: Key) -> Complex<T> {
        // Every rank's stored amplitude (0 where it does not hold the key), summed exactly.
        let mut mine = Vec::with_capacity(2 * T::WIRE_WORDS);
        push_amplitude(&mut mine, self.local.amplitude(key));
        let all = comm::current().all_gather(&mine);
        all.chunks_exact(mine.len())
            .map(read_amplitude::<T>)
            .fold(Complex::new(T::zero(), T::zero()), |x, y| x + y)
    }

    /// Draws one basis state with probability `|amplitude|^2` from one global draw: rank 0's
    /// `f64` (every rank draws one) picks the rank by the prefix sums of the pieces' norms,
    /// which picks the entry within its piece.
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> Key {
        let r = broadcast_f64(&*comm::current(), rng.random::<f64>());
        let norms = comm::current().all_gather(&[self.local.norm_sqr().to_bits()]);
        let norms: Vec<f64> = norms.into_iter().map(f64::from_bits).collect();
        let total: f64 = norms.iter().sum();
        let mut target = r * total;
        let mut chosen = norms.len() - 1;
        for (i, n) in norms.iter().enumerate() {
            if target < *n {
                chosen = i;
                break;
            }
            target -= n;
        }
        while norms[chosen] == 0.0 && chosen > 0 {
            chosen -= 1;
        }
        let mut words = [0u64; 3];
        if chosen == comm::current().rank() {
            let mut rng = Fixed(if norms[chosen] > 0.0 {
                (target / norms[chosen]).clamp(0.0, 1.0 - f64::EPSILON)
            } else {
                0.0
            });
            let k = self.local.sample(&mut rng);
            words = [k.board, k.ancillas as u64, (k.ancillas >> 64) as u64];
        }
        let w = sum_u64(&*comm::current(), &words);
        Key {
            board: w[0],
            ancillas: u128::from(w[1]) | u128::from(w[2]) << 64,
        }
    }
}

/// A generator that returns one fixed `f64` in `[0, 1)` (the local part of a global draw).
struct Fixed(f64);

impl rand::RngCore for Fixed {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        // rand's f64 is (x >> 11) * 2^-53.
        ((self.0 * (1u64 << 53) as f64) as u64) << 11
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::ThreadComm;

    use crate::selftest::spread_state as spread;

    /// An exact state's entries cross the ranks exactly: gates that exchange entries (their
    /// qubits brought into the local set), the gather and `amplitude` leave the amplitudes
    /// equal, with `==`, to the local exact state's.
    #[test]
    fn sharded_exact_exchanges_keep_the_amplitudes_exact() {
        let global = crate::selftest::exact_pieces_state();
        let mut local = global.clone();
        let gates = [(1u8, 2u8), (21, 22), (41, 42), (10, 11), (2, 30), (22, 50)];
        for (a, b) in gates {
            local.sqrt_iswap(a, b, Controls::NONE).unwrap();
        }
        let want: Vec<_> = local.entries().collect();
        let results = ThreadComm::run(3, |c| {
            crate::comm::install(Rc::new(c), 8);
            let mut s = ShardedState::from_state(&global, LocalSet::new(3, &[])).unwrap();
            for (a, b) in gates {
                s.sqrt_iswap(a, b, Controls::NONE).unwrap();
            }
            // Each amplitude read from its owner, exactly, on every rank; an absent key 0.
            let read: Vec<_> = want
                .iter()
                .step_by(37)
                .map(|(k, _)| s.amplitude(*k))
                .collect();
            let absent = s.amplitude(Key::board(0b11));
            (
                s.traffic().exchanges,
                s.gather_entries().unwrap(),
                read,
                absent,
            )
        });
        let read_want: Vec<_> = want.iter().step_by(37).map(|(_, a)| *a).collect();
        for (exchanges, got, read, absent) in results {
            assert_eq!(read, read_want);
            assert_eq!(
                absent,
                Complex::new(qchess_sim::Exact::ZERO, qchess_sim::Exact::ZERO)
            );
            assert!(exchanges > 0, "no exchange");
            assert_eq!(got.len(), want.len());
            let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
            assert_eq!(differ, 0, "entries differ from the local exact state");
        }
    }

    /// An exact state stays exact through a sharded measurement and board projection: each
    /// piece projects without the rounded `1/sqrt(mass)` (which overflowed the exact
    /// coefficients by the third projection), so the probabilities stay those of the local
    /// exact state.
    #[test]
    fn sharded_exact_projections_keep_the_local_exact_probabilities() {
        // Every forced outcome on the pieces' squares has mass 1/2.
        let global = crate::selftest::exact_pieces_state();
        let mut local = global.clone();
        // Forced outcomes on two qubits, then board projections (a capture slide's step) on
        // four more.
        let qubits = [21u8, 1, 41, 10, 4, 18];
        let keep = |q: u8| move |b: u64| b >> q & 1 == 0;
        let want: Vec<Vec<f64>> = qubits
            .iter()
            .enumerate()
            .map(|(i, &q)| {
                if i < 2 {
                    local.force_exact(Predicate::One(q), false).unwrap();
                } else {
                    local.project_boards(&keep(q)).unwrap();
                }
                (0..64)
                    .map(|b| local.probability(Predicate::One(b)))
                    .collect()
            })
            .collect();
        let results = ThreadComm::run(3, |c| {
            crate::comm::install(Rc::new(c), 8);
            let mut s = ShardedState::from_state(&global, LocalSet::new(3, &[])).unwrap();
            let mut got = Vec::new();
            for (i, &q) in qubits.iter().enumerate() {
                if i < 2 {
                    s.force(Predicate::One(q), false).unwrap();
                } else {
                    QuantumState::project_boards(&mut s, &keep(q)).unwrap();
                }
                got.push(
                    (0..64)
                        .map(|b| s.probability(Predicate::One(b)))
                        .collect::<Vec<f64>>(),
                );
            }
            let exact = s
                .gather_entries()
                .unwrap()
                .iter()
                .all(|(_, a)| !a.re.is_poisoned() && !a.im.is_poisoned());
            (got, exact)
        });
        for (got, exact) in results {
            assert!(exact, "an amplitude overflowed");
            for (g, w) in got.iter().zip(&want) {
                for (b, (x, y)) in g.iter().zip(w).enumerate() {
                    assert!((x - y).abs() < 1e-12, "qubit {b}: {x} vs {y}");
                }
            }
        }
    }

    #[test]
    fn a_gate_refused_on_one_rank_is_undone_on_the_others() {
        let results = ThreadComm::run(3, |c| {
            crate::comm::install(Rc::new(c), 8);
            let global = spread();
            let mut s =
                ShardedState::from_state(&global, LocalSet::new(8, &[0, 1, 2, 3, 4, 5, 6, 7]))
                    .unwrap();
            let before = s.gather_entries().unwrap();
            // Rank 1 may hold only what it has: a split that grows its piece is refused
            // there, and must be undone where it succeeded.
            if s.comm().rank() == 1 {
                let n = s.local().len();
                s.set_cap(n);
            }
            let r = s.split(0, 1, 7, Controls::NONE);
            let after = s.gather_entries().unwrap();
            (r, before == after, s.local().len())
        });
        let first = results[0].0.clone();
        assert!(
            matches!(first, Err(SimError::CapExceeded { .. })),
            "{first:?}"
        );
        // Another rank holds entries, so the split ran (and was undone) there.
        assert!(results.iter().enumerate().any(|(i, r)| i != 1 && r.2 > 0));
        for (r, same, _) in &results {
            assert_eq!(*r, first, "every rank returns the same error");
            assert!(same, "the state is unchanged on every rank");
        }
    }

    #[test]
    fn an_exchange_over_the_cap_changes_nothing() {
        let results = ThreadComm::run(2, |c| {
            crate::comm::install(Rc::new(c), 8);
            let global = spread();
            let mut s = ShardedState::from_state(&global, LocalSet::new(3, &[0, 1, 2])).unwrap();
            let before = s.gather_entries().unwrap();
            let mask = s.local_set().mask();
            s.set_cap(1);
            let r = s.iswap(16, 20, Controls::NONE);
            let unchanged = s.gather_entries().unwrap() == before && s.local_set().mask() == mask;
            (r, unchanged)
        });
        for (r, unchanged) in results {
            assert!(matches!(r, Err(SimError::CapExceeded { .. })), "{r:?}");
            assert!(unchanged);
        }
    }

    /// An exchange asks each rank's budget (issue 10, Deliver 5) on 3 ranks: with rank 1's
    /// budget at its piece plus 16 bytes every rank refuses the gate that needs one
    /// (`StateTooLarge`, rank 1 with its own numbers, the others with 0 available), nothing
    /// moves and the local set is unchanged; with room the same gate runs and gives the
    /// local state's entries, and the piece keeps the budget it was given.
    #[test]
    fn an_exchange_asks_the_budget_on_every_rank() {
        let results = ThreadComm::run(3, |c| {
            crate::comm::install(Rc::new(c), 8);
            let rank = crate::comm::current().rank();
            let global = spread();
            let mut s = ShardedState::from_state(&global, LocalSet::new(3, &[0, 1, 2])).unwrap();
            let before = s.gather_entries().unwrap();
            let mask = s.local_set().mask();
            let budget = s.local().memory_budget();
            if rank == 1 {
                let held = s.local().bytes();
                s.local_mut().set_memory_budget(held + 16);
            }
            let refused = s.iswap(16, 20, Controls::NONE);
            let unchanged =
                s.gather_entries_unbudgeted().unwrap() == before && s.local_set().mask() == mask;
            // A budget set on the state survives the exchange (a generous one here).
            let generous = budget / 2;
            s.local_mut().set_memory_budget(generous);
            let ran = s.iswap(16, 20, Controls::NONE);
            let kept = s.local().memory_budget() == generous;
            let mut want = global.clone();
            QuantumState::iswap(&mut want, 16, 20, Controls::NONE).unwrap();
            let same = s.gather_entries().unwrap() == want.entries().collect::<Vec<_>>();
            (
                rank,
                refused,
                unchanged,
                ran.is_ok() && same && s.local_set().mask() != mask && kept,
            )
        });
        for (rank, refused, unchanged, ran) in results {
            match refused {
                Err(SimError::StateTooLarge { asked, available }) => {
                    assert!(asked > available, "rank {rank}");
                    assert_eq!(available == 16, rank == 1, "rank {rank}: {available}");
                }
                other => panic!("rank {rank}: {other:?}"),
            }
            assert!(unchanged && ran, "rank {rank}");
        }
    }

    #[test]
    fn board_distribution_agrees_with_the_local_state() {
        let results = ThreadComm::run(3, |c| {
            crate::comm::install(Rc::new(c), 8);
            let mut global = spread();
            QuantumState::capture(&mut global, 3).unwrap();
            let s = ShardedState::from_state(&global, LocalSet::new(3, &[])).unwrap();
            (
                QuantumState::board_distribution(&global, Some(7)),
                s.board_distribution(Some(7)),
            )
        });
        for (want, got) in results {
            assert_eq!(want.len(), 7);
            assert_eq!(want.len(), got.len());
            for ((b1, p1), (b2, p2)) in want.iter().zip(&got) {
                assert_eq!(b1, b2);
                assert!((p1 - p2).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn measurement_and_sampling_agree_with_the_local_state() {
        use rand::SeedableRng;
        let results = ThreadComm::run(4, |c| {
            crate::comm::install(Rc::new(c), 8);
            let mut global = spread();
            let mut s = ShardedState::from_state(&global, LocalSet::new(4, &[])).unwrap();
            let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let a = global.measure(Predicate::One(17), &mut r1).unwrap();
            let b = s.measure(Predicate::One(17), &mut r2).unwrap();
            let p = (
                global.probability(Predicate::One(3)),
                s.probability(Predicate::One(3)),
            );
            // Sampling: every drawn key is stored, with a positive amplitude.
            let keys: Vec<Key> = (0..20).map(|_| s.sample(&mut r2)).collect();
            let stored = keys.iter().all(|&k| global.amplitude(k).norm_sqr() > 0.0);
            (a, b, p, stored, s.len(), global.len())
        });
        for (a, b, (p1, p2), stored, n1, n2) in results {
            assert_eq!(a, b);
            assert!((p1 - p2).abs() < 1e-12 && p1 > 0.0 && p1 < 1.0);
            assert!(stored);
            assert_eq!(n1, n2);
        }
    }
}
