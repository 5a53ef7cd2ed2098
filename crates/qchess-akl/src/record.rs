//! One completed turn, as recorded: what was touched, how it collapsed, where it went.

use qchess_board::{PieceKind, Square};

/// A capture as the notation's `<x|y>`: the capturing type and the type the captured piece
/// collapsed to (or was) before leaving the board.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct CaptureNote {
    /// The capturing piece's type (`x`).
    pub by: PieceKind,
    /// The captured piece's type (`y`).
    pub captured: PieceKind,
}

/// Where the touched piece went.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Destination {
    /// The target square.
    pub to: Square,
    /// The capture, if the target held an enemy piece. In hand-written input it may be left
    /// out; the captured piece's collapse is then drawn at random (or is an error in replay).
    pub capture: Option<CaptureNote>,
    /// The type chosen by a promoting pawn.
    pub promotion: Option<PieceKind>,
    /// Whether the piece ended its move in superposition (`|psi>`, `|psi>_prom` after a
    /// promotion). Optional in input: when written it must be true.
    pub superposed: bool,
}

/// One turn of a game record: a touch, its collapse, and the move (if the turn did not end at
/// the touch).
///
/// ```
/// use qchess_akl::TurnEntry;
/// let e: TurnEntry = "<Q|d8> -> h4".parse().unwrap();
/// assert_eq!(e.from.to_string(), "d8");
/// assert_eq!(e.dest.unwrap().to.to_string(), "h4");
/// assert_eq!(e.to_string(), "<Q|d8> -> h4");
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TurnEntry {
    /// The touched piece's square.
    pub from: Square,
    /// The type the touched piece collapsed to; `None` when it was classical (or, in
    /// hand-written input, when the collapse is left to be inferred from the move).
    pub collapse: Option<PieceKind>,
    /// The move; `None` when the turn ended at the touch (no legal move, or the collapse gave
    /// check).
    pub dest: Option<Destination>,
    /// A check mark (`+`, `#`): the collapse gave check, or after the move a classical piece of
    /// the mover attacks the enemy king. An annotation: never checked on input.
    pub check: bool,
}
