//! Definition 2 without simulating the candidates: whether a move changes the state for some
//! outcome of positive probability, decided for every candidate from read-only questions to
//! the simulator ([`QuantumState::local_effects`]), asked for all candidates at once, never
//! by applying a move.
//!
//! # Why read-only questions decide it
//!
//! Every circuit of section 8 is a measurement (a projection) followed by iSwaps and
//! sqrt-iSwaps on at most three squares `A`, each controlled on path squares being empty
//! (eq. 4a, 5, 7, 9, 10, 12, 16b, 18b, 21b, 23b, 36b). Such a unitary `U` acts on each group of
//! basis states that agree outside `A` (and have as many pieces on `A`: every gate keeps
//! that number) on its own, with the gates whose path conditions hold in that group. With
//! `v_r` a group's amplitudes, `<psi|U|psi> = sum_r <v_r|U v_r>`, and for any set `G` of
//! groups `1 - |<psi|U|psi>| >= sum_G <v|v> - |sum_G <v|U v>|` (the other groups add at most
//! their weight to the modulus). So:
//!
//! * one group the circuit moves off itself proves a change: a piece moving onto a square
//!   that is empty in that branch (its group is that one basis state, `<v|Uv> = 0`), or two
//!   groups picking up different phases (the halves of a split piece swapped by an iSwap pick
//!   up `i`, the branches where the path is blocked `1`); the simulator finds such groups
//!   among a few thousand sampled basis states, reading each sampled group whole;
//! * if no basis state is moved, `U` is the identity on the state: not legal, exactly;
//! * otherwise one full read gives the exact `1 - |<psi|U|psi>|` and the acted squares'
//!   marginal changes, compared with the reference's tolerances with a margin.
//!
//! Measurements: both outcomes with a clear weight make the move legal (the outcome-0
//! projection removes weight `p1`); no basis state with outcome 1 makes it not legal; with
//! outcome 1 certain the unitary decides. Presence of boards matching the outcome patterns
//! is read the same way (a sampled board of clear weight, or a full pass proving absence),
//! and the squares that are always or never occupied (one pass) and the square
//! probabilities settle many questions without any read.
//!
//! Values within a safe margin of the decision tolerance, en passant, and boards of tiny
//! weight fall back to the reference simulation for that candidate only
//! ([`LegalStats::fallback`] counts them). The derivation is written out in
//! `docs/decisions.md` ("Definition 2 from read-only group overlaps").

use crate::GameError;
use crate::circuit::{MoveType, Variant};
use crate::game::{Game, sim_error};
use crate::possibility::Classified;
use qchess_sim::{BoardPattern, LocalAnswer, LocalCircuit, LocalQuery, MAX_ANCILLAS, QuantumState};
// Questions are hashed by hashbrown's default (foldhash), not SipHash: a listing hashes each
// of its hundreds of questions several times, and SipHash took a sixth of a small state's
// listing; the maps are only looked up, never iterated, so the order is never seen.
use hashbrown::{HashMap, HashSet};

/// A weight (or marginal change) above this is clearly beyond the Definition 2 tolerance
/// ([`crate::game::UNCHANGED_TOLERANCE`], 1e-12) whatever the rounding of the simulation;
/// below it (but not exactly zero) the fast rules do not decide.
pub const CLEAR_MARGIN: f64 = 1e-9;

/// Below this an infidelity or marginal change is clearly within the Definition 2 tolerance
/// ([`crate::game::UNCHANGED_TOLERANCE`], 1e-12) whatever the rounding of the simulation.
const SURELY_SAME: f64 = 1e-13;

/// How the fast legal-move decision went for one listing ([`Game::legal_moves_with_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegalStats {
    /// Possible moves examined.
    pub candidates: usize,
    /// Decided without reading the state (classically blocked, invalid, fixed squares or
    /// the square probabilities alone).
    pub by_marginals: usize,
    /// Decided from read-only questions to the state (presence of boards, circuit effects).
    pub by_patterns: usize,
    /// Decided by simulating the candidate (the slow reference), because the fast rules had
    /// no safe margin.
    pub fallback: usize,
    /// Read-only passes over the state (the always/never pass and each batch of questions).
    pub passes: usize,
}

/// What a rule concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Legal,
    NotLegal,
    /// The reference must decide.
    Fallback,
}

/// How a candidate is decided. Its questions are built once, as the [`LocalQuery`] the
/// answers are looked up by (each round looks them up again).
#[derive(Clone, Debug)]
enum Plan {
    Done(Verdict),
    /// The unitary alone (a move without measurement, or its outcome 1 certain): a
    /// [`LocalQuery::Circuit`].
    Circuit(LocalQuery),
    /// Legal when a board matching one of the patterns (a [`LocalQuery::Presence`]) has
    /// clear weight, not legal when no board matches.
    AnyPresent(LocalQuery),
    /// A measurement whose outcome 1 holds on the boards matching `m1` (outcome 0: `m0`),
    /// both [`LocalQuery::Presence`], then `then` on outcome 1.
    Measured {
        m1: LocalQuery,
        m0: LocalQuery,
        then: Box<Plan>,
    },
}

/// Whether a weight is known from the squares that are always / never occupied and the
/// square probabilities, without reading the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// No board matches.
    Absent,
    /// The matching boards weigh clearly more than [`CLEAR_MARGIN`].
    Clear,
    Unknown,
}

/// What is known without reading the state.
struct Oracle<'a> {
    probs: &'a [f64; 64],
    always: u64,
    ever: u64,
}

impl Oracle<'_> {
    fn fixed(&self) -> u64 {
        self.always | !self.ever
    }

    /// One pattern.
    fn known(&self, (m, v, a): BoardPattern) -> Known {
        let fixed = self.fixed();
        if (v ^ self.always) & m & fixed != 0 {
            return Known::Absent; // a fixed square has the other value
        }
        let mask = m & !fixed;
        let value = v & mask;
        let any = if a == 0 || a & self.always != 0 {
            0 // no condition, or it always holds
        } else {
            let a = a & self.ever;
            if a == 0 {
                return Known::Absent; // never holds
            }
            a
        };
        if mask == 0 && any == 0 {
            return Known::Clear; // every board
        }
        if any == 0 && mask.count_ones() == 1 {
            let q = mask.trailing_zeros() as usize;
            let w = if value != 0 {
                self.probs[q]
            } else {
                1.0 - self.probs[q]
            };
            if w > CLEAR_MARGIN && w < 1.0 - CLEAR_MARGIN {
                return Known::Clear;
            }
        }
        Known::Unknown
    }

    /// A union of patterns.
    fn known_any(&self, pats: &[BoardPattern]) -> Known {
        let mut all_absent = true;
        for &p in pats {
            match self.known(p) {
                Known::Clear => return Known::Clear,
                Known::Absent => {}
                Known::Unknown => all_absent = false,
            }
        }
        if all_absent {
            Known::Absent
        } else {
            Known::Unknown
        }
    }
}

const fn bit(sq: qchess_board::Square) -> u64 {
    1u64 << sq.index()
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

/// A circuit the simulator would refuse (repeated or overlapping squares) changes nothing.
fn circuit_plan(c: Option<LocalCircuit>) -> Plan {
    c.map_or(Plan::Done(Verdict::NotLegal), |c| {
        Plan::Circuit(LocalQuery::Circuit(c))
    })
}

/// iSwap(s, t) controlled on `controls` being empty: settled from the fixed squares and the
/// marginals where possible (with no control, or controls never occupied, `t`'s marginal
/// moves by exactly `p(s) - p(t)`), else the circuit.
fn iswap_plan(o: &Oracle, s: u64, t: u64, controls: u64) -> Plan {
    if controls & o.always != 0 {
        return Plan::Done(Verdict::NotLegal); // never active: the identity
    }
    let fixed = o.fixed();
    if (s | t) & fixed == s | t && ((o.always & s == 0) == (o.always & t == 0)) {
        return Plan::Done(Verdict::NotLegal); // s and t always equal: never active
    }
    if controls & o.ever == 0 {
        let (ps, pt) = (
            o.probs[s.trailing_zeros() as usize],
            o.probs[t.trailing_zeros() as usize],
        );
        if (ps - pt).abs() > CLEAR_MARGIN {
            return Plan::Done(Verdict::Legal);
        }
    }
    circuit_plan(LocalCircuit::iswap(
        s.trailing_zeros() as u8,
        t.trailing_zeros() as u8,
        controls,
    ))
}

/// The plan for one candidate (after [`precheck`]).
fn plan(o: &Oracle, c: &Classified) -> Plan {
    let om = c.occupancy_move();
    let (s, t) = (bit(om.source), bit(om.target));
    let (si, ti) = (om.source.index(), om.target.index());
    let measured = |m1: Vec<BoardPattern>, m0: Vec<BoardPattern>, then: Plan| Plan::Measured {
        m1: LocalQuery::Presence(m1),
        m0: LocalQuery::Presence(m0),
        then: Box::new(then),
    };
    let any_present = |pats: Vec<BoardPattern>| Plan::AnyPresent(LocalQuery::Presence(pats));
    match (om.move_type, om.variant) {
        (MoveType::Jump | MoveType::PawnStep, Variant::Basic) => iswap_plan(o, s, t, 0),
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Basic) => iswap_plan(o, s, t, om.path()),
        (MoveType::Jump | MoveType::PawnStep, Variant::Excluded) => {
            measured(vec![(t, 0, 0)], vec![(t, t, 0)], iswap_plan(o, s, t, 0))
        }
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Excluded) => measured(
            vec![(t, 0, 0)],
            vec![(t, t, 0)],
            iswap_plan(o, s, t, om.path()),
        ),
        // Capture jump (eq. 18b), or a capture slide with no path: with the source certain,
        // the piece leaves it in every branch (its marginal drops from 1 to 0).
        (MoveType::Jump, Variant::Capture) => {
            measured(vec![(s, s, 0)], vec![(s, 0, 0)], Plan::Done(Verdict::Legal))
        }
        (MoveType::Slide, Variant::Capture) => {
            let path = om.path();
            if path == 0 {
                return measured(vec![(s, s, 0)], vec![(s, 0, 0)], Plan::Done(Verdict::Legal));
            }
            // Eq. 23b: M1 = (path clear and source occupied) or (path blocked, target empty).
            // When M1 is certain the source empties exactly where the path is clear.
            measured(
                vec![(path | s, s, 0), (t, 0, path)],
                vec![(path | s, 0, 0), (t, t, path)],
                any_present(vec![(path, 0, 0)]),
            )
        }
        // Pawn capture: with the source certain the pawn leaves it exactly where the target
        // was occupied.
        (MoveType::PawnCapture, _) => measured(
            vec![(s, s, 0)],
            vec![(s, 0, 0)],
            any_present(vec![(t, t, 0)]),
        ),
        (MoveType::KsCastle | MoveType::QsCastle, _) => {
            let Some(sq) = om.castling_squares() else {
                return Plan::Done(Verdict::NotLegal); // the circuit refuses it
            };
            let empty = bit(sq.king_to) | bit(sq.rook_to);
            let ctrl = sq.control.map_or(0, bit);
            let (kf, rf) = (bit(sq.king_from), bit(sq.rook_from));
            // M1 = both targets empty; when certain, each iSwap moves its piece onto an empty
            // square wherever the control square is empty (a group of one basis state).
            measured(
                vec![(empty, 0, 0)],
                vec![(0, 0, empty)],
                any_present(vec![(kf | ctrl, kf, 0), (rf | ctrl, rf, 0)]),
            )
        }
        (MoveType::SplitJump, _) => {
            let t2 = om.target2.map_or(ti, |q| q.index());
            circuit_plan(LocalCircuit::split(si, ti, t2))
        }
        (MoveType::SplitSlide, _) => {
            let t2 = om.target2.map_or(ti, |q| q.index());
            let (p1, p2) = om.paths();
            circuit_plan(LocalCircuit::split_slide(si, ti, t2, p1, p2))
        }
        (MoveType::MergeJump, _) => {
            let s2 = om.source2.map_or(si, |q| q.index());
            circuit_plan(LocalCircuit::merge(si, s2, ti))
        }
        (MoveType::MergeSlide, _) => {
            let s2 = om.source2.map_or(si, |q| q.index());
            let (p1, p2) = om.paths();
            circuit_plan(LocalCircuit::merge_slide(si, s2, ti, p1, p2))
        }
        (MoveType::PawnEp, _) => Plan::Done(Verdict::Fallback),
        (MoveType::PawnStep | MoveType::PawnTwoStep, Variant::Capture) => {
            Plan::Done(Verdict::NotLegal)
        }
    }
}

/// Settles `plan` from what is known; `Err` with the questions still to ask (borrowed from
/// the plan: the caller copies each distinct one once).
fn resolve<'p>(
    o: &Oracle,
    plan: &'p Plan,
    answers: &HashMap<LocalQuery, LocalAnswer>,
) -> Result<Verdict, Vec<&'p LocalQuery>> {
    let presence = |q: &'p LocalQuery| -> Result<Known, Vec<&'p LocalQuery>> {
        if let LocalQuery::Presence(pats) = q {
            match o.known_any(pats) {
                Known::Unknown => {}
                k => return Ok(k),
            }
        }
        match answers.get(q) {
            None => Err(vec![q]),
            Some(LocalAnswer::Absent) => Ok(Known::Absent),
            Some(LocalAnswer::Present) => Ok(Known::Clear),
            Some(_) => Ok(Known::Unknown),
        }
    };
    match plan {
        Plan::Done(v) => Ok(*v),
        Plan::Circuit(q) => match answers.get(q) {
            None => Err(vec![q]),
            Some(LocalAnswer::Identity) => Ok(Verdict::NotLegal),
            Some(LocalAnswer::Changes) => Ok(Verdict::Legal),
            Some(&LocalAnswer::Exact {
                infidelity,
                max_shift,
            }) => Ok(if infidelity > CLEAR_MARGIN || max_shift > CLEAR_MARGIN {
                Verdict::Legal
            } else if infidelity < SURELY_SAME && max_shift < SURELY_SAME {
                Verdict::NotLegal
            } else {
                Verdict::Fallback
            }),
            Some(_) => Ok(Verdict::Fallback),
        },
        Plan::AnyPresent(q) => Ok(match presence(q)? {
            Known::Clear => Verdict::Legal,
            Known::Absent => Verdict::NotLegal,
            Known::Unknown => Verdict::Fallback,
        }),
        Plan::Measured { m1, m0, then } => match (presence(m1), presence(m0)) {
            (Ok(Known::Absent), _) => Ok(Verdict::NotLegal), // outcome 0 only: no change
            (_, Ok(Known::Absent)) => resolve(o, then, answers), // outcome 1 certain
            (Ok(Known::Clear), Ok(Known::Clear)) => Ok(Verdict::Legal),
            (Ok(_), Ok(_)) => Ok(Verdict::Fallback), // boards of tiny weight only
            (Err(mut a), Err(b)) => {
                a.extend(b);
                Err(a)
            }
            (Err(a), Ok(_)) | (Ok(_), Err(a)) => Err(a),
        },
    }
}

impl<S: QuantumState> Game<S> {
    /// For each candidate, whether it changes the state for some outcome of positive
    /// probability (Definition 2), decided by the fast rules with the reference as
    /// fallback; and how the decision went. The fallback's copies of the state are made
    /// with `Clone` (outside the memory budget), as [`Game::legal_moves`] always did; see
    /// [`Game::try_decide_all`] for the budgeted form.
    pub(crate) fn decide_all(&self, candidates: &[Classified]) -> (Vec<bool>, LegalStats) {
        match self.decide_all_with(candidates, false) {
            Ok(decided) => decided,
            // Unreachable: unbudgeted, neither the read-only passes nor the copies fail.
            Err(_) => (vec![false; candidates.len()], LegalStats::default()),
        }
    }

    /// [`Game::decide_all`] with every state-sized allocation within the memory budget: the
    /// fallback's copies ([`QuantumState::try_clone`]) and a backend's read-only passes
    /// ([`QuantumState::local_effects`]); [`GameError::StateTooLarge`] when one does not fit.
    pub(crate) fn try_decide_all(
        &self,
        candidates: &[Classified],
    ) -> Result<(Vec<bool>, LegalStats), GameError> {
        self.decide_all_with(candidates, true)
    }

    fn decide_all_with(
        &self,
        candidates: &[Classified],
        budgeted: bool,
    ) -> Result<(Vec<bool>, LegalStats), GameError> {
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
            return Ok((out.into_iter().map(|d| d == Some(true)).collect(), stats));
        }
        if near_limits(self.state()) {
            // The simulator may refuse a candidate's circuit (state cap, memory budget), and
            // a refused circuit changes nothing: only the simulation knows which.
            let mut decided = Vec::with_capacity(candidates.len());
            for (d, c) in out.iter().zip(candidates) {
                decided.push(match d {
                    Some(d) => *d,
                    None => {
                        stats.fallback += 1;
                        self.reference_given(c, &probs, budgeted)?
                    }
                });
            }
            return Ok((decided, stats));
        }
        // Pass 1: which squares are always / never occupied.
        let (always, ever) = self.state().occupancy_bounds();
        stats.passes += 1;
        let oracle = Oracle {
            probs: &probs,
            always,
            ever,
        };
        let plans: Vec<Option<Plan>> = candidates
            .iter()
            .zip(&out)
            .map(|(c, d)| d.is_none().then(|| plan(&oracle, c)))
            .collect();
        // Rounds: settle what is known, ask the open questions of all candidates at once
        // (a measured move may ask about its unitary after learning its outcome is certain).
        let mut answers: HashMap<LocalQuery, LocalAnswer> = HashMap::new();
        for round in 0..4 {
            // The round's questions in the order first asked, each once (`asked` finds a
            // repeat by hash: hundreds of questions are common, and a search of the list
            // for each took a quarter of a small state's listing).
            let mut wanted: Vec<LocalQuery> = Vec::new();
            let mut asked: HashSet<&LocalQuery> = HashSet::new();
            for (i, p) in plans.iter().enumerate() {
                let Some(p) = p else { continue };
                if out[i].is_some() {
                    continue;
                }
                match resolve(&oracle, p, &answers) {
                    Ok(v) => {
                        if round == 0 {
                            stats.by_marginals += 1;
                        } else {
                            stats.by_patterns += 1;
                        }
                        out[i] = Some(match v {
                            Verdict::Legal => true,
                            Verdict::NotLegal => false,
                            Verdict::Fallback => {
                                stats.fallback += 1;
                                if round == 0 {
                                    stats.by_marginals -= 1;
                                } else {
                                    stats.by_patterns -= 1;
                                }
                                self.reference_given(&candidates[i], &probs, budgeted)?
                            }
                        });
                    }
                    Err(qs) => {
                        for q in qs {
                            if !answers.contains_key(q) && asked.insert(q) {
                                wanted.push(q.clone());
                            }
                        }
                    }
                }
            }
            if wanted.is_empty() {
                break;
            }
            match self.state().local_effects(&wanted, CLEAR_MARGIN) {
                Ok(got) => {
                    stats.passes += 1;
                    answers.extend(wanted.into_iter().zip(got));
                }
                // A backend whose read-only pass copies its entries and has no room for
                // them: budgeted, that is the answer; otherwise the open candidates are
                // simulated below, as they always could be.
                Err(e) if budgeted => return Err(sim_error(e)),
                Err(_) => break,
            }
        }
        let mut decided = Vec::with_capacity(candidates.len());
        for (d, c) in out.iter().zip(candidates) {
            decided.push(match d {
                Some(d) => *d,
                None => {
                    stats.fallback += 1;
                    self.reference_given(c, &probs, budgeted)?
                }
            });
        }
        Ok((decided, stats))
    }
}
