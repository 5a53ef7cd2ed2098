//! A digest of a state's entries up to a global phase: what a game compares to recognise a
//! repeated quantum position without keeping or copying the states. Two passes over the
//! entries, nothing allocated: the first finds the reference amplitude (the first sizeable
//! one in key order), the second adds one hash per entry after rotating the reference onto
//! the positive real axis and rounding. A sum is independent of the order the entries are
//! listed in, and sums of disjoint pieces add up (wrapping) to the whole state's, so a
//! distributed state digests its pieces where they lie.

use crate::key::Key;
use num_complex::Complex;
use std::hash::{Hash, Hasher};

/// Smallest modulus of an amplitude that may be the phase reference.
pub const REFERENCE_MIN: f64 = 1e-6;

/// The phase reference of `entries`: the entry of smallest `(ancillas, board)` whose
/// amplitude's modulus exceeds [`REFERENCE_MIN`], or `None` when there is none.
///
/// ```
/// use qchess_sim::{Complex, Key, digest};
/// let e = [
///     (Key::board(5), Complex::new(0.0, 0.6)),
///     (Key::board(2), Complex::new(1e-9, 0.0)),
///     (Key::board(3), Complex::new(0.8, 0.0)),
/// ];
/// assert_eq!(digest::phase_reference(e.into_iter()).unwrap().0, Key::board(3));
/// ```
pub fn phase_reference(
    entries: impl Iterator<Item = (Key, Complex<f64>)>,
) -> Option<(Key, Complex<f64>)> {
    entries
        .filter(|(_, a)| a.norm() > REFERENCE_MIN)
        .min_by_key(|(k, _)| (k.ancillas, k.board))
}

/// The rotation that takes the reference amplitude onto the positive real axis (1 when
/// there is no reference).
pub fn rotation(reference: Option<(Key, Complex<f64>)>) -> Complex<f64> {
    reference.map_or(Complex::new(1.0, 0.0), |(_, a)| a.conj() / a.norm())
}

/// `(count, sum)`: the number of `entries` and the wrapping sum of one hash per entry of its
/// key and its amplitude times `rot`, scaled by `scale` and rounded to integers. Equal sets
/// of entries (within the rounding) give equal digests, in any order; the digests of
/// disjoint pieces add up with [`add`].
///
/// ```
/// use qchess_sim::{Complex, Key, digest};
/// let e = vec![
///     (Key::board(1), Complex::new(0.6, 0.0)),
///     (Key::board(2), Complex::new(0.0, 0.8)),
/// ];
/// let rot = digest::rotation(digest::phase_reference(e.iter().copied()));
/// let whole = digest::digest_entries(e.iter().copied(), rot, 1e9);
/// let parts = digest::add(
///     digest::digest_entries(e[..1].iter().copied(), rot, 1e9),
///     digest::digest_entries(e[1..].iter().copied(), rot, 1e9),
/// );
/// assert_eq!(whole, parts);
/// assert_eq!(whole.0, 2);
/// ```
pub fn digest_entries(
    entries: impl Iterator<Item = (Key, Complex<f64>)>,
    rot: Complex<f64>,
    scale: f64,
) -> (u64, u64) {
    let (mut count, mut sum) = (0u64, 0u64);
    for (k, a) in entries {
        let a = a * rot;
        let mut e = std::collections::hash_map::DefaultHasher::new();
        (
            k.ancillas,
            k.board,
            (a.re * scale).round() as i64,
            (a.im * scale).round() as i64,
        )
            .hash(&mut e);
        sum = sum.wrapping_add(e.finish());
        count += 1;
    }
    (count, sum)
}

/// The digest of two disjoint pieces together.
pub fn add(a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
    (a.0.wrapping_add(b.0), a.1.wrapping_add(b.1))
}
