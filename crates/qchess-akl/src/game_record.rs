//! A whole game as text: the start position and one turn entry per line, replayable exactly.

use crate::error::AklError;
use crate::game::{Game, Rules, Visibility};
use crate::notation::Style;
use crate::position::AklPosition;
use crate::record::TurnEntry;

/// A game record: start position, rule options and turns. Every random outcome (collapses of
/// touched and captured pieces) is written in the entries, so a record replays bit for bit.
///
/// Text form:
///
/// ```text
/// [Variant "akl"]
/// [Position "<AKL-FEN>"]        (or [Seed "N"]: the standard start drawn from seed N)
/// [Visibility "own-pairs"]      (optional; default "revealed")
/// 1. <P|f2> -> f3
/// 2. <P|e7> -> e5|psi>
/// ```
///
/// Lines may start with a ply number (`1.`), may end with a `(comment)`, and may use the
/// Unicode or the rules text's LaTeX form of the notation.
///
/// ```
/// use qchess_akl::GameRecord;
/// let text = "[Seed \"3\"]\n1. f2 -> f3\n2. e7 -> e5\n3. g2 -> g4\n4. <Q|d8> -> h4#\n";
/// let record = GameRecord::parse(text).unwrap();
/// let game = record.replay().unwrap();
/// assert_eq!(game.history().len(), 4);
/// let again = GameRecord::parse(&game.record().to_text(qchess_akl::Style::Ascii)).unwrap();
/// assert_eq!(again.replay().unwrap().position(), game.position());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// The position before the first entry.
    pub start: AklPosition,
    /// The rule options.
    pub rules: Rules,
    /// The turns, first to last.
    pub entries: Vec<TurnEntry>,
}

impl GameRecord {
    /// The record as text in `style`.
    pub fn to_text(&self, style: Style) -> String {
        let mut s = String::from("[Variant \"akl\"]\n");
        s.push_str(&format!("[Position \"{}\"]\n", self.start));
        if self.rules.visibility == Visibility::OwnPairs {
            s.push_str("[Visibility \"own-pairs\"]\n");
        }
        s.push_str(&self.entries_text(style));
        s
    }

    /// The numbered entries alone, without the start position: everything in them was
    /// revealed to both players, whereas the start position holds the secret secondary types.
    pub fn entries_text(&self, style: Style) -> String {
        let mut s = String::new();
        for (i, e) in self.entries.iter().enumerate() {
            s.push_str(&format!("{}. {}\n", i + 1, e.format(style)));
        }
        s
    }

    /// Parses the text form.
    pub fn parse(text: &str) -> Result<GameRecord, AklError> {
        let mut start = None;
        let mut rules = Rules::default();
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let bad = |message: String| AklError::Record {
                line: line_no,
                message,
            };
            let line = raw.replace("\\(", "").replace("\\)", "");
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                let (key, value) = parse_header(header).map_err(bad)?;
                match key.as_str() {
                    "Variant" if value == "akl" => {}
                    "Variant" => return Err(bad(format!("variant {value:?} is not \"akl\""))),
                    "Position" => {
                        if start.is_some() {
                            return Err(bad("a second start position".into()));
                        }
                        start = Some(AklPosition::parse(&value).map_err(|e| bad(e.to_string()))?);
                    }
                    "Seed" => {
                        if start.is_some() {
                            return Err(bad("a second start position".into()));
                        }
                        let seed = value
                            .parse()
                            .map_err(|_| bad(format!("seed must be a number, not {value:?}")))?;
                        start = Some(AklPosition::startpos_seeded(seed));
                    }
                    "Visibility" => {
                        rules.visibility = match value.as_str() {
                            "revealed" => Visibility::Revealed,
                            "own-pairs" => Visibility::OwnPairs,
                            other => {
                                return Err(bad(format!(
                                    "visibility {other:?}: expected \"revealed\" or \"own-pairs\""
                                )));
                            }
                        }
                    }
                    _ => {} // Other headers (Event, Date, ...) are kept out of the game.
                }
                continue;
            }
            let mut body = line.trim_start_matches(|c: char| c.is_ascii_digit());
            if body.len() < line.len() {
                body = body.trim_start_matches('.');
            }
            let body = match body.find('(') {
                Some(i) => &body[..i],
                None => body,
            };
            if body.trim().is_empty() {
                continue;
            }
            entries.push(body.parse::<TurnEntry>().map_err(|e| bad(e.to_string()))?);
        }
        let start = start.ok_or(AklError::Record {
            line: 0,
            message: "no start: add [Position \"...\"] or [Seed \"N\"]".into(),
        })?;
        Ok(GameRecord {
            start,
            rules,
            entries,
        })
    }

    /// Plays the record from its start, forcing every recorded outcome. Unrecorded collapses of
    /// touched pieces are inferred from their moves; any other unrecorded random outcome is an
    /// error (a record must replay without randomness).
    pub fn replay(&self) -> Result<Game, AklError> {
        let mut game = Game::with_rules(self.start.clone(), self.rules);
        for (i, entry) in self.entries.iter().enumerate() {
            game.apply_entry(entry, None)
                .map_err(|e| AklError::Replay {
                    ply: i + 1,
                    entry: entry.to_string(),
                    source: Box::new(e),
                })?;
        }
        Ok(game)
    }
}

fn parse_header(header: &str) -> Result<(String, String), String> {
    let inner = header.strip_suffix(']').ok_or("a header ends with ']'")?;
    let (key, rest) = inner.split_once(' ').ok_or("a header is [Key \"value\"]")?;
    let value = rest
        .trim()
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or("a header's value is in double quotes")?;
    Ok((key.to_string(), value.to_string()))
}
