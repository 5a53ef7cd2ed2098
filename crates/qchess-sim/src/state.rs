//! The state: a direct sum of sectors, one per capture-ancilla value, each a key-sorted run of
//! physical board keys with their amplitudes in a separate array.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::grow::{self, Down};
use crate::kernels::pair::{self, PairGate, SliceSink, VecSink};
use crate::kernels::{dense, expand, permute, spread};
use crate::key::{Cond, Key, Normalization};
use crate::lane::Lane;
use crate::memory::{Buffer, Pool, default_cap};
use crate::perm::BitPerm;
use num_complex::Complex;
use rayon::prelude::*;
use std::fmt;

/// Most capture ancillas a state can hold (one bit each of a `u128`); the next capture
/// returns [`SimError::TooManyAncillas`].
///
/// ```
/// assert_eq!(qchess_sim::MAX_ANCILLAS, 128);
/// ```
pub const MAX_ANCILLAS: u32 = 128;

/// A single sector at least this large runs a pair gate as parallel key-range tasks.
pub(crate) const PARALLEL_MIN: usize = 1 << 17;

/// The longest run of whole groups a controlled pair permutation (a slide) permutes as one
/// task, in cache (16 384 entries: 384 KiB of f64 state); see [`State::apply_permutation`].
pub(crate) const PERMUTE_CHUNK: usize = 1 << 14;

/// Whether the tests turned the forward pass into a sector's room below off
/// (`expand::tests::FORWARD_OFF`); never outside the tests.
fn forward_off() -> bool {
    #[cfg(test)]
    return expand::tests::FORWARD_OFF.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(test))]
    false
}

/// The entries sector `i` grows by above its entries: its growth `grow[i]`, or none where
/// `below[i]` (it grows into the room below them).
fn growth_above(grow: &[usize], below: &[bool], i: usize) -> usize {
    grow[i] * usize::from(!below.get(i).copied().unwrap_or(false))
}

/// State bytes from which a dense gate's wide groups read a spill (`dense::SPILL_BYTES`), or
/// `None` for never. The tests may turn the spill off (`expand::tests::SPILL_OFF`: each
/// wide group then moves its upper half) or on at any size (`expand::tests::SPILL_ANY`).
fn spill_from_bytes() -> Option<usize> {
    #[cfg(test)]
    {
        use std::sync::atomic::Ordering::Relaxed;
        if expand::tests::SPILL_OFF.load(Relaxed) {
            return None;
        }
        if expand::tests::SPILL_ANY.load(Relaxed) {
            return Some(0);
        }
    }
    Some(dense::SPILL_BYTES)
}

/// One sector's pair permutation (zero diagonal) as independent tasks over key ranges cut at
/// group boundaries: a permutation keeps each range's size, so every task writes straight
/// into its own slot of `out`. The result is the same entries in the same order as the
/// sequential kernel. (Dense gates run in place: `State::apply_dense_in_place`.)
#[allow(clippy::too_many_arguments)]
fn apply_pair_parallel<T, Pre, Post>(
    s: &Sector<T>,
    gate: &PairGate<T>,
    plain: bool,
    pre: &Pre,
    post: &Post,
    out: &mut Buffer<T>,
    parts: usize,
) -> Result<(), SimError>
where
    T: Amplitude,
    Pre: Fn(u64, Complex<T>) -> Complex<T> + Sync,
    Post: Fn(u64, Complex<T>) -> Complex<T> + Sync,
{
    let ranges = pair::group_ranges(&s.keys, gate.hi, parts);
    // Room per task: a permutation keeps each range's size.
    let sizes: Vec<usize> = ranges.iter().map(|&(a, b)| b - a).collect();
    let total: usize = sizes.iter().sum();
    out.ensure_initialized(total)?;
    let mut slots = Vec::with_capacity(ranges.len());
    let (mut ks, mut as_) = (&mut out.keys[..total], &mut out.amps[..total]);
    for &size in &sizes {
        let (k, kr) = ks.split_at_mut(size);
        let (a, ar) = as_.split_at_mut(size);
        slots.push((k, a));
        (ks, as_) = (kr, ar);
    }
    let written: Vec<usize> = ranges
        .par_iter()
        .zip(slots.into_par_iter())
        .map(|(&(a, b), (k, amp))| {
            let mut sink = SliceSink {
                keys: k,
                amps: amp,
                len: 0,
            };
            pair::apply(
                &s.keys[a..b],
                &s.amps[a..b],
                gate,
                plain,
                pre,
                post,
                &mut sink,
            );
            sink.len
        })
        .collect();
    let (mut w, mut offset) = (0usize, 0usize);
    for (&size, &len) in sizes.iter().zip(&written) {
        if offset != w {
            out.keys.copy_within(offset..offset + len, w);
            out.amps.copy_within(offset..offset + len, w);
        }
        w += len;
        offset += size;
    }
    out.keys.truncate(w);
    out.amps.truncate(w);
    Ok(())
}

/// One ancilla value's share of the state, sorted by physical key, no duplicate keys, no
/// zero amplitudes, never empty.
#[derive(Debug)]
pub(crate) struct Sector<T> {
    pub ancillas: u128,
    pub keys: Lane<u64>,
    pub amps: Lane<Complex<T>>,
}

impl<T> Sector<T> {
    /// Heap bytes of the two arrays (their allocations, room below the entries included).
    pub(crate) fn bytes(&self) -> usize {
        self.keys.allocated() * 8 + self.amps.allocated() * std::mem::size_of::<Complex<T>>()
    }

    /// What [`Sector::reserve`]`(n)` reserves beyond the `n` entries asked for (the rounding
    /// of `pages::reserve_exact`): asked of the memory budget with them.
    pub(crate) fn rounding_bytes(&self, n: usize) -> usize {
        self.keys.rounding_bytes(n) + self.amps.rounding_bytes(n)
    }

    /// Reserves room for `n` more entries above both arrays' entries
    /// (`pages::reserve_exact`), fallibly; where the room above is too small and the room
    /// below them is large, the entries are first moved down over it (`Lane::reserve_with`).
    pub(crate) fn reserve(&mut self, n: usize) -> Result<(), std::collections::TryReserveError> {
        self.keys.reserve_with(n, crate::pages::reserve_exact)?;
        self.amps.reserve_with(n, crate::pages::reserve_exact)
    }

    /// Cuts both arrays to the pass output's `out` entries, keeping up to half the state as
    /// room to grow into (with the rounding to whole 2 MiB pages that a growth to that size
    /// reserves, `pages::whole_huge_capacity`) and giving back more. Without the rounding, a
    /// state that grew by half and shrank back (a merge after a split) gave back the room
    /// the next split then faulted in again.
    fn trim(&mut self, out: usize) {
        self.keys.truncate(out);
        self.amps.truncate(out);
        let limit = out + out / 2 + 64;
        if self.keys.allocated() > crate::pages::whole_huge_capacity::<u64>(limit)
            || self.amps.allocated() > crate::pages::whole_huge_capacity::<Complex<T>>(limit)
        {
            self.keys.shrink_to(out);
            self.amps.shrink_to(out);
        }
    }
}

impl<T: Amplitude> Sector<T> {
    /// Runs an in-place pass over both arrays whole (their room below included, the live
    /// entries from `head`, the third argument), grown first to `len` live entries without
    /// zeros (`Lane::grow_stale`: the pass must write every grown slot before it reads it),
    /// and takes the pass's output `(from, out)` as the live entries, trimmed.
    fn pass_in_place(
        &mut self,
        len: usize,
        pass: impl FnOnce(&mut [u64], &mut [Complex<T>], usize) -> (usize, usize),
    ) {
        self.keys.grow_stale(len, 0);
        self.amps
            .grow_stale(len, Complex::new(T::zero(), T::zero()));
        let head = self.keys.head();
        let (from, out) = pass(self.keys.whole_mut(), self.amps.whole_mut(), head);
        self.keys.set_live(from, from + out);
        self.amps.set_live(from, from + out);
        self.trim(out);
    }
}

/// `Vec::clone` of both arrays, in buffers advised for huge pages (`pages`).
impl<T: Clone> Clone for Sector<T> {
    fn clone(&self) -> Self {
        Self {
            ancillas: self.ancillas,
            keys: crate::pages::copy(&self.keys).into(),
            amps: crate::pages::copy(&self.amps).into(),
        }
    }
}

/// A pure state over 64 board qubits plus capture ancillas, stored sparsely.
///
/// Keys are kept sorted inside each ancilla sector, so gates are linear merge passes and
/// measurements are filters; see the crate documentation for the conventions.
///
/// ```
/// use qchess_sim::{Controls, Predicate, State};
/// // A king on a1 (qubit 0) splits to a2 (8) and b1 (1).
/// let mut s = State::<f64>::classical(1 << 0);
/// s.split(0, 8, 1, Controls::NONE)?;
/// assert_eq!(s.len(), 2);
/// assert!((s.probability(Predicate::One(8)) - 0.5).abs() < 1e-15);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
#[derive(Clone)]
pub struct State<T: Amplitude = f64> {
    pub(crate) sectors: Vec<Sector<T>>,
    pub(crate) perm: BitPerm,
    pub(crate) ancilla_count: u32,
    pub(crate) cap: usize,
    pub(crate) pool: Pool<T>,
    /// Most heap bytes held at once during a pass since the last `reset_peak_bytes`.
    pub(crate) peak: usize,
    /// Most heap bytes this state may hold (see [`State::memory_budget`]).
    pub(crate) budget: usize,
}

impl<T: Amplitude> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<(Key, Complex<T>)> = self.entries().take(8).collect();
        f.debug_struct("State")
            .field("len", &self.len())
            .field("sectors", &self.sectors.len())
            .field("ancilla_count", &self.ancilla_count)
            .field("cap", &self.cap)
            .field("first_entries", &shown)
            .finish()
    }
}

impl<T: Amplitude> State<T> {
    /// The classical board `board` (amplitude 1, no ancillas).
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let s = State::<f32>::classical(0b101);
    /// assert_eq!(s.len(), 1);
    /// assert_eq!(s.amplitude(Key::board(0b101)).re, 1.0);
    /// ```
    pub fn classical(board: u64) -> Self {
        Self {
            sectors: vec![Sector {
                ancillas: 0,
                keys: vec![board].into(),
                amps: vec![Complex::new(T::one(), T::zero())].into(),
            }],
            perm: BitPerm::identity(),
            ancilla_count: 0,
            cap: default_cap::<T>(),
            pool: Pool::default(),
            peak: 0,
            budget: crate::memory::default_memory_budget(),
        }
    }

    /// A state from explicit amplitudes. Duplicate keys are summed; exact zeros (also after
    /// summing) are dropped. `ancilla_count` becomes one more than the highest ancilla bit
    /// used. Errors: a non-finite amplitude, zero norm, or (with
    /// [`Normalization::RequireUnit`]) a squared norm off 1 by more than
    /// [`Amplitude::UNIT_TOLERANCE`], or more entries than the default cap.
    ///
    /// ```
    /// use qchess_sim::{Key, Normalization, State};
    /// use num_complex::Complex;
    /// let h = std::f64::consts::FRAC_1_SQRT_2;
    /// let s = State::<f64>::from_amplitudes(
    ///     vec![(Key::board(1), Complex::new(h, 0.0)), (Key { board: 0, ancillas: 1 }, Complex::new(0.0, h))],
    ///     Normalization::RequireUnit,
    /// )?;
    /// assert_eq!(s.ancilla_count(), 1);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn from_amplitudes(
        mut entries: Vec<(Key, Complex<T>)>,
        normalization: Normalization,
    ) -> Result<Self, SimError> {
        if entries
            .iter()
            .any(|(_, a)| !(T::is_finite(a.re) && T::is_finite(a.im)))
        {
            return Err(SimError::NonFinite {
                context: "from_amplitudes",
            });
        }
        entries.sort_by_key(|e| e.0);
        let mut merged: Vec<(Key, Complex<T>)> = Vec::with_capacity(entries.len());
        for (k, a) in entries {
            match merged.last_mut() {
                Some((lk, la)) if *lk == k => *la = *la + a,
                _ => merged.push((k, a)),
            }
        }
        let zero = Complex::new(T::zero(), T::zero());
        merged.retain(|(_, a)| *a != zero);
        let norm: f64 = merged
            .iter()
            .map(|(_, a)| crate::kernels::scan::norm2(*a))
            .sum();
        if !norm.is_finite() {
            return Err(SimError::NonFinite {
                context: "from_amplitudes (norm overflow)",
            });
        }
        if norm == 0.0 {
            return Err(SimError::ZeroNorm);
        }
        let scale = match normalization {
            Normalization::RequireUnit if (norm - 1.0).abs() > T::UNIT_TOLERANCE => {
                return Err(SimError::NotNormalized { norm_sqr: norm });
            }
            Normalization::RequireUnit => T::one(),
            Normalization::Renormalize if T::RENORMALIZES => T::of_f64(1.0 / norm.sqrt()),
            Normalization::Renormalize => T::one(),
        };
        let cap = default_cap::<T>();
        if merged.len() > cap {
            return Err(SimError::CapExceeded {
                needed: merged.len(),
                cap,
            });
        }
        let mut sectors: Vec<Sector<T>> = Vec::new();
        let mut top = 0u32;
        for (k, a) in merged {
            if k.ancillas != 0 {
                top = top.max(128 - k.ancillas.leading_zeros());
            }
            match sectors.last_mut() {
                Some(s) if s.ancillas == k.ancillas => {
                    s.keys.push(k.board);
                    s.amps.push(a * scale);
                }
                _ => sectors.push(Sector {
                    ancillas: k.ancillas,
                    keys: vec![k.board].into(),
                    amps: vec![a * scale].into(),
                }),
            }
        }
        let mut state = Self {
            sectors,
            perm: BitPerm::identity(),
            ancilla_count: top,
            cap,
            pool: Pool::default(),
            peak: 0,
            budget: 0,
        };
        state.budget = crate::memory::budget_holding(state.bytes());
        Ok(state)
    }

    /// A state with no ancillas from a key array and an amplitude array, without copying:
    /// the fast way to load large states. Keys must be strictly increasing. Errors: lengths
    /// differ or keys unsorted/duplicated ([`SimError::UnsortedKeys`]), a non-finite or zero
    /// amplitude, zero norm, a norm off 1 under [`Normalization::RequireUnit`], or more
    /// entries than the default cap.
    ///
    /// ```
    /// use qchess_sim::{Complex, Key, Normalization, State};
    /// let s = State::<f32>::from_board_arrays(
    ///     vec![1, 2, 8],
    ///     vec![Complex::new(1.0, 0.0), Complex::new(0.0, 1.0), Complex::new(-1.0, 0.0)],
    ///     Normalization::Renormalize,
    /// )?;
    /// assert_eq!(s.len(), 3);
    /// assert!((s.amplitude(Key::board(2)).im - 3f32.sqrt().recip()).abs() < 1e-7);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn from_board_arrays(
        keys: Vec<u64>,
        mut amps: Vec<Complex<T>>,
        normalization: Normalization,
    ) -> Result<Self, SimError> {
        if keys.len() != amps.len() || keys.windows(2).any(|w| w[0] >= w[1]) {
            return Err(SimError::UnsortedKeys);
        }
        let zero = Complex::new(T::zero(), T::zero());
        if amps
            .iter()
            .any(|a| !(T::is_finite(a.re) && T::is_finite(a.im)) || *a == zero)
        {
            return Err(SimError::NonFinite {
                context: "from_board_arrays (or a zero amplitude)",
            });
        }
        let norm = crate::kernels::scan::norm_sqr(&amps);
        if norm == 0.0 || keys.is_empty() {
            return Err(SimError::ZeroNorm);
        }
        match normalization {
            Normalization::RequireUnit if (norm - 1.0).abs() > T::UNIT_TOLERANCE => {
                return Err(SimError::NotNormalized { norm_sqr: norm });
            }
            Normalization::RequireUnit => {}
            Normalization::Renormalize if !T::RENORMALIZES => {}
            Normalization::Renormalize => {
                let scale = T::of_f64(1.0 / norm.sqrt());
                amps.par_iter_mut().for_each(|a| *a = *a * scale);
            }
        }
        let cap = default_cap::<T>();
        if keys.len() > cap {
            return Err(SimError::CapExceeded {
                needed: keys.len(),
                cap,
            });
        }
        let mut state = Self {
            sectors: vec![Sector {
                ancillas: 0,
                keys: keys.into(),
                amps: amps.into(),
            }],
            perm: BitPerm::identity(),
            ancilla_count: 0,
            cap,
            pool: Pool::default(),
            peak: 0,
            budget: 0,
        };
        state.budget = crate::memory::budget_holding(state.bytes());
        Ok(state)
    }

    /// One piece of a larger (distributed) state: the entries as given, neither normalised
    /// nor required to be non-empty, with `ancilla_count` ancillas already created (so the
    /// next [`State::capture`] numbers its ancilla like every other piece) and the cap `cap`.
    /// Duplicate keys are summed and exact zeros dropped, as in [`State::from_amplitudes`].
    /// Errors: a non-finite amplitude, an ancilla bit at or above `ancilla_count`, or more
    /// entries than `cap`.
    ///
    /// ```
    /// use qchess_sim::{Complex, Key, State};
    /// let s = State::<f64>::from_shard(vec![(Key::board(3), Complex::new(0.5, 0.0))], 2, 100)?;
    /// assert_eq!((s.len(), s.ancilla_count(), s.norm_sqr()), (1, 2, 0.25));
    /// assert!(State::<f64>::from_shard(Vec::new(), 0, 100)?.is_empty());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn from_shard(
        entries: Vec<(Key, Complex<T>)>,
        ancilla_count: u32,
        cap: usize,
    ) -> Result<Self, SimError> {
        Self::from_shard_budgeted(entries, ancilla_count, cap, None)
    }

    /// [`State::from_shard`] with the memory budget given (`Some`: a gate rebuilding a state
    /// keeps that state's own budget, and measures nothing) or measured (`None`).
    pub(crate) fn from_shard_budgeted(
        mut entries: Vec<(Key, Complex<T>)>,
        ancilla_count: u32,
        cap: usize,
        budget: Option<usize>,
    ) -> Result<Self, SimError> {
        if entries
            .iter()
            .any(|(_, a)| !(a.re.is_finite() && a.im.is_finite()))
        {
            return Err(SimError::NonFinite {
                context: "from_shard",
            });
        }
        if ancilla_count > MAX_ANCILLAS {
            return Err(SimError::TooManyAncillas { max: MAX_ANCILLAS });
        }
        let allowed = if ancilla_count >= 128 {
            u128::MAX
        } else {
            (1u128 << ancilla_count) - 1
        };
        if entries.iter().any(|(k, _)| k.ancillas & !allowed != 0) {
            return Err(SimError::TooManyAncillas { max: ancilla_count });
        }
        if entries.len() > cap {
            return Err(SimError::CapExceeded {
                needed: entries.len(),
                cap,
            });
        }
        entries.sort_unstable_by_key(|e| e.0);
        let zero = Complex::new(T::zero(), T::zero());
        let mut sectors: Vec<Sector<T>> = Vec::new();
        for (k, a) in entries {
            match sectors.last_mut() {
                Some(s) if s.ancillas == k.ancillas => {
                    if s.keys.last() == Some(&k.board) {
                        let last = s.amps.len() - 1;
                        s.amps[last] = s.amps[last] + a;
                    } else {
                        s.keys.push(k.board);
                        s.amps.push(a);
                    }
                }
                _ => sectors.push(Sector {
                    ancillas: k.ancillas,
                    keys: vec![k.board].into(),
                    amps: vec![a].into(),
                }),
            }
        }
        for s in &mut sectors {
            let mut w = 0;
            for r in 0..s.keys.len() {
                if s.amps[r] != zero {
                    s.keys[w] = s.keys[r];
                    s.amps[w] = s.amps[r];
                    w += 1;
                }
            }
            s.keys.truncate(w);
            s.amps.truncate(w);
        }
        sectors.retain(|s| !s.keys.is_empty());
        let mut state = Self {
            sectors,
            perm: BitPerm::identity(),
            ancilla_count,
            cap,
            budget: 0,
            pool: Pool::default(),
            peak: 0,
        };
        state.budget = budget.unwrap_or_else(|| crate::memory::budget_holding(state.bytes()));
        Ok(state)
    }

    /// Pre-allocates (and touches) a reusable pass buffer of `states` entries, so the next
    /// gate does not pay for fresh pages. Errors if the memory cannot be reserved.
    ///
    /// ```
    /// let mut s = qchess_sim::State::<f64>::classical(1);
    /// s.reserve_buffers(1000)?;
    /// assert!(s.bytes() >= 24_000);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn reserve_buffers(&mut self, states: usize) -> Result<(), SimError> {
        self.ask_buffers([states])?;
        let buf = self.pool.take(states)?;
        self.pool.give(buf);
        Ok(())
    }

    /// Sets the cap and returns the state (builder form of [`State::set_cap`]).
    ///
    /// ```
    /// let s = qchess_sim::State::<f64>::classical(1).with_cap(1000);
    /// assert_eq!(s.cap(), 1000);
    /// ```
    pub fn with_cap(mut self, max_states: usize) -> Self {
        self.cap = max_states;
        self
    }

    /// Sets the most basis states an operation may produce; an operation that would need
    /// more returns [`SimError::CapExceeded`] before allocating and changes nothing. The
    /// default is what fits once in this machine's memory; the memory budget
    /// ([`State::memory_budget`]) is what bounds the bytes a gate really allocates.
    ///
    /// ```
    /// let mut s = qchess_sim::State::<f64>::classical(1);
    /// s.set_cap(1);
    /// assert!(s.sqrt_iswap(0, 1, qchess_sim::Controls::NONE).is_err());
    /// ```
    pub fn set_cap(&mut self, max_states: usize) {
        self.cap = max_states;
    }

    /// The memory budget: the most heap bytes this state may hold at once ([`State::bytes`]
    /// plus whatever a pass allocates). Every state-sized allocation asks it first; an
    /// operation that would exceed it fails with [`SimError::StateTooLarge`] (bytes asked
    /// and available) and changes nothing. The default is
    /// [`default_memory_budget`](crate::default_memory_budget).
    ///
    /// ```
    /// use qchess_sim::{Controls, SimError, State};
    /// let mut s = State::<f64>::classical(1).with_memory_budget(100);
    /// assert_eq!(s.memory_budget(), 100);
    /// assert!(matches!(s.sqrt_iswap(0, 1, Controls::NONE), Err(SimError::StateTooLarge { .. })));
    /// assert_eq!(s.len(), 1);
    /// ```
    pub fn memory_budget(&self) -> usize {
        self.budget
    }

    /// Sets [`State::memory_budget`].
    pub fn set_memory_budget(&mut self, bytes: usize) {
        self.budget = bytes;
    }

    /// Sets the memory budget and returns the state (builder form of
    /// [`State::set_memory_budget`]).
    pub fn with_memory_budget(mut self, bytes: usize) -> Self {
        self.budget = bytes;
        self
    }

    /// Asks the budget for `extra` more heap bytes on top of what the state holds.
    pub(crate) fn ask(&self, extra: usize) -> Result<(), SimError> {
        let available = self.budget.saturating_sub(self.bytes());
        if extra > available {
            return Err(SimError::StateTooLarge {
                asked: extra,
                available,
            });
        }
        Ok(())
    }

    /// Asks the memory budget for pass buffers of these lengths as the pool reserves them
    /// ([`crate::memory::buffer_bytes`]), less the buffers the pool already holds.
    pub(crate) fn ask_buffers(
        &self,
        lens: impl IntoIterator<Item = usize>,
    ) -> Result<(), SimError> {
        let bytes: usize = lens.into_iter().map(crate::memory::buffer_bytes::<T>).sum();
        self.ask(bytes.saturating_sub(self.pool.heap_bytes()))
    }

    /// A copy of the state (without its reusable buffers), made only if `also_held` more
    /// bytes held elsewhere against the same budget leave room for it, and allocated
    /// fallibly. The copy has the same cap and budget.
    ///
    /// ```
    /// use qchess_sim::{SimError, State};
    /// let s = State::<f64>::classical(1).with_memory_budget(1000);
    /// assert_eq!(s.try_clone(0)?.len(), 1);
    /// assert!(matches!(s.try_clone(990), Err(SimError::StateTooLarge { .. })));
    /// # Ok::<(), SimError>(())
    /// ```
    pub fn try_clone(&self, also_held: usize) -> Result<Self, SimError> {
        // Each sector's bytes, or the rounded capacity `pages::try_copy` gives its copy
        // where that is more (an exactly reserved sector).
        let asked = (self.sectors.iter())
            .map(|s| {
                s.bytes()
                    .max(crate::memory::buffer_bytes::<T>(s.keys.len()))
            })
            .sum::<usize>()
            + self.sectors.len() * std::mem::size_of::<Sector<T>>();
        let available = self
            .budget
            .saturating_sub(self.bytes())
            .saturating_sub(also_held);
        if asked > available {
            return Err(SimError::StateTooLarge { asked, available });
        }
        let mut sectors = Vec::new();
        sectors
            .try_reserve_exact(self.sectors.len())
            .map_err(|_| SimError::OutOfMemory { states: self.len() })?;
        for s in &self.sectors {
            let oom = |_| SimError::OutOfMemory {
                states: s.keys.len(),
            };
            let keys = crate::pages::try_copy(&s.keys).map_err(oom)?;
            let amps = crate::pages::try_copy(&s.amps).map_err(oom)?;
            sectors.push(Sector {
                ancillas: s.ancillas,
                keys: keys.into(),
                amps: amps.into(),
            });
        }
        Ok(self.with_sectors(sectors, self.budget))
    }

    /// A state of `sectors` with this state's bit map, ancilla count and cap, no buffers,
    /// and the given memory budget (copies and undo records).
    pub(crate) fn with_sectors(&self, sectors: Vec<Sector<T>>, budget: usize) -> Self {
        Self {
            sectors,
            perm: self.perm.clone(),
            ancilla_count: self.ancilla_count,
            cap: self.cap,
            pool: Pool::default(),
            peak: 0,
            budget,
        }
    }

    /// The configured cap on basis states.
    ///
    /// ```
    /// assert!(qchess_sim::State::<f32>::classical(1).cap() > 1000);
    /// ```
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Number of stored basis states (non-zero amplitudes).
    ///
    /// ```
    /// assert_eq!(qchess_sim::State::<f64>::classical(7).len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.sectors.iter().map(|s| s.keys.len()).sum()
    }

    /// Whether no basis state is stored (never true for a state built by this crate).
    ///
    /// ```
    /// assert!(!qchess_sim::State::<f64>::classical(7).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of capture ancillas created so far (the next capture gets this index).
    ///
    /// ```
    /// let mut s = qchess_sim::State::<f64>::classical(1);
    /// assert_eq!(s.capture(0)?, 0);
    /// assert_eq!(s.ancilla_count(), 1);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn ancilla_count(&self) -> u32 {
        self.ancilla_count
    }

    /// Heap bytes held: the sectors' arrays plus the reusable pass buffers.
    ///
    /// ```
    /// let s = qchess_sim::State::<f64>::classical(1);
    /// assert!(s.bytes() >= 24);
    /// ```
    pub fn bytes(&self) -> usize {
        self.state_bytes()
            + self.sectors.capacity() * std::mem::size_of::<Sector<T>>()
            + self.pool.heap_bytes()
    }

    /// Heap bytes of the stored state alone (keys and amplitudes, without reusable buffers).
    ///
    /// ```
    /// let s = qchess_sim::State::<f32>::classical(1);
    /// assert_eq!(s.state_bytes(), 16);
    /// ```
    pub fn state_bytes(&self) -> usize {
        self.sectors.iter().map(Sector::bytes).sum()
    }

    /// The most heap bytes this state held at any moment of a pass (input, output and
    /// reusable buffers together) since it was built or [`State::reset_peak_bytes`] was
    /// called; at least [`State::bytes`].
    ///
    /// ```
    /// let mut s = qchess_sim::State::<f64>::classical(1);
    /// s.sqrt_iswap(0, 1, qchess_sim::Controls::NONE)?;
    /// assert!(s.peak_bytes() >= s.bytes());
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn peak_bytes(&self) -> usize {
        self.peak.max(self.bytes())
    }

    /// Restarts [`State::peak_bytes`] from the current [`State::bytes`].
    ///
    /// ```
    /// let mut s = qchess_sim::State::<f64>::classical(1);
    /// s.reset_peak_bytes();
    /// assert_eq!(s.peak_bytes(), s.bytes());
    /// ```
    pub fn reset_peak_bytes(&mut self) {
        self.peak = self.bytes();
    }

    /// Frees the reusable pass buffers (the next gate allocates afresh).
    ///
    /// ```
    /// // A controlled iSwap on a small state runs out of place and keeps its input buffer.
    /// let mut s = qchess_sim::State::<f64>::classical(1);
    /// s.iswap(0, 1, qchess_sim::Controls::empty_path(1 << 2))?;
    /// let before = s.bytes();
    /// s.release_buffers();
    /// assert!(s.bytes() < before);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn release_buffers(&mut self) {
        self.pool.clear();
    }

    /// Runs a pair gate over every sector. Dense gates (sqrt-iSwap and its inverse, with
    /// fused phases) run in place; a permutation (zero diagonal) writes into a buffer from
    /// the pool, reserved before anything changes. `plain` promises that `pre` and `post` are
    /// identities (untouched entries are then copied in bulk).
    pub(crate) fn apply_pair<Pre, Post>(
        &mut self,
        gate: PairGate<T>,
        plain: bool,
        pre: Pre,
        post: Post,
    ) -> Result<(), SimError>
    where
        Pre: Fn(u64, Complex<T>) -> Complex<T> + Sync,
        Post: Fn(u64, Complex<T>) -> Complex<T> + Sync,
    {
        if gate.is_dense() {
            return self.apply_dense_in_place(gate, pre, post);
        }
        let n = self.len();
        // A permutation (zero diagonal) keeps every sector's size.
        let needs: Vec<usize> = self.sectors.iter().map(|s| s.keys.len()).collect();
        // Output buffers beyond the free ones already held are new memory.
        self.ask_buffers(needs.iter().copied())?;
        let mut outs: Vec<Buffer<T>> = Vec::with_capacity(needs.len());
        for &need in &needs {
            match self.pool.take(need) {
                Ok(b) => outs.push(b),
                Err(e) => {
                    for b in outs {
                        self.pool.give(b);
                    }
                    return Err(e);
                }
            }
        }
        // The remaining free buffers are not needed during the pass: release them, so the
        // peak is input + output.
        self.pool.clear();
        let threads = crate::load::threads();
        if self.sectors.len() == 1 && threads > 1 && n >= PARALLEL_MIN {
            let s = &self.sectors[0];
            apply_pair_parallel(s, &gate, plain, &pre, &post, &mut outs[0], threads * 4)?;
        } else if self.sectors.len() == 1 {
            let s = &self.sectors[0];
            let out = &mut outs[0];
            out.clear();
            let mut sink = VecSink {
                keys: &mut out.keys,
                amps: &mut out.amps,
            };
            pair::apply(&s.keys, &s.amps, &gate, plain, &pre, &post, &mut sink);
        } else {
            self.sectors
                .par_iter()
                .zip(outs.par_iter_mut())
                .for_each(|(s, out)| {
                    out.clear();
                    let mut sink = VecSink {
                        keys: &mut out.keys,
                        amps: &mut out.amps,
                    };
                    pair::apply(&s.keys, &s.amps, &gate, plain, &pre, &post, &mut sink);
                });
        }
        let held = self.bytes() + outs.iter().map(Buffer::heap_bytes).sum::<usize>();
        self.peak = self.peak.max(held);
        for (s, out) in self.sectors.iter_mut().zip(outs) {
            let old = Buffer {
                keys: std::mem::replace(&mut s.keys, out.keys.into()).into_whole(),
                amps: std::mem::replace(&mut s.amps, out.amps.into()).into_whole(),
            };
            self.pool.give(old);
        }
        self.finish_pass();
        Ok(())
    }

    /// A dense pair gate in place (`kernels::expand`): pass 1 flags the unpartnered pair
    /// entries (read-only, so the cap, the budget and the growth reservation are all settled
    /// before anything changes), then each sector grows by exactly its new entries and pass 2
    /// rewrites it backwards. A large single sector is cut into pieces at group boundaries,
    /// each flagged by its own pass 1 and expanded by its own pass 2 (parallel tasks,
    /// `expand::expand_pieces`). Peak: the grown state plus two bits per entry, and in a large
    /// state with wide groups a spill of their upper halves' lowest entries, taken only
    /// while the whole stays within 1.5x the state's bytes before the gate.
    fn apply_dense_in_place<Pre, Post>(
        &mut self,
        gate: PairGate<T>,
        pre: Pre,
        post: Post,
    ) -> Result<(), SimError>
    where
        Pre: Fn(u64, Complex<T>) -> Complex<T> + Sync,
        Post: Fn(u64, Complex<T>) -> Complex<T> + Sync,
    {
        if self.try_spread(&gate, &pre, &post)? || self.try_shrink(&gate, &pre, &post) {
            return Ok(());
        }
        let n = self.len();
        let mut gate = gate;
        gate.cold = n.saturating_mul(crate::memory::entry_bytes::<T>()) >= dense::COLD_BYTES;
        let threads = crate::load::threads();
        let oom = |_| SimError::OutOfMemory { states: n };
        // Pass 1: one bitmap per sector (or per piece), sized for its output later (the
        // growth is unknown yet, so for its input first).
        let words = |len: usize| len.div_ceil(64) + 1;
        let mut flags: Vec<Vec<expand::Flags>> = Vec::new();
        let mut pieces: Vec<expand::Piece> = Vec::new();
        // Pass 1's counts for each sector's wide groups (a few words: each has 2^13 entries or more).
        let mut wides: Vec<Vec<expand::Wide>> = Vec::new();
        let grow: Vec<usize> = if self.sectors.len() == 1 && threads > 1 && n >= PARALLEL_MIN {
            let s = &self.sectors[0];
            let ranges = pair::growing_pieces(&s.keys, gate.hi, threads);
            self.ask(ranges.iter().map(|&(a, b)| words(b - a) * 16).sum())?;
            pieces = ranges
                .par_iter()
                .with_max_len(1)
                .map(|&(start, end)| {
                    let mut f = Vec::new();
                    f.try_reserve_exact(words(end - start)).map_err(oom)?;
                    f.resize(words(end - start), [0u64; 2]);
                    let mut wide = Vec::new();
                    let grow = expand::mark_unpartnered(
                        &s.keys[start..end],
                        gate.lo,
                        gate.hi,
                        gate.cond,
                        &mut f,
                        &mut wide,
                        T::CHEAP_ARITHMETIC,
                    );
                    Ok(expand::Piece {
                        start,
                        end,
                        grow,
                        flags: f,
                        wide,
                    })
                })
                .collect::<Result<_, SimError>>()?;
            vec![pieces.iter().map(|p| p.grow).sum()]
        } else {
            let flag_bytes: usize = self.sectors.iter().map(|s| words(s.keys.len()) * 16).sum();
            self.ask(flag_bytes)?;
            flags.try_reserve_exact(self.sectors.len()).map_err(oom)?;
            for s in &self.sectors {
                let mut f = Vec::new();
                f.try_reserve_exact(words(s.keys.len())).map_err(oom)?;
                f.resize(words(s.keys.len()), [0u64; 2]);
                flags.push(f);
            }
            wides.resize_with(self.sectors.len(), Vec::new);
            self.sectors
                .par_iter()
                .zip(flags.par_iter_mut())
                .zip(wides.par_iter_mut())
                .map(|((s, f), wide)| {
                    let cheap = T::CHEAP_ARITHMETIC;
                    expand::mark_unpartnered(&s.keys, gate.lo, gate.hi, gate.cond, f, wide, cheap)
                })
                .collect()
        };
        let g: usize = grow.iter().sum();
        let more_words: usize = self
            .sectors
            .iter()
            .zip(&grow)
            .map(|(s, &e)| (words(s.keys.len() + e) - words(s.keys.len())) * 16)
            .chain(pieces.iter().map(|p| {
                let len = p.end - p.start;
                (words(len + p.grow) - words(len)) * 16
            }))
            .sum();
        // Sectors whose gate runs forwards into the room a dense gate before it left below
        // them (`dense::expand_dense_forward`): it needs no room above.
        let forward: Vec<bool> = (self.sectors.iter().zip(&grow))
            .map(|(s, &e)| {
                pieces.is_empty()
                    && e > 0
                    && e <= s.keys.head()
                    && !forward_off()
                    && dense::all_dense(&s.keys, gate.lo, gate.hi, T::CHEAP_ARITHMETIC)
            })
            .collect();
        // The spill that spares the wide groups' pass 2 a move of their upper halves
        // (`dense::expand_wide`): one part for each piece or sector run as its own task.
        // Taken (from the pool, before the growth releases it) only in a state too large for
        // the caches to make the move cheap (`dense::SPILL_BYTES`), where the grown state,
        // its bitmaps and the spill stay within 1.5x the state before the gate (the peak a
        // dense gate keeps to), and the budget has room for it beside the growth.
        let spill_len: usize = if pieces.is_empty() {
            wides.iter().map(|w| expand::spill_need(w)).sum()
        } else {
            pieces.iter().map(|p| expand::spill_need(&p.wide)).sum()
        };
        let before = self.state_bytes();
        let flag_bytes = more_words
            + flags.iter().map(|f| f.capacity() * 16).sum::<usize>()
            + pieces
                .iter()
                .map(|p| p.flags.capacity() * 16)
                .sum::<usize>();
        let grown = before + self.growth_bytes(&grow, &forward) + flag_bytes;
        let spare = (before + before / 2).saturating_sub(grown);
        let mut spill = None;
        let large = spill_from_bytes()
            .is_some_and(|b| n.saturating_mul(crate::memory::entry_bytes::<T>()) >= b);
        if spill_len > 0
            && large
            && crate::memory::buffer_bytes::<T>(spill_len) <= spare
            && self.ask_buffers([spill_len]).is_ok()
            && let Ok(mut b) = self.pool.take(spill_len)
        {
            if b.heap_bytes() <= spare && b.ensure_initialized(spill_len).is_ok() {
                spill = Some(b);
            } else {
                self.pool.give(b);
            }
        }
        let spill_bytes = spill.as_ref().map_or(0, Buffer::heap_bytes);
        match self.reserve_growth_except(&grow, &forward, more_words + spill_bytes) {
            Err(SimError::StateTooLarge { .. }) if spill.is_some() => {
                // Without the spill it may fit.
                spill = None;
                self.reserve_growth_except(&grow, &forward, more_words)?;
            }
            r => r?,
        }
        let spill_bytes = spill.as_ref().map_or(0, Buffer::heap_bytes);
        for ((s, f), &e) in self.sectors.iter().zip(flags.iter_mut()).zip(&grow) {
            let need = words(s.keys.len() + e);
            f.try_reserve_exact(need.saturating_sub(f.len()))
                .map_err(oom)?;
        }
        for p in &mut pieces {
            let need = words(p.end - p.start + p.grow);
            p.flags
                .try_reserve_exact(need.saturating_sub(p.flags.len()))
                .map_err(oom)?;
        }
        // Nothing can fail from here on.
        let held = self.bytes()
            + spill_bytes
            + flags.iter().map(|f| f.capacity() * 16).sum::<usize>()
            + pieces
                .iter()
                .map(|p| p.flags.capacity() * 16)
                .sum::<usize>();
        self.peak = self.peak.max(held);
        if !pieces.is_empty() {
            let s = &mut self.sectors[0];
            for p in &mut pieces {
                p.flags.resize(words(p.end - p.start + p.grow), [0; 2]);
            }
            let spill = spill
                .as_mut()
                .map_or((&mut [][..], &mut [][..]), |b| b.parts());
            s.pass_in_place(n + g, |keys, amps, head| {
                expand::expand_pieces(keys, amps, head, &mut pieces, &gate, spill, &pre, &post)
            });
        } else {
            // Each sector's part of the spill (none for a sector that runs forwards).
            let mut parts = Vec::with_capacity(self.sectors.len());
            let (mut sk, mut sa) = spill
                .as_mut()
                .map_or((&mut [][..], &mut [][..]), |b| b.parts());
            for w in &wides {
                let part = expand::spill_need(w).min(sk.len());
                let (k, rest_k) = std::mem::take(&mut sk).split_at_mut(part);
                let (a, rest_a) = std::mem::take(&mut sa).split_at_mut(part);
                (sk, sa) = (rest_k, rest_a);
                parts.push((k, a));
            }
            self.sectors
                .par_iter_mut()
                .zip(flags.par_iter_mut())
                .zip(wides.par_iter().zip(parts.into_par_iter()))
                .zip(grow.par_iter())
                .zip(forward.par_iter())
                .for_each(|((((s, f), (wide, spill)), &e), &fwd)| {
                    let len = s.keys.len();
                    if e == 0 && len == 0 {
                        return;
                    }
                    if fwd {
                        #[cfg(test)]
                        expand::tests::FORWARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let mut scratch = dense::Scratch::new();
                        s.pass_in_place(len, |keys, amps, from| {
                            let out = dense::expand_dense_forward(
                                keys,
                                amps,
                                from,
                                &gate,
                                &mut scratch,
                                &pre,
                                &post,
                            );
                            (0, out)
                        });
                        return;
                    }
                    f.resize(words(len + e), [0; 2]);
                    // The room the cancelled entries leave below the output stays there
                    // (`Lane`): no move of the whole state. A dense gate that creates no
                    // more than that room later runs forwards into it (above). Segments
                    // are joined in place while the room below stays small, else moved
                    // down to 0 with the room below given back.
                    s.pass_in_place(len + e, |keys, amps, head| {
                        let wide = (&wide[..], spill);
                        expand::expand_raised(keys, amps, head, len, &gate, f, wide, &pre, &post)
                    });
                });
        }
        if let Some(b) = spill {
            self.pool.give(b);
        }
        self.finish_pass();
        Ok(())
    }

    /// Makes room for a pass that grows sector `i` by `grow[i]` entries while holding `extra`
    /// more bytes beside the state (bitmaps): refuses a total above the cap
    /// ([`SimError::CapExceeded`]) or growth and `extra` above the memory budget
    /// ([`SimError::StateTooLarge`]); otherwise releases the free pass buffers (the pass does
    /// not use them, so the peak is the grown state) and reserves the growth on every
    /// sector's two arrays, fallibly. Nothing else changes.
    fn reserve_growth(&mut self, grow: &[usize], extra: usize) -> Result<(), SimError> {
        self.reserve_growth_except(grow, &[], extra)
    }

    /// [`State::reserve_growth`] where the sectors flagged in `below` grow into the room
    /// below their entries (`Lane::head`, at least their growth) and reserve nothing; the
    /// cap counts their growth all the same.
    fn reserve_growth_except(
        &mut self,
        grow: &[usize],
        below: &[bool],
        extra: usize,
    ) -> Result<(), SimError> {
        let (n, g) = (self.len(), grow.iter().sum::<usize>());
        if n + g > self.cap {
            return Err(SimError::CapExceeded {
                needed: n + g,
                cap: self.cap,
            });
        }
        self.pool.clear();
        let growth = self.growth_bytes(grow, below);
        self.ask(growth + extra)?;
        for (i, s) in self.sectors.iter_mut().enumerate() {
            let e = growth_above(grow, below, i);
            let states = s.keys.len() + e;
            let oom = |_| SimError::OutOfMemory { states };
            s.reserve(e).map_err(oom)?;
        }
        Ok(())
    }

    /// The bytes [`State::reserve_growth_except`] reserves for these growths: each sector's
    /// arrays grown by its growth (none for those flagged in `below`), the rounding to whole
    /// pages included.
    fn growth_bytes(&self, grow: &[usize], below: &[bool]) -> usize {
        (self.sectors.iter().enumerate())
            .map(|(i, s)| {
                let e = growth_above(grow, below, i);
                s.keys.growth_for(e) * 8
                    + s.amps.growth_for(e) * std::mem::size_of::<Complex<T>>()
                    + s.rounding_bytes(e)
            })
            .sum()
    }

    /// The dense gate by `kernels::spread` when its higher bit is clear in every key (a split
    /// to an empty square above the piece): no pass 1, no bitmap, no merge; each piece of
    /// whole groups is moved up by the growth below it and spreads in its own region, in
    /// parallel; a sector in one piece spreads into its arrays' spare room, with no zeros
    /// written there first (`grow`). Bit for bit what the general path computes. `Ok(false)`, with nothing done
    /// and nothing asked, when some key has the bit set or the amplitudes' arithmetic is not
    /// cheap (`Exact`: the general path's scratch rules apply).
    fn try_spread<Pre, Post>(
        &mut self,
        gate: &PairGate<T>,
        pre: &Pre,
        post: &Post,
    ) -> Result<bool, SimError>
    where
        Pre: Fn(u64, Complex<T>) -> Complex<T> + Sync,
        Post: Fn(u64, Complex<T>) -> Complex<T> + Sync,
    {
        #[cfg(test)]
        if spread::tests::OFF.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(false);
        }
        if !T::CHEAP_ARITHMETIC {
            return Ok(false);
        }
        let pieces = self.group_pieces(gate.hi);
        let Some(grows) = pieces
            .par_iter()
            .map(|&(si, a, b)| spread::grow(&self.sectors[si].keys[a..b], gate))
            .collect::<Option<Vec<usize>>>()
        else {
            return Ok(false);
        };
        let mut sector_grow = vec![0usize; self.sectors.len()];
        for (&(si, _, _), &e) in pieces.iter().zip(&grows) {
            sector_grow[si] += e;
        }
        self.reserve_growth(&sector_grow, 0)?;
        // Nothing can fail from here on.
        self.peak = self.peak.max(self.bytes());
        let zero = Complex::new(T::zero(), T::zero());
        // A sector in one piece spreads into room taken from its arrays' spare capacity
        // (`grow::split_spare`: no zeros written first) and takes the room into its length
        // once the pass wrote every slot of it. A sector in several pieces grows by zeros:
        // each piece's input moves up by the growth of the pieces below it in its sector
        // (last piece first, a memmove), so that the pieces' output regions are disjoint and
        // each holds its input at its bottom; then every piece spreads in its region. All in
        // parallel.
        type Region<'r, A> = (Down<'r, u64, Complex<A>>, usize, Option<usize>);
        let mut regions: Vec<Region<'_, T>> = Vec::with_capacity(pieces.len());
        let mut next = 0;
        for (si, s) in self.sectors.iter_mut().enumerate() {
            let len = s.keys.len();
            // (input start, input length, growth) of this sector's pieces, in key order.
            let mine: Vec<(usize, usize, usize)> = pieces[next..]
                .iter()
                .zip(&grows[next..])
                .take_while(|(p, _)| p.0 == si)
                .map(|(&(_, a, b), &e)| (a, b - a, e))
                .collect();
            next += mine.len();
            let g = sector_grow[si];
            // (`reserve_growth` reserved the room.)
            let room = |c: usize| c - len >= g;
            if let ([(0, plen, _)], true, true) =
                (&mine[..], room(s.keys.capacity()), room(s.amps.capacity()))
            {
                let (Some((kb, kr)), Some((vb, vr))) = (
                    grow::split_spare(s.keys.vec_mut(), g),
                    grow::split_spare(s.amps.vec_mut(), g),
                ) else {
                    unreachable!("the room was checked")
                };
                regions.push((Down::new((kb, vb), (kr, vr)), *plen, Some(si)));
                continue;
            }
            s.keys.resize(len + g, 0);
            s.amps.resize(len + g, zero);
            let mut below: usize = mine.iter().map(|m| m.2).sum();
            for &(a, plen, e) in mine.iter().rev() {
                below -= e;
                if below > 0 {
                    s.keys.copy_within(a..a + plen, a + below);
                    s.amps.copy_within(a..a + plen, a + below);
                }
            }
            let (mut ks, mut vs) = (&mut s.keys[..], &mut s.amps[..]);
            for &(_, plen, e) in &mine {
                let (k, kr) = std::mem::take(&mut ks).split_at_mut(plen + e);
                let (v, vr) = std::mem::take(&mut vs).split_at_mut(plen + e);
                regions.push((Down::within(k, v), plen, None));
                (ks, vs) = (kr, vr);
            }
        }
        // The proofs that the sectors' rooms were written, by sector.
        let filled: Vec<(usize, grow::Filled, grow::Filled)> = regions
            .into_par_iter()
            .with_max_len(1)
            .filter_map(|(mut out, plen, sector)| {
                spread::spread(&mut out, plen, gate, pre, post);
                let proofs = out.finish();
                let si = sector?;
                match proofs {
                    Some((fk, fv)) => Some((si, fk, fv)),
                    None => unreachable!("kernels::spread writes every slot of its region"),
                }
            })
            .collect();
        for (si, fk, fv) in filled {
            grow::commit(self.sectors[si].keys.vec_mut(), fk);
            grow::commit(self.sectors[si].amps.vec_mut(), fv);
        }
        self.finish_pass();
        Ok(true)
    }

    /// The dense gate without pass 1 when it creates nothing (`expand::creates_nothing`:
    /// every pair entry partnered, the merge that undoes a split, and no group for the
    /// scratch kernels): pass 1 would flag nothing, so pass 2 runs forwards at once with
    /// empty bitmaps, each piece of [`State::group_pieces`] in place, in parallel.
    /// Nothing is allocated beside the state, so nothing is asked and nothing can fail. Bit
    /// for bit what the general path computes. `false`, with nothing done, when some piece
    /// would create an entry (the check stops at its first such group).
    fn try_shrink<Pre, Post>(&mut self, gate: &PairGate<T>, pre: &Pre, post: &Post) -> bool
    where
        Pre: Fn(u64, Complex<T>) -> Complex<T> + Sync,
        Post: Fn(u64, Complex<T>) -> Complex<T> + Sync,
    {
        #[cfg(test)]
        if expand::tests::SHRINK_OFF.load(std::sync::atomic::Ordering::Relaxed) {
            return false;
        }
        let (lo, hi, cond, cheap) = (gate.lo, gate.hi, gate.cond, T::CHEAP_ARITHMETIC);
        let pieces = self.group_pieces(hi);
        let nothing = pieces.par_iter().all(|&(si, a, b)| {
            expand::creates_nothing(&self.sectors[si].keys[a..b], lo, hi, cond, cheap)
        });
        if !nothing {
            return false;
        }
        self.peak = self.peak.max(self.bytes());
        // Each sector's pieces as parallel pass-2 pieces that grow nothing (one piece is the
        // whole sector).
        let mut by_sector: Vec<Vec<expand::Piece>> = Vec::new();
        by_sector.resize_with(self.sectors.len(), Vec::new);
        for (si, start, end) in pieces {
            by_sector[si].push(expand::Piece {
                start,
                end,
                grow: 0,
                flags: Vec::new(),
                wide: Vec::new(),
            });
        }
        self.sectors
            .par_iter_mut()
            .zip(by_sector.par_iter_mut())
            .for_each(|(s, pieces)| {
                let len = s.keys.len();
                let no_spill = (&mut [][..], &mut [][..]);
                s.pass_in_place(len, |keys, amps, head| {
                    expand::expand_pieces(keys, amps, head, pieces, gate, no_spill, pre, post)
                });
            });
        #[cfg(test)]
        expand::tests::SHRUNK.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.finish_pass();
        true
    }

    /// The pieces `(sector, start, end)` of whole groups for bit `hi` that a pass without
    /// pass 1 runs as parallel tasks: a large sector cut as the general path cuts it
    /// (`pair::growing_pieces`) when there are threads to share, any other sector whole.
    fn group_pieces(&self, hi: u32) -> Vec<(usize, usize, usize)> {
        let threads = crate::load::threads();
        let mut pieces = Vec::new();
        for (si, s) in self.sectors.iter().enumerate() {
            let len = s.keys.len();
            if len >= PARALLEL_MIN && threads > 1 {
                let ranges = pair::growing_pieces(&s.keys, hi, threads);
                pieces.extend(ranges.into_iter().map(|(a, b)| (si, a, b)));
            } else {
                pieces.push((si, 0, len));
            }
        }
        pieces
    }

    /// A controlled pair permutation (`|01> -> off |10>`, `|10> -> off |01>` where `cond`
    /// holds, physical bits `lo < hi`), in place: see `kernels::permute`. The only
    /// allocation is a scratch for the moved entries (from the pool), reserved before
    /// anything changes. Each sector runs as tasks of whole groups for bit `hi`, at most
    /// [`PERMUTE_CHUNK`] entries each where the groups allow (a longer group is one task), so
    /// that a short task's two passes run in cache; consecutive tasks form about four jobs a
    /// thread, each with one scratch slot the size of its largest task's movers. A short
    /// task whose condition reads no bit below `lo` (a slide whose path lies above its lower
    /// square, physically) and in which at least `permute::BLOCK_BITS` key bits below `lo`
    /// vary is permuted by blocks instead (`permute::permute_groups`: each group with a
    /// mover copied to the slot, then written back class block by class block), its slot
    /// the task's length. Each entry is computed the same way whichever task, job or
    /// kernel runs it. With `flows`, returns the masses moved up and down
    /// (`permute::Flows`), summed task by task in task order: the same for any thread
    /// count (zero without).
    pub(crate) fn apply_permutation(
        &mut self,
        lo: u32,
        hi: u32,
        cond: Cond,
        off: Complex<T>,
        flows: bool,
    ) -> Result<permute::Flows, SimError> {
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        let threads = crate::load::threads().max(1);
        // Tasks: (sector, start, end).
        let mut tasks: Vec<(usize, usize, usize)> = Vec::new();
        for (si, s) in self.sectors.iter().enumerate() {
            for (a, b) in pair::group_chunks(&s.keys, hi, PERMUTE_CHUNK) {
                tasks.push((si, a, b));
            }
        }
        // A task of whole groups no longer than `PERMUTE_CHUNK` goes by blocks where the
        // condition allows (`permute::blocks_apply`) and enough key bits below `lo` vary in
        // it (`permute::plan`), with a scratch for its largest group; that kernel finds each
        // group's movers itself (the task's count here is `None`). Other tasks are counted.
        let blocks = permute::blocks_apply(lo, cond);
        let counts: Vec<Option<(usize, usize)>> = tasks
            .par_iter()
            .map(|&(si, a, b)| {
                let short = blocks && b - a <= PERMUTE_CHUNK;
                permute::plan(&self.sectors[si].keys[a..b], lo, hi, cond, short)
            })
            .collect();
        if counts.iter().all(|&c| c == Some((0, 0))) {
            return Ok([0.0; 2]);
        }
        // Jobs: (first task, end task, scratch slot entries), about `threads * 4` by entries.
        let per_job = self.len().div_ceil(threads * 4).max(1);
        let mut jobs: Vec<(usize, usize, usize)> = Vec::new();
        let (mut first, mut entries, mut slot) = (0, 0, 0);
        for (t, (&(_, a, b), &count)) in tasks.iter().zip(&counts).enumerate() {
            entries += b - a;
            let need = match count {
                None => b - a,
                Some((u, d)) if u + d > 0 => permute::scratch_len(u, d),
                Some(_) => 0,
            };
            slot = slot.max(need);
            if entries >= per_job || t + 1 == tasks.len() {
                jobs.push((first, t + 1, slot));
                (first, entries, slot) = (t + 1, 0, 0);
            }
        }
        let total: usize = jobs.iter().map(|j| j.2).sum();
        self.ask_buffers([total])?;
        // A scratch below an eighth of the state that no free buffer had room for (made
        // fresh or grown) is dropped after the pass instead of kept as a free buffer. Kept,
        // it stayed held between moves beside the buffer kept for the next undo record, past
        // 1.5x the state (docs/benchmarks.md, "The other one-square measuring moves drop
        // their records"); making it again costs its page faults (a game-shaped slide's
        // scratch of one chunk a job: at most 96 pages of 4 KiB a job).
        let keep_scratch = self.pool.fits(total) || total >= self.len() / 8;
        let mut scratch = self.pool.take(total)?;
        scratch.ensure_initialized(total)?;
        let held = self.bytes() + scratch.heap_bytes();
        self.peak = self.peak.max(held);
        // Disjoint mutable pieces: each task's run (tasks are in sector, then key order).
        let mut runs: Vec<(&mut [u64], &mut [Complex<T>])> = Vec::with_capacity(tasks.len());
        let mut t = 0;
        for (si, s) in self.sectors.iter_mut().enumerate() {
            let (mut ks, mut as_) = (&mut s.keys[..], &mut s.amps[..]);
            let mut at = 0;
            while t < tasks.len() && tasks[t].0 == si {
                let (_, a, b) = tasks[t];
                let (k, kr) = std::mem::take(&mut ks).split_at_mut(b - at);
                let (v, vr) = std::mem::take(&mut as_).split_at_mut(b - at);
                runs.push((&mut k[a - at..], &mut v[a - at..]));
                (ks, as_, at) = (kr, vr, b);
                t += 1;
            }
        }
        // Each job: its tasks' runs and counts, and its scratch slot.
        type Run<'r, A> = (&'r mut [u64], &'r mut [Complex<A>]);
        type Job<'r, A> = (Vec<Run<'r, A>>, &'r [Option<(usize, usize)>], Run<'r, A>);
        let mut work: Vec<Job<'_, T>> = Vec::with_capacity(jobs.len());
        let mut runs = runs.into_iter();
        let (mut sk, mut sa) = (&mut scratch.keys[..total], &mut scratch.amps[..total]);
        for &(first, end, slot) in &jobs {
            let (k, kr) = std::mem::take(&mut sk).split_at_mut(slot);
            let (v, vr) = std::mem::take(&mut sa).split_at_mut(slot);
            (sk, sa) = (kr, vr);
            let job_runs: Vec<Run<'_, T>> = runs.by_ref().take(end - first).collect();
            work.push((job_runs, &counts[first..end], (k, v)));
        }
        let per_job: Vec<Vec<permute::Flows>> = work
            .into_par_iter()
            .map(|(job_runs, job_counts, (sk, sa))| {
                let mut sums = Vec::with_capacity(job_runs.len());
                for ((k, v), &count) in job_runs.into_iter().zip(job_counts) {
                    let Some((u, d)) = count else {
                        let len = k.len();
                        sums.push(permute::permute_groups(
                            k,
                            v,
                            lo,
                            hi,
                            cond,
                            off,
                            &mut sk[..len],
                            &mut sa[..len],
                            flows,
                        ));
                        continue;
                    };
                    if u + d == 0 {
                        continue;
                    }
                    let len = permute::scratch_len(u, d);
                    sums.push(permute::permute_in_place(
                        k,
                        v,
                        lo,
                        hi,
                        cond,
                        off,
                        (u, d),
                        &mut sk[..len],
                        &mut sa[..len],
                        flows,
                    ));
                }
                sums
            })
            .collect();
        if keep_scratch {
            self.pool.give(scratch);
        }
        self.finish_pass();
        // Task by task in task order (a task without movers adds nothing).
        let mut total = [0.0f64; 2];
        for f in per_job.iter().flatten() {
            total[0] += f[0];
            total[1] += f[1];
        }
        Ok(total)
    }

    /// After a projection (measurement, forced outcome, the kept part of a capture): every
    /// sector's arrays shrink to exactly its survivors and the free pass buffers (sized for
    /// the larger state before) are dropped, so [`State::bytes`] and [`State::state_bytes`]
    /// fall to what is stored (24 B/state f64, 16 f32) and the memory budget, which counts
    /// [`State::bytes`], is credited at once. Shrinking reallocates in place (or remaps), so
    /// nothing is held beyond the state before the projection.
    pub(crate) fn shrink_to_survivors(&mut self) {
        self.pool.clear();
        for s in &mut self.sectors {
            if s.keys.allocated() > s.keys.len() {
                s.keys.shrink_to_fit();
            }
            if s.amps.allocated() > s.amps.len() {
                s.amps.shrink_to_fit();
            }
        }
        if self.sectors.capacity() > self.sectors.len() {
            self.sectors.shrink_to_fit();
        }
    }

    /// Runs `f` on the sectors whose ancilla value `pick` selects, the others set aside and
    /// put back in ancilla order after it (whether `f` succeeds or not): a gate controlled
    /// on capture ancillas, which acts on whole sectors. The set-aside sectors' bytes stay
    /// counted: the memory budget `f` sees is less by them, and the peak it reaches is
    /// raised by them.
    pub(crate) fn on_sectors<R>(
        &mut self,
        pick: impl Fn(u128) -> bool,
        f: impl FnOnce(&mut Self) -> Result<R, SimError>,
    ) -> Result<R, SimError> {
        let (mut picked, mut aside) = (Vec::new(), Vec::new());
        let n = self.sectors.len();
        let oom = |_| SimError::OutOfMemory { states: n };
        picked.try_reserve_exact(n).map_err(oom)?;
        aside.try_reserve_exact(n).map_err(oom)?;
        for s in std::mem::take(&mut self.sectors) {
            if pick(s.ancillas) {
                picked.push(s);
            } else {
                aside.push(s);
            }
        }
        self.sectors = picked;
        let aside_bytes: usize = aside.iter().map(Sector::bytes).sum();
        let (budget, peak) = (self.budget, self.peak);
        self.budget = budget.saturating_sub(aside_bytes);
        self.peak = 0;
        let done = f(self);
        self.budget = budget;
        self.peak = peak.max(self.peak + aside_bytes);
        self.sectors.extend(aside);
        // Ancilla values are distinct: the unstable sort is deterministic.
        self.sectors.sort_unstable_by_key(|s| s.ancillas);
        done
    }

    /// Drops emptied sectors and bounds the free buffers to about the state's size.
    pub(crate) fn finish_pass(&mut self) {
        self.sectors.retain(|s| !s.keys.is_empty());
        let n = self.len();
        // Up to two states' worth of free buffers: a pass's output usually fits one of them,
        // so pages are reused pass after pass instead of faulted in again.
        self.pool.trim(2 * n + (1 << 16));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A growth past `pages::ALIGN_MIN_BYTES` asks the budget for the capacity it reserves,
    /// the rounding to whole 2 MiB pages included: one byte less is refused with nothing
    /// changed, and when it is granted the state's bytes grow by exactly what was asked.
    #[test]
    fn a_growth_asks_the_budget_for_its_rounding_too() {
        let n = 2_000_000;
        let base = crate::bench::random_state::<f64>(n).expect("state");
        // 16 MB of keys and 32 MB of amplitudes: below the threshold, so exactly n each.
        assert_eq!(
            (
                base.sectors[0].keys.capacity(),
                base.sectors[0].amps.capacity()
            ),
            (n, n)
        );
        let e = 3_000_000;
        let exact = e * crate::memory::entry_bytes::<f64>();
        let rounding = base.sectors[0].rounding_bytes(e);
        // 5e6 keys (40 MB) round to 5 242 876 (20 pages of 2 MiB), 5e6 amplitudes (80 MB)
        // to 5 111 806 (39 pages), each less glibc's 32 bytes.
        assert_eq!(rounding, 242_876 * 8 + 111_806 * 16);
        let before = base.bytes();
        let mut short = base.try_clone(0).expect("copy");
        short.budget = before + exact + rounding - 1;
        match short.reserve_growth(&[e], 0) {
            Err(SimError::StateTooLarge { asked, available }) => {
                assert_eq!((asked, available), (exact + rounding, exact + rounding - 1));
            }
            other => panic!("expected state_too_large, got {other:?}"),
        }
        assert_eq!(short.bytes(), before);
        let mut enough = base.try_clone(0).expect("copy");
        enough.budget = before + exact + rounding;
        enough.reserve_growth(&[e], 0).expect("room");
        assert_eq!(enough.bytes(), before + exact + rounding);
    }

    /// A sector grown by half its size (reserved with the rounding to whole 2 MiB pages) and
    /// cut back to its old size keeps its room, so the next growth of that size faults in no
    /// page; one grown by more gives the room back. Sizes past `pages::ALIGN_MIN_BYTES`,
    /// where the rounding applies: 4.2e6 entries grown by 2.1e6 reserve 6 553 596 keys and
    /// 6 422 526 amplitudes (whole 2 MiB pages), more than the 6 300 064 of half again that
    /// the rule kept before it counted the rounding (this test failed then).
    #[test]
    fn a_sector_cut_back_after_growing_by_half_keeps_its_room() {
        let n = 4_200_000;
        let grown = |extra: usize| {
            let mut s = Sector::<f64> {
                ancillas: 0,
                keys: Vec::new().into(),
                amps: Vec::new().into(),
            };
            s.reserve(n).expect("room");
            s.keys.resize(n, 0);
            s.amps.resize(n, Complex::new(0.0, 0.0));
            s.reserve(extra).expect("room");
            (s.keys.capacity(), s.amps.capacity(), s)
        };
        let (kc, ac, mut half) = grown(n / 2);
        // The rounding took both arrays past half again: the old rule gave them back.
        assert!(kc > n + n / 2 + 64 && ac > n + n / 2 + 64, "{kc} {ac}");
        half.trim(n);
        assert_eq!((half.keys.capacity(), half.amps.capacity()), (kc, ac));
        assert_eq!(half.keys.len(), n);
        let (_, _, mut more) = grown(n / 2 + 300_000);
        more.trim(n);
        assert_eq!((more.keys.capacity(), more.amps.capacity()), (n, n));
    }

    /// The bench's random merge at 1e6 (wide groups for its higher bit, whose lower halves
    /// grow into their upper halves' places) reads the lowest entries of each upper half
    /// from a spill (`dense::expand_wide`) and gives bit for bit the state it gives with the
    /// spill off (each upper half moved up instead), on one thread and on two (in pieces),
    /// within 1.5x the state before it; the spill goes back to the pool. With the smallest
    /// budget the merge fits in without a spill, it runs without one, the same bits again.
    /// (The state is below `dense::SPILL_BYTES`: the test turns the spill on at any size.)
    #[test]
    fn a_wide_gate_spills_within_its_peak_and_its_budget() {
        use crate::Controls;
        use std::sync::atomic::Ordering;
        let n = 1_000_000;
        let base = crate::bench::random_state::<f64>(n).expect("state");
        let (lo, mid, hi) = crate::bench::qubits(n);
        let merged = |budget: usize| {
            let mut s = base.try_clone(0).expect("copy").with_memory_budget(budget);
            s.merge(lo, hi, mid, Controls::NONE).map(|()| s)
        };
        let same = |a: &State<f64>, b: &State<f64>| {
            let bits = |s: &State<f64>| -> Vec<(u64, u64, u64)> {
                (s.sectors.iter())
                    .flat_map(|x| x.keys.iter().zip(x.amps.iter()))
                    .map(|(&k, v)| (k, v.re.to_bits(), v.im.to_bits()))
                    .collect()
            };
            bits(a) == bits(b)
        };
        let ample = 4 * base.bytes();
        // 24 MB: below `dense::SPILL_BYTES`, where the state would move the halves.
        expand::tests::SPILL_ANY.store(true, Ordering::Relaxed);
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            pool.install(|| {
                expand::tests::SPILL_OFF.store(true, Ordering::Relaxed);
                let moved = merged(ample).expect("merge");
                expand::tests::SPILL_OFF.store(false, Ordering::Relaxed);
                let before = expand::tests::SPILLED.load(Ordering::Relaxed);
                let spilled = merged(ample).expect("merge");
                assert!(expand::tests::SPILLED.load(Ordering::Relaxed) > before);
                assert!(spilled.len() > n, "the merge created entries");
                assert!(same(&moved, &spilled), "{threads} threads");
                assert!(
                    spilled.peak_bytes() > moved.peak_bytes()
                        && 2 * spilled.peak_bytes() <= 3 * base.bytes(),
                    "peak {} (without the spill {}) for a state of {}",
                    spilled.peak_bytes(),
                    moved.peak_bytes(),
                    base.bytes()
                );
                assert!(spilled.pool.heap_bytes() > 0, "the spill is kept for reuse");
            });
        }
        // The smallest budget the merge fits in with the spill off (to 1 KB).
        expand::tests::SPILL_OFF.store(true, Ordering::Relaxed);
        let (mut short, mut enough) = (base.bytes(), ample);
        while enough - short > 1000 {
            let b = short + (enough - short) / 2;
            if merged(b).is_ok() {
                enough = b;
            } else {
                short = b;
            }
        }
        let moved = merged(enough).expect("merge");
        assert!(merged(short).is_err());
        expand::tests::SPILL_OFF.store(false, Ordering::Relaxed);
        let tight = merged(enough).expect("the merge runs without the spill");
        expand::tests::SPILL_ANY.store(false, Ordering::Relaxed);
        assert!(same(&moved, &tight));
    }

    /// A pass buffer is asked of the budget at the capacity the pool reserves for it, the
    /// rounding included (`memory::buffer_bytes`).
    #[test]
    fn a_pass_buffer_asks_the_budget_for_its_rounding_too() {
        let n = 5_000_000;
        let want = crate::memory::buffer_bytes::<f64>(n);
        assert_eq!(want, 5_242_876 * 8 + 5_111_806 * 16);
        assert_eq!(crate::memory::buffer_bytes::<f64>(1000), 24_000);
        let s = State::<f64>::classical(1);
        let before = s.bytes();
        let mut short = s.clone().with_memory_budget(before + want - 1);
        assert!(matches!(
            short.reserve_buffers(n),
            Err(SimError::StateTooLarge { asked, .. }) if asked == want
        ));
        assert_eq!(short.bytes(), before);
        let mut enough = s.with_memory_budget(before + want);
        enough.reserve_buffers(n).expect("room");
        assert_eq!(enough.bytes(), before + want);
    }
}
