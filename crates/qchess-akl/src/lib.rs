//! Akl-style quantum chess: every non-king piece is a superposition of two piece types that
//! collapses to one of them, with probability 1/2 each, when its owner touches it.
//!
//! The rules are those of `akl-style-quantum-chess-rules.txt` as settled in the project's
//! rules notes; every reading of an unclear point is in `docs/akl.md`. In short:
//!
//! * set-up: the standard position; each side's 15 non-king pieces carry their standard type
//!   as primary type and a secondary type from a seeded random permutation of those 15 types;
//!   all start in superposition; kings are always classical;
//! * a turn: touch a piece ([`Game::touch`]); a quantum piece collapses and both players see
//!   the type; if the piece has no legal move, or the collapse put the enemy king in check, the
//!   turn is over; otherwise it must move ([`Game::play`]);
//! * chess movement without en passant; kings may stand in check and are captured to win;
//!   castling needs an untouched king and rook and no check on the king's path;
//! * a piece ending a move on a dark square returns to superposition, on a light square it
//!   stays classical; promotion keeps the pawn's quantum nature;
//! * draws: bare kings, or 100 plies without a capture or a pawn move.
//!
//! ```
//! use qchess_akl::{Game, GameRecord, PieceState};
//! use qchess_board::Square;
//! // Fool's Mate as the rules text writes it (collapses of the pawns inferred from their moves).
//! let text = "[Seed \"11\"]\n1. f2 -> f3\n2. e7 -> e5\n3. g2 -> g4\n4. <Q|d8> -> h4#\n";
//! let game = GameRecord::parse(text).unwrap().replay().unwrap();
//! let h4 = game.position().piece(Square::H4).unwrap();
//! assert_eq!(h4.state, PieceState::Quantum); // h4 is dark: the queen is in superposition again
//! ```
#![forbid(unsafe_code)]

mod bot;
mod entry;
mod error;
mod fen;
mod game;
mod game_record;
mod hidden;
mod moves;
mod notation;
mod piece;
mod position;
mod record;
mod token;
mod view;

pub use bot::RandomMover;
pub use error::AklError;
pub use game::{DrawReason, Game, GameStatus, Rules, TouchOutcome, TouchResult, Visibility};
pub use game_record::GameRecord;
pub use moves::{AklMove, CastleSide, PROMOTION_TYPES, can_castle, moves_as};
pub use notation::{Style, parse_destination};
pub use piece::{AklPiece, PieceState, TypePair, TypeSet};
pub use position::{AklPosition, attacks_of, is_dark};
pub use record::{CaptureNote, Destination, TurnEntry};
pub use view::{PlayerView, ViewPiece};
