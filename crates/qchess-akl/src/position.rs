//! The true board: where every piece stands, whose turn it is, and the draw counter.

use crate::piece::{AklPiece, PieceState, TypePair};
use qchess_board::{
    Bitboard, Color, PieceKind, Square, bishop_attacks, king_attacks, knight_attacks, pawn_attacks,
    queen_attacks, rook_attacks,
};

/// Whether `sq` is a dark square (a1 is dark): pieces landing there regain their superposition.
///
/// ```
/// use qchess_akl::is_dark;
/// use qchess_board::Square;
/// assert!(is_dark(Square::A1) && !is_dark(Square::H1) && is_dark(Square::H8));
/// ```
pub fn is_dark(sq: Square) -> bool {
    (sq.file() + sq.rank()) % 2 == 0
}

/// Squares a piece of `kind` and `color` on `sq` attacks when `occupied` squares block.
pub fn attacks_of(kind: PieceKind, color: Color, sq: Square, occupied: Bitboard) -> Bitboard {
    match kind {
        PieceKind::Pawn => pawn_attacks(color, sq),
        PieceKind::Knight => knight_attacks(sq),
        PieceKind::Bishop => bishop_attacks(sq, occupied),
        PieceKind::Rook => rook_attacks(sq, occupied),
        PieceKind::Queen => queen_attacks(sq, occupied),
        PieceKind::King => king_attacks(sq),
    }
}

/// The complete, true state of the board between turns.
///
/// ```
/// use qchess_akl::AklPosition;
/// use qchess_board::{Color, Square};
/// let pos = AklPosition::startpos_seeded(7);
/// assert_eq!(pos.side_to_move, Color::White);
/// assert!(pos.piece(Square::E1).unwrap().is_king());
/// assert!(pos.piece(Square::D1).unwrap().is_quantum());
/// assert_eq!(pos.pieces().count(), 32);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AklPosition {
    /// The piece on each square, indexed by [`Square::index`].
    pub squares: [Option<AklPiece>; 64],
    /// The side whose turn it is.
    pub side_to_move: Color,
    /// Consecutive plies without a capture or a pawn move (100 draws).
    pub quiet_plies: u32,
    /// The move number, starting at 1 and incremented after Black's turn (as in FEN).
    pub fullmove: u32,
    /// Castling rights, `[color][side]` (side 0 = king side, 1 = queen side): the king and
    /// that corner's rook (the start piece of primary type rook) never touched nor moved.
    pub castling: [[bool; 2]; 2],
}

impl AklPosition {
    /// An empty board, White to move.
    pub fn empty() -> AklPosition {
        AklPosition {
            squares: [None; 64],
            side_to_move: Color::White,
            quiet_plies: 0,
            fullmove: 1,
            castling: [[false; 2]; 2],
        }
    }

    /// The piece on `sq`.
    pub fn piece(&self, sq: Square) -> Option<&AklPiece> {
        self.squares[sq.index() as usize].as_ref()
    }

    /// Mutable access to the piece on `sq`.
    pub(crate) fn piece_mut(&mut self, sq: Square) -> Option<&mut AklPiece> {
        self.squares[sq.index() as usize].as_mut()
    }

    /// Puts `piece` on `sq` (or empties it).
    pub fn set(&mut self, sq: Square, piece: Option<AklPiece>) {
        self.squares[sq.index() as usize] = piece;
    }

    /// Every piece with its square, a1 first.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, &AklPiece)> {
        Square::ALL
            .into_iter()
            .filter_map(|sq| self.piece(sq).map(|p| (sq, p)))
    }

    /// Occupied squares.
    pub fn occupied(&self) -> Bitboard {
        self.pieces().map(|(sq, _)| sq).collect()
    }

    /// Squares holding pieces of `color`.
    pub fn occupied_by(&self, color: Color) -> Bitboard {
        self.pieces()
            .filter(|(_, p)| p.color == color)
            .map(|(sq, _)| sq)
            .collect()
    }

    /// The square of `color`'s king, if it is on the board.
    pub fn king_square(&self, color: Color) -> Option<Square> {
        self.pieces()
            .find(|(_, p)| p.color == color && p.is_king())
            .map(|(sq, _)| sq)
    }

    /// Whether a classical piece of `by` attacks `sq`. Pieces in superposition attack nothing:
    /// they have no type until touched (docs/akl.md, "Check").
    pub fn attacked_by_classical(&self, sq: Square, by: Color) -> bool {
        let occupied = self.occupied();
        self.pieces().any(|(from, p)| {
            p.color == by
                && p.current()
                    .is_some_and(|kind| attacks_of(kind, by, from, occupied).contains(sq))
        })
    }

    /// The standard set-up with the given secondary types, listed for each side in the order
    /// a1, b1, c1, d1, f1, g1, h1, a2, ..., h2 (White) and a8, b8, c8, d8, f8, g8, h8, a7, ...,
    /// h7 (Black). Each list must be a permutation of the 15 standard non-king types.
    pub fn startpos_with(
        white: &[PieceKind; 15],
        black: &[PieceKind; 15],
    ) -> Result<AklPosition, crate::AklError> {
        let mut pos = AklPosition::empty();
        for (color, secondaries) in [(Color::White, white), (Color::Black, black)] {
            if !is_permutation_of_standard(secondaries) {
                return Err(crate::AklError::Position {
                    message: format!(
                        "the secondary types of {} must be a permutation of the 15 standard \
                         non-king types (8 pawns, 2 knights, 2 bishops, 2 rooks, 1 queen)",
                        color_name(color)
                    ),
                });
            }
            for (i, sq) in setup_squares(color).into_iter().enumerate() {
                let primary = standard_type(sq);
                let pair = TypePair {
                    primary,
                    secondary: secondaries[i],
                };
                pos.set(sq, Some(AklPiece::quantum(color, pair)));
            }
            let king_sq = Square::new(4, home_rank(color));
            pos.set(king_sq, Some(AklPiece::king(color)));
            pos.castling[color.index()] = [true, true];
        }
        Ok(pos)
    }

    /// The standard set-up with both sides' secondary types drawn by `rng` (White first): each
    /// side's list is a uniformly random permutation of its 15 standard types.
    pub fn startpos_random<R: rand::Rng + ?Sized>(rng: &mut R) -> AklPosition {
        let white = random_secondaries(rng);
        let black = random_secondaries(rng);
        AklPosition::startpos_with(&white, &black).expect("a shuffle is a permutation")
    }

    /// [`AklPosition::startpos_random`] with `ChaCha8Rng::seed_from_u64(seed)`: the same seed
    /// gives the same set-up on every platform.
    pub fn startpos_seeded(seed: u64) -> AklPosition {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        AklPosition::startpos_random(&mut rng)
    }
}

/// The 15 start squares of `color`'s non-king pieces, in set-up order.
pub(crate) fn setup_squares(color: Color) -> [Square; 15] {
    let back = home_rank(color);
    let pawns = if color == Color::White { 1 } else { 6 };
    let mut out = [Square::A1; 15];
    let mut i = 0;
    for file in [0u8, 1, 2, 3, 5, 6, 7] {
        out[i] = Square::new(file, back);
        i += 1;
    }
    for file in 0..8 {
        out[i] = Square::new(file, pawns);
        i += 1;
    }
    out
}

/// The back rank of `color` (0 for White, 7 for Black).
pub(crate) fn home_rank(color: Color) -> u8 {
    if color == Color::White { 0 } else { 7 }
}

/// The standard type on a start square of a non-king piece.
fn standard_type(sq: Square) -> PieceKind {
    if sq.rank() == 1 || sq.rank() == 6 {
        return PieceKind::Pawn;
    }
    match sq.file() {
        0 | 7 => PieceKind::Rook,
        1 | 6 => PieceKind::Knight,
        2 | 5 => PieceKind::Bishop,
        3 => PieceKind::Queen,
        _ => PieceKind::King,
    }
}

/// The 15 standard non-king types in set-up order.
pub(crate) fn standard_types() -> [PieceKind; 15] {
    setup_squares(Color::White).map(standard_type)
}

fn is_permutation_of_standard(list: &[PieceKind; 15]) -> bool {
    let mut a = *list;
    let mut b = standard_types();
    a.sort();
    b.sort();
    a == b
}

/// A uniformly random permutation of the 15 standard types, by Fisher-Yates with `u32` draws
/// (platform independent, unlike `usize` draws).
fn random_secondaries<R: rand::Rng + ?Sized>(rng: &mut R) -> [PieceKind; 15] {
    let mut list = standard_types();
    for i in (1..list.len()).rev() {
        let j = rng.random_range(0..=i as u32) as usize;
        list.swap(i, j);
    }
    list
}

/// "White" or "Black".
pub(crate) fn color_name(color: Color) -> &'static str {
    match color {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// The state a piece takes on landing on `sq` after a move: kings and light squares keep the
/// type it moved as; a dark square restores the superposition.
pub(crate) fn landing_state(piece: &AklPiece, moved_as: PieceKind, sq: Square) -> PieceState {
    if !piece.is_king() && is_dark(sq) {
        PieceState::Quantum
    } else {
        PieceState::Classical(moved_as)
    }
}

impl AklPosition {
    /// Clears the castling rights that the piece on `sq` carries: both of a king on its home
    /// square, one of a corner rook. Touching, moving or capturing it calls this.
    pub(crate) fn lose_castling_rights(&mut self, sq: Square) {
        for color in Color::ALL {
            if sq == Square::new(4, home_rank(color)) {
                self.castling[color.index()] = [false, false];
            }
            for (i, corner) in [7u8, 0].into_iter().enumerate() {
                if sq == Square::new(corner, home_rank(color)) {
                    self.castling[color.index()][i] = false;
                }
            }
        }
    }
}
