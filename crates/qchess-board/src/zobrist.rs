//! Zobrist keys, generated at compile time by SplitMix64 from a fixed seed.

use crate::{CastlingRights, Color, PieceKind, Square};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

/// 768 piece-square keys, 16 castling keys, 8 en-passant file keys, 1 side key.
const N: usize = 768 + 16 + 8 + 1;

const fn keys() -> [u64; N] {
    let mut out = [0u64; N];
    let mut state = 0x0051_C4E5_5B0A_2D00;
    let mut i = 0;
    while i < N {
        let (s, k) = splitmix(state);
        state = s;
        out[i] = k;
        i += 1;
    }
    // The empty castling set hashes to 0 so that "no rights" needs no key.
    out[768] = 0;
    out
}

static KEYS: [u64; N] = keys();

/// Key of a piece on a square.
#[inline(always)]
pub(crate) fn piece(color: Color, kind: PieceKind, sq: Square) -> u64 {
    KEYS[(color.index() * 6 + kind.index()) * 64 + sq.index() as usize]
}

/// Key of a castling-rights set.
#[inline(always)]
pub(crate) fn castling(rights: CastlingRights) -> u64 {
    KEYS[768 + rights.bits() as usize]
}

/// Key of an en-passant square (by file).
#[inline(always)]
pub(crate) fn ep(sq: Square) -> u64 {
    KEYS[784 + sq.file() as usize]
}

/// Key XORed in when Black is to move.
#[inline(always)]
pub(crate) fn side() -> u64 {
    KEYS[792]
}
