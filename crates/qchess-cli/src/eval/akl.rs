//! `qchess eval` for `"variant": "akl"`. Owned by the qchess-akl work.

use super::EvalError;
use serde_json::{Map, Value};

/// Evaluates one request object of this variant; the dispatcher adds `"ok": true`.
pub fn eval(_request: &Map<String, Value>) -> Result<Map<String, Value>, EvalError> {
    Err(EvalError::new("unsupported", "the akl variant is not implemented yet").at("variant"))
}
