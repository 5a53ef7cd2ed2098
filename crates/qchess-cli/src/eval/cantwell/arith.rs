//! The per-arithmetic layer of `"variant": "cantwell"`: what differs between
//! `"arithmetic": "f64"`, `"f32"` and `"exact"` once the game (`Game<S>`) or the occupancy
//! state (`S`) has been driven by the one generic path in `cantwell.rs`.
//!
//! The floats add nothing. Exact arithmetic (`State<Exact>`, docs/exact.md) adds the exact
//! twin `K_exact` of every probability field `K`: `probabilities_exact`, `distribution_exact`,
//! `amplitudes_exact` (with `norm_exact`) and each move's `probability_exact`, as strings in
//! the form `x`, `y*sqrt2`, `x+y*sqrt2`, `x-y*sqrt2` (`QSqrt2`'s `Display`).

use super::super::EvalError;
use super::super::frame::Answer;
use super::Held;
use qchess_board::Square;
use qchess_cantwell::position::board_squares;
use qchess_sim::{Complex, Exact, Key, Predicate, QSqrt2, QuantumState, SimError, State};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::rc::Rc;

/// What the exact twins show: the same entries as their float fields, in the same order.
pub(super) struct Twins<'a> {
    /// The squares of `probabilities`.
    pub squares: &'a [Square],
    /// The boards of `distribution`, as shown.
    pub boards: &'a [u64],
    /// The basis states of `amplitudes` when asked: `Some(keys)` for a bounded listing,
    /// `None` for `"distribution_limit": "all"` (every entry, in the state's order).
    pub amplitudes: Option<Option<&'a [Key]>>,
}

/// A simulator backend `qchess eval` can run the Cantwell game on, with its formatting layer.
pub(super) trait Arith: QuantumState {
    /// What a move's exact outcome probability needs from the state before the move (the
    /// exact squared norm); `None` for the floats.
    fn norm_before(&self) -> Option<QSqrt2> {
        None
    }

    /// The exact twin of a move's `"probability"`, as a string: `before` is
    /// [`Arith::norm_before`] of the state before the move, `probability` the outcome's
    /// probability the move reported (`None`: the move measured nothing). `None` for the
    /// floats, and when the value cannot be recovered exactly (never a wrong value).
    fn outcome_exact(&self, before: Option<&QSqrt2>, probability: Option<f64>) -> Option<String> {
        let _ = (before, probability);
        None
    }

    /// Adds the exact twins of the read-outs to `out`.
    fn twins(held: &Rc<Held<Self>>, out: &mut Answer, twins: Twins) -> Result<(), EvalError> {
        let _ = (held, out, twins);
        Ok(())
    }
}

impl Arith for State<f64> {}
impl Arith for State<f32> {}

/// An exact read-out that failed (an amplitude poisoned by an overflow, a zero norm): the
/// line's error, never a panic.
fn arithmetic_error(e: SimError) -> EvalError {
    EvalError::new("arithmetic", format!("exact read-out failed: {e}"))
}

/// The largest power of 4 an outcome probability is searched for under (see
/// [`Arith::outcome_exact`] for `State<Exact>`).
const MAX_RESCALE: u32 = 256;

impl Arith for State<Exact> {
    fn norm_before(&self) -> Option<QSqrt2> {
        self.norm_exact().ok()
    }

    /// A move is unitary gates (which keep the exact squared norm `N`) and at most one
    /// projection (which keeps the outcome's mass `p * N`) followed by the simulator's
    /// rescale by `4^m` (docs/exact.md, "Global rescaling"). So `N_after / N_before` is
    /// `p * 4^m`; the float `probability` (the exact value rounded once) tells `m`, and the
    /// result is checked against it.
    fn outcome_exact(&self, before: Option<&QSqrt2>, probability: Option<f64>) -> Option<String> {
        let Some(p) = probability else {
            return Some("1".into());
        };
        let ratio = &self.norm_exact().ok()? / before?;
        let r = ratio.to_f64();
        if !(p > 0.0 && r > 0.0) {
            return None;
        }
        let m = ((r / p).log2() / 2.0).round();
        if !(0.0..=f64::from(MAX_RESCALE)).contains(&m) {
            return None;
        }
        let quarter = QSqrt2::rational(1, 4);
        let mut exact = ratio;
        for _ in 0..m as u32 {
            exact = &exact * &quarter;
        }
        let f = exact.to_f64();
        ((f - p).abs() <= 1e-9 * p.max(f)).then(|| exact.to_string())
    }

    fn twins(held: &Rc<Held<Self>>, out: &mut Answer, twins: Twins) -> Result<(), EvalError> {
        let state = held.state();
        let mut probs = Map::new();
        for &sq in twins.squares {
            let p = state
                .probability_exact(Predicate::One(sq.index()))
                .map_err(arithmetic_error)?;
            probs.insert(sq.to_string(), json!(p.to_string()));
        }
        out.insert("probabilities_exact", probs);

        let exact: HashMap<u64, QSqrt2> = state
            .board_distribution_exact(None)
            .map_err(arithmetic_error)?
            .into_iter()
            .collect();
        let mut dist = Map::new();
        for board in twins.boards {
            let p = exact
                .get(board)
                .map_or_else(|| "0".into(), QSqrt2::to_string);
            dist.insert(board_squares(*board), json!(p));
        }
        out.insert("distribution_exact", dist);

        let Some(keys) = twins.amplitudes else {
            return Ok(());
        };
        let norm = state.norm_exact().map_err(arithmetic_error)?;
        let root = norm.sqrt();
        out.insert(
            "norm_exact",
            match root {
                Some(_) => "1".to_string(),
                None => norm.to_string(),
            },
        );
        let list: Result<Vec<Value>, EvalError> = match keys {
            Some(keys) => keys
                .iter()
                .map(|k| amplitude_exact_json(*k, state.amplitude(*k), root.as_ref()))
                .collect(),
            None => state
                .entries()
                .map(|(k, a)| amplitude_exact_json(k, a, root.as_ref()))
                .collect(),
        };
        out.insert("amplitudes_exact", list?);
        Ok(())
    }
}

/// One basis state with its exact amplitude (divided by `root`, `sqrt(N)`, when it lies in
/// Q(sqrt2)): `{"board", "ancillas", "re", "im"}` with string values.
fn amplitude_exact_json(
    k: Key,
    a: Complex<Exact>,
    root: Option<&QSqrt2>,
) -> Result<Value, EvalError> {
    let part = |x: Exact| -> Result<String, EvalError> {
        let q = x.to_qsqrt2().ok_or_else(|| {
            EvalError::new(
                "arithmetic",
                "an exact amplitude overflowed (its coefficients outgrew i128)",
            )
        })?;
        Ok(match root {
            Some(r) => (&q / r).to_string(),
            None => q.to_string(),
        })
    };
    Ok(
        json!({"board": board_squares(k.board), "ancillas": format!("{:x}", k.ancillas),
              "re": part(a.re)?, "im": part(a.im)?}),
    )
}
