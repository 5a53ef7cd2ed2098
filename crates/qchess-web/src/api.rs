//! The routes and handlers of the JSON API and the page.

use crate::error::ApiError;
use crate::page;
use crate::session::{NewGame, Opponent, Session};
use crate::{Config, Limits};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use qchess_board::{Color, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::Semaphore;

type Query_ = Query<HashMap<String, String>>;

/// What every handler shares.
pub struct AppState {
    games: Mutex<HashMap<String, Arc<Mutex<Session>>>>,
    rng: Mutex<ChaCha20Rng>,
    limits: Limits,
    work: Arc<Semaphore>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a lock was held cannot leave a game half-changed (every rule crate call
    // changes nothing on error), so a poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AppState {
    fn new(config: &Config) -> Self {
        let rng = match config.seed {
            Some(seed) => ChaCha20Rng::seed_from_u64(seed),
            None => ChaCha20Rng::from_seed(rand::random()),
        };
        Self {
            games: Mutex::new(HashMap::new()),
            rng: Mutex::new(rng),
            limits: config.limits.clone(),
            work: Arc::new(Semaphore::new(config.limits.workers.max(1))),
        }
    }

    /// Drops the games idle for longer than the limit; returns how many are left.
    pub fn expire_idle(&self) -> usize {
        let now = Instant::now();
        let idle = self.limits.idle;
        let mut games = lock(&self.games);
        games.retain(|_, s| match s.try_lock() {
            Ok(s) => now.duration_since(s.touched) < idle,
            Err(_) => true, // in use right now
        });
        games.len()
    }

    fn find(&self, id: &str) -> Result<Arc<Mutex<Session>>, ApiError> {
        lock(&self.games).get(id).cloned().ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                format!("no game {id:?} (games idle too long expire)"),
            )
            .at("id")
        })
    }

    /// Runs game work on the bounded pool of blocking threads.
    async fn work<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let busy = || {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "the server is busy: try again",
            )
        };
        let permit =
            tokio::time::timeout(self.limits.queue_wait, self.work.clone().acquire_owned())
                .await
                .map_err(|_| busy())?
                .map_err(|_| busy())?;
        let result = tokio::task::spawn_blocking(f).await.map_err(|_| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the request failed inside the server; the game is unchanged",
            )
        });
        drop(permit);
        result
    }
}

/// The router, and the shared state (for the idle sweeper).
pub fn router(config: &Config) -> (Router, Arc<AppState>) {
    let state = Arc::new(AppState::new(config));
    let router = Router::new()
        .route("/", get(page::index))
        .route("/play/{id}", get(page::index))
        .route("/assets/app.js", get(page::script))
        .route("/assets/style.css", get(page::style))
        .route("/api/games", post(create))
        .route("/api/games/{id}", get(show))
        .route("/api/games/{id}/moves", post(moves))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/legal", get(legal))
        .route("/api/games/{id}/record", get(record))
        .route("/api/games/{id}/bell", get(bell))
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "no such page or API route",
            )
        })
        .layer(DefaultBodyLimit::max(config.limits.body_bytes))
        .with_state(state.clone());
    (router, state)
}

/// The request body as a JSON object; an empty body is `{}`.
fn body_object(body: Result<Bytes, BytesRejection>) -> Result<Map<String, Value>, ApiError> {
    let bytes = body.map_err(|e| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request",
            format!("the request body was refused: {e}"),
        )
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::request("the body must be a JSON object", "")),
        Err(e) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "json",
            format!("invalid JSON: {e}"),
        )
        .at(json!({"column": e.column()}))),
    }
}

fn string_field(body: &Map<String, Value>, key: &str) -> Result<Option<String>, ApiError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::request(
            format!("\"{key}\" must be a string"),
            key,
        )),
    }
}

fn parse_new_game(body: &Map<String, Value>) -> Result<NewGame, ApiError> {
    let variant = string_field(body, "variant")?.ok_or_else(|| {
        ApiError::request(
            "\"variant\" is required: \"cantwell\", \"niels\" or \"akl\"",
            "variant",
        )
    })?;
    let rules = match body.get("rules") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s
            .split(',')
            .map(|r| r.trim().to_string())
            .filter(|r| !r.is_empty())
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    ApiError::request("each rule option is a string", &format!("rules[{i}]"))
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ApiError::request(
                "\"rules\" must be an array of option names",
                "rules",
            ));
        }
    };
    let opponent = match string_field(body, "opponent")?.as_deref() {
        None | Some("human") => Opponent::Human,
        Some("random") => Opponent::Random,
        Some("engine") => Opponent::Engine(3),
        Some(other) => match other
            .strip_prefix("engine:level=")
            .and_then(|l| l.parse::<u8>().ok())
            .filter(|l| (1..=5).contains(l))
        {
            Some(level) => Opponent::Engine(level),
            None => {
                return Err(ApiError::request(
                    format!(
                        "unknown opponent {other:?}: expected \"human\", \"random\", \"engine\" or \"engine:level=L\" (L in 1..5)"
                    ),
                    "opponent",
                ));
            }
        },
    };
    let color = match string_field(body, "color")?.as_deref() {
        None | Some("w") | Some("white") => Color::White,
        Some("b") | Some("black") => Color::Black,
        Some(other) => {
            return Err(ApiError::request(
                format!("\"color\" must be \"white\" or \"black\", not {other:?}"),
                "color",
            ));
        }
    };
    Ok(NewGame {
        variant,
        rules,
        board: string_field(body, "board")?,
        opponent,
        color,
        record: string_field(body, "record")?,
    })
}

fn token_side(session: &Session, query: &HashMap<String, String>) -> Result<Color, ApiError> {
    let token = query.get("token").ok_or_else(|| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "add ?token=T: the secret token of your side",
        )
    })?;
    session.side_of(token).ok_or_else(|| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "that token is not one of this game's",
        )
    })
}

async fn create(
    State(app): State<Arc<AppState>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body_object(body)?;
    let req = parse_new_game(&body)?;
    if app.expire_idle() >= app.limits.max_games {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "capacity",
            format!(
                "this server holds at most {} games: try again later",
                app.limits.max_games
            ),
        ));
    }
    let (id, seed, tokens) = {
        let mut rng = lock(&app.rng);
        let id = format!("{:016x}", rng.random::<u64>());
        let seed = rng.random::<u64>();
        let tokens = [
            format!("{:032x}", rng.random::<u128>()),
            format!("{:032x}", rng.random::<u128>()),
        ];
        (id, seed, tokens)
    };
    let memory = app.limits.per_game_memory();
    let id2 = id.clone();
    let (session, state) = app
        .work(move || {
            let session = Session::create(&req, seed, tokens, memory)?;
            let viewer = if session.opponent.is_computer() {
                session.human
            } else {
                Color::White
            };
            // A state answer over the memory budget refuses the creation: no game is kept.
            let state = session.state(&id2, viewer)?;
            Ok::<_, ApiError>((session, state))
        })
        .await??;
    let tokens = json!({"white": session.tokens[0], "black": session.tokens[1]});
    {
        let mut games = lock(&app.games);
        if games.len() >= app.limits.max_games {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "capacity",
                "the server is full",
            ));
        }
        games.insert(id.clone(), Arc::new(Mutex::new(session)));
    }
    Ok((
        StatusCode::CREATED,
        Json(json!({"ok": true, "id": id, "tokens": tokens, "state": state})),
    )
        .into_response())
}

/// Runs `f` on the game `id` with the side of the request's token.
async fn with_game<T: Send + 'static>(
    app: &Arc<AppState>,
    id: &str,
    query: Option<HashMap<String, String>>,
    f: impl FnOnce(&mut Session, Color) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let game = app.find(id)?;
    app.work(move || {
        let mut session = lock(&game);
        session.touched = Instant::now();
        let side = match &query {
            Some(q) => token_side(&session, q)?,
            None => Color::White,
        };
        f(&mut session, side)
    })
    .await?
}

async fn show(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query_,
) -> Result<Json<Value>, ApiError> {
    let id2 = id.clone();
    with_game(&app, &id, Some(q), move |s, side| {
        Ok(Json(s.state(&id2, side)?))
    })
    .await
}

async fn moves(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query_,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let body = body_object(body)?;
    let text = string_field(&body, "move")?
        .ok_or_else(|| ApiError::request("\"move\" is required", "move"))?;
    let rolls = match body.get("rolls") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    r.as_u64()
                        .filter(|x| (1..=6).contains(x))
                        .map(|x| x as u8)
                        .ok_or_else(|| {
                            ApiError::request(
                                "a dice result is an integer 1..6",
                                &format!("rolls[{i}]"),
                            )
                        })
                })
                .collect::<Result<Vec<u8>, _>>()?,
        ),
        Some(_) => {
            return Err(ApiError::request(
                "\"rolls\" must be an array of dice results",
                "rolls",
            ));
        }
    };
    let id2 = id.clone();
    with_game(&app, &id, Some(q), move |s, side| {
        // A state answer over the memory budget takes the plies back: the error, no change.
        let state = s.play_answered(&id2, side, &text, rolls.as_deref())?;
        Ok(Json(json!({"ok": true, "state": state})))
    })
    .await
}

async fn undo(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query_,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    body_object(body)?;
    let id2 = id.clone();
    with_game(&app, &id, Some(q), move |s, side| {
        s.undo()?;
        // The take-back cannot be redone here: a state answer over the memory budget is the
        // error `state_too_large`, saying that the move was taken back.
        let state = s.state(&id2, side).map_err(|e| ApiError {
            message: format!("the move was taken back, but {}", e.message),
            ..e
        })?;
        Ok(Json(json!({"ok": true, "state": state})))
    })
    .await
}

async fn legal(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query_,
) -> Result<Json<Value>, ApiError> {
    let id2 = id.clone();
    with_game(&app, &id, Some(q), move |s, side| {
        Ok(Json(s.legal(&id2, side)?))
    })
    .await
}

async fn record(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id2 = id.clone();
    with_game(&app, &id, None, move |s, _| Ok(Json(s.record(&id2)?))).await
}

async fn bell(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query_,
) -> Result<Json<Value>, ApiError> {
    let square = |key: &str| -> Result<Square, ApiError> {
        let text = q
            .get(key)
            .ok_or_else(|| ApiError::request(format!("add ?{key}=e4"), key))?;
        text.parse::<Square>()
            .map_err(|e| ApiError::request(format!("{key}: {e}"), key))
    };
    let (a, b) = (square("a")?, square("b")?);
    with_game(&app, &id, Some(q), move |s, _| s.bell(a, b).map(Json)).await
}
