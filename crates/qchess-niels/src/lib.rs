//! Niel's Chess and its published variants: an independent implementation of the published
//! rules (T. Varga, "Niel's Chess - The battle of the quantum age", 2023, and "Niel's Chess: A
//! Quantum Game for Schools and the General Public"). Niel's Chess is a trademark of its
//! owner; this crate is not affiliated with it.
//!
//! The model is the paper's "piece in a box": conventional pieces, and indefinite pair
//! instances ([`Pair`]) of two halves carrying a red and a blue mark, each mark facing the
//! opponent or its owner, entangled pairs sharing a diagonal ([`Diagonal`]). Attempted
//! captures collapse pairs by dice rolls drawn from an injected RNG (or forced rolls), every
//! roll is recorded, and a [`GameRecord`] replays exactly. Legality enumerates the finitely
//! many collapse outcomes of a move and rejects it if any of positive probability leaves the
//! mover's king in check (8.7: attacked with a positive chance of a successful capture).
//! qchess-board supplies squares, geometries and attack tables (FIDE Articles 1-5).
//!
//! ```
//! use qchess_niels::{Game, Move, Position, Rules};
//! // Schools paper, Fig. 4-5: White's pawn on f5 attempts to capture the rook on e6 (and d4);
//! // Black rolls a 3 and the rook collapses to e6, where its blue mark stands.
//! let start: Position = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1".parse().unwrap();
//! let mut game = Game::from_position(Rules::default(), start);
//! let outcome = game.play_with_rolls(&"f5e6".parse::<Move>().unwrap(), &[3]).unwrap();
//! assert_eq!(outcome.captured.map(|p| p.fen_char()), Some('r'));
//! assert_eq!(game.position().to_string(), "4k3/8/4P3/8/8/8/8/4K3 b - - 0 1");
//! ```
#![forbid(unsafe_code)]

mod attacks;
mod error;
mod fen;
mod game;
mod legal;
mod movegen;
mod moves;
mod pair;
mod position;
mod quantum;
mod record;
mod render;
mod resolve;
mod rules;
mod token;

pub use error::NielsError;
pub use fen::PAPER_BOARDS;
pub use game::{DrawReason, Game, PlayedMove, Status, color_name};
pub use legal::{
    CheckInfo, capture_chance, capture_chance_exact, check_info, has_legal_move, in_check,
    is_capture, legal_captures, legal_moves,
};
pub use moves::Move;
pub use pair::{Diagonal, Facing, Facings, Mark, Pair, PairId};
pub use position::{CastlingRights, Occupant, Position};
/// Exact probabilities (re-exported from `qchess-board`, shared with the other variants).
pub use qchess_board::Fraction;
pub use quantum::{GroupOutcome, group_outcomes, hadamard_marks};
pub use record::GameRecord;
pub use render::{render, render_oriented};
pub use resolve::{Collapse, MoveOutcome, Roll};
pub use rules::{RULE_NAMES, Rules};
pub use token::{format_token, parse_token};
