//! Outcomes of a move, check (8.7) and legality (7.6, 8.8-8.10): a move is legal only if no
//! outcome of positive probability leaves the mover's king in check.

use crate::attacks::attacks_from;
use crate::error::NielsError;
use crate::movegen::{other_moves_from, pseudo_moves, pseudo_moves_from, step_moves_from};
use crate::moves::Move;
use crate::position::{Occupant, Position};
use crate::resolve::{MoveOutcome, NeedRoll, resolve};
use crate::rules::Rules;
use qchess_board::Fraction;
use qchess_board::{Color, Piece, PieceKind, Square};
use std::collections::{HashMap, VecDeque};

/// Every outcome of playing `mv` (already validated): the resulting position, its
/// probability and what happened. The Deterministic Game and moves without dice have one.
pub(crate) fn outcomes(
    pos: &Position,
    mv: &Move,
    rules: &Rules,
) -> Vec<(Position, f64, MoveOutcome)> {
    outcomes_with_exact(pos, mv, rules)
        .into_iter()
        .map(|(p, pr, _, o)| (p, pr, o))
        .collect()
}

/// [`outcomes`] with each probability also exact, as a reduced fraction: every chance in
/// Niel's Chess comes from fair dice, so an outcome's probability is a count over `6^n`.
pub(crate) fn outcomes_exact(
    pos: &Position,
    mv: &Move,
    rules: &Rules,
) -> Vec<(Position, Fraction, MoveOutcome)> {
    outcomes_with_exact(pos, mv, rules)
        .into_iter()
        .map(|(p, _, ex, o)| (p, ex, o))
        .collect()
}

fn outcomes_with_exact(
    pos: &Position,
    mv: &Move,
    rules: &Rules,
) -> Vec<(Position, f64, Fraction, MoveOutcome)> {
    let mut result: Vec<(Position, f64, Fraction, MoveOutcome)> = Vec::new();
    let mut queue: VecDeque<Vec<u8>> = VecDeque::from([Vec::new()]);
    while let Some(prefix) = queue.pop_front() {
        let mut i = 0;
        let mut dice = |_: Color| {
            let r = prefix.get(i).copied();
            i += 1;
            r
        };
        match resolve(pos, mv, rules, &mut dice) {
            Ok((p, o)) => {
                // Rolls that lead to the same position are one outcome.
                let pr = (1.0f64 / 6.0).powi(prefix.len() as i32);
                let exact = Fraction::new(1, 6u64.pow(prefix.len() as u32));
                match result.iter_mut().find(|entry| entry.0 == p) {
                    Some(entry) => {
                        entry.1 += pr;
                        entry.2 = entry.2 + exact;
                    }
                    None => result.push((p, pr, exact, o)),
                }
            }
            Err(NeedRoll) => {
                for r in 1..=6 {
                    let mut next = prefix.clone();
                    next.push(r);
                    queue.push_back(next);
                }
            }
        }
    }
    result
}

/// The chance that the piece on `from` would capture the piece on `to` if it tried now
/// (the hypothetical capture of 8.7): 1 for two conventional pieces; otherwise summed over
/// the collapse outcomes.
pub fn capture_chance(pos: &Position, from: Square, to: Square, rules: &Rules) -> f64 {
    let (Some(a), Some(v)) = (pos.occupant(from), pos.occupant(to)) else {
        return 0.0;
    };
    if matches!((a, v), (Occupant::Piece(_), Occupant::Piece(_))) {
        return 1.0;
    }
    let Some(attacker) = pos.piece_at(from) else {
        return 0.0;
    };
    let mut p = pos.clone();
    p.side = attacker.color;
    p.en_passant = None;
    p.must_move = None;
    outcomes(&p, &Move::step(from, to), rules)
        .iter()
        .filter(|(_, _, o)| o.captured.is_some())
        .map(|(_, pr, _)| pr)
        .sum()
}

/// [`capture_chance`] as an exact fraction.
pub fn capture_chance_exact(pos: &Position, from: Square, to: Square, rules: &Rules) -> Fraction {
    let (Some(a), Some(v)) = (pos.occupant(from), pos.occupant(to)) else {
        return Fraction::ZERO;
    };
    if matches!((a, v), (Occupant::Piece(_), Occupant::Piece(_))) {
        return Fraction::ONE;
    }
    let Some(attacker) = pos.piece_at(from) else {
        return Fraction::ZERO;
    };
    let mut p = pos.clone();
    p.side = attacker.color;
    p.en_passant = None;
    p.must_move = None;
    outcomes_exact(&p, &Move::step(from, to), rules)
        .iter()
        .filter(|(_, _, o)| o.captured.is_some())
        .fold(Fraction::ZERO, |acc, (_, pr, _)| acc + *pr)
}

/// Check (8.7) of one colour, whether or not it is that colour's move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckInfo {
    /// The highest chance that one attacker's hypothetical capture of the king (8.7) would
    /// succeed: 0 is no check, 1 is certain check, anything between is possible check.
    pub chance: Fraction,
    /// Whether that colour, were it to move now, would have no legal move while in check.
    pub checkmated: bool,
    /// Whether that colour, were it to move now, would have no legal move and not be in
    /// check.
    pub stalemated: bool,
}

/// The check and mate status of `color` in `pos`. For the side not to move, it is read as if
/// it were that side's move (no en passant, no pending remote collapse).
pub fn check_info(pos: &Position, color: Color, rules: &Rules) -> CheckInfo {
    let occ = pos.occupied();
    let g = pos.geometry;
    let enemies = pos.occupied_by(color.opposite());
    let mut chance = Fraction::ZERO;
    for k in pos.king_squares(color) {
        for a in enemies.iter() {
            if pos
                .piece_at(a)
                .is_some_and(|pc| attacks_from(pc, a, occ, g).contains(k))
            {
                chance = chance.max(capture_chance_exact(pos, a, k, rules));
            }
        }
    }
    let mut p = pos.clone();
    if p.side != color {
        p.side = color;
        p.en_passant = None;
        p.must_move = None;
    }
    let no_moves = !has_legal_move(&p, rules);
    let in_check = chance > Fraction::ZERO;
    CheckInfo {
        chance,
        checkmated: no_moves && in_check,
        stalemated: no_moves && !in_check,
    }
}

/// Whether the king of `color` is in check (8.7): attacked by an opponent's piece whose
/// hypothetical capture of it would succeed with a chance greater than zero.
pub fn in_check(pos: &Position, color: Color, rules: &Rules) -> bool {
    let occ = pos.occupied();
    let g = pos.geometry;
    let enemies = pos.occupied_by(color.opposite());
    pos.king_squares(color).into_iter().any(|k| {
        enemies.iter().any(|a| {
            pos.piece_at(a)
                .is_some_and(|pc| attacks_from(pc, a, occ, g).contains(k))
                && capture_chance(pos, a, k, rules) > 0.0
        })
    })
}

/// Checks that `mv` is pseudo-legal and returns it in the engine's form (an entanglement's
/// diagonal filled in).
fn validate_pseudo(pos: &Position, mv: &Move, rules: &Rules) -> Result<Move, NielsError> {
    let from = mv.from_square();
    if !pos.geometry.contains(from) {
        return Err(NielsError::illegal(
            mv,
            format!("{from} is off the {} board", pos.geometry),
        ));
    }
    match pos.piece_at(from) {
        None => return Err(NielsError::illegal(mv, format!("no piece on {from}"))),
        Some(p) if p.color != pos.side => {
            return Err(NielsError::illegal(
                mv,
                format!("the piece on {from} is not the mover's"),
            ));
        }
        _ => {}
    }
    if let Some(m) = pos.must_move {
        if m != from {
            return Err(NielsError::illegal(
                mv,
                format!("after the remote collapse the piece on {m} must move"),
            ));
        }
    }
    let mut list = Vec::new();
    pseudo_moves_from(pos, rules, from, &mut list);
    if let Move::Entanglement {
        from,
        red,
        blue,
        facings,
        promotion,
        target,
        diagonal,
    } = *mv
    {
        let Some(q) = pos.pair_at(target).filter(|q| q.piece.color != pos.side) else {
            return Err(NielsError::illegal(
                mv,
                format!("no half of an opponent's pair on {target}"),
            ));
        };
        let found = list.iter().find_map(|m| match *m {
            Move::Entanglement {
                from: f,
                red: r,
                blue: b,
                facings: fc,
                promotion: p,
                target: t,
                diagonal: d,
            } if (f, r, b, fc, p) == (from, red, blue, facings, promotion)
                && pos.pair_at(t).is_some_and(|x| x.id == q.id) =>
            {
                d
            }
            _ => None,
        });
        let Some(default_diag) = found else {
            return Err(NielsError::illegal(
                mv,
                "not an entanglement move: move and stay to an unoccupied reachable square, with a half attacking that pair, marks of the same type (8.1-8.3) and a free diagonal",
            ));
        };
        let diag = match (diagonal, q.diagonal) {
            (None, _) => default_diag,
            (Some(d), Some(qd)) if d != qd => {
                return Err(NielsError::illegal(
                    mv,
                    format!(
                        "the pair on {target} is entangled on the {} diagonal",
                        qd.to_char()
                    ),
                ));
            }
            (Some(d), None) if !pos.group(d).is_empty() => {
                return Err(NielsError::illegal(
                    mv,
                    format!(
                        "the {} diagonal is taken by another entangled group (8.3)",
                        d.to_char()
                    ),
                ));
            }
            (Some(d), _) => d,
        };
        return Ok(Move::Entanglement {
            from,
            red,
            blue,
            facings,
            promotion,
            target,
            diagonal: Some(diag),
        });
    }
    if list.contains(mv) {
        return Ok(*mv);
    }
    // Flip, Hadamard and remote collapse are listed from the red half; either half names
    // the pair.
    let red = pos.pair_at(from).map(|q| q.red);
    let from_red = match (*mv, red) {
        (Move::Flip { .. }, Some(square)) => Some(Move::Flip { square }),
        (Move::Hadamard { .. }, Some(square)) => Some(Move::Hadamard { square }),
        (Move::RemoteCollapse { .. }, Some(square)) => Some(Move::RemoteCollapse { square }),
        _ => None,
    };
    if from_red.is_some_and(|m| list_from(pos, rules, m.from_square()).contains(&m)) {
        return Ok(*mv);
    }
    // A pawn reaching the last rank without a promotion letter promotes to a queen.
    if let Move::Step {
        from,
        to,
        promotion: None,
    } = *mv
    {
        let q = Move::Step {
            from,
            to,
            promotion: Some(PieceKind::Queen),
        };
        if list.contains(&q) {
            return Err(NielsError::illegal(
                mv,
                "a pawn reaching the last rank needs a promotion piece (=q, =r, =b or =n)",
            ));
        }
    }
    Err(NielsError::illegal(mv, reason_not_pseudo(pos, mv, rules)))
}

fn reason_not_pseudo(pos: &Position, mv: &Move, rules: &Rules) -> String {
    match mv {
        Move::Superposition { from, .. } if pos.is_indefinite(*from) => {
            "only a conventional piece may make a superposition move (7.1)".into()
        }
        Move::Superposition { .. } if rules.stay_only => {
            "competitive rule 2: a superposition move must be move-and-stay, to an unoccupied reachable square".into()
        }
        Move::Superposition { facings, .. } if !facings.allowed(rules) => {
            "in the Simplified Game the red mark faces the opponent (9.1)".into()
        }
        Move::Superposition { .. } => {
            "a superposition goes to two unoccupied reachable squares, or one and stays (7.1); a pawn's red half is the one farther forward (7.3)".into()
        }
        Move::Flip { .. } if rules.simplified => "no flip moves in the Simplified Game (9.1.1)".into(),
        Move::Flip { .. } => {
            "a flip needs a pair of the mover whose halves are one move apart and must change the position's probabilities or correlations (7.7)".into()
        }
        Move::Z { .. } | Move::Hadamard { .. } if !rules.hadamard => "Z and Hadamard moves belong to the Hadamard Game (rule option hadamard)".into(),
        Move::Z { .. } => "a Z move rotates one mark of an unentangled pair of the mover (entangled: Hadamard+ Game)".into(),
        Move::Hadamard { .. } => "a Hadamard move needs an unentangled pair of the mover whose halves are one move apart (groups: Hadamard+ Game)".into(),
        Move::Tunnel { .. } if !rules.tunnelling => "tunnelling belongs to the Tunnelling Game (rule option tunnelling)".into(),
        Move::Tunnel { .. } => "a rook, bishop or queen tunnels through the first piece on its line, a conventional opponent's, to the empty square right behind it".into(),
        Move::RemoteCollapse { .. } if !rules.remote_collapse => "remote collapse is competitive rule 3 (rule option remote-collapse)".into(),
        Move::RemoteCollapse { .. } => "remote collapse needs a pair of the mover".into(),
        _ => "the piece cannot move there".into(),
    }
}

fn list_from(pos: &Position, rules: &Rules, sq: Square) -> Vec<Move> {
    let mut list = Vec::new();
    pseudo_moves_from(pos, rules, sq, &mut list);
    list
}

/// Checks `mv` fully: returns the engine's form of it if legal, else why not.
pub(crate) fn check_legal(pos: &Position, mv: &Move, rules: &Rules) -> Result<Move, NielsError> {
    let mv = validate_pseudo(pos, mv, rules)?;
    check_pseudo_legal(pos, mv, rules)
}

/// The checks of [`check_legal`] after the pseudo-legality test, for a move that is already
/// pseudo-legal and in the engine's form (as the move generator lists it: validating such a
/// move returns it unchanged, and skipping that saves regenerating the piece's whole list
/// per move, thousands of moves for a queen).
fn check_pseudo_legal(pos: &Position, mv: Move, rules: &Rules) -> Result<Move, NielsError> {
    let mover = pos.side;
    if let Move::Step { from, to, .. } = mv {
        if pos.piece_at(to) == Some(Piece::new(mover.opposite(), PieceKind::King))
            && capture_chance(pos, from, to, rules) > 0.0
        {
            return Err(NielsError::illegal(
                mv,
                "the king cannot be captured, only checkmated (6.2.1, 8.9)",
            ));
        }
        let piece = pos.piece_at(from);
        if piece.is_some_and(|p| p.kind == PieceKind::King)
            && !pos.is_indefinite(from)
            && from.file().abs_diff(to.file()) == 2
        {
            if in_check(pos, mover, rules) {
                return Err(NielsError::illegal(
                    mv,
                    "castling is not allowed out of check (3.8.2.2)",
                ));
            }
            let cross = Square::new((from.file() + to.file()) / 2, from.rank());
            let mut p = pos.clone();
            p.clear(from);
            p.put(cross, Piece::new(mover, PieceKind::King));
            if in_check(&p, mover, rules) {
                return Err(NielsError::illegal(
                    mv,
                    format!("the king would cross the attacked square {cross} (6.2.5)"),
                ));
            }
        }
    }
    for (p, prob, _) in outcomes(pos, &mv, rules) {
        if let Move::RemoteCollapse { .. } = mv {
            if !has_legal_move(&p, rules) {
                return Err(NielsError::illegal(
                    mv,
                    format!(
                        "with probability {prob:.4} the collapsed piece would have no legal move to follow"
                    ),
                ));
            }
        } else if in_check(&p, mover, rules) {
            return Err(NielsError::illegal(
                mv,
                format!(
                    "an outcome of probability {prob:.4} leaves the mover's king in check (7.6)"
                ),
            ));
        }
    }
    Ok(mv)
}

/// Every legal move of the side to move.
pub fn legal_moves(pos: &Position, rules: &Rules) -> Vec<Move> {
    let mut legal = LegalFilter::new(pos, rules);
    pseudo_moves(pos, rules)
        .into_iter()
        .filter(|mv| legal.is_legal(mv))
        .collect()
}

/// Whether the side to move has at least one legal move: the same answer as
/// `!legal_moves(pos, rules).is_empty()`, but it stops at the first legal move it finds and
/// tries the cheap ones first (every piece's ordinary moves and captures), so the thousands of
/// superposition moves of a queen are generated only when no ordinary move is legal. With no
/// legal move (checkmate or stalemate) it checks every move, as `legal_moves` does.
///
/// ```
/// use qchess_niels::{Position, Rules, has_legal_move, legal_moves};
/// // Black is mated by the queen on g7 guarded by the king.
/// let mate: Position = "6k1/6Q1/6K1/8/8/8/8/8 b - - 0 1".parse().unwrap();
/// assert!(!has_legal_move(&mate, &Rules::default()));
/// assert!(legal_moves(&mate, &Rules::default()).is_empty());
/// let start = Position::startpos("8x8".parse().unwrap()).unwrap();
/// assert!(has_legal_move(&start, &Rules::default()));
/// ```
pub fn has_legal_move(pos: &Position, rules: &Rules) -> bool {
    let mut legal = LegalFilter::new(pos, rules);
    let mut list = Vec::new();
    let own = pos.occupied_by(pos.side);
    for sq in own {
        list.clear();
        step_moves_from(pos, sq, false, &mut list);
        if list.iter().any(|mv| legal.is_legal(mv)) {
            return true;
        }
    }
    for sq in own {
        list.clear();
        other_moves_from(pos, rules, sq, &mut list);
        if list.iter().any(|mv| legal.is_legal(mv)) {
            return true;
        }
    }
    false
}

/// Whether `mv` is a capture or an attempted capture by the side to move of `pos`: a
/// [`Move::Step`] of one of its pieces (or halves) onto a square holding an opponent's
/// conventional piece or half, or a pawn's en passant capture (a diagonal step onto the en
/// passant square). Every other kind of move (superposition, entanglement, tunnelling, flip,
/// ...) is not a capture. It does not check that `mv` is legal.
pub fn is_capture(pos: &Position, mv: &Move) -> bool {
    let Move::Step { from, to, .. } = *mv else {
        return false;
    };
    let Some(piece) = pos.piece_at(from).filter(|p| p.color == pos.side) else {
        return false;
    };
    pos.occupied_by(pos.side.opposite()).contains(to)
        || (piece.kind == PieceKind::Pawn && pos.en_passant == Some(to) && from.file() != to.file())
}

/// The legal captures of the side to move (the moves of `legal_moves` for which
/// [`is_capture`] holds, in the same order), generated without the other moves: only each
/// piece's captures are listed and checked, so a search's quiescence does not pay for every
/// superposition move.
///
/// ```
/// use qchess_niels::{Move, Position, Rules, is_capture, legal_captures, legal_moves};
/// // Schools paper, Fig. 4: the f5 pawn may attempt to capture the rook half on e6.
/// let pos: Position = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1".parse().unwrap();
/// let rules = Rules::default();
/// let captures = legal_captures(&pos, &rules);
/// assert_eq!(captures, vec!["f5e6".parse::<Move>().unwrap()]);
/// let filtered: Vec<Move> =
///     legal_moves(&pos, &rules).into_iter().filter(|m| is_capture(&pos, m)).collect();
/// assert_eq!(captures, filtered);
/// ```
pub fn legal_captures(pos: &Position, rules: &Rules) -> Vec<Move> {
    let mut legal = LegalFilter::new(pos, rules);
    let mut list = Vec::new();
    for sq in pos.occupied_by(pos.side) {
        step_moves_from(pos, sq, true, &mut list);
    }
    list.retain(|mv| legal.is_legal(mv));
    list
}

/// The legality test of generated (pseudo-legal) moves, with the superposition shapes
/// already decided: a superposition's legality cannot depend on its marks (a fresh,
/// unentangled pair has a positive chance on each half), except in the Deterministic Game,
/// so each shape is checked once.
struct LegalFilter<'a> {
    pos: &'a Position,
    rules: &'a Rules,
    shape_legal: HashMap<(Square, Square, Square, Option<PieceKind>), bool>,
}

impl<'a> LegalFilter<'a> {
    fn new(pos: &'a Position, rules: &'a Rules) -> LegalFilter<'a> {
        LegalFilter {
            pos,
            rules,
            shape_legal: HashMap::new(),
        }
    }

    /// Whether the generated move `mv` is legal.
    fn is_legal(&mut self, mv: &Move) -> bool {
        let (pos, rules) = (self.pos, self.rules);
        match *mv {
            Move::Superposition {
                from,
                red,
                blue,
                promotion,
                ..
            } if !rules.deterministic => {
                let key = (from, red.min(blue), red.max(blue), promotion);
                *self
                    .shape_legal
                    .entry(key)
                    .or_insert_with(|| check_pseudo_legal(pos, *mv, rules).is_ok())
            }
            _ => check_pseudo_legal(pos, *mv, rules).is_ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Game;
    use rand::SeedableRng;
    use rand::seq::IndexedRandom;

    /// Legality is exactly "no outcome of positive probability leaves the mover in check"
    /// (plus the king-capture and castling conditions): along random games, every
    /// pseudo-legal move is accepted or refused as its own outcomes say, so the shape cache
    /// of `legal_moves` and `check_legal` never refuse a good move or accept a bad one.
    #[test]
    fn legal_exactly_when_no_outcome_leaves_the_king_in_check() {
        for (board, rules) in [
            ("4x5", ""),
            ("5x6", "simplified,tunnelling"),
            ("4x6", "no-box,hadamard"),
            ("5x6", "deterministic"),
            ("4x4", "hadamard-plus,stay-only"),
        ] {
            let rules = Rules::parse_list(rules).unwrap();
            let mut game = Game::new(rules, board.parse().unwrap()).unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
            for _ in 0..30 {
                let pos = game.position().clone();
                let listed = legal_moves(&pos, &rules);
                // The list skips re-validating generated moves and decides each
                // superposition shape once: the same list as checking every pseudo-legal
                // move through the full `check_legal`.
                let validated: Vec<Move> = pseudo_moves(&pos, &rules)
                    .into_iter()
                    .filter(|m| check_legal(&pos, m, &rules).is_ok())
                    .collect();
                assert_eq!(listed, validated, "{pos}");
                for mv in pseudo_moves(&pos, &rules) {
                    let mover = pos.side;
                    let castles = matches!(mv, Move::Step { from, to, .. }
                        if pos.piece_at(from).is_some_and(|p| p.kind == PieceKind::King)
                            && from.file().abs_diff(to.file()) == 2);
                    let king_capture = matches!(mv, Move::Step { from, to, .. }
                        if pos.piece_at(to) == Some(Piece::new(mover.opposite(), PieceKind::King))
                            && capture_chance(&pos, from, to, &rules) > 0.0);
                    if castles || matches!(mv, Move::RemoteCollapse { .. }) {
                        continue;
                    }
                    let safe = !king_capture
                        && outcomes(&pos, &mv, &rules)
                            .iter()
                            .all(|(p, pr, _)| *pr > 0.0 && !in_check(p, mover, &rules));
                    assert_eq!(
                        check_legal(&pos, &mv, &rules).is_ok(),
                        safe,
                        "{mv} in {pos}"
                    );
                    assert_eq!(listed.contains(&mv), safe, "{mv} in {pos} (move list)");
                }
                if game.status() != crate::game::Status::Ongoing {
                    break;
                }
                let mv = *game.legal_moves().choose(&mut rng).unwrap();
                game.play(&mv, &mut rng).unwrap();
            }
        }
    }
}
