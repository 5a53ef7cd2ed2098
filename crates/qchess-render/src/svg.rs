//! The board frame shared by every variant: the `<svg>` element, squares, coordinates.

use qchess_board::{Color, Piece, PieceKind, Square};
use std::fmt::Write;

/// Side of one square, in SVG user units.
pub const CELL: u32 = 64;
/// Width of the border holding the coordinates.
pub const MARGIN: u32 = 24;

const LIGHT: &str = "#f0d9b5";
const DARK: &str = "#b58863";

/// The Unicode chess symbol of `piece` (white pieces outlined, black filled).
///
/// ```
/// use qchess_board::{Color, Piece, PieceKind};
/// assert_eq!(qchess_render::glyph(Piece::new(Color::White, PieceKind::Knight)), '\u{2658}');
/// ```
pub fn glyph(piece: Piece) -> char {
    let base = match piece.kind {
        PieceKind::King => 0x2654,
        PieceKind::Queen => 0x2655,
        PieceKind::Rook => 0x2656,
        PieceKind::Bishop => 0x2657,
        PieceKind::Knight => 0x2658,
        PieceKind::Pawn => 0x2659,
    };
    let code = if piece.color == Color::White {
        base
    } else {
        base + 6
    };
    char::from_u32(code).unwrap_or('?')
}

/// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// An SVG picture of a `files` x `ranks` board (rank 1 at the bottom) being written.
pub(crate) struct Canvas {
    out: String,
    ranks: u8,
}

impl Canvas {
    /// Opens the `<svg>` element with a `<title>` and the shared style sheet.
    pub(crate) fn new(variant: &str, files: u8, ranks: u8, title: &str, style: &str) -> Canvas {
        let w = u32::from(files) * CELL + 2 * MARGIN;
        let h = u32::from(ranks) * CELL + 2 * MARGIN;
        let mut out = String::with_capacity(32 * 1024);
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
             viewBox=\"0 0 {w} {h}\" data-variant=\"{variant}\" class=\"qchess-board\">\
             <title>{}</title><style>\
             .piece{{font-family:'DejaVu Sans','Segoe UI Symbol',sans-serif;font-size:{}px;\
             text-anchor:middle;dominant-baseline:central}}\
             .coord{{font-family:sans-serif;font-size:12px;fill:#555;text-anchor:middle;\
             dominant-baseline:central}}{style}</style>\
             <rect width=\"{w}\" height=\"{h}\" fill=\"#fafafa\"/>",
            escape(title),
            CELL * 3 / 4,
        );
        let mut canvas = Canvas { out, ranks };
        canvas.coordinates(files);
        canvas
    }

    fn coordinates(&mut self, files: u8) {
        for f in 0..files {
            let x = MARGIN + u32::from(f) * CELL + CELL / 2;
            let letter = (b'a' + f) as char;
            for y in [
                MARGIN / 2,
                MARGIN + u32::from(self.ranks) * CELL + MARGIN / 2,
            ] {
                let _ = write!(
                    self.out,
                    "<text class=\"coord\" x=\"{x}\" y=\"{y}\">{letter}</text>"
                );
            }
        }
        for r in 0..self.ranks {
            let y = MARGIN + u32::from(self.ranks - 1 - r) * CELL + CELL / 2;
            for x in [MARGIN / 2, MARGIN + u32::from(files) * CELL + MARGIN / 2] {
                let _ = write!(
                    self.out,
                    "<text class=\"coord\" x=\"{x}\" y=\"{y}\">{}</text>",
                    r + 1
                );
            }
        }
    }

    /// The top-left corner of `sq`.
    pub(crate) fn origin(&self, sq: Square) -> (u32, u32) {
        (
            MARGIN + u32::from(sq.file()) * CELL,
            MARGIN + u32::from(self.ranks - 1 - sq.rank()) * CELL,
        )
    }

    /// The centre of `sq`.
    pub(crate) fn centre(&self, sq: Square) -> (u32, u32) {
        let (x, y) = self.origin(sq);
        (x + CELL / 2, y + CELL / 2)
    }

    /// Opens the `<g>` of `sq` with its `data-square`, the extra attributes `attrs` (names
    /// are written as given, values escaped) and the square's background.
    pub(crate) fn open_square(&mut self, sq: Square, attrs: &[(&str, String)]) {
        let _ = write!(self.out, "<g class=\"square\" data-square=\"{sq}\"");
        for (name, value) in attrs {
            let _ = write!(self.out, " {name}=\"{}\"", escape(value));
        }
        let (x, y) = self.origin(sq);
        let fill = if (sq.file() + sq.rank()) % 2 == 0 {
            DARK
        } else {
            LIGHT
        };
        let _ = write!(
            self.out,
            "><rect x=\"{x}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{fill}\"/>"
        );
    }

    /// Closes the square opened last.
    pub(crate) fn close_square(&mut self) {
        self.out.push_str("</g>");
    }

    /// A piece symbol in the centre of `sq`, shifted up by `dy` units.
    pub(crate) fn piece(&mut self, sq: Square, text: &str, dy: i32) {
        let (x, y) = self.centre(sq);
        let y = y as i32 - dy;
        let _ = write!(
            self.out,
            "<text class=\"piece\" x=\"{x}\" y=\"{y}\">{}</text>",
            escape(text)
        );
    }

    /// Raw SVG markup (already escaped by the caller).
    pub(crate) fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    /// Closes the `<svg>` element and returns the text.
    pub(crate) fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }

    #[test]
    fn glyphs_of_both_colours() {
        assert_eq!(glyph(Piece::new(Color::Black, PieceKind::King)), '\u{265A}');
        assert_eq!(glyph(Piece::new(Color::White, PieceKind::Pawn)), '\u{2659}');
    }
}
