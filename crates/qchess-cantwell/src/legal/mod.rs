//! Legal move listing: every move of the side to move that passes its possibility equation
//! (section 8) and changes the state for at least one outcome of positive probability
//! (Definition 2), splits and merges included.
//!
//! Definition 2 is decided without simulating the candidates ([`fast`]: read-only questions
//! to the simulator about boards and about each candidate's circuit, asked for all
//! candidates at once in a few passes); the
//! simulating decision is kept as the slow reference ([`Game::legal_moves_reference`],
//! [`Game::changes_state_reference`]) and as the fallback for the rare candidates the fast
//! rules cannot decide with a safe margin.

pub mod fast;
mod reference;

pub use fast::{CLEAR_MARGIN, LegalStats};

use crate::circuit::MoveType;
use crate::game::Game;
use crate::notation::{MoveShape, QcanMove};
use crate::possibility::{Classified, classify, path_between, valid_pattern};
use qchess_board::{Color, PieceKind, Square};
use qchess_sim::QuantumState;
use rand::Rng;
use rand::seq::SliceRandom;

const PROMOTIONS: [PieceKind; 4] = [
    PieceKind::Queen,
    PieceKind::Rook,
    PieceKind::Bishop,
    PieceKind::Knight,
];

impl<S: QuantumState> Game<S> {
    /// Every move that passes its possibility equation, whether or not it changes the state.
    pub fn possible_moves(&self) -> Vec<Classified> {
        let layer = self.classical();
        let side = layer.flags.side_to_move;
        let v = &layer.pieces;
        let mut out = Vec::new();
        let mut try_move = |mv: QcanMove| {
            if let Ok(c) = classify(layer, &mv) {
                out.push(c);
            }
        };
        let own: Vec<Square> = Square::ALL
            .iter()
            .copied()
            .filter(|&s| v.get(s).is_some_and(|p| p.color == side))
            .collect();
        for &s in &own {
            let piece = v.get(s).expect("own square");
            if piece.kind == PieceKind::Pawn {
                let fwd: i8 = if side == Color::White { 1 } else { -1 };
                for (df, dr) in [(0, fwd), (0, 2 * fwd), (-1, fwd), (1, fwd)] {
                    let Some(t) = s.offset(df, dr) else { continue };
                    let last = if side == Color::White { 7 } else { 0 };
                    if t.rank() == last {
                        for k in PROMOTIONS {
                            let mut mv = QcanMove::plain(MoveShape::Standard { from: s, to: t });
                            mv.promotion = Some(k);
                            try_move(mv);
                        }
                    } else {
                        try_move(QcanMove::plain(MoveShape::Standard { from: s, to: t }));
                    }
                }
                continue;
            }
            let targets: Vec<Square> = Square::ALL
                .iter()
                .copied()
                .filter(|&t| valid_pattern(piece.kind, s, t))
                .collect();
            for &t in &targets {
                try_move(QcanMove::plain(MoveShape::Standard { from: s, to: t }));
            }
            if piece.kind == PieceKind::King {
                for f in [2u8, 6] {
                    if s.file() == 4 {
                        try_move(QcanMove::plain(MoveShape::Standard {
                            from: s,
                            to: Square::new(f, s.rank()),
                        }));
                    }
                }
            }
            // Splits: both orders are distinct moves (the arms get different gates).
            let free: Vec<Square> = targets
                .iter()
                .copied()
                .filter(|&t| v.get(t).is_none() || v.get(t) == Some(piece))
                .collect();
            for &t1 in &free {
                for &t2 in &free {
                    if t1 != t2 {
                        try_move(QcanMove::plain(MoveShape::Split {
                            from: s,
                            to1: t1,
                            to2: t2,
                        }));
                    }
                }
            }
            // Merges with every other square of the same letter.
            for &s2 in &own {
                if s2 == s || v.get(s2) != Some(piece) {
                    continue;
                }
                for &t in &free {
                    if t != s2 && valid_pattern(piece.kind, s2, t) {
                        try_move(QcanMove::plain(MoveShape::Merge {
                            from1: s,
                            from2: s2,
                            to: t,
                        }));
                    }
                }
            }
        }
        out
    }

    /// Whether `c` changes the state for some outcome of positive probability (Definition 2),
    /// decided from read-only questions to the state without simulating the move (see [`fast`]);
    /// the game is not changed. Same answer as [`Game::changes_state_reference`].
    pub fn changes_state(&self, c: &Classified) -> bool {
        self.decide_all(std::slice::from_ref(c)).0[0]
    }

    /// [`Game::changes_state`] within the memory budget, as [`Game::try_legal_moves`] decides
    /// each candidate: [`crate::GameError::StateTooLarge`] (the game unchanged) when a copy
    /// the decision needs does not fit. Otherwise the same answer.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// let game = Game::new();
    /// let c = game.classify("b1^a3c3")?;
    /// assert_eq!(game.try_changes_state(&c)?, game.changes_state(&c));
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_changes_state(&self, c: &Classified) -> Result<bool, crate::GameError> {
        Ok(self.try_decide_all(std::slice::from_ref(c))?.0[0])
    }

    /// Every legal move of the side to move as QCAN strings (no outcome marks); empty when
    /// the game is over. Definition 2 is decided for all candidates at once from read-only
    /// questions to the state (a few passes), not by simulating each candidate;
    /// the list is identical to [`Game::legal_moves_reference`].
    pub fn legal_moves(&self) -> Vec<String> {
        self.legal_moves_with_stats().0
    }

    /// [`Game::legal_moves`] with every state-sized allocation counted against the memory
    /// budget (issue 10, Deliver 5): the copies of the state the fallback simulates a
    /// candidate on are made with [`QuantumState::try_clone`], and a backend whose
    /// read-only pass copies its entries asks the budget first. When one does not fit, the
    /// answer is [`crate::GameError::StateTooLarge`] (bytes asked and available) and the game
    /// is unchanged; [`Game::legal_moves`] makes those copies outside the budget instead.
    /// The list, when there is one, is the same as [`Game::legal_moves`]'s.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// let game = Game::new();
    /// assert_eq!(game.try_legal_moves()?, game.legal_moves());
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_legal_moves(&self) -> Result<Vec<String>, crate::GameError> {
        if !self.status().is_ongoing() {
            return Ok(Vec::new());
        }
        let candidates = self.possible_moves();
        let (keep, _) = self.try_decide_all(&candidates)?;
        Ok(candidates
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(c, _)| notation_of(c))
            .collect())
    }

    /// [`Game::legal_moves`] with how the decision went: how many candidates the fast rules
    /// decided and how many fell back to simulation.
    ///
    /// ```
    /// use qchess_cantwell::Game;
    /// let game = Game::new();
    /// let (moves, stats) = game.legal_moves_with_stats();
    /// assert_eq!(moves, game.legal_moves_reference());
    /// assert_eq!(stats.fallback, 0);
    /// ```
    pub fn legal_moves_with_stats(&self) -> (Vec<String>, LegalStats) {
        if !self.status().is_ongoing() {
            return (Vec::new(), LegalStats::default());
        }
        let candidates = self.possible_moves();
        let (keep, stats) = self.decide_all(&candidates);
        let moves = candidates
            .iter()
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(c, _)| notation_of(c))
            .collect();
        (moves, stats)
    }

    /// A uniformly chosen legal move: the possible moves in random order, the first one that
    /// changes the state (all decided at once, as in [`Game::legal_moves`]); `None` when
    /// there is none.
    pub fn random_legal_move<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<String> {
        if !self.status().is_ongoing() {
            return None;
        }
        let mut moves = self.possible_moves();
        moves.shuffle(rng);
        let (keep, _) = self.decide_all(&moves);
        moves
            .iter()
            .zip(keep)
            .find(|(_, k)| *k)
            .map(|(c, _)| notation_of(c))
    }
}

impl<S: QuantumState> Game<S> {
    /// Whether a slide's path holds a square that is certainly occupied (rules-notes D9): the
    /// move is then blocked classically, measures nothing and changes nothing. For split and
    /// merge slides both arms must be blocked (one blocked arm still lets the other act, eq. 9
    /// and 12); each arm's path leaves out the other target or source (D2). `probs` are the
    /// current square probabilities ([`Game::probabilities`]).
    pub fn classically_blocked(&self, c: &Classified, probs: &[f64; 64]) -> bool {
        let blocked = |mask: u64| {
            (0..64).any(|i| mask & (1u64 << i) != 0 && probs[i] >= 1.0 - CERTAIN_TOLERANCE)
        };
        let bit = |sq: Square| 1u64 << sq.index();
        match (c.move_type, c.shape) {
            (MoveType::Slide | MoveType::PawnTwoStep, MoveShape::Standard { from, to }) => {
                blocked(path_between(from, to))
            }
            (MoveType::SplitSlide, MoveShape::Split { from, to1, to2 }) => {
                blocked(path_between(from, to1) & !bit(to2))
                    && blocked(path_between(from, to2) & !bit(to1))
            }
            (MoveType::MergeSlide, MoveShape::Merge { from1, from2, to }) => {
                blocked(path_between(from1, to) & !bit(from2))
                    && blocked(path_between(from2, to) & !bit(from1))
            }
            _ => false,
        }
    }
}

impl<S: QuantumState> Game<S> {
    /// Plays a uniformly chosen legal move (measurements drawn from `rng`) and returns its
    /// record; `None` when there is no legal move or the game is over. Cheaper than
    /// [`Game::random_legal_move`] followed by [`Game::apply`]: each candidate is played once,
    /// and a candidate that changes nothing is refused and restored exactly (Definition 2).
    /// A move the simulator refuses (state size cap) ends the search with that error.
    pub fn play_random_move<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
    ) -> Result<Option<crate::game::MoveRecord>, crate::GameError> {
        if !self.status().is_ongoing() {
            return Ok(None);
        }
        let mut moves = self.possible_moves();
        moves.shuffle(rng);
        for c in moves {
            match self.apply(&notation_of(&c), rng) {
                Ok(record) => return Ok(Some(record)),
                Err(crate::GameError::NoEffect { .. }) => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }
}

/// A path square with probability within this of 1 is certainly occupied (D9).
pub const CERTAIN_TOLERANCE: f64 = 1e-12;

/// The canonical QCAN string of a classified move (no piece letter, mark or outcome).
pub fn notation_of(c: &Classified) -> String {
    let mut mv = QcanMove::plain(c.shape);
    mv.promotion = c.promotion;
    mv.to_string()
}
