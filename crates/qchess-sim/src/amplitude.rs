//! The amplitude scalar: `f64` (reference precision) or `f32` (half the memory).

use num_traits::Float;
use std::fmt::Debug;

/// A real scalar type the simulator stores amplitudes in (`Complex<T>`).
///
/// Implemented for `f64` (the default, 24 bytes per basis state) and `f32`
/// (16 bytes per basis state, about 1e-6 relative error after hundreds of moves).
/// Probabilities are always accumulated in `f64`.
///
/// ```
/// use qchess_sim::Amplitude;
/// assert_eq!(<f32 as Amplitude>::of_f64(0.5), 0.5f32);
/// assert!(<f64 as Amplitude>::DROP_EPS < f64::from(<f32 as Amplitude>::DROP_EPS));
/// ```
pub trait Amplitude: Float + Send + Sync + Debug + Default + 'static {
    /// Relative cancellation threshold: where two entries merge, a result whose largest
    /// component is at most `DROP_EPS` times the largest input component is dropped.
    const DROP_EPS: Self;
    /// A forced or measured outcome whose probability is at most this is treated as impossible.
    const ZERO_PROBABILITY: f64;
    /// Tolerance on `|norm^2 - 1|` for [`Normalization::RequireUnit`](crate::Normalization).
    const UNIT_TOLERANCE: f64;
    /// Converts from `f64` (rounding for `f32`).
    fn of_f64(x: f64) -> Self;
    /// Converts to `f64` exactly.
    fn as_f64(self) -> f64;
}

impl Amplitude for f64 {
    const DROP_EPS: f64 = 9.094_947_017_729_282e-13; // 2^-40
    const ZERO_PROBABILITY: f64 = 1e-20;
    const UNIT_TOLERANCE: f64 = 1e-10;
    fn of_f64(x: f64) -> Self {
        x
    }
    fn as_f64(self) -> f64 {
        self
    }
}

impl Amplitude for f32 {
    const DROP_EPS: f32 = 9.536_743e-7; // 2^-20
    const ZERO_PROBABILITY: f64 = 1e-10;
    const UNIT_TOLERANCE: f64 = 1e-4;
    fn of_f64(x: f64) -> Self {
        x as f32
    }
    fn as_f64(self) -> f64 {
        f64::from(self)
    }
}
