//! A random mover that reads only its own view and the public outcome of its touches.

use crate::error::AklError;
use crate::game::{Game, TouchResult};
use crate::moves::AklMove;
use crate::view::PlayerView;
use qchess_board::Square;

/// Picks uniformly among its own pieces to touch, then uniformly among the touched piece's
/// moves.
///
/// ```
/// use qchess_akl::{Game, RandomMover};
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
/// let mut game = Game::from_seed(9);
/// RandomMover.play_turn(&mut game, &mut rng).unwrap();
/// assert_eq!(game.history().len(), 1);
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RandomMover;

impl RandomMover {
    /// A square to touch: one of the viewer's pieces; `None` when it is not the viewer's turn.
    pub fn choose_touch<R: rand::Rng + ?Sized>(
        &self,
        view: &PlayerView,
        rng: &mut R,
    ) -> Option<Square> {
        if view.side_to_move != view.viewer || view.pending.is_some() {
            return None;
        }
        let own: Vec<Square> = view
            .pieces
            .iter()
            .filter(|p| p.color == view.viewer)
            .map(|p| p.square)
            .collect();
        if own.is_empty() {
            return None;
        }
        Some(own[rng.random_range(0..own.len() as u32) as usize])
    }

    /// One of `moves`; `None` when there are none.
    pub fn choose_move<R: rand::Rng + ?Sized>(
        &self,
        moves: &[AklMove],
        rng: &mut R,
    ) -> Option<AklMove> {
        if moves.is_empty() {
            return None;
        }
        Some(moves[rng.random_range(0..moves.len() as u32) as usize])
    }

    /// Plays one whole turn for the side to move, drawing collapses and choices from `rng`.
    pub fn play_turn<R: rand::Rng + ?Sized>(
        &self,
        game: &mut Game,
        rng: &mut R,
    ) -> Result<(), AklError> {
        let view = game.view(game.side_to_move());
        let Some(sq) = self.choose_touch(&view, rng) else {
            return Err(AklError::GameOver);
        };
        let touch = game.touch(sq, rng)?;
        if let TouchResult::MustMove(moves) = touch.result {
            let mv = self.choose_move(&moves, rng).expect("MustMove has moves");
            game.play(mv, rng)?;
        }
        Ok(())
    }
}
