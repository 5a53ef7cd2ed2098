//! Timing harness behind `qchess bench sim`: one operation on a random state of a given size,
//! the input built and the pass buffers warmed outside the timed region.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::key::{Controls, Normalization, Predicate};
use crate::state::State;
use num_complex::Complex;
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
    keys.try_reserve_exact(n)
        .map_err(|_| SimError::OutOfMemory { states: n })?;
    let mut amps = Vec::new();
    amps.try_reserve_exact(n)
        .map_err(|_| SimError::OutOfMemory { states: n })?;
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
    }
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

/// Runs the operation's inverse after it, so the pass buffers exist at their working size
/// (as in a game, where they are reused move after move).
fn warm_up<T: Amplitude>(op: BenchOp, s: &mut State<T>, n: usize) -> Result<(), SimError> {
    let (lo, mid, hi) = qubits(n);
    match op {
        BenchOp::Iswap => Ok(()),
        BenchOp::SlideIswap => {
            let c = Controls::empty_path(1 << mid);
            s.iswap(lo, hi, c).and_then(|_| s.iswap_inv(lo, hi, c))
        }
        BenchOp::Split => s
            .split(mid, lo, hi, Controls::NONE)
            .and_then(|_| s.merge(hi, lo, mid, Controls::NONE)),
        BenchOp::Merge => s
            .merge(lo, hi, mid, Controls::NONE)
            .and_then(|_| s.split(mid, hi, lo, Controls::NONE)),
        BenchOp::Measure => Ok(()),
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
pub fn run_op<T: Amplitude>(op: BenchOp, n: usize) -> Result<BenchResult, SimError> {
    let mut state = random_state::<T>(n)?;
    let reps = (20_000_000 / n.max(1)).clamp(1, 200);
    let (mut times, mut cpu) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    let (mut peak, mut bytes_per_state) = (0usize, 0.0);
    for _ in 0..reps {
        let mut s = if reps == 1 {
            std::mem::replace(&mut state, State::classical(0))
        } else {
            state.clone()
        };
        if n <= 100_000_000 {
            warm_up(op, &mut s, n)?;
        }
        s.reset_peak_bytes();
        let c0 = thread_cpu_seconds();
        let t = Instant::now();
        apply_op(op, &mut s, n)?;
        times.push(t.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (c0, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
        peak = peak.max(s.peak_bytes());
        bytes_per_state = s.state_bytes() as f64 / s.len() as f64;
    }
    times.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    Ok(BenchResult {
        states: n,
        seconds: times[times.len() / 2],
        cpu_seconds: (cpu.len() == times.len()).then(|| cpu[cpu.len() / 2]),
        bytes_per_state,
        peak_bytes: peak,
    })
}
