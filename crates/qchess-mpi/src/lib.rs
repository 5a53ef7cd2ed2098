//! The sparse quantum-chess state sharded over MPI ranks.
//!
//! Each rank holds, as an ordinary [`qchess_sim::State`], the basis states whose board key,
//! with a small set L of "local" qubits masked out, hashes to it ([`plan::owner`]). A gate
//! whose qubits are all in L finds both partners of every pair on one rank, so it runs the
//! local simulator's kernels with no communication. A gate on a qubit outside L first
//! changes L ([`plan::LocalSet`], least recently used qubit out) and moves the entries whose
//! owner changes in one all-to-all exchange. Probabilities are local sums plus one
//! all-gather; projections are local; measurement and sampling use one seeded draw.
//!
//! The transport is the [`comm::Comm`] trait: [`comm::Solo`], [`comm::ThreadComm`] (ranks
//! as threads, for tests) and, with the cargo feature `mpi`, `mpi_comm::MpiComm` over rsmpi.
//! See `docs/distributed.md` for the design and the cost model.
//!
//! ```
//! use qchess_mpi::{ShardedState, comm::{ThreadComm, install}, plan::LocalSet};
//! use qchess_sim::{Controls, Predicate};
//! use std::rc::Rc;
//! // A king on a1 splits twice, on 3 ranks; L holds only 3 qubits, so gates exchange.
//! let probs = ThreadComm::run(3, |c| {
//!     install(Rc::new(c), 3);
//!     let mut s = ShardedState::<f64>::classical_with(1, LocalSet::new(3, &[]));
//!     s.split(0, 8, 1, Controls::NONE).unwrap();
//!     s.split(8, 16, 9, Controls::NONE).unwrap();
//!     s.probability(Predicate::One(16))
//! });
//! assert!(probs.iter().all(|p| (p - 0.25).abs() < 1e-15));
//! ```
#![forbid(unsafe_code)]

mod backend;
pub mod bench;
pub mod comm;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
pub mod plan;
mod readouts;
pub mod selftest;
mod sharded;

pub use sharded::{ShardedState, Traffic};
