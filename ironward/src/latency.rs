//! The latencies of recent calls ([`Recent`]) and the hedging delay read from them
//! ([`Tail`]): "The Tail at Scale" (Dean and Barroso, CACM 2013), whose hedged requests
//! wait "until the first request has been outstanding for more than the 95th-percentile
//! expected latency" before sending a second.
//!
//! As everywhere in the core, nothing here reads a clock: the caller measures each call and
//! [`add`](Recent::add)s its latency, and asks [`Tail::delay`] when a call starts.
//!
//! # Examples
//!
//! ```
//! use core::time::Duration;
//! use ironward::latency::{Recent, TAIL, Tail};
//!
//! let ms = Duration::from_millis;
//! let tail = Tail { min_samples: 20, ..TAIL };
//! let mut recent = Recent::new(tail.window);
//! // Until 20 calls have been measured, the fallback.
//! assert_eq!(tail.delay(&mut recent), TAIL.fallback);
//! for latency in 1..=20 {
//!     recent.add(ms(latency * 10));
//! }
//! // The 95th percentile of 10 ms, 20 ms, ..., 200 ms: the 19th fastest.
//! assert_eq!(tail.delay(&mut recent), ms(190));
//! ```

use alloc::boxed::Box;
use alloc::vec;
use core::fmt;
use core::time::Duration;

use crate::clock::nanos;
use crate::internal::rank::percentile;

/// The latencies of the last `size` calls measured, oldest forgotten first, and any
/// percentile of them.
///
/// [`add`](Recent::add) costs O(1) and allocates nothing: the latencies are kept in a ring
/// allocated once by [`new`](Recent::new), and a percentile is selected from a copy in
/// linear time. Latencies are kept to the nanosecond, saturating at `u64::MAX` (584 years).
///
/// # Edge cases
///
/// A `size` of 0 is read as 1; one above [`Recent::MOST`] as `MOST`, so that a hostile size
/// never asks for more than 64 KiB.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::latency::Recent;
///
/// let ms = Duration::from_millis;
/// let mut recent = Recent::new(3);
/// for latency in [40, 10, 30, 20] {
///     recent.add(ms(latency));
/// }
/// // 40 ms was forgotten: 10, 30 and 20 remain.
/// assert_eq!(recent.len(), 3);
/// assert_eq!(recent.percentile(1.0), Some(ms(30)));
/// assert_eq!(recent.percentile(0.5), Some(ms(20)));
/// ```
#[derive(Clone)]
pub struct Recent {
    /// The ring: `held` latencies, the newest just before `next`.
    kept: Box<[u64]>,
    /// Where a percentile is selected, so that the ring keeps its order.
    scratch: Box<[u64]>,
    next: usize,
    held: usize,
}

impl Recent {
    /// The most latencies a [`Recent`] keeps: 4096 (32 KiB, and as much again to select a
    /// percentile in). A 95th percentile of 4096 calls is exact to a fortieth of a percent.
    pub const MOST: usize = 4096;

    /// Room for the last `size` latencies (held to `1..=MOST`), none kept yet.
    #[must_use]
    pub fn new(size: usize) -> Self {
        let size = size.clamp(1, Self::MOST);
        Self {
            kept: vec![0; size].into_boxed_slice(),
            scratch: vec![0; size].into_boxed_slice(),
            next: 0,
            held: 0,
        }
    }

    /// The same latencies in room for `size` (held as [`new`](Recent::new) holds it): the
    /// newest of them, when there are more than it holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::latency::Recent;
    ///
    /// let mut recent = Recent::new(4);
    /// for latency in 1..=4 {
    ///     recent.add(Duration::from_millis(latency));
    /// }
    /// let mut two = recent.resized(2);
    /// assert_eq!((two.len(), two.percentile(0.0)), (2, Some(Duration::from_millis(3))));
    /// ```
    #[must_use]
    pub fn resized(&self, size: usize) -> Self {
        let mut resized = Self::new(size);
        let keep = self.held.min(resized.capacity());
        for back in (1..=keep).rev() {
            let at = (self.next + self.kept.len() - back) % self.kept.len();
            resized.push(self.kept[at]);
        }
        resized
    }

    /// One more call took `latency`; the oldest is forgotten when the ring is full.
    pub fn add(&mut self, latency: Duration) {
        self.push(nanos(latency));
    }

    fn push(&mut self, nanos: u64) {
        self.kept[self.next] = nanos;
        self.next = (self.next + 1) % self.kept.len();
        self.held = (self.held + 1).min(self.kept.len());
    }

    /// How many latencies are kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.held
    }

    /// Whether none is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// The most latencies kept: `size` as [`new`](Recent::new) held it.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.kept.len()
    }

    /// Forgets every latency kept.
    pub fn clear(&mut self) {
        self.held = 0;
        self.next = 0;
    }

    /// The `p`-th percentile of the latencies kept (`0.95` is the 95th), `None` when none
    /// is: the `⌊p × n⌉`-th fastest of the `n` (half rounded up), at least the fastest and at
    /// most the slowest, as the limit's [`Latency::Percentile`](crate::limit::Latency) reads
    /// it. `p` is held to `[0, 1]`, NaN read as 0.
    #[must_use]
    pub fn percentile(&mut self, p: f64) -> Option<Duration> {
        // The ring holds the first `held` slots until it wraps, then all of them: either way
        // the order does not matter to a percentile.
        let held = &self.kept[..self.held];
        let scratch = &mut self.scratch[..self.held];
        scratch.copy_from_slice(held);
        percentile(scratch, p).map(Duration::from_nanos)
    }
}

impl fmt::Debug for Recent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recent")
            .field("len", &self.held)
            .field("capacity", &self.kept.len())
            .finish_non_exhaustive()
    }
}

/// A hedging delay that follows the tail of recent latencies: the `percentile`-th of the
/// last `window` calls, held between `floor` and `ceiling`, and `fallback` until
/// `min_samples` calls have been measured.
///
/// Dean and Barroso ("The Tail at Scale") hedge at the 95th percentile, so that about one
/// call in twenty sends a second attempt: the load grows by about 5% while the slowest
/// twentieth of the calls gets a second chance. The floor keeps a backend that answers in
/// microseconds from being hedged at every scheduling hiccup; the ceiling keeps a backend
/// that has slowed down from taking the delay (and so the hedges) with it.
///
/// # Default
///
/// [`TAIL`]: the 95th percentile of the last 100 calls, once 20 are measured; 1 ms to 1 s;
/// 1 s before that (the ceiling: until the tail is known, only a call slow by the
/// ceiling's measure is hedged). These are ironward's choices: the percentile is Dean and
/// Barroso's, the rest bounded guesses to change.
///
/// # Edge cases
///
/// Nothing panics. `percentile` is held to `[0, 1]`, NaN read as 0 (the fastest, which the
/// floor bounds). `window` is held as [`Recent::new`] holds it; `min_samples` to `1..=window`
/// (a percentile of no call is no reading). A `floor` above the `ceiling` is read as the
/// ceiling. Any duration may be `Duration::MAX`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::latency::{Recent, TAIL, Tail};
///
/// let ms = Duration::from_millis;
/// let tail = Tail { min_samples: 1, floor: ms(5), ceiling: ms(50), ..TAIL };
/// let mut recent = Recent::new(tail.window);
/// recent.add(ms(2));
/// assert_eq!(tail.delay(&mut recent), ms(5), "held up to the floor");
/// recent.add(ms(80));
/// assert_eq!(tail.delay(&mut recent), ms(50), "held down to the ceiling");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Tail {
    /// Which percentile of the recent latencies, as a fraction: `0.95` is the 95th.
    pub percentile: f64,
    /// How many recent calls' latencies are kept ([`Recent::new`]).
    pub window: usize,
    /// How many must be kept before the percentile is read rather than `fallback`.
    pub min_samples: usize,
    /// The shortest delay.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub floor: Duration,
    /// The longest delay.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub ceiling: Duration,
    /// The delay while fewer than `min_samples` latencies are kept.
    #[cfg_attr(feature = "serde", serde(with = "crate::internal::humane"))]
    pub fallback: Duration,
}

/// The default [`Tail`]: the 95th percentile of the last 100 calls once 20 are measured,
/// held to 1 ms ..= 1 s, and 1 s before that.
pub const TAIL: Tail = Tail {
    percentile: 0.95,
    window: 100,
    min_samples: 20,
    floor: Duration::from_millis(1),
    ceiling: Duration::from_secs(1),
    fallback: Duration::from_secs(1),
};

impl Default for Tail {
    /// [`TAIL`].
    fn default() -> Self {
        TAIL
    }
}

impl Tail {
    /// The delay `recent` says now: its percentile held to `floor ..= ceiling`, or
    /// `fallback` while it keeps fewer than `min_samples` latencies.
    #[must_use]
    pub fn delay(&self, recent: &mut Recent) -> Duration {
        let enough = self.min_samples.clamp(1, recent.capacity());
        if recent.len() < enough {
            return self.fallback;
        }
        recent
            .percentile(self.percentile)
            .map_or(self.fallback, |tail| tail.max(self.floor).min(self.ceiling))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn sizes_are_held() {
        assert_eq!(Recent::new(0).capacity(), 1);
        assert_eq!(Recent::new(usize::MAX).capacity(), Recent::MOST);
        let mut one = Recent::new(0);
        one.add(MS(3));
        one.add(MS(7));
        assert_eq!((one.len(), one.percentile(0.5)), (1, Some(MS(7))));
    }

    #[test]
    fn an_empty_window_reads_none_and_clear_empties() {
        let mut recent = Recent::new(4);
        assert_eq!(recent.percentile(0.95), None);
        recent.add(Duration::MAX);
        assert_eq!(
            recent.percentile(0.95),
            Some(Duration::from_nanos(u64::MAX))
        );
        recent.clear();
        assert!(recent.is_empty());
        assert_eq!(recent.percentile(0.5), None);
    }

    #[test]
    fn a_tail_reads_hostile_settings_without_panicking() {
        let mut recent = Recent::new(10);
        for latency in 1..=10 {
            recent.add(MS(latency));
        }
        let nan = Tail {
            percentile: f64::NAN,
            floor: Duration::ZERO,
            ..TAIL
        };
        assert_eq!(nan.delay(&mut recent), MS(1), "NaN reads the fastest");
        let over = Tail {
            percentile: 7.0,
            min_samples: usize::MAX,
            ..TAIL
        };
        assert_eq!(
            over.delay(&mut recent),
            MS(10),
            "min_samples held to the window"
        );
        let crossed = Tail {
            floor: MS(9),
            ceiling: MS(2),
            min_samples: 0,
            ..TAIL
        };
        assert_eq!(
            crossed.delay(&mut recent),
            MS(2),
            "a floor above the ceiling"
        );
        let unbounded = Tail {
            ceiling: Duration::MAX,
            ..TAIL
        };
        assert_eq!(unbounded.delay(&mut Recent::new(0)), TAIL.fallback);
    }

    proptest! {
        // The delay is the fallback until enough are kept, and then always within the
        // bounds, and the rounded rank of the last `window` added.
        #[test]
        fn the_delay_is_bounded_and_reads_the_newest(
            added in prop::collection::vec(0u64..10_000, 0..60),
            window in 1usize..40,
            min_samples in 0usize..50,
            p in 0.0..=1.0f64,
            floor in 0u64..5_000,
            ceiling in 0u64..10_000,
        ) {
            let tail = Tail {
                percentile: p,
                window,
                min_samples,
                floor: MS(floor),
                ceiling: MS(ceiling),
                fallback: MS(123_456),
            };
            let mut recent = Recent::new(window);
            for &latency in &added {
                recent.add(MS(latency));
            }
            let delay = tail.delay(&mut recent);
            let newest: Vec<u64> = added.iter().rev().take(window).copied().collect();
            if newest.len() < min_samples.clamp(1, window) {
                prop_assert_eq!(delay, MS(123_456));
            } else {
                let mut sorted = newest.clone();
                sorted.sort_unstable();
                let rank = (sorted.len() as f64 * p + 0.5) as usize;
                let at = sorted[rank.saturating_sub(1).min(sorted.len() - 1)];
                prop_assert_eq!(delay, MS(at).max(MS(floor)).min(MS(ceiling)));
                prop_assert!(delay <= MS(ceiling));
            }
        }

        // Resizing keeps the newest latencies, as adding them to a window of that size does.
        #[test]
        fn resizing_keeps_the_newest(
            added in prop::collection::vec(0u64..1_000, 0..50),
            before in 1usize..20,
            after in 1usize..20,
            p in 0.0..=1.0f64,
        ) {
            let mut recent = Recent::new(before);
            let mut direct = Recent::new(after);
            for &latency in &added {
                recent.add(MS(latency));
            }
            for &latency in added.iter().rev().take(before).collect::<Vec<_>>().into_iter().rev() {
                direct.add(MS(latency));
            }
            let mut resized = recent.resized(after);
            prop_assert_eq!(resized.len(), direct.len());
            prop_assert_eq!(resized.percentile(p), direct.percentile(p));
        }
    }
}
