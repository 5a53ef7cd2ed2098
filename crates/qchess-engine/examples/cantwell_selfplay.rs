//! Level 5 against level 1 in Cantwell, in process, the way `qchess match` plays it (pair k
//! plays with seed S+k, level 5 White in its first game and Black in its second; the outcomes
//! drawn from a `ChaCha8Rng` of that seed; 400 plies at most), each move searched with a node
//! limit (deterministic: the same games on every machine, for profiling and node counts) or a
//! time limit (for a quick strength check).
//!
//! `cargo run --release -p qchess-engine --example cantwell_selfplay -- nodes|movetime N GAMES SEED`
//! (defaults: nodes 1500, 2 games, seed 1). `TRACE=1` prints every level-5 search.

use qchess_cantwell::{Game, GameStatus};
use qchess_engine::{Engine, EngineOptions, Limits};
use rand::SeedableRng;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map_or("nodes", String::as_str).to_string();
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1500);
    let games: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    let seed: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1);
    let limits = || match mode.as_str() {
        "movetime" => Limits::movetime(Duration::from_millis(n)),
        _ => Limits::nodes(n),
    };
    let trace = std::env::var_os("TRACE").is_some();
    let (mut nodes, mut time, mut searches, mut depths) = (0u64, Duration::ZERO, 0u64, 0u64);
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    for g in 0..games {
        let game_seed = seed + g / 2;
        let five_white = g % 2 == 0;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(game_seed);
        let mut game = Game::new();
        let mut plies = 0;
        while game.status().is_ongoing() && plies < 400 {
            let white = game.side_to_move() == qchess_board::Color::White;
            let level = if white == five_white { 5 } else { 1 };
            let mut engine = Engine::new(EngineOptions {
                level,
                seed: game_seed,
                ..EngineOptions::default()
            });
            let t = Instant::now();
            let Ok(r) = engine.search(&game, &limits()) else {
                break;
            };
            if level == 5 {
                time += t.elapsed();
                nodes += r.nodes;
                searches += 1;
                depths += u64::from(r.depth);
                if trace {
                    println!(
                        "  ply {plies}: depth {} nodes {} {:.1} ms state {} score {:.0} best {}",
                        r.depth,
                        r.nodes,
                        t.elapsed().as_secs_f64() * 1000.0,
                        game.state_size(),
                        r.score,
                        r.best
                    );
                }
            }
            game.apply(&r.best, &mut rng)
                .expect("the engine's move is legal");
            plies += 1;
        }
        let five = if five_white {
            qchess_board::Color::White
        } else {
            qchess_board::Color::Black
        };
        match game.status() {
            GameStatus::Won { winner, .. } if winner == five => wins += 1,
            GameStatus::Won { .. } => losses += 1,
            _ => draws += 1,
        }
        println!(
            "game {} seed {game_seed} level 5 {}: {} after {plies} plies",
            g + 1,
            if five_white { "white" } else { "black" },
            game.status()
        );
    }
    let total = (wins + draws + losses) as f64;
    let score = (wins as f64 + draws as f64 / 2.0) / total;
    let clamped = score.clamp(0.5 / total, 1.0 - 0.5 / total);
    println!(
        "level 5 v level 1: +{wins} ={draws} -{losses}, score {score:.4}, Elo {:.0}",
        -400.0 * (1.0 / clamped - 1.0).log10()
    );
    println!(
        "level 5: {searches} searches, {nodes} nodes in {:.2} s = {:.0} nodes/s ({:.1} ms a search), mean depth {:.2}",
        time.as_secs_f64(),
        nodes as f64 / time.as_secs_f64(),
        time.as_secs_f64() * 1000.0 / searches.max(1) as f64,
        depths as f64 / searches.max(1) as f64,
    );
}
