//! # qchess-cantwell
//!
//! Cantwell quantum chess (Cantwell 2019, "Quantum Chess: Developing a Mathematical Framework
//! and Design Methodology for Creating Quantum Games"), in three layers:
//!
//! 1. [`circuit`]: occupancy circuits: every move type and variant of the paper's section 8
//!    applied to a [`qchess_sim::State`], with no piece types and no legality.
//! 2. The classical layer: piece types, flags, the possibility equations, the rules.
//! 3. The game API: legal moves, apply and undo, read-outs, notation.
//!
//! [`analysis`] holds the researcher's read-outs (Bell measures, log negativity, the
//! superposition upper bound of section 9).
#![forbid(unsafe_code)]

pub mod analysis;
pub mod circuit;
