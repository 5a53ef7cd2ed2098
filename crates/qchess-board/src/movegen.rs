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

impl Position {
    /// Calls `visit` with the legal moves of each piece of the side to move (non-empty sets
    /// only). `visit` returns `true` to stop early; the result tells whether it did.
    #[inline]
    pub fn generate_legal(&self, mut visit: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate::<true, _>(&mut visit)
    }

    /// Calls `visit` with the pseudo-legal moves of each piece of the side to move (movement
    /// patterns only; see the module docs). `visit` returns `true` to stop early.
    #[inline]
    pub fn generate_pseudo_legal(&self, mut visit: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate::<false, _>(&mut visit)
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

    /// Number of legal moves, counted set by set without listing them.
    #[inline]
    pub fn legal_move_count(&self) -> usize {
        let mut n = 0;
        self.generate_legal(|pm| {
            n += pm.len();
            false
        });
        n
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
    fn generate<const LEGAL: bool, F: FnMut(PieceMoves) -> bool>(&self, visit: &mut F) -> bool {
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
                return self.gen_king(legal, king, ours, occ, mask, visit);
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
                && visit(PieceMoves {
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
                && visit(PieceMoves {
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
                && visit(PieceMoves {
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
                && visit(PieceMoves {
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
        for from in self.pieces(us, PieceKind::Pawn) {
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
                && visit(PieceMoves {
                    piece: PieceKind::Pawn,
                    from,
                    to,
                    promotes,
                })
            {
                return true;
            }
        }

        self.gen_king(legal, king, ours, occ, mask, visit)
    }

    /// King steps (legal: onto unattacked squares only) and castling.
    #[inline(always)]
    fn gen_king<F: FnMut(PieceMoves) -> bool>(
        &self,
        legal: bool,
        king: Option<Square>,
        ours: Bitboard,
        occ: Bitboard,
        mask: Bitboard,
        visit: &mut F,
    ) -> bool {
        let Some(k) = king else {
            return false;
        };
        let us = self.side_to_move();
        let them = !us;
        let mut to = king_attacks(k) & !ours & mask;
        if legal {
            // The king must not stay on the line of a slider it steps away from.
            let occ_without_king = occ.without(k);
            for t in to {
                if self.is_attacked(t, them, occ_without_king) {
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
            && visit(PieceMoves {
                piece: PieceKind::King,
                from: k,
                to,
                promotes: false,
            })
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
