//! Definition 2 without simulating the candidates: whether a move changes the state for some
//! outcome of positive probability, decided for every candidate from occupancy-pattern
//! weights (sums of `|amplitude|^2` over the basis states whose board matches a pattern),
//! read in a few read-only passes over the boards, never by applying a move.
//!
//! # Why pattern weights decide it
//!
//! Every circuit of section 8 is a measurement (a projection) followed by iSwaps and
//! sqrt-iSwaps controlled on path squares being empty. With `W(pattern)` the weight of the
//! boards matching a pattern:
//!
//! * an iSwap(s, t) controlled on the path `C` empty moves `t`'s marginal by exactly
//!   `W(s=1, t=0, C empty) - W(s=0, t=1, C empty)`; if that is clearly non-zero the move is
//!   legal. If no basis state is *active* (`s != t` with `C` empty) the gate is the identity:
//!   not legal. If both the active weight `a` and the inactive weight `1 - a` are clearly
//!   positive, the overlap `|<psi|U|psi>|^2 <= 1 - 2a(1-a)` (active states pick up the
//!   eigenvalues `+-i`, inactive ones `1`), so the state changed beyond the fidelity
//!   tolerance: legal. What is left (every basis state active and no marginal moving: an
//!   eigenvector up to a global phase is possible) goes to the reference.
//! * a measurement with outcome probability `p1` clearly inside `(0, 1)` is legal (the
//!   outcome-0 projection alone removes weight `p1` from the state); with `p1 = 0` exactly
//!   only outcome 0 is possible and it changes nothing; with `p1 = 1` exactly the move is its
//!   unitary, decided as above.
//! * a split whose targets are never occupied empties its source (or moves half of it onto
//!   the first target); a merge whose target is never occupied empties its first source (or,
//!   if that is never active, moves at least half of the second source).
//!
//! Values within a safe margin of the decision tolerance, en passant, and the possible
//! eigenvector cases fall back to the reference simulation for that candidate only
//! ([`LegalStats::fallback`] counts them).

use crate::circuit::{MoveType, Variant};
use crate::game::Game;
use crate::notation::MoveShape;
use crate::possibility::Classified;
use qchess_sim::{Complex, MAX_ANCILLAS, QuantumState};
use std::collections::HashMap;

/// A weight (or marginal change) above this is clearly beyond the Definition 2 tolerance
/// ([`crate::game::UNCHANGED_TOLERANCE`], 1e-12) whatever the rounding of the simulation;
/// below it (but not exactly zero) the fast rules do not decide.
pub const CLEAR_MARGIN: f64 = 1e-9;

/// How the fast legal-move decision went for one listing ([`Game::legal_moves_with_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegalStats {
    /// Possible moves examined.
    pub candidates: usize,
    /// Decided without any pattern weight (classically blocked, invalid, fixed squares or
    /// the square probabilities alone).
    pub by_marginals: usize,
    /// Decided from pattern weights read in the passes.
    pub by_patterns: usize,
    /// Decided by simulating the candidate (the slow reference), because the fast rules had
    /// no safe margin.
    pub fallback: usize,
    /// Read-only passes over the state's boards.
    pub passes: usize,
}

/// `board & mask == value`, and (when `any != 0`) `board & any != 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Pattern {
    mask: u64,
    value: u64,
    any: u64,
}

impl Pattern {
    const fn eq(mask: u64, value: u64) -> Self {
        Pattern {
            mask,
            value,
            any: 0,
        }
    }
    const fn with_any(mask: u64, value: u64, any: u64) -> Self {
        Pattern { mask, value, any }
    }
}

/// What a rule concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Legal,
    NotLegal,
    /// The reference must decide.
    Fallback,
    /// A pattern weight is not known yet (it has been asked for).
    Pending,
}

/// Answers pattern weights from what is known: the squares that are always or never
/// occupied, the square probabilities (only for single-square patterns clearly inside
/// (0, 1)), and the weights read in the passes. An unknown weight is recorded as wanted.
struct Oracle<'a> {
    probs: &'a [f64; 64],
    always: u64,
    ever: u64,
    known: HashMap<Pattern, f64>,
    wanted: Vec<Pattern>,
    /// `<psi|iSwap(s, t)[controls empty]|psi>` read without applying the gate (square
    /// masks `s`, `t`, `controls`); `None` when the simulator cannot give it.
    overlap: &'a dyn Fn(u64, u64, u64) -> Option<Complex<f64>>,
}

impl Oracle<'_> {
    /// The weight of `p`, exact zero only when no basis state matches; `None` (and recorded)
    /// when a pass must read it.
    fn weight(&mut self, p: Pattern) -> Option<f64> {
        let fixed = self.always | !self.ever;
        if (p.value ^ self.always) & p.mask & fixed != 0 {
            return Some(0.0); // a fixed square has the other value
        }
        let mask = p.mask & !fixed;
        let value = p.value & mask;
        let any = if p.any == 0 || p.any & self.always != 0 {
            0 // no condition, or it always holds
        } else {
            let a = p.any & self.ever;
            if a == 0 {
                return Some(0.0); // never holds
            }
            a
        };
        if mask == 0 && any == 0 {
            return Some(1.0);
        }
        if any == 0 && mask.count_ones() == 1 {
            let q = mask.trailing_zeros() as usize;
            let w = if value != 0 {
                self.probs[q]
            } else {
                1.0 - self.probs[q]
            };
            if w > CLEAR_MARGIN && w < 1.0 - CLEAR_MARGIN {
                return Some(w);
            }
        }
        let key = Pattern::with_any(mask, value, any);
        if let Some(&w) = self.known.get(&key) {
            return Some(w);
        }
        if !self.wanted.contains(&key) {
            self.wanted.push(key);
        }
        None
    }
}

const fn bit(sq: qchess_board::Square) -> u64 {
    1u64 << sq.index()
}

/// Reads the wanted weights in one read-only pass of the simulator
/// ([`QuantumState::pattern_weights`]: joint histograms over the squares the patterns read).
fn scan<S: QuantumState>(state: &S, patterns: &[Pattern]) -> Vec<f64> {
    let raw: Vec<(u64, u64, u64)> = patterns.iter().map(|p| (p.mask, p.value, p.any)).collect();
    state.pattern_weights(&raw)
}

/// Whether the state is so close to its cap or memory budget that a candidate's circuit
/// might be refused (a split can double the basis states, a pass needs buffers beside the
/// state, and the reference simulates on a copy): then every candidate the prechecks do not
/// settle goes to the reference, which sees exactly what the simulator refuses.
fn near_limits<S: QuantumState>(state: &S) -> bool {
    state.len().saturating_mul(3) > state.cap()
        || state.bytes().saturating_mul(4) > state.memory_budget()
}

/// Decisions that need no state pass at all: the game is over, the move is blocked
/// classically, invalid, or cannot get its ancillas. `None`: a rule must decide.
fn precheck<S: QuantumState>(game: &Game<S>, c: &Classified, probs: &[f64; 64]) -> Option<bool> {
    if game.classically_blocked(c, probs) {
        return Some(false);
    }
    let om = c.occupancy_move();
    if om.validate().is_err() {
        return Some(false);
    }
    let needed = crate::circuit::captures_needed(&om);
    if needed > 0 && game.state().ancilla_count() + needed > MAX_ANCILLAS {
        return Some(false);
    }
    None
}

/// iSwap(s, t) controlled on `controls` being empty, on the state as it is.
fn iswap_rule(o: &mut Oracle, s: u64, t: u64, controls: u64) -> Verdict {
    if controls & o.always != 0 {
        return Verdict::NotLegal; // never active: the identity
    }
    let m = s | t | controls;
    let (w10, w01) = (o.weight(Pattern::eq(m, s)), o.weight(Pattern::eq(m, t)));
    let (Some(w10), Some(w01)) = (w10, w01) else {
        return Verdict::Pending;
    };
    if (w10 - w01).abs() > CLEAR_MARGIN {
        return Verdict::Legal; // t's marginal moves by w10 - w01
    }
    let active = w10 + w01;
    if active == 0.0 {
        return Verdict::NotLegal;
    }
    if active * (1.0 - active) > CLEAR_MARGIN {
        return Verdict::Legal; // fidelity below 1 - active * inactive
    }
    // (Almost) every basis state active and no marginal moving: the state may be an
    // eigenvector of the gate up to a global phase. The exact overlap decides it as the
    // reference's fidelity test does (1 - |<psi|U|psi>| against the 1e-12 tolerance), with
    // a margin on both sides; the marginals move by at most |w10 - w01| (on s and t only).
    let Some(o) = (o.overlap)(s, t, controls) else {
        return Verdict::Fallback;
    };
    let infidelity = 1.0 - o.norm();
    if infidelity > CLEAR_MARGIN {
        Verdict::Legal
    } else if infidelity < SURELY_SAME && (w10 - w01).abs() < SURELY_SAME {
        Verdict::NotLegal
    } else {
        Verdict::Fallback
    }
}

/// Below this an infidelity or marginal change is clearly within the Definition 2 tolerance
/// ([`crate::game::UNCHANGED_TOLERANCE`], 1e-12) whatever the rounding of the simulation.
const SURELY_SAME: f64 = 1e-13;

/// A measurement with outcome-1 weight `p1` and outcome-0 weight `p0` (each a sum of
/// disjoint patterns), then `unitary` on outcome 1.
fn measured_rule(
    o: &mut Oracle,
    p1: &[Pattern],
    p0: &[Pattern],
    unitary: impl FnOnce(&mut Oracle) -> Verdict,
) -> Verdict {
    let w1: Vec<Option<f64>> = p1.iter().map(|&p| o.weight(p)).collect();
    let w0: Vec<Option<f64>> = p0.iter().map(|&p| o.weight(p)).collect();
    let (Some(w1), Some(w0)) = (
        w1.into_iter().sum::<Option<f64>>(),
        w0.into_iter().sum::<Option<f64>>(),
    ) else {
        return Verdict::Pending;
    };
    if w1 > CLEAR_MARGIN && w0 > CLEAR_MARGIN {
        return Verdict::Legal; // both outcomes possible: outcome 0's projection changes it
    }
    if w1 == 0.0 {
        return Verdict::NotLegal; // only outcome 0, which projects onto the whole state
    }
    if w0 == 0.0 {
        return unitary(o); // outcome 1 is certain: the unitary alone
    }
    Verdict::Fallback
}

/// Two weights that both count for a square leaving or arriving: legal when the first is
/// clearly positive, or the first is zero and the second clearly positive (it then moves at
/// least half of itself); not legal when both are zero.
fn two_weight_rule(o: &mut Oracle, first: Pattern, second: Pattern) -> Verdict {
    let (a, b) = (o.weight(first), o.weight(second));
    let (Some(a), Some(b)) = (a, b) else {
        return Verdict::Pending;
    };
    if a > CLEAR_MARGIN || (a == 0.0 && b > 2.0 * CLEAR_MARGIN) {
        Verdict::Legal
    } else if a == 0.0 && b == 0.0 {
        Verdict::NotLegal
    } else {
        Verdict::Fallback
    }
}

/// The rule for one candidate (after [`precheck`]).
fn rule(o: &mut Oracle, c: &Classified) -> Verdict {
    let om = c.occupancy_move();
    let (s, t) = (bit(om.source), bit(om.target));
    let never = |o: &Oracle, m: u64| m & o.ever == 0;
    match (om.move_type, om.variant) {
        (MoveType::Jump | MoveType::PawnStep, Variant::Basic) => iswap_rule(o, s, t, 0),
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Basic) => iswap_rule(o, s, t, om.path()),
        (MoveType::Jump | MoveType::PawnStep, Variant::Excluded) => {
            measured_rule(o, &[Pattern::eq(t, 0)], &[Pattern::eq(t, t)], |o| {
                iswap_rule(o, s, t, 0)
            })
        }
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Excluded) => {
            measured_rule(o, &[Pattern::eq(t, 0)], &[Pattern::eq(t, t)], |o| {
                iswap_rule(o, s, t, om.path())
            })
        }
        // Capture jump (eq. 18b), or a capture slide with no path: with the source certain,
        // the piece leaves it in every branch (its marginal drops from 1 to 0).
        (MoveType::Jump, Variant::Capture) => {
            measured_rule(o, &[Pattern::eq(s, s)], &[Pattern::eq(s, 0)], |_| {
                Verdict::Legal
            })
        }
        (MoveType::Slide, Variant::Capture) => {
            let path = om.path();
            if path == 0 {
                return measured_rule(o, &[Pattern::eq(s, s)], &[Pattern::eq(s, 0)], |_| {
                    Verdict::Legal
                });
            }
            // Eq. 23b: M1 = (path clear and source occupied) or (path blocked, target empty).
            // When M1 is certain the source empties exactly where the path is clear.
            measured_rule(
                o,
                &[Pattern::eq(path | s, s), Pattern::with_any(t, 0, path)],
                &[Pattern::eq(path | s, 0), Pattern::with_any(t, t, path)],
                |o| {
                    let Some(clear) = o.weight(Pattern::eq(path, 0)) else {
                        return Verdict::Pending;
                    };
                    if clear > CLEAR_MARGIN {
                        Verdict::Legal
                    } else if clear == 0.0 {
                        Verdict::NotLegal
                    } else {
                        Verdict::Fallback
                    }
                },
            )
        }
        // Pawn capture: with the source certain the pawn leaves it exactly where the target
        // was occupied.
        (MoveType::PawnCapture, _) => {
            measured_rule(o, &[Pattern::eq(s, s)], &[Pattern::eq(s, 0)], |o| {
                let Some(taken) = o.weight(Pattern::eq(t, t)) else {
                    return Verdict::Pending;
                };
                if taken > CLEAR_MARGIN {
                    Verdict::Legal
                } else if taken == 0.0 {
                    Verdict::NotLegal
                } else {
                    Verdict::Fallback
                }
            })
        }
        (MoveType::KsCastle | MoveType::QsCastle, _) => {
            let Some(sq) = om.castling_squares() else {
                return Verdict::NotLegal; // the circuit refuses it
            };
            let empty = bit(sq.king_to) | bit(sq.rook_to);
            let ctrl = sq.control.map_or(0, bit);
            let (kf, rf) = (bit(sq.king_from), bit(sq.rook_from));
            // M1 = both targets empty; when certain, each iSwap moves its piece onto an empty
            // square wherever the control square is empty.
            measured_rule(
                o,
                &[Pattern::eq(empty, 0)],
                &[Pattern::with_any(0, 0, empty)],
                |o| {
                    let (a, b) = (
                        o.weight(Pattern::eq(kf | ctrl, kf)),
                        o.weight(Pattern::eq(rf | ctrl, rf)),
                    );
                    let (Some(a), Some(b)) = (a, b) else {
                        return Verdict::Pending;
                    };
                    if a > CLEAR_MARGIN || b > CLEAR_MARGIN {
                        Verdict::Legal
                    } else if a == 0.0 && b == 0.0 {
                        Verdict::NotLegal
                    } else {
                        Verdict::Fallback
                    }
                },
            )
        }
        (MoveType::SplitJump, _) => {
            let t2 = om.target2.map_or(t, bit);
            split_jump_rule(o, s, t, t2)
        }
        (MoveType::SplitSlide, _) => {
            let t2 = om.target2.map_or(t, bit);
            let (p1, p2) = om.paths();
            if p1 | p2 == 0 {
                return split_jump_rule(o, s, t, t2);
            }
            if never(o, t | t2) {
                // Both targets empty: the source empties wherever either arm's path is clear.
                let (a, b) = (
                    o.weight(Pattern::eq(s | p1, s)),
                    o.weight(Pattern::eq(s | p2, s)),
                );
                let (Some(a), Some(b)) = (a, b) else {
                    return Verdict::Pending;
                };
                return if a.max(b) > CLEAR_MARGIN {
                    Verdict::Legal
                } else if a == 0.0 && b == 0.0 {
                    Verdict::NotLegal
                } else {
                    Verdict::Fallback
                };
            }
            if never(o, t) {
                // t1 empty: it receives half the source where both paths are clear (the
                // sqrt-iSwap) and all of it where only p1 is (the last iSwap).
                let both = o.weight(Pattern::eq(s | p1 | p2, s));
                let only1 = if p2 == 0 {
                    Some(0.0)
                } else {
                    o.weight(Pattern::with_any(s | p1, s, p2))
                };
                let (Some(both), Some(only1)) = (both, only1) else {
                    return Verdict::Pending;
                };
                if both / 2.0 + only1 > CLEAR_MARGIN {
                    return Verdict::Legal;
                }
            }
            // Eq. 9: with p2 clear the source ends holding what t2 held (sqrt-iSwap(s, t1)
            // then iSwap(s, t2), or the iSwap alone); with only p1 clear what t1 held; with
            // both blocked it keeps its own.
            let mut terms = vec![
                (Pattern::eq(t2 | p2, t2), 1.0),
                (Pattern::eq(s | p2, s), -1.0),
            ];
            if p2 != 0 {
                terms.push((Pattern::with_any(t | p1, t, p2), 1.0));
                terms.push((Pattern::with_any(s | p1, s, p2), -1.0));
            }
            marginal_rule(o, &terms)
        }
        (MoveType::MergeJump, _) => {
            let s2 = om.source2.map_or(s, bit);
            if never(o, t) {
                return two_weight_rule(o, Pattern::eq(s, s), Pattern::eq(s2, s2));
            }
            // iSwap^-1(t, s1) first: the first source ends holding what the target held.
            marginal_rule(o, &[(Pattern::eq(t, t), 1.0), (Pattern::eq(s, s), -1.0)])
        }
        (MoveType::MergeSlide, _) => {
            let s2 = om.source2.map_or(s, bit);
            // q2: the first source's path, q1: the second's (each without the other source).
            let (q2, q1) = om.paths();
            if never(o, t) {
                return two_weight_rule(o, Pattern::eq(s | q2, s), Pattern::eq(s2 | q1, s2));
            }
            // Eq. 12: where q2 is clear, iSwap^-1(t, s1) leaves the first source holding what
            // the target held; elsewhere the first source is not touched.
            marginal_rule(
                o,
                &[
                    (Pattern::eq(t | q2, t), 1.0),
                    (Pattern::eq(s | q2, s), -1.0),
                ],
            )
        }
        (MoveType::PawnEp, _) => Verdict::Fallback,
        (MoveType::PawnStep | MoveType::PawnTwoStep, Variant::Capture) => Verdict::NotLegal,
    }
}

/// Split jump `s^t1t2` = iSwap(s, t2) sqrt-iSwap(s, t1): with `t2` never occupied the
/// source empties entirely; with `t1` never occupied half the source lands on it. Otherwise
/// the source ends holding what `t2` held (the iSwap comes last).
fn split_jump_rule(o: &mut Oracle, s: u64, t1: u64, t2: u64) -> Verdict {
    if (t1 | t2) & o.ever != t1 | t2 {
        let Some(w) = o.weight(Pattern::eq(s, s)) else {
            return Verdict::Pending;
        };
        return if w > 2.0 * CLEAR_MARGIN {
            Verdict::Legal
        } else {
            Verdict::Fallback
        };
    }
    marginal_rule(o, &[(Pattern::eq(t2, t2), 1.0), (Pattern::eq(s, s), -1.0)])
}

/// A square's marginal change as a signed sum of pattern weights: legal when clearly
/// non-zero, else the reference decides (interference may still change the state).
fn marginal_rule(o: &mut Oracle, terms: &[(Pattern, f64)]) -> Verdict {
    let ws: Vec<Option<f64>> = terms.iter().map(|&(p, _)| o.weight(p)).collect();
    let mut change = 0.0;
    for (w, &(_, sign)) in ws.iter().zip(terms) {
        let Some(w) = w else {
            return Verdict::Pending;
        };
        change += sign * w;
    }
    if change.abs() > CLEAR_MARGIN {
        Verdict::Legal
    } else {
        Verdict::Fallback
    }
}

impl<S: QuantumState> Game<S> {
    /// For each candidate, whether it changes the state for some outcome of positive
    /// probability (Definition 2), decided by the fast rules with the reference as
    /// fallback; and how the decision went.
    pub(crate) fn decide_all(&self, candidates: &[Classified]) -> (Vec<bool>, LegalStats) {
        let probs = self.probabilities();
        let mut stats = LegalStats {
            candidates: candidates.len(),
            ..LegalStats::default()
        };
        let mut out: Vec<Option<bool>> = candidates
            .iter()
            .map(|c| precheck(self, c, &probs))
            .collect();
        stats.by_marginals = out.iter().filter(|d| d.is_some()).count();
        if out.iter().all(Option::is_some) {
            return (out.into_iter().map(|d| d == Some(true)).collect(), stats);
        }
        if near_limits(self.state()) {
            // The simulator may refuse a candidate's circuit (state cap, memory budget), and
            // a refused circuit changes nothing: only the simulation knows which.
            let decided = out
                .iter()
                .zip(candidates)
                .map(|(d, c)| {
                    d.unwrap_or_else(|| {
                        stats.fallback += 1;
                        self.changes_state_reference_given(c, &probs)
                    })
                })
                .collect();
            return (decided, stats);
        }
        // Pass 1: which squares are always / never occupied.
        let (always, ever) = self.state().occupancy_bounds();
        stats.passes += 1;
        let state = self.state();
        let overlap = |s: u64, t: u64, controls: u64| {
            state.iswap_overlap(s.trailing_zeros() as u8, t.trailing_zeros() as u8, controls)
        };
        let mut oracle = Oracle {
            probs: &probs,
            always,
            ever,
            known: HashMap::new(),
            wanted: Vec::new(),
            overlap: &overlap,
        };
        // Rules, then passes for the weights they ask for (a rule asks again only when an
        // answer leads it to a further question, at most once more).
        let mut cache: HashMap<(MoveType, Variant, MoveShape), Verdict> = HashMap::new();
        for round in 0..3 {
            for (i, c) in candidates.iter().enumerate() {
                if out[i].is_some() {
                    continue;
                }
                let key = (c.move_type, c.variant, c.shape);
                let v = match cache.get(&key) {
                    Some(&v) if v != Verdict::Pending => v,
                    _ => {
                        let v = rule(&mut oracle, c);
                        cache.insert(key, v);
                        v
                    }
                };
                match v {
                    Verdict::Legal | Verdict::NotLegal => {
                        out[i] = Some(v == Verdict::Legal);
                        if round == 0 {
                            stats.by_marginals += 1;
                        } else {
                            stats.by_patterns += 1;
                        }
                    }
                    Verdict::Fallback => {
                        out[i] = Some(self.changes_state_reference_given(c, &probs));
                        stats.fallback += 1;
                    }
                    Verdict::Pending => {}
                }
            }
            if oracle.wanted.is_empty() {
                break;
            }
            let wanted = std::mem::take(&mut oracle.wanted);
            let w = scan(self.state(), &wanted);
            stats.passes += 1;
            oracle.known.extend(wanted.into_iter().zip(w));
            cache.retain(|_, v| *v != Verdict::Pending);
        }
        let decided = out
            .iter()
            .zip(candidates)
            .map(|(d, c)| match d {
                Some(d) => *d,
                None => {
                    stats.fallback += 1;
                    self.changes_state_reference_given(c, &probs)
                }
            })
            .collect();
        (decided, stats)
    }
}
