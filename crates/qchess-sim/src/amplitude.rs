//! The amplitude scalar: `f64` (reference precision), `f32` (half the memory) or
//! [`Exact`](crate::Exact) (exact arithmetic in Z[1/sqrt2]).

use crate::error::SimError;
use num_complex::Complex;
use num_traits::Num;
use std::fmt::Debug;
use std::ops::Neg;

/// A real scalar type the simulator stores amplitudes in (`Complex<T>`).
///
/// Implemented for `f64` (the default, 24 bytes per basis state), `f32` (16 bytes per basis
/// state, about 1e-6 relative error after hundreds of moves) and [`Exact`](crate::Exact)
/// (104 bytes per basis state, no rounding at all). The kernels need only ring operations
/// (`Num`), the constant `1/sqrt2`, a cancellation test and a conversion to `f64` for the
/// floating read-outs; probabilities of float states are accumulated in `f64`.
///
/// ```
/// use qchess_sim::Amplitude;
/// assert_eq!(<f32 as Amplitude>::of_f64(0.5), 0.5f32);
/// assert!(<f64 as Amplitude>::DROP_EPS < f64::from(<f32 as Amplitude>::DROP_EPS));
/// ```
pub trait Amplitude:
    Copy + PartialEq + Num + Neg<Output = Self> + Send + Sync + Debug + Default + 'static
{
    /// Relative cancellation threshold: where two entries merge, a result whose largest
    /// component is at most `DROP_EPS` times the largest input component is dropped (zero
    /// for exact arithmetic, where only an exact zero is dropped).
    const DROP_EPS: Self;
    /// A forced or measured outcome whose probability is at most this is treated as impossible.
    const ZERO_PROBABILITY: f64;
    /// Tolerance on `|norm^2 - 1|` for [`Normalization::RequireUnit`](crate::Normalization).
    const UNIT_TOLERANCE: f64;
    /// Whether measurement and [`Normalization::Renormalize`](crate::Normalization) rescale
    /// the state to norm 1 (floats), or keep it unnormalised so that it stays exact
    /// ([`Exact`](crate::Exact): probabilities are then `|alpha|^2 / N`).
    const RENORMALIZES: bool = true;
    /// Whether arithmetic is cheap enough for kernels that compute every case of an entry and
    /// keep one (the floats), rather than branch to the one case needed
    /// ([`Exact`](crate::Exact), whose products are long multiplications).
    const CHEAP_ARITHMETIC: bool = true;
    /// The bits of `amps` as 64-bit words, where amplitudes are plain bits that fill whole
    /// aligned words (the floats; `None` for [`Exact`](crate::Exact), or for an `f32` slice
    /// not aligned to 8 bytes): how a projection's undo record is copied with streaming
    /// stores. An implementation detail of the simulator's kernels.
    #[doc(hidden)]
    fn as_words(amps: &[Complex<Self>]) -> Option<&[u64]> {
        let _ = amps;
        None
    }
    /// Whether the probability scan reads this type's amplitudes by their parts
    /// ([`Amplitude::as_parts`]) rather than entry by entry: measured faster at 10^7 entries
    /// for `f32` only (docs/benchmarks.md, "The probability scan by parts"). An
    /// implementation detail of the simulator's kernels.
    #[doc(hidden)]
    const SCAN_BY_PARTS: bool = false;
    /// The amplitudes' real and imaginary parts as one flat slice (`re, im, re, im, ...`),
    /// where the type is a plain float: how the probability scan squares them part by part
    /// (`kernels::scan`). An implementation detail of the simulator's kernels.
    #[doc(hidden)]
    fn as_parts(amps: &[Complex<Self>]) -> Option<&[Self]> {
        let _ = amps;
        None
    }
    /// Writes `v` to `*dst`: for the floats through `stream::store_pod` (non-temporal stores
    /// for `f64`, whose complex is two aligned 8-byte words; an ordinary store for `f32`),
    /// else an ordinary store. The same value lands either way. An implementation detail of
    /// the simulator's kernels.
    #[doc(hidden)]
    #[inline(always)]
    fn stream_to(dst: &mut Complex<Self>, v: Complex<Self>) {
        *dst = v;
    }
    /// [`Amplitude::as_words`] for a slice to write.
    #[doc(hidden)]
    fn as_words_mut(amps: &mut [Complex<Self>]) -> Option<&mut [u64]> {
        let _ = amps;
        None
    }
    /// The 64-bit words one value takes in [`Amplitude::to_wire`]: 1 for the floats (an
    /// `f64`'s bits, which hold an `f32` exactly), 5 for [`Exact`](crate::Exact) (its two
    /// `i128` coefficients and its power of two). How a distributed state sends amplitudes
    /// between ranks without rounding them. An implementation detail of the wire form.
    #[doc(hidden)]
    const WIRE_WORDS: usize = 1;
    /// Appends this value's [`Amplitude::WIRE_WORDS`] words to `out`; [`Amplitude::from_wire`]
    /// reads back the same value, bit for bit (an overflowed exact value stays overflowed).
    #[doc(hidden)]
    fn to_wire(self, out: &mut Vec<u64>) {
        out.push(self.as_f64().to_bits());
    }
    /// The value [`Amplitude::to_wire`] wrote to `words` (exactly
    /// [`Amplitude::WIRE_WORDS`] of them).
    #[doc(hidden)]
    fn from_wire(words: &[u64]) -> Self {
        Self::of_f64(f64::from_bits(words[0]))
    }
    /// Converts from `f64` (rounding for `f32`; exactly, as a dyadic rational, for `Exact`).
    fn of_f64(x: f64) -> Self;
    /// Converts to `f64` (exactly for the floats, to the nearest for `Exact`).
    fn as_f64(self) -> f64;
    /// `1/sqrt2` (rounded for the floats, exact for `Exact`).
    fn frac_1_sqrt_2() -> Self;
    /// Whether the value is a finite number (not NaN, infinite, or an overflowed exact value).
    fn is_finite(self) -> bool;
    /// Whether `merged`, the sum of two terms from inputs `x` and `y`, is kept: not a
    /// cancellation (floats: relative to [`Amplitude::DROP_EPS`]; `Exact`: not exactly 0).
    fn survives(merged: Complex<Self>, x: Complex<Self>, y: Complex<Self>) -> bool;
    /// `if c { a } else { b }`, without a branch where the amplitudes are plain bits (the
    /// floats: masks on their bits), for kernels whose choice depends on the data and would
    /// mispredict (the slide's merge). An implementation detail of the simulator's kernels.
    #[doc(hidden)]
    #[inline(always)]
    fn select(c: bool, a: Complex<Self>, b: Complex<Self>) -> Complex<Self> {
        if c { a } else { b }
    }
    /// `a` times `i` (or `-i` when `minus`) where `c`, else `a` unchanged, for the fused
    /// phases of the split and merge, whose bit test may be random per entry. The floats
    /// rotate the two parts' bits through an integer twice their width and flip a sign bit,
    /// with no branch or select (which compiled to a branch there). Bit for bit the
    /// negation and swap. An implementation detail of the simulator's kernels.
    #[doc(hidden)]
    #[inline(always)]
    fn times_i_where(c: bool, a: Complex<Self>, minus: bool) -> Complex<Self> {
        let turned = if minus {
            Complex::new(a.im, -a.re)
        } else {
            Complex::new(-a.im, a.re)
        };
        if c { turned } else { a }
    }
    /// `a * f` for a phase factor `f` (most often 1 or +-i): exact types may shortcut.
    #[inline(always)]
    fn mul_phase(a: Complex<Self>, f: Complex<Self>) -> Complex<Self> {
        a * f
    }
    /// The phase pass: multiplies `amps[i]` by `factor` where `holds(keys[i])` and leaves
    /// the other entries unchanged (`keys` and `amps` have equal lengths). The default
    /// multiplies every entry by `factor` or 1 and selects, which vectorises for the floats;
    /// [`Exact`](crate::Exact) overrides it for the unit factors `+-i` and `-1`, which
    /// only swap and negate coefficients (no growth, so no overflow pre-check is needed).
    ///
    /// ```
    /// use qchess_sim::{Amplitude, Complex};
    /// let keys = [0b01u64, 0b10];
    /// let mut amps = [Complex::new(1.0f64, 2.0), Complex::new(3.0, 4.0)];
    /// f64::mul_phase_where(&keys, &mut amps, |k| k & 1 == 1, Complex::new(0.0, 1.0));
    /// assert_eq!(amps, [Complex::new(-2.0, 1.0), Complex::new(3.0, 4.0)]);
    /// ```
    #[inline]
    fn mul_phase_where<F: Fn(u64) -> bool>(
        keys: &[u64],
        amps: &mut [Complex<Self>],
        holds: F,
        factor: Complex<Self>,
    ) {
        // Unconditional multiply-and-select: a conditional store would compile to masked
        // gather/scatter, which is several times slower than streaming.
        let one = Complex::new(Self::one(), Self::zero());
        for (k, a) in keys.iter().zip(amps.iter_mut()) {
            let f = if holds(*k) { factor } else { one };
            *a = Self::mul_phase(*a, f);
        }
    }
    /// Checks, before a gate, that up to `gates` pair gates on one sector's amplitudes cannot
    /// overflow the representation (always `Ok` for floats; see [`Exact`](crate::Exact)).
    fn check_growth(amps: &[Complex<Self>], gates: u32) -> Result<(), SimError> {
        let _ = (amps, gates);
        Ok(())
    }
}

macro_rules! float_amplitude {
    ($t:ty, $bits:ty, $wide:ty, $of:expr, $eps:expr, $zero:expr, $unit:expr, $parts:expr) => {
        impl Amplitude for $t {
            const SCAN_BY_PARTS: bool = $parts;
            const DROP_EPS: $t = $eps;
            const ZERO_PROBABILITY: f64 = $zero;
            const UNIT_TOLERANCE: f64 = $unit;
            fn as_words(amps: &[Complex<Self>]) -> Option<&[u64]> {
                bytemuck::try_cast_slice(amps).ok()
            }
            fn as_parts(amps: &[Complex<Self>]) -> Option<&[Self]> {
                bytemuck::try_cast_slice(amps).ok()
            }
            fn as_words_mut(amps: &mut [Complex<Self>]) -> Option<&mut [u64]> {
                bytemuck::try_cast_slice_mut(amps).ok()
            }
            #[inline(always)]
            fn stream_to(dst: &mut Complex<Self>, v: Complex<Self>) {
                crate::stream::store_pod(dst, v);
            }
            fn of_f64(x: f64) -> Self {
                $of(x)
            }
            fn as_f64(self) -> f64 {
                f64::from(self)
            }
            fn frac_1_sqrt_2() -> Self {
                Self::of_f64(std::f64::consts::FRAC_1_SQRT_2)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn select(c: bool, a: Complex<Self>, b: Complex<Self>) -> Complex<Self> {
                let m = <$bits>::from(c).wrapping_neg();
                let f = |x: $t, y: $t| <$t>::from_bits((x.to_bits() & m) | (y.to_bits() & !m));
                Complex::new(f(a.re, b.re), f(a.im, b.im))
            }
            #[inline(always)]
            fn times_i_where(c: bool, a: Complex<Self>, minus: bool) -> Complex<Self> {
                const W: u32 = <$bits>::BITS;
                let t = u32::from(c);
                let p = (<$wide>::from(a.im.to_bits()) << W) | <$wide>::from(a.re.to_bits());
                // Where `c`, the low half is now `im` and the high half `re`.
                let q = p.rotate_left(W * t);
                let (low, high) = (q as $bits, (q >> W) as $bits);
                let sign = <$bits>::from(c) << (W - 1);
                let (flip_low, flip_high) = if minus { (0, sign) } else { (sign, 0) };
                Complex::new(
                    <$t>::from_bits(low ^ flip_low),
                    <$t>::from_bits(high ^ flip_high),
                )
            }
            #[inline(always)]
            fn survives(n: Complex<Self>, x: Complex<Self>, y: Complex<Self>) -> bool {
                // A plain comparison, not `max` (which also orders NaN and compiled to a
                // compare and a blend more per call): the parts are finite here.
                let max = |a: $t, b: $t| if a > b { a } else { b };
                let inf = |z: Complex<$t>| max(z.re.abs(), z.im.abs());
                inf(n) > max(inf(x), inf(y)) * $eps
            }
        }
    };
}

// DROP_EPS = 2^-40
float_amplitude!(
    f64,
    u64,
    u128,
    |x: f64| x,
    9.094_947_017_729_282e-13,
    1e-20,
    1e-10,
    false
);
// DROP_EPS = 2^-20
float_amplitude!(
    f32,
    u32,
    u64,
    |x: f64| x as f32,
    9.536_743e-7,
    1e-10,
    1e-4,
    true
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Values whose bits a select or a swap must keep: signed zeros, a tiny value, an
    /// infinity and a NaN with a payload.
    const F64S: [f64; 6] = [
        0.0,
        -0.0,
        1.5,
        -2.25e-300,
        f64::INFINITY,
        f64::from_bits(0x7ff8_dead_beef_0001),
    ];
    /// [`F64S`] for `f32`.
    const F32S: [f32; 6] = [
        0.0,
        -0.0,
        1.5,
        -2.25e-30,
        f32::NEG_INFINITY,
        f32::from_bits(0x7fc0_beef),
    ];

    /// The wire form gives back every value bit for bit: every `f64` (NaN payloads too),
    /// every finite or infinite `f32`, and exact values with coefficients of either sign up
    /// to `i128`'s ends, the poison value included.
    #[test]
    fn the_wire_form_reads_back_every_value() {
        fn round_trip<T: Amplitude>(v: T) -> T {
            let mut w = Vec::new();
            v.to_wire(&mut w);
            assert_eq!(w.len(), T::WIRE_WORDS);
            T::from_wire(&w)
        }
        for v in F64S {
            assert_eq!(round_trip(v).to_bits(), v.to_bits());
        }
        for v in &F32S[..5] {
            assert_eq!(round_trip(*v).to_bits(), v.to_bits());
        }
        use crate::Exact;
        let exact = [
            Exact::ZERO,
            Exact::frac_1_sqrt_2(),
            -Exact::frac_1_sqrt_2(),
            Exact::new(-3, 7, 40),
            Exact::new(i128::MAX, i128::MIN + 1, 3),
            Exact::new(i128::MIN, -1, 0),
            Exact::POISON,
        ];
        for v in exact {
            let back = round_trip(v);
            assert_eq!((back, back.is_poisoned()), (v, v.is_poisoned()));
            assert_eq!(back.parts(), v.parts());
        }
    }

    /// `select` returns one of its arguments bit for bit (signed zeros, NaN payloads and
    /// infinities included), for both floats and for `Exact`.
    #[test]
    fn select_returns_an_argument_bit_for_bit() {
        fn check<T: Amplitude + std::fmt::Debug>(values: &[T], bits: impl Fn(T) -> u64) {
            for &a in values {
                for &b in values {
                    let (x, y) = (Complex::new(a, b), Complex::new(b, a));
                    for c in [false, true] {
                        let got = T::select(c, x, y);
                        let want = if c { x } else { y };
                        assert_eq!((bits(got.re), bits(got.im)), (bits(want.re), bits(want.im)));
                    }
                }
            }
        }
        check(&F64S, f64::to_bits);
        check(&F32S, |x: f32| u64::from(x.to_bits()));
        let (p, q) = (crate::Exact::of_f64(0.5), crate::Exact::of_f64(-0.75));
        let (x, y) = (Complex::new(p, q), Complex::new(q, p));
        assert_eq!(crate::Exact::select(true, x, y), x);
        assert_eq!(crate::Exact::select(false, x, y), y);
    }

    /// `times_i_where` is the negation and swap bit for bit (signed zeros, NaN payloads and
    /// infinities included), for both floats, both signs and both conditions, and the same
    /// product as the generic definition for `Exact`.
    #[test]
    fn times_i_where_is_the_swap_and_negation_bit_for_bit() {
        fn check<T: Amplitude + std::ops::Neg<Output = T>>(values: &[T], bits: impl Fn(T) -> u64) {
            for &a in values {
                for &b in values {
                    let x = Complex::new(a, b);
                    for (c, minus) in [(false, false), (false, true), (true, false), (true, true)] {
                        let got = T::times_i_where(c, x, minus);
                        let want = match (c, minus) {
                            (false, _) => x,
                            (true, false) => Complex::new(-b, a),
                            (true, true) => Complex::new(b, -a),
                        };
                        assert_eq!(
                            (bits(got.re), bits(got.im)),
                            (bits(want.re), bits(want.im)),
                            "c {c} minus {minus}"
                        );
                    }
                }
            }
        }
        check(&F64S, f64::to_bits);
        check(&F32S, |x: f32| u64::from(x.to_bits()));
        let (p, q) = (crate::Exact::of_f64(0.5), crate::Exact::of_f64(-0.75));
        let (i, x) = (
            Complex::new(crate::Exact::ZERO, crate::Exact::ONE),
            Complex::new(p, q),
        );
        assert_eq!(crate::Exact::times_i_where(true, x, false), x * i);
        assert_eq!(crate::Exact::times_i_where(true, x, true), x * -i);
        assert_eq!(crate::Exact::times_i_where(false, x, true), x);
    }
}
