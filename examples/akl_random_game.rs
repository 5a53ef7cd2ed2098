//! A seeded game of Akl-style quantum chess between two random movers, printed as a record
//! that replays bit for bit, with each player's final view.
//!
//! `cargo run --release --example akl_random_game -- [SEED] [MAX_PLIES]`

use qchess::akl::{Game, GameRecord, GameStatus, RandomMover, Style};
use qchess::board::Color;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let max_plies: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(400);
    // One stream for the set-up, every collapse and both random movers.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new_random(&mut rng);
    while game.status() == GameStatus::Ongoing && game.history().len() < max_plies {
        RandomMover
            .play_turn(&mut game, &mut rng)
            .expect("the game is ongoing");
    }
    let record = game.record();
    println!("{}", record.to_text(Style::Unicode));
    println!(
        "result: {} after {} plies",
        game.status(),
        game.history().len()
    );
    for viewer in Color::ALL {
        println!("\n{viewer:?}'s view:\n{}", game.view(viewer).render());
    }
    // The printed record replays to the same game.
    let replayed = GameRecord::parse(&record.to_text(Style::Ascii))
        .and_then(|r| r.replay())
        .expect("a record replays");
    assert_eq!(replayed.position(), game.position());
    println!("replayed the record: same final position");
}
