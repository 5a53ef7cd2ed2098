//! `NielsGame`: Niel's Chess from Python.

use crate::cantwell::{MAX_SHOTS, color};
use crate::errors;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use qchess_board::{Geometry, Square};
use qchess_niels::{
    Diagonal, Facing, Game, GameRecord, Mark, Move, MoveOutcome, Occupant, PairId, Position, Rules,
    Status, group_outcomes,
};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// A game of Niel's Chess (an independent implementation of the published rules): moves as
/// in docs/niels.md (`"b1^a3c3:oo"` puts the knight in a box on a3 and c3), dice from a
/// ChaCha8 stream seeded by `seed`.
///
/// `NielsGame()` is the standard 8x8 start; `rules` is a comma-separated list of rule
/// options (`"hadamard,tunnelling"`), `board` a size from `"4x4"` to `"8x8"`, `position` a
/// serialised position instead of the start.
#[pyclass(module = "qchess")]
pub struct NielsGame {
    pub(crate) game: Game,
    rng: ChaCha8Rng,
}

fn mark_name(m: Mark) -> &'static str {
    match m {
        Mark::Red => "red",
        Mark::Blue => "blue",
    }
}

fn outcome_dict<'py>(py: Python<'py>, mv: &str, o: &MoveOutcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("move", mv)?;
    d.set_item(
        "rolls",
        o.rolls
            .iter()
            .map(|r| u32::from(r.value))
            .collect::<Vec<u32>>(),
    )?;
    let collapses: Vec<(String, String, &str)> = o
        .collapses
        .iter()
        .map(|c| {
            (
                c.square.to_string(),
                c.piece.fen_char().to_string(),
                mark_name(c.mark),
            )
        })
        .collect();
    d.set_item("collapses", collapses)?;
    d.set_item("capture_attempted", o.capture_attempted)?;
    d.set_item("captured", o.captured.map(|p| p.fen_char().to_string()))?;
    d.set_item("tunnelled", o.tunnelled)?;
    d.set_item("aborted", o.aborted)?;
    Ok(d)
}

impl NielsGame {
    /// Every entangled group and every lone pair, each as one list of pair ids.
    fn groups(&self) -> Vec<Vec<PairId>> {
        let pos = self.game.position();
        let mut out: Vec<Vec<PairId>> = Diagonal::ALL
            .iter()
            .map(|d| pos.group(*d))
            .filter(|g| !g.is_empty())
            .collect();
        out.extend(
            pos.pairs()
                .iter()
                .filter(|p| p.diagonal.is_none())
                .map(|p| vec![p.id]),
        );
        out
    }
}

#[pymethods]
impl NielsGame {
    #[new]
    #[pyo3(signature = (position = None, *, rules = "", board = "8x8", seed = 0))]
    fn new(position: Option<&str>, rules: &str, board: &str, seed: u64) -> PyResult<Self> {
        let rules = Rules::parse_list(rules).map_err(errors::niels)?;
        let game = match position {
            Some(text) => {
                let pos: Position = text.parse().map_err(errors::niels)?;
                Game::from_position(rules, pos)
            }
            None => {
                let g =
                    Geometry::parse(board).map_err(|e| errors::error("board", format!("{e}")))?;
                Game::new(rules, g).map_err(errors::niels)?
            }
        };
        Ok(Self {
            game,
            rng: crate::rng(seed),
        })
    }

    /// Plays `move` (dice drawn from the game's stream) and returns what happened: a dict
    /// with `move`, `rolls`, `collapses` (square, piece letter, mark), `capture_attempted`,
    /// `captured`, `tunnelled`, `aborted`. Raises `QchessError` and changes nothing on error.
    #[pyo3(name = "play")]
    fn play_move<'py>(&mut self, py: Python<'py>, r#move: &str) -> PyResult<Bound<'py, PyDict>> {
        let (game, rng) = (&mut self.game, &mut self.rng);
        let outcome = py
            .allow_threads(|| game.play_str(r#move, rng))
            .map_err(errors::niels)?;
        let played = self.game.history().last().map(|h| h.mv.to_string());
        outcome_dict(py, &played.unwrap_or_default(), &outcome)
    }

    /// Takes back the last move (replaying the rest with their rolls) and returns it.
    fn undo(&mut self, py: Python<'_>) -> PyResult<String> {
        let game = &mut self.game;
        match py.allow_threads(|| game.undo()) {
            Some(played) => Ok(played.mv.to_string()),
            None => Err(errors::error("undo", "there is no move to take back")),
        }
    }

    /// The legal moves of the side to move.
    fn legal_moves(&self, py: Python<'_>) -> Vec<String> {
        let game = &self.game;
        py.allow_threads(|| game.legal_moves().iter().map(Move::to_string).collect())
    }

    /// The chance that each occupied square holds its piece: 1 for a conventional piece, the
    /// collapse probability of its pair onto it for an indefinite half (under the rules).
    /// A dict square -> float, or with `array=True` a NumPy array of 64 (a1 = 0).
    #[pyo3(signature = (array = false))]
    fn probabilities<'py>(&self, py: Python<'py>, array: bool) -> PyResult<Bound<'py, PyAny>> {
        let pos = self.game.position();
        let rules = self.game.rules();
        let mut dense = [0.0f64; 64];
        let mut named = Vec::new();
        for sq in Square::ALL {
            let p = match pos.occupant(sq) {
                None => continue,
                Some(Occupant::Piece(_)) => 1.0,
                Some(Occupant::Half { .. }) => match pos.pair_at(sq) {
                    Some(pair) => pair
                        .facings
                        .probability(pair.mark_on(sq).unwrap_or(Mark::Red), rules),
                    None => continue,
                },
            };
            dense[usize::from(sq.index())] = p;
            named.push((sq.to_string(), p));
        }
        crate::probabilities_out(py, named, &dense, array)
    }

    /// The amplitude of every indefinite half: square -> sqrt(probability) with the sign
    /// of its mark's facing (+ towards the opponent, - towards the owner), as the Hadamard
    /// rules read them.
    fn amplitudes(&self) -> BTreeMap<String, f64> {
        let pos = self.game.position();
        let rules = self.game.rules();
        let mut out = BTreeMap::new();
        for pair in pos.pairs() {
            for mark in [Mark::Red, Mark::Blue] {
                let sign = match pair.facings.of(mark) {
                    Facing::Opponent => 1.0,
                    Facing::Owner => -1.0,
                };
                let amp = sign * pair.facings.probability(mark, rules).sqrt();
                out.insert(pair.square(mark).to_string(), amp);
            }
        }
        out
    }

    /// `shots` boards with every pair collapsed (one roll per entangled group, as 8.4
    /// says), the game unchanged: a list of dicts square -> piece letter. The same `seed`
    /// gives the same samples.
    #[pyo3(signature = (shots, seed = 0))]
    fn sample(&self, shots: usize, seed: u64) -> PyResult<Vec<BTreeMap<String, String>>> {
        if shots > MAX_SHOTS {
            return Err(errors::error(
                "shots",
                format!("at most {MAX_SHOTS} shots per call"),
            ));
        }
        let pos = self.game.position();
        let rules = self.game.rules();
        let groups: Vec<_> = self
            .groups()
            .iter()
            .map(|g| group_outcomes(pos, g, rules))
            .collect();
        let mut base = BTreeMap::new();
        for sq in Square::ALL {
            if let Some(Occupant::Piece(p)) = pos.occupant(sq) {
                base.insert(sq.to_string(), p.fen_char().to_string());
            }
        }
        let mut rng = crate::rng(seed);
        let mut out = Vec::with_capacity(shots);
        for _ in 0..shots {
            let mut board = base.clone();
            for outcomes in &groups {
                let r: f64 = rng.random();
                let mut acc = 0.0;
                let chosen = outcomes
                    .iter()
                    .find(|o| {
                        acc += o.probability;
                        r < acc
                    })
                    .or(outcomes.last());
                if let Some(o) = chosen {
                    for (id, mark) in &o.marks {
                        if let Some(pair) = pos.pair(*id) {
                            board.insert(
                                pair.square(*mark).to_string(),
                                pair.piece.fen_char().to_string(),
                            );
                        }
                    }
                }
            }
            out.push(board);
        }
        Ok(out)
    }

    /// Every way `move` can end, without playing it: a list of `(position, probability,
    /// outcome)`, `position` the serialised position after it, `outcome` as `play` returns.
    fn outcomes<'py>(
        &self,
        py: Python<'py>,
        r#move: &str,
    ) -> PyResult<Vec<(String, f64, Bound<'py, PyDict>)>> {
        let mv: Move = r#move.trim().parse().map_err(errors::niels)?;
        let list = self.game.outcomes(&mv).map_err(errors::niels)?;
        list.iter()
            .map(|(pos, p, o)| Ok((pos.to_string(), *p, outcome_dict(py, &mv.to_string(), o)?)))
            .collect()
    }

    /// The game as JSON: `{"variant": "niels", "record": <game record text>}` (rules, start,
    /// every move with its rolls): `from_json` replays it exactly.
    fn to_json(&self) -> String {
        serde_json::json!({"variant": "niels", "record": self.game.record().to_string()})
            .to_string()
    }

    /// The game `to_json` wrote, replayed move by move.
    #[classmethod]
    #[pyo3(signature = (text, *, seed = 0))]
    fn from_json(_cls: &Bound<'_, PyType>, text: &str, seed: u64) -> PyResult<Self> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| errors::error("json", e.to_string()))?;
        let record = v.get("record").and_then(|r| r.as_str()).ok_or_else(|| {
            errors::error("json", "expected {\"variant\": \"niels\", \"record\": ...}")
        })?;
        let record: GameRecord = record.parse().map_err(errors::niels)?;
        let game = record.replay().map_err(errors::niels)?;
        Ok(Self {
            game,
            rng: crate::rng(seed),
        })
    }

    /// The serialised position (FEN with indefinite halves such as `[Nro|1]`).
    #[getter]
    fn position(&self) -> String {
        self.game.position().to_string()
    }

    /// `"w"` or `"b"`.
    #[getter]
    fn side_to_move(&self) -> &'static str {
        color(self.game.position().side_to_move())
    }

    /// `"ongoing"`, `"checkmate"` or `"draw"`.
    #[getter]
    fn status(&self) -> &'static str {
        match self.game.status() {
            Status::Ongoing => "ongoing",
            Status::Checkmate { .. } => "checkmate",
            Status::Draw(_) => "draw",
        }
    }

    /// `"1-0"`, `"0-1"`, `"1/2-1/2"` or `"*"`.
    #[getter]
    fn result(&self) -> &'static str {
        self.game.status().result()
    }

    /// Whether the side to move is in check.
    #[getter]
    fn in_check(&self) -> bool {
        self.game.in_check()
    }

    /// The moves played.
    #[getter]
    fn history(&self) -> Vec<String> {
        self.game
            .history()
            .iter()
            .map(|h| h.mv.to_string())
            .collect()
    }

    /// The SVG picture (qchess-render): pieces, marks and pairs.
    fn _repr_svg_(&self) -> String {
        qchess_render::niels(self.game.position(), self.game.rules())
    }

    fn __repr__(&self) -> String {
        format!("NielsGame(position={:?})", self.game.position().to_string())
    }
}
