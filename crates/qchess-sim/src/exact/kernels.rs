//! The passes `Exact` overrides or adds (issue 14, per-gate throughput): the phase pass by a
//! unit (`+-i`, `-1`: swaps and negations, no growth), the mass scan (sums of `|alpha|^2`
//! accumulated in 256-bit integers per power-of-two denominator, big integers only at the
//! end) and the projection that moves the kept entries and divides out the common power of
//! two in the same pass.

use super::QSqrt2;
use super::ring::{Exact, POISON_K};
use crate::error::SimError;
use num_bigint::BigInt;
use num_complex::Complex;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use std::cmp::Ordering;

// ---------------------------------------------------------------------------------------
// Phase pass
// ---------------------------------------------------------------------------------------

/// The unit phase factors the pass handles without multiplying.
const UNIT_I: u8 = 0;
const UNIT_MINUS_I: u8 = 1;
const UNIT_MINUS_ONE: u8 = 2;

/// `-x` if `h`, else `x`; a negation that overflows (an `i128::MIN` coefficient) sets
/// `bad` (the value written is then wrong, and the caller undoes and redoes the pass).
#[inline(always)]
fn cneg(x: Exact, h: bool, bad: &mut bool) -> Exact {
    let (na, oa) = x.a.overflowing_neg();
    let (nb, ob) = x.b.overflowing_neg();
    *bad |= h & (oa | ob);
    Exact {
        a: if h { na } else { x.a },
        b: if h { nb } else { x.b },
        k: x.k,
    }
}

/// `x` if `h`, else `y`, field by field (conditional moves, no branch).
#[inline(always)]
fn sel(h: bool, x: Exact, y: Exact) -> Exact {
    Exact {
        a: if h { x.a } else { y.a },
        b: if h { x.b } else { y.b },
        k: if h { x.k } else { y.k },
    }
}

/// Multiplies by the unit `U` where `holds`, branch-free: the swap and the negations are
/// conditional moves. Negation wraps; returns whether a negation overflowed (an
/// `i128::MIN` coefficient: then the caller undoes the pass and redoes it checked). Poison
/// (`a = b = 0`, `k = u32::MAX`) stays poison.
#[inline(always)]
fn unit_pass<const U: u8, F: Fn(u64) -> bool>(
    keys: &[u64],
    amps: &mut [Complex<Exact>],
    holds: &F,
) -> bool {
    let mut bad = false;
    for (key, z) in keys.iter().zip(amps.iter_mut()) {
        let h = holds(*key);
        let (x, y) = (z.re, z.im);
        let (re, im) = match U {
            // i * (re + i im) = -im + i re
            UNIT_I => (cneg(sel(h, y, x), h, &mut bad), sel(h, x, y)),
            // -i * (re + i im) = im - i re
            UNIT_MINUS_I => (sel(h, y, x), cneg(sel(h, x, y), h, &mut bad)),
            _ => (cneg(x, h, &mut bad), cneg(y, h, &mut bad)),
        };
        *z = Complex::new(re, im);
    }
    bad
}

/// The checked per-entry phase pass (every product through [`Exact`]'s checked arithmetic;
/// an overflow poisons the entry).
fn checked_pass<F: Fn(u64) -> bool>(
    keys: &[u64],
    amps: &mut [Complex<Exact>],
    holds: &F,
    factor: Complex<Exact>,
) {
    for (k, z) in keys.iter().zip(amps.iter_mut()) {
        if holds(*k) {
            *z = <Exact as crate::Amplitude>::mul_phase(*z, factor);
        }
    }
}

/// [`crate::Amplitude::mul_phase_where`] for `Exact`: `1` is a no-op, `+-i` and `-1` run
/// [`unit_pass`] (no growth, so no overflow pre-check: only a negated `i128::MIN` could go
/// wrong, and then the block is restored by the inverse pass and redone checked, which
/// poisons that entry as `Neg` does); any other factor runs the checked multiplication.
pub(super) fn mul_phase_where<F: Fn(u64) -> bool>(
    keys: &[u64],
    amps: &mut [Complex<Exact>],
    holds: F,
    factor: Complex<Exact>,
) {
    let (o, z, m) = (Exact::ONE, Exact::ZERO, -Exact::ONE);
    let (unit, inverse) = match (factor.re, factor.im) {
        (re, im) if re == o && im == z => return,
        (re, im) if re == z && im == o => (UNIT_I, UNIT_MINUS_I),
        (re, im) if re == z && im == m => (UNIT_MINUS_I, UNIT_I),
        (re, im) if re == m && im == z => (UNIT_MINUS_ONE, UNIT_MINUS_ONE),
        _ => return checked_pass(keys, amps, &holds, factor),
    };
    let run = |u: u8, amps: &mut [Complex<Exact>]| match u {
        UNIT_I => unit_pass::<UNIT_I, F>(keys, amps, &holds),
        UNIT_MINUS_I => unit_pass::<UNIT_MINUS_I, F>(keys, amps, &holds),
        _ => unit_pass::<UNIT_MINUS_ONE, F>(keys, amps, &holds),
    };
    if run(unit, amps) {
        // Wrapping negation is a bijection: the inverse unit restores every entry exactly.
        run(inverse, amps);
        checked_pass(keys, amps, &holds, factor);
    }
}

// ---------------------------------------------------------------------------------------
// Mass scan
// ---------------------------------------------------------------------------------------

/// A 256-bit two's-complement integer. The scan adds terms below `2^128` in magnitude, so
/// it cannot overflow before `2^127` additions.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct I256 {
    lo: u128,
    hi: i128,
}

impl I256 {
    /// Adds an unsigned term below `2^128`.
    #[inline(always)]
    fn add_u(&mut self, v: u128) {
        let (lo, c) = self.lo.overflowing_add(v);
        self.lo = lo;
        self.hi = self.hi.wrapping_add(i128::from(c));
    }

    /// Adds a signed term.
    #[inline(always)]
    fn add_i(&mut self, v: i128) {
        let (lo, c) = self.lo.overflowing_add(v as u128);
        self.lo = lo;
        self.hi = self.hi.wrapping_add((v >> 127) + i128::from(c));
    }

    fn to_bigint(self) -> BigInt {
        (BigInt::from(self.hi) << 128u32) + BigInt::from(self.lo)
    }
}

/// Sums `sum (a^2 + 2b^2)` and `sum 2ab` over components `(a + b*sqrt2)/2^k` with one `k`:
/// their squared norms are `((a^2 + 2b^2) + 2ab*sqrt2) / 4^k`.
#[derive(Clone, Copy, Default, Debug)]
struct Sums {
    yes_x: I256,
    yes_y: I256,
    all_x: I256,
    all_y: I256,
}

/// `(a + b*sqrt2) / 2^k` with big-integer coefficients: an exact sum of squared norms.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub(crate) struct Wide {
    a: BigInt,
    b: BigInt,
    k: u32,
}

impl Wide {
    /// Adds `(a + b*sqrt2) / 2^k`.
    pub(super) fn add(&mut self, a: BigInt, b: BigInt, k: u32) {
        if k > self.k {
            self.a <<= k - self.k;
            self.b <<= k - self.k;
            self.k = k;
            self.a += a;
            self.b += b;
        } else {
            let s = self.k - k;
            self.a += a << s;
            self.b += b << s;
        }
    }

    fn add_wide(&mut self, o: &Wide) {
        self.add(o.a.clone(), o.b.clone(), o.k);
    }

    /// Adds `|v|^2 = ((a^2 + 2b^2) + 2ab*sqrt2) / 4^k` for one component.
    fn add_norm_part(&mut self, a: i128, b: i128, k: u32) {
        let (a, b) = (BigInt::from(a), BigInt::from(b));
        let x = &a * &a + BigInt::from(2) * &b * &b;
        let y = BigInt::from(2) * a * b;
        self.add(x, y, 2 * k);
    }

    /// Adds `|z|^2`, or errors on a poisoned amplitude: the entry-by-entry path (the
    /// reference the scan is tested against).
    #[cfg(test)]
    pub(super) fn add_norm(&mut self, z: &Complex<Exact>) -> Result<(), SimError> {
        for v in [z.re, z.im] {
            let (a, b, k) = v.parts().ok_or(POISONED)?;
            self.add_norm_part(a, b, k);
        }
        Ok(())
    }

    /// Whether the sum is 0.
    pub(super) fn is_zero(&self) -> bool {
        self.a.is_zero() && self.b.is_zero()
    }

    /// `self - o`.
    pub(super) fn minus(&self, o: &Wide) -> Wide {
        let mut r = self.clone();
        r.add(-o.a.clone(), -o.b.clone(), o.k);
        r
    }

    /// The value in Q(sqrt2).
    pub(super) fn to_qsqrt2(&self) -> QSqrt2 {
        let d = BigInt::one() << self.k;
        QSqrt2::new(
            BigRational::new(self.a.clone(), d.clone()),
            BigRational::new(self.b.clone(), d),
        )
    }

    /// Both coefficient pairs over the common denominator `2^max(k)`.
    fn aligned(&self, o: &Wide) -> ((BigInt, BigInt), (BigInt, BigInt)) {
        let k = self.k.max(o.k);
        let (s, t) = (k - self.k, k - o.k);
        ((&self.a << s, &self.b << s), (&o.a << t, &o.b << t))
    }

    /// `self / o` exactly (`o` non-zero): one division in Q(sqrt2), the common
    /// denominators cancelled first, so the only reductions are the two final fractions.
    pub(super) fn ratio(&self, o: &Wide) -> QSqrt2 {
        let ((xn, yn), (xd, yd)) = self.aligned(o);
        if yd.is_zero() {
            return QSqrt2::new(BigRational::new(xn, xd.clone()), BigRational::new(yn, xd));
        }
        // (xn + yn r) / (xd + yd r) = (xn + yn r)(xd - yd r) / (xd^2 - 2 yd^2), r = sqrt2.
        let two = BigInt::from(2);
        let den = &xd * &xd - &two * &yd * &yd;
        let nx = &xn * &xd - &two * &yn * &yd;
        let ny = &yn * &xd - &xn * &yd;
        QSqrt2::new(BigRational::new(nx, den.clone()), BigRational::new(ny, den))
    }

    /// Whether `r < self / o` for the dyadic `r = m / 2^e` (`o` positive), decided on
    /// integers: the sign of `(2^e xn - m xd) + (2^e yn - m yd) sqrt2`.
    pub(super) fn ratio_exceeds(&self, o: &Wide, m: i128, e: u32) -> bool {
        let ((xn, yn), (xd, yd)) = self.aligned(o);
        let m = BigInt::from(m);
        let u = (xn << e) - &m * xd;
        let v = (yn << e) - m * yd;
        sign_z_sqrt2(&u, &v) == Ordering::Greater
    }
}

/// The sign of `u + v*sqrt2` for integers `u`, `v`.
fn sign_z_sqrt2(u: &BigInt, v: &BigInt) -> Ordering {
    let (su, sv) = (u.sign(), v.sign());
    let s = |x: &BigInt| {
        if x.is_positive() {
            Ordering::Greater
        } else if x.is_negative() {
            Ordering::Less
        } else {
            Ordering::Equal
        }
    };
    if su == sv || v.is_zero() {
        return s(u);
    }
    if u.is_zero() {
        return s(v);
    }
    // Opposite signs: the larger of u^2 and 2 v^2 wins (never equal: sqrt2 is irrational).
    if u * u > BigInt::from(2) * v * v {
        s(u)
    } else {
        s(v)
    }
}

const POISONED: SimError = SimError::ExactOverflow {
    context: "an amplitude overflowed earlier",
};

/// The mass scan's state: exact sums of `|alpha|^2` over all entries and over the entries
/// where a predicate holds ("yes"), plus the smallest `k` of the non-zero components of the
/// yes and the no entries (the power of two a projection onto either outcome divides out).
///
/// Components whose coefficients fit 63 bits go to 256-bit sums for their denominator
/// `4^k`: the sums of the current `k` (initially 0), the other denominators met in a short
/// list (swapped in when `k` changes). Larger coefficients go to big-integer sums. No
/// reduction happens until [`MassScan::finish`]. [`scan_block`] runs the common case (both
/// components below `2^62` at the current `k`, or zero) on local sums.
#[derive(Clone, Debug)]
pub(crate) struct MassScan {
    k: u32,
    cur: Sums,
    spill: Vec<(u32, Sums)>,
    big: Option<Box<(Wide, Wide)>>,
    kmin_yes: u32,
    kmin_no: u32,
    poisoned: bool,
}

impl Default for MassScan {
    fn default() -> Self {
        Self {
            k: 0,
            cur: Sums::default(),
            spill: Vec::new(),
            big: None,
            kmin_yes: u32::MAX,
            kmin_no: u32::MAX,
            poisoned: false,
        }
    }
}

/// The exact result of a mass scan.
#[derive(Clone, Debug, Default)]
pub(crate) struct Masses {
    /// Mass where the predicate holds.
    pub(crate) yes: Wide,
    /// Total mass `N`.
    pub(crate) all: Wide,
    /// Smallest `k` of a non-zero component of an entry where it holds (`u32::MAX`: none).
    pub(crate) kmin_yes: u32,
    /// The same where it does not hold.
    pub(crate) kmin_no: u32,
}

impl MassScan {
    /// Adds `|z|^2` to the total, and to "yes" when `yes`.
    #[inline(always)]
    pub(crate) fn add(&mut self, z: &Complex<Exact>, yes: bool) {
        self.add_part(z.re, yes);
        self.add_part(z.im, yes);
    }

    #[inline(always)]
    fn add_part(&mut self, v: Exact, yes: bool) {
        let (a, b, k) = (v.a, v.b, v.k);
        let zero = (a | b) == 0;
        // Branch-free minima (a zero or poisoned component counts as u32::MAX).
        let kk = if zero { u32::MAX } else { k };
        let ym = 0u32.wrapping_sub(u32::from(yes));
        self.kmin_yes = self.kmin_yes.min(kk | !ym);
        self.kmin_no = self.kmin_no.min(kk | ym);
        self.poisoned |= k == POISON_K;
        let small = ((a.unsigned_abs() | b.unsigned_abs()) >> 63) == 0;
        if small & (zero | (k == self.k)) {
            self.add_small(a as i64, b as i64, yes);
        } else {
            self.add_slow(a, b, k, yes);
        }
    }

    /// Adds a component with `|a|, |b| < 2^63` to the current sums: `a^2 + 2b^2 < 2^128`
    /// and `|2ab| < 2^127`, so one 64x64-bit product each.
    #[inline(always)]
    fn add_small(&mut self, a: i64, b: i64, yes: bool) {
        let (ua, ub) = (u128::from(a.unsigned_abs()), u128::from(b.unsigned_abs()));
        let x = ua * ua + 2 * (ub * ub);
        let y = 2 * (i128::from(a) * i128::from(b));
        let m = 0u128.wrapping_sub(u128::from(yes));
        let c = &mut self.cur;
        c.all_x.add_u(x);
        c.all_y.add_i(y);
        c.yes_x.add_u(x & m);
        c.yes_y.add_i(y & m as i128);
    }

    #[cold]
    #[inline(never)]
    fn add_slow(&mut self, a: i128, b: i128, k: u32, yes: bool) {
        if k == POISON_K {
            self.poisoned = true;
            return;
        }
        let small = ((a.unsigned_abs() | b.unsigned_abs()) >> 63) == 0;
        if small {
            self.switch_to(k);
            self.add_small(a as i64, b as i64, yes);
        } else {
            let big = self.big.get_or_insert_with(Default::default);
            if yes {
                big.0.add_norm_part(a, b, k);
            }
            big.1.add_norm_part(a, b, k);
        }
    }

    /// Makes `k` the current denominator, parking the current sums.
    fn switch_to(&mut self, k: u32) {
        let cur = std::mem::take(&mut self.cur);
        let old = std::mem::replace(&mut self.k, k);
        if let Some(i) = self.spill.iter().position(|e| e.0 == k) {
            self.cur = self.spill[i].1;
            self.spill[i] = (old, cur);
        } else {
            self.spill.push((old, cur));
        }
    }

    /// Adds another scan's sums (blocks are combined in order; the result is exact anyway).
    pub(crate) fn merge(mut self, o: MassScan) -> MassScan {
        self.poisoned |= o.poisoned;
        self.kmin_yes = self.kmin_yes.min(o.kmin_yes);
        self.kmin_no = self.kmin_no.min(o.kmin_no);
        for (k, s) in o.spill.into_iter().chain([(o.k, o.cur)]) {
            self.switch_to(k);
            let c = &mut self.cur;
            for (t, f) in [
                (&mut c.yes_x, s.yes_x),
                (&mut c.yes_y, s.yes_y),
                (&mut c.all_x, s.all_x),
                (&mut c.all_y, s.all_y),
            ] {
                // Two sums of fewer than 2^64 terms each: still far from 2^255.
                let (lo, carry) = t.lo.overflowing_add(f.lo);
                t.lo = lo;
                t.hi = t.hi.wrapping_add(f.hi).wrapping_add(i128::from(carry));
            }
        }
        if let Some(b) = o.big {
            let mine = self.big.get_or_insert_with(Default::default);
            mine.0.add_wide(&b.0);
            mine.1.add_wide(&b.1);
        }
        self
    }

    /// The exact masses, or an error if an amplitude was poisoned.
    pub(crate) fn finish(self) -> Result<Masses, SimError> {
        if self.poisoned {
            return Err(POISONED);
        }
        let (mut yes, mut all) = self.big.map(|b| *b).unwrap_or_default();
        for (k, s) in self.spill.into_iter().chain([(self.k, self.cur)]) {
            yes.add(s.yes_x.to_bigint(), s.yes_y.to_bigint(), 2 * k);
            all.add(s.all_x.to_bigint(), s.all_y.to_bigint(), 2 * k);
        }
        Ok(Masses {
            yes,
            all,
            kmin_yes: self.kmin_yes,
            kmin_no: self.kmin_no,
        })
    }
}

/// Whether both coefficients of `v` lie in `[-2^62, 2^62)`: then `a^2 + 2b^2 < 2^126` and
/// `|2ab| <= 2^125`, so one entry's two components sum below `2^127` in `u128`/`i128`.
#[inline(always)]
fn fits62(v: Exact) -> bool {
    ((v.a ^ (v.a >> 127)) | (v.b ^ (v.b >> 127))) >> 62 == 0
}

/// `(a^2 + 2b^2, 2ab)` of a component that [`fits62`].
#[inline(always)]
fn norm_terms(v: Exact) -> (u128, i128) {
    let (a, b) = (v.a as i64, v.b as i64);
    let (ua, ub) = (u128::from(a.unsigned_abs()), u128::from(b.unsigned_abs()));
    (ua * ua + 2 * (ub * ub), 2 * (i128::from(a) * i128::from(b)))
}

/// The mass scan of a run of entries. The common entry (both components [`fits62`], each
/// zero or at the current denominator `k`) is added to local sums (an entry's `x` below
/// `2^127`, accumulated in a `u128` and a carry count; `y` in a `u128` and a signed high
/// word), which the compiler keeps in registers; any other entry flushes them into the
/// [`MassScan`] and takes its general path (new denominator, big coefficients, poison).
fn scan_block(keys: &[u64], amps: &[Complex<Exact>], mask: u64, value: u64) -> MassScan {
    let mut st = MassScan::default();
    let n = keys.len().min(amps.len());
    let mut i = 0;
    while i < n {
        let k0 = st.k;
        let (mut ax, mut axc, mut yx, mut yxc) = (0u128, 0u64, 0u128, 0u64);
        let (mut ay, mut ayh, mut yy, mut yyh) = (0u128, 0i64, 0u128, 0i64);
        let (mut any_yes, mut any_no) = (false, false);
        while i < n {
            let z = amps[i];
            let (re, im) = (z.re, z.im);
            // Zero is canonical (0, 0, 0); poison (k = u32::MAX) is never taken here.
            let zre = (re.a | re.b) == 0 && re.k == 0;
            let zim = (im.a | im.b) == 0 && im.k == 0;
            let ok = fits62(re) & fits62(im) & (zre | (re.k == k0)) & (zim | (im.k == k0));
            if !ok {
                break;
            }
            let yes = keys[i] & mask == value;
            let (xr, yr) = norm_terms(re);
            let (xi, yi) = norm_terms(im);
            let (x, y) = (xr + xi, yr + yi);
            let m = 0u128.wrapping_sub(u128::from(yes));
            let (s, c) = ax.overflowing_add(x);
            ax = s;
            axc += u64::from(c);
            let (s, c) = yx.overflowing_add(x & m);
            yx = s;
            yxc += u64::from(c);
            let (s, c) = ay.overflowing_add(y as u128);
            ay = s;
            ayh += (y >> 127) as i64 + i64::from(c);
            let ym = y & m as i128;
            let (s, c) = yy.overflowing_add(ym as u128);
            yy = s;
            yyh += (ym >> 127) as i64 + i64::from(c);
            let nonzero = !(zre & zim);
            any_yes |= nonzero & yes;
            any_no |= nonzero & !yes;
            i += 1;
        }
        let c = &mut st.cur;
        for (t, lo, hi) in [
            (&mut c.all_x, ax, axc as i64),
            (&mut c.yes_x, yx, yxc as i64),
            (&mut c.all_y, ay, ayh),
            (&mut c.yes_y, yy, yyh),
        ] {
            t.add_u(lo);
            t.hi = t.hi.wrapping_add(i128::from(hi));
        }
        if any_yes {
            st.kmin_yes = st.kmin_yes.min(k0);
        }
        if any_no {
            st.kmin_no = st.kmin_no.min(k0);
        }
        if i < n {
            st.add(&amps[i], keys[i] & mask == value);
            i += 1;
        }
    }
    st
}

/// The mass scan of one sector's entries for the predicate `key & mask == value`, in the
/// fixed blocks of `kernels::scan` (parallel, combined in block order).
pub(crate) fn scan_masses(
    keys: &[u64],
    amps: &[Complex<Exact>],
    mask: u64,
    value: u64,
) -> MassScan {
    let parts = crate::kernels::scan::map_blocks(keys.len(), |s, e| {
        scan_block(&keys[s..e], &amps[s..e], mask, value)
    });
    parts
        .into_iter()
        .fold(MassScan::default(), |acc, p| acc.merge(p))
}

// ---------------------------------------------------------------------------------------
// Projection
// ---------------------------------------------------------------------------------------

/// `x * 2^m` for a component with `k >= m` or `x == 0` (zero keeps `k = 0`).
#[inline(always)]
fn shift_down(x: Exact, m: u32) -> Exact {
    let nz = 0u32.wrapping_sub(u32::from((x.a | x.b) != 0));
    Exact {
        k: x.k.wrapping_sub(m & nz),
        ..x
    }
}

/// Keeps the entries with `(key & mask == value) == keep` (compacting in place, order
/// kept) and multiplies them by `2^m`, `m` at most the smallest `k` of their non-zero
/// components (from the mass scan): the entries are moved and each `k` lowered, nothing
/// else. Returns the new length.
pub(crate) fn project_shift(
    keys: &mut [u64],
    amps: &mut [Complex<Exact>],
    mask: u64,
    value: u64,
    keep: bool,
    m: u32,
) -> usize {
    crate::kernels::scan::project_map(keys, amps, mask, value, keep, |z| {
        Complex::new(shift_down(z.re, m), shift_down(z.im, m))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Amplitude;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    /// The entry-by-entry reference: checked i128 products, big integers on overflow.
    fn reference(
        keys: &[u64],
        amps: &[Complex<Exact>],
        mask: u64,
        value: u64,
    ) -> Result<(Wide, Wide), SimError> {
        let (mut yes, mut all) = (Wide::default(), Wide::default());
        for (k, z) in keys.iter().zip(amps) {
            all.add_norm(z)?;
            if k & mask == value {
                yes.add_norm(z)?;
            }
        }
        Ok((yes, all))
    }

    fn kmin_reference(keys: &[u64], amps: &[Complex<Exact>], pick: impl Fn(u64) -> bool) -> u32 {
        keys.iter()
            .zip(amps)
            .filter(|(k, _)| pick(**k))
            .flat_map(|(_, z)| [z.re.k_if_nonzero(), z.im.k_if_nonzero()])
            .flatten()
            .min()
            .unwrap_or(u32::MAX)
    }

    /// A random component: sizes from tiny to near-overflow (up to 126 bits; with
    /// `all_sizes` false mostly below 2^62, the scan's fast path, with some at the 62/63-bit
    /// boundaries), `k` in `0..=kspread`, often zero.
    fn component(rng: &mut impl Rng, kspread: u32, all_sizes: bool) -> Exact {
        if rng.random_ratio(1, 4) {
            return Exact::ZERO;
        }
        let bits = match rng.random_range(0..if all_sizes { 4 } else { 20 }) {
            0 => rng.random_range(60..66),
            1 => rng.random_range(66..127),
            2..10 => rng.random_range(1..8),
            _ => rng.random_range(8..63),
        };
        let coef = |rng: &mut dyn rand::RngCore| -> i128 {
            let v = match rng.random_range(0..50) {
                0 => 1i128 << (bits - 1), // a power of two: 2^62 is just outside the fast path
                _ => (rng.random::<u128>() >> (128 - bits)) as i128,
            };
            if rng.random() { -v } else { v }
        };
        let (a, b) = (coef(rng), if rng.random() { coef(rng) } else { 0 });
        Exact::new(a, b, rng.random_range(0..=kspread))
    }

    fn random_entries_sized(
        seed: u64,
        n: usize,
        kspread: u32,
        all_sizes: bool,
    ) -> (Vec<u64>, Vec<Complex<Exact>>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let keys: Vec<u64> = (0..n).map(|_| rng.random::<u64>()).collect();
        let amps = (0..n)
            .map(|_| {
                Complex::new(
                    component(&mut rng, kspread, all_sizes),
                    component(&mut rng, kspread, all_sizes),
                )
            })
            .collect();
        (keys, amps)
    }

    fn random_entries(seed: u64, n: usize, kspread: u32) -> (Vec<u64>, Vec<Complex<Exact>>) {
        random_entries_sized(seed, n, kspread, true)
    }

    #[test]
    fn the_scan_equals_the_entry_by_entry_sums() {
        // Mixed denominators (k spread 0, 3, 40, 200), near-overflow coefficients, more
        // than one block (BLOCK = 65536) for the block merge.
        for (seed, n, kspread) in [
            (1, 1000, 0),
            (2, 1000, 3),
            (3, 3000, 40),
            (4, 500, 200),
            (5, 70_000, 6),
            (6, 1, 5),
            (7, 0, 5),
        ] {
            for all_sizes in [true, false] {
                let (keys, amps) = random_entries_sized(seed, n, kspread, all_sizes);
                check_scan(&keys, &amps, seed);
            }
        }
        // Coefficients at the fast path's boundaries, one entry each and all together.
        let edge = [
            Exact::new(1 << 62, 0, 3),
            Exact::new(-(1 << 62), 1, 3),
            Exact::new((1 << 62) - 1, -(1 << 62), 3),
            Exact::new(i128::from(i64::MAX), 1, 3),
            Exact::new(i128::from(i64::MIN), 1, 3),
            Exact::new(i128::MAX, i128::MIN + 1, 0),
            Exact::new(1, 1, 3),
            Exact::ZERO,
        ];
        let amps: Vec<Complex<Exact>> = edge
            .iter()
            .flat_map(|&x| edge.iter().map(move |&y| Complex::new(x, y)))
            .collect();
        let keys: Vec<u64> = (0..amps.len() as u64).collect();
        check_scan(&keys, &amps, 0);
    }

    /// The scan against [`reference`] for a few predicates.
    fn check_scan(keys: &[u64], amps: &[Complex<Exact>], seed: u64) {
        {
            for (mask, value) in [(0, 0), (1, 1), (0b110, 0b010), (u64::MAX, 7)] {
                let m = scan_masses(keys, amps, mask, value).finish().unwrap();
                let (yes, all) = reference(keys, amps, mask, value).unwrap();
                assert_eq!(
                    m.yes.to_qsqrt2(),
                    yes.to_qsqrt2(),
                    "seed {seed} mask {mask}"
                );
                assert_eq!(m.all.to_qsqrt2(), all.to_qsqrt2(), "seed {seed}");
                assert_eq!(
                    m.kmin_yes,
                    kmin_reference(keys, amps, |k| k & mask == value)
                );
                assert_eq!(m.kmin_no, kmin_reference(keys, amps, |k| k & mask != value));
            }
        }
    }

    #[test]
    fn the_scan_reports_poison() {
        for all_sizes in [true, false] {
            for at in [0, 57, 99] {
                let (keys, mut amps) = random_entries_sized(9, 100, 4, all_sizes);
                assert!(scan_masses(&keys, &amps, 0, 0).finish().is_ok());
                amps[at].im = Exact::POISON;
                assert!(matches!(
                    scan_masses(&keys, &amps, 0, 0).finish(),
                    Err(SimError::ExactOverflow { .. })
                ));
            }
        }
    }

    #[test]
    fn ratio_and_comparison_match_the_field_arithmetic() {
        for seed in 0..20 {
            let (keys, amps) = random_entries(100 + seed, 50, 8);
            let m = scan_masses(&keys, &amps, 1, 1).finish().unwrap();
            if m.all.is_zero() {
                continue;
            }
            let p = m.yes.ratio(&m.all);
            assert_eq!(p, &m.yes.to_qsqrt2() / &m.all.to_qsqrt2());
            let no = m.all.minus(&m.yes);
            assert_eq!(&no.to_qsqrt2() + &m.yes.to_qsqrt2(), m.all.to_qsqrt2());
            for r in [0.0, 0.1, 0.5, 0.75, 0.999_999] {
                let e = Exact::from_f64(r).parts().unwrap();
                assert_eq!(e.1, 0);
                let r_q = QSqrt2::from_f64(r).unwrap();
                assert_eq!(m.yes.ratio_exceeds(&m.all, e.0, e.2), r_q < p, "r {r}");
            }
        }
        // Irrational ratios: yes = 1/2 (|1/sqrt2|^2), all = 1/2 + (1/2 + sqrt2/2 ...).
        let h = Exact::frac_1_sqrt_2();
        let amps = [
            Complex::new(h, Exact::ZERO),
            Complex::new(Exact::ONE + h, Exact::ZERO),
        ];
        let m = scan_masses(&[1, 0], &amps, 1, 1).finish().unwrap();
        let p = m.yes.ratio(&m.all);
        assert_eq!(p, &m.yes.to_qsqrt2() / &m.all.to_qsqrt2());
        let pf = p.to_f64();
        for r in [pf - 1e-12, pf + 1e-12, 0.0, 0.9] {
            let e = Exact::from_f64(r).parts().unwrap();
            assert_eq!(m.yes.ratio_exceeds(&m.all, e.0, e.2), r < pf);
        }
    }

    /// The per-entry pass the unit passes replace (`Amplitude::mul_phase` on every entry
    /// that holds, as `kernels::scan::phase` ran before).
    fn reference_phase(keys: &[u64], amps: &mut [Complex<Exact>], bit: u32, f: Complex<Exact>) {
        for (k, z) in keys.iter().zip(amps.iter_mut()) {
            if k >> bit & 1 == 1 {
                *z = Exact::mul_phase(*z, f);
            }
        }
    }

    #[test]
    fn the_unit_phase_passes_equal_the_checked_products() {
        let (o, z) = (Exact::ONE, Exact::ZERO);
        let h = Exact::frac_1_sqrt_2();
        for f in [
            Complex::new(z, o),
            Complex::new(z, -o),
            Complex::new(-o, z),
            Complex::new(o, z),
            Complex::new(h, h),
        ] {
            for seed in 0..4 {
                let (keys, mut amps) = random_entries(200 + seed, 700, 10);
                // i128::MIN and poison in some blocks: the pass must poison, never wrap.
                if seed == 1 {
                    amps[3].re = Exact::new(i128::MIN, 1, 0);
                    amps[4].im = Exact::new(3, i128::MIN, 0);
                    amps[5].im = Exact::POISON;
                }
                let mut expect = amps.clone();
                reference_phase(&keys, &mut expect, 5, f);
                Exact::mul_phase_where(&keys, &mut amps, |k| k >> 5 & 1 == 1, f);
                assert_eq!(amps, expect, "factor {f:?} seed {seed}");
            }
        }
    }

    proptest! {
        #[test]
        fn projection_moves_and_rescales(seed in 0u64..1000, bit in 0u32..64, keep: bool) {
            let (mut keys, mut amps) = random_entries(seed, 64, 12);
            let m = scan_masses(&keys, &amps, 1 << bit, 1 << bit).finish().unwrap();
            let kmin = if keep { m.kmin_yes } else { m.kmin_no };
            let sh = if kmin == u32::MAX { 0 } else { kmin };
            // z * 2^sh, exactly: the same coefficients over 2^(k - sh).
            let up = |x: Exact| match x.parts() {
                Some((0, 0, _)) | None => x,
                Some((a, b, k)) => Exact::new(a, b, k - sh),
            };
            let expect: Vec<(u64, Complex<Exact>)> = keys
                .iter()
                .zip(&amps)
                .filter(|(k, _)| (*k >> bit & 1 == 1) == keep)
                .map(|(k, z)| (*k, Complex::new(up(z.re), up(z.im))))
                .collect();
            let n = project_shift(&mut keys, &mut amps, 1 << bit, 1 << bit, keep, sh);
            let got: Vec<(u64, Complex<Exact>)> =
                keys[..n].iter().copied().zip(amps[..n].iter().copied()).collect();
            prop_assert_eq!(got, expect);
        }
    }
}
