//! Niel's Chess in the search: moves are the game's [`Move`]s, a chance node's outcomes are
//! the game's own [`Game::outcomes`] (every dice roll and collapse with its probability).

use crate::eval::{ClassicalBoard, KING_DANGER_CP, MOBILITY_CP, piece_value, sign, square_bonus};
use crate::node::{SearchNode, Searchable, Terminal};
use crate::search::EngineError;
use qchess_board::{Color, PieceKind, Square};
use qchess_niels::{
    Game, Move, Occupant, PairId, Position, capture_chance, group_outcomes, is_capture,
};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// One outcome of a Niel's Chess move: the position it leaves and the rolls that decide it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NielsOutcome {
    /// The position after the move.
    pub position: Position,
    /// The dice results, in the order rolled (empty when nothing was rolled).
    pub rolls: Vec<u8>,
}

/// A Niel's Chess game under search: a stack of games, one per applied move (the game's own
/// undo replays the whole record, too slow for a search).
#[derive(Clone, Debug)]
pub struct NielsNode {
    stack: Vec<(Game, Option<Vec<Move>>)>,
}

impl NielsNode {
    /// The node of `game`.
    pub fn new(game: Game) -> NielsNode {
        NielsNode {
            stack: vec![(game, None)],
        }
    }

    fn top(&self) -> &Game {
        &self.stack.last().expect("never empty").0
    }

    fn cached_moves(&mut self) -> &Vec<Move> {
        let (game, moves) = self.stack.last_mut().expect("never empty");
        moves.get_or_insert_with(|| game.legal_moves())
    }
}

impl Searchable for Game {
    type Node = NielsNode;
    fn search_root(&self, _seed: u64) -> Result<NielsNode, EngineError> {
        Ok(NielsNode::new(self.clone()))
    }
}

/// The move token with its rolls attached: `b1a3[3,4]` (no suffix when nothing was rolled).
pub fn token(mv: &Move, rolls: &[u8]) -> String {
    if rolls.is_empty() {
        mv.to_string()
    } else {
        let r: Vec<String> = rolls.iter().map(|r| r.to_string()).collect();
        format!("{mv}[{}]", r.join(","))
    }
}

impl SearchNode for NielsNode {
    type Move = Move;
    type Outcome = NielsOutcome;

    fn side_to_move(&self) -> Color {
        self.top().position().side_to_move()
    }

    fn terminal(&mut self) -> Option<Terminal> {
        if !self.has_moves() {
            let game = self.top();
            let side = game.position().side_to_move();
            return Some(if game.in_check() {
                Terminal::Win(side.opposite())
            } else {
                Terminal::Draw
            });
        }
        if self.stack.len() == 1 {
            // The real game knows its repetitions and counters.
            return match self.top().status() {
                qchess_niels::Status::Ongoing => None,
                qchess_niels::Status::Checkmate { winner } => Some(Terminal::Win(winner)),
                _ => Some(Terminal::Draw),
            };
        }
        (self.top().position().halfmove_clock() >= 100).then_some(Terminal::Draw)
    }

    fn moves(&mut self) -> Vec<Move> {
        self.cached_moves().clone()
    }

    /// From the listed moves when this node has listed them, else the rule crate's
    /// [`Game::has_legal_move`], which stops at the first legal move (a leaf no longer lists
    /// a queen's thousands of superposition moves to learn that the game goes on).
    fn has_moves(&mut self) -> bool {
        match &self.stack.last().expect("never empty").1 {
            Some(moves) => !moves.is_empty(),
            None => self.top().has_legal_move(),
        }
    }

    /// From the listed moves when this node has listed them, else the rule crate's
    /// [`Game::legal_captures`], which generates and checks the captures alone.
    fn tactical_moves(&mut self) -> Vec<Move> {
        let (game, moves) = self.stack.last().expect("never empty");
        match moves {
            Some(moves) => moves
                .iter()
                .copied()
                .filter(|m| is_capture(game.position(), m))
                .collect(),
            None => game.legal_captures(),
        }
    }

    fn outcomes(&mut self, mv: &Move) -> Vec<(NielsOutcome, f64)> {
        match self.top().outcomes(mv) {
            Ok(list) => list
                .into_iter()
                .map(|(position, p, o)| {
                    (
                        NielsOutcome {
                            position,
                            rolls: o.rolls.iter().map(|r| r.value).collect(),
                        },
                        p,
                    )
                })
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn apply(&mut self, _mv: &Move, outcome: &NielsOutcome) -> bool {
        let rules = *self.top().rules();
        self.stack
            .push((Game::from_position(rules, outcome.position.clone()), None));
        true
    }

    fn undo(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    /// Expected material: a conventional piece counts fully, each half of an indefinite pair
    /// by the exact probability that the pair collapses to it (its entangled group's
    /// outcomes, from the rule crate); a small square bonus weighted the same way. Plus
    /// mobility (pseudo-legal moves on the board of every piece and half, a half's moves
    /// weighted by its probability) and king danger (the rule crate's check chance, 8.7: the
    /// highest chance that one attacker's hypothetical capture of the king would succeed).
    fn evaluate(&mut self) -> f64 {
        let game = self.top();
        let pos = game.position();
        let rules = game.rules();
        let mut marginal: HashMap<(PairId, qchess_niels::Mark), f64> = HashMap::new();
        let mut done: Vec<PairId> = Vec::new();
        for pair in pos.pairs() {
            if done.contains(&pair.id) {
                continue;
            }
            let group = pos.group_of(pair.id);
            for o in group_outcomes(pos, &group, rules) {
                for (id, mark) in o.marks {
                    *marginal.entry((id, mark)).or_insert(0.0) += o.probability;
                }
            }
            done.extend(group);
        }
        let mut board = ClassicalBoard::new(pos.geometry());
        let mut v = 0.0;
        for sq in Square::ALL {
            let Some(occ) = pos.occupant(sq) else {
                continue;
            };
            let (piece, p) = match occ {
                Occupant::Piece(pc) => (pc, 1.0),
                Occupant::Half { pair, mark } => {
                    let Some(pr) = pos.pair(pair) else { continue };
                    (
                        pr.piece,
                        marginal.get(&(pair, mark)).copied().unwrap_or(0.5),
                    )
                }
            };
            board.put(sq, piece, p);
            if piece.kind == PieceKind::King {
                continue; // mate ends the game; a king's value is not material here
            }
            v += sign(piece.color)
                * p
                * (piece_value(piece.kind) + square_bonus(piece.kind, piece.color, sq));
        }
        v += MOBILITY_CP * board.mobility();
        for color in [Color::White, Color::Black] {
            let mut chance: f64 = 0.0;
            for k in pos.king_squares(color) {
                for a in board.attackers(k, color.opposite()).iter() {
                    chance = chance.max(capture_chance(pos, a, k, rules));
                }
            }
            v -= sign(color) * KING_DANGER_CP * chance;
        }
        v
    }

    /// A capture or attempted capture, en passant included ([`qchess_niels::is_capture`]).
    fn is_tactical(&mut self, mv: &Move) -> bool {
        is_capture(self.top().position(), mv)
    }

    fn key(&self) -> u64 {
        let mut h = DefaultHasher::new();
        self.top().position().hash(&mut h);
        h.finish()
    }

    fn token(&self, mv: &Move, outcome: &NielsOutcome) -> String {
        token(mv, &outcome.rolls)
    }
}
