//! Exhaustive checks on small boards against slow, independent references: the check test
//! of 8.7 recomputed from joint collapse outcomes with a ray-walking attack generator, and
//! legality (no outcome of positive probability leaves the mover's king in check) over every
//! legal move of every position of several random games.

use qchess_board::{Color, Geometry, PieceKind, Square};
use qchess_niels::{
    Facing, Facings, Game, Mark, Occupant, Pair, PairId, Position, Rules, Status, group_outcomes,
    hadamard_marks, in_check,
};
use rand::SeedableRng;
use rand::seq::IndexedRandom;

/// Squares attacked by the piece on `from`, walking rays one square at a time.
fn slow_attacks(pos: &Position, from: Square) -> Vec<Square> {
    let g = pos.geometry();
    let piece = pos.piece_at(from).unwrap();
    let on = |f: i32, r: i32| f >= 0 && r >= 0 && f < g.width() as i32 && r < g.height() as i32;
    let (f0, r0) = (from.file() as i32, from.rank() as i32);
    let mut out = Vec::new();
    let leap = |ds: &[(i32, i32)], out: &mut Vec<Square>| {
        for (df, dr) in ds {
            if on(f0 + df, r0 + dr) {
                out.push(Square::new((f0 + df) as u8, (r0 + dr) as u8));
            }
        }
    };
    let ride = |ds: &[(i32, i32)], out: &mut Vec<Square>| {
        for (df, dr) in ds {
            let (mut f, mut r) = (f0 + df, r0 + dr);
            while on(f, r) {
                let s = Square::new(f as u8, r as u8);
                out.push(s);
                if pos.occupant(s).is_some() {
                    break;
                }
                f += df;
                r += dr;
            }
        }
    };
    let orth = [(1, 0), (-1, 0), (0, 1), (0, -1)];
    let diag = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
    match piece.kind {
        PieceKind::Pawn => {
            let dr = if piece.color == Color::White { 1 } else { -1 };
            leap(&[(1, dr), (-1, dr)], &mut out)
        }
        PieceKind::Knight => leap(
            &[
                (1, 2),
                (2, 1),
                (-1, 2),
                (-2, 1),
                (1, -2),
                (2, -1),
                (-1, -2),
                (-2, -1),
            ],
            &mut out,
        ),
        PieceKind::King => leap(
            &[
                (1, 0),
                (-1, 0),
                (0, 1),
                (0, -1),
                (1, 1),
                (1, -1),
                (-1, 1),
                (-1, -1),
            ],
            &mut out,
        ),
        PieceKind::Rook => ride(&orth, &mut out),
        PieceKind::Bishop => ride(&diag, &mut out),
        PieceKind::Queen => {
            ride(&orth, &mut out);
            ride(&diag, &mut out)
        }
    }
    out
}

/// 8.7 from first principles (dice games): some opponent piece attacks a square of the king
/// and a joint collapse outcome of positive probability has both on their squares.
fn reference_in_check(pos: &Position, color: Color, rules: &Rules) -> bool {
    let pair_of = |s: Square| match pos.occupant(s) {
        Some(Occupant::Half { pair, mark }) => Some((pair, mark)),
        _ => None,
    };
    let kings: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|s| {
            pos.piece_at(*s)
                .is_some_and(|p| p.color == color && p.kind == PieceKind::King)
        })
        .collect();
    for k in kings {
        for a in Square::ALL {
            if pos.piece_at(a).is_none_or(|p| p.color == color)
                || !slow_attacks(pos, a).contains(&k)
            {
                continue;
            }
            let need: Vec<(PairId, Mark)> =
                [pair_of(k), pair_of(a)].into_iter().flatten().collect();
            if need.is_empty() {
                return true;
            }
            // Independent groups multiply; a shared group must give both at once.
            let mut groups: Vec<Vec<PairId>> = Vec::new();
            for (id, _) in &need {
                let g = pos.group_of(*id);
                if !groups.contains(&g) {
                    groups.push(g);
                }
            }
            let chance: f64 = groups
                .iter()
                .map(|g| {
                    group_outcomes(pos, g, rules)
                        .iter()
                        .filter(|o| {
                            need.iter()
                                .filter(|(id, _)| g.contains(id))
                                .all(|n| o.marks.contains(n))
                        })
                        .map(|o| o.probability)
                        .sum::<f64>()
                })
                .product();
            if chance > 0.0 {
                return true;
            }
        }
    }
    false
}

fn check_position(game: &Game) {
    let pos = game.position();
    let rules = game.rules();
    for color in Color::ALL {
        assert_eq!(
            in_check(pos, color, rules),
            reference_in_check(pos, color, rules),
            "{pos} {color:?}"
        );
    }
    for p in pos.pairs() {
        let outs = group_outcomes(pos, &pos.group_of(p.id), rules);
        let total: f64 = outs.iter().map(|o| o.probability).sum();
        assert!((total - 1.0).abs() < 1e-12, "{pos}");
        let amp2: f64 = outs.iter().map(|o| o.amplitude * o.amplitude).sum();
        assert!((amp2 - 1.0).abs() < 1e-12, "{pos}");
    }
    let mover = pos.side_to_move();
    for mv in game.legal_moves() {
        let outs = game.outcomes(&mv).unwrap();
        let total: f64 = outs.iter().map(|(_, p, _)| p).sum();
        assert!((total - 1.0).abs() < 1e-12, "{mv} in {pos}");
        for (after, prob, _) in outs {
            assert!(prob > 0.0);
            if after.must_move().is_none() {
                assert!(
                    !reference_in_check(&after, mover, rules),
                    "{mv} in {pos} can leave the king in check: {after}"
                );
            }
        }
    }
}

fn walk(board: &str, rules: &str, seed: u64, plies: usize) {
    let geometry: Geometry = board.parse().unwrap();
    let mut game = Game::new(Rules::parse_list(rules).unwrap(), geometry).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..plies {
        check_position(&game);
        if game.status() != Status::Ongoing {
            break;
        }
        let moves = game.legal_moves();
        let mv = *moves.choose(&mut rng).unwrap();
        game.play(&mv, &mut rng).unwrap();
    }
}

#[test]
fn legality_and_check_agree_with_the_reference_on_small_boards() {
    for (i, board) in ["4x4", "4x5", "4x6", "5x6"].into_iter().enumerate() {
        for rules in [
            "",
            "simplified",
            "no-box,tunnelling",
            "hadamard,remote-collapse",
        ] {
            for seed in 0..2u64 {
                walk(board, rules, 11 + 100 * seed + i as u64, 40);
            }
        }
    }
}

/// Every configuration of an unentangled pair: the dice probabilities are the squared
/// amplitudes; in the unitary reading the Hadamard move lands on red exactly when both
/// amplitudes have the same sign; by default (rules-notes 8) an owner-facing equal pair swaps
/// red and blue and goes to blue.
#[test]
fn hadamard_follows_the_amplitudes() {
    let default = Rules::parse_list("hadamard").unwrap();
    let unitary = Rules::parse_list("hadamard,unitary-hadamard").unwrap();
    for facings in Facings::ALL {
        let text = format!(
            "4k3/8/8/8/8/2[Nr{}|1]5/8/1[Nb{}|1]2K3 w - - 0 1",
            facings.red.to_char(),
            facings.blue.to_char()
        );
        let pos: Position = text.parse().unwrap();
        let pair: &Pair = &pos.pairs()[0];
        for rules in [default, unitary] {
            let outs = group_outcomes(&pos, &[pair.id], &rules);
            assert_eq!(outs.len(), 2);
            for o in &outs {
                assert!((o.amplitude * o.amplitude - o.probability).abs() < 1e-12);
                assert!((o.probability - 0.5).abs() < 1e-12);
            }
        }
        let same_sign = facings.red == facings.blue;
        let unitary_mark = if same_sign { Mark::Red } else { Mark::Blue };
        assert_eq!(
            hadamard_marks(&pos, &[pair.id], &unitary),
            vec![(pair.id, unitary_mark)],
            "{facings}"
        );
        let default_mark = if facings == Facings::EQUAL {
            Mark::Red
        } else {
            Mark::Blue
        };
        assert_eq!(
            hadamard_marks(&pos, &[pair.id], &default),
            vec![(pair.id, default_mark)],
            "{facings}"
        );
        assert_eq!(
            facings.red == Facing::Owner && facings.blue == Facing::Owner,
            facings == Facings::EQUAL_OWNER
        );
    }
}

/// Heavy version (about a minute in release): every dice rule combination on every small
/// board and 8x8, more seeds. Run with `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn legality_reference_heavy() {
    let dice_options = [
        "simplified",
        "hadamard",
        "tunnelling",
        "no-box",
        "stay-only",
        "remote-collapse",
    ];
    for mask in 0u32..64 {
        let rules: Vec<&str> = dice_options
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect();
        for (i, board) in ["4x4", "4x5", "4x6", "5x6", "8x8"].into_iter().enumerate() {
            walk(
                board,
                &rules.join(","),
                u64::from(mask) * 7 + i as u64,
                if board == "8x8" { 12 } else { 30 },
            );
        }
    }
}
