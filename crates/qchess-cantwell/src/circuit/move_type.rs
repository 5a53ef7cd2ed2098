//! The paper's move types and variants, with their long-form names (rules-notes D7).

use std::fmt;

/// The move types of the paper's section 8, named as in the long move form.
///
/// ```
/// use qchess_cantwell::circuit::MoveType;
/// assert_eq!(MoveType::SplitJump.name(), "SPLIT_JUMP");
/// assert_eq!(MoveType::from_name("PAWN_EP"), Some(MoveType::PawnEp));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MoveType {
    /// Jump (sections 8.1-8.3): knights, kings, single steps; iSwap(s, t).
    Jump,
    /// Slide (sections 8.4-8.6): bishops, rooks, queens; iSwap(s, t) controlled on the path.
    Slide,
    /// Split Jump (section 8.7, eq. 7).
    SplitJump,
    /// Split Slide (section 8.9, eq. 9).
    SplitSlide,
    /// Merge Jump (section 8.8, eq. 10).
    MergeJump,
    /// Merge Slide (section 8.10, eq. 12).
    MergeSlide,
    /// Pawn Step (sections 8.11.1-8.11.2).
    PawnStep,
    /// Pawn Two Step (sections 8.11.3-8.11.4).
    PawnTwoStep,
    /// Pawn Capture (section 8.11.5).
    PawnCapture,
    /// En passant (sections 8.11.6-8.11.8).
    PawnEp,
    /// King side castling (section 8.12.1).
    KsCastle,
    /// Queen side castling (section 8.12.2).
    QsCastle,
}

impl MoveType {
    /// Every move type, in declaration order.
    pub const ALL: [MoveType; 12] = [
        MoveType::Jump,
        MoveType::Slide,
        MoveType::SplitJump,
        MoveType::SplitSlide,
        MoveType::MergeJump,
        MoveType::MergeSlide,
        MoveType::PawnStep,
        MoveType::PawnTwoStep,
        MoveType::PawnCapture,
        MoveType::PawnEp,
        MoveType::KsCastle,
        MoveType::QsCastle,
    ];

    /// The long-form name (`JUMP`, `SPLIT_SLIDE`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            MoveType::Jump => "JUMP",
            MoveType::Slide => "SLIDE",
            MoveType::SplitJump => "SPLIT_JUMP",
            MoveType::SplitSlide => "SPLIT_SLIDE",
            MoveType::MergeJump => "MERGE_JUMP",
            MoveType::MergeSlide => "MERGE_SLIDE",
            MoveType::PawnStep => "PAWN_STEP",
            MoveType::PawnTwoStep => "PAWN_TWO_STEP",
            MoveType::PawnCapture => "PAWN_CAPTURE",
            MoveType::PawnEp => "PAWN_EP",
            MoveType::KsCastle => "KS_CASTLE",
            MoveType::QsCastle => "QS_CASTLE",
        }
    }

    /// The move type with this long-form name (ASCII case-insensitive).
    pub fn from_name(name: &str) -> Option<MoveType> {
        MoveType::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// Split moves: one source, two targets (`s^t1t2`).
    pub const fn is_split(self) -> bool {
        matches!(self, MoveType::SplitJump | MoveType::SplitSlide)
    }

    /// Merge moves: two sources, one target (`s1s2^t`).
    pub const fn is_merge(self) -> bool {
        matches!(self, MoveType::MergeJump | MoveType::MergeSlide)
    }

    /// Moves whose squares part may carry a promotion letter (a pawn reaching the last rank).
    pub const fn may_promote(self) -> bool {
        matches!(self, MoveType::PawnStep | MoveType::PawnCapture)
    }

    /// Whether `variant` is a move of the paper for this type. Only `PAWN_STEP:CAPTURE` and
    /// `PAWN_TWO_STEP:CAPTURE` are not (a pawn never captures straight ahead; rules-notes D7).
    pub const fn accepts(self, variant: Variant) -> bool {
        !matches!(
            (self, variant),
            (MoveType::PawnStep | MoveType::PawnTwoStep, Variant::Capture)
        )
    }

    /// Whether this type with `variant` starts with a two-outcome measurement (rules-notes D7):
    /// blocked variants measure "target empty", capture variants "source occupied" (eq. 23b
    /// for the Capture Slide), castling "the squares between empty"; splits, merges and the
    /// basic jump, slide, steps and Standard E.P. measure nothing.
    pub const fn measures(self, variant: Variant) -> bool {
        match self {
            MoveType::SplitJump | MoveType::SplitSlide => false,
            MoveType::MergeJump | MoveType::MergeSlide => false,
            MoveType::PawnCapture | MoveType::KsCastle | MoveType::QsCastle => true,
            MoveType::Jump
            | MoveType::Slide
            | MoveType::PawnStep
            | MoveType::PawnTwoStep
            | MoveType::PawnEp => !matches!(variant, Variant::Basic),
        }
    }
}

impl fmt::Display for MoveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The variant of a move: what the target holds, as the classical layer sees it
/// (rules-notes D10). The long form calls them `BASIC`, `EXCLUDED` and `CAPTURE`.
///
/// ```
/// use qchess_cantwell::circuit::Variant;
/// assert_eq!(Variant::Excluded.name(), "EXCLUDED");
/// assert_eq!(Variant::from_name("capture"), Some(Variant::Capture));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// The paper's "standard" move: the target is empty or holds the same piece.
    Basic,
    /// The paper's "blocked" move: the target holds another piece that cannot be captured.
    Excluded,
    /// The paper's "capture" move: the target holds an opponent's piece.
    Capture,
}

impl Variant {
    /// Every variant, in declaration order.
    pub const ALL: [Variant; 3] = [Variant::Basic, Variant::Excluded, Variant::Capture];

    /// The long-form name (`BASIC`, `EXCLUDED`, `CAPTURE`).
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Basic => "BASIC",
            Variant::Excluded => "EXCLUDED",
            Variant::Capture => "CAPTURE",
        }
    }

    /// The variant with this long-form name (ASCII case-insensitive).
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
