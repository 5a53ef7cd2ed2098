//! Layer 1 against a dense reference simulator written here from the paper's matrices.
//!
//! The reference keeps a full state vector over a small region of the board (11 squares), two
//! computed path/control qubits and three capture ancillas (16 qubits). It builds every move
//! gate by gate as the paper draws it: path ancillas computed by multi-controlled X and
//! uncomputed afterwards, U_slide (eq. 6) as a 3-qubit controlled iSwap, U_split (eq. 7, as the
//! product of section 6.3, rules-notes E5) and eq. 9 / eq. 12 as explicit 8x8 and 32x32
//! matrices, measurements as the projectors of eq. 16, 18, 21, 23 and 36 written as sets of
//! basis states. It shares no code with qchess-sim's gates.

use num_complex::Complex64 as C;
use proptest::prelude::*;
use qchess_board::{Square, between};
use qchess_cantwell::circuit::{Applied, CircuitError, MoveType, OccupancyMove, Variant, apply};
use qchess_sim::{Key, Normalization, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

const SQUARES: [Square; 11] = [
    Square::A1,
    Square::B1,
    Square::C1,
    Square::D1,
    Square::E1,
    Square::A2,
    Square::B2,
    Square::C2,
    Square::D2,
    Square::E2,
    Square::A3,
];
const NSQ: usize = SQUARES.len();
/// Path / control ancillas of the reference (computed and uncomputed inside each move).
const P1: usize = NSQ;
const P2: usize = NSQ + 1;
/// Capture ancilla slots.
const CAP0: usize = NSQ + 2;
const SLOTS: usize = 3;
const NQ: usize = NSQ + 2 + SLOTS;
const TOL: f64 = 1e-9;

fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

type Mat = Vec<Vec<C>>;

fn identity(n: usize) -> Mat {
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { c(1.0, 0.0) } else { c(0.0, 0.0) })
                .collect()
        })
        .collect()
}

fn mul(a: &Mat, b: &Mat) -> Mat {
    let n = a.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (0..n).map(|k| a[i][k] * b[k][j]).sum())
                .collect()
        })
        .collect()
}

fn dagger(a: &Mat) -> Mat {
    let n = a.len();
    (0..n)
        .map(|i| (0..n).map(|j| a[j][i].conj()).collect())
        .collect()
}

/// Eq. 4a, basis |x y>.
fn iswap() -> Mat {
    let i = c(0.0, 1.0);
    let (o, z) = (c(1.0, 0.0), c(0.0, 0.0));
    vec![
        vec![o, z, z, z],
        vec![z, z, i, z],
        vec![z, i, z, z],
        vec![z, z, z, o],
    ]
}

/// Eq. 4b, basis |x y>.
fn sqrt_iswap() -> Mat {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let (o, z) = (c(1.0, 0.0), c(0.0, 0.0));
    vec![
        vec![o, z, z, z],
        vec![z, c(h, 0.0), c(0.0, h), z],
        vec![z, c(0.0, h), c(h, 0.0), z],
        vec![z, z, z, o],
    ]
}

/// A 2-qubit gate acting on positions (x, y) of a k-qubit ket |q0 .. q_{k-1}> (q0 the most
/// significant bit).
fn embed(gate: &Mat, k: usize, x: usize, y: usize) -> Mat {
    let n = 1 << k;
    let bit = |idx: usize, pos: usize| (idx >> (k - 1 - pos)) & 1;
    let mut m = vec![vec![c(0.0, 0.0); n]; n];
    for (row, line) in m.iter_mut().enumerate() {
        for (col, slot) in line.iter_mut().enumerate() {
            let others_equal = (0..k)
                .filter(|&p| p != x && p != y)
                .all(|p| bit(row, p) == bit(col, p));
            if others_equal {
                let r = 2 * bit(row, x) + bit(row, y);
                let cc = 2 * bit(col, x) + bit(col, y);
                *slot = gate[r][cc];
            }
        }
    }
    m
}

/// U_split on |t2, t1, s> = iSwap(s, t2) * sqrt-iSwap(s, t1) (section 6.3, Fig. 14b).
fn u_split() -> Mat {
    mul(&embed(&iswap(), 3, 0, 2), &embed(&sqrt_iswap(), 3, 1, 2))
}

/// Block-diagonal 32x32 matrix over |p2, p1, a, b, c> with the four given 8x8 blocks.
fn blocks(bs: [Mat; 4]) -> Mat {
    let mut m = vec![vec![c(0.0, 0.0); 32]; 32];
    for (k, b) in bs.iter().enumerate() {
        for i in 0..8 {
            for j in 0..8 {
                m[8 * k + i][8 * k + j] = b[i][j];
            }
        }
    }
    m
}

/// Eq. 9 on |p2, p1, t2, t1, s>.
fn u_split_slide() -> Mat {
    blocks([
        u_split(),
        embed(&iswap(), 3, 0, 2),
        embed(&iswap(), 3, 1, 2),
        identity(8),
    ])
}

/// Eq. 12 on |p2, p1, s1, s2, t>.
fn u_merge_slide() -> Mat {
    blocks([
        dagger(&u_split()),
        dagger(&embed(&iswap(), 3, 1, 2)),
        dagger(&embed(&iswap(), 3, 0, 2)),
        identity(8),
    ])
}

/// Eq. 6 on |p, t, s>: iSwap(t, s) where p = 0.
fn u_slide() -> Mat {
    let mut m = identity(8);
    let g = iswap();
    for i in 0..4 {
        for j in 0..4 {
            m[i][j] = g[i][j];
        }
    }
    m
}

#[derive(Clone)]
struct Dense {
    amps: Vec<C>,
    next_slot: usize,
}

fn pos(sq: Square) -> usize {
    SQUARES
        .iter()
        .position(|&s| s == sq)
        .expect("square in the reference region")
}

fn mask_positions(mask: u64) -> Vec<usize> {
    (0..64u8)
        .filter(|i| mask >> i & 1 != 0)
        .map(|i| pos(Square::from_index(i).unwrap()))
        .collect()
}

impl Dense {
    fn get(idx: usize, q: usize) -> usize {
        (idx >> q) & 1
    }

    /// A k-qubit gate on the listed qubits (first = most significant in the matrix basis).
    fn gate(&mut self, qubits: &[usize], m: &Mat) {
        let k = qubits.len();
        let mask: usize = qubits.iter().map(|q| 1 << q).sum();
        let n = self.amps.len();
        let mut local = vec![c(0.0, 0.0); 1 << k];
        for base in 0..n {
            if base & mask != 0 {
                continue;
            }
            let index = |local_idx: usize| {
                let mut idx = base;
                for (p, &q) in qubits.iter().enumerate() {
                    if (local_idx >> (k - 1 - p)) & 1 == 1 {
                        idx |= 1 << q;
                    }
                }
                idx
            };
            for (l, slot) in local.iter_mut().enumerate() {
                *slot = self.amps[index(l)];
            }
            for (r, row) in m.iter().enumerate() {
                self.amps[index(r)] = row.iter().zip(&local).map(|(a, b)| a * b).sum();
            }
        }
    }

    /// Multi-controlled X on `target`: flips where all `zeros` are 0 and all `ones` are 1.
    fn mcx(&mut self, target: usize, zeros: &[usize], ones: &[usize]) {
        let n = self.amps.len();
        for idx in 0..n {
            if Self::get(idx, target) == 1 {
                continue;
            }
            let fire = zeros.iter().all(|&q| Self::get(idx, q) == 0)
                && ones.iter().all(|&q| Self::get(idx, q) == 1);
            if fire {
                self.amps.swap(idx, idx | 1 << target);
            }
        }
    }

    /// p = OR of the path squares (X, then X controlled on the whole path empty). Self-inverse.
    fn path_ancilla(&mut self, p: usize, path: &[usize]) {
        self.mcx(p, &[], &[]);
        self.mcx(p, path, &[]);
    }

    /// Projects onto the basis states whose bits on `qubits` (first = most significant) are
    /// in `m1` (outcome 1) or not (outcome 0); returns the outcome's probability.
    fn project(&mut self, qubits: &[usize], m1: &[usize], outcome: bool) -> f64 {
        let k = qubits.len();
        let local = |idx: usize| {
            qubits
                .iter()
                .enumerate()
                .fold(0, |acc, (p, &q)| acc | Self::get(idx, q) << (k - 1 - p))
        };
        let mut kept = 0.0;
        for (idx, a) in self.amps.iter_mut().enumerate() {
            if m1.contains(&local(idx)) == outcome {
                kept += a.norm_sqr();
            } else {
                *a = c(0.0, 0.0);
            }
        }
        if kept > 0.0 {
            let s = 1.0 / kept.sqrt();
            for a in &mut self.amps {
                *a *= s;
            }
        }
        kept
    }

    fn probability(&self, qubits: &[usize], m1: &[usize]) -> f64 {
        let mut copy = self.clone();
        copy.project(qubits, m1, true)
    }

    fn slot(&mut self) -> usize {
        let s = CAP0 + self.next_slot;
        self.next_slot += 1;
        s
    }

    fn assert_control_qubits_clean(&self) {
        for (idx, a) in self.amps.iter().enumerate() {
            if a.norm_sqr() > 1e-20 {
                assert_eq!(idx >> P1 & 3, 0, "path/control ancilla left set");
            }
        }
    }
}

/// What the reference did: the measurement outcome probability and the slots it took.
struct RefApplied {
    probability: Option<f64>,
    slots: Vec<usize>,
}

/// Runs the paper's circuit for `mv` on the reference, with measurement outcome `outcome`
/// (the measurement's M1 over the listed qubits). Returns None if the move has a measurement
/// whose `outcome` has probability 0.
fn reference(d: &mut Dense, mv: &OccupancyMove, outcome: bool) -> Option<RefApplied> {
    let s = pos(mv.source);
    let t = pos(mv.target);
    let mut slots = Vec::new();
    let mut probability = None;
    // Measures M1 on `qubits`; returns whether the unitary runs.
    let mut measure = |d: &mut Dense, qubits: &[usize], m1: &[usize]| -> Option<bool> {
        let p1 = d.probability(qubits, m1);
        let p = if outcome { p1 } else { 1.0 - p1 };
        if p <= 1e-12 {
            return None;
        }
        d.project(qubits, m1, outcome);
        probability = Some(p);
        Some(outcome)
    };
    let jump = |d: &mut Dense, s: usize, t: usize| d.gate(&[t, s], &iswap());
    let path = mask_positions(between(mv.source, mv.target).0);
    let slide = |d: &mut Dense, s: usize, t: usize, path: &[usize]| {
        d.path_ancilla(P1, path);
        d.gate(&[P1, t, s], &u_slide());
        d.path_ancilla(P1, path);
    };
    match (mv.move_type, mv.variant) {
        (MoveType::Jump | MoveType::PawnStep, Variant::Basic) => jump(d, s, t),
        (MoveType::Jump | MoveType::PawnStep, Variant::Excluded) => {
            // Eq. 16b on |t, s>: {00, 01}.
            if measure(d, &[t, s], &[0b00, 0b01])? {
                jump(d, s, t);
            }
        }
        (MoveType::Jump, Variant::Capture) => {
            // Eq. 18b on |t, s>: {01, 11}; U_jump(s, t) U_jump(t, c).
            if measure(d, &[t, s], &[0b01, 0b11])? {
                let x = d.slot();
                slots.push(x);
                d.gate(&[x, t], &iswap());
                jump(d, s, t);
            }
        }
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Basic) => slide(d, s, t, &path),
        (MoveType::Slide | MoveType::PawnTwoStep, Variant::Excluded) => {
            // Eq. 21b on |p, t, s>: {000, 001, 100, 101}.
            d.path_ancilla(P1, &path);
            let run = measure(d, &[P1, t, s], &[0b000, 0b001, 0b100, 0b101]);
            d.path_ancilla(P1, &path);
            if run? {
                slide(d, s, t, &path);
            }
        }
        (MoveType::Slide, Variant::Capture) => {
            // Eq. 23b on |p, t, s>: {001, 011, 100, 101}; U_slide(s, t) U_slide(t, c).
            d.path_ancilla(P1, &path);
            let run = measure(d, &[P1, t, s], &[0b001, 0b011, 0b100, 0b101]);
            if run == Some(true) {
                let x = d.slot();
                slots.push(x);
                d.gate(&[P1, x, t], &u_slide());
                d.gate(&[P1, t, s], &u_slide());
            }
            d.path_ancilla(P1, &path);
            run?;
        }
        (MoveType::SplitJump, _) => {
            let t2 = pos(mv.target2.unwrap());
            d.gate(&[t2, t, s], &u_split());
        }
        (MoveType::MergeJump, _) => {
            let s2 = pos(mv.source2.unwrap());
            d.gate(&[s, s2, t], &dagger(&u_split()));
        }
        (MoveType::SplitSlide, _) => {
            let t2sq = mv.target2.unwrap();
            let t2 = pos(t2sq);
            let p1 = mask_positions(between(mv.source, mv.target).0 & !(1 << t2sq.index()));
            let p2 = mask_positions(between(mv.source, t2sq).0 & !(1 << mv.target.index()));
            d.path_ancilla(P1, &p1);
            d.path_ancilla(P2, &p2);
            d.gate(&[P2, P1, t2, t, s], &u_split_slide());
            d.path_ancilla(P1, &p1);
            d.path_ancilla(P2, &p2);
        }
        (MoveType::MergeSlide, _) => {
            let s2sq = mv.source2.unwrap();
            let s2 = pos(s2sq);
            let p1 = mask_positions(between(mv.source, mv.target).0 & !(1 << s2sq.index()));
            let p2 = mask_positions(between(s2sq, mv.target).0 & !(1 << mv.source.index()));
            d.path_ancilla(P1, &p1);
            d.path_ancilla(P2, &p2);
            d.gate(&[P2, P1, s, s2, t], &u_merge_slide());
            d.path_ancilla(P1, &p1);
            d.path_ancilla(P2, &p2);
        }
        (MoveType::PawnCapture, _) => {
            // Eq. 18b, then U_slide(p, t, s) U_slide(p, c, t) with p = 0 iff s and t occupied.
            if measure(d, &[t, s], &[0b01, 0b11])? {
                let x = d.slot();
                slots.push(x);
                d.mcx(P1, &[], &[]);
                d.mcx(P1, &[], &[s, t]);
                d.gate(&[P1, x, t], &u_slide());
                d.gate(&[P1, t, s], &u_slide());
                // Uncompute: p = 0 exactly where the capture fired (ancilla x set).
                d.mcx(P1, &[x], &[]);
            }
        }
        (MoveType::PawnEp, variant) => {
            let ep = pos(mv.ep_square().unwrap());
            let run = match variant {
                Variant::Basic => true,
                Variant::Excluded => measure(d, &[t, s], &[0b00, 0b01])?,
                Variant::Capture => measure(d, &[t, s], &[0b01, 0b11])?,
            };
            if run {
                if variant == Variant::Capture {
                    // p = 0 iff s and (t or ep); U_slide(p,t,s) U_slide(p,c2,t) U_slide(p,c1,ep).
                    let (x1, x2) = (d.slot(), d.slot());
                    slots.extend([x1, x2]);
                    d.mcx(P1, &[], &[]);
                    d.mcx(P1, &[], &[s, t]);
                    d.mcx(P1, &[t], &[s, ep]);
                    d.gate(&[P1, x1, ep], &u_slide());
                    d.gate(&[P1, x2, t], &u_slide());
                    d.gate(&[P1, t, s], &u_slide());
                    d.mcx(P1, &[x1, x2], &[]);
                } else {
                    // p = 0 iff s and ep; U_slide(p, t, s) U_slide(p, c, ep).
                    let x = d.slot();
                    slots.push(x);
                    d.mcx(P1, &[], &[]);
                    d.mcx(P1, &[], &[s, ep]);
                    d.gate(&[P1, x, ep], &u_slide());
                    d.gate(&[P1, t, s], &u_slide());
                    d.mcx(P1, &[x], &[]);
                }
            }
        }
        (MoveType::KsCastle | MoveType::QsCastle, _) => {
            let cs = mv.castling_squares().unwrap();
            let (e, g, h, f) = (
                pos(cs.king_from),
                pos(cs.king_to),
                pos(cs.rook_from),
                pos(cs.rook_to),
            );
            // Eq. 36b on |f, g> (|c, d> on the queen side): {00}.
            if measure(d, &[f, g], &[0b00])? {
                match cs.control {
                    None => {
                        jump(d, e, g);
                        jump(d, h, f);
                    }
                    Some(b) => {
                        let b = pos(b);
                        d.gate(&[b, f, h], &u_slide());
                        d.gate(&[b, g, e], &u_slide());
                    }
                }
            }
        }
        (MoveType::PawnStep | MoveType::PawnTwoStep, Variant::Capture) => unreachable!(),
    }
    d.assert_control_qubits_clean();
    Some(RefApplied { probability, slots })
}

/// A random normalised superposition of `boards` random occupancy patterns of the region.
fn random_state(rng: &mut ChaCha8Rng, boards: usize, density: f64) -> (State, Dense) {
    random_state_with(rng, boards, density, 0)
}

/// [`random_state`] with the squares of `always` occupied on every board.
fn random_state_with(
    rng: &mut ChaCha8Rng,
    boards: usize,
    density: f64,
    always: u64,
) -> (State, Dense) {
    let mut amps = vec![c(0.0, 0.0); 1 << NQ];
    let mut entries: HashMap<u64, C> = HashMap::new();
    for _ in 0..boards {
        let mut board = 0u64;
        let mut idx = 0usize;
        for (p, sq) in SQUARES.iter().enumerate() {
            if rng.random::<f64>() < density || always >> sq.index() & 1 == 1 {
                board |= 1 << sq.index();
                idx |= 1 << p;
            }
        }
        let a = c(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
        *entries.entry(board).or_insert(c(0.0, 0.0)) += a;
        amps[idx] += a;
    }
    let norm: f64 = amps.iter().map(|a| a.norm_sqr()).sum::<f64>().sqrt();
    for a in &mut amps {
        *a /= norm;
    }
    let list: Vec<(Key, C)> = entries
        .into_iter()
        .map(|(b, a)| (Key::board(b), a / norm))
        .collect();
    let state = State::from_amplitudes(list, Normalization::RequireUnit).unwrap();
    (state, Dense { amps, next_slot: 0 })
}

/// Compares the sim state with the reference; `ancilla_slot` maps sim ancilla indices to
/// reference slots.
fn assert_same(state: &State, d: &Dense, ancilla_slot: &HashMap<u32, usize>, context: &str) {
    let mut from_sim = vec![c(0.0, 0.0); 1 << NQ];
    for (key, a) in state.entries() {
        let mut idx = 0usize;
        for (p, sq) in SQUARES.iter().enumerate() {
            if key.board >> sq.index() & 1 == 1 {
                idx |= 1 << p;
            }
        }
        let outside = key.board & !SQUARES.iter().fold(0u64, |m, s| m | 1 << s.index());
        assert_eq!(outside, 0, "{context}: piece outside the region");
        for j in 0..128u32 {
            if key.ancillas >> j & 1 == 1 {
                let slot = ancilla_slot.get(&j).unwrap_or_else(|| {
                    panic!("{context}: sim ancilla {j} is set but the reference has no slot")
                });
                idx |= 1 << slot;
            }
        }
        from_sim[idx] += a;
    }
    for (idx, (x, y)) in from_sim.iter().zip(&d.amps).enumerate() {
        assert!(
            (x - y).norm() < TOL,
            "{context}: amplitude mismatch at basis {idx:#x}: sim {x}, reference {y}"
        );
    }
}

/// Random squares of the region fitting `move_type`.
fn random_move(rng: &mut ChaCha8Rng, move_type: MoveType, variant: Variant) -> OccupancyMove {
    loop {
        let pick = |rng: &mut ChaCha8Rng| SQUARES[rng.random_range(0..NSQ)];
        let (s, t, u) = (pick(rng), pick(rng), pick(rng));
        let mv = if move_type.is_split() {
            OccupancyMove::split(move_type, s, t, u)
        } else if move_type.is_merge() {
            OccupancyMove::merge(move_type, s, t, u)
        } else {
            OccupancyMove::new(move_type, variant, s, t)
        };
        let mv = OccupancyMove { variant, ..mv };
        if mv.validate().is_err() {
            continue;
        }
        // Every square the circuit touches must be in the region.
        let region = SQUARES.iter().fold(0u64, |m, s| m | 1 << s.index());
        let mut touched = between(s, t).0 | between(s, u).0 | between(t, u).0;
        if let Some(ep) = mv.ep_square() {
            touched |= 1 << ep.index();
        }
        if let Some(cs) = mv.castling_squares() {
            touched |= 1 << cs.rook_from.index() | 1 << cs.rook_to.index();
        }
        if touched & !region != 0 {
            continue;
        }
        // Slides are more interesting with a path; prefer aligned squares most of the time.
        let sliding = matches!(
            move_type,
            MoveType::Slide | MoveType::PawnTwoStep | MoveType::SplitSlide | MoveType::MergeSlide
        );
        if sliding && between(s, t).0 == 0 && rng.random::<f64>() < 0.7 {
            continue;
        }
        return mv;
    }
}

/// Applies `mv` to both, with an outcome that is possible in the reference (random when both
/// are), checks the results agree, and returns whether the move ran.
fn step(
    rng: &mut ChaCha8Rng,
    state: &mut State,
    d: &mut Dense,
    slots: &mut HashMap<u32, usize>,
    mv: OccupancyMove,
) {
    let context = mv.to_string();
    let outcome = if mv.measures() {
        rng.random::<bool>()
    } else {
        true
    };
    let before = state.clone();
    let mut trial = d.clone();
    let (mv, reference_result) = match reference(&mut trial, &mv, outcome) {
        Some(r) => (mv.with_forced(outcome), Some(r)),
        None => {
            // That outcome is impossible: the engine must refuse it and change nothing.
            let err = apply(state, &mv.with_forced(outcome), rng).unwrap_err();
            assert!(
                matches!(err, CircuitError::ImpossibleOutcome { .. }),
                "{context}: {err}"
            );
            assert!(
                (state.inner(&before).re - 1.0).abs() < 1e-12,
                "{context}: state changed"
            );
            let r = reference(&mut trial, &mv, !outcome).expect("one outcome is possible");
            (mv.with_forced(!outcome), Some(r))
        }
    };
    let r = reference_result.unwrap();
    let applied: Applied = apply(state, &mv, rng).unwrap_or_else(|e| panic!("{context}: {e}"));
    *d = trial;
    match (applied.probability, r.probability) {
        (Some(p), Some(q)) => assert!((p - q).abs() < TOL, "{context}: probability {p} vs {q}"),
        (None, None) => {}
        other => panic!("{context}: measurement mismatch {other:?}"),
    }
    if let Some(first) = applied.ancilla {
        // Capture E.P. takes two consecutive ancillas; every other capture one.
        for (k, &slot) in r.slots.iter().enumerate() {
            slots.insert(first + k as u32, slot);
        }
    }
    assert_same(state, d, slots, &context);
}

fn all_types_and_variants() -> Vec<(MoveType, Variant)> {
    MoveType::ALL
        .into_iter()
        .flat_map(|t| Variant::ALL.into_iter().map(move |v| (t, v)))
        .filter(|(t, v)| t.accepts(*v))
        .collect()
}

fn slots_needed(mv: &OccupancyMove) -> usize {
    match (mv.move_type, mv.variant) {
        (MoveType::PawnEp, Variant::Capture) => 2,
        (MoveType::PawnEp | MoveType::PawnCapture, _) => 1,
        (MoveType::Jump | MoveType::Slide, Variant::Capture) => 1,
        _ => 0,
    }
}

#[test]
fn every_move_type_and_variant_matches_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(2019);
    for (move_type, variant) in all_types_and_variants() {
        // 12 random states per type and variant in release, 3 in (slow) debug builds.
        for trial in 0..if cfg!(debug_assertions) { 3 } else { 12 } {
            let boards = 1 + trial % 6;
            let (mut state, mut d) = random_state(&mut rng, boards, 0.5);
            let mv = random_move(&mut rng, move_type, variant);
            let mut slots = HashMap::new();
            step(&mut rng, &mut state, &mut d, &mut slots, mv);
        }
    }
}

/// Eq. 23b with the target occupied on every board (and, in every other trial, the source):
/// the measurement then runs as one native pattern, "path clear and source occupied" (or
/// "path clear"); both outcomes, through a path, against the reference.
#[test]
fn capture_slides_onto_a_certain_target_match_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(2311);
    let mut outcomes = [0usize; 2];
    for trial in 0..48 {
        let mv = loop {
            let mv = random_move(&mut rng, MoveType::Slide, Variant::Capture);
            if between(mv.source, mv.target).0 != 0 {
                break mv;
            }
        };
        let mut always = 1u64 << mv.target.index();
        if trial % 2 == 0 {
            always |= 1u64 << mv.source.index();
        }
        let (mut state, mut d) = random_state_with(&mut rng, 2 + trial % 5, 0.5, always);
        let mut slots = HashMap::new();
        step(&mut rng, &mut state, &mut d, &mut slots, mv);
        // Outcome 1 took an ancilla for the capture; outcome 0 did not.
        outcomes[usize::from(state.ancilla_count() > 0)] += 1;
    }
    assert!(outcomes[0] > 5 && outcomes[1] > 5, "{outcomes:?}");
}

#[test]
fn unforced_measurements_follow_the_rng_and_match_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(45);
    for (move_type, variant) in all_types_and_variants() {
        let (mut state, d) = random_state(&mut rng, 5, 0.5);
        let mv = random_move(&mut rng, move_type, variant);
        let applied = apply(&mut state, &mv, &mut rng).unwrap();
        let outcome = applied.measured.unwrap_or(true);
        assert_eq!(applied.measured.is_some(), mv.measures(), "{mv}");
        let mut d = d;
        let r = reference(&mut d, &mv, outcome).expect("drawn outcome is possible");
        let mut slots = HashMap::new();
        if let Some(first) = applied.ancilla {
            for (k, &slot) in r.slots.iter().enumerate() {
                slots.insert(first + k as u32, slot);
            }
        }
        assert_same(&state, &d, &slots, &mv.to_string());
    }
}

#[test]
fn classical_moves_are_plain_chess_moves_with_the_papers_phases() {
    // A rook on a1 slides to e1 over an empty path: amplitude i (eq. 6).
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let mut state = State::classical(1 << Square::A1.index());
    apply(&mut state, &"a1e1:SLIDE:BASIC".parse().unwrap(), &mut rng).unwrap();
    assert_eq!(
        state.amplitude(Key::board(1 << Square::E1.index())),
        c(0.0, 1.0)
    );
    // Blocked path (c1 occupied): nothing moves.
    let board = 1 << Square::A1.index() | 1 << Square::C1.index();
    let mut state = State::classical(board);
    apply(&mut state, &"a1e1:SLIDE:BASIC".parse().unwrap(), &mut rng).unwrap();
    assert_eq!(state.amplitude(Key::board(board)), c(1.0, 0.0));
    // King side castling on a classical board: two jumps, amplitude i * i = -1.
    let board = 1 << Square::E1.index() | 1 << Square::H1.index();
    let mut state = State::classical(board);
    let applied = apply(
        &mut state,
        &"e1g1:KS_CASTLE:BASIC".parse().unwrap(),
        &mut rng,
    )
    .unwrap();
    assert_eq!(applied.measured, Some(true));
    let after = 1 << Square::G1.index() | 1 << Square::F1.index();
    assert_eq!(state.amplitude(Key::board(after)), c(-1.0, 0.0));
    // Queen side: king e1 -> c1, rook a1 -> d1.
    let board = 1 << Square::E1.index() | 1 << Square::A1.index();
    let mut state = State::classical(board);
    apply(
        &mut state,
        &"e1c1:QS_CASTLE:BASIC".parse().unwrap(),
        &mut rng,
    )
    .unwrap();
    let after = 1 << Square::C1.index() | 1 << Square::D1.index();
    assert_eq!(state.amplitude(Key::board(after)), c(-1.0, 0.0));
    // En passant on a classical board: white pawn e5, black pawn d5, e5 -> d6 captures d5.
    let board = 1 << Square::E5.index() | 1 << Square::D5.index();
    let mut state = State::classical(board);
    let applied = apply(&mut state, &"e5d6:PAWN_EP:BASIC".parse().unwrap(), &mut rng).unwrap();
    let x = applied.ancilla.expect("a capture ancilla");
    let key = Key {
        board: 1 << Square::D6.index(),
        ancillas: 1 << x,
    };
    assert_eq!(state.amplitude(key), c(-1.0, 0.0));
}

#[test]
fn errors_leave_the_state_unchanged() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut state, _) = random_state(&mut rng, 4, 0.5);
    let before = state.clone();
    // Target certainly occupied: outcome 1 of a blocked jump is impossible.
    let board = 1 << Square::A1.index() | 1 << Square::B1.index();
    let mut classical = State::classical(board);
    let err = apply(
        &mut classical,
        &"a1b1.m1:JUMP:EXCLUDED".parse().unwrap(),
        &mut rng,
    );
    assert!(matches!(
        err,
        Err(CircuitError::ImpossibleOutcome { outcome: true, .. })
    ));
    assert_eq!(classical.amplitude(Key::board(board)), c(1.0, 0.0));
    // .m0 on a move without measurement.
    let mv = OccupancyMove::new(MoveType::Jump, Variant::Basic, Square::A1, Square::B2)
        .with_forced(false);
    assert_eq!(
        apply(&mut state, &mv, &mut rng),
        Err(CircuitError::NoMeasurement)
    );
    // A repeated square.
    let mv = OccupancyMove::split(MoveType::SplitJump, Square::A1, Square::B2, Square::B2);
    assert!(matches!(
        apply(&mut state, &mv, &mut rng),
        Err(CircuitError::InvalidMove { .. })
    ));
    // The state-size cap: a split that would double the state.
    let mut capped = state.clone().with_cap(state.len());
    let mv = OccupancyMove::split(MoveType::SplitJump, Square::A1, Square::B2, Square::C2);
    let capped_before = capped.clone();
    if apply(&mut capped, &mv, &mut rng).is_err() {
        assert!((capped.inner(&capped_before).re - 1.0).abs() < 1e-12);
    }
    // Too many captures.
    let mut full = State::classical(1);
    for _ in 0..qchess_sim::MAX_ANCILLAS {
        full.capture(5).unwrap();
    }
    let full_before = full.clone();
    let mv: OccupancyMove = "a1b1.m1:JUMP:CAPTURE".parse().unwrap();
    assert!(matches!(
        apply(&mut full, &mv, &mut rng),
        Err(CircuitError::Sim(_))
    ));
    assert!((full.inner(&full_before).re - 1.0).abs() < 1e-12);
    assert!((state.inner(&before).re - 1.0).abs() < 1e-12);
}

proptest! {
    // 48 cases in release (about a second); fewer in debug builds, where the dense
    // 16-qubit reference is slow.
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 6 } else { 48 }))]
    #[test]
    fn random_sequences_match_the_reference(seed in any::<u64>(), len in 1usize..7, boards in 1usize..5) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut state, mut d) = random_state(&mut rng, boards, 0.45);
        let kinds = all_types_and_variants();
        let mut slots = HashMap::new();
        for _ in 0..len {
            let (t, v) = kinds[rng.random_range(0..kinds.len())];
            let mv = random_move(&mut rng, t, v);
            if d.next_slot + slots_needed(&mv) > SLOTS {
                continue;
            }
            step(&mut rng, &mut state, &mut d, &mut slots, mv);
        }
    }
}

/// A state with every occupancy pattern of `squares` (random amplitudes), nothing elsewhere.
fn every_pattern(rng: &mut ChaCha8Rng, squares: &[Square]) -> (State, Dense) {
    let mut amps = vec![c(0.0, 0.0); 1 << NQ];
    let mut entries = Vec::new();
    for pattern in 0..1u32 << squares.len() {
        let (mut board, mut idx) = (0u64, 0usize);
        for (k, sq) in squares.iter().enumerate() {
            if pattern >> k & 1 == 1 {
                board |= 1 << sq.index();
                idx |= 1 << pos(*sq);
            }
        }
        let a = c(rng.random::<f64>() - 0.5, rng.random::<f64>() - 0.5);
        entries.push((Key::board(board), a));
        amps[idx] = a;
    }
    let norm: f64 = amps.iter().map(|a| a.norm_sqr()).sum::<f64>().sqrt();
    amps.iter_mut().for_each(|a| *a /= norm);
    entries.iter_mut().for_each(|(_, a)| *a /= norm);
    let state = State::from_amplitudes(entries, Normalization::RequireUnit).unwrap();
    (state, Dense { amps, next_slot: 0 })
}

#[test]
fn measured_moves_on_every_occupancy_pattern_of_their_squares() {
    // Every basis pattern of the squares a move reads (source, target, path, e.p. square,
    // castling squares) is present, so every part of M0 and M1 has weight; both outcomes.
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let cases: [(&str, &[Square]); 8] = [
        (
            "a1e1:SLIDE:CAPTURE",
            &[Square::A1, Square::B1, Square::C1, Square::D1, Square::E1],
        ),
        ("a3c1:SLIDE:CAPTURE", &[Square::A3, Square::B2, Square::C1]),
        (
            "a1d1:SLIDE:EXCLUDED",
            &[Square::A1, Square::B1, Square::C1, Square::D1],
        ),
        ("a2b1:PAWN_CAPTURE:BASIC", &[Square::A2, Square::B1]),
        ("b2a1:PAWN_EP:BASIC", &[Square::B2, Square::A1, Square::A2]),
        (
            "b2a1:PAWN_EP:EXCLUDED",
            &[Square::B2, Square::A1, Square::A2],
        ),
        (
            "b2a1:PAWN_EP:CAPTURE",
            &[Square::B2, Square::A1, Square::A2],
        ),
        (
            "e1c1:QS_CASTLE:BASIC",
            &[Square::A1, Square::B1, Square::C1, Square::D1, Square::E1],
        ),
    ];
    for (text, squares) in cases {
        let mv: OccupancyMove = text.parse().unwrap();
        let outcomes: &[bool] = if mv.measures() {
            &[true, false]
        } else {
            &[true]
        };
        for &outcome in outcomes {
            let (mut state, mut d) = every_pattern(&mut rng, squares);
            let r = reference(&mut d, &mv, outcome).expect("both outcomes possible");
            let applied = apply(&mut state, &mv.with_forced(outcome), &mut rng).unwrap();
            match (applied.probability, r.probability) {
                (Some(p), Some(q)) => assert!((p - q).abs() < TOL, "{text}: {p} vs {q}"),
                (None, None) => {}
                other => panic!("{text}: measurement mismatch {other:?}"),
            }
            let mut slots = HashMap::new();
            if let Some(first) = applied.ancilla {
                for (k, &slot) in r.slots.iter().enumerate() {
                    slots.insert(first + k as u32, slot);
                }
            }
            assert_same(&state, &d, &slots, &format!("{text} outcome {outcome}"));
        }
    }
}
