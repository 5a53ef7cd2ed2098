//! One game on the server: the variant's game, its two secret tokens, its opponent, its own
//! seeded random stream and the last move's report.

use crate::error::ApiError;
use crate::{akl, cantwell, niels, render};
use axum::http::StatusCode;
use qchess_board::{Color, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use std::time::Instant;

/// Plies a game may reach: every request's work (replays of undo, the record) stays bounded.
pub const MAX_PLIES: usize = 2000;

/// Bytes one basis state of a Cantwell superposition takes in the simulator (key, complex
/// amplitude), times two for the pass that builds the next state beside the current one.
const BYTES_PER_BASIS_STATE: usize = 2 * (8 + 16);

/// The rule system of a game.
pub enum VariantGame {
    /// Cantwell quantum chess.
    Cantwell(Box<qchess_cantwell::Game>),
    /// Niel's Chess.
    Niels(Box<qchess_niels::Game>),
    /// Akl-style quantum chess.
    Akl(Box<qchess_akl::Game>),
}

/// Who plays the side the creator does not.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Opponent {
    /// A person: hot-seat with both tokens, or over the network with one each.
    Human,
    /// The built-in random mover, answering each move at once.
    Random,
    /// The engine (`qchess-engine`) at this level (1 to 5), answering each move within
    /// [`ENGINE_MOVETIME`].
    Engine(u8),
}

impl Opponent {
    /// Whether the server plays the other side (the random mover or the engine).
    pub fn is_computer(self) -> bool {
        self != Opponent::Human
    }

    /// The name the API reads and answers: `human`, `random` or `engine` (any level).
    pub fn name(self) -> &'static str {
        match self {
            Opponent::Human => "human",
            Opponent::Random => "random",
            Opponent::Engine(_) => "engine",
        }
    }
}

/// The time the engine may think about one move (an Akl turn is two decisions: twice this).
pub const ENGINE_MOVETIME: std::time::Duration = std::time::Duration::from_millis(1000);

/// Nodes the engine may visit for one move, whatever the time: bounds a request's work on a
/// fast machine too.
pub const ENGINE_NODES: u64 = 200_000;

/// The engine's limits for one decision.
pub fn engine_limits() -> qchess_engine::Limits {
    qchess_engine::Limits {
        movetime: Some(ENGINE_MOVETIME),
        nodes: Some(ENGINE_NODES),
        ..qchess_engine::Limits::default()
    }
}

/// One game on the server.
pub struct Session {
    /// The game.
    pub game: VariantGame,
    /// Who plays the other side.
    pub opponent: Opponent,
    /// The person's side against the random mover or the engine.
    pub human: Color,
    /// The secret tokens, White's then Black's.
    pub tokens: [String; 2],
    /// The game's own random stream (measurements, dice, collapses, the random mover).
    pub rng: ChaCha8Rng,
    /// The reports of the last request's moves (the player's, then the random mover's).
    pub last: Vec<Value>,
    /// When the game was last used.
    pub touched: Instant,
    /// The rule option names it was created with.
    pub rules: Vec<String>,
}

/// The body of `POST /api/games`, read.
pub struct NewGame {
    /// `cantwell`, `niels` or `akl`.
    pub variant: String,
    /// Rule option names.
    pub rules: Vec<String>,
    /// Board size (`WxH`).
    pub board: Option<String>,
    /// `human`, `random` or `engine` (with its level).
    pub opponent: Opponent,
    /// The person's colour against the random mover or the engine.
    pub color: Color,
    /// A game record to import instead of a new game.
    pub record: Option<String>,
}

fn variant_name(g: &VariantGame) -> &'static str {
    match g {
        VariantGame::Cantwell(_) => "cantwell",
        VariantGame::Niels(_) => "niels",
        VariantGame::Akl(_) => "akl",
    }
}

fn color_name(c: Color) -> &'static str {
    if c == Color::White { "white" } else { "black" }
}

impl Session {
    /// A new (or imported) game; `memory` is the game's share of the server's budget.
    pub fn create(
        req: &NewGame,
        seed: u64,
        tokens: [String; 2],
        memory: usize,
    ) -> Result<Session, ApiError> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let game = match (req.variant.as_str(), &req.record) {
            ("cantwell", None) => VariantGame::Cantwell(Box::new(cantwell::create(
                &req.rules,
                req.board.as_deref(),
            )?)),
            ("cantwell", Some(r)) => VariantGame::Cantwell(Box::new(cantwell::import(r)?)),
            ("niels", None) => {
                VariantGame::Niels(Box::new(niels::create(&req.rules, req.board.as_deref())?))
            }
            ("niels", Some(r)) => VariantGame::Niels(Box::new(niels::import(r)?)),
            ("akl", None) => VariantGame::Akl(Box::new(akl::create(
                &req.rules,
                req.board.as_deref(),
                &mut rng,
            )?)),
            ("akl", Some(r)) => VariantGame::Akl(Box::new(akl::import(r)?)),
            (other, _) => {
                return Err(ApiError::request(
                    format!(
                        "unknown variant {other:?}: expected \"cantwell\", \"niels\" or \"akl\""
                    ),
                    "variant",
                ));
            }
        };
        let mut session = Session {
            game,
            opponent: req.opponent,
            human: req.color,
            tokens,
            rng,
            last: Vec::new(),
            touched: Instant::now(),
            rules: req.rules.clone(),
        };
        if let VariantGame::Cantwell(g) = &mut session.game {
            g.set_state_cap((memory / BYTES_PER_BASIS_STATE).max(1));
            g.set_snapshot_budget(memory / 4);
        }
        if session.plies() > MAX_PLIES {
            return Err(ApiError::request(
                format!("a game has at most {MAX_PLIES} plies on this server"),
                "record",
            ));
        }
        // Against the random mover playing White, it moves first.
        session.random_replies()?;
        Ok(session)
    }

    /// The side whose token `token` is, if any.
    pub fn side_of(&self, token: &str) -> Option<Color> {
        let eq = |a: &str, b: &str| {
            // Compares every byte whatever the first difference (no early exit on a prefix).
            a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
        };
        if eq(&self.tokens[0], token) {
            Some(Color::White)
        } else if eq(&self.tokens[1], token) {
            Some(Color::Black)
        } else {
            None
        }
    }

    fn plies(&self) -> usize {
        match &self.game {
            VariantGame::Cantwell(g) => g.history().len(),
            VariantGame::Niels(g) => g.history().len(),
            VariantGame::Akl(g) => g.history().len(),
        }
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        match &self.game {
            VariantGame::Cantwell(g) => g.side_to_move(),
            VariantGame::Niels(g) => g.position().side_to_move(),
            VariantGame::Akl(g) => g.side_to_move(),
        }
    }

    fn ongoing(&self) -> bool {
        match &self.game {
            VariantGame::Cantwell(g) => g.status().is_ongoing(),
            VariantGame::Niels(g) => niels::ongoing(g),
            VariantGame::Akl(g) => g.status() == qchess_akl::GameStatus::Ongoing,
        }
    }

    /// The state as `viewer` may see it: for Akl built from that player's view alone. A
    /// Cantwell distribution that does not fit the memory budget is an error
    /// (`state_too_large`, 422); nothing changes.
    pub fn state(&self, id: &str, viewer: Color) -> Result<Value, ApiError> {
        let mut out = match &self.game {
            VariantGame::Cantwell(g) => cantwell::state(g)?,
            VariantGame::Niels(g) => niels::state(g),
            VariantGame::Akl(g) => akl::state(&g.view(viewer)),
        };
        out.insert("id".into(), json!(id));
        out.insert("variant".into(), json!(variant_name(&self.game)));
        out.insert("rules".into(), json!(self.rules));
        if !out.contains_key("board") {
            out.insert("board".into(), json!("8x8"));
        }
        out.insert("opponent".into(), json!(self.opponent.name()));
        if let Opponent::Engine(level) = self.opponent {
            out.insert("level".into(), json!(level));
        }
        out.insert("you".into(), json!(color_name(viewer)));
        out.insert("last".into(), Value::Array(self.last.clone()));
        out.insert("svg".into(), render::svg(&self.game, viewer));
        Ok(Value::Object(out))
    }

    /// Plays `text` for `side`; then the random mover answers. On error nothing changes.
    pub fn play(&mut self, side: Color, text: &str, rolls: Option<&[u8]>) -> Result<(), ApiError> {
        if !self.ongoing() {
            return Err(ApiError::rules("game_over", "the game is over"));
        }
        if self.side_to_move() != side {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "not_your_turn",
                format!("it is {}'s turn", color_name(self.side_to_move())),
            ));
        }
        if self.plies() >= MAX_PLIES {
            return Err(ApiError::rules(
                "game_over",
                format!("a game has at most {MAX_PLIES} plies on this server"),
            ));
        }
        if rolls.is_some() && !matches!(self.game, VariantGame::Niels(_)) {
            return Err(ApiError::request(
                "\"rolls\" (dice results) exist in Niel's Chess only",
                "rolls",
            ));
        }
        let report = match &mut self.game {
            VariantGame::Cantwell(g) => cantwell::apply(g, text, &mut self.rng)?,
            VariantGame::Niels(g) => niels::apply(g, text, rolls, &mut self.rng)?,
            VariantGame::Akl(g) => akl::apply(g, text, &mut self.rng)?,
        };
        self.last = vec![report];
        self.random_replies()?;
        Ok(())
    }

    /// Plays `text` for `side` ([`Session::play`]) and answers the state after it
    /// ([`Session::state`]). When that answer does not fit the memory budget (a Cantwell
    /// `state_too_large`), the plies this call played (the move and the replies) are taken
    /// back exactly, and the random stream and the last reports restored, so the error
    /// leaves the game as it was. Should a take-back itself fail, the error says so and the
    /// game keeps the plies not taken back.
    pub fn play_answered(
        &mut self,
        id: &str,
        side: Color,
        text: &str,
        rolls: Option<&[u8]>,
    ) -> Result<Value, ApiError> {
        let (plies, rng, last) = (self.plies(), self.rng.clone(), self.last.clone());
        self.play(side, text, rolls)?;
        let err = match self.state(id, side) {
            Ok(state) => return Ok(state),
            Err(e) => e,
        };
        while self.plies() > plies {
            let taken = match &mut self.game {
                VariantGame::Cantwell(g) => cantwell::undo(g),
                VariantGame::Niels(g) => niels::undo(g),
                VariantGame::Akl(_) => {
                    Err(ApiError::rules("undo", "Akl games cannot be taken back"))
                }
            };
            if let Err(u) = taken {
                return Err(ApiError {
                    message: format!(
                        "{}; taking the move back failed ({}): the game keeps it",
                        err.message, u.message
                    ),
                    ..err
                });
            }
        }
        self.rng = rng;
        self.last = last;
        Err(err)
    }

    /// The random mover's (or the engine's) moves while it is its turn.
    fn random_replies(&mut self) -> Result<(), ApiError> {
        if !self.opponent.is_computer() {
            return Ok(());
        }
        while self.ongoing() && self.side_to_move() != self.human && self.plies() < MAX_PLIES {
            let reply = match (self.opponent, &mut self.game) {
                (Opponent::Engine(level), game) => {
                    // Seeded from the game's own stream: a game replays from its seed.
                    let mut engine = qchess_engine::Engine::new(qchess_engine::EngineOptions {
                        level,
                        seed: self.rng.random::<u64>(),
                        ..qchess_engine::EngineOptions::default()
                    });
                    match game {
                        VariantGame::Cantwell(g) => cantwell::engine(g, &mut engine, &mut self.rng),
                        VariantGame::Niels(g) => niels::engine(g, &mut engine, &mut self.rng),
                        VariantGame::Akl(g) => akl::engine(g, &mut engine, &mut self.rng),
                    }
                }
                (_, VariantGame::Cantwell(g)) => cantwell::random(g, &mut self.rng),
                (_, VariantGame::Niels(g)) => niels::random(g, &mut self.rng),
                (_, VariantGame::Akl(g)) => akl::random(g, &mut self.rng),
            };
            match reply {
                Ok(Some(r)) => self.last.push(r),
                Ok(None) => break,
                Err(e) => {
                    // The computer's move was refused (a state over the memory cap): the game
                    // stays as it is and the error is reported with the player's move.
                    self.last.push(e.to_json());
                    break;
                }
            }
        }
        Ok(())
    }

    /// Takes back the last move (against the random mover or the engine, its reply too).
    pub fn undo(&mut self) -> Result<(), ApiError> {
        let plies = if self.opponent.is_computer() && self.side_to_move() == self.human {
            2
        } else {
            1
        };
        for i in 0..plies {
            let result = match &mut self.game {
                VariantGame::Cantwell(g) => cantwell::undo(g),
                VariantGame::Niels(g) => niels::undo(g),
                VariantGame::Akl(_) => Err(ApiError::rules(
                    "undo",
                    "Akl games cannot be taken back: a player could touch again and draw a new collapse",
                )),
            };
            match result {
                Ok(()) => {}
                // The random mover's reply was taken back but the player's move was the first.
                Err(_) if i > 0 => break,
                Err(e) => return Err(e),
            }
        }
        self.last.clear();
        Ok(())
    }

    /// The legal moves for `viewer` (none when it is not their turn); a Cantwell list that
    /// does not fit the memory budget is an error (`state_too_large`).
    pub fn legal(&self, id: &str, viewer: Color) -> Result<Value, ApiError> {
        let mut out = Map::new();
        let mine = self.side_to_move() == viewer;
        let moves = match &self.game {
            VariantGame::Cantwell(g) if mine => cantwell::legal(g)?,
            VariantGame::Niels(g) if mine => niels::legal(g),
            VariantGame::Akl(g) => {
                let (moves, touch) = akl::legal(g, viewer);
                out.insert("touchable".into(), json!(touch));
                moves
            }
            _ => Vec::new(),
        };
        out.insert("id".into(), json!(id));
        out.insert(
            "side_to_move".into(),
            json!(self.side_to_move().fen_char().to_string()),
        );
        out.insert("legal_moves".into(), json!(moves));
        Ok(Value::Object(out))
    }

    /// The game record as it may be published; a Cantwell start position that does not fit
    /// the memory budget is an error (`state_too_large`).
    pub fn record(&self, id: &str) -> Result<Value, ApiError> {
        let (text, complete) = match &self.game {
            VariantGame::Cantwell(g) => (cantwell::record(g)?, true),
            VariantGame::Niels(g) => (niels::record(g), true),
            VariantGame::Akl(g) => akl::record(g),
        };
        Ok(
            json!({"id": id, "variant": variant_name(&self.game), "record": text, "complete": complete}),
        )
    }

    /// Bell measures of two squares (Cantwell).
    pub fn bell(&self, a: Square, b: Square) -> Result<Value, ApiError> {
        match &self.game {
            VariantGame::Cantwell(g) => Ok(cantwell::bell(g, a, b)),
            _ => Err(ApiError::request(
                "Bell measures exist for Cantwell games only",
                "variant",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cantwell(s: &mut Session) -> &mut qchess_cantwell::Game {
        match &mut s.game {
            VariantGame::Cantwell(g) => g,
            _ => panic!("not a Cantwell game"),
        }
    }

    /// A move whose state answer does not fit the memory budget: the move itself fits (a
    /// copy of the game plays it under the same budget), the answer is `state_too_large`
    /// (422), and the move is taken back: the same position, history, random stream and
    /// last reports. With room the same move answers the state after it.
    #[test]
    fn a_move_whose_state_answer_does_not_fit_is_taken_back() {
        let req = NewGame {
            variant: "cantwell".into(),
            rules: Vec::new(),
            board: None,
            opponent: Opponent::Human,
            color: Color::White,
            record: None,
        };
        let mut s = Session::create(&req, 7, ["w".into(), "b".into()], 1 << 30).unwrap();
        for (side, mv) in [
            (Color::White, "g1^f3h3"),
            (Color::Black, "b8^a6c6"),
            (Color::White, "b1^a3c3"),
        ] {
            s.play_answered("id", side, mv, None).unwrap();
        }
        let g = cantwell(&mut s);
        let budget = g.memory_budget();
        g.set_memory_budget(usize::MAX);
        let held = usize::MAX - g.state().memory_budget() + g.state().bytes();
        // The least room in which the move fits (on a copy): after it, the state answer
        // does not fit.
        let room = (0..4096)
            .step_by(8)
            .find(|&room| {
                let mut copy = g.clone();
                copy.set_memory_budget(held + room);
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                copy.apply("e7e5", &mut rng).is_ok()
                    && cantwell::state(&copy).is_err_and(|e| e.kind == "state_too_large")
            })
            .expect("a budget the move fits and its state answer does not");
        g.set_memory_budget(held + room);
        let (position, history) = (g.position(), g.history_notation());
        let last = s.last.clone();
        let next = s.rng.clone().random::<u64>();
        let err = s
            .play_answered("id", Color::Black, "e7e5", None)
            .unwrap_err();
        assert_eq!(err.kind, "state_too_large", "{err:?}");
        assert_eq!(err.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(err.message.contains("bytes"), "{}", err.message);
        assert_eq!(s.last, last);
        assert_eq!(s.rng.clone().random::<u64>(), next);
        let g = cantwell(&mut s);
        assert_eq!(g.position(), position);
        assert_eq!(g.history_notation(), history);
        g.set_memory_budget(budget);
        let state = s.play_answered("id", Color::Black, "e7e5", None).unwrap();
        let g = cantwell(&mut s);
        assert_eq!(
            g.history_notation().last().map(String::as_str),
            Some("e7e5")
        );
        assert_eq!(state["fen"], json!(g.fen()));
        assert_eq!(state["state_size"], json!(g.state_size()));
    }
}
