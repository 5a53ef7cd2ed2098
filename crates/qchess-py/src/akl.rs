//! `AklGame` and `AklView`: Akl-style quantum chess from Python.

use crate::cantwell::{MAX_SHOTS, color};
use crate::errors;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use qchess_akl::{
    AklMove, AklPosition, Game, GameRecord, PieceState, PlayerView, Rules, Style, TouchOutcome,
    TouchResult, TurnEntry, Visibility,
};
use qchess_board::{Color, Piece, PieceKind, Square};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

/// A game of Akl-style quantum chess: every non-king piece is a superposition of two types
/// that collapses when its owner touches it. `seed` draws the secondary types of the set-up
/// and then every collapse (one ChaCha8 stream, as `qchess eval`), so the same seed and
/// moves replay exactly.
///
/// A turn: `touch("g1")` (the piece collapses; if it can move it must), then
/// `play("g1f3")`; or a whole turn in the rules' notation, `play("<N|g1> -> f3")`.
#[pyclass(module = "qchess")]
pub struct AklGame {
    pub(crate) game: Game,
    rng: ChaCha8Rng,
}

/// What one player may know of an Akl game: returned by `AklGame.view(color)`.
#[pyclass(module = "qchess")]
pub struct AklView {
    view: PlayerView,
}

fn letter(color: Color, k: PieceKind) -> String {
    Piece::new(color, k).fen_char().to_string()
}

fn parse_color(c: &str) -> PyResult<Color> {
    match c {
        "w" | "white" => Ok(Color::White),
        "b" | "black" => Ok(Color::Black),
        _ => Err(errors::error(
            "color",
            format!("{c:?}: expected \"white\" or \"black\""),
        )),
    }
}

fn touch_dict<'py>(py: Python<'py>, game: &Game, t: &TouchOutcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let color = game
        .position()
        .piece(t.square)
        .map_or(game.side_to_move(), |p| p.color);
    d.set_item("square", t.square.to_string())?;
    d.set_item("collapsed", t.collapsed.map(|k| letter(color, k)))?;
    d.set_item("type", letter(color, t.kind))?;
    match &t.result {
        TouchResult::MustMove(moves) => {
            d.set_item("turn", "awaiting_move")?;
            d.set_item(
                "legal_moves",
                moves.iter().map(AklMove::to_string).collect::<Vec<_>>(),
            )?;
            d.set_item("entry", py.None())?;
        }
        _ => {
            d.set_item("turn", "done")?;
            d.set_item("legal_moves", Vec::<String>::new())?;
            d.set_item(
                "entry",
                game.history().last().map(|e| e.format(Style::Ascii)),
            )?;
        }
    }
    Ok(d)
}

#[pymethods]
impl AklGame {
    #[new]
    #[pyo3(signature = (*, seed = 0, position = None, visibility = "revealed"))]
    fn new(seed: u64, position: Option<&str>, visibility: &str) -> PyResult<Self> {
        let rules = Rules {
            visibility: match visibility {
                "revealed" => Visibility::Revealed,
                "own-pairs" => Visibility::OwnPairs,
                other => {
                    return Err(errors::error(
                        "visibility",
                        format!("{other:?}: expected \"revealed\" or \"own-pairs\""),
                    ));
                }
            },
        };
        let mut rng = crate::rng(seed);
        let start = match position {
            Some(text) => AklPosition::parse(text).map_err(errors::akl)?,
            None => AklPosition::startpos_random(&mut rng),
        };
        Ok(Self {
            game: Game::with_rules(start, rules),
            rng,
        })
    }

    /// Touches the side to move's piece on `square`: a piece in superposition collapses to
    /// one of its types (1/2 each). Returns a dict: `square`, `collapsed` (letter or None),
    /// `type`, `turn` (`"done"` or `"awaiting_move"`), `legal_moves` (UCI, when it must
    /// move) and `entry` (the recorded turn, when the touch ended it).
    fn touch<'py>(&mut self, py: Python<'py>, square: &str) -> PyResult<Bound<'py, PyDict>> {
        let sq: Square = square
            .parse()
            .map_err(|e| errors::error("notation", format!("{e}")))?;
        let out = self.game.touch(sq, &mut self.rng).map_err(errors::akl)?;
        touch_dict(py, &self.game, &out)
    }

    /// Plays `move`: a UCI move (`"g1f3"`) of the touched piece, or a whole turn in the
    /// rules' notation (`"<N|g1> -> f3"`, `"f2 -> f3"`; a bare `"g1"` or `"<Q|d1>"` only
    /// touches). Returns the dict `touch` returns for a touch, else the recorded turn
    /// (`{"turn": "done", "entry": ...}`). Raises `QchessError`, game unchanged, on error.
    #[pyo3(name = "play")]
    fn play_move<'py>(&mut self, py: Python<'py>, r#move: &str) -> PyResult<Bound<'py, PyDict>> {
        let text = r#move.trim();
        let done = if let (Some(_), Ok(mv)) = (self.game.pending_touch(), text.parse::<AklMove>()) {
            self.game.play(mv, &mut self.rng).map_err(errors::akl)?
        } else {
            let entry: TurnEntry = text.parse().map_err(errors::akl)?;
            let pending_here = self
                .game
                .pending_touch()
                .is_some_and(|(sq, _, _)| sq == entry.from);
            if entry.dest.is_none() && !pending_here {
                let quantum = self
                    .game
                    .position()
                    .piece(entry.from)
                    .is_some_and(|p| p.is_quantum());
                let out = match (entry.collapse, quantum) {
                    (None, true) => self.game.touch(entry.from, &mut self.rng),
                    (collapse, _) => self.game.touch_forced(entry.from, collapse),
                }
                .map_err(errors::akl)?;
                return touch_dict(py, &self.game, &out);
            }
            self.game
                .apply_entry(&entry, Some(&mut self.rng))
                .map_err(errors::akl)?
        };
        let d = PyDict::new(py);
        d.set_item("turn", "done")?;
        d.set_item("entry", done.format(Style::Ascii))?;
        Ok(d)
    }

    /// Takes back the last turn (or a touch still waiting for its move) and returns the
    /// turn taken back (None for a lone touch). The record replays exactly.
    fn undo(&mut self, py: Python<'_>) -> PyResult<Option<String>> {
        let mut record = self.game.record();
        let taken = if self.game.pending_touch().is_some() {
            None
        } else {
            match record.entries.pop() {
                Some(e) => Some(e.format(Style::Ascii)),
                None => return Err(errors::error("undo", "there is no turn to take back")),
            }
        };
        let game = py.allow_threads(|| record.replay()).map_err(errors::akl)?;
        self.game = game;
        Ok(taken)
    }

    /// What may be played now: the UCI moves of the touched piece when one waits, else the
    /// squares of the pieces the side to move may touch.
    fn legal_moves(&self) -> Vec<String> {
        match self.game.pending_touch() {
            Some((_, _, moves)) => moves.iter().map(AklMove::to_string).collect(),
            None => self
                .game
                .touchable()
                .iter()
                .map(Square::to_string)
                .collect(),
        }
    }

    /// Occupancy: every piece stands on one square (positions are classical in this
    /// variant), so each occupied square has probability 1. A dict square -> float, or
    /// with `array=True` a NumPy array of 64.
    #[pyo3(signature = (array = false))]
    fn probabilities<'py>(&self, py: Python<'py>, array: bool) -> PyResult<Bound<'py, PyAny>> {
        let mut dense = [0.0f64; 64];
        let mut named = Vec::new();
        for (sq, _) in self.game.position().pieces() {
            dense[usize::from(sq.index())] = 1.0;
            named.push((sq.to_string(), 1.0));
        }
        crate::probabilities_out(py, named, &dense, array)
    }

    /// The type amplitudes of every piece (the truth, not a player's view): square ->
    /// {letter: amplitude}; 1/sqrt(2) for each type of a piece in superposition of two
    /// different types, 1 for a collapsed piece or a pair of equal types.
    fn amplitudes(&self) -> BTreeMap<String, BTreeMap<String, f64>> {
        self.game
            .position()
            .pieces()
            .map(|(sq, p)| {
                let amps = match p.state {
                    PieceState::Classical(k) => BTreeMap::from([(letter(p.color, k), 1.0)]),
                    PieceState::Quantum if p.pair.primary == p.pair.secondary => {
                        BTreeMap::from([(letter(p.color, p.pair.primary), 1.0)])
                    }
                    PieceState::Quantum => p
                        .pair
                        .types()
                        .iter()
                        .map(|k| (letter(p.color, *k), std::f64::consts::FRAC_1_SQRT_2))
                        .collect(),
                };
                (sq.to_string(), amps)
            })
            .collect()
    }

    /// `shots` boards with every piece in superposition collapsed (each type 1/2), the game
    /// unchanged: a list of dicts square -> letter. The same `seed` gives the same samples.
    #[pyo3(signature = (shots, seed = 0))]
    fn sample(&self, shots: usize, seed: u64) -> PyResult<Vec<BTreeMap<String, String>>> {
        if shots > MAX_SHOTS {
            return Err(errors::error(
                "shots",
                format!("at most {MAX_SHOTS} shots per call"),
            ));
        }
        let mut rng = crate::rng(seed);
        let pieces: Vec<_> = self
            .game
            .position()
            .pieces()
            .map(|(s, p)| (s, *p))
            .collect();
        Ok((0..shots)
            .map(|_| {
                pieces
                    .iter()
                    .map(|(sq, p)| {
                        let k = match p.state {
                            PieceState::Classical(k) => k,
                            PieceState::Quantum => p.pair.get(rng.random::<bool>()),
                        };
                        (sq.to_string(), letter(p.color, k))
                    })
                    .collect()
            })
            .collect())
    }

    /// What `color` (`"white"` or `"black"`) may know.
    fn view(&self, color: &str) -> PyResult<AklView> {
        Ok(AklView {
            view: self.game.view(parse_color(color)?),
        })
    }

    /// The game as JSON: `{"variant": "akl", "record": <game record text>}`; `from_json`
    /// replays it exactly. A touch still waiting for its move is not part of the record.
    fn to_json(&self) -> String {
        serde_json::json!({"variant": "akl", "record": self.game.record().to_text(Style::Ascii)})
            .to_string()
    }

    /// The game `to_json` wrote, replayed turn by turn; later collapses draw from `seed`.
    #[classmethod]
    #[pyo3(signature = (text, *, seed = 0))]
    fn from_json(_cls: &Bound<'_, PyType>, text: &str, seed: u64) -> PyResult<Self> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| errors::error("json", e.to_string()))?;
        let record = v.get("record").and_then(|r| r.as_str()).ok_or_else(|| {
            errors::error("json", "expected {\"variant\": \"akl\", \"record\": ...}")
        })?;
        let game = GameRecord::parse(record)
            .and_then(|r| r.replay())
            .map_err(errors::akl)?;
        Ok(Self {
            game,
            rng: crate::rng(seed),
        })
    }

    /// The position as AKL-FEN (docs/akl.md).
    #[getter]
    fn position(&self) -> String {
        self.game.position().to_string()
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

    /// The turns played, in the rules' notation.
    #[getter]
    fn history(&self) -> Vec<String> {
        self.game
            .history()
            .iter()
            .map(|e| e.format(Style::Ascii))
            .collect()
    }

    /// The SVG picture of the side to move's view (qchess-render).
    fn _repr_svg_(&self) -> String {
        qchess_render::akl(&self.game.view(self.game.side_to_move()))
    }

    fn __repr__(&self) -> String {
        format!("AklGame(position={:?})", self.game.position().to_string())
    }
}

#[pymethods]
impl AklView {
    /// `"w"` or `"b"`: whose view this is.
    #[getter]
    fn viewer(&self) -> &'static str {
        color(self.view.viewer)
    }

    /// Every piece as seen: square -> dict with `color` (`"w"`/`"b"`), `quantum` (bool),
    /// `type` (letter of a collapsed piece, else None), `known` (letters of the types this
    /// player knows) and `pair` (both letters, primary first, when the whole pair is known).
    fn pieces<'py>(&self, py: Python<'py>) -> PyResult<BTreeMap<String, Bound<'py, PyDict>>> {
        self.view
            .pieces
            .iter()
            .map(|p| {
                let d = PyDict::new(py);
                d.set_item("color", color(p.color))?;
                d.set_item("quantum", p.state == PieceState::Quantum)?;
                d.set_item(
                    "type",
                    match p.state {
                        PieceState::Classical(k) => Some(letter(p.color, k)),
                        PieceState::Quantum => None,
                    },
                )?;
                d.set_item(
                    "known",
                    p.known
                        .iter()
                        .map(|k| letter(p.color, k))
                        .collect::<Vec<_>>(),
                )?;
                d.set_item(
                    "pair",
                    p.pair
                        .map(|t| vec![letter(p.color, t.primary), letter(p.color, t.secondary)]),
                )?;
                Ok((p.square.to_string(), d))
            })
            .collect()
    }

    /// The board as text (White at the bottom).
    fn render(&self) -> String {
        self.view.render()
    }

    /// The SVG picture of this view (qchess-render).
    fn _repr_svg_(&self) -> String {
        qchess_render::akl(&self.view)
    }

    fn __repr__(&self) -> String {
        format!("AklView(viewer={:?})", color(self.view.viewer))
    }
}
