//! A game: position, rule options, history with every roll, end rules and records.

use crate::error::NielsError;
use crate::legal::{
    CheckInfo, check_info, check_legal, has_legal_move, in_check, legal_captures, legal_moves,
    outcomes, outcomes_exact,
};
use crate::moves::Move;
use crate::position::Position;
use crate::record::GameRecord;
use crate::resolve::{MoveOutcome, resolve};
use crate::rules::Rules;
use qchess_board::Fraction;
use qchess_board::{Color, Geometry, PieceKind, Square};
use rand::Rng;
use std::collections::HashMap;
use std::fmt;

/// Why a game was drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// Neither side can checkmate (FIDE 5.2.2): only the kings are left.
    InsufficientMaterial,
    /// 100 plies without a pawn move or an attempted capture (FIDE 9.3).
    FiftyMoves,
    /// The same position for the third time (FIDE 9.2).
    Repetition,
}

/// The state of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// The side to move is to play.
    Ongoing,
    /// The side to move is checkmated (including the indefinite checkmates of section 5).
    Checkmate {
        /// The player who gave mate.
        winner: Color,
    },
    /// The game is drawn.
    Draw(DrawReason),
}

impl Status {
    /// The PGN result: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub fn result(&self) -> &'static str {
        match self {
            Status::Ongoing => "*",
            Status::Checkmate {
                winner: Color::White,
            } => "1-0",
            Status::Checkmate {
                winner: Color::Black,
            } => "0-1",
            Status::Draw(_) => "1/2-1/2",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Ongoing => f.write_str("ongoing"),
            Status::Checkmate { winner } => write!(f, "checkmate, {} wins", color_name(*winner)),
            Status::Draw(r) => write!(
                f,
                "draw by {}",
                match r {
                    DrawReason::Stalemate => "stalemate",
                    DrawReason::InsufficientMaterial => "insufficient material",
                    DrawReason::FiftyMoves => "the 50-move rule",
                    DrawReason::Repetition => "threefold repetition",
                }
            ),
        }
    }
}

/// `white` or `black`.
pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// One played move with the rolls that decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedMove {
    /// The move, in the engine's form.
    pub mv: Move,
    /// What happened, every roll included.
    pub outcome: MoveOutcome,
}

/// A game of Niel's Chess under some rule options.
///
/// ```
/// use qchess_niels::{Game, Rules, Status};
/// use qchess_board::Geometry;
/// use rand::SeedableRng;
/// let mut game = Game::new(Rules::default(), "5x6".parse().unwrap()).unwrap();
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
/// game.play_str("b1^a3c3:oo", &mut rng).unwrap();
/// assert_eq!(game.position().pairs().len(), 1);
/// assert_eq!(game.status(), Status::Ongoing);
/// let replayed = game.record().to_string().parse::<qchess_niels::GameRecord>().unwrap().replay().unwrap();
/// assert_eq!(replayed.position(), game.position());
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    start: Position,
    position: Position,
    history: Vec<PlayedMove>,
    seen: HashMap<String, u32>,
}

impl Game {
    /// A new game from the starting position of `geometry`.
    pub fn new(rules: Rules, geometry: Geometry) -> Result<Game, NielsError> {
        Ok(Game::from_position(rules, Position::startpos(geometry)?))
    }

    /// A game starting from `position`.
    pub fn from_position(mut rules: Rules, position: Position) -> Game {
        rules.normalize();
        let mut seen = HashMap::new();
        seen.insert(position.repetition_key(), 1);
        Game {
            rules,
            start: position.clone(),
            position,
            history: Vec::new(),
            seen,
        }
    }

    /// The rule options.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The starting position.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The moves played so far.
    pub fn history(&self) -> &[PlayedMove] {
        &self.history
    }

    /// Legal moves of the side to move (none once the game is over).
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.is_over_by_rule() {
            Vec::new()
        } else {
            legal_moves(&self.position, &self.rules)
        }
    }

    /// Whether the side to move has a legal move: `!self.legal_moves().is_empty()`, without
    /// listing them all (see [`has_legal_move`]; false once the game is over by rule).
    pub fn has_legal_move(&self) -> bool {
        !self.is_over_by_rule() && has_legal_move(&self.position, &self.rules)
    }

    /// The legal captures and attempted captures of the side to move: the moves of
    /// [`Game::legal_moves`] for which [`crate::is_capture`] holds, in the same order, without
    /// listing the others (see [`legal_captures`]; none once the game is over by rule).
    pub fn legal_captures(&self) -> Vec<Move> {
        if self.is_over_by_rule() {
            Vec::new()
        } else {
            legal_captures(&self.position, &self.rules)
        }
    }

    /// Whether the side to move is in check (8.7).
    pub fn in_check(&self) -> bool {
        in_check(&self.position, self.position.side_to_move(), &self.rules)
    }

    /// Checks a move without playing it; returns the engine's form of it.
    pub fn check_move(&self, mv: &Move) -> Result<Move, NielsError> {
        if self.is_over_by_rule() {
            return Err(NielsError::GameOver(self.status().to_string()));
        }
        // Only a refused move pays for the full move list (is it mate or stalemate?).
        check_legal(&self.position, mv, &self.rules).map_err(|e| {
            if !has_legal_move(&self.position, &self.rules) {
                NielsError::GameOver(self.status().to_string())
            } else {
                e
            }
        })
    }

    fn is_over_by_rule(&self) -> bool {
        self.draw_by_rule().is_some()
    }

    fn draw_by_rule(&self) -> Option<DrawReason> {
        if self.position.must_move().is_some() {
            return None;
        }
        if insufficient_material(&self.position) {
            Some(DrawReason::InsufficientMaterial)
        } else if self
            .seen
            .get(&self.position.repetition_key())
            .copied()
            .unwrap_or(0)
            >= 3
        {
            Some(DrawReason::Repetition)
        } else if self.position.halfmove_clock() >= 100 {
            Some(DrawReason::FiftyMoves)
        } else {
            None
        }
    }

    /// The game's state: checkmate and stalemate first, then the draw rules.
    pub fn status(&self) -> Status {
        let side = self.position.side_to_move();
        if !has_legal_move(&self.position, &self.rules) {
            return if in_check(&self.position, side, &self.rules) {
                Status::Checkmate {
                    winner: side.opposite(),
                }
            } else {
                Status::Draw(DrawReason::Stalemate)
            };
        }
        match self.draw_by_rule() {
            Some(r) => Status::Draw(r),
            None => Status::Ongoing,
        }
    }

    /// Plays `mv`, rolling dice with `rng`. On error nothing changes.
    pub fn play<R: Rng + ?Sized>(
        &mut self,
        mv: &Move,
        rng: &mut R,
    ) -> Result<MoveOutcome, NielsError> {
        let mv = self.check_move(mv)?;
        let mut dice = |_: Color| Some(rng.random_range(1..=6u8));
        let (p, outcome) = resolve(&self.position, &mv, &self.rules, &mut dice)
            .map_err(|_| NielsError::Rolls("internal: dice ran out".into()))?;
        self.commit(mv, p, outcome.clone());
        Ok(outcome)
    }

    /// Plays `mv` with the given dice results, used in order (puzzles, tests, replays). Too
    /// few or too many rolls, or a value outside 1..=6, is an error and changes nothing.
    pub fn play_with_rolls(&mut self, mv: &Move, rolls: &[u8]) -> Result<MoveOutcome, NielsError> {
        let mv = self.check_move(mv)?;
        if let Some(bad) = rolls.iter().find(|r| !(1..=6).contains(*r)) {
            return Err(NielsError::Rolls(format!(
                "{bad} is not a dice result 1..6"
            )));
        }
        let mut i = 0;
        let mut dice = |_: Color| {
            let r = rolls.get(i).copied();
            i += 1;
            r
        };
        let result = resolve(&self.position, &mv, &self.rules, &mut dice);
        let (p, outcome) = result.map_err(|_| {
            NielsError::Rolls(format!(
                "{mv} needs more than the {} roll(s) given",
                rolls.len()
            ))
        })?;
        if outcome.rolls.len() != rolls.len() {
            return Err(NielsError::Rolls(format!(
                "{mv} used {} roll(s) but {} were given",
                outcome.rolls.len(),
                rolls.len()
            )));
        }
        self.commit(mv, p, outcome.clone());
        Ok(outcome)
    }

    /// Plays `mv` asking `dice` for each roll (given the player who rolls); `None` or a value
    /// outside 1..=6 is an error and changes nothing. Rolls already taken from `dice` by a
    /// failed call are not given back.
    pub fn play_with_dice(
        &mut self,
        mv: &Move,
        dice: &mut dyn FnMut(Color) -> Option<u8>,
    ) -> Result<MoveOutcome, NielsError> {
        let mv = self.check_move(mv)?;
        let mut bad = None;
        let mut checked = |c: Color| match dice(c) {
            Some(r) if (1..=6).contains(&r) => Some(r),
            other => {
                bad = Some(other);
                None
            }
        };
        let result = resolve(&self.position, &mv, &self.rules, &mut checked);
        let (p, outcome) = result.map_err(|_| match bad {
            Some(Some(v)) => NielsError::Rolls(format!("{v} is not a dice result 1..6")),
            _ => NielsError::Rolls(format!("{mv} needs a roll that was not given")),
        })?;
        self.commit(mv, p, outcome.clone());
        Ok(outcome)
    }

    /// Parses and plays a move.
    pub fn play_str<R: Rng + ?Sized>(
        &mut self,
        text: &str,
        rng: &mut R,
    ) -> Result<MoveOutcome, NielsError> {
        let mv: Move = text.trim().parse()?;
        self.play(&mv, rng)
    }

    fn commit(&mut self, mv: Move, p: Position, outcome: MoveOutcome) {
        self.position = p;
        if self.position.must_move().is_none() {
            *self.seen.entry(self.position.repetition_key()).or_insert(0) += 1;
        }
        self.history.push(PlayedMove { mv, outcome });
    }

    /// Takes back the last move (replaying the others with their recorded rolls); returns it,
    /// or `None` at the start.
    pub fn undo(&mut self) -> Option<PlayedMove> {
        let last = self.history.last()?.clone();
        let mut record = self.record();
        record.moves.pop();
        let mut replayed = Game::from_position(self.rules, self.start.clone());
        for (mv, rolls) in &record.moves {
            // Every recorded move was legal with exactly these rolls.
            replayed.play_with_rolls(mv, rolls).ok()?;
        }
        *self = replayed;
        Some(last)
    }

    /// Every outcome `mv` could have from here, with its probability.
    pub fn outcomes(&self, mv: &Move) -> Result<Vec<(Position, f64, MoveOutcome)>, NielsError> {
        let mv = self.check_move(mv)?;
        Ok(outcomes(&self.position, &mv, &self.rules))
    }

    /// [`Game::outcomes`] with each probability exact.
    pub fn outcomes_exact(
        &self,
        mv: &Move,
    ) -> Result<Vec<(Position, Fraction, MoveOutcome)>, NielsError> {
        let mv = self.check_move(mv)?;
        Ok(outcomes_exact(&self.position, &mv, &self.rules))
    }

    /// The check and mate status of `color` (see [`check_info`]).
    pub fn check_info(&self, color: Color) -> CheckInfo {
        check_info(&self.position, color, &self.rules)
    }

    /// The game record: rules, start and every move with its rolls.
    pub fn record(&self) -> GameRecord {
        GameRecord {
            rules: self.rules,
            start: self.start.to_string(),
            geometry: self.start.geometry(),
            moves: self
                .history
                .iter()
                .map(|h| (h.mv, h.outcome.rolls.iter().map(|r| r.value).collect()))
                .collect(),
        }
    }
}

/// FIDE 5.2.2, read for Niel's Chess: only the two kings are left (conventional or
/// indefinite). A lone knight or bishop is not dead material here: its two halves can check
/// and guard at once (docs/niels.md).
fn insufficient_material(pos: &Position) -> bool {
    Square::ALL.iter().all(|sq| {
        pos.piece_at(*sq)
            .is_none_or(|pc| pc.kind == PieceKind::King)
    })
}

// Replaying a record is the game's job (so `record` does not depend on `game`, which writes
// records).
impl GameRecord {
    /// Replays the record exactly (forced rolls); errors name the move that fails.
    pub fn replay(&self) -> Result<Game, NielsError> {
        let start = Position::from_fen(&self.start, self.geometry)?;
        let mut game = Game::from_position(self.rules, start);
        for (i, (mv, rolls)) in self.moves.iter().enumerate() {
            game.play_with_rolls(mv, rolls).map_err(|e| match e {
                NielsError::Illegal { mv, reason } => NielsError::Illegal {
                    mv,
                    reason: format!("move {}: {reason}", i + 1),
                },
                other => other,
            })?;
        }
        Ok(game)
    }
}
