//! Akl-style quantum chess in the search. A turn is two decisions of the same side: touch a
//! piece (a chance node: a quantum piece collapses to either type, 1/2 each), then move it (a
//! chance node when it captures a quantum piece, which collapses before it leaves).
//!
//! The engine decides from the side to move's view alone: the root is the game's position
//! with every type that side has not seen drawn from the seed
//! ([`qchess_akl::AklPosition::sample_hidden`]), so two games differing only in hidden types
//! give the same search.

use crate::eval::{ClassicalBoard, KING_DANGER_CP, MOBILITY_CP, piece_value, sign, square_bonus};
use crate::node::{SearchNode, Searchable, Terminal};
use crate::search::EngineError;
use qchess_akl::{AklMove, AklPosition, Game, GameStatus, PieceState};
use qchess_board::{Color, Geometry, Piece, PieceKind, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

/// One decision in Akl: touch a piece, or move the touched piece.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum AklChoice {
    /// Touch the piece on this square.
    Touch(Square),
    /// Move the touched piece.
    Move(AklMove),
}

impl fmt::Display for AklChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AklChoice::Touch(sq) => write!(f, "{sq}"),
            AklChoice::Move(m) => write!(f, "{m}"),
        }
    }
}

/// An Akl game under search (a sampled view of the caller's game, moved by apply and undo).
#[derive(Clone, Debug)]
pub struct AklNode {
    stack: Vec<Game>,
}

impl AklNode {
    /// The node of `game` as it stands (no sampling: the caller has chosen what it knows).
    pub fn new(game: Game) -> AklNode {
        AklNode { stack: vec![game] }
    }

    /// The root for the side to move of `game`: its view, unseen types drawn from `seed`, and
    /// the pending touch (public) replayed.
    pub fn from_view(game: &Game, seed: u64) -> Result<AklNode, EngineError> {
        let side = game.side_to_move();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sampled = game
            .position()
            .sample_hidden(side, game.rules().visibility, &mut rng);
        AklNode::from_position(sampled, game.rules(), game.pending_touch().map(|t| t.0))
    }

    /// The node of `position` (already as the side to move may know it), with a touch of
    /// `pending` replayed when one is waiting for its move.
    pub fn from_position(
        position: AklPosition,
        rules: qchess_akl::Rules,
        pending: Option<Square>,
    ) -> Result<AklNode, EngineError> {
        let mut g = Game::with_rules(position, rules);
        if let Some(sq) = pending {
            // The touched piece is already classical in the position: a plain touch lists its moves.
            g.touch_forced(sq, None)
                .map_err(|e| EngineError::BadPosition(e.to_string()))?;
        }
        Ok(AklNode::new(g))
    }

    fn top(&self) -> &Game {
        self.stack.last().expect("never empty")
    }
}

impl Searchable for Game {
    type Node = AklNode;
    fn search_root(&self, seed: u64) -> Result<AklNode, EngineError> {
        AklNode::from_view(self, seed)
    }
}

/// Both collapse outcomes of a quantum piece (one when its types are equal), or its type.
fn collapses(p: &qchess_akl::AklPiece) -> Vec<(Option<PieceKind>, f64)> {
    match p.state {
        PieceState::Quantum if p.pair.primary != p.pair.secondary => {
            vec![(Some(p.pair.primary), 0.5), (Some(p.pair.secondary), 0.5)]
        }
        PieceState::Quantum => vec![(Some(p.pair.primary), 1.0)],
        PieceState::Classical(k) => vec![(Some(k), 1.0)],
    }
}

impl SearchNode for AklNode {
    type Move = AklChoice;
    type Outcome = Option<PieceKind>;

    fn side_to_move(&self) -> Color {
        self.top().side_to_move()
    }

    fn terminal(&mut self) -> Option<Terminal> {
        match self.top().status() {
            GameStatus::Ongoing => None,
            GameStatus::Won { winner } => Some(Terminal::Win(winner)),
            GameStatus::Drawn(_) => Some(Terminal::Draw),
        }
    }

    fn moves(&mut self) -> Vec<AklChoice> {
        let g = self.top();
        match g.pending_touch() {
            Some((_, _, moves)) => moves.iter().map(|m| AklChoice::Move(*m)).collect(),
            None => g.touchable().into_iter().map(AklChoice::Touch).collect(),
        }
    }

    fn outcomes(&mut self, mv: &AklChoice) -> Vec<(Option<PieceKind>, f64)> {
        let pos = self.top().position();
        match mv {
            AklChoice::Touch(sq) => match pos.piece(*sq) {
                Some(p) if p.is_quantum() => collapses(p),
                Some(_) => vec![(None, 1.0)],
                None => Vec::new(),
            },
            AklChoice::Move(m) => match pos.piece(m.to) {
                Some(p) => collapses(p),
                None => vec![(None, 1.0)],
            },
        }
    }

    fn apply(&mut self, mv: &AklChoice, outcome: &Option<PieceKind>) -> bool {
        let mut g = self.top().clone();
        let ok = match mv {
            AklChoice::Touch(sq) => g.touch_forced(*sq, *outcome).is_ok(),
            AklChoice::Move(m) => g.play_forced(*m, *outcome).is_ok(),
        };
        if ok {
            self.stack.push(g);
        }
        ok
    }

    fn undo(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    /// Expected material: a quantum piece is worth the mean of its two types (a touch
    /// collapses it to either with probability 1/2), a classical one its type; kings are not
    /// material (their capture ends the game). Plus a small square bonus, mobility and king
    /// danger, both on two classical boards that differ only in the types of the quantum
    /// pieces (all primary, all secondary; the occupancy is the same): mobility is the mean
    /// of the two boards' pseudo-legal move counts (exact in expectation: a piece's moves
    /// depend only on its own type and the occupancy), king danger the probability that at
    /// least one enemy piece attacks the king, each quantum attacker attacking with
    /// probability 1/2 per type that reaches the king, collapses independent.
    fn evaluate(&mut self) -> f64 {
        let pos = self.top().position();
        let mut boards = [
            ClassicalBoard::new(Geometry::STANDARD),
            ClassicalBoard::new(Geometry::STANDARD),
        ];
        let mut kings = Vec::new();
        let mut v = 0.0;
        for (sq, p) in pos.pieces() {
            let types = match p.state {
                PieceState::Quantum => [p.pair.primary, p.pair.secondary],
                PieceState::Classical(k) => [k, k],
            };
            for (board, kind) in boards.iter_mut().zip(types) {
                board.put(sq, Piece::new(p.color, kind), 1.0);
            }
            if p.is_king() {
                kings.push((sq, p.color));
                continue;
            }
            let worth = |k: PieceKind| piece_value(k) + square_bonus(k, p.color, sq);
            v += sign(p.color) * 0.5 * (worth(types[0]) + worth(types[1]));
        }
        v += MOBILITY_CP * 0.5 * (boards[0].mobility() + boards[1].mobility());
        for (k, color) in kings {
            let [a0, a1] = [0, 1].map(|i| boards[i].attackers(k, color.opposite()));
            let none = (a0 | a1).iter().fold(1.0, |q, a| {
                let p = 0.5
                    * (f64::from(u8::from(a0.contains(a))) + f64::from(u8::from(a1.contains(a))));
                q * (1.0 - p)
            });
            v -= sign(color) * KING_DANGER_CP * (1.0 - none);
        }
        v
    }

    fn is_tactical(&mut self, mv: &AklChoice) -> bool {
        match mv {
            AklChoice::Move(m) => self.top().position().piece(m.to).is_some(),
            AklChoice::Touch(_) => false,
        }
    }

    fn key(&self) -> u64 {
        let g = self.top();
        let mut h = DefaultHasher::new();
        g.position().hash(&mut h);
        g.pending_touch().map(|(s, k, _)| (s, k)).hash(&mut h);
        h.finish()
    }

    /// A touch alone is `<e2>`-less: the turn is only written once its move is known, so a
    /// touch token is the square; a move token is the whole turn as the record writes it is
    /// built by the caller from the game's [`qchess_akl::TurnEntry`].
    fn token(&self, mv: &AklChoice, _outcome: &Option<PieceKind>) -> String {
        mv.to_string()
    }
}
