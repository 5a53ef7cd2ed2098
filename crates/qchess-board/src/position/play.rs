//! Making moves: the unchecked copy-make fast path, the checked `play`, and make / unmake.

use super::Position;
use crate::{Bitboard, CastlingRights, Color, Move, PieceKind, Square, zobrist};
use std::fmt;

/// Why a move was refused. The position is left exactly as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IllegalMoveReason {
    /// No piece of the side to move stands on the origin square.
    NoPiece,
    /// The piece cannot make this move here (pattern, blocked, check, castling rule, or a
    /// missing / superfluous promotion).
    NotAllowed,
}

/// A move that [`Position::play`] (or [`Position::play_pseudo_legal`]) refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IllegalMove {
    /// The move.
    pub mv: Move,
    /// Why.
    pub reason: IllegalMoveReason,
    /// FEN of the position it was tried in.
    pub fen: String,
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.reason {
            IllegalMoveReason::NoPiece => "no piece of the side to move on its origin square",
            IllegalMoveReason::NotAllowed => "not a legal move in this position",
        };
        write!(
            f,
            "illegal move {}: {} (position {})",
            self.mv, why, self.fen
        )
    }
}

impl std::error::Error for IllegalMove {}

/// What [`Position::make`] needs to take a move back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Undo {
    mv: Move,
    moved: PieceKind,
    captured: Option<(PieceKind, Square)>,
    castling: CastlingRights,
    ep: Option<Square>,
    halfmove: u32,
    fullmove: u32,
    hash: u64,
    checkers: Bitboard,
    pinned: Bitboard,
}

impl Position {
    /// Plays `mv` if it is legal (FIDE rules); otherwise returns the reason and leaves the
    /// position unchanged.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        self.check_move(mv, true)?;
        self.play_unchecked(mv);
        Ok(())
    }

    /// Plays `mv` if it is pseudo-legal (movement rules only: the king may be left in check or
    /// captured; castling needs only the rights and empty squares between king and rook).
    pub fn play_pseudo_legal(&mut self, mv: Move) -> Result<(), IllegalMove> {
        self.check_move(mv, false)?;
        self.play_unchecked(mv);
        Ok(())
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.check_move(mv, true).is_ok()
    }

    /// Whether `mv` is pseudo-legal here.
    pub fn is_pseudo_legal(&self, mv: Move) -> bool {
        self.check_move(mv, false).is_ok()
    }

    fn check_move(&self, mv: Move, legal: bool) -> Result<(), IllegalMove> {
        let err = |reason| IllegalMove {
            mv,
            reason,
            fen: self.to_fen(),
        };
        if !self.by_color(self.side).contains(mv.from) {
            return Err(err(IllegalMoveReason::NoPiece));
        }
        let mut found = false;
        let mut visit = |pm: crate::PieceMoves| {
            if pm.from == mv.from && pm.to.contains(mv.to) {
                found = if pm.promotes {
                    matches!(mv.promotion, Some(k) if k != PieceKind::Pawn && k != PieceKind::King)
                } else {
                    mv.promotion.is_none()
                };
                return true;
            }
            false
        };
        if legal {
            self.generate_legal(&mut visit);
        } else {
            self.generate_pseudo_legal(&mut visit);
        }
        if found {
            Ok(())
        } else {
            Err(err(IllegalMoveReason::NotAllowed))
        }
    }

    /// Plays `mv` without checking it: the fast path for moves that came from this position's
    /// own (legal or pseudo-legal) generator. A move that is not even pseudo-legal leaves the
    /// position in an unspecified (but memory-safe) state.
    #[inline]
    pub fn play_unchecked(&mut self, mv: Move) {
        let moved = match self.kind_on(mv.from) {
            Some(k) => k,
            None => return,
        };
        self.play_known(mv, moved);
    }

    /// [`Position::play_unchecked`] when the moving piece's kind is already known.
    #[inline]
    pub(crate) fn play_known(&mut self, mv: Move, moved: PieceKind) {
        let us = self.side;
        let them = !us;
        let (from, to) = (mv.from, mv.to);
        // Non-piece hash changes (e.p., castling); xor_piece updates self.hash for pieces.
        let mut delta = 0u64;

        self.halfmove += 1;
        if self.colors[them.index()].contains(to) {
            if let Some(cap) = self.kind_on(to) {
                self.xor_piece(them, cap, to);
                self.halfmove = 0;
            }
        }
        if let Some(ep) = self.ep {
            delta ^= zobrist::ep(ep);
        }
        let old_ep = self.ep;
        self.ep = None;

        match moved {
            PieceKind::Pawn => {
                self.halfmove = 0;
                self.xor_piece(us, PieceKind::Pawn, from);
                self.xor_piece(us, mv.promotion.unwrap_or(PieceKind::Pawn), to);
                if Some(to) == old_ep && from.file() != to.file() {
                    // En passant: the captured pawn stands beside the origin, on the target file.
                    let victim = Square::new(to.file(), from.rank());
                    self.xor_piece(them, PieceKind::Pawn, victim);
                } else if from.rank().abs_diff(to.rank()) == 2 {
                    let skipped = Square::new(from.file(), (from.rank() + to.rank()) / 2);
                    self.ep = Some(skipped);
                    delta ^= zobrist::ep(skipped);
                }
            }
            PieceKind::King if from.file().abs_diff(to.file()) == 2 => {
                self.xor_piece(us, PieceKind::King, from);
                self.xor_piece(us, PieceKind::King, to);
                let rank = from.rank();
                let (rook_from, rook_to) = if to.file() > from.file() {
                    (7, 5)
                } else {
                    (0, 3)
                };
                self.xor_piece(us, PieceKind::Rook, Square::new(rook_from, rank));
                self.xor_piece(us, PieceKind::Rook, Square::new(rook_to, rank));
            }
            kind => {
                self.xor_piece(us, kind, from);
                self.xor_piece(us, kind, to);
            }
        }

        if !self.castling.is_empty() {
            let rights = self.castling.after_touching(from).after_touching(to);
            delta ^= zobrist::castling(self.castling) ^ zobrist::castling(rights);
            self.castling = rights;
        }
        if us == Color::Black {
            self.fullmove += 1;
        }
        self.side = them;
        self.hash ^= delta ^ zobrist::side();
        self.refresh_caches();
    }

    /// Plays `mv` (which must be legal or pseudo-legal here) and returns what
    /// [`Position::unmake`] needs to restore this position exactly.
    pub fn make(&mut self, mv: Move) -> Undo {
        let moved = self.kind_on(mv.from).unwrap_or(PieceKind::Pawn);
        let captured = match self.kind_on(mv.to) {
            Some(k) => Some((k, mv.to)),
            None if moved == PieceKind::Pawn
                && Some(mv.to) == self.ep
                && mv.from.file() != mv.to.file() =>
            {
                Some((PieceKind::Pawn, Square::new(mv.to.file(), mv.from.rank())))
            }
            None => None,
        };
        let undo = Undo {
            mv,
            moved,
            captured,
            castling: self.castling,
            ep: self.ep,
            halfmove: self.halfmove,
            fullmove: self.fullmove,
            hash: self.hash,
            checkers: self.checkers,
            pinned: self.pinned,
        };
        self.play_known(mv, moved);
        undo
    }

    /// Takes back the move [`Position::make`] returned `undo` for.
    pub fn unmake(&mut self, undo: Undo) {
        let us = !self.side;
        let Undo { mv, moved, .. } = undo;
        let now = mv.promotion.unwrap_or(moved);
        self.xor_piece(us, now, mv.to);
        self.xor_piece(us, moved, mv.from);
        if moved == PieceKind::King && mv.from.file().abs_diff(mv.to.file()) == 2 {
            let rank = mv.from.rank();
            let (rook_from, rook_to) = if mv.to.file() > mv.from.file() {
                (7, 5)
            } else {
                (0, 3)
            };
            self.xor_piece(us, PieceKind::Rook, Square::new(rook_to, rank));
            self.xor_piece(us, PieceKind::Rook, Square::new(rook_from, rank));
        }
        if let Some((kind, sq)) = undo.captured {
            self.xor_piece(!us, kind, sq);
        }
        self.side = us;
        self.castling = undo.castling;
        self.ep = undo.ep;
        self.halfmove = undo.halfmove;
        self.fullmove = undo.fullmove;
        self.hash = undo.hash;
        self.checkers = undo.checkers;
        self.pinned = undo.pinned;
    }
}
