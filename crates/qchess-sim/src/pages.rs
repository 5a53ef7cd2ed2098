//! Transparent huge pages for state-sized buffers (Linux).
//!
//! A state of 10^7 entries spans 240 MB of 4 KiB pages: the kernel faults each one in (and
//! zeroes it) on first write and frees each one when a projection shrinks the arrays to their
//! survivors or a buffer is dropped. Measured on the 2-core VM (docs/benchmarks.md, "Huge
//! pages for state buffers"): filling 240 MB took 83-88 ms in 4 KiB pages against 19-24 ms in
//! 2 MiB pages, shrinking it to half 7.0 ms against 0.47 ms, and dropping it 8.0 ms against
//! 0.43 ms. So every buffer of at least [`HUGE_MIN_BYTES`] is advised `MADV_HUGEPAGE` right
//! after it is reserved (before its pages are touched): with the kernel's transparent huge
//! pages set to `madvise` (or `always`) it is then backed by 2 MiB pages where its range
//! allows. The advice changes no contents and no allocation; where the kernel refuses it (or
//! THP is `never`, or the OS is not Linux) nothing happens. This is one of the crate's two
//! unsafe calls (one `madvise`; the other is the prefetch hint of `prefetch.rs`).
//!
//! [`set_huge_pages`] turns the advice off for the whole process. A latency-sensitive server
//! may prefer 4 KiB pages: with the kernel's `defrag` setting at `madvise`, the first fault of
//! an advised range may compact memory to find free 2 MiB pages (the first 240 MB fill on a
//! freshly booted VM took 519 ms, every later one about 20 ms).

use std::sync::atomic::{AtomicBool, Ordering};

/// Buffers smaller than this are left to the allocator (8 MiB: from about 350 000 f64 entries).
pub const HUGE_MIN_BYTES: usize = 8 << 20;

/// The base page size the advised range is rounded out to.
const PAGE: usize = 4096;

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns the huge-page advice for new state buffers on (the default) or off, for the whole
/// process. Results never depend on it; only the speed of allocating and freeing large
/// states does.
///
/// ```
/// qchess_sim::set_huge_pages(false);
/// assert!(!qchess_sim::huge_pages());
/// qchess_sim::set_huge_pages(true);
/// assert!(qchess_sim::huge_pages());
/// ```
pub fn set_huge_pages(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether new state buffers of at least [`HUGE_MIN_BYTES`] are advised to use transparent
/// huge pages (see [`set_huge_pages`]).
pub fn huge_pages() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Advises the page-rounded span of `v`'s whole capacity for transparent huge pages, when it
/// is at least [`HUGE_MIN_BYTES`] and the advice is on.
///
/// The span is rounded *out* to whole pages, so for a buffer the allocator mapped on its own
/// (every one this large) it is exactly that mapping. Advising only its 2 MiB-aligned interior
/// splits the mapping in three, and then the allocator's `realloc` (an `mremap` of one mapping)
/// fails and falls back to allocate, copy and free: measured, a split of a 10^7-entry
/// game-shaped state fell from 118 to 62 M states/s that way, while the whole-mapping advice
/// raised it to 127-190.
pub(crate) fn advise_huge<T>(v: &mut Vec<T>) {
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes < HUGE_MIN_BYTES || !huge_pages() {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let (lo, hi) = (start / PAGE * PAGE, (start + bytes).next_multiple_of(PAGE));
    madvise_huge(lo, hi - lo);
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn madvise_huge(addr: usize, len: usize) {
    // SAFETY: `[addr, addr + len)` is the page-rounded span of one live heap allocation this
    // crate owns (a Vec's capacity), so every page in it is mapped. MADV_HUGEPAGE only sets a
    // flag on the mapping: it neither reads nor writes any byte (the allocator's metadata on
    // the first page included) nor changes what is mapped, so no Rust value and no allocator
    // invariant can be affected. A refusal (EINVAL where THP is unsupported) is harmless and
    // ignored.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn madvise_huge(_addr: usize, _len: usize) {}

/// `v.try_reserve_exact(additional)`, then, if that allocated or moved the buffer, the advice
/// of [`advise_huge`]: the one way state-sized buffers are reserved. (A buffer grown in place
/// keeps the flag its mapping already has.)
pub(crate) fn reserve_exact<T>(
    v: &mut Vec<T>,
    additional: usize,
) -> Result<(), std::collections::TryReserveError> {
    let before = v.as_ptr();
    v.try_reserve_exact(additional)?;
    if v.as_ptr() != before {
        advise_huge(v);
    }
    Ok(())
}

/// A copy of `src` in a buffer advised as [`reserve_exact`] advises (the fallible clone of a
/// sector's arrays).
pub(crate) fn try_copy<T: Clone>(src: &[T]) -> Result<Vec<T>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    reserve_exact(&mut v, src.len())?;
    v.extend_from_slice(src);
    Ok(v)
}

/// [`try_copy`] that aborts on allocation failure as `Vec::clone` does (`Clone` cannot fail).
pub(crate) fn copy<T: Clone>(src: &[T]) -> Vec<T> {
    let mut v = Vec::with_capacity(src.len());
    advise_huge(&mut v);
    v.extend_from_slice(src);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_buffers_keep_their_contents_and_capacity() {
        let src: Vec<u64> = (0..(HUGE_MIN_BYTES / 8 + 12_345) as u64).collect();
        let copy = try_copy(&src).expect("room");
        assert_eq!(copy, src);
        assert_eq!(copy.capacity(), src.len());
        let mut v: Vec<u64> = vec![7; 3];
        reserve_exact(&mut v, HUGE_MIN_BYTES / 8).expect("room");
        assert_eq!(v, [7, 7, 7]);
        assert!(v.capacity() >= 3 + HUGE_MIN_BYTES / 8);
        // An impossible reservation is an error, not an abort, and changes nothing.
        assert!(reserve_exact(&mut v, usize::MAX / 2).is_err());
        assert_eq!(v, [7, 7, 7]);
    }
}
