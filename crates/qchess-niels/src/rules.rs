//! Rule options: the variants of the papers, each a switch of one engine.

use crate::error::NielsError;
use std::fmt;

/// The rule options of a game. The default is the full game of Articles 1-8.
///
/// ```
/// use qchess_niels::Rules;
/// let r = Rules::parse_list("simplified,tunnelling").unwrap();
/// assert!(r.simplified && r.tunnelling && !r.hadamard);
/// assert_eq!(r.to_string(), "simplified,tunnelling");
/// assert_eq!(Rules::parse_list("").unwrap(), Rules::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Article 9 (Appendix A): the red mark always faces the opponent; no flip move.
    pub simplified: bool,
    /// Appendix D: "unequal" superposition becomes equal superposition with phase; Z and
    /// Hadamard moves.
    pub hadamard: bool,
    /// Appendix E: Z moves on entangled pairs, Hadamard moves on entangled groups.
    /// Implies `hadamard`.
    pub hadamard_plus: bool,
    /// Appendix E: attempted captures induce Hadamard moves instead of dice collapse.
    /// Implies `hadamard_plus`.
    pub deterministic: bool,
    /// Schools paper Appendix C: a rook, bishop or queen may tunnel (succeeds on a 6).
    pub tunnelling: bool,
    /// Appendix G: an indefinite attacker collapses first; the capture aborts if it is not
    /// where it attacked from.
    pub no_box: bool,
    /// Competitive rule 2: a superposition move must be "move and stay".
    pub stay_only: bool,
    /// Competitive rule 3: remotely collapse one's own pair, then move the resulting piece.
    pub remote_collapse: bool,
    /// Hadamard Games: read an equal superposition with owner-facing marks as the
    /// opponent-facing one times -1 (a global phase), so a Hadamard move sends it to red, not
    /// to blue as rules-notes 8 has it (docs/niels.md, reading 7).
    pub unitary_hadamard: bool,
}

/// Names of the options, in the order [`Rules`] prints them.
pub const RULE_NAMES: [&str; 9] = [
    "simplified",
    "hadamard",
    "hadamard-plus",
    "deterministic",
    "tunnelling",
    "no-box",
    "stay-only",
    "remote-collapse",
    "unitary-hadamard",
];

impl Rules {
    /// Parses a comma-separated list of option names (see [`RULE_NAMES`]; `hadamard+`,
    /// `tunneling`, `rule2` and `rule3` are accepted as aliases, and `competitive` switches on
    /// section 7's rules 2 and 3, `stay-only` and `remote-collapse`). Implied options are switched
    /// on (deterministic implies hadamard-plus implies hadamard).
    pub fn parse_list(list: &str) -> Result<Rules, NielsError> {
        let mut rules = Rules::default();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            rules.enable(name)?;
        }
        Ok(rules)
    }

    /// Switches one option on by name.
    pub fn enable(&mut self, name: &str) -> Result<(), NielsError> {
        match name.to_ascii_lowercase().as_str() {
            "simplified" => self.simplified = true,
            "hadamard" => self.hadamard = true,
            "hadamard-plus" | "hadamard+" | "hadamard_plus" => self.hadamard_plus = true,
            "deterministic" => self.deterministic = true,
            "tunnelling" | "tunneling" => self.tunnelling = true,
            "no-box" | "nobox" | "no_box" => self.no_box = true,
            "stay-only" | "rule2" | "stay_only" => self.stay_only = true,
            "remote-collapse" | "rule3" | "remote_collapse" => self.remote_collapse = true,
            // Section 7 ("Competitive rules of play"), rules 2 and 3: the two that change
            // play (rule 1 replaces the dice by a quantum random source; rule 4 is the
            // separate deterministic game).
            "competitive" => {
                self.stay_only = true;
                self.remote_collapse = true;
            }
            "unitary-hadamard" | "unitary_hadamard" => self.unitary_hadamard = true,
            other => {
                return Err(NielsError::Rules(format!(
                    "unknown rule option {other:?}: expected one of {} (or competitive: \
                     stay-only and remote-collapse)",
                    RULE_NAMES.join(", ")
                )));
            }
        }
        self.normalize();
        Ok(())
    }

    /// Switches on the options that others imply.
    pub fn normalize(&mut self) {
        if self.deterministic {
            self.hadamard_plus = true;
        }
        if self.hadamard_plus {
            self.hadamard = true;
        }
    }

    /// The option names that are on, in [`RULE_NAMES`] order.
    pub fn names(&self) -> Vec<&'static str> {
        let flags = [
            self.simplified,
            self.hadamard,
            self.hadamard_plus,
            self.deterministic,
            self.tunnelling,
            self.no_box,
            self.stay_only,
            self.remote_collapse,
            self.unitary_hadamard,
        ];
        RULE_NAMES
            .iter()
            .zip(flags)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect()
    }

    /// Whether collapses are decided by dice (every game but the Deterministic Game).
    pub fn uses_dice(&self) -> bool {
        !self.deterministic
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implied_options_and_errors() {
        let r = Rules::parse_list("deterministic").unwrap();
        assert!(r.hadamard && r.hadamard_plus && r.deterministic);
        assert_eq!(r.to_string(), "hadamard,hadamard-plus,deterministic");
        let all = Rules::parse_list(&RULE_NAMES.join(",")).unwrap();
        assert_eq!(all.names().len(), 9);
        let err = Rules::parse_list("simplified,quantum").unwrap_err();
        assert!(err.to_string().contains("quantum"));
        // The README's "competitive rules": section 7, rules 2 and 3.
        let c = Rules::parse_list("competitive").unwrap();
        assert!(c.stay_only && c.remote_collapse);
        assert_eq!(c.to_string(), "stay-only,remote-collapse");
        assert!(!c.hadamard && !c.simplified && !c.tunnelling);
    }
}
