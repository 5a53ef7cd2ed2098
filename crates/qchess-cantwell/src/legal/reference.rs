//! The slow reference for Definition 2: every candidate is played on a copy of the state, for
//! each measurement outcome, and the result compared with the state (marginals, then
//! fidelity). Kept as the specification the fast decision of [`super::fast`] is tested
//! against (`tests/legal_equivalence.rs`), and as its fallback for the rare candidates the
//! fast rules cannot decide with a safe margin.

use crate::GameError;
use crate::circuit;
use crate::game::{
    Game, NoRandomness, marginals_differ, same_state, sim_error, square_probabilities,
};
use crate::possibility::Classified;
use qchess_sim::QuantumState;

use super::notation_of;

impl<S: QuantumState> Game<S> {
    /// The slow reference for [`Game::changes_state`]: simulates `c` on a copy of the state
    /// for each measurement outcome (a clone and the whole circuit per outcome) and compares
    /// the result with the state. Same answer as [`Game::changes_state`], at the cost of
    /// simulating the move; kept for tests and as the fast decision's fallback.
    pub fn changes_state_reference(&self, c: &Classified) -> bool {
        self.changes_state_reference_given(c, &self.probabilities())
    }

    /// [`Game::changes_state_reference`] that makes its copies of the state within the
    /// memory budget ([`QuantumState::try_clone`]): a copy the budget cannot hold is
    /// [`GameError::StateTooLarge`] (the game is unchanged), never an allocation beyond it.
    ///
    /// ```
    /// use qchess_cantwell::{Game, GameError};
    /// use qchess_sim::QuantumState;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::new();
    /// game.apply("g1^f3h3", &mut rng).unwrap();
    /// let c = game.classify("b8^a6c6").unwrap();
    /// assert!(game.try_changes_state_reference(&c)?);
    /// game.set_memory_budget(game.state().bytes() + 64); // no room for a copy
    /// assert!(matches!(
    ///     game.try_changes_state_reference(&c),
    ///     Err(GameError::StateTooLarge { .. })
    /// ));
    /// # Ok::<(), GameError>(())
    /// ```
    pub fn try_changes_state_reference(&self, c: &Classified) -> Result<bool, GameError> {
        self.reference_given(c, &self.probabilities(), true)
    }

    /// [`Game::changes_state_reference`] with the current square probabilities given.
    pub(crate) fn changes_state_reference_given(&self, c: &Classified, probs: &[f64; 64]) -> bool {
        // An unbudgeted copy is never refused: the error case does not occur.
        self.reference_given(c, probs, false).unwrap_or_default()
    }

    /// The reference decision; with `budgeted`, each copy of the state is made within the
    /// memory budget (an error when it does not fit), otherwise with `Clone` (outside it:
    /// the behaviour of [`Game::legal_moves`] and [`Game::changes_state_reference`]).
    pub(crate) fn reference_given(
        &self,
        c: &Classified,
        probs: &[f64; 64],
        budgeted: bool,
    ) -> Result<bool, GameError> {
        if self.classically_blocked(c, probs) {
            return Ok(false);
        }
        let measures = c.move_type.measures(c.variant);
        let outcomes: &[Option<bool>] = if measures {
            &[Some(true), Some(false)]
        } else {
            &[None]
        };
        for &forced in outcomes {
            let mut copy = if budgeted {
                self.state().try_clone(0).map_err(sim_error)?
            } else {
                self.state().clone()
            };
            let mut om = c.occupancy_move();
            om.forced = forced;
            let mut rng = NoRandomness;
            if circuit::apply_on(&mut copy, &om, &mut rng).is_ok()
                && (marginals_differ(probs, &square_probabilities(&copy))
                    || !same_state(self.state(), &copy))
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The slow reference for [`Game::legal_moves`]: every possible move kept when
    /// [`Game::changes_state_reference`] holds (one simulation per candidate and outcome).
    /// Same list, same order as [`Game::legal_moves`]; for tests and comparisons only.
    pub fn legal_moves_reference(&self) -> Vec<String> {
        if !self.status().is_ongoing() {
            return Vec::new();
        }
        let probs = self.probabilities();
        self.possible_moves()
            .into_iter()
            .filter(|c| self.changes_state_reference_given(c, &probs))
            .map(|c| notation_of(&c))
            .collect()
    }
}
