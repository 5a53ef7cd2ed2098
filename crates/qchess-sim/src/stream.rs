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
//! (docs/decisions.md, "Non-temporal stores for the undo record"). [`copy_uninit`] streams
//! the record into fresh room never zeroed (docs/decisions.md, "The undo record written
//! without zeros").

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

/// [`copy`] into slots not yet written: copies `src` into `dst` (the same length, or this
/// panics) and so writes every slot of `dst`. Keys (`u64`) and the float amplitudes
/// (`Complex<f64>`, `Complex<f32>`) go by non-temporal stores of 8-byte words on x86-64
/// where both slices are aligned to 8; any other type, and every type elsewhere, by ordinary
/// stores. How a projection writes its undo record into fresh room that was never zeroed
/// (`grow::Up`). Call [`fence`] before other threads may read `dst`.
#[inline]
pub(crate) fn copy_uninit<V: Copy + 'static>(dst: &mut [std::mem::MaybeUninit<V>], src: &[V]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "stream::copy_uninit of unequal lengths"
    );
    #[cfg(target_arch = "x86_64")]
    if plain_words::<V>() && (dst.as_ptr() as usize) % 8 == 0 && (src.as_ptr() as usize) % 8 == 0 {
        let words = std::mem::size_of_val(src) / 8;
        let (d, s) = (dst.as_mut_ptr().cast::<i64>(), src.as_ptr().cast::<i64>());
        for i in 0..words {
            #[allow(unsafe_code)]
            // SAFETY: `V` is `u64`, `Complex<f64>` or `Complex<f32>` (`plain_words`): its
            // size is a multiple of 8 and it has no padding, so `src`'s `words` 8-byte words
            // are its initialized bytes, which `s` (aligned to 8, checked) reads in bounds;
            // `dst` is as long as `src` and exclusively borrowed, so word `i < words` of it
            // lies inside it and is aligned (checked). Every bit pattern is a valid value of
            // these types, so the slots hold `src`'s values once written. The intrinsic is
            // `unsafe` for its raw pointer and its `sse2` feature, part of the x86-64
            // baseline. Under Miri (which runs no inline assembly, as the intrinsic now is) the
            // same word goes by an ordinary write through the same pointer, so the pointer
            // arithmetic and the reads are still checked.
            unsafe {
                let w = s.add(i).read();
                #[cfg(not(miri))]
                core::arch::x86_64::_mm_stream_si64(d.add(i), w);
                #[cfg(miri)]
                d.add(i).write(w);
            }
        }
        return;
    }
    for (d, &s) in dst.iter_mut().zip(src) {
        d.write(s);
    }
}

/// Whether `V` is one of the types [`copy_uninit`] streams as 8-byte words: `u64`,
/// `Complex<f64>` or `Complex<f32>` (sizes 8, 16 and 8, no padding, every bit pattern a
/// value). A comparison of constants the compiler folds.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn plain_words<V: 'static>() -> bool {
    use num_complex::Complex;
    use std::any::TypeId;
    let t = TypeId::of::<V>();
    t == TypeId::of::<u64>()
        || t == TypeId::of::<Complex<f64>>()
        || t == TypeId::of::<Complex<f32>>()
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
/// them also sees the streamed record. Nothing off x86-64, nor under Miri (where
/// [`copy_uninit`] makes no non-temporal store).
#[inline]
#[allow(unsafe_code)]
pub(crate) fn fence() {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
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

    /// Into slots never written (through `grow::Up`, whose proof takes them into the array):
    /// keys, f64 and f32 amplitudes (streamed as words) and a type not streamed (written
    /// plainly) each land exactly, after what the array held.
    #[test]
    fn a_copy_into_fresh_slots_writes_every_slot() {
        use crate::grow::{Up, commit, split_spare};
        use num_complex::Complex;
        fn check<V: Copy + PartialEq + std::fmt::Debug + 'static>(src: &[V], at: usize) {
            let mut dst: Vec<V> = Vec::with_capacity(at + src.len());
            dst.extend(std::iter::repeat_n(src[0], at));
            let mut keys: Vec<u64> = Vec::with_capacity(src.len());
            let (_, room) = split_spare(&mut dst, src.len()).unwrap();
            let (_, key_room) = split_spare(&mut keys, src.len()).unwrap();
            let mut w = Up::new((key_room, room));
            let ks: Vec<u64> = (0..src.len() as u64).collect();
            w.put(&ks, src);
            super::fence();
            let (fk, fv) = w.finish();
            commit(&mut keys, fk);
            commit(&mut dst, fv);
            assert_eq!(&dst[at..], src);
            assert_eq!(keys, ks);
        }
        let keys: Vec<u64> = (0..37u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        check(&keys, 0);
        check(&keys, 3);
        let f64s: Vec<Complex<f64>> = (0..37)
            .map(|i| Complex::new(f64::from(i), -0.5 * f64::from(i)))
            .collect();
        check(&f64s, 1);
        let f32s: Vec<Complex<f32>> = (0..37u16)
            .map(|i| Complex::new(f32::from(i), 2.0 * f32::from(i)))
            .collect();
        check(&f32s, 0);
        check(&f32s, 1);
        let pairs: Vec<(u32, u8)> = (0..37u32).map(|i| (i, i as u8)).collect();
        check(&pairs, 2);
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
