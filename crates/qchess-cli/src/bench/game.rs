//! `qchess bench game`. Owned by the Cantwell work.
//!
//! Plays random legal Cantwell games from the standard start with a fixed seed (moves chosen
//! uniformly among the legal ones by `Game::play_random_move`, measurements drawn from the same
//! ChaCha8 stream) and
//! reports moves per second (choosing and playing) and the largest superposition reached.

use crate::error::CliError;
use clap::Args;
use qchess_cantwell::{Game, GameError};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::time::Instant;

/// Arguments of `qchess bench game`.
#[derive(Args, Debug)]
pub struct GameArgs {
    /// Seed of the random games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of games to play.
    #[arg(long, default_value_t = 10)]
    pub games: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Plies after which a game is stopped.
    #[arg(long, default_value_t = 300)]
    pub plies: u32,
    /// Largest state (basis states) a game may reach; a move beyond it ends that game.
    #[arg(long, default_value_t = 1 << 22)]
    pub cap: usize,
    /// Memory budget in bytes (default: measured from the limits).
    #[arg(long, value_name = "BYTES")]
    pub memory: Option<usize>,
}

/// What the benchmark measured.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct GameBench {
    /// Games played.
    pub games: u32,
    /// Moves played in all games.
    pub moves: u64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The largest number of basis states any game reached.
    pub largest_state: usize,
    /// Games that ended by a king reaching probability 0.
    pub decided: u32,
    /// Games stopped by the size cap.
    pub capped: u32,
}

/// Plays the games and measures them.
pub fn bench(args: &GameArgs) -> GameBench {
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut result = GameBench {
        games: args.games,
        ..GameBench::default()
    };
    let start = Instant::now();
    for _ in 0..args.games {
        let mut game = Game::new();
        game.set_state_cap(args.cap);
        game.set_snapshot_budget(0); // undo is not exercised; keep memory flat
        for _ in 0..args.plies {
            match game.play_random_move(&mut rng) {
                Ok(Some(_)) => result.moves += 1,
                Ok(None) => break,
                Err(GameError::Simulation(_)) => {
                    result.capped += 1;
                    break;
                }
                Err(e) => panic!("a random legal move was refused: {e}"),
            }
            result.largest_state = result.largest_state.max(game.state_size());
            if !game.status().is_ongoing() {
                result.decided += 1;
                break;
            }
        }
    }
    result.seconds = start.elapsed().as_secs_f64();
    result
}

/// Runs `qchess bench game`.
pub fn run(args: &GameArgs) -> Result<(), CliError> {
    qchess_sim::set_default_memory_budget(args.memory);
    let r = bench(args);
    let per_second = r.moves as f64 / r.seconds.max(1e-9);
    if args.json {
        println!(
            "{}",
            json!({
                "bench": "game", "seed": args.seed, "games": r.games, "plies": args.plies, "cap": args.cap,
                "moves": r.moves, "seconds": r.seconds, "moves_per_second": per_second,
                "largest_state": r.largest_state, "decided": r.decided, "capped": r.capped,
            })
        );
    } else {
        println!(
            "{} games, {} moves in {:.3} s: {:.1} moves/s; largest state {} basis states; {} decided, {} capped",
            r.games, r.moves, r.seconds, per_second, r.largest_state, r.decided, r.capped
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_games() {
        let args = GameArgs {
            seed: 3,
            games: 2,
            json: true,
            plies: 30,
            cap: 1 << 12,
            memory: None,
        };
        let a = bench(&args);
        let b = bench(&args);
        assert_eq!(
            (a.moves, a.largest_state, a.decided, a.capped),
            (b.moves, b.largest_state, b.decided, b.capped)
        );
        assert!(a.moves > 0 && a.largest_state >= 1);
    }
}
