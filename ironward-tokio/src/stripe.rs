//! [`Stripes`]: a value per thread, or nearly, each on a cache line of its own, for counters
//! that many threads add to and one reader merges.
//!
//! A counter every core adds to is one cache line that every add must own, so the cores take
//! turns for it as they would for a lock. Giving each thread a counter of its own (a stripe)
//! and summing them when the total is needed turns those adds into writes to a line that
//! stays in one core's cache: the approach of Java's `LongAdder` and of crossbeam's
//! `CachePadded`. A shared breaker uses it to count the successes of the healthy case; the
//! sum is read under the lock that takes them over.

use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A value alone on its cache line: aligned (and so padded) to 128 bytes.
///
/// 128 rather than 64 because x86's adjacent-line prefetcher pulls lines in pairs, and
/// Apple's and some ARM cores have 128-byte lines: crossbeam's `CachePadded` picks the same.
/// Two `Padded` values never share a line, so a write to one never takes the line of
/// another from the core reading it.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use ironward_tokio::stripe::Padded;
///
/// let hot = [Padded::new(AtomicU64::new(0)), Padded::new(AtomicU64::new(0))];
/// hot[1].fetch_add(1, Ordering::Relaxed);
/// assert_eq!(std::mem::align_of_val(&hot[0]), 128);
/// assert_eq!(hot[1].load(Ordering::Relaxed), 1);
/// ```
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Padded<T>(T);

impl<T> Padded<T> {
    /// `value` on a line of its own.
    pub const fn new(value: T) -> Self {
        Self(value)
    }
}

impl<T> Deref for Padded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// One `T` per thread, or nearly: a fixed set of [`Padded`] values, each thread always
/// handed the same one.
///
/// Threads are numbered in the order they first ask for a stripe, and thread `i` gets stripe
/// `i mod len`, so the first `len` threads to ask (a runtime's workers, started together)
/// each get a stripe of their own, and later ones share. Sharing is only slower, never wrong:
/// the values are atomics, and what a thread adds to its stripe is added, whichever stripe
/// that is. [`new`](Self::new) makes twice as many stripes as the machine has cores, a power
/// of two, from 2 up to 256, so that a pool of one thread per core never shares.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::thread;
/// use ironward_tokio::stripe::Stripes;
///
/// let adds = Stripes::new(|| AtomicU64::new(0));
/// thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| {
///             for _ in 0..1000 {
///                 adds.mine().fetch_add(1, Ordering::Relaxed);
///             }
///         });
///     }
/// });
/// let sum: u64 = adds.iter().map(|a| a.load(Ordering::Relaxed)).sum();
/// assert_eq!(sum, 4000);
/// ```
pub struct Stripes<T> {
    slots: Box<[Padded<T>]>,
}

/// The most stripes [`Stripes::new`] makes: 32 KiB of lines, for 128 cores.
const MOST: usize = 256;

/// The number the next thread to ask for a stripe gets.
static NEXT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's number, taken from `NEXT` the first time it asks.
    static INDEX: usize = NEXT.fetch_add(1, Ordering::Relaxed);
}

impl<T> Stripes<T> {
    /// Stripes for this machine, each made by `make`: twice its cores, rounded up to a
    /// power of two, from 2 up to 256.
    pub fn new(make: impl FnMut() -> T) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Self::with_len(cores.saturating_mul(2), make)
    }

    /// `len` stripes, rounded up to a power of two from 1 up to 256 (so a `len` of 0 is 1),
    /// each made by `make`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tokio::stripe::Stripes;
    ///
    /// assert_eq!(Stripes::with_len(3, || 0u8).len(), 4);
    /// assert_eq!(Stripes::with_len(0, || 0u8).len(), 1);
    /// assert_eq!(Stripes::with_len(usize::MAX, || 0u8).len(), 256);
    /// ```
    pub fn with_len(len: usize, mut make: impl FnMut() -> T) -> Self {
        let len = len.clamp(1, MOST).next_power_of_two();
        Self {
            slots: (0..len).map(|_| Padded::new(make())).collect(),
        }
    }

    /// The calling thread's stripe: always the same one for the same thread.
    #[inline]
    pub fn mine(&self) -> &T {
        // `len` is a power of two, so the mask is `index mod len`. A thread being torn down
        // (its thread-locals already gone) uses the first stripe.
        let index = INDEX.try_with(|index| *index).unwrap_or(0);
        &self.slots[index & (self.slots.len() - 1)]
    }

    /// Every stripe, in order, for a reader that merges them.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().map(|slot| &slot.0)
    }

    /// How many stripes there are: a power of two, at least 1.
    #[must_use]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Always `false`: there is at least one stripe. (For the `len`/`is_empty` pair.)
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// Raises a stripe's note of the latest time its calls saw, `latest`, to `at` if that is
/// later: how the shared breakers hand their fast calls' readings to the exact breaker's
/// clock.
///
/// A load and a plain store, not a swap loop: a stripe is one thread's but for collisions,
/// and two threads racing here can only leave the earlier of two times noted, which the
/// shared breakers' docs allow for (the breaker's clock).
#[inline]
pub(crate) fn note(latest: &AtomicU64, at: u64) {
    note_over(latest, latest.load(Ordering::Relaxed), at);
}

/// [`note`] for a caller that has loaded `latest` already, as `seen` (to read the clock from
/// it): raises it to `at` if that is later than `seen`, without loading it again.
///
/// The race is [`note`]'s, over the span from the caller's load instead of from this one's:
/// another thread's later time noted in between may be left the earlier.
#[inline]
pub(crate) fn note_over(latest: &AtomicU64, seen: u64, at: u64) {
    if at > seen {
        latest.store(at, Ordering::Relaxed);
    }
}

impl<T: fmt::Debug> fmt::Debug for Stripes<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::atomic::AtomicU64;
    use std::thread;

    use super::*;

    #[test]
    fn a_thread_always_gets_the_same_stripe() {
        let stripes = Stripes::with_len(8, || AtomicU64::new(0));
        let first: *const AtomicU64 = stripes.mine();
        for _ in 0..100 {
            assert!(std::ptr::eq(first, stripes.mine()));
        }
    }

    #[test]
    fn threads_started_together_spread_over_the_stripes() {
        let stripes = Stripes::with_len(64, || AtomicU64::new(0));
        let seen: HashSet<usize> = thread::scope(|s| {
            let workers: Vec<_> = (0..4)
                .map(|_| s.spawn(|| stripes.mine() as *const AtomicU64 as usize))
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        // Four fresh threads take four consecutive numbers: four stripes of 64.
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn stripes_are_a_power_of_two_on_lines_of_their_own() {
        let stripes = Stripes::new(|| AtomicU64::new(0));
        assert!(stripes.len().is_power_of_two() && stripes.len() >= 2);
        assert!(!stripes.is_empty());
        let lines: Vec<usize> = stripes
            .iter()
            .map(|stripe| stripe as *const AtomicU64 as usize)
            .collect();
        assert!(lines.windows(2).all(|pair| pair[1] - pair[0] >= 128));
    }
}
