//! Cantwell positions: squares shaded by occupancy probability, labelled with percentages.

use crate::svg::{CELL, Canvas};
use qchess_board::{Color, Piece, Square};
use qchess_cantwell::Game;
use qchess_cantwell::game::OCCUPIED_EPS;
use std::fmt::Write;

/// What a Cantwell picture shows: the marginal occupancy probability of every square and the
/// piece type the classical layer holds there. Built from a game by [`cantwell_board`], or by
/// hand from a read-out (the CLI builds it from an `eval` answer).
#[derive(Clone, Debug, PartialEq)]
pub struct CantwellBoard {
    /// Occupancy probability of each square, index a1 = 0 .. h8 = 63.
    pub probabilities: [f64; 64],
    /// The piece type on each square (drawn only where the probability is positive).
    pub pieces: [Option<Piece>; 64],
    /// The side to move (written in the title).
    pub side_to_move: Color,
}

/// The picture model of `game`'s current position.
pub fn cantwell_board(game: &Game) -> CantwellBoard {
    let mut pieces = [None; 64];
    for (i, slot) in pieces.iter_mut().enumerate() {
        if let Some(sq) = Square::from_index(i as u8) {
            *slot = game.piece_at(sq);
        }
    }
    CantwellBoard {
        probabilities: game.probabilities(),
        pieces,
        side_to_move: game.side_to_move(),
    }
}

/// The SVG picture of `game`'s current position (drawn by the module's `render_board`).
pub fn cantwell(game: &Game) -> String {
    render_board(&cantwell_board(game))
}

/// The percentage label of a probability: whole percentages without decimals (`50%`,
/// `100%`), others to one decimal (`12.5%`, `33.3%`), and `<0.1%` below 0.05 %.
///
/// ```
/// use qchess_render::percent_label;
/// assert_eq!(percent_label(0.5), "50%");
/// assert_eq!(percent_label(1.0 / 3.0), "33.3%");
/// assert_eq!(percent_label(0.125), "12.5%");
/// assert_eq!(percent_label(1e-6), "<0.1%");
/// ```
pub fn percent_label(p: f64) -> String {
    let pc = p * 100.0;
    if (pc - pc.round()).abs() < 1e-9 {
        format!("{:.0}%", pc.round())
    } else if pc < 0.05 {
        "<0.1%".to_string()
    } else {
        format!("{pc:.1}%")
    }
}

impl CantwellBoard {
    /// The SVG picture of this board.
    ///
    /// Every square is a `<g data-square=".." data-probability="..">` holding its background,
    /// a blue wash whose opacity grows with the probability, the piece symbol and (when the
    /// probability is positive) a `<text class="probability">` with the percentage.
    pub fn to_svg(&self) -> String {
        render_board(self)
    }
}

fn render_board(board: &CantwellBoard) -> String {
    let side = match board.side_to_move {
        Color::White => "White",
        Color::Black => "Black",
    };
    let mut c = Canvas::new(
        "cantwell",
        8,
        8,
        &format!("Cantwell quantum chess, {side} to move: occupancy probabilities"),
        ".probability{font-family:sans-serif;font-size:12px;fill:#102a5c;text-anchor:end}",
    );
    for i in 0..64u8 {
        let Some(sq) = Square::from_index(i) else {
            continue;
        };
        let p = board.probabilities[usize::from(i)];
        let mut attrs = vec![("data-probability", format!("{p}"))];
        let occupied = p > OCCUPIED_EPS;
        let piece = board.pieces[usize::from(i)].filter(|_| occupied);
        if let Some(pc) = piece {
            attrs.push(("data-piece", pc.fen_char().to_string()));
        }
        c.open_square(sq, &attrs);
        if occupied {
            let (x, y) = c.origin(sq);
            let mut wash = String::new();
            let _ = write!(
                wash,
                "<rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"#2f6fd6\" \
                 fill-opacity=\"{:.3}\"/>",
                0.6 * p.clamp(0.0, 1.0)
            );
            c.raw(&wash);
            if let Some(pc) = piece {
                c.piece(sq, &crate::glyph(pc).to_string(), 6);
            }
            let mut label = String::new();
            let _ = write!(
                label,
                "<text class=\"probability\" x=\"{}\" y=\"{}\">{}</text>",
                x + CELL - 4,
                y + CELL - 5,
                crate::svg::escape(&percent_label(p))
            );
            c.raw(&label);
        }
        c.close_square();
    }
    c.finish()
}
