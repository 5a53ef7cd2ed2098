//! Every attack function against a slow ray walker that only knows the W x H board, for every
//! geometry from 4x4 to 8x8: all occupancy subsets of each slider's rays, plus random
//! occupancies that also set off-board bits.

use super::*;
use crate::Geometry;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ROOK: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP: [(i8, i8); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];
const KNIGHT: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING: [(i8, i8); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

fn on_board(g: Geometry, f: i8, r: i8) -> bool {
    f >= 0 && r >= 0 && f < g.width() as i8 && r < g.height() as i8
}

/// Walks each direction on the W x H board, stopping after the first occupied square.
fn walk(g: Geometry, sq: Square, occ: Bitboard, dirs: &[(i8, i8)], slide: bool) -> Bitboard {
    let mut out = Bitboard::EMPTY;
    for &(df, dr) in dirs {
        let (mut f, mut r) = (sq.file() as i8 + df, sq.rank() as i8 + dr);
        while on_board(g, f, r) {
            let s = Square::new(f as u8, r as u8);
            out = out.with(s);
            if !slide || occ.contains(s) {
                break;
            }
            f += df;
            r += dr;
        }
    }
    out
}

fn geometries() -> impl Iterator<Item = Geometry> {
    (4..=8).flat_map(|w| (4..=8).map(move |h| Geometry::new(w, h).unwrap()))
}

fn check_slider(g: Geometry, sq: Square, occ: Bitboard) {
    let m = g.mask();
    let occ_on = occ & m;
    let r = walk(g, sq, occ_on, &ROOK, true);
    let b = walk(g, sq, occ_on, &BISHOP, true);
    assert_eq!(rook_attacks(sq, occ) & m, r, "rook {sq} {g} {occ:?}");
    assert_eq!(bishop_attacks(sq, occ) & m, b, "bishop {sq} {g} {occ:?}");
    assert_eq!(queen_attacks(sq, occ) & m, r | b, "queen {sq} {g}");
}

#[test]
fn sliders_match_walker_on_every_subset_of_their_rays() {
    for g in geometries() {
        for sq in g.mask() {
            for dirs in [&ROOK, &BISHOP] {
                let rays = walk(g, sq, Bitboard::EMPTY, dirs, true);
                // Carry-rippler enumeration of every subset of the ray squares.
                let mut sub = 0u64;
                loop {
                    check_slider(g, sq, Bitboard(sub));
                    sub = sub.wrapping_sub(rays.0) & rays.0;
                    if sub == 0 {
                        break;
                    }
                }
            }
        }
    }
}

#[test]
fn sliders_match_walker_on_random_occupancies() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xB0A2D);
    for g in geometries() {
        for sq in g.mask() {
            for _ in 0..200 {
                // Sparse and dense occupancies, off-board bits included.
                let occ = match rng.random_range(0..3) {
                    0 => rng.random::<u64>() & rng.random::<u64>(),
                    1 => rng.random::<u64>(),
                    _ => rng.random::<u64>() | rng.random::<u64>(),
                };
                check_slider(g, sq, Bitboard(occ));
            }
        }
    }
}

#[test]
fn leapers_match_walker() {
    for g in geometries() {
        let m = g.mask();
        for sq in m {
            assert_eq!(
                knight_attacks(sq) & m,
                walk(g, sq, Bitboard::EMPTY, &KNIGHT, false)
            );
            assert_eq!(
                king_attacks(sq) & m,
                walk(g, sq, Bitboard::EMPTY, &KING, false)
            );
            let white = walk(g, sq, Bitboard::EMPTY, &[(-1, 1), (1, 1)], false);
            let black = walk(g, sq, Bitboard::EMPTY, &[(-1, -1), (1, -1)], false);
            assert_eq!(pawn_attacks(Color::White, sq) & m, white);
            assert_eq!(pawn_attacks(Color::Black, sq) & m, black);
        }
    }
}

#[test]
fn between_and_line_match_walker() {
    for g in geometries() {
        let m = g.mask();
        for a in m {
            for b in m {
                let mut expect_between = Bitboard::EMPTY;
                let mut expect_line = Bitboard::EMPTY;
                for &(df, dr) in ROOK.iter().chain(BISHOP.iter()) {
                    let ray = walk(g, a, Bitboard::EMPTY, &[(df, dr)], true);
                    if ray.contains(b) {
                        // Squares of the ray before b.
                        let blocked = walk(g, a, b.bitboard(), &[(df, dr)], true);
                        expect_between = blocked.without(b);
                        let back = walk(g, a, Bitboard::EMPTY, &[(-df, -dr)], true);
                        expect_line = ray | back | a.bitboard();
                    }
                }
                assert_eq!(between(a, b) & m, expect_between, "between {a} {b} {g}");
                assert_eq!(line(a, b) & m, expect_line, "line {a} {b} {g}");
            }
        }
    }
}

#[test]
fn empty_board_rays_are_empty_board_attacks() {
    for sq in Square::ALL {
        assert_eq!(bishop_rays(sq), bishop_attacks(sq, Bitboard::EMPTY));
        assert_eq!(rook_rays(sq), rook_attacks(sq, Bitboard::EMPTY));
    }
}

#[test]
fn known_values() {
    assert_eq!(knight_attacks(Square::A1).count(), 2);
    assert_eq!(king_attacks(Square::E4).count(), 8);
    assert_eq!(rook_attacks(Square::A1, Bitboard::EMPTY).count(), 14);
    assert_eq!(bishop_attacks(Square::D4, Bitboard::EMPTY).count(), 13);
    assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
    assert_eq!(line(Square::A1, Square::A1), Bitboard::EMPTY);
    assert_eq!(line(Square::B2, Square::C3).count(), 8);
}
