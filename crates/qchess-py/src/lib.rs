//! The `qchess._qchess` extension module: the Rust side of the `qchess` Python package.
//!
//! Classes: [`cantwell::CantwellGame`], [`niels::NielsGame`], [`akl::AklGame`] (with
//! [`akl::AklView`]), [`sim::State`] and the engine, [`engine::Engine`] (answering
//! [`engine::SearchResult`]s); the exception `QchessError` whose `.kind` names the
//! error kind (`"illegal_move"`, `"notation"`, ...). Long operations (moves, sampling,
//! gates on large states, engine searches) release the GIL. The Python package (`python/qchess`) re-exports
//! everything and adds `qchess.sim` and `qchess.env`.
#![deny(unsafe_code)]

mod akl;
mod cantwell;
mod engine;
mod errors;
mod niels;
mod sim;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _qchess(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("QchessError", m.py().get_type::<errors::QchessError>())?;
    m.add_class::<cantwell::CantwellGame>()?;
    m.add_class::<niels::NielsGame>()?;
    m.add_class::<akl::AklGame>()?;
    m.add_class::<akl::AklView>()?;
    m.add_class::<sim::State>()?;
    m.add_class::<engine::Engine>()?;
    m.add_class::<engine::SearchResult>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// A seeded random stream (ChaCha8, the CLI's: the same seed replays the same game).
pub(crate) fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    use rand::SeedableRng;
    rand_chacha::ChaCha8Rng::seed_from_u64(seed)
}

/// `probabilities` as a dict square -> float, or as a NumPy array of 64 floats (index a1 = 0)
/// when `array` is true (NumPy must then be installed).
pub(crate) fn probabilities_out<'py>(
    py: Python<'py>,
    named: Vec<(String, f64)>,
    dense: &[f64],
    array: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if array {
        let numpy = py.import("numpy").map_err(|_| {
            errors::error(
                "numpy_missing",
                "probabilities(array=True) needs NumPy: pip install numpy",
            )
        })?;
        return numpy.call_method1("array", (dense.to_vec(),));
    }
    let d = pyo3::types::PyDict::new(py);
    for (k, v) in named {
        d.set_item(k, v)?;
    }
    Ok(d.into_any())
}
