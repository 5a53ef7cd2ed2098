//! Perft speed of qchess-board against cozy-chess, measured in the same run.
//!
//! `cargo bench --bench perft` (add `-- --measurement-time 2` for a quicker run). Each group
//! is one position and counting mode; the two functions in it are the two libraries on the
//! same depth, with criterion's throughput in leaf nodes per second. Every run first checks
//! that both libraries return the published count.
// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use qchess_board::{Geometry, Position, perft};
use std::hint::black_box;
use std::time::Duration;

/// (name, FEN, bulk depth, no-bulk depth, published counts indexed by depth).
const POSITIONS: [(&str, &str, u32, u32, &[u64]); 6] = [
    (
        "startpos",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        5,
        5,
        &[1, 20, 400, 8_902, 197_281, 4_865_609],
    ),
    (
        "kiwipete",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        4,
        4,
        &[1, 48, 2_039, 97_862, 4_085_603],
    ),
    (
        "pos3",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        6,
        5,
        &[1, 14, 191, 2_812, 43_238, 674_624, 11_030_083],
    ),
    (
        "pos4",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        5,
        4,
        &[1, 6, 264, 9_467, 422_333, 15_833_292],
    ),
    (
        "pos5",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        4,
        4,
        &[1, 44, 1_486, 62_379, 2_103_487],
    ),
    (
        "pos6",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        4,
        4,
        &[1, 46, 2_079, 89_890, 3_894_594],
    ),
];

/// cozy-chess perft written the way its own examples do: copy-make, and with `bulk` the last
/// ply counted by `PieceMoves::len`.
fn cozy_perft(board: &cozy_chess::Board, depth: u32, bulk: bool) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut nodes = 0;
    if bulk && depth == 1 {
        board.generate_moves(|moves| {
            nodes += moves.len() as u64;
            false
        });
    } else {
        board.generate_moves(|moves| {
            for mv in moves {
                let mut child = board.clone();
                child.play_unchecked(mv);
                nodes += cozy_perft(&child, depth - 1, bulk);
            }
            false
        });
    }
    nodes
}

fn bench_perft(c: &mut Criterion) {
    for (name, fen, bulk_depth, full_depth, counts) in POSITIONS {
        let ours = Position::from_fen(fen, Geometry::STANDARD).expect("published FEN");
        let cozy = cozy_chess::Board::from_fen(fen, false).expect("published FEN");
        for (mode, bulk, depth) in [("bulk", true, bulk_depth), ("nobulk", false, full_depth)] {
            let expected = counts[depth as usize];
            assert_eq!(perft(&ours, depth, bulk), expected, "qchess {name} {mode}");
            assert_eq!(
                cozy_perft(&cozy, depth, bulk),
                expected,
                "cozy {name} {mode}"
            );
            let mut group = c.benchmark_group(format!("perft/{name}/{mode}"));
            group.throughput(Throughput::Elements(expected));
            group.sample_size(10);
            group.bench_function(BenchmarkId::new("qchess", depth), |b| {
                b.iter(|| perft(black_box(&ours), depth, bulk))
            });
            group.bench_function(BenchmarkId::new("cozy-chess", depth), |b| {
                b.iter(|| cozy_perft(black_box(&cozy), depth, bulk))
            });
            group.finish();
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench_perft
}
criterion_main!(benches);
