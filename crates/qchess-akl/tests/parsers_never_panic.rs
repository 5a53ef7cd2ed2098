//! Malformed text never panics: the notation, move, position and record parsers return
//! errors, and a refused entry, touch or move leaves the game exactly as it was, in any state
//! (start, mid-game, a touch pending, game over). Bounded property tests: 128-256 cases each.

use proptest::prelude::*;
use qchess_akl::{
    AklMove, AklPosition, Game, GameRecord, GameStatus, RandomMover, Style, TurnEntry,
    parse_destination,
};
use qchess_akl::{AklPiece, PieceState, TypePair, TypeSet};
use qchess_board::{Color, PieceKind, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Characters that the formats use, so random strings get deep into the parsers.
const ALPHABET: &str = "abcdefgh12345678<>|-=+#_()[]*?/ PNBRQKpnbrqkpsiwx→⟨⟩ψ\\{}\"\n0.";

fn text(max: usize) -> impl Strategy<Value = String> {
    let chars: Vec<char> = ALPHABET.chars().collect();
    proptest::collection::vec(proptest::sample::select(chars), 0..max)
        .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn entries(s in text(24)) {
        if let Ok(e) = s.parse::<TurnEntry>() {
            // Whatever parses prints back to something that parses to the same entry.
            prop_assert_eq!(e.to_string().parse::<TurnEntry>().unwrap(), e);
        }
    }

    #[test]
    fn positions(s in text(90)) {
        if let Ok(p) = AklPosition::parse(&s) {
            prop_assert_eq!(AklPosition::parse(&p.to_string()).unwrap(), p);
        }
    }

    #[test]
    fn records(s in text(120)) {
        if let Ok(r) = GameRecord::parse(&format!("[Seed \"1\"]\n{s}")) {
            let _ = r.replay();
        }
    }

    #[test]
    fn entries_against_a_game(s in text(20), seed in 0u64..50) {
        // Applying any parsed entry either works or leaves the game exactly as it was.
        if let Ok(e) = s.parse::<TurnEntry>() {
            let mut g = Game::from_seed(seed);
            let before = g.position().clone();
            if g.apply_entry(&e, None).is_err() {
                prop_assert_eq!(g.position(), &before);
                prop_assert!(g.history().is_empty());
            }
        }
    }

    #[test]
    fn mutated_valid_positions(pos in 0usize..120, c in proptest::sample::select(ALPHABET.chars().collect::<Vec<_>>())) {
        let valid = AklPosition::startpos_seeded(3).to_string();
        let mut chars: Vec<char> = valid.chars().collect();
        let i = pos % chars.len();
        chars[i] = c;
        let s: String = chars.into_iter().collect();
        let _ = AklPosition::parse(&s);
    }
}

/// Everything a refused call must leave exactly as it was.
type GameState = (
    qchess_akl::AklPosition,
    Option<(qchess_board::Square, qchess_board::PieceKind, Vec<AklMove>)>,
    qchess_akl::GameStatus,
    Vec<TurnEntry>,
    Vec<(qchess_board::Color, qchess_board::PieceKind)>,
);

fn state(g: &Game) -> GameState {
    (
        g.position().clone(),
        g.pending_touch().map(|(s, k, m)| (s, k, m.to_vec())),
        g.status(),
        g.history().to_vec(),
        g.captured().to_vec(),
    )
}

/// A game after `plies` random turns, left with a pending touch when `touch` is set and the
/// touched piece can move: the states where entries and moves are most often refused.
fn mid_game(seed: u64, plies: usize, touch: bool) -> Game {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = Game::new_random(&mut rng);
    for _ in 0..plies {
        if g.status() != GameStatus::Ongoing {
            return g;
        }
        RandomMover.play_turn(&mut g, &mut rng).unwrap();
    }
    if touch && g.status() == GameStatus::Ongoing {
        let view = g.view(g.side_to_move());
        let sq = RandomMover.choose_touch(&view, &mut rng).unwrap();
        g.touch(sq, &mut rng).unwrap();
    }
    g
}

/// One character of `s` replaced, inserted or deleted at `at` (modulo the length).
fn mutate(s: &str, at: usize, op: u8, c: char) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return c.to_string();
    }
    let i = at % chars.len();
    match op % 3 {
        0 => chars[i] = c,
        1 => chars.insert(i, c),
        _ => {
            chars.remove(i);
        }
    }
    chars.into_iter().collect()
}

fn alphabet_char() -> impl Strategy<Value = char> {
    proptest::sample::select(ALPHABET.chars().collect::<Vec<_>>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn uci_moves_and_destinations(s in text(12)) {
        if let Ok(m) = s.parse::<AklMove>() {
            prop_assert_eq!(m.to_string().parse::<AklMove>().unwrap(), m);
        }
        let _ = parse_destination(&s);
    }

    #[test]
    fn any_entry_in_any_state_works_or_changes_nothing(
        s in text(20),
        seed in 0u64..1000,
        plies in 0usize..80,
        touch in any::<bool>(),
        with_rng in any::<bool>(),
    ) {
        let mut g = mid_game(seed, plies, touch);
        if let Ok(e) = s.parse::<TurnEntry>() {
            let before = state(&g);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let rng: Option<&mut dyn rand::RngCore> = if with_rng { Some(&mut rng) } else { None };
            if g.apply_entry(&e, rng).is_err() {
                prop_assert_eq!(state(&g), before);
            }
        }
    }

    #[test]
    fn mutated_real_entries_work_or_change_nothing(
        seed in 0u64..1000,
        plies in 1usize..80,
        at in any::<usize>(),
        op in any::<u8>(),
        c in alphabet_char(),
    ) {
        // A real entry of a game, one character changed, applied to the game before it.
        let full = mid_game(seed, plies, false);
        let n = full.history().len();
        let text = mutate(&full.history()[n - 1].to_string(), at, op, c);
        let mut g = GameRecord {
            entries: full.history()[..n - 1].to_vec(),
            ..full.record()
        }
        .replay()
        .unwrap();
        if let Ok(e) = text.parse::<TurnEntry>() {
            let before = state(&g);
            if g.apply_entry(&e, None).is_err() {
                prop_assert_eq!(state(&g), before);
            }
        }
    }

    #[test]
    fn forced_touches_and_moves_work_or_change_nothing(
        seed in 0u64..1000,
        plies in 0usize..80,
        touch in any::<bool>(),
        from in 0u8..64,
        to in 0u8..64,
        kind in proptest::option::of(0usize..6),
        promo in proptest::option::of(0usize..6),
    ) {
        let mut g = mid_game(seed, plies, touch);
        let kind = kind.map(|i| PieceKind::ALL[i]);
        let before = state(&g);
        let from = Square::ALL[from as usize];
        if g.touch_forced(from, kind).is_err() {
            prop_assert_eq!(state(&g), before.clone());
        }
        let before = state(&g);
        let mv = AklMove { from, to: Square::ALL[to as usize], promotion: promo.map(|i| PieceKind::ALL[i]) };
        if g.play_forced(mv, kind).is_err() {
            prop_assert_eq!(state(&g), before);
        }
    }

    #[test]
    fn mutated_real_records_and_positions(
        seed in 0u64..1000,
        plies in 0usize..60,
        at in any::<usize>(),
        op in any::<u8>(),
        c in alphabet_char(),
    ) {
        let g = mid_game(seed, plies, false);
        let record = mutate(&g.record().to_text(Style::Ascii), at, op, c);
        if let Ok(r) = GameRecord::parse(&record) {
            let _ = r.replay();
        }
        let fen = mutate(&g.position().to_string(), at, op, c);
        if let Ok(p) = AklPosition::parse(&fen) {
            prop_assert_eq!(AklPosition::parse(&p.to_string()).unwrap(), p);
        }
    }
}

/// Any piece: a king, or a random pair in a random state with a random known subset.
fn any_piece() -> impl Strategy<Value = AklPiece> {
    (any::<bool>(), 0usize..6, 0usize..6, 0u8..3, 0u8..4).prop_map(|(white, a, b, st, kn)| {
        let color = if white { Color::White } else { Color::Black };
        let (a, b) = (PieceKind::ALL[a], PieceKind::ALL[b]);
        let Some(pair) = TypePair::new(a, b) else {
            return AklPiece::king(color);
        };
        let state = match st {
            0 => PieceState::Quantum,
            1 => PieceState::Classical(a),
            _ => PieceState::Classical(b),
        };
        let mut known = TypeSet::EMPTY;
        if kn & 1 != 0 || state == PieceState::Classical(a) {
            known = known.with(a);
        }
        if kn & 2 != 0 || state == PieceState::Classical(b) {
            known = known.with(b);
        }
        AklPiece {
            color,
            pair,
            state,
            known,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn hand_built_positions_play_without_panic(
        pieces in proptest::collection::vec((0usize..64, any_piece()), 0..24),
        castling in any::<[[bool; 2]; 2]>(),
        quiet in any::<u32>(),
        fullmove in any::<u32>(),
        black in any::<bool>(),
        seed in any::<u64>(),
    ) {
        // Public fields allow any position, consistent or not (rights without rooks, many
        // kings, none): the engine must not panic on it, and its text must round-trip or be
        // refused.
        let mut pos = AklPosition::empty();
        for (i, p) in pieces {
            pos.set(Square::ALL[i], Some(p));
        }
        pos.castling = castling;
        pos.quiet_plies = quiet;
        pos.fullmove = fullmove;
        pos.side_to_move = if black { Color::Black } else { Color::White };
        if let Ok(back) = AklPosition::parse(&pos.to_string()) {
            prop_assert_eq!(AklPosition::parse(&back.to_string()).unwrap(), back);
        }
        let mut g = Game::from_position(pos);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..20 {
            if g.status() != GameStatus::Ongoing {
                break;
            }
            let view = g.view(g.side_to_move());
            let Some(sq) = RandomMover.choose_touch(&view, &mut rng) else { break };
            let out = g.touch(sq, &mut rng).unwrap();
            if let qchess_akl::TouchResult::MustMove(moves) = out.result {
                let mv = RandomMover.choose_move(&moves, &mut rng).unwrap();
                g.play(mv, &mut rng).unwrap();
            }
            let _ = g.view(Color::White).render();
        }
        let _ = g.record().to_text(Style::Unicode);
    }
}
