//! The board picture sent in every state: the shared SVG renderer (`qchess-render`), where every
//! square is an element with `data-square` (and, in Cantwell, `data-probability`).

use crate::session::VariantGame;
use qchess_board::Color;
use serde_json::Value;

/// The SVG of the board as `viewer` may see it (Akl: drawn from that player's view alone).
pub fn svg(game: &VariantGame, viewer: Color) -> Value {
    Value::String(match game {
        VariantGame::Cantwell(g) => qchess_render::cantwell(g),
        VariantGame::Niels(g) => qchess_render::niels(g.position(), g.rules()),
        VariantGame::Akl(g) => qchess_render::akl(&g.view(viewer)),
    })
}
