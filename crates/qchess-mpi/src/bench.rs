//! `qchess-mpi bench`: one operation on the sharded random state of `qchess bench sim`
//! (the same states, the same qubits), timed between barriers on every rank.

use crate::ShardedState;
use crate::comm::{max_f64, sum_u64};
use crate::plan::LocalSet;
use qchess_sim::bench::{BenchOp, qubits, random_state, thread_cpu_seconds};
use qchess_sim::{Amplitude, Controls, Predicate, QuantumState, SimError, State};
use rand::SeedableRng;
use std::time::Instant;

/// What one distributed benchmark measured (the same on every rank).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpiBenchResult {
    /// Basis states of the input state (over all ranks).
    pub states: usize,
    /// Median over repetitions of the slowest rank's wall-clock seconds.
    pub seconds: f64,
    /// Median over repetitions of the largest per-rank CPU seconds of the calling thread.
    pub cpu_seconds: Option<f64>,
    /// Heap bytes of the pieces per stored basis state after the operation.
    pub bytes_per_state: f64,
    /// Most heap bytes one rank held during the operation.
    pub peak_bytes: usize,
    /// Ranks.
    pub ranks: usize,
    /// Bytes all ranks sent to other ranks during one operation.
    pub bytes_sent: u64,
}

/// Applies `op` with the qubits of `qchess_sim::bench::apply_op` for `n` states; `given` is
/// [`BenchOp::Project`]'s outcome and mass when read before the clock (else read here,
/// [`projection_given`]).
fn apply<T: Amplitude>(
    op: BenchOp,
    s: &mut ShardedState<T>,
    n: usize,
    given: Option<(bool, f64)>,
) -> Result<(), SimError>
where
    State<T>: QuantumState,
{
    let (lo, mid, hi) = qubits(n);
    match op {
        BenchOp::Iswap => s.iswap(lo, hi, Controls::NONE),
        BenchOp::SlideIswap => s.iswap(lo, hi, Controls::empty_path(1 << mid)),
        BenchOp::Split => s.split(mid, lo, hi, Controls::NONE),
        BenchOp::Merge => s.merge(lo, hi, mid, Controls::NONE),
        BenchOp::Measure => s
            .measure(
                Predicate::One(mid),
                &mut rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed),
            )
            .map(|_| ()),
        BenchOp::Project => {
            let (outcome, mass) = given.map_or_else(|| projection_given(s, mid), Ok)?;
            s.project_onto(Predicate::One(mid), outcome, mass)
        }
    }
}

/// The outcome [`BenchOp::Measure`] picks on qubit `q` (the same draw on every rank) and that
/// outcome's global mass: what [`BenchOp::Project`] reads before the clock. Collective.
fn projection_given<T: Amplitude>(s: &ShardedState<T>, q: u8) -> Result<(bool, f64), SimError>
where
    State<T>: QuantumState,
{
    let (yes, all) = s.masses(Predicate::One(q))?;
    let r = rand::Rng::random(&mut rand_chacha::ChaCha8Rng::seed_from_u64(0x5eed));
    Ok(State::<T>::pick_outcome_of_masses(yes, all, r))
}

/// Times `op` on `qchess_sim::bench::random_state(n)` sharded over the ranks, with a local
/// set of `capacity` qubits. With `resident` the op's qubits start in L (no exchange);
/// otherwise L starts as the lowest qubits other than the op's, so the timed operation
/// includes the exchange that brings them in (measurement never exchanges). Every rank builds
/// the whole input and keeps its share (outside the timed region). Collective.
pub fn run<T: Amplitude>(
    op: BenchOp,
    n: usize,
    capacity: usize,
    resident: bool,
) -> Result<MpiBenchResult, SimError>
where
    State<T>: QuantumState,
{
    let comm = crate::comm::current();
    let (lo, mid, hi) = qubits(n);
    let initial: Vec<u8> = if resident {
        vec![lo, mid, hi]
    } else {
        (0..64u8).filter(|q| ![lo, mid, hi].contains(q)).collect()
    };
    let base = {
        let global = random_state::<T>(n)?;
        ShardedState::from_state(&global, LocalSet::new(capacity, &initial))?
    };
    let given = match op {
        BenchOp::Project => Some(projection_given(&base, mid)?),
        _ => None,
    };
    let reps = (4_000_000 / n.max(1)).clamp(1, 50);
    let (mut times, mut cpus) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    let (mut peak, mut bytes_per_state, mut bytes_sent) = (0usize, 0.0, 0u64);
    let mut base = Some(base);
    for rep in 0..reps {
        let mut s = if rep + 1 == reps {
            base.take().expect("the base state is used last")
        } else {
            // Within the budget, like every state-sized copy (collective: all ranks or none).
            qchess_sim::QuantumState::try_clone(base.as_ref().expect("the base state"), 0)?
        };
        s.reset_peak_bytes();
        let sent_before = s.traffic().bytes_sent;
        comm.barrier();
        let c0 = thread_cpu_seconds();
        let t = Instant::now();
        let result = apply(op, &mut s, n, given);
        let elapsed = t.elapsed().as_secs_f64();
        let cpu = match (c0, thread_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        comm.barrier();
        result?;
        let m = max_f64(&*comm, &[elapsed, cpu, s.peak_bytes() as f64]);
        times.push(m[0]);
        cpus.push(m[1]);
        peak = peak.max(m[2] as usize);
        let sums = sum_u64(
            &*comm,
            &[
                s.local().state_bytes() as u64,
                s.local().len() as u64,
                s.traffic().bytes_sent - sent_before,
            ],
        );
        bytes_per_state = sums[0] as f64 / sums[1].max(1) as f64;
        bytes_sent = sums[2];
    }
    let cpu = qchess_sim::bench::median(&mut cpus);
    Ok(MpiBenchResult {
        states: n,
        seconds: qchess_sim::bench::median(&mut times),
        cpu_seconds: cpu.is_finite().then_some(cpu),
        bytes_per_state,
        peak_bytes: peak,
        ranks: comm.size(),
        bytes_sent,
    })
}

/// What `qchess-mpi bench --op legal` measured (the same on every rank).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MpiLegalResult {
    /// Basis states of the game position (over all ranks).
    pub states: usize,
    /// Legal moves listed.
    pub moves: usize,
    /// Median over repetitions of the slowest rank's wall-clock seconds for the listing.
    pub seconds: f64,
    /// Most bytes one rank had resident before the listing (`VmRSS`; 0 where `/proc` is
    /// not readable).
    pub resident_bytes: usize,
    /// Most bytes one rank's resident memory grew by during a listing (its peak `VmHWM`,
    /// reset before each listing through `/proc/self/clear_refs`, less `VmRSS` before;
    /// 0 where `/proc` is not readable).
    pub listing_bytes: usize,
    /// Ranks.
    pub ranks: usize,
}

/// One field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`), or `None`.
fn proc_status_bytes(field: &str) -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Times the full legal-move list of a Cantwell game on the sharded state: the growth
/// position of `qchess_cantwell::growth::growth_position` (reached by real moves, at least
/// `n` basis states), sharded with a local set of `capacity` qubits (the transport's
/// default, as [`crate::comm::install`] set it). Each repetition resets the resident-memory
/// peak first, so `listing_bytes` is what the listing itself added to the most-loaded
/// rank. Collective.
pub fn legal(n: usize) -> Result<MpiLegalResult, String> {
    let comm = crate::comm::current();
    let (game, _) = qchess_cantwell::growth::growth_position::<ShardedState<f64>>(n)
        .map_err(|e| e.to_string())?;
    let states = game.state_size();
    let reps = (2_000_000 / states.max(1)).clamp(1, 20);
    let (mut times, mut moves, mut grew, mut resident) =
        (Vec::with_capacity(reps), 0, 0usize, 0usize);
    for _ in 0..reps {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let before = proc_status_bytes("VmRSS").unwrap_or(0);
        comm.barrier();
        let t = Instant::now();
        let list = game.try_legal_moves().map_err(|e| e.to_string())?;
        let elapsed = t.elapsed().as_secs_f64();
        comm.barrier();
        let peak = proc_status_bytes("VmHWM").unwrap_or(before);
        let m = max_f64(
            &*comm,
            &[elapsed, peak.saturating_sub(before) as f64, before as f64],
        );
        times.push(m[0]);
        grew = grew.max(m[1] as usize);
        resident = resident.max(m[2] as usize);
        moves = list.len();
    }
    Ok(MpiLegalResult {
        states,
        moves,
        seconds: qchess_sim::bench::median(&mut times),
        resident_bytes: resident,
        listing_bytes: grew,
        ranks: comm.size(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{Solo, ThreadComm, install};
    use std::rc::Rc;

    /// The listing on 1 and 2 thread ranks is the local game's list of the same growth
    /// position.
    #[test]
    fn the_legal_listing_bench_lists_the_local_games_moves() {
        let (local, _) =
            qchess_cantwell::growth::growth_position::<qchess_sim::State<f64>>(200).unwrap();
        let want = local.legal_moves().len();
        install(Rc::new(Solo), 8);
        let solo = legal(200).unwrap();
        assert_eq!((solo.ranks, solo.moves), (1, want));
        let rs = ThreadComm::run(2, |c| {
            install(Rc::new(c), 8);
            legal(200).unwrap()
        });
        for r in rs {
            assert_eq!((r.ranks, r.moves, r.states), (2, want, local.state_size()));
            assert!(r.seconds > 0.0);
        }
    }

    #[test]
    fn resident_gates_send_nothing_and_others_send_what_moved() {
        install(Rc::new(Solo), 8);
        let r = run::<f64>(BenchOp::Split, 5000, 8, false).unwrap();
        assert_eq!((r.ranks, r.bytes_sent), (1, 0));
        let rs = ThreadComm::run(2, |c| {
            install(Rc::new(c), 8);
            (
                run::<f64>(BenchOp::Split, 5000, 8, true).unwrap(),
                run::<f64>(BenchOp::Iswap, 5000, 8, false).unwrap(),
                run::<f64>(BenchOp::Measure, 5000, 8, false).unwrap(),
            )
        });
        for (resident, moved, measure) in rs {
            assert_eq!(resident.bytes_sent, 0);
            assert_eq!(measure.bytes_sent, 0);
            assert_eq!(moved.ranks, 2);
            // Whole entries only, and fewer than all of them.
            assert_eq!(moved.bytes_sent % 40, 0);
            assert!(moved.bytes_sent > 0 && moved.bytes_sent < 5000 * 40);
            assert!(moved.bytes_per_state >= 24.0);
        }
    }
}
