//! Pinned workers (`qchess_sim::set_pin_threads`): after a large parallel pass each worker
//! of the pool that ran it may run on exactly one CPU, the workers on different CPUs, and
//! the pass's result is the one an unpinned single thread computes. Its own test binary: the
//! switch is process-wide.

use qchess_sim::Predicate;
use qchess_sim::bench::{qubits, random_state};

/// The CPUs the calling thread may run on, from `/proc/thread-self/status`.
#[cfg(target_os = "linux")]
fn allowed_cpus() -> String {
    let status = std::fs::read_to_string("/proc/thread-self/status").expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim()
        .to_string()
}

#[test]
#[cfg(target_os = "linux")]
fn a_large_pass_binds_each_worker_to_its_own_cpu() {
    qchess_sim::set_adaptive_threads(false);
    let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
    let workers = cpus.clamp(2, 4);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build()
        .unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let n = 400_000;
    let state = random_state::<f64>(n).unwrap();
    let q = Predicate::One(qubits(n).1);
    let (mut a, mut b) = (state.try_clone(0).unwrap(), state.try_clone(0).unwrap());
    // Unpinned, one thread: the reference.
    one.install(|| a.force(q, true)).unwrap();
    let before: Vec<String> = pool.broadcast(|_| allowed_cpus());
    assert!(!qchess_sim::pin_threads(), "off by default");
    qchess_sim::set_pin_threads(true);
    pool.install(|| b.force(q, true)).unwrap();
    let after: Vec<String> = pool.broadcast(|_| allowed_cpus());
    assert_eq!(
        a.entries().collect::<Vec<_>>(),
        b.entries().collect::<Vec<_>>(),
        "pinning changed a result"
    );
    assert!(b.len() > n / 4 && b.len() < 3 * n / 4, "{}", b.len());
    // Every worker on one CPU (a single number in the list).
    for list in &after {
        assert!(list.parse::<usize>().is_ok(), "{list} (was {before:?})");
    }
    if cpus >= workers {
        let mut distinct = after.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), workers, "{after:?}");
    }
    // The calling thread, outside the pool, is left where it was.
    assert!(allowed_cpus().parse::<usize>().is_err() || cpus == 1);
}

#[test]
fn the_environment_variable_is_named_as_documented() {
    assert_eq!(qchess_sim::PIN_THREADS_ENV, "QCHESS_PIN_THREADS");
}
