//! `qchess eval` for `"variant": "cantwell"`. Owned by the qchess-cantwell work.

use super::EvalError;
use serde_json::{Map, Value};

/// Evaluates one request object of this variant; the dispatcher adds `"ok": true`.
pub fn eval(_request: &Map<String, Value>) -> Result<Map<String, Value>, EvalError> {
    Err(EvalError::new("unsupported", "the cantwell variant is not implemented yet").at("variant"))
}
