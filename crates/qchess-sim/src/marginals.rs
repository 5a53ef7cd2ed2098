//! The marginals of a few qubits (a game move's touched squares) in one pass with a kernel
//! compiled per count of qubits: [`State::marginals_of`].

use crate::amplitude::Amplitude;
use crate::state::State;
use num_complex::Complex;
// hashbrown's default hasher (foldhash) for the batch's shapes and the sampled groups: both
// maps are hashed per question or per sampled group and never iterated.

/// Entries per partial sum of [`marginals_of_block`]: with equal weights a long running
/// sum's rounding errors all lean the same way, so every 1024 entries start afresh.
const PARTIAL: usize = 1024;

/// `(sums of |a|^2 where key & masks[j] != 0, sum of all |a|^2)` over one block, for `N`
/// masks known at compile time: two interleaved lanes of entries, so that consecutive
/// entries do not wait on one another's additions.
fn marginals_of_block<T: Amplitude, const N: usize>(
    keys: &[u64],
    amps: &[Complex<T>],
    masks: &[u64; N],
) -> ([f64; N], f64) {
    let (mut sums, mut norm) = ([0.0f64; N], 0.0f64);
    for (ks, az) in keys.chunks(PARTIAL).zip(amps.chunks(PARTIAL)) {
        let (mut part, mut t) = ([[0.0f64; N]; 2], [0.0f64; 2]);
        let pairs = ks.chunks_exact(2).zip(az.chunks_exact(2));
        let rest = (
            ks.chunks_exact(2).remainder(),
            az.chunks_exact(2).remainder(),
        );
        for (k2, a2) in pairs {
            for (l, (k, a)) in k2.iter().zip(a2).enumerate() {
                let w = crate::kernels::scan::norm2(*a);
                t[l] += w;
                for (x, m) in part[l].iter_mut().zip(masks) {
                    *x += if k & m != 0 { w } else { 0.0 };
                }
            }
        }
        for (k, a) in rest.0.iter().zip(rest.1) {
            let w = crate::kernels::scan::norm2(*a);
            t[0] += w;
            for (x, m) in part[0].iter_mut().zip(masks) {
                *x += if k & m != 0 { w } else { 0.0 };
            }
        }
        for ((x, a), b) in sums.iter_mut().zip(&part[0]).zip(&part[1]) {
            *x += a + b;
        }
        norm += t[0] + t[1];
    }
    (sums, norm)
}

/// [`marginals_of_block`] over every sector, blocks in parallel, summed in block order
/// (the result does not depend on the thread count).
fn marginals_of_n<T: Amplitude, const N: usize>(
    state: &State<T>,
    masks: &[u64; N],
) -> ([f64; N], f64) {
    let (mut sums, mut norm) = ([0.0f64; N], 0.0f64);
    for s in &state.sectors {
        let parts = crate::kernels::scan::map_blocks(s.keys.len(), |a, b| {
            marginals_of_block::<T, N>(&s.keys[a..b], &s.amps[a..b], masks)
        });
        for (p, t) in parts {
            for (x, y) in sums.iter_mut().zip(p) {
                *x += y;
            }
            norm += t;
        }
    }
    (sums, norm)
}

impl<T: Amplitude> State<T> {
    /// Probability that each of `qubits` is 1: [`State::qubit_probabilities_of`] with one
    /// compiled kernel per count of qubits (up to [`crate::MARGINALS_OF_MAX`], 8), two
    /// interleaved lanes of entries and partial sums of 1024 entries; the touched-squares read
    /// of a game move. More qubits are read from [`State::qubit_probabilities`]. A qubit out
    /// of range gets 0.
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let p = s.marginals_of(&[2, 0, 1, 64]);
    /// assert!((p[0] - 0.5).abs() < 1e-15 && p[1] == 0.0 && (p[2] - 0.5).abs() < 1e-15);
    /// assert_eq!(p[3], 0.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn marginals_of(&self, qubits: &[u8]) -> Vec<f64> {
        let mask = |q: u8| if q < 64 { 1u64 << self.perm.phys(q) } else { 0 };
        let m = |i: usize| mask(qubits[i]);
        let (sums, norm): (Vec<f64>, f64) = match qubits.len() {
            0 => return Vec::new(),
            1 => {
                let (s, n) = marginals_of_n(self, &[m(0)]);
                (s.to_vec(), n)
            }
            2 => {
                let (s, n) = marginals_of_n(self, &[m(0), m(1)]);
                (s.to_vec(), n)
            }
            3 => {
                let (s, n) = marginals_of_n(self, &[m(0), m(1), m(2)]);
                (s.to_vec(), n)
            }
            4 => {
                let (s, n) = marginals_of_n(self, &[m(0), m(1), m(2), m(3)]);
                (s.to_vec(), n)
            }
            5..=crate::MARGINALS_OF_MAX => {
                let mut masks = [0u64; crate::MARGINALS_OF_MAX];
                for (x, &q) in masks.iter_mut().zip(qubits) {
                    *x = mask(q);
                }
                let (s, n) = marginals_of_n(self, &masks);
                (s[..qubits.len()].to_vec(), n)
            }
            _ => {
                let all = self.qubit_probabilities();
                return qubits
                    .iter()
                    .map(|&q| all.get(usize::from(q)).copied().unwrap_or(0.0))
                    .collect();
            }
        };
        sums.iter()
            .map(|&p| if norm > 0.0 { p / norm } else { p })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::test_states::big_state;
    use crate::{QuantumState, State};

    #[test]
    fn marginals_of_match_the_full_marginals_for_every_count() {
        for (n, seed) in [(0usize, 1u64), (7, 2), (5000, 3), (300_000, 4)] {
            let s = if n == 0 {
                State::<f64>::classical(0b1011)
            } else {
                big_state(n, seed)
            };
            let all = s.qubit_probabilities();
            let pool: [u8; 12] = [0, 33, 5, 50, 7, 19, 20, 63, 1, 12, 64, 2];
            for count in 0..=pool.len() {
                let qs = &pool[..count];
                let got = s.marginals_of(qs);
                let old = s.qubit_probabilities_of(qs);
                assert_eq!(got.len(), count);
                for (i, &q) in qs.iter().enumerate() {
                    let want = all.get(usize::from(q)).copied().unwrap_or(0.0);
                    assert!(
                        (got[i] - want).abs() < 1e-13,
                        "n {n} count {count} q {q}: {} vs {want}",
                        got[i]
                    );
                    // The inspector's few-marginals read is this kernel.
                    assert_eq!(got[i].to_bits(), old[i].to_bits());
                }
            }
            // The trait's touched-squares read is this kernel.
            let via_trait = QuantumState::qubit_probabilities_of(&s, &[50, 5]);
            assert_eq!(via_trait, s.marginals_of(&[50, 5]));
        }
    }
}
