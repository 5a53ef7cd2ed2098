//! Basis keys, gate controls and measurement predicates (all on logical board qubits).

use crate::error::SimError;
use std::cmp::Ordering;

/// A full basis key: 64 board (occupancy) bits plus the capture-ancilla bits.
///
/// Bit `i` of `board` is board qubit `i`; bit `j` of `ancillas` is the ancilla created by the
/// `j`-th capture. Keys order by ancillas first, then board: the canonical order of
/// [`State::entries`](crate::State::entries).
///
/// ```
/// use qchess_sim::Key;
/// let a = Key { board: 5, ancillas: 0 };
/// let b = Key { board: 1, ancillas: 1 };
/// assert!(a < b);
/// assert_eq!(Key::board(3), Key { board: 3, ancillas: 0 });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Key {
    /// Board occupancy bits (bit `i` = qubit `i`).
    pub board: u64,
    /// Capture-ancilla bits (bit `j` = ancilla `j`).
    pub ancillas: u128,
}

impl Key {
    /// A key with no ancilla set.
    pub const fn board(board: u64) -> Self {
        Self { board, ancillas: 0 }
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.ancillas, self.board).cmp(&(other.ancillas, other.board))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Controls of a gate: it acts only on basis states where every `zeros` bit is 0 and every
/// `ones` bit is 1. Control bits must be disjoint from the qubits the gate acts on.
///
/// ```
/// use qchess_sim::Controls;
/// assert_eq!(Controls::empty_path(0b110), Controls { zeros: 0b110, ones: 0 });
/// assert_eq!(Controls::NONE, Controls { zeros: 0, ones: 0 });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Controls {
    /// Bits that must be 0.
    pub zeros: u64,
    /// Bits that must be 1.
    pub ones: u64,
}

impl Controls {
    /// No control: the gate acts everywhere.
    pub const NONE: Controls = Controls { zeros: 0, ones: 0 };

    /// A slide's control: every square of `mask` (the path) is empty.
    pub const fn empty_path(mask: u64) -> Controls {
        Controls {
            zeros: mask,
            ones: 0,
        }
    }

    /// All bits this control reads.
    pub const fn mask(self) -> u64 {
        self.zeros | self.ones
    }
}

/// A yes/no question about the board bits of a basis state (ancillas are not read).
///
/// ```
/// use qchess_sim::Predicate;
/// assert!(Predicate::One(3).holds(0b1000));
/// assert!(Predicate::AllZero(0b0110).holds(0b1001));
/// assert!(Predicate::Equals { mask: 0b11, value: 0b10 }.holds(0b110));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Predicate {
    /// Qubit `q` is 1 (the square is occupied).
    One(u8),
    /// Every bit of the mask is 0 (all squares empty).
    AllZero(u64),
    /// `board & mask == value`.
    Equals {
        /// Bits read.
        mask: u64,
        /// Their required values (must be a subset of `mask`).
        value: u64,
    },
}

impl Predicate {
    /// Whether the predicate holds for a board key. An out-of-range qubit never holds.
    pub fn holds(self, board: u64) -> bool {
        match self.mask_value() {
            Some((m, v)) => board & m == v,
            None => false,
        }
    }

    /// The predicate as `board & mask == value`, or `None` if it is malformed
    /// (qubit out of range, value outside mask).
    pub fn mask_value(self) -> Option<(u64, u64)> {
        match self {
            Predicate::One(q) if q < 64 => Some((1 << q, 1 << q)),
            Predicate::One(_) => None,
            Predicate::AllZero(m) => Some((m, 0)),
            Predicate::Equals { mask, value } if value & !mask == 0 => Some((mask, value)),
            Predicate::Equals { .. } => None,
        }
    }

    /// [`Predicate::mask_value`], or the error that names what is malformed.
    pub(crate) fn checked(self) -> Result<(u64, u64), SimError> {
        match self {
            Predicate::One(q) if q >= 64 => Err(SimError::QubitOutOfRange { qubit: q }),
            Predicate::Equals { mask, value } if value & !mask != 0 => {
                Err(SimError::InvalidPredicate { mask, value })
            }
            _ => self
                .mask_value()
                .ok_or(SimError::InvalidPredicate { mask: 0, value: 0 }),
        }
    }
}

/// What [`State::from_amplitudes`](crate::State::from_amplitudes) does with the norm.
///
/// ```
/// use qchess_sim::{Key, Normalization, State};
/// use num_complex::Complex;
/// let s = State::<f64>::from_amplitudes(vec![(Key::board(1), Complex::new(2.0, 0.0))],
///     Normalization::Renormalize).unwrap();
/// assert!((s.norm_sqr() - 1.0).abs() < 1e-15);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Normalization {
    /// Scale the amplitudes to norm 1.
    Renormalize,
    /// Refuse amplitudes whose squared norm differs from 1 by more than
    /// [`Amplitude::UNIT_TOLERANCE`](crate::Amplitude::UNIT_TOLERANCE).
    RequireUnit,
}

/// Internal condition on physical keys: `k & mask == value` and, if `any != 0`,
/// `k & any != 0` (some square of `any` occupied).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Cond {
    pub mask: u64,
    pub value: u64,
    pub any: u64,
}

impl Cond {
    /// The condition that holds for every key (for the tests; gates build theirs).
    #[cfg(test)]
    pub const ALWAYS: Cond = Cond {
        mask: 0,
        value: 0,
        any: 0,
    };

    #[inline(always)]
    pub fn holds(self, k: u64) -> bool {
        (k & self.mask == self.value) & ((self.any == 0) | (k & self.any != 0))
    }

    pub fn is_always(self) -> bool {
        self.mask == 0 && self.any == 0
    }
}
