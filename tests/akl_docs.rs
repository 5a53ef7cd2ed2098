//! docs/akl.md stays true: its AKL-FEN example is the seed-3 start and its record example
//! replays.

use qchess::akl::{AklPosition, GameRecord, PieceState};
use qchess::board::Square;

fn docs() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/akl.md")).unwrap()
}

#[test]
fn the_position_text_example_is_the_seed_3_start() {
    let docs = docs();
    let section = docs.split("## Position text").nth(1).unwrap();
    let block = section
        .split("```text\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let pos = AklPosition::parse(block.trim()).unwrap();
    assert_eq!(pos, AklPosition::startpos_seeded(3));
}

#[test]
fn the_record_example_replays_from_any_seed() {
    let docs = docs();
    let section = docs.split("## Game records").nth(1).unwrap();
    let block = section
        .split("```text\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    // The example's header lines are placeholders: give it a real start.
    let moves: String = block
        .lines()
        .filter(|l| !l.starts_with('['))
        .map(|l| format!("{l}\n"))
        .collect();
    for seed in 0..10 {
        let game = GameRecord::parse(&format!("[Seed \"{seed}\"]\n{moves}"))
            .unwrap()
            .replay()
            .unwrap();
        assert_eq!(game.history().len(), 2);
        assert_eq!(
            game.position().piece(Square::E5).unwrap().state,
            PieceState::Quantum
        );
    }
}
