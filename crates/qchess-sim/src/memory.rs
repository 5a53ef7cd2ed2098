//! Reusable amplitude buffers and the default size cap.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use num_complex::Complex;

/// A key array and an amplitude array of equal length. Between uses a buffer keeps its
/// initialised length (the contents are stale), so reusing it never rewrites memory that
/// was already written once.
#[derive(Clone, Debug, Default)]
pub(crate) struct Buffer<T> {
    pub keys: Vec<u64>,
    pub amps: Vec<Complex<T>>,
}

impl<T: Amplitude> Buffer<T> {
    pub fn capacity(&self) -> usize {
        self.keys.capacity().min(self.amps.capacity())
    }

    pub fn heap_bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.amps.capacity() * std::mem::size_of::<Complex<T>>()
    }

    /// Makes the buffer at least `n` entries long (initialised), reserving fallibly.
    pub fn ensure_len(&mut self, n: usize) -> Result<(), SimError> {
        if self.keys.len() < n {
            let extra = n - self.keys.len();
            self.keys
                .try_reserve_exact(extra)
                .map_err(|_| SimError::OutOfMemory { states: n })?;
            self.keys.resize(n, 0);
        }
        if self.amps.len() < n {
            let extra = n - self.amps.len();
            self.amps
                .try_reserve_exact(extra)
                .map_err(|_| SimError::OutOfMemory { states: n })?;
            self.amps.resize(n, Complex::new(T::zero(), T::zero()));
        }
        Ok(())
    }
}

/// Retired buffers waiting to be reused by the next pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pool<T> {
    free: Vec<Buffer<T>>,
}

impl<T: Amplitude> Pool<T> {
    /// A buffer of at least `n` initialised entries: the smallest free one that fits, else the
    /// largest grown to fit.
    pub fn take(&mut self, n: usize) -> Result<Buffer<T>, SimError> {
        let fit = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= n)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        let idx = fit.or_else(|| {
            self.free
                .iter()
                .enumerate()
                .max_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i)
        });
        let mut buf = match idx {
            Some(i) => self.free.swap_remove(i),
            None => Buffer {
                keys: Vec::new(),
                amps: Vec::new(),
            },
        };
        if let Err(e) = buf.ensure_len(n) {
            self.free.push(buf);
            return Err(e);
        }
        Ok(buf)
    }

    pub fn give(&mut self, buf: Buffer<T>) {
        if buf.capacity() > 0 {
            self.free.push(buf);
        }
    }

    /// Keeps at most `limit` entries' worth of free buffers (largest first).
    pub fn trim(&mut self, limit: usize) {
        self.free.sort_by_key(|b| std::cmp::Reverse(b.capacity()));
        let mut kept = 0usize;
        self.free.retain(|b| {
            let keep = kept + b.capacity() <= limit;
            if keep {
                kept += b.capacity();
            }
            keep
        });
    }

    pub fn clear(&mut self) {
        self.free.clear();
    }

    pub fn heap_bytes(&self) -> usize {
        self.free.iter().map(Buffer::heap_bytes).sum()
    }
}

/// Bytes one stored basis state takes (key + amplitude).
pub(crate) fn entry_bytes<T: Amplitude>() -> usize {
    8 + std::mem::size_of::<Complex<T>>()
}

/// The default cap: as many basis states as fit twice (state plus one pass's output) in 85 %
/// of this machine's physical memory (`/proc/meminfo`), or 2^26 when that cannot be read.
pub(crate) fn default_cap<T: Amplitude>() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
            })
    });
    match total {
        Some(kib) => {
            let bytes = kib.saturating_mul(1024) / 100 * 85;
            (bytes / (2 * entry_bytes::<T>() as u64)) as usize
        }
        None => 1 << 26,
    }
}
