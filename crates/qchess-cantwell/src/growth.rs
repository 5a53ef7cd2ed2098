//! A reproducible game position of any size, reached by real moves: the set-up that
//! `qchess bench move`, the legal-move benchmark and the legal-list equivalence tests share.
//!
//! The position ([`GROWTH_FEN`]): white Ke1 Ra1 Nb1 Ng1, black ke8 and pe4, and eight growth
//! knights a side (placed by a search for the largest state this set-up rule reaches; it
//! stops at 3.0 x 10^7 basis states). [`growth_position`] plays [`GROWTH_FIRST_SPLIT`]
//! (`b1^a3d2`: a knight half on the rook's a-file path, half beside the king), then, side by
//! side, [`next_growth_split`] (a growth knight on its most likely square splits into two
//! empty squares; each split multiplies the state by `(k+1)/k` for a knight spread over `k`
//! squares) until the state holds the basis states asked for, then, if Black is to move,
//! [`GROWTH_BLACK_TEMPO`] (`e8d8`), so that White moves next. The squares of
//! [`GROWTH_RESERVED`] stay free of growth knights: they are the sources, targets and paths
//! of the moves the benchmarks time.
//!
//! [`split_walk`] is the other shape: from any position (the pawnless
//! [`PAWNLESS_FEN`] in the benchmarks), the side to move splits its most likely piece onto
//! two squares empty in every branch until the state is large enough; [`knight_split_walk`]
//! does the same with knights only, from [`KNIGHT_WALK_FEN`], for a given number of splits
//! (each knight spreads over one more square a split: the state grows by addition).
//!
//! ```
//! use qchess_cantwell::growth::growth_position;
//! let (game, plies) = growth_position::<qchess_sim::State<f64>>(100).unwrap();
//! assert!(game.state_size() >= 100);
//! assert_eq!(plies[0], "b1^a3d2");
//! assert_eq!(game.side_to_move(), qchess_board::Color::White);
//! ```

use crate::legal::notation_of;
use crate::{Game, GameError, MoveShape};
use qchess_board::{Color, Piece, PieceKind, Square};
use qchess_sim::QuantumState;
use rand::SeedableRng;

/// The position every growth walk starts from.
pub const GROWTH_FEN: &str = "N3k3/2NNn3/1n1n2N1/3N1nn1/1nN1p3/3n2N1/4N2n/RN2K1N1 w - - 0 1";

/// [`GROWTH_FEN`] with White's queen-side castling right: the start of the castling
/// benchmark (`e1c1`: the king and the a1 rook move, their iSwaps controlled on b1, which the
/// first split empties).
pub const GROWTH_CASTLE_FEN: &str = "N3k3/2NNn3/1n1n2N1/3N1nn1/1nN1p3/3n2N1/4N2n/RN2K1N1 w Q - 0 1";

/// [`GROWTH_FEN`] with a black knight on a5, a reserved square: the target of the capture
/// slide benchmark (`a1xa5`, through a2-a4 with a3 occupied with probability 1/2). The
/// growth splits are the same as from [`GROWTH_FEN`] (a5 is never a growth square).
pub const GROWTH_CAPTURE_SLIDE_FEN: &str =
    "N3k3/2NNn3/1n1n2N1/n2N1nn1/1nN1p3/3n2N1/4N2n/RN2K1N1 w - - 0 1";

/// [`GROWTH_FEN`] with a black knight on b3: the start of the capture slide onto a
/// superposed target (`a1xa5`), whose set-up ([`GROWTH_SUPERPOSED_TARGET_OPENING`]) splits
/// that knight half onto a5 after the first split, so that both the path (a3) and the target
/// (a5) are occupied with probability 1/2, independently: eq. 23b's measurement in general.
pub const GROWTH_SUPERPOSED_TARGET_FEN: &str =
    "N3k3/2NNn3/1n1n2N1/3N1nn1/1nN1p3/1n1n2N1/4N2n/RN2K1N1 w - - 0 1";

/// The opening of the set-up from [`GROWTH_SUPERPOSED_TARGET_FEN`]: [`GROWTH_FIRST_SPLIT`],
/// then Black's `b3^a5c1` (the black knight half on a5, the target of `a1xa5`, half on c1).
pub const GROWTH_SUPERPOSED_TARGET_OPENING: [&str; 2] = [GROWTH_FIRST_SPLIT, "b3^a5c1"];

/// The first set-up move: the b1 knight half on a3 (the rook's path), half on d2.
pub const GROWTH_FIRST_SPLIT: &str = "b1^a3d2";

/// Black's waiting move when the set-up ends with Black to move.
pub const GROWTH_BLACK_TEMPO: &str = "e8d8";

/// Squares the growth knights never use: the timed moves' sources, targets and paths.
pub const GROWTH_RESERVED: [&str; 15] = [
    "a1", "a2", "a3", "a4", "a5", "b1", "d2", "e1", "g1", "f3", "h3", "e4", "e8", "d8", "c3",
];

/// Pieces on both back ranks, no pawns: every piece can split at once ([`split_walk`]).
pub const PAWNLESS_FEN: &str = "rnbqkbnr/8/8/8/8/8/8/RNBQKBNR w KQkq - 0 1";

fn reserved(s: Square) -> bool {
    GROWTH_RESERVED.iter().any(|r| r.parse::<Square>() == Ok(s))
}

/// The next growth split of the side to move: its growth knight's most likely square (ties:
/// the lowest square) with two empty, unreserved knight targets, taking the targets with the
/// most empty onward knight squares (ties: the lowest), which keeps room for later splits.
/// `None` when there is none.
pub fn next_growth_split<S: QuantumState>(game: &Game<S>) -> Option<String> {
    let knight = Piece::new(game.side_to_move(), PieceKind::Knight);
    let pieces = game.pieces();
    let free = |t: &Square| pieces.get(*t).is_none() && !reserved(*t);
    let steps = |s: Square| qchess_board::knight_attacks(s).into_iter();
    let mut sources: Vec<(i64, Square)> = Square::ALL
        .iter()
        .copied()
        .filter(|&s| pieces.get(s) == Some(knight) && !reserved(s))
        // Rounded, so that sums in another order (other thread counts) pick the same square.
        .map(|s| (-(game.probability(s) * 1e6).round() as i64, s))
        .collect();
    sources.sort_by_key(|&(p, s)| (p, s.index()));
    sources.into_iter().find_map(|(_, s)| {
        let mut targets: Vec<(usize, Square)> = steps(s)
            .filter(free)
            .map(|t| (steps(t).filter(free).count(), t))
            .collect();
        targets.sort_by_key(|&(room, t)| (std::cmp::Reverse(room), t.index()));
        (targets.len() >= 2).then(|| format!("{s}^{}{}", targets[0].1, targets[1].1))
    })
}

/// Plays the growth set-up from [`GROWTH_FEN`] until the state holds at least `states` basis
/// states (or no growth split is left: check [`Game::state_size`]), then a Black tempo so
/// that White is to move. Returns the game, with its undo snapshot budget at 0 (set it
/// again before timing a move), and the plies played. The game's random numbers come from a
/// fixed seed (the set-up measures nothing).
///
/// # Errors
/// A set-up move the game refuses: with a small memory budget, `state_too_large`.
pub fn growth_position<S: QuantumState>(
    states: usize,
) -> Result<(Game<S>, Vec<String>), GameError> {
    growth_position_from(GROWTH_FEN, states)
}

/// [`growth_position`] from another start: `fen` is [`GROWTH_FEN`] with pieces or rights
/// added on reserved squares ([`GROWTH_CASTLE_FEN`], [`GROWTH_CAPTURE_SLIDE_FEN`]), so that
/// the same growth splits are played.
///
/// ```
/// use qchess_cantwell::growth::{GROWTH_CAPTURE_SLIDE_FEN, growth_position, growth_position_from};
/// type S = qchess_sim::State<f64>;
/// let (plain, plies) = growth_position::<S>(1000).unwrap();
/// let (game, same) = growth_position_from::<S>(GROWTH_CAPTURE_SLIDE_FEN, 1000).unwrap();
/// assert_eq!((game.state_size(), same), (plain.state_size(), plies));
/// let knight = qchess_board::Piece::new(qchess_board::Color::Black, qchess_board::PieceKind::Knight);
/// assert_eq!(game.pieces().get(qchess_board::Square::A5), Some(knight));
/// assert_eq!(plain.pieces().get(qchess_board::Square::A5), None);
/// ```
///
/// # Errors
/// A FEN the game refuses, or a set-up move it refuses.
pub fn growth_position_from<S: QuantumState>(
    fen: &str,
    states: usize,
) -> Result<(Game<S>, Vec<String>), GameError> {
    growth_position_after(fen, &[GROWTH_FIRST_SPLIT], states)
}

/// [`growth_position_from`] with other opening moves in place of [`GROWTH_FIRST_SPLIT`]
/// alone (played in order before the growth splits, by whichever side is to move): from
/// [`GROWTH_SUPERPOSED_TARGET_FEN`], [`GROWTH_SUPERPOSED_TARGET_OPENING`].
///
/// ```
/// use qchess_cantwell::growth::{
///     GROWTH_SUPERPOSED_TARGET_FEN, GROWTH_SUPERPOSED_TARGET_OPENING, growth_position_after,
/// };
/// let (game, plies) = growth_position_after::<qchess_sim::State<f64>>(
///     GROWTH_SUPERPOSED_TARGET_FEN,
///     &GROWTH_SUPERPOSED_TARGET_OPENING,
///     1000,
/// )
/// .unwrap();
/// assert_eq!(&plies[..2], &GROWTH_SUPERPOSED_TARGET_OPENING);
/// // The capture slide's path square a3 and its target a5 each occupied half the time.
/// assert_eq!(game.probability(qchess_board::Square::A3), 0.5);
/// assert_eq!(game.probability(qchess_board::Square::A5), 0.5);
/// ```
///
/// # Errors
/// A FEN the game refuses, or an opening or set-up move it refuses.
pub fn growth_position_after<S: QuantumState>(
    fen: &str,
    opening: &[&str],
    states: usize,
) -> Result<(Game<S>, Vec<String>), GameError> {
    let mut game = Game::<S>::from_fen_backend(fen)?;
    game.set_snapshot_budget(0);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    let mut plies = Vec::with_capacity(opening.len());
    for mv in opening {
        game.apply(mv, &mut rng)?;
        plies.push(mv.to_string());
    }
    while game.state_size() < states {
        let Some(mv) = next_growth_split(&game) else {
            break;
        };
        game.apply(&mv, &mut rng)?;
        plies.push(mv);
    }
    if game.side_to_move() == Color::Black {
        game.apply(GROWTH_BLACK_TEMPO, &mut rng)?;
        plies.push(GROWTH_BLACK_TEMPO.to_string());
    }
    Ok((game, plies))
}

/// Plays splits on `game` until its state holds at least `states` basis states: each ply the
/// side to move splits its most likely piece (probability rounded to 1e-6) onto two squares
/// that are empty in every branch and not classically blocked, preferring targets near the
/// centre (more room; remaining ties: the candidate listed last); a split the game refuses
/// is skipped for the next best. Stops early when no split is left (check
/// [`Game::state_size`]). Returns the plies played.
///
/// ```
/// use qchess_cantwell::{Game, growth::{PAWNLESS_FEN, split_walk}};
/// use rand::SeedableRng;
/// let mut game = Game::from_fen(PAWNLESS_FEN).unwrap();
/// let plies = split_walk(&mut game, 100, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
/// assert_eq!(game.state_size(), 128);
/// assert_eq!(plies.len(), 7);
/// ```
pub fn split_walk<S: QuantumState, R: rand::Rng + ?Sized>(
    game: &mut Game<S>,
    states: usize,
    rng: &mut R,
) -> Vec<String> {
    walk(game, rng, |g, _| g.state_size() < states, |_| true)
}

/// Two knights and two kings: the start of [`knight_split_walk`].
pub const KNIGHT_WALK_FEN: &str = "4k1n1/8/8/8/8/8/8/1N2K3 w - - 0 1";

/// Plays `splits` knight splits on `game` (fewer when none is left): each ply the side to
/// move splits the most likely part of one of its knights, chosen as [`split_walk`] chooses
/// (onto two squares empty in every branch). From [`KNIGHT_WALK_FEN`] each knight spreads
/// over one more square a split, so the state grows by addition, not by products of whole
/// doublings: the walk of issue 10's target "a knight-split walk of 40 splits still < 1 ms
/// per move" (`cargo bench -p qchess-cantwell --bench walk`). Returns the plies played.
///
/// ```
/// use qchess_cantwell::{Game, growth::{KNIGHT_WALK_FEN, knight_split_walk}};
/// use rand::SeedableRng;
/// let mut game = Game::from_fen(KNIGHT_WALK_FEN).unwrap();
/// let plies = knight_split_walk(&mut game, 4, &mut rand_chacha::ChaCha8Rng::seed_from_u64(1));
/// assert_eq!(plies.len(), 4);
/// assert_eq!(game.state_size(), 9); // each knight on three squares
/// ```
pub fn knight_split_walk<S: QuantumState, R: rand::Rng + ?Sized>(
    game: &mut Game<S>,
    splits: usize,
    rng: &mut R,
) -> Vec<String> {
    walk(
        game,
        rng,
        |_, played| played < splits,
        |p| p.kind == PieceKind::Knight,
    )
}

/// The split walks: while `more(game, plies played)`, the side to move splits its most
/// likely piece for which `mover` holds (see [`split_walk`] for the choice).
fn walk<S: QuantumState, R: rand::Rng + ?Sized>(
    game: &mut Game<S>,
    rng: &mut R,
    mut more: impl FnMut(&Game<S>, usize) -> bool,
    mover: impl Fn(Piece) -> bool,
) -> Vec<String> {
    let mut plies = Vec::new();
    while more(game, plies.len()) {
        let probs = game.probabilities();
        let p = |sq: Square| probs[sq.index() as usize];
        // Centre distance of a square, in half-squares.
        let centre = |s: Square| (2 * s.rank() as i32 - 7).abs() + (2 * s.file() as i32 - 7).abs();
        let mut splits: Vec<(i64, usize, String)> = game
            .possible_moves()
            .into_iter()
            .enumerate()
            .filter_map(|(i, c)| match c.shape {
                MoveShape::Split { from, to1, to2 }
                    if mover(c.mover)
                        && p(to1) == 0.0
                        && p(to2) == 0.0
                        && !game.classically_blocked(&c, &probs) =>
                {
                    let score = (p(from) * 1e6) as i64 * 100 - i64::from(centre(to1) + centre(to2));
                    Some((score, i, notation_of(&c)))
                }
                _ => None,
            })
            .collect();
        splits.sort_by_key(|&(score, i, _)| std::cmp::Reverse((score, i)));
        let Some(mv) = splits
            .into_iter()
            .map(|(_, _, mv)| mv)
            .find(|mv| game.apply(mv, rng).is_ok())
        else {
            break;
        };
        plies.push(mv);
    }
    plies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knight_walk_grows_by_addition() {
        let mut game: Game = Game::from_fen(KNIGHT_WALK_FEN).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let plies = knight_split_walk(&mut game, 40, &mut rng);
        assert_eq!(plies.len(), 40);
        assert_eq!(&plies[..3], ["b1^c3d2", "g8^e7f6", "c3^d5e4"]);
        // Twenty splits a knight: each on 21 squares, independent of the other.
        assert_eq!(game.state_size(), 21 * 21);
        let probs = game.probabilities();
        let total: f64 = probs.iter().sum();
        assert!(
            (total - 4.0).abs() < 1e-9,
            "two kings and two knights: {total}"
        );
    }

    #[test]
    fn the_walk_reaches_the_documented_sizes() {
        // 1 492 992 = 2^11 3^6 and 10 077 696 = 2^8 3^9 in docs/benchmarks.md; smaller here.
        let (game, plies) = growth_position::<qchess_sim::State<f64>>(10_000).unwrap();
        assert_eq!(game.state_size(), 16_384);
        assert_eq!(game.side_to_move(), Color::White);
        assert!(
            plies
                .iter()
                .skip(1)
                .all(|m| m.contains('^') || m == GROWTH_BLACK_TEMPO)
        );
        let probs = game.probabilities();
        for r in GROWTH_RESERVED {
            let s: Square = r.parse().unwrap();
            let expected = match r {
                "a1" | "e1" | "g1" | "e4" => 1.0,
                // The black king: on e8, or on d8 after the tempo.
                "e8" | "d8" => probs[s.index() as usize].round(),
                "a3" | "d2" => 0.5,
                _ => 0.0,
            };
            assert_eq!(probs[s.index() as usize], expected, "{r}");
        }
        assert_eq!(
            probs[Square::E8.index() as usize] + probs[Square::D8.index() as usize],
            1.0
        );
    }
}
