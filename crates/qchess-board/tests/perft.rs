//! Published perft counts (chessprogramming.org "Perft Results"), bulk and no-bulk.
//! Depths that take more than a second or two in release mode are `#[ignore]`d; run them
//! with `cargo test -p qchess-board --release -- --ignored`.

use qchess_board::{Geometry, Position, perft};

const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
const POS3: &str = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1";
const POS4: &str = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1";
const POS4_MIRRORED: &str = "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1";
const POS5: &str = "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8";
const POS6: &str = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10";

/// Checks depths 1..=counts.len(); no-bulk only up to `full_depth` to keep the test fast.
fn check(fen: &str, counts: &[u64], full_depth: usize) {
    let pos = Position::from_fen(fen, Geometry::STANDARD).unwrap();
    for (i, &expected) in counts.iter().enumerate() {
        let depth = i as u32 + 1;
        assert_eq!(
            perft(&pos, depth, true),
            expected,
            "{fen} depth {depth} bulk"
        );
        if i < full_depth {
            assert_eq!(
                perft(&pos, depth, false),
                expected,
                "{fen} depth {depth} no-bulk"
            );
        }
    }
}

#[test]
fn startpos() {
    check(STARTPOS, &[20, 400, 8_902, 197_281, 4_865_609], 4);
}

#[test]
fn kiwipete() {
    check(KIWIPETE, &[48, 2_039, 97_862, 4_085_603], 3);
}

#[test]
fn position3() {
    check(POS3, &[14, 191, 2_812, 43_238, 674_624], 5);
}

#[test]
fn position4() {
    check(POS4, &[6, 264, 9_467, 422_333], 4);
    check(POS4_MIRRORED, &[6, 264, 9_467, 422_333], 4);
}

#[test]
fn position5() {
    check(POS5, &[44, 1_486, 62_379, 2_103_487], 3);
}

#[test]
fn position6() {
    check(POS6, &[46, 2_079, 89_890, 3_894_594], 3);
}

// Deeper counts: seconds to minutes each in release mode, so not part of CI.
#[test]
#[ignore = "slow: tens of seconds in release mode"]
fn deep_counts() {
    let deep: [(&str, u32, u64); 7] = [
        (STARTPOS, 6, 119_060_324),
        (KIWIPETE, 5, 193_690_690),
        (POS3, 6, 11_030_083),
        (POS3, 7, 178_633_661),
        (POS4, 5, 15_833_292),
        (POS5, 5, 89_941_194),
        (POS6, 5, 164_075_551),
    ];
    for (fen, depth, expected) in deep {
        let pos = Position::from_fen(fen, Geometry::STANDARD).unwrap();
        assert_eq!(
            perft(&pos, depth, true),
            expected,
            "{fen} depth {depth} bulk"
        );
        assert_eq!(
            perft(&pos, depth, false),
            expected,
            "{fen} depth {depth} no-bulk"
        );
    }
}
