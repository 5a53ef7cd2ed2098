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
//! THP is `never`, or the OS is not Linux) nothing happens. This `madvise` is one of the
//! crate's few unsafe calls (the others: the prefetch hint of `prefetch.rs`, the
//! non-temporal stores of `stream.rs`, the room grown without zeros of `grow.rs` and the
//! call of the AVX-512 marginal kernel in `kernels/scan.rs`).
//!
//! Advice alone leaves a buffer that grew on 4 KiB pages where it was faulted before it was
//! advised or carried by a move: `realloc` moves a large buffer with `mremap` to wherever the
//! kernel finds room, and a 2 MiB page survives the move only if both places are 2 MiB
//! aligned alike. So a buffer of at least [`ALIGN_MIN_BYTES`] is reserved with the capacity
//! whose mapping is a whole number of 2 MiB pages ([`whole_huge_capacity`]), which the kernel
//! places, and moves, at 2 MiB boundaries.
//!
//! [`set_huge_pages`] turns the advice off for the whole process. A latency-sensitive server
//! may prefer 4 KiB pages: with the kernel's `defrag` setting at `madvise`, the first fault of
//! an advised range may compact memory to find free 2 MiB pages (the first 240 MB fill on a
//! freshly booted VM took 519 ms, every later one about 20 ms).

use std::sync::atomic::{AtomicBool, Ordering};

/// Buffers smaller than this are left to the allocator (2 MiB, one huge page: from 262 144
/// keys or 131 072 f64 amplitudes). It was 8 MiB until a wide merge's spill (8 MB of keys at
/// 10^7 states, just below it) was found to read at about 2.5 GB/s on 4 KiB pages against
/// 16 GB/s for the huge-page state beside it, on the Intel Xeon VM: advised, the random merge
/// at 10^7 ran 2-7 % faster by window and the measurement at 10^6 19-25 % (docs/benchmarks.md,
/// "Huge pages from 2 MiB").
///
/// ```
/// assert_eq!(qchess_sim::HUGE_MIN_BYTES, 2 << 20);
/// ```
pub const HUGE_MIN_BYTES: usize = 2 << 20;

/// The base page size the advised range is rounded out to.
const PAGE: usize = 4096;

/// State buffers at least this large are reserved with a capacity that makes their mapping a
/// whole number of 2 MiB pages (while [`huge_pages`] is on), which the kernel places, and
/// moves when the buffer grows, at 2 MiB boundaries: so they stay on transparent huge pages.
/// 32 MiB: glibc maps every request above its largest dynamic `mmap` threshold (32 MiB on
/// 64-bit) on its own, and the rounding adds at most 2 MiB, 6 % of such a buffer.
///
/// ```
/// assert_eq!(qchess_sim::ALIGN_MIN_BYTES, 32 << 20);
/// ```
pub const ALIGN_MIN_BYTES: usize = 32 << 20;

/// A transparent huge page.
const HUGE: usize = 2 << 20;

/// What glibc adds to a request it maps on its own: the chunk header (16 bytes) and the
/// rounding of the chunk size (at most 15 more); 32 covers both.
const MALLOC_OVERHEAD: usize = 32;

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
/// (glibc does so above its mmap threshold, 128 KiB to 32 MiB as it adapts) it is exactly
/// that mapping; one below the threshold, in the allocator's heap, is advised over the pages
/// it spans (its neighbours' bytes are neither read nor written), and glibc never moves such
/// a chunk by `mremap`. Advising only a mapped buffer's 2 MiB-aligned interior splits the
/// mapping in three, and then the allocator's `realloc` (an `mremap` of one mapping)
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
    madvise_huge(lo, hi - lo, true);
}

/// Takes the huge-page advice of [`advise_huge`] back from the pages of `v`'s capacity that
/// lie wholly above its first `from` elements (`MADV_NOHUGEPAGE`), until [`advise_huge`]
/// gives it again (which joins the two parts of the mapping back into one, as a later
/// `realloc` by `mremap` needs).
///
/// For an undo record reserved at its worst case but written only up to a length known to
/// lie a little above `from` (`State::pass_growing`): its last written 2 MiB page would
/// otherwise be a whole huge page, resident to its end, up to 2 MiB an array above what the
/// record holds. A capture at 1.01e7 basis states with a fresh record then peaked at
/// 1.502-1.506 times the state instead of 1.497 (docs/benchmarks.md, "A fresh undo record
/// reserved once"). Above `from` the record is written in 4 KiB pages: about four standard
/// deviations of the sample that set `from`, a few percent of the record.
pub(crate) fn hold_back_huge<T>(v: &mut Vec<T>, from: usize) {
    let size = std::mem::size_of::<T>();
    let bytes = v.capacity().saturating_mul(size);
    if bytes < HUGE_MIN_BYTES || !huge_pages() || from >= v.capacity() {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let lo = (start + from * size).next_multiple_of(PAGE);
    let hi = (start + bytes).next_multiple_of(PAGE);
    if lo < hi {
        madvise_huge(lo, hi - lo, false);
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn madvise_huge(addr: usize, len: usize, on: bool) {
    let advice = if on {
        libc::MADV_HUGEPAGE
    } else {
        libc::MADV_NOHUGEPAGE
    };
    // SAFETY: `[addr, addr + len)` lies within the page-rounded span of one live heap
    // allocation this crate owns (a Vec's capacity), so every page in it is mapped.
    // MADV_HUGEPAGE and MADV_NOHUGEPAGE only set or clear a flag on the mapping: they neither
    // read nor write any byte (the allocator's metadata on the first page included) nor
    // change what is mapped, so no Rust value and no allocator invariant can be affected. A
    // refusal (EINVAL where THP is unsupported) is harmless and ignored.
    unsafe {
        libc::madvise(addr as *mut libc::c_void, len, advice);
    }
}

#[cfg(not(target_os = "linux"))]
fn madvise_huge(_addr: usize, _len: usize, _on: bool) {}

/// The capacity to reserve for at least `cap` elements of `T`: `cap` itself, or, for a buffer
/// of at least [`ALIGN_MIN_BYTES`] while the advice is on, the most elements whose bytes and
/// the allocator's [`MALLOC_OVERHEAD`] fit the next whole number of 2 MiB pages.
///
/// Why: the kernel places an anonymous mapping whose length is a whole number of 2 MiB pages
/// at a 2 MiB boundary, and moves it to one when `realloc` grows it (`mremap`). Then every
/// 2 MiB of the buffer is a huge page, also after it moved, because both places are aligned
/// alike and the kernel moves huge pages whole. A length that is not a whole number lands
/// anywhere, and a move splits the huge pages it carries into 4 KiB ones: a game state grown
/// by real moves to 1e7 basis states sat one third to one half on 4 KiB pages (measured with
/// `/proc/self/smaps`; a scratch program showed 100 % against 50-75 % coverage after
/// doublings), and a jump on it cost 1.10-1.16 of the bare iSwap on a fresh copy, against
/// 0.92-1.02 on a copy of the same state in huge pages (docs/benchmarks.md, "Game states on
/// huge pages"). The extra capacity is never written; only the part of it in the buffer's
/// last 2 MiB page is resident, and only once that page is touched (at most 2 MiB an
/// array: buffers written once at a fixed length skip the rounding, [`reserve_fixed`]). The
/// memory budget is asked for the rounding before it is reserved ([`rounding_bytes`],
/// `memory::buffer_bytes`).
pub(crate) fn whole_huge_capacity<T>(cap: usize) -> usize {
    let size = std::mem::size_of::<T>();
    let bytes = cap.saturating_mul(size);
    if size == 0 || bytes < ALIGN_MIN_BYTES || !huge_pages() {
        return cap;
    }
    match bytes
        .checked_add(MALLOC_OVERHEAD)
        .and_then(|b| b.checked_next_multiple_of(HUGE))
    {
        Some(whole) => ((whole - MALLOC_OVERHEAD) / size).max(cap),
        None => cap,
    }
}

/// Reserves room for `additional` more elements, fallibly, with the capacity of
/// [`whole_huge_capacity`]; then, if that allocated, moved or grew the buffer, the advice of
/// [`advise_huge`] (a buffer grown in place past [`HUGE_MIN_BYTES`] gets it too). The one
/// way state-sized buffers are reserved.
pub(crate) fn reserve_exact<T>(
    v: &mut Vec<T>,
    additional: usize,
) -> Result<(), std::collections::TryReserveError> {
    reserve_with(v, additional, true)
}

/// The bytes that [`reserve_exact`]`(v, additional)` reserves beyond the `additional`
/// elements asked for: the rounding of [`whole_huge_capacity`] (at most 2 MiB), or nothing
/// where `v`'s capacity already holds them or the rounding does not apply. A reservation
/// asks the memory budget for these too, so the budget counts what is reserved, not only
/// what is asked.
#[cfg(test)]
pub(crate) fn rounding_bytes<T>(v: &Vec<T>, additional: usize) -> usize {
    rounding_for::<T>(v.len(), v.capacity(), additional)
}

/// [`rounding_bytes`] of a vector of `len` elements and `capacity`.
pub(crate) fn rounding_for<T>(len: usize, capacity: usize, additional: usize) -> usize {
    let wanted = len.saturating_add(additional);
    if wanted <= capacity {
        return 0;
    }
    (whole_huge_capacity::<T>(wanted) - wanted).saturating_mul(std::mem::size_of::<T>())
}

/// [`reserve_exact`] without the rounding of [`whole_huge_capacity`]: for a buffer written
/// once at its final length and never grown (an undo record). Its last 2 MiB page is then
/// not a whole huge page, so the part of it the buffer does not reach never becomes
/// resident: a rounded record of 10^7 / 2 entries sat up to 2 MiB per array above its
/// length in the resident set (a measuring move's peak 1.509x the state instead of 1.500x,
/// docs/benchmarks.md). Still advised as [`advise_huge`] advises.
pub(crate) fn reserve_fixed<T>(
    v: &mut Vec<T>,
    additional: usize,
) -> Result<(), std::collections::TryReserveError> {
    reserve_with(v, additional, false)
}

/// [`reserve_exact`] (`round`) or [`reserve_fixed`].
pub(crate) fn reserve_with<T>(
    v: &mut Vec<T>,
    additional: usize,
    round: bool,
) -> Result<(), std::collections::TryReserveError> {
    let (before, capacity) = (v.as_ptr(), v.capacity());
    let wanted = v.len().saturating_add(additional);
    if wanted <= capacity {
        return Ok(());
    }
    let rounded = if round {
        whole_huge_capacity::<T>(wanted)
    } else {
        wanted
    };
    if let Err(e) = v.try_reserve_exact(rounded - v.len()) {
        if rounded == wanted {
            return Err(e);
        }
        // The rounding's few pages may be what does not fit: the exact request decides.
        v.try_reserve_exact(additional)?;
    }
    if v.as_ptr() != before || v.capacity() != capacity {
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
    let mut v = Vec::with_capacity(whole_huge_capacity::<T>(src.len()));
    advise_huge(&mut v);
    v.extend_from_slice(src);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_capacities_fill_whole_huge_pages() {
        // Below ALIGN_MIN_BYTES: the request itself.
        assert_eq!(whole_huge_capacity::<u64>(1000), 1000);
        assert_eq!(
            whole_huge_capacity::<u64>(ALIGN_MIN_BYTES / 8 - 1),
            ALIGN_MIN_BYTES / 8 - 1
        );
        // 40 000 000 bytes of keys or amplitudes: 20 pages of 2 MiB less glibc's 32 bytes.
        assert_eq!(whole_huge_capacity::<u64>(5_000_000), 5_242_876);
        assert_eq!(whole_huge_capacity::<[f64; 2]>(2_500_000), 2_621_438);
        // Exactly full already: 20 pages less 32 bytes stays; one more element takes a 21st.
        assert_eq!(whole_huge_capacity::<u64>(5_242_876), 5_242_876);
        assert_eq!(whole_huge_capacity::<u64>(5_242_877), 5_505_020);
        // Never less than asked, also where the rounding would overflow.
        assert_eq!(whole_huge_capacity::<u64>(usize::MAX / 8), usize::MAX / 8);
        assert_eq!(whole_huge_capacity::<()>(1 << 40), 1 << 40);
    }

    /// Bytes of the 4 KiB pages in `[lo, hi)` that are resident (`/proc/self/pagemap`: bit
    /// 63 of each page's entry).
    #[cfg(target_os = "linux")]
    fn resident_in(lo: usize, hi: usize) -> usize {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open("/proc/self/pagemap").expect("pagemap");
        let (first, last) = (lo / PAGE, hi.div_ceil(PAGE));
        f.seek(SeekFrom::Start(first as u64 * 8)).expect("seek");
        let mut raw = vec![0u8; (last - first) * 8];
        f.read_exact(&mut raw).expect("pagemap entries");
        let present = (raw.chunks_exact(8))
            .filter(|e| u64::from_le_bytes((*e).try_into().expect("8 bytes")) >> 63 == 1)
            .count();
        present * PAGE
    }

    /// A buffer advised for huge pages, held back above `from` and written a little past it,
    /// ending 1 MiB into a 2 MiB page: the held-back room is resident to the written end
    /// only, not to that huge page's end. Given the advice back, the buffer grows with its
    /// contents kept.
    ///
    /// In a process of its own: among the other tests, the allocator may hand out heap
    /// memory that earlier tests made resident.
    #[cfg(target_os = "linux")]
    #[test]
    fn held_back_room_is_resident_only_where_written() {
        let name = "pages::tests::held_back_room_in_a_fresh_process";
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", name, "--ignored", "--test-threads=1"])
            .output()
            .expect("the test binary runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The body of [`held_back_room_is_resident_only_where_written`], run by it alone.
    #[cfg(target_os = "linux")]
    #[test]
    #[ignore = "run in a process of its own by held_back_room_is_resident_only_where_written"]
    fn held_back_room_in_a_fresh_process() {
        set_huge_pages(true);
        // 48 MB: above glibc's largest mmap threshold, so a mapping of its own.
        let cap = 6_000_000usize;
        let mut v: Vec<u64> = Vec::new();
        reserve_fixed(&mut v, cap).expect("room");
        let start = v.as_ptr() as usize;
        let from = 2_000_000usize;
        hold_back_huge(&mut v, from);
        let held = (start + from * 8).next_multiple_of(PAGE);
        // Written up to 1 MiB past the first 2 MiB boundary above `from`.
        let end = (start + from * 8).next_multiple_of(HUGE) + (1 << 20);
        let written = (end - start) / 8;
        v.extend((0..written as u64).map(|i| i ^ 0x5a5a));
        let rss = resident_in(held, start + cap * 8);
        assert!(
            rss <= end - held + PAGE,
            "resident {rss} bytes where {} were written",
            end - held
        );
        advise_huge(&mut v);
        reserve_fixed(&mut v, cap).expect("room");
        assert_eq!(v.len(), written);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 ^ 0x5a5a));
    }

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
        // A buffer of at least ALIGN_MIN_BYTES is given the capacity that fills whole 2 MiB
        // pages with glibc's 32 bytes: 5e6 keys are 40 000 000 bytes, the next whole number of
        // pages 20 (41 943 040 bytes), less 32 is 5 242 876 keys.
        let mut big: Vec<u64> = vec![9; 5];
        reserve_exact(&mut big, 5_000_000 - 5).expect("room");
        assert_eq!(big.capacity(), 5_242_876);
        assert_eq!(big, [9; 5]);
        // Already room: nothing changes.
        let before = big.as_ptr();
        reserve_exact(&mut big, 5_000_000).expect("room");
        assert_eq!((big.as_ptr(), big.capacity()), (before, 5_242_876));
        // An impossible reservation is an error, not an abort, and changes nothing.
        assert!(reserve_exact(&mut v, usize::MAX / 2).is_err());
        assert_eq!(v, [7, 7, 7]);
    }

    #[test]
    fn the_rounding_is_counted_before_it_is_reserved() {
        // Below ALIGN_MIN_BYTES, or with room already: nothing beyond the request.
        let small: Vec<u64> = vec![1; 10];
        assert_eq!(rounding_bytes(&small, 1000), 0);
        let mut big: Vec<u64> = vec![9; 5];
        // 5e6 keys round to 5 242 876: 242 876 keys of 8 bytes beyond the request.
        assert_eq!(rounding_bytes(&big, 5_000_000 - 5), 242_876 * 8);
        reserve_exact(&mut big, 5_000_000 - 5).expect("room");
        assert_eq!(big.capacity() * 8, 5_000_000 * 8 + 242_876 * 8);
        assert_eq!(rounding_bytes(&big, 5_000_000 - 5), 0);
        assert_eq!(rounding_bytes(&big, 5_242_876 - 5), 0);
        // One more element than the capacity: the next whole number of pages, 21.
        assert_eq!(
            rounding_bytes(&big, 5_242_877 - 5),
            (5_505_020 - 5_242_877) * 8
        );
        // Amplitudes of 16 bytes: 2.5e6 round to 2 621 438.
        let amps: Vec<[f64; 2]> = Vec::new();
        assert_eq!(rounding_bytes(&amps, 2_500_000), 121_438 * 16);
        // Where the rounding would overflow, nothing.
        assert_eq!(rounding_bytes(&small, usize::MAX / 8), 0);
    }

    #[test]
    fn fixed_buffers_get_exactly_what_they_ask() {
        // The 5e6 keys that `reserve_exact` rounds to 5 242 876: exactly 5e6 here.
        let mut fixed: Vec<u64> = vec![9; 5];
        reserve_fixed(&mut fixed, 5_000_000 - 5).expect("room");
        assert_eq!(fixed.capacity(), 5_000_000);
        assert_eq!(fixed, [9; 5]);
        let before = fixed.as_ptr();
        reserve_fixed(&mut fixed, 1000).expect("room");
        assert_eq!((fixed.as_ptr(), fixed.capacity()), (before, 5_000_000));
        assert!(reserve_fixed(&mut fixed, usize::MAX / 2).is_err());
        assert_eq!(fixed, [9; 5]);
    }
}
