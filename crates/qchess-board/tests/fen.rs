//! FEN reading and writing: round trips on every geometry, and bad FENs that must produce an
//! error naming the right field and character, never a panic.

use qchess_board::{FenField, Geometry, Position, STARTPOS_FEN, startpos_fen};

fn err(fen: &str, g: Geometry) -> qchess_board::FenError {
    match Position::from_fen(fen, g) {
        Ok(pos) => panic!("{fen:?} was accepted as {pos:?}"),
        Err(e) => e,
    }
}

#[test]
fn start_positions_of_every_geometry_round_trip() {
    for w in 4..=8 {
        for h in 4..=8 {
            let g = Geometry::new(w, h).unwrap();
            let fen = startpos_fen(g);
            let pos = Position::from_fen(&fen, g).unwrap();
            assert_eq!(pos.to_fen(), fen);
            assert_eq!(pos, Position::startpos_for(g));
            assert_eq!(
                pos.occupied().count(),
                if (w, h) == (4, 5) {
                    10
                } else {
                    4 * u32::from(w)
                }
            );
        }
    }
    assert_eq!(Position::startpos().to_fen(), STARTPOS_FEN);
}

#[test]
fn published_small_board_fens() {
    let cases = [
        ((4, 4), "rqkr/pppp/PPPP/RQKR w - - 0 1"),
        ((4, 5), "knbr/p3/4/3P/RBNK w - - 0 1"),
        ((4, 6), "rqkr/pppp/4/4/PPPP/RQKR w - - 0 1"),
        ((5, 5), "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"),
        ((5, 6), "rnbqk/ppppp/5/5/PPPPP/RNBQK w - - 0 1"),
        ((6, 6), "rnqknr/pppppp/6/6/PPPPPP/RNQKNR w - - 0 1"),
    ];
    for ((w, h), fen) in cases {
        assert_eq!(startpos_fen(Geometry::new(w, h).unwrap()), fen);
    }
}

#[test]
fn four_field_fen_defaults_the_clocks() {
    let pos = Position::from_fen("4k3/8/8/8/8/8/8/4K3 b - -", Geometry::STANDARD).unwrap();
    assert_eq!((pos.halfmove_clock(), pos.fullmove_number()), (0, 1));
    assert_eq!(pos.to_fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
}

#[test]
fn placement_errors_name_the_character() {
    let g = Geometry::STANDARD;
    let e = err(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
        g,
    );
    assert_eq!(
        (e.field, e.character, e.column),
        (FenField::Placement, Some('X'), Some(43))
    );
    assert!(e.to_string().contains("'X'"), "{e}");

    let e = err(
        "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        g,
    );
    assert_eq!(
        (e.field, e.character, e.column),
        (FenField::Placement, Some('p'), Some(18))
    );
    assert!(e.to_string().contains("more than 8 squares"), "{e}");

    let e = err("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", g);
    assert_eq!((e.field, e.character), (FenField::Placement, Some('/')));
    assert!(e.to_string().contains("has 7 squares"), "{e}");

    let e = err(
        "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        g,
    );
    assert_eq!((e.field, e.character), (FenField::Placement, Some('9')));

    let e = err("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", g);
    assert_eq!(e.field, FenField::Placement);
    assert!(e.to_string().contains("only 7 ranks"), "{e}");

    let e = err(
        "rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        g,
    );
    assert!(e.to_string().contains("more than 8 ranks"), "{e}");

    // 5x6 board: a rank of 8 squares is too long there.
    let g56 = Geometry::new(5, 6).unwrap();
    let e = err("rnbqk/ppppp/8/5/PPPPP/RNBQK w - - 0 1", g56);
    assert_eq!((e.field, e.character), (FenField::Placement, Some('8')));
}

#[test]
fn other_field_errors() {
    let g = Geometry::STANDARD;
    let base = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
    let cases: [(&str, FenField, Option<char>); 11] = [
        ("x KQkq - 0 1", FenField::SideToMove, Some('x')),
        ("white KQkq - 0 1", FenField::SideToMove, Some('w')),
        ("w KQxq - 0 1", FenField::Castling, Some('x')),
        ("w KKkq - 0 1", FenField::Castling, Some('K')),
        ("w KQkq e9 0 1", FenField::EnPassant, Some('e')),
        ("w KQkq e3 0 1", FenField::EnPassant, Some('3')),
        ("w KQkq e6 0 1", FenField::EnPassant, Some('e')),
        ("w KQkq - x 1", FenField::HalfmoveClock, Some('x')),
        ("w KQkq - 0 0", FenField::FullmoveNumber, Some('0')),
        ("w KQkq - -1 1", FenField::HalfmoveClock, Some('-')),
        ("w KQkq - 0 1 extra", FenField::Whole, None),
    ];
    for (rest, field, ch) in cases {
        let fen = format!("{base} {rest}");
        let e = err(&fen, g);
        assert_eq!((e.field, e.character), (field, ch), "{fen}: {e}");
    }
    // Castling rights without the pieces, and castling off the 8x8 board.
    let e = err(
        "rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        g,
    );
    assert_eq!((e.field, e.character), (FenField::Castling, Some('k')));
    let e = err(
        "rnbqk/ppppp/5/5/PPPPP/RNBQK w K - 0 1",
        Geometry::new(5, 6).unwrap(),
    );
    assert!(e.to_string().contains("only on the 8x8 board"), "{e}");
    // En passant on a board without double steps.
    let e = err(
        "rnbqk/ppppp/5/5/PPPPP/RNBQK w - c4 0 1",
        Geometry::new(5, 6).unwrap(),
    );
    assert_eq!(e.field, FenField::EnPassant);
}

#[test]
fn illegal_positions_are_rejected_but_relaxed_reading_accepts_some() {
    let g = Geometry::STANDARD;
    for (fen, words) in [
        ("8/8/8/8/8/8/8/4K3 w - - 0 1", "Black has 0 kings"),
        ("4k3/8/8/8/8/8/8/4KK2 w - - 0 1", "more than one king"),
        (
            "4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
            "pawn on the first or last rank",
        ),
        ("4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1", "in check"),
    ] {
        let e = err(fen, g);
        assert_eq!(e.field, FenField::Whole);
        assert!(e.to_string().contains(words), "{fen}: {e}");
    }
    assert!(Position::from_fen_relaxed("8/8/8/8/8/8/8/4K3 w - - 0 1", g).is_ok());
    assert!(Position::from_fen_relaxed("4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1", g).is_ok());
    assert!(Position::from_fen_relaxed("4k3/8/8/8/8/8/8/4KK2 w - - 0 1", g).is_err());
}

#[test]
fn garbage_never_panics() {
    let g = Geometry::new(5, 6).unwrap();
    let inputs = [
        "",
        " ",
        "/",
        "//////",
        "8/8/8/8/8/8/8/8",
        "🙂 w - - 0 1",
        "rnbqk/ppppp/5/5/PPPPP/RNBQK 🙂 - - 0 1",
        "k/K w - - 0 1",
        "rnbqk/ppppp/5/5/PPPPP/RNBQK w - - 99999999999 1",
        "rnbqk/ppppp/5/5/PPPPP/RNBQK w - a1 0 1",
        "1111111/ w - - 0 1",
        "rnbqk/ppppp/5/5/PPPPP/RNBQK\tw\n- - 0 1",
    ];
    for fen in inputs {
        let _ = Position::from_fen(fen, g);
        let _ = Position::from_fen_relaxed(fen, g);
        let _ = Position::from_fen(fen, Geometry::STANDARD);
    }
    // Whitespace of any kind separates fields.
    assert!(Position::from_fen("rnbqk/ppppp/5/5/PPPPP/RNBQK\tw\n- - 0 1", g).is_ok());
    // Every prefix of a valid FEN is rejected or accepted without panicking.
    for end in 0..STARTPOS_FEN.len() {
        let _ = Position::from_fen(&STARTPOS_FEN[..end], Geometry::STANDARD);
    }
}
