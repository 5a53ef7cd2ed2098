//! Pseudo-legal move generation: every move kind of every rule option, all rules but king
//! safety (which `legal` adds by enumerating outcomes).

use crate::attacks::{attacks_from, one_move_away, quiet_targets};
use crate::moves::Move;
use crate::pair::{Diagonal, Facings, Mark, PairId};
use crate::position::{Occupant, Position};
use crate::quantum::{group_outcomes, hadamard_marks, same_state};
use crate::rules::Rules;
use qchess_board::{Bitboard, Color, Piece, PieceKind, Square};

/// Pseudo-legal moves of the side to move (every rule but king safety).
pub(crate) fn pseudo_moves(pos: &Position, rules: &Rules) -> Vec<Move> {
    let mut out = Vec::new();
    for sq in pos.occupied_by(pos.side) {
        pseudo_moves_from(pos, rules, sq, &mut out);
    }
    out
}

fn promotions(piece: Piece, squares: &[Square], pos: &Position) -> Vec<Option<PieceKind>> {
    let last = pos.geometry.promotion_rank(piece.color);
    if piece.kind == PieceKind::Pawn && squares.iter().any(|s| s.rank() == last) {
        PieceKind::PROMOTIONS.iter().map(|k| Some(*k)).collect()
    } else {
        vec![None]
    }
}

/// Red/blue orders of a new pair on `a` and `b` (7.3: the pawn half farther from the start
/// carries the red mark).
fn mark_orders(piece: Piece, a: Square, b: Square) -> Vec<(Square, Square)> {
    if piece.kind == PieceKind::Pawn {
        let a_ahead = match piece.color {
            Color::White => a.rank() > b.rank(),
            Color::Black => a.rank() < b.rank(),
        };
        vec![if a_ahead { (a, b) } else { (b, a) }]
    } else {
        vec![(a, b), (b, a)]
    }
}

fn ep_capture(pos: &Position, piece: Piece, sq: Square) -> Option<Square> {
    let ep = pos.en_passant?;
    if piece.kind != PieceKind::Pawn || !qchess_board::pawn_attacks(piece.color, sq).contains(ep) {
        return None;
    }
    let v = Square::new(ep.file(), sq.rank());
    let victim = pos.piece_at(v)?;
    if victim.color == piece.color || victim.kind != PieceKind::Pawn {
        return None;
    }
    let ep_ok = match pos.occupant(ep) {
        None => true,
        Some(Occupant::Half { pair, .. }) => pos.pair_at(v).is_some_and(|q| q.id == pair),
        Some(Occupant::Piece(_)) => false,
    };
    ep_ok.then_some(ep)
}

fn free_diagonal(pos: &Position) -> Option<Diagonal> {
    Diagonal::ALL.into_iter().find(|d| pos.group(*d).is_empty())
}

fn flip_makes_difference(pos: &Position, id: PairId, rules: &Rules, f: Facings) -> bool {
    let group = pos.group_of(id);
    let before = group_outcomes(pos, &group, rules);
    let mut p = pos.clone();
    p.pair_mut(id).facings = f;
    // A real difference (rules-notes 8): a probability, a correlation or, in the Hadamard
    // Games, the result of a Hadamard move.
    !same_state(&before, &group_outcomes(&p, &group, rules))
        || (rules.hadamard
            && hadamard_marks(pos, &group, rules) != hadamard_marks(&p, &group, rules))
}

pub(crate) fn pseudo_moves_from(pos: &Position, rules: &Rules, sq: Square, out: &mut Vec<Move>) {
    step_moves_from(pos, sq, false, out);
    other_moves_from(pos, rules, sq, out);
}

/// The first part of [`pseudo_moves_from`]: ordinary moves and (attempted) captures,
/// en passant included, for conventional pieces and halves alike, in the same order; only
/// the captures when `captures_only` (the others are left out, the order kept).
pub(crate) fn step_moves_from(
    pos: &Position,
    sq: Square,
    captures_only: bool,
    out: &mut Vec<Move>,
) {
    let Some(piece) = movable_piece(pos, sq) else {
        return;
    };
    let g = pos.geometry;
    let occ = pos.occupied();
    let opponents = pos.occupied_by(pos.side.opposite());
    let quiet = if captures_only {
        Bitboard::EMPTY
    } else {
        quiet_targets(piece, sq, occ, g)
    };
    let mut captures = attacks_from(piece, sq, occ, g) & opponents;
    if let Some(ep) = ep_capture(pos, piece, sq) {
        captures = captures.with(ep);
    }
    for to in quiet | captures {
        for promotion in promotions(piece, &[to], pos) {
            out.push(Move::Step {
                from: sq,
                to,
                promotion,
            });
        }
    }
}

/// The piece on `sq` when the side to move may move it now (its own, and the one that must
/// move after a remote collapse).
fn movable_piece(pos: &Position, sq: Square) -> Option<Piece> {
    if pos.must_move.is_some_and(|m| m != sq) {
        return None;
    }
    pos.piece_at(sq).filter(|p| p.color == pos.side)
}

/// The second part of [`pseudo_moves_from`]: castling, superposition, entanglement and
/// tunnelling moves of a conventional piece, flip, Z, Hadamard and remote collapse of a half.
pub(crate) fn other_moves_from(pos: &Position, rules: &Rules, sq: Square, out: &mut Vec<Move>) {
    let Some(piece) = movable_piece(pos, sq) else {
        return;
    };
    let quiet = quiet_targets(piece, sq, pos.occupied(), pos.geometry);
    match pos.occupant(sq) {
        Some(Occupant::Piece(_)) => {
            castling_moves(pos, piece, sq, out);
            superposition_moves(pos, rules, piece, sq, quiet, out);
            entanglement_moves(pos, rules, piece, sq, quiet, out);
            if rules.tunnelling {
                tunnel_moves(pos, piece, sq, out);
            }
        }
        Some(Occupant::Half { pair, mark }) if pos.must_move.is_none() => {
            half_moves(pos, rules, pair, mark, sq, out);
        }
        _ => {}
    }
}

fn castling_moves(pos: &Position, piece: Piece, sq: Square, out: &mut Vec<Move>) {
    if piece.kind != PieceKind::King || !pos.geometry.is_standard() {
        return;
    }
    let home = if piece.color == Color::White { 0 } else { 7 };
    if sq != Square::new(4, home) {
        return;
    }
    let occ = pos.occupied();
    for king_side in [true, false] {
        if !pos.castling.get(piece.color, king_side) {
            continue;
        }
        let rook = Square::new(if king_side { 7 } else { 0 }, home);
        if pos.occupant(rook) != Some(Occupant::Piece(Piece::new(piece.color, PieceKind::Rook))) {
            continue;
        }
        if (qchess_board::between(sq, rook) & occ).any() {
            continue;
        }
        out.push(Move::step(
            sq,
            Square::new(if king_side { 6 } else { 2 }, home),
        ));
    }
}

fn superposition_moves(
    pos: &Position,
    rules: &Rules,
    piece: Piece,
    sq: Square,
    quiet: Bitboard,
    out: &mut Vec<Move>,
) {
    let targets: Vec<Square> = quiet.iter().collect();
    let mut shapes: Vec<(Square, Square)> = targets.iter().map(|t| (*t, sq)).collect();
    if !rules.stay_only {
        for (i, a) in targets.iter().enumerate() {
            for b in &targets[i + 1..] {
                shapes.push((*a, *b));
            }
        }
    }
    for (a, b) in shapes {
        for (red, blue) in mark_orders(piece, a, b) {
            for facings in Facings::ALL.into_iter().filter(|f| f.allowed(rules)) {
                for promotion in promotions(piece, &[a, b], pos) {
                    out.push(Move::Superposition {
                        from: sq,
                        red,
                        blue,
                        facings,
                        promotion,
                    });
                }
            }
        }
    }
}

/// Opponent pairs attacked by a half of a new pair on `sq` and `t` (8.1), with one attacked
/// half square each.
fn entanglement_targets(
    pos: &Position,
    piece: Piece,
    sq: Square,
    t: Square,
) -> Vec<(PairId, Square)> {
    let occ = pos.occupied().with(t);
    let mut found: Vec<(PairId, Square)> = Vec::new();
    for h in [sq, t] {
        for a in attacks_from(piece, h, occ, pos.geometry) {
            if let Some(q) = pos.pair_at(a) {
                if q.piece.color != piece.color && !found.iter().any(|(id, _)| *id == q.id) {
                    found.push((q.id, a));
                }
            }
        }
    }
    found
}

fn entanglement_moves(
    pos: &Position,
    rules: &Rules,
    piece: Piece,
    sq: Square,
    quiet: Bitboard,
    out: &mut Vec<Move>,
) {
    if pos.pairs.is_empty() {
        return;
    }
    for t in quiet {
        for (qid, target) in entanglement_targets(pos, piece, sq, t) {
            let q = pos.pair_ref(qid);
            let Some(diagonal) = q.diagonal.or_else(|| free_diagonal(pos)) else {
                continue;
            };
            for (red, blue) in mark_orders(piece, sq, t) {
                for facings in Facings::ALL
                    .into_iter()
                    .filter(|f| f.allowed(rules) && f.is_equal() == q.facings.is_equal())
                {
                    for promotion in promotions(piece, &[t], pos) {
                        out.push(Move::Entanglement {
                            from: sq,
                            red,
                            blue,
                            facings,
                            promotion,
                            target,
                            diagonal: Some(diagonal),
                        });
                    }
                }
            }
        }
    }
}

fn tunnel_moves(pos: &Position, piece: Piece, sq: Square, out: &mut Vec<Move>) {
    let dirs: &[(i8, i8)] = match piece.kind {
        PieceKind::Rook => &[(1, 0), (-1, 0), (0, 1), (0, -1)],
        PieceKind::Bishop => &[(1, 1), (1, -1), (-1, 1), (-1, -1)],
        PieceKind::Queen => &[
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1, 1),
            (1, -1),
            (-1, 1),
            (-1, -1),
        ],
        _ => return,
    };
    let g = pos.geometry;
    for &(df, dr) in dirs {
        let mut cur = sq.offset(df, dr).filter(|s| g.contains(*s));
        while let Some(s) = cur {
            if pos.occupant(s).is_some() {
                break;
            }
            cur = s.offset(df, dr).filter(|s| g.contains(*s));
        }
        let Some(x) = cur else { continue };
        let conventional_opponent =
            matches!(pos.occupant(x), Some(Occupant::Piece(p)) if p.color != piece.color);
        if let Some(y) = x.offset(df, dr).filter(|s| g.contains(*s)) {
            if conventional_opponent && pos.occupant(y).is_none() {
                out.push(Move::Tunnel { from: sq, to: y });
            }
        }
    }
}

fn half_moves(
    pos: &Position,
    rules: &Rules,
    id: PairId,
    mark: Mark,
    sq: Square,
    out: &mut Vec<Move>,
) {
    let pair = pos.pair_ref(id);
    let occ = pos.occupied();
    let g = pos.geometry;
    let adjacent = one_move_away(pair.piece, pair.red, pair.blue, occ, g)
        || one_move_away(pair.piece, pair.blue, pair.red, occ, g);
    let first = mark == Mark::Red;
    if first
        && !rules.simplified
        && adjacent
        && flip_makes_difference(pos, id, rules, pair.facings.flipped())
    {
        out.push(Move::Flip { square: sq });
    }
    if rules.hadamard && (pair.diagonal.is_none() || rules.hadamard_plus) {
        let mut f = pair.facings;
        match mark {
            Mark::Red => f.red = f.red.inverted(),
            Mark::Blue => f.blue = f.blue.inverted(),
        }
        if f.allowed(rules) && flip_makes_difference(pos, id, rules, f) {
            out.push(Move::Z { square: sq });
        }
    }
    if first && rules.hadamard && adjacent && (pair.diagonal.is_none() || rules.hadamard_plus) {
        out.push(Move::Hadamard { square: sq });
    }
    if first && rules.remote_collapse {
        out.push(Move::RemoteCollapse { square: sq });
    }
}
