//! A classical position on any geometry: placement, side to move, castling rights, en-passant
//! square, clocks, an incrementally updated Zobrist hash, and cached checkers and pins.

mod fen;
mod play;
mod startpos;

pub use startpos::{STARTPOS_FEN, startpos_fen};

pub use fen::{FenError, FenField};
pub use play::{IllegalMove, IllegalMoveReason, Undo};

use crate::attacks::{
    between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
    rook_rays,
};
use crate::{Bitboard, CastlingRights, Color, Geometry, Piece, PieceKind, Square, zobrist};
use std::fmt;

/// A chess position on a [`Geometry`] (8x8 by default).
///
/// Positions are small `Copy` values: the fast path is copy-make
/// ([`Position::play_unchecked`] on a copy); [`Position::make`] / [`Position::unmake`] are there
/// for callers that prefer to undo in place.
///
/// ```
/// use qchess_board::{Move, Position};
/// let mut pos = Position::startpos();
/// assert_eq!(pos.legal_moves().len(), 20);
/// pos.play("e2e4".parse::<Move>().unwrap()).unwrap();
/// assert_eq!(pos.to_fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
/// assert!(pos.play("e2e4".parse().unwrap()).is_err());
/// ```
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Position {
    geometry: Geometry,
    colors: [Bitboard; 2],
    kinds: [Bitboard; 6],
    side: Color,
    castling: CastlingRights,
    ep: Option<Square>,
    halfmove: u32,
    fullmove: u32,
    hash: u64,
    checkers: Bitboard,
    pinned: Bitboard,
}

impl Position {
    /// An empty board of `geometry`, White to move, no rights, clocks 0 and 1.
    pub fn empty(geometry: Geometry) -> Position {
        Position {
            geometry,
            colors: [Bitboard::EMPTY; 2],
            kinds: [Bitboard::EMPTY; 6],
            side: Color::White,
            castling: CastlingRights::NONE,
            ep: None,
            halfmove: 0,
            fullmove: 1,
            hash: 0,
            checkers: Bitboard::EMPTY,
            pinned: Bitboard::EMPTY,
        }
    }

    /// The board size.
    #[inline]
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// Castling rights still held.
    #[inline]
    pub fn castling_rights(&self) -> CastlingRights {
        self.castling
    }

    /// The en-passant target square: the square a pawn skipped with its double step on the
    /// previous move (set after every double step, as FEN prints it, whether or not an enemy
    /// pawn can capture there).
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep
    }

    /// Plies since the last capture or pawn move.
    #[inline]
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove
    }

    /// Move number, starting at 1 and incremented after Black moves.
    #[inline]
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove
    }

    /// The Zobrist hash (pieces, side to move, castling rights, en-passant file), kept up to
    /// date incrementally by every move.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// All pieces of `color`.
    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.colors[color.index()]
    }

    /// All pieces of `kind`, both colours.
    #[inline]
    pub fn by_kind(&self, kind: PieceKind) -> Bitboard {
        self.kinds[kind.index()]
    }

    /// Pieces of `color` and `kind`.
    #[inline]
    pub fn pieces(&self, color: Color, kind: PieceKind) -> Bitboard {
        self.colors[color.index()] & self.kinds[kind.index()]
    }

    /// Every occupied square.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.colors[0] | self.colors[1]
    }

    /// The kind of the piece on `sq`, if any.
    #[inline]
    pub fn kind_on(&self, sq: Square) -> Option<PieceKind> {
        if !self.occupied().contains(sq) {
            return None;
        }
        PieceKind::ALL
            .into_iter()
            .find(|k| self.kinds[k.index()].contains(sq))
    }

    /// The colour of the piece on `sq`, if any.
    #[inline]
    pub fn color_on(&self, sq: Square) -> Option<Color> {
        if self.colors[0].contains(sq) {
            Some(Color::White)
        } else if self.colors[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// The piece on `sq`, if any.
    #[inline]
    pub fn piece_on(&self, sq: Square) -> Option<Piece> {
        Some(Piece::new(self.color_on(sq)?, self.kind_on(sq)?))
    }

    /// The square of `color`'s king (`None` when that side has no king, which only
    /// [`Position::from_fen_relaxed`] positions or pseudo-legal king captures produce).
    #[inline]
    pub fn king_square(&self, color: Color) -> Option<Square> {
        self.pieces(color, PieceKind::King).first()
    }

    /// Pieces of the side to move's opponent that give check.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }

    /// Whether the side to move is in check.
    #[inline]
    pub fn in_check(&self) -> bool {
        self.checkers.any()
    }

    /// Pieces of the side to move pinned to their king.
    #[inline]
    pub fn pinned(&self) -> Bitboard {
        self.pinned
    }

    /// Pieces of `by` that attack `sq` when exactly the `occupied` squares block sliders.
    /// The attackers are this position's pieces; `occupied` is any mask the caller chooses
    /// (the quantum layers ask "what if these squares were empty").
    ///
    /// ```
    /// use qchess_board::{Color, Position, Square};
    /// let pos = Position::startpos();
    /// assert!(pos.is_attacked(Square::F3, Color::White, pos.occupied()));
    /// assert!(!pos.is_attacked(Square::E4, Color::White, pos.occupied()));
    /// ```
    #[inline]
    pub fn attackers(&self, sq: Square, by: Color, occupied: Bitboard) -> Bitboard {
        let theirs = self.colors[by.index()];
        let k = &self.kinds;
        let diag = k[PieceKind::Bishop.index()] | k[PieceKind::Queen.index()];
        let ortho = k[PieceKind::Rook.index()] | k[PieceKind::Queen.index()];
        theirs
            & ((knight_attacks(sq) & k[PieceKind::Knight.index()])
                | (king_attacks(sq) & k[PieceKind::King.index()])
                | (pawn_attacks(!by, sq) & k[PieceKind::Pawn.index()])
                | (bishop_attacks(sq, occupied) & diag)
                | (rook_attacks(sq, occupied) & ortho))
    }

    /// Whether some piece of `by` attacks `sq` when exactly the `occupied` squares block.
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color, occupied: Bitboard) -> bool {
        self.attackers(sq, by, occupied).any()
    }

    /// Puts `piece` on `sq` (replacing what stood there), keeping hash and caches right.
    /// Editing the board drops the castling rights of that square (a king or rook start square)
    /// and any e.p. square, so the position stays consistent; use FEN for full control.
    /// Does nothing if `sq` is off this position's board.
    ///
    /// ```
    /// use qchess_board::{Piece, Position, Square};
    /// let mut pos = Position::startpos();
    /// pos.remove_piece(Square::H1);
    /// assert_eq!(pos.castling_rights().to_string(), "Qkq");
    /// pos.put_piece(Square::E4, Piece::from_fen_char('q').unwrap());
    /// assert_eq!(pos.hash(), pos.compute_hash());
    /// ```
    pub fn put_piece(&mut self, sq: Square, piece: Piece) {
        if !self.geometry.contains(sq) {
            return;
        }
        self.remove_piece(sq);
        self.xor_piece(piece.color, piece.kind, sq);
        self.after_edit(sq);
    }

    /// Removes whatever stands on `sq` and returns it, keeping hash and caches right (see
    /// [`Position::put_piece`] for castling rights and e.p.).
    pub fn remove_piece(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.piece_on(sq)?;
        self.xor_piece(piece.color, piece.kind, sq);
        self.after_edit(sq);
        Some(piece)
    }

    fn after_edit(&mut self, sq: Square) {
        let rights = self.castling.after_touching(sq);
        self.hash ^= zobrist::castling(self.castling) ^ zobrist::castling(rights);
        self.castling = rights;
        if let Some(ep) = self.ep.take() {
            self.hash ^= zobrist::ep(ep);
        }
        self.refresh_caches();
    }

    /// Toggles a piece on a square in the bitboards and the hash.
    #[inline(always)]
    pub(crate) fn xor_piece(&mut self, color: Color, kind: PieceKind, sq: Square) {
        let bb = sq.bitboard();
        self.colors[color.index()] ^= bb;
        self.kinds[kind.index()] ^= bb;
        self.hash ^= zobrist::piece(color, kind, sq);
    }

    /// The hash computed from scratch (tests compare it with the incremental one).
    pub fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for color in Color::ALL {
            for kind in PieceKind::ALL {
                for sq in self.pieces(color, kind) {
                    h ^= zobrist::piece(color, kind, sq);
                }
            }
        }
        if self.side == Color::Black {
            h ^= zobrist::side();
        }
        h ^= zobrist::castling(self.castling);
        if let Some(ep) = self.ep {
            h ^= zobrist::ep(ep);
        }
        h
    }

    /// Recomputes checkers and pinned pieces of the side to move.
    pub(crate) fn refresh_caches(&mut self) {
        let us = self.side;
        self.checkers = Bitboard::EMPTY;
        self.pinned = Bitboard::EMPTY;
        let Some(king) = self.king_square(us) else {
            return;
        };
        let theirs = self.colors[(!us).index()];
        let ours = self.colors[us.index()];
        let occ = ours | theirs;
        let k = &self.kinds;
        let mut checkers = theirs
            & ((knight_attacks(king) & k[PieceKind::Knight.index()])
                | (pawn_attacks(us, king) & k[PieceKind::Pawn.index()])
                // Only pseudo-legal play can put the kings side by side.
                | (king_attacks(king) & k[PieceKind::King.index()]));
        let diag = k[PieceKind::Bishop.index()] | k[PieceKind::Queen.index()];
        let ortho = k[PieceKind::Rook.index()] | k[PieceKind::Queen.index()];
        let snipers = theirs & ((bishop_rays(king) & diag) | (rook_rays(king) & ortho));
        let mut pinned = Bitboard::EMPTY;
        for s in snipers {
            let blockers = between(king, s) & occ;
            if blockers.is_empty() {
                checkers |= s.bitboard();
            } else if !blockers.has_many() {
                pinned |= blockers & ours;
            }
        }
        self.checkers = checkers;
        self.pinned = pinned;
    }

    /// A text diagram of the board (rank H at the top), then the FEN.
    pub fn diagram(&self) -> String {
        let g = self.geometry;
        let mut s = String::new();
        for rank in (0..g.height()).rev() {
            for file in 0..g.width() {
                let sq = Square::new(file, rank);
                s.push(self.piece_on(sq).map_or('.', Piece::fen_char));
                if file + 1 < g.width() {
                    s.push(' ');
                }
            }
            s.push('\n');
        }
        s.push_str(&self.to_fen());
        s
    }
}

impl fmt::Display for Position {
    /// The FEN of the position.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_fen())
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({}, {:?})", self.geometry, self.to_fen())
    }
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}
