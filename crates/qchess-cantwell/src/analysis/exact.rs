//! The section 11 reproductions of [`paper_reproductions`](super::paper_reproductions)
//! replayed through the same layer-1 moves on an exact state (`State<Exact>`), with the
//! paper's values (rules-notes E1, E4, E5 applied) written exactly: every amplitude and
//! probability is compared with `==`, so the interference term of section 11.2 is 0, not
//! ~1e-17. `qchess demo --exact` prints these.

use super::reproduce::{Reproduction, paper_reproductions};
use crate::circuit::{CircuitError, OccupancyMove, apply_on};
use num_complex::Complex;
use qchess_board::Square;
use qchess_sim::{Exact, Key, Predicate, Probability, State};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// One amplitude of a step, exactly: the basis state, the paper's value and the engine's.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactRow {
    /// The basis state.
    pub key: Key,
    /// The paper's amplitude (after the errata), exact.
    pub paper: Complex<Exact>,
    /// The engine's amplitude, exact and normalised: `alpha / sqrt(N)` (the state is kept
    /// unnormalised; in these scripts `sqrt(N)` always lies in Q(sqrt2)).
    pub engine: Complex<Exact>,
}

/// One move of an exact reproduction.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactStep {
    /// The move in the long form.
    pub mv: String,
    /// Where the paper gives the state after the move.
    pub equation: &'static str,
    /// Every amplitude the paper lists, with the engine's exact value.
    pub rows: Vec<ExactRow>,
    /// Engine basis states the paper does not list (0 when the engine agrees).
    pub unlisted: usize,
    /// The squared norm `N` of the engine's unnormalised state after the move.
    pub norm: Probability,
}

/// An exact replay of one of the paper's results, beside its float replay.
#[derive(Debug, Clone)]
pub struct ExactReproduction {
    /// The float reproduction (title, basis, notes, the same moves).
    pub float: Reproduction,
    /// The moves and exact states.
    pub steps: Vec<ExactStep>,
    /// Final occupation probabilities the paper states: (square, paper, engine), exact.
    pub probabilities: Vec<(Square, Probability, Probability)>,
}

impl ExactReproduction {
    /// Whether every amplitude and probability equals the paper's exactly.
    pub fn matches(&self) -> bool {
        self.steps
            .iter()
            .all(|s| s.unlisted == 0 && s.rows.iter().all(|r| r.paper == r.engine))
            && self.probabilities.iter().all(|(_, p, e)| p == e)
    }
}

/// The paper's exact values for one reproduction: the starting squares, per step the listed
/// amplitudes as `(re, im)` strings in the order of the float script, and the stated
/// probabilities.
struct Table {
    start: &'static [Square],
    steps: &'static [&'static [(&'static str, &'static str)]],
    probabilities: &'static [&'static str],
}

const H: &str = "1/2*sqrt2"; // 1/sqrt2
const MH: &str = "-1/2*sqrt2";

use Square as S;

/// In the order of `paper_reproductions`.
const TABLES: [Table; 5] = [
    // Eq. 45-48.
    Table {
        start: &[S::A1],
        steps: &[
            &[("0", H), ("0", H)],
            &[("0", H), (MH, "0")],
            &[(MH, "0"), (MH, "0")],
            &[(MH, "0"), ("0", MH)],
            &[(MH, "0"), (H, "0")],
        ],
        probabilities: &[],
    },
    // Eq. 49-51.
    Table {
        start: &[S::B3, S::B1, S::C1],
        steps: &[
            &[("0", H), ("0", H)],
            &[("0", H), ("0", MH)],
            &[(MH, "0"), ("0", H)],
            &[("0", MH), ("0", H)],
            &[(H, "0"), ("0", H)],
            &[("0", H), ("0", H)],
        ],
        probabilities: &[],
    },
    // Section 11.2 (E1): -(1/2 + 1/(2 sqrt2)), -i/2, -(1/2 - 1/(2 sqrt2)).
    Table {
        start: &[S::A1],
        steps: &[
            &[("0", H), ("0", H)],
            &[("-1/2", "0"), ("-1/2", "0"), ("0", H)],
            &[
                ("-1/2-1/4*sqrt2", "0"),
                ("0", "-1/2"),
                ("-1/2+1/4*sqrt2", "0"),
            ],
        ],
        probabilities: &["3/8+1/4*sqrt2", "1/4", "3/8-1/4*sqrt2", "0"],
    },
    // Section 11.2 with the last split b1^b2a1.
    Table {
        start: &[S::A1],
        steps: &[
            &[("0", H), ("0", H)],
            &[("-1/2", "0"), ("-1/2", "0"), ("0", H)],
            &[
                ("-1/2-1/4*sqrt2", "0"),
                ("0", "-1/2"),
                ("-1/2+1/4*sqrt2", "0"),
            ],
        ],
        probabilities: &["3/8+1/4*sqrt2", "1/4", "3/8-1/4*sqrt2", "0"],
    },
    // Rules-notes E5.
    Table {
        start: &[S::A1, S::C1],
        steps: &[&[(H, "0"), (MH, "0")], &[("-1", "0")]],
        probabilities: &[],
    },
];

fn exact(s: &str) -> Result<Exact, CircuitError> {
    s.parse()
        .map_err(|e| CircuitError::invalid(format!("paper value {s}: {e}")))
}

/// `alpha / root` exactly, if it lies in Z[i][1/sqrt2].
fn normalised(alpha: Complex<Exact>, root: &Probability) -> Result<Complex<Exact>, CircuitError> {
    let part = |x: Exact| -> Result<Exact, CircuitError> {
        let q = x
            .to_qsqrt2()
            .ok_or_else(|| CircuitError::invalid("an exact amplitude overflowed"))?;
        (&q / root)
            .to_exact()
            .ok_or_else(|| CircuitError::invalid(format!("{q} / {root} is not in Z[1/sqrt2]")))
    };
    Ok(Complex::new(part(alpha.re)?, part(alpha.im)?))
}

fn replay(float: Reproduction, table: &Table) -> Result<ExactReproduction, CircuitError> {
    if float.steps.len() != table.steps.len()
        || float.probabilities.len() != table.probabilities.len()
    {
        return Err(CircuitError::invalid(format!(
            "exact table for {} does not match its script",
            float.title
        )));
    }
    let board = table.start.iter().fold(0u64, |m, s| m | 1 << s.index());
    let mut state = State::<Exact>::classical(board);
    // Every measurement in these scripts is certain; the seed only fixes the (unused) draws.
    let mut rng = ChaCha8Rng::seed_from_u64(2019);
    let mut steps = Vec::with_capacity(table.steps.len());
    for (step, values) in float.steps.iter().zip(table.steps) {
        let mv: OccupancyMove = step.mv.parse()?;
        apply_on(&mut state, &mv, &mut rng)?;
        if step.amplitudes.len() != values.len() {
            return Err(CircuitError::invalid(format!(
                "exact table for {} at {}: {} values for {} rows",
                float.title,
                step.mv,
                values.len(),
                step.amplitudes.len()
            )));
        }
        let norm = state.norm_exact()?;
        let root = norm
            .sqrt()
            .ok_or_else(|| CircuitError::invalid(format!("sqrt({norm}) is not in Q(sqrt2)")))?;
        let rows = step
            .amplitudes
            .iter()
            .zip(values.iter())
            .map(|(row, &(re, im))| {
                Ok(ExactRow {
                    key: row.key,
                    paper: Complex::new(exact(re)?, exact(im)?),
                    engine: normalised(state.amplitude(row.key), &root)?,
                })
            })
            .collect::<Result<Vec<_>, CircuitError>>()?;
        let unlisted = state
            .entries()
            .filter(|(k, _)| !rows.iter().any(|r| r.key == *k))
            .count();
        steps.push(ExactStep {
            mv: step.mv.clone(),
            equation: step.equation,
            rows,
            unlisted,
            norm,
        });
    }
    let probabilities = float
        .probabilities
        .iter()
        .zip(table.probabilities)
        .map(|(&(square, _, _), paper)| {
            let paper: Probability = paper
                .parse()
                .map_err(|e| CircuitError::invalid(format!("paper value {paper}: {e}")))?;
            let engine = state.probability_exact(Predicate::One(square.index()))?;
            Ok((square, paper, engine))
        })
        .collect::<Result<Vec<_>, CircuitError>>()?;
    Ok(ExactReproduction {
        float,
        steps,
        probabilities,
    })
}

/// Every reproduction of [`paper_reproductions`](super::paper_reproductions), replayed in
/// exact arithmetic.
///
/// ```
/// let all = qchess_cantwell::analysis::exact_reproductions().unwrap();
/// assert!(all.iter().all(|r| r.matches()));
/// // Section 11.2: p(a2) is exactly 0 and p(a1) exactly 3/8 + sqrt2/4.
/// let p = &all[2].probabilities;
/// assert!(p[3].2.to_string() == "0" && p[0].2.to_string() == "3/8+1/4*sqrt2");
/// ```
pub fn exact_reproductions() -> Result<Vec<ExactReproduction>, CircuitError> {
    paper_reproductions()?
        .into_iter()
        .zip(TABLES.iter())
        .map(|(float, table)| replay(float, table))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_is_exactly_the_papers() {
        let all = exact_reproductions().unwrap();
        assert_eq!(all.len(), 5);
        for r in &all {
            assert!(r.matches(), "{}", r.float.title);
            // The exact values round to the float replay's.
            for (s, f) in r.steps.iter().zip(&r.float.steps) {
                for (x, y) in s.rows.iter().zip(&f.amplitudes) {
                    let d = Complex::new(x.engine.re.to_f64(), x.engine.im.to_f64()) - y.engine;
                    assert!(d.norm() < 1e-15);
                }
            }
        }
        // A wrong paper value is caught: exact equality is not a tolerance.
        let mut broken = all[2].clone();
        broken.steps[2].rows[0].paper.re =
            exact("-1/2-1/4*sqrt2").unwrap() + Exact::from_dyadic(1, 60);
        assert!(!broken.matches());
    }
}
