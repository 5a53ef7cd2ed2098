//! Adversarial input for every parser: random and mutated move texts, serialised positions,
//! game records and rule lists. Nothing may panic; what parses prints back and parses to the
//! same thing; a parse error points inside the text; and a refused move leaves the game's
//! serialisation exactly as it was. Bounded case counts keep the release run short.

use proptest::prelude::*;
use qchess_niels::{Game, GameRecord, Move, NielsError, Position, RULE_NAMES, Rules};
use rand::SeedableRng;

/// Valid texts that mutations start from: the papers' figure positions, start positions,
/// edge-of-range counters.
const POSITIONS: [&str; 10] = [
    "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1",
    "5k2/8/5n2/8/r3[Rro|1][Rbo|1]2/8/4B3/7K b - - 0 1",
    "[Qbo|1]7/8/8/4k3/4[Qro|1]3/8/8/7K b - - 0 1",
    "3rk/3p1/5/r4/5/2Q1K w - - 0 1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "knbr/p3/4/3P/RBNK w - - 0 1",
    "rqkr/pppp/PPPP/RQKR w - - 0 1",
    "4k2[nbo-1]/7[nro-1]/K4n2/3[Qbo|1]4/3[Qro|1]4/[Rbo-1]7/[Rro-1]2[Bbo+1]4/2[Bro+1]3[rbo+1][rro+1] b - - 0 1",
    "4k3/8/8/8/8/8/8/4K2R b K - 99 4294967295",
    "4k3/8/8/8/8/2N5/8/1[Nbo|1]2K1[Nro|1]1 w - - 0 1 c3",
];

const MOVES: [&str; 12] = [
    "e2e4",
    "c6^d4e5:oo",
    "f6&f6d5:oo@e4-",
    "f:e4",
    "z:b1",
    "h:c3",
    "e2~e5",
    "c:c3",
    "e7e8=q",
    "b1&b1c3:po@d5+",
    "e2^e4e2:pp=n",
    "a1a8",
];

const RECORD: &str = "Rules: simplified,tunnelling\nBoard: 5x6\nStart: rnbqk/ppppp/5/5/PPPPP/RNBQK w - - 0 1\nb1^a3c3:oo\ne5e4\nc3e4 [3]\n";

/// Characters that the notations use, plus a few that they never do.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0', '^',
    '&', ':', '@', '~', '=', '+', '-', '|', '[', ']', '/', ' ', '\n', ',', 'o', 'p', 'q', 'r', 'n',
    'k', 'K', 'Q', 'R', 'B', 'N', 'P', 'w', 'z', 'x', 'é', '\u{3000}', '\u{0}',
];

/// Applies `edits` random edits (insert, delete, replace, duplicate a slice) to `text`.
fn mutate(text: &str, edits: &[(u8, usize, usize)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for &(kind, a, b) in edits {
        let n = chars.len();
        let i = if n == 0 { 0 } else { a % (n + 1) };
        let c = ALPHABET[b % ALPHABET.len()];
        match kind % 4 {
            0 => chars.insert(i, c),
            1 if i < n => {
                chars.remove(i);
            }
            2 if i < n => chars[i] = c,
            3 if i < n => {
                let end = (i + 1 + b % 8).min(n);
                let slice: Vec<char> = chars[i..end].to_vec();
                chars.splice(i..i, slice);
            }
            _ => chars.push(c),
        }
    }
    chars.into_iter().collect()
}

fn edits() -> impl Strategy<Value = Vec<(u8, usize, usize)>> {
    prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..6)
}

/// A parse error must point inside the text (a character index, at most its length).
fn check_error_position(text: &str, e: &NielsError) {
    if let NielsError::Parse { at, input, .. } = e {
        assert!(
            *at <= input.chars().count(),
            "{text:?}: error at {at} beyond the text: {e}"
        );
    }
    assert!(!e.to_string().is_empty());
}

fn rules_from_mask(mask: u16) -> Rules {
    let names: Vec<&str> = RULE_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    Rules::parse_list(&names.join(",")).unwrap()
}

/// Plays `text` in `game`; a refused move must leave every serialisation unchanged.
fn try_move(game: &mut Game, text: &str, seed: u64) {
    let before_pos = game.position().to_string();
    let before_record = game.record().to_string();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let results = [
        game.clone().play_str(text, &mut rng).err(),
        text.parse::<Move>()
            .and_then(|m| game.clone().play_with_rolls(&m, &[3, 4]))
            .err(),
    ];
    for e in results.iter().flatten() {
        check_error_position(text, e);
    }
    match game.play_str(text, &mut rng) {
        Ok(_) => {
            // What was played replays from the record, bit for bit.
            let replayed = game.record().replay().unwrap();
            assert_eq!(replayed.position(), game.position());
        }
        Err(e) => {
            check_error_position(text, &e);
            assert_eq!(game.position().to_string(), before_pos);
            assert_eq!(game.record().to_string(), before_record);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn move_parser_never_panics(base in 0usize..MOVES.len(), e in edits(), junk in "\\PC{0,12}") {
        for text in [mutate(MOVES[base], &e), junk] {
            match text.parse::<Move>() {
                Ok(m) => {
                    let printed = m.to_string();
                    prop_assert_eq!(printed.parse::<Move>().unwrap(), m);
                }
                Err(err) => check_error_position(&text, &err),
            }
        }
    }

    #[test]
    fn rule_list_parser_never_panics(e in edits(), junk in "\\PC{0,24}") {
        for text in [mutate("simplified,hadamard-plus,no-box,tunnelling", &e), junk] {
            match Rules::parse_list(&text) {
                Ok(r) => prop_assert_eq!(Rules::parse_list(&r.to_string()).unwrap(), r),
                Err(err) => prop_assert!(matches!(err, NielsError::Rules(_))),
            }
        }
    }

    #[test]
    fn record_parser_never_panics(e in edits(), junk in "\\PC{0,40}") {
        for text in [mutate(RECORD, &e), junk] {
            match text.parse::<GameRecord>() {
                Ok(record) => {
                    let again: GameRecord = record.to_string().parse().unwrap();
                    prop_assert_eq!(&again, &record);
                    if let Ok(game) = record.replay() {
                        let again = game.record().replay().unwrap();
                        prop_assert_eq!(again.position(), game.position());
                    }
                }
                Err(err) => check_error_position(&text, &err),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Mutated positions either fail with a located error or are positions the engine can
    /// play from: listing moves, status and check never panic, the text round-trips, and
    /// random (mostly refused) moves change nothing when refused.
    #[test]
    fn position_parser_and_engine_never_panic(
        base in 0usize..POSITIONS.len(),
        e in edits(),
        mask in 0u16..512,
        mv_base in 0usize..MOVES.len(),
        mv_edits in edits(),
        seed in any::<u64>(),
    ) {
        let text = mutate(POSITIONS[base], &e);
        let parsed = text.parse::<Position>();
        let inferred_size = POSITIONS[base].parse::<Position>().unwrap().geometry();
        let sized = Position::from_fen(&text, inferred_size);
        for r in [&parsed, &sized] {
            if let Err(err) = r {
                check_error_position(&text, err);
            }
        }
        let Ok(pos) = sized else { return Ok(()) };
        let printed = pos.to_string();
        let again = Position::from_fen(&printed, pos.geometry()).unwrap();
        prop_assert_eq!(again.to_string(), printed);
        let mut game = Game::from_position(rules_from_mask(mask), pos);
        let legal = game.legal_moves();
        let _ = game.status();
        let _ = game.in_check();
        let _ = qchess_niels::render(game.position(), game.rules());
        try_move(&mut game, &mutate(MOVES[mv_base], &mv_edits), seed);
        if let Some(m) = legal.get(seed as usize % legal.len().max(1)) {
            try_move(&mut game, &m.to_string(), seed);
        }
    }
}

/// Counters at the top of their range may not overflow when a move is played.
#[test]
fn counters_at_their_limits() {
    let mut g = Game::from_position(
        Rules::default(),
        "4k3/8/8/8/8/8/8/4K2R b K - 99 4294967295".parse().unwrap(),
    );
    g.play_with_rolls(&"e8d8".parse().unwrap(), &[]).unwrap();
    assert_eq!(g.position().fullmove_number(), u32::MAX);
    let mut g = Game::from_position(
        Rules::default(),
        "4k3/8/8/8/8/8/8/4K2R w K - 4294967295 1".parse().unwrap(),
    );
    // The 50-move rule has long been reached: the game is drawn, nothing is played.
    assert!(g.play_with_rolls(&"e1d1".parse().unwrap(), &[]).is_err());
}
