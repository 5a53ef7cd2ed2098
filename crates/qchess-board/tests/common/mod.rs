//! A deliberately naive reference move generator on a mailbox board: it walks directions
//! square by square inside the W x H board, makes moves on a copy of the mailbox, and tests
//! king safety by walking rays again. It shares no code with qchess-board's generator beyond
//! reading the start position out of a `Position`.

#![allow(dead_code)]

use qchess_board::{Color, Geometry, Piece, PieceKind, Position, Square};

#[derive(Clone)]
pub struct Naive {
    pub w: i8,
    pub h: i8,
    pub board: [Option<Piece>; 64],
    pub side: Color,
    pub ep: Option<(i8, i8)>,
    /// White K, White Q, Black K, Black Q.
    pub castle: [bool; 4],
}

const KNIGHT: [(i8, i8); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING: [(i8, i8); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];
const ROOK: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP: [(i8, i8); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];

/// (from file, from rank, to file, to rank, promotion)
pub type NaiveMove = (i8, i8, i8, i8, Option<PieceKind>);

impl Naive {
    pub fn from_position(pos: &Position) -> Naive {
        let g: Geometry = pos.geometry();
        let mut board = [None; 64];
        for sq in Square::ALL {
            board[sq.index() as usize] = pos.piece_on(sq);
        }
        let r = pos.castling_rights();
        use qchess_board::CastleSide::*;
        Naive {
            w: g.width() as i8,
            h: g.height() as i8,
            board,
            side: pos.side_to_move(),
            ep: pos.ep_square().map(|s| (s.file() as i8, s.rank() as i8)),
            castle: [
                r.has(Color::White, King),
                r.has(Color::White, Queen),
                r.has(Color::Black, King),
                r.has(Color::Black, Queen),
            ],
        }
    }

    fn on(&self, f: i8, r: i8) -> bool {
        f >= 0 && r >= 0 && f < self.w && r < self.h
    }

    pub fn at(&self, f: i8, r: i8) -> Option<Piece> {
        self.board[(r * 8 + f) as usize]
    }

    fn set(&mut self, f: i8, r: i8, p: Option<Piece>) {
        self.board[(r * 8 + f) as usize] = p;
    }

    /// Whether `by` attacks (f, r), walking outwards from the square.
    pub fn attacked(&self, f: i8, r: i8, by: Color) -> bool {
        let is = |ff: i8, rr: i8, kinds: &[PieceKind]| {
            self.on(ff, rr)
                && matches!(self.at(ff, rr), Some(p) if p.color == by && kinds.contains(&p.kind))
        };
        if KNIGHT
            .iter()
            .any(|&(df, dr)| is(f + df, r + dr, &[PieceKind::Knight]))
        {
            return true;
        }
        if KING
            .iter()
            .any(|&(df, dr)| is(f + df, r + dr, &[PieceKind::King]))
        {
            return true;
        }
        // A pawn of `by` attacks (f, r) from one rank behind (from its point of view).
        let back = if by == Color::White { -1 } else { 1 };
        if is(f - 1, r + back, &[PieceKind::Pawn]) || is(f + 1, r + back, &[PieceKind::Pawn]) {
            return true;
        }
        for (dirs, kinds) in [
            (&ROOK, [PieceKind::Rook, PieceKind::Queen]),
            (&BISHOP, [PieceKind::Bishop, PieceKind::Queen]),
        ] {
            for &(df, dr) in dirs.iter() {
                let (mut ff, mut rr) = (f + df, r + dr);
                while self.on(ff, rr) {
                    if let Some(p) = self.at(ff, rr) {
                        if p.color == by && kinds.contains(&p.kind) {
                            return true;
                        }
                        break;
                    }
                    ff += df;
                    rr += dr;
                }
            }
        }
        false
    }

    fn king_attacked(&self, color: Color) -> bool {
        for r in 0..self.h {
            for f in 0..self.w {
                if self.at(f, r) == Some(Piece::new(color, PieceKind::King)) {
                    return self.attacked(f, r, !color);
                }
            }
        }
        false
    }

    /// Pseudo-legal moves: movement patterns; castling needs rights and empty squares only.
    pub fn pseudo_moves(&self) -> Vec<NaiveMove> {
        let mut out = Vec::new();
        let us = self.side;
        for r in 0..self.h {
            for f in 0..self.w {
                let Some(p) = self.at(f, r) else { continue };
                if p.color != us {
                    continue;
                }
                let add = |tf: i8, tr: i8, out: &mut Vec<NaiveMove>| {
                    if p.kind == PieceKind::Pawn && (tr == 0 || tr == self.h - 1) {
                        for k in [
                            PieceKind::Queen,
                            PieceKind::Rook,
                            PieceKind::Bishop,
                            PieceKind::Knight,
                        ] {
                            out.push((f, r, tf, tr, Some(k)));
                        }
                    } else {
                        out.push((f, r, tf, tr, None));
                    }
                };
                let free_or_enemy = |tf: i8, tr: i8| {
                    self.on(tf, tr) && self.at(tf, tr).is_none_or(|q| q.color != us)
                };
                match p.kind {
                    PieceKind::Knight | PieceKind::King => {
                        let steps = if p.kind == PieceKind::Knight {
                            &KNIGHT
                        } else {
                            &KING
                        };
                        for &(df, dr) in steps {
                            if free_or_enemy(f + df, r + dr) {
                                add(f + df, r + dr, &mut out);
                            }
                        }
                    }
                    PieceKind::Bishop | PieceKind::Rook | PieceKind::Queen => {
                        let mut dirs: Vec<(i8, i8)> = Vec::new();
                        if p.kind != PieceKind::Bishop {
                            dirs.extend(ROOK);
                        }
                        if p.kind != PieceKind::Rook {
                            dirs.extend(BISHOP);
                        }
                        for (df, dr) in dirs {
                            let (mut tf, mut tr) = (f + df, r + dr);
                            while self.on(tf, tr) {
                                match self.at(tf, tr) {
                                    None => add(tf, tr, &mut out),
                                    Some(q) => {
                                        if q.color != us {
                                            add(tf, tr, &mut out);
                                        }
                                        break;
                                    }
                                }
                                tf += df;
                                tr += dr;
                            }
                        }
                    }
                    PieceKind::Pawn => {
                        let dir = if us == Color::White { 1 } else { -1 };
                        let start = if us == Color::White { 1 } else { self.h - 2 };
                        if self.on(f, r + dir) && self.at(f, r + dir).is_none() {
                            add(f, r + dir, &mut out);
                            if self.h == 8 && r == start && self.at(f, r + 2 * dir).is_none() {
                                add(f, r + 2 * dir, &mut out);
                            }
                        }
                        for df in [-1, 1] {
                            let (tf, tr) = (f + df, r + dir);
                            if !self.on(tf, tr) {
                                continue;
                            }
                            if matches!(self.at(tf, tr), Some(q) if q.color != us)
                                || self.ep == Some((tf, tr))
                            {
                                add(tf, tr, &mut out);
                            }
                        }
                    }
                }
            }
        }
        // Castling (8x8 only: rights exist nowhere else).
        let rank = if us == Color::White { 0 } else { 7 };
        let base = if us == Color::White { 0 } else { 2 };
        if self.castle[base] && (5..7).all(|f| self.at(f, rank).is_none()) {
            out.push((4, rank, 6, rank, None));
        }
        if self.castle[base + 1] && (1..4).all(|f| self.at(f, rank).is_none()) {
            out.push((4, rank, 2, rank, None));
        }
        out
    }

    pub fn play(&self, m: NaiveMove) -> Naive {
        let mut n = self.clone();
        let (f, r, tf, tr, promo) = m;
        let p = n.at(f, r).expect("piece on origin");
        n.set(f, r, None);
        if p.kind == PieceKind::Pawn && Some((tf, tr)) == self.ep && f != tf {
            n.set(tf, r, None);
        }
        n.set(tf, tr, Some(promo.map_or(p, |k| Piece::new(p.color, k))));
        if p.kind == PieceKind::King && (tf - f).abs() == 2 {
            let (rf, rt) = if tf > f { (7, 5) } else { (0, 3) };
            let rook = n.at(rf, r);
            n.set(rf, r, None);
            n.set(rt, r, rook);
        }
        n.ep = if p.kind == PieceKind::Pawn && (tr - r).abs() == 2 {
            Some((f, (r + tr) / 2))
        } else {
            None
        };
        for (i, (kf, kr, rf)) in [(4, 0, 7), (4, 0, 0), (4, 7, 7), (4, 7, 0)]
            .into_iter()
            .enumerate()
        {
            if (f, r) == (kf, kr) || (f, r) == (rf, kr) || (tf, tr) == (rf, kr) {
                n.castle[i] = false;
            }
        }
        n.side = !n.side;
        n
    }

    /// Legal moves: pseudo-legal moves that do not leave the king attacked, plus FIDE's
    /// castling conditions (not in check, not passing an attacked square).
    pub fn legal_moves(&self) -> Vec<NaiveMove> {
        let us = self.side;
        self.pseudo_moves()
            .into_iter()
            .filter(|&m| {
                let (f, r, tf, _, _) = m;
                let is_king = self.at(f, r).map(|p| p.kind) == Some(PieceKind::King);
                if is_king && (tf - f).abs() == 2 {
                    let mid = (f + tf) / 2;
                    if self.attacked(f, r, !us) || self.attacked(mid, r, !us) {
                        return false;
                    }
                }
                !self.play(m).king_attacked(us)
            })
            .collect()
    }

    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        self.legal_moves()
            .into_iter()
            .map(|m| self.play(m).perft(depth - 1))
            .sum()
    }
}

pub fn to_move(m: NaiveMove) -> qchess_board::Move {
    let (f, r, tf, tr, promo) = m;
    qchess_board::Move::new(
        Square::new(f as u8, r as u8),
        Square::new(tf as u8, tr as u8),
        promo,
    )
}
