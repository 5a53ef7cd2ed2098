//! A small dense reference simulator written directly from the paper's matrices, used to
//! check the sparse simulator. Dense index bit `i` is board qubit `QUBITS[i]` for
//! `i < QUBITS.len()`, then one bit per capture ancilla.
#![allow(dead_code, clippy::needless_range_loop)]

use num_complex::Complex;
use qchess_sim::Key;

pub type C = Complex<f64>;

/// Board qubits the reference tracks: spread over the 64 bits so every group structure of
/// the sparse kernels (low bits, middle bits, bit 63) is exercised.
pub const QUBITS: [u8; 8] = [0, 1, 5, 17, 31, 40, 62, 63];
pub const MAX_ANC: usize = 4;

pub fn c(re: f64, im: f64) -> C {
    Complex::new(re, im)
}

pub const H: f64 = std::f64::consts::FRAC_1_SQRT_2;

#[derive(Clone, Debug)]
pub struct Dense {
    pub amps: Vec<C>,
    pub ancillas: usize,
}

fn local(q: u8) -> usize {
    QUBITS.iter().position(|&x| x == q).expect("tracked qubit")
}

pub fn mask_local(mask: u64) -> usize {
    let mut m = 0;
    for (i, &q) in QUBITS.iter().enumerate() {
        if mask >> q & 1 == 1 {
            m |= 1 << i;
        }
    }
    m
}

/// 8x8 matrices in the basis |q2 q1 q0> (index = q0 + 2 q1 + 4 q2).
pub type M8 = [[C; 8]; 8];

pub fn two_qubit_in_3(u: [[C; 4]; 4], x: usize, y: usize) -> M8 {
    // u acts on local bits (x, y) of a 3-bit index with 2-bit index = bit_x + 2 bit_y.
    let mut m = [[c(0.0, 0.0); 8]; 8];
    for col in 0..8 {
        for row in 0..8 {
            let rest_same = (col & !(1 << x | 1 << y)) == (row & !(1 << x | 1 << y));
            if !rest_same {
                continue;
            }
            let ci = (col >> x & 1) + 2 * (col >> y & 1);
            let ri = (row >> x & 1) + 2 * (row >> y & 1);
            m[row][col] = u[ri][ci];
        }
    }
    m
}

pub fn mul(a: &M8, b: &M8) -> M8 {
    let mut m = [[c(0.0, 0.0); 8]; 8];
    for i in 0..8 {
        for j in 0..8 {
            for k in 0..8 {
                m[i][j] += a[i][k] * b[k][j];
            }
        }
    }
    m
}

pub fn dagger(a: &M8) -> M8 {
    let mut m = [[c(0.0, 0.0); 8]; 8];
    for i in 0..8 {
        for j in 0..8 {
            m[i][j] = a[j][i].conj();
        }
    }
    m
}

pub fn identity8() -> M8 {
    let mut m = [[c(0.0, 0.0); 8]; 8];
    for (i, row) in m.iter_mut().enumerate() {
        row[i] = c(1.0, 0.0);
    }
    m
}

/// eq. 4a, basis |t s> with index = bit_s + 2 bit_t (symmetric anyway).
pub fn iswap4(inverse: bool) -> [[C; 4]; 4] {
    let p = if inverse { c(0.0, -1.0) } else { c(0.0, 1.0) };
    let o = c(0.0, 0.0);
    let one = c(1.0, 0.0);
    [[one, o, o, o], [o, o, p, o], [o, p, o, o], [o, o, o, one]]
}

/// eq. 4b.
pub fn sqrt4(inverse: bool) -> [[C; 4]; 4] {
    let p = if inverse { c(0.0, -H) } else { c(0.0, H) };
    let d = c(H, 0.0);
    let o = c(0.0, 0.0);
    let one = c(1.0, 0.0);
    [[one, o, o, o], [o, d, p, o], [o, p, d, o], [o, o, o, one]]
}

/// U_split in the basis |t2 t1 s> (q0 = s, q1 = t1, q2 = t2), by its definition (section
/// 6.3): iSwap(s, t2) * sqrt-iSwap(s, t1).
pub fn u_split() -> M8 {
    mul(
        &two_qubit_in_3(iswap4(false), 0, 2),
        &two_qubit_in_3(sqrt4(false), 0, 1),
    )
}

impl Dense {
    pub fn classical(board: u64) -> Self {
        let mut amps = vec![c(0.0, 0.0); 1 << (QUBITS.len() + MAX_ANC)];
        amps[mask_local(board)] = c(1.0, 0.0);
        Self { amps, ancillas: 0 }
    }

    pub fn get(&self, key: Key) -> C {
        let idx = mask_local(key.board) | ((key.ancillas as usize) << QUBITS.len());
        self.amps[idx]
    }

    fn board_bits(idx: usize) -> usize {
        idx & ((1 << QUBITS.len()) - 1)
    }

    /// Applies an 8x8 `u` on local qubits (q0, q1, q2) where `cond(board bits)` holds.
    pub fn apply3(&mut self, qs: [u8; 3], u: &M8, cond: impl Fn(usize) -> bool) {
        let l = qs.map(local);
        let mask = (1 << l[0]) | (1 << l[1]) | (1 << l[2]);
        let mut out = vec![c(0.0, 0.0); self.amps.len()];
        for (idx, &a) in self.amps.iter().enumerate() {
            if a == c(0.0, 0.0) {
                continue;
            }
            if !cond(Self::board_bits(idx)) {
                out[idx] += a;
                continue;
            }
            let col = (idx >> l[0] & 1) | (idx >> l[1] & 1) << 1 | (idx >> l[2] & 1) << 2;
            for (row, r) in u.iter().enumerate() {
                let f = r[col];
                if f == c(0.0, 0.0) {
                    continue;
                }
                let to = (idx & !mask)
                    | (row & 1) << l[0]
                    | (row >> 1 & 1) << l[1]
                    | (row >> 2 & 1) << l[2];
                out[to] += f * a;
            }
        }
        self.amps = out;
    }

    /// A two-qubit gate on (a, b) where `cond` holds (third qubit: any other tracked one).
    pub fn apply2(&mut self, a: u8, b: u8, u: [[C; 4]; 4], cond: impl Fn(usize) -> bool) {
        let third = *QUBITS.iter().find(|&&q| q != a && q != b).unwrap();
        self.apply3([a, b, third], &two_qubit_in_3(u, 0, 1), cond);
    }

    pub fn capture(&mut self, t: u8) -> u32 {
        self.capture_where(t, |_| true)
    }

    /// The capture of `t` on the branches where `cond(board bits)` holds: a fresh ancilla
    /// even where none fires.
    pub fn capture_where(&mut self, t: u8, cond: impl Fn(usize) -> bool) -> u32 {
        let lt = local(t);
        let la = QUBITS.len() + self.ancillas;
        let mut out = vec![c(0.0, 0.0); self.amps.len()];
        for (idx, &a) in self.amps.iter().enumerate() {
            if idx >> lt & 1 == 1 && cond(Self::board_bits(idx)) {
                out[(idx & !(1 << lt)) | 1 << la] += c(0.0, 1.0) * a;
            } else {
                out[idx] += a;
            }
        }
        self.amps = out;
        self.ancillas += 1;
        (self.ancillas - 1) as u32
    }

    /// iSwap(a, b) on the branches where one of the `ancillas` bits is set.
    pub fn iswap_where_ancillas(&mut self, a: u8, b: u8, ancillas: u128) {
        let (la, lb) = (local(a), local(b));
        let mut out = vec![c(0.0, 0.0); self.amps.len()];
        for (idx, &x) in self.amps.iter().enumerate() {
            let captured = (idx >> QUBITS.len()) as u128 & ancillas != 0;
            if captured && (idx >> la & 1) != (idx >> lb & 1) {
                out[idx ^ (1 << la | 1 << lb)] += c(0.0, 1.0) * x;
            } else {
                out[idx] += x;
            }
        }
        self.amps = out;
    }

    /// Keeps the boards `keep` holds for (a function of the tracked qubits' bits),
    /// renormalised.
    pub fn project_boards(&mut self, keep: impl Fn(usize) -> bool) {
        for (idx, a) in self.amps.iter_mut().enumerate() {
            if !keep(Self::board_bits(idx)) {
                *a = c(0.0, 0.0);
            }
        }
        let s = 1.0 / self.amps.iter().map(|a| a.norm_sqr()).sum::<f64>().sqrt();
        for a in &mut self.amps {
            *a *= s;
        }
    }

    pub fn flip(&mut self, q: u8, cond: impl Fn(usize) -> bool) {
        let l = local(q);
        let mut out = vec![c(0.0, 0.0); self.amps.len()];
        for (idx, &a) in self.amps.iter().enumerate() {
            let to = if cond(Self::board_bits(idx)) {
                idx ^ (1 << l)
            } else {
                idx
            };
            out[to] += a;
        }
        self.amps = out;
    }

    pub fn phase(&mut self, mask: u64, value: u64, f: C) {
        let (m, v) = (mask_local(mask), mask_local(value));
        for (idx, a) in self.amps.iter_mut().enumerate() {
            if Self::board_bits(idx) & m == v {
                *a *= f;
            }
        }
    }

    pub fn probability(&self, mask: u64, value: u64) -> f64 {
        let (m, v) = (mask_local(mask), mask_local(value));
        let all: f64 = self.amps.iter().map(|a| a.norm_sqr()).sum();
        let yes: f64 = self
            .amps
            .iter()
            .enumerate()
            .filter(|(i, _)| Self::board_bits(*i) & m == v)
            .map(|(_, a)| a.norm_sqr())
            .sum();
        yes / all
    }

    pub fn force(&mut self, mask: u64, value: u64, outcome: bool) {
        let (m, v) = (mask_local(mask), mask_local(value));
        let p = {
            let pt = self.probability(mask, value);
            if outcome { pt } else { 1.0 - pt }
        };
        let s = 1.0 / p.sqrt();
        for (idx, a) in self.amps.iter_mut().enumerate() {
            if (Self::board_bits(idx) & m == v) == outcome {
                *a *= s;
            } else {
                *a = c(0.0, 0.0);
            }
        }
    }
}
