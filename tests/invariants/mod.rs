//! Random play with invariant checks, shared by the soak test (`tests/soak.rs`) and the
//! structured fuzz target (`fuzz/fuzz_targets/play.rs`, which includes this file by path).
//!
//! Checked after every step, in every variant:
//! * the state is normalised: total probability 1 within 1e-9 (Cantwell: the state vector's
//!   norm; Niel's: the outcomes of each entangled group);
//! * no basis state puts two pieces on one square (Cantwell: every basis state's occupancy
//!   lies on squares the classical layer has a piece for; Niel's: the halves an outcome picks
//!   are distinct squares, none under a conventional piece; Akl: at most one king a side,
//!   at most 32 pieces);
//! * a refused move leaves the game exactly as it was;
//! * undo restores the position before the move; a save (Cantwell position JSON, Niel's and
//!   Akl records) loads back to the same position.
#![allow(dead_code)]

use qchess_board::{Color, Geometry, PieceKind, Square};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One step of a script.
#[derive(Clone, Debug)]
pub enum Op {
    /// Play the legal move with this index (modulo their number).
    Legal(u16),
    /// Try this text as a move (usually refused).
    Text(String),
    /// Take back the last move.
    Undo,
    /// Play again the move last taken back (its outcome may differ).
    Redo,
    /// Save and load the game, checking the loaded copy.
    SaveLoad,
}

/// Which rule system a script plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Cantwell quantum chess.
    Cantwell,
    /// Niel's Chess (rule options from the seed).
    Niels,
    /// Akl-style chess.
    Akl,
}

/// A random script of `len` steps: mostly legal moves, some garbage, undo, redo, save/load.
pub fn random_script(rng: &mut ChaCha8Rng, len: usize) -> Vec<Op> {
    const JUNK: [&str; 8] = [
        "",
        "e2e5",
        "zz",
        "a1^a1a1",
        "e9e4",
        "<Q|e2> -> e4",
        "~~",
        "b1^a3",
    ];
    (0..len)
        .map(|_| match rng.random_range(0..100) {
            0..70 => Op::Legal(rng.random()),
            70..78 => Op::Text(JUNK[rng.random_range(0..JUNK.len())].to_string()),
            78..88 => Op::Undo,
            88..94 => Op::Redo,
            _ => Op::SaveLoad,
        })
        .collect()
}

/// Plays `ops` in `variant` from its start, seeded with `seed`; panics on a broken invariant.
pub fn play_script(variant: Variant, seed: u64, ops: &[Op]) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match variant {
        Variant::Cantwell => cantwell(&mut rng, seed, ops),
        Variant::Niels => niels(&mut rng, seed, ops),
        Variant::Akl => akl(&mut rng, seed, ops),
    }
}

fn cantwell_check(game: &qchess_cantwell::Game) {
    let state = game.state();
    let norm = state.norm_sqr();
    assert!((norm - 1.0).abs() < 1e-9, "norm {norm}");
    let mask = game.pieces().occupied_mask();
    for (key, _) in state.entries() {
        assert_eq!(
            key.board & !mask,
            0,
            "a basis state occupies a square with no piece: {:#x} vs {mask:#x}",
            key.board
        );
    }
}

fn cantwell(rng: &mut ChaCha8Rng, seed: u64, ops: &[Op]) {
    use qchess_cantwell::game::same_state;
    let mut game = qchess_cantwell::Game::new();
    // A small state cap: a move that would pass it is refused, which is a refusal to check.
    game.set_state_cap(1 << 10);
    // Odd seeds play without undo records (an undo budget of 0): every move is taken back by
    // replay, and a measuring move drops the entries its projection removes.
    if seed & 1 == 1 {
        game.set_snapshot_budget(0);
    }
    let mut undone: Vec<String> = Vec::new();
    let mut before_stack: Vec<(String, qchess_sim::State)> = Vec::new();
    for op in ops {
        let text = match op {
            // A uniformly drawn legal move (seeded by the step), not the full list: listing
            // every legal move tests each against the state and is the slow part.
            Op::Legal(i) => {
                match game.random_legal_move(&mut ChaCha8Rng::seed_from_u64(u64::from(*i))) {
                    Some(mv) => mv,
                    None => continue,
                }
            }
            Op::Text(t) => t.clone(),
            Op::Redo => match undone.pop() {
                Some(t) => t,
                None => continue,
            },
            Op::Undo => {
                let Some((fen, state)) = before_stack.pop() else {
                    assert!(game.undo().is_err());
                    continue;
                };
                let rec = game.undo().expect("a played move undoes");
                assert_eq!(game.fen(), fen, "undo restores the layer");
                assert!(same_state(game.state(), &state), "undo restores the state");
                undone.push(rec.notation.clone());
                cantwell_check(&game);
                continue;
            }
            Op::SaveLoad => {
                let saved = serde_json::to_string(&game.position()).expect("serialises");
                let pos: qchess_cantwell::Position = serde_json::from_str(&saved).expect("loads");
                let loaded = qchess_cantwell::Game::from_position(&pos).expect("restores");
                assert_eq!(loaded.fen(), game.fen());
                assert!(
                    same_state(loaded.state(), game.state()),
                    "save/load keeps the state"
                );
                continue;
            }
        };
        let fen = game.fen();
        let state = game.state().clone();
        let n = game.history().len();
        match game.apply(&text, rng) {
            Ok(_) => before_stack.push((fen, state)),
            Err(_) => {
                assert_eq!(game.fen(), fen, "a refused {text:?} changes nothing");
                assert!(
                    same_state(game.state(), &state),
                    "a refused {text:?} keeps the state"
                );
                assert_eq!(game.history().len(), n);
            }
        }
        cantwell_check(&game);
    }
}

fn niels_check(game: &qchess_niels::Game) {
    let pos = game.position();
    for d in qchess_niels::Diagonal::ALL {
        let ids = pos.group(d);
        if ids.is_empty() {
            continue;
        }
        let outcomes = qchess_niels::group_outcomes(pos, &ids, game.rules());
        let total: f64 = outcomes.iter().map(|o| o.probability).sum();
        assert!((total - 1.0).abs() < 1e-9, "group outcomes sum to {total}");
        for o in &outcomes {
            let mut seen = 0u64;
            for (id, mark) in &o.marks {
                let sq = pos.pair(*id).expect("a group pair exists").square(*mark);
                let bit = 1u64 << sq.index();
                assert_eq!(seen & bit, 0, "two halves on {sq} in one outcome");
                seen |= bit;
            }
        }
    }
}

fn niels(rng: &mut ChaCha8Rng, seed: u64, ops: &[Op]) {
    let rules = qchess_niels::Rules {
        simplified: seed & 1 != 0,
        hadamard: seed & 2 != 0,
        tunnelling: seed & 4 != 0,
        no_box: seed & 8 != 0,
        stay_only: seed & 16 != 0,
        remote_collapse: seed & 32 != 0,
        ..Default::default()
    };
    let mut game = qchess_niels::Game::new(rules, Geometry::STANDARD).expect("a standard start");
    let mut undone: Vec<qchess_niels::Move> = Vec::new();
    let mut before_stack: Vec<qchess_niels::Position> = Vec::new();
    for op in ops {
        let mv = match op {
            Op::Legal(i) => {
                let moves = game.legal_moves();
                if moves.is_empty() {
                    continue;
                }
                moves[*i as usize % moves.len()]
            }
            Op::Text(t) => {
                let before = game.position().clone();
                let n = game.history().len();
                match game.play_str(t, rng) {
                    Ok(_) => before_stack.push(before),
                    Err(_) => {
                        assert_eq!(game.position(), &before, "a refused {t:?} changes nothing");
                        assert_eq!(game.history().len(), n);
                    }
                }
                niels_check(&game);
                continue;
            }
            Op::Redo => match undone.pop() {
                Some(m) => m,
                None => continue,
            },
            Op::Undo => {
                let Some(before) = before_stack.pop() else {
                    assert!(game.undo().is_none());
                    continue;
                };
                let last = game.undo().expect("a played move undoes");
                assert_eq!(game.position(), &before, "undo restores the position");
                undone.push(last.mv);
                niels_check(&game);
                continue;
            }
            Op::SaveLoad => {
                let text = game.record().to_string();
                let record: qchess_niels::GameRecord = text.parse().expect("a record parses");
                let replayed = record.replay().expect("a record replays");
                assert_eq!(replayed.position(), game.position(), "record round trip");
                continue;
            }
        };
        let before = game.position().clone();
        let n = game.history().len();
        match game.play(&mv, rng) {
            Ok(_) => before_stack.push(before),
            Err(_) => {
                assert_eq!(game.position(), &before, "a refused {mv} changes nothing");
                assert_eq!(game.history().len(), n);
            }
        }
        niels_check(&game);
    }
}

fn akl_check(game: &qchess_akl::Game) {
    let pos = game.position();
    let pieces = pos.squares.iter().flatten().count();
    assert!(pieces <= 32, "{pieces} pieces");
    for color in [Color::White, Color::Black] {
        let kings = pos
            .squares
            .iter()
            .flatten()
            .filter(|p| {
                p.color == color && p.state == qchess_akl::PieceState::Classical(PieceKind::King)
            })
            .count();
        assert!(kings <= 1, "{kings} kings of one colour");
    }
}

fn akl(rng: &mut ChaCha8Rng, seed: u64, ops: &[Op]) {
    let mut game = qchess_akl::Game::from_seed(seed);
    for op in ops {
        let before = game.position().clone();
        let n = game.history().len();
        match op {
            Op::Legal(i) => {
                if let Some((_, _, moves)) = game.pending_touch() {
                    let mv = moves[*i as usize % moves.len()];
                    game.play(mv, rng).expect("a listed move plays");
                } else {
                    let touchable = game.touchable();
                    if touchable.is_empty() {
                        continue;
                    }
                    let sq = touchable[*i as usize % touchable.len()];
                    game.touch(sq, rng).expect("a touchable piece touches");
                }
            }
            Op::Text(t) => {
                let refused = match t.parse::<qchess_akl::AklMove>() {
                    Ok(mv) => game.play(mv, rng).is_err(),
                    Err(_) => {
                        let sq = Square::from_index((t.len() % 64) as u8).expect("below 64");
                        game.touch(sq, rng).is_err()
                    }
                };
                if refused {
                    assert_eq!(game.position(), &before, "a refused {t:?} changes nothing");
                    assert_eq!(game.history().len(), n);
                }
            }
            // Akl games have no undo: a record replays to the same position instead. A record
            // holds whole turns, so a touch waiting for its move is not in it.
            Op::Undo | Op::Redo | Op::SaveLoad if game.pending_touch().is_none() => {
                let style = if n % 2 == 0 {
                    qchess_akl::Style::Ascii
                } else {
                    qchess_akl::Style::Unicode
                };
                let text = game.record().to_text(style);
                let record = qchess_akl::GameRecord::parse(&text).expect("a record parses");
                let replayed = record.replay().expect("a record replays");
                assert_eq!(replayed.position(), game.position(), "record round trip");
            }
            Op::Undo | Op::Redo | Op::SaveLoad => {}
        }
        akl_check(&game);
    }
}
