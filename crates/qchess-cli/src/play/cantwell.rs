//! `qchess play --variant cantwell`. Owned by the qchess-cantwell work.
//!
//! The board shows each square's piece letter and its occupancy probability in percent.
//! Commands: a move in QCAN (`e2e4`, `b1^a3c3`, `a3c3^b5`, `a7a8Q`), `moves` (legal moves),
//! `undo`, `save FILE`, `load FILE`, `history`, `board`, `claim` (threefold repetition, with
//! `--rules repetition-claim`), `help`, `quit`. Rule options (`--rules`):
//! `fifty-move-measurement`, `repetition-claim`.

use super::{Opponent, PlayArgs};
use crate::error::CliError;
use qchess_board::{Color, Square};
use qchess_cantwell::{Game, Position, RuleOptions};
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
    let saved: SavedGame = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a saved game: {e}", path.display()))?;
    let options = RuleOptions {
        fifty_move_measurement: saved.fifty_move_measurement,
        repetition_claim_measurement: saved.repetition_claim_measurement,
    };
    Game::replay(&saved.start, options, &saved.moves)
        .map_err(|e| format!("cannot replay {}: {e}", path.display()))
}

fn save_record(game: &Game, path: &std::path::Path) -> Result<(), String> {
    let saved = SavedGame {
        start: game.start_position(),
        moves: game.history_notation(),
        fifty_move_measurement: game.options().fifty_move_measurement,
        repetition_claim_measurement: game.options().repetition_claim_measurement,
    };
    let text = serde_json::to_string_pretty(&saved).expect("a saved game serialises");
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The board: each square as its letter and occupancy percentage, rank 8 on top.
pub fn render(game: &Game) -> String {
    let probs = game.probabilities();
    let mut s = String::new();
    for rank in (0..8u8).rev() {
        s.push_str(&format!("{} ", rank + 1));
        for file in 0..8u8 {
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
    s.push_str("    a    b    c    d    e    f    g    h\n");
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

const HELP: &str = "commands: <move> (e2e4, b1^a3c3, a3c3^b5, a7a8Q, optional .m0/.m1), moves, undo, \
save FILE, load FILE, history, board, claim, help, quit";

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
    let human = match args.color.as_str() {
        "w" | "white" => Color::White,
        "b" | "black" => Color::Black,
        other => {
            return Err(CliError::usage(format!(
                "--color must be w or b, not {other:?}"
            )));
        }
    };
    let mut game = match &args.load {
        Some(path) => load_record(path).map_err(CliError::usage)?,
        None => Game::new().with_options(options),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let random = args.opponent.is_computer();
    writeln!(output, "Cantwell quantum chess. {HELP}")?;
    loop {
        if random && game.status().is_ongoing() && game.side_to_move() != human {
            let played = match args.opponent {
                Opponent::Engine(level) => {
                    match super::engine_of(level, args.seed).search(&game, &super::engine_limits())
                    {
                        Ok(r) => game.apply(&r.best, &mut rng).map(Some),
                        Err(_) => Ok(None),
                    }
                }
                _ => game.play_random_move(&mut rng),
            };
            match played {
                Ok(Some(rec)) if matches!(args.opponent, Opponent::Engine(_)) => {
                    writeln!(output, "engine plays {}", rec.notation)?
                }
                Ok(Some(rec)) => writeln!(output, "random mover plays {}", rec.notation)?,
                Ok(None) => {
                    writeln!(output, "the random mover has no legal move")?;
                    break;
                }
                Err(e) => return Err(CliError::failure(format!("random mover: {e}"))),
            }
        }
        write!(output, "{}", render(&game))?;
        if !game.status().is_ongoing() {
            writeln!(output, "game over: {}", game.status())?;
            break;
        }
        write!(output, "> ")?;
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim();
        let (cmd, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match cmd {
            "" => {}
            "quit" | "exit" => break,
            "help" => writeln!(output, "{HELP}")?,
            "board" => {}
            "moves" => writeln!(output, "{}", game.legal_moves().join(" "))?,
            "history" => writeln!(output, "{}", game.history_notation().join(" "))?,
            "undo" => {
                // Against the random mover, take back its reply as well.
                let plies = if random && game.history().len() >= 2 {
                    2
                } else {
                    1
                };
                for _ in 0..plies {
                    if let Err(e) = game.undo() {
                        writeln!(output, "{e}")?;
                        break;
                    }
                }
            }
            "save" => match save_record(&game, std::path::Path::new(rest.trim())) {
                Ok(()) => writeln!(output, "saved to {}", rest.trim())?,
                Err(e) => writeln!(output, "{e}")?,
            },
            "load" => match load_record(std::path::Path::new(rest.trim())) {
                Ok(g) => {
                    game = g;
                    writeln!(output, "loaded {}", rest.trim())?;
                }
                Err(e) => writeln!(output, "{e}")?,
            },
            "claim" => match game.claim_repetition(&mut rng) {
                Ok(status) => writeln!(output, "claim accepted: {status}")?,
                Err(e) => writeln!(output, "{e}")?,
            },
            _ => match game.apply(line, &mut rng) {
                Ok(rec) => writeln!(output, "played {}", rec.notation)?,
                Err(e) => writeln!(output, "{e}")?,
            },
        }
    }
    output.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::Variant;

    fn args(opponent: Opponent, color: &str) -> PlayArgs {
        PlayArgs {
            variant: Variant::Cantwell,
            rules: Vec::new(),
            board: None,
            opponent,
            color: color.into(),
            seed: 5,
            load: None,
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
}
