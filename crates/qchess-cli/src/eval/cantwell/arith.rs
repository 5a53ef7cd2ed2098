//! The per-arithmetic layer of `"variant": "cantwell"`: what differs between
//! `"arithmetic": "f64"`, `"f32"` and `"exact"` once the game (`Game<S>`) or the occupancy
//! state (`S`) has been driven by the one generic path in `cantwell.rs`.
//!
//! The floats add nothing. Exact arithmetic (`State<Exact>`, docs/exact.md) adds the exact
//! twin `K_exact` of every probability field `K`: `probabilities_exact`, `distribution_exact`,
//! `amplitudes_exact` (with `norm_exact`) and each move's `probability_exact`, as strings in
//! the form `x`, `y*sqrt2`, `x+y*sqrt2`, `x-y*sqrt2` (`QSqrt2`'s `Display`).

use super::super::EvalError;
use super::super::frame::{Answer, Shape};
use super::super::limits::AnswerBudget;
use super::Held;
use qchess_board::Square;
use qchess_cantwell::position::{board_squares, parse_board_squares};
use qchess_sim::{
    Amplitude, Complex, Exact, Key, Predicate, Probability, QSqrt2, QuantumState, SimError, State,
};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::rc::Rc;

/// What the exact twins show: the same entries as their float fields, in the same order.
pub(super) struct Twins<'a> {
    /// The squares of `probabilities`.
    pub squares: &'a [Square],
    /// The boards of `distribution`: `Some(boards)` for a bounded listing (in its order),
    /// `None` for `"distribution_limit": "all"` (every board, in the order of
    /// [`QuantumState::for_each_board`]).
    pub boards: Option<&'a [u64]>,
    /// The basis states of `amplitudes` when asked: `Some(keys)` for a bounded listing,
    /// `None` for `"distribution_limit": "all"` (every entry, in the order of
    /// [`Arith::for_each_entry_f64`]).
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

    /// Calls `f` with every stored basis state and its amplitude (in `f64`) in the state's
    /// storage order, copying nothing ([`State::for_each_entry`]).
    fn for_each_entry_f64(&self, f: &mut dyn FnMut(Key, Complex<f64>));

    /// Adds the exact twins of the read-outs to `out`; what they hold in memory is asked of
    /// `budget` first.
    fn twins(
        held: &Rc<Held<Self>>,
        out: &mut Answer,
        twins: Twins,
        budget: &mut AnswerBudget,
    ) -> Result<(), EvalError> {
        let _ = (held, out, twins, budget);
        Ok(())
    }

    /// The exact fields of the answer's `position` object, written after its float fields
    /// (`,"amplitudes_exact":[..],"norm_exact":".."`), built before the answer is written
    /// (asked of `budget` first); `None` for the floats.
    fn position_exact(&self, budget: &mut AnswerBudget) -> Result<Option<Vec<u8>>, EvalError> {
        let _ = budget;
        Ok(None)
    }

    /// The state of a request's `position.amplitudes_exact` (the list an exact answer's
    /// `position` holds), for exact arithmetic; `None` for the floats, which read the float
    /// `amplitudes` instead.
    fn from_exact_amplitudes(list: &Value) -> Option<Result<Self, EvalError>> {
        let _ = list;
        None
    }
}

/// [`Arith::for_each_entry_f64`] of a local state.
fn visit_f64<T: Amplitude>(state: &State<T>, f: &mut dyn FnMut(Key, Complex<f64>)) {
    state.for_each_entry(&mut |k, a| f(k, Complex::new(a.re.as_f64(), a.im.as_f64())));
}

impl Arith for State<f64> {
    fn for_each_entry_f64(&self, f: &mut dyn FnMut(Key, Complex<f64>)) {
        visit_f64(self, f);
    }
}
impl Arith for State<f32> {
    fn for_each_entry_f64(&self, f: &mut dyn FnMut(Key, Complex<f64>)) {
        visit_f64(self, f);
    }
}

/// Bytes an exact amplitude entry held as JSON (`{"board", "ancillas", "re", "im"}` with
/// string values) takes in memory, about: the object's map node, its keys and its strings.
const EXACT_AMPLITUDE_BYTES: usize = 1024;

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

    fn position_exact(&self, budget: &mut AnswerBudget) -> Result<Option<Vec<u8>>, EvalError> {
        let norm = self.norm_exact().map_err(arithmetic_error)?;
        let root = norm.sqrt();
        budget.ask(self.len().saturating_mul(EXACT_AMPLITUDE_BYTES), "position")?;
        let mut list: Vec<Value> = Vec::new();
        budget.reserve(&mut list, self.len(), "position")?;
        push_every_amplitude(self, root.as_ref(), &mut list)?;
        let norm_text = match root {
            Some(_) => "1".to_string(),
            None => norm.to_string(),
        };
        let mut text = b",\"amplitudes_exact\":".to_vec();
        serde_json::to_writer(&mut text, &list)
            .and_then(|()| {
                text.extend_from_slice(b",\"norm_exact\":");
                serde_json::to_writer(&mut text, &norm_text)
            })
            .map_err(|e| EvalError::new("arithmetic", format!("position: {e}")))?;
        Ok(Some(text))
    }

    /// Reads `{"board", "ancillas", "re", "im"}` entries with exact string values. Values
    /// with odd denominators (amplitudes normalised by a `sqrt(N)` that is not a power of
    /// two) are all multiplied by the least common multiple of those odd parts, which
    /// changes no probability: an exact state is kept unnormalised (docs/exact.md).
    fn from_exact_amplitudes(list: &Value) -> Option<Result<Self, EvalError>> {
        Some(exact_state_of(list))
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

    fn for_each_entry_f64(&self, f: &mut dyn FnMut(Key, Complex<f64>)) {
        visit_f64(self, f);
    }

    /// The exact twins are held in memory (exact states are small: their coefficients
    /// outgrow `i128` long before the floats' sizes), each asked of `budget` first.
    fn twins(
        held: &Rc<Held<Self>>,
        out: &mut Answer,
        twins: Twins,
        budget: &mut AnswerBudget,
    ) -> Result<(), EvalError> {
        let state = held.state();
        let mut probs = Map::new();
        for &sq in twins.squares {
            let p = state
                .probability_exact(Predicate::One(sq.index()))
                .map_err(arithmetic_error)?;
            probs.insert(sq.to_string(), json!(p.to_string()));
        }
        out.insert("probabilities_exact", probs);

        // The whole exact distribution (its sort buffer, the list, the map), then the shown
        // boards' strings, in the order `distribution` shows them.
        let len = state.len();
        let whole = std::mem::size_of::<(u64, &Complex<Exact>)>()
            + 3 * std::mem::size_of::<(u64, Probability)>();
        budget.ask(len.saturating_mul(whole), "arithmetic")?;
        let exact: HashMap<u64, QSqrt2> = state
            .board_distribution_exact(None)
            .map_err(arithmetic_error)?
            .into_iter()
            .collect();
        let order: Vec<u64> = match twins.boards {
            Some(boards) => boards.to_vec(),
            None => {
                let mut all = Vec::new();
                budget.reserve(&mut all, exact.len(), "arithmetic")?;
                state.for_each_board(&mut |b, _| all.push(b));
                all
            }
        };
        let mut dist: Vec<(String, String)> = Vec::new();
        budget.reserve(&mut dist, order.len(), "arithmetic")?;
        for board in order {
            let p = exact
                .get(&board)
                .map_or_else(|| "0".into(), QSqrt2::to_string);
            dist.push((board_squares(board), p));
        }
        drop(exact);
        out.entries("distribution_exact", Shape::Object, move |e| {
            for (board, p) in &dist {
                e.entry(board, p);
            }
        });

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
        let shown = keys.map_or(len, <[Key]>::len);
        let mut list: Vec<Value> = Vec::new();
        budget.ask(shown.saturating_mul(EXACT_AMPLITUDE_BYTES), "amplitudes")?;
        budget.reserve(&mut list, shown, "amplitudes")?;
        match keys {
            Some(keys) => {
                for k in keys {
                    list.push(amplitude_exact_json(
                        *k,
                        state.amplitude(*k),
                        root.as_ref(),
                    )?);
                }
            }
            None => {
                // In the order the float listing streams them.
                push_every_amplitude(state, root.as_ref(), &mut list)?;
            }
        }
        out.insert("amplitudes_exact", list);
        Ok(())
    }
}

/// Pushes every stored basis state's [`amplitude_exact_json`] onto `list`, in storage order
/// (the order of the float listing); stops at the first that cannot be written.
fn push_every_amplitude(
    state: &State<Exact>,
    root: Option<&QSqrt2>,
    list: &mut Vec<Value>,
) -> Result<(), EvalError> {
    let mut failed = None;
    state.for_each_entry(&mut |k, a| {
        if failed.is_none() {
            match amplitude_exact_json(k, a, root) {
                Ok(v) => list.push(v),
                Err(e) => failed = Some(e),
            }
        }
    });
    failed.map_or(Ok(()), Err)
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

/// [`Arith::from_exact_amplitudes`] of `State<Exact>`.
fn exact_state_of(list: &Value) -> Result<State<Exact>, EvalError> {
    use num_bigint::BigInt;
    use num_integer::Integer;
    use num_traits::One;
    let bad = |i: usize, what: String| {
        EvalError::new("position", format!("amplitudes_exact entry {i}: {what}"))
            .at(format!("position.amplitudes_exact.{i}"))
    };
    let Some(items) = list.as_array() else {
        return Err(
            EvalError::new("position", "\"amplitudes_exact\" must be a list")
                .at("position.amplitudes_exact"),
        );
    };
    let mut parsed = Vec::with_capacity(items.len());
    let mut odd = BigInt::one();
    for (i, item) in items.iter().enumerate() {
        let text = |name: &str| -> Result<&str, EvalError> {
            item.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| bad(i, format!("\"{name}\" must be a string")))
        };
        let board = parse_board_squares(text("board")?).map_err(|r| bad(i, r))?;
        let ancillas = u128::from_str_radix(text("ancillas")?.trim_start_matches("0x"), 16)
            .map_err(|_| bad(i, "\"ancillas\" is not a hexadecimal number".into()))?;
        let mut part = |name: &str| -> Result<QSqrt2, EvalError> {
            let q: QSqrt2 = text(name)?
                .parse()
                .map_err(|e| bad(i, format!("\"{name}\": {e}")))?;
            for d in [q.x().denom(), q.y().denom()] {
                let mut d = d.clone();
                while d.is_even() {
                    d >>= 1u32;
                }
                odd = odd.lcm(&d);
            }
            Ok(q)
        };
        let (re, im) = (part("re")?, part("im")?);
        parsed.push((Key { board, ancillas }, re, im));
    }
    let scale = QSqrt2::new(
        num_rational::BigRational::from_integer(odd),
        num_rational::BigRational::from_integer(BigInt::from(0)),
    );
    let mut entries = Vec::with_capacity(parsed.len());
    for (i, (k, re, im)) in parsed.into_iter().enumerate() {
        let exact = |q: QSqrt2| {
            (&q * &scale)
                .to_exact()
                .ok_or_else(|| bad(i, "a coefficient does not fit i128".into()))
        };
        entries.push((k, Complex::new(exact(re)?, exact(im)?)));
    }
    State::<Exact>::from_amplitudes(entries, qchess_sim::Normalization::Renormalize)
        .map_err(|e| EvalError::new("position", format!("amplitudes_exact: {e}")))
}
