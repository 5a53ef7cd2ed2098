//! The API's one error shape, the same as `qchess eval`'s: `{"ok": false, "error": {"kind",
//! "message", "at"}}`, with an HTTP status.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A refused request: HTTP status, machine-readable kind, message and location.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status of the answer.
    pub status: StatusCode,
    /// Machine-readable class: the rule crates' kinds (`"notation"`, `"illegal_move"`,
    /// `"game_over"`, ...) and the server's own (`"json"`, `"request"`, `"unauthorized"`,
    /// `"forbidden"`, `"not_found"`, `"not_your_turn"`, `"capacity"`, `"busy"`, `"memory"`).
    pub kind: String,
    /// What is wrong, for a person.
    pub message: String,
    /// Where: a JSON path or a character position; `null` when not applicable.
    pub at: Value,
}

impl ApiError {
    /// An error of `kind` answered with `status`.
    pub fn new(status: StatusCode, kind: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind: kind.to_string(),
            message: message.into(),
            at: Value::Null,
        }
    }

    /// A bad request field (400, kind `request`) at `at`.
    pub fn request(message: impl Into<String>, at: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "request", message).at(at)
    }

    /// A refused move or game action (422) of a rule crate's `kind`.
    pub fn rules(kind: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, kind, message)
    }

    /// The same error located at `at`.
    pub fn at(mut self, at: impl Into<Value>) -> Self {
        self.at = at.into();
        self
    }

    /// The JSON body.
    pub fn to_json(&self) -> Value {
        json!({"ok": false, "error": {"kind": self.kind, "message": self.message, "at": self.at}})
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.to_json())).into_response()
    }
}
