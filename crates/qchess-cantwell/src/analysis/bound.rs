//! The paper's section 9: upper bounds on the number of basis states of the occupancy
//! superposition (eq. 38-40) and the data of Figure 37.

/// Binomial coefficient C(n, k) (0 when k > n), exact in u128 for n <= 64.
pub fn binomial(n: u32, k: u32) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut acc: u128 = 1;
    for i in 0..k {
        // acc * (n - i) / (i + 1) stays an integer at every step.
        acc = acc * u128::from(n - i) / u128::from(i + 1);
    }
    acc
}

/// Eq. 38: the naive bound sum_{k=0}^{32} C(64, k) (about 1.0e19): any 0..32 of the 64
/// squares occupied.
///
/// ```
/// assert_eq!(qchess_cantwell::analysis::naive_superposition_bound(), 10_139_684_107_326_071_075);
/// ```
pub fn naive_superposition_bound() -> u128 {
    (0..=32).map(|k| binomial(64, k)).sum()
}

/// Eq. 39a: S_v = sum_{m=0}^{m_v} C(s_v, m), the number of occupancy patterns of up to `m_v`
/// like pieces on `s_v` squares.
pub fn piece_value_size(squares: u32, multiplicity: u32) -> u128 {
    (0..=multiplicity.min(squares))
        .map(|m| binomial(squares, m))
        .sum()
}

/// The pair zeta_v = {s_v, m_v} of the paper: squares occupied and multiplicity of the pieces
/// of one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Zeta {
    /// s_v: the number of squares the pieces of this value may occupy.
    pub squares: u32,
    /// m_v: how many pieces of this value there are.
    pub multiplicity: u32,
}

/// The piece values in the order of [`SuperpositionBound::white`] and `black`.
pub const PIECE_ORDER: [char; 6] = ['P', 'N', 'B', 'R', 'Q', 'K'];

/// The multiplicities at the start (m_{v,0}), in [`PIECE_ORDER`].
const START_COUNT: [u32; 6] = [8, 2, 2, 2, 1, 1];

/// The bound of eq. 39b maximised under eq. 40a-40d, with the allocation that reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SuperpositionBound {
    /// Eq. 38 (about 1.0e19).
    pub naive: u128,
    /// The maximum of eq. 39b under eq. 40 (about 7.9e17).
    pub refined: u128,
    /// One allocation reaching `refined`, white pieces in [`PIECE_ORDER`].
    pub white: [Zeta; 6],
    /// The same for black.
    pub black: [Zeta; 6],
}

/// Eq. 39b: the product of eq. 39a over the twelve piece values.
pub fn occupancy_bound(white: &[Zeta; 6], black: &[Zeta; 6]) -> u128 {
    white
        .iter()
        .chain(black.iter())
        .map(|z| piece_value_size(z.squares, z.multiplicity))
        .product()
}

/// Whether an allocation obeys eq. 40a-40d, read as chess's promotion rule: at most 64 squares
/// in all (40a), one king per side (40b), and per side the pawns left plus the promotions
/// (pieces above the starting count) at most 8 (40c, 40d).
pub fn allocation_is_valid(white: &[Zeta; 6], black: &[Zeta; 6]) -> bool {
    let squares: u32 = white.iter().chain(black.iter()).map(|z| z.squares).sum();
    let side_ok = |side: &[Zeta; 6]| {
        let promotions: u32 = (1..5)
            .map(|i| side[i].multiplicity.saturating_sub(START_COUNT[i]))
            .sum();
        side[5].multiplicity == 1 && side[0].multiplicity + promotions <= 8
    };
    squares <= 64 && side_ok(white) && side_ok(black)
}

/// Section 9: eq. 38 and the maximum of eq. 39b under eq. 40, found exactly by dynamic
/// programming over (squares used, pawns + promotions used) for each side.
///
/// The paper reports about 7.9e17 at zeta_K = zeta_Q = {1, 1}, zeta_N = zeta_B = {3, 2},
/// zeta_R = {24, 10}, no pawns (for both sides); the search finds the same value (knights and
/// rooks may come out swapped: footnote 12).
///
/// ```
/// let bound = qchess_cantwell::analysis::superposition_upper_bound();
/// assert_eq!(bound.refined, 791_949_874_793_910_336);
/// ```
pub fn superposition_upper_bound() -> SuperpositionBound {
    let side = best_side_allocations();
    let mut best = (0u128, 0usize, 0usize);
    for w in 0..=64usize {
        for b in 0..=64 - w {
            let value = side[w].0 * side[b].0;
            if value > best.0 {
                best = (value, w, b);
            }
        }
    }
    SuperpositionBound {
        naive: naive_superposition_bound(),
        refined: best.0,
        white: side[best.1].1,
        black: side[best.2].1,
    }
}

/// For each number of squares 0..=64: the best product over one side's six values using at
/// most that many squares, with its allocation.
fn best_side_allocations() -> Vec<(u128, [Zeta; 6])> {
    const BUDGET: usize = 8;
    // table[squares][budget] = best (product, allocation) so far.
    let empty = [Zeta::default(); 6];
    let mut table = vec![vec![None::<(u128, [Zeta; 6])>; BUDGET + 1]; 65];
    table[0][0] = Some((1, empty));
    for (value, &start) in START_COUNT.iter().enumerate() {
        let mut next = vec![vec![None::<(u128, [Zeta; 6])>; BUDGET + 1]; 65];
        let multiplicities: Vec<u32> = match value {
            5 => vec![1],
            0 => (0..=8).collect(),
            _ => (0..=start + 8).collect(),
        };
        for (used, row) in table.iter().enumerate() {
            for (spent, cell) in row.iter().enumerate() {
                let Some((product, alloc)) = *cell else {
                    continue;
                };
                for &m in &multiplicities {
                    let cost = if value == 0 {
                        m
                    } else if value == 5 {
                        0
                    } else {
                        m.saturating_sub(start)
                    };
                    let spent2 = spent + cost as usize;
                    if spent2 > BUDGET {
                        continue;
                    }
                    for s in 0..=(64 - used) {
                        let p = product * piece_value_size(s as u32, m);
                        let slot = &mut next[used + s][spent2];
                        if slot.is_none_or(|(q, _)| p > q) {
                            let mut a = alloc;
                            a[value] = Zeta {
                                squares: s as u32,
                                multiplicity: m,
                            };
                            *slot = Some((p, a));
                        }
                    }
                }
            }
        }
        table = next;
    }
    // Best with at most n squares.
    let mut out = Vec::with_capacity(65);
    let mut running: (u128, [Zeta; 6]) = (0, empty);
    for row in &table {
        for (p, a) in row.iter().flatten() {
            if *p > running.0 {
                running = (*p, *a);
            }
        }
        out.push(running);
    }
    out
}

/// One cell of Figure 37.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure37Point {
    /// m_v: the multiplicity of the piece value.
    pub multiplicity: u32,
    /// s_v: the squares it occupies.
    pub squares: u32,
    /// log10 of eq. 39a, sum_{m=0}^{m_v} C(s_v, m).
    pub log10_size: f64,
}

/// The heat map of Figure 37: log10 of the bound (eq. 39a) for one piece value spread over
/// `squares` squares with `multiplicity` pieces, for multiplicities 1..=`max_multiplicity`
/// and squares 1..=`max_squares` (the paper plots 1..=10 by 1..=64), multiplicity-major.
/// The paper's contours are the 10^6 (solid) and 10^9 (dashed) levels.
///
/// ```
/// let cells = qchess_cantwell::analysis::figure37_series(10, 64);
/// assert_eq!(cells.len(), 640);
/// let five_of_forty = cells.iter().find(|c| c.multiplicity == 5 && c.squares == 40).unwrap();
/// assert!(five_of_forty.log10_size < 6.0); // 760099 basis states
/// ```
pub fn figure37_series(max_multiplicity: u32, max_squares: u32) -> Vec<Figure37Point> {
    let mut out = Vec::with_capacity((max_multiplicity * max_squares) as usize);
    for multiplicity in 1..=max_multiplicity {
        for squares in 1..=max_squares {
            let size = piece_value_size(squares, multiplicity) as f64;
            out.push(Figure37Point {
                multiplicity,
                squares,
                log10_size: size.log10(),
            });
        }
    }
    out
}
