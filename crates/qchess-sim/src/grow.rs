//! Growing an array in place without writing zeros first.
//!
//! The split of a piece to an empty square above it (`kernels::spread`) grows the state's
//! arrays by up to half and writes its whole output from the top down, in place. Growing
//! them by `Vec::resize` first wrote zeros over the grown part, which the pass then wrote
//! again: 12 of the 116-128 bytes an entry the pass moves at f64. Measured with the zeros
//! skipped, the split of a game-shaped state of 10^7 entries ran 7-8 % faster on the Zen 3
//! VM (docs/benchmarks.md, "The split's grown room without zeros").
//!
//! [`split_spare`] lends the array's entries and its uninitialized room at once (what the
//! unstable `Vec::split_at_spare_mut` does), a [`Down`] writer takes both and writes a run's
//! output one entry below the last, and only a writer that went down past every slot of the
//! room gives the [`Filled`] proof that [`commit`] needs to take the room into the array's
//! length. So no slot of the room can be taken in unwritten, whatever the pass does: a pass
//! that stops early leaves the array as it was (with the entries it overwrote changed). These
//! two calls are the crate's fourth and fifth unsafe code (docs/decisions.md, "The split's
//! grown room without zeros").

use std::mem::{MaybeUninit, take};

/// The entries of `v` and the first `room` slots of its spare capacity, borrowed together.
/// `None` (nothing borrowed) when the capacity holds fewer than `room` more entries.
#[allow(unsafe_code)]
pub(crate) fn split_spare<T>(
    v: &mut Vec<T>,
    room: usize,
) -> Option<(&mut [T], &mut [MaybeUninit<T>])> {
    let len = v.len();
    if v.capacity() - len < room {
        return None;
    }
    let ptr = v.as_mut_ptr();
    // SAFETY: `ptr` is the start of `v`'s allocation of `capacity()` elements, and `len +
    // room <= capacity()`. The first `len` elements are initialized `T`s; the next `room`
    // slots are allocated and are exposed only as `MaybeUninit<T>`, which any bytes are. The
    // two ranges are disjoint, and both borrows live no longer than the exclusive borrow of
    // `v` they come from, so nothing else can reach these elements (or move or free the
    // buffer) while they do. This is `Vec::split_at_spare_mut` (unstable) cut to `room`.
    unsafe {
        Some((
            std::slice::from_raw_parts_mut(ptr, len),
            std::slice::from_raw_parts_mut(ptr.add(len).cast::<MaybeUninit<T>>(), room),
        ))
    }
}

/// Proof that every slot of a [`split_spare`] room was written: made only by
/// [`Down::finish`], taken by [`commit`]. It names the room by address and length, so it
/// commits no other array.
#[derive(Debug)]
pub(crate) struct Filled {
    start: usize,
    room: usize,
}

/// Takes the room that `filled` proves written into `v`'s length. Panics (with `v`
/// unchanged) when `filled` is not the proof for the room just past `v`'s entries: an
/// internal error, never the caller's input.
#[allow(unsafe_code)]
pub(crate) fn commit<T>(v: &mut Vec<T>, filled: Filled) {
    let len = v.len();
    let start = v.as_ptr().wrapping_add(len) as usize;
    assert!(
        filled.start == start && filled.room <= v.capacity() - len,
        "grow::commit: the proof is for another room"
    );
    // SAFETY: `filled` was made by `Down::finish` of a writer over `split_spare(v, room)`'s
    // room, which starts at `v`'s entry `len` (the address checked above, and `v` could not
    // have been moved, grown or shrunk since, as the room's borrow of `v` ended only when
    // the writer was finished) and is `room` slots long, within the capacity (checked). The
    // writer made the proof only after it had written every one of those slots, so entries
    // `len..len + room` are initialized `T`s.
    unsafe {
        v.set_len(len + filled.room);
    }
}

/// A writer of a run's output from the top down, in place, into two arrays at once (keys
/// and amplitudes): each entry one below the last one written, reading the run's input
/// through [`Push::keys`] and [`Push::vals`]. An in-place pass reads only below where it
/// writes.
pub(crate) trait Push<K, V> {
    /// The first array's initialized part (the run's input, as far as nothing was written
    /// over it).
    fn keys(&self) -> &[K];
    /// The second array's initialized part.
    fn vals(&self) -> &[V];
    /// Writes `(k, v)` one entry below the last one written. Panics when this writer has no
    /// slot left (a pass that writes more than its output: an internal error).
    fn push(&mut self, k: K, v: V);
    /// How many entries this writer can still write.
    fn left(&self) -> usize;
    /// Writes the input entries `lo..hi` through `f`, from the top, each one below the
    /// last one written (the run moved up by `left() - hi`): what `push` of each does, in
    /// a loop the writers of one part run without a bounds check a write.
    #[inline(always)]
    fn shift_up(&mut self, lo: usize, hi: usize, mut f: impl FnMut(K, V) -> (K, V))
    where
        K: Copy,
        V: Copy,
    {
        for r in (lo..hi).rev() {
            let (k, v) = f(self.keys()[r], self.vals()[r]);
            self.push(k, v);
        }
    }
    /// Moves the writer out, leaving one with nothing to write in its place: a pass runs
    /// its loop on the moved-out writer, a local value whose position and arrays stay in
    /// registers (through a borrowed writer the compiler reloads them after every store),
    /// and puts it back (`*w = local`).
    fn take(&mut self) -> Self
    where
        Self: Sized;
}

/// The [`Push`] methods every writer has alike: where it stands and its input.
macro_rules! accessors {
    () => {
        #[inline(always)]
        fn left(&self) -> usize {
            self.next
        }

        #[inline(always)]
        fn keys(&self) -> &[K] {
            self.below.0
        }

        #[inline(always)]
        fn vals(&self) -> &[V] {
            self.below.1
        }
    };
}

/// A [`Push`] writer over two arrays' `below` (initialized entries: the run's input, at the
/// bottom) and `room` (uninitialized slots above them), from the top of the room. Its own
/// [`Push::push`] writes either part with a branch; [`Down::phased`] lends a writer of one
/// part, and each is a local value (its position in a register) for the pass's hot loops.
#[derive(Debug)]
pub(crate) struct Down<'a, K, V> {
    below: (&'a mut [K], &'a mut [V]),
    room: (&'a mut [MaybeUninit<K>], &'a mut [MaybeUninit<V>]),
    /// Where the last entry went (the next goes at `next - 1`).
    next: usize,
}

impl<'a, K: Copy, V: Copy> Down<'a, K, V> {
    /// A writer over two arrays' initialized parts `below` and the `room` above them (all of
    /// equal lengths, or this panics), from the top.
    pub(crate) fn new(
        below: (&'a mut [K], &'a mut [V]),
        room: (&'a mut [MaybeUninit<K>], &'a mut [MaybeUninit<V>]),
    ) -> Self {
        assert!(
            below.0.len() == below.1.len() && room.0.len() == room.1.len(),
            "grow::Down of unequal arrays"
        );
        let next = below.0.len() + room.0.len();
        Self { below, room, next }
    }

    /// A writer over two initialized regions alone (no room), from their top.
    pub(crate) fn within(keys: &'a mut [K], vals: &'a mut [V]) -> Self {
        Self::new((keys, vals), (&mut [], &mut []))
    }

    /// How many entries are still to be written into the room (0 once it is full).
    #[cfg(test)]
    pub(crate) fn room_left(&self) -> usize {
        self.next.saturating_sub(self.below.0.len())
    }

    /// Lends `f` a local writer: of the room alone when at least `bound` slots of it are
    /// left ([`Phase::Room`]), of the initialized part alone when the room is full
    /// ([`Phase::Below`]), else of both ([`Phase::Both`]). The entries it writes count as
    /// this writer's.
    #[inline(always)]
    pub(crate) fn phased<R>(
        &mut self,
        bound: usize,
        f: impl FnOnce(Phase<'_, '_, K, V>) -> R,
    ) -> R {
        let n = self.below.0.len();
        if self.next >= n + bound && self.next > n {
            let mut w = Room {
                below: (&*self.below.0, &*self.below.1),
                room: (&mut *self.room.0, &mut *self.room.1),
                next: self.next - n,
            };
            let r = f(Phase::Room(&mut w));
            self.next = n + w.next;
            r
        } else if self.next <= n {
            let mut w = Below {
                below: (&mut *self.below.0, &mut *self.below.1),
                next: self.next,
            };
            let r = f(Phase::Below(&mut w));
            self.next = w.next;
            r
        } else {
            let mut w = Down {
                below: (&mut *self.below.0, &mut *self.below.1),
                room: (&mut *self.room.0, &mut *self.room.1),
                next: self.next,
            };
            let r = f(Phase::Both(&mut w));
            self.next = w.next;
            r
        }
    }

    /// The proofs that every slot of the two rooms was written, or `None` when some was not.
    pub(crate) fn finish(self) -> Option<(Filled, Filled)> {
        (self.next <= self.below.0.len()).then_some((
            Filled {
                start: self.room.0.as_ptr() as usize,
                room: self.room.0.len(),
            },
            Filled {
                start: self.room.1.as_ptr() as usize,
                room: self.room.1.len(),
            },
        ))
    }
}

impl<K: Copy, V: Copy> Push<K, V> for Down<'_, K, V> {
    #[inline(always)]
    fn take(&mut self) -> Self {
        Self {
            below: (take(&mut self.below.0), take(&mut self.below.1)),
            room: (take(&mut self.room.0), take(&mut self.room.1)),
            next: std::mem::replace(&mut self.next, 0),
        }
    }

    accessors!();

    #[inline(always)]
    fn push(&mut self, k: K, v: V) {
        self.next -= 1;
        let n = self.below.0.len();
        if self.next >= n {
            self.room.0[self.next - n].write(k);
            self.room.1[self.next - n].write(v);
        } else {
            self.below.0[self.next] = k;
            self.below.1[self.next] = v;
        }
    }
}

/// One of the local writers [`Down::phased`] lends.
#[derive(Debug)]
pub(crate) enum Phase<'w, 'a, K, V> {
    /// Writes the room only.
    Room(&'w mut Room<'a, K, V>),
    /// Writes the initialized part only.
    Below(&'w mut Below<'a, K, V>),
    /// Writes either, with a branch a write.
    Both(&'w mut Down<'a, K, V>),
}

/// The [`Push`] writer of a [`Down`]'s room alone.
#[derive(Debug)]
pub(crate) struct Room<'a, K, V> {
    below: (&'a [K], &'a [V]),
    room: (&'a mut [MaybeUninit<K>], &'a mut [MaybeUninit<V>]),
    next: usize,
}

impl<K: Copy, V: Copy> Push<K, V> for Room<'_, K, V> {
    #[inline(always)]
    fn shift_up(&mut self, lo: usize, hi: usize, mut f: impl FnMut(K, V) -> (K, V)) {
        let m = hi - lo;
        let top = self.next;
        let (ik, iv) = (&self.below.0[lo..hi], &self.below.1[lo..hi]);
        let (ok, ov) = (
            &mut self.room.0[top - m..top],
            &mut self.room.1[top - m..top],
        );
        for i in (0..m).rev() {
            let (k, v) = f(ik[i], iv[i]);
            ok[i].write(k);
            ov[i].write(v);
        }
        self.next = top - m;
    }

    #[inline(always)]
    fn take(&mut self) -> Self {
        Self {
            below: self.below,
            room: (take(&mut self.room.0), take(&mut self.room.1)),
            next: std::mem::replace(&mut self.next, 0),
        }
    }

    accessors!();

    #[inline(always)]
    fn push(&mut self, k: K, v: V) {
        self.next -= 1;
        self.room.0[self.next].write(k);
        self.room.1[self.next].write(v);
    }
}

/// The [`Push`] writer of a [`Down`]'s initialized part alone.
#[derive(Debug)]
pub(crate) struct Below<'a, K, V> {
    below: (&'a mut [K], &'a mut [V]),
    next: usize,
}

impl<K: Copy, V: Copy> Push<K, V> for Below<'_, K, V> {
    #[inline(always)]
    fn shift_up(&mut self, lo: usize, hi: usize, mut f: impl FnMut(K, V) -> (K, V)) {
        let m = hi - lo;
        let top = self.next;
        assert!(top >= hi, "grow::Below::shift_up below its input");
        let shift = top - hi;
        let (ks, vs) = (&mut self.below.0[lo..top], &mut self.below.1[lo..top]);
        for i in (0..m).rev() {
            let (k, v) = f(ks[i], vs[i]);
            ks[i + shift] = k;
            vs[i + shift] = v;
        }
        self.next = top - m;
    }

    #[inline(always)]
    fn take(&mut self) -> Self {
        Self {
            below: (take(&mut self.below.0), take(&mut self.below.1)),
            next: std::mem::replace(&mut self.next, 0),
        }
    }

    accessors!();

    #[inline(always)]
    fn push(&mut self, k: K, v: V) {
        self.next -= 1;
        self.below.0[self.next] = k;
        self.below.1[self.next] = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each input entry of `r` in `rs` (from the top) written twice, as `(10 k, v)` then
    /// `(k, v)`, through whichever writer `phased(bound)` lends.
    fn twice(w: &mut Down<'_, u64, u32>, rs: std::ops::Range<usize>, bound: usize) {
        fn go<W: Push<u64, u32>>(w: &mut W, rs: std::ops::Range<usize>) {
            for r in rs.rev() {
                let (k, v) = (w.keys()[r], w.vals()[r]);
                w.push(k * 10, v);
                w.push(k, v);
            }
        }
        w.phased(bound, |p| match p {
            Phase::Room(w) => go(w, rs),
            Phase::Below(w) => go(w, rs),
            Phase::Both(w) => go(w, rs),
        });
    }

    /// A run written from the top down into room taken from the spare capacity, through
    /// each of the three writers: the arrays hold exactly what was written, and a writer
    /// that stopped short commits nothing.
    #[test]
    fn a_run_written_from_the_top_is_committed_only_when_the_room_is_full() {
        let mut k: Vec<u64> = Vec::with_capacity(12);
        let mut v: Vec<u32> = Vec::with_capacity(12);
        k.extend([1, 2, 3, 4, 5]);
        v.extend([7, 6, 5, 4, 3]);
        assert!(split_spare(&mut k, 8).is_none(), "only 7 slots of room");
        let (kb, kr) = split_spare(&mut k, 4).unwrap();
        let (vb, vr) = split_spare(&mut v, 4).unwrap();
        let mut w = Down::new((kb, vb), (kr, vr));
        // Entry 4 into the room alone (4 slots left, 2 asked), entry 3 by a writer of both
        // (2 slots left, 4 asked: one phase is not enough), entry 2 below (the room full).
        twice(&mut w, 4..5, 2);
        assert_eq!(w.room_left(), 2);
        twice(&mut w, 3..4, 4);
        assert_eq!(w.room_left(), 0);
        twice(&mut w, 2..3, 2);
        assert_eq!(w.left(), 3);
        let (fk, fv) = w.finish().expect("the room's 4 slots are written");
        commit(&mut k, fk);
        commit(&mut v, fv);
        assert_eq!(k, [1, 2, 3, 3, 30, 4, 40, 5, 50]);
        assert_eq!(v, [7, 6, 5, 5, 5, 4, 4, 3, 3]);

        // Short by one slot of the room: no proof, the lengths stay.
        let (kb, kr) = split_spare(&mut k, 3).unwrap();
        let (vb, vr) = split_spare(&mut v, 3).unwrap();
        let mut w = Down::new((kb, vb), (kr, vr));
        twice(&mut w, 8..9, 1);
        assert!(w.finish().is_none());
        assert_eq!((k.len(), v.len()), (9, 9));
    }

    /// A proof commits only the array whose room it was made for.
    #[test]
    #[should_panic(expected = "the proof is for another room")]
    fn a_proof_for_another_array_is_refused() {
        let mut a: Vec<u64> = Vec::with_capacity(8);
        let mut b: Vec<u64> = Vec::with_capacity(8);
        a.push(1);
        b.push(1);
        let (kb, kr) = split_spare(&mut a, 1).unwrap();
        let (mut vb, mut vr) = ([0u64], [MaybeUninit::uninit()]);
        let mut w = Down::new((kb, &mut vb[..]), (kr, &mut vr[..]));
        w.push(5, 5);
        let (filled, _) = w.finish().unwrap();
        commit(&mut b, filled);
    }
}
