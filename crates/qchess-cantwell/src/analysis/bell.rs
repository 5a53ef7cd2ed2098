//! Bell measures of two squares: the overlap of their reduced state with the eight maximally
//! entangled states (|01> + i^k|10>)/sqrt 2 and (|00> + i^k|11>)/sqrt 2, k = 0..3.

use num_complex::Complex64;
use qchess_sim::{QuantumState, State};

/// A two-qubit density matrix, index = 2 * bit_a + bit_b (as
/// [`qchess_sim::QuantumState::reduced_density_matrix`] returns it).
pub type DensityMatrix = [[Complex64; 4]; 4];

/// The expectation values of the projectors onto the eight Bell-type states of two squares.
///
/// `psi[k]` is <psi_k| rho |psi_k> with psi_k = (|01> + i^k |10>)/sqrt 2 and `phi[k]` the same
/// for phi_k = (|00> + i^k |11>)/sqrt 2. So `psi[0]` is Psi+, `psi[2]` Psi-, `phi[0]` Phi+,
/// `phi[2]` Phi- of the paper's eq. 41-44. Kets are |a b> with a the first square.
///
/// ```
/// use num_complex::Complex64;
/// use qchess_cantwell::analysis::BellMeasures;
/// let h = Complex64::new(0.5, 0.0);
/// let z = Complex64::new(0.0, 0.0);
/// // |Phi+><Phi+|
/// let rho = [[h, z, z, h], [z, z, z, z], [z, z, z, z], [h, z, z, h]];
/// let m = BellMeasures::of(&rho);
/// assert!((m.phi[0] - 1.0).abs() < 1e-12 && m.phi[2].abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BellMeasures {
    /// Overlaps with (|01> + i^k |10>)/sqrt 2, k = 0..3.
    pub psi: [f64; 4],
    /// Overlaps with (|00> + i^k |11>)/sqrt 2, k = 0..3.
    pub phi: [f64; 4],
}

impl BellMeasures {
    /// The eight measures of a two-qubit density matrix.
    pub fn of(rho: &DensityMatrix) -> Self {
        let mut psi = [0.0; 4];
        let mut phi = [0.0; 4];
        let mut phase = Complex64::new(1.0, 0.0);
        for k in 0..4 {
            psi[k] = overlap(rho, 1, 2, phase);
            phi[k] = overlap(rho, 0, 3, phase);
            phase *= Complex64::new(0.0, 1.0);
        }
        BellMeasures { psi, phi }
    }

    /// The measures of squares `a` and `b` (0..64) of `state`. With capture ancillas in the
    /// state the two squares' reduced state is in general mixed; the measures are still the
    /// expectation values of the projectors.
    pub fn of_squares(state: &State, a: u8, b: u8) -> Self {
        Self::of_squares_on(state, a, b)
    }

    /// [`BellMeasures::of_squares`] on any simulator backend.
    pub fn of_squares_on<S: QuantumState>(state: &S, a: u8, b: u8) -> Self {
        BellMeasures::of(&state.reduced_density_matrix(a, b))
    }

    /// The largest of the eight measures and its name (`"psi0"`..`"phi3"`).
    pub fn max(&self) -> (&'static str, f64) {
        const NAMES: [&str; 8] = [
            "psi0", "psi1", "psi2", "psi3", "phi0", "phi1", "phi2", "phi3",
        ];
        let values = self.psi.iter().chain(self.phi.iter()).copied();
        NAMES
            .into_iter()
            .zip(values)
            .fold(("psi0", f64::NEG_INFINITY), |best, x| {
                if x.1 > best.1 { x } else { best }
            })
    }
}

/// <v| rho |v> for v = (|x> + phase |y>)/sqrt 2.
fn overlap(rho: &DensityMatrix, x: usize, y: usize, phase: Complex64) -> f64 {
    let value = rho[x][x] + rho[y][y] + rho[x][y] * phase + phase.conj() * rho[y][x];
    0.5 * value.re
}
