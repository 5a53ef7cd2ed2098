//! The MPI transport (rsmpi over the system's MPI library), feature `mpi`.

use crate::comm::{Comm, CommError, MAX_MESSAGE_WORDS};
use mpi::Count;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// `MPI_COMM_WORLD` of an initialised MPI environment (finalised when dropped).
pub struct MpiComm {
    world: SimpleCommunicator,
    // Dropped last: finalises MPI.
    _universe: Universe,
}

impl MpiComm {
    /// Initialises MPI; `None` if it was already initialised in this process.
    pub fn init() -> Option<Self> {
        let universe = mpi::initialize()?;
        let world = universe.world();
        Some(Self {
            world,
            _universe: universe,
        })
    }
}

fn displacements(counts: &[Count]) -> Vec<Count> {
    counts
        .iter()
        .scan(0 as Count, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect()
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn all_gather(&self, mine: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; mine.len() * self.size()];
        self.world.all_gather_into(mine, &mut out[..]);
        out
    }

    fn all_to_all(&self, send: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, CommError> {
        let total: usize = send.iter().map(Vec::len).sum();
        if let Some(v) = send.iter().find(|v| v.len() > MAX_MESSAGE_WORDS) {
            return Err(CommError::MessageTooLarge { words: v.len() });
        }
        if total > MAX_MESSAGE_WORDS {
            return Err(CommError::MessageTooLarge { words: total });
        }
        let counts: Vec<Count> = send.iter().map(|v| v.len() as Count).collect();
        let mut recv_counts = vec![0 as Count; self.size()];
        self.world
            .all_to_all_into(&counts[..], &mut recv_counts[..]);
        let flat: Vec<u64> = send.concat();
        drop(send);
        let recv_total: usize = recv_counts.iter().map(|&c| c as usize).sum();
        let mut recv = vec![0u64; recv_total];
        {
            let displs = displacements(&counts);
            let recv_displs = displacements(&recv_counts);
            let sp = Partition::new(&flat[..], &counts[..], &displs[..]);
            let mut rp = PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
            self.world.all_to_all_varcount_into(&sp, &mut rp);
        }
        let mut out = Vec::with_capacity(self.size());
        let mut at = 0usize;
        for &c in &recv_counts {
            out.push(recv[at..at + c as usize].to_vec());
            at += c as usize;
        }
        Ok(out)
    }

    /// The send buffers are flattened into one copy before they are freed (`sent` more
    /// words), then the words arrive in one array that is split into the returned buffers
    /// (`received` more): the larger of the two.
    fn all_to_all_staging_words(&self, sent: usize, received: usize) -> usize {
        sent.max(received)
    }

    fn barrier(&self) {
        self.world.barrier();
    }
}
