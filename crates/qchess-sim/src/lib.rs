//! A chess-agnostic sparse state-vector simulator: the quantum core of Cantwell quantum chess.
//!
//! A basis state is a [`Key`]: 64 board (occupancy) bits plus capture-ancilla bits. Only
//! non-zero amplitudes are stored. Ancillas are never acted on after their capture, so the
//! state is a direct sum of *sectors*, one per ancilla value; each sector is a run of board
//! keys sorted by key with the amplitudes in a separate array (24 bytes per basis state with
//! `f64`, 16 with `f32`). Gates act sector by sector:
//!
//! * iSwap / inverse iSwap without controls relabel the two qubits and apply one in-place
//!   phase pass; with controls (slides) they are one merge pass that moves entries;
//! * sqrt-iSwap and its inverse (the only gates that create or cancel entries) pair each
//!   `|..0..1..>` entry with its `|..1..0..>` partner by a linear merge-join, no hashing;
//! * measurement is one probability scan (f64 block sums) and an order-keeping filter.
//!
//! Conventions are the paper's (Cantwell 2019, eq. 4a/4b): iSwap `|01> -> i|10>`,
//! `|10> -> i|01>`; sqrt-iSwap `|01> -> (|01> + i|10>)/sqrt2`; `|00>`, `|11>` unchanged.
//! A split `s^t1t2` is `iSwap(s, t2) * sqrt-iSwap(s, t1)` (sqrt acting first); a merge
//! `s1s2^t` is the inverse of the split `t^s2s1`.
//!
//! Every fallible operation that fails leaves the state exactly as it was. Results do not
//! depend on the rayon thread count.
//!
//! ```
//! use qchess_sim::{Controls, Predicate, State};
//! // Section 11.2 interference: a king on a1 (0); splits a1^a2b1, a2^a1b2, b1^a1b2.
//! let (a1, b1, a2, b2) = (0, 1, 8, 9);
//! let mut s = State::<f64>::classical(1 << a1);
//! s.split(a1, a2, b1, Controls::NONE)?;
//! s.split(a2, a1, b2, Controls::NONE)?;
//! s.split(b1, a1, b2, Controls::NONE)?;
//! assert!((s.probability(Predicate::One(a1)) - 0.7285533905932737).abs() < 1e-15);
//! assert!(s.probability(Predicate::One(a2)) < 1e-30);
//! # Ok::<(), qchess_sim::SimError>(())
//! ```
// Unsafe code is denied; the exceptions, each measured, are the `madvise` call in `pages.rs`,
// the prefetch hint in `prefetch.rs`, the streaming stores in `stream.rs` and the room grown
// without zeros in `grow.rs`.
#![deny(unsafe_code)]

mod amplitude;
mod backend;
pub mod bench;
mod controlled;
pub mod digest;
mod distribution;
mod error;
pub mod exact;
mod gates;
mod grow;
mod inspect;
mod kernels;
mod key;
mod lane;
mod load;
mod local;
mod marginals;
mod measure;
mod memory;
mod pages;
mod patterns;
mod perm;
mod pin;
mod prefetch;
mod state;
mod stream;
#[cfg(test)]
mod test_states;
mod undo;
mod visit;

pub use amplitude::Amplitude;
pub use backend::QuantumState;
pub use distribution::BoardDistributionIter;
pub use error::SimError;
pub use exact::{Exact, ParseQSqrt2Error, Probability, QSqrt2};
pub use inspect::MARGINALS_OF_MAX;
pub use key::{Controls, Key, Normalization, Predicate};
pub use load::{
    ADAPTIVE_THREADS_ENV, CONFIRM_MICROS, RECHECK_MILLIS, adaptive_threads, free_cores,
    set_adaptive_threads,
};
pub use local::{
    BoardPattern, LOCAL_MAX_QUBITS, LOCAL_SHARE_WORDS, LocalAnswer, LocalCircuit, LocalQuery,
    LocalShare,
};
pub use memory::{default_memory_budget, set_default_memory_budget};
pub use num_complex::Complex;
pub use pages::{ALIGN_MIN_BYTES, HUGE_MIN_BYTES, huge_pages, set_huge_pages};
pub use pin::{PIN_THREADS_ENV, pin_threads, set_pin_threads};
pub use state::{MAX_ANCILLAS, State};
pub use undo::{Pick, Removed};
