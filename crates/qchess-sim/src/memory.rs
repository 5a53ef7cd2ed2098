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
        self.prepare_with(n, true)
    }

    /// [`Buffer::prepare`], with the capacity rounded to whole 2 MiB pages
    /// ([`crate::pages::reserve_exact`]) when `round`, exact
    /// ([`crate::pages::reserve_fixed`]) otherwise.
    fn prepare_with(&mut self, n: usize, round: bool) -> Result<(), SimError> {
        use crate::pages::{reserve_exact, reserve_fixed};
        let oom = |_| SimError::OutOfMemory { states: n };
        let (nk, na) = (
            n.saturating_sub(self.keys.len()),
            n.saturating_sub(self.amps.len()),
        );
        if round {
            reserve_exact(&mut self.keys, nk).map_err(oom)?;
            reserve_exact(&mut self.amps, na).map_err(oom)?;
        } else {
            reserve_fixed(&mut self.keys, nk).map_err(oom)?;
            reserve_fixed(&mut self.amps, na).map_err(oom)?;
        }
        Ok(())
    }

    /// Makes at least the first `n` entries writable by index. A reused buffer's old length
    /// counts as initialised (its stale contents are overwritten), so only growth is filled,
    /// and a longer one is not cut: its entries stay initialised for the next, larger use
    /// (a spill used for 10^6 entries, then 3 x 10^5 by the next gate, then 10^6 again would
    /// otherwise write 16 MB of zeros each time, 6 % of a random merge at 10^7).
    pub fn ensure_initialized(&mut self, n: usize) -> Result<(), SimError> {
        self.prepare(n)?;
        if self.keys.len() < n {
            self.keys.resize(n, 0);
        }
        if self.amps.len() < n {
            self.amps.resize(n, Complex::new(T::zero(), T::zero()));
        }
        Ok(())
    }

    /// [`crate::pages::hold_back_huge`] on both arrays from entry `from` on, or from their
    /// lengths where those are longer (a reused buffer's pages below its length are resident
    /// and may be huge pages already, which the advice would split).
    pub fn hold_back_huge(&mut self, from: usize) {
        let (kf, af) = (from.max(self.keys.len()), from.max(self.amps.len()));
        crate::pages::hold_back_huge(&mut self.keys, kf);
        crate::pages::hold_back_huge(&mut self.amps, af);
    }

    /// [`crate::pages::advise_huge`] on both arrays: the advice over the whole capacity again
    /// after [`Buffer::hold_back_huge`].
    pub fn advise_huge(&mut self) {
        crate::pages::advise_huge(&mut self.keys);
        crate::pages::advise_huge(&mut self.amps);
    }

    /// Both arrays' entries (their lengths, the same after
    /// [`Buffer::ensure_initialized`]), to be written by index.
    pub fn parts(&mut self) -> (&mut [u64], &mut [Complex<T>]) {
        (&mut self.keys, &mut self.amps)
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
        self.take_with(n, true)
    }

    /// [`Pool::take`] for a buffer written once at length `n` and never grown (an undo
    /// record): a fresh or grown one gets exactly `n` entries' capacity
    /// ([`crate::pages::reserve_fixed`]).
    pub fn take_fixed(&mut self, n: usize) -> Result<Buffer<T>, SimError> {
        self.take_with(n, false)
    }

    /// [`Pool::take`] (`round`) or [`Pool::take_fixed`].
    fn take_with(&mut self, n: usize, round: bool) -> Result<Buffer<T>, SimError> {
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
        if let Err(e) = buf.prepare_with(n, round) {
            self.free.push(buf);
            return Err(e);
        }
        Ok(buf)
    }

    /// The capacity of the buffer [`Pool::take`] would hand out for `n` entries if one
    /// fits without growing (0 if none does).
    pub fn fitting_capacity(&self, n: usize) -> usize {
        self.free
            .iter()
            .map(Buffer::capacity)
            .filter(|&c| c >= n)
            .min()
            .unwrap_or(0)
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

    /// Whether a free buffer already has room for `n` entries ([`Pool::take`] then neither
    /// allocates nor grows one).
    pub fn fits(&self, n: usize) -> bool {
        self.free.iter().any(|b| b.capacity() >= n)
    }
}

/// Bytes one stored basis state takes (key + amplitude).
pub(crate) fn entry_bytes<T: Amplitude>() -> usize {
    8 + std::mem::size_of::<Complex<T>>()
}

/// Bytes of a pass buffer of `n` entries as [`Pool::take`] reserves it afresh: both arrays
/// with the rounding of [`crate::pages::whole_huge_capacity`] (at most 2 MiB each, and none
/// below [`crate::pages::ALIGN_MIN_BYTES`]). What a take asks the memory budget for, so that
/// the budget counts what is reserved.
pub(crate) fn buffer_bytes<T: Amplitude>(n: usize) -> usize {
    use crate::pages::whole_huge_capacity;
    let amp = std::mem::size_of::<Complex<T>>();
    whole_huge_capacity::<u64>(n)
        .saturating_mul(8)
        .saturating_add(whole_huge_capacity::<Complex<T>>(n).saturating_mul(amp))
}

/// The default cap: as many basis states as fit once in this machine's physical memory
/// (`MemTotal` in `/proc/meminfo`), or 2^26 when that cannot be read. It is only an upper
/// bound on the count: what a gate may really allocate is decided by the memory budget
/// ([`default_memory_budget`]), which counts every state-sized allocation, pass buffers and
/// in-place growth included (peak at most about 1.4x the state since the in-place kernels).
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
            let bytes = kib.saturating_mul(1024);
            (bytes / entry_bytes::<T>() as u64) as usize
        }
        None => 1 << 26,
    }
}

/// A process-wide override of [`default_memory_budget`] (0 = none), set by
/// [`set_default_memory_budget`].
static BUDGET_OVERRIDE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Makes every state built from now on (in this process) start with a memory budget of
/// `bytes` instead of the measured default; `None` goes back to measuring. The CLI's
/// `--memory BYTES` sets this.
///
/// ```
/// qchess_sim::set_default_memory_budget(Some(1 << 20));
/// assert_eq!(qchess_sim::default_memory_budget(), 1 << 20);
/// assert_eq!(qchess_sim::State::<f64>::classical(1).memory_budget(), 1 << 20);
/// qchess_sim::set_default_memory_budget(None);
/// ```
pub fn set_default_memory_budget(bytes: Option<usize>) {
    BUDGET_OVERRIDE.store(
        bytes.map_or(0, |b| b.max(1)),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Bytes of head room left for the budget when it is measured: 1/16 of what is free plus
/// 64 MiB, for the allocator's own overhead, thread stacks and everything that is not
/// state-sized.
const MARGIN_FIXED: u64 = 64 << 20;

/// The memory budget a new state starts with: the override of
/// [`set_default_memory_budget`] if set, else the smallest of
/// * the address-space and data-segment limits (`ulimit -v`, `ulimit -d`) less this
///   process's current virtual size and data size,
/// * the cgroup's `memory.max` less its `memory.current`,
/// * `MemAvailable`,
///
/// less a safety margin (1/16 of it plus 64 MiB). Unreadable sources are skipped; if none
/// can be read the budget is 4 GiB.
///
/// ```
/// let b = qchess_sim::default_memory_budget();
/// assert!(b > 0);
/// ```
pub fn default_memory_budget() -> usize {
    let o = BUDGET_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed);
    if o != 0 {
        return o;
    }
    let free = [rlimit_free(), cgroup_free(), mem_available()]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(4 << 30);
    let margin = free / 16 + MARGIN_FIXED;
    usize::try_from(free.saturating_sub(margin)).unwrap_or(usize::MAX)
}

/// The budget of a state that already holds `held` heap bytes when it is built: the override
/// of [`set_default_memory_budget`] as it stands (it covers the state's own bytes), else the
/// measured [`default_memory_budget`] plus `held`, because memory the new state already
/// occupies has left `MemAvailable` (and the limits) by the time it is measured.
pub(crate) fn budget_holding(held: usize) -> usize {
    if BUDGET_OVERRIDE.load(std::sync::atomic::Ordering::Relaxed) != 0 {
        default_memory_budget()
    } else {
        default_memory_budget().saturating_add(held)
    }
}

/// A `kB` field of a `/proc` file such as `/proc/self/status`, in bytes.
fn proc_kb(text: &str, field: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()
        .map(|kb| kb.saturating_mul(1024))
}

/// The soft limit of a `/proc/self/limits` row (`None` when unlimited or unreadable).
fn soft_limit(limits: &str, row: &str) -> Option<u64> {
    let rest = limits.lines().find(|l| l.starts_with(row))?[row.len()..].trim_start();
    rest.split_whitespace().next()?.parse::<u64>().ok()
}

/// Free room under RLIMIT_AS and RLIMIT_DATA.
fn rlimit_free() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let as_free = soft_limit(&limits, "Max address space")
        .map(|l| l.saturating_sub(proc_kb(&status, "VmSize:").unwrap_or(0)));
    let data_free = soft_limit(&limits, "Max data size")
        .map(|l| l.saturating_sub(proc_kb(&status, "VmData:").unwrap_or(0)));
    [as_free, data_free].into_iter().flatten().min()
}

/// Free room under this process's cgroup (v2) memory limit.
fn cgroup_free() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = format!("/sys/fs/cgroup{}", path.trim_end_matches('/'));
    let max = std::fs::read_to_string(format!("{dir}/memory.max")).ok()?;
    let max = max.trim().parse::<u64>().ok()?; // "max": no limit
    let current = std::fs::read_to_string(format!("{dir}/memory.current"))
        .ok()
        .and_then(|c| c.trim().parse::<u64>().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// `MemAvailable` of `/proc/meminfo`.
fn mem_available() -> Option<u64> {
    proc_kb(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable:",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record (`take_fixed`) gets exactly the entries it asks, where a pass buffer
    /// (`take`) of at least `ALIGN_MIN_BYTES` gets whole 2 MiB pages; a free buffer that
    /// fits is handed out as it is by both.
    #[test]
    fn fixed_takes_are_not_rounded() {
        let n = 3_000_000; // 24 MB of keys, 48 MB of amplitudes (f64)
        let mut pool = Pool::<f64>::default();
        let fixed = pool.take_fixed(n).unwrap();
        assert_eq!((fixed.keys.capacity(), fixed.amps.capacity()), (n, n));
        let pass = pool.take(n).unwrap();
        assert_eq!(pass.keys.capacity(), n, "24 MB of keys: below the rounding");
        assert_eq!(
            pass.amps.capacity(),
            crate::pages::whole_huge_capacity::<Complex<f64>>(n)
        );
        assert!(pass.amps.capacity() > n);
        pool.give(pass);
        let again = pool.take_fixed(n).unwrap();
        assert_eq!(
            again.amps.capacity(),
            crate::pages::whole_huge_capacity::<Complex<f64>>(n)
        );
    }

    /// A buffer made writable for fewer entries than it holds keeps the rest: a spill used
    /// for 10^6 entries, then for fewer, is not filled with zeros again when the next gate
    /// asks for 10^6 (its stale entries are overwritten before they are read).
    #[test]
    fn ensure_initialized_never_cuts_a_buffer() {
        let mut pool = Pool::<f64>::default();
        let mut b = pool.take(1000).unwrap();
        b.ensure_initialized(1000).unwrap();
        let (k, a) = b.parts();
        (k[999], a[999]) = (7, Complex::new(0.5, -0.5));
        pool.give(b);
        let mut b = pool.take(300).unwrap();
        b.ensure_initialized(300).unwrap();
        assert_eq!((b.keys.len(), b.amps.len()), (1000, 1000));
        pool.give(b);
        let mut b = pool.take(1000).unwrap();
        b.ensure_initialized(1000).unwrap();
        assert_eq!((b.keys[999], b.amps[999]), (7, Complex::new(0.5, -0.5)));
        b.ensure_initialized(1500).unwrap();
        let (k, a) = b.parts();
        assert_eq!((k.len(), a.len()), (1500, 1500));
        assert_eq!((k[1499], a[1499]), (0, Complex::new(0.0, 0.0)));
    }

    #[test]
    fn proc_fields_are_read() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max data size             unlimited            unlimited            bytes\n\
                      Max address space         2048000000           unlimited            bytes\n";
        assert_eq!(soft_limit(limits, "Max address space"), Some(2_048_000_000));
        assert_eq!(soft_limit(limits, "Max data size"), None);
        let status = "VmPeak:\t  10 kB\nVmSize:\t   2000 kB\n";
        assert_eq!(proc_kb(status, "VmSize:"), Some(2_048_000));
    }
}
