//! Read-only answers to Definition 2 for many candidate moves at once: what a local circuit
//! (the gates of one move on at most three squares, under their conditions) would do to
//! the state, and whether a pattern of squares occurs, from the stored keys and never by
//! applying a gate (the legal-move listing's read; its pattern weights are `patterns.rs`).

use crate::amplitude::Amplitude;
use crate::state::State;
use num_complex::Complex;
use rayon::prelude::*;
// hashbrown's default hasher (foldhash) for the batch's shapes and the sampled groups: both
// maps are hashed per question or per sampled group and never iterated.
use hashbrown::{HashMap, HashSet};
use std::sync::Arc;

use crate::patterns::{CHUNK, map_chunks};

/// A condition on board squares, as logical masks `(mask, value, any)`: `board & mask ==
/// value` and, when `any != 0`, `board & any != 0`.
pub type BoardPattern = (u64, u64, u64);

/// Largest number of qubits a [`LocalCircuit`] acts on.
pub const LOCAL_MAX_QUBITS: usize = 3;

const DIM: usize = 1 << LOCAL_MAX_QUBITS;

type Mat = [[Complex<f64>; DIM]; DIM];

/// One gate of a [`LocalCircuit`]: an iSwap or sqrt-iSwap (or their inverses) on two of the
/// circuit's qubits (local indices), applied where `cond` holds on the other squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct LocalGate {
    a: usize,
    b: usize,
    sqrt: bool,
    inverse: bool,
    cond: BoardPattern,
}

/// A unitary on at most [`LOCAL_MAX_QUBITS`] board qubits made of iSwaps and sqrt-iSwaps,
/// each applied where its own condition on the *other* squares holds (the controlled gates of
/// the paper's slides, splits and merges, eq. 4a, 5, 7, 9, 10, 12). The constructors mirror
/// the simulator's gates exactly ([`State::iswap`], [`State::split`], [`State::merge`],
/// [`State::split_slide`], [`State::merge_slide`]); [`State::local_effects`] reads what such a
/// circuit would do to the state without applying it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LocalCircuit {
    qubits: Vec<u8>,
    gates: Vec<LocalGate>,
}

impl LocalCircuit {
    fn new(qubits: &[u8], controls: u64) -> Option<Self> {
        let mut acted = 0u64;
        for &q in qubits {
            if q >= 64 || acted >> q & 1 == 1 {
                return None;
            }
            acted |= 1 << q;
        }
        (controls & acted == 0).then(|| LocalCircuit {
            qubits: qubits.to_vec(),
            gates: Vec::new(),
        })
    }

    fn gate(mut self, a: usize, b: usize, sqrt: bool, inverse: bool, cond: BoardPattern) -> Self {
        self.gates.push(LocalGate {
            a,
            b,
            sqrt,
            inverse,
            cond,
        });
        self
    }

    /// `iSwap(a, b)` where every square of `empty` is empty (a jump with `empty = 0`, a
    /// slide with its path); `None` where [`State::iswap`] refuses the arguments.
    pub fn iswap(a: u8, b: u8, empty: u64) -> Option<Self> {
        Some(Self::new(&[a, b], empty)?.gate(0, 1, false, false, (empty, 0, 0)))
    }

    /// [`State::split`] `s^t1t2` = `iSwap(s, t2) * sqrt-iSwap(s, t1)`, uncontrolled.
    pub fn split(s: u8, t1: u8, t2: u8) -> Option<Self> {
        Some(
            Self::new(&[s, t1, t2], 0)?
                .gate(0, 1, true, false, (0, 0, 0))
                .gate(0, 2, false, false, (0, 0, 0)),
        )
    }

    /// [`State::merge`] `s1s2^t` = `sqrt-iSwap^-1(t, s2) * iSwap^-1(t, s1)`, uncontrolled.
    pub fn merge(s1: u8, s2: u8, t: u8) -> Option<Self> {
        Some(
            Self::new(&[s1, s2, t], 0)?
                .gate(2, 0, false, true, (0, 0, 0))
                .gate(2, 1, true, true, (0, 0, 0)),
        )
    }

    /// [`State::split_slide`] (eq. 9): `path1` from `s` to `t1`, `path2` from `s` to `t2`,
    /// each without the other target.
    pub fn split_slide(s: u8, t1: u8, t2: u8, path1: u64, path2: u64) -> Option<Self> {
        let p1 = path1 & !(1u64.checked_shl(u32::from(t2)).unwrap_or(0));
        let p2 = path2 & !(1u64.checked_shl(u32::from(t1)).unwrap_or(0));
        if p1 | p2 == 0 {
            return Self::split(s, t1, t2);
        }
        let mut c = Self::new(&[s, t1, t2], p1 | p2)?
            .gate(0, 1, true, false, (p1 | p2, 0, 0))
            .gate(0, 2, false, false, (p2, 0, 0));
        if p2 != 0 {
            c = c.gate(0, 1, false, false, (p1, 0, p2));
        }
        Some(c)
    }

    /// [`State::merge_slide`] (eq. 12): the inverse of `split_slide(t, s2, s1, path2,
    /// path1)`; `path1` from `s1` to `t`, `path2` from `s2` to `t`, each without the other
    /// source.
    pub fn merge_slide(s1: u8, s2: u8, t: u8, path1: u64, path2: u64) -> Option<Self> {
        let q2 = path1 & !(1u64.checked_shl(u32::from(s2)).unwrap_or(0));
        let q1 = path2 & !(1u64.checked_shl(u32::from(s1)).unwrap_or(0));
        if q1 | q2 == 0 {
            return Self::merge(s1, s2, t);
        }
        let mut c = Self::new(&[s1, s2, t], q1 | q2)?;
        if q2 != 0 {
            c = c.gate(2, 1, false, true, (q1, 0, q2));
        }
        Some(
            c.gate(2, 0, false, true, (q2, 0, 0))
                .gate(2, 1, true, true, (q1 | q2, 0, 0)),
        )
    }

    /// The logical qubits acted on (local bit `j` of a configuration is `qubits()[j]`).
    pub fn qubits(&self) -> &[u8] {
        &self.qubits
    }

    /// The circuit's matrix (`m[out][in]`, local configurations) where exactly the gates
    /// whose bit is set in `active` act, in order.
    fn matrix(&self, active: usize) -> Mat {
        let zero = Complex::new(0.0, 0.0);
        let mut m = [[zero; DIM]; DIM];
        let n = 1usize << self.qubits.len();
        for (x, row) in m.iter_mut().enumerate().take(n) {
            row[x] = Complex::new(1.0, 0.0);
        }
        let h = std::f64::consts::FRAC_1_SQRT_2;
        for (g, gate) in self.gates.iter().enumerate() {
            if active >> g & 1 == 0 {
                continue;
            }
            let flip = (1usize << gate.a) | (1usize << gate.b);
            let sign = if gate.inverse { -1.0 } else { 1.0 };
            let mut next = [[zero; DIM]; DIM];
            for col in 0..n {
                for x in 0..n {
                    let a = m[x][col];
                    if a == zero {
                        continue;
                    }
                    let (xa, xb) = (x >> gate.a & 1, x >> gate.b & 1);
                    if xa == xb {
                        next[x][col] += a;
                    } else if gate.sqrt {
                        next[x][col] += a * h;
                        next[x ^ flip][col] += a * Complex::new(0.0, sign * h);
                    } else {
                        next[x ^ flip][col] += a * Complex::new(0.0, sign);
                    }
                }
            }
            m = next;
        }
        m
    }
}

/// One read-only question of [`State::local_effects`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LocalQuery {
    /// Whether some basis state's board matches one of the patterns.
    Presence(Vec<BoardPattern>),
    /// What the circuit would do to the state (Definition 2 of the paper: does it change it
    /// beyond a global phase?).
    Circuit(LocalCircuit),
}

/// The answer to one [`LocalQuery`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalAnswer {
    /// No stored basis state matches (exact).
    Absent,
    /// Matching basis states exist, but none with probability above the threshold.
    Faint,
    /// A matching basis state has probability above the threshold (so their weight does).
    Present,
    /// The circuit moves no stored basis state: it is the identity on this state (exact).
    Identity,
    /// A part of the state that the circuit surely changes: `1 - |<psi|U|psi>| > threshold`
    /// (relative to the norm), proven from the basis states read so far.
    Changes,
    /// Every basis state was read and no part alone proves a change: the exact
    /// `1 - |<psi|U|psi>|/<psi|psi>` and the largest change of an acted square's marginal.
    Exact {
        /// `1 - |<psi|U|psi>| / <psi|psi>`.
        infidelity: f64,
        /// The largest `|marginal after - marginal before|` over the acted squares (no other
        /// square's marginal changes).
        max_shift: f64,
    },
}

impl LocalAnswer {
    /// Whether `other` is the same answer, with an [`LocalAnswer::Exact`]'s two numbers each
    /// within `tolerance` (answers read from sums added in another order differ in the last
    /// bits only).
    ///
    /// ```
    /// use qchess_sim::LocalAnswer;
    /// let a = LocalAnswer::Exact { infidelity: 0.25, max_shift: 0.5 };
    /// let b = LocalAnswer::Exact { infidelity: 0.25 + 1e-15, max_shift: 0.5 };
    /// assert!(a.close_to(&b, 1e-12) && !a.close_to(&LocalAnswer::Changes, 1e-12));
    /// ```
    pub fn close_to(&self, other: &LocalAnswer, tolerance: f64) -> bool {
        match (self, other) {
            (
                LocalAnswer::Exact {
                    infidelity: a,
                    max_shift: b,
                },
                LocalAnswer::Exact {
                    infidelity: c,
                    max_shift: d,
                },
            ) => (a - c).abs() <= tolerance && (b - d).abs() <= tolerance,
            _ => self == other,
        }
    }
}

/// A query with physical bits and the circuit's matrices per set of active gates.
enum Prepared {
    Presence(Vec<BoardPattern>),
    Circuit {
        pos: Vec<u32>,
        conds: Vec<BoardPattern>,
        /// Per gate combination (shared by the batch's circuits of the same shape).
        mats: Arc<Vec<Mat>>,
        /// Per gate combination: bit `x` set when configuration `x` is moved (column `x` is
        /// not the unit vector).
        moving: Arc<Vec<u8>>,
    },
}

/// What a circuit's matrices depend on: its number of qubits and each gate's local qubits,
/// kind and direction (not its squares, not its conditions).
type ShapeKey = (usize, Vec<(usize, usize, bool, bool)>);

/// A shape's matrix per set of active gates, and the configurations each set moves.
type ShapeMats = (Arc<Vec<Mat>>, Arc<Vec<u8>>);

/// [`Prepared::new`] for each query of a batch. A batch's circuits come in a few shapes (an
/// iSwap, a split, a merge and their slides, on any squares), so each shape's matrices are
/// computed once, not once a query: a legal-move listing asks hundreds of questions, and on a
/// small state building their matrices took a fifth of its time.
fn prepare_all(
    queries: &[LocalQuery],
    to_phys: &dyn Fn(u64) -> u64,
    phys: &dyn Fn(u8) -> u32,
) -> Vec<Prepared> {
    let mut shapes: HashMap<ShapeKey, ShapeMats> = HashMap::new();
    queries
        .iter()
        .map(|q| Prepared::new(q, to_phys, phys, &mut shapes))
        .collect()
}

#[inline]
fn holds((m, v, a): BoardPattern, k: u64) -> bool {
    k & m == v && (a == 0 || k & a != 0)
}

impl Prepared {
    fn new(
        q: &LocalQuery,
        to_phys: &dyn Fn(u64) -> u64,
        phys: &dyn Fn(u8) -> u32,
        shapes: &mut HashMap<ShapeKey, ShapeMats>,
    ) -> Self {
        let pat = |(m, v, a): BoardPattern| (to_phys(m), to_phys(v & m), to_phys(a));
        match q {
            LocalQuery::Presence(p) => Prepared::Presence(p.iter().map(|&x| pat(x)).collect()),
            LocalQuery::Circuit(c) => {
                let key = (
                    c.qubits.len(),
                    c.gates
                        .iter()
                        .map(|g| (g.a, g.b, g.sqrt, g.inverse))
                        .collect(),
                );
                let (mats, moving) = shapes.entry(key).or_insert_with(|| shape_mats(c)).clone();
                Prepared::Circuit {
                    pos: c.qubits.iter().map(|&q| phys(q)).collect(),
                    conds: c.gates.iter().map(|g| pat(g.cond)).collect(),
                    mats,
                    moving,
                }
            }
        }
    }
}

/// `c`'s matrix for each set of active gates and, for each, the configurations it moves
/// (whose column is not the unit vector): what depends on `c`'s shape only.
fn shape_mats(c: &LocalCircuit) -> ShapeMats {
    let n = 1usize << c.qubits.len();
    let combos = 1usize << c.gates.len();
    let mats: Vec<Mat> = (0..combos).map(|a| c.matrix(a)).collect();
    let moving = mats
        .iter()
        .map(|m| {
            (0..n).fold(0u8, |acc, x| {
                let unit = (0..n).all(|y| {
                    let want = if y == x { 1.0 } else { 0.0 };
                    (m[y][x] - Complex::new(want, 0.0)).norm_sqr() < 1e-24
                });
                if unit { acc } else { acc | 1 << x }
            })
        })
        .collect();
    (Arc::new(mats), Arc::new(moving))
}

/// Running sums of one circuit query over the groups read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sums {
    /// Weight read (identity basis states and whole moved groups).
    weight: f64,
    /// `sum over moved groups of <v|v> - <v|U v>`.
    deficit: Complex<f64>,
    /// Marginal changes of the acted squares.
    shift: [f64; LOCAL_MAX_QUBITS],
    moved: bool,
}

impl Sums {
    /// A lower bound of `<psi|psi> - |<psi|U|psi>|` from the groups read (the unread rest
    /// contributes at most its weight to the overlap's modulus).
    fn bound(&self) -> f64 {
        self.weight - (Complex::new(self.weight, 0.0) - self.deficit).norm()
    }
    fn add(&mut self, o: &Sums) {
        self.weight += o.weight;
        self.deficit += o.deficit;
        for (a, b) in self.shift.iter_mut().zip(&o.shift) {
            *a += b;
        }
        self.moved |= o.moved;
    }
}

/// The basis states of one sector: sorted physical keys and their amplitudes.
type SectorRef<'a, T> = (&'a [u64], &'a [Complex<T>]);

#[inline]
fn amp64<T: Amplitude>(a: Complex<T>) -> Complex<f64> {
    Complex::new(a.re.as_f64(), a.im.as_f64())
}

/// Lower bound of `target` in `keys[from..]` by exponential then binary search.
#[inline]
fn gallop(keys: &[u64], from: usize, target: u64) -> usize {
    let mut lo = from;
    let mut step = 1usize;
    let mut hi = from;
    while hi < keys.len() && keys[hi] < target {
        lo = hi + 1;
        hi = from + step;
        step *= 2;
    }
    let hi = hi.min(keys.len());
    lo + keys[lo..hi].partition_point(|&k| k < target)
}

/// The configuration of the acted qubits in key `k`.
#[inline]
fn config(pos: &[u32], k: u64) -> usize {
    pos.iter()
        .enumerate()
        .fold(0, |acc, (j, &p)| acc | ((k >> p & 1) as usize) << j)
}

/// The moved group of key `k` (configuration `x`, gate combination `combo`): the amplitudes
/// of its members (same number of pieces on the acted squares, moved), found with `find`,
/// added to `sums`. With `smallest_only`, a group with a member of a smaller key is left out
/// (it is read at that member) and `None` returned; otherwise returns the group's smallest key.
#[allow(clippy::too_many_arguments)]
fn group_sums(
    pos: &[u32],
    mat: &Mat,
    moving: u8,
    x: usize,
    k: u64,
    a: Complex<f64>,
    smallest_only: bool,
    mut find: impl FnMut(usize, u64) -> Option<Complex<f64>>,
    sums: &mut Sums,
) -> Option<u64> {
    let n = 1usize << pos.len();
    let zero = Complex::new(0.0, 0.0);
    let mut v = [zero; DIM];
    v[x] = a;
    let weight_x = x.count_ones();
    let in_group = |y: usize| moving >> y & 1 == 1 && y.count_ones() == weight_x;
    let mut min_key = k;
    for (y, vy) in v.iter_mut().enumerate().take(n) {
        if y == x || !in_group(y) {
            continue;
        }
        let diff = x ^ y;
        let flip = pos
            .iter()
            .enumerate()
            .filter(|&(j, _)| diff >> j & 1 == 1)
            .fold(0u64, |f, (_, &p)| f | 1 << p);
        let ky = k ^ flip;
        if let Some(b) = find(y, ky) {
            if ky < k && smallest_only {
                return None;
            }
            min_key = min_key.min(ky);
            *vy = b;
        }
    }
    let mut w = 0.0;
    let mut z = zero;
    for (y, row) in mat.iter().enumerate().take(n) {
        if !in_group(y) {
            continue;
        }
        let u: Complex<f64> = (0..n).map(|c| row[c] * v[c]).sum();
        w += v[y].norm_sqr();
        z += v[y].conj() * u;
        let d = u.norm_sqr() - v[y].norm_sqr();
        for (j, s) in sums.shift.iter_mut().enumerate().take(pos.len()) {
            if y >> j & 1 == 1 {
                *s += d;
            }
        }
    }
    sums.weight += w;
    sums.deficit += Complex::new(w, 0.0) - z;
    sums.moved = true;
    Some(min_key)
}

/// Keys sampled per query before a full pass (spread over the state).
const SAMPLES: usize = 4096;

/// Phase one: up to [`SAMPLES`] basis states spread over the state (bit-reversed order),
/// each moved group read whole by binary search and counted once. `Some(answer)` when the
/// samples settle it (a clear match, or a part the circuit surely changes).
fn sample_query<T: Amplitude>(
    sectors: &[SectorRef<'_, T>],
    starts: &[usize],
    total: usize,
    q: &Prepared,
    thr: f64,
) -> Option<LocalAnswer> {
    let mut sums = Sums::default();
    // Moved groups already counted, by sector and smallest key (sampled positions are
    // distinct, so identity basis states are never counted twice).
    let mut seen: HashSet<(usize, u64)> = HashSet::new();
    let bits = usize::BITS - (SAMPLES - 1).leading_zeros();
    for j in 0..SAMPLES.min(total) {
        let r = (j.reverse_bits() >> (usize::BITS - bits)) as u128;
        let idx = ((r * total as u128) >> bits) as usize;
        let sec = starts.partition_point(|&s| s <= idx) - 1;
        let (keys, amps) = sectors[sec];
        let off = idx - starts[sec];
        let (k, a) = (keys[off], amp64(amps[off]));
        match q {
            Prepared::Presence(pats) => {
                if pats.iter().any(|&p| holds(p, k)) && a.norm_sqr() > thr {
                    return Some(LocalAnswer::Present);
                }
            }
            Prepared::Circuit {
                pos,
                conds,
                mats,
                moving,
            } => {
                let combo = conds
                    .iter()
                    .enumerate()
                    .fold(0, |c, (g, &p)| c | usize::from(holds(p, k)) << g);
                let x = config(pos, k);
                if moving[combo] >> x & 1 == 0 {
                    sums.weight += a.norm_sqr();
                } else {
                    // The whole group by binary search, counted once (by its smallest key).
                    let mut group = Sums::default();
                    let find =
                        |_: usize, ky: u64| keys.binary_search(&ky).ok().map(|p| amp64(amps[p]));
                    let min_key = group_sums(
                        pos,
                        &mats[combo],
                        moving[combo],
                        x,
                        k,
                        a,
                        false,
                        find,
                        &mut group,
                    )
                    .expect("whole groups are always read");
                    if seen.insert((sec, min_key)) {
                        sums.add(&group);
                    }
                }
                if sums.bound() > thr {
                    return Some(LocalAnswer::Changes);
                }
            }
        }
    }
    None
}

/// Phase two, one chunk of one sector: every basis state of the chunk, each moved group read
/// at its smallest member (partners found by galloping cursors, one per pair of
/// configurations). Returns (presence: any match, any clear match), or for a circuit
/// (false, a change proven, its sums); both stop at the first basis state or group that
/// settles the answer, as the samples do.
fn chunk_query<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    range: std::ops::Range<usize>,
    q: &Prepared,
    thr: f64,
) -> (bool, bool, Sums) {
    let mut sums = Sums::default();
    match q {
        Prepared::Presence(pats) => {
            let mut any = false;
            for i in range {
                let k = keys[i];
                if pats.iter().any(|&p| holds(p, k)) {
                    any = true;
                    if amp64(amps[i]).norm_sqr() > thr {
                        return (true, true, sums);
                    }
                }
            }
            (any, false, sums)
        }
        Prepared::Circuit {
            pos,
            conds,
            mats,
            moving,
        } => {
            let any_moving = moving.iter().any(|&m| m != 0);
            if !any_moving {
                return (false, false, sums);
            }
            let mut cursors = [usize::MAX; DIM * DIM];
            for i in range {
                let k = keys[i];
                let combo = conds
                    .iter()
                    .enumerate()
                    .fold(0, |c, (g, &p)| c | usize::from(holds(p, k)) << g);
                let x = config(pos, k);
                let a = amp64(amps[i]);
                if moving[combo] >> x & 1 == 0 {
                    sums.weight += a.norm_sqr();
                    continue;
                }
                let find = |y: usize, ky: u64| {
                    let c = &mut cursors[x * DIM + y];
                    let from = if *c == usize::MAX {
                        keys.partition_point(|&kk| kk < ky)
                    } else {
                        gallop(keys, *c, ky)
                    };
                    *c = from;
                    (from < keys.len() && keys[from] == ky).then(|| amp64(amps[from]))
                };
                let read = group_sums(
                    pos,
                    &mats[combo],
                    moving[combo],
                    x,
                    k,
                    a,
                    true,
                    find,
                    &mut sums,
                );
                // The groups read so far already prove a change (the bound the samples
                // settle by): the rest of the chunk cannot undo it, and the whole state's
                // answer is `Changes` however the remaining groups add up.
                if read.is_some() && sums.bound() > thr {
                    return (false, true, sums);
                }
            }
            (false, false, sums)
        }
    }
}

/// The squared norm of sorted sectors: each chunk of [`CHUNK`] amplitudes summed on its own
/// (in parallel), the chunks' sums added in order, so the value does not depend on the
/// thread count (and is the per-sector sum of before where a sector holds one chunk).
fn sectors_norm<T: Amplitude>(sectors: &[SectorRef<'_, T>]) -> f64 {
    map_chunks(
        sectors.iter().flat_map(|(_, a)| a.chunks(CHUNK)).collect(),
        |a: &[Complex<T>]| a.iter().map(|x| amp64(*x).norm_sqr()).sum::<f64>(),
    )
    .iter()
    .sum()
}

/// Read-only answers to `queries` on sorted sectors (see [`State::local_effects`]).
fn local_effects_on<T: Amplitude>(
    sectors: &[SectorRef<'_, T>],
    queries: &[Prepared],
    threshold: f64,
) -> Vec<LocalAnswer> {
    let norm = sectors_norm(sectors);
    shares_on(sectors, queries, threshold * norm)
        .iter()
        .map(|s| s.answer(norm, threshold))
        .collect()
}

/// The shares of sorted sectors in the answers to `queries`, with `thr` the absolute
/// threshold (relative threshold times the whole state's norm).
fn shares_on<T: Amplitude>(
    sectors: &[SectorRef<'_, T>],
    queries: &[Prepared],
    thr: f64,
) -> Vec<LocalShare> {
    let total: usize = sectors.iter().map(|s| s.0.len()).sum();
    let mut starts = Vec::with_capacity(sectors.len());
    let mut acc = 0;
    for s in sectors {
        starts.push(acc);
        acc += s.0.len();
    }
    let blank = |q: &Prepared| LocalShare {
        circuit: matches!(q, Prepared::Circuit { .. }),
        ..LocalShare::default()
    };
    // Phase one, every query on its own (in parallel): sampled basis states. What they
    // settle (a clear match, a part the circuit surely changes) holds for the whole state.
    let first: Vec<Option<LocalShare>> = if total > SAMPLES {
        queries
            .par_iter()
            .with_min_len(crate::load::min_len())
            .map(|q| {
                sample_query(sectors, &starts, total, q, thr).map(|_| LocalShare {
                    clear: true,
                    ..blank(q)
                })
            })
            .collect()
    } else {
        vec![None; queries.len()]
    };
    let open: Vec<usize> = (0..queries.len()).filter(|&i| first[i].is_none()).collect();
    let mut out: Vec<LocalShare> = first
        .iter()
        .zip(queries)
        .map(|(s, q)| s.unwrap_or_else(|| blank(q)))
        .collect();
    if open.is_empty() {
        return out;
    }
    // Phase two: one full pass for the open queries, fixed chunks in parallel, summed in
    // chunk order.
    let chunks: Vec<(usize, std::ops::Range<usize>)> = sectors
        .iter()
        .enumerate()
        .flat_map(|(s, (keys, _))| {
            (0..keys.len())
                .step_by(CHUNK)
                .map(move |st| (s, st..(st + CHUNK).min(keys.len())))
        })
        .collect();
    let parts: Vec<Vec<(bool, bool, Sums)>> = map_chunks(chunks, |(s, r)| {
        let (keys, amps) = sectors[s];
        open.iter()
            .map(|&i| chunk_query(keys, amps, r.clone(), &queries[i], thr))
            .collect()
    });
    for (j, &i) in open.iter().enumerate() {
        let share = &mut out[i];
        for p in &parts {
            share.any |= p[j].0;
            share.clear |= p[j].1;
            share.sums.add(&p[j].2);
        }
    }
    out
}

/// Words of [`LocalShare::to_words`].
pub const LOCAL_SHARE_WORDS: usize = 4 + LOCAL_MAX_QUBITS;

/// One piece's share of the answer to a [`LocalQuery`] (see [`State::local_effect_shares`]):
/// the shares of disjoint pieces of one state, each piece holding whole groups (basis
/// states that differ only on a circuit's acted qubits live in one piece), add up
/// ([`LocalShare::add`]) to the whole state's, which [`LocalShare::answer`] turns into the
/// [`LocalAnswer`] that [`State::local_effects`] gives for the whole state. What a
/// distributed state combines across its ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LocalShare {
    circuit: bool,
    /// A matching basis state was read (presence).
    any: bool,
    /// Settled: a clear match (presence) or a part the circuit surely changes (circuit).
    clear: bool,
    sums: Sums,
}

impl LocalShare {
    /// Adds `other`, the share of another piece of the same state in the same query.
    pub fn add(&mut self, other: &LocalShare) {
        self.any |= other.any;
        self.clear |= other.clear;
        self.sums.add(&other.sums);
    }

    /// The answer of the whole state whose squared norm is `norm`, once every piece's share
    /// has been added, with the relative `threshold` the shares were read with.
    pub fn answer(&self, norm: f64, threshold: f64) -> LocalAnswer {
        let thr = threshold * norm;
        if !self.circuit {
            return if self.clear {
                LocalAnswer::Present
            } else if self.any {
                LocalAnswer::Faint
            } else {
                LocalAnswer::Absent
            };
        }
        if self.clear {
            LocalAnswer::Changes
        } else if !self.sums.moved {
            LocalAnswer::Identity
        } else if self.sums.bound() > thr {
            LocalAnswer::Changes
        } else {
            // 1 - |1 - d| for d = deficit / norm, without cancellation.
            let d = self.sums.deficit / norm;
            let m = (Complex::new(1.0, 0.0) - d).norm();
            let infidelity = (2.0 * d.re - d.norm_sqr()) / (1.0 + m);
            let max_shift = self
                .sums
                .shift
                .iter()
                .fold(0.0f64, |a, s| a.max(s.abs() / norm));
            LocalAnswer::Exact {
                infidelity,
                max_shift,
            }
        }
    }

    /// The share as [`LOCAL_SHARE_WORDS`] words (flags, then the sums' `f64` bits), for a
    /// transport that moves words.
    pub fn to_words(&self) -> [u64; LOCAL_SHARE_WORDS] {
        let mut w = [0u64; LOCAL_SHARE_WORDS];
        w[0] = u64::from(self.circuit)
            | u64::from(self.any) << 1
            | u64::from(self.clear) << 2
            | u64::from(self.sums.moved) << 3;
        w[1] = self.sums.weight.to_bits();
        w[2] = self.sums.deficit.re.to_bits();
        w[3] = self.sums.deficit.im.to_bits();
        for (o, s) in w[4..].iter_mut().zip(&self.sums.shift) {
            *o = s.to_bits();
        }
        w
    }

    /// The share written by [`LocalShare::to_words`]; `None` when `words` is not
    /// [`LOCAL_SHARE_WORDS`] long or has unknown flags.
    pub fn from_words(words: &[u64]) -> Option<Self> {
        if words.len() != LOCAL_SHARE_WORDS || words[0] >> 4 != 0 {
            return None;
        }
        let flag = |b: u32| words[0] >> b & 1 == 1;
        let mut shift = [0.0; LOCAL_MAX_QUBITS];
        for (s, w) in shift.iter_mut().zip(&words[4..]) {
            *s = f64::from_bits(*w);
        }
        Some(LocalShare {
            circuit: flag(0),
            any: flag(1),
            clear: flag(2),
            sums: Sums {
                weight: f64::from_bits(words[1]),
                deficit: Complex::new(f64::from_bits(words[2]), f64::from_bits(words[3])),
                shift,
                moved: flag(3),
            },
        })
    }
}

/// Bytes [`local_effects_of_entries`] holds per entry at its peak: the collected entry
/// (key and `f64` amplitude) and its place in the sorted sectors (key and amplitude).
pub(crate) const LOCAL_EFFECTS_ENTRY_BYTES: usize =
    std::mem::size_of::<(crate::Key, Complex<f64>)>()
        + std::mem::size_of::<u64>()
        + std::mem::size_of::<Complex<f64>>();

/// [`State::local_effects`] for any backend from its `len` entries (`f64`, logical keys):
/// sorted into sectors by ancillas, then read as the state's own sectors are. The copy of
/// the entries is counted against `available` bytes first
/// ([`LOCAL_EFFECTS_ENTRY_BYTES`] per entry; [`SimError::StateTooLarge`] when it does not
/// fit) and reserved fallibly ([`SimError::OutOfMemory`]); nothing is allocated for the
/// entries before both checks pass.
pub(crate) fn local_effects_of_entries(
    entries: impl Iterator<Item = (crate::Key, Complex<f64>)>,
    len: usize,
    available: usize,
    queries: &[LocalQuery],
    threshold: f64,
) -> Result<Vec<LocalAnswer>, crate::SimError> {
    let asked = len.saturating_mul(LOCAL_EFFECTS_ENTRY_BYTES);
    if asked > available {
        return Err(crate::SimError::StateTooLarge { asked, available });
    }
    let oom = |_| crate::SimError::OutOfMemory { states: len };
    let mut all: Vec<(crate::Key, Complex<f64>)> = Vec::new();
    all.try_reserve_exact(len).map_err(oom)?;
    for e in entries.take(len) {
        all.push(e);
    }
    all.sort_by_key(|e| (e.0.ancillas, e.0.board));
    // One sector per ancilla value, each reserved at its exact size before it is filled.
    let mut sizes: Vec<usize> = Vec::new();
    let mut last = None;
    for (k, _) in &all {
        if last != Some(k.ancillas) {
            sizes.push(0);
            last = Some(k.ancillas);
        }
        *sizes.last_mut().expect("pushed") += 1;
    }
    let mut keys: Vec<Vec<u64>> = Vec::new();
    let mut amps: Vec<Vec<Complex<f64>>> = Vec::new();
    keys.try_reserve_exact(sizes.len()).map_err(oom)?;
    amps.try_reserve_exact(sizes.len()).map_err(oom)?;
    for &n in &sizes {
        let (mut k, mut a) = (Vec::new(), Vec::new());
        crate::pages::reserve_exact(&mut k, n).map_err(oom)?;
        crate::pages::reserve_exact(&mut a, n).map_err(oom)?;
        keys.push(k);
        amps.push(a);
    }
    let mut sector = 0usize;
    let mut last = None;
    for (k, a) in all {
        if last.is_some() && last != Some(k.ancillas) {
            sector += 1;
        }
        last = Some(k.ancillas);
        keys[sector].push(k.board);
        amps[sector].push(a);
    }
    let sectors: Vec<SectorRef<'_, f64>> = keys
        .iter()
        .zip(&amps)
        .map(|(k, a)| (k.as_slice(), a.as_slice()))
        .collect();
    let prepared = prepare_all(queries, &|m| m, &|q| u32::from(q));
    Ok(local_effects_on(&sectors, &prepared, threshold))
}

impl<T: Amplitude> State<T> {
    /// Read-only answers to many [`LocalQuery`]s at once, never applying a gate: whether a
    /// pattern occurs ([`LocalAnswer::Present`] needs a matching basis state of probability
    /// above `threshold`), and what a [`LocalCircuit`] `U` would do to the state.
    ///
    /// `U` acts on the amplitudes of each group of basis states that agree outside the
    /// acted qubits `A` (and have the same number of pieces on `A`, which every gate keeps),
    /// under the gates whose conditions hold there, so with `v_r` a group's amplitudes
    /// `<psi|U|psi> = sum_r <v_r|U v_r>` and `1 - |<psi|U|psi>| >= sum over any set of groups
    /// of (<v|v>) - |sum <v|U v>|` (the other groups add at most their weight): one group the
    /// circuit moves off itself (e.g. a piece moving onto a square that is empty in that
    /// branch) proves a change. Each query first reads up to 4096 basis states spread over
    /// the state (each moved group read whole, counted once); a query those do not settle
    /// is read in full in one parallel pass with the other open ones (groups read at their
    /// smallest member, partners found by galloping merge-join cursors; each chunk of the
    /// pass stops at the first group that proves a change, as the samples do), which gives the
    /// exact overlap and marginal changes ([`LocalAnswer::Exact`]), or proves that nothing
    /// moves ([`LocalAnswer::Identity`]) or that no pattern matches ([`LocalAnswer::Absent`]).
    /// The threshold is relative to the state's norm; results do not depend on the thread
    /// count.
    ///
    /// ```
    /// use qchess_sim::{Controls, LocalAnswer, LocalCircuit, LocalQuery, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?; // i/sqrt2 (|010> + |100>)
    /// let q = [
    ///     LocalQuery::Presence(vec![(0b110, 0b110, 0)]), // both halves at once: never
    ///     LocalQuery::Circuit(LocalCircuit::iswap(1, 3, 0).unwrap()), // onto an empty square
    ///     LocalQuery::Circuit(LocalCircuit::iswap(1, 2, 0).unwrap()), // swap the halves
    ///     LocalQuery::Circuit(LocalCircuit::iswap(3, 4, 0).unwrap()), // nothing there
    /// ];
    /// let a = s.local_effects(&q, 1e-9);
    /// assert_eq!(a[0], LocalAnswer::Absent);
    /// assert_eq!(a[1], LocalAnswer::Changes);
    /// assert!(matches!(a[2], LocalAnswer::Exact { infidelity, .. } if infidelity.abs() < 1e-15));
    /// assert_eq!(a[3], LocalAnswer::Identity);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn local_effects(&self, queries: &[LocalQuery], threshold: f64) -> Vec<LocalAnswer> {
        let prepared = prepare_all(queries, &|m| self.perm.to_phys(m), &|q| self.perm.phys(q));
        let sectors: Vec<SectorRef<'_, T>> = self
            .sectors
            .iter()
            .map(|s| (&s.keys[..], &s.amps[..]))
            .collect();
        local_effects_on(&sectors, &prepared, threshold)
    }

    /// This state's shares in the answers to `queries` when it is one piece of a larger
    /// state whose squared norm is `norm` (its own [`State::norm_sqr`] when it is the whole
    /// state): read as [`State::local_effects`] reads, with the threshold relative to
    /// `norm`. Pieces that hold whole groups (every basis state differing from one of theirs
    /// only on a circuit's acted qubits) add up, in any grouping, to the whole state's share;
    /// [`LocalShare::answer`] then gives the whole state's answer.
    ///
    /// ```
    /// use qchess_sim::{Controls, LocalCircuit, LocalQuery, State};
    /// let mut s = State::<f64>::classical(0b001);
    /// s.split(0, 1, 2, Controls::NONE)?;
    /// let q = [LocalQuery::Circuit(LocalCircuit::iswap(1, 3, 0).unwrap())];
    /// let shares = s.local_effect_shares(&q, 1e-9, s.norm_sqr());
    /// assert_eq!(shares[0].answer(s.norm_sqr(), 1e-9), s.local_effects(&q, 1e-9)[0]);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn local_effect_shares(
        &self,
        queries: &[LocalQuery],
        threshold: f64,
        norm: f64,
    ) -> Vec<LocalShare> {
        let prepared = prepare_all(queries, &|m| self.perm.to_phys(m), &|q| self.perm.phys(q));
        let sectors: Vec<SectorRef<'_, T>> = self
            .sectors
            .iter()
            .map(|s| (&s.keys[..], &s.amps[..]))
            .collect();
        shares_on(&sectors, &prepared, threshold * norm)
    }
}

#[cfg(test)]
mod tests {
    use super::{LOCAL_EFFECTS_ENTRY_BYTES, local_effects_of_entries};
    use crate::test_states::big_state;
    use crate::{Complex, Controls, Key, LocalCircuit, LocalQuery, QuantumState, SimError, State};
    use rand::Rng;

    /// Random state over the low `bits` board bits (dense: most groups have partners) in two
    /// ancilla sectors, relabelled by uncontrolled iSwaps.
    fn dense_state(n: usize, bits: u32, seed: u64) -> State<f64> {
        let mut s = crate::test_states::random_state(n, seed, (1u64 << bits) - 1, |rng| {
            u128::from(rng.random_range(0..4u8) == 0)
        });
        s.iswap(0, 40, Controls::NONE).unwrap();
        s.iswap(5, 9, Controls::NONE).unwrap();
        s
    }

    /// Every circuit form against the simulated gates: the exact infidelity and marginal
    /// shifts of a full read, and `Changes` only where the simulation changed the state.
    #[test]
    fn local_effects_match_the_simulated_circuits() {
        use crate::{LocalAnswer, LocalCircuit, LocalQuery};
        type Sim = Box<dyn Fn(&mut State<f64>)>;
        let cases: Vec<(LocalCircuit, Sim)> = vec![
            (
                LocalCircuit::iswap(0, 3, 0).unwrap(),
                Box::new(|s| s.iswap(0, 3, Controls::NONE).unwrap()),
            ),
            (
                LocalCircuit::iswap(40, 3, 0b110).unwrap(),
                Box::new(|s| s.iswap(40, 3, Controls::empty_path(0b110)).unwrap()),
            ),
            (
                LocalCircuit::split(0, 3, 7).unwrap(),
                Box::new(|s| s.split(0, 3, 7, Controls::NONE).unwrap()),
            ),
            (
                LocalCircuit::merge(0, 3, 7).unwrap(),
                Box::new(|s| s.merge(0, 3, 7, Controls::NONE).unwrap()),
            ),
            (
                LocalCircuit::split_slide(0, 3, 7, 0b100110, 0b1000100).unwrap(),
                Box::new(|s| s.split_slide(0, 3, 7, 0b100110, 0b1000100).unwrap()),
            ),
            (
                LocalCircuit::split_slide(2, 6, 8, 0b10, 0).unwrap(),
                Box::new(|s| s.split_slide(2, 6, 8, 0b10, 0).unwrap()),
            ),
            (
                LocalCircuit::split_slide(1, 4, 9, 0b1000_0000_0100, 0b100_0000_0100).unwrap(),
                Box::new(|s| {
                    s.split_slide(1, 4, 9, 0b1000_0000_0100, 0b100_0000_0100)
                        .unwrap()
                }),
            ),
            (
                LocalCircuit::merge_slide(0, 3, 7, 0b100110, 0b1000100).unwrap(),
                Box::new(|s| s.merge_slide(0, 3, 7, 0b100110, 0b1000100).unwrap()),
            ),
            (
                LocalCircuit::merge_slide(4, 9, 1, 0, 0b100).unwrap(),
                Box::new(|s| s.merge_slide(4, 9, 1, 0, 0b100).unwrap()),
            ),
        ];
        for (n, bits, seed) in [(300, 10, 1), (3000, 12, 2), (20_000, 16, 3)] {
            let s = dense_state(n, bits, seed);
            let before = s.qubit_probabilities();
            let queries: Vec<LocalQuery> = cases
                .iter()
                .map(|(c, _)| LocalQuery::Circuit(c.clone()))
                .collect();
            let exact = s.local_effects(&queries, f64::INFINITY);
            let quick = s.local_effects(&queries, 1e-9);
            for (i, (c, sim)) in cases.iter().enumerate() {
                let mut copy = s.clone();
                sim(&mut copy);
                let ov = s.inner(&copy) / s.norm_sqr();
                let want_inf = 1.0 - ov.norm();
                let after = copy.qubit_probabilities();
                let want_shift = (0..64).fold(0.0f64, |m, q| m.max((after[q] - before[q]).abs()));
                let LocalAnswer::Exact {
                    infidelity,
                    max_shift,
                } = exact[i]
                else {
                    panic!("{c:?}: {:?}", exact[i]);
                };
                assert!(
                    (infidelity - want_inf).abs() < 1e-12,
                    "{c:?} n={n}: {infidelity} vs {want_inf}"
                );
                assert!(
                    (max_shift - want_shift).abs() < 1e-12,
                    "{c:?} n={n}: {max_shift} vs {want_shift}"
                );
                match quick[i] {
                    LocalAnswer::Changes => assert!(want_inf > 1e-9, "{c:?} n={n}"),
                    LocalAnswer::Exact { infidelity, .. } => {
                        assert!((infidelity - want_inf).abs() < 1e-12, "{c:?} n={n}")
                    }
                    other => panic!("{c:?} n={n}: {other:?}"),
                }
            }
        }
    }

    /// Pieces holding whole groups (split on board bits no query acts on) give shares that
    /// add up, in rank order, to the whole state's answers: presence, identity and the
    /// circuits' exact overlaps (within 1e-12), both with and without the sampling phase;
    /// every share survives its words.
    #[test]
    fn shares_of_pieces_add_up_to_the_whole_answer() {
        use crate::{LocalAnswer, LocalCircuit, LocalQuery, LocalShare};
        let queries = vec![
            LocalQuery::Circuit(LocalCircuit::iswap(0, 3, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::split(0, 3, 7).unwrap()),
            LocalQuery::Circuit(LocalCircuit::merge_slide(4, 9, 1, 0, 0b100).unwrap()),
            LocalQuery::Circuit(LocalCircuit::split_slide(2, 6, 8, 0b10, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::iswap(50, 51, 0).unwrap()),
            LocalQuery::Presence(vec![(0b1001, 0b1001, 0)]),
            LocalQuery::Presence(vec![(1 << 50, 1 << 50, 0)]),
        ];
        for (n, bits, seed) in [(300, 14, 4), (20_000, 16, 5)] {
            let s = dense_state(n, bits, seed);
            let norm = s.norm_sqr();
            let mut pieces: Vec<Vec<(Key, Complex<f64>)>> = vec![Vec::new(); 4];
            for (k, a) in s.entries() {
                pieces[(k.board >> 11 & 3) as usize].push((k, a));
            }
            let pieces: Vec<State<f64>> = pieces
                .into_iter()
                .map(|p| State::from_shard(p, s.ancilla_count(), usize::MAX).unwrap())
                .collect();
            for threshold in [f64::INFINITY, 1e-9, 1e-3] {
                let whole = s.local_effects(&queries, threshold);
                let mut sum: Vec<LocalShare> = Vec::new();
                for p in &pieces {
                    let shares = p.local_effect_shares(&queries, threshold, norm);
                    for (i, sh) in shares.iter().enumerate() {
                        assert_eq!(LocalShare::from_words(&sh.to_words()), Some(*sh));
                        match sum.get_mut(i) {
                            Some(t) => t.add(sh),
                            None => sum.push(*sh),
                        }
                    }
                }
                for (i, (sh, want)) in sum.iter().zip(&whole).enumerate() {
                    let got = sh.answer(norm, threshold);
                    assert!(
                        got.close_to(want, 1e-12),
                        "n={n} thr={threshold} query {i}: {got:?} vs {want:?}"
                    );
                }
                assert_eq!(whole[4], LocalAnswer::Identity);
                assert_eq!(whole[6], LocalAnswer::Absent);
            }
        }
        assert_eq!(LocalShare::from_words(&[0; 3]), None);
        assert_eq!(LocalShare::from_words(&[1 << 4, 0, 0, 0, 0, 0, 0]), None);
    }

    #[test]
    fn local_effects_presence_identity_and_eigenvectors() {
        use crate::{LocalAnswer, LocalCircuit, LocalQuery};
        // A piece split over squares 1 and 2 beside 12 other split pieces (8192 basis states).
        let board = (10..22).fold(0b001u64, |b, q| b | 1 << q);
        let mut s = State::<f64>::classical(board);
        s.split(0, 1, 2, Controls::NONE).unwrap();
        for q in 10..22u8 {
            s.split(q, q + 20, q + 40, Controls::NONE).unwrap();
        }
        assert_eq!(s.len(), 1 << 13);
        let q = vec![
            LocalQuery::Presence(vec![(0b110, 0b110, 0)]),
            LocalQuery::Presence(vec![(0b110, 0b110, 0), (0b111, 0b010, 0)]),
            LocalQuery::Circuit(LocalCircuit::iswap(1, 2, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::iswap(1, 3, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::iswap(3, 4, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::merge(1, 2, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::iswap(1, 2, 1 << 30).unwrap()),
        ];
        let a = s.local_effects(&q, 1e-9);
        assert_eq!(a[0], LocalAnswer::Absent);
        assert_eq!(a[1], LocalAnswer::Present);
        // The halves are in phase: swapping them is a global phase i on every branch.
        assert!(
            matches!(a[2], LocalAnswer::Exact { infidelity, max_shift } if infidelity.abs() < 1e-14 && max_shift < 1e-14),
            "{:?}",
            a[2]
        );
        assert_eq!(a[3], LocalAnswer::Changes);
        assert_eq!(a[4], LocalAnswer::Identity);
        assert_eq!(a[5], LocalAnswer::Changes);
        // Controlled on square 30, occupied in half the branches: the phase i only there.
        assert_eq!(a[6], LocalAnswer::Changes);
    }

    /// The bounds and the local effects of a state of several sectors of many chunks: the
    /// bounds are the AND / OR of the logical keys, and every answer (the norm's sum
    /// included) is the same bit for bit on one thread and on two.
    #[test]
    fn chunked_passes_do_not_depend_on_the_thread_count() {
        use crate::{LocalCircuit, LocalQuery};
        let s = big_state(300_000, 6);
        assert!(s.len() > 3 * crate::patterns::CHUNK);
        let (mut and, mut or) = (!0u64, 0u64);
        s.for_each_entry(&mut |k, _| {
            and &= k.board;
            or |= k.board;
        });
        let queries = vec![
            LocalQuery::Circuit(LocalCircuit::iswap(0, 3, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::split(50, 3, 7).unwrap()),
            LocalQuery::Circuit(LocalCircuit::merge(5, 33, 40).unwrap()),
            LocalQuery::Presence(vec![(1 << 50, 0, 0)]),
        ];
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    (
                        s.occupancy_bounds(),
                        s.local_effects(&queries, f64::INFINITY),
                        s.local_effects(&queries, 1e-9),
                    )
                })
        };
        let one = run(1);
        assert_eq!(one.0, (and, or));
        assert_eq!(one, run(2));
        assert!(
            matches!(one.1[0], crate::LocalAnswer::Exact { .. }),
            "{:?}",
            one.1
        );
    }

    #[test]
    fn copied_local_effects_are_counted_against_the_budget() {
        let s = big_state(5000, 7);
        let queries = vec![
            LocalQuery::Presence(vec![(0b11, 0b01, 0)]),
            LocalQuery::Circuit(LocalCircuit::iswap(0, 3, 0).unwrap()),
            LocalQuery::Circuit(LocalCircuit::split(1, 21, 22).unwrap()),
        ];
        let want = s.local_effects(&queries, 1e-9);
        let need = s.len() * LOCAL_EFFECTS_ENTRY_BYTES;
        // Room for the copy: the same answers as the state's own read.
        let got =
            local_effects_of_entries(QuantumState::entries_f64(&s), s.len(), need, &queries, 1e-9)
                .unwrap();
        assert_eq!(got, want);
        // One byte short: refused before anything is copied, with the bytes asked.
        match local_effects_of_entries(
            QuantumState::entries_f64(&s),
            s.len(),
            need - 1,
            &queries,
            1e-9,
        ) {
            Err(SimError::StateTooLarge { asked, available }) => {
                assert_eq!((asked, available), (need, need - 1));
            }
            other => panic!("expected StateTooLarge, got {other:?}"),
        }
        // The trait's default goes through the same budget: what the state's budget leaves
        // after its own bytes.
        let tiny = s.clone().with_memory_budget(s.bytes() + 100);
        let available = tiny.memory_budget() - tiny.bytes();
        assert!(matches!(
            local_effects_of_entries(
                QuantumState::entries_f64(&tiny),
                tiny.len(),
                available,
                &queries,
                1e-9
            ),
            Err(SimError::StateTooLarge { .. })
        ));
        // The local state reads its sectors in place: no copy, so no refusal.
        assert_eq!(
            QuantumState::local_effects(&tiny, &queries, 1e-9).unwrap(),
            want
        );
    }
}
