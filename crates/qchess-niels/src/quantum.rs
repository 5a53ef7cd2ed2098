//! Collapse outcomes, probabilities and amplitudes of pairs and entangled groups.

use crate::pair::{Facings, Mark, PairId};
use crate::position::Position;
use crate::rules::Rules;
use qchess_board::Fraction;

/// One holistic collapse outcome of a group: the mark each pair collapses to.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupOutcome {
    /// `(pair, mark)` for every pair of the group, in creation order.
    pub marks: Vec<(PairId, Mark)>,
    /// Probability of this outcome under a dice roll.
    pub probability: f64,
    /// How many of the six faces of the roll give this outcome: the probability is exactly
    /// `rolls/6` ([`GroupOutcome::probability_exact`]).
    pub rolls: u8,
    /// Its amplitude: sqrt(probability) times the sign of every chosen half's mark facing
    /// (+ towards the opponent, - towards the owner). Only the Hadamard moves observe it.
    pub amplitude: f64,
}

impl GroupOutcome {
    /// The probability as an exact fraction (`rolls/6`, reduced).
    pub fn probability_exact(&self) -> Fraction {
        Fraction::new(u64::from(self.rolls), 6)
    }
}

/// The marks one roll gives every pair of `group` (8.4: one roll, each pair reading it by
/// its own facings).
pub(crate) fn marks_for_roll(
    pos: &Position,
    group: &[PairId],
    roll: u8,
    rules: &Rules,
) -> Vec<(PairId, Mark)> {
    group
        .iter()
        .map(|id| (*id, pos.pair_ref(*id).facings.collapse_mark(roll, rules)))
        .collect()
}

/// The distinct outcomes of collapsing `group` by one dice roll, with their probabilities
/// and amplitudes, in order of the smallest roll producing each (ids not on the board are
/// left out).
pub fn group_outcomes(pos: &Position, group: &[PairId], rules: &Rules) -> Vec<GroupOutcome> {
    // Ids not on the board are left out.
    let group: Vec<PairId> = group
        .iter()
        .copied()
        .filter(|id| pos.pair(*id).is_some())
        .collect();
    let group = group.as_slice();
    let mut out: Vec<GroupOutcome> = Vec::new();
    for roll in 1..=6u8 {
        let marks = marks_for_roll(pos, group, roll, rules);
        match out.iter_mut().find(|o| o.marks == marks) {
            Some(o) => {
                o.probability += 1.0 / 6.0;
                o.rolls += 1;
            }
            None => out.push(GroupOutcome {
                marks,
                probability: 1.0 / 6.0,
                rolls: 1,
                amplitude: 0.0,
            }),
        }
    }
    for o in &mut out {
        let sign: f64 = o
            .marks
            .iter()
            .map(|(id, m)| pos.pair_ref(*id).facings.of(*m).sign())
            .product();
        o.amplitude = sign * o.probability.sqrt();
    }
    out
}

/// Whether two group states are the same up to a global phase (the test of a "real
/// difference", docs/niels.md).
pub(crate) fn same_state(a: &[GroupOutcome], b: &[GroupOutcome]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut global = None;
    for x in a {
        let Some(y) = b.iter().find(|y| y.marks == x.marks) else {
            return false;
        };
        if (x.probability - y.probability).abs() > 1e-12 {
            return false;
        }
        let ratio = x.amplitude.signum() * y.amplitude.signum();
        match global {
            None => global = Some(ratio),
            Some(g) if g != ratio => return false,
            _ => {}
        }
    }
    true
}

/// The deterministic result of a Hadamard move on `group` (Appendix D; a group in the
/// Hadamard+ Game): the state is a|X> + b|Y> over its two outcomes, X being the one where the
/// group's oldest pair is on its red half; it goes to X when a and b have the same sign and
/// to Y otherwise. For a single pair X is the red half: an equal superposition goes to red,
/// one with phase to blue. A state with other than two equally likely outcomes (unequal
/// superpositions of the basic game) goes to its most likely outcome. Exception (rules-notes
/// 8, unless `unitary-hadamard`): a single pair in equal superposition with owner-facing
/// marks goes to blue.
pub fn hadamard_marks(pos: &Position, group: &[PairId], rules: &Rules) -> Vec<(PairId, Mark)> {
    // rules-notes 8: an equal superposition with owner-facing marks swaps red and blue,
    // also for the Hadamard move (unless the unitary reading is chosen).
    if let [id] = group {
        if let Some(p) = pos.pair(*id) {
            if p.facings == Facings::EQUAL_OWNER && !rules.unitary_hadamard {
                return vec![(*id, Mark::Blue)];
            }
        }
    }
    let outs = group_outcomes(pos, group, rules);
    if outs.len() == 2 && (outs[0].probability - outs[1].probability).abs() < 1e-12 {
        let first_red = |o: &GroupOutcome| o.marks.first().is_some_and(|(_, m)| *m == Mark::Red);
        let (x, y) = if first_red(&outs[0]) {
            (&outs[0], &outs[1])
        } else {
            (&outs[1], &outs[0])
        };
        if x.amplitude * y.amplitude > 0.0 {
            x.marks.clone()
        } else {
            y.marks.clone()
        }
    } else {
        let best = outs.iter().fold(None::<&GroupOutcome>, |b, o| match b {
            Some(b) if b.probability >= o.probability => Some(b),
            _ => Some(o),
        });
        best.map(|o| o.marks.clone()).unwrap_or_default()
    }
}
