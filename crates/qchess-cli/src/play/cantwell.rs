//! `qchess play --variant cantwell`: Cantwell quantum chess at the shared prompt
//! ([`super::shell`]).
//!
//! The board shows each square's piece letter and its occupancy probability in percent.
//! Moves in QCAN (`e2e4`, `b1^a3c3`, `a3c3^b5`, `a7a8Q`, optionally `.m0`/`.m1`); the shared
//! commands, and `claim` (threefold repetition, with `--rules repetition-claim`). Rule options
//! (`--rules`): `fifty-move-measurement`, `repetition-claim`.

use super::PlayArgs;
use super::shell::{self, Io, Played, Session};
use crate::error::CliError;
use qchess_board::{Color, PieceKind, Square};
use qchess_cantwell::{Game, GameError, Position, RuleOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// A saved game: the start position and the record that replays it exactly.
#[derive(Serialize, Deserialize)]
struct SavedGame {
    start: Position,
    moves: Vec<String>,
    #[serde(default)]
    fifty_move_measurement: bool,
    #[serde(default)]
    repetition_claim_measurement: bool,
}

fn options_of(args: &PlayArgs) -> Result<RuleOptions, CliError> {
    let mut options = RuleOptions::default();
    for r in &args.rules {
        match r.as_str() {
            "fifty-move-measurement" => options.fifty_move_measurement = true,
            "repetition-claim" => options.repetition_claim_measurement = true,
            other => {
                return Err(CliError::usage(format!(
                    "unknown cantwell rule option {other:?}: expected fifty-move-measurement or repetition-claim"
                )));
            }
        }
    }
    Ok(options)
}

fn load_record(path: &std::path::Path) -> Result<Game, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    game_of_record(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The board: each square as its letter and occupancy percentage, rank 8 on top (rank 1 on
/// top and file h on the left when `flipped`).
fn render_oriented(game: &Game, flipped: bool) -> String {
    let probs = game.probabilities();
    let ranks: Vec<u8> = if flipped {
        (0..8).collect()
    } else {
        (0..8).rev().collect()
    };
    let files: Vec<u8> = if flipped {
        (0..8).rev().collect()
    } else {
        (0..8).collect()
    };
    let mut s = String::new();
    for &rank in &ranks {
        s.push_str(&format!("{} ", rank + 1));
        for &file in &files {
            let sq = Square::new(file, rank);
            match game.piece_at(sq) {
                None => s.push_str("  .  "),
                Some(p) => {
                    let pct = (probs[sq.index() as usize] * 100.0).round() as u32;
                    s.push_str(&format!(" {}{:>3}", p.fen_char(), pct.max(1)));
                }
            }
        }
        s.push('\n');
    }
    s.push_str("  ");
    for &file in &files {
        s.push_str(&format!("  {}  ", (b'a' + file) as char));
    }
    s.push('\n');
    s.push_str(&format!(
        "{} to move, state size {}, {}\n",
        if game.side_to_move() == Color::White {
            "White"
        } else {
            "Black"
        },
        game.state_size(),
        game.status()
    ));
    s
}

const NOTATION: &str = "\
Cantwell quantum chess (Cantwell 2019): one quantum state; every square shows its piece and
the probability in percent that the piece is there (N 50 = a knight with 50 % probability).
moves (QCAN, section 4 of the paper):
  e2e4 (or e2 e4, e2-e4)  a move with one source and one target: jumps, slides, pawn moves,
                          castling (e1g1) and en passant
  b1^a3c3                 split: the piece on b1 goes into a superposition of a3 and c3
                          (the arm written first, a3, is the sqrt-iSwap arm; the second, c3,
                          the iSwap arm)
  a3c3^b5                 merge: the two halves on a3 and c3 come back together on b5
                          (the inverse of the split b5^c3a3)
  a7a8Q (or a7a8q, a7a8=Q) promotion to Q, R, B or N
  e4d5.m0 / e4d5.m1       a move that measures, with its outcome forced (as records replay):
                          m1 = the measured condition held (the capture happened, the path
                          was clear), m0 = it did not
board: a letter is a piece (upper case White), the number its occupancy in percent, . empty.";

const TOPICS: [(&str, &str); 7] = [
    (
        "split",
        "split (sections 6.3, 8.7, 8.9): `b1^a3c3` moves the piece on b1 into a superposition \
of a3 and c3. \"The Split Jump unitary is designed to allow a player to create superposition. \
This unitary will be based on the square root of an iSwap\": sqrt-iSwap(b1, a3), then \
iSwap(b1, c3). Both targets must be empty or hold the same piece (rules 7, 8); a split never \
captures. Non-pawns only.",
    ),
    (
        "merge",
        "merge (sections 6.5, 8.8, 8.10): `a3c3^b5` brings the halves on a3 and c3 together on \
b5. \"With the Merge Jump unitary a player may undo a Split Jump. We define the Merge Jump \
operator to be the hermitian conjugate of the Split Jump operator\": a3c3^b5 undoes b5^c3a3. \
Both sources must hold the same piece of the player; the target must be empty or hold that \
piece.",
    ),
    (
        "measurement",
        "measurement (sections 4, 7): \"at no point in the game do we allow a square to have a \
non-zero probability of being occupied by two or more pieces with different piece values\" \
(Definition 1). A move that could break this rule first measures (a capture whose attacker may \
be absent, a slide whose path may be blocked, a pawn move that could land on a piece): the \
game prints the move with .m1 when the measured condition held and .m0 when not, and the \
record keeps the outcome so that it replays exactly.",
    ),
    (
        "capture",
        "capture (sections 8.3, 8.6, 8.11.5): a move onto a square holding an opponent piece. \
When the attacker is itself in superposition, its presence is measured first (.m1: it is there \
and captures; .m0: it is not and nothing moves). The captured piece goes to a fresh ancilla \
qubit (eq. 18, 23). Kings are captured like any other piece: \"There is no concept of check \
or checkmate\" (section 10, rule 5).",
    ),
    (
        "end",
        "end of the game (section 10, rules 10-11): \"If a move results in a state where one \
player has zero probability of having a king on the board then the opposing player wins\"; \
both at zero is a draw. With --rules fifty-move-measurement the fifty-move rule measures the \
board; with --rules repetition-claim, `claim` measures it after a threefold repetition.",
    ),
    (
        "pawns",
        "pawns (section 8.11): pawns step, two-step, capture and take en passant like classical \
pawns, but never split or merge (section 10, rule 7). A step onto a square that may be \
occupied measures first. Promotion: a7a8Q.",
    ),
    (
        "castling",
        "castling (section 8.12): written with the king's move, e1g1 or e1c1; the rook's move \
follows from it. Squares between king and rook that may be occupied make the castle measure \
first.",
    ),
];

/// `qchess play --variant cantwell` at the shared prompt.
struct CantwellSession {
    game: Game,
    /// Undone turns, last undone last, with their recorded outcomes.
    redo: Vec<String>,
    seats: super::Seats,
}

impl Session for CantwellSession {
    fn banner(&self) -> String {
        "Cantwell quantum chess".into()
    }

    fn board(&self, flipped: bool) -> String {
        render_oriented(&self.game, flipped)
    }

    fn game_over(&self) -> Option<String> {
        let status = self.game.status();
        (!status.is_ongoing()).then(|| format!("game over: {status}"))
    }

    fn prompt(&self) -> String {
        "> ".into()
    }

    fn computer_to_move(&self) -> bool {
        self.seats.computer_moves(self.game.side_to_move())
    }

    fn computer_move(&mut self, io: &mut Io<'_>) -> Result<String, CliError> {
        if let Some((level, seed)) = self.seats.engine {
            let r = super::engine_of(level, seed)
                .search(&self.game, &super::engine_limits())
                .map_err(|e| CliError::failure(format!("engine: {e}")))?;
            let rec = self
                .game
                .apply(&r.best, io.rng)
                .map_err(|e| CliError::failure(format!("engine: {e}")))?;
            return Ok(format!("engine plays {}", rec.notation));
        }
        match self.game.play_random_move(io.rng) {
            Ok(Some(rec)) => Ok(format!("random mover plays {}", rec.notation)),
            Ok(None) => Err(CliError::failure("the random mover has no legal move")),
            Err(e) => Err(CliError::failure(format!("random mover: {e}"))),
        }
    }

    fn moves(&self, square: Option<Square>) -> Result<String, String> {
        // Within the memory budget: a copy the rules would simulate a candidate on that does
        // not fit is reported (state_too_large), never an allocation beyond the budget.
        let all = self.game.try_legal_moves().map_err(|e| e.to_string())?;
        let Some(sq) = square else {
            return Ok(all.join(" "));
        };
        let name = sq.to_string();
        let of_square: Vec<&String> = all
            .iter()
            .filter(|m| {
                m.starts_with(&name)
                    || (m.contains('^') && m.split('^').next().is_some_and(|s| s[2..] == name))
            })
            .collect();
        if of_square.is_empty() {
            return Err(format!("no legal move from {sq}"));
        }
        Ok(of_square
            .iter()
            .map(|m| m.as_str())
            .collect::<Vec<_>>()
            .join(" "))
    }

    fn canonical(&self, from: Square, to: Square, promotion: Option<PieceKind>) -> String {
        qchess_cli::plain_move::cantwell_text(from, to, promotion)
    }

    fn play(&mut self, text: &str, io: &mut Io<'_>) -> Result<Played, String> {
        match self.game.apply(text, io.rng) {
            Ok(rec) => Ok(Played::Done(format!("played {}", rec.notation))),
            Err(e) => Err(e.to_string()),
        }
    }

    fn undo(&mut self) -> Result<String, String> {
        let rec = self.game.undo().map_err(|e| e.to_string())?;
        self.redo.push(rec.notation.clone());
        Ok(format!("took back {}", rec.notation))
    }

    fn redo(&mut self) -> Result<String, String> {
        let Some(notation) = self.redo.pop() else {
            return Err("there is no move to redo".into());
        };
        let mut history = self.game.history_notation();
        history.push(notation.clone());
        // The start position is built within the memory budget: one that does not fit is
        // reported (state_too_large), the game and the turns to redo unchanged.
        let replayed = self
            .game
            .try_start_position()
            .and_then(|start| Game::replay(&start, self.game.options(), &history));
        match replayed {
            Ok(game) => {
                self.game = game;
                Ok(format!("played {notation} again"))
            }
            Err(e) => {
                self.redo.push(notation);
                Err(e.to_string())
            }
        }
    }

    fn clear_redo(&mut self) {
        self.redo.clear();
    }

    fn history(&self) -> String {
        self.game.history_notation().join(" ")
    }

    fn save_text(&self) -> Result<String, String> {
        record_text(&self.game).map_err(|e| e.to_string())
    }

    fn load_text(&mut self, text: &str) -> Result<String, String> {
        self.game = game_of_record(text)?;
        self.redo.clear();
        Ok(format!(
            "loaded a game of {} moves",
            self.game.history().len()
        ))
    }

    fn own_commands(&self) -> Vec<(&'static str, &'static str)> {
        vec![(
            "claim",
            "claim a draw by threefold repetition (measures the board; needs --rules repetition-claim)",
        )]
    }

    fn own_command(&mut self, word: &str, _rest: &str, io: &mut Io<'_>) -> Option<String> {
        (word == "claim").then(|| match self.game.claim_repetition(io.rng) {
            Ok(status) => format!("claim accepted: {status}"),
            Err(e) => e.to_string(),
        })
    }

    fn help_notation(&self) -> String {
        NOTATION.to_string()
    }

    fn help_topics(&self) -> Vec<(&'static str, String)> {
        TOPICS.iter().map(|(t, s)| (*t, s.to_string())).collect()
    }

    fn against_computer(&self) -> bool {
        self.seats.computer
    }
}

/// The record `save` writes and `load` and `--load` read. The start position is built
/// within the memory budget ([`Game::try_start_position`]): one that does not fit is
/// [`GameError::StateTooLarge`] (`state_too_large`, bytes asked and available).
fn record_text(game: &Game) -> Result<String, GameError> {
    let saved = SavedGame {
        start: game.try_start_position()?,
        moves: game.history_notation(),
        fifty_move_measurement: game.options().fifty_move_measurement,
        repetition_claim_measurement: game.options().repetition_claim_measurement,
    };
    Ok(serde_json::to_string_pretty(&saved).expect("a saved game serialises"))
}

fn game_of_record(text: &str) -> Result<Game, String> {
    let saved: SavedGame =
        serde_json::from_str(text).map_err(|e| format!("not a saved Cantwell game: {e}"))?;
    let options = RuleOptions {
        fifty_move_measurement: saved.fifty_move_measurement,
        repetition_claim_measurement: saved.repetition_claim_measurement,
    };
    Game::replay(&saved.start, options, &saved.moves).map_err(|e| format!("cannot replay: {e}"))
}

/// Plays a game on `input` / `output` (the terminal, or a script in tests).
pub fn play(
    args: &PlayArgs,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<(), CliError> {
    if let Some(board) = &args.board {
        let size = board.trim().to_ascii_lowercase();
        if size != "8x8" {
            return Err(CliError::usage(format!(
                "--board {board}: Cantwell quantum chess is played on the 8x8 board only"
            )));
        }
    }
    let options = options_of(args)?;
    let seats = super::Seats::of(args)?;
    let game = match &args.load {
        Some(path) => load_record(path).map_err(CliError::usage)?,
        None => Game::new().with_options(options),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut session = CantwellSession {
        game,
        redo: Vec::new(),
        seats,
    };
    let mut io = Io {
        input,
        output,
        rng: &mut rng,
    };
    shell::run(&mut session, &mut io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::{Opponent, Variant};

    fn args(opponent: Opponent, color: &str) -> PlayArgs {
        PlayArgs {
            variant: Variant::Cantwell,
            rules: Vec::new(),
            board: None,
            opponent,
            color: color.into(),
            seed: 5,
            load: None,
            memory: None,
        }
    }

    fn run(a: &PlayArgs, script: &str) -> String {
        let mut out = Vec::new();
        play(a, &mut script.as_bytes(), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn two_people_split_undo_and_errors() {
        let out = run(
            &args(Opponent::Human, "w"),
            "g1^f3h3\nmoves\ne2e5\nundo\nundo\ng1^f3h3\ne7e5\nhistory\nquit\n",
        );
        assert!(out.contains("played g1^f3h3"));
        assert!(out.contains(" N 50"), "occupancy shown in percent:\n{out}");
        assert!(out.contains("e7e5"), "legal moves listed");
        assert!(out.contains("illegal move e2e5"));
        assert!(out.contains("there is no move to undo"));
        assert!(out.contains("g1^f3h3 e7e5"));
    }

    #[test]
    fn against_the_random_mover_with_save_and_load() {
        let dir = std::env::temp_dir().join(format!("qchess-cantwell-play-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.json");
        let script = format!("b1^a3c3\ng1f3\nsave {}\nquit\n", file.display());
        let out = run(&args(Opponent::Random, "w"), &script);
        assert_eq!(out.matches("random mover plays").count(), 2, "{out}");
        let saved = load_record(&file).unwrap();
        assert_eq!(saved.history().len(), 4);
        // Loading replays the record exactly; play continues from it.
        let mut a = args(Opponent::Human, "w");
        a.load = Some(file.clone());
        let out = run(&a, "history\nquit\n");
        assert!(out.contains(&saved.history_notation().join(" ")));
        // The random mover plays first when the person takes Black.
        let out = run(&args(Opponent::Random, "b"), "quit\n");
        assert!(out.contains("random mover plays"));
        std::fs::remove_dir_all(dir).ok();
    }

    /// Close to the memory budget `save` and `redo` answer `state too large` (the start
    /// position they build does not fit), writing nothing and leaving the game and the turn
    /// to redo unchanged; with the budget back both do what they did before.
    #[test]
    fn save_and_redo_over_the_budget_are_state_too_large() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut game = Game::new();
        for mv in ["g1^f3h3", "b8^a6c6", "e2e4"] {
            game.apply(mv, &mut rng).unwrap();
        }
        let want_record = record_text(&game).unwrap();
        let mut session = CantwellSession {
            game,
            redo: Vec::new(),
            seats: crate::play::Seats::two_people(),
        };
        assert_eq!(session.undo().unwrap(), "took back e2e4");
        let before = session.game.position();
        let budget = session.game.memory_budget();
        session.game.set_memory_budget(usize::MAX);
        let held = usize::MAX - session.game.state().memory_budget();
        session
            .game
            .set_memory_budget(held + session.game.state().bytes() + 1);
        let refused = |text: String| {
            assert!(text.starts_with("state too large: "), "{text}");
            assert!(text.contains("bytes"), "{text}");
        };
        refused(session.save_text().unwrap_err());
        refused(session.redo().unwrap_err());
        assert_eq!(session.game.position(), before);
        assert_eq!(session.redo, vec!["e2e4".to_string()]);
        // The shell writes no file when the record does not fit.
        let dir =
            std::env::temp_dir().join(format!("qchess-cantwell-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("game.json");
        let script = format!("save {}\nquit\n", file.display());
        let mut out = Vec::new();
        let mut io = Io {
            input: &mut script.as_bytes(),
            output: &mut out,
            rng: &mut rng,
        };
        shell::run(&mut session, &mut io).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("state too large: "), "{out}");
        assert!(!file.exists());
        std::fs::remove_dir_all(dir).ok();
        // With the budget back: redo replays e2e4 and save writes the same record.
        session.game.set_memory_budget(budget);
        assert_eq!(session.redo().unwrap(), "played e2e4 again");
        assert_eq!(session.save_text().unwrap(), want_record);
    }
}
