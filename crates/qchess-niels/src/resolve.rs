//! Carrying out a move: collapses by dice (or Hadamard moves in the Deterministic Game),
//! attempted captures (7.5, 8.4, Appendix G), tunnelling, and the bookkeeping after a move.
//! The move must already be validated (see `legal`).

use crate::moves::Move;
use crate::pair::{Diagonal, Mark, PairId};
use crate::position::{Occupant, Position};
use crate::quantum::{hadamard_marks, marks_for_roll};
use crate::rules::Rules;
use qchess_board::{Color, Piece, PieceKind, Square};

/// One dice roll: who rolled and what came up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Roll {
    /// The player who rolled.
    pub player: Color,
    /// The result, 1..=6.
    pub value: u8,
}

/// A pair replaced by its conventional piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Collapse {
    /// The piece.
    pub piece: Piece,
    /// Where it now stands.
    pub square: Square,
    /// The mark of the half it collapsed to.
    pub mark: Mark,
}

/// What happened when a move was played.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MoveOutcome {
    /// Every dice roll, in the order rolled.
    pub rolls: Vec<Roll>,
    /// Every collapse, in order.
    pub collapses: Vec<Collapse>,
    /// Whether the move was an attempted capture (7.4) or a classical capture.
    pub capture_attempted: bool,
    /// The piece removed from the board by a successful capture.
    pub captured: Option<Piece>,
    /// Tunnelling: `Some(true)` when it went through, `Some(false)` when it bounced back.
    pub tunnelled: Option<bool>,
    /// No-box variant: the attacker collapsed away and the capture was aborted.
    pub aborted: bool,
}

/// The dice ran out while resolving (used to enumerate outcomes).
#[derive(Debug)]
pub(crate) struct NeedRoll;

pub(crate) type Dice<'a> = &'a mut dyn FnMut(Color) -> Option<u8>;

/// Rolls for (or, in the Deterministic Game, applies a Hadamard move to) the group of `id`
/// and collapses it. Returns the marks chosen.
fn collapse_group_of(
    p: &mut Position,
    id: PairId,
    roller: Color,
    rules: &Rules,
    dice: Dice<'_>,
    out: &mut MoveOutcome,
) -> Result<Vec<(PairId, Mark)>, NeedRoll> {
    let group = p.group_of(id);
    let marks = if rules.deterministic {
        hadamard_marks(p, &group, rules)
    } else {
        let value = dice(roller).ok_or(NeedRoll)?;
        out.rolls.push(Roll {
            player: roller,
            value,
        });
        marks_for_roll(p, &group, value, rules)
    };
    apply_collapses(p, &marks, out);
    Ok(marks)
}

pub(crate) fn apply_collapses(p: &mut Position, marks: &[(PairId, Mark)], out: &mut MoveOutcome) {
    for (pid, mark) in marks {
        let (piece, square) = p.collapse_pair(*pid, *mark);
        out.collapses.push(Collapse {
            piece,
            square,
            mark: *mark,
        });
    }
}

/// Plays a validated move on a copy of `pos`.
pub(crate) fn resolve(
    pos: &Position,
    mv: &Move,
    rules: &Rules,
    dice: Dice<'_>,
) -> Result<(Position, MoveOutcome), NeedRoll> {
    let mut p = pos.clone();
    let mut out = MoveOutcome::default();
    let mover = p.side;
    let moved_piece = p.piece_at(mv.from_square());
    let mut new_ep = None;
    let mut reset_clock = moved_piece.is_some_and(|pc| pc.kind == PieceKind::Pawn);
    let mut switch_side = true;
    p.must_move = None;
    match *mv {
        Move::Step {
            from,
            to,
            promotion,
        } => {
            reset_clock |= step(&mut p, from, to, promotion, rules, dice, &mut out)?;
            if let Some(pc) = moved_piece {
                if pc.kind == PieceKind::Pawn && from.rank().abs_diff(to.rank()) == 2 {
                    new_ep = Square::new(from.file(), (from.rank() + to.rank()) / 2).into();
                }
            }
        }
        Move::Superposition {
            from,
            red,
            blue,
            facings,
            promotion,
        }
        | Move::Entanglement {
            from,
            red,
            blue,
            facings,
            promotion,
            ..
        } => {
            let Some(Occupant::Piece(piece)) = p.occupant(from) else {
                return Ok((p, out));
            };
            p.clear(from);
            let diagonal = match *mv {
                Move::Entanglement {
                    target, diagonal, ..
                } => {
                    let d = diagonal.unwrap_or(Diagonal::Minus);
                    if let Some(q) = p.pair_at(target).map(|q| q.id) {
                        p.pair_mut(q).diagonal = Some(d);
                    }
                    Some(d)
                }
                _ => None,
            };
            let id = p.add_pair(piece, red, blue, facings, diagonal);
            if piece.kind == PieceKind::Pawn {
                for sq in [red, blue] {
                    if sq.rank().abs_diff(from.rank()) == 2 {
                        new_ep = Some(Square::new(from.file(), (from.rank() + sq.rank()) / 2));
                    }
                }
            }
            promote_pair_if_due(&mut p, id, promotion);
        }
        Move::Flip { square } => {
            if let Some(id) = p.pair_at(square).map(|q| q.id) {
                let f = p.pair_ref(id).facings.flipped();
                p.pair_mut(id).facings = f;
            }
        }
        Move::Z { square } => {
            if let Some(Occupant::Half { pair, mark }) = p.occupant(square) {
                let q = p.pair_mut(pair);
                match mark {
                    Mark::Red => q.facings.red = q.facings.red.inverted(),
                    Mark::Blue => q.facings.blue = q.facings.blue.inverted(),
                }
            }
        }
        Move::Hadamard { square } => {
            if let Some(id) = p.pair_at(square).map(|q| q.id) {
                let group = p.group_of(id);
                let marks = hadamard_marks(&p, &group, rules);
                apply_collapses(&mut p, &marks, &mut out);
            }
        }
        Move::Tunnel { from, to } => {
            let value = dice(mover).ok_or(NeedRoll)?;
            out.rolls.push(Roll {
                player: mover,
                value,
            });
            let through = value == 6;
            out.tunnelled = Some(through);
            if through {
                let occ = p.occupant(from);
                p.clear(from);
                p.set(to, occ);
            }
        }
        Move::RemoteCollapse { square } => {
            if let Some(id) = p.pair_at(square).map(|q| q.id) {
                let marks = collapse_group_of(&mut p, id, mover, rules, dice, &mut out)?;
                if let Some((_, m)) = marks.iter().find(|(pid, _)| *pid == id) {
                    p.must_move = Some(pos.pair_ref(id).square(*m));
                }
                reset_clock = true;
                switch_side = false;
            }
        }
    }
    if out.capture_attempted {
        reset_clock = true;
    }
    // Castling rights: lost by any move involving the king or that rook (rules-notes 8).
    if let Some(pc) = moved_piece {
        forfeit_castling_for(&mut p, pc, mv.from_square());
    }
    sweep_castling(&mut p);
    // After a remote collapse the same player moves on: the en passant right stays.
    p.en_passant = if switch_side { new_ep } else { pos.en_passant };
    // Saturating: a loaded position may carry counters at the top of their range.
    p.halfmove_clock = if reset_clock {
        0
    } else {
        p.halfmove_clock.saturating_add(1)
    };
    if switch_side {
        if mover == Color::Black {
            p.fullmove_number = p.fullmove_number.saturating_add(1);
        }
        p.side = mover.opposite();
    }
    Ok((p, out))
}

/// An ordinary move or capture. Returns whether the 50-move clock resets.
fn step(
    p: &mut Position,
    from: Square,
    to: Square,
    promotion: Option<PieceKind>,
    rules: &Rules,
    dice: Dice<'_>,
    out: &mut MoveOutcome,
) -> Result<bool, NeedRoll> {
    let mover = p.side;
    let Some(attacker) = p.occupant(from) else {
        return Ok(false);
    };
    let Some(piece) = p.piece_at(from) else {
        return Ok(false);
    };
    // Castling: the conventional king moves two files; the rook jumps over it.
    if piece.kind == PieceKind::King
        && matches!(attacker, Occupant::Piece(_))
        && from.file().abs_diff(to.file()) == 2
    {
        let king_side = to.file() > from.file();
        let rook_from = Square::new(
            if king_side { p.geometry.width() - 1 } else { 0 },
            from.rank(),
        );
        let rook_to = Square::new(
            if king_side {
                to.file() - 1
            } else {
                to.file() + 1
            },
            from.rank(),
        );
        let rook = p.occupant(rook_from);
        p.clear(from);
        p.clear(rook_from);
        p.set(to, Some(attacker));
        p.set(rook_to, rook);
        return Ok(false);
    }
    let ep_victim =
        (piece.kind == PieceKind::Pawn && Some(to) == p.en_passant && from.file() != to.file())
            .then(|| Square::new(to.file(), from.rank()));
    let victim_here = p.piece_at(to).filter(|v| v.color != mover);
    if victim_here.is_none() && ep_victim.is_none() {
        // A plain move of a conventional piece or a half.
        p.clear(from);
        p.set(to, Some(attacker));
        if let Occupant::Half { pair, .. } = attacker {
            p.pair_mut(pair).relocate(from, to);
            promote_pair_if_due(p, pair, promotion);
        } else {
            promote_conventional_if_due(p, to, promotion);
        }
        return Ok(false);
    }
    out.capture_attempted = true;
    let victim_squares: Vec<Square> = std::iter::once(to).chain(ep_victim).collect();
    let attacker_pair = match attacker {
        Occupant::Half { pair, .. } => Some(pair),
        Occupant::Piece(_) => None,
    };
    let moved_mark = match attacker {
        Occupant::Half { mark, .. } => Some(mark),
        Occupant::Piece(_) => None,
    };
    // The attacker is placed on the square of arrival (7.5 step 1); while indefinite it is
    // held "in hand": its pair records the square, the board keeps the victim.
    p.clear(from);
    if let Some(id) = attacker_pair {
        p.pair_mut(id).relocate(from, to);
    }
    let mut attacker_here: Option<bool> = attacker_pair.is_none().then_some(true);
    let settle = |marks: &[(PairId, Mark)], attacker_here: &mut Option<bool>| {
        if let (Some(id), Some(mm)) = (attacker_pair, moved_mark) {
            if let Some((_, m)) = marks.iter().find(|(pid, _)| *pid == id) {
                *attacker_here = Some(*m == mm);
            }
        }
    };
    if rules.no_box {
        if let Some(id) = attacker_pair {
            let marks = collapse_group_of(p, id, mover, rules, dice, out)?;
            settle(&marks, &mut attacker_here);
            if attacker_here != Some(true) {
                out.aborted = true;
                return Ok(true);
            }
        }
    }
    // 7.5 step 2: the owner of the piece attacked rolls first.
    for &vs in &victim_squares {
        if let Some(Occupant::Half { pair, .. }) = p.occupant(vs) {
            if p.pieces_color(pair) != mover {
                let marks = collapse_group_of(p, pair, mover.opposite(), rules, dice, out)?;
                settle(&marks, &mut attacker_here);
            }
        }
    }
    if attacker_here.is_none() {
        if let Some(id) = attacker_pair {
            let marks = collapse_group_of(p, id, mover, rules, dice, out)?;
            settle(&marks, &mut attacker_here);
        }
    }
    if attacker_here == Some(true) {
        // 7.5 step 3: two conventional pieces on one square: the attacker stays.
        for &vs in &victim_squares {
            if let Some(Occupant::Piece(v)) = p.occupant(vs) {
                if v.color != mover && (vs == to || v.kind == PieceKind::Pawn) {
                    out.captured = Some(v);
                    p.clear(vs);
                }
            }
        }
        p.put(to, piece);
        promote_conventional_if_due(p, to, promotion);
    }
    Ok(true)
}

/// 7.8: an indefinite pawn on the furthest rank turns its whole pair into `promotion`.
fn promote_pair_if_due(p: &mut Position, id: PairId, promotion: Option<PieceKind>) {
    let pair = p.pair_ref(id).clone();
    if pair.piece.kind != PieceKind::Pawn {
        return;
    }
    let last = p.geometry.promotion_rank(pair.piece.color);
    if pair.red.rank() == last || pair.blue.rank() == last {
        let kind = promotion.unwrap_or(PieceKind::Queen);
        let piece = Piece::new(pair.piece.color, kind);
        let pattern = p.free_pattern(piece);
        let q = p.pair_mut(id);
        q.piece = piece;
        q.pattern = pattern;
    }
}

fn promote_conventional_if_due(p: &mut Position, sq: Square, promotion: Option<PieceKind>) {
    if let Some(Occupant::Piece(pc)) = p.occupant(sq) {
        if pc.kind == PieceKind::Pawn && sq.rank() == p.geometry.promotion_rank(pc.color) {
            p.put(
                sq,
                Piece::new(pc.color, promotion.unwrap_or(PieceKind::Queen)),
            );
        }
    }
}

fn forfeit_castling_for(p: &mut Position, piece: Piece, from: Square) {
    match piece.kind {
        PieceKind::King => {
            p.castling.clear(piece.color, true);
            p.castling.clear(piece.color, false);
        }
        PieceKind::Rook if p.geometry.is_standard() => {
            let home = if piece.color == Color::White { 0 } else { 7 };
            if from.rank() == home && from.file() == 0 {
                p.castling.clear(piece.color, false);
            } else if from.rank() == home && from.file() == 7 {
                p.castling.clear(piece.color, true);
            }
        }
        _ => {}
    }
}

/// Clears every right whose king or rook no longer stands conventional on its home square.
pub(crate) fn sweep_castling(p: &mut Position) {
    for color in Color::ALL {
        let home = if color == Color::White {
            0
        } else {
            p.geometry.height() - 1
        };
        let king_ok = p.geometry.is_standard()
            && p.occupant(Square::new(4, home))
                == Some(Occupant::Piece(Piece::new(color, PieceKind::King)));
        for (king_side, file) in [(true, 7u8), (false, 0u8)] {
            let rook_ok = p.occupant(Square::new(file, home))
                == Some(Occupant::Piece(Piece::new(color, PieceKind::Rook)));
            if !(king_ok && rook_ok) {
                p.castling.clear(color, king_side);
            }
        }
    }
}

impl Position {
    pub(crate) fn pieces_color(&self, id: PairId) -> Color {
        self.pair_ref(id).piece.color
    }
}
