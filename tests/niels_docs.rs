//! docs/niels.md stays true: its notation examples parse and print back identically, its
//! start-position table is what the engine uses, and its game record example replays.

use qchess::board::Geometry;
use qchess::niels::{GameRecord, Move, Position};

fn docs() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/niels.md")).unwrap()
}

/// The backticked cells of the markdown table rows in `section` (up to the next heading).
fn table_code(docs: &str, heading: &str, column: usize) -> Vec<String> {
    let section = docs.split(heading).nth(1).unwrap();
    let section = section.split("\n#").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .filter_map(|l| l.split('|').nth(column + 1).map(str::to_string))
        .flat_map(|cell| {
            cell.split('`')
                .enumerate()
                .filter(|(i, _)| i % 2 == 1)
                .map(|(_, s)| s.to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_notation_example_round_trips() {
    let examples = table_code(&docs(), "### Moves", 2);
    assert!(examples.len() >= 10, "{examples:?}");
    for text in examples {
        let mv: Move = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(mv.to_string(), text);
    }
}

#[test]
fn the_start_position_table_is_the_engines() {
    let docs = docs();
    let boards = table_code(&docs, "## Boards", 0);
    let fens = table_code(&docs, "## Boards", 1);
    assert_eq!(boards.len(), 0, "board names are plain text");
    let section = docs
        .split("## Boards")
        .nth(1)
        .unwrap()
        .split("\n#")
        .next()
        .unwrap();
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains('`'))
        .collect();
    assert_eq!(rows.len(), 5);
    for (row, fen) in rows.iter().zip(&fens) {
        let board: Geometry = row.split('|').nth(1).unwrap().trim().parse().unwrap();
        assert_eq!(&Position::startpos(board).unwrap().to_string(), fen);
    }
}

#[test]
fn the_serialised_position_example_parses() {
    let fen = "4k3/8/4[rbo|1]3/5P2/3[rro|1]4/8/8/4K3 w - - 0 1";
    assert!(docs().contains(fen));
    let pos: Position = fen.parse().unwrap();
    assert_eq!(pos.to_string(), fen);
    assert_eq!(pos.pairs().len(), 1);
}

#[test]
fn the_record_example_replays() {
    let docs = docs();
    let section = docs.split("### Game records").nth(1).unwrap();
    let block = section.split("```\n").nth(1).unwrap();
    let record: GameRecord = block.parse().unwrap();
    assert_eq!(record.to_string(), block);
    let game = record.replay().unwrap();
    assert_eq!(game.history().len(), 3);
    assert_eq!(
        game.history()[2].outcome.captured.map(|p| p.fen_char()),
        Some('p')
    );
}
