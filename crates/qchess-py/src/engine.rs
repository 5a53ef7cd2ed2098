//! `Engine` and `SearchResult`: the qchess engine (crate `qchess-engine`) from Python.
//!
//! A thin wrapper: the search is `qchess_engine::Engine::new(options).search(&game, &limits)`
//! on the Rust game inside the Python game object, exactly as `qchess engine` and `qchess
//! serve` call it; the moves it answers are printed with the rule crates' own `Display`, the
//! notation the game classes' `play()` reads.

use crate::akl::AklGame;
use crate::cantwell::CantwellGame;
use crate::errors;
use crate::niels::NielsGame;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use qchess_engine::{EngineError, EngineOptions, Limits, Searchable};
use std::time::Duration;

/// The deepest depth limit accepted (the engine's own ceiling).
const MAX_DEPTH: i64 = 64;

/// The three variants by the names `Engine(variant=...)` takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Variant {
    Cantwell,
    Niels,
    Akl,
}

impl Variant {
    fn parse(name: &str) -> PyResult<Variant> {
        match name.trim().to_ascii_lowercase().as_str() {
            "cantwell" => Ok(Variant::Cantwell),
            "niels" => Ok(Variant::Niels),
            "akl" => Ok(Variant::Akl),
            _ => Err(errors::error(
                "variant",
                format!("{name:?}: expected \"cantwell\", \"niels\" or \"akl\""),
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Variant::Cantwell => "cantwell",
            Variant::Niels => "niels",
            Variant::Akl => "akl",
        }
    }
}

/// A `QchessError` from an engine error: `"game_over"` (no legal move), `"position"` (a
/// position the engine cannot search), `"option"` (an option out of range) or
/// `"state_too_large"` (the search ran out of the game's memory budget).
fn engine_error(e: EngineError) -> PyErr {
    let kind = match &e {
        EngineError::NoMove => "game_over",
        EngineError::BadPosition(_) => "position",
        EngineError::BadOption(_) => "option",
        EngineError::StateTooLarge { .. } => "state_too_large",
    };
    errors::error(kind, e.to_string())
}

/// `value` as a positive integer of at most `max`, or a `QchessError` of kind `"option"`.
fn positive(name: &str, value: Option<i64>, max: i64) -> PyResult<Option<u64>> {
    match value {
        None => Ok(None),
        Some(v) if (1..=max).contains(&v) => Ok(Some(v as u64)),
        Some(v) => Err(errors::error(
            "option",
            format!("{name} {v} is outside 1..{max}"),
        )),
    }
}

/// The search limits: depth, nodes and time, each `None` when not set.
#[derive(Copy, Clone, Debug, Default)]
struct LimitSet {
    depth: Option<u64>,
    nodes: Option<u64>,
    movetime_ms: Option<u64>,
}

impl LimitSet {
    fn parse(depth: Option<i64>, nodes: Option<i64>, movetime_ms: Option<i64>) -> PyResult<Self> {
        Ok(LimitSet {
            depth: positive("depth", depth, MAX_DEPTH)?,
            nodes: positive("nodes", nodes, i64::MAX)?,
            movetime_ms: positive("movetime_ms", movetime_ms, i64::MAX)?,
        })
    }

    /// These limits with every one `other` sets replaced by `other`'s.
    fn overridden_by(self, other: LimitSet) -> LimitSet {
        LimitSet {
            depth: other.depth.or(self.depth),
            nodes: other.nodes.or(self.nodes),
            movetime_ms: other.movetime_ms.or(self.movetime_ms),
        }
    }

    fn limits(self) -> Limits {
        Limits {
            depth: self.depth.map(|d| d as u32),
            nodes: self.nodes,
            movetime: self.movetime_ms.map(Duration::from_millis),
            stop: None,
        }
    }
}

/// What one search found: `best` (the move to play, in the notation the game's `play()`
/// reads), `score` (its expected value in centipawns from the side to move's view; about
/// +-100000 for a forced win or loss), `pv` (the expected line: `best`, then each side's
/// best reply after the most likely outcome), `depth` (the deepest iteration completed, in
/// plies) and `nodes` (nodes visited). `to_dict()` gives the same as a dict.
#[pyclass(module = "qchess", frozen)]
pub struct SearchResult {
    best: String,
    score: f64,
    pv: Vec<String>,
    depth: u32,
    nodes: u64,
    variant: Variant,
}

#[pymethods]
impl SearchResult {
    /// The move to play: a string the searched game's `play()` accepts (QCAN in Cantwell,
    /// the docs/niels.md notation in Niel's, a square to touch or the touched piece's UCI
    /// move in Akl).
    #[getter]
    fn best(&self) -> &str {
        &self.best
    }

    /// The expected value of `best` in centipawns from the side to move's view.
    #[getter]
    fn score(&self) -> f64 {
        self.score
    }

    /// The expected line, `best` first.
    #[getter]
    fn pv(&self) -> Vec<String> {
        self.pv.clone()
    }

    /// The deepest iteration completed (plies; chance nodes and Akl touches not counted).
    #[getter]
    fn depth(&self) -> u32 {
        self.depth
    }

    /// Nodes visited (decision, chance and quiescence nodes).
    #[getter]
    fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The variant searched: `"cantwell"`, `"niels"` or `"akl"`.
    #[getter]
    fn variant(&self) -> &'static str {
        self.variant.name()
    }

    /// The result as a dict with the keys `best`, `score`, `pv`, `depth`, `nodes`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("best", &self.best)?;
        d.set_item("score", self.score)?;
        d.set_item("pv", self.pv.clone())?;
        d.set_item("depth", self.depth)?;
        d.set_item("nodes", self.nodes)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "SearchResult(best={:?}, score={:?}, pv={:?}, depth={}, nodes={})",
            self.best, self.score, self.pv, self.depth, self.nodes
        )
    }
}

/// The qchess engine: expectimax over the exact outcome probabilities of each move, with
/// alpha-beta, iterative deepening, a transposition table and quiescence (docs/engine.md).
///
/// `Engine(*, variant=None, level=3, seed=0, depth=None, nodes=None, movetime_ms=None)`:
/// `variant` (`"cantwell"`, `"niels"` or `"akl"`) restricts the engine to games of that
/// variant; without it the variant is the one of the game each `search` is given. `level`
/// 1 (weakest) to 5 sets the default depth and the weaker levels' noise; `seed` seeds every
/// random choice, so the same seed, game and node or depth limit give the same answer.
/// `depth`, `nodes` and `movetime_ms` are the default limits of every search (with none
/// of them, the level's depth applies; with only nodes or time, the search goes no deeper
/// than the level's depth).
///
/// In Akl the engine decides from the side to move's view alone: the types that side has
/// not seen are drawn from `seed` (as `qchess engine` and `qchess serve` do). The search
/// releases the GIL. Bad options raise `QchessError` with `.kind == "option"` (or
/// `"variant"`).
#[pyclass(module = "qchess", frozen)]
pub struct Engine {
    variant: Option<Variant>,
    options: EngineOptions,
    limits: LimitSet,
}

impl Engine {
    /// Searches `game` with the engine's options and `limits`, the GIL released.
    fn run<G>(
        &self,
        py: Python<'_>,
        game: &G,
        limits: &Limits,
        variant: Variant,
    ) -> PyResult<SearchResult>
    where
        G: Searchable + Sync,
        <G::Node as qchess_engine::SearchNode>::Move: Send,
    {
        let options = self.options;
        let found = py
            .allow_threads(|| qchess_engine::Engine::new(options).search(game, limits))
            .map_err(engine_error)?;
        Ok(SearchResult {
            best: found.best.to_string(),
            score: found.score,
            pv: found.pv.iter().map(ToString::to_string).collect(),
            depth: found.depth,
            nodes: found.nodes,
            variant,
        })
    }
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (*, variant = None, level = 3, seed = 0, depth = None, nodes = None, movetime_ms = None))]
    fn new(
        variant: Option<&str>,
        level: i64,
        seed: u64,
        depth: Option<i64>,
        nodes: Option<i64>,
        movetime_ms: Option<i64>,
    ) -> PyResult<Self> {
        let variant = variant.map(Variant::parse).transpose()?;
        if !(1..=5).contains(&level) {
            return Err(errors::error(
                "option",
                format!("level {level} is outside 1..5"),
            ));
        }
        Ok(Engine {
            variant,
            options: EngineOptions {
                level: level as u8,
                seed,
                ..EngineOptions::default()
            },
            limits: LimitSet::parse(depth, nodes, movetime_ms)?,
        })
    }

    /// Searches `game` (a `CantwellGame`, `NielsGame` or `AklGame`; the game is not changed)
    /// and returns a `SearchResult`. `depth` (plies, 1 to 64), `nodes` and `movetime_ms`
    /// replace the engine's default limits for this search. Raises `QchessError`: kind
    /// `"game_over"` when the side to move has no move, `"option"` for a limit out of range,
    /// `"variant"` for an object that is not a game or a game of another variant than the
    /// engine's, `"position"` for a position the engine cannot search.
    #[pyo3(signature = (game, depth = None, nodes = None, movetime_ms = None))]
    fn search(
        &self,
        py: Python<'_>,
        game: &Bound<'_, PyAny>,
        depth: Option<i64>,
        nodes: Option<i64>,
        movetime_ms: Option<i64>,
    ) -> PyResult<SearchResult> {
        let limits = self
            .limits
            .overridden_by(LimitSet::parse(depth, nodes, movetime_ms)?)
            .limits();
        let found = if game.downcast::<CantwellGame>().is_ok() {
            Variant::Cantwell
        } else if game.downcast::<NielsGame>().is_ok() {
            Variant::Niels
        } else if game.downcast::<AklGame>().is_ok() {
            Variant::Akl
        } else {
            let type_name = game
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            return Err(errors::error(
                "variant",
                format!("expected a CantwellGame, NielsGame or AklGame, got {type_name}"),
            ));
        };
        if let Some(v) = self.variant {
            if v != found {
                return Err(errors::error(
                    "variant",
                    format!(
                        "this engine plays {}, the game is {}",
                        v.name(),
                        found.name()
                    ),
                ));
            }
        }
        match found {
            Variant::Cantwell => {
                let g = game.downcast::<CantwellGame>()?.try_borrow()?;
                self.run(py, &g.game, &limits, found)
            }
            Variant::Niels => {
                let g = game.downcast::<NielsGame>()?.try_borrow()?;
                self.run(py, &g.game, &limits, found)
            }
            Variant::Akl => {
                let g = game.downcast::<AklGame>()?.try_borrow()?;
                self.run(py, &g.game, &limits, found)
            }
        }
    }

    /// The variant the engine is restricted to, or None (any game).
    #[getter]
    fn variant(&self) -> Option<&'static str> {
        self.variant.map(Variant::name)
    }

    /// The playing strength, 1 to 5.
    #[getter]
    fn level(&self) -> u8 {
        self.options.level
    }

    /// The seed of every random choice.
    #[getter]
    fn seed(&self) -> u64 {
        self.options.seed
    }

    /// The default depth limit, or None.
    #[getter]
    fn depth(&self) -> Option<u64> {
        self.limits.depth
    }

    /// The default node limit, or None.
    #[getter]
    fn nodes(&self) -> Option<u64> {
        self.limits.nodes
    }

    /// The default time limit in milliseconds, or None.
    #[getter]
    fn movetime_ms(&self) -> Option<u64> {
        self.limits.movetime_ms
    }

    fn __repr__(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "None".to_string(), |v| v.to_string());
        format!(
            "Engine(variant={}, level={}, seed={}, depth={}, nodes={}, movetime_ms={})",
            self.variant
                .map_or_else(|| "None".to_string(), |v| format!("'{}'", v.name())),
            self.options.level,
            self.options.seed,
            opt(self.limits.depth),
            opt(self.limits.nodes),
            opt(self.limits.movetime_ms)
        )
    }
}
