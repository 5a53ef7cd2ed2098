//! Move generation in two public layers, both emitting per-piece move sets ([`PieceMoves`]):
//!
//! * pseudo-legal: movement patterns only. The king may be left in check (or captured);
//!   castling needs only the right and empty squares between king and rook. This is what the
//!   Cantwell and Akl rule sets build on.
//! * legal (FIDE): pins, check evasion, double check, en passant with its discovered-check case,
//!   castling neither out of, through nor into check, all four promotions.
//!
//! Both run through one generic function; the legal layer uses the checkers and pins that
//! [`Position`] caches after every move.

use crate::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, queen_attacks,
    rook_attacks,
};
use crate::{Bitboard, CastleSide, CastlingRights, Color, Move, MoveList, PieceKind, PieceMoves};
use crate::{Position, Square};

/// Where generated move sets go: a caller's closure, or a counter that lets pawns be counted
/// set-wise instead of one by one.
trait Sink {
    /// Whether only the number of moves matters.
    const COUNTING: bool;
    /// Takes one piece's moves; `true` stops generation.
    fn visit(&mut self, pm: PieceMoves) -> bool;
    /// Adds moves counted in bulk (only called when `COUNTING`).
    fn add(&mut self, n: u32);
}

struct Visitor<F>(F);

impl<F: FnMut(PieceMoves) -> bool> Sink for Visitor<F> {
    const COUNTING: bool = false;
    #[inline(always)]
    fn visit(&mut self, pm: PieceMoves) -> bool {
        (self.0)(pm)
    }
    #[inline(always)]
    fn add(&mut self, _n: u32) {}
}

struct Counter(u32);

impl Sink for Counter {
    const COUNTING: bool = true;
    #[inline(always)]
    fn visit(&mut self, pm: PieceMoves) -> bool {
        self.0 += pm.len() as u32;
        false
    }
    #[inline(always)]
    fn add(&mut self, n: u32) {
        self.0 += n;
    }
}

impl Position {
    /// Calls `visit` with the legal moves of each piece of the side to move (non-empty sets
    /// only). `visit` returns `true` to stop early; the result tells whether it did.
    #[inline]
    pub fn generate_legal(&self, mut visit: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate::<true, _>(&mut Visitor(&mut visit))
    }

    /// Calls `visit` with the pseudo-legal moves of each piece of the side to move (movement
    /// patterns only; see the module docs). `visit` returns `true` to stop early.
    #[inline]
    pub fn generate_pseudo_legal(&self, mut visit: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate::<false, _>(&mut Visitor(&mut visit))
    }

    /// All legal moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::with_capacity(64);
        self.generate_legal(|pm| {
            list.extend(pm);
            false
        });
        list
    }

    /// All pseudo-legal moves.
    pub fn pseudo_legal_moves(&self) -> MoveList {
        let mut list = MoveList::with_capacity(64);
        self.generate_pseudo_legal(|pm| {
            list.extend(pm);
            false
        });
        list
    }

    /// Legal moves of the piece on `from` (empty if there is none of the side to move).
    ///
    /// ```
    /// use qchess_board::{Position, Square};
    /// let pos = Position::startpos();
    /// assert_eq!(pos.legal_moves_from(Square::G1).len(), 2);
    /// assert!(pos.legal_moves_from(Square::E4).is_empty());
    /// ```
    pub fn legal_moves_from(&self, from: Square) -> MoveList {
        let mut list = MoveList::new();
        self.generate_legal(|pm| {
            if pm.from == from {
                list.extend(pm);
            }
            false
        });
        list
    }

    /// Pseudo-legal moves of the piece on `from`.
    pub fn pseudo_legal_moves_from(&self, from: Square) -> MoveList {
        let mut list = MoveList::new();
        self.generate_pseudo_legal(|pm| {
            if pm.from == from {
                list.extend(pm);
            }
            false
        });
        list
    }

    /// Number of legal moves, counted set by set without listing them.
    #[inline]
    pub fn legal_move_count(&self) -> usize {
        let mut counter = Counter(0);
        self.generate::<true, _>(&mut counter);
        counter.0 as usize
    }

    /// Whether the side to move has no legal move and is in check.
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && !self.has_legal_move()
    }

    /// Whether the side to move has no legal move and is not in check.
    pub fn is_stalemate(&self) -> bool {
        !self.in_check() && !self.has_legal_move()
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&self) -> bool {
        self.generate_legal(|_| true)
    }

    /// Whether `mv` is a castling move here (the king's two-file move).
    pub fn is_castling(&self, mv: Move) -> bool {
        self.pieces(self.side_to_move(), PieceKind::King)
            .contains(mv.from)
            && mv.from.file().abs_diff(mv.to.file()) == 2
            && mv.from.rank() == mv.to.rank()
    }

    /// FIDE's extra castling condition, beyond not ending in check: the king is not in check
    /// and does not pass over an attacked square. `false` for non-castling moves.
    pub fn castling_path_safe(&self, mv: Move) -> bool {
        if !self.is_castling(mv) {
            return false;
        }
        let them = !self.side_to_move();
        let occ = self.occupied();
        !self.in_check()
            && (between(mv.from, mv.to) | mv.to.bitboard())
                .iter()
                .all(|sq| !self.is_attacked(sq, them, occ))
    }

    #[inline(always)]
    fn generate<const LEGAL: bool, S: Sink>(&self, sink: &mut S) -> bool {
        let us = self.side_to_move();
        let ours = self.by_color(us);
        let theirs = self.by_color(!us);
        let occ = ours | theirs;
        let mask = self.geometry().mask();
        let king = self.king_square(us);
        let legal = LEGAL && king.is_some();

        let mut check_mask = Bitboard::FULL;
        let mut pinned = Bitboard::EMPTY;
        if legal {
            let checkers = self.checkers();
            if checkers.has_many() {
                return self.gen_king(legal, king, ours, occ, mask, sink);
            }
            if let (Some(c), Some(k)) = (checkers.first(), king) {
                check_mask = between(k, c).with(c);
            }
            pinned = self.pinned();
        }
        let targets = !ours & mask & check_mask;
        let pin_line = |from: Square, to: Bitboard| match king {
            Some(k) if pinned.contains(from) => to & line(k, from),
            _ => to,
        };

        for from in self.pieces(us, PieceKind::Knight) - pinned {
            let to = knight_attacks(from) & targets;
            if to.any()
                && sink.visit(PieceMoves {
                    piece: PieceKind::Knight,
                    from,
                    to,
                    promotes: false,
                })
            {
                return true;
            }
        }
        for from in self.pieces(us, PieceKind::Bishop) {
            let to = pin_line(from, bishop_attacks(from, occ) & targets);
            if to.any()
                && sink.visit(PieceMoves {
                    piece: PieceKind::Bishop,
                    from,
                    to,
                    promotes: false,
                })
            {
                return true;
            }
        }
        for from in self.pieces(us, PieceKind::Rook) {
            let to = pin_line(from, rook_attacks(from, occ) & targets);
            if to.any()
                && sink.visit(PieceMoves {
                    piece: PieceKind::Rook,
                    from,
                    to,
                    promotes: false,
                })
            {
                return true;
            }
        }
        for from in self.pieces(us, PieceKind::Queen) {
            let to = pin_line(from, queen_attacks(from, occ) & targets);
            if to.any()
                && sink.visit(PieceMoves {
                    piece: PieceKind::Queen,
                    from,
                    to,
                    promotes: false,
                })
            {
                return true;
            }
        }

        // Pawns, one set per pawn.
        let g = self.geometry();
        let empty = !occ & mask;
        let start_rank = if g.has_double_step() {
            g.pawn_start_rank(us)
        } else {
            8
        };
        let last_step_rank = match us {
            Color::White => g.height() - 2,
            Color::Black => 1,
        };
        let forward = |bb: Bitboard| match us {
            Color::White => bb << 8,
            Color::Black => bb >> 8,
        };
        let mut per_pawn = self.pieces(us, PieceKind::Pawn);
        if S::COUNTING {
            // Unpinned pawns are counted set-wise; pinned ones (and e.p.) one by one below.
            let pawns = per_pawn - pinned;
            per_pawn &= pinned;
            let promo_rank = g.rank_mask(g.promotion_rank(us));
            let single = forward(pawns) & empty;
            let mut moves = 0;
            // Two pawns may capture on one square, so each capture direction is its own set.
            let [left, right] = pawn_captures_split(us, pawns);
            for set in [single, left & theirs, right & theirs] {
                let set = set & check_mask;
                moves += (set - promo_rank).count() + 4 * (set & promo_rank).count();
            }
            if start_rank < 8 {
                let start = g.rank_mask(start_rank);
                moves += (forward(forward(pawns & start) & empty) & empty & check_mask).count();
            }
            sink.add(moves);
            if let Some(ep) = self.ep_square() {
                for from in pawn_attacks(!us, ep) & pawns {
                    if !legal || self.ep_is_legal(from, ep) {
                        sink.add(1);
                    }
                }
            }
        }
        for from in per_pawn {
            let single = forward(from.bitboard()) & empty;
            let mut to = single;
            if from.rank() == start_rank {
                to |= forward(single) & empty;
            }
            to |= pawn_attacks(us, from) & theirs;
            to &= check_mask;
            to = pin_line(from, to);
            if let Some(ep) = self.ep_square() {
                if pawn_attacks(us, from).contains(ep) && (!legal || self.ep_is_legal(from, ep)) {
                    to |= ep.bitboard();
                }
            }
            let promotes = from.rank() == last_step_rank;
            if to.any()
                && sink.visit(PieceMoves {
                    piece: PieceKind::Pawn,
                    from,
                    to,
                    promotes,
                })
            {
                return true;
            }
        }

        self.gen_king(legal, king, ours, occ, mask, sink)
    }

    /// King steps (legal: onto unattacked squares only) and castling.
    #[inline(always)]
    fn gen_king<S: Sink>(
        &self,
        legal: bool,
        king: Option<Square>,
        ours: Bitboard,
        occ: Bitboard,
        mask: Bitboard,
        sink: &mut S,
    ) -> bool {
        let Some(k) = king else {
            return false;
        };
        let us = self.side_to_move();
        let them = !us;
        let mut to = king_attacks(k) & !ours & mask;
        if legal && to.any() {
            to -= self.leaper_attacks(them);
            // Sliders per square, with our king removed: it must not stay on the line of a
            // slider it steps away from.
            let occ_without_king = occ.without(k);
            let theirs = self.by_color(them);
            let diag = theirs & (self.by_kind(PieceKind::Bishop) | self.by_kind(PieceKind::Queen));
            let ortho = theirs & (self.by_kind(PieceKind::Rook) | self.by_kind(PieceKind::Queen));
            for t in to {
                if (bishop_attacks(t, occ_without_king) & diag).any()
                    || (rook_attacks(t, occ_without_king) & ortho).any()
                {
                    to = to.without(t);
                }
            }
        }
        let rights = self.castling_rights();
        let castling_allowed = !(legal && self.in_check());
        if !rights.is_empty() && castling_allowed {
            for side in CastleSide::ALL {
                if !rights.has(us, side) {
                    continue;
                }
                let (ksq, rsq, target) = CastlingRights::squares(us, side);
                if k != ksq || (between(ksq, rsq) & occ).any() {
                    continue;
                }
                let path = between(ksq, target).with(target);
                if !legal || path.iter().all(|sq| !self.is_attacked(sq, them, occ)) {
                    to |= target.bitboard();
                }
            }
        }
        to.any()
            && sink.visit(PieceMoves {
                piece: PieceKind::King,
                from: k,
                to,
                promotes: false,
            })
    }

    /// Every square attacked by `color`'s pawns, knights and king (set-wise, 8x8 grid).
    #[inline(always)]
    fn leaper_attacks(&self, color: Color) -> Bitboard {
        let mut danger = pawn_captures(color, self.pieces(color, PieceKind::Pawn));
        for n in self.pieces(color, PieceKind::Knight) {
            danger |= knight_attacks(n);
        }
        if let Some(k) = self.king_square(color) {
            danger |= king_attacks(k);
        }
        danger
    }

    /// Whether en passant from `from` leaves the king safe (including the case where both
    /// pawns leave the king's rank and uncover a rook or queen).
    #[cold]
    fn ep_is_legal(&self, from: Square, ep: Square) -> bool {
        let us = self.side_to_move();
        let Some(k) = self.king_square(us) else {
            return true;
        };
        let victim = Square::new(ep.file(), from.rank());
        let occ = (self.occupied() - from.bitboard() - victim.bitboard()) | ep.bitboard();
        let attackers = self.attackers(k, !us, occ) - victim.bitboard();
        attackers.is_empty()
    }
}

/// Squares `color`'s pawns on `pawns` attack, set-wise on the 8x8 grid.
#[inline(always)]
fn pawn_captures(color: Color, pawns: Bitboard) -> Bitboard {
    let [left, right] = pawn_captures_split(color, pawns);
    left | right
}

/// Pawn captures towards the a-file and towards the h-file, as two sets.
#[inline(always)]
fn pawn_captures_split(color: Color, pawns: Bitboard) -> [Bitboard; 2] {
    const NOT_A: u64 = !0x0101_0101_0101_0101;
    const NOT_H: u64 = !0x8080_8080_8080_8080;
    let p = pawns.0;
    match color {
        Color::White => [Bitboard((p & NOT_A) << 7), Bitboard((p & NOT_H) << 9)],
        Color::Black => [Bitboard((p & NOT_A) >> 9), Bitboard((p & NOT_H) >> 7)],
    }
}
