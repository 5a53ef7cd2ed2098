//! Entanglement read-outs: log negativity of two squares, and the entanglement of one square
//! with everything else (the other squares and the capture ancillas).

use super::bell::DensityMatrix;
use super::hermitian::hermitian_eigenvalues;
use num_complex::Complex64;
use qchess_sim::{QuantumState, State};

/// The log negativity log2 ||rho^{T_b}||_1 of a two-qubit density matrix: 1 for a Bell state,
/// 0 for any separable state (rho^{T_b} is the partial transpose on the second qubit).
///
/// ```
/// use num_complex::Complex64;
/// use qchess_cantwell::analysis::log_negativity;
/// let h = Complex64::new(0.5, 0.0);
/// let z = Complex64::new(0.0, 0.0);
/// let bell = [[h, z, z, h], [z, z, z, z], [z, z, z, z], [h, z, z, h]];
/// assert!((log_negativity(&bell) - 1.0).abs() < 1e-12);
/// ```
pub fn log_negativity(rho: &DensityMatrix) -> f64 {
    let pt = partial_transpose(rho);
    let trace_norm: f64 = hermitian_eigenvalues(&pt).iter().map(|l| l.abs()).sum();
    trace_norm.max(1.0).log2()
}

/// The partial transpose on the second qubit: (a b),(a' b') <- (a b'),(a' b).
pub fn partial_transpose(rho: &DensityMatrix) -> DensityMatrix {
    let mut out = [[Complex64::new(0.0, 0.0); 4]; 4];
    for a in 0..2 {
        for b in 0..2 {
            for a2 in 0..2 {
                for b2 in 0..2 {
                    out[2 * a + b][2 * a2 + b2] = rho[2 * a + b2][2 * a2 + b];
                }
            }
        }
    }
    out
}

/// The log negativity of squares `a` and `b` of `state`. The two squares' reduced state is
/// mixed in general (the other squares and the capture ancillas are traced out), so 0 means
/// "no entanglement that the partial transpose detects", not "a product state".
pub fn pair_log_negativity(state: &State, a: u8, b: u8) -> f64 {
    pair_log_negativity_on(state, a, b)
}

/// [`pair_log_negativity`] on any simulator backend.
pub fn pair_log_negativity_on<S: QuantumState>(state: &S, a: u8, b: u8) -> f64 {
    log_negativity(&state.reduced_density_matrix(a, b))
}

/// How much one square is entangled with the rest of the state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SquareEntanglement {
    /// The probability that the square is occupied.
    pub occupied: f64,
    /// The von Neumann entropy (bits) of the square's reduced state: 0 when the square is
    /// certainly empty or occupied, 1 for an equal superposition entangled with the rest.
    pub entropy: f64,
    /// The log negativity of the bipartition "this square | everything else", computed from the
    /// square's reduced state as for a pure whole: 2 log2(sqrt l0 + sqrt l1).
    pub log_negativity: f64,
}

/// The entanglement of square `q` with everything else in `state`.
///
/// The whole state (board qubits and capture ancillas) is pure, so the square's reduced state
/// determines the entanglement across the cut "square q | all other squares and ancillas":
/// the entropy is the entanglement entropy and the log negativity is exact for that cut.
/// The ancillas are on the other side of the cut: a square whose piece may have been captured
/// is entangled with the ancilla holding it.
///
/// ```
/// use qchess_cantwell::analysis::square_entanglement;
/// use qchess_cantwell::circuit::apply;
/// use qchess_sim::State;
/// use rand::SeedableRng;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
/// let mut state = State::classical(1); // a king on a1
/// apply(&mut state, &"a1^a2b1:SPLIT_JUMP:BASIC".parse().unwrap(), &mut rng).unwrap();
/// let e = square_entanglement(&state, 8); // a2
/// assert!((e.entropy - 1.0).abs() < 1e-12 && (e.log_negativity - 1.0).abs() < 1e-12);
/// ```
pub fn square_entanglement(state: &State, q: u8) -> SquareEntanglement {
    square_entanglement_on(state, q)
}

/// [`square_entanglement`] on any simulator backend.
pub fn square_entanglement_on<S: QuantumState>(state: &S, q: u8) -> SquareEntanglement {
    let other = if q == 0 { 1 } else { 0 };
    let rho = state.reduced_density_matrix(q, other);
    // Trace out the second square: rho_q[x][y] = sum_b rho[2x + b][2y + b].
    let mut single = [[Complex64::new(0.0, 0.0); 2]; 2];
    for (x, row) in single.iter_mut().enumerate() {
        for (y, slot) in row.iter_mut().enumerate() {
            *slot = rho[2 * x][2 * y] + rho[2 * x + 1][2 * y + 1];
        }
    }
    let ev = hermitian_eigenvalues(&single).map(|l| l.clamp(0.0, 1.0));
    let entropy = ev
        .iter()
        .filter(|&&l| l > 0.0)
        .map(|&l| -l * l.log2())
        .sum::<f64>();
    let root_sum = ev[0].sqrt() + ev[1].sqrt();
    SquareEntanglement {
        occupied: single[1][1].re,
        entropy: entropy.max(0.0),
        log_negativity: (2.0 * root_sum.log2()).max(0.0),
    }
}
