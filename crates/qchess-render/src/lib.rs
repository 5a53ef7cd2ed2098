//! # qchess-render
//!
//! SVG pictures of qchess positions, one renderer shared by every front end (the `qchess
//! render` subcommand, the Python package's `_repr_svg_`, the web board). It does no I/O: every
//! function takes a position and returns the SVG text.
//!
//! * [`cantwell`]: each square shaded by its occupancy probability and labelled with its
//!   percentage in a `<text>` element;
//! * [`niels`]: conventional pieces, and the indefinite halves of every pair with their red or
//!   blue mark, its facing and diagonal, and a line joining the two halves of a pair;
//! * [`akl`]: the board as one player sees it: collapsed types, and for a piece in superposition
//!   the types that player knows.
//!
//! Every square of the board is one `<g>` element with `data-square="e4"` holding all that is
//! drawn on that square (so a page embedding the picture can be read by tests). In a Cantwell
//! picture each square also carries `data-probability` with the exact probability (Rust's
//! shortest round-trip float text) and, when it is occupied, its percentage label inside it.
//!
//! ```
//! use qchess_cantwell::Game;
//! let svg = qchess_render::cantwell(&Game::new());
//! assert!(svg.contains(r#"data-square="e2""#) && svg.contains(">100%</text>"));
//! ```
#![forbid(unsafe_code)]

mod akl;
mod cantwell;
mod niels;
mod svg;

pub use akl::akl;
pub use cantwell::{CantwellBoard, cantwell, cantwell_board, percent_label};
pub use niels::niels;
pub use svg::{CELL, MARGIN, glyph};
