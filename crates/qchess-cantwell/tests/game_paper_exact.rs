//! The paper's worked examples played through the game API on exact amplitudes
//! (`Game<State<Exact>>`), checked as exact equalities: Fig. 1, 7, 13/15 and 17/19 (the
//! jump, slide, split and merge of eq. 4a/4b, 7-12), the Bell states of eq. 45-51 (rules-notes
//! E4, captures into ancillas included) and the interference of section 11.2 (rules-notes E1),
//! where the a2 term is exactly 0, not ~1e-17.
//!
//! The exact state is kept unnormalised (a measurement projects without dividing), so every
//! amplitude is read as `alpha / sqrt(N)` with `N` the exact squared norm; `sqrt(N)` lies in
//! Q(sqrt2) in all these games. Values are written in the exact string form (`1/2*sqrt2`).

use qchess_board::Square;
use qchess_cantwell::Game;
use qchess_sim::{Exact, Key, Predicate, QSqrt2, State};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

type XGame = Game<State<Exact>>;
use Square as Q;

/// 1/sqrt2 and its negation, in the string form.
const H: &str = "1/2*sqrt2";
const MH: &str = "-1/2*sqrt2";

fn q(s: &str) -> QSqrt2 {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn board(squares: &[Square]) -> u64 {
    squares.iter().fold(0, |b, s| b | (1u64 << s.index()))
}

fn game(fen: &str) -> XGame {
    XGame::from_fen_backend(fen).unwrap()
}

fn play(g: &mut XGame, moves: &[&str]) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for m in moves {
        g.apply(m, &mut rng).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

/// The normalised amplitude `alpha / sqrt(N)` of a board, exactly, as `(re, im)`.
fn amp(g: &XGame, squares: &[Square], ancillas: u128) -> (QSqrt2, QSqrt2) {
    let s = g.state();
    let z = s.amplitude(Key {
        board: board(squares),
        ancillas,
    });
    let root = s
        .norm_sqrt_exact()
        .unwrap()
        .expect("sqrt(N) lies in Q(sqrt2) in the paper's games");
    let part = |x: Exact| x.to_qsqrt2().expect("not poisoned");
    (&part(z.re) / &root, &part(z.im) / &root)
}

/// `(re, im)` times `i^k`: the global phase k jumps of the other side's lone king put on the
/// whole state (each is an iSwap, |01> -> i|10>).
fn passes(k: u32, (mut re, mut im): (QSqrt2, QSqrt2)) -> (QSqrt2, QSqrt2) {
    for _ in 0..k % 4 {
        (re, im) = (-im, re);
    }
    (re, im)
}

/// Asserts the normalised amplitude is exactly `want` (written `(re, im)`) times `i^k`.
fn assert_amp(g: &XGame, squares: &[Square], ancillas: u128, want: (&str, &str), k: u32) {
    let want = passes(k, (q(want.0), q(want.1)));
    let got = amp(g, squares, ancillas);
    assert_eq!(
        got, want,
        "amplitude of {squares:?}/{ancillas}: got {} + ({})i, want {} + ({})i",
        got.0, got.1, want.0, want.1
    );
}

/// The exact occupancy probability of a square.
fn prob(g: &XGame, sq: Square) -> QSqrt2 {
    g.state()
        .probability_exact(Predicate::One(sq.index()))
        .unwrap()
}

#[test]
fn fig1_jump_onto_a_half_filled_square_exact() {
    let mut g = game("7k/8/8/8/8/8/8/1N1N3K w - - 0 1");
    play(&mut g, &["d1^c3e3", "h8g8"]);
    assert_amp(&g, &[Q::B1, Q::C3, Q::H1, Q::G8], 0, ("0", H), 1);
    assert_amp(&g, &[Q::B1, Q::E3, Q::H1, Q::G8], 0, ("0", H), 1);
    play(&mut g, &["b1c3"]);
    // eq. 4a/4b: the like-piece branch is left alone, the other jumps with a factor i.
    assert_amp(&g, &[Q::B1, Q::C3, Q::H1, Q::G8], 0, ("0", H), 1);
    assert_amp(&g, &[Q::C3, Q::E3, Q::H1, Q::G8], 0, (MH, "0"), 1);
    assert_eq!(g.state_size(), 2);
    assert_eq!(prob(&g, Q::C3), q("1"));
    assert_eq!(prob(&g, Q::B1), q("1/2"));
    assert_eq!(prob(&g, Q::E3), q("1/2"));
}

#[test]
fn fig7_slide_entangles_bishop_and_knight_exact() {
    let mut g = game("7k/8/8/8/8/8/8/2BN3K w - - 0 1");
    play(&mut g, &["d1^b2f2", "h8g8", "c1a3"]);
    // eq. 9: the bishop moves only on the boards where b2 is empty.
    assert_amp(&g, &[Q::B2, Q::C1, Q::H1, Q::G8], 0, ("0", H), 1);
    assert_amp(&g, &[Q::A3, Q::F2, Q::H1, Q::G8], 0, (MH, "0"), 1);
    assert_eq!(prob(&g, Q::A3), q("1/2"));
    assert_eq!(prob(&g, Q::C1), q("1/2"));
}

#[test]
fn fig13_15_split_then_merge_exact() {
    let mut g = game("7k/8/8/8/8/8/8/1N5K w - - 0 1");
    play(&mut g, &["b1^a3c3"]);
    // eq. 7 / 8: i/sqrt2 on each target, b1 exactly empty.
    assert_amp(&g, &[Q::A3, Q::H1, Q::H8], 0, ("0", H), 0);
    assert_amp(&g, &[Q::C3, Q::H1, Q::H8], 0, ("0", H), 0);
    assert!(prob(&g, Q::B1).is_zero());
    assert_eq!(prob(&g, Q::A3), q("1/2"));
    play(&mut g, &["h8g8", "c3a3^b1"]);
    // eq. 10 / 11: the merge restores the knight exactly, nothing else left.
    assert_amp(&g, &[Q::B1, Q::H1, Q::G8], 0, ("1", "0"), 1);
    assert_eq!(g.state_size(), 1);
    assert_eq!(prob(&g, Q::B1), q("1"));
    assert!(prob(&g, Q::A3).is_zero() && prob(&g, Q::C3).is_zero());
}

#[test]
fn fig17_19_split_slide_and_merge_slide_exact() {
    let mut g = game("7k/8/8/8/8/8/8/R1N4K w - - 0 1");
    play(&mut g, &["c1^a2e2", "h8g8", "a1^a3b1"]);
    let k1 = [Q::H1, Q::G8];
    let with = |sq: &[Square], kings: &[Square]| -> Vec<Square> {
        sq.iter().chain(kings.iter()).copied().collect()
    };
    // eq. 12 / Fig. 17: (i/sqrt2 * i) * (1/sqrt2) on each clear-path target, i/sqrt2 * i * i
    // on b1 of the blocked board.
    assert_amp(&g, &with(&[Q::A3, Q::E2], &k1), 0, ("0", "1/2"), 2);
    assert_amp(&g, &with(&[Q::B1, Q::E2], &k1), 0, ("0", "1/2"), 2);
    assert_amp(&g, &with(&[Q::B1, Q::A2], &k1), 0, ("0", H), 2);
    assert_eq!(prob(&g, Q::A3), q("1/4"));
    assert_eq!(prob(&g, Q::B1), q("3/4"));
    play(&mut g, &["g8h8", "b1a3^a1"]);
    // Fig. 19 (E6): merged back exactly.
    let k2 = [Q::H1, Q::H8];
    assert_amp(&g, &with(&[Q::A1, Q::E2], &k2), 0, ("0", H), 2);
    assert_amp(&g, &with(&[Q::A1, Q::A2], &k2), 0, ("0", H), 2);
    assert_eq!(g.state_size(), 2);
    assert_eq!(prob(&g, Q::A1), q("1"));
}

#[test]
fn bell_states_eq45_to_48_exact() {
    let mut g = game("7k/8/8/8/8/8/8/K7 w - - 0 1");
    play(&mut g, &["a1^a2b1", "h8g8"]);
    // eq. 45a
    assert_amp(&g, &[Q::A2, Q::G8], 0, ("0", H), 1);
    assert_amp(&g, &[Q::B1, Q::G8], 0, ("0", H), 1);
    play(&mut g, &["b1a1", "g8h8"]);
    // eq. 45b: (i|a2> - |a1>)/sqrt2
    assert_amp(&g, &[Q::A2, Q::H8], 0, ("0", H), 2);
    assert_amp(&g, &[Q::A1, Q::H8], 0, (MH, "0"), 2);
    play(&mut g, &["a2b1", "h8g8"]);
    // eq. 45c / 46: -(|b1> + |a1>)/sqrt2 = -|Psi+> on (b1, a1)
    assert_amp(&g, &[Q::B1, Q::G8], 0, (MH, "0"), 3);
    assert_amp(&g, &[Q::A1, Q::G8], 0, (MH, "0"), 3);
    play(&mut g, &["a1a2", "g8h8"]);
    // eq. 47a: (-|b1> - i|a2>)/sqrt2
    assert_amp(&g, &[Q::B1, Q::H8], 0, (MH, "0"), 4);
    assert_amp(&g, &[Q::A2, Q::H8], 0, ("0", MH), 4);
    play(&mut g, &["a2a1"]);
    // eq. 47b / 48: (-|b1> + |a1>)/sqrt2 = -|Psi-> on (b1, a1)
    assert_amp(&g, &[Q::B1, Q::H8], 0, (MH, "0"), 4);
    assert_amp(&g, &[Q::A1, Q::H8], 0, (H, "0"), 4);
    assert_eq!(g.state_size(), 2);
    assert_eq!(prob(&g, Q::A1), q("1/2"));
    assert_eq!(prob(&g, Q::B1), q("1/2"));
}

#[test]
fn bell_states_eq49_to_51_with_capture_ancillas_exact() {
    let mut g = game("7k/8/8/8/8/1K6/8/1Nb5 w - - 0 1");
    play(&mut g, &["b3^b2a3"]);
    // eq. 49a
    assert_amp(&g, &[Q::B2, Q::B1, Q::C1, Q::H8], 0, ("0", H), 0);
    assert_amp(&g, &[Q::A3, Q::B1, Q::C1, Q::H8], 0, ("0", H), 0);
    play(&mut g, &["c1a3"]);
    let rec = g.history().last().unwrap();
    assert_eq!(
        rec.notation, "c1a3.m1",
        "D4 makes the capture's measurement certain"
    );
    assert_eq!(rec.probability, Some(1.0));
    // eq. 49b: the king on a3 went to ancilla x1 (bit 0).
    assert_amp(&g, &[Q::B2, Q::B1, Q::C1, Q::H8], 0, ("0", H), 0);
    assert_amp(&g, &[Q::A3, Q::B1, Q::H8], 0b01, ("0", MH), 0);
    play(&mut g, &["b1a3"]);
    // eq. 49c
    assert_amp(&g, &[Q::A3, Q::B2, Q::C1, Q::H8], 0, (MH, "0"), 0);
    assert_amp(&g, &[Q::A3, Q::H8], 0b11, ("0", H), 0);
    play(&mut g, &["h8g8", "b2b1"]);
    // eq. 49d / 50
    assert_amp(&g, &[Q::A3, Q::B1, Q::C1, Q::G8], 0, ("0", MH), 1);
    assert_amp(&g, &[Q::A3, Q::G8], 0b11, ("0", H), 1);
    assert_eq!(prob(&g, Q::B1), q("1/2"));
    assert_eq!(prob(&g, Q::C1), q("1/2"));
    assert_eq!(prob(&g, Q::A3), q("1"));
    play(&mut g, &["g8h8", "b1b2", "h8g8", "b2b1"]);
    // eq. 51: the |11> branch picks up -1.
    assert_amp(&g, &[Q::A3, Q::B1, Q::C1, Q::G8], 0, ("0", H), 3);
    assert_amp(&g, &[Q::A3, Q::G8], 0b11, ("0", H), 3);
}

#[test]
fn interference_section_11_2_is_exactly_zero_on_a2() {
    let mut g = game("7k/8/8/8/8/8/8/K7 w - - 0 1");
    play(&mut g, &["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2"]);
    // E1: the a2 term cancels exactly (the f64 game leaves ~1e-17 before its floor).
    assert!(prob(&g, Q::A2).is_zero());
    assert_amp(&g, &[Q::A2, Q::H8], 0, ("0", "0"), 0);
    assert_eq!(g.piece_at(Q::A2), None);
    assert_eq!(prob(&g, Q::A1), q("3/8+1/4*sqrt2"));
    assert_eq!(prob(&g, Q::B1), q("1/4"));
    assert_eq!(prob(&g, Q::B2), q("3/8-1/4*sqrt2"));
    // -(1/2 + 1/(2 sqrt2)) on a1, -i/2 on b1, -(1/2 - 1/(2 sqrt2)) on b2, times i^2.
    assert_amp(&g, &[Q::A1, Q::H8], 0, ("-1/2-1/4*sqrt2", "0"), 2);
    assert_amp(&g, &[Q::B1, Q::H8], 0, ("0", "-1/2"), 2);
    assert_amp(&g, &[Q::B2, Q::H8], 0, ("-1/2+1/4*sqrt2", "0"), 2);
    // The f64 read-out of the exact game rounds the exact value once.
    assert!((g.probability(Q::A1) - (0.375 + 2f64.sqrt() / 4.0)).abs() < 1e-15);

    // Ending with b1^b2a1 swaps the a1 and b2 values.
    let mut g = game("7k/8/8/8/8/8/8/K7 w - - 0 1");
    play(&mut g, &["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^b2a1"]);
    assert_eq!(prob(&g, Q::B2), q("3/8+1/4*sqrt2"));
    assert_eq!(prob(&g, Q::A1), q("3/8-1/4*sqrt2"));
    assert!(prob(&g, Q::A2).is_zero());
}
