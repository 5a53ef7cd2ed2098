//! The paper's section 11 results replayed through real layer-1 moves, step by step, with the
//! paper's amplitudes (as corrected by rules-notes E1, E4, E5) beside the engine's. `qchess
//! demo` prints these; the tests assert them.

use super::bell::BellMeasures;
use super::entanglement::pair_log_negativity;
use crate::circuit::{CircuitError, OccupancyMove, apply};
use num_complex::Complex64;
use qchess_board::Square;
use qchess_sim::{Key, State};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One amplitude of a step: the basis state, the paper's value and the engine's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmplitudeRow {
    /// The basis state (board squares and capture ancillas).
    pub key: Key,
    /// The paper's amplitude (after the errata).
    pub paper: Complex64,
    /// The engine's amplitude.
    pub engine: Complex64,
}

/// Two squares' Bell read-out after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BellReadout {
    /// The first square (the first qubit of the Bell kets).
    pub a: Square,
    /// The second square.
    pub b: Square,
    /// The Bell measures of (a, b).
    pub measures: BellMeasures,
    /// Their log negativity.
    pub log_negativity: f64,
    /// Which Bell state the paper names here (`"Psi+"`, ...).
    pub paper_names: &'static str,
}

/// One move of a reproduction and the state after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The move in the long form.
    pub mv: String,
    /// Where the paper gives the state after the move (`eq. 45a`, `sec. 11.2, ...`).
    pub equation: &'static str,
    /// Every amplitude the paper lists, with the engine's value.
    pub amplitudes: Vec<AmplitudeRow>,
    /// The engine's probability weight on basis states the paper does not list (0 when the
    /// engine agrees).
    pub unlisted_weight: f64,
    /// A Bell read-out where the paper names a Bell state.
    pub bell: Option<BellReadout>,
}

impl Step {
    /// The largest |engine - paper| over the listed amplitudes, plus the unlisted weight.
    pub fn max_error(&self) -> f64 {
        let listed = self
            .amplitudes
            .iter()
            .map(|r| (r.engine - r.paper).norm())
            .fold(0.0, f64::max);
        listed + self.unlisted_weight.sqrt()
    }
}

/// A replay of one of the paper's results.
#[derive(Debug, Clone)]
pub struct Reproduction {
    /// What is reproduced.
    pub title: &'static str,
    /// The starting position, in words.
    pub setup: &'static str,
    /// The squares of the paper's kets, in the paper's order (|a2 b1 a1> is `[A2, B1, A1]`).
    pub basis: Vec<Square>,
    /// How many capture ancillas the paper's kets show (|x2 x1> is 2).
    pub ancillas: u32,
    /// Errata and readings that apply, in words.
    pub notes: Vec<&'static str>,
    /// The moves and states.
    pub steps: Vec<Step>,
    /// Final occupation probabilities the paper states: (square, paper, engine).
    pub probabilities: Vec<(Square, f64, f64)>,
}

impl Reproduction {
    /// Whether every step matches the paper to `tolerance`.
    pub fn matches(&self, tolerance: f64) -> bool {
        self.steps.iter().all(|s| s.max_error() <= tolerance)
            && self
                .probabilities
                .iter()
                .all(|(_, p, e)| (p - e).abs() <= tolerance)
    }

    /// The key as the paper writes it: `|x2 x1>|a3 b3 b2 b1 c1> = |00>|00111>` style, bits
    /// only (most significant first, as in the basis).
    pub fn ket(&self, key: Key) -> String {
        let board: String = self
            .basis
            .iter()
            .map(|sq| {
                if key.board >> sq.index() & 1 == 1 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        if self.ancillas == 0 {
            format!("|{board}>")
        } else {
            let anc: String = (0..self.ancillas)
                .rev()
                .map(|j| if key.ancillas >> j & 1 == 1 { '1' } else { '0' })
                .collect();
            format!("|{anc}>|{board}>")
        }
    }

    /// The basis as the paper writes it, e.g. `|x2 x1>|a3 b3 b2 b1 c1>`.
    pub fn basis_label(&self) -> String {
        let squares: Vec<String> = self.basis.iter().map(|s| s.to_string()).collect();
        let board = format!("|{}>", squares.join(" "));
        if self.ancillas == 0 {
            board
        } else {
            let anc: Vec<String> = (1..=self.ancillas).rev().map(|j| format!("x{j}")).collect();
            format!("|{}>{board}", anc.join(" "))
        }
    }
}

const H: f64 = std::f64::consts::FRAC_1_SQRT_2;

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

fn key(squares: &[Square], ancillas: u128) -> Key {
    Key {
        board: squares.iter().fold(0, |m, s| m | 1 << s.index()),
        ancillas,
    }
}

/// Runs `script` from `start`; each entry is a long-form move, its equation, the paper's
/// amplitudes after it, and an optional Bell read-out (a, b, names).
type ScriptLine<'a> = (
    &'a str,
    &'static str,
    Vec<(Key, Complex64)>,
    Option<(Square, Square, &'static str)>,
);

fn replay(
    start: &[Square],
    script: Vec<ScriptLine<'_>>,
) -> Result<(Vec<Step>, State), CircuitError> {
    let mut state = State::classical(key(start, 0).board);
    // Every measurement in these scripts is certain; the seed only fixes the (unused) draws.
    let mut rng = ChaCha8Rng::seed_from_u64(2019);
    let mut steps = Vec::with_capacity(script.len());
    for (text, equation, paper, bell) in script {
        let mv: OccupancyMove = text.parse()?;
        apply(&mut state, &mv, &mut rng)?;
        let amplitudes: Vec<AmplitudeRow> = paper
            .iter()
            .map(|&(key, paper)| AmplitudeRow {
                key,
                paper,
                engine: state.amplitude(key),
            })
            .collect();
        let unlisted_weight = state
            .entries()
            .filter(|(k, _)| !paper.iter().any(|(p, _)| p == k))
            .map(|(_, a)| a.norm_sqr())
            .sum();
        let bell = bell.map(|(a, b, paper_names)| BellReadout {
            a,
            b,
            measures: BellMeasures::of_squares(&state, a.index(), b.index()),
            log_negativity: pair_log_negativity(&state, a.index(), b.index()),
            paper_names,
        });
        steps.push(Step {
            mv: mv.to_string(),
            equation,
            amplitudes,
            unlisted_weight,
            bell,
        });
    }
    Ok((steps, state))
}

use Square as S;

/// Eq. 45-48: the pure Bell states Psi+ and Psi- with a single king (no capture, no ancilla).
///
/// ```
/// let r = qchess_cantwell::analysis::pure_bell_states().unwrap();
/// assert!(r.matches(1e-12));
/// ```
pub fn pure_bell_states() -> Result<Reproduction, CircuitError> {
    let script: Vec<ScriptLine> = vec![
        (
            "a1^a2b1:SPLIT_JUMP:BASIC",
            "eq. 45a",
            vec![(key(&[S::A2], 0), c(0.0, H)), (key(&[S::B1], 0), c(0.0, H))],
            None,
        ),
        (
            "b1a1:JUMP:BASIC",
            "eq. 45b",
            vec![
                (key(&[S::A2], 0), c(0.0, H)),
                (key(&[S::A1], 0), c(-H, 0.0)),
            ],
            None,
        ),
        (
            "b1a2:JUMP:BASIC",
            "eq. 45c, 46",
            vec![
                (key(&[S::B1], 0), c(-H, 0.0)),
                (key(&[S::A1], 0), c(-H, 0.0)),
            ],
            Some((S::B1, S::A1, "|a2> (x) |b1 a1> = -|0> (x) Psi+")),
        ),
        (
            "a1a2:JUMP:BASIC",
            "eq. 47a",
            vec![
                (key(&[S::B1], 0), c(-H, 0.0)),
                (key(&[S::A2], 0), c(0.0, -H)),
            ],
            None,
        ),
        (
            "a2a1:JUMP:BASIC",
            "eq. 47b, 48",
            vec![
                (key(&[S::B1], 0), c(-H, 0.0)),
                (key(&[S::A1], 0), c(H, 0.0)),
            ],
            Some((S::B1, S::A1, "|a2> (x) |b1 a1> = -|0> (x) Psi-")),
        ),
    ];
    let (steps, _) = replay(&[S::A1], script)?;
    Ok(Reproduction {
        title: "Pure Bell states (eq. 45-48)",
        setup: "a single king on a1",
        basis: vec![S::A2, S::B1, S::A1],
        ancillas: 0,
        notes: vec!["no capture happens, so the (b1, a1) state is genuinely pure"],
        steps,
        probabilities: Vec::new(),
    })
}

/// Eq. 49-51: Phi- and Phi+ through captures, with the two capture ancillas x1, x2 shown
/// (rules-notes E4).
///
/// ```
/// let r = qchess_cantwell::analysis::capture_bell_states().unwrap();
/// assert!(r.matches(1e-12));
/// ```
pub fn capture_bell_states() -> Result<Reproduction, CircuitError> {
    let (x1, x2) = (1u128, 2u128);
    let i = c(0.0, 1.0);
    let script: Vec<ScriptLine> = vec![
        (
            "b3^b2a3:SPLIT_JUMP:BASIC",
            "eq. 49a",
            vec![
                (key(&[S::B2, S::B1, S::C1], 0), i * H),
                (key(&[S::A3, S::B1, S::C1], 0), i * H),
            ],
            None,
        ),
        (
            "c1a3:SLIDE:CAPTURE",
            "eq. 49b",
            vec![
                (key(&[S::B2, S::B1, S::C1], 0), i * H),
                (key(&[S::A3, S::B1], x1), -i * H),
            ],
            None,
        ),
        (
            "b1a3:JUMP:CAPTURE",
            "eq. 49c",
            vec![
                (key(&[S::A3, S::B2, S::C1], 0), c(-H, 0.0)),
                (key(&[S::A3], x1 | x2), i * H),
            ],
            None,
        ),
        (
            "b2b1:JUMP:BASIC",
            "eq. 49d, 50",
            vec![
                (key(&[S::A3, S::B1, S::C1], 0), -i * H),
                (key(&[S::A3], x1 | x2), i * H),
            ],
            Some((
                S::B1,
                S::C1,
                "|a3> (x) |b1 c1> = i|1> (x) Phi- (board part only)",
            )),
        ),
        (
            "b1b2:JUMP:BASIC",
            "between eq. 50 and 51",
            vec![
                (key(&[S::A3, S::B2, S::C1], 0), c(H, 0.0)),
                (key(&[S::A3], x1 | x2), i * H),
            ],
            None,
        ),
        (
            "b2b1:JUMP:BASIC",
            "eq. 51",
            vec![
                (key(&[S::A3, S::B1, S::C1], 0), i * H),
                (key(&[S::A3], x1 | x2), i * H),
            ],
            Some((
                S::B1,
                S::C1,
                "|a3> (x) |b1 c1> = i|1> (x) Phi+ (board part only)",
            )),
        ),
    ];
    let (steps, _) = replay(&[S::B3, S::B1, S::C1], script)?;
    Ok(Reproduction {
        title: "Bell states through captures (eq. 49-51)",
        setup: "king on b3 and knight on b1 of one colour, bishop on c1 of the other",
        basis: vec![S::A3, S::B3, S::B2, S::B1, S::C1],
        ancillas: 2,
        notes: vec![
            "E4: the paper drops the capture ancillas; the two final branches carry x2 x1 = 00 and 11",
            "so the board part is i Phi-/Phi+, but the reduced (b1, c1) state is the mixture \
             (|00><00| + |11><11|)/2: overlap 1/2 with Phi- and Phi+, log negativity 0",
            "D4: the capture slide c1a3 measures eq. 23b; outcome 1 is certain here",
        ],
        steps,
        probabilities: Vec::new(),
    })
}

/// Section 11.2: three splits of a king on a1 interfere (rules-notes E1's exact values); with
/// `swapped_ending` the last split is `b1^b2a1`, which swaps the a1 and b2 values.
///
/// ```
/// let r = qchess_cantwell::analysis::interference(false).unwrap();
/// assert!(r.matches(1e-12));
/// assert!((r.probabilities[0].2 - 0.7285533905932737).abs() < 1e-15);
/// ```
pub fn interference(swapped_ending: bool) -> Result<Reproduction, CircuitError> {
    let big = 0.5 + 0.5 * H;
    let small = 0.5 - 0.5 * H;
    let (last, near, far) = if swapped_ending {
        ("b1^b2a1:SPLIT_JUMP:BASIC", S::B2, S::A1)
    } else {
        ("b1^a1b2:SPLIT_JUMP:BASIC", S::A1, S::B2)
    };
    let script: Vec<ScriptLine> = vec![
        (
            "a1^a2b1:SPLIT_JUMP:BASIC",
            "sec. 11.2, first split",
            vec![(key(&[S::A2], 0), c(0.0, H)), (key(&[S::B1], 0), c(0.0, H))],
            None,
        ),
        (
            "a2^a1b2:SPLIT_JUMP:BASIC",
            "sec. 11.2, second split",
            vec![
                (key(&[S::A1], 0), c(-0.5, 0.0)),
                (key(&[S::B2], 0), c(-0.5, 0.0)),
                (key(&[S::B1], 0), c(0.0, H)),
            ],
            None,
        ),
        (
            last,
            "sec. 11.2, third split (E1)",
            vec![
                (key(&[near], 0), c(-big, 0.0)),
                (key(&[S::B1], 0), c(0.0, -0.5)),
                (key(&[far], 0), c(-small, 0.0)),
            ],
            None,
        ),
    ];
    let (steps, state) = replay(&[S::A1], script)?;
    let p = state.qubit_probabilities();
    let engine = |sq: Square| p[sq.index() as usize];
    let probabilities = vec![
        (near, big * big, engine(near)),
        (S::B1, 0.25, engine(S::B1)),
        (far, small * small, engine(far)),
        (S::A2, 0.0, engine(S::A2)),
    ];
    Ok(Reproduction {
        title: if swapped_ending {
            "Interference, last split b1^b2a1 (section 11.2)"
        } else {
            "Interference (section 11.2)"
        },
        setup: "a single king on a1",
        basis: vec![S::B2, S::B1, S::A2, S::A1],
        ancillas: 0,
        notes: vec![
            "E1: the paper's final |1000> term is b2, not a2: p(a1) = (1/2 + 1/(2 sqrt 2))^2, \
             p(b1) = 1/4, p(b2) = (1/2 - 1/(2 sqrt 2))^2, p(a2) = 0",
        ],
        steps,
        probabilities,
    })
}

/// Rules-notes E5: pieces on a1 and c1; `a1^b1c1` then `b1c1^a1` ends on {a1, b1} with
/// certainty under the split's definition ({b1, c1} under the printed eq. 7).
///
/// ```
/// assert!(qchess_cantwell::analysis::split_definition_e5().unwrap().matches(1e-12));
/// ```
pub fn split_definition_e5() -> Result<Reproduction, CircuitError> {
    let script: Vec<ScriptLine> = vec![
        (
            "a1^b1c1:SPLIT_JUMP:BASIC",
            "eq. 8e with E5 (printed: i/sqrt 2 on |101>)",
            vec![
                (key(&[S::C1, S::A1], 0), c(H, 0.0)),
                (key(&[S::B1, S::A1], 0), c(-H, 0.0)),
            ],
            None,
        ),
        (
            "b1c1^a1:MERGE_JUMP:BASIC",
            "rules-notes E5",
            vec![(key(&[S::B1, S::A1], 0), c(-1.0, 0.0))],
            None,
        ),
    ];
    let (steps, _) = replay(&[S::A1, S::C1], script)?;
    Ok(Reproduction {
        title: "The split as defined, not as printed (rules-notes E5)",
        setup: "like pieces on a1 and c1",
        basis: vec![S::C1, S::B1, S::A1],
        ancillas: 0,
        notes: vec![
            "U_split = iSwap(s, t2) sqrt-iSwap(s, t1) (section 6.3, Fig. 14b); the printed eq. 7 \
             has its |101> row multiplied by i",
        ],
        steps,
        probabilities: Vec::new(),
    })
}

/// All the reproductions `qchess demo` shows, in order.
///
/// ```
/// let all = qchess_cantwell::analysis::paper_reproductions().unwrap();
/// assert!(all.iter().all(|r| r.matches(1e-12)));
/// ```
pub fn paper_reproductions() -> Result<Vec<Reproduction>, CircuitError> {
    Ok(vec![
        pure_bell_states()?,
        capture_bell_states()?,
        interference(false)?,
        interference(true)?,
        split_definition_e5()?,
    ])
}
