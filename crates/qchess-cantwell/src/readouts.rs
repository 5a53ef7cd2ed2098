//! Research read-outs on a game (the math is in [`crate::analysis`]): the Bell measures and
//! log negativity of a pair of squares, and the entanglement of one square with all others.

use crate::analysis::{
    BellMeasures, SquareEntanglement, pair_log_negativity_on, square_entanglement_on,
};
use crate::game::Game;
use qchess_board::Square;
use qchess_sim::QuantumState;

impl<S: QuantumState> Game<S> {
    /// The overlaps of the reduced state of squares `a`, `b` with the eight Bell-type states
    /// (|01> + i^k|10>)/sqrt 2 and (|00> + i^k|11>)/sqrt 2 (eq. 41-44 are k = 0 and 2).
    pub fn bell_measures(&self, a: Square, b: Square) -> BellMeasures {
        BellMeasures::of_squares_on(self.state(), a.index(), b.index())
    }

    /// The log negativity of the reduced state of squares `a` and `b`.
    pub fn pair_log_negativity(&self, a: Square, b: Square) -> f64 {
        pair_log_negativity_on(self.state(), a.index(), b.index())
    }

    /// How much square `sq` is entangled with every other square and the capture ancillas.
    pub fn square_entanglement(&self, sq: Square) -> SquareEntanglement {
        square_entanglement_on(self.state(), sq.index())
    }
}
