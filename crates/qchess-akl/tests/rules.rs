//! The rules of Akl-style quantum chess, one test per rule, with exact expected values.

mod common;

use common::{game, mv, sq, targets, touch_moves};
use qchess_akl::{
    AklError, AklPosition, DrawReason, Game, GameStatus, PieceState, TouchResult, TypePair,
};
use qchess_board::{Color, PieceKind::*, Square};

#[test]
fn start_position_has_standard_primaries_and_permuted_secondaries() {
    for seed in 0..50 {
        let pos = AklPosition::startpos_seeded(seed);
        for color in Color::ALL {
            let mut secondaries = Vec::new();
            for (sq, p) in pos.pieces().filter(|(_, p)| p.color == color) {
                if p.is_king() {
                    assert_eq!(sq.file(), 4);
                    assert_eq!(p.state, PieceState::Classical(King));
                    continue;
                }
                assert!(p.is_quantum(), "{sq} starts in superposition");
                let expected_primary = if sq.rank() == 1 || sq.rank() == 6 {
                    Pawn
                } else {
                    [Rook, Knight, Bishop, Queen, King, Bishop, Knight, Rook][sq.file() as usize]
                };
                assert_eq!(p.pair.primary, expected_primary, "{sq}");
                secondaries.push(p.pair.secondary);
            }
            secondaries.sort();
            assert_eq!(
                secondaries,
                vec![
                    Pawn, Pawn, Pawn, Pawn, Pawn, Pawn, Pawn, Pawn, Knight, Knight, Bishop, Bishop,
                    Rook, Rook, Queen
                ]
            );
        }
        // The same seed gives the same set-up.
        assert_eq!(pos, AklPosition::startpos_seeded(seed));
    }
    assert_ne!(
        AklPosition::startpos_seeded(1),
        AklPosition::startpos_seeded(2)
    );
}

#[test]
fn touching_a_quantum_piece_collapses_and_reveals_it() {
    // g1 holds a knight/bishop piece; after 1. touch it collapses to the bishop, which has no
    // move (f2 and h2 are occupied): the turn ends and the piece stays collapsed.
    let mut g = game("4k3/8/8/8/8/8/5(PP)1(PP)/4K1(NB?)1 w - 0 1");
    let out = g.touch_forced(sq("g1"), Some(Bishop)).unwrap();
    assert_eq!(out.collapsed, Some(Bishop));
    assert_eq!(out.result, TouchResult::NoLegalMove);
    assert_eq!(g.side_to_move(), Color::Black);
    let g1 = g.position().piece(sq("g1")).unwrap();
    assert_eq!(g1.state, PieceState::Classical(Bishop));
    for viewer in Color::ALL {
        let seen = g.view(viewer).piece(sq("g1")).unwrap().known;
        assert!(
            seen.contains(Bishop) && seen.contains(Knight),
            "revealed to both"
        );
    }
    assert_eq!(g.history()[0].to_string(), "<B|g1>");
    assert_eq!(
        g.position().quiet_plies,
        1,
        "a touch-only turn is a quiet ply"
    );
}

#[test]
fn a_collapse_that_checks_counts_as_the_move() {
    // d1 is a queen/knight piece; the black king stands on d8 on the open d-file.
    let mut g = game("3k4/8/8/8/8/8/8/3(QN?)K3 w - 0 1");
    let out = g.touch_forced(sq("d1"), Some(Queen)).unwrap();
    assert_eq!(out.result, TouchResult::CheckByCollapse);
    assert_eq!(g.side_to_move(), Color::Black);
    assert_eq!(g.status(), GameStatus::Ongoing, "the king is not captured");
    assert_eq!(g.history()[0].to_string(), "<Q|d1>+");
    // Collapsing to the knight instead gives no check: it must move.
    let mut g = game("3k4/8/8/8/8/8/8/3(QN?)K3 w - 0 1");
    let moves = touch_moves(&mut g, "d1", Some(Knight));
    assert_eq!(targets(&moves), vec!["b2", "c3", "e3", "f2"]);
    // A touched classical queen that attacks the king is not a collapse: it may capture.
    let mut g = game("3k4/8/8/8/8/8/8/3[Q*N?]K3 w - 0 1");
    let moves = touch_moves(&mut g, "d1", None);
    assert!(moves.contains(&mv("d1d8")));
    g.play_forced(mv("d1d8"), None).unwrap();
    assert_eq!(
        g.status(),
        GameStatus::Won {
            winner: Color::White
        }
    );
}

#[test]
fn dark_squares_restore_superposition_on_every_square() {
    for target in Square::ALL {
        // A queen/knight piece moves as a queen to `target` from a neighbouring square; the
        // kings stand where the queen neither starts on nor checks.
        let from = target
            .offset(if target.file() == 0 { 1 } else { -1 }, 0)
            .unwrap();
        let (wk, bk) = king_squares(from, target);
        let mut pos = AklPosition::empty();
        pos.set(wk, Some(qchess_akl::AklPiece::king(Color::White)));
        pos.set(bk, Some(qchess_akl::AklPiece::king(Color::Black)));
        pos.set(
            from,
            Some(qchess_akl::AklPiece::quantum(
                Color::White,
                TypePair::new(Queen, Knight).unwrap(),
            )),
        );
        let mut g = Game::from_position(pos);
        touch_moves(&mut g, &from.to_string(), Some(Queen));
        let done = g
            .play_forced(
                qchess_akl::AklMove {
                    from,
                    to: target,
                    promotion: None,
                },
                None,
            )
            .unwrap();
        let dark = target.file() % 2 == target.rank() % 2; // a1 is dark
        let piece = g.position().piece(target).unwrap();
        if dark {
            assert_eq!(piece.state, PieceState::Quantum, "{target} is dark");
        } else {
            assert_eq!(
                piece.state,
                PieceState::Classical(Queen),
                "{target} is light"
            );
        }
        assert_eq!(done.dest.unwrap().superposed, dark);
        assert_eq!(qchess_akl::is_dark(target), dark);
    }
    assert_eq!(
        Square::ALL
            .iter()
            .filter(|s| qchess_akl::is_dark(**s))
            .count(),
        32
    );
}

/// Two king squares: not `from` or `target`, and not attacked by a queen on `from` or on
/// `target` with these pieces on the board.
fn king_squares(from: Square, target: Square) -> (Square, Square) {
    let free: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|s| {
            let occ = from.bitboard() | target.bitboard();
            *s != from
                && *s != target
                && !qchess_board::queen_attacks(from, occ).contains(*s)
                && !qchess_board::queen_attacks(target, occ).contains(*s)
        })
        .collect();
    (free[0], free[free.len() - 1])
}

#[test]
fn kings_never_enter_superposition() {
    for target in ["d1", "d2", "e2", "f1", "f2"] {
        let mut g = game("4k3/7[p*p]/8/8/8/8/8/4K3 w - 0 1");
        touch_moves(&mut g, "e1", None);
        g.play_forced(mv(&format!("e1{target}")), None).unwrap();
        assert_eq!(
            g.position().piece(sq(target)).unwrap().state,
            PieceState::Classical(King)
        );
    }
}

#[test]
fn a_piece_collapsed_by_a_touch_stays_collapsed_on_a_dark_square() {
    // a1 is dark; the rook/queen piece collapses to a rook that cannot move (a2, b1 blocked).
    let mut g = game("4k3/8/8/8/8/8/[P*P]7/(RQ?)[N*N]2K3 w - 0 1");
    let out = g.touch_forced(sq("a1"), Some(Rook)).unwrap();
    assert_eq!(out.result, TouchResult::NoLegalMove);
    assert_eq!(
        g.position().piece(sq("a1")).unwrap().state,
        PieceState::Classical(Rook)
    );
}

#[test]
fn movement_is_chess_without_en_passant() {
    // A black pawn just made a two-step next to a white pawn: no en passant capture.
    let mut g = game("4k3/8/8/3[P*P][p*p]3/8/8/8/4K3 w - 0 1");
    let moves = touch_moves(&mut g, "d5", None);
    assert_eq!(targets(&moves), vec!["d6"]);
    // Pawns: one or two steps from the start rank, diagonal captures only.
    let mut g = game("4k3/8/8/8/8/2(pp)5/3(PN?)4/4K3 w - 0 1");
    let moves = touch_moves(&mut g, "d2", Some(Pawn));
    assert_eq!(targets(&moves), vec!["c3", "d3", "d4"]);
    // The same piece as a knight.
    let mut g = game("4k3/8/8/8/8/2(pp)5/3(PN?)4/4K3 w - 0 1");
    let moves = touch_moves(&mut g, "d2", Some(Knight));
    assert_eq!(targets(&moves), vec!["b1", "b3", "c4", "e4", "f1", "f3"]);
    // Sliders stop at the first piece and may capture an enemy one.
    let mut g = game("4k3/8/8/8/1(pp)6/8/8/[R*B]3K3 w - 0 1");
    let moves = touch_moves(&mut g, "a1", None);
    assert_eq!(
        targets(&moves),
        vec!["a2", "a3", "a4", "a5", "a6", "a7", "a8", "b1", "c1", "d1"]
    );
}

#[test]
fn kings_may_move_into_and_stay_in_check() {
    // The black rook on d8 is classical and attacks d1 and d2; the white king may go there.
    let mut g = game("3[r*r]k3/8/8/8/8/8/8/4K3 w - 0 1");
    let moves = touch_moves(&mut g, "e1", None);
    assert_eq!(targets(&moves), vec!["d1", "d2", "e2", "f1", "f2"]);
    g.play_forced(mv("e1d1"), None).unwrap();
    // Black captures the king and wins.
    touch_moves(&mut g, "d8", None);
    g.play_forced(mv("d8d1"), Some(King)).unwrap();
    assert_eq!(
        g.status(),
        GameStatus::Won {
            winner: Color::Black
        }
    );
    assert_eq!(g.captured(), &[(Color::White, King)]);
    assert_eq!(g.touch_forced(sq("e8"), None), Err(AklError::GameOver));
}

#[test]
fn castling_needs_untouched_king_and_rook_and_a_free_path() {
    let fen = "4k3/8/8/8/8/8/8/(RN?)3K2(RB?) w KQ 0 1";
    let mut g = game(fen);
    let moves = touch_moves(&mut g, "e1", None);
    assert!(moves.contains(&mv("e1g1")) && moves.contains(&mv("e1c1")));
    g.play_forced(mv("e1g1"), None).unwrap();
    let pos = g.position();
    assert!(pos.piece(sq("g1")).unwrap().is_king());
    // The rook keeps its superposition on the light square f1.
    let f1 = pos.piece(sq("f1")).unwrap();
    assert_eq!(f1.pair, TypePair::new(Rook, Bishop).unwrap());
    assert_eq!(f1.state, PieceState::Quantum);
    assert!(pos.piece(sq("h1")).is_none());
    assert_eq!(pos.castling_text(), "-");
    assert_eq!(g.history()[0].to_string(), "e1 -> g1");

    // Queen side: b1 occupied forbids it (the rook passes b1).
    let mut g = game("4k3/8/8/8/8/8/8/(RN?)[N*N]2K2(RB?) w KQ 0 1");
    let moves = touch_moves(&mut g, "e1", None);
    assert!(!moves.contains(&mv("e1c1")) && moves.contains(&mv("e1g1")));

    // No right (the rook was touched before): no castling.
    let mut g = game("4k3/8/8/8/8/8/8/(RN?)3K2(RB?) w Q 0 1");
    assert!(!touch_moves(&mut g, "e1", None).contains(&mv("e1g1")));
}

#[test]
fn touching_the_rook_or_king_loses_castling() {
    // The h1 piece collapses to a bishop with no move (g2 blocked): the king side right goes.
    let mut g = game("4k3/8/8/8/8/8/6[P*P]1/(RN?)3K2(RB?) w KQ 0 1");
    assert_eq!(
        g.touch_forced(sq("h1"), Some(Bishop)).unwrap().result,
        TouchResult::NoLegalMove
    );
    assert_eq!(g.position().castling_text(), "Q");
    // A king touched without moving (walled in: the turn ends) has been involved in a move
    // too (a touch-only turn is a ply, rules-notes 7a): both rights go.
    let mut g = game("4k3/8/8/8/8/8/3[P*P][P*P][P*P]2/(RN?)2[N*N]K[B*B]1(RB?) w KQ 0 1");
    assert_eq!(
        g.touch_forced(sq("e1"), None).unwrap().result,
        TouchResult::NoLegalMove
    );
    assert_eq!(g.position().castling_text(), "-");
    assert_eq!(g.history()[0].to_string(), "e1");
    // A touched king that moved back still has lost both rights.
    let mut g = game("4k3/8/8/8/8/8/8/(RN?)3K2(RB?) w KQ 0 1");
    touch_moves(&mut g, "e1", None);
    g.play_forced(mv("e1e2"), None).unwrap();
    assert_eq!(g.position().castling_text(), "-");
    // Capturing a corner rook removes that right (h1 is light: the bishop stays classical).
    let mut g = game("4k3/8/2[b*b]5/8/8/8/8/(RN?)3K2(RB?) b KQ 0 1");
    touch_moves(&mut g, "c6", None);
    g.play_forced(mv("c6h1"), Some(Bishop)).unwrap();
    assert_eq!(g.position().castling_text(), "Q");
    assert_eq!(g.history()[0].to_string(), "c6 -> <B|B>h1");
}

#[test]
fn castling_is_forbidden_out_of_through_or_into_check_by_classical_pieces() {
    let base = |attacker: &str| {
        "4k3/8/8/8/8/8/8/(RN?)3K2(RB?) w KQ 0 1"
            .to_string()
            .replace("4k3/8", &format!("4k3/{attacker}"))
    };
    // A classical black rook on the e-, f- or g-file (7th rank row) attacks e1, f1 or g1.
    for (row, king_side_ok, queen_side_ok) in [
        ("4[r*r]3", false, false), // e1: in check, no castling at all
        ("5[r*r]2", false, true),  // f1: through check
        ("6[r*r]1", false, true),  // g1: into check
        ("3[r*r]4", true, false),  // d1: through check on the queen side
        ("2[r*r]5", true, false),  // c1: into check on the queen side
        ("1[r*r]6", true, true),   // b1: only the rook passes b1: allowed
    ] {
        let mut g = game(&base(row));
        let moves = touch_moves(&mut g, "e1", None);
        assert_eq!(moves.contains(&mv("e1g1")), king_side_ok, "{row}");
        assert_eq!(moves.contains(&mv("e1c1")), queen_side_ok, "{row}");
    }
    // A rook in superposition attacks nothing until touched: castling is allowed.
    let mut g = game(&base("5(rb?)2"));
    assert!(touch_moves(&mut g, "e1", None).contains(&mv("e1g1")));
}

#[test]
fn black_castling_rook_on_a_dark_square_is_quantum() {
    let mut g = game("(rn?)3k2(rb?)/8/8/8/8/8/8/4K3 b kq 0 1");
    touch_moves(&mut g, "e8", None);
    g.play_forced(mv("e8c8"), None).unwrap();
    let d8 = g.position().piece(sq("d8")).unwrap();
    assert_eq!(d8.state, PieceState::Quantum);
    assert_eq!(d8.pair, TypePair::new(Rook, Knight).unwrap());
    assert!(g.position().piece(sq("c8")).unwrap().is_king());
}

#[test]
fn promotion_keeps_the_pawns_quantum_nature() {
    // A pawn/knight piece on e7 (knight secret) collapses to a pawn and promotes on light e8.
    let mut g = game("8/4(PN?)3/k7/8/8/8/8/4K3 w - 0 1");
    let moves = touch_moves(&mut g, "e7", Some(Pawn));
    let mut promotions: Vec<_> = moves.iter().map(|m| m.promotion.unwrap()).collect();
    promotions.sort();
    assert_eq!(
        promotions,
        vec![Pawn, Knight, Bishop, Rook, Queen],
        "one move per type but king (rules-notes 5)"
    );
    assert!(matches!(
        g.play_forced(mv("e7e8"), None),
        Err(AklError::IllegalMove { .. })
    ));
    let done = g.play_forced(mv("e7e8q"), None).unwrap();
    assert_eq!(done.to_string(), "<P|e7> -> e8=Q");
    let e8 = g.position().piece(sq("e8")).unwrap();
    assert_eq!(e8.pair, TypePair::new(Queen, Knight).unwrap());
    assert_eq!(e8.state, PieceState::Classical(Queen));
    assert!(
        !g.view(Color::Black)
            .piece(sq("e8"))
            .unwrap()
            .known
            .contains(Knight)
    );
    assert_eq!(g.position().quiet_plies, 0, "a pawn move");

    // Promotion onto dark d8 with a capture: superposition of rook and the pawn's other type.
    let mut g = game("k2(qb?)4/4(NP)3/8/8/8/8/8/4K3 w - 0 1");
    touch_moves(&mut g, "e7", Some(Pawn));
    let done = g.play_forced(mv("e7d8r"), Some(Queen)).unwrap();
    assert_eq!(done.to_string(), "<P|e7> -> <P|Q>d8=R|psi>_prom");
    let d8 = g.position().piece(sq("d8")).unwrap();
    assert_eq!(d8.pair, TypePair::new(Rook, Knight).unwrap());
    assert_eq!(d8.state, PieceState::Quantum);
    // The knight was public (primary of the pawn's pair), so it stays known.
    assert!(d8.known.contains(Knight) && d8.known.contains(Rook));

    // Any number of queens.
    let mut g = game("k7/4[P*P]3/8/8/8/8/8/[Q*Q][Q*Q][Q*Q]1K3 w - 0 1");
    touch_moves(&mut g, "e7", None);
    g.play_forced(mv("e7e8q"), None).unwrap();
    let queens = g
        .position()
        .pieces()
        .filter(|(_, p)| p.current() == Some(Queen))
        .count();
    assert_eq!(queens, 4);
}

#[test]
fn promotion_to_a_pawn_is_allowed_and_keeps_the_other_type() {
    // "Any type but king" (rules-notes 5) includes pawn. On dark d8 the promoted piece is in
    // superposition of pawn and the pawn's other type (knight), so it can move again.
    let mut g = game("k7/3(PN?)4/8/8/8/8/8/4K3 w - 5 1");
    touch_moves(&mut g, "d7", Some(Pawn));
    let done = g.play_forced(mv("d7d8p"), None).unwrap();
    assert_eq!(done.to_string(), "<P|d7> -> d8=P|psi>_prom");
    let d8 = g.position().piece(sq("d8")).unwrap();
    assert_eq!(d8.pair, TypePair::new(Pawn, Knight).unwrap());
    assert_eq!(d8.state, PieceState::Quantum);
    assert_eq!(g.position().quiet_plies, 0);
    // The notation round-trips, and a king is still refused.
    assert_eq!(
        "<P|d7> -> d8=P|psi>_prom".parse::<qchess_akl::TurnEntry>(),
        Ok(done)
    );
    assert!("d7 -> d8=K".parse::<qchess_akl::TurnEntry>().is_err());
    assert!("d7d8k".parse::<qchess_akl::AklMove>().is_err());
    // Light e8: a classical pawn on the last rank, which has no move when touched.
    let mut g = game("k7/4(PN?)3/8/8/8/8/8/4K3 w - 0 1");
    touch_moves(&mut g, "e7", Some(Pawn));
    g.play_forced(mv("e7e8p"), None).unwrap();
    assert_eq!(
        g.position().piece(sq("e8")).unwrap().state,
        PieceState::Classical(Pawn)
    );
    touch_moves(&mut g, "a8", None);
    g.play_forced(mv("a8a7"), None).unwrap();
    assert_eq!(
        g.touch_forced(sq("e8"), None).unwrap().result,
        TouchResult::NoLegalMove
    );
}

#[test]
fn a_pawn_pair_promotion_does_not_reveal_the_other_type() {
    let mut g = game("k7/4(PP)3/8/8/8/8/8/4K3 w - 0 1");
    touch_moves(&mut g, "e7", Some(Pawn));
    g.play_forced(mv("e7e8n"), None).unwrap();
    let e8 = g.position().piece(sq("e8")).unwrap();
    assert_eq!(e8.pair, TypePair::new(Knight, Pawn).unwrap());
    assert_eq!(e8.known.iter().collect::<Vec<_>>(), vec![Knight]);
}

#[test]
fn own_pairs_views_show_a_pair_of_equal_types() {
    // Under own-pairs White knows that its e2 piece is pawn/pawn; Black knows only the pawn.
    let pos = AklPosition::parse("4k3/8/8/8/8/8/4(PP?)3/4K3 w - 0 1").unwrap();
    let g = Game::with_rules(
        pos,
        qchess_akl::Rules {
            visibility: qchess_akl::Visibility::OwnPairs,
        },
    );
    let white = g.view(Color::White);
    let black = g.view(Color::Black);
    assert_eq!(
        white.piece(sq("e2")).unwrap().pair,
        TypePair::new(Pawn, Pawn)
    );
    assert_eq!(black.piece(sq("e2")).unwrap().pair, None);
    assert!(white.render().contains("(PP)") && !white.render().contains("(P?)"));
    assert!(black.render().contains("(P?)") && !black.render().contains("(PP)"));
    // Under the default rules nobody sees the secret pawn.
    let g = game("4k3/8/8/8/8/8/4(PP?)3/4K3 w - 0 1");
    assert!(g.view(Color::White).render().contains("(P?)"));
}

#[test]
fn a_captured_quantum_piece_collapses_before_leaving() {
    let mut g = game("4k3/8/8/3(pq?)4/8/8/8/3[R*R]K3 w - 0 1");
    touch_moves(&mut g, "d1", None);
    assert!(matches!(
        g.play_forced(mv("d1d5"), Some(Knight)),
        Err(AklError::ImpossibleCollapse { kind: Knight, .. })
    ));
    assert!(matches!(
        g.play_forced(mv("d1d5"), None),
        Err(AklError::CollapseNotRecorded { .. })
    ));
    let done = g.play_forced(mv("d1d5"), Some(Queen)).unwrap();
    assert_eq!(done.to_string(), "d1 -> <R|Q>d5", "d5 is light");
    assert_eq!(g.captured(), &[(Color::Black, Queen)]);
    assert_eq!(g.position().quiet_plies, 0);
}

#[test]
fn bare_kings_draw() {
    let mut g = game("4k3/3[R*R]4/8/8/8/8/8/4K3 b - 0 1");
    touch_moves(&mut g, "e8", None);
    g.play_forced(mv("e8d7"), None).unwrap();
    assert_eq!(g.status(), GameStatus::Drawn(DrawReason::BareKings));
    assert!(matches!(
        g.touch_forced(sq("e1"), None),
        Err(AklError::GameOver)
    ));
}

#[test]
fn hundred_quiet_plies_draw_and_pawn_moves_or_captures_reset() {
    // Kings walk back and forth; touch-only turns count as plies too.
    let mut g = game("7k/8/8/8/8/8/[P*P]7/K7 w - 97 60");
    touch_moves(&mut g, "a1", None);
    g.play_forced(mv("a1b1"), None).unwrap();
    assert_eq!(g.position().quiet_plies, 98);
    touch_moves(&mut g, "h8", None);
    g.play_forced(mv("h8g8"), None).unwrap();
    assert_eq!(g.status(), GameStatus::Ongoing);
    // White's pawn move resets the counter.
    touch_moves(&mut g, "a2", None);
    g.play_forced(mv("a2a3"), None).unwrap();
    assert_eq!(g.position().quiet_plies, 0);

    let mut g = game("7k/8/8/8/8/8/[P*P]7/K7 w - 99 60");
    touch_moves(&mut g, "a1", None);
    g.play_forced(mv("a1b1"), None).unwrap();
    assert_eq!(g.position().quiet_plies, 100);
    assert_eq!(g.status(), GameStatus::Drawn(DrawReason::QuietPlies));

    // A touch-only turn as the 100th ply.
    let mut g = game("7k/8/8/8/8/8/[P*P]7/[R*N]K6 w - 99 60");
    let out = g.touch_forced(sq("a1"), None).unwrap();
    assert_eq!(out.result, TouchResult::NoLegalMove);
    assert_eq!(g.status(), GameStatus::Drawn(DrawReason::QuietPlies));

    // A piece that is a pawn when it moves resets; a pawn-primary piece moving as a knight
    // does not.
    let mut g = game("7k/8/8/8/8/8/8/1(PN?)5K w - 10 60");
    touch_moves(&mut g, "b1", Some(Knight));
    g.play_forced(mv("b1c3"), None).unwrap();
    assert_eq!(g.position().quiet_plies, 11);
}

#[test]
fn bad_input_is_an_error_and_changes_nothing() {
    let start = Game::from_seed(4);
    let mut g = start.clone();
    let errors = [
        g.touch_forced(sq("e4"), None).unwrap_err(),
        g.touch_forced(sq("e7"), Some(Pawn)).unwrap_err(),
        g.touch_forced(sq("e2"), Some(King)).unwrap_err(),
        g.touch_forced(sq("e2"), None).unwrap_err(),
        g.touch_forced(sq("e1"), Some(King)).unwrap_err(),
        g.play_forced(mv("e2e4"), None).unwrap_err(),
        g.apply_entry(&"<P|e2> -> e5".parse().unwrap(), None)
            .unwrap_err(),
        g.apply_entry(&"<P|e2>".parse().unwrap(), None).unwrap_err(),
        g.apply_entry(&"e2".parse().unwrap(), None).unwrap_err(),
    ];
    assert_eq!(errors[0], AklError::EmptySquare { square: sq("e4") });
    assert_eq!(errors[1], AklError::NotYourPiece { square: sq("e7") });
    assert!(matches!(errors[2], AklError::ImpossibleCollapse { .. }));
    assert_eq!(
        errors[3],
        AklError::CollapseNotRecorded { square: sq("e2") }
    );
    assert_eq!(errors[4], AklError::NotQuantum { square: sq("e1") });
    assert_eq!(errors[5], AklError::NothingTouched);
    assert!(
        matches!(errors[6], AklError::IllegalMove { .. }),
        "{}",
        errors[6]
    );
    // An unwritten collapse that no type allows: the message names only the public type,
    // not the secret knight.
    let mut secret = game("4k3/8/8/8/8/8/4(PN?)3/4K3 w - 0 1");
    assert_eq!(
        secret
            .apply_entry(&"e2 -> e6".parse().unwrap(), None)
            .unwrap_err()
            .to_string(),
        "illegal move e2e6: neither type of the piece on e2 can make it (known: a pawn)"
    );
    assert!(
        matches!(errors[7], AklError::EntryMismatch { .. }),
        "{}",
        errors[7]
    );
    assert_eq!(
        errors[8],
        AklError::CollapseNotRecorded { square: sq("e2") }
    );
    for e in &errors {
        assert!(!e.to_string().is_empty());
    }
    assert_eq!(g.position(), start.position());
    assert!(g.history().is_empty() && g.pending_touch().is_none());

    // After a touch: moving another piece or an illegal target fails and keeps the touch.
    let moves = touch_moves(&mut g, "e2", Some(Pawn));
    assert_eq!(targets(&moves), vec!["e3", "e4"]);
    let before = g.position().clone();
    assert!(matches!(
        g.play_forced(mv("d2d4"), None),
        Err(AklError::IllegalMove { .. })
    ));
    assert!(matches!(
        g.play_forced(mv("e2e5"), None),
        Err(AklError::IllegalMove { .. })
    ));
    assert!(matches!(
        g.play_forced(mv("e2e4q"), None),
        Err(AklError::IllegalMove { .. })
    ));
    assert!(matches!(
        g.play_forced(mv("e2e4"), Some(Pawn)),
        Err(AklError::EntryMismatch { .. })
    ));
    assert_eq!(
        g.touch_forced(sq("d2"), Some(Pawn)),
        Err(AklError::TouchPending { square: sq("e2") })
    );
    assert_eq!(g.position(), &before);
    assert_eq!(g.pending_touch().unwrap().0, sq("e2"));
    g.play_forced(mv("e2e4"), None).unwrap();
}

#[test]
fn the_largest_move_number_does_not_overflow() {
    // A position text may give any u32 move number; Black's turn must not overflow it.
    let mut g = game("4k3/8/8/8/8/8/[P*P]7/4K3 b - 0 4294967295");
    touch_moves(&mut g, "e8", None);
    g.play_forced(mv("e8d8"), None).unwrap();
    assert_eq!(g.position().fullmove, u32::MAX);
}

#[test]
fn a_hand_built_right_without_its_rook_gives_no_castling() {
    // `AklPosition`'s fields are public, so a right may be claimed with no rook on h1 (the
    // text form refuses it). Castling then is not offered (it used to panic when played).
    let mut pos = AklPosition::parse("4k3/8/8/8/8/8/[P*P]7/4K3 w - 0 1").unwrap();
    pos.castling = [[true, true], [false, false]];
    let mut g = Game::from_position(pos);
    let moves = touch_moves(&mut g, "e1", None);
    assert_eq!(targets(&moves), vec!["d1", "d2", "e2", "f1", "f2"]);
    assert!(matches!(
        g.play_forced(mv("e1g1"), None),
        Err(AklError::IllegalMove { .. })
    ));
}
