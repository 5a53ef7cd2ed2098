//! Move notations: Cantwell QCAN and the long (occupancy) form, Niel's moves, Akl's bra-ket
//! turn entries, bare moves and destinations. Each parser must return an error, never panic;
//! what parses must print to a text that parses back to the same printed form.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mv) = text.parse::<qchess_cantwell::QcanMove>() {
        let printed = mv.to_string();
        let again: qchess_cantwell::QcanMove = printed.parse().expect("printed QCAN parses");
        assert_eq!(again.to_string(), printed);
    }
    if let Ok(mv) = text.parse::<qchess_cantwell::circuit::OccupancyMove>() {
        let printed = mv.to_string();
        let again: qchess_cantwell::circuit::OccupancyMove =
            printed.parse().expect("printed long form parses");
        assert_eq!(again.to_string(), printed);
    }
    if let Ok(mv) = text.parse::<qchess_niels::Move>() {
        let printed = mv.to_string();
        let again: qchess_niels::Move = printed.parse().expect("printed Niel's move parses");
        assert_eq!(again, mv);
    }
    if let Ok(entry) = text.parse::<qchess_akl::TurnEntry>() {
        let printed = entry.to_string();
        let again: qchess_akl::TurnEntry = printed.parse().expect("printed entry parses");
        assert_eq!(again.to_string(), printed);
    }
    if let Ok(mv) = text.parse::<qchess_akl::AklMove>() {
        let printed = mv.to_string();
        let again: qchess_akl::AklMove = printed.parse().expect("printed Akl move parses");
        assert_eq!(again, mv);
    }
    let _ = qchess_akl::parse_destination(text);
    // Through the games too: a refused move must leave the start position as it was.
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
    let mut game = qchess_cantwell::Game::new();
    let before = game.fen();
    if game.apply(text, &mut rng).is_err() {
        assert_eq!(game.fen(), before);
        assert!(game.history().is_empty());
    }
    if let Ok(mut niels) = qchess_niels::Game::new(
        qchess_niels::Rules::default(),
        qchess_board::Geometry::STANDARD,
    ) {
        let before = niels.position().clone();
        if niels.play_str(text, &mut rng).is_err() {
            assert_eq!(niels.position(), &before);
        }
    }
});
