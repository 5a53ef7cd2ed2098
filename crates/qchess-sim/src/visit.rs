//! Read-only visits of every stored basis state without copying the state: what a read-out
//! that lists the amplitudes (all of them, or a running top-k) needs, in memory independent
//! of the state's size.

use crate::amplitude::Amplitude;
use crate::key::Key;
use crate::perm::map_key;
use crate::state::State;
use num_complex::Complex;

impl<T: Amplitude> State<T> {
    /// Calls `f` with every stored basis state (logical key) and its amplitude, in storage
    /// order: sector by sector (ancillas ascending), and inside a sector in an order fixed by
    /// the state (the board keys ascending unless the simulator relabelled qubits). Nothing
    /// is copied or allocated beyond a 16 KiB key table when qubits are relabelled; use
    /// [`State::entries`] for the canonical order (which sorts a copy of each sector).
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// let mut seen = Vec::new();
    /// s.for_each_entry(&mut |k, a| seen.push((k.board, a.norm_sqr())));
    /// seen.sort_by_key(|e| e.0);
    /// assert_eq!(seen.len(), 2);
    /// assert_eq!((seen[0].0, seen[1].0), (0b01, 0b10));
    /// assert!((seen[0].1 - 0.5).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn for_each_entry(&self, f: &mut dyn FnMut(Key, Complex<T>)) {
        let table = self.perm.logical_table();
        for s in &self.sectors {
            for (k, a) in s.keys.iter().zip(&s.amps) {
                let key = Key {
                    board: map_key(table.as_deref(), *k),
                    ancillas: s.ancillas,
                };
                f(key, *a);
            }
        }
    }
}
