//! The one command vocabulary of `qchess play`, shared by every rule system.
//!
//! A variant module implements [`Session`] (its board, its moves, its own commands and its
//! help); [`run`] owns the prompt loop and the commands every variant understands: `help
//! [topic]`, `moves [square]`, `undo`, `redo`, `history`, `board`, `save FILE`, `load FILE`,
//! `flip`, `quit`. A plain move may be typed `e2e4`, `e2 e4` or `e2-e4`, a promotion `e7e8q`
//! or `e7e8=Q`; [`plain_move`] reads them and the variant prints its canonical form. A word
//! that is neither a command nor move-shaped is answered `unknown command "hlep"; type help`
//! with a did-you-mean.

use crate::error::CliError;
use qchess_board::{PieceKind, Square};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, Write};

/// The commands every variant understands, with one line of meaning each (shown by `help`).
pub const COMMON_COMMANDS: [(&str, &str); 10] = [
    (
        "help [topic]",
        "this help, or the rules of one topic (help topics lists them)",
    ),
    (
        "moves [square]",
        "the legal moves of the side to move, or of the piece on one square",
    ),
    (
        "undo",
        "take back the last move (against a computer mover, its reply too)",
    ),
    (
        "redo",
        "play again the move taken back last, with the same outcome",
    ),
    ("history", "the moves so far, in the variant's notation"),
    ("board", "show the board again"),
    ("save FILE", "write the game record to FILE"),
    ("load FILE", "replace the game by the record in FILE"),
    ("flip", "turn the board around (Black at the bottom)"),
    ("quit", "leave (exit also works)"),
];

/// The words of [`COMMON_COMMANDS`].
const COMMON_WORDS: [&str; 11] = [
    "help", "moves", "undo", "redo", "history", "board", "save", "load", "flip", "quit", "exit",
];

/// Input and output of a session, and the random source of its outcomes.
pub struct Io<'a> {
    /// Where commands come from (the terminal, or a script in tests).
    pub input: &'a mut dyn BufRead,
    /// Where answers go.
    pub output: &'a mut dyn Write,
    /// Every random outcome (measurements, dice, collapses, the random mover).
    pub rng: &'a mut ChaCha8Rng,
}

impl Io<'_> {
    /// Reads one trimmed line; `None` at the end of the input.
    pub fn read_line(&mut self) -> std::io::Result<Option<String>> {
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        Ok(Some(line.trim().to_string()))
    }
}

/// What a variant's `play` did with a line.
pub enum Played {
    /// The line was played; the text says what happened.
    Done(String),
    /// The input ended in the middle of the move (e.g. an Akl touch waiting for its target).
    EndOfInput,
}

/// One rule system at the prompt of `qchess play`.
pub trait Session {
    /// The banner printed once at the start.
    fn banner(&self) -> String;
    /// The board as the person to move may see it, Black at the bottom when `flipped`, with
    /// one status line under it.
    fn board(&self, flipped: bool) -> String;
    /// `Some(text)` once the game is over: the result, and what to show at the end.
    fn game_over(&self) -> Option<String>;
    /// The prompt, e.g. `White to move> `.
    fn prompt(&self) -> String;
    /// Whether the built-in mover plays the side to move now.
    fn computer_to_move(&self) -> bool;
    /// Lets the built-in mover play one turn; the text says what it did.
    fn computer_move(&mut self, io: &mut Io<'_>) -> Result<String, CliError>;
    /// The legal moves (of the piece on `square`, when given), in the notation `play` takes.
    fn moves(&self, square: Option<Square>) -> Result<String, String>;
    /// A plain move or promotion typed in any of the shared forms, in this variant's notation.
    fn canonical(&self, from: Square, to: Square, promotion: Option<PieceKind>) -> String;
    /// Whether `word` is shaped like a move of this variant (else it is an unknown command).
    fn looks_like_move(&self, word: &str) -> bool {
        starts_with_square(word)
    }
    /// Plays one move written in the variant's notation.
    fn play(&mut self, text: &str, io: &mut Io<'_>) -> Result<Played, String>;
    /// Takes back one turn; the text names it. Against the built-in mover the session takes
    /// back two.
    fn undo(&mut self) -> Result<String, String>;
    /// Plays again the turn taken back last, with its recorded outcome.
    fn redo(&mut self) -> Result<String, String>;
    /// Forgets the turns that `redo` could play again (after a new move).
    fn clear_redo(&mut self);
    /// The moves so far.
    fn history(&self) -> String;
    /// The game record, as `save` writes it and `load` reads it; an error (the text
    /// `save` answers, nothing written) when the record cannot be built, e.g. a Cantwell
    /// start position that does not fit the memory budget (`state too large`).
    fn save_text(&self) -> Result<String, String>;
    /// What `save` answers once the record is written to `path`.
    fn saved(&self, path: &str) -> String {
        format!("saved to {path}")
    }
    /// Replaces the game by the record `text`; on error the game is unchanged.
    fn load_text(&mut self, text: &str) -> Result<String, String>;
    /// The variant's own commands and one line of meaning each (`claim`, `touch`, ...).
    fn own_commands(&self) -> Vec<(&'static str, &'static str)>;
    /// Runs one of [`Session::own_commands`]; `None` if `word` is not one of them.
    fn own_command(&mut self, word: &str, rest: &str, io: &mut Io<'_>) -> Option<String>;
    /// The notation and board symbols, one example and one sentence each.
    fn help_notation(&self) -> String;
    /// The rule topics of `help <topic>`: name and text (quoting the rules).
    fn help_topics(&self) -> Vec<(&'static str, String)>;
    /// Whether the built-in mover plays one side (undo and redo then move two turns).
    fn against_computer(&self) -> bool;
}

pub use qchess_cli::plain_move::{plain_move, starts_with_square};

/// The closest command word to `word`, if it is within two edits.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance with adjacent transpositions counted as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The whole `help`: notation, the shared commands, the variant's own, and the topics.
fn help_text(session: &dyn Session) -> String {
    let mut s = session.help_notation();
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push_str("commands:\n");
    let own = session.own_commands();
    let width = COMMON_COMMANDS
        .iter()
        .chain(own.iter())
        .map(|(c, _)| c.len())
        .max()
        .unwrap_or(0);
    for (cmd, what) in COMMON_COMMANDS.iter().chain(own.iter()) {
        s.push_str(&format!("  {cmd:<width$}  {what}\n"));
    }
    let topics: Vec<&str> = session.help_topics().iter().map(|(t, _)| *t).collect();
    s.push_str(&format!(
        "rules: help <topic> for one of: {}\n",
        topics.join(", ")
    ));
    s
}

fn topic_help(session: &dyn Session, topic: &str) -> String {
    let topics = session.help_topics();
    let topic = topic.trim().to_ascii_lowercase();
    if topic == "topics" {
        let names: Vec<&str> = topics.iter().map(|(t, _)| *t).collect();
        return format!("topics: {}", names.join(", "));
    }
    if let Some((_, text)) = topics.iter().find(|(t, _)| *t == topic) {
        return text.clone();
    }
    let names: Vec<&str> = topics.iter().map(|(t, _)| *t).collect();
    let hint = did_you_mean(&topic, names.iter().copied())
        .map(|t| format!(" (did you mean {t:?}?)"))
        .unwrap_or_default();
    format!(
        "no help topic {topic:?}{hint}; topics: {}",
        names.join(", ")
    )
}

/// Runs the prompt loop of `session` until `quit`, the end of the input or the end of the
/// game.
pub fn run(session: &mut dyn Session, io: &mut Io<'_>) -> Result<(), CliError> {
    let mut flipped = false;
    writeln!(io.output, "{}", session.banner())?;
    writeln!(io.output, "type help for the notation and the commands")?;
    let mut show_board = true;
    loop {
        if session.game_over().is_none() && session.computer_to_move() {
            let text = session.computer_move(io)?;
            session.clear_redo();
            writeln!(io.output, "{text}")?;
            show_board = true;
            continue;
        }
        if show_board {
            write!(io.output, "\n{}", session.board(flipped))?;
        }
        show_board = false;
        if let Some(end) = session.game_over() {
            writeln!(io.output, "{end}")?;
            break;
        }
        write!(io.output, "{}", session.prompt())?;
        io.output.flush()?;
        let Some(line) = io.read_line()? else {
            writeln!(io.output)?;
            break;
        };
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
        let rest = rest.trim();
        let lower = word.to_ascii_lowercase();
        match lower.as_str() {
            "" => {}
            "quit" | "exit" => break,
            "help" | "?" => {
                if rest.is_empty() {
                    write!(io.output, "{}", help_text(session))?;
                } else {
                    writeln!(io.output, "{}", topic_help(session, rest))?;
                }
            }
            "board" => show_board = true,
            "flip" => {
                flipped = !flipped;
                show_board = true;
            }
            "moves" => {
                let square = if rest.is_empty() {
                    Ok(None)
                } else {
                    rest.parse::<Square>().map(Some).map_err(|e| e.to_string())
                };
                match square.and_then(|sq| session.moves(sq)) {
                    Ok(text) | Err(text) => writeln!(io.output, "{text}")?,
                }
            }
            "history" => writeln!(io.output, "{}", session.history())?,
            "undo" | "redo" => {
                let turns = if session.against_computer() { 2 } else { 1 };
                for _ in 0..turns {
                    let done = if lower == "undo" {
                        session.undo()
                    } else {
                        session.redo()
                    };
                    match done {
                        Ok(text) => writeln!(io.output, "{text}")?,
                        Err(text) => {
                            writeln!(io.output, "{text}")?;
                            break;
                        }
                    }
                }
                show_board = true;
            }
            "save" if !rest.is_empty() => match session.save_text() {
                Ok(text) => match std::fs::write(rest, text) {
                    Ok(()) => writeln!(io.output, "{}", session.saved(rest))?,
                    Err(e) => writeln!(io.output, "cannot write {rest}: {e}")?,
                },
                Err(text) => writeln!(io.output, "{text}")?,
            },
            "load" if !rest.is_empty() => {
                let answer = std::fs::read_to_string(rest)
                    .map_err(|e| format!("cannot read {rest}: {e}"))
                    .and_then(|text| session.load_text(&text));
                match answer {
                    Ok(text) => {
                        writeln!(io.output, "{text}")?;
                        show_board = true;
                    }
                    Err(text) => writeln!(io.output, "{text}")?,
                }
            }
            "save" | "load" => writeln!(io.output, "{lower} needs a file name: {lower} FILE")?,
            _ => {
                if let Some(text) = session.own_command(&lower, rest, io) {
                    if !text.is_empty() {
                        writeln!(io.output, "{text}")?;
                    }
                    show_board = true;
                    continue;
                }
                let text = match plain_move(&line) {
                    Some((from, to, promotion)) => session.canonical(from, to, promotion),
                    None if session.looks_like_move(word) => line.clone(),
                    None => {
                        let own = session.own_commands();
                        let words = COMMON_WORDS
                            .iter()
                            .copied()
                            .chain(own.iter().map(|(c, _)| c.split(' ').next().unwrap_or(c)));
                        let hint = did_you_mean(&lower, words)
                            .map(|c| format!(" (did you mean {c:?}?)"))
                            .unwrap_or_default();
                        writeln!(
                            io.output,
                            "unknown command {:?}; type help{hint}",
                            crate::error::quote_prefix(word)
                        )?;
                        continue;
                    }
                };
                match session.play(&text, io) {
                    Ok(Played::Done(text)) => {
                        session.clear_redo();
                        if !text.is_empty() {
                            writeln!(io.output, "{text}")?;
                        }
                        show_board = true;
                    }
                    Ok(Played::EndOfInput) => {
                        writeln!(io.output)?;
                        break;
                    }
                    Err(text) if text.is_empty() => {}
                    Err(text) => writeln!(io.output, "{text}")?,
                }
            }
        }
    }
    io.output.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_finds_near_words_only() {
        assert_eq!(did_you_mean("hlep", COMMON_WORDS), Some("help"));
        assert_eq!(did_you_mean("mvoes", COMMON_WORDS), Some("moves"));
        assert_eq!(did_you_mean("undi", COMMON_WORDS), Some("undo"));
        assert_eq!(did_you_mean("xylophone", COMMON_WORDS), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn square_shaped_words() {
        assert!(starts_with_square("e2e4"));
        assert!(starts_with_square("b1^a3c3"));
        assert!(!starts_with_square("help"));
        assert!(!starts_with_square("z9"));
    }
}
