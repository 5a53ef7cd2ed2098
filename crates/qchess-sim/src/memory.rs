//! Reusable amplitude buffers and the default size cap.

use crate::amplitude::Amplitude;
use crate::error::SimError;
use num_complex::Complex;

/// A key array and an amplitude array, reused from pass to pass so that their pages are
/// written (faulted in) once, not on every gate.
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

    /// Makes room for `n` entries (capacity), reserving fallibly. The old length and contents
    /// are kept: callers either clear and push, or overwrite by index.
    pub fn prepare(&mut self, n: usize) -> Result<(), SimError> {
        let oom = |_| SimError::OutOfMemory { states: n };
        self.keys
            .try_reserve_exact(n.saturating_sub(self.keys.len()))
            .map_err(oom)?;
        self.amps
            .try_reserve_exact(n.saturating_sub(self.amps.len()))
            .map_err(oom)?;
        Ok(())
    }

    /// Makes the first `n` entries writable by index. A reused buffer's old length counts as
    /// initialised (its stale contents are overwritten), so only growth is filled.
    pub fn ensure_initialized(&mut self, n: usize) -> Result<(), SimError> {
        self.prepare(n)?;
        self.keys.resize(n, 0);
        self.amps.resize(n, Complex::new(T::zero(), T::zero()));
        Ok(())
    }

    /// Empties the buffer (capacity kept) for appending.
    pub fn clear(&mut self) {
        self.keys.clear();
        self.amps.clear();
    }
}

/// Retired buffers waiting to be reused by the next pass. Cloning gives an empty pool: the
/// buffers hold no state.
#[derive(Debug, Default)]
pub(crate) struct Pool<T> {
    free: Vec<Buffer<T>>,
}

impl<T> Clone for Pool<T> {
    fn clone(&self) -> Self {
        Self { free: Vec::new() }
    }
}

impl<T: Amplitude> Pool<T> {
    /// An empty buffer with room for `n` entries: the smallest free one that fits, else the
    /// largest grown in place (for large blocks the allocator remaps pages instead of copying).
    pub fn take(&mut self, n: usize) -> Result<Buffer<T>, SimError> {
        let fit = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= n)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)
            .or_else(|| {
                self.free
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, b)| b.capacity())
                    .map(|(i, _)| i)
            });
        let mut buf = match fit {
            Some(i) => self.free.swap_remove(i),
            None => Buffer {
                keys: Vec::new(),
                amps: Vec::new(),
            },
        };
        if let Err(e) = buf.prepare(n) {
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
