//! Timing harness behind `qchess bench sim`: one operation on a random state of a given size,
//! the input built and the pass buffers warmed outside the timed region.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::key::{Controls, Normalization, Predicate};
use crate::state::State;
use num_complex::Complex;
use std::num::NonZeroUsize;
use std::time::Instant;

/// The operation to time.
///
/// ```
/// use qchess_sim::bench::{BenchOp, run_op};
/// let r = run_op::<f64>(BenchOp::Split, 1000)?;
/// assert_eq!(r.states, 1000);
/// assert!(r.seconds > 0.0);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchOp {
    /// Uncontrolled iSwap (a jump).
    Iswap,
    /// iSwap controlled on an empty path square (a slide).
    SlideIswap,
    /// Split: sqrt-iSwap then iSwap.
    Split,
    /// Merge: the inverse of a split.
    Merge,
    /// Measurement of one qubit: one probability scan, then the projection.
    Measure,
    /// The projection alone: onto the outcome [`BenchOp::Measure`] picks, with the outcome's
    /// mass read before the clock starts, as a game's measurement reads its probability from
    /// the marginals it keeps ([`State::project_onto`]). The second of a measurement's two
    /// passes; [`apply_op`] reads the mass first ([`projection_given`]).
    Project,
}

/// What one timed run measured.
///
/// ```
/// use qchess_sim::bench::{BenchOp, run_op};
/// let r = run_op::<f64>(BenchOp::Iswap, 2000)?;
/// let rate = r.states as f64 / r.seconds;
/// assert!(rate > 0.0 && r.peak_bytes >= 2000 * 24);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchResult {
    /// Basis states of the input state.
    pub states: usize,
    /// Median wall-clock seconds of the operation.
    pub seconds: f64,
    /// Median CPU seconds of the calling thread (Linux `schedstat`); with one rayon thread this
    /// is the single-core cost even on a busy machine.
    pub cpu_seconds: Option<f64>,
    /// Heap bytes of the state arrays per stored basis state, after the operation.
    pub bytes_per_state: f64,
    /// Most heap bytes the state held during the operation (input, output, free buffers).
    pub peak_bytes: usize,
}

/// Every timed run of a benchmark beside their medians: what [`run_op_repeated`] and
/// [`run_probability_repeated`] return, for a caller that asked for more runs than the
/// default (a noisy machine, where single runs swing by a third) or wants their spread.
///
/// ```
/// use qchess_sim::bench::{BenchOp, Shape, run_op_repeated};
/// let runs = run_op_repeated::<f64>(BenchOp::Merge, 2000, Shape::Random, std::num::NonZeroUsize::new(5))?;
/// assert_eq!(runs.seconds_runs.len(), 5);
/// assert_eq!(runs.result.seconds, qchess_sim::bench::median(&mut runs.seconds_runs.clone()));
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRuns {
    /// The medians and the peak over the runs, as [`run_op_shaped`] reports them.
    pub result: BenchResult,
    /// Wall seconds of each timed run, in the order they ran.
    pub seconds_runs: Vec<f64>,
}

impl BenchRuns {
    /// The runs' wall and calling-thread CPU seconds (the CPU median only when every run
    /// read it) with what the state held, as the harness reports them.
    fn of(
        (times, mut cpu): (Vec<f64>, Vec<f64>),
        states: usize,
        bytes_per_state: f64,
        peak_bytes: usize,
    ) -> Self {
        let result = BenchResult {
            states,
            seconds: median(&mut times.clone()),
            cpu_seconds: (cpu.len() == times.len()).then(|| median(&mut cpu)),
            bytes_per_state,
            peak_bytes,
        };
        Self {
            result,
            seconds_runs: times,
        }
    }
}

/// Key bits used: keys increase by 1..=4, so they span about `2.5 n` values.
fn key_bits(n: usize) -> u32 {
    (64 - (n as u64 * 5 / 2 + 16).leading_zeros()).clamp(8, 60)
}

/// A reproducible random state of exactly `n` basis states (no ancillas): strictly increasing
/// keys with gaps of 1 to 4, equal magnitudes, phases 1 or i.
///
/// ```
/// let s = qchess_sim::bench::random_state::<f32>(100)?;
/// assert_eq!(s.len(), 100);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn random_state<T: Amplitude>(n: usize) -> Result<State<T>, SimError> {
    let asked = n.saturating_mul(crate::memory::entry_bytes::<T>());
    let available = crate::memory::default_memory_budget();
    if asked > available {
        return Err(SimError::StateTooLarge { asked, available });
    }
    let mut keys = Vec::new();
    crate::pages::reserve_exact(&mut keys, n).map_err(|_| SimError::OutOfMemory { states: n })?;
    let mut amps = Vec::new();
    crate::pages::reserve_exact(&mut amps, n).map_err(|_| SimError::OutOfMemory { states: n })?;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        // splitmix64
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let a = T::of_f64(1.0 / (n as f64).sqrt());
    let zero = T::zero();
    let (mut k, mut bits) = (0u64, 0u64);
    for i in 0..n {
        if i % 32 == 0 {
            bits = next();
        }
        k += 1 + ((bits >> (2 * (i % 32))) & 3);
        keys.push(k);
        amps.push(if bits >> (i % 64) & 1 == 1 {
            Complex::new(a, zero)
        } else {
            Complex::new(zero, a)
        });
    }
    State::from_board_arrays(keys, amps, Normalization::RequireUnit)
}

/// The shape of the input state.
///
/// ```
/// use qchess_sim::bench::{BenchOp, Shape, run_op_shaped};
/// let r = run_op_shaped::<f64>(BenchOp::Split, 1000, Shape::Game)?;
/// assert_eq!(r.states, 1000);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// [`random_state`]: consecutive keys with gaps of 1 to 4 over the low `~log2(2.5 n)` bits;
    /// groups for the gate bits are large.
    Random,
    /// [`game_state`]: like a position reached by real moves: a fixed background of occupied
    /// squares, few distinct values of the high bits, and the branching squares spread over
    /// the board, so the groups a gate sees are many and small.
    Game,
}

/// The squares a game-shaped state of `n` basis states varies on, ascending: two in the
/// top rank (so the high bits take four values), the rest spread over ranks 2-7 in a fixed
/// pseudo-random order.
fn game_squares(n: usize) -> Vec<u32> {
    // About two keys for every three index values (gaps of 1 or 2): m bits hold n keys.
    let m = (64 - (n as u64 * 3 / 2 + 4).leading_zeros()).clamp(4, 46) as usize;
    let mut free: Vec<u32> = (8..56).collect();
    let mut seed = 0x0123_4567_89ab_cdefu64;
    for i in (1..free.len()).rev() {
        let j = (splitmix(&mut seed) % (i as u64 + 1)) as usize;
        free.swap(i, j);
    }
    let mut squares: Vec<u32> = free[..m - 2].to_vec();
    squares.extend([57, 62]);
    squares.sort_unstable();
    squares
}

/// Occupied squares of a game-shaped state that never change (the back ranks, but the two
/// varying top-rank squares), and the squares no branch occupies.
fn game_background(squares: &[u32]) -> (u64, u64) {
    let var = squares.iter().fold(0u64, |m, &q| m | 1 << q);
    let fixed = 0xff00_0000_0000_00ffu64 & !var;
    (fixed, !(fixed | var))
}

/// The qubits a game-shaped operation uses: `s` a varying square a quarter up the list (so
/// about as many varying squares lie above the gate bits as below: many small groups), `t1`
/// and `t2` the empty squares nearest to it, `p` a varying square used as a path.
///
/// ```
/// let (s, t1, t2, p) = qchess_sim::bench::game_qubits(10_000);
/// assert!(s != t1 && t1 != t2 && s != t2 && p != s);
/// ```
pub fn game_qubits(n: usize) -> (u8, u8, u8, u8) {
    let squares = game_squares(n);
    let (_, empty) = game_background(&squares);
    let s = squares[squares.len() / 4];
    let mut near: Vec<u32> = (0..64).filter(|&q| empty >> q & 1 == 1).collect();
    near.sort_by_key(|&q| (q.abs_diff(s), q));
    let p = squares[squares.len() / 4 + 1];
    (s as u8, near[0] as u8, near[1] as u8, p as u8)
}

/// A reproducible game-shaped state of exactly `n` basis states (no ancillas): every key is a
/// fixed background of occupied back-rank squares plus a subset of [`game_qubits`]'s varying
/// squares (distinct subsets in increasing order, about two of every three), equal
/// magnitudes, phases 1 or i.
///
/// ```
/// let s = qchess_sim::bench::game_state::<f64>(1000)?;
/// assert_eq!(s.len(), 1000);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn game_state<T: Amplitude>(n: usize) -> Result<State<T>, SimError> {
    let asked = n.saturating_mul(crate::memory::entry_bytes::<T>());
    let available = crate::memory::default_memory_budget();
    if asked > available {
        return Err(SimError::StateTooLarge { asked, available });
    }
    let squares = game_squares(n);
    let (fixed, _) = game_background(&squares);
    let mut keys = Vec::new();
    crate::pages::reserve_exact(&mut keys, n).map_err(|_| SimError::OutOfMemory { states: n })?;
    let mut amps = Vec::new();
    crate::pages::reserve_exact(&mut amps, n).map_err(|_| SimError::OutOfMemory { states: n })?;
    let mut seed = 0x5851_f42d_4c95_7f2du64;
    let a = T::of_f64(1.0 / (n as f64).sqrt());
    let zero = T::zero();
    let (mut idx, mut bits) = (0u64, 0u64);
    for i in 0..n {
        if i % 64 == 0 {
            bits = splitmix(&mut seed);
        }
        // Index gaps of 1 or 2; the first index is 0 or 1.
        idx += u64::from(i > 0) + (bits >> (i % 64) & 1);
        // Deposit the index bits on the varying squares (ascending, so keys ascend).
        let mut k = fixed;
        for (t, &q) in squares.iter().enumerate() {
            k |= (idx >> t & 1) << q;
        }
        keys.push(k);
        amps.push(if bits >> (63 - i % 64) & 1 == 1 {
            Complex::new(a, zero)
        } else {
            Complex::new(zero, a)
        });
    }
    State::from_board_arrays(keys, amps, Normalization::RequireUnit)
}

fn splitmix(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *seed;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The qubits an operation uses on a state of `n` keys: low, middle and near the top of the
/// key span, so partners exist and groups of every size occur.
///
/// ```
/// let (lo, mid, hi) = qchess_sim::bench::qubits(1000);
/// assert!(lo < mid && mid < hi);
/// ```
pub fn qubits(n: usize) -> (u8, u8, u8) {
    let bits = key_bits(n);
    (2, (bits / 2) as u8, (bits - 2) as u8)
}

/// Applies `op` once.
///
/// ```
/// use qchess_sim::bench::{BenchOp, apply_op, random_state};
/// let mut s = random_state::<f64>(64)?;
/// apply_op(BenchOp::Measure, &mut s, 64)?;
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn apply_op<T: Amplitude>(op: BenchOp, s: &mut State<T>, n: usize) -> Result<(), SimError> {
    let (lo, mid, hi) = qubits(n);
    match op {
        BenchOp::Iswap => s.iswap(lo, hi, Controls::NONE),
        BenchOp::SlideIswap => s.iswap(lo, hi, Controls::empty_path(1 << mid)),
        BenchOp::Split => s.split(mid, lo, hi, Controls::NONE),
        BenchOp::Merge => s.merge(lo, hi, mid, Controls::NONE),
        BenchOp::Measure => s
            .measure(Predicate::One(mid), &mut SplitMix(0x5eed))
            .map(|_| ()),
        BenchOp::Project => project_given(s, mid, projection_given(s, mid)?),
    }
}

/// The outcome [`BenchOp::Measure`] picks on qubit `q` of `s` (with the same draw) and that
/// outcome's mass: what [`BenchOp::Project`] reads before the clock starts.
///
/// ```
/// use qchess_sim::bench::{projection_given, random_state};
/// let s = random_state::<f64>(1000)?;
/// let (_, mass) = projection_given(&s, 4)?;
/// assert!(mass > 0.0 && mass < 1.0);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn projection_given<T: Amplitude>(s: &State<T>, q: u8) -> Result<(bool, f64), SimError> {
    let (yes, all) = s.masses(Predicate::One(q))?;
    let r = rand::Rng::random(&mut SplitMix(0x5eed));
    Ok(State::<T>::pick_outcome_of_masses(yes, all, r))
}

/// [`BenchOp::Project`] with its outcome and mass already read ([`projection_given`]).
fn project_given<T: Amplitude>(
    s: &mut State<T>,
    q: u8,
    (outcome, mass): (bool, f64),
) -> Result<(), SimError> {
    s.project_onto(Predicate::One(q), outcome, mass)
}

/// A tiny fixed-seed generator for the measurement outcome (splitmix64).
struct SplitMix(u64);

impl rand::RngCore for SplitMix {
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        for chunk in dst.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Applies the inverse of [`apply_op`]'s `op` (on the same qubits): `iswap_inv` for the
/// iSwap and the slide, the merge that undoes the split and the split that undoes the merge.
/// A measurement has no inverse: [`SimError::Unsupported`], the state unchanged.
///
/// ```
/// use qchess_sim::bench::{BenchOp, apply_inverse, apply_op, random_state};
/// let mut s = random_state::<f64>(64)?;
/// apply_op(BenchOp::Split, &mut s, 64)?;
/// apply_inverse(BenchOp::Split, &mut s, 64)?;
/// assert_eq!(s.len(), 64);
/// assert!(apply_inverse(BenchOp::Measure, &mut s, 64).is_err());
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn apply_inverse<T: Amplitude>(
    op: BenchOp,
    s: &mut State<T>,
    n: usize,
) -> Result<(), SimError> {
    let (lo, mid, hi) = qubits(n);
    match op {
        BenchOp::Iswap => s.iswap_inv(lo, hi, Controls::NONE),
        BenchOp::SlideIswap => s.iswap_inv(lo, hi, Controls::empty_path(1 << mid)),
        BenchOp::Split => s.merge(hi, lo, mid, Controls::NONE),
        BenchOp::Merge => s.split(mid, hi, lo, Controls::NONE),
        BenchOp::Measure | BenchOp::Project => Err(SimError::Unsupported {
            what: "the inverse of a measurement",
        }),
    }
}

/// Runs the operation's inverse after it, so the pass buffers exist at their working size
/// (as in a game, where they are reused move after move); nothing for the iSwap (no pass
/// buffers) and the measurement (no inverse).
fn warm_up<T: Amplitude>(op: BenchOp, s: &mut State<T>, n: usize) -> Result<(), SimError> {
    match op {
        BenchOp::Iswap | BenchOp::Measure | BenchOp::Project => Ok(()),
        _ => apply_op(op, s, n).and_then(|_| apply_inverse(op, s, n)),
    }
}

/// The median of `v` (sorted in place; NaN for an empty slice): the middle value, or the mean
/// of the two middle values of an even count, so that two repetitions (10^7 states) report
/// their mean, not the slower one. The one median of the benchmark harnesses.
///
/// ```
/// assert_eq!(qchess_sim::bench::median(&mut [0.3, 0.1]), 0.2);
/// assert_eq!(qchess_sim::bench::median(&mut [5.0, 1.0, 2.0]), 2.0);
/// ```
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU seconds this thread has run, from `/proc/thread-self/schedstat` (`None` elsewhere).
///
/// ```
/// if let Some(s) = qchess_sim::bench::thread_cpu_seconds() {
///     assert!(s >= 0.0);
/// }
/// ```
pub fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Times `op` on a random state of `n` basis states in the current rayon pool. Small states
/// repeat on fresh clones (median reported); states above 10^8 run once, without warm-up
/// (its extra buffers would not fit beside the state), so first-touch page faults count.
///
/// ```
/// use qchess_sim::bench::{BenchOp, run_op};
/// let r = run_op::<f32>(BenchOp::Measure, 5000)?;
/// assert!(r.bytes_per_state >= 16.0);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn run_op<T: BenchAmplitude>(op: BenchOp, n: usize) -> Result<BenchResult, SimError> {
    T::run_op_shaped(op, n, Shape::Random)
}

/// The amplitude types the harness runs on: `f32`, `f64` and [`Exact`](crate::Exact). Each
/// type's [`run_op_shaped`] is compiled once, in this crate, so a tool that benchmarks all
/// three does not compile every simulator kernel again (docs/decisions.md, "The local backend
/// is compiled once").
pub trait BenchAmplitude: Amplitude {
    /// [`run_op_shaped`] on amplitudes of this type.
    fn run_op_shaped(op: BenchOp, n: usize, shape: Shape) -> Result<BenchResult, SimError>;
    /// [`run_probability`] on amplitudes of this type.
    fn run_probability(n: usize) -> Result<BenchResult, SimError>;
    /// [`run_op_repeated`] on amplitudes of this type.
    fn run_op_repeated(
        op: BenchOp,
        n: usize,
        shape: Shape,
        repeat: Option<NonZeroUsize>,
    ) -> Result<BenchRuns, SimError>;
    /// [`run_probability_repeated`] on amplitudes of this type.
    fn run_probability_repeated(
        n: usize,
        shape: Shape,
        repeat: Option<NonZeroUsize>,
    ) -> Result<BenchRuns, SimError>;
}

macro_rules! bench_amplitude {
    ($($t:ty),*) => {$(
        impl BenchAmplitude for $t {
            fn run_op_shaped(op: BenchOp, n: usize, shape: Shape) -> Result<BenchResult, SimError> {
                run_shaped::<$t>(op, n, shape, None).map(|r| r.result)
            }
            fn run_probability(n: usize) -> Result<BenchResult, SimError> {
                probability_of::<$t>(n, Shape::Random, None).map(|r| r.result)
            }
            fn run_op_repeated(
                op: BenchOp,
                n: usize,
                shape: Shape,
                repeat: Option<NonZeroUsize>,
            ) -> Result<BenchRuns, SimError> {
                run_shaped::<$t>(op, n, shape, repeat)
            }
            fn run_probability_repeated(
                n: usize,
                shape: Shape,
                repeat: Option<NonZeroUsize>,
            ) -> Result<BenchRuns, SimError> {
                probability_of::<$t>(n, shape, repeat)
            }
        }
    )*};
}

/// Times the probability of one qubit, the middle one of [`qubits`] (one scan of every key
/// and amplitude, no projection: the read a measurement starts with), on a random state of
/// `n` basis states in the current rayon pool. The scan leaves the state as it was, so it
/// runs again on the same state: the median of 3 to 50 runs (fewer for larger states). The
/// peak is the simulator's accounting during the runs: the state's bytes (the scan allocates
/// nothing state-sized).
///
/// ```
/// use qchess_sim::bench::run_probability;
/// let r = run_probability::<f64>(5000)?;
/// assert_eq!((r.states, r.bytes_per_state), (5000, 24.0));
/// assert!(r.seconds > 0.0);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn run_probability<T: BenchAmplitude>(n: usize) -> Result<BenchResult, SimError> {
    T::run_probability(n)
}

/// [`run_probability`] on a state of either shape (on a game-shaped one the qubit is
/// [`game_qubits`]'s `s`, the square the game-shaped gates move from), with `repeat` timed
/// scans instead of the default 3 to 50 (`None`), and every scan's wall seconds.
///
/// ```
/// use qchess_sim::bench::{Shape, run_probability_repeated};
/// let runs = run_probability_repeated::<f32>(5000, Shape::Game, std::num::NonZeroUsize::new(4))?;
/// assert_eq!(runs.seconds_runs.len(), 4);
/// assert_eq!(runs.result.states, 5000);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn run_probability_repeated<T: BenchAmplitude>(
    n: usize,
    shape: Shape,
    repeat: Option<NonZeroUsize>,
) -> Result<BenchRuns, SimError> {
    T::run_probability_repeated(n, shape, repeat)
}

/// [`run_probability_repeated`] for one amplitude type.
fn probability_of<T: Amplitude>(
    n: usize,
    shape: Shape,
    repeat: Option<NonZeroUsize>,
) -> Result<BenchRuns, SimError> {
    let (mut s, q) = match shape {
        Shape::Random => (random_state::<T>(n)?, qubits(n).1),
        Shape::Game => (game_state::<T>(n)?, game_qubits(n).0),
    };
    s.reset_peak_bytes();
    let predicate = Predicate::One(q);
    let reps = repeat.map_or((200_000_000 / n.max(1)).clamp(3, 50), NonZeroUsize::get);
    let (mut times, mut cpu) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    let mut sink = 0.0;
    for _ in 0..reps {
        let c0 = thread_cpu_seconds();
        let t = Instant::now();
        sink += s.probability(predicate);
        times.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
    }
    std::hint::black_box(sink);
    let bytes_per_state = s.state_bytes() as f64 / s.len() as f64;
    Ok(BenchRuns::of(
        (times, cpu),
        s.len(),
        bytes_per_state,
        s.peak_bytes(),
    ))
}

bench_amplitude!(f32, f64, crate::Exact);

/// Applies `op` once to a game-shaped state of `n` generated basis states, on the squares of
/// [`game_qubits`]: `Iswap` is `iswap(s, t1)`, `SlideIswap` the same controlled on `p` empty,
/// `Split` is `split(s, t1, t2)`, `Merge` is `merge(t2, t1, s)` (the split's inverse; its
/// input is the state after that split), `Measure` measures `s`, and `Project` projects onto
/// the outcome that measurement picks.
///
/// ```
/// use qchess_sim::bench::{BenchOp, apply_game_op, game_state};
/// let mut s = game_state::<f64>(64)?;
/// apply_game_op(BenchOp::Split, &mut s, 64)?;
/// apply_game_op(BenchOp::Merge, &mut s, 64)?;
/// assert_eq!(s.len(), 64);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn apply_game_op<T: Amplitude>(
    op: BenchOp,
    s: &mut State<T>,
    n: usize,
) -> Result<(), SimError> {
    let (q, t1, t2, p) = game_qubits(n);
    match op {
        BenchOp::Iswap => s.iswap(q, t1, Controls::NONE),
        BenchOp::SlideIswap => s.iswap(q, t1, Controls::empty_path(1 << p)),
        BenchOp::Split => s.split(q, t1, t2, Controls::NONE),
        BenchOp::Merge => s.merge(t2, t1, q, Controls::NONE),
        BenchOp::Measure => s
            .measure(Predicate::One(q), &mut SplitMix(0x5eed))
            .map(|_| ()),
        BenchOp::Project => project_given(s, q, projection_given(s, q)?),
    }
}

/// [`warm_up`] for the game-shaped operations.
fn warm_up_game<T: Amplitude>(op: BenchOp, s: &mut State<T>, n: usize) -> Result<(), SimError> {
    let (q, t1, t2, p) = game_qubits(n);
    match op {
        BenchOp::Iswap | BenchOp::Measure | BenchOp::Project => Ok(()),
        BenchOp::SlideIswap => {
            let c = Controls::empty_path(1 << p);
            s.iswap(q, t1, c).and_then(|_| s.iswap_inv(q, t1, c))
        }
        BenchOp::Split => s
            .split(q, t1, t2, Controls::NONE)
            .and_then(|_| s.merge(t2, t1, q, Controls::NONE)),
        BenchOp::Merge => s
            .merge(t2, t1, q, Controls::NONE)
            .and_then(|_| s.split(q, t1, t2, Controls::NONE)),
    }
}

/// [`run_op`] on a state of the given [`Shape`]. `states` in the result is the input's size
/// (for a game-shaped merge, the state after the split it undoes: about 1.5 `n`).
///
/// ```
/// use qchess_sim::bench::{BenchOp, Shape, run_op_shaped};
/// let r = run_op_shaped::<f64>(BenchOp::Merge, 1000, Shape::Game)?;
/// assert!(r.states > 1000);
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn run_op_shaped<T: BenchAmplitude>(
    op: BenchOp,
    n: usize,
    shape: Shape,
) -> Result<BenchResult, SimError> {
    T::run_op_shaped(op, n, shape)
}

/// [`run_op_shaped`] with `repeat` timed runs instead of its default (`None`: 200 runs of
/// small states down to 1 from 2 x 10^7 states), each on a fresh warmed copy of the input,
/// and every run's wall seconds. Above 10^8 states no run is warmed (as by default), and
/// with more than one run each copy is asked of the memory budget beside the input.
///
/// ```
/// use qchess_sim::bench::{BenchOp, Shape, run_op_repeated};
/// let runs = run_op_repeated::<f32>(BenchOp::Split, 3000, Shape::Game, std::num::NonZeroUsize::new(3))?;
/// assert_eq!(runs.seconds_runs.len(), 3);
/// assert!(runs.seconds_runs.iter().all(|&s| s > 0.0));
/// # Ok::<(), qchess_sim::SimError>(())
/// ```
pub fn run_op_repeated<T: BenchAmplitude>(
    op: BenchOp,
    n: usize,
    shape: Shape,
    repeat: Option<NonZeroUsize>,
) -> Result<BenchRuns, SimError> {
    T::run_op_repeated(op, n, shape, repeat)
}

/// [`run_op_repeated`]'s body, instantiated by [`BenchAmplitude`]'s impls.
fn run_shaped<T: Amplitude>(
    op: BenchOp,
    n: usize,
    shape: Shape,
    repeat: Option<NonZeroUsize>,
) -> Result<BenchRuns, SimError> {
    let mut state = match shape {
        Shape::Random => random_state::<T>(n)?,
        Shape::Game => {
            let mut s = game_state::<T>(n)?;
            if op == BenchOp::Merge {
                apply_game_op(BenchOp::Split, &mut s, n)?;
            }
            s
        }
    };
    let states = state.len();
    // The projection's outcome and mass, read before the clock (the same for every copy).
    let measured = match shape {
        Shape::Random => qubits(n).1,
        Shape::Game => game_qubits(n).0,
    };
    let given = match op {
        BenchOp::Project => Some(projection_given(&state, measured)?),
        _ => None,
    };
    let reps = repeat.map_or((20_000_000 / n.max(1)).clamp(1, 200), NonZeroUsize::get);
    let (mut times, mut cpu) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    let (mut peak, mut bytes_per_state) = (0usize, 0.0);
    for _ in 0..reps {
        let mut s = if reps == 1 {
            std::mem::replace(&mut state, State::classical(0))
        } else {
            // Within the memory budget, like every state-sized copy.
            state.try_clone(0)?
        };
        if n <= 100_000_000 {
            match shape {
                Shape::Random => warm_up(op, &mut s, n)?,
                Shape::Game => warm_up_game(op, &mut s, n)?,
            }
        }
        s.reset_peak_bytes();
        let c0 = thread_cpu_seconds();
        let t = Instant::now();
        match (given, shape) {
            (Some(given), _) => project_given(&mut s, measured, given)?,
            (None, Shape::Random) => apply_op(op, &mut s, n)?,
            (None, Shape::Game) => apply_game_op(op, &mut s, n)?,
        }
        times.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
        peak = peak.max(s.peak_bytes());
        bytes_per_state = s.state_bytes() as f64 / s.len() as f64;
    }
    Ok(BenchRuns::of((times, cpu), states, bytes_per_state, peak))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_states::entry_bits as bits;

    /// `op` applied to a copy of `input`, on the qubits of `shape`.
    fn applied(op: BenchOp, input: &State<f64>, n: usize, shape: Shape) -> State<f64> {
        let mut s = input.try_clone(0).unwrap();
        match shape {
            Shape::Random => apply_op(op, &mut s, n).unwrap(),
            Shape::Game => apply_game_op(op, &mut s, n).unwrap(),
        }
        s
    }

    #[test]
    fn the_projection_alone_keeps_what_the_measurement_keeps_bit_for_bit() {
        for (n, shape) in [
            (3000, Shape::Random),
            (50_000, Shape::Random),
            (50_000, Shape::Game),
        ] {
            let input = match shape {
                Shape::Random => random_state::<f64>(n).unwrap(),
                Shape::Game => game_state::<f64>(n).unwrap(),
            };
            let measured = applied(BenchOp::Measure, &input, n, shape);
            let projected = applied(BenchOp::Project, &input, n, shape);
            assert!(
                !measured.is_empty() && measured.len() < input.len(),
                "{shape:?} {n}"
            );
            assert_eq!(bits(&projected), bits(&measured), "{shape:?} {n}");
            assert!((projected.norm_sqr() - 1.0).abs() < 1e-12);
            // The harness's timed path (the mass read before the clock): the state shrunk to
            // its survivors, 24 bytes each.
            let runs = run_shaped::<f64>(BenchOp::Project, n, shape, NonZeroUsize::new(2)).unwrap();
            assert_eq!(
                (runs.result.states, runs.seconds_runs.len()),
                (input.len(), 2)
            );
            assert_eq!(runs.result.bytes_per_state, 24.0);
        }
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(super::median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(super::median(&mut [0.030, 0.010]), 0.020);
        assert_eq!(super::median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(super::median(&mut [7.0]), 7.0);
    }
}
