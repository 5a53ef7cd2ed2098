//! Niel's Chess with a queen (docs/benchmarks.md, "Niel's Chess with a queen"): the time to
//! list the legal moves of the side with the queen, and a depth-1 search from rook and king
//! against queen and king: `cargo run --release -p qchess-engine --example niels_queen`.

use qchess_engine::{Engine, EngineOptions, Limits};
use qchess_niels::{Game, Position, Rules};
use std::time::Instant;

fn main() {
    let fen = "4k3/8/8/3q4/8/8/8/R3K3 w - - 0 1";
    let white: Position = fen.parse().expect("a valid FEN");
    let black: Position = fen.replace(" w ", " b ").parse().expect("a valid FEN");
    let rules = Rules::default();
    for (name, pos) in [("white (rook)", &white), ("black (queen)", &black)] {
        let t = Instant::now();
        let n = qchess_niels::legal_moves(pos, &rules).len();
        let list_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let any = qchess_niels::has_legal_move(pos, &rules);
        let any_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let caps = qchess_niels::legal_captures(pos, &rules).len();
        let caps_ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "{name}: legal_moves {n} in {list_ms:.2} ms; has_legal_move {any} in {any_ms:.3} ms; legal_captures {caps} in {caps_ms:.3} ms"
        );
    }
    let game = Game::from_position(rules, white);
    let mut engine = Engine::new(EngineOptions::default());
    let t = Instant::now();
    let r = engine.search(&game, &Limits::depth(1)).expect("moves");
    println!(
        "search depth 1: {} nodes in {:.2} s, best {} score {:.0}",
        r.nodes,
        t.elapsed().as_secs_f64(),
        r.best,
        r.score
    );
}
