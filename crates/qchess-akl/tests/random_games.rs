//! Property tests over random games played by the random mover (bounded: 64 games of at most
//! 300 plies each, well under a second in release mode).

use proptest::prelude::*;
use qchess_akl::{
    Game, GameRecord, GameStatus, PieceState, RandomMover, Rules, Style, TypeSet, Visibility,
};
use qchess_board::{Color, PieceKind, Square};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The types the players have seen of the piece on each square, rebuilt from public facts
/// only: the start position's public types and every record entry (a reference model,
/// independent of the engine's own bookkeeping).
struct PublicKnowledge([Option<TypeSet>; 64]);

impl PublicKnowledge {
    fn new(game: &Game) -> Self {
        let mut sets = [None; 64];
        for (sq, p) in game.start_position().pieces() {
            sets[sq.index() as usize] = Some(p.known);
        }
        PublicKnowledge(sets)
    }

    fn apply(&mut self, entry: &qchess_akl::TurnEntry, mover_is_king: bool) {
        let from = entry.from.index() as usize;
        let mut set = self.0[from].expect("a piece was touched");
        if let Some(k) = entry.collapse {
            set = set.with(k);
        }
        let Some(dest) = entry.dest else {
            self.0[from] = Some(set);
            return;
        };
        self.0[from] = None;
        if let Some(promo) = dest.promotion {
            // Chosen type, plus the pawn's other type if that was public and not a pawn.
            let mut new = TypeSet::EMPTY.with(promo);
            for k in set.iter().filter(|k| *k != PieceKind::Pawn) {
                new = new.with(k);
            }
            set = new;
        }
        self.0[dest.to.index() as usize] = Some(set);
        if mover_is_king && entry.from.file().abs_diff(dest.to.file()) == 2 {
            let rank = entry.from.rank();
            let (rf, rt) = if dest.to.file() == 6 { (7, 5) } else { (0, 3) };
            let rook = self.0[Square::new(rf, rank).index() as usize].take();
            self.0[Square::new(rt, rank).index() as usize] = rook;
        }
    }
}

fn check_invariants(game: &Game, public: &PublicKnowledge) -> Result<(), TestCaseError> {
    for (sq, p) in game.position().pieces() {
        if p.is_king() {
            prop_assert_eq!(p.state, PieceState::Classical(PieceKind::King));
            continue;
        }
        prop_assert!(!p.pair.contains(PieceKind::King), "{} has a king type", sq);
        if let PieceState::Classical(k) = p.state {
            prop_assert!(
                p.pair.contains(k),
                "{}: type {:?} not in {:?}",
                sq,
                k,
                p.pair
            );
        }
        for k in p.known.iter() {
            prop_assert!(p.pair.contains(k), "{}: known {:?} not in its pair", sq, k);
        }
    }
    for viewer in Color::ALL {
        let view = game.view(viewer);
        prop_assert_eq!(view.pieces.len(), game.position().pieces().count());
        for vp in &view.pieces {
            let truth = game.position().piece(vp.square).unwrap();
            let own_pairs = game.rules().visibility == Visibility::OwnPairs && vp.color == viewer;
            let expected = if own_pairs {
                public.0[vp.square.index() as usize]
                    .unwrap()
                    .with(truth.pair.primary)
                    .with(truth.pair.secondary)
            } else {
                public.0[vp.square.index() as usize].unwrap()
            };
            prop_assert_eq!(vp.known, expected, "view of {:?} at {}", viewer, vp.square);
            // The whole pair only when this player knows it.
            let public_set = public.0[vp.square.index() as usize].unwrap();
            let whole = own_pairs || truth.is_king() || public_set.len() == 2;
            prop_assert_eq!(
                vp.pair,
                whole.then_some(truth.pair),
                "pair at {}",
                vp.square
            );
            if let PieceState::Classical(k) = vp.state {
                prop_assert!(vp.known.contains(k), "a classical type is always revealed");
            }
        }
    }
    Ok(())
}

fn random_game(seed: u64, plies: usize, visibility: Visibility) -> Result<Game, TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = qchess_akl::AklPosition::startpos_random(&mut rng);
    let mut game = Game::with_rules(start, Rules { visibility });
    let mut public = PublicKnowledge::new(&game);
    check_invariants(&game, &public)?;
    for _ in 0..plies {
        if game.status() != GameStatus::Ongoing {
            break;
        }
        let before = game.history().len();
        let side = game.side_to_move();
        let view = game.view(side);
        let sq = RandomMover.choose_touch(&view, &mut rng).unwrap();
        let is_king = game.position().piece(sq).unwrap().is_king();
        let out = game.touch(sq, &mut rng).unwrap();
        if let qchess_akl::TouchResult::MustMove(moves) = out.result {
            prop_assert!(game.pending_touch().is_some());
            let mv = RandomMover.choose_move(&moves, &mut rng).unwrap();
            game.play(mv, &mut rng).unwrap();
        }
        prop_assert_eq!(game.history().len(), before + 1);
        prop_assert_eq!(game.side_to_move(), side.opposite());
        public.apply(game.history().last().unwrap(), is_king);
        check_invariants(&game, &public)?;
    }
    Ok(game)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_games_keep_every_invariant_and_replay_exactly(
        seed in any::<u64>(),
        plies in 0usize..300,
        own_pairs in any::<bool>(),
    ) {
        let visibility = if own_pairs { Visibility::OwnPairs } else { Visibility::Revealed };
        let game = random_game(seed, plies, visibility)?;
        for style in [Style::Ascii, Style::Unicode] {
            let text = game.record().to_text(style);
            let record = GameRecord::parse(&text).unwrap();
            prop_assert_eq!(&record, &game.record());
            let replayed = record.replay().unwrap();
            prop_assert_eq!(replayed.position(), game.position());
            prop_assert_eq!(replayed.history(), game.history());
            prop_assert_eq!(replayed.status(), game.status());
            prop_assert_eq!(replayed.captured(), game.captured());
        }
        // The AKL-FEN of the final position parses back to the same position.
        let fen = game.position().to_string();
        prop_assert_eq!(&qchess_akl::AklPosition::parse(&fen).unwrap(), game.position());
    }

    #[test]
    fn the_same_seed_plays_the_same_game(seed in any::<u64>()) {
        let a = random_game(seed, 120, Visibility::Revealed)?;
        let b = random_game(seed, 120, Visibility::Revealed)?;
        prop_assert_eq!(a.record(), b.record());
    }
}

#[test]
fn random_games_reach_every_ending() {
    // Over 300 seeded games of up to 2000 plies, king captures of both colours and both draw
    // kinds... king captures at least must occur, and every game ends or runs out of plies.
    let mut wins = [0; 2];
    let mut quiet_draws = 0;
    for seed in 0..300 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new_random(&mut rng);
        for _ in 0..2000 {
            if game.status() != GameStatus::Ongoing {
                break;
            }
            RandomMover.play_turn(&mut game, &mut rng).unwrap();
        }
        match game.status() {
            GameStatus::Won { winner } => wins[winner.index()] += 1,
            GameStatus::Drawn(qchess_akl::DrawReason::QuietPlies) => quiet_draws += 1,
            _ => {}
        }
    }
    assert!(
        wins[0] > 0 && wins[1] > 0,
        "wins {wins:?}, quiet draws {quiet_draws}"
    );
}
