//! Indefinite pair instances (Article 6): two halves, a red and a blue mark, each mark's
//! facing, and the diagonal shared by an entangled group.

use crate::rules::Rules;
use qchess_board::{Piece, Square};
use std::fmt;

/// The colour of the mark on an indefinite half.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mark {
    /// The red mark.
    Red,
    /// The blue mark.
    Blue,
}

impl Mark {
    /// The other mark.
    pub const fn other(self) -> Mark {
        match self {
            Mark::Red => Mark::Blue,
            Mark::Blue => Mark::Red,
        }
    }

    /// `r` or `b`.
    pub const fn to_char(self) -> char {
        match self {
            Mark::Red => 'r',
            Mark::Blue => 'b',
        }
    }
}

/// Which side of its square a mark faces (Article 7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Facing {
    /// Towards the opponent (`o`).
    Opponent,
    /// Towards the player who owns the pair (`p`).
    Owner,
}

impl Facing {
    /// The other facing (a 180 degree rotation).
    pub const fn inverted(self) -> Facing {
        match self {
            Facing::Opponent => Facing::Owner,
            Facing::Owner => Facing::Opponent,
        }
    }

    /// `o` (opponent) or `p` (player).
    pub const fn to_char(self) -> char {
        match self {
            Facing::Opponent => 'o',
            Facing::Owner => 'p',
        }
    }

    /// Parses `o` or `p`.
    pub const fn from_char(c: char) -> Option<Facing> {
        match c {
            'o' => Some(Facing::Opponent),
            'p' => Some(Facing::Owner),
            _ => None,
        }
    }

    /// The sign this facing gives a half's amplitude: + towards the opponent, - towards the
    /// owner (docs/niels.md, "Amplitudes").
    pub const fn sign(self) -> f64 {
        match self {
            Facing::Opponent => 1.0,
            Facing::Owner => -1.0,
        }
    }
}

/// The facings of both marks of a pair: `oo`, `pp` (equal), `op`, `po` (unequal, or equal
/// with phase in the Hadamard Game). The first letter is the red mark's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Facings {
    /// Facing of the red mark.
    pub red: Facing,
    /// Facing of the blue mark.
    pub blue: Facing,
}

impl Facings {
    /// Both marks face the opponent.
    pub const EQUAL: Facings = Facings {
        red: Facing::Opponent,
        blue: Facing::Opponent,
    };
    /// Both marks face the owner.
    pub const EQUAL_OWNER: Facings = Facings {
        red: Facing::Owner,
        blue: Facing::Owner,
    };
    /// Red faces the opponent, blue the owner.
    pub const RED_AHEAD: Facings = Facings {
        red: Facing::Opponent,
        blue: Facing::Owner,
    };
    /// Red faces the owner, blue the opponent.
    pub const BLUE_AHEAD: Facings = Facings {
        red: Facing::Owner,
        blue: Facing::Opponent,
    };
    /// All four configurations, in notation order `oo`, `op`, `po`, `pp`.
    pub const ALL: [Facings; 4] = [
        Facings::EQUAL,
        Facings::RED_AHEAD,
        Facings::BLUE_AHEAD,
        Facings::EQUAL_OWNER,
    ];

    /// Whether both marks face the same way (equal superposition).
    pub const fn is_equal(self) -> bool {
        matches!(
            (self.red, self.blue),
            (Facing::Opponent, Facing::Opponent) | (Facing::Owner, Facing::Owner)
        )
    }

    /// The facing of `mark`.
    pub const fn of(self, mark: Mark) -> Facing {
        match mark {
            Mark::Red => self.red,
            Mark::Blue => self.blue,
        }
    }

    /// Both facings inverted (the flip move, 7.7).
    pub const fn flipped(self) -> Facings {
        Facings {
            red: self.red.inverted(),
            blue: self.blue.inverted(),
        }
    }

    /// Whether the rule options allow this configuration (Article 9: red faces the opponent).
    pub fn allowed(self, rules: &Rules) -> bool {
        !rules.simplified || self.red == Facing::Opponent
    }

    /// Parses two letters of `o`/`p`.
    pub fn parse(s: &str) -> Option<Facings> {
        let mut it = s.chars();
        let red = Facing::from_char(it.next()?)?;
        let blue = Facing::from_char(it.next()?)?;
        it.next().is_none().then_some(Facings { red, blue })
    }

    /// The mark a roll of `roll` (1..=6) collapses the pair to (Article 7.5; Appendix D for
    /// the Hadamard Game).
    pub fn collapse_mark(self, roll: u8, rules: &Rules) -> Mark {
        let even = roll % 2 == 0;
        if self.is_equal() {
            // Opponent-facing: even = red. Owner-facing: the words red and blue are swapped.
            let red_on_even = self.red == Facing::Opponent;
            if even == red_on_even {
                Mark::Red
            } else {
                Mark::Blue
            }
        } else {
            let ahead = if self.red == Facing::Opponent {
                Mark::Red
            } else {
                Mark::Blue
            };
            let toward_opponent = if rules.hadamard { even } else { roll <= 4 };
            if toward_opponent {
                ahead
            } else {
                ahead.other()
            }
        }
    }

    /// Probability that a dice collapse ends on `mark`.
    pub fn probability(self, mark: Mark, rules: &Rules) -> f64 {
        let n = (1..=6)
            .filter(|&r| self.collapse_mark(r, rules) == mark)
            .count();
        n as f64 / 6.0
    }
}

impl fmt::Display for Facings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.red.to_char(), self.blue.to_char())
    }
}

/// The diagonal on which the marks of an entangled group lie (Article 8.3). A pair whose
/// marks still lie on the vertical mid-line has no diagonal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Diagonal {
    /// The +45 degree diagonal (`+`).
    Plus,
    /// The -45 degree diagonal (`-`).
    Minus,
}

impl Diagonal {
    /// Both diagonals, in the order the engine picks a free one (-45 first, as in Fig. 8).
    pub const ALL: [Diagonal; 2] = [Diagonal::Minus, Diagonal::Plus];

    /// `+` or `-`.
    pub const fn to_char(self) -> char {
        match self {
            Diagonal::Plus => '+',
            Diagonal::Minus => '-',
        }
    }

    /// Parses `+` or `-`.
    pub const fn from_char(c: char) -> Option<Diagonal> {
        match c {
            '+' => Some(Diagonal::Plus),
            '-' => Some(Diagonal::Minus),
            _ => None,
        }
    }
}

/// Stable identity of a pair instance inside one game (never reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PairId(pub u32);

/// One indefinite pair instance: the conventional piece `piece` in superposition on the
/// squares of its red and blue halves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pair {
    /// Identity inside the game.
    pub id: PairId,
    /// The conventional piece this pair represents.
    pub piece: Piece,
    /// Square of the red half.
    pub red: Square,
    /// Square of the blue half.
    pub blue: Square,
    /// Facings of both marks.
    pub facings: Facings,
    /// The entangled group's diagonal, `None` while the marks lie on the vertical mid-line.
    pub diagonal: Option<Diagonal>,
    /// The mark fill pattern (Article 6.3), 1, 2, ...: distinguishes instances of the same
    /// piece and colour on the board.
    pub pattern: u8,
}

impl Pair {
    /// The square of the half with `mark`.
    pub const fn square(&self, mark: Mark) -> Square {
        match mark {
            Mark::Red => self.red,
            Mark::Blue => self.blue,
        }
    }

    /// The mark of the half on `sq`, if this pair has a half there.
    pub fn mark_on(&self, sq: Square) -> Option<Mark> {
        if self.red == sq {
            Some(Mark::Red)
        } else if self.blue == sq {
            Some(Mark::Blue)
        } else {
            None
        }
    }

    /// The square of the other half than the one on `sq`.
    pub fn partner_of(&self, sq: Square) -> Option<Square> {
        self.mark_on(sq).map(|m| self.square(m.other()))
    }

    /// Moves the half on `from` to `to`.
    pub(crate) fn relocate(&mut self, from: Square, to: Square) {
        if self.red == from {
            self.red = to;
        } else if self.blue == from {
            self.blue = to;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_probabilities_of_article_7_5() {
        let basic = Rules::default();
        assert_eq!(Facings::EQUAL.collapse_mark(3, &basic), Mark::Blue);
        assert_eq!(Facings::EQUAL.collapse_mark(4, &basic), Mark::Red);
        assert_eq!(Facings::EQUAL_OWNER.collapse_mark(4, &basic), Mark::Blue);
        assert_eq!(Facings::RED_AHEAD.probability(Mark::Red, &basic), 4.0 / 6.0);
        assert_eq!(
            Facings::BLUE_AHEAD.probability(Mark::Red, &basic),
            2.0 / 6.0
        );
        let had = Rules {
            hadamard: true,
            ..Rules::default()
        };
        assert_eq!(Facings::RED_AHEAD.probability(Mark::Red, &had), 0.5);
        assert_eq!(Facings::BLUE_AHEAD.collapse_mark(2, &had), Mark::Blue);
        for f in Facings::ALL {
            for rules in [basic, had] {
                let total = f.probability(Mark::Red, &rules) + f.probability(Mark::Blue, &rules);
                assert!((total - 1.0).abs() < 1e-12);
            }
        }
    }
}
