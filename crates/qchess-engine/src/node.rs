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
    type Move: Clone + PartialEq + fmt::Debug + fmt::Display + Send;
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
    /// [`SearchNode::outcomes`], most likely first (ties in their order), and whether `mv` is
    /// now already applied with the first of them (as by [`SearchNode::apply`], to be taken
    /// back by [`SearchNode::undo`]): a variant that plays the move to learn its probabilities
    /// keeps it played instead of playing it twice. The default applies nothing.
    fn outcomes_applied(&mut self, mv: &Self::Move) -> (Vec<(Self::Outcome, f64)>, bool) {
        let mut outs = self.outcomes(mv);
        outs.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        (outs, false)
    }
    /// Plays `mv` with `outcome`; `false` (and nothing changed) when the rule crate refuses.
    fn apply(&mut self, mv: &Self::Move, outcome: &Self::Outcome) -> bool;
    /// Takes back the last [`SearchNode::apply`].
    fn undo(&mut self);
    /// The static evaluation in centipawns from White's side.
    fn evaluate(&mut self) -> f64;
    /// Whether `mv` is a capture (or attempted capture): searched on in quiescence.
    fn is_tactical(&mut self, mv: &Self::Move) -> bool;
    /// How the game ends when the side to move has no legal decision and
    /// [`SearchNode::terminal`] did not already say so, or `None` (the default) when such a
    /// position is valued by the static evaluation. Cantwell's rules have no stalemate rule:
    /// a game there cannot go on and `qchess match` adjudicates it drawn, so its node answers
    /// [`Terminal::Draw`] and a winning search does not walk into one.
    fn no_moves_terminal(&mut self) -> Option<Terminal> {
        None
    }
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
    /// How promising `mv` looks before it is searched, for move ordering only (never for a
    /// value): larger first. The default is `1` for a tactical move and `0` otherwise (captures
    /// first, each group in the rule crate's order); a variant may rank its captures by the
    /// expected value they take (most valuable victim, least valuable attacker).
    fn order_score(&mut self, mv: &Self::Move) -> f64 {
        if self.is_tactical(mv) { 1.0 } else { 0.0 }
    }
    /// The keys ([`SearchNode::key`]) of the positions earlier in the game that the search
    /// treats as drawn by repetition when it meets them again (and a position repeated on the
    /// search path likewise), or `None` (the default) when the variant's search does not
    /// score repetitions.
    fn earlier_keys(&mut self) -> Option<Vec<u64>> {
        None
    }
    /// Why the last call could not answer, taken (cleared) by the search: a variant whose
    /// move generation, outcome enumeration or move can run out of its memory budget records
    /// the error here and answers as if there were nothing to answer; the search then stops
    /// and returns this error instead of a move (its values are not trusted). `None` (the
    /// default): nothing failed.
    fn take_error(&mut self) -> Option<EngineError> {
        None
    }
    /// A hash of everything the value of this node depends on (transposition table key).
    fn key(&self) -> u64;
    /// The move with its outcome attached, as the variant's record notation writes it (the
    /// token `qchess engine` and `qchess eval` exchange).
    fn token(&self, mv: &Self::Move, outcome: &Self::Outcome) -> String;
}

/// A game the engine can search: it builds the search's root node. `Sync`, because a search
/// runs on a worker thread of its own (see [`crate::Engine::search`]).
pub trait Searchable: Sync {
    /// The node type of the search.
    type Node: SearchNode;
    /// The root node. `seed` draws whatever the side to move cannot know (Akl's unseen
    /// types); the other variants ignore it.
    fn search_root(&self, seed: u64) -> Result<Self::Node, EngineError>;
}
