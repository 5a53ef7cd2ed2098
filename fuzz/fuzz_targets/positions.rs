//! Position texts: the classical FEN (every board size), Cantwell's FEN and serialised quantum
//! position (JSON), Niel's position text and Akl's position text. Each parser must return an
//! error, never panic; what parses must print to a text that parses back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use qchess_board::{Geometry, Position as Board};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for geometry in [Geometry::STANDARD] {
        if let Ok(board) = Board::from_fen(text, geometry) {
            let fen = board.to_fen();
            let again = Board::from_fen(&fen, geometry).expect("a printed FEN parses");
            assert_eq!(again.to_fen(), fen);
        }
        let _ = Board::from_fen_relaxed(text, geometry);
    }
    if let Ok(game) = qchess_cantwell::Game::from_fen(text) {
        let fen = game.fen();
        let again = qchess_cantwell::Game::from_fen(&fen).expect("a printed FEN parses");
        assert_eq!(again.fen(), fen);
    }
    if let Ok(pos) = serde_json::from_str::<qchess_cantwell::Position>(text) {
        let _ = qchess_cantwell::Game::from_position(&pos);
    }
    if let Ok(pos) = text.parse::<qchess_niels::Position>() {
        let printed = pos.to_string();
        let again: qchess_niels::Position = printed.parse().expect("a printed position parses");
        assert_eq!(again.to_string(), printed);
    }
    if let Ok(pos) = qchess_akl::AklPosition::parse(text) {
        let printed = pos.to_string();
        let again = qchess_akl::AklPosition::parse(&printed).expect("a printed position parses");
        assert_eq!(again, pos);
    }
});
