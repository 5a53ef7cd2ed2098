//! Text rendering of a position: conventional pieces, indefinite halves with their mark,
//! facing, diagonal and fill pattern, and a legend of the pairs and groups.

use crate::fen::half_token;
use crate::game::color_name;
use crate::pair::{Diagonal, Mark};
use crate::position::Position;
use crate::rules::Rules;
use qchess_board::Square;
use std::fmt::Write;

/// Renders `pos` as a board diagram (rank 8 at the top) followed by a legend.
///
/// A cell shows `N` for a conventional knight, `.` for an empty square, and `Nro|1` for a
/// half: piece letter, mark `r`/`b`, the mark facing the opponent `o` or its player `p`,
/// the mark on the vertical `|` or an entangled group's `+`/`-` diagonal, fill pattern. The
/// two halves with the same letter and pattern are paired.
///
/// ```
/// use qchess_niels::{render, Position, Rules};
/// let p: Position = "8/8/2[nro|1]5/4[nbo|1]3/8/6K1/8/k7 w - - 0 1".parse().unwrap();
/// let text = render(&p, &Rules::default());
/// assert!(text.contains("nro|1") && text.contains("pair n1 (black knight): red c6 (o), blue e5 (o)"));
/// ```
pub fn render(pos: &Position, rules: &Rules) -> String {
    render_oriented(pos, rules, false)
}

/// [`render`], seen from Black's side when `flipped` (rank 1 at the top, the last file on the
/// left); the legend is the same.
///
/// ```
/// use qchess_niels::{render_oriented, Position, Rules};
/// let p: Position = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1".parse().unwrap();
/// let text = render_oriented(&p, &Rules::default(), true);
/// assert!(text.starts_with("1  .      .      .      K      .      .      .      R"));
/// ```
pub fn render_oriented(pos: &Position, rules: &Rules, flipped: bool) -> String {
    let g = pos.geometry();
    let mut ranks: Vec<u8> = (0..g.height()).rev().collect();
    let mut files: Vec<u8> = (0..g.width()).collect();
    if flipped {
        ranks.reverse();
        files.reverse();
    }
    let mut s = String::new();
    for &rank in &ranks {
        let _ = write!(s, "{} ", rank + 1);
        for &file in &files {
            let tok = half_token(pos, Square::new(file, rank)).unwrap_or_else(|| ".".into());
            let _ = write!(s, " {tok:<6}");
        }
        s.push('\n');
    }
    s.push_str("  ");
    for &file in &files {
        let _ = write!(s, " {:<6}", (b'a' + file) as char);
    }
    s.push('\n');
    for p in pos.pairs() {
        let kind = format!("{:?}", p.piece.kind).to_lowercase();
        let _ = write!(
            s,
            "pair {}{} ({} {kind}): red {} ({}), blue {} ({}), {}",
            p.piece.fen_char(),
            p.pattern,
            color_name(p.piece.color),
            p.red,
            p.facings.red.to_char(),
            p.blue,
            p.facings.blue.to_char(),
            superposition_kind(p.facings, rules),
        );
        let _ = writeln!(
            s,
            ", P(red) = {:.4}{}",
            p.facings.probability(Mark::Red, rules),
            match p.diagonal {
                None => String::new(),
                Some(d) => format!(", entangled on the {} diagonal", d.to_char()),
            }
        );
    }
    for d in Diagonal::ALL {
        let members = pos.group(d);
        if !members.is_empty() {
            let names: Vec<String> = members
                .iter()
                .map(|id| {
                    let p = pos.pair_ref(*id);
                    format!("{}{}", p.piece.fen_char(), p.pattern)
                })
                .collect();
            let _ = writeln!(s, "group {}: {}", d.to_char(), names.join(" "));
        }
    }
    let _ = write!(s, "{} to move", color_name(pos.side_to_move()));
    if let Some(m) = pos.must_move() {
        let _ = write!(s, " (the piece on {m} after the remote collapse)");
    }
    s.push('\n');
    s
}

fn superposition_kind(f: crate::pair::Facings, rules: &Rules) -> &'static str {
    match (f.is_equal(), rules.hadamard) {
        (true, _) => "equal",
        (false, true) => "equal with phase",
        (false, false) => "unequal",
    }
}
