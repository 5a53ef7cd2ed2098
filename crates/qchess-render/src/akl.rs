//! Akl-style positions as one player sees them: collapsed types and known pair types.

use crate::svg::{CELL, Canvas};
use qchess_akl::{PieceState, PlayerView, is_dark};
use qchess_board::{Color, Piece, PieceKind, Square};
use std::fmt::Write;

/// The SVG picture of `view`: what its viewer knows and nothing more.
///
/// Every square is a `<g data-square="..">`, dark squares (where a moved piece returns to
/// superposition) carry `data-dark="true"`. A piece carries `data-color` (`w` / `b`),
/// `data-state` (`quantum` / `classical`) and `data-known`: the FEN letters of the types the
/// viewer knows (`NB` for a knight-or-bishop pair, `N` when only the knight is known). A
/// collapsed piece shows its type; a piece in superposition shows its known types side by
/// side in a dashed ring, with `?` for a type the viewer does not know.
pub fn akl(view: &PlayerView) -> String {
    let name = |c: Color| match c {
        Color::White => "White",
        Color::Black => "Black",
    };
    let mut c = Canvas::new(
        "akl",
        8,
        8,
        &format!(
            "Akl-style quantum chess as {} sees it, {} to move",
            name(view.viewer),
            name(view.side_to_move)
        ),
        ".quantum-ring{fill:none;stroke:#6a3d9a;stroke-width:2;stroke-dasharray:4 3}\
         .unknown{font-family:sans-serif;font-size:22px;font-weight:bold;fill:#6a3d9a;\
         text-anchor:middle;dominant-baseline:central}\
         .small{font-size:30px}",
    );
    c.raw(&format!(
        "<desc data-viewer=\"{}\">types known to {}</desc>",
        view.viewer.fen_char(),
        name(view.viewer)
    ));
    for i in 0..64u8 {
        let Some(sq) = Square::from_index(i) else {
            continue;
        };
        let mut attrs = Vec::new();
        if is_dark(sq) {
            attrs.push(("data-dark", "true".to_string()));
        }
        let vp = view.piece(sq);
        let letter = |color: Color, k: PieceKind| Piece::new(color, k).fen_char();
        if let Some(p) = vp {
            attrs.push(("data-color", p.color.fen_char().to_string()));
            let (state, known): (&str, String) = match p.state {
                PieceState::Classical(k) => ("classical", letter(p.color, k).to_string()),
                PieceState::Quantum => (
                    "quantum",
                    match p.pair {
                        Some(pair) => [pair.primary, pair.secondary]
                            .iter()
                            .map(|k| letter(p.color, *k))
                            .collect(),
                        None => p.known.iter().map(|k| letter(p.color, k)).collect(),
                    },
                ),
            };
            attrs.push(("data-state", state.to_string()));
            attrs.push(("data-known", known));
        }
        c.open_square(sq, &attrs);
        if let Some(p) = vp {
            match p.state {
                PieceState::Classical(k) => {
                    c.piece(sq, &crate::glyph(Piece::new(p.color, k)).to_string(), 0)
                }
                PieceState::Quantum => quantum_piece(&mut c, sq, p),
            }
        }
        c.close_square();
    }
    c.finish()
}

fn quantum_piece(c: &mut Canvas, sq: Square, p: &qchess_akl::ViewPiece) {
    let (x, y) = c.centre(sq);
    let kinds: Vec<PieceKind> = match p.pair {
        Some(pair) => vec![pair.primary, pair.secondary],
        None => p.known.iter().collect(),
    };
    let mut s = String::new();
    let _ = write!(
        s,
        "<circle class=\"quantum-ring\" cx=\"{x}\" cy=\"{y}\" r=\"{}\"/>",
        CELL / 2 - 3
    );
    let slots = [x - CELL / 5, x + CELL / 5];
    for (slot, sx) in slots.iter().enumerate() {
        match kinds.get(slot) {
            Some(k) => {
                let _ = write!(
                    s,
                    "<text class=\"piece small\" x=\"{sx}\" y=\"{y}\">{}</text>",
                    crate::glyph(Piece::new(p.color, *k))
                );
            }
            None => {
                let _ = write!(s, "<text class=\"unknown\" x=\"{sx}\" y=\"{y}\">?</text>");
            }
        }
    }
    c.raw(&s);
}
