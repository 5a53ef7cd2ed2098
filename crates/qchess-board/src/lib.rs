//! The classical chess layer shared by every qchess rule system: squares, bitboards, board
//! geometries from 4x4 to 8x8, attack tables (magic bitboards built at compile time), FEN,
//! pseudo-legal and legal move generation, Zobrist hashing and perft.
//!
//! Squares are indexed rank * 8 + file (a1 = 0, h8 = 63) on every board; a smaller board of
//! W files x H ranks occupies the a1 corner and is described by a [`Geometry`].
//!
//! ```
//! use qchess_board::{attacks, Bitboard, Geometry, Square};
//! let g = Geometry::new(5, 6).unwrap();
//! let rook = attacks::rook_attacks(Square::A1, Bitboard::EMPTY) & g.mask();
//! assert_eq!(rook.count(), 4 + 5);
//! ```
#![forbid(unsafe_code)]

pub mod attacks;
mod bitboard;
mod color;
mod geometry;
mod piece;
mod square;

pub use attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, queen_attacks,
    rook_attacks,
};
pub use bitboard::{Bitboard, BitboardIter};
pub use color::Color;
pub use geometry::{Geometry, GeometryError};
pub use piece::{Piece, PieceKind};
pub use square::{ParseSquareError, Square};
