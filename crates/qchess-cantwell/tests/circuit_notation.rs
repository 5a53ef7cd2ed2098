//! The long move form `<squares>[.m0|.m1]:<TYPE>:<VARIANT>` (rules-notes D7): round trips and
//! error positions.

use qchess_board::Square;
use qchess_cantwell::circuit::{CircuitError, MoveType, OccupancyMove, Variant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn parse(text: &str) -> Result<OccupancyMove, CircuitError> {
    text.parse()
}

fn error_at(text: &str) -> (usize, String) {
    match parse(text) {
        Err(CircuitError::Parse { position, reason }) => (position, reason),
        other => panic!("{text}: expected a parse error, got {other:?}"),
    }
}

#[test]
fn the_contract_examples_parse() {
    let split = parse("b1^a3c3:SPLIT_JUMP:BASIC").unwrap();
    assert_eq!(split.move_type, MoveType::SplitJump);
    assert_eq!(
        (split.source, split.target, split.target2),
        (Square::B1, Square::A3, Some(Square::C3))
    );
    let merge = parse("c3a3^b1:MERGE_JUMP:BASIC").unwrap();
    assert_eq!(
        (merge.source, merge.source2, merge.target),
        (Square::C3, Some(Square::A3), Square::B1)
    );
    let capture = parse("a1c1.m1:SLIDE:CAPTURE").unwrap();
    assert_eq!(
        (capture.variant, capture.forced),
        (Variant::Capture, Some(true))
    );
    let promotion = parse("a7a8q:PAWN_STEP:BASIC").unwrap();
    assert_eq!(promotion.promotion, Some('q'));
    let blocked = parse("a1b1.m0:JUMP:EXCLUDED").unwrap();
    assert_eq!(blocked.forced, Some(false));
    // Names are case-insensitive on input and upper case on output.
    assert_eq!(
        parse("a1b1:jump:basic").unwrap().to_string(),
        "a1b1:JUMP:BASIC"
    );
    assert_eq!(
        parse("a7a8Q:PAWN_STEP:BASIC").unwrap().to_string(),
        "a7a8q:PAWN_STEP:BASIC"
    );
    // .m1 is accepted on a move without measurement (D7).
    assert_eq!(
        parse("e2e4.m1:PAWN_TWO_STEP:BASIC").unwrap().forced,
        Some(true)
    );
}

#[test]
fn every_valid_move_round_trips() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut checked = 0;
    while checked < 3000 {
        let ty = MoveType::ALL[rng.random_range(0..12)];
        let variant = Variant::ALL[rng.random_range(0..3)];
        let sq = |rng: &mut ChaCha8Rng| Square::from_index(rng.random_range(0..64)).unwrap();
        let (a, b, c) = (sq(&mut rng), sq(&mut rng), sq(&mut rng));
        let mut mv = OccupancyMove::new(ty, variant, a, b);
        if ty.is_split() {
            mv.target2 = Some(c);
        }
        if ty.is_merge() {
            mv.source2 = Some(c);
        }
        if ty.may_promote() && rng.random_bool(0.3) {
            mv.promotion = Some(['q', 'r', 'b', 'n'][rng.random_range(0..4)]);
        }
        mv.forced = [None, Some(true), Some(false)][rng.random_range(0..3)];
        let text = mv.to_string();
        match mv.validate() {
            Ok(()) => {
                assert_eq!(parse(&text), Ok(mv), "{text}");
                checked += 1;
            }
            Err(_) => assert!(parse(&text).is_err(), "{text} should be rejected"),
        }
    }
}

#[test]
fn parse_errors_say_where_and_why() {
    assert_eq!(error_at(""), (0, "expected a square".into()));
    assert_eq!(error_at("i1b1:JUMP:BASIC"), (0, "file must be a-h".into()));
    assert_eq!(error_at("a9b1:JUMP:BASIC"), (1, "rank must be 1-8".into()));
    assert_eq!(
        error_at("a1b"),
        (3, "expected the rank of the square".into())
    );
    assert_eq!(error_at("a1b1").0, 4);
    assert_eq!(error_at("a1b1:HOP:BASIC").0, 5);
    assert!(
        error_at("a1b1:HOP:BASIC")
            .1
            .contains("unknown move type 'HOP'")
    );
    assert_eq!(error_at("a1b1:JUMP").0, 9);
    assert_eq!(error_at("a1b1:JUMP:BASIK").0, 10);
    assert_eq!(error_at("a1b1:JUMP:BASIC:").0, 15);
    assert_eq!(error_at("a1b1.x1:JUMP:EXCLUDED").0, 5);
    assert_eq!(
        error_at("a1b1.m2:JUMP:EXCLUDED"),
        (6, "measurement outcome must be 0 or 1".into())
    );
    assert_eq!(error_at("a1^b1c1:JUMP:BASIC").0, 2);
    assert_eq!(error_at("a1b1:SPLIT_JUMP:BASIC").0, 5);
    assert_eq!(error_at("a1b1^c1:SPLIT_SLIDE:BASIC").0, 8);
    assert_eq!(
        error_at("a7a8k:PAWN_STEP:BASIC"),
        (4, "promotion letter must be q, r, b or n".into())
    );
    assert_eq!(error_at("a1b1q:JUMP:BASIC").0, 4);
    assert_eq!(error_at("a1a1:JUMP:BASIC").0, 0);
    // Non-ASCII input: positions count characters.
    assert_eq!(error_at("a1b1:JÜMP:BASIC").0, 5);
}

#[test]
fn rules_notes_d7_rejections() {
    // PAWN_STEP:CAPTURE and PAWN_TWO_STEP:CAPTURE are not moves of the paper.
    assert_eq!(error_at("a2a3:PAWN_STEP:CAPTURE").0, 15);
    assert_eq!(error_at("a2a4:PAWN_TWO_STEP:CAPTURE").0, 19);
    // .m0 on a move without measurement.
    for text in [
        "a1b3.m0:JUMP:BASIC",
        "a1a3.m0:SLIDE:BASIC",
        "a2a3.m0:PAWN_STEP:BASIC",
        "a2a4.m0:PAWN_TWO_STEP:BASIC",
        "b1^a3c3.m0:SPLIT_JUMP:CAPTURE",
        "c3a3^b1.m0:MERGE_SLIDE:EXCLUDED",
        "e5d6.m0:PAWN_EP:BASIC",
    ] {
        let (position, reason) = error_at(text);
        assert_eq!(text.chars().nth(position), Some('.'), "{text}");
        assert!(reason.contains("no measurement"), "{text}: {reason}");
    }
    // .m0 is fine wherever the paper measures.
    for text in [
        "a1b3.m0:JUMP:EXCLUDED",
        "a1b3.m0:JUMP:CAPTURE",
        "a1a3.m0:SLIDE:EXCLUDED",
        "a1a3.m0:SLIDE:CAPTURE",
        "a2a3.m0:PAWN_STEP:EXCLUDED",
        "a2a4.m0:PAWN_TWO_STEP:EXCLUDED",
        "a2b3.m0:PAWN_CAPTURE:BASIC",
        "e5d6.m0:PAWN_EP:EXCLUDED",
        "e5d6.m0:PAWN_EP:CAPTURE",
        "e1g1.m0:KS_CASTLE:BASIC",
        "e1c1.m0:QS_CASTLE:BASIC",
    ] {
        assert_eq!(parse(text).map(|m| m.forced), Ok(Some(false)), "{text}");
    }
}

#[test]
fn castling_and_en_passant_geometry() {
    let ks = parse("e1g1:KS_CASTLE:BASIC")
        .unwrap()
        .castling_squares()
        .unwrap();
    assert_eq!(
        (ks.rook_from, ks.rook_to, ks.control),
        (Square::H1, Square::F1, None)
    );
    let qs = parse("e8c8:QS_CASTLE:BASIC")
        .unwrap()
        .castling_squares()
        .unwrap();
    assert_eq!(
        (qs.rook_from, qs.rook_to, qs.control),
        (Square::A8, Square::D8, Some(Square::B8))
    );
    assert_eq!(error_at("e1f1:KS_CASTLE:BASIC").0, 0);
    assert_eq!(error_at("e1g1:QS_CASTLE:BASIC").0, 0);
    assert_eq!(error_at("e1g2:KS_CASTLE:BASIC").0, 0);
    let ep = parse("e5d6:PAWN_EP:BASIC").unwrap();
    assert_eq!(ep.ep_square(), Some(Square::D5));
    assert_eq!(
        parse("d4e3:PAWN_EP:CAPTURE").unwrap().ep_square(),
        Some(Square::E4)
    );
    assert_eq!(error_at("e5e6:PAWN_EP:BASIC").0, 0);
}

#[test]
fn errors_display_what_and_where() {
    let err = parse("a1b1:JUMP:BASIK").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad move at character 10: unknown variant 'BASIK' (one of BASIC, EXCLUDED, CAPTURE)"
    );
    let err: &dyn std::error::Error = &err;
    assert!(err.source().is_none());
}

mod never_panics {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Arbitrary text, and mutations of valid moves, parse to a move or an error whose
        /// position lies inside the input.
        #[test]
        fn parsing_never_panics(text in ".{0,40}", base in 0usize..6, cut in 0usize..30, junk in "[a-z0-9^.:_A-Z]{0,6}") {
            for candidate in [text.clone(), {
                let valid = ["b1^a3c3:SPLIT_JUMP:BASIC", "c3a3^b1:MERGE_SLIDE:BASIC", "a1c1.m1:SLIDE:CAPTURE",
                             "a7a8q:PAWN_STEP:BASIC", "e1g1.m0:KS_CASTLE:BASIC", "e5d6:PAWN_EP:CAPTURE"][base];
                let cut = cut.min(valid.len());
                format!("{}{}{}", &valid[..cut], junk, &valid[cut..])
            }] {
                match parse(&candidate) {
                    Ok(mv) => prop_assert_eq!(parse(&mv.to_string()), Ok(mv)),
                    Err(CircuitError::Parse { position, .. }) => {
                        prop_assert!(position <= candidate.chars().count());
                    }
                    Err(other) => prop_assert!(false, "unexpected error {other:?}"),
                }
            }
        }
    }
}
