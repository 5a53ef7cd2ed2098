//! Eigenvalues of small Hermitian matrices: cyclic Jacobi on the real symmetric form
//! [[Re, -Im], [Im, Re]], whose spectrum is the Hermitian one with every value twice.

use num_complex::Complex64;

/// The eigenvalues of the Hermitian matrix `m` (only its Hermitian part is read), ascending.
///
/// ```
/// use num_complex::Complex64;
/// use qchess_cantwell::analysis::hermitian_eigenvalues;
/// let y = [[Complex64::new(0.0, 0.0), Complex64::new(0.0, -1.0)],
///          [Complex64::new(0.0, 1.0), Complex64::new(0.0, 0.0)]]; // Pauli Y
/// let ev = hermitian_eigenvalues(&y);
/// assert!((ev[0] + 1.0).abs() < 1e-12 && (ev[1] - 1.0).abs() < 1e-12);
/// ```
pub fn hermitian_eigenvalues<const N: usize>(m: &[[Complex64; N]; N]) -> [f64; N] {
    // The real form is 2N x 2N; N <= 4 in this crate, so a Vec is simplest.
    let n2 = 2 * N;
    let mut a = vec![vec![0.0f64; n2]; n2];
    for i in 0..N {
        for j in 0..N {
            // Symmetrise: (m + m^dagger) / 2 guards against rounding in the input.
            let z = (m[i][j] + m[j][i].conj()) * 0.5;
            a[i][j] = z.re;
            a[i + N][j + N] = z.re;
            a[i][j + N] = -z.im;
            a[i + N][j] = z.im;
        }
    }
    jacobi(&mut a);
    let mut diag: Vec<f64> = (0..n2).map(|i| a[i][i]).collect();
    diag.sort_by(f64::total_cmp);
    // Each eigenvalue appears twice in the sorted diagonal.
    let mut out = [0.0; N];
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = 0.5 * (diag[2 * k] + diag[2 * k + 1]);
    }
    out
}

/// Cyclic Jacobi rotations until the off-diagonal part vanishes (to rounding).
fn jacobi(a: &mut [Vec<f64>]) {
    let n = a.len();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        let scale: f64 = (0..n).map(|i| a[i][i] * a[i][i]).sum::<f64>() + off;
        if off <= 1e-30 * scale.max(1e-300) {
            return;
        }
        for p in 0..n {
            for q in p + 1..n {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (low, high) = a.split_at_mut(q);
                for (apk, aqk) in low[p].iter_mut().zip(high[0].iter_mut()) {
                    let (x, y) = (*apk, *aqk);
                    *apk = c * x - s * y;
                    *aqk = s * x + c * y;
                }
            }
        }
    }
}
