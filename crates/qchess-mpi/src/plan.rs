//! The pure parts of the distribution: which rank owns a key, the set L of local qubits and
//! how it changes when a gate needs a qubit outside it, and the cost model of that change.

/// Which of `ranks` ranks owns a board key when the local qubits `l_mask` are masked out:
/// a splitmix64 hash of `board & !l_mask`, mapped to `0..ranks` by a multiply-shift. Keys
/// that differ only inside L have the same owner, so every gate on qubits of L finds both
/// partners of each pair on one rank. Ancilla bits are not hashed (a capture of a qubit of
/// L keeps every entry on its rank).
///
/// ```
/// use qchess_mpi::plan::owner;
/// assert_eq!(owner(0b1011, 0b0011, 4), owner(0b1000, 0b0011, 4));
/// assert!(owner(12345, 0, 7) < 7);
/// assert_eq!(owner(99, 0, 1), 0);
/// ```
pub fn owner(board: u64, l_mask: u64, ranks: usize) -> usize {
    let mut z = (board & !l_mask).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    ((u128::from(z) * ranks as u128) >> 64) as usize
}

/// The set L of local qubits: at most `capacity` qubits, evicted least recently used first.
/// Every rank keeps an identical copy, updated by the same calls in the same order.
///
/// ```
/// use qchess_mpi::plan::LocalSet;
/// let mut l = LocalSet::new(3, &[0, 1, 2]);
/// assert_eq!(l.mask(), 0b111);
/// assert_eq!(l.plan(&[1, 2]), None); // already local: no exchange
/// // qubit 0 is the least recently used: 9 replaces it.
/// assert_eq!(l.plan(&[9]), Some(0b111 & !0b001 | 1 << 9));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalSet {
    capacity: usize,
    mask: u64,
    /// Logical time of each qubit's last use (0: never).
    last_use: [u64; 64],
    clock: u64,
}

/// The smallest capacity: a split or merge acts on three qubits at once.
pub const MIN_CAPACITY: usize = 3;

impl LocalSet {
    /// A set of `capacity` qubits (clamped to `3..=64`) starting as `initial` (extra qubits
    /// beyond the capacity are ignored; missing ones are filled from 0 upwards).
    pub fn new(capacity: usize, initial: &[u8]) -> Self {
        let capacity = capacity.clamp(MIN_CAPACITY, 64);
        let mut mask = 0u64;
        for &q in initial.iter().filter(|&&q| q < 64) {
            if (mask.count_ones() as usize) < capacity {
                mask |= 1 << q;
            }
        }
        let mut q = 0;
        while (mask.count_ones() as usize) < capacity {
            mask |= 1 << q;
            q += 1;
        }
        Self {
            capacity,
            mask,
            last_use: [0; 64],
            clock: 0,
        }
    }

    /// The qubits of L as a bit mask.
    pub fn mask(&self) -> u64 {
        self.mask
    }

    /// Most qubits L holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Marks `qubits` (each `< 64`, at most `capacity` distinct) as used now and returns the
    /// new mask of L if some of them are outside it (then the caller must redistribute the
    /// entries by the new mask), or `None` if they are all local already. Evicted qubits are
    /// the least recently used ones not among `qubits` (ties: the lowest index).
    pub fn plan(&mut self, qubits: &[u8]) -> Option<u64> {
        self.clock += 1;
        let mut need = 0u64;
        for &q in qubits {
            need |= 1 << q;
            self.last_use[usize::from(q)] = self.clock;
        }
        let missing = need & !self.mask;
        if missing == 0 {
            return None;
        }
        let mut mask = self.mask | missing;
        while mask.count_ones() as usize > self.capacity {
            let victim = (0..64u8)
                .filter(|&q| mask & !need & (1 << q) != 0)
                .min_by_key(|&q| (self.last_use[usize::from(q)], q));
            match victim {
                Some(v) => mask &= !(1 << v),
                None => break,
            }
        }
        self.mask = mask;
        Some(mask)
    }
}

/// Bytes one moved entry takes on the wire for `f64` and `f32` amplitudes: board key, 128
/// ancilla bits and the complex amplitude as two `f64`, five 64-bit words (an exact
/// amplitude's parts take five words each: 104 bytes an entry).
pub const WIRE_BYTES_PER_ENTRY: u64 = 40;

/// Expected bytes one exchange sends in total: the entries whose masked key changes (those
/// with a qubit entering or leaving L set, a fraction `changed` of `states`) are rehashed and
/// keep their rank with probability `1/ranks`.
///
/// ```
/// use qchess_mpi::plan::expected_exchange_bytes;
/// assert_eq!(expected_exchange_bytes(1000, 1, 1.0), 0.0);
/// assert_eq!(expected_exchange_bytes(1000, 4, 0.5), 1000.0 * 0.5 * 0.75 * 40.0);
/// ```
pub fn expected_exchange_bytes(states: u64, ranks: usize, changed: f64) -> f64 {
    let r = ranks.max(1) as f64;
    states as f64 * changed * (1.0 - 1.0 / r) * WIRE_BYTES_PER_ENTRY as f64
}

/// Expected bytes per gate: an exchange happens on a fraction `leave_rate` of gates.
///
/// ```
/// use qchess_mpi::plan::expected_bytes_per_gate;
/// assert_eq!(expected_bytes_per_gate(1000, 2, 0.5, 0.1), 1000.0 * 0.5 * 0.5 * 40.0 * 0.1);
/// ```
pub fn expected_bytes_per_gate(states: u64, ranks: usize, changed: f64, leave_rate: f64) -> f64 {
    leave_rate * expected_exchange_bytes(states, ranks, changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_ignores_local_bits_and_spreads_keys() {
        let l = 0xf0u64;
        let mut counts = [0usize; 4];
        for k in 0..4096u64 {
            let r = owner(k, l, 4);
            assert_eq!(r, owner(k ^ 0x50, l, 4));
            counts[r] += 1;
        }
        // 256 distinct masked keys, 16 keys each: every rank gets 16 * (64 +- 20).
        for c in counts {
            assert!((16 * 44..=16 * 84).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn local_set_evicts_least_recently_used() {
        let mut l = LocalSet::new(4, &[0, 1, 2, 3]);
        assert_eq!(l.plan(&[0, 1]), None);
        assert_eq!(l.plan(&[2]), None);
        // 3 never used, then 0/1 (time 1), 2 (time 2): 3 goes first.
        assert_eq!(l.plan(&[10]), Some(0b0111 | 1 << 10));
        // Now 0 and 1 are the oldest; 0 goes (lower index).
        assert_eq!(l.plan(&[20, 2]), Some(0b0110 | 1 << 10 | 1 << 20));
        assert_eq!(l.mask().count_ones(), 4);
        // A gate needing three new qubits evicts three.
        let m = l.plan(&[30, 31, 32]).unwrap();
        assert_eq!(m.count_ones(), 4);
        assert_eq!(m & (7 << 30), 7 << 30);
    }

    #[test]
    fn capacity_is_clamped() {
        assert_eq!(LocalSet::new(1, &[]).capacity(), 3);
        assert_eq!(LocalSet::new(99, &[]).mask(), u64::MAX);
    }
}
