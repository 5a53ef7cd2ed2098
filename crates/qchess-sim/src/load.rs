//! How many threads a parallel pass uses now: the rayon pool's, or one while other work keeps
//! the machine's cores busy (load-adaptive parallelism, as OpenMP's `OMP_DYNAMIC` does).
//!
//! A parallel pass ends when its last block does. With two threads on two cores and a third
//! runnable thread elsewhere, the scheduler preempts one of the workers in turn, and the pass
//! waits for the preempted block: measured on the 2-core VM (docs/benchmarks.md, "One thread
//! against two"), three of ten simulator cells at 1e7 ran 1-6 % slower on two threads than on
//! one with a busy second core, and the measuring move 7 % slower, although every one of them
//! was at least 8 % faster on two threads on a quiet machine. So before a large pass the
//! simulator asks [`free_cores`]: the machine's cores less the runnable threads that are not
//! this process's (from `/proc/loadavg` and `/proc/self/task/*/stat`). With fewer than two
//! free, confirmed by a second reading [`CONFIRM_MICROS`] later (a single busy reading is often
//! a kernel thread running for a moment), it runs the pass on the calling thread alone. A
//! reading is kept for [`RECHECK_MILLIS`], so the reads cost nothing measurable; results never
//! depend on it (every parallel pass is bit-identical for any thread count).
//!
//! [`set_adaptive_threads`] turns this off for the whole process (then every pass uses the
//! whole pool, as before), and so does the environment variable `QCHESS_ADAPTIVE_THREADS=0`
//! (also `off` or `false`), read once at the first large pass, for programs that cannot call
//! it (the `qchess` tool, the Python binding, the examples). Where `/proc` cannot be read (not
//! Linux), passes use the whole pool.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// How long a load reading is reused before `/proc` is read again, in milliseconds.
pub const RECHECK_MILLIS: u64 = 50;

/// How long after a busy reading it is confirmed by a second one, in microseconds. A kernel
/// thread that runs for a moment (compacting memory after a large allocation, say) is caught
/// by one reading about once in a hundred on the VM and gone 100 us later; a competing process
/// is there in both.
pub const CONFIRM_MICROS: u64 = 200;

/// The environment variable that turns the adaptation off (`0`, `off`, `false`, `no`).
pub const ADAPTIVE_THREADS_ENV: &str = "QCHESS_ADAPTIVE_THREADS";

/// On by default; the crate's own unit tests turn it off so that they exercise the parallel
/// paths however loaded the test machine is.
static ADAPTIVE: AtomicBool = AtomicBool::new(!cfg!(test));
/// When the last reading was taken (nanoseconds after `EPOCH`, 0: never).
static CHECKED_AT: AtomicU64 = AtomicU64::new(0);
/// The last decision: fewer than two free cores, confirmed.
static BUSY: AtomicBool = AtomicBool::new(false);

/// Time zero of `CHECKED_AT`.
static EPOCH: OnceLock<Instant> = OnceLock::new();
/// `QCHESS_ADAPTIVE_THREADS` is applied once, before the first reading or setting.
static FROM_ENV: std::sync::Once = std::sync::Once::new();

/// Applies [`ADAPTIVE_THREADS_ENV`] the first time it is called.
fn read_env() {
    FROM_ENV.call_once(|| {
        if env_switch(ADAPTIVE_THREADS_ENV) == Some(false) {
            ADAPTIVE.store(false, Ordering::Relaxed);
        }
    });
}

/// The setting of an on/off environment variable (this module's and `pin.rs`'s): `Some(false)`
/// for `0`, `off`, `false`, `no`, `Some(true)` for `1`, `on`, `true`, `yes` (any case, spaces
/// around ignored), `None` when unset or anything else.
pub(crate) fn env_switch(name: &str) -> Option<bool> {
    switch_value(&std::env::var(name).ok()?)
}

/// The spelling rule of [`env_switch`].
pub(crate) fn switch_value(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "0" | "off" | "false" | "no" => Some(false),
        "1" | "on" | "true" | "yes" => Some(true),
        _ => None,
    }
}

/// Turns load-adaptive parallelism on (the default) or off for the whole process. Off, every
/// parallel pass uses the whole rayon pool whatever else the machine runs. Results never
/// depend on it, only speed does.
///
/// ```
/// qchess_sim::set_adaptive_threads(false);
/// assert!(!qchess_sim::adaptive_threads());
/// qchess_sim::set_adaptive_threads(true);
/// assert!(qchess_sim::adaptive_threads());
/// ```
pub fn set_adaptive_threads(on: bool) {
    read_env();
    ADAPTIVE.store(on, Ordering::Relaxed);
    CHECKED_AT.store(0, Ordering::Relaxed);
}

/// Whether a large parallel pass falls back to one thread while the machine's other cores
/// are busy (see [`set_adaptive_threads`]).
pub fn adaptive_threads() -> bool {
    read_env();
    ADAPTIVE.load(Ordering::Relaxed)
}

/// The cores this process may use (`std::thread::available_parallelism`; on a pool worker
/// that pinning bound to one CPU, the process's CPUs, not that one), or fewer when the
/// runnable threads of other processes leave fewer of the machine's online CPUs free right
/// now; `None` where `/proc` cannot tell (not Linux). The machine-wide count is set against
/// the machine's CPUs, not this process's share of them: in a container limited to 2 CPUs of
/// a 64-CPU host, 30 runnable threads elsewhere on the host still leave its 2 free.
///
/// ```
/// if let Some(free) = qchess_sim::free_cores() {
///     let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
///     assert!(free <= cores);
/// }
/// ```
pub fn free_cores() -> Option<usize> {
    let cores = process_cores()?;
    let online = *ONLINE.get_or_init(|| {
        std::fs::read_to_string("/sys/devices/system/cpu/online")
            .ok()
            .and_then(|s| cpu_list_len(&s))
    });
    let machine = online.unwrap_or(cores).max(cores);
    let loadavg = || running_threads(&std::fs::read_to_string("/proc/loadavg").ok()?);
    // The caller is running: one runnable thread in all is this one (the quiet case, one
    // small read).
    if loadavg()? <= 1 {
        return Some(cores);
    }
    // This process's idle workers go to sleep within microseconds: counted before and after
    // the machine-wide count, one that was running when it was taken is not taken for load.
    let before = own_running_threads()?;
    let running = loadavg()?;
    let own = before.max(own_running_threads()?);
    Some(cores.min(machine.saturating_sub(running.saturating_sub(own))))
}

/// The cores this process may use: `std::thread::available_parallelism`, which reads the
/// calling thread's affinity, except on a pool worker that pinning bound to one CPU
/// ([`crate::pin`]), where that says 1 whatever the process may use: there, the CPUs the
/// process's first thread may run on (`Cpus_allowed_list` of `/proc/self/status`; pinning
/// never binds a thread outside the pools). Before 2026-12-01 a bound worker's reading made
/// every check find fewer than two cores free, and every large pass ran on one thread
/// (docs/benchmarks.md, "A fourth machine").
fn process_cores() -> Option<usize> {
    let own = std::thread::available_parallelism().ok()?.get();
    if !crate::pin::bound_here() {
        return Some(own);
    }
    let status = std::fs::read_to_string("/proc/self/status").ok();
    let allowed = status.as_deref().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .and_then(cpu_list_len)
    });
    Some(allowed.unwrap_or(own).max(own))
}

/// The machine's online CPUs, read once (`None`: unknown).
static ONLINE: OnceLock<Option<usize>> = OnceLock::new();

/// The number of CPUs in a kernel CPU list such as `0-3,8,10-11` (`None` if malformed).
fn cpu_list_len(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.trim().split(',') {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    Some(n)
}

/// The runnable-thread count of a `/proc/loadavg` line (its fourth field, `running/total`).
fn running_threads(loadavg: &str) -> Option<usize> {
    loadavg
        .split_whitespace()
        .nth(3)?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// The state field of a `/proc/<pid>/task/<tid>/stat` line (after the parenthesised name,
/// which may itself hold spaces and parentheses).
fn task_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// This process's threads that are runnable now (state `R`), the caller included.
fn own_running_threads() -> Option<usize> {
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        let path = entry.ok()?.path().join("stat");
        // A thread may exit between the listing and the read: it is not running.
        if let Ok(stat) = std::fs::read_to_string(path)
            && task_state(&stat) == Some('R')
        {
            n += 1;
        }
    }
    Some(n)
}

/// Whether fewer than two cores are free (a busy reading confirmed [`CONFIRM_MICROS`] later),
/// from a reading at most [`RECHECK_MILLIS`] old.
fn busy() -> bool {
    let now = u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1);
    let last = CHECKED_AT.load(Ordering::Relaxed);
    if last != 0 && now.saturating_sub(last) < RECHECK_MILLIS * 1_000_000 {
        return BUSY.load(Ordering::Relaxed);
    }
    let reading = || free_cores().is_some_and(|free| free < 2);
    let busy = reading() && {
        std::thread::sleep(std::time::Duration::from_micros(CONFIRM_MICROS));
        reading()
    };
    BUSY.store(busy, Ordering::Relaxed);
    CHECKED_AT.store(now, Ordering::Relaxed);
    busy
}

/// The threads the next large parallel pass should use: the current rayon pool's, or 1 when
/// [`adaptive_threads`] is on and fewer than two cores are free.
pub(crate) fn threads() -> usize {
    let pool = rayon::current_num_threads();
    // The load is read only where it can change the answer.
    let adaptive = pool > 1 && adaptive_threads();
    let threads = choose(pool, adaptive && busy());
    if threads > 1 {
        crate::pin::ensure_bound();
    }
    threads
}

/// The rule of [`threads`]: the pool, or one thread when the other cores are busy.
fn choose(pool: usize, busy: bool) -> usize {
    if busy { 1 } else { pool }
}

/// Whether a pass with more than one block should run its blocks in parallel now.
pub(crate) fn parallel() -> bool {
    threads() > 1
}

/// The least items per rayon job for a pass over chunks: 1 (split freely) when [`parallel`],
/// else all of them (one job, no split).
pub(crate) fn min_len() -> usize {
    if parallel() { 1 } else { usize::MAX }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_switch_reads_the_usual_spellings() {
        for off in ["0", "off", "OFF", "false", " no "] {
            assert_eq!(switch_value(off), Some(false), "{off}");
        }
        for on in ["1", "on", "TRUE", " yes "] {
            assert_eq!(switch_value(on), Some(true), "{on}");
        }
        for neither in ["", "2", "maybe"] {
            assert_eq!(switch_value(neither), None, "{neither}");
        }
    }

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(cpu_list_len("0-1\n"), Some(2));
        assert_eq!(cpu_list_len("0"), Some(1));
        assert_eq!(cpu_list_len("0-3,8,10-11"), Some(7));
        assert_eq!(cpu_list_len("3-1"), None);
        assert_eq!(cpu_list_len("x"), None);
    }

    #[test]
    fn the_proc_fields_are_read_as_the_kernel_writes_them() {
        assert_eq!(running_threads("0.53 0.89 1.13 3/81 22925\n"), Some(3));
        assert_eq!(running_threads("0.53 0.89"), None);
        assert_eq!(
            task_state("1234 (a (b) c) R 1 2 3 4 5 6 7 8 9 10"),
            Some('R')
        );
        assert_eq!(task_state("1234 (rayon) S 1 2"), Some('S'));
        assert_eq!(task_state("no parenthesis"), None);
    }

    /// This thread is running, so it counts itself; a spinning thread of this process counts
    /// as its own; the free cores never exceed the cores.
    #[test]
    #[cfg(target_os = "linux")]
    fn own_threads_are_not_counted_as_load() {
        let own = own_running_threads().expect("/proc/self/task");
        assert!(own >= 1, "{own}");
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let spin = {
            let stop = stop.clone();
            std::thread::spawn(move || while !stop.load(Ordering::Relaxed) {})
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let spinning = own_running_threads().unwrap();
        stop.store(true, Ordering::Relaxed);
        spin.join().unwrap();
        assert!(spinning >= 2, "{spinning}");
        let cores = std::thread::available_parallelism().unwrap().get();
        assert!(free_cores().unwrap() <= cores);
    }

    /// On a worker bound to one CPU by pinning, the cores the process may use are still
    /// all of them (its own affinity says 1): a bound worker's check must not find the
    /// machine busy because of its own binding.
    #[test]
    fn a_bound_worker_still_sees_the_process_cores() {
        let unbound = std::thread::available_parallelism().unwrap().get();
        assert_eq!(process_cores(), Some(unbound));
        let cpus = core_affinity::get_core_ids().unwrap_or_default();
        let seen = std::thread::spawn(move || {
            let pinned = cpus
                .first()
                .is_some_and(|&c| core_affinity::set_for_current(c));
            crate::pin::mark_bound_here();
            let own = std::thread::available_parallelism().unwrap().get();
            (pinned, own, process_cores())
        })
        .join()
        .unwrap();
        let (pinned, own, cores) = seen;
        if pinned {
            assert_eq!(own, 1, "the bound thread's own affinity is its one CPU");
        }
        // At least the unbound thread's count (more under a CPU quota, which
        // `available_parallelism` counts and the affinity list does not).
        assert!(
            cores.is_some_and(|c| c >= unbound),
            "{cores:?} vs {unbound}"
        );
    }

    /// A busy reading means one thread, a quiet one the whole pool; the unit tests run with
    /// the adaptation off (so that they exercise the parallel paths on a loaded machine).
    #[test]
    fn a_busy_reading_means_one_thread() {
        assert_eq!(choose(2, true), 1);
        assert_eq!(choose(2, false), 2);
        assert_eq!(choose(8, true), 1);
        assert!(!adaptive_threads());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(pool.install(threads), 2);
    }
}
