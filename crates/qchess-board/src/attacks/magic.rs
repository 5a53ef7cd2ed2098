//! Rook and bishop attacks by magic bitboards. The magic multipliers were found offline by a
//! seeded random search (xorshift64, seed 0x9E3779B97F4A7C15, sparse candidates, minimal index
//! bits per square); the attack table itself is built here at compile time by `const fn`, and
//! the builder refuses (compile error) any multiplier that maps two different attack sets to
//! one slot, so the constants cannot silently go wrong.

use crate::Bitboard;

#[rustfmt::skip]
const ROOK_MAGICS: [u64; 64] = [
    0x2080002080400010, 0x00c0002001401000, 0x2100110008402002, 0x0880080081041000,
    0x0200020020041008, 0x2300040008010012, 0x0c00283004008201, 0x0180010000407a80,
    0x0168800080400020, 0x0010400040201000, 0x1001002001001048, 0x1001002408100100,
    0x0801000408010012, 0x4001000209000400, 0x08a20004c8020001, 0x2002801145002280,
    0x0080860021004200, 0x001000c009402002, 0x00b0002004002800, 0x100a808010020800,
    0x8101010008000410, 0x0244008002000480, 0x0000040010810208, 0x2000020000448534,
    0x4104400480008033, 0x0000810100204000, 0x0440430900200010, 0x4600240900100100,
    0x0060080080040080, 0x0001000300080400, 0x0004084400011002, 0x0023040200008041,
    0x0580050043002080, 0x0400804002802008, 0x0001002001004010, 0x1000200901001000,
    0x4410800801800c00, 0xa012003806001004, 0x0020100104008802, 0x0004808402000041,
    0x0010400170898000, 0x0080500020004004, 0x1040408012020020, 0x8010040008004040,
    0x2001080100110004, 0x0000020004008080, 0x0021010810040002, 0x0800008c43020024,
    0x0000800021005100, 0x0070201040008080, 0x0000d04282006a00, 0x0010014400080240,
    0x0001080110050100, 0x0012000810240600, 0x0402000801040200, 0x028100108a004100,
    0x0050800300102045, 0x8208210040120882, 0x8010600101183441, 0x020b000910006045,
    0x0241001002480005, 0x0081000400880241, 0x0000009008024124, 0x0048122980410402,
];
#[rustfmt::skip]
const BISHOP_MAGICS: [u64; 64] = [
    0x0848020822040013, 0x8010a40085821200, 0x0008008430840822, 0x0808048108040000,
    0x1304042100008104, 0x5001012010204023, 0x81048801b8200420, 0x200a008084012000,
    0x0040102001042084, 0x840a505042428020, 0x0000700102202920, 0x44101c0c10800002,
    0x0040040422000000, 0x0180020802090202, 0x4020020811041202, 0x000104308c042000,
    0x4140661002424400, 0x0028012008010460, 0x0188062102002a00, 0x0014004840102008,
    0x0105000290400002, 0x8001022200410400, 0x104a041918013446, 0x008a000082008238,
    0x04a0060008100430, 0x0008220008820801, 0x2508041208005010, 0x4008080200202020,
    0x2441001013004000, 0x0030008060407000, 0x4008108000420800, 0x0012021050290100,
    0x0210080482200500, 0xcc01112048100480, 0x0020402806500440, 0x00048e0080580080,
    0x0040102020020080, 0x0028010440080807, 0x4601041108008800, 0x8040810e04104200,
    0x901210110400088a, 0xa003080212081050, 0x00c1004048401004, 0x900000a014400800,
    0x0008021040405401, 0x4020008206002090, 0x0004190424030100, 0x0424008a02026250,
    0x8004088250900040, 0x1c00430088a04200, 0x0001020094040001, 0x8040210020880061,
    0x2010040450442032, 0x0800840850044001, 0x0004040802140004, 0x0004080a04222020,
    0x8088802110022000, 0x1081a10416114400, 0x0205010a24060820, 0x0000000720411080,
    0x1008000208430400, 0x580c026028810840, 0x802020441020a110, 0x12c0022401020018,
];

const ROOK_DIRS: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i8, i8); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];

/// Per-square magic entry: relevant-occupancy mask, multiplier, shift and table offset.
#[derive(Copy, Clone)]
pub(super) struct Magic {
    pub mask: u64,
    pub magic: u64,
    pub shift: u32,
    pub offset: u32,
}

/// Slider attacks walked square by square (used only to build the table).
const fn ray_attacks(sq: u8, occ: u64, dirs: &[(i8, i8); 4]) -> u64 {
    let mut bits = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = dirs[d];
        let mut f = (sq & 7) as i8 + df;
        let mut r = (sq >> 3) as i8 + dr;
        while f >= 0 && f < 8 && r >= 0 && r < 8 {
            let s = (r * 8 + f) as u32;
            bits |= 1u64 << s;
            if occ & (1u64 << s) != 0 {
                break;
            }
            f += df;
            r += dr;
        }
        d += 1;
    }
    bits
}

/// The squares whose occupancy matters: the rays without their last square.
const fn relevant_mask(sq: u8, dirs: &[(i8, i8); 4]) -> u64 {
    let mut bits = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = dirs[d];
        let mut f = (sq & 7) as i8 + df;
        let mut r = (sq >> 3) as i8 + dr;
        while f + df >= 0 && f + df < 8 && r + dr >= 0 && r + dr < 8 {
            bits |= 1u64 << (r * 8 + f) as u32;
            f += df;
            r += dr;
        }
        d += 1;
    }
    bits
}

const fn magics(multipliers: &[u64; 64], dirs: &[(i8, i8); 4], start: u32) -> [Magic; 64] {
    let mut out = [Magic {
        mask: 0,
        magic: 0,
        shift: 0,
        offset: 0,
    }; 64];
    let mut offset = start;
    let mut sq = 0;
    while sq < 64 {
        let mask = relevant_mask(sq as u8, dirs);
        let bits = mask.count_ones();
        out[sq] = Magic {
            mask,
            magic: multipliers[sq],
            shift: 64 - bits,
            offset,
        };
        offset += 1 << bits;
        sq += 1;
    }
    out
}

pub(super) static ROOK: [Magic; 64] = magics(&ROOK_MAGICS, &ROOK_DIRS, 0);
const ROOK_ENTRIES: u32 = {
    let m = magics(&ROOK_MAGICS, &ROOK_DIRS, 0);
    m[63].offset + (1 << (64 - m[63].shift))
};
pub(super) static BISHOP: [Magic; 64] = magics(&BISHOP_MAGICS, &BISHOP_DIRS, ROOK_ENTRIES);
const TABLE_SIZE: usize = {
    let m = magics(&BISHOP_MAGICS, &BISHOP_DIRS, ROOK_ENTRIES);
    (m[63].offset + (1 << (64 - m[63].shift))) as usize
};

/// Fills the slots of one slider kind; panics (at compile time) on a destructive collision.
const fn fill(table: &mut [Bitboard; TABLE_SIZE], entries: &[Magic; 64], dirs: &[(i8, i8); 4]) {
    let mut sq = 0;
    while sq < 64 {
        let m = entries[sq];
        let mut sub = 0u64;
        loop {
            let idx = m.offset as usize + (sub.wrapping_mul(m.magic) >> m.shift) as usize;
            let att = ray_attacks(sq as u8, sub, dirs);
            // A slider always attacks at least one square, so 0 marks an unused slot.
            if table[idx].0 != 0 && table[idx].0 != att {
                panic!("magic multiplier maps two attack sets to one slot");
            }
            table[idx] = Bitboard(att);
            sub = sub.wrapping_sub(m.mask) & m.mask;
            if sub == 0 {
                break;
            }
        }
        sq += 1;
    }
}

const fn build() -> [Bitboard; TABLE_SIZE] {
    let mut table = [Bitboard::EMPTY; TABLE_SIZE];
    let rook = magics(&ROOK_MAGICS, &ROOK_DIRS, 0);
    let bishop = magics(&BISHOP_MAGICS, &BISHOP_DIRS, ROOK_ENTRIES);
    fill(&mut table, &rook, &ROOK_DIRS);
    fill(&mut table, &bishop, &BISHOP_DIRS);
    table
}

/// Rook entries first, then bishop entries.
#[allow(long_running_const_eval)]
pub(super) static TABLE: [Bitboard; TABLE_SIZE] = build();

/// The attack set of magic entry `m` for occupancy `occ`.
#[inline(always)]
pub(super) fn lookup(m: &Magic, occ: u64) -> Bitboard {
    let idx = ((occ & m.mask).wrapping_mul(m.magic) >> m.shift) as usize;
    TABLE[m.offset as usize + idx]
}
