//! Game records and saves: Niel's and Akl records (parse, print, replay) and Cantwell's
//! saved positions with a move list (one move per line, replayed). Never a panic; a record
//! that parses prints back to one that parses to the same record.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(record) = text.parse::<qchess_niels::GameRecord>() {
        let printed = record.to_string();
        let again: qchess_niels::GameRecord = printed.parse().expect("printed record parses");
        assert_eq!(again.to_string(), printed);
        let _ = record.replay();
    }
    if let Ok(record) = qchess_akl::GameRecord::parse(text) {
        let printed = record.to_text(qchess_akl::Style::Ascii);
        let again = qchess_akl::GameRecord::parse(&printed).expect("printed record parses");
        assert_eq!(again, record);
        let _ = record.replay();
    }
    // Cantwell: first line a FEN (or "startpos"), then one move per line.
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let start = if first == "startpos" {
        Ok(qchess_cantwell::Game::new())
    } else {
        qchess_cantwell::Game::from_fen(first)
    };
    if let Ok(start) = start {
        let moves: Vec<&str> = lines.take(32).collect();
        let mut game = start;
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        game.set_state_cap(1 << 16);
        for mv in &moves {
            let _ = game.apply(mv, &mut rng);
        }
        // The game saves as a position (JSON) that loads back to the same FEN and state size.
        let saved = serde_json::to_string(&game.position()).expect("a position serialises");
        let pos: qchess_cantwell::Position = serde_json::from_str(&saved).expect("a save loads");
        let loaded = qchess_cantwell::Game::from_position(&pos).expect("a save restores");
        assert_eq!(loaded.fen(), game.fen());
        assert_eq!(loaded.state_size(), game.state_size());
    }
});
