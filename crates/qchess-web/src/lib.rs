//! `qchess serve`: the web board. An axum (tokio) server with a JSON API and one page, for
//! every rule system of the workspace: Cantwell quantum chess, Niel's Chess and Akl-style
//! quantum chess. The rules are the rule crates' own; this crate only calls them.
//!
//! The API (docs/web.md has every field):
//!
//! * `POST /api/games` `{"variant", "rules", "board", "opponent", "color", "record"}` ->
//!   `{"id", "tokens": {"white", "black"}, "state"}`
//! * `GET /api/games/{id}?token=T`: the state as that side may see it (no token: 401, a wrong
//!   one: 403)
//! * `POST /api/games/{id}/moves?token=T` `{"move", "rolls"}`
//! * `POST /api/games/{id}/undo?token=T` `{}`
//! * `GET /api/games/{id}/legal?token=T`
//! * `GET /api/games/{id}/record`
//! * `GET /api/games/{id}/bell?token=T&a=e4&b=d5` (Cantwell)
//! * `GET /` (new game) and `GET /play/{id}?token=T` (the board)
//!
//! Errors have the shape of `qchess eval`'s: `{"ok": false, "error": {"kind", "message",
//! "at"}}`. Limits: request bodies, games per server, idle games expire, each game's share of
//! the memory budget caps its superposition, and game work runs on a bounded pool.
#![forbid(unsafe_code)]

mod akl;
mod api;
mod cantwell;
mod error;
mod niels;
mod page;
mod render;
mod session;
pub mod wire;

pub use error::ApiError;

use std::net::SocketAddr;
use std::time::Duration;

/// The limits that keep a public server alive.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Games held at once; a new game beyond it is refused (503, kind `capacity`).
    pub max_games: usize,
    /// The memory budget of all games, in bytes; each game may use `memory / max_games`.
    pub memory: usize,
    /// Largest request body, in bytes (413 beyond).
    pub body_bytes: usize,
    /// A game not used for this long is dropped.
    pub idle: Duration,
    /// Game computations running at once; more requests wait for a slot.
    pub workers: usize,
    /// How long a request may wait for a slot before it is refused (503, kind `busy`).
    pub queue_wait: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_games: 1000,
            memory: 1 << 30,
            body_bytes: 64 * 1024,
            idle: Duration::from_secs(60 * 60),
            workers: 4,
            queue_wait: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// One game's share of the memory budget.
    pub fn per_game_memory(&self) -> usize {
        self.memory / self.max_games.max(1)
    }
}

/// How to run the server.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to listen on (default 127.0.0.1:8080: this machine only).
    pub bind: SocketAddr,
    /// The limits.
    pub limits: Limits,
    /// Seed of the server's random stream (game seeds, tokens). `None`: fresh entropy from
    /// the operating system, as a public server needs (tokens must not be guessable).
    pub seed: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            limits: Limits::default(),
            seed: None,
        }
    }
}

/// A running server (for tests and embedding): its address and its task.
pub struct Server {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The serving task; abort it to stop the server.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Binds `config.bind` and serves in a background task of the current tokio runtime.
pub async fn start(config: Config) -> std::io::Result<Server> {
    let listener = tokio::net::TcpListener::bind(config.bind).await?;
    let addr = listener.local_addr()?;
    let (app, state) = api::router(&config);
    tokio::spawn(sweep(state, config.limits.idle));
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(Server { addr, task })
}

/// Runs the server until Ctrl-C (what `qchess serve` calls).
pub fn run(config: Config) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.bind)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.bind))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("qchess serve: open http://{addr}/ (Ctrl-C stops the server)");
        let (app, state) = api::router(&config);
        tokio::spawn(sweep(state, config.limits.idle));
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| format!("server error: {e}"))
    })
}

/// Drops idle games now and then (a new game also sweeps first).
async fn sweep(state: std::sync::Arc<api::AppState>, idle: Duration) {
    let period = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    loop {
        tokio::time::sleep(period).await;
        state.expire_idle();
    }
}
