//! `qchess.sim.State`: the sparse state-vector simulator on 64 occupancy qubits.

use crate::errors;
use pyo3::prelude::*;
use pyo3::types::PyComplex;
use qchess_sim::{Controls, Predicate};
use rand_chacha::ChaCha8Rng;

/// A sparse quantum state of 64 qubits (one per square, a1 = 0 .. h8 = 63) with the
/// simulator's gates, in the Cantwell paper's conventions: `iswap` maps |01> to i|10>, a
/// split `s -> t1, t2` is `sqrt_iswap(s, t1)` then `iswap(s, t2)`, a merge is the inverse
/// of a split. `State(occupied)` is the basis state with the listed qubits set; `seed`
/// seeds the measurements (ChaCha8).
///
/// Every gate takes an optional `empty`: qubits that must all be 0 for the gate to act (a
/// slide's path). Gates on large states release the GIL.
#[pyclass(module = "qchess.sim", name = "State")]
pub struct State {
    state: qchess_sim::State,
    rng: ChaCha8Rng,
}

fn mask(qubits: &[u8]) -> PyResult<u64> {
    qubits.iter().try_fold(0u64, |m, q| {
        if *q < 64 {
            Ok(m | (1u64 << q))
        } else {
            Err(errors::error(
                "sim",
                format!("qubit {q} is out of range 0..63"),
            ))
        }
    })
}

fn controls(empty: Option<Vec<u8>>) -> PyResult<Controls> {
    Ok(Controls::empty_path(mask(&empty.unwrap_or_default())?))
}

#[pymethods]
impl State {
    #[new]
    #[pyo3(signature = (occupied = Vec::new(), *, seed = 0))]
    fn new(occupied: Vec<u8>, seed: u64) -> PyResult<Self> {
        Ok(Self {
            state: qchess_sim::State::classical(mask(&occupied)?),
            rng: crate::rng(seed),
        })
    }

    /// iSwap of qubits `a` and `b`: |01> -> i|10>, |10> -> i|01>.
    #[pyo3(signature = (a, b, empty = None))]
    fn iswap(&mut self, py: Python<'_>, a: u8, b: u8, empty: Option<Vec<u8>>) -> PyResult<()> {
        let c = controls(empty)?;
        let s = &mut self.state;
        py.allow_threads(|| s.iswap(a, b, c)).map_err(errors::sim)
    }

    /// The square root of iSwap on `a` and `b`.
    #[pyo3(signature = (a, b, empty = None))]
    fn sqrt_iswap(&mut self, py: Python<'_>, a: u8, b: u8, empty: Option<Vec<u8>>) -> PyResult<()> {
        let c = controls(empty)?;
        let s = &mut self.state;
        py.allow_threads(|| s.sqrt_iswap(a, b, c))
            .map_err(errors::sim)
    }

    /// Split from `s` to `t1` and `t2`: `sqrt_iswap(s, t1)` then `iswap(s, t2)`.
    #[pyo3(signature = (s, t1, t2, empty = None))]
    fn split(
        &mut self,
        py: Python<'_>,
        s: u8,
        t1: u8,
        t2: u8,
        empty: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let c = controls(empty)?;
        let st = &mut self.state;
        py.allow_threads(|| st.split(s, t1, t2, c))
            .map_err(errors::sim)
    }

    /// Merge from `s1` and `s2` to `t`: the inverse of the split `t -> s2, s1`.
    #[pyo3(signature = (s1, s2, t, empty = None))]
    fn merge(
        &mut self,
        py: Python<'_>,
        s1: u8,
        s2: u8,
        t: u8,
        empty: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let c = controls(empty)?;
        let st = &mut self.state;
        py.allow_threads(|| st.merge(s1, s2, t, c))
            .map_err(errors::sim)
    }

    /// The probability that qubit `q` is 1.
    fn probability(&self, py: Python<'_>, q: u8) -> PyResult<f64> {
        if q >= 64 {
            return Err(errors::error(
                "sim",
                format!("qubit {q} is out of range 0..63"),
            ));
        }
        let s = &self.state;
        Ok(py.allow_threads(|| s.probability(Predicate::One(q))))
    }

    /// Measures qubit `q` (drawing from the seeded stream), projects and returns the outcome.
    fn measure(&mut self, py: Python<'_>, q: u8) -> PyResult<bool> {
        if q >= 64 {
            return Err(errors::error(
                "sim",
                format!("qubit {q} is out of range 0..63"),
            ));
        }
        let (s, rng) = (&mut self.state, &mut self.rng);
        py.allow_threads(|| s.measure(Predicate::One(q), rng))
            .map_err(errors::sim)
    }

    /// Every nonzero amplitude, in the simulator's canonical order: a list of `(basis,
    /// amplitude)`, `basis` an int (bit i = qubit i, capture ancillas above bit 63),
    /// `amplitude` a complex number.
    fn amplitudes<'py>(&self, py: Python<'py>) -> Vec<(u128, Bound<'py, PyComplex>)> {
        self.state
            .entries()
            .map(|(k, a)| {
                (
                    u128::from(k.board) | (k.ancillas << 64),
                    PyComplex::from_doubles(py, a.re, a.im),
                )
            })
            .collect()
    }

    /// The number of basis states with a nonzero amplitude.
    fn __len__(&self) -> usize {
        self.state.len()
    }

    fn __repr__(&self) -> String {
        format!("State(<{} basis states>)", self.state.len())
    }
}
