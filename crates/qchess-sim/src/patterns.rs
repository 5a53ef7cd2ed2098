//! Read-only reads of many occupancy patterns at once, and of one controlled iSwap's overlap
//! `<psi|iSwap|psi>`, straight from the stored (physical) keys: what a legal-move listing
//! needs to decide Definition 2 for every candidate without simulating any of them.
//!
//! Pattern weights: the patterns are grouped by the physical bits they read (at most
//! [`GROUP_BITS`] bits per group), one joint histogram over each group's bits is filled in a
//! single pass over the keys (fixed-size chunks in parallel, summed in chunk order so the
//! result does not depend on the thread count), and every pattern is then answered from its
//! group's histogram.

use crate::amplitude::Amplitude;
use crate::state::State;
use num_complex::Complex;
use rayon::prelude::*;

/// Most physical bits one histogram covers (2^14 f64 = 128 KiB per group and chunk).
const GROUP_BITS: u32 = 14;

/// Keys per parallel chunk; fixed, so sums do not depend on the thread count.
const CHUNK: usize = 1 << 16;

/// One histogram group: its physical bits (ascending) and, for each key byte the group
/// reads, the compressed index bits of every byte value.
struct Group {
    bits: Vec<u32>,
    tables: Vec<(u32, Box<[u32; 256]>)>,
}

impl Group {
    fn new(support: u64) -> Self {
        let bits: Vec<u32> = (0..64).filter(|&b| support >> b & 1 == 1).collect();
        let mut tables = Vec::new();
        for byte in 0..8u32 {
            if (support >> (8 * byte)) & 0xff == 0 {
                continue;
            }
            let mut t = Box::new([0u32; 256]);
            for (v, slot) in t.iter_mut().enumerate() {
                *slot = Self::compress_with(&bits, (v as u64) << (8 * byte));
            }
            tables.push((8 * byte, t));
        }
        Group { bits, tables }
    }

    fn compress_with(bits: &[u32], key: u64) -> u32 {
        bits.iter()
            .enumerate()
            .fold(0, |acc, (i, &b)| acc | (((key >> b) & 1) as u32) << i)
    }

    fn compress(&self, key: u64) -> u32 {
        Self::compress_with(&self.bits, key)
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        let mut idx = 0u32;
        for (shift, t) in &self.tables {
            idx |= t[((key >> shift) & 0xff) as usize];
        }
        idx as usize
    }

    fn size(&self) -> usize {
        1usize << self.bits.len()
    }
}

impl<T: Amplitude> State<T> {
    /// The squares occupied on every stored board and on some stored board, as logical
    /// masks `(always, ever)`; `(!0, 0)` for a state with no entry. One read-only pass.
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b101);
    /// s.split(0, 1, 3, Controls::NONE)?;
    /// assert_eq!(s.occupancy_bounds(), (0b100, 0b1110));
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn occupancy_bounds(&self) -> (u64, u64) {
        let (mut always, mut ever) = (!0u64, 0u64);
        for s in &self.sectors {
            for &k in &s.keys {
                always &= k;
                ever |= k;
            }
        }
        if ever == 0 && always == !0 {
            return (always, ever);
        }
        (self.perm.to_logical(always), self.perm.to_logical(ever))
    }

    /// For each pattern `(mask, value, any)` on logical board bits, the probability (ancillas
    /// summed over, relative to the state's norm) of the boards with `board & mask == value`
    /// and, when `any != 0`, `board & any != 0`. Exactly `0.0` when no stored board with a
    /// non-zero weight matches. One read-only pass over the keys for all patterns: patterns
    /// are grouped by the bits they read and answered from one small joint histogram per
    /// group (patterns reading more than 14 bits are checked key by key).
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let w = s.pattern_weights(&[(0b011, 0b010, 0), (0b001, 0, 0b110), (0b100, 0b100, 0)]);
    /// assert!((w[0] - s.probability(Predicate::One(1))).abs() < 1e-15);
    /// assert!((w[1] - 1.0).abs() < 1e-15);
    /// assert!((w[2] - 0.5).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn pattern_weights(&self, patterns: &[(u64, u64, u64)]) -> Vec<f64> {
        // Physical patterns; the ones too wide for a histogram are checked directly.
        let phys: Vec<(u64, u64, u64)> = patterns
            .iter()
            .map(|&(m, v, a)| {
                (
                    self.perm.to_phys(m),
                    self.perm.to_phys(v & m),
                    self.perm.to_phys(a),
                )
            })
            .collect();
        // Group the supports first fit, widest first (a group's bits never exceed the cap).
        let mut supports: Vec<u64> = phys
            .iter()
            .map(|&(m, _, a)| m | a)
            .filter(|s| s.count_ones() <= GROUP_BITS)
            .collect();
        supports.sort_unstable_by(|x, y| y.count_ones().cmp(&x.count_ones()).then(x.cmp(y)));
        supports.dedup();
        let mut group_bits: Vec<u64> = Vec::new();
        for &sup in &supports {
            if group_bits.iter().any(|&g| g & sup == sup) {
                continue;
            }
            // The group that grows least.
            let best = group_bits
                .iter()
                .enumerate()
                .filter(|&(_, &g)| (g | sup).count_ones() <= GROUP_BITS)
                .min_by_key(|&(_, &g)| ((g | sup) & !g).count_ones())
                .map(|(i, _)| i);
            match best {
                Some(i) => group_bits[i] |= sup,
                None => group_bits.push(sup),
            }
        }
        let groups: Vec<Group> = group_bits.iter().map(|&g| Group::new(g)).collect();
        let offsets: Vec<usize> = groups
            .iter()
            .scan(0usize, |acc, g| {
                let o = *acc;
                *acc += g.size();
                Some(o)
            })
            .collect();
        let hist_len: usize = groups.iter().map(Group::size).sum();
        let wide: Vec<usize> = (0..phys.len())
            .filter(|&i| (phys[i].0 | phys[i].2).count_ones() > GROUP_BITS)
            .collect();
        let holds = |(m, v, a): (u64, u64, u64), k: u64| k & m == v && (a == 0 || k & a != 0);
        // One pass: histograms and the wide patterns' sums, chunk by chunk.
        let chunk_sums = |keys: &[u64], amps: &[Complex<T>]| -> (Vec<f64>, Vec<f64>, f64) {
            let mut h = vec![0.0f64; hist_len];
            let mut w = vec![0.0f64; wide.len()];
            let mut total = 0.0;
            for (&k, a) in keys.iter().zip(amps) {
                let p = a.re.as_f64().powi(2) + a.im.as_f64().powi(2);
                total += p;
                for (g, &o) in groups.iter().zip(&offsets) {
                    h[o + g.index(k)] += p;
                }
                for (wi, &i) in w.iter_mut().zip(&wide) {
                    if holds(phys[i], k) {
                        *wi += p;
                    }
                }
            }
            (h, w, total)
        };
        let parts: Vec<(Vec<f64>, Vec<f64>, f64)> = self
            .sectors
            .iter()
            .flat_map(|s| s.keys.chunks(CHUNK).zip(s.amps.chunks(CHUNK)))
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(k, a)| chunk_sums(k, a))
            .collect();
        let mut hist = vec![0.0f64; hist_len];
        let mut wide_w = vec![0.0f64; wide.len()];
        let mut total = 0.0;
        for (h, w, t) in &parts {
            for (x, y) in hist.iter_mut().zip(h) {
                *x += y;
            }
            for (x, y) in wide_w.iter_mut().zip(w) {
                *x += y;
            }
            total += t;
        }
        let scale = if total > 0.0 { 1.0 / total } else { 0.0 };
        let mut out = vec![0.0f64; phys.len()];
        for (i, w) in wide.iter().zip(&wide_w) {
            out[*i] = w * scale;
        }
        for (i, &(m, v, a)) in phys.iter().enumerate() {
            let sup = m | a;
            if sup.count_ones() > GROUP_BITS {
                continue;
            }
            let g = group_bits
                .iter()
                .position(|&g| g & sup == sup)
                .expect("every narrow support is in a group");
            let group = &groups[g];
            let (cm, cv, ca) = (group.compress(m), group.compress(v), group.compress(a));
            let h = &hist[offsets[g]..offsets[g] + group.size()];
            let sum: f64 = h
                .iter()
                .enumerate()
                .filter(|&(idx, _)| {
                    let idx = idx as u32;
                    idx & cm == cv && (ca == 0 || idx & ca != 0)
                })
                .map(|(_, &x)| x)
                .sum();
            out[i] = sum * scale;
        }
        out
    }

    /// `<psi|U|psi> / <psi|psi>` for `U` the iSwap (eq. 4a) on logical qubits `a`, `b`
    /// controlled on the logical squares `empty` being 0, without applying it: one read-only
    /// pass (each active key's partner found by binary search in its sorted sector). The
    /// state is unchanged by `U` up to a global phase exactly when the modulus is 1.
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?; // (|01> + i|10>)/sqrt2 -> (-|01> + i|10>)/sqrt2
    /// assert!(s.iswap_overlap(0, 1, 0).norm() < 1e-15);
    /// let both = State::<f64>::classical(0b11); // not active: unchanged
    /// assert!((both.iswap_overlap(0, 1, 0).re - 1.0).abs() < 1e-15);
    /// let blocked = State::<f64>::classical(0b101); // the control square 2 is occupied
    /// assert!((blocked.iswap_overlap(0, 1, 0b100).re - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap_overlap(&self, a: u8, b: u8, empty: u64) -> Complex<f64> {
        let (pa, pb) = (self.perm.phys(a), self.perm.phys(b));
        let flip = (1u64 << pa) | (1u64 << pb);
        let ce = self.perm.to_phys(empty) & !flip;
        let to64 = |x: Complex<T>| Complex::new(x.re.as_f64(), x.im.as_f64());
        let i = Complex::new(0.0, 1.0);
        let parts: Vec<(Complex<f64>, f64)> = self
            .sectors
            .iter()
            .flat_map(|s| {
                (0..s.keys.len())
                    .step_by(CHUNK)
                    .map(move |start| (s, start))
            })
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(s, start)| {
                let end = (start + CHUNK).min(s.keys.len());
                let mut sum = Complex::new(0.0, 0.0);
                let mut norm = 0.0;
                for j in start..end {
                    let (k, x) = (s.keys[j], to64(s.amps[j]));
                    norm += x.norm_sqr();
                    let bits = k & flip;
                    if k & ce != 0 || bits == 0 || bits == flip {
                        sum += x.norm_sqr();
                    } else if let Ok(p) = s.keys.binary_search(&(k ^ flip)) {
                        sum += to64(s.amps[p]).conj() * i * x;
                    }
                }
                (sum, norm)
            })
            .collect();
        let (sum, norm) = parts
            .iter()
            .fold((Complex::new(0.0, 0.0), 0.0), |(s, n), (x, m)| {
                (s + x, n + m)
            });
        if norm > 0.0 { sum / norm } else { sum }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Complex, Controls, Key, Normalization, State};
    use rand::{Rng, SeedableRng};

    /// Random keys over 24 low board bits in two ancilla sectors, qubits relabelled by
    /// uncontrolled iSwaps (so physical and logical keys differ).
    fn random_state(n: usize, seed: u64) -> State<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let entries: Vec<(Key, Complex<f64>)> = (0..n)
            .map(|_| {
                let key = Key {
                    board: rng.random::<u64>() & 0xff_ffff,
                    ancillas: u128::from(rng.random::<bool>()),
                };
                let a = Complex::new(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
                (key, a)
            })
            .collect();
        let mut entries = entries;
        entries.sort_by_key(|e| e.0);
        entries.dedup_by_key(|e| e.0);
        let mut s = State::from_amplitudes(entries, Normalization::Renormalize).unwrap();
        s.iswap(0, 17, Controls::NONE).unwrap();
        s.iswap(3, 40, Controls::NONE).unwrap();
        s.iswap(40, 9, Controls::NONE).unwrap();
        s
    }

    #[test]
    fn pattern_weights_match_a_board_by_board_sum() {
        let s = random_state(20_000, 5);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut patterns: Vec<(u64, u64, u64)> = (0..300)
            .map(|_| {
                // 1-5 bits of mask, an `any` of up to 4 bits now and then.
                let mut mask = 0u64;
                for _ in 0..rng.random_range(1..=5) {
                    mask |= 1 << rng.random_range(0..26);
                }
                let value = rng.random::<u64>() & mask;
                let mut any = 0u64;
                if rng.random::<bool>() {
                    for _ in 0..rng.random_range(1..=4) {
                        any |= 1 << rng.random_range(0..26);
                    }
                }
                (mask, value, any)
            })
            .collect();
        patterns.push((0xffff, 0, 0xff_0000)); // wider than one histogram: checked directly
        patterns.push((1 << 30, 1 << 30, 0)); // never occupied: exactly 0
        let got = s.pattern_weights(&patterns);
        let entries: Vec<(Key, Complex<f64>)> = s.entries().collect();
        for (&(m, v, a), g) in patterns.iter().zip(&got) {
            let want: f64 = entries
                .iter()
                .filter(|(k, _)| k.board & m == v && (a == 0 || k.board & a != 0))
                .map(|(_, x)| x.norm_sqr())
                .sum();
            assert!((g - want).abs() < 1e-12, "{m:x} {v:x} {a:x}: {g} vs {want}");
            if want == 0.0 {
                assert_eq!(*g, 0.0);
            }
        }
        assert_eq!(got[patterns.len() - 1], 0.0);
        let (always, ever) = s.occupancy_bounds();
        let want_ever = entries.iter().fold(0, |e, (k, _)| e | k.board);
        let want_always = entries.iter().fold(!0, |e, (k, _)| e & k.board);
        assert_eq!((always, ever), (want_always, want_ever));
    }

    #[test]
    fn iswap_overlap_matches_the_simulated_gate() {
        let s = random_state(5_000, 6);
        for (a, b, empty) in [
            (0u8, 1u8, 0u64),
            (17, 3, 0b100),
            (9, 40, 0x30),
            (2, 5, 1 << 9),
        ] {
            let mut copy = s.clone();
            copy.iswap(a, b, Controls::empty_path(empty)).unwrap();
            let want = s.inner(&copy) / s.norm_sqr();
            let got = s.iswap_overlap(a, b, empty);
            assert!((got - want).norm() < 1e-12, "{a} {b}: {got} vs {want}");
        }
        // An eigenvector: (|01> + |10>)/sqrt2 picks up the phase i.
        let e = State::<f64>::from_amplitudes(
            vec![
                (Key::board(0b01), Complex::new(1.0, 0.0)),
                (Key::board(0b10), Complex::new(1.0, 0.0)),
            ],
            Normalization::Renormalize,
        )
        .unwrap();
        let o = e.iswap_overlap(0, 1, 0);
        assert!((o - Complex::new(0.0, 1.0)).norm() < 1e-15, "{o}");
    }
}
