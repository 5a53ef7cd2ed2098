//! The board picture sent in every state: the shared SVG renderer's output.

use crate::session::VariantGame;
use qchess_board::Color;
use serde_json::Value;

/// The SVG of the board as `viewer` may see it.
pub fn svg(_game: &VariantGame, _viewer: Color) -> Value {
    Value::Null
}
