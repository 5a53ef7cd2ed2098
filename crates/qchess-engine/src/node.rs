//! The one interface the search needs from a game.

use crate::search::EngineError;
use qchess_board::Color;
use std::fmt;

/// How a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// This side won.
    Win(Color),
    /// A draw.
    Draw,
}

/// A game position the search walks: decision nodes (the side to move picks a move) whose
/// moves lead to chance nodes (the move's outcomes, each with its exact probability).
///
/// Every method delegates to the rule crate; an implementation holds no rule logic of its own.
pub trait SearchNode {
    /// A decision of the side to move.
    type Move: Clone + PartialEq + fmt::Debug + fmt::Display;
    /// One outcome of a decision (a measurement result, dice rolls, a collapse).
    type Outcome: Clone + fmt::Debug;

    /// The side to decide next. It may stay the same after a move (an Akl touch is followed
    /// by the touched piece's move): the search counts a ply only when it changes.
    fn side_to_move(&self) -> Color;
    /// Whether the game is over here, and how.
    fn terminal(&mut self) -> Option<Terminal>;
    /// The legal decisions, in the rule crate's order.
    fn moves(&mut self) -> Vec<Self::Move>;
    /// The outcomes of `mv` with their exact probabilities (summing to 1); empty when `mv`
    /// cannot be played.
    fn outcomes(&mut self, mv: &Self::Move) -> Vec<(Self::Outcome, f64)>;
    /// Plays `mv` with `outcome`; `false` (and nothing changed) when the rule crate refuses.
    fn apply(&mut self, mv: &Self::Move, outcome: &Self::Outcome) -> bool;
    /// Takes back the last [`SearchNode::apply`].
    fn undo(&mut self);
    /// The static evaluation in centipawns from White's side.
    fn evaluate(&mut self) -> f64;
    /// Whether `mv` is a capture (or attempted capture): searched on in quiescence.
    fn is_tactical(&mut self, mv: &Self::Move) -> bool;
    /// Whether the side to move has a legal decision: `!self.moves().is_empty()` unless the
    /// rule crate can answer it without listing them all.
    fn has_moves(&mut self) -> bool {
        !self.moves().is_empty()
    }
    /// The legal decisions [`SearchNode::is_tactical`] holds for, in the order of
    /// [`SearchNode::moves`] (what quiescence searches): filtered from the whole list unless
    /// the rule crate can list them alone.
    fn tactical_moves(&mut self) -> Vec<Self::Move> {
        let mut moves = self.moves();
        moves.retain(|m| self.is_tactical(m));
        moves
    }
    /// A hash of everything the value of this node depends on (transposition table key).
    fn key(&self) -> u64;
    /// The move with its outcome attached, as the variant's record notation writes it (the
    /// token `qchess engine` and `qchess eval` exchange).
    fn token(&self, mv: &Self::Move, outcome: &Self::Outcome) -> String;
}

/// A game the engine can search: it builds the search's root node.
pub trait Searchable {
    /// The node type of the search.
    type Node: SearchNode;
    /// The root node. `seed` draws whatever the side to move cannot know (Akl's unseen
    /// types); the other variants ignore it.
    fn search_root(&self, seed: u64) -> Result<Self::Node, EngineError>;
}
