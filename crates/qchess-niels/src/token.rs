//! A move with its dice attached, as one token: `b1a3[3,4]` (the engine protocol's and
//! `qchess eval`'s form of a move whose rolls are known).

use crate::error::NielsError;
use crate::game::Game;
use crate::moves::Move;
use crate::resolve::MoveOutcome;
use rand::Rng;

/// Parses a move token: the move's notation, optionally followed by its rolls in brackets
/// (`b1a3[3,4]`, `f5e6[3]`). Returns the move and the rolls when attached.
///
/// ```
/// use qchess_niels::{Move, parse_token};
/// let (mv, rolls) = parse_token("f5e6[3]").unwrap();
/// assert_eq!(mv, "f5e6".parse::<Move>().unwrap());
/// assert_eq!(rolls, Some(vec![3]));
/// assert_eq!(parse_token("e2e4").unwrap().1, None);
/// assert!(parse_token("e2e4[7]").is_err());
/// assert!(parse_token("e2e4[3").is_err());
/// ```
pub fn parse_token(text: &str) -> Result<(Move, Option<Vec<u8>>), NielsError> {
    let text = text.trim();
    let Some(open) = text.find('[') else {
        return Ok((text.parse()?, None));
    };
    let mv: Move = text[..open].parse()?;
    let inner = text[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| NielsError::Rolls(format!("{text}: the rolls need a closing ']'")))?;
    let mut rolls = Vec::new();
    for part in inner.split(',') {
        let v: u8 = part
            .trim()
            .parse()
            .ok()
            .filter(|v| (1..=6).contains(v))
            .ok_or_else(|| NielsError::Rolls(format!("{part:?} is not a dice result 1..6")))?;
        rolls.push(v);
    }
    Ok((mv, Some(rolls)))
}

/// The token of `mv` played with `rolls`: the notation, then `[r1,r2,..]` when dice were rolled.
///
/// ```
/// use qchess_niels::{Move, format_token};
/// let mv: Move = "b1a3".parse().unwrap();
/// assert_eq!(format_token(&mv, &[3, 4]), "b1a3[3,4]");
/// assert_eq!(format_token(&mv, &[]), "b1a3");
/// ```
pub fn format_token(mv: &Move, rolls: &[u8]) -> String {
    if rolls.is_empty() {
        mv.to_string()
    } else {
        let r: Vec<String> = rolls.iter().map(|r| r.to_string()).collect();
        format!("{mv}[{}]", r.join(","))
    }
}

impl Game {
    /// Plays a move token: with its rolls attached they are used exactly
    /// ([`Game::play_with_rolls`]), without them the dice are drawn from `rng`. On error
    /// nothing changes.
    pub fn play_token<R: Rng + ?Sized>(
        &mut self,
        text: &str,
        rng: &mut R,
    ) -> Result<MoveOutcome, NielsError> {
        match parse_token(text)? {
            (mv, Some(rolls)) => self.play_with_rolls(&mv, &rolls),
            (mv, None) => self.play(&mv, rng),
        }
    }
}
