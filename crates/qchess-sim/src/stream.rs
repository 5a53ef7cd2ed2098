//! Copies that stream past the cache: non-temporal stores.
//!
//! A projection's undo record receives about half of a large state in a buffer nothing has
//! read lately. Ordinary stores first read every line they fill ("read for ownership"),
//! so the record cost a second read of its size. Non-temporal stores write whole lines
//! without reading them, and leave no copy in the cache, which the record (read only when
//! the move is taken back) does not want anyway. Measured on the position of
//! `qchess bench move` at 1.01e7 basis states: `measure_keeping` one thread 30.4 -> 27.1 ms,
//! the measuring move on two threads 1.46 -> 1.29-1.39 of its gate, the capture 54 -> 50 ms
//! (docs/benchmarks.md, "The bare measurement in parallel block jobs"). The projection's
//! kept entries that go below their block, to places read long before, are streamed the same
//! way (bare measurement at 1e7 on two pinned threads: f32 924 -> 1061 M states/s, f64
//! 798 -> 877; docs/benchmarks.md, "Pinned workers and streamed kept entries"). So is the
//! write-back of a dense gate's wide groups in a state larger than the caches (random merge
//! f64 at 1e7: 78-80 -> 84 M states/s; "The wide groups' write-back streamed"). This is the
//! crate's third unsafe call
//! (docs/decisions.md, "Non-temporal stores for the undo record").

/// Copies `src` into `dst` (the same length, or this panics) with non-temporal stores on
/// x86-64, with ordinary ones elsewhere. The values written are the same either way; call
/// [`fence`] before other threads may read `dst`.
#[inline]
pub(crate) fn copy(dst: &mut [u64], src: &[u64]) {
    assert_eq!(dst.len(), src.len(), "stream::copy of unequal lengths");
    #[cfg(target_arch = "x86_64")]
    for (d, &s) in dst.iter_mut().zip(src) {
        store(d, s);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// One non-temporal store of `value` to `*dst`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline(always)]
fn store(dst: &mut u64, value: u64) {
    // SAFETY: `dst` is a live, aligned, exclusively borrowed `u64`, so writing 8 bytes through
    // it is sound; the bits are reinterpreted as `i64`, which every bit pattern is. The
    // intrinsic is `unsafe` because it takes a raw pointer and is declared with
    // `#[target_feature(enable = "sse2")]`, which is part of the x86-64 baseline.
    unsafe {
        core::arch::x86_64::_mm_stream_si64(
            std::ptr::from_mut(dst).cast::<i64>(),
            i64::from_ne_bytes(value.to_ne_bytes()),
        );
    }
}

/// Writes `value` to `*dst` with non-temporal stores on x86-64, a word of 8 bytes at a time,
/// where the type is aligned to 8 and a whole number of words (keys, f64 amplitudes); with an
/// ordinary store elsewhere and for any other type. The bytes written are `value`'s either
/// way; call [`fence`] before other threads may read `dst`. How a pass writes entries to lines
/// nothing has read lately (the wide pair groups' write-back in a cold pass,
/// `kernels::dense`), saving the read for ownership.
#[inline(always)]
pub(crate) fn store_pod<V: bytemuck::Pod>(dst: &mut V, value: V) {
    #[cfg(target_arch = "x86_64")]
    if std::mem::align_of::<V>() >= 8 && std::mem::size_of::<V>() % 8 == 0 {
        let p = std::ptr::from_mut(dst).cast::<i64>();
        for (i, c) in bytemuck::bytes_of(&value).chunks_exact(8).enumerate() {
            let w = i64::from_ne_bytes(c.try_into().expect("8 bytes"));
            #[allow(unsafe_code)]
            // SAFETY: `dst` is a live, exclusively borrowed `V` aligned to 8 whose size is a
            // multiple of 8, so word `i < size / 8` lies inside it and is aligned; `V` is
            // `Pod`, so the bytes written (`value`'s own) make a valid `V`. The intrinsic is
            // `unsafe` for its raw pointer and its `sse2` feature, part of the x86-64
            // baseline.
            unsafe {
                core::arch::x86_64::_mm_stream_si64(p.add(i), w);
            }
        }
        return;
    }
    *dst = value;
}

/// Orders every non-temporal store made so far by this thread before its later stores
/// (`sfence`): a block job calls it before it hands its results on, so a thread that sees
/// them also sees the streamed record. Nothing off x86-64.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` reads and writes no memory of the program; the intrinsic is `unsafe`
    // only because it is declared with `#[target_feature(enable = "sse")]`, which is part
    // of the x86-64 baseline.
    unsafe {
        core::arch::x86_64::_mm_sfence();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_streamed_copy_writes_the_same_words() {
        let src: Vec<u64> = (0..1000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let mut dst = vec![0u64; 1000];
        super::copy(&mut dst[..], &src);
        super::fence();
        assert_eq!(dst, src);
        // A part, at an odd offset.
        let mut part = [7u64; 9];
        super::copy(&mut part[1..8], &src[500..507]);
        super::fence();
        assert_eq!(part[0], 7);
        assert_eq!(&part[1..8], &src[500..507]);
        assert_eq!(part[8], 7);
    }

    #[test]
    fn a_streamed_value_is_written_whole_and_alone() {
        use num_complex::Complex;
        // Words of 8 bytes (f64 parts, keys) streamed; f32 parts and bytes stored plainly.
        let mut a = [Complex::new(1.0f64, 2.0); 3];
        super::store_pod(
            &mut a[1],
            Complex::new(-0.0, f64::from_bits(0x7ff8_0000_dead_beef)),
        );
        let mut b = [Complex::new(1.0f32, 2.0); 3];
        super::store_pod(&mut b[1], Complex::new(3.5, -7.25));
        let mut k = [5u64; 3];
        super::store_pod(&mut k[1], u64::MAX - 1);
        let mut c = [9u8; 3];
        super::store_pod(&mut c[1], 200u8);
        super::fence();
        assert_eq!(
            (a[0], a[2]),
            (Complex::new(1.0, 2.0), Complex::new(1.0, 2.0))
        );
        assert_eq!(a[1].re.to_bits(), (-0.0f64).to_bits());
        assert_eq!(a[1].im.to_bits(), 0x7ff8_0000_dead_beef);
        assert_eq!(
            b,
            [
                Complex::new(1.0, 2.0),
                Complex::new(3.5, -7.25),
                Complex::new(1.0, 2.0)
            ]
        );
        assert_eq!(k, [5, u64::MAX - 1, 5]);
        assert_eq!(c, [9, 200, 9]);
    }
}
