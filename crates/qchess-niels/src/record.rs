//! Game records: text that replays a game exactly, rolls included.

use crate::error::NielsError;
use crate::moves::Move;
use crate::rules::Rules;
use qchess_board::Geometry;
use std::fmt;
use std::str::FromStr;

/// A game record: the rule options, the start position and every move with its rolls.
///
/// Text form, one item per line: `Rules: <list>` (may be empty), `Start: <position>`, then one
/// line per move: the move, then ` [3]` or ` [3,5]` when dice were rolled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// Rule options.
    pub rules: Rules,
    /// Board size.
    pub geometry: Geometry,
    /// Serialised start position.
    pub start: String,
    /// Moves and their rolls.
    pub moves: Vec<(Move, Vec<u8>)>,
}

impl fmt::Display for GameRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Rules: {}", self.rules)?;
        writeln!(f, "Board: {}", self.geometry)?;
        writeln!(f, "Start: {}", self.start)?;
        for (mv, rolls) in &self.moves {
            if rolls.is_empty() {
                writeln!(f, "{mv}")?;
            } else {
                let r: Vec<String> = rolls.iter().map(|r| r.to_string()).collect();
                writeln!(f, "{mv} [{}]", r.join(","))?;
            }
        }
        Ok(())
    }
}

impl FromStr for GameRecord {
    type Err = NielsError;

    fn from_str(text: &str) -> Result<GameRecord, NielsError> {
        let mut rules = None;
        let mut start = None;
        let mut geometry = Geometry::STANDARD;
        let mut moves = Vec::new();
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let at = offset;
            offset += line.len();
            let line = line.trim_end();
            if line.trim().is_empty() {
                continue;
            }
            if let Some(r) = line.strip_prefix("Rules:") {
                rules = Some(Rules::parse_list(r.trim())?);
            } else if let Some(b) = line.strip_prefix("Board:") {
                geometry = b
                    .trim()
                    .parse()
                    .map_err(|e| NielsError::parse(text, at + 6, format!("{e}")))?;
            } else if let Some(s) = line.strip_prefix("Start:") {
                start = Some(s.trim().to_string());
            } else {
                let (mv_text, rolls_text) = match line.find(" [") {
                    Some(i) => (&line[..i], Some((i + 2, &line[i + 2..]))),
                    None => (line, None),
                };
                let mv: Move = mv_text.parse().map_err(|e| match e {
                    NielsError::Parse { at: a, message, .. } => {
                        // `a` counts characters of the move text; `at` is a byte offset.
                        let byte = mv_text.char_indices().nth(a).map_or(mv_text.len(), |c| c.0);
                        NielsError::parse(text, at + byte, message)
                    }
                    other => other,
                })?;
                let mut rolls = Vec::new();
                if let Some((ri, r)) = rolls_text {
                    let inner = r
                        .strip_suffix(']')
                        .ok_or_else(|| NielsError::parse(text, at + line.len(), "expected ']'"))?;
                    for part in inner.split(',') {
                        let v: u8 = part
                            .trim()
                            .parse()
                            .ok()
                            .filter(|v| (1..=6).contains(v))
                            .ok_or_else(|| {
                                NielsError::parse(
                                    text,
                                    at + ri,
                                    format!("{part:?} is not a dice result 1..6"),
                                )
                            })?;
                        rolls.push(v);
                    }
                }
                moves.push((mv, rolls));
            }
        }
        let start = start.ok_or_else(|| NielsError::parse(text, 0, "missing the 'Start:' line"))?;
        Ok(GameRecord {
            rules: rules.unwrap_or_default(),
            geometry,
            start,
            moves,
        })
    }
}
