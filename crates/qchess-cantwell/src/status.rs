//! Game end (section 10 rules 10-11, rules-notes D14) and the optional end rules.

use qchess_board::Color;
use std::fmt;

/// Why a game ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EndReason {
    /// A king has probability 0 of being on the board (section 10, rules 10-11).
    KingGone,
    /// The 50-move counter ran out and every square was measured (D14 option).
    FiftyMoveMeasurement,
    /// A threefold repetition was claimed and every square was measured (D14 option).
    RepetitionMeasurement,
}

/// Where the game stands.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GameStatus {
    /// The game goes on.
    Ongoing,
    /// `winner` won.
    Won {
        /// The side that won.
        winner: Color,
        /// Why.
        reason: EndReason,
    },
    /// Drawn.
    Drawn {
        /// Why.
        reason: EndReason,
    },
}

impl GameStatus {
    /// Whether the game goes on.
    pub fn is_ongoing(&self) -> bool {
        matches!(self, GameStatus::Ongoing)
    }

    /// A short name: `ongoing`, `white_wins`, `black_wins` or `draw`.
    pub fn name(&self) -> &'static str {
        match self {
            GameStatus::Ongoing => "ongoing",
            GameStatus::Won {
                winner: Color::White,
                ..
            } => "white_wins",
            GameStatus::Won {
                winner: Color::Black,
                ..
            } => "black_wins",
            GameStatus::Drawn { .. } => "draw",
        }
    }

    /// The status given which kings still have a positive probability of being on the board:
    /// one missing king loses, both missing is a draw.
    pub fn from_kings(
        white_king: bool,
        black_king: bool,
        reason_if_both: Option<EndReason>,
    ) -> Self {
        match (white_king, black_king) {
            (true, true) => match reason_if_both {
                None => GameStatus::Ongoing,
                Some(reason) => GameStatus::Drawn { reason },
            },
            (true, false) => GameStatus::Won {
                winner: Color::White,
                reason: reason_if_both.unwrap_or(EndReason::KingGone),
            },
            (false, true) => GameStatus::Won {
                winner: Color::Black,
                reason: reason_if_both.unwrap_or(EndReason::KingGone),
            },
            (false, false) => GameStatus::Drawn {
                reason: reason_if_both.unwrap_or(EndReason::KingGone),
            },
        }
    }
}

impl fmt::Display for GameStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = |r: &EndReason| match r {
            EndReason::KingGone => "a king has probability 0",
            EndReason::FiftyMoveMeasurement => "50-move counter, every square measured",
            EndReason::RepetitionMeasurement => {
                "threefold repetition claimed, every square measured"
            }
        };
        match self {
            GameStatus::Ongoing => f.write_str("ongoing"),
            GameStatus::Won { winner, reason } => write!(
                f,
                "{} wins: {}",
                if *winner == Color::White {
                    "white"
                } else {
                    "black"
                },
                why(reason)
            ),
            GameStatus::Drawn { reason } => write!(f, "draw: {}", why(reason)),
        }
    }
}

/// Optional end rules of the current official rules (rules-notes D14). Both are off by
/// default: the paper's section 10 has neither.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct RuleOptions {
    /// After 100 plies (50 moves each) in which the summed square probabilities never moved by
    /// 1 or more from their value at the last reset, every square is measured and the game
    /// ends: a side without its king loses, otherwise it is a draw.
    pub fifty_move_measurement: bool,
    /// A player may claim a threefold repetition of the position (letters, flags and state);
    /// every square is then measured and the game ends as for the 50-move rule.
    pub repetition_claim_measurement: bool,
}
