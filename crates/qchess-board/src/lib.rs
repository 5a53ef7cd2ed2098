//! The classical chess layer shared by every qchess rule system: squares, bitboards, board
//! geometries from 4x4 to 8x8, attack tables (magic bitboards built at compile time), FEN,
//! pseudo-legal and legal move generation, Zobrist hashing and perft.
//!
//! Squares are indexed rank * 8 + file (a1 = 0, h8 = 63) on every board; a smaller board of
//! W files x H ranks occupies the a1 corner and is described by a [`Geometry`].
//!
//! ```
//! use qchess_board::{attacks, perft, Bitboard, Geometry, Position, Square};
//! let g = Geometry::new(5, 6).unwrap();
//! let rook = attacks::rook_attacks(Square::A1, Bitboard::EMPTY) & g.mask();
//! assert_eq!(rook.count(), 4 + 5);
//! assert_eq!(perft(&Position::startpos(), 2, true), 400);
//! ```
#![forbid(unsafe_code)]

pub mod attacks;
mod bitboard;
mod castling;
mod color;
mod fraction;
mod geometry;
mod movegen;
mod moves;
mod perft;
mod piece;
mod position;
mod square;
mod zobrist;

pub use attacks::{
    between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, line, pawn_attacks,
    queen_attacks, rook_attacks, rook_rays,
};
pub use bitboard::{Bitboard, BitboardIter};
pub use castling::{CastleSide, CastlingRights};
pub use color::Color;
pub use fraction::Fraction;
pub use geometry::{Geometry, GeometryError};
pub use moves::{Move, MoveList, ParseMoveError, PieceMoves, PieceMovesIter};
pub use perft::{perft, perft_divide};
pub use piece::{Piece, PieceKind};
pub use position::{
    FenError, FenField, IllegalMove, IllegalMoveReason, Position, STARTPOS_FEN, Undo, startpos_fen,
};
pub use square::{ParseSquareError, Square};
