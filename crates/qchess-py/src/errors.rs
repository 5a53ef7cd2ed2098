//! `QchessError`: every error raised by the package, with a machine-readable `.kind`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _qchess,
    QchessError,
    PyException,
    "An error of the qchess package. `.kind` names its kind (\"illegal_move\", \"notation\", \
     \"position\", \"json\", \"game_over\", \"sim\", ...), `.message` says what is wrong. \
     The game or state it came from is exactly as it was before the call."
);

/// A `QchessError` of `kind` with `message`.
pub(crate) fn error(kind: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    let err = QchessError::new_err(message.clone());
    Python::with_gil(|py| {
        let value = err.value(py);
        let _ = value.setattr("kind", kind);
        let _ = value.setattr("message", message);
    });
    err
}

/// From a Cantwell game error (its own kind names).
pub(crate) fn cantwell(e: qchess_cantwell::GameError) -> PyErr {
    error(e.kind(), e.to_string())
}

/// From an Akl error (its own kind names).
pub(crate) fn akl(e: qchess_akl::AklError) -> PyErr {
    error(e.kind(), e.to_string())
}

/// From a Niel's Chess error: the kinds `qchess eval` reports for the variant.
pub(crate) fn niels(e: qchess_niels::NielsError) -> PyErr {
    use qchess_niels::NielsError as E;
    let kind = match &e {
        E::Parse { .. } => "notation",
        E::Illegal { .. } => "illegal_move",
        E::Rolls(_) => "rolls",
        E::GameOver(_) => "game_over",
        E::Position(_) => "position",
        E::Rules(_) => "rules",
    };
    error(kind, e.to_string())
}

/// From a simulator error.
pub(crate) fn sim(e: qchess_sim::SimError) -> PyErr {
    error("sim", e.to_string())
}
