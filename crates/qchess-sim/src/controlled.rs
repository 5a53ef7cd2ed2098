//! The few controlled operations the Cantwell circuits need beyond the native gates: a
//! capture controlled on board qubits, an iSwap controlled on capture ancillas, and a
//! projection onto an arbitrary set of boards. Each first checks whether the plain gate (or
//! nothing) already does the same thing on this state, so the rebuild from entries only runs
//! when the control genuinely splits the state.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::key::{Controls, Key, Normalization};
use crate::state::{MAX_ANCILLAS, State};
use num_complex::Complex;

fn controls_hold(controls: Controls, board: u64) -> bool {
    board & controls.zeros == 0 && board & controls.ones == controls.ones
}

impl<T: Amplitude> State<T> {
    /// Captures the piece on `q` into a fresh ancilla (iSwap(q, x): `|1>|0> -> i|0>|1>`) on
    /// the branches where `controls` hold. Returns the ancilla's index, or `None` when no
    /// branch has `q` occupied under the controls (then no ancilla is taken).
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b11);
    /// // Capture on qubit 0 only where qubit 1 is empty: never, so nothing happens.
    /// assert_eq!(s.capture_controlled(0, Controls::empty_path(0b10))?, None);
    /// assert_eq!(s.capture_controlled(0, Controls { zeros: 0, ones: 0b10 })?, Some(0));
    /// assert_eq!(s.amplitude(Key { board: 0b10, ancillas: 1 }).im, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn capture_controlled(
        &mut self,
        q: u8,
        controls: Controls,
    ) -> Result<Option<u32>, SimError> {
        if q >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: q });
        }
        let qbit = 1u64 << q;
        if controls.mask() & qbit != 0 {
            return Err(SimError::ControlOnTarget {
                overlap: controls.mask() & qbit,
            });
        }
        let (mut fires, mut plain) = (false, true);
        for (key, _) in self.entries() {
            if key.board & qbit != 0 {
                let hold = controls_hold(controls, key.board);
                fires |= hold;
                plain &= hold;
            }
        }
        if !fires {
            return Ok(None);
        }
        if plain {
            return Ok(Some(self.capture(q)?));
        }
        let index = self.ancilla_count();
        if index >= MAX_ANCILLAS {
            return Err(SimError::TooManyAncillas { max: MAX_ANCILLAS });
        }
        let i = Complex::new(T::zero(), T::one());
        let moved: Vec<_> = self
            .entries()
            .map(|(key, amp)| {
                if key.board & qbit != 0 && controls_hold(controls, key.board) {
                    let key = Key {
                        board: key.board & !qbit,
                        ancillas: key.ancillas | 1u128 << index,
                    };
                    (key, amp * i)
                } else {
                    (key, amp)
                }
            })
            .collect();
        // The new ancilla bit is set on some branch, so the rebuilt state counts it.
        self.rebuild(moved, Normalization::RequireUnit)?;
        Ok(Some(index))
    }

    /// iSwap(s, t) on the branches where any of the `ancillas` bits is set (an iSwap
    /// controlled on a capture having happened in that branch).
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let mut s = State::<f64>::classical(0b101);
    /// let x = s.capture(2)?; // every branch captured: a plain iSwap
    /// s.iswap_where_ancillas(0, 1, 1u128 << x)?;
    /// assert_eq!(s.amplitude(Key { board: 0b010, ancillas: 1 }).re, -1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap_where_ancillas(&mut self, s: u8, t: u8, ancillas: u128) -> Result<(), SimError> {
        if s >= 64 || t >= 64 {
            return Err(SimError::QubitOutOfRange { qubit: s.max(t) });
        }
        if s == t {
            return Err(SimError::RepeatedQubit { qubit: s });
        }
        let captured = |key: &Key| key.ancillas & ancillas != 0;
        let (mut any, mut all) = (false, true);
        for (key, _) in self.entries() {
            let c = captured(&key);
            any |= c;
            all &= c;
        }
        if !any {
            return Ok(());
        }
        if all {
            return self.iswap(s, t, Controls::NONE);
        }
        let (sbit, tbit) = (1u64 << s, 1u64 << t);
        let i = Complex::new(T::zero(), T::one());
        let moved: Vec<_> = self
            .entries()
            .map(|(key, amp)| {
                let occupied = (key.board & sbit != 0, key.board & tbit != 0);
                if captured(&key) && occupied.0 != occupied.1 {
                    (
                        Key {
                            board: key.board ^ (sbit | tbit),
                            ..key
                        },
                        amp * i,
                    )
                } else {
                    (key, amp)
                }
            })
            .collect();
        self.rebuild(moved, Normalization::RequireUnit)
    }

    /// Keeps the basis states whose board satisfies `keep`, renormalised; returns the
    /// probability that was kept. Errors (changing nothing) when nothing would be kept. When
    /// every entry is kept the state is not touched and 1 is returned.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let p = s.project_boards(&|b| b == 0b10)?;
    /// assert!((p - 0.5).abs() < 1e-15);
    /// assert!((s.amplitude(Key::board(0b10)).im - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn project_boards(&mut self, keep: &(dyn Fn(u64) -> bool + Sync)) -> Result<f64, SimError> {
        if self.entries().all(|(key, _)| keep(key.board)) {
            return Ok(1.0);
        }
        let total = self.norm_sqr();
        let kept: Vec<_> = self.entries().filter(|(key, _)| keep(key.board)).collect();
        let mass: f64 = kept
            .iter()
            .map(|(_, a)| crate::kernels::scan::norm2(*a))
            .sum();
        if kept.is_empty() || mass <= 0.0 {
            return Err(SimError::ZeroProbabilityOutcome {
                outcome: true,
                probability: 0.0,
            });
        }
        self.rebuild(kept, Normalization::Renormalize)?;
        Ok(if total > 0.0 { mass / total } else { 0.0 })
    }

    /// Replaces the state by one holding `entries`, keeping its size cap.
    fn rebuild(
        &mut self,
        entries: Vec<(Key, Complex<T>)>,
        normalization: Normalization,
    ) -> Result<(), SimError> {
        let cap = self.cap();
        let fresh = State::from_amplitudes(entries, normalization)?.with_cap(cap);
        *self = fresh;
        Ok(())
    }
}
