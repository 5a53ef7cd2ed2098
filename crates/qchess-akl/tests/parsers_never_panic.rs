//! Malformed text never panics: the notation, position and record parsers return errors
//! (bounded property tests: 256 cases each).

use proptest::prelude::*;
use qchess_akl::{AklPosition, Game, GameRecord, TurnEntry};

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
