//! Pinning the rayon pool's workers to one CPU each (opt-in, as OpenMP's `OMP_PROC_BIND`).
//!
//! A parallel pass wakes the pool's sleeping workers. On the 2-vCPU Firecracker VM of
//! docs/benchmarks.md ("Pinned workers and streamed kept entries"), a worker woken after
//! the machine has idled for a few tens of milliseconds is often placed on the CPU that is
//! already running the pass, and waits there for a scheduler slice (about 3 ms) before it joins: the probability scan of a
//! 1e7-entry state then takes 6.2 ms instead of 3.2, and a measurement 14-19 ms instead of
//! 9-10, in about half the calls of a program that does anything between them. A worker
//! bound to its own CPU is woken there (within about 0.1 ms measured).
//!
//! Off by default: a library should not decide where its user's threads run, and a bound
//! worker cannot leave a CPU another process is using. [`set_pin_threads`] turns it on for
//! the whole process, and so does the environment variable `QCHESS_PIN_THREADS=1` (also
//! `on`, `true`, `yes`), read once, for programs that cannot call it (the `qchess` tool, the
//! Python binding, the examples). When on, the first large parallel pass a pool runs binds
//! its worker `i` to the `i`-th CPU this process may use (modulo their number); the calling
//! thread outside the pool is not bound. Turning it off later stops binding further pools; it
//! does not unbind workers already bound. Results never depend on it, only speed does.

use std::cell::Cell;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

/// The environment variable that turns pinning on (`1`, `on`, `true`, `yes`).
pub const PIN_THREADS_ENV: &str = "QCHESS_PIN_THREADS";

/// Whether pinning is on.
static PIN: AtomicBool = AtomicBool::new(false);
/// Whether the global pool's workers are bound (it is used from threads outside any pool).
static GLOBAL_BOUND: AtomicBool = AtomicBool::new(false);
/// `QCHESS_PIN_THREADS` is applied once, before the first reading or setting.
static FROM_ENV: Once = Once::new();

thread_local! {
    /// Whether this thread (a pool worker) has been bound to its CPU, or tried to be.
    static BOUND: Cell<bool> = const { Cell::new(false) };
}

/// Applies [`PIN_THREADS_ENV`] the first time it is called.
fn read_env() {
    FROM_ENV.call_once(|| {
        if crate::load::env_switch(PIN_THREADS_ENV) == Some(true) {
            PIN.store(true, Ordering::Relaxed);
        }
    });
}

/// Turns pinning of the pool's workers on or off (off by default) for the whole process
/// ([`PIN_THREADS_ENV`] turns it on too). On, the next large parallel pass of each rayon pool
/// binds that pool's worker `i` to the `i`-th CPU this process may use (modulo their number);
/// the calling thread outside the pool is not bound, and turning it off later does not unbind
/// workers already bound. Where a worker woken after the machine idled is placed on the CPU
/// already running the pass (measured on a 2-vCPU Firecracker VM: half the large passes then
/// ran at one-thread speed, docs/benchmarks.md "Pinned workers and streamed kept entries"),
/// binding makes every pass use all the pool's threads. Off by default because a bound
/// worker cannot leave a CPU another process is using. Results never depend on it.
///
/// ```
/// qchess_sim::set_pin_threads(true);
/// assert!(qchess_sim::pin_threads());
/// qchess_sim::set_pin_threads(false);
/// assert!(!qchess_sim::pin_threads());
/// ```
pub fn set_pin_threads(on: bool) {
    read_env();
    PIN.store(on, Ordering::Relaxed);
}

/// Whether the pool's workers are bound to one CPU each before large parallel passes (see
/// [`set_pin_threads`]).
pub fn pin_threads() -> bool {
    read_env();
    PIN.load(Ordering::Relaxed)
}

/// Before a large parallel pass in the current pool: binds that pool's workers if pinning is
/// on and they are not bound yet. One thread-local (or atomic) read when there is nothing to
/// do.
pub(crate) fn ensure_bound() {
    if !pin_threads() {
        return;
    }
    let unbound = match rayon::current_thread_index() {
        // On a worker: the pool it belongs to.
        Some(_) => !BOUND.get(),
        // Outside every pool: the global one.
        None => !GLOBAL_BOUND.swap(true, Ordering::Relaxed),
    };
    if unbound {
        bind_current_pool();
    }
}

/// Whether this thread is a pool worker that [`ensure_bound`] bound to one CPU (or tried to):
/// its own affinity then says nothing about how many CPUs the process may use.
pub(crate) fn bound_here() -> bool {
    BOUND.get()
}

/// Marks this thread as bound, as [`bind_current_pool`] does on each worker (tests).
#[cfg(test)]
pub(crate) fn mark_bound_here() {
    BOUND.set(true);
}

/// Binds every worker of the current pool (the global one outside any pool) to one CPU:
/// worker `i` to the `i`-th CPU this process may use, modulo their number. Where the CPUs
/// cannot be listed or a worker cannot be bound, it stays where it was (and is not tried
/// again).
fn bind_current_pool() {
    let cpus = core_affinity::get_core_ids().unwrap_or_default();
    rayon::broadcast(|ctx| {
        if let Some(&cpu) = cpus.get(ctx.index() % cpus.len().max(1)) {
            core_affinity::set_for_current(cpu);
        }
        BOUND.set(true);
    });
}
