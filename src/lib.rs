//! # qchess
//!
//! Quantum chess in Rust: three published rule families on one classical board.
//!
//! | module | crate | what it is |
//! |---|---|---|
//! | [`board`] | `qchess-board` | squares, bitboards, geometries, attacks, FEN, move generation, perft |
//! | [`sim`] | `qchess-sim` | chess-agnostic sparse state-vector simulator (iSwap, sqrt-iSwap, measurement) |
//! | [`cantwell`] | `qchess-cantwell` | Cantwell quantum chess (Cantwell 2019) |
//! | [`niels`] | `qchess-niels` | Niel's Chess and its variants (independent implementation of the published rules) |
//! | [`akl`] | `qchess-akl` | Akl-style quantum chess: pieces in a superposition of two types |
//!
//! This facade only re-exports the member crates; depend on a single member crate if that is
//! all you need.
#![forbid(unsafe_code)]

// The README's examples are compiled and run as doc tests of this crate.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use qchess_akl as akl;
pub use qchess_board as board;
pub use qchess_cantwell as cantwell;
pub use qchess_niels as niels;
pub use qchess_sim as sim;
