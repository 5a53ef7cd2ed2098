//! The unitary gates: iSwap, sqrt-iSwap, their inverses, split, merge, slides, capture, X.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use crate::kernels::compact::{PassExtras, split_project};
use crate::kernels::pair::{self, PairGate};
use crate::kernels::scan::{self, BLOCK, Selector};
use crate::key::{Cond, Controls, Predicate};
use crate::memory::Buffer;
use crate::state::{MAX_ANCILLAS, Sector, State};
use num_complex::Complex;

/// From this many basis states on, a controlled iSwap runs in place (`kernels::permute`):
/// below it the out-of-place merge kernel measured faster (about 200 vs 127 M states/s at
/// 1e3 and 1e4, equal at 1.5e4, 102 vs 128 at 3e4), and the memory saved is small.
const PERMUTE_IN_PLACE_MIN: usize = 1 << 14;

fn check_qubit(q: u8) -> Result<u64, SimError> {
    if q < 64 {
        Ok(1u64 << q)
    } else {
        Err(SimError::QubitOutOfRange { qubit: q })
    }
}

/// Checks that the qubits are in range and distinct; returns their mask.
fn check_distinct(qs: &[u8]) -> Result<u64, SimError> {
    let mut mask = 0;
    for &q in qs {
        let bit = check_qubit(q)?;
        if mask & bit != 0 {
            return Err(SimError::RepeatedQubit { qubit: q });
        }
        mask |= bit;
    }
    Ok(mask)
}

fn check_disjoint(reads: u64, acted: u64) -> Result<(), SimError> {
    if reads & acted != 0 {
        return Err(SimError::ControlOnTarget {
            overlap: reads & acted,
        });
    }
    Ok(())
}

fn c<T: Amplitude>(re: f64, im: f64) -> Complex<T> {
    Complex::new(T::of_f64(re), T::of_f64(im))
}

/// `+i` for the forward gates, `-i` for the inverses.
fn i_pow<T: Amplitude>(inverse: bool) -> Complex<T> {
    c(0.0, if inverse { -1.0 } else { 1.0 })
}

fn identity<T>(_: u64, a: Complex<T>) -> Complex<T> {
    a
}

/// `1/sqrt2` and `+-i/sqrt2` (`-` for the inverse gates): a sqrt-iSwap's diagonal and
/// off-diagonal entries.
fn sqrt_entries<T: Amplitude>(inverse: bool) -> (Complex<T>, Complex<T>) {
    let h = T::frac_1_sqrt_2();
    (
        Complex::new(h, T::zero()),
        Complex::new(T::zero(), if inverse { -h } else { h }),
    )
}

impl<T: Amplitude> State<T> {
    pub(crate) fn cond_of(&self, controls: Controls) -> Cond {
        let zeros = self.perm.to_phys(controls.zeros);
        let ones = self.perm.to_phys(controls.ones);
        Cond {
            mask: zeros | ones,
            value: ones,
            any: 0,
        }
    }

    /// Physical condition "`zeros` all empty and some square of `any` occupied".
    fn path_cond(&self, zeros: u64, any: u64) -> Cond {
        Cond {
            mask: self.perm.to_phys(zeros),
            value: 0,
            any: self.perm.to_phys(any),
        }
    }

    /// Multiplies by `factor` every entry whose physical bits `p`, `q` differ.
    fn phase_differ(&mut self, p: u32, q: u32, factor: Complex<T>) {
        for s in &mut self.sectors {
            scan::phase(&s.keys, &mut s.amps, Selector::Differ { p, q }, factor);
        }
    }

    /// iSwap^(+-1) of logical `a`, `b` under a physical condition.
    fn iswap_cond(&mut self, a: u8, b: u8, cond: Cond, inverse: bool) -> Result<(), SimError> {
        self.iswap_cond_flows(a, b, cond, inverse, false)
            .map(|_| ())
    }

    /// [`State::iswap_cond`]; with `flows`, returning the squared norms the gate moved from
    /// `a` to `b` and from `b` to `a` when its kernel can sum them (the in-place
    /// permutation); `None` for a relabelling (no condition), for a small state's merge
    /// kernel, and without `flows`.
    fn iswap_cond_flows(
        &mut self,
        a: u8,
        b: u8,
        cond: Cond,
        inverse: bool,
        flows: bool,
    ) -> Result<Option<[f64; 2]>, SimError> {
        let (pa, pb) = (self.perm.phys(a), self.perm.phys(b));
        if cond.is_always() {
            // Relabel the two qubits and apply the phase where they differ: no data moves.
            self.phase_differ(pa, pb, i_pow(inverse));
            self.perm.swap(a, b);
            Ok(None)
        } else {
            self.permute_pair(pa, pb, cond, inverse, flows)
        }
    }

    /// iSwap^(+-1) of the physical bits `pa`, `pb` where `cond` holds, moving the entries
    /// (never a relabelling, even where `cond` always holds: [`State::on_sectors`] runs it on
    /// some sectors only); with `flows`, the squared norms moved `[pa to pb, pb to pa]` when
    /// the in-place permutation summed them.
    pub(crate) fn permute_pair(
        &mut self,
        pa: u32,
        pb: u32,
        cond: Cond,
        inverse: bool,
        flows: bool,
    ) -> Result<Option<[f64; 2]>, SimError> {
        if self.len() < PERMUTE_IN_PLACE_MIN {
            // Small states: the merge kernel into a fresh buffer measured faster here.
            let zero = c(0.0, 0.0);
            let gate = PairGate::new(pa, pb, cond, zero, i_pow(inverse));
            self.apply_pair(gate, true, identity, identity)?;
            Ok(None)
        } else {
            // Up is from the lower physical bit to the higher.
            let [up, down] = self.apply_permutation(pa, pb, cond, i_pow(inverse), flows)?;
            Ok(flows.then_some(if pa < pb { [up, down] } else { [down, up] }))
        }
    }

    /// sqrt-iSwap^(+-1) of logical `a`, `b` under a physical condition.
    fn sqrt_cond(&mut self, a: u8, b: u8, cond: Cond, inverse: bool) -> Result<(), SimError> {
        let (diag, off) = sqrt_entries(inverse);
        let gate = PairGate::new(self.perm.phys(a), self.perm.phys(b), cond, diag, off);
        self.apply_pair(gate, true, identity, identity)
    }

    /// Qubit checks of a pair gate, then, for a gate that can grow coefficients (`grows`:
    /// the sqrt-iSwaps), the exact overflow pre-check. An iSwap only multiplies entries by
    /// `+-i` (swap and negate), which never grows a coefficient: no pre-check scan.
    fn pair_checks(&self, a: u8, b: u8, controls: Controls, grows: bool) -> Result<(), SimError> {
        let acted = check_distinct(&[a, b])?;
        check_disjoint(controls.mask(), acted)?;
        if grows {
            self.check_growth(1)?;
        }
        Ok(())
    }

    /// Exact arithmetic only: refuses, before anything changes, an operation of up to
    /// `gates` pair gates whose coefficients could outgrow the representation.
    fn check_growth(&self, gates: u32) -> Result<(), SimError> {
        self.sectors
            .iter()
            .try_for_each(|s| T::check_growth(&s.amps, gates))
    }

    /// iSwap (eq. 4a) on qubits `a`, `b`: `|01> -> i|10>`, `|10> -> i|01>`, where the
    /// controls hold. Uncontrolled it costs one in-place phase pass (the qubits are relabelled).
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.iswap(0, 1, Controls::NONE)?;
    /// assert_eq!(s.amplitude(Key::board(0b10)).im, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.pair_checks(a, b, controls, false)?;
        let cond = self.cond_of(controls);
        self.iswap_cond(a, b, cond, false)
    }

    /// [`State::iswap`] that also returns the squared norms it moved, `[a to b, b to a]`
    /// (the mass of the branches where the piece on `a` went to `b`, and back), when its
    /// kernel summed them: a controlled iSwap (a slide's) on a state of at least
    /// 16 384 entries. Then `b`'s marginal after is `b`'s before plus the first minus the
    /// second (over the state's norm), without a pass over the state. `None` otherwise (an
    /// uncontrolled iSwap relabels the two qubits: their marginals swap).
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// // A piece on 0; one on 3 split onto 2 and 4; fourteen more split: 2^15 branches.
    /// let mut s = State::<f64>::classical(0b1001 | (0x3fff << 8));
    /// s.split(3, 2, 4, Controls::NONE)?;
    /// for p in 0..14u8 {
    ///     s.split(8 + p, 22 + 2 * p, 23 + 2 * p, Controls::NONE)?;
    /// }
    /// let before = s.qubit_probabilities();
    /// // 0 to 1 where square 2 is empty: half the branches.
    /// let flows = s.iswap_with_flows(0, 1, Controls::empty_path(1 << 2))?;
    /// let [ab, ba] = flows.expect("the in-place kernel sums them");
    /// assert!((ab - 0.5).abs() < 1e-12 && ba == 0.0);
    /// let after = s.qubit_probabilities();
    /// assert!((after[1] - (before[1] + ab - ba)).abs() < 1e-12);
    /// assert!((after[0] - (before[0] - ab + ba)).abs() < 1e-12);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap_with_flows(
        &mut self,
        a: u8,
        b: u8,
        controls: Controls,
    ) -> Result<Option<[f64; 2]>, SimError> {
        self.pair_checks(a, b, controls, false)?;
        let cond = self.cond_of(controls);
        self.iswap_cond_flows(a, b, cond, false, true)
    }

    /// Inverse iSwap: `|01> -> -i|10>`, `|10> -> -i|01>`.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.iswap(0, 1, Controls::NONE)?;
    /// s.iswap_inv(0, 1, Controls::NONE)?;
    /// assert_eq!(s.amplitude(Key::board(0b01)).re, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.pair_checks(a, b, controls, false)?;
        let cond = self.cond_of(controls);
        self.iswap_cond(a, b, cond, true)
    }

    /// sqrt-iSwap (eq. 4b): `|01> -> (|01> + i|10>)/sqrt2`, `|10> -> (i|01> + |10>)/sqrt2`.
    ///
    /// ```
    /// use qchess_sim::{Controls, Predicate, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// assert!((s.probability(Predicate::One(1)) - 0.5).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn sqrt_iswap(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.pair_checks(a, b, controls, true)?;
        let cond = self.cond_of(controls);
        self.sqrt_cond(a, b, cond, false)
    }

    /// Inverse sqrt-iSwap.
    ///
    /// ```
    /// use qchess_sim::{Controls, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.sqrt_iswap(0, 1, Controls::NONE)?;
    /// s.sqrt_iswap_inv(0, 1, Controls::NONE)?;
    /// assert_eq!(s.len(), 1);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn sqrt_iswap_inv(&mut self, a: u8, b: u8, controls: Controls) -> Result<(), SimError> {
        self.pair_checks(a, b, controls, true)?;
        let cond = self.cond_of(controls);
        self.sqrt_cond(a, b, cond, true)
    }

    /// Split `s^t1t2` (eq. 7 as defined in section 6.3): `iSwap(s, t2) * sqrt-iSwap(s, t1)`,
    /// the sqrt-iSwap acting first.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// // eq. 8a: |t2 t1 s> = |001> -> i/sqrt2 (|010> + |100>)
    /// let mut st = State::<f64>::classical(0b001);
    /// st.split(0, 1, 2, Controls::NONE)?;
    /// let h = std::f64::consts::FRAC_1_SQRT_2;
    /// assert!((st.amplitude(Key::board(0b010)).im - h).abs() < 1e-15);
    /// assert!((st.amplitude(Key::board(0b100)).im - h).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn split(&mut self, s: u8, t1: u8, t2: u8, controls: Controls) -> Result<(), SimError> {
        let acted = check_distinct(&[s, t1, t2])?;
        check_disjoint(controls.mask(), acted)?;
        self.check_growth(2)?;
        let cond = self.cond_of(controls);
        self.split_cond(s, t1, t2, cond, cond)
    }

    /// `iSwap(s, t2)[cond_iswap] * sqrt-iSwap(s, t1)[cond_sqrt]`.
    fn split_cond(
        &mut self,
        s: u8,
        t1: u8,
        t2: u8,
        cond_sqrt: Cond,
        cond_iswap: Cond,
    ) -> Result<(), SimError> {
        if cond_sqrt.is_always() && cond_iswap.is_always() {
            // Fused: the iSwap's phase is applied as the sqrt pass writes, then relabel.
            let (ps, pt2) = (self.perm.phys(s), self.perm.phys(t2));
            let (diag, off) = sqrt_entries(false);
            let gate = PairGate::new(ps, self.perm.phys(t1), cond_sqrt, diag, off);
            self.apply_pair(gate, false, identity, move |k, a| {
                // Times i where the bits differ, without a branch (they may be random).
                T::times_i_where(((k >> ps) ^ (k >> pt2)) & 1 == 1, a, false)
            })?;
            self.perm.swap(s, t2);
            Ok(())
        } else {
            self.sqrt_cond(s, t1, cond_sqrt, false)?;
            self.iswap_cond(s, t2, cond_iswap, false)
        }
    }

    /// Merge `s1s2^t`: the inverse of [`split(t, s2, s1)`](State::split), i.e.
    /// `sqrt-iSwap^-1(t, s2) * iSwap^-1(t, s1)`.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut st = State::<f64>::classical(0b001);
    /// st.split(0, 1, 2, Controls::NONE)?;
    /// st.merge(2, 1, 0, Controls::NONE)?;
    /// assert_eq!(st.len(), 1);
    /// assert!((st.amplitude(Key::board(0b001)).re - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn merge(&mut self, s1: u8, s2: u8, t: u8, controls: Controls) -> Result<(), SimError> {
        let acted = check_distinct(&[s1, s2, t])?;
        check_disjoint(controls.mask(), acted)?;
        self.check_growth(2)?;
        let cond = self.cond_of(controls);
        self.merge_cond(s1, s2, t, cond, cond)
    }

    /// `sqrt-iSwap^-1(t, s2)[cond_sqrt] * iSwap^-1(t, s1)[cond_iswap]`.
    fn merge_cond(
        &mut self,
        s1: u8,
        s2: u8,
        t: u8,
        cond_sqrt: Cond,
        cond_iswap: Cond,
    ) -> Result<(), SimError> {
        if cond_sqrt.is_always() && cond_iswap.is_always() {
            // Fused: the iSwap^-1 phase is applied as the sqrt^-1 pass reads; after the
            // relabel logical t sits where s1 was.
            let (pt, ps1) = (self.perm.phys(t), self.perm.phys(s1));
            let (diag, off) = sqrt_entries(true);
            let gate = PairGate::new(ps1, self.perm.phys(s2), cond_sqrt, diag, off);
            self.apply_pair(
                gate,
                false,
                move |k, a| {
                    // Times -i where the bits differ, without a branch: the test is random on
                    // a random state, where a branch would mispredict.
                    T::times_i_where(((k >> pt) ^ (k >> ps1)) & 1 == 1, a, true)
                },
                identity,
            )?;
            self.perm.swap(t, s1);
            Ok(())
        } else {
            self.iswap_cond(t, s1, cond_iswap, true)?;
            if let Err(e) = self.sqrt_cond(t, s2, cond_sqrt, true) {
                self.iswap_cond(t, s1, cond_iswap, false)?;
                return Err(e);
            }
            Ok(())
        }
    }

    /// Split slide (eq. 9, rules-notes D2): `path1` is the path from `s` to `t1`, `path2`
    /// from `s` to `t2`; each arm's path leaves out the other target (that bit is ignored if
    /// given). Both paths empty: split; only `path2` empty: iSwap(s, t2); only `path1` empty:
    /// iSwap(s, t1); both blocked: nothing.
    ///
    /// ```
    /// use qchess_sim::{Predicate, State};
    /// // Rook on a1 (0) splits to a3 (16) and c1 (2); the a1-a3 path square a2 (8) is
    /// // occupied, so the rook goes entirely to c1.
    /// let mut s = State::<f64>::classical(1 | 1 << 8);
    /// s.split_slide(0, 16, 2, 1 << 8, 1 << 1)?;
    /// assert!((s.probability(Predicate::One(2)) - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn split_slide(
        &mut self,
        s: u8,
        t1: u8,
        t2: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError> {
        let acted = check_distinct(&[s, t1, t2])?;
        let p1 = path1 & !(1u64 << t2);
        let p2 = path2 & !(1u64 << t1);
        check_disjoint(p1 | p2, acted)?;
        self.check_growth(3)?;
        if p1 | p2 == 0 {
            return self.split(s, t1, t2, Controls::NONE);
        }
        let both = self.path_cond(p1 | p2, 0);
        let only2 = self.path_cond(p2, 0);
        self.sqrt_cond(s, t1, both, false)?;
        self.iswap_cond(s, t2, only2, false)?;
        if p2 != 0 {
            let only1 = self.path_cond(p1, p2);
            self.iswap_cond(s, t1, only1, false)?;
        }
        Ok(())
    }

    /// Merge slide (eq. 12): the exact inverse of
    /// [`split_slide(t, s2, s1, path2, path1)`](State::split_slide); `path1` runs from `s1`
    /// to `t`, `path2` from `s2` to `t`, each leaving out the other source.
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let mut s = State::<f64>::classical(1 | 1 << 8);
    /// let before = s.clone();
    /// s.split_slide(0, 16, 2, 1 << 8, 1 << 1)?;
    /// s.merge_slide(2, 16, 0, 1 << 1, 1 << 8)?;
    /// assert!((s.inner(&before).re - 1.0).abs() < 1e-15);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn merge_slide(
        &mut self,
        s1: u8,
        s2: u8,
        t: u8,
        path1: u64,
        path2: u64,
    ) -> Result<(), SimError> {
        let acted = check_distinct(&[s1, s2, t])?;
        let q2 = path1 & !(1u64 << s2);
        let q1 = path2 & !(1u64 << s1);
        check_disjoint(q1 | q2, acted)?;
        self.check_growth(3)?;
        if q1 | q2 == 0 {
            return self.merge(s1, s2, t, Controls::NONE);
        }
        // split_slide(t, s2, s1, q1, q2) = C * B * A with
        //   A = sqrt(t, s2)[q1, q2 empty], B = iSwap(t, s1)[q2 empty],
        //   C = iSwap(t, s2)[q1 empty, q2 not]; undo in the order C^-1, B^-1, A^-1.
        let both = self.path_cond(q1 | q2, 0);
        let only2 = self.path_cond(q2, 0);
        let only1 = self.path_cond(q1, q2);
        if q2 != 0 {
            self.iswap_cond(t, s2, only1, true)?;
        }
        if let Err(e) = self.iswap_cond(t, s1, only2, true) {
            if q2 != 0 {
                self.iswap_cond(t, s2, only1, false)?;
            }
            return Err(e);
        }
        if let Err(e) = self.sqrt_cond(t, s2, both, true) {
            self.iswap_cond(t, s1, only2, false)?;
            if q2 != 0 {
                self.iswap_cond(t, s2, only1, false)?;
            }
            return Err(e);
        }
        Ok(())
    }

    /// Capture: `iSwap(t, x)` with a fresh ancilla `x` in `|0>` (eq. 18, 23). Branches with
    /// `t` occupied move their piece into the ancilla (amplitude times `i`) and never
    /// interfere with the others again. Returns the new ancilla's index.
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let mut s = State::<f64>::classical(0b1);
    /// let x = s.capture(0)?;
    /// assert_eq!(s.amplitude(Key { board: 0, ancillas: 1 << x }).im, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn capture(&mut self, t: u8) -> Result<u32, SimError> {
        check_qubit(t)?;
        let always = self.cond_of(Controls::NONE);
        self.capture_cond(t, always)
    }

    /// [`State::capture`] of the branches whose physical key satisfies `cond` (and has `t`
    /// occupied): the plain capture, and the controlled one of
    /// [`State::capture_where`]. A sector whose every key moves moves whole, in place; of
    /// the others, the smaller part (the moved entries or the ones that stay) goes to new
    /// arrays asked of the memory budget first, and the larger stays in the sector's own
    /// arrays: at most 1.5x the state is held. `t` must be in range.
    pub(crate) fn capture_cond(&mut self, t: u8, cond: Cond) -> Result<u32, SimError> {
        self.check_growth(1)?;
        if self.ancilla_count >= MAX_ANCILLAS {
            return Err(SimError::TooManyAncillas { max: MAX_ANCILLAS });
        }
        let index = self.ancilla_count;
        let bit = 1u64 << self.perm.phys(t);
        let fresh = 1u128 << index;
        let i: Complex<T> = c(0.0, 1.0);
        let moves = move |k: u64| k & bit != 0 && cond.holds(k);
        // The moved entries of each block of each sector (blocks in parallel unless the cores
        // are busy): how each sector splits, and where the partition's block jobs write.
        let per_block: Vec<Vec<usize>> = (self.sectors.iter())
            .map(|s| {
                scan::map_blocks(s.keys.len(), |a, b| {
                    s.keys[a..b].iter().filter(|&&k| moves(k)).count()
                })
            })
            .collect();
        let counts: Vec<usize> = per_block.iter().map(|c| c.iter().sum()).collect();
        // A sector whose every key has `t` occupied moves whole, in place (below). One that
        // splits copies its smaller part to new arrays (the moved entries, or the ones that
        // stay) and keeps the larger in its own arrays, compacted in place: the gate holds
        // at most 1.5x the sector, whichever part is larger.
        let parts: Vec<usize> = (self.sectors.iter().zip(&counts))
            .map(|(s, &n)| {
                let len = s.keys.len();
                if n != 0 && n != len {
                    n.min(len - n)
                } else {
                    0
                }
            })
            .collect();
        let asked: usize = parts.iter().sum();
        // Every buffer is taken before any sector changes, so a failure changes nothing:
        // index-writable arrays of exactly the smaller part, from the free pass buffers where
        // one fits (warm pages), else asked of the budget and allocated.
        let mut bufs = self.sector_buffers(&parts, asked, 0)?.into_iter();
        // Held at once: the state and the new arrays (before the old sectors shrink).
        let new_bytes: usize = bufs.as_slice().iter().map(Sector::bytes).sum();
        self.peak = self.peak.max(self.bytes() + new_bytes);
        let mut moved: Vec<Sector<T>> = Vec::with_capacity(counts.len());
        for ((s, &n_moved), per_block) in self.sectors.iter_mut().zip(&counts).zip(&per_block) {
            if n_moved == 0 {
                continue;
            }
            if n_moved == s.keys.len() {
                // Every entry moves: clearing a bit that every key has keeps them sorted and
                // distinct, so the sector's own arrays become the moved sector's (the emptied
                // sector is dropped below). No copy, no new pages: a capture after a
                // measurement that made `t` classical costs one pass over the arrays.
                let (mut keys, mut amps) =
                    (std::mem::take(&mut s.keys), std::mem::take(&mut s.amps));
                scan::clear_bit_times(&mut keys, &mut amps, bit, i);
                moved.push(Sector {
                    ancillas: s.ancillas | fresh,
                    keys,
                    amps,
                });
                continue;
            }
            // The partition of the measurements' projection (`split_project`: block jobs in
            // parallel on a large sector, one pass in order otherwise): the larger part
            // compacted in order to the front of the sector's own arrays, the smaller one (the
            // moved entries, or the ones that stay when more move) copied, in order, to the
            // new arrays. Then the moved part, wherever it is, gets its bit cleared (a bit
            // every one of its keys has: still sorted and distinct) and is multiplied by `i`.
            let len = s.keys.len();
            let moved_larger = 2 * n_moved > len;
            let copied: Vec<usize> = (per_block.iter().enumerate())
                .map(|(b, &m)| {
                    if moved_larger {
                        ((b + 1) * BLOCK).min(len) - b * BLOCK - m
                    } else {
                        m
                    }
                })
                .collect();
            let copy = bufs.next().expect("new arrays for each sector that splits");
            let (mut keys, mut amps) = (copy.keys, copy.amps);
            let extra = PassExtras {
                marginals: false,
                scale: None,
                record: true,
                run_shift: 0,
                invert: false,
            };
            let out_of = move |k: u64| moves(k) != moved_larger;
            split_project(
                &mut s.keys,
                &mut s.amps,
                &copied,
                &mut keys,
                &mut amps,
                out_of,
                extra,
            );
            s.keys.truncate(len - keys.len());
            s.amps.truncate(len - amps.len());
            if moved_larger {
                // The moved entries are the ones left in place: the copy becomes this sector's.
                std::mem::swap(&mut s.keys, &mut keys);
                std::mem::swap(&mut s.amps, &mut amps);
            }
            // The room the other part left is given back (a shrinking realloc, in place; an
            // array from the pool may be longer than its part), so the state stays at
            // 24 B/state (f64).
            s.keys.shrink_to_fit();
            s.amps.shrink_to_fit();
            keys.shrink_to_fit();
            amps.shrink_to_fit();
            scan::clear_bit_times(&mut keys, &mut amps, bit, i);
            moved.push(Sector {
                ancillas: s.ancillas | fresh,
                keys,
                amps,
            });
        }
        // The new ancilla bit is above every existing one: the moved sectors sort last. The
        // emptied sectors go first, so a capture that moved every sector whole reuses their
        // slots.
        self.sectors.retain(|s| !s.keys.is_empty());
        self.sectors.extend(moved);
        self.ancilla_count += 1;
        self.finish_pass();
        Ok(index)
    }

    /// Classical bit flip (X) of qubit `q`.
    ///
    /// ```
    /// use qchess_sim::{Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.flip(1)?;
    /// assert_eq!(s.amplitude(Key::board(0b11)).re, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn flip(&mut self, q: u8) -> Result<(), SimError> {
        self.flip_controlled(q, Controls::NONE)
    }

    /// Controlled X: flips qubit `q` where the controls hold.
    ///
    /// ```
    /// use qchess_sim::{Controls, Key, State};
    /// let mut s = State::<f64>::classical(0b01);
    /// s.flip_controlled(1, Controls { zeros: 0, ones: 0b01 })?;
    /// assert_eq!(s.amplitude(Key::board(0b11)).re, 1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn flip_controlled(&mut self, q: u8, controls: Controls) -> Result<(), SimError> {
        let acted = check_qubit(q)?;
        check_disjoint(controls.mask(), acted)?;
        let cond = self.cond_of(controls);
        let bit = self.perm.phys(q);
        self.ask_buffers(self.sectors.iter().map(|s| s.keys.len()))?;
        let mut outs: Vec<Buffer<T>> = Vec::with_capacity(self.sectors.len());
        for s in &self.sectors {
            match self.pool.take(s.keys.len()) {
                Ok(b) => outs.push(b),
                Err(e) => {
                    for b in outs {
                        self.pool.give(b);
                    }
                    return Err(e);
                }
            }
        }
        self.pool.clear();
        for (s, mut out) in self.sectors.iter_mut().zip(outs) {
            out.clear();
            flip_run(&s.keys, &s.amps, bit, cond, &mut out.keys, &mut out.amps);
            let old = Buffer {
                keys: std::mem::replace(&mut s.keys, out.keys.into()).into_whole(),
                amps: std::mem::replace(&mut s.amps, out.amps.into()).into_whole(),
            };
            self.pool.give(old);
        }
        self.finish_pass();
        Ok(())
    }

    /// Multiplies the amplitude of every basis state where `pred` holds by `phase`
    /// (which must have modulus 1).
    ///
    /// ```
    /// use qchess_sim::{Key, Predicate, State};
    /// use num_complex::Complex;
    /// let mut s = State::<f64>::classical(0b1);
    /// s.phase(Predicate::One(0), Complex::new(-1.0, 0.0))?;
    /// assert_eq!(s.amplitude(Key::board(1)).re, -1.0);
    /// # Ok::<(), qchess_sim::SimError>(())
    /// ```
    pub fn phase(&mut self, pred: Predicate, phase: Complex<T>) -> Result<(), SimError> {
        let (mask, value) = self.check_predicate(pred)?;
        if !(T::is_finite(phase.re) && T::is_finite(phase.im)) {
            return Err(SimError::NonFinite { context: "phase" });
        }
        let m2 = scan::norm2(phase);
        if (m2 - 1.0).abs() > T::UNIT_TOLERANCE {
            return Err(SimError::NotUnitPhase { modulus_sqr: m2 });
        }
        // Exact states: the modulus must be exactly 1 (else N would change).
        if let Some(z) = (&phase as &dyn std::any::Any).downcast_ref::<Complex<crate::Exact>>() {
            if z.re * z.re + z.im * z.im != crate::Exact::ONE {
                return Err(SimError::NotUnitPhase { modulus_sqr: m2 });
            }
        }
        self.check_growth(1)?;
        for s in &mut self.sectors {
            scan::phase(
                &s.keys,
                &mut s.amps,
                Selector::Equals { mask, value },
                phase,
            );
        }
        Ok(())
    }

    /// A predicate as a physical `(mask, value)`, or the reason it is malformed.
    pub(crate) fn check_predicate(&self, pred: Predicate) -> Result<(u64, u64), SimError> {
        let (m, v) = pred.checked()?;
        Ok((self.perm.to_phys(m), self.perm.to_phys(v)))
    }
}

/// X on physical bit `bit` where `cond` holds, for one sorted run: per group of keys sharing
/// the bits above `bit`, the flipped entries of each half merge into the other half.
fn flip_run<T: Amplitude>(
    keys: &[u64],
    amps: &[Complex<T>],
    bit: u32,
    cond: Cond,
    out_k: &mut Vec<u64>,
    out_a: &mut Vec<Complex<T>>,
) {
    let b = 1u64 << bit;
    pair::for_each_group(keys, bit, |start, mid, end| {
        // New lower half: unflipped entries of [start, mid) and flipped ones of [mid, end).
        for (lo, hi, stay_lo) in [(start, mid, true), (mid, end, false)] {
            let (other_lo, other_hi) = if stay_lo { (mid, end) } else { (start, mid) };
            let (mut i, mut j) = (lo, other_lo);
            loop {
                while i < hi && cond.holds(keys[i]) {
                    i += 1;
                }
                while j < other_hi && !cond.holds(keys[j]) {
                    j += 1;
                }
                let ki = if i < hi { keys[i] } else { u64::MAX };
                let kj = if j < other_hi { keys[j] ^ b } else { u64::MAX };
                if i >= hi && j >= other_hi {
                    break;
                }
                if j >= other_hi || (i < hi && ki < kj) {
                    out_k.push(ki);
                    out_a.push(amps[i]);
                    i += 1;
                } else {
                    out_k.push(kj);
                    out_a.push(amps[j]);
                    j += 1;
                }
            }
        }
    });
}
