//! One move token, as the engine protocol and `qchess eval` exchange them: a whole turn
//! (`<P|e2>->e4`, `e2->e4`), a touch alone (`e2`, `<N|g1>`), or a destination finishing the
//! pending touch (`->e4`).

use crate::error::AklError;
use crate::game::{Game, TouchResult};
use crate::notation::parse_destination;
use crate::record::TurnEntry;

impl Game {
    /// Plays one token. A touch alone touches (a quantum piece collapses as written, or by
    /// `rng` when no collapse is written; a written collapse equal to the type of a piece that
    /// is already classical is accepted); it returns `None` when the piece now waits for its
    /// move, or the finished turn. A whole turn or a destination returns the turn. Random
    /// outcomes not written are drawn from `rng`. On error nothing changes.
    ///
    /// ```
    /// use qchess_akl::Game;
    /// use rand::SeedableRng;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let mut game = Game::from_seed(1);
    /// assert_eq!(game.play_token("<P|e2>", &mut rng).unwrap(), None);
    /// let turn = game.play_token("->e4", &mut rng).unwrap().unwrap();
    /// assert_eq!(turn.to_string(), "<P|e2> -> e4");
    /// assert!(game.play_token("e9", &mut rng).is_err());
    /// ```
    pub fn play_token(
        &mut self,
        text: &str,
        rng: &mut dyn rand::RngCore,
    ) -> Result<Option<TurnEntry>, AklError> {
        let trimmed = text.trim_start();
        let entry =
            if trimmed.starts_with("->") || trimmed.starts_with('→') || trimmed.starts_with('|') {
                let dest = parse_destination(text)?;
                let (from, _, _) = self.pending_touch().ok_or(AklError::NothingTouched)?;
                TurnEntry {
                    from,
                    collapse: None,
                    dest: Some(dest),
                    check: false,
                }
            } else {
                text.parse::<TurnEntry>()?
            };
        let pending_here = self
            .pending_touch()
            .is_some_and(|(sq, _, _)| sq == entry.from);
        if entry.dest.is_none() && !pending_here {
            let piece = self.position().piece(entry.from).copied();
            let collapse = match (entry.collapse, piece) {
                (Some(k), Some(p)) if p.current() == Some(k) => None,
                (c, _) => c,
            };
            let out = match (collapse, piece.is_some_and(|p| p.is_quantum())) {
                (None, true) => self.touch(entry.from, rng)?,
                (c, _) => self.touch_forced(entry.from, c)?,
            };
            return Ok(match out.result {
                TouchResult::MustMove(_) => None,
                _ => self.history().last().copied(),
            });
        }
        self.apply_entry(&entry, Some(rng)).map(Some)
    }
}
