//! The rules text's notation: Fool's Mate as written there, round trips, and bad input.

mod common;

use common::sq;
use qchess_akl::{AklError, AklPosition, GameRecord, PieceState, Style, TurnEntry};
use qchess_board::{Color, PieceKind::*};

/// Fool's Mate exactly as the rules text writes it (its LaTeX source, comments included).
const FOOLS_MATE_LATEX: &str = r"  1. f2 \(\rightarrow\) f3 (White's pawn moves forward)
  2. e7 \(\rightarrow\) e5 (Black's pawn moves forward)
  3. g2 \(\rightarrow\) g4 (White's pawn moves forward)
  4. \(\langle Q|d8 \rangle \rightarrow\) h4# (Black's queen collapses to classical state and delivers checkmate)";

/// The same as the rendered text shows it.
const FOOLS_MATE_UNICODE: &str = "1. f2 → f3\n2. e7 → e5\n3. g2 → g4\n4. ⟨Q|d8⟩ → h4#\n";

fn check_fools_mate(text: &str, seed: u64) {
    let record = GameRecord::parse(&format!("[Seed \"{seed}\"]\n{text}")).unwrap();
    assert_eq!(record.entries.len(), 4);
    assert_eq!(record.entries[3].collapse, Some(Queen));
    assert!(record.entries[3].check, "the # mark is read");
    let game = record.replay().unwrap();
    let pos = game.position();
    let canonical: Vec<String> = game.history().iter().map(|e| e.to_string()).collect();
    assert_eq!(
        canonical,
        vec![
            "<P|f2> -> f3",
            "<P|e7> -> e5|psi>",
            "<P|g2> -> g4",
            "<Q|d8> -> h4|psi>"
        ],
        "seed {seed}"
    );
    // f3 and g4 are light: the pawns stay classical; e5 and h4 are dark: superposition.
    assert_eq!(
        pos.piece(sq("f3")).unwrap().state,
        PieceState::Classical(Pawn)
    );
    assert_eq!(
        pos.piece(sq("g4")).unwrap().state,
        PieceState::Classical(Pawn)
    );
    assert_eq!(pos.piece(sq("e5")).unwrap().state, PieceState::Quantum);
    let h4 = pos.piece(sq("h4")).unwrap();
    assert_eq!(
        (h4.color, h4.state, h4.pair.primary),
        (Color::Black, PieceState::Quantum, Queen)
    );
    for gone in ["f2", "e7", "g2", "d8"] {
        assert!(pos.piece(sq(gone)).is_none(), "{gone}");
    }
    assert_eq!(pos.side_to_move, Color::White);
    assert_eq!(pos.quiet_plies, 1, "three pawn moves, then a queen move");
    assert_eq!(pos.fullmove, 3);
    // The pair of the queen piece is the start pair of d8, and it is the same game as the
    // ASCII record of it.
    let start_d8 = AklPosition::startpos_seeded(seed)
        .piece(sq("d8"))
        .copied()
        .unwrap();
    assert_eq!(h4.pair, start_d8.pair);
    let again = GameRecord::parse(&game.record().to_text(Style::Unicode))
        .unwrap()
        .replay()
        .unwrap();
    assert_eq!(again.position(), pos);
}

#[test]
fn fools_mate_in_the_texts_notation_parses_and_replays() {
    for seed in 0..40 {
        check_fools_mate(FOOLS_MATE_LATEX, seed);
        check_fools_mate(FOOLS_MATE_UNICODE, seed);
    }
}

#[test]
fn entries_print_and_parse_in_both_styles() {
    for text in [
        "e1 -> g1",
        "<B|g1>",
        "<Q|d1>+",
        "<P|e7> -> <P|Q>d8=R|psi>_prom",
        "<N|b1> -> c3",
        "d1 -> <R|Q>d5",
        "<P|e2> -> e4",
        "<R|a1> -> <R|P>a7|psi>+",
    ] {
        let e: TurnEntry = text.parse().unwrap();
        assert_eq!(e.to_string(), text);
        let uni = e.format(Style::Unicode);
        assert!(!uni.contains('<') && !uni.contains("->"), "{uni}");
        assert_eq!(uni.parse::<TurnEntry>().unwrap(), e, "{uni}");
    }
    let e: TurnEntry = "⟨P|e7⟩ → ⟨P|Q⟩d8=R|ψ⟩_prom".parse().unwrap();
    assert_eq!(e.to_string(), "<P|e7> -> <P|Q>d8=R|psi>_prom");
    // The text's LaTeX promotion mark.
    let e: TurnEntry = r"e7 \(\rightarrow\) e8=Q |\psi\rangle_{prom}"
        .parse()
        .unwrap();
    assert!(e.dest.unwrap().superposed && e.dest.unwrap().promotion == Some(Queen));
    // Lower-case letters in the bras are accepted.
    assert_eq!(
        "<q|d8> -> h4".parse::<TurnEntry>().unwrap().collapse,
        Some(Queen)
    );
}

#[test]
fn the_plain_forms_of_every_variant_read_as_the_arrow_form() {
    let arrow: TurnEntry = "e2 -> e4".parse().unwrap();
    for text in ["e2e4", "e2-e4", "e2 e4", "e2 - e4"] {
        assert_eq!(text.parse::<TurnEntry>().unwrap(), arrow, "{text}");
    }
    let promotion: TurnEntry = "e7 -> e8=Q".parse().unwrap();
    for text in ["e7e8q", "e7e8=Q", "e7e8Q", "e7 e8=q", "e7-e8q"] {
        assert_eq!(text.parse::<TurnEntry>().unwrap(), promotion, "{text}");
    }
    // Printed in the canonical arrow form; a check mark and a collapse bra still read.
    assert_eq!("e2e4".parse::<TurnEntry>().unwrap().to_string(), "e2 -> e4");
    assert_eq!(
        "<P|e2>e4+".parse::<TurnEntry>().unwrap().to_string(),
        "<P|e2> -> e4+"
    );
    for (bad, at) in [("e7e8k", 4), ("e2e9", 2), ("e2--e4", 3), ("e2e4e5", 4)] {
        match bad.parse::<TurnEntry>() {
            Err(AklError::Notation { at: got, .. }) => assert_eq!(got, at, "{bad}"),
            other => panic!("{bad:?} gave {other:?}"),
        }
    }
}

#[test]
fn the_texts_sourceless_ket_is_a_destination_in_superposition() {
    for text in [
        "|psi> -> e5",
        "|ψ⟩ → e5",
        r"\(|\psi\rangle \rightarrow\) e5",
        "-> e5|psi>",
    ] {
        let d = qchess_akl::parse_destination(text).unwrap();
        assert_eq!(
            (d.to, d.superposed, d.capture),
            (sq("e5"), true, None),
            "{text}"
        );
    }
    assert!(!qchess_akl::parse_destination("-> e5").unwrap().superposed);
    for bad in ["|psi> e5", "|psi> -> e5|psi>", "|psi>"] {
        assert!(
            matches!(
                qchess_akl::parse_destination(bad),
                Err(AklError::Notation { .. })
            ),
            "{bad}"
        );
    }
    // A whole entry still needs its source square.
    assert!("|psi> -> e5".parse::<TurnEntry>().is_err());
}

#[test]
fn bad_notation_says_what_and_where() {
    for (text, at) in [
        ("", 0),
        ("<Q|d9>", 3),
        ("<X|d8>", 1),
        ("<K|e1>", 1),
        ("e2 ->", 5),
        ("e2 -> e4 e5", 9),
        ("<Q|d8 -> h4", 6),
        ("e7 -> e8=K", 9),
        ("e7 -> e8|psi>_prom", 13),
        ("z9", 0),
    ] {
        match text.parse::<TurnEntry>() {
            Err(AklError::Notation {
                at: got, message, ..
            }) => {
                assert_eq!(got, at, "{text:?}: {message}");
                assert!(!message.is_empty());
            }
            other => panic!("{text:?} gave {other:?}"),
        }
    }
}

#[test]
fn records_that_do_not_replay_say_which_ply() {
    // Ply 3 moves a black piece on White's turn.
    let text = "[Seed \"1\"]\n1. f2 -> f3\n2. e7 -> e5\n3. d7 -> d5\n";
    match GameRecord::parse(text).unwrap().replay() {
        Err(AklError::Replay { ply: 3, source, .. }) => {
            assert_eq!(*source, AklError::NotYourPiece { square: sq("d7") })
        }
        other => panic!("{other:?}"),
    }
    // A touch-only entry on a quantum piece without its collapse cannot replay.
    let text = "[Seed \"1\"]\n1. g1\n";
    assert!(matches!(
        GameRecord::parse(text).unwrap().replay(),
        Err(AklError::Replay { ply: 1, .. })
    ));
    // Malformed records.
    for (text, line) in [
        ("1. f2 -> f3\n", 0),
        ("[Seed \"x\"]\n", 1),
        ("[Variant \"cantwell\"]\n", 1),
        ("[Seed \"1\"]\n\n1. f2 -> -> f3\n", 3),
        ("[Seed \"1\"\n", 1),
        ("[Position \"8/8 w - 0 1\"]\n", 1),
    ] {
        match GameRecord::parse(text) {
            Err(AklError::Record { line: got, message }) => {
                assert_eq!(got, line, "{text:?}: {message}")
            }
            other => panic!("{text:?} gave {other:?}"),
        }
    }
}

#[test]
fn positions_print_and_parse() {
    for seed in 0..10 {
        let pos = AklPosition::startpos_seeded(seed);
        let text = pos.to_string();
        assert!(text.ends_with(" w KQkq 0 1"), "{text}");
        assert_eq!(AklPosition::parse(&text).unwrap(), pos);
    }
    let text = "r3k3/8/8/8/8/8/4[P*N]3/4K2(RB?) w K 0 1";
    assert!(
        matches!(AklPosition::parse(text), Err(AklError::Position { .. })),
        "r is not a token"
    );
    for bad in [
        "4k3/8/8/8/8/8/8/4K3 w - 0",
        "4k3/8/8/8/8/8/8/4K4 w - 0 1",
        "4k3/8/8/8/8/8/8/3KK3 w - 0 1",
        "8/8/8/8/8/8/8/8 w - 0 1",
        "4k3/8/8/8/8/8/8/4K3 x - 0 1",
        "4k3/8/8/8/8/8/8/4K3 w K 0 1",
        "4k3/8/8/8/8/8/8/4K2[R*B] w K 0 1",
        "4k3/8/8/8/8/8/8/3(Qn)K3 w - 0 1",
        "4k3/8/8/8/8/8/8/3(QK)K3 w - 0 1",
        "4k3/8/8/8/8/8/8/3[QN]K3 w - 0 1",
        "4k3/8/8/8/8/8/8/3(Q*N)K3 w - 0 1",
        "4k3/8/8/8/8/8/8/3[Q?*N]K3 w - 0 1",
        "4k3/8/8/8/8/8/8/3(QNB)K3 w - 0 1",
        "4k3/8/8/8/8/8/8/3(QN K3 w - 0 1",
        "4k3/8/8/8/8/8/8/4K3 w - -1 1",
        "4k3/8/8/8/8/8/8/4K3 w - 0 0",
    ] {
        let err = AklPosition::parse(bad).unwrap_err();
        assert!(matches!(err, AklError::Position { .. }), "{bad}");
        assert!(err.to_string().starts_with("bad position: "), "{err}");
    }
}
