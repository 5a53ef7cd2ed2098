//! Pieces of Akl-style quantum chess: a colour, a pair of types, a quantum or classical state,
//! and what both players have seen of the pair.

use qchess_board::{Color, Fraction, PieceKind};

/// The two types a non-king piece is a superposition of (both `King` for a king).
///
/// The primary type is the standard type of the piece's starting square (or the type chosen at
/// promotion); the secondary type was drawn at set-up (or is the pawn's other type).
///
/// ```
/// use qchess_akl::TypePair;
/// use qchess_board::PieceKind::{Knight, Pawn};
/// let pair = TypePair::new(Pawn, Knight).unwrap();
/// assert!(pair.contains(Knight));
/// assert_eq!(pair.other(Pawn), Knight);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct TypePair {
    /// The first type: standard start type, or the type chosen at promotion.
    pub primary: PieceKind,
    /// The second type.
    pub secondary: PieceKind,
}

impl TypePair {
    /// The pair of a king: a king is always a king.
    pub const KING: TypePair = TypePair {
        primary: PieceKind::King,
        secondary: PieceKind::King,
    };

    /// A non-king pair; `None` when either type is `King` (kings never share a superposition).
    pub fn new(primary: PieceKind, secondary: PieceKind) -> Option<TypePair> {
        if primary == PieceKind::King || secondary == PieceKind::King {
            None
        } else {
            Some(TypePair { primary, secondary })
        }
    }

    /// Whether `kind` is one of the two types.
    pub fn contains(self, kind: PieceKind) -> bool {
        self.primary == kind || self.secondary == kind
    }

    /// The type of slot `secondary` (false: primary, true: secondary).
    pub fn get(self, secondary: bool) -> PieceKind {
        if secondary {
            self.secondary
        } else {
            self.primary
        }
    }

    /// The type that is not `kind` (the primary when `kind` is the secondary; when both types
    /// are equal, that type).
    pub fn other(self, kind: PieceKind) -> PieceKind {
        if self.primary == kind {
            self.secondary
        } else {
            self.primary
        }
    }

    /// Both types, primary first.
    pub fn types(self) -> [PieceKind; 2] {
        [self.primary, self.secondary]
    }
}

/// Whether a piece is in its two-type superposition or collapsed to one type.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum PieceState {
    /// In superposition of its pair: a touch collapses it to either type with probability 1/2.
    Quantum,
    /// Collapsed (or always classical, for a king) to this type.
    Classical(PieceKind),
}

/// A set of piece types, as a bit mask over [`PieceKind::index`]: what has been revealed.
///
/// ```
/// use qchess_akl::TypeSet;
/// use qchess_board::PieceKind::{Pawn, Queen};
/// let s = TypeSet::EMPTY.with(Pawn).with(Queen);
/// assert!(s.contains(Queen) && s.len() == 2);
/// assert_eq!(s.iter().collect::<Vec<_>>(), vec![Pawn, Queen]);
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TypeSet(pub u8);

impl TypeSet {
    /// No type.
    pub const EMPTY: TypeSet = TypeSet(0);

    /// This set plus `kind`.
    pub fn with(self, kind: PieceKind) -> TypeSet {
        TypeSet(self.0 | (1 << kind.index()))
    }

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: PieceKind) -> bool {
        self.0 & (1 << kind.index()) != 0
    }

    /// The number of types in the set.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The types in the set, pawn first.
    pub fn iter(self) -> impl Iterator<Item = PieceKind> {
        PieceKind::ALL
            .into_iter()
            .filter(move |k| self.contains(*k))
    }
}

/// One piece on the board, with the full truth about it.
///
/// ```
/// use qchess_akl::{AklPiece, PieceState, TypePair};
/// use qchess_board::{Color, PieceKind::{Bishop, Queen}};
/// let p = AklPiece::quantum(Color::White, TypePair::new(Queen, Bishop).unwrap());
/// assert!(p.is_quantum());
/// assert_eq!(p.current(), None);
/// assert!(p.known.contains(Queen) && !p.known.contains(Bishop));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AklPiece {
    /// Its side.
    pub color: Color,
    /// Its two types ([`TypePair::KING`] for a king).
    pub pair: TypePair,
    /// Superposed or collapsed.
    pub state: PieceState,
    /// The types of its pair that both players have seen: the primary type from the start (the
    /// standard set-up is public) and every type revealed by a collapse or a promotion.
    pub known: TypeSet,
}

impl AklPiece {
    /// The types a touch (or a capture) of this piece can reveal, each with its exact
    /// probability: a piece in superposition collapses to
    /// its primary or its secondary type with probability 1/2 each (the engine's coin), so a
    /// pair of one type twice gives that type with probability 1; a classical piece is its
    /// type with probability 1. Types in primary, secondary order.
    ///
    /// ```
    /// use qchess_akl::{AklPiece, PieceState, TypePair, TypeSet};
    /// use qchess_board::{Color, Fraction, PieceKind};
    /// let pair = TypePair::new(PieceKind::Pawn, PieceKind::Queen).unwrap();
    /// let p = AklPiece { color: Color::White, pair, state: PieceState::Quantum, known: TypeSet::EMPTY };
    /// let half = Fraction::new(1, 2);
    /// assert_eq!(p.collapse_chances(), vec![(PieceKind::Pawn, half), (PieceKind::Queen, half)]);
    /// ```
    pub fn collapse_chances(&self) -> Vec<(PieceKind, Fraction)> {
        match self.state {
            PieceState::Classical(k) => vec![(k, Fraction::ONE)],
            PieceState::Quantum if self.pair.primary == self.pair.secondary => {
                vec![(self.pair.primary, Fraction::ONE)]
            }
            PieceState::Quantum => {
                let half = Fraction::new(1, 2);
                vec![(self.pair.primary, half), (self.pair.secondary, half)]
            }
        }
    }

    /// A king of `color`.
    pub fn king(color: Color) -> AklPiece {
        AklPiece {
            color,
            pair: TypePair::KING,
            state: PieceState::Classical(PieceKind::King),
            known: TypeSet::EMPTY.with(PieceKind::King),
        }
    }

    /// A fresh quantum piece: only its primary type is public.
    pub fn quantum(color: Color, pair: TypePair) -> AklPiece {
        AklPiece {
            color,
            pair,
            state: PieceState::Quantum,
            known: TypeSet::EMPTY.with(pair.primary),
        }
    }

    /// Whether this is a king.
    pub fn is_king(&self) -> bool {
        self.pair.primary == PieceKind::King
    }

    /// Whether it is in superposition.
    pub fn is_quantum(&self) -> bool {
        self.state == PieceState::Quantum
    }

    /// Its type when classical, `None` when in superposition.
    pub fn current(&self) -> Option<PieceKind> {
        match self.state {
            PieceState::Quantum => None,
            PieceState::Classical(k) => Some(k),
        }
    }

    /// Whether every type the piece can be is public (its pair has two distinct known types,
    /// or it is a king).
    pub fn pair_public(&self) -> bool {
        self.is_king() || self.known.len() == 2
    }
}
