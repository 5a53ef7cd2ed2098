//! The fast legal-move decision (pattern weights, no simulation of the candidates) against
//! the slow reference that simulates every candidate (`Game::legal_moves_reference`): the
//! same list, same strings, same order, on the positions of the crate's other tests and on
//! random game positions from seeded ChaCha RNGs.
//!
//! The default run checks 2 000 random positions (games of up to 100 plies from seeded
//! ChaCha RNGs, cycling through `FENS`, each stopped once its state exceeds 256 basis
//! states); `ten_thousand_random_positions` (ignored: the reference is slow;
//! `cargo test --release -p qchess-cantwell --test integration legal_equivalence:: -- --ignored`) checks
//! 10^4 positions with states up to 2048; `positions_beyond_the_sampled_basis_states` checks
//! split walks of 5 000-16 000 basis states (where the simulator answers from sampled basis
//! states), and the scripted lines include split and merge slides through partly blocked
//! paths onto partly occupied squares.

use qchess_cantwell::legal::{LegalStats, notation_of};
use qchess_cantwell::{Game, GameError};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Starting FENs for the random games: the start, positions without pawns (sliders and
/// splits everywhere), castling, promotion and en passant chances, and the FENs of the other
/// test files.
const FENS: &[&str] = &[
    qchess_cantwell::STARTPOS_FEN,
    "r3k2r/pp4pp/2n1bn2/3pP3/8/2N1BN2/PP4PP/R3K2R w KQkq d6 0 1",
    "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1",
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "4k3/1P6/1n6/8/8/8/6p1/4K3 w - - 0 1",
    "4k3/3p4/8/1N2P3/8/8/8/4K3 w - - 0 1",
    "7k/8/8/8/8/8/8/R1N4K w - - 0 1",
    "4k3/8/8/8/8/n1B5/8/1N2K3 w - - 0 1",
    "r1b1k2r/1pq2ppp/2n1pn2/p7/3P4/P1N1BN2/1PQ2PPP/R3KB1R w KQkq - 0 1",
];

/// Scripted lines from the other test files (`game_rules.rs`, `game_pawns.rs`,
/// `fuzz_regressions.rs`, ...): every position along each is checked.
const LINES: &[(&str, &[&str])] = &[
    (
        qchess_cantwell::STARTPOS_FEN,
        &["h2h4", "b8^a6c6", "h1h2", "c7c5", "h2h1", "c7c5"],
    ),
    (
        qchess_cantwell::STARTPOS_FEN,
        &["g1^f3h3", "e7e5", "f3e5", "b8^a6c6"],
    ),
    (
        qchess_cantwell::STARTPOS_FEN,
        &["e2e4", "e7e5", "g1^f3h3", "g8^f6h6", "f1^c4e2"],
    ),
    (
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        &["e1^d1f1", "e8^d8f8", "d1d2", "f8f7"],
    ),
    ("4k3/8/3N4/8/8/8/8/4K3 w - - 0 1", &["d6^e8c8", "e8d8"]),
    ("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1", &["d7d5"]),
    ("4k3/3p4/8/1N2P3/8/8/8/4K3 w - - 0 1", &["b5^d6c3", "d7d5"]),
    (
        "4k3/1n1p4/8/4P3/8/8/8/4K3 b - - 0 1",
        &["b7^d6c5", "e1e2", "d7d5"],
    ),
    (
        "4k3/1P6/1n6/8/8/8/8/4K3 b - - 0 1",
        &["b6^a8c8", "b7a8Q", "e8e7"],
    ),
    ("4k3/8/8/8/8/8/8/4K2R w K - 0 1", &["h1^h3h2", "e8e7"]),
    (
        "7k/8/8/8/8/8/8/1N1N3K w - - 0 1",
        &["b1^a3c3", "h8g8", "d1^c3e3", "g8h8", "c3a3^b1"],
    ),
    (
        "7k/8/8/8/8/8/8/2BN3K w - - 0 1",
        &["d1^b2f2", "h8g8", "c1b2"],
    ),
    (
        "7k/8/8/8/8/8/8/R1N4K w - - 0 1",
        &["c1^b3a2", "h8g8", "a1a3", "g8h8", "a1^a4a6"],
    ),
    (
        "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1",
        &["a1^a4a6", "a8^a5a7", "a6a4", "a7a5"],
    ),
    (
        "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1",
        &["d1^d4d6", "d8^d5d7", "d6d4", "d7d5", "d4d6"],
    ),
    // Split and merge slides through partly blocked paths onto partly occupied squares
    // (double occupancy of c1 by two rook halves, eq. 9 and 12 with both arms acting).
    (
        "7k/8/8/8/8/8/8/R3R2K w - - 0 1",
        &[
            "a1^a4c1", "h8g8", "e1^c1e4", "g8h8", "c1a4^a1", "h8g8", "e4c1^e1", "g8h8", "a1^c1a3",
        ],
    ),
    (
        "4k3/8/8/8/8/8/8/R1N1K3 w - - 0 1",
        &[
            "c1^b3a2", "e8e7", "a1^a4a6", "e7e8", "a6a4^a1", "e8e7", "a1^a3a5", "e7e8", "b3a2^c1",
        ],
    ),
    (
        "3qk3/8/8/8/8/8/8/3QK3 w - - 0 1",
        &[
            "d1^d4a4", "d8^d5a5", "d4^d6b6", "d5^h1d2", "a4d6^d1", "a5h1^d8",
        ],
    ),
];

/// Adds one listing's (or game's) decision stats to `total`.
fn add(total: &mut LegalStats, stats: &LegalStats) {
    total.candidates += stats.candidates;
    total.by_marginals += stats.by_marginals;
    total.by_patterns += stats.by_patterns;
    total.fallback += stats.fallback;
    total.passes += stats.passes;
}

/// Compares the fast list with the reference on `game` and adds up the decision stats.
fn check(game: &Game, total: &mut LegalStats, what: &str) -> Vec<String> {
    let (fast, stats) = game.legal_moves_with_stats();
    let reference = game.legal_moves_reference();
    if fast != reference {
        let extra: Vec<&String> = fast.iter().filter(|m| !reference.contains(m)).collect();
        let missing: Vec<&String> = reference.iter().filter(|m| !fast.contains(m)).collect();
        panic!(
            "{what}: fen {} ({} states): fast list has {extra:?} beyond the reference and \
             lacks {missing:?}",
            game.fen(),
            game.state_size()
        );
    }
    add(total, &stats);
    reference
}

/// Plays `plies` random moves from `fen` (chosen from the reference list, outcomes drawn
/// from the seeded RNG), checking every position; returns how many were checked.
fn random_game(
    fen: &str,
    seed: u64,
    plies: usize,
    max_states: usize,
    total: &mut LegalStats,
) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::from_fen(fen).unwrap();
    game.set_state_cap(1 << 16);
    let mut checked = 0;
    for ply in 0..plies {
        if !game.status().is_ongoing() || game.state_size() > max_states {
            break;
        }
        let reference = check(&game, total, &format!("seed {seed} ply {ply} from {fen}"));
        checked += 1;
        // random_legal_move: the first legal move of the shuffled possible moves, as the
        // reference would find it.
        let mut r1 = rng.clone();
        let mut possible = game.possible_moves();
        possible.shuffle(&mut r1);
        let expected = possible
            .iter()
            .map(notation_of)
            .find(|m| reference.contains(m));
        assert_eq!(game.random_legal_move(&mut rng.clone()), expected);
        if reference.is_empty() {
            break;
        }
        let mv = &reference[rng.random_range(0..reference.len())];
        match game.apply(mv, &mut rng) {
            Ok(_) => {}
            Err(GameError::Simulation(_) | GameError::StateTooLarge { .. }) => break,
            Err(e) => panic!("listed legal move {mv} failed: {e}"),
        }
    }
    checked
}

/// Checks `target` random positions (games stop once the state holds more than
/// `max_states` basis states: the reference simulates every candidate, so larger states
/// make the test slow), with the fallback share reported (it must stay rare).
///
/// The games run on worker threads (one per available core) that take seeds in increasing
/// order until the positions checked reach `target`; the answer is then cut to the shortest
/// prefix of seeds that reaches it, so the positions counted (and the stats) are those of
/// the sequential loop whatever the timing, and a mismatch panics in its worker with the
/// seed and ply in the message.
fn random_positions(target: usize, max_states: usize) {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    let next_seed = AtomicU64::new(0);
    let done = AtomicUsize::new(0);
    let games: Mutex<Vec<(u64, usize, LegalStats)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while done.load(Ordering::SeqCst) < target {
                    let seed = next_seed.fetch_add(1, Ordering::SeqCst);
                    let fen = FENS[(seed as usize) % FENS.len()];
                    let mut stats = LegalStats::default();
                    let checked = random_game(fen, seed, 100, max_states, &mut stats);
                    games.lock().unwrap().push((seed, checked, stats));
                    done.fetch_add(checked, Ordering::SeqCst);
                }
            });
        }
    });
    let mut games = games.into_inner().unwrap();
    games.sort_unstable_by_key(|g| g.0);
    let (mut total, mut checked, mut seeds) = (LegalStats::default(), 0, 0);
    for (seed, n, stats) in games {
        assert_eq!(
            seed, seeds,
            "every seed below the last one played was played"
        );
        if checked >= target {
            break;
        }
        checked += n;
        seeds += 1;
        add(&mut total, &stats);
    }
    assert!(checked >= target, "{checked} of {target} positions checked");
    eprintln!("{checked} random positions from {seeds} games: {total:?}");
    assert!(
        total.fallback * 20 <= total.candidates,
        "the reference decided more than 5 % of the candidates: {total:?}"
    );
}

#[test]
fn scripted_lines_from_the_other_tests() {
    let mut total = LegalStats::default();
    for (fen, moves) in LINES {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut game = Game::from_fen(fen).unwrap();
        let _ = check(&game, &mut total, fen);
        for mv in *moves {
            match game.apply(mv, &mut rng) {
                Ok(_) => {
                    let _ = check(&game, &mut total, &format!("{fen} after {mv}"));
                }
                // Lines are replayed with another RNG than their test: a move the drawn
                // outcomes made impossible is skipped.
                Err(_) => continue,
            }
            if !game.status().is_ongoing() {
                break;
            }
        }
    }
    eprintln!("scripted lines: {total:?}");
}

#[test]
fn each_candidate_agrees_with_the_reference() {
    // changes_state (one candidate at a time) against changes_state_reference.
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut game = Game::from_fen("rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1").unwrap();
    for _ in 0..12 {
        for c in game.possible_moves() {
            assert_eq!(
                game.changes_state(&c),
                game.changes_state_reference(&c),
                "{} in {}",
                notation_of(&c),
                game.fen()
            );
        }
        let moves = game.legal_moves_reference();
        if moves.is_empty() || !game.status().is_ongoing() {
            break;
        }
        let mv = moves[rng.random_range(0..moves.len())].clone();
        game.apply(&mv, &mut rng).unwrap();
    }
}

/// Plays splits until the state holds at least `states` basis states
/// ([`qchess_cantwell::growth::split_walk`], the walk of `benches/legal.rs`), then `extra` random legal moves, checking every position after the
/// walk. Above 4096 basis states the simulator decides most questions from sampled basis
/// states (`QuantumState::local_effects`), not from a full read: these positions check that
/// path against the reference too.
fn walk_then_random(fen: &str, states: usize, extra: usize, seed: u64, total: &mut LegalStats) {
    let mut game = Game::from_fen(fen).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    qchess_cantwell::growth::split_walk(&mut game, states, &mut rng);
    assert!(game.state_size() >= states, "{fen}: {}", game.state_size());
    for ply in 0..=extra {
        if !game.status().is_ongoing() {
            break;
        }
        let what = format!("{fen} walk to {} states, ply {ply}", game.state_size());
        let reference = check(&game, total, &what);
        if reference.is_empty() || ply == extra {
            break;
        }
        let mv = &reference[rng.random_range(0..reference.len())];
        match game.apply(mv, &mut rng) {
            Ok(_) => {}
            Err(GameError::Simulation(_) | GameError::StateTooLarge { .. }) => break,
            Err(e) => panic!("listed legal move {mv} failed: {e}"),
        }
    }
}

#[test]
fn positions_beyond_the_sampled_basis_states() {
    let mut total = LegalStats::default();
    walk_then_random(
        "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1",
        8192,
        4,
        1,
        &mut total,
    );
    walk_then_random(
        "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
        5000,
        4,
        2,
        &mut total,
    );
    walk_then_random(
        "N3k3/2NNn3/1n1n2N1/3N1nn1/1nN1p3/3n2N1/4N2n/RN2K1N1 w - - 0 1",
        8192,
        4,
        3,
        &mut total,
    );
    eprintln!("beyond the samples: {total:?}");
    assert_eq!(total.fallback, 0, "{total:?}");
}

#[test]
fn random_positions_default_run() {
    random_positions(2_000, 256);
}

#[test]
#[ignore = "10^4 positions with states up to 2048: about 15 minutes in release mode"]
fn ten_thousand_random_positions() {
    random_positions(10_000, 2048);
}
