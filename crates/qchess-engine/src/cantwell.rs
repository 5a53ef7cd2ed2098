//! Cantwell quantum chess in the search: moves are the game's QCAN strings, a chance node's
//! outcomes are the move's measurement results (`.m1` the move proceeded, `.m0` it did not)
//! with the probabilities the game's own circuit reports.

use crate::eval::{ClassicalBoard, KING_DANGER_CP, MOBILITY_CP, piece_value, sign, square_bonus};
use crate::node::{SearchNode, Searchable, Terminal};
use crate::search::EngineError;
use qchess_board::{Color, Geometry, PieceKind, Square};
use qchess_cantwell::circuit::Variant;
use qchess_cantwell::possibility::{Classified, classify, valid_pattern};
use qchess_cantwell::{Game, GameError, GameStatus};
use qchess_cantwell::{MoveShape, QcanMove};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::hash::{DefaultHasher, Hash, Hasher};

/// A Cantwell game under search (a copy of the caller's game, moved by apply and undo).
#[derive(Clone, Debug)]
pub struct CantwellNode {
    game: Game,
    rng: ChaCha8Rng,
    /// A memory-budget refusal not yet taken by the search ([`SearchNode::take_error`]).
    error: Option<EngineError>,
}

impl CantwellNode {
    /// The node of `game`.
    pub fn new(game: Game) -> CantwellNode {
        CantwellNode {
            game,
            rng: ChaCha8Rng::seed_from_u64(0),
            error: None,
        }
    }

    /// Keeps `e` for the search when it is a memory-budget refusal (the search stops and
    /// answers it); other refusals are the rules' own answers.
    fn note(&mut self, e: &GameError) {
        if let GameError::StateTooLarge { asked, available } = *e {
            self.error
                .get_or_insert(EngineError::StateTooLarge { asked, available });
        }
    }

    /// The game at this node.
    pub fn game(&self) -> &Game {
        &self.game
    }
}

impl Searchable for Game {
    type Node = CantwellNode;
    /// The search plays on a copy of the game, counted against the game's memory budget
    /// (issue 10, Deliver 5): the copy's state, start position and undo records are asked
    /// of what the budget leaves before it is made ([`EngineError::StateTooLarge`] when they
    /// do not fit), and the copy's own budget is what the original leaves, so the two
    /// together stay within the one budget.
    fn search_root(&self, _seed: u64) -> Result<CantwellNode, EngineError> {
        let state = self.state();
        // The start position and the undo records: the game's budget less the state's share.
        let records = self.memory_budget().saturating_sub(state.memory_budget());
        let asked = state.state_bytes().saturating_add(records);
        let available = state.memory_budget().saturating_sub(state.bytes());
        if asked > available {
            return Err(EngineError::StateTooLarge { asked, available });
        }
        // Made fallibly within the budget (Game::try_clone), not by the infallible clone.
        let mut game = self.try_clone().map_err(|e| match e {
            GameError::StateTooLarge { asked, available } => {
                EngineError::StateTooLarge { asked, available }
            }
            other => EngineError::BadPosition(other.to_string()),
        })?;
        game.set_memory_budget(
            self.memory_budget()
                .saturating_sub(state.bytes().saturating_add(records)),
        );
        Ok(CantwellNode::new(game))
    }
}

/// How far back in the game the search looks for repeated positions (plies).
const EARLIER_PLIES: usize = 16;

/// The node key of `game`: the FEN's letters, side, castling and e.p. fields (not its move
/// counters, so a repeated position has the same key), the 64 square probabilities (rounded
/// to 1e-12) and the state size.
fn key_of(game: &Game) -> u64 {
    let mut h = DefaultHasher::new();
    for field in game.fen().split_whitespace().take(4) {
        field.hash(&mut h);
    }
    for p in game.probabilities() {
        ((p * 1e12).round() as i64).hash(&mut h);
    }
    game.state_size().hash(&mut h);
    h.finish()
}

/// The capture variants among [`Game::possible_moves`], in its order, without classifying
/// the other candidates: a capture is a two-square move from a letter of the side to move onto
/// a square holding an enemy letter (D10), so only those squares are tried (a pawn's diagonal
/// steps, with the four promotions on the last rank; a piece's pattern squares, then a king's
/// castling squares).
fn capture_candidates(game: &Game) -> Vec<Classified> {
    let layer = game.classical();
    let side = layer.flags.side_to_move;
    let v = &layer.pieces;
    let enemy = |t: Square| v.get(t).is_some_and(|p| p.color != side);
    let mut out = Vec::new();
    let mut try_move = |from: Square, to: Square, promotion: Option<PieceKind>| {
        let mut mv = QcanMove::plain(MoveShape::Standard { from, to });
        mv.promotion = promotion;
        if let Ok(c) = classify(layer, &mv) {
            if c.variant == Variant::Capture {
                out.push(c);
            }
        }
    };
    for s in Square::ALL {
        let Some(piece) = v.get(s).filter(|p| p.color == side) else {
            continue;
        };
        if piece.kind == PieceKind::Pawn {
            let fwd: i8 = if side == Color::White { 1 } else { -1 };
            let last = if side == Color::White { 7 } else { 0 };
            for df in [-1, 1] {
                let Some(t) = s.offset(df, fwd).filter(|&t| enemy(t)) else {
                    continue;
                };
                if t.rank() == last {
                    for k in [
                        PieceKind::Queen,
                        PieceKind::Rook,
                        PieceKind::Bishop,
                        PieceKind::Knight,
                    ] {
                        try_move(s, t, Some(k));
                    }
                } else {
                    try_move(s, t, None);
                }
            }
            continue;
        }
        for t in Square::ALL {
            if enemy(t) && valid_pattern(piece.kind, s, t) {
                try_move(s, t, None);
            }
        }
        if piece.kind == PieceKind::King && s.file() == 4 {
            for f in [2u8, 6] {
                let t = Square::new(f, s.rank());
                if enemy(t) {
                    try_move(s, t, None);
                }
            }
        }
    }
    out
}

fn with_outcome(mv: &str, outcome: Option<bool>) -> String {
    match outcome {
        Some(true) => format!("{mv}.m1"),
        Some(false) => format!("{mv}.m0"),
        None => mv.to_string(),
    }
}

impl SearchNode for CantwellNode {
    type Move = String;
    type Outcome = Option<bool>;

    fn side_to_move(&self) -> Color {
        self.game.side_to_move()
    }

    fn terminal(&mut self) -> Option<Terminal> {
        match self.game.status() {
            GameStatus::Ongoing => None,
            GameStatus::Won { winner, .. } => Some(Terminal::Win(winner)),
            GameStatus::Drawn { .. } => Some(Terminal::Draw),
        }
    }

    /// [`Game::try_legal_moves`]: a copy over the memory budget is noted for the search
    /// ([`SearchNode::take_error`]) and the list is empty.
    fn moves(&mut self) -> Vec<String> {
        match self.game.try_legal_moves() {
            Ok(moves) => moves,
            Err(e) => {
                self.note(&e);
                Vec::new()
            }
        }
    }

    fn take_error(&mut self) -> Option<EngineError> {
        self.error.take()
    }

    /// No legal move (and no king captured): the game cannot go on, and `qchess match`
    /// adjudicates it drawn (the paper has no stalemate rule), so the search values it 0.
    fn no_moves_terminal(&mut self) -> Option<Terminal> {
        Some(Terminal::Draw)
    }

    fn outcomes(&mut self, mv: &String) -> Vec<(Option<bool>, f64)> {
        let Ok(c) = self.game.classify(mv) else {
            return Vec::new();
        };
        if !c.move_type.measures(c.variant) {
            return vec![(None, 1.0)];
        }
        // The probability that the move proceeds is what the game's circuit reports when the
        // outcome is forced to `.m1`.
        match self
            .game
            .apply(&with_outcome(mv, Some(true)), &mut self.rng)
        {
            Ok(record) => {
                let p = record.probability.unwrap_or(1.0);
                let _ = self.game.undo();
                let mut out = vec![(Some(true), p)];
                if p < 1.0 - 1e-12 {
                    out.push((Some(false), 1.0 - p));
                }
                out
            }
            Err(e) => {
                self.note(&e);
                vec![(Some(false), 1.0)]
            }
        }
    }

    /// A move that measures nothing is played at once; a measuring one is played with `.m1`
    /// (its probability is what the game's circuit reports) and stays played when `.m1` is
    /// the more likely outcome (ties: `.m1` first, as in [`SearchNode::outcomes`]).
    fn outcomes_applied(&mut self, mv: &String) -> (Vec<(Option<bool>, f64)>, bool) {
        let Ok(c) = self.game.classify(mv) else {
            return (Vec::new(), false);
        };
        if !c.move_type.measures(c.variant) {
            let played = match self.game.apply(mv, &mut self.rng) {
                Ok(_) => true,
                Err(e) => {
                    self.note(&e);
                    false
                }
            };
            return (vec![(None, 1.0)], played);
        }
        match self
            .game
            .apply(&with_outcome(mv, Some(true)), &mut self.rng)
        {
            Ok(record) => {
                let p = record.probability.unwrap_or(1.0);
                if p < 1.0 - 1e-12 && 1.0 - p > p {
                    let _ = self.game.undo();
                    (vec![(Some(false), 1.0 - p), (Some(true), p)], false)
                } else if p < 1.0 - 1e-12 {
                    (vec![(Some(true), p), (Some(false), 1.0 - p)], true)
                } else {
                    (vec![(Some(true), p)], true)
                }
            }
            Err(e) => {
                self.note(&e);
                (vec![(Some(false), 1.0)], false)
            }
        }
    }

    fn apply(&mut self, mv: &String, outcome: &Option<bool>) -> bool {
        match self.game.apply(&with_outcome(mv, *outcome), &mut self.rng) {
            Ok(_) => true,
            Err(e) => {
                self.note(&e);
                false
            }
        }
    }

    fn undo(&mut self) {
        let _ = self.game.undo();
    }

    /// Expected material: each square's probability times the value of the letter on it (a
    /// king's presence is worth 2000, so the probability that it is captured counts), and a
    /// small square bonus weighted the same way. Plus mobility (pseudo-legal moves on the
    /// board of all letters, each piece's moves weighted by its presence probability) and king
    /// danger (the probability that a king's square is occupied and attacked by at least one
    /// present enemy letter, the letters taken as independent).
    fn evaluate(&mut self) -> f64 {
        let probs = self.game.probabilities();
        let pieces = self.game.pieces();
        let mut board = ClassicalBoard::new(Geometry::STANDARD);
        let mut v = 0.0;
        for sq in Square::ALL {
            if let Some(pc) = pieces.get(sq) {
                let p = probs[sq.index() as usize];
                v += sign(pc.color)
                    * p
                    * (piece_value(pc.kind) + square_bonus(pc.kind, pc.color, sq));
                if p > 0.0 {
                    board.put(sq, pc, p);
                }
            }
        }
        v += MOBILITY_CP * board.mobility();
        for sq in Square::ALL {
            let Some(pc) = pieces.get(sq) else { continue };
            if pc.kind != PieceKind::King || board.weight(sq) == 0.0 {
                continue;
            }
            let none = board
                .attackers(sq, pc.color.opposite())
                .iter()
                .fold(1.0, |q, a| q * (1.0 - board.weight(a)));
            v -= sign(pc.color) * KING_DANGER_CP * board.weight(sq) * (1.0 - none);
        }
        v
    }

    /// The capture variants among the possible moves that change the state (Definition 2,
    /// each decided by the game's `changes_state`), in the order of `legal_moves`: the same
    /// list as filtering `legal_moves` by [`SearchNode::is_tactical`], without deciding every
    /// other candidate (a quiescence leaf with no capture asks nothing of the state).
    fn tactical_moves(&mut self) -> Vec<String> {
        if !self.game.status().is_ongoing() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for c in capture_candidates(&self.game) {
            match self.game.try_changes_state(&c) {
                Ok(true) => out.push(qchess_cantwell::legal::notation_of(&c)),
                Ok(false) => {}
                Err(e) => {
                    self.note(&e);
                    return Vec::new();
                }
            }
        }
        out
    }

    /// Captures by the expected material they take (the victim's value times the chance
    /// that it and the mover are there), the cheaper mover first among equals; promotions by
    /// the piece gained. Every capture ranks above 0, every other move 0.
    fn order_score(&mut self, mv: &String) -> f64 {
        let Ok(c) = self.game.classify(mv) else {
            return 0.0;
        };
        let probs = self.game.probabilities();
        let pieces = self.game.pieces();
        let p = |sq: Square| probs[sq.index() as usize];
        let mut score = 0.0;
        if c.variant == Variant::Capture {
            let mut victims = c.shape.targets();
            victims.extend(c.ep_square);
            let taken: f64 = victims
                .into_iter()
                .filter_map(|t| {
                    let v = pieces.get(t)?;
                    (v.color != c.mover.color).then(|| p(t) * piece_value(v.kind))
                })
                .sum();
            let there: f64 = c.shape.sources().into_iter().map(p).sum();
            score += 1.0 + taken * there.min(1.0) + (2000.0 - piece_value(c.mover.kind)) / 1000.0;
        }
        if let Some(k) = c.promotion {
            score += piece_value(k) - piece_value(PieceKind::Pawn);
        }
        score
    }

    /// The keys of the last 16 positions of the game (its own undo, on a copy). The copy is
    /// made within the memory budget ([`Game::try_clone`], issue 10, Deliver 5): one that
    /// does not fit is noted for the search ([`SearchNode::take_error`], which then answers
    /// [`EngineError::StateTooLarge`]) and the answer is `None`; the node is unchanged.
    fn earlier_keys(&mut self) -> Option<Vec<u64>> {
        let mut game = match self.game.try_clone() {
            Ok(game) => game,
            Err(e) => {
                let e = match e {
                    GameError::StateTooLarge { asked, available } => {
                        EngineError::StateTooLarge { asked, available }
                    }
                    other => EngineError::BadPosition(other.to_string()),
                };
                self.error.get_or_insert(e);
                return None;
            }
        };
        let mut keys = Vec::new();
        for _ in 0..EARLIER_PLIES {
            if game.undo().is_err() {
                break;
            }
            keys.push(key_of(&game));
        }
        Some(keys)
    }

    fn is_tactical(&mut self, mv: &String) -> bool {
        self.game
            .classify(mv)
            .is_ok_and(|c| c.variant == Variant::Capture)
    }

    fn key(&self) -> u64 {
        key_of(&self.game)
    }

    fn token(&self, mv: &String, outcome: &Option<bool>) -> String {
        with_outcome(mv, *outcome)
    }
}
