//! Nodes per second and depth reached in a given time from each variant's start position:
//! `cargo run --release -p qchess-engine --example engine_speed [MS]` (default 1000 ms).

use qchess_engine::{Engine, EngineOptions, Limits, Searchable};
use std::time::{Duration, Instant};

fn run<G: Searchable>(name: &str, game: &G, ms: u64)
where
    <G::Node as qchess_engine::SearchNode>::Move: std::fmt::Display,
{
    let mut engine = Engine::new(EngineOptions {
        level: 5,
        ..EngineOptions::default()
    });
    let t = Instant::now();
    let r = engine
        .search(game, &Limits::movetime(Duration::from_millis(ms)))
        .expect("the start has moves");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{name}: depth {} nodes {} in {:.3} s = {:.0} nodes/s, best {}",
        r.depth,
        r.nodes,
        secs,
        r.nodes as f64 / secs,
        r.best
    );
}

fn main() {
    let ms: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    run("cantwell", &qchess_cantwell::Game::new(), ms);
    run(
        "niels",
        &qchess_niels::Game::new(Default::default(), "8x8".parse().unwrap()).unwrap(),
        ms,
    );
    run("akl", &qchess_akl::Game::from_seed(1), ms);
}
