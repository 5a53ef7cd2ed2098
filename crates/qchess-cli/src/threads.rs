//! The thread pool every subcommand runs in.
//!
//! rayon's global pool panics on first use ("The global thread pool has not been
//! initialized") when it cannot start its threads, e.g. under a low process limit
//! (`ulimit -u`). So `qchess` never relies on it: each subcommand runs inside a pool built
//! here, and if the usual pool (one worker per core) cannot start, inside a one-thread pool
//! whose only worker is the calling thread (no thread is spawned), with a warning on stderr.

use crate::error::CliError;

/// Stack size of the pool's workers: the usual main-thread size, so running a subcommand on
/// a worker instead of the main thread changes nothing.
const WORKER_STACK: usize = 8 << 20;

/// Runs `f` inside a rayon pool: the usual one, or, when its threads cannot be started, one
/// that runs everything on the calling thread. Only when even that fails is it an error.
pub fn run_in_pool<F>(f: F) -> Result<(), CliError>
where
    F: FnOnce() -> Result<(), CliError> + Send,
{
    match rayon::ThreadPoolBuilder::new()
        .stack_size(WORKER_STACK)
        .build()
    {
        Ok(pool) => pool.install(f),
        Err(err) => {
            eprintln!(
                "qchess: warning: cannot start worker threads ({err}); running on one thread"
            );
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .use_current_thread()
                .build()
                .map_err(|e| CliError::failure(format!("cannot start a thread pool: {e}")))?;
            pool.install(f)
        }
    }
}

/// Runs `f` in a pool of exactly `threads` workers when a count was asked for (`--threads T`
/// of the bench subcommands; an error "cannot start T threads" when they cannot all be
/// started), else in the pool it is called from. Returns `f`'s result and the number of
/// threads it ran with.
pub fn with_threads<R, F>(threads: Option<usize>, f: F) -> Result<(R, usize), CliError>
where
    R: Send,
    F: FnOnce() -> R + Send,
{
    match threads {
        None => Ok((f(), rayon::current_num_threads())),
        Some(0) => Err(CliError::usage("--threads must be at least 1")),
        Some(t) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .stack_size(WORKER_STACK)
                .build()
                .map_err(|e| CliError::failure(format!("cannot start {t} threads: {e}")))?;
            Ok((pool.install(f), t))
        }
    }
}
