//! Software prefetch: a hint that an element will be read soon, so its cache line is fetched
//! while other work goes on.
//!
//! A loop that does much work per element it streams in keeps only a few cache misses in
//! flight, so it runs at memory latency rather than bandwidth; the hardware prefetcher does
//! not make up for it on this VM. Measured on the dense pair pass (`kernels::dense`): reading
//! a 10^7-entry random state into the scratch took 24 ms without the hint and 16.5 ms with it
//! 128 entries ahead (docs/benchmarks.md, "Split / merge: dense groups in a scratch"). The
//! game-shaped split and merge passes (`kernels::spread`, the forward pass and the
//! creates-nothing check of `kernels::expand`) hint theirs too: on the Zen 3 VM at 1e7, 5-28 %
//! faster (docs/benchmarks.md, "Software prefetch in the game-shaped split and merge"); the
//! slide's entry-by-entry kernel and the general backward pass were measured with hints and
//! got no faster, so they have none. The probability scan (`kernels::scan`) hints its reads
//! as well: one thread f64 28-29 % faster there (docs/benchmarks.md, "Software prefetch in
//! the probability scan"). This is the crate's second unsafe call
//! (docs/decisions.md, "Software prefetch").

/// How many entries ahead a streaming pass hints its reads: measured best of 64 ... 512 on
/// the dense scatter, and 128 against 64, 256 and 512 on the split to an empty square
/// (`kernels::spread`, docs/benchmarks.md, "Software prefetch in the game-shaped split and
/// merge").
pub(crate) const AHEAD: usize = 128;

/// Keys in one 64-byte cache line: the step of a pass that hints each line of keys once.
pub(crate) const KEYS_PER_LINE: usize = 64 / std::mem::size_of::<u64>();

/// Hints that `s[i]` will be read soon; nothing happens when `i` is out of bounds or off
/// x86-64. Never changes a value.
#[inline(always)]
pub(crate) fn prefetch<T>(s: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = s.get(i) {
        prefetch_line(std::ptr::from_ref(x).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i);
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline(always)]
fn prefetch_line(p: *const i8) {
    // SAFETY: `prefetch` is a hint: it reads no value into the program, writes nothing, and
    // cannot fault (even on an unmapped address); here `p` points into a live slice anyway.
    // The call is `unsafe` only because the intrinsic is declared with
    // `#[target_feature(enable = "sse")]`, and SSE is part of the x86-64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p);
    }
}
