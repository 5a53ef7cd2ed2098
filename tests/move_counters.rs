//! The halfmove clock and the fullmove number are `u32` in every variant and saturate at
//! `u32::MAX`: a move from a position whose counters are already at the maximum keeps them
//! there (no wrap to 0, no panic in a debug build). docs/decisions.md, "Move counters".

use qchess::akl::{AklPosition, Game as AklGame};
use qchess::board::Color;
use qchess::cantwell::Game as CantwellGame;
use qchess::niels::{Game as NielsGame, Position as NielsPosition, Rules};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const MAX: u32 = u32::MAX;

#[test]
fn cantwell_counters_saturate() {
    // Black to move, so the fullmove number would step; a quiet king move, so the clock too.
    let mut game = CantwellGame::from_fen(&format!("4k3/8/8/8/8/8/8/4K3 b - - {MAX} {MAX}"))
        .expect("counters up to u32::MAX are accepted");
    game.apply("e8d8", &mut ChaCha8Rng::seed_from_u64(0))
        .expect("a legal king move");
    assert_eq!(game.classical().flags.halfmove_clock, MAX);
    assert_eq!(game.classical().flags.fullmove_number, MAX);
    assert!(
        game.fen().ends_with(&format!(" {MAX} {MAX}")),
        "{}",
        game.fen()
    );
    // And it undoes to exactly the position it came from.
    game.undo().unwrap();
    assert_eq!(game.fen(), format!("4k3/8/8/8/8/8/8/4K3 b - - {MAX} {MAX}"));
}

#[test]
fn cantwell_counters_past_u32_are_refused() {
    let too_big = u64::from(MAX) + 1;
    assert!(CantwellGame::from_fen(&format!("4k3/8/8/8/8/8/8/4K3 b - - {too_big} 1")).is_err());
    assert!(CantwellGame::from_fen(&format!("4k3/8/8/8/8/8/8/4K3 b - - 0 {too_big}")).is_err());
}

#[test]
fn niels_counters_saturate() {
    // A halfmove clock of 100 or more ends a Niel's game (50-move rule), so only the move
    // number can be driven to the maximum and still be followed by a move.
    let pos: NielsPosition = format!("r3k3/8/8/8/8/8/8/R3K3 b - - 0 {MAX}")
        .parse()
        .expect("counters up to u32::MAX are accepted");
    let mut game = NielsGame::from_position(Rules::default(), pos);
    game.play_str("e8d8", &mut ChaCha8Rng::seed_from_u64(0))
        .expect("a legal king move");
    assert_eq!(game.position().halfmove_clock(), 1);
    assert_eq!(game.position().fullmove_number(), MAX);
    let too_big = u64::from(MAX) + 1;
    assert!(
        format!("4k3/8/8/8/8/8/8/4K3 b - - {too_big} 1")
            .parse::<NielsPosition>()
            .is_err()
    );
}

#[test]
fn akl_counters_saturate() {
    let mut pos = AklPosition::startpos_seeded(0);
    pos.side_to_move = Color::Black;
    // 100 quiet plies end an Akl game (a draw), so only the move number can be driven to the
    // maximum and still be followed by a move.
    pos.fullmove = MAX;
    // Through the position text, so the parser accepts the maximum too.
    let pos = AklPosition::parse(&pos.to_string()).expect("counters up to u32::MAX parse");
    assert_eq!(pos.fullmove, MAX);
    let mut game = AklGame::from_position(pos);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    // Any piece that can move: touch it, play its first move.
    let played = game.touchable().into_iter().any(|sq| {
        game.touch(sq, &mut rng).is_ok()
            && game
                .pending_touch()
                .and_then(|(_, _, moves)| moves.first().copied())
                .is_some_and(|mv| game.play(mv, &mut rng).is_ok())
    });
    assert!(played, "some black piece has a legal move");
    assert_eq!(game.position().fullmove, MAX);
    let too_big = u64::from(MAX) + 1;
    let text = AklPosition::startpos_seeded(0).to_string();
    let bumped = text.replacen(" 0 1", &format!(" 0 {too_big}"), 1);
    assert_ne!(bumped, text);
    assert!(AklPosition::parse(&bumped).is_err());
}
