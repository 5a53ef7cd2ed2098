//! Cantwell quantum chess in the search: moves are the game's QCAN strings, a chance node's
//! outcomes are the move's measurement results (`.m1` the move proceeded, `.m0` it did not)
//! with the probabilities the game's own circuit reports.

use crate::eval::{ClassicalBoard, KING_DANGER_CP, MOBILITY_CP, piece_value, sign, square_bonus};
use crate::node::{SearchNode, Searchable, Terminal};
use crate::search::EngineError;
use qchess_board::{Color, Geometry, PieceKind, Square};
use qchess_cantwell::circuit::Variant;
use qchess_cantwell::{Game, GameStatus};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::hash::{DefaultHasher, Hash, Hasher};

/// A Cantwell game under search (a copy of the caller's game, moved by apply and undo).
#[derive(Clone, Debug)]
pub struct CantwellNode {
    game: Game,
    rng: ChaCha8Rng,
}

impl CantwellNode {
    /// The node of `game`.
    pub fn new(game: Game) -> CantwellNode {
        CantwellNode {
            game,
            rng: ChaCha8Rng::seed_from_u64(0),
        }
    }

    /// The game at this node.
    pub fn game(&self) -> &Game {
        &self.game
    }
}

impl Searchable for Game {
    type Node = CantwellNode;
    fn search_root(&self, _seed: u64) -> Result<CantwellNode, EngineError> {
        Ok(CantwellNode::new(self.clone()))
    }
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

    fn moves(&mut self) -> Vec<String> {
        self.game.legal_moves()
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
            Err(_) => vec![(Some(false), 1.0)],
        }
    }

    fn apply(&mut self, mv: &String, outcome: &Option<bool>) -> bool {
        self.game
            .apply(&with_outcome(mv, *outcome), &mut self.rng)
            .is_ok()
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
        self.game
            .possible_moves()
            .into_iter()
            .filter(|c| c.variant == Variant::Capture && self.game.changes_state(c))
            .map(|c| qchess_cantwell::legal::notation_of(&c))
            .collect()
    }

    fn is_tactical(&mut self, mv: &String) -> bool {
        self.game
            .classify(mv)
            .is_ok_and(|c| c.variant == Variant::Capture)
    }

    fn key(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.game.fen().hash(&mut h);
        for p in self.game.probabilities() {
            p.to_bits().hash(&mut h);
        }
        self.game.state_size().hash(&mut h);
        h.finish()
    }

    fn token(&self, mv: &String, outcome: &Option<bool>) -> String {
        with_outcome(mv, *outcome)
    }
}
