//! The few collective operations the sharded state needs, behind a trait: one rank in one
//! process ([`Solo`]), ranks as threads of one process ([`ThreadComm`], for tests without
//! MPI), or MPI ranks (`MpiComm`, feature `mpi`).
//!
//! Reductions are built on [`Comm::all_gather`] and summed in rank order on every rank, so
//! every rank gets bit-for-bit the same sum whatever reduction tree the transport would use.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex};

/// Why a collective exchange could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommError {
    /// One message would exceed what the transport can send at once (MPI counts are `i32`).
    MessageTooLarge {
        /// Words (u64) in the message.
        words: usize,
    },
}

impl std::fmt::Display for CommError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CommError::MessageTooLarge { words } => {
                write!(
                    f,
                    "a message of {words} words exceeds the transport's limit"
                )
            }
        }
    }
}

impl std::error::Error for CommError {}

/// Most words one rank sends another in one exchange (MPI counts are `i32`); the sharded
/// state refuses, on every rank, an exchange that would need more.
pub const MAX_MESSAGE_WORDS: usize = i32::MAX as usize;

/// Collective operations over a fixed group of ranks. Every rank must make the same calls in
/// the same order (they are collective).
pub trait Comm {
    /// This rank's index, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Every rank passes the same number of words; returns every rank's words in rank order.
    fn all_gather(&self, mine: &[u64]) -> Vec<u64>;
    /// `send[r]` goes to rank `r` (`send.len() == size()`); returns, in rank order, what each
    /// rank sent to this one.
    fn all_to_all(&self, send: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, CommError>;
    /// Words the transport itself holds at the peak of one [`Comm::all_to_all`] beyond the
    /// buffers it is handed and returns, when this rank sends `sent` words in all and
    /// receives `received` (a memory budget counts them). None by default: the buffers are
    /// passed on as they are.
    ///
    /// ```
    /// use qchess_mpi::comm::{Comm, Solo};
    /// assert_eq!(Solo.all_to_all_staging_words(10, 10), 0);
    /// ```
    fn all_to_all_staging_words(&self, sent: usize, received: usize) -> usize {
        let _ = (sent, received);
        0
    }
    /// Waits until every rank has called it.
    fn barrier(&self);
}

/// The local-set capacity a sharded state gets when none is given.
pub const DEFAULT_CAPACITY: usize = 8;

thread_local! {
    static CONTEXT: RefCell<Option<(Rc<dyn Comm>, usize)>> = const { RefCell::new(None) };
}

/// Makes `comm` the transport of every sharded state this thread creates or uses, with local
/// sets of `capacity` qubits by default. A sharded state (like the game generic over
/// [`qchess_sim::QuantumState`] that holds it) is used on the thread that installed its
/// transport; without one, it is a single rank ([`Solo`]).
///
/// ```
/// use qchess_mpi::comm::{Solo, current, install};
/// use std::rc::Rc;
/// install(Rc::new(Solo), 6);
/// assert_eq!(current().size(), 1);
/// ```
pub fn install(comm: Rc<dyn Comm>, capacity: usize) {
    CONTEXT.with(|c| *c.borrow_mut() = Some((comm, capacity)));
}

/// This thread's transport ([`Solo`] if none was installed).
pub fn current() -> Rc<dyn Comm> {
    CONTEXT.with(|c| {
        c.borrow().as_ref().map_or_else(
            || Rc::new(Solo) as Rc<dyn Comm>,
            |(comm, _)| Rc::clone(comm),
        )
    })
}

/// This thread's default local-set capacity ([`DEFAULT_CAPACITY`] if none was installed).
pub fn default_capacity() -> usize {
    CONTEXT.with(|c| c.borrow().as_ref().map_or(DEFAULT_CAPACITY, |(_, k)| *k))
}

/// Element-wise sums of `mine` over all ranks, added in rank order (the same bits everywhere).
///
/// ```
/// use qchess_mpi::comm::{Solo, sum_f64};
/// assert_eq!(sum_f64(&Solo, &[0.5, 2.0]), vec![0.5, 2.0]);
/// ```
pub fn sum_f64<C: Comm + ?Sized>(comm: &C, mine: &[f64]) -> Vec<f64> {
    let words: Vec<u64> = mine.iter().map(|x| x.to_bits()).collect();
    let all = comm.all_gather(&words);
    let mut out = vec![0.0f64; mine.len()];
    for chunk in all.chunks(mine.len().max(1)) {
        for (o, w) in out.iter_mut().zip(chunk) {
            *o += f64::from_bits(*w);
        }
    }
    out
}

/// Element-wise integer sums over all ranks (wrapping).
///
/// ```
/// use qchess_mpi::comm::{Solo, sum_u64};
/// assert_eq!(sum_u64(&Solo, &[3, 4]), vec![3, 4]);
/// ```
pub fn sum_u64<C: Comm + ?Sized>(comm: &C, mine: &[u64]) -> Vec<u64> {
    let all = comm.all_gather(mine);
    let mut out = vec![0u64; mine.len()];
    for chunk in all.chunks(mine.len().max(1)) {
        for (o, w) in out.iter_mut().zip(chunk) {
            *o = o.wrapping_add(*w);
        }
    }
    out
}

/// Element-wise maxima over all ranks.
///
/// ```
/// use qchess_mpi::comm::{Solo, max_f64};
/// assert_eq!(max_f64(&Solo, &[1.5]), vec![1.5]);
/// ```
pub fn max_f64<C: Comm + ?Sized>(comm: &C, mine: &[f64]) -> Vec<f64> {
    let words: Vec<u64> = mine.iter().map(|x| x.to_bits()).collect();
    let all = comm.all_gather(&words);
    let mut out = vec![f64::NEG_INFINITY; mine.len()];
    for chunk in all.chunks(mine.len().max(1)) {
        for (o, w) in out.iter_mut().zip(chunk) {
            *o = o.max(f64::from_bits(*w));
        }
    }
    out
}

/// Rank 0's value of `x` on every rank.
///
/// ```
/// use qchess_mpi::comm::{Solo, broadcast_f64};
/// assert_eq!(broadcast_f64(&Solo, 0.25), 0.25);
/// ```
pub fn broadcast_f64<C: Comm + ?Sized>(comm: &C, x: f64) -> f64 {
    f64::from_bits(comm.all_gather(&[x.to_bits()])[0])
}

/// A single rank: every collective is the identity.
///
/// ```
/// use qchess_mpi::comm::{Comm, Solo};
/// assert_eq!(Solo.all_to_all(vec![vec![7]]).unwrap(), vec![vec![7]]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Solo;

impl Comm for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn all_gather(&self, mine: &[u64]) -> Vec<u64> {
        mine.to_vec()
    }
    fn all_to_all(&self, send: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, CommError> {
        Ok(send)
    }
    fn barrier(&self) {}
}

struct Shared {
    size: usize,
    barrier: Meeting,
    gather: Mutex<Vec<Vec<u64>>>,
    /// `mail[to][from]`.
    mail: Mutex<Vec<Vec<Vec<u64>>>>,
    /// Each rank's current collective: its kind and, for an all-gather, its word count.
    calls: Mutex<Vec<(&'static str, usize)>>,
}

/// The threads' barrier: every rank meets the others; a rank that has left (its closure
/// returned or panicked) while others still wait makes them panic at once instead of
/// waiting for ever (ranks that took different branches end at different times).
struct Meeting {
    size: usize,
    /// (ranks waiting, generation, ranks left).
    state: Mutex<(usize, u64, usize)>,
    turn: Condvar,
}

impl Meeting {
    fn new(size: usize) -> Self {
        Self {
            size,
            state: Mutex::new((0, 0, 0)),
            turn: Condvar::new(),
        }
    }

    fn wait(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let left = |st: &(usize, u64, usize)| {
            panic!(
                "collective mismatch: {} of {} ranks left while another waits in a collective",
                st.2, self.size
            )
        };
        if st.2 > 0 {
            left(&st);
        }
        st.0 += 1;
        if st.0 == self.size {
            st.0 = 0;
            st.1 += 1;
            self.turn.notify_all();
            return;
        }
        let generation = st.1;
        while st.1 == generation {
            if st.2 > 0 {
                left(&st);
            }
            st = self.turn.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn leave(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.2 += 1;
        self.turn.notify_all();
    }
}

/// Marks its rank as gone from the [`Meeting`] when dropped.
struct Leave(Arc<Shared>);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.barrier.leave();
    }
}

/// Ranks as threads of one process: the same collective semantics as MPI, so the sharded
/// state's tests run with several ranks without OpenMPI. Stricter than MPI where a test
/// needs it: ranks that call different collectives at the same step (or an all-gather of
/// different lengths), or that wait for a rank which has already ended, panic at once with
/// the calls named, instead of waiting for ever.
///
/// ```
/// use qchess_mpi::comm::{Comm, ThreadComm, sum_u64};
/// let sums = ThreadComm::run(3, |c| sum_u64(&c, &[c.rank() as u64])[0]);
/// assert_eq!(sums, vec![3, 3, 3]);
/// ```
pub struct ThreadComm {
    rank: usize,
    shared: Arc<Shared>,
}

impl ThreadComm {
    /// Runs `f` on `size` ranks (one scoped thread each) and returns their results in rank
    /// order. A panic on one rank is re-raised after the others finish or block.
    pub fn run<F, R>(size: usize, f: F) -> Vec<R>
    where
        F: Fn(ThreadComm) -> R + Sync,
        R: Send,
    {
        let size = size.max(1);
        let shared = Arc::new(Shared {
            size,
            barrier: Meeting::new(size),
            gather: Mutex::new(vec![Vec::new(); size]),
            mail: Mutex::new(vec![vec![Vec::new(); size]; size]),
            calls: Mutex::new(vec![("", 0); size]),
        });
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let comm = ThreadComm {
                        rank,
                        shared: Arc::clone(&shared),
                    };
                    let f = &f;
                    scope.spawn(move || {
                        // However this rank ends (returned or panicked), the others must
                        // not wait for it in a collective.
                        let _leave = Leave(Arc::clone(&comm.shared));
                        f(comm)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }
}

impl ThreadComm {
    /// Records this rank's collective (`kind`, `words` for an all-gather, else 0) and meets
    /// the others; then every rank checks that all ranks are in the same collective and
    /// panics, all of them together, when they are not: ranks that took different branches
    /// (a step that failed on one rank alone) fail at once with the calls named, instead of
    /// waiting for ever. The caller meets the others once more before the next call.
    fn enter(&self, kind: &'static str, words: usize) {
        self.shared.calls.lock().unwrap_or_else(|p| p.into_inner())[self.rank] = (kind, words);
        self.shared.barrier.wait();
        let calls = self
            .shared
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if calls.iter().any(|&c| c != calls[0]) {
            panic!(
                "collective mismatch: the ranks called {calls:?} (kind, words) at the same step"
            );
        }
    }
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn all_gather(&self, mine: &[u64]) -> Vec<u64> {
        self.shared.gather.lock().unwrap_or_else(|p| p.into_inner())[self.rank] = mine.to_vec();
        self.enter("all_gather", mine.len());
        let out = self
            .shared
            .gather
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .concat();
        self.shared.barrier.wait();
        out
    }
    fn all_to_all(&self, send: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, CommError> {
        {
            let mut mail = self.shared.mail.lock().unwrap_or_else(|p| p.into_inner());
            for (to, words) in send.into_iter().enumerate() {
                mail[to][self.rank] = words;
            }
        }
        self.enter("all_to_all", 0);
        let out: Vec<Vec<u64>> = self.shared.mail.lock().unwrap_or_else(|p| p.into_inner())
            [self.rank]
            .iter_mut()
            .map(std::mem::take)
            .collect();
        self.shared.barrier.wait();
        Ok(out)
    }
    fn barrier(&self) {
        self.enter("barrier", 0);
        self.shared.barrier.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks in different collectives at the same step (one rank gathering two words, the
    /// others one) fail at once, all of them, naming the calls; they do not wait for ever.
    #[test]
    #[should_panic(expected = "collective mismatch")]
    fn ranks_in_different_collectives_fail_at_once() {
        ThreadComm::run(3, |c| {
            let mine = vec![7u64; if c.rank() == 1 { 2 } else { 1 }];
            c.all_gather(&mine)
        });
    }

    /// A rank that waits for one which has already ended fails at once.
    #[test]
    #[should_panic(expected = "left while another waits")]
    fn waiting_for_an_ended_rank_fails_at_once() {
        ThreadComm::run(2, |c| {
            if c.rank() == 0 {
                c.barrier();
            }
        });
    }

    /// Matching collectives of every kind pass the check.
    #[test]
    fn matching_collectives_pass() {
        let out = ThreadComm::run(2, |c| {
            c.barrier();
            let got = c.all_to_all(vec![vec![c.rank() as u64]; 2]).unwrap();
            (c.all_gather(&[1, 2]), got)
        });
        for (gathered, got) in out {
            assert_eq!(gathered, vec![1, 2, 1, 2]);
            assert_eq!(got, vec![vec![0], vec![1]]);
        }
    }
}
