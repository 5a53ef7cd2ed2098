//! `qchess-mpi selftest`: random gate sequences and a 30-split knight walk run on the sharded
//! state and on the single-process [`State`] side by side, compared after every step.

use crate::ShardedState;
use crate::plan::LocalSet;
use num_complex::Complex;
use qchess_sim::{Controls, Key, Predicate, QuantumState, SimError, State};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Largest allowed difference of a probability (and, after a projection, of an amplitude
/// component) between the sharded and the single-process state.
pub const TOLERANCE: f64 = 1e-12;

/// What a selftest found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Comparisons made.
    pub checks: usize,
    /// Comparisons that agreed.
    pub agreed: usize,
    /// One line per disagreement (the first few).
    pub failures: Vec<String>,
    /// Exchanges (changes of the local set) the sharded states made.
    pub exchanges: u64,
    /// Entries all ranks sent to each other.
    pub entries_sent: u64,
    /// Operations both sides refused (with the same error).
    pub refused: usize,
    /// Most basis states a compared state held.
    pub largest_state: usize,
    /// Knight splits the Cantwell game played.
    pub knight_splits: usize,
}

impl Report {
    /// Whether every check agreed (and there was at least one).
    pub fn ok(&self) -> bool {
        self.checks > 0 && self.agreed == self.checks
    }

    fn record(&mut self, what: &str, result: Result<(), String>) {
        self.checks += 1;
        match result {
            Ok(()) => self.agreed += 1,
            Err(e) => {
                if self.failures.len() < 20 {
                    self.failures.push(format!("{what}: {e}"));
                }
            }
        }
    }

    /// Adds another report's counts.
    pub fn absorb(&mut self, other: Report) {
        self.checks += other.checks;
        self.agreed += other.agreed;
        self.failures.extend(other.failures);
        self.exchanges += other.exchanges;
        self.entries_sent += other.entries_sent;
        self.refused += other.refused;
        self.largest_state = self.largest_state.max(other.largest_state);
        self.knight_splits += other.knight_splits;
    }

    /// Counts the sharded state's traffic (collective: sums the ranks' entries sent).
    fn traffic(&mut self, s: &ShardedState<f64>) {
        let t = s.traffic();
        self.exchanges += t.exchanges;
        self.entries_sent += crate::comm::sum_u64(&*s.comm(), &[t.entries_sent])[0];
    }
}

/// Compares the sharded state with the reference: the same keys; amplitudes bit for bit
/// while `exact` (no projection yet: the per-entry arithmetic is the same), else within
/// [`TOLERANCE`]; every qubit's probability within [`TOLERANCE`]. Collective.
pub fn compare(
    sharded: &ShardedState<f64>,
    reference: &State<f64>,
    exact: bool,
) -> Result<(), String> {
    let got = sharded.gather_entries().map_err(|e| e.to_string())?;
    let want: Vec<(Key, Complex<f64>)> = reference.entries().collect();
    let p_got = sharded.qubit_probabilities();
    let p_want = QuantumState::qubit_probabilities(reference);
    if got.len() != want.len() {
        return Err(format!(
            "{} entries, the local state has {}",
            got.len(),
            want.len()
        ));
    }
    for ((kg, ag), (kw, aw)) in got.iter().zip(&want) {
        if kg != kw {
            return Err(format!("key {kg:?} where the local state has {kw:?}"));
        }
        let same = if exact {
            ag.re.to_bits() == aw.re.to_bits() && ag.im.to_bits() == aw.im.to_bits()
        } else {
            (ag.re - aw.re).abs() <= TOLERANCE && (ag.im - aw.im).abs() <= TOLERANCE
        };
        if !same {
            return Err(format!("amplitude of {kg:?}: {ag} vs {aw}"));
        }
    }
    for q in 0..64 {
        if (p_got[q] - p_want[q]).abs() > TOLERANCE {
            return Err(format!("P(qubit {q}) = {} vs {}", p_got[q], p_want[q]));
        }
    }
    if sharded.ancilla_count() != reference.ancilla_count() {
        return Err("ancilla counts differ".into());
    }
    Ok(())
}

/// Draws `k` distinct qubits from `pool`.
fn pick(rng: &mut ChaCha8Rng, pool: &[u8], k: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let q = pool[rng.random_range(0..pool.len())];
        if !out.contains(&q) {
            out.push(q);
        }
    }
    out
}

/// A control mask on pool qubits other than `acted` (empty half of the time).
fn controls(rng: &mut ChaCha8Rng, pool: &[u8], acted: &[u8]) -> Controls {
    if rng.random_bool(0.5) {
        return Controls::NONE;
    }
    let free: Vec<u8> = pool
        .iter()
        .copied()
        .filter(|q| !acted.contains(q))
        .collect();
    let q = free[rng.random_range(0..free.len())];
    if rng.random_bool(0.5) {
        Controls::empty_path(1 << q)
    } else {
        Controls {
            zeros: 0,
            ones: 1 << q,
        }
    }
}

/// One random gate sequence of `steps` operations from seed `seed`, with a local set of
/// `capacity` qubits; one check per step. Collective.
pub fn random_sequence(seed: u64, steps: usize, capacity: usize) -> Report {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Twelve qubits in play spread over the board, five of them occupied, plus bystanders.
    let mut pool: Vec<u8> = Vec::new();
    while pool.len() < 12 {
        let q = rng.random_range(0..64u8);
        if !pool.contains(&q) {
            pool.push(q);
        }
    }
    let mut board = 0u64;
    for &q in &pool[..5] {
        board |= 1 << q;
    }
    for _ in 0..3 {
        let q = rng.random_range(0..64u8);
        if !pool.contains(&q) {
            board |= 1 << q;
        }
    }
    sequence(
        &mut rng,
        seed,
        steps,
        capacity,
        State::<f64>::classical(board),
        &pool,
    )
}

/// A random sequence of `steps` operations on qubits of `pool`, from `start`: one check per
/// step. Collective.
fn sequence(
    rng: &mut ChaCha8Rng,
    seed: u64,
    steps: usize,
    capacity: usize,
    start: State<f64>,
    pool: &[u8],
) -> Report {
    let mut report = Report::default();
    let mut sharded = match ShardedState::from_state(&start, LocalSet::new(capacity, &[])) {
        Ok(s) => s,
        Err(e) => {
            report.record("sharding the start state", Err(e.to_string()));
            return report;
        }
    };
    let mut reference = start;
    let (mut rng_ref, mut rng_sh) = (
        ChaCha8Rng::seed_from_u64(seed ^ 0xabcd),
        ChaCha8Rng::seed_from_u64(seed ^ 0xabcd),
    );
    let mut exact = true;
    for step in 0..steps {
        let kind = rng.random_range(0..13u32);
        let what = format!("seed {seed} step {step} op {kind}");
        let (r_ref, r_sh): (Result<String, SimError>, Result<String, SimError>) = match kind {
            0..=3 => {
                let q = pick(rng, pool, 2);
                let c = controls(rng, pool, &q);
                let (a, b) = (q[0], q[1]);
                match kind {
                    0 => (
                        QuantumState::iswap(&mut reference, a, b, c).map(|_| String::new()),
                        sharded.iswap(a, b, c).map(|_| String::new()),
                    ),
                    1 => (
                        QuantumState::iswap_inv(&mut reference, a, b, c).map(|_| String::new()),
                        sharded.iswap_inv(a, b, c).map(|_| String::new()),
                    ),
                    2 => (
                        QuantumState::sqrt_iswap(&mut reference, a, b, c).map(|_| String::new()),
                        sharded.sqrt_iswap(a, b, c).map(|_| String::new()),
                    ),
                    _ => (
                        QuantumState::sqrt_iswap_inv(&mut reference, a, b, c)
                            .map(|_| String::new()),
                        sharded.sqrt_iswap_inv(a, b, c).map(|_| String::new()),
                    ),
                }
            }
            4 | 5 => {
                let q = pick(rng, pool, 3);
                let c = controls(rng, pool, &q);
                if kind == 4 {
                    (
                        QuantumState::split(&mut reference, q[0], q[1], q[2], c)
                            .map(|_| String::new()),
                        sharded.split(q[0], q[1], q[2], c).map(|_| String::new()),
                    )
                } else {
                    (
                        QuantumState::merge(&mut reference, q[0], q[1], q[2], c)
                            .map(|_| String::new()),
                        sharded.merge(q[0], q[1], q[2], c).map(|_| String::new()),
                    )
                }
            }
            6 | 7 => {
                let q = pick(rng, pool, 5);
                let (p1, p2) = (1u64 << q[3], 1u64 << q[4]);
                if kind == 6 {
                    (
                        QuantumState::split_slide(&mut reference, q[0], q[1], q[2], p1, p2)
                            .map(|_| String::new()),
                        sharded
                            .split_slide(q[0], q[1], q[2], p1, p2)
                            .map(|_| String::new()),
                    )
                } else {
                    (
                        QuantumState::merge_slide(&mut reference, q[0], q[1], q[2], p1, p2)
                            .map(|_| String::new()),
                        sharded
                            .merge_slide(q[0], q[1], q[2], p1, p2)
                            .map(|_| String::new()),
                    )
                }
            }
            8 => {
                let q = pick(rng, pool, 2);
                let c = controls(rng, pool, &q[..1]);
                (
                    reference.flip_controlled(q[0], c).map(|_| String::new()),
                    sharded.flip_controlled(q[0], c).map(|_| String::new()),
                )
            }
            9 => {
                let q = pick(rng, pool, 1)[0];
                let ph = Complex::from_polar(1.0, rng.random_range(0.0..6.0));
                (
                    reference
                        .phase(Predicate::One(q), ph)
                        .map(|_| String::new()),
                    sharded.phase(Predicate::One(q), ph).map(|_| String::new()),
                )
            }
            10 if reference.ancilla_count() < 6 => {
                let q = pick(rng, pool, 1)[0];
                (
                    QuantumState::capture(&mut reference, q).map(|i| i.to_string()),
                    sharded.capture(q).map(|i| i.to_string()),
                )
            }
            11 => {
                exact = false;
                let q = pick(rng, pool, 1)[0];
                (
                    reference
                        .measure(Predicate::One(q), &mut rng_ref)
                        .map(|o| o.to_string()),
                    sharded
                        .measure(Predicate::One(q), &mut rng_sh)
                        .map(|o| o.to_string()),
                )
            }
            _ => {
                let q = pick(rng, pool, 2);
                let pred = Predicate::Equals {
                    mask: 1 << q[0] | 1 << q[1],
                    value: 1 << q[0],
                };
                let outcome = rng.random_bool(0.5);
                let a = QuantumState::force(&mut reference, pred, outcome);
                let b = sharded.force(pred, outcome);
                if a.is_ok() {
                    exact = false;
                }
                // Probabilities agree within the tolerance, not bit for bit.
                let close = match (&a, &b) {
                    (Ok(x), Ok(y)) => (x - y).abs() <= TOLERANCE,
                    _ => false,
                };
                (
                    a.map(|_| String::new()),
                    b.map(|p| if close { String::new() } else { p.to_string() }),
                )
            }
        };
        if r_ref.is_err() {
            report.refused += 1;
        }
        report.largest_state = report.largest_state.max(reference.len());
        let result = if r_ref != r_sh {
            Err(format!("results differ: {r_ref:?} vs {r_sh:?}"))
        } else {
            compare(&sharded, &reference, exact)
        };
        report.record(&what, result);
    }
    report.traffic(&sharded);
    report
}

/// The knight squares reachable from `s` (0 = a1, 8 = a2, ...).
fn knight_targets(s: u8) -> Vec<u8> {
    let (f, r) = (i32::from(s % 8), i32::from(s / 8));
    [
        (1, 2),
        (2, 1),
        (2, -1),
        (1, -2),
        (-1, -2),
        (-2, -1),
        (-2, 1),
        (-1, 2),
    ]
    .iter()
    .map(|(df, dr)| (f + df, r + dr))
    .filter(|&(f, r)| (0..8).contains(&f) && (0..8).contains(&r))
    .map(|(f, r)| (r * 8 + f) as u8)
    .collect()
}

/// A knight starting on g1 among the other starting pieces of both sides makes `splits`
/// random split jumps onto empty squares (simulator gates, no game rules); local set of
/// `capacity` qubits, one check per split. Collective.
pub fn knight_walk(seed: u64, splits: usize, capacity: usize) -> Report {
    let mut report = Report::default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Ranks 1, 2, 7 and 8 full, except g1 (6) where the knight stands: the other pieces stay
    // put, so the knight jumps onto ranks 3 to 6 and back to g1.
    let fixed: u64 = 0xffff_0000_0000_ffff & !(1 << 6);
    let board = fixed | 1 << 6;
    let mut reference = State::<f64>::classical(board);
    let mut sharded = ShardedState::<f64>::classical_with(board, LocalSet::new(capacity, &[]));
    let mut done = 0;
    let mut attempts = 0;
    while done < splits && attempts < splits * 50 {
        attempts += 1;
        let p = QuantumState::qubit_probabilities(&reference);
        let sources: Vec<u8> = (0..64u8)
            .filter(|&q| fixed & (1 << q) == 0 && p[usize::from(q)] > 1e-9)
            .collect();
        let s = sources[rng.random_range(0..sources.len())];
        let targets: Vec<u8> = knight_targets(s)
            .into_iter()
            .filter(|&t| fixed & (1 << t) == 0)
            .collect();
        if targets.len() < 2 {
            continue;
        }
        let t = pick(&mut rng, &targets, 2);
        let a = QuantumState::split(&mut reference, s, t[0], t[1], Controls::NONE);
        let b = sharded.split(s, t[0], t[1], Controls::NONE);
        let result = if a != b {
            Err(format!("results differ: {a:?} vs {b:?}"))
        } else {
            compare(&sharded, &reference, true)
        };
        report.largest_state = report.largest_state.max(reference.len());
        report.record(
            &format!("knight split {done} ({s} -> {}, {})", t[0], t[1]),
            result,
        );
        done += 1;
    }
    report.traffic(&sharded);
    if done < splits {
        report.record(
            "knight walk",
            Err(format!("only {done} of {splits} splits found")),
        );
    }
    report
}

/// A random sequence of `steps` operations on `qchess_sim::bench::random_state(states)` (the
/// state `qchess bench sim` times: keys spread over the low ~17 qubits for 2^15 states),
/// with a local set of `capacity` qubits. Collective.
pub fn large_sequence(seed: u64, states: usize, steps: usize, capacity: usize) -> Report {
    let start = match qchess_sim::bench::random_state::<f64>(states) {
        Ok(s) => s,
        Err(e) => {
            let mut r = Report::default();
            r.record("building the large state", Err(e.to_string()));
            return r;
        }
    };
    let top = 64 - (start.entries().last().map_or(1, |(k, _)| k.board)).leading_zeros();
    let pool: Vec<u8> = (0..top.max(6) as u8).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    sequence(&mut rng, seed, steps, capacity, start, &pool)
}

/// A Cantwell game played on the sharded state beside the same game on the local state,
/// through `qchess_cantwell::Game` (the same game code, generic over the backend): each ply
/// a seeded random legal move, knight splits first, until `splits` knight splits have been
/// played. After every ply: the same record, the same classical position, the same number
/// of basis states, every square's probability within [`TOLERANCE`], and the same legal
/// moves and amplitude digest. Collective.
pub fn cantwell_knight_game(seed: u64, splits: usize) -> Report {
    use qchess_board::PieceKind;
    use qchess_cantwell::legal::notation_of;
    use qchess_cantwell::possibility::Classified;
    use qchess_cantwell::{Game, MoveShape};
    use rand::seq::SliceRandom;
    let mut report = Report::default();
    let mut pick = ChaCha8Rng::seed_from_u64(seed);
    let (mut rng_l, mut rng_d) = (
        ChaCha8Rng::seed_from_u64(seed ^ 0x51),
        ChaCha8Rng::seed_from_u64(seed ^ 0x51),
    );
    let mut local: Game = Game::new();
    let mut dist = Game::<ShardedState<f64>>::new_backend();
    let knight_split = |c: &Classified| {
        c.mover.kind == PieceKind::Knight && matches!(c.shape, MoveShape::Split { .. })
    };
    let (mut done, mut plies) = (0, 0);
    while done < splits && plies < splits * 4 && local.status().is_ongoing() {
        plies += 1;
        let mut candidates = local.possible_moves();
        candidates.shuffle(&mut pick);
        // Knight splits first (stable: the shuffled order within each group).
        candidates.sort_by_key(|c| !knight_split(c));
        let Some(c) = candidates.into_iter().find(|c| local.changes_state(c)) else {
            break;
        };
        let mv = notation_of(&c);
        let a = local
            .apply(&mv, &mut rng_l)
            .map(|r| r.notation)
            .map_err(|e| e.to_string());
        let b = dist
            .apply(&mv, &mut rng_d)
            .map(|r| r.notation)
            .map_err(|e| e.to_string());
        let size = local.state_size();
        report.largest_state = report.largest_state.max(size);
        let result = if a != b {
            Err(format!("results differ: {a:?} vs {b:?}"))
        } else if local.fen() != dist.fen() {
            Err(format!(
                "positions differ: {} vs {}",
                local.fen(),
                dist.fen()
            ))
        } else if size != dist.state_size() {
            Err(format!(
                "{} basis states, locally {size}",
                dist.state_size()
            ))
        } else {
            let (pl, pd) = (local.probabilities(), dist.probabilities());
            match (0..64).find(|&q| (pl[q] - pd[q]).abs() > TOLERANCE) {
                Some(q) => Err(format!("P(square {q}) = {} vs {}", pd[q], pl[q])),
                None => Ok(()),
            }
        };
        report.record(&format!("cantwell ply {plies} ({mv})"), result);
        report.record(
            &format!("cantwell ply {plies}: legal moves and digest"),
            legal_and_digest(&local, &dist),
        );
        if knight_split(&c) && a.is_ok() {
            done += 1;
        }
    }
    if done < splits {
        report.record(
            "cantwell knight game",
            Err(format!("only {done} of {splits} knight splits were played")),
        );
    }
    report.knight_splits += done;
    report.record(
        "budgeted read-outs",
        budgeted_read_outs(local.state(), dist.state()),
    );
    report.record(
        "board patterns",
        board_patterns(local.state(), dist.state()),
    );
    report.record(
        "streamed entries and position JSON",
        streamed_serialisation(&local, &dist),
    );
    report.traffic(dist.state());
    report
}

/// The sharded game's legal-move list (Definition 2 decided from the ranks' shares of
/// read-only answers, nothing gathered: issue 10, Deliver 5) and its amplitude digest (the
/// repetition fingerprint, digested piece by piece) against the local game's: the same list
/// in the same order, and the same digest. Collective.
fn legal_and_digest(
    local: &qchess_cantwell::Game,
    dist: &qchess_cantwell::Game<ShardedState<f64>>,
) -> Result<(), String> {
    use qchess_sim::QuantumState;
    let (want, got) = (local.legal_moves(), dist.legal_moves());
    if got != want {
        return Err(format!("legal moves {got:?}, locally {want:?}"));
    }
    let (d, l) = (
        dist.state().amplitude_digest(1e9),
        local.state().amplitude_digest(1e9),
    );
    if d != l {
        return Err(format!("digest {d:x?}, locally {l:x?}"));
    }
    Ok(())
}

/// The sharded occupancy bounds and pattern weights (each rank reads its own piece; nothing
/// is gathered, issue 10, Deliver 5) against the local state's: the bounds equal, every
/// pattern's weight within [`TOLERANCE`] (one pattern per occupied-somewhere square, each
/// with a neighbour, a wide one and one no board matches, which is exactly 0). Collective.
fn board_patterns(local: &State<f64>, dist: &ShardedState<f64>) -> Result<(), String> {
    use qchess_sim::QuantumState;
    let bounds = QuantumState::occupancy_bounds(dist);
    if bounds != local.occupancy_bounds() {
        return Err(format!(
            "occupancy bounds {bounds:x?}, locally {:x?}",
            local.occupancy_bounds()
        ));
    }
    let (always, ever) = bounds;
    let mut patterns: Vec<(u64, u64, u64)> = (0..64u32)
        .filter(|&q| ever & (1 << q) != 0)
        .map(|q| {
            let (bit, next) = (1u64 << q, 1u64 << ((q + 1) % 64));
            (bit | next, bit, 0)
        })
        .collect();
    patterns.push((ever & !always, ever & !always & 0x5555_5555_5555_5555, 0));
    patterns.push((0, 0, ever & !always));
    patterns.push((!ever, !ever, 0));
    let got = QuantumState::pattern_weights(dist, &patterns);
    let want = local.pattern_weights(&patterns);
    if got.len() != want.len() {
        return Err(format!("{} weights, locally {}", got.len(), want.len()));
    }
    if let Some(i) = (0..got.len()).find(|&i| (got[i] - want[i]).abs() > TOLERANCE) {
        return Err(format!(
            "pattern {:x?}: weight {} vs {}",
            patterns[i], got[i], want[i]
        ));
    }
    match got.last() {
        Some(&w) if w != 0.0 && ever != !0 => Err(format!("an unmatched pattern weighs {w}")),
        _ => Ok(()),
    }
}

/// The budgeted read-outs of the sharded state with room in the budget (issue 10,
/// Deliver 5): the budgeted gather is the unbudgeted one and `entries_f64`'s, with the local
/// state's count of entries; `try_board_distribution_top` is the unbudgeted top-k, its count
/// of boards the local state's, and `try_for_each_board` passes the local state's boards
/// (sorted by board, probabilities within [`TOLERANCE`]). Collective.
fn budgeted_read_outs(local: &State<f64>, dist: &ShardedState<f64>) -> Result<(), String> {
    use qchess_sim::QuantumState;
    let gathered = dist.gather_entries().map_err(|e| e.to_string())?;
    if gathered.len() != local.len()
        || gathered
            != dist
                .gather_entries_unbudgeted()
                .map_err(|e| e.to_string())?
        || !gathered.iter().copied().eq(dist.entries_f64())
    {
        return Err("the budgeted gather differs from the unbudgeted one".into());
    }
    let top = QuantumState::try_board_distribution_top(dist, 5).map_err(|e| e.to_string())?;
    if top != QuantumState::board_distribution_top(dist, 5) {
        return Err("try_board_distribution_top differs from board_distribution_top".into());
    }
    let mut want: Vec<(u64, f64)> = local.board_distribution_iter().collect();
    if top.1 != want.len() {
        return Err(format!("{} boards, locally {}", top.1, want.len()));
    }
    let mut got = Vec::new();
    QuantumState::try_for_each_board(dist, &mut |b, p| got.push((b, p)))
        .map_err(|e| e.to_string())?;
    want.sort_by_key(|e| e.0);
    got.sort_by_key(|e| e.0);
    agree("board pass", &got, &want, |g, w| (g - w).abs())
}

/// `got` against the local `want`: the same number of pairs, the same keys in the same
/// order, and values within [`TOLERANCE`] by `far`.
fn agree<K: PartialEq + std::fmt::Debug, V: Copy + std::fmt::Debug>(
    what: &str,
    got: &[(K, V)],
    want: &[(K, V)],
    far: impl Fn(V, V) -> f64,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {}, locally {}", got.len(), want.len()));
    }
    match got
        .iter()
        .zip(want)
        .find(|(g, w)| g.0 != w.0 || far(g.1, w.1) > TOLERANCE)
    {
        Some((g, w)) => Err(format!("{what}: {g:?}, locally {w:?}")),
        None => Ok(()),
    }
}

/// The sharded game's serialisation, which streams its entries (the pieces merged in
/// bounded rounds, nothing gathered), against the gathered entries and the local game: the
/// streamed entries are the gathered ones bit for bit and in order; the JSON text written
/// entry by entry is the captured position's text; and the entries are the local game's
/// (the same keys in the same order, amplitudes within [`TOLERANCE`]). Collective.
fn streamed_serialisation(
    local: &qchess_cantwell::Game,
    dist: &qchess_cantwell::Game<ShardedState<f64>>,
) -> Result<(), String> {
    use qchess_sim::QuantumState;
    let mut streamed = Vec::new();
    QuantumState::try_for_each_entry_f64(dist.state(), &mut |k, a| streamed.push((k, a)))
        .map_err(|e| e.to_string())?;
    let gathered = dist
        .state()
        .gather_entries_unbudgeted()
        .map_err(|e| e.to_string())?;
    if streamed != gathered {
        return Err(format!(
            "{} streamed entries differ from the {} gathered",
            streamed.len(),
            gathered.len()
        ));
    }
    let mut text = Vec::new();
    dist.write_position_json(1.0, &mut text)
        .map_err(|e| e.to_string())?;
    let position = dist.try_position().map_err(|e| e.to_string())?;
    if text != position.to_json().into_bytes() {
        return Err("the streamed JSON text is not the captured position's".into());
    }
    let want: Vec<_> = local.state().entries_f64().collect();
    agree("streamed entries", &streamed, &want, |g, w| (g - w).norm())
}

/// A state of 64 entries spread over the low 8 qubits (3 pieces among squares 0..8, plus a
/// spread on 16..24): the input of the exchange checks (sharded with L = {0, 1, 2}, a gate
/// on 16 and 20 exchanges).
pub(crate) fn spread_state() -> State<f64> {
    let mut s = State::<f64>::classical(0b111 | 1 << 16);
    let pairs = [
        (0u8, 3u8),
        (1, 4),
        (2, 5),
        (16, 17),
        (17, 18),
        (18, 19),
        (3, 6),
    ];
    for (a, b) in pairs {
        // A two-qubit gate without controls on a small state cannot fail.
        let _ = QuantumState::sqrt_iswap(&mut s, a, b, Controls::NONE);
    }
    s
}

/// Six pieces (on squares 0, 3, 9, 17, 20, 40), each half on its square and half on the next
/// (`sqrt_iswap`), in exact arithmetic: 64 entries whose every forced outcome on those
/// squares has mass 1/2, the input of the exact-state checks.
pub(crate) fn exact_pieces_state() -> State<qchess_sim::Exact> {
    let pieces = [0u8, 9, 20, 40, 3, 17];
    let mut s = State::<qchess_sim::Exact>::classical(pieces.iter().map(|q| 1u64 << q).sum());
    for q in pieces {
        // A two-qubit gate without controls on a small state cannot fail.
        let _ = s.sqrt_iswap(q, q + 1, Controls::NONE);
    }
    s
}

/// An exchange refused by the last rank's memory budget (issue 10, Deliver 5): on more than
/// one rank a gate on qubits outside L, with the last rank's budget at its piece plus 16
/// bytes, is `StateTooLarge` on every rank, and the state and its local set are unchanged;
/// with the budget restored the same gate runs and gives the local state's entries. On one
/// rank nothing is exchanged, so the gate runs at once. Collective.
pub fn exchange_budget() -> Report {
    let mut report = Report::default();
    let comm = crate::comm::current();
    let local = spread_state();
    let result = (|| -> Result<(), String> {
        let mut dist = ShardedState::from_state(&local, LocalSet::new(3, &[0, 1, 2]))
            .map_err(|e| e.to_string())?;
        let before = dist.gather_entries().map_err(|e| e.to_string())?;
        let mask = dist.local_set().mask();
        let budget = dist.local().memory_budget();
        let last = comm.rank() + 1 == comm.size();
        if last && comm.size() > 1 {
            let held = dist.local().bytes();
            dist.local_mut().set_memory_budget(held + 16);
        }
        let first = dist.iswap(16, 20, Controls::NONE);
        let mut want = local.clone();
        QuantumState::iswap(&mut want, 16, 20, Controls::NONE).map_err(|e| e.to_string())?;
        let want: Vec<_> = want.entries().collect();
        if comm.size() > 1 {
            if !matches!(first, Err(SimError::StateTooLarge { .. })) {
                return Err(format!("expected state_too_large, got {first:?}"));
            }
            let after = dist
                .gather_entries_unbudgeted()
                .map_err(|e| e.to_string())?;
            if after != before || dist.local_set().mask() != mask {
                return Err("a refused exchange changed the state".into());
            }
            dist.local_mut().set_memory_budget(budget);
            dist.iswap(16, 20, Controls::NONE)
                .map_err(|e| e.to_string())?;
        } else {
            first.map_err(|e| e.to_string())?;
        }
        let got = dist.gather_entries().map_err(|e| e.to_string())?;
        if got != want {
            return Err("the exchanged gate differs from the local state's".into());
        }
        Ok(())
    })();
    if result.is_ok() && comm.size() > 1 {
        report.refused += 1;
    }
    report.record("exchange within the budget", result);
    report
}

/// An exact state (`ShardedState<Exact>`) sharded with a local set of 3 qubits: gates that
/// exchange entries leave every amplitude equal, with `==`, to the single-process exact
/// state's (entries cross ranks in the exact wire form), and a forced outcome and a board
/// projection after them keep its probabilities (pieces projected unscaled, none
/// overflowed). Collective.
pub fn exact_state() -> Report {
    let mut report = Report::default();
    let mut local = exact_pieces_state();
    let result = (|| -> Result<(), String> {
        let mut dist =
            ShardedState::from_state(&local, LocalSet::new(3, &[])).map_err(|e| e.to_string())?;
        for (a, b) in [(1u8, 2u8), (21, 22), (41, 42), (10, 11), (2, 30), (22, 50)] {
            local
                .sqrt_iswap(a, b, Controls::NONE)
                .map_err(|e| e.to_string())?;
            dist.sqrt_iswap(a, b, Controls::NONE)
                .map_err(|e| e.to_string())?;
        }
        let got = dist.gather_entries().map_err(|e| e.to_string())?;
        if dist.traffic().exchanges == 0 {
            return Err("no exchange".into());
        }
        if got != local.entries().collect::<Vec<_>>() {
            return Err("exchanged exact amplitudes differ from the local state's".into());
        }
        local
            .force_exact(Predicate::One(4), false)
            .map_err(|e| e.to_string())?;
        dist.force(Predicate::One(4), false)
            .map_err(|e| e.to_string())?;
        let keep = |b: u64| b >> 18 & 1 == 0;
        local.project_boards(&keep).map_err(|e| e.to_string())?;
        QuantumState::project_boards(&mut dist, &keep).map_err(|e| e.to_string())?;
        for q in 0..64u8 {
            let (g, w) = (
                dist.probability(Predicate::One(q)),
                local.probability(Predicate::One(q)),
            );
            if (g - w).abs() > TOLERANCE {
                return Err(format!("P(qubit {q}) = {g} vs {w}"));
            }
        }
        let got = dist.gather_entries().map_err(|e| e.to_string())?;
        if got
            .iter()
            .any(|(_, a)| a.re.is_poisoned() || a.im.is_poisoned())
        {
            return Err("an exact amplitude overflowed".into());
        }
        Ok(())
    })();
    report.record("exact state across ranks", result);
    report
}

/// The whole selftest: `seeds` random sequences of `steps` operations (local sets of 3, 4, 6
/// and 64 qubits in turn), 12 operations on a random state of 2^15 entries (local set of 6)
/// a knight walk of `splits` splits, and a Cantwell game of `splits` knight splits through
/// `qchess_cantwell::Game` on the sharded state. Collective.
pub fn run(seeds: u64, steps: usize, splits: usize) -> Report {
    let mut report = Report::default();
    let capacities = [3usize, 4, 6, 64];
    for seed in 0..seeds {
        let capacity = capacities[(seed % 4) as usize];
        report.absorb(random_sequence(seed, steps, capacity));
    }
    report.absorb(large_sequence(0x1a76e, 1 << 15, 12, 6));
    report.absorb(knight_walk(0x6b6e, splits, 3));
    report.absorb(cantwell_knight_game(0xca47, splits));
    report.absorb(exchange_budget());
    report.absorb(exact_state());
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{Solo, ThreadComm, install};
    use std::rc::Rc;

    #[test]
    fn selftest_agrees_on_one_rank() {
        install(Rc::new(Solo), 8);
        let r = run(4, 40, 30);
        assert!(r.ok(), "{:?}", r.failures);
        assert!(r.checks >= 4 * 40 + 12 + 30 + 30, "{} checks", r.checks);
        assert_eq!(r.knight_splits, 30);
    }

    #[test]
    fn selftest_agrees_on_two_to_four_thread_ranks() {
        for ranks in 2..=4 {
            let reports = ThreadComm::run(ranks, |c| {
                install(Rc::new(c), 8);
                run(4, 40, 30)
            });
            for r in reports {
                assert!(r.ok(), "{ranks} ranks: {:?}", r.failures);
                assert!(r.checks >= 4 * 40 + 12 + 30 + 30, "{} checks", r.checks);
                assert_eq!(r.knight_splits, 30);
                // The test exercises what it claims: many exchanges that move entries,
                // refused operations, and states of more than a handful of entries.
                assert!(r.exchanges >= 40, "{} exchanges", r.exchanges);
                assert!(r.entries_sent >= 100, "{} entries sent", r.entries_sent);
                assert!(r.refused >= 1 && r.refused < 80, "{} refused", r.refused);
                assert!(r.largest_state >= 1 << 15, "largest {}", r.largest_state);
            }
        }
    }

    #[test]
    fn knight_walk_grows_the_state_and_moves_it() {
        let reports = ThreadComm::run(4, |c| {
            install(Rc::new(c), 8);
            knight_walk(0x6b6e, 30, 3)
        });
        for r in reports {
            assert!(r.ok(), "{:?}", r.failures);
            assert_eq!(r.checks, 30);
            assert!(r.largest_state >= 10, "largest {}", r.largest_state);
            assert!(r.exchanges >= 10 && r.entries_sent > 0);
        }
    }

    #[test]
    fn a_cantwell_game_of_30_knight_splits_agrees_on_4_ranks() {
        let reports = ThreadComm::run(4, |c| {
            install(Rc::new(c), 8);
            cantwell_knight_game(0xca47, 30)
        });
        for r in reports {
            assert!(r.ok(), "{:?}", r.failures);
            assert_eq!(r.knight_splits, 30);
            assert!(r.checks >= 30);
            assert!(r.largest_state >= 100, "largest {}", r.largest_state);
        }
    }

    #[test]
    fn a_wrong_amplitude_is_caught() {
        let mut reference = State::<f64>::classical(0b01);
        QuantumState::sqrt_iswap(&mut reference, 0, 1, Controls::NONE).unwrap();
        let mut sharded = ShardedState::<f64>::classical_with(0b01, LocalSet::new(3, &[]));
        sharded.sqrt_iswap(0, 1, Controls::NONE).unwrap();
        assert!(compare(&sharded, &reference, true).is_ok());
        sharded
            .phase(Predicate::One(1), Complex::new(-1.0, 0.0))
            .unwrap();
        assert!(compare(&sharded, &reference, true).is_err());
    }
}
