//! The position: conventional pieces, indefinite pair instances, side to move, castling
//! rights, en passant square and move counters.

use crate::pair::{Diagonal, Facings, Mark, Pair, PairId};
use qchess_board::{Bitboard, Color, Geometry, Piece, PieceKind, Square};

/// What stands on a square: a conventional piece or one half of an indefinite pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Occupant {
    /// A conventional (definite) piece.
    Piece(Piece),
    /// The half of pair `pair` that carries `mark`.
    Half {
        /// The pair instance.
        pair: PairId,
        /// Its mark.
        mark: Mark,
    },
}

/// Castling rights (FIDE 3.8.2), lost for good once king or rook is involved in any move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CastlingRights {
    /// White king side.
    pub white_king: bool,
    /// White queen side.
    pub white_queen: bool,
    /// Black king side.
    pub black_king: bool,
    /// Black queen side.
    pub black_queen: bool,
}

impl CastlingRights {
    /// All four rights.
    pub const ALL: CastlingRights = CastlingRights {
        white_king: true,
        white_queen: true,
        black_king: true,
        black_queen: true,
    };

    /// The right of `color` on the king side (`true`) or queen side.
    pub fn get(&self, color: Color, king_side: bool) -> bool {
        match (color, king_side) {
            (Color::White, true) => self.white_king,
            (Color::White, false) => self.white_queen,
            (Color::Black, true) => self.black_king,
            (Color::Black, false) => self.black_queen,
        }
    }

    pub(crate) fn clear(&mut self, color: Color, king_side: bool) {
        match (color, king_side) {
            (Color::White, true) => self.white_king = false,
            (Color::White, false) => self.white_queen = false,
            (Color::Black, true) => self.black_king = false,
            (Color::Black, false) => self.black_queen = false,
        }
    }
}

/// A Niel's Chess position.
///
/// ```
/// use qchess_niels::Position;
/// use qchess_board::Geometry;
/// let p = Position::startpos(Geometry::STANDARD).unwrap();
/// assert_eq!(p.pairs().len(), 0); // Article 6.2.6: no indefinite pieces at the start
/// assert_eq!(p.to_string(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) geometry: Geometry,
    pub(crate) board: [Option<Occupant>; 64],
    pub(crate) pairs: Vec<Pair>,
    pub(crate) next_id: u32,
    pub(crate) side: Color,
    pub(crate) castling: CastlingRights,
    pub(crate) en_passant: Option<Square>,
    pub(crate) halfmove_clock: u32,
    pub(crate) fullmove_number: u32,
    /// After a remote collapse (competitive rule 3): the square of the piece that must move.
    pub(crate) must_move: Option<Square>,
}

impl Position {
    /// An empty board of `geometry`, White to move.
    pub fn empty(geometry: Geometry) -> Position {
        Position {
            geometry,
            board: [None; 64],
            pairs: Vec::new(),
            next_id: 0,
            side: Color::White,
            castling: CastlingRights::default(),
            en_passant: None,
            halfmove_clock: 0,
            fullmove_number: 1,
            must_move: None,
        }
    }

    /// The board's geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// Castling rights.
    pub fn castling(&self) -> CastlingRights {
        self.castling
    }

    /// The en passant square (the square a pawn or pawn half passed over), if any.
    pub fn en_passant(&self) -> Option<Square> {
        self.en_passant
    }

    /// Plies since the last pawn move or attempted capture (the 50-move rule).
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }

    /// The FIDE full-move number.
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove_number
    }

    /// After a remote collapse (competitive rule 3), the square of the conventional piece the
    /// same player must now move.
    pub fn must_move(&self) -> Option<Square> {
        self.must_move
    }

    /// What stands on `sq`.
    pub fn occupant(&self, sq: Square) -> Option<Occupant> {
        self.board[sq.index() as usize]
    }

    /// The piece on `sq` (a half reports its pair's piece).
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        match self.occupant(sq)? {
            Occupant::Piece(p) => Some(p),
            Occupant::Half { pair, .. } => Some(self.pair_ref(pair).piece),
        }
    }

    /// The pair with a half on `sq`, if any.
    pub fn pair_at(&self, sq: Square) -> Option<&Pair> {
        match self.occupant(sq)? {
            Occupant::Half { pair, .. } => Some(self.pair_ref(pair)),
            Occupant::Piece(_) => None,
        }
    }

    /// Whether the piece on `sq` is indefinite.
    pub fn is_indefinite(&self, sq: Square) -> bool {
        matches!(self.occupant(sq), Some(Occupant::Half { .. }))
    }

    /// All pair instances on the board, in creation order.
    pub fn pairs(&self) -> &[Pair] {
        &self.pairs
    }

    /// The pair with identity `id`, if it is on the board.
    pub fn pair(&self, id: PairId) -> Option<&Pair> {
        self.pairs.iter().find(|p| p.id == id)
    }

    /// The pair `id`, which the caller took from this position (an internal invariant).
    pub(crate) fn pair_ref(&self, id: PairId) -> &Pair {
        self.pairs
            .iter()
            .find(|p| p.id == id)
            .expect("pair id of this position")
    }

    pub(crate) fn pair_mut(&mut self, id: PairId) -> &mut Pair {
        self.pairs
            .iter_mut()
            .find(|p| p.id == id)
            .expect("pair id of this position")
    }

    /// The pairs that collapse together with `id` (its entangled group, or itself alone), in
    /// creation order; empty if `id` is not on the board.
    pub fn group_of(&self, id: PairId) -> Vec<PairId> {
        match self.pair(id).map(|p| p.diagonal) {
            None => Vec::new(),
            Some(None) => vec![id],
            Some(Some(d)) => self.group(d),
        }
    }

    /// The pairs whose marks lie on diagonal `d` (one entangled group; empty when free).
    pub fn group(&self, d: Diagonal) -> Vec<PairId> {
        self.pairs
            .iter()
            .filter(|p| p.diagonal == Some(d))
            .map(|p| p.id)
            .collect()
    }

    /// Every occupied square (indefinite halves occupy their squares, 6.2.2).
    pub fn occupied(&self) -> Bitboard {
        Square::ALL
            .iter()
            .filter(|s| self.board[s.index() as usize].is_some())
            .copied()
            .collect()
    }

    /// Squares holding pieces or halves of `color`.
    pub fn occupied_by(&self, color: Color) -> Bitboard {
        Square::ALL
            .iter()
            .filter(|s| self.piece_at(**s).is_some_and(|p| p.color == color))
            .copied()
            .collect()
    }

    /// Squares of the king of `color`: one square if conventional, two if indefinite, none if
    /// absent (only in a loaded position).
    pub fn king_squares(&self, color: Color) -> Vec<Square> {
        let king = Piece::new(color, PieceKind::King);
        Square::ALL
            .iter()
            .filter(|s| self.piece_at(**s) == Some(king))
            .copied()
            .collect()
    }

    /// Puts a conventional piece on `sq` (replacing whatever was there, which must not be a
    /// half: used by builders).
    pub(crate) fn put(&mut self, sq: Square, piece: Piece) {
        self.board[sq.index() as usize] = Some(Occupant::Piece(piece));
    }

    pub(crate) fn clear(&mut self, sq: Square) {
        self.board[sq.index() as usize] = None;
    }

    pub(crate) fn set(&mut self, sq: Square, occ: Option<Occupant>) {
        self.board[sq.index() as usize] = occ;
    }

    /// Adds a pair instance with a fresh identity and the lowest free fill pattern (6.3).
    pub(crate) fn add_pair(
        &mut self,
        piece: Piece,
        red: Square,
        blue: Square,
        facings: Facings,
        diagonal: Option<Diagonal>,
    ) -> PairId {
        let pattern = self.free_pattern(piece);
        self.add_pair_with_pattern(piece, red, blue, facings, diagonal, pattern)
    }

    pub(crate) fn add_pair_with_pattern(
        &mut self,
        piece: Piece,
        red: Square,
        blue: Square,
        facings: Facings,
        diagonal: Option<Diagonal>,
        pattern: u8,
    ) -> PairId {
        let id = PairId(self.next_id);
        self.next_id += 1;
        self.pairs.push(Pair {
            id,
            piece,
            red,
            blue,
            facings,
            diagonal,
            pattern,
        });
        self.set(
            red,
            Some(Occupant::Half {
                pair: id,
                mark: Mark::Red,
            }),
        );
        self.set(
            blue,
            Some(Occupant::Half {
                pair: id,
                mark: Mark::Blue,
            }),
        );
        id
    }

    pub(crate) fn free_pattern(&self, piece: Piece) -> u8 {
        (1..=u8::MAX)
            .find(|n| {
                !self
                    .pairs
                    .iter()
                    .any(|p| p.piece == piece && p.pattern == *n)
            })
            .unwrap_or(u8::MAX)
    }

    /// Replaces pair `id` by its conventional piece on the square of `mark` (a collapse). The
    /// other half's square becomes empty.
    pub(crate) fn collapse_pair(&mut self, id: PairId, mark: Mark) -> (Piece, Square) {
        let pair = self.pair_ref(id).clone();
        let keep = pair.square(mark);
        let gone = pair.square(mark.other());
        self.pairs.retain(|p| p.id != id);
        if self.occupant(gone)
            == Some(Occupant::Half {
                pair: id,
                mark: mark.other(),
            })
        {
            self.clear(gone);
        }
        if self.occupant(keep) == Some(Occupant::Half { pair: id, mark }) {
            self.put(keep, pair.piece);
        }
        (pair.piece, keep)
    }
}
