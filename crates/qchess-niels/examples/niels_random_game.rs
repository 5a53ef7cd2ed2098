//! Plays a random game of Niel's Chess and prints its record.
//! `cargo run -p qchess-niels --release --example niels_random_game -- 8x8 42 hadamard`
use qchess_niels::{Game, Rules, Status};
use rand::SeedableRng;
use rand::seq::IndexedRandom;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let board = args.get(1).map_or("8x8", String::as_str);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let rules = Rules::parse_list(args.get(3).map_or("", String::as_str)).expect("rules");
    let mut game = Game::new(rules, board.parse().expect("board")).expect("start");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let t = std::time::Instant::now();
    let mut plies = 0;
    while game.status() == Status::Ongoing && plies < 200 {
        let moves = game.legal_moves();
        let mv = *moves.choose(&mut rng).expect("a legal move");
        game.play(&mv, &mut rng).expect("legal");
        plies += 1;
    }
    print!("{}", game.record());
    println!("{} after {plies} plies, {:?}", game.status(), t.elapsed());
}
