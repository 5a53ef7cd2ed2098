//! The paper's worked examples, played through the game API (letters, flags and turns
//! included): Fig. 1, 7, 13/15, 17/19, the Bell states of eq. 45-51 (rules-notes E4) and the
//! interference of section 11.2 (rules-notes E1).

use num_complex::Complex64;
use qchess_board::Square;
use qchess_cantwell::{Game, GameError};
use qchess_sim::Key;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const S: f64 = std::f64::consts::FRAC_1_SQRT_2;
const TOL: f64 = 1e-14;

fn board(squares: &[Square]) -> u64 {
    squares.iter().fold(0, |b, s| b | (1u64 << s.index()))
}

fn amp(game: &Game, squares: &[Square], ancillas: u128) -> Complex64 {
    game.state().amplitude(Key {
        board: board(squares),
        ancillas,
    })
}

fn assert_amp(game: &Game, squares: &[Square], ancillas: u128, want: Complex64) {
    let got = amp(game, squares, ancillas);
    assert!(
        (got - want).norm() < TOL,
        "amplitude of {squares:?}/{ancillas}: got {got}, want {want}"
    );
}

fn play(game: &mut Game, moves: &[&str]) {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for m in moves {
        game.apply(m, &mut rng)
            .unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

/// The global phase i^k that k jumps of the other side's lone king put on the whole state
/// (each is an iSwap: |01> -> i|10>). The paper's single-piece examples have no such moves.
fn passes(k: u32) -> Complex64 {
    Complex64::new(0.0, 1.0).powu(k)
}

use Square as Q;

#[test]
fn fig1_standard_jump_on_a_superposition() {
    // Knights on b1 and d1; d1 splits onto c3/e3, then b1c3 jumps onto the half-filled c3.
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/1N1N3K w - - 0 1").unwrap();
    play(&mut g, &["d1^c3e3", "h8g8"]);
    assert_amp(&g, &[Q::B1, Q::C3, Q::H1, Q::G8], 0, c(0.0, S) * passes(1));
    play(&mut g, &["b1c3"]);
    let rec = g.history().last().unwrap();
    assert_eq!(rec.notation, "b1c3");
    assert_eq!(rec.measured, None);
    // (i/sqrt2)|b1 c3> is left alone (like pieces), (i/sqrt2)|b1 e3> -> i * that on c3 e3.
    assert_amp(&g, &[Q::B1, Q::C3, Q::H1, Q::G8], 0, c(0.0, S) * passes(1));
    assert_amp(&g, &[Q::C3, Q::E3, Q::H1, Q::G8], 0, c(-S, 0.0) * passes(1));
    assert_eq!(g.state_size(), 2);
    // The letters do not change: N on b1, c3, e3.
    for sq in [Q::B1, Q::C3, Q::E3] {
        assert_eq!(g.piece_at(sq).unwrap().fen_char(), 'N');
    }
    assert!((g.probability(Q::C3) - 1.0).abs() < TOL);
    assert!((g.probability(Q::B1) - 0.5).abs() < TOL);
}

#[test]
fn fig7_standard_slide_entangles_bishop_and_knight() {
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/2BN3K w - - 0 1").unwrap();
    play(&mut g, &["d1^b2f2", "h8g8", "c1a3"]);
    // Path b2 half blocked: the bishop moves only where the knight went to f2.
    assert_amp(&g, &[Q::B2, Q::C1, Q::H1, Q::G8], 0, c(0.0, S) * passes(1));
    assert_amp(&g, &[Q::A3, Q::F2, Q::H1, Q::G8], 0, c(-S, 0.0) * passes(1));
    assert_eq!(g.piece_at(Q::A3).unwrap().fen_char(), 'B');
    assert_eq!(g.piece_at(Q::C1).unwrap().fen_char(), 'B');
    assert!((g.probability(Q::A3) - 0.5).abs() < TOL);
}

#[test]
fn fig13_15_split_then_merge_restores_the_knight() {
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/1N5K w - - 0 1").unwrap();
    play(&mut g, &["b1^a3c3"]);
    assert_amp(&g, &[Q::A3, Q::H1, Q::H8], 0, c(0.0, S));
    assert_amp(&g, &[Q::C3, Q::H1, Q::H8], 0, c(0.0, S));
    assert_eq!(
        g.piece_at(Q::B1),
        None,
        "b1 has probability 0: its letter goes"
    );
    play(&mut g, &["h8g8", "c3a3^b1"]);
    assert_amp(&g, &[Q::B1, Q::H1, Q::G8], 0, c(1.0, 0.0) * passes(1));
    assert_eq!(g.state_size(), 1);
    assert_eq!(g.piece_at(Q::A3), None);
    assert_eq!(g.piece_at(Q::C3), None);
    assert_eq!(g.piece_at(Q::B1).unwrap().fen_char(), 'N');
}

#[test]
fn fig17_19_split_slide_and_merge_slide_with_a_half_blocked_path() {
    // Rook a1; a knight from c1 splits onto a2 (blocking a1-a3) and e2.
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/R1N4K w - - 0 1").unwrap();
    play(&mut g, &["c1^a2e2", "h8g8"]);
    // Amplitudes of knight-on-e2 and knight-on-a2 (after black's first king move).
    let (a, b) = (c(0.0, S) * passes(1), c(0.0, S) * passes(1));
    let kings = [Q::H1, Q::G8];
    let with = |sq: &[Square]| -> Vec<Square> { sq.iter().chain(kings.iter()).copied().collect() };
    play(&mut g, &["a1^a3b1"]);
    // Fig. 17: (i a / sqrt2)(|a3> + |b1>) on the clear-path boards, i b |b1> on the blocked.
    assert_amp(&g, &with(&[Q::A3, Q::E2]), 0, a * c(0.0, S));
    assert_amp(&g, &with(&[Q::B1, Q::E2]), 0, a * c(0.0, S));
    assert_amp(&g, &with(&[Q::B1, Q::A2]), 0, b * c(0.0, 1.0));
    assert_eq!(g.piece_at(Q::A1), None);
    play(&mut g, &["g8h8", "b1a3^a1"]);
    // Fig. 19 (read as starting from Fig. 17's output, E6): merged back exactly.
    let kings = [Q::H1, Q::H8];
    let with = |sq: &[Square]| -> Vec<Square> { sq.iter().chain(kings.iter()).copied().collect() };
    assert_amp(&g, &with(&[Q::A1, Q::E2]), 0, a * passes(1));
    assert_amp(&g, &with(&[Q::A1, Q::A2]), 0, b * passes(1));
    assert_eq!(g.state_size(), 2);
    assert_eq!(g.piece_at(Q::B1), None);
    assert_eq!(g.piece_at(Q::A3), None);
}

#[test]
fn bell_states_eq45_to_48_king_only() {
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/K7 w - - 0 1").unwrap();
    play(&mut g, &["a1^a2b1", "h8g8"]);
    // eq. 45a
    assert_amp(&g, &[Q::A2, Q::G8], 0, c(0.0, S) * passes(1));
    assert_amp(&g, &[Q::B1, Q::G8], 0, c(0.0, S) * passes(1));
    play(&mut g, &["b1a1", "g8h8"]);
    // eq. 45b: (i|a2> - |a1>)/sqrt2
    assert_amp(&g, &[Q::A2, Q::H8], 0, c(0.0, S) * passes(2));
    assert_amp(&g, &[Q::A1, Q::H8], 0, c(-S, 0.0) * passes(2));
    // The paper's U_jump(b1, a2) is the same iSwap as the game move a2b1 (b1 is empty now,
    // so the move string names the occupied end as its source).
    assert!(matches!(
        g.apply("b1a2", &mut ChaCha8Rng::seed_from_u64(0)),
        Err(GameError::Illegal { .. })
    ));
    play(&mut g, &["a2b1", "h8g8"]);
    // eq. 45c / 46: -(|b1> + |a1>)/sqrt2 = -|Psi+> on (b1, a1)
    assert_amp(&g, &[Q::B1, Q::G8], 0, c(-S, 0.0) * passes(3));
    assert_amp(&g, &[Q::A1, Q::G8], 0, c(-S, 0.0) * passes(3));
    let bell = g.bell_measures(Q::B1, Q::A1);
    assert!((bell.psi[0] - 1.0).abs() < 1e-12, "Psi+ (eq. 46): {bell:?}");
    assert!((g.pair_log_negativity(Q::B1, Q::A1) - 1.0).abs() < 1e-12);
    assert!((g.square_entanglement(Q::A1).entropy - 1.0).abs() < 1e-12);
    play(&mut g, &["a1a2", "g8h8"]);
    // eq. 47a: (-|b1> - i|a2>)/sqrt2
    assert_amp(&g, &[Q::B1, Q::H8], 0, c(-S, 0.0) * passes(4));
    assert_amp(&g, &[Q::A2, Q::H8], 0, c(0.0, -S) * passes(4));
    play(&mut g, &["a2a1"]);
    // eq. 47b / 48: (-|b1> + |a1>)/sqrt2 = -|Psi-> on (b1, a1)
    assert_amp(&g, &[Q::B1, Q::H8], 0, c(-S, 0.0) * passes(4));
    assert_amp(&g, &[Q::A1, Q::H8], 0, c(S, 0.0) * passes(4));
    assert_eq!(g.state_size(), 2);
    let bell = g.bell_measures(Q::B1, Q::A1);
    assert!((bell.psi[2] - 1.0).abs() < 1e-12, "Psi- (eq. 48): {bell:?}");
}

#[test]
fn bell_states_eq49_to_51_with_capture_ancillas() {
    // E4: white king b3 and knight b1, black bishop c1 (black king h8 to keep the game on).
    let mut g = Game::from_fen("7k/8/8/8/8/1K6/8/1Nb5 w - - 0 1").unwrap();
    play(&mut g, &["b3^b2a3"]);
    // eq. 49a
    assert_amp(&g, &[Q::B2, Q::B1, Q::C1, Q::H8], 0, c(0.0, S));
    assert_amp(&g, &[Q::A3, Q::B1, Q::C1, Q::H8], 0, c(0.0, S));
    play(&mut g, &["c1a3"]);
    let rec = g.history().last().unwrap();
    assert_eq!(
        rec.notation, "c1a3.m1",
        "capture slide measures; D4 makes it certain here"
    );
    assert!((rec.probability.unwrap() - 1.0).abs() < TOL);
    // eq. 49b: the king on a3 went to ancilla x1 (bit 0).
    assert_amp(&g, &[Q::B2, Q::B1, Q::C1, Q::H8], 0, c(0.0, S));
    assert_amp(&g, &[Q::A3, Q::B1, Q::H8], 0b01, c(0.0, -S));
    assert_eq!(g.piece_at(Q::A3).unwrap().fen_char(), 'b');
    play(&mut g, &["b1a3"]);
    // eq. 49c
    assert_amp(&g, &[Q::A3, Q::B2, Q::C1, Q::H8], 0, c(-S, 0.0));
    assert_amp(&g, &[Q::A3, Q::H8], 0b11, c(0.0, S));
    assert_eq!(g.piece_at(Q::A3).unwrap().fen_char(), 'N');
    assert_eq!(g.piece_at(Q::B1), None);
    play(&mut g, &["h8g8", "b2b1"]);
    // eq. 49d / 50: board part i|a3>(|00> - |11>)/sqrt2 on (b1, c1), the branches differing
    // in the ancillas (so the reduced board state is a mixture, not a pure Bell state).
    assert_amp(&g, &[Q::A3, Q::B1, Q::C1, Q::G8], 0, c(0.0, -S) * passes(1));
    assert_amp(&g, &[Q::A3, Q::G8], 0b11, c(0.0, S) * passes(1));
    // The ancillas differ between the branches: the (b1, c1) state is the mixture
    // (|00><00| + |11><11|)/2, half Phi+ and half Phi-, with no detectable entanglement.
    let bell = g.bell_measures(Q::B1, Q::C1);
    assert!(
        (bell.phi[0] - 0.5).abs() < 1e-12 && (bell.phi[2] - 0.5).abs() < 1e-12,
        "{bell:?}"
    );
    assert!(g.pair_log_negativity(Q::B1, Q::C1).abs() < 1e-12);
    play(&mut g, &["g8h8", "b1b2", "h8g8", "b2b1"]);
    // eq. 51: the |11> branch picks up -1.
    assert_amp(&g, &[Q::A3, Q::B1, Q::C1, Q::G8], 0, c(0.0, S) * passes(3));
    assert_amp(&g, &[Q::A3, Q::G8], 0b11, c(0.0, S) * passes(3));
}

#[test]
fn interference_section_11_2_e1() {
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/K7 w - - 0 1").unwrap();
    play(&mut g, &["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^a1b2"]);
    let r2 = 2f64.sqrt();
    assert!(
        (g.probability(Q::A1) - 0.7285533905932737).abs() < TOL,
        "{}",
        g.probability(Q::A1)
    );
    assert!((g.probability(Q::B1) - 0.25).abs() < TOL);
    assert!((g.probability(Q::B2) - 0.0214466094067262).abs() < TOL);
    assert!(g.probability(Q::A2) < 1e-30);
    assert_eq!(
        g.piece_at(Q::A2),
        None,
        "destructive interference empties a2: its letter goes"
    );
    assert_amp(
        &g,
        &[Q::A1, Q::H8],
        0,
        c(-(0.5 + 1.0 / (2.0 * r2)), 0.0) * passes(2),
    );
    assert_amp(&g, &[Q::B1, Q::H8], 0, c(0.0, -0.5) * passes(2));
    assert_amp(
        &g,
        &[Q::B2, Q::H8],
        0,
        c(-(0.5 - 1.0 / (2.0 * r2)), 0.0) * passes(2),
    );

    // Ending with b1^b2a1 swaps the a1 and b2 values.
    let mut g = Game::from_fen("7k/8/8/8/8/8/8/K7 w - - 0 1").unwrap();
    play(&mut g, &["a1^a2b1", "h8g8", "a2^a1b2", "g8h8", "b1^b2a1"]);
    assert!((g.probability(Q::B2) - 0.7285533905932737).abs() < TOL);
    assert!((g.probability(Q::A1) - 0.0214466094067262).abs() < TOL);
}
