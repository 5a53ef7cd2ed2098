//! # qchess-engine
//!
//! A game-playing engine for the three quantum chess variants of the workspace (Cantwell,
//! Niel's Chess, Akl-style), searching on exact outcome probabilities rather than samples.
//!
//! One search frame serves all three: each game type exposes, through the small
//! [`SearchNode`] trait, its legal moves, the chance outcomes of a move with their exact
//! probabilities (Cantwell measurements, Niel's dice and collapses, Akl touch and capture
//! collapses, all computed by the rule crates themselves), apply and undo, and an evaluation
//! on exact quantities. The [`Engine`] runs expectimax with alpha-beta at decision nodes and
//! Star1 bounds at chance nodes, iterative deepening, a transposition table, move ordering and
//! a quiescence step over captures. See `docs/engine.md`.
//!
//! ```
//! use qchess_engine::{Engine, EngineOptions, Limits};
//! let game = qchess_niels::Game::new(Default::default(), "5x6".parse().unwrap()).unwrap();
//! let mut engine = Engine::new(EngineOptions { seed: 1, ..EngineOptions::default() });
//! let result = engine.search(&game, &Limits::depth(1)).unwrap();
//! assert_eq!(result.depth, 1);
//! assert!(game.legal_moves().contains(&result.best));
//! ```
#![forbid(unsafe_code)]

pub mod akl;
pub mod cantwell;
mod eval;
pub mod niels;
mod node;
mod search;

pub use akl::{AklChoice, AklNode};
pub use cantwell::CantwellNode;
pub use niels::{NielsNode, NielsOutcome};
pub use node::{SearchNode, Searchable, Terminal};
pub use search::{Engine, EngineError, EngineOptions, Limits, SearchResult, WIN_SCORE};
