//! One layer-1 move: a move type, a variant and its squares, with the derived squares
//! (paths, en passant square, castling rook) that its circuit touches.

use super::error::CircuitError;
use super::move_type::{MoveType, Variant};
use qchess_board::{Square, between};

/// A move of the occupancy layer: what the paper's section 8 circuits need, with no piece
/// types and no legality (the classical layer decides which moves are possible).
///
/// Squares: Jump, Slide and the pawn moves go `source -> target`; a split goes
/// `source -> target, target2`; a merge goes `source, source2 -> target`; castling gives the
/// king's squares (`e1g1`) and the rook's squares are derived; en passant captures the pawn
/// on the target's file and the source's rank (rules-notes D6).
///
/// The long form (rules-notes D7) is `<squares>[.m0|.m1]:<TYPE>:<VARIANT>`:
///
/// ```
/// use qchess_cantwell::circuit::{MoveType, OccupancyMove, Variant};
/// use qchess_board::Square;
/// let mv: OccupancyMove = "b1^a3c3:SPLIT_JUMP:BASIC".parse().unwrap();
/// assert_eq!(mv, OccupancyMove::split(MoveType::SplitJump, Square::B1, Square::A3, Square::C3));
/// assert_eq!(mv.to_string(), "b1^a3c3:SPLIT_JUMP:BASIC");
/// let capture: OccupancyMove = "a1c1.m1:SLIDE:CAPTURE".parse().unwrap();
/// assert_eq!(capture.variant, Variant::Capture);
/// assert_eq!(capture.forced, Some(true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OccupancyMove {
    /// Which circuit of section 8.
    pub move_type: MoveType,
    /// Basic (standard), Excluded (blocked) or Capture.
    pub variant: Variant,
    /// The moving piece's square (the first source of a merge).
    pub source: Square,
    /// The second source of a merge.
    pub source2: Option<Square>,
    /// The target (the first target of a split).
    pub target: Square,
    /// The second target of a split.
    pub target2: Option<Square>,
    /// The promotion letter of the long form (`q`, `r`, `b`, `n`); no effect on occupancy.
    pub promotion: Option<char>,
    /// A forced measurement outcome (`.m0` / `.m1`); `None` draws it from the RNG.
    pub forced: Option<bool>,
}

/// The squares of a castling move (rules-notes D5): king and rook sources and targets and,
/// on the queen side, the b-file square whose occupancy controls the move (eq. 36, Fig. 36).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CastlingSquares {
    /// The king's source (e1).
    pub king_from: Square,
    /// The king's target (g1 or c1).
    pub king_to: Square,
    /// The rook's source (h1 or a1).
    pub rook_from: Square,
    /// The rook's target (f1 or d1).
    pub rook_to: Square,
    /// Queen side only: the square between the rook and the king's target (b1).
    pub control: Option<Square>,
}

impl OccupancyMove {
    /// A move with one source and one target (jump, slide, pawn moves, castling).
    pub const fn new(
        move_type: MoveType,
        variant: Variant,
        source: Square,
        target: Square,
    ) -> Self {
        OccupancyMove {
            move_type,
            variant,
            source,
            source2: None,
            target,
            target2: None,
            promotion: None,
            forced: None,
        }
    }

    /// A split `source^target target2` (variant Basic: splits have one circuit).
    pub const fn split(
        move_type: MoveType,
        source: Square,
        target: Square,
        target2: Square,
    ) -> Self {
        let mut mv = OccupancyMove::new(move_type, Variant::Basic, source, target);
        mv.target2 = Some(target2);
        mv
    }

    /// A merge `source source2^target` (variant Basic: merges have one circuit).
    pub const fn merge(
        move_type: MoveType,
        source: Square,
        source2: Square,
        target: Square,
    ) -> Self {
        let mut mv = OccupancyMove::new(move_type, Variant::Basic, source, target);
        mv.source2 = Some(source2);
        mv
    }

    /// The same move with a forced measurement outcome (`.m0` / `.m1`).
    pub const fn with_forced(mut self, outcome: bool) -> Self {
        self.forced = Some(outcome);
        self
    }

    /// The same move with a promotion letter (kept for the long form only).
    pub const fn with_promotion(mut self, letter: char) -> Self {
        self.promotion = Some(letter);
        self
    }

    /// Whether the move starts with a two-outcome measurement (rules-notes D7).
    pub const fn measures(&self) -> bool {
        self.move_type.measures(self.variant)
    }

    /// The squares strictly between `source` and `target` (empty when they share no line).
    /// Only slides, pawn two-steps, split and merge slides use it; see [`Self::paths`].
    pub fn path(&self) -> u64 {
        between(self.source, self.target).0
    }

    /// The two path masks of a split or merge slide, each leaving out the move's other target
    /// (split) or other source (merge) (rules-notes D2); `(0, 0)` for other moves.
    pub fn paths(&self) -> (u64, u64) {
        match (self.move_type, self.source2, self.target2) {
            (MoveType::SplitSlide, _, Some(t2)) => {
                let t1 = self.target;
                let s = self.source;
                (between(s, t1).0 & !bit(t2), between(s, t2).0 & !bit(t1))
            }
            (MoveType::MergeSlide, Some(s2), _) => {
                let s1 = self.source;
                let t = self.target;
                (between(s1, t).0 & !bit(s2), between(s2, t).0 & !bit(s1))
            }
            _ => (0, 0),
        }
    }

    /// En passant: the captured pawn's square, on the target's file and the source's rank
    /// (rules-notes D6). `None` for other moves.
    pub fn ep_square(&self) -> Option<Square> {
        (self.move_type == MoveType::PawnEp)
            .then(|| Square::new(self.target.file(), self.source.rank()))
    }

    /// Castling: the squares derived from the king's move, or `None` when this is not castling
    /// or the king's squares are not two files apart on one rank with the rook's square on the
    /// board. King side: rook on the file right of the king's target; queen side: rook two files
    /// left of it.
    pub fn castling_squares(&self) -> Option<CastlingSquares> {
        let (s, t) = (self.source, self.target);
        if s.rank() != t.rank() {
            return None;
        }
        let rank = s.rank();
        match self.move_type {
            MoveType::KsCastle if t.file() == s.file() + 2 && t.file() < 7 => {
                Some(CastlingSquares {
                    king_from: s,
                    king_to: t,
                    rook_from: Square::new(t.file() + 1, rank),
                    rook_to: Square::new(s.file() + 1, rank),
                    control: None,
                })
            }
            MoveType::QsCastle if s.file() == t.file() + 2 && t.file() >= 2 => {
                Some(CastlingSquares {
                    king_from: s,
                    king_to: t,
                    rook_from: Square::new(t.file() - 2, rank),
                    rook_to: Square::new(t.file() + 1, rank),
                    control: Some(Square::new(t.file() - 1, rank)),
                })
            }
            _ => None,
        }
    }

    /// Checks that the squares fit the move type and that the type accepts the variant:
    /// the shape (split, merge or two squares), distinct squares, castling and en passant
    /// geometry, promotion only on pawn steps and pawn captures, and no `.m0` on a move that
    /// measures nothing.
    ///
    /// ```
    /// use qchess_cantwell::circuit::{MoveType, OccupancyMove, Variant};
    /// use qchess_board::Square;
    /// let bad = OccupancyMove::new(MoveType::PawnStep, Variant::Capture, Square::A2, Square::A3);
    /// assert!(bad.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), CircuitError> {
        let ty = self.move_type;
        if !ty.accepts(self.variant) {
            return Err(CircuitError::invalid(format!(
                "{}:{} is not a move of the paper (pawns never capture straight ahead)",
                ty, self.variant
            )));
        }
        if ty.is_split() != self.target2.is_some() {
            return Err(CircuitError::invalid(if ty.is_split() {
                format!("{ty} needs a second target")
            } else {
                format!("{ty} has no second target")
            }));
        }
        if ty.is_merge() != self.source2.is_some() {
            return Err(CircuitError::invalid(if ty.is_merge() {
                format!("{ty} needs a second source")
            } else {
                format!("{ty} has no second source")
            }));
        }
        let squares = [
            Some(self.source),
            self.source2,
            Some(self.target),
            self.target2,
        ];
        let mut seen = 0u64;
        for sq in squares.into_iter().flatten() {
            if seen & bit(sq) != 0 {
                return Err(CircuitError::invalid(format!("square {sq} is used twice")));
            }
            seen |= bit(sq);
        }
        if let Some(letter) = self.promotion {
            if !ty.may_promote() {
                return Err(CircuitError::invalid(format!("{ty} cannot promote")));
            }
            if !matches!(letter.to_ascii_lowercase(), 'q' | 'r' | 'b' | 'n') {
                return Err(CircuitError::invalid(format!(
                    "promotion letter '{letter}' is not one of q, r, b, n"
                )));
            }
        }
        if ty == MoveType::PawnEp
            && (self.source.file() == self.target.file()
                || self.source.rank() == self.target.rank())
        {
            return Err(CircuitError::invalid(format!(
                "en passant {}{} must change both file and rank",
                self.source, self.target
            )));
        }
        if matches!(ty, MoveType::KsCastle | MoveType::QsCastle)
            && self.castling_squares().is_none()
        {
            return Err(CircuitError::invalid(format!(
                "{ty} {}{}: the king must move two files {} on one rank, with the rook's square on the board",
                self.source,
                self.target,
                if ty == MoveType::KsCastle {
                    "right"
                } else {
                    "left"
                }
            )));
        }
        if self.forced == Some(false) && !self.measures() {
            return Err(CircuitError::NoMeasurement);
        }
        Ok(())
    }
}

/// The bitboard bit of a square.
pub(crate) const fn bit(sq: Square) -> u64 {
    1u64 << sq.index()
}
