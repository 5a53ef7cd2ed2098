//! The JSON shapes that `qchess eval` and this server's API share (docs/web.md: "the same
//! fields as `qchess eval`"), written once: a Niel's move outcome and an Akl turn.
//!
//! ```
//! use qchess_web::wire::{akl_letter, niels_mark};
//! assert_eq!(akl_letter(qchess_board::PieceKind::Knight), "N");
//! assert_eq!(niels_mark(qchess_niels::Mark::Blue), "blue");
//! ```

use qchess_akl::{TurnEntry, TypeSet};
use qchess_board::{Color, PieceKind};
use qchess_niels::{Mark, MoveOutcome};
use serde_json::{Value, json};

/// `"w"` or `"b"`.
pub fn side(c: Color) -> &'static str {
    if c == Color::White { "w" } else { "b" }
}

/// A Niel's mark's name: `"red"` or `"blue"`.
pub fn niels_mark(m: Mark) -> &'static str {
    match m {
        Mark::Red => "red",
        Mark::Blue => "blue",
    }
}

/// A Niel's move outcome: `{"rolls": [{"player", "value"}], "collapses": [{"piece",
/// "square", "mark"}], "capture_attempted", "captured", "tunnelled", "aborted"}`.
pub fn niels_outcome(o: &MoveOutcome) -> Value {
    json!({
        "rolls": o.rolls.iter().map(|r| json!({"player": side(r.player), "value": r.value})).collect::<Vec<_>>(),
        "collapses": o.collapses.iter().map(|c| json!({
            "piece": c.piece.fen_char().to_string(), "square": c.square.to_string(), "mark": niels_mark(c.mark)
        })).collect::<Vec<_>>(),
        "capture_attempted": o.capture_attempted,
        "captured": o.captured.map(|p| p.fen_char().to_string()),
        "tunnelled": o.tunnelled,
        "aborted": o.aborted,
    })
}

/// An Akl piece type as its upper-case letter (`"N"`).
pub fn akl_letter(kind: PieceKind) -> String {
    kind.to_char().to_ascii_uppercase().to_string()
}

/// The letters of a set of Akl types, in the set's order.
pub fn akl_letters(set: TypeSet) -> Vec<String> {
    set.iter().map(akl_letter).collect()
}

/// One Akl turn: `{"turn": "moved" | "check_by_collapse" | "no_legal_move", "from",
/// "collapse", "to", "captured", "promotion", "superposed"}`.
pub fn akl_turn(e: &TurnEntry) -> Value {
    let turn = match e.dest {
        Some(_) => "moved",
        None if e.check => "check_by_collapse",
        None => "no_legal_move",
    };
    json!({
        "turn": turn,
        "from": e.from.to_string(),
        "collapse": e.collapse.map(akl_letter),
        "to": e.dest.map(|d| d.to.to_string()),
        "captured": e.dest.and_then(|d| d.capture).map(|c| akl_letter(c.captured)),
        "promotion": e.dest.and_then(|d| d.promotion).map(akl_letter),
        "superposed": e.dest.is_some_and(|d| d.superposed),
    })
}
