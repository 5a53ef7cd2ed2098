//! The few collective operations the sharded state needs, behind a trait: one rank in one
//! process ([`Solo`]), ranks as threads of one process ([`ThreadComm`], for tests without
//! MPI), or MPI ranks (`MpiComm`, feature `mpi`).
//!
//! Reductions are built on [`Comm::all_gather`] and summed in rank order on every rank, so
//! every rank gets bit-for-bit the same sum whatever reduction tree the transport would use.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Barrier, Mutex};

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
    barrier: Barrier,
    gather: Mutex<Vec<Vec<u64>>>,
    /// `mail[to][from]`.
    mail: Mutex<Vec<Vec<Vec<u64>>>>,
}

/// Ranks as threads of one process: the same collective semantics as MPI, so the sharded
/// state's tests run with several ranks without OpenMPI.
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
            barrier: Barrier::new(size),
            gather: Mutex::new(vec![Vec::new(); size]),
            mail: Mutex::new(vec![vec![Vec::new(); size]; size]),
        });
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..size)
                .map(|rank| {
                    let comm = ThreadComm {
                        rank,
                        shared: Arc::clone(&shared),
                    };
                    let f = &f;
                    scope.spawn(move || f(comm))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
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
        self.shared.barrier.wait();
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
        self.shared.barrier.wait();
        let out: Vec<Vec<u64>> = self.shared.mail.lock().unwrap_or_else(|p| p.into_inner())
            [self.rank]
            .iter_mut()
            .map(std::mem::take)
            .collect();
        self.shared.barrier.wait();
        Ok(out)
    }
    fn barrier(&self) {
        self.shared.barrier.wait();
    }
}
