//! Property tests over random games with every combination of rule options on every board:
//! no panic, exact replay of the record, positions that re-serialise identically, never more
//! than two entangled groups (each with pairs of both players), and bad input that changes
//! nothing. Bounded so that the release-mode run takes a few seconds.

use proptest::prelude::*;
use qchess_board::Geometry;
use qchess_niels::{Diagonal, Game, GameRecord, Move, Position, RULE_NAMES, Rules, Status};
use rand::SeedableRng;
use rand::seq::IndexedRandom;

const BOARDS: [&str; 5] = ["4x4", "4x5", "4x6", "5x6", "8x8"];

fn rules_from_mask(mask: u16) -> Rules {
    let names: Vec<&str> = RULE_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect();
    Rules::parse_list(&names.join(",")).unwrap()
}

fn check_invariants(game: &Game) {
    let pos = game.position();
    let diagonals: Vec<Diagonal> = pos.pairs().iter().filter_map(|p| p.diagonal).collect();
    for d in Diagonal::ALL {
        let group = pos.group(d);
        if !group.is_empty() {
            assert!(group.len() >= 2, "{pos}");
            let colors: Vec<_> = group
                .iter()
                .map(|id| pos.pair(*id).unwrap().piece.color)
                .collect();
            assert!(
                colors.windows(2).any(|w| w[0] != w[1]) || colors.len() < 2,
                "{pos}"
            );
        }
    }
    assert!(diagonals.iter().all(|d| Diagonal::ALL.contains(d)));
    let text = pos.to_string();
    let again = Position::from_fen(&text, pos.geometry()).unwrap();
    assert_eq!(again.to_string(), text);
    assert!(pos.king_squares(qchess_board::Color::White).len() <= 2);
}

fn play_random(board: &str, mask: u16, seed: u64, plies: usize) -> Game {
    let geometry: Geometry = board.parse().unwrap();
    let mut game = Game::new(rules_from_mask(mask), geometry).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..plies {
        check_invariants(&game);
        if game.status() != Status::Ongoing {
            break;
        }
        let moves = game.legal_moves();
        let mv = *moves
            .choose(&mut rng)
            .expect("an ongoing game has a legal move");
        game.play(&mv, &mut rng).expect("a listed move is legal");
    }
    game
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_games_replay_exactly(board in 0usize..4, mask in 0u16..512, seed in any::<u64>()) {
        let game = play_random(BOARDS[board], mask, seed, 40);
        let text = game.record().to_string();
        let record: GameRecord = text.parse().unwrap();
        prop_assert_eq!(&record, &game.record());
        let replayed = record.replay().unwrap();
        prop_assert_eq!(replayed.position().to_string(), game.position().to_string());
        prop_assert_eq!(replayed.history(), game.history());
        prop_assert_eq!(replayed.status(), game.status());
    }

    #[test]
    fn bad_moves_change_nothing(board in 0usize..4, mask in 0u16..512, seed in any::<u64>(), junk in "[a-h1-9^&:@~=+opqrbnfzhcx -]{0,16}") {
        let mut game = play_random(BOARDS[board], mask, seed, 12);
        let before = game.position().clone();
        let history = game.history().len();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        if let Ok(mv) = junk.parse::<Move>() {
            prop_assert_eq!(mv.to_string().parse::<Move>().unwrap(), mv);
            if game.check_move(&mv).is_err() {
                prop_assert!(game.play(&mv, &mut rng).is_err());
            }
        } else {
            prop_assert!(game.play_str(&junk, &mut rng).is_err());
        }
        if game.history().len() == history {
            prop_assert_eq!(game.position(), &before);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The standard board is slower per ply: fewer, shorter games.
    #[test]
    fn random_games_on_the_full_board(mask in 0u16..512, seed in any::<u64>()) {
        let game = play_random(BOARDS[4], mask, seed, 24);
        let replayed = game.record().replay().unwrap();
        prop_assert_eq!(replayed.position().to_string(), game.position().to_string());
    }
}
