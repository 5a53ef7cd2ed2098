//! Niel's Chess positions: conventional pieces, indefinite halves with their marks, pairs.

use crate::svg::{CELL, Canvas};
use qchess_board::{Color, Square};
use qchess_niels::{Diagonal, Facing, Mark, Occupant, Position, Rules};
use std::fmt::Write;

/// The SVG picture of a Niel's Chess position (any board size of the rules).
///
/// Every square of the board is a `<g data-square="..">`. A conventional piece carries
/// `data-piece` (its FEN letter). An indefinite half also carries `data-pair` (piece letter
/// and fill pattern, as in the text notation: `N1`), `data-mark` (`red` / `blue`),
/// `data-facing` (`opponent` / `owner`), `data-diagonal` (`+`, `-` or absent) and
/// `data-probability` (the chance a roll collapses the pair onto this half, under `rules`).
/// The half's mark is a dot towards the side it faces, on the vertical mid-line or on the
/// group's diagonal; a dashed line joins the two halves of a pair.
pub fn niels(pos: &Position, rules: &Rules) -> String {
    let g = pos.geometry();
    let side = match pos.side_to_move() {
        Color::White => "White",
        Color::Black => "Black",
    };
    let mut c = Canvas::new(
        "niels",
        g.width(),
        g.height(),
        &format!("Niel's Chess, {side} to move"),
        ".pair-link{stroke:#6a3d9a;stroke-width:2;stroke-dasharray:5 4;fill:none;opacity:.7}",
    );
    let half = CELL as i32 / 2;
    for rank in 0..g.height() {
        for file in 0..g.width() {
            let sq = Square::new(file, rank);
            let mut attrs = Vec::new();
            let occupant = pos.occupant(sq);
            let mut mark_dot = None;
            let mut letter = None;
            match occupant {
                None => {}
                Some(Occupant::Piece(p)) => {
                    attrs.push(("data-piece", p.fen_char().to_string()));
                    letter = Some(p);
                }
                Some(Occupant::Half { .. }) => {
                    if let Some(pair) = pos.pair_at(sq) {
                        let mark = pair.mark_on(sq).unwrap_or(Mark::Red);
                        let facing = pair.facings.of(mark);
                        attrs.push(("data-piece", pair.piece.fen_char().to_string()));
                        attrs.push((
                            "data-pair",
                            format!("{}{}", pair.piece.fen_char(), pair.pattern),
                        ));
                        attrs.push((
                            "data-mark",
                            match mark {
                                Mark::Red => "red",
                                Mark::Blue => "blue",
                            }
                            .to_string(),
                        ));
                        attrs.push((
                            "data-facing",
                            match facing {
                                Facing::Opponent => "opponent",
                                Facing::Owner => "owner",
                            }
                            .to_string(),
                        ));
                        if let Some(d) = pair.diagonal {
                            attrs.push(("data-diagonal", d.to_char().to_string()));
                        }
                        attrs.push((
                            "data-probability",
                            format!("{}", pair.facings.probability(mark, rules)),
                        ));
                        letter = Some(pair.piece);
                        // Up on the picture is towards Black: a white mark facing the opponent
                        // points up, a black one down.
                        let up = (pair.piece.color == Color::White) == (facing == Facing::Opponent);
                        let dy = if up { -(half - 9) } else { half - 9 };
                        let dx = match pair.diagonal {
                            None => 0,
                            // The +45 degree diagonal rises to the right.
                            Some(Diagonal::Plus) => -dy,
                            Some(Diagonal::Minus) => dy,
                        };
                        mark_dot = Some((mark, dx, dy));
                    }
                }
            }
            c.open_square(sq, &attrs);
            if let Some(p) = letter {
                c.piece(sq, &crate::glyph(p).to_string(), 0);
            }
            if let Some((mark, dx, dy)) = mark_dot {
                let (x, y) = c.centre(sq);
                let fill = match mark {
                    Mark::Red => "#d62728",
                    Mark::Blue => "#1f5fd6",
                };
                let mut dot = String::new();
                let _ = write!(
                    dot,
                    "<circle class=\"mark\" cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{fill}\" \
                     stroke=\"#fff\" stroke-width=\"1.5\"/>",
                    x as i32 + dx,
                    y as i32 + dy
                );
                c.raw(&dot);
            }
            c.close_square();
        }
    }
    for pair in pos.pairs() {
        let (x1, y1) = c.centre(pair.red);
        let (x2, y2) = c.centre(pair.blue);
        let mut line = String::new();
        let _ = write!(
            line,
            "<line class=\"pair-link\" data-pair=\"{}{}\" data-squares=\"{} {}\" x1=\"{x1}\" \
             y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\"/>",
            pair.piece.fen_char(),
            pair.pattern,
            pair.red,
            pair.blue
        );
        c.raw(&line);
    }
    c.finish()
}
