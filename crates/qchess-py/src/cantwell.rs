//! `CantwellGame`: Cantwell quantum chess from Python.

use crate::errors;
use pyo3::prelude::*;
use pyo3::types::{PyComplex, PyType};
use qchess_board::{Color, Square};
use qchess_cantwell::game::OCCUPIED_EPS;
use qchess_cantwell::{Game, Position};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// Most samples one `sample` call draws (each is a dict of up to 32 squares).
pub(crate) const MAX_SHOTS: usize = 1_000_000;

/// A game of Cantwell quantum chess (Cantwell 2019): moves in QCAN notation (`"b1^a3c3"`
/// splits the knight on b1 to a3 and c3), measurements drawn from a ChaCha8 stream seeded
/// by `seed`, so the same moves with the same seed replay exactly.
///
/// `CantwellGame()` starts from the standard position; `CantwellGame(fen)` from a FEN.
#[pyclass(module = "qchess")]
pub struct CantwellGame {
    pub(crate) game: Game,
    rng: ChaCha8Rng,
}

#[pymethods]
impl CantwellGame {
    #[new]
    #[pyo3(signature = (fen = None, *, seed = 0))]
    fn new(fen: Option<&str>, seed: u64) -> PyResult<Self> {
        let game = match fen {
            None => Game::new(),
            Some(f) => Game::from_fen(f).map_err(errors::cantwell)?,
        };
        Ok(Self {
            game,
            rng: crate::rng(seed),
        })
    }

    /// Plays `move` (QCAN; `.m0` / `.m1` force a measurement's outcome) and returns it as
    /// recorded (with `.m0` / `.m1` when it measured). Raises `QchessError` (kind
    /// `"notation"`, `"illegal_move"`, `"game_over"`, ...) and changes nothing on error.
    #[pyo3(name = "play")]
    fn play_move(&mut self, py: Python<'_>, r#move: &str) -> PyResult<String> {
        let (game, rng) = (&mut self.game, &mut self.rng);
        let record = py
            .allow_threads(|| game.apply(r#move, rng))
            .map_err(errors::cantwell)?;
        Ok(record.notation)
    }

    /// Takes back the last move and returns its notation (kind `"undo"` when there is none).
    fn undo(&mut self, py: Python<'_>) -> PyResult<String> {
        let game = &mut self.game;
        let record = py.allow_threads(|| game.undo()).map_err(errors::cantwell)?;
        Ok(record.notation)
    }

    /// The legal moves of the side to move, in QCAN. Decided within the game's memory
    /// budget: raises `QchessError` (kind `"state_too_large"`, bytes asked and available)
    /// when a copy of the state the rules would simulate a candidate on does not fit.
    fn legal_moves(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let game = &self.game;
        py.allow_threads(|| game.try_legal_moves())
            .map_err(errors::cantwell)
    }

    /// The occupancy probability of every square with a positive one: a dict square ->
    /// float; with `array=True` a NumPy array of all 64 (index a1 = 0, h8 = 63).
    #[pyo3(signature = (array = false))]
    fn probabilities<'py>(&self, py: Python<'py>, array: bool) -> PyResult<Bound<'py, PyAny>> {
        let probs = self.game.probabilities();
        let named = Square::ALL
            .iter()
            .filter(|s| probs[usize::from(s.index())] > OCCUPIED_EPS)
            .map(|s| (s.to_string(), probs[usize::from(s.index())]))
            .collect();
        crate::probabilities_out(py, named, &probs, array)
    }

    /// The occupancy probability of one square (`"e4"`).
    fn probability(&self, square: &str) -> PyResult<f64> {
        let sq: Square = square
            .parse()
            .map_err(|e| errors::error("square", format!("{e}")))?;
        Ok(self.game.probability(sq))
    }

    /// The amplitudes: a list of `(squares, ancillas, amplitude)`, `squares` the occupied
    /// squares of the basis state (`"a3 e1 ..."`), `ancillas` its capture-ancilla bits as an
    /// int, `amplitude` a complex number; in the simulator's canonical order. The list is
    /// built within the game's memory budget (`QchessError` of kind `"state_too_large"` when
    /// it does not fit).
    fn amplitudes<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(String, u128, Bound<'py, PyComplex>)>> {
        let pos = self.game.try_position().map_err(errors::cantwell)?;
        pos.amplitudes
            .into_iter()
            .map(|e| {
                let anc = u128::from_str_radix(&e.ancillas, 16)
                    .map_err(|err| errors::error("position", err.to_string()))?;
                Ok((e.board, anc, PyComplex::from_doubles(py, e.re, e.im)))
            })
            .collect()
    }

    /// `shots` classical boards drawn from the superposition (the game is not changed): a
    /// list of dicts square -> piece letter. The same `seed` gives the same samples.
    #[pyo3(signature = (shots, seed = 0))]
    fn sample(
        &self,
        py: Python<'_>,
        shots: usize,
        seed: u64,
    ) -> PyResult<Vec<BTreeMap<String, String>>> {
        if shots > MAX_SHOTS {
            return Err(errors::error(
                "shots",
                format!("at most {MAX_SHOTS} shots per call"),
            ));
        }
        let game = &self.game;
        let boards = py.allow_threads(|| {
            let mut rng = crate::rng(seed);
            (0..shots)
                .map(|_| game.sample_board(&mut rng))
                .collect::<Vec<_>>()
        });
        Ok(boards
            .iter()
            .map(|b| {
                Square::ALL
                    .iter()
                    .filter_map(|s| b.get(*s).map(|p| (s.to_string(), p.fen_char().to_string())))
                    .collect()
            })
            .collect())
    }

    /// The current position as JSON (`{"fen", "amplitudes"}`, as `qchess eval` reads it).
    /// The position is built within the game's memory budget (`QchessError` of kind
    /// `"state_too_large"` when it does not fit; the text itself is not counted).
    fn to_json(&self) -> PyResult<String> {
        Ok(self
            .game
            .try_position()
            .map_err(errors::cantwell)?
            .to_json())
    }

    /// A game at the position `text` (from `to_json`); the history is not kept.
    #[classmethod]
    #[pyo3(signature = (text, *, seed = 0))]
    fn from_json(_cls: &Bound<'_, PyType>, text: &str, seed: u64) -> PyResult<Self> {
        let pos = Position::from_json(text).map_err(errors::cantwell)?;
        let game = Game::from_position(&pos).map_err(errors::cantwell)?;
        Ok(Self {
            game,
            rng: crate::rng(seed),
        })
    }

    /// The FEN of the classical layer (letters of every partly occupied square).
    #[getter]
    fn fen(&self) -> String {
        self.game.fen()
    }

    /// `"w"` or `"b"`.
    #[getter]
    fn side_to_move(&self) -> &'static str {
        color(self.game.side_to_move())
    }

    /// `"ongoing"`, `"white_wins"`, `"black_wins"` or `"draw"`.
    #[getter]
    fn status(&self) -> &'static str {
        self.game.status().name()
    }

    /// The moves played, as they replay.
    #[getter]
    fn history(&self) -> Vec<String> {
        self.game.history_notation()
    }

    /// The number of basis states of the superposition.
    #[getter]
    fn state_size(&self) -> usize {
        self.game.state_size()
    }

    /// The SVG picture (qchess-render): squares shaded and labelled by probability.
    fn _repr_svg_(&self) -> String {
        qchess_render::cantwell(&self.game)
    }

    fn __repr__(&self) -> String {
        format!(
            "CantwellGame(fen={:?}, state_size={}, status={:?})",
            self.game.fen(),
            self.game.state_size(),
            self.game.status().name()
        )
    }
}

/// `"w"` / `"b"`.
pub(crate) fn color(c: Color) -> &'static str {
    match c {
        Color::White => "w",
        Color::Black => "b",
    }
}
