//! One of a sector's two arrays (keys or amplitudes): a vector whose first `head` elements
//! are not part of the state.
//!
//! A dense gate that grows the state writes its output in place from the top of the arrays
//! down (`kernels::expand`), so where amplitudes cancelled its output ends above 0. Moving it
//! down to 0 was a memmove of the whole state: about a fifth of a random-state split at 1e7
//! (docs/benchmarks.md, "Room below a dense gate's output"). A [`Lane`] keeps that room
//! instead. It dereferences to its live elements only, so every reader sees the state as
//! before, and its own methods (`truncate`, `resize`, ...) count from the head. The room is
//! used by the next dense gate that creates no more entries than it holds (the merge that
//! undoes a split creates exactly the entries the split cancelled): that gate runs forwards
//! into it (`dense::expand_dense_forward`). A growth that needs room above the live
//! elements grows the allocation at its end (a large one by remapping its pages, no copy)
//! and keeps the room below, unless that room is more than one part in
//! [`Lane::SETTLE_SHARE`] of the live elements, when they are first moved down over it
//! ([`Lane::reserve_with`]). Anything that needs a plain `Vec` of the live elements moves
//! them down first ([`Lane::vec_mut`]: nothing to do when the head is 0). Both arrays of a
//! sector always have the same head.
//!
//! A lane that shrinks also keeps the elements above its live ones, initialized, as room
//! above (a tail): a dense gate's in-place pass, which writes every new element before it
//! reads it, grows into them as they are ([`Lane::grow_stale`]) instead of having zeros
//! written over them first (about 6 % of a random split at 1e7, docs/benchmarks.md, "Pass 1
//! of dense groups on a byte per offset; a lane's room above"). Every other growth writes
//! its value, and whatever hands the vector out whole drops the tail first.

use std::ops::{Deref, DerefMut};

/// A vector, the number of its first elements that are not live (room below the entries)
/// and the number of its last ones that are not (room above, still initialized: a lane that
/// shrank keeps them, so that a later growth into them writes no zeros first,
/// [`Lane::grow_stale`]). Dereferences to the live elements `buf[head..buf.len() - tail]`.
#[derive(Default)]
pub(crate) struct Lane<T> {
    buf: Vec<T>,
    head: usize,
    tail: usize,
}

/// The live elements, as a slice shows them (the room below is not part of the state).
impl<T: std::fmt::Debug> std::fmt::Debug for Lane<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T> Deref for Lane<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        &self.buf[self.head..self.buf.len() - self.tail]
    }
}

impl<T> DerefMut for Lane<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        let end = self.buf.len() - self.tail;
        &mut self.buf[self.head..end]
    }
}

impl<'a, T> IntoIterator for &'a Lane<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut Lane<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl<T> From<Vec<T>> for Lane<T> {
    fn from(buf: Vec<T>) -> Self {
        Self {
            buf,
            head: 0,
            tail: 0,
        }
    }
}

impl<T> Lane<T> {
    /// The elements the allocation holds, the room below the live ones included: what the
    /// arrays cost in memory.
    pub(crate) fn allocated(&self) -> usize {
        self.buf.capacity()
    }

    /// The live elements the allocation holds from the head up: room above the live ones
    /// is `capacity() - len()`.
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity() - self.head
    }

    /// The number of elements below the live ones.
    pub(crate) fn head(&self) -> usize {
        self.head
    }

    /// The end of the live elements in the vector.
    fn end(&self) -> usize {
        self.buf.len() - self.tail
    }

    /// Keeps the first `n` live elements; the ones after them stay allocated and
    /// initialized as room above.
    pub(crate) fn truncate(&mut self, n: usize) {
        if n < self.len() {
            self.tail = self.buf.len() - (self.head + n);
        }
    }

    /// Drops the room above the live elements (an array that others see whole).
    fn drop_tail(&mut self) {
        let end = self.end();
        self.buf.truncate(end);
        self.tail = 0;
    }

    /// Appends one live element.
    pub(crate) fn push(&mut self, v: T) {
        self.drop_tail();
        self.buf.push(v);
    }

    /// The whole vector up to the live elements' end, room below included, for a pass that
    /// places its output anywhere in it (then [`Lane::set_live`]).
    pub(crate) fn whole_mut(&mut self) -> &mut [T] {
        let end = self.end();
        &mut self.buf[..end]
    }

    /// Sets the live elements to `buf[from..to]` of [`Lane::whole_mut`].
    pub(crate) fn set_live(&mut self, from: usize, to: usize) {
        assert!(
            from <= to && to <= self.end(),
            "live range out of the vector"
        );
        self.tail = self.buf.len() - to;
        self.head = from;
    }

    /// Moves the live elements down to 0 (nothing to do when the head is 0), dropping the
    /// room above first (the move would carry it too).
    pub(crate) fn settle(&mut self) {
        if self.head > 0 {
            self.drop_tail();
            self.buf.drain(..self.head);
            self.head = 0;
        }
    }

    /// The live elements as a plain vector, moved down to 0 first.
    pub(crate) fn vec_mut(&mut self) -> &mut Vec<T> {
        self.drop_tail();
        self.settle();
        &mut self.buf
    }

    /// The whole vector, room below and above included, for reuse as a pass buffer whose
    /// contents do not matter (nothing is moved).
    pub(crate) fn into_whole(self) -> Vec<T> {
        self.buf
    }

    /// Makes room for `more` live elements after the live ones with `reserve` (a fallible
    /// `Vec` reservation, `pages::reserve_exact` say). Where the room above is too small,
    /// the allocation grows at its end (a large one by remapping its pages, without a copy)
    /// and the room below stays, unless that room is more than [`Lane::SETTLE_SHARE`] of the
    /// live elements: then they are first moved down over it, so that the room below never
    /// grows without bound.
    pub(crate) fn reserve_with<E>(
        &mut self,
        more: usize,
        reserve: impl FnOnce(&mut Vec<T>, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.settles_for(more) {
            self.settle();
        }
        // The room above is in the vector's length already.
        reserve(&mut self.buf, more.saturating_sub(self.tail))
    }

    /// Whether [`Lane::reserve_with`]`(more, ..)` first moves the live elements down.
    fn settles_for(&self, more: usize) -> bool {
        self.buf.capacity() - self.end() < more && self.head * Self::SETTLE_SHARE > self.len()
    }

    /// The elements by which [`Lane::reserve_with`]`(more, ..)` grows the allocation, before
    /// any rounding (what the memory budget is asked for).
    pub(crate) fn growth_for(&self, more: usize) -> usize {
        let used = if self.settles_for(more) {
            self.len()
        } else {
            self.end()
        };
        (used + more).saturating_sub(self.buf.capacity())
    }

    /// The room below the live elements that a growth keeps: up to one part in this many
    /// of them.
    pub(crate) const SETTLE_SHARE: usize = 16;

    /// Gives back the allocation above `n` live elements (and the room below them).
    pub(crate) fn shrink_to(&mut self, n: usize) {
        self.drop_tail();
        self.settle();
        self.buf.shrink_to(n);
    }

    /// Gives back the allocation above the live elements and `spare` more, keeping the room
    /// below them as it is (no element moves, unlike [`Lane::shrink_to`]): an inverted
    /// projection's record, cut from a sector's old arrays in place.
    pub(crate) fn shrink_above(&mut self, spare: usize) {
        self.drop_tail();
        let keep = self.buf.len() + spare;
        self.buf.shrink_to(keep);
    }

    /// [`Lane::shrink_to`] the live length.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.drop_tail();
        self.settle();
        self.buf.shrink_to_fit();
    }

    /// The bytes a [`Lane::reserve_with`]`(more, pages::reserve_exact)` reserves beyond the
    /// `more` elements asked for (`pages::rounding_bytes`): nothing where the room above
    /// the live elements holds them or, once they are moved down, the allocation does.
    pub(crate) fn rounding_bytes(&self, more: usize) -> usize {
        if self.settles_for(more) {
            crate::pages::rounding_for::<T>(self.len(), self.buf.capacity(), more)
        } else {
            crate::pages::rounding_for::<T>(self.end(), self.buf.capacity(), more)
        }
    }
}

impl<T: Clone> Lane<T> {
    /// Resizes the live elements to `n`, new ones `v`.
    pub(crate) fn resize(&mut self, n: usize, v: T) {
        self.drop_tail();
        self.buf.resize(self.head + n, v);
    }

    /// Resizes the live elements to `n`, new ones taken from the room above as they are
    /// (stale values of earlier entries) and only beyond it `v`: for a pass that writes
    /// every new element before it reads it (a dense gate's in-place pass, which writes its
    /// output from the top down). The zeros `resize` would write first cost about 6 % of a
    /// random split at 1e7 (docs/benchmarks.md, "A lane keeps its room above").
    pub(crate) fn grow_stale(&mut self, n: usize, v: T) {
        let want = self.head + n;
        if want <= self.buf.len() {
            self.tail = self.buf.len() - want;
        } else {
            self.tail = 0;
            self.buf.resize(want, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lane;

    #[test]
    fn a_lane_reads_and_grows_from_its_head() {
        let mut l = Lane::from(vec![9u64, 9, 1, 2, 3]);
        l.set_live(2, 5);
        assert_eq!(&*l, &[1, 2, 3]);
        assert_eq!((l.len(), l.head()), (3, 2));
        l.truncate(2);
        assert_eq!(&*l, &[1, 2]);
        l.resize(4, 7);
        assert_eq!(&*l, &[1, 2, 7, 7]);
        l.push(8);
        l[0] = 5;
        assert_eq!(&*l, &[5, 2, 7, 7, 8]);
        l.settle();
        assert_eq!((l.head(), &*l), (0, &[5u64, 2, 7, 7, 8][..]));
        l.set_live(1, 3);
        assert_eq!((l.head(), &*l), (1, &[2u64, 7][..]));
        // The whole vector for reuse: the rooms below and above included.
        assert_eq!(l.into_whole(), vec![5, 2, 7, 7, 8]);
    }

    /// A lane that shrinks keeps its last elements as room above; `grow_stale` takes them
    /// back as they are (and only beyond them writes the value given), `resize` writes the
    /// value over them, and whatever hands the vector out whole drops them first.
    #[test]
    fn a_lane_keeps_its_room_above_for_a_growth_without_zeros() {
        let mut l = Lane::from(vec![1u64, 2, 3, 4, 5, 6]);
        l.truncate(3);
        assert_eq!(l.whole_mut().len(), 3);
        assert_eq!(&*l, &[1, 2, 3]);
        l.grow_stale(5, 0);
        assert_eq!(&*l, &[1, 2, 3, 4, 5]);
        l.grow_stale(8, 9);
        assert_eq!(&*l, &[1, 2, 3, 4, 5, 6, 9, 9]);
        l.truncate(2);
        l.resize(4, 7);
        assert_eq!(&*l, &[1, 2, 7, 7]);
        l.truncate(1);
        l.push(8);
        assert_eq!(&*l, &[1, 8]);
        assert_eq!(l.vec_mut(), &vec![1, 8]);
        // A pass's output placed in the whole vector up to the live end; the rest of it
        // stays as room below and above.
        let mut m = Lane::from(vec![0u64, 1, 2, 3, 4, 5, 6, 7]);
        m.truncate(6);
        m.set_live(2, 4);
        assert_eq!((m.head(), &*m), (2, &[2u64, 3][..]));
        m.grow_stale(5, 0);
        assert_eq!(&*m, &[2, 3, 4, 5, 6]);
        // A reservation counts the room above as room: 8 slots, 7 used by the live end.
        let mut v = Vec::with_capacity(8);
        v.extend(0..8u64);
        let mut r = Lane::from(v);
        r.truncate(5);
        assert_eq!(r.growth_for(3), 0);
        r.reserve_with(3, |v, n| v.try_reserve_exact(n)).unwrap();
        assert_eq!((r.allocated(), r.capacity()), (8, 8));
        r.settle();
        m.settle();
        assert_eq!((m.head(), &*m), (0, &[2u64, 3, 4, 5, 6][..]));
        assert_eq!(m.into_whole(), vec![2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_growth_uses_the_room_below_before_the_allocation_grows() {
        let mut v = Vec::with_capacity(8);
        v.extend([0u64, 0, 0, 1, 2, 3, 4, 5]);
        let mut l = Lane::from(v);
        l.set_live(3, 8);
        let cap = l.allocated();
        // 8 slots, 5 live: room for 3 more only once moved down.
        l.reserve_with(3, |v, n| v.try_reserve_exact(n)).unwrap();
        assert_eq!((l.head(), l.allocated()), (0, cap));
        assert_eq!(&*l, &[1, 2, 3, 4, 5]);
        // Enough room above: nothing moves.
        let mut w = Vec::with_capacity(8);
        w.extend([0u64, 1, 2]);
        let mut m = Lane::from(w);
        m.set_live(1, 3);
        m.reserve_with(4, |v, n| v.try_reserve_exact(n)).unwrap();
        assert_eq!((m.head(), &*m), (1, &[1u64, 2][..]));
        // Too little room above, and a room below of at most one part in SETTLE_SHARE of
        // the live elements: the allocation grows and the room below stays.
        let live = 10 * Lane::<u64>::SETTLE_SHARE;
        let mut v = Vec::with_capacity(live + 2);
        v.extend(0..(live + 2) as u64);
        let mut g = Lane::from(v);
        g.set_live(2, live + 2);
        assert_eq!(g.growth_for(5), 5);
        g.reserve_with(5, |v, n| v.try_reserve_exact(n)).unwrap();
        assert_eq!((g.head(), g[0], g.len()), (2, 2, live));
        assert!(g.capacity() >= live + 5);
    }

    #[test]
    fn shrinking_drops_the_room_below() {
        let mut l = Lane::from(vec![0u64, 0, 4, 5]);
        l.set_live(2, 4);
        l.shrink_to(2);
        assert_eq!((l.head(), &*l), (0, &[4u64, 5][..]));
        assert!(l.allocated() >= 2);
    }
}
