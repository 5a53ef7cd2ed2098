//! # qchess-cantwell
//!
//! Cantwell quantum chess (Cantwell 2019, "Quantum Chess: Developing a Mathematical Framework
//! and Design Methodology for Creating Quantum Games"), in three layers:
//!
//! 1. [`circuit`]: occupancy circuits: every move type and variant of the paper's section 8
//!    applied to a [`qchess_sim::State`], with no piece types and no legality.
//! 2. The classical layer: piece types ([`PieceVector`]), flags ([`Flags`]), the possibility
//!    equations ([`possibility`]), Definition 2 and game end ([`GameStatus`]).
//! 3. The game API ([`Game`]): legal moves, apply and undo, read-outs, notation ([`QcanMove`]),
//!    serialised positions ([`Position`]).
//!
//! [`analysis`] holds the researcher's read-outs (Bell measures, log negativity, the
//! superposition upper bound of section 9).
//!
//! ```
//! use qchess_cantwell::Game;
//! use qchess_board::Square;
//! use rand::SeedableRng;
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
//! let mut game = Game::new();
//! game.apply("b1^a3c3", &mut rng).unwrap();
//! game.apply("e7e5", &mut rng).unwrap();
//! assert!((game.probability(Square::A3) - 0.5).abs() < 1e-12);
//! assert_eq!(game.history_notation(), vec!["b1^a3c3", "e7e5"]);
//! ```
#![forbid(unsafe_code)]

pub mod analysis;
pub mod circuit;
pub mod classical;
pub mod error;
pub mod game;
pub mod growth;
pub mod legal;
pub mod notation;
pub mod position;
pub mod possibility;
pub mod readouts;
pub mod status;

pub use classical::{CastlingRights, ClassicalLayer, FenError, Flags, PieceVector, STARTPOS_FEN};
pub use error::GameError;
pub use game::{Game, MoveRecord};
pub use notation::{MoveShape, NotationError, QcanMove, VariantMark};
pub use position::{AmplitudeEntry, Position};
pub use status::{EndReason, GameStatus, RuleOptions};
