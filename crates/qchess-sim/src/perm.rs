//! The logical-qubit -> physical-bit map. An uncontrolled iSwap swaps two entries of this map
//! (plus a phase pass) instead of moving any data; keys are stored and sorted by physical bits.

/// A permutation of the 64 board qubits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BitPerm {
    /// `phys[q]`: the physical bit holding logical qubit `q`.
    phys: [u8; 64],
    /// `logical[p]`: the logical qubit stored in physical bit `p`.
    logical: [u8; 64],
}

impl BitPerm {
    pub fn identity() -> Self {
        let mut phys = [0u8; 64];
        for (i, p) in phys.iter_mut().enumerate() {
            *p = i as u8;
        }
        Self {
            phys,
            logical: phys,
        }
    }

    pub fn is_identity(&self) -> bool {
        self.phys
            .iter()
            .enumerate()
            .all(|(i, &p)| usize::from(p) == i)
    }

    #[inline]
    pub fn phys(&self, q: u8) -> u32 {
        u32::from(self.phys[usize::from(q)])
    }

    /// Exchanges which physical bits hold logical qubits `a` and `b`.
    pub fn swap(&mut self, a: u8, b: u8) {
        let (pa, pb) = (self.phys[usize::from(a)], self.phys[usize::from(b)]);
        self.phys[usize::from(a)] = pb;
        self.phys[usize::from(b)] = pa;
        self.logical[usize::from(pa)] = b;
        self.logical[usize::from(pb)] = a;
    }

    /// Logical mask -> physical mask.
    pub fn to_phys(&self, mask: u64) -> u64 {
        permute(mask, &self.phys)
    }

    /// Physical key -> logical key.
    pub fn to_logical(&self, key: u64) -> u64 {
        permute(key, &self.logical)
    }

    /// Byte-wise lookup tables for mapping many physical keys to logical ones. Each slot is
    /// the slot of its value without its lowest bit plus that bit's image (one OR a slot):
    /// the tables are built for every listing of a state, small ones included, where mapping
    /// each of the 2048 byte values bit by bit cost more than the listing's own keys.
    pub fn logical_table(&self) -> Option<Box<KeyTable>> {
        if self.is_identity() {
            return None;
        }
        let mut t = Box::new([[0u64; 256]; 8]);
        for (byte, row) in t.iter_mut().enumerate() {
            for v in 1..256usize {
                let low = v.trailing_zeros() as usize;
                row[v] = row[v & (v - 1)] | 1u64 << self.logical[8 * byte + low];
            }
        }
        Some(t)
    }
}

/// Eight 256-entry tables: the image of each byte of a key.
pub(crate) type KeyTable = [[u64; 256]; 8];

/// Maps a key through byte tables.
#[inline]
pub(crate) fn map_key(table: Option<&KeyTable>, key: u64) -> u64 {
    match table {
        None => key,
        Some(t) => {
            let mut out = 0;
            for (byte, row) in t.iter().enumerate() {
                out |= row[((key >> (8 * byte)) & 0xff) as usize];
            }
            out
        }
    }
}

fn permute(mut mask: u64, to: &[u8; 64]) -> u64 {
    let mut out = 0;
    while mask != 0 {
        let b = mask.trailing_zeros() as usize;
        out |= 1u64 << to[b];
        mask &= mask - 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte tables map every key as [`BitPerm::to_logical`] does, after swaps that move
    /// bits across bytes.
    #[test]
    fn logical_tables_match_the_bitwise_map() {
        let mut p = BitPerm::identity();
        assert!(p.logical_table().is_none());
        for (a, b) in [(0, 63), (7, 8), (12, 40), (3, 3), (25, 0), (63, 31)] {
            p.swap(a, b);
        }
        let t = p.logical_table().expect("not the identity");
        let mut k = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            k = k.rotate_left(17).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ 0x94d0_49bb_1331_11eb;
            assert_eq!(map_key(Some(&t), k), p.to_logical(k), "{k:#x}");
        }
        for bit in 0..64 {
            assert_eq!(map_key(Some(&t), 1 << bit), p.to_logical(1 << bit));
        }
        assert_eq!(map_key(Some(&t), 0), 0);
        assert_eq!(map_key(Some(&t), !0), !0);
    }
}
