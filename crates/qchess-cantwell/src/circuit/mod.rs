//! Layer 1: the occupancy circuits of the paper's section 8.
//!
//! A [`qchess_sim::State`] holds the 64 occupancy qubits (bit `i` = square `i`, a1 = 0) and
//! the capture ancillas. [`apply`] runs one [`OccupancyMove`]: a move type of section 8 with a
//! variant (Basic = the paper's standard move, Excluded = blocked, Capture), each with the
//! paper's measurement M1 and unitary, as fixed by rules-notes E1-E6 and D1-D8. Nothing here
//! knows piece types or legality: the classical layer chooses the type and variant.
//!
//! Conventions: iSwap |01> -> i|10>; a jump is iSwap(s, t); a split `s^t1t2` is
//! sqrt-iSwap(s, t1) then iSwap(s, t2) (rules-notes E5); a merge `s1s2^t` is the inverse of
//! the split `t^s2s1` (D8); a slide's path squares are controls that must be empty; a capture
//! first moves the target into a fresh ancilla (D1, D11). Measurement outcome 1 means the move
//! proceeds.
//!
//! ```
//! use qchess_cantwell::circuit::{apply, OccupancyMove};
//! use qchess_sim::{Key, State};
//! use rand::SeedableRng;
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
//! // Figure 15: the merge c3a3^b1 undoes the split b1^a3c3 exactly (rules-notes D8).
//! let b1 = 1u64 << 1;
//! let mut state = State::classical(b1);
//! for text in ["b1^a3c3:SPLIT_JUMP:BASIC", "c3a3^b1:MERGE_JUMP:BASIC"] {
//!     apply(&mut state, &text.parse().unwrap(), &mut rng).unwrap();
//! }
//! let amp = state.amplitude(Key::board(b1));
//! assert!((amp.re - 1.0).abs() < 1e-12 && amp.im.abs() < 1e-12);
//! ```

mod apply;
mod error;
mod journal;
mod move_type;
mod notation;
mod occupancy_move;
mod ops;

pub(crate) use apply::apply_recorded_within;
pub(crate) use apply::captures_needed;
pub use apply::{Applied, apply, apply_on, apply_recorded};
pub use error::CircuitError;
pub(crate) use journal::Tracked;
pub use journal::{Journal, Step};
pub use move_type::{MoveType, Variant};
pub use occupancy_move::{CastlingSquares, OccupancyMove};
pub use ops::PROBABILITY_FLOOR;
