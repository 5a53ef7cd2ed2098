//! The page: plain HTML, CSS and JavaScript compiled into the binary (no build step).

use axum::http::header;
use axum::response::{Html, IntoResponse};

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLE: &str = include_str!("../assets/style.css");

/// The page (the same document serves the new-game form and `/play/{id}`).
pub async fn index() -> Html<&'static str> {
    Html(INDEX)
}

/// The page's script.
pub async fn script() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
}

/// The page's style sheet.
pub async fn style() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE)
}
