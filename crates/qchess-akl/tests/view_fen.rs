//! Views as AKL-FEN: written with unseen types left out, read back with them drawn.

use qchess_akl::{AklPosition, Game, Visibility};
use qchess_board::{Color, PieceKind, Square};
use rand::SeedableRng;

#[test]
fn a_view_reads_back_to_the_same_view_and_hides_nothing_it_should_not() {
    let mut game = Game::from_seed(21);
    // White touches b1 and the collapse is public.
    game.touch_forced(
        Square::B1,
        Some(game.position().piece(Square::B1).unwrap().pair.secondary),
    )
    .unwrap();
    let moves = game
        .pending_touch()
        .map(|(_, _, m)| m.to_vec())
        .unwrap_or_default();
    if let Some(m) = moves.first() {
        game.play_forced(*m, None).unwrap();
    }
    for viewer in Color::ALL {
        for vis in [Visibility::Revealed, Visibility::OwnPairs] {
            let view = game.position().view_fen(viewer, vis);
            for seed in 0..5 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let drawn = AklPosition::parse_view(&view, vis, &mut rng).unwrap();
                if viewer == drawn.side_to_move {
                    assert_eq!(drawn.view_fen(viewer, vis), view);
                }
                // Public facts survive: squares, colours, primary types, states.
                for (sq, p) in game.position().pieces() {
                    let q = drawn.piece(sq).unwrap();
                    assert_eq!(
                        (q.color, q.pair.primary, q.state),
                        (p.color, p.pair.primary, p.state)
                    );
                }
            }
        }
    }
    // Under OwnPairs a side's own pairs are written in full, the opponent's are not.
    let view = Game::from_seed(5)
        .position()
        .view_fen(Color::White, Visibility::OwnPairs);
    assert!(!view.contains("(P?)") && view.contains("(p?)"), "{view}");
}

#[test]
fn bad_view_tokens_are_errors() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    for bad in [
        "4k3/8/8/8/8/8/8/4K2(r??) w - 0 1",
        "4k3/8/8/8/8/8/8/4K2[r?] w - 0 1",
        "4k3/8/8/8/8/8/8/4K2(r*?) w - 0 1",
        "4k3/8/8/8/8/8/8/4K2(k?) w - 0 1",
    ] {
        assert!(
            AklPosition::parse_view(bad, Visibility::Revealed, &mut rng).is_err(),
            "{bad}"
        );
    }
    // The strict parser does not take a view.
    assert!(AklPosition::parse("4k3/8/8/8/8/8/8/4K2(r?) w - 0 1").is_err());
    let ok = AklPosition::parse_view(
        "4k3/8/8/8/8/8/8/4K2(r?) w - 0 1",
        Visibility::Revealed,
        &mut rng,
    )
    .unwrap();
    assert_eq!(ok.piece(Square::H1).unwrap().pair.primary, PieceKind::Rook);
}
