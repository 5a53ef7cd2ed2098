//! Serialised Cantwell positions round-trip bit for bit (every amplitude's f64 bits), through
//! JSON text, along random quantum games; and a saved record (start position + notation)
//! replays to the identical state.

use qchess::cantwell::{Game, Position, RuleOptions};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn bits(p: &Position) -> Vec<(String, String, u64, u64)> {
    p.amplitudes
        .iter()
        .map(|a| {
            (
                a.board.clone(),
                a.ancillas.clone(),
                a.re.to_bits(),
                a.im.to_bits(),
            )
        })
        .collect()
}

#[test]
fn positions_round_trip_exactly_along_random_games() {
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new();
        game.set_state_cap(1 << 14);
        for ply in 0..60 {
            let Some(mv) = game.random_legal_move(&mut rng) else {
                break;
            };
            if game.apply(&mv, &mut rng).is_err() {
                break;
            }
            let pos = game.position();
            let text = pos.to_json();
            let back = Position::from_json(&text).unwrap();
            assert_eq!(bits(&back), bits(&pos));
            let restored = Game::from_position(&back).unwrap();
            assert_eq!(restored.position().to_json(), text);
            if ply % 20 == 0 {
                assert_eq!(restored.legal_moves(), game.legal_moves());
            }
            if !game.status().is_ongoing() {
                break;
            }
        }
        let record =
            serde_json::to_string(&(game.start_position(), game.history_notation())).unwrap();
        let (start, moves): (Position, Vec<String>) = serde_json::from_str(&record).unwrap();
        let replayed = Game::replay(&start, RuleOptions::default(), &moves).unwrap();
        assert_eq!(bits(&replayed.position()), bits(&game.position()));
        assert_eq!(replayed.fen(), game.fen());
    }
}
