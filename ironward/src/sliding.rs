//! An exact sliding-window log: a quota counted over any window-long stretch.

use alloc::collections::VecDeque;
use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::reason::QuotaReason;

/// Stamps reserved up front: enough that quotas up to this size never allocate again.
const RESERVED: u32 = 4096;

/// A sliding-window log: at most `quota` events in any window-long stretch of time.
///
/// Where a [`Bucket`](crate::Bucket) smooths, a window counts. "A thousand a day" is a
/// window, not a rate: a bucket would let a client spend the day's allowance in the first
/// minute, and a fixed [`Period`](crate::Period) would let it spend two allowances either side
/// of the reset. This one keeps the stamp of every admitted event still inside the window,
/// so the count is exact: at `now` the window is the half-open stretch
/// `(now − window, now]`, and an event admitted at `T` counts until `T + window`, exclusive.
/// The two-counter approximation some limiters use instead (weighting the previous fixed
/// window) can be off by nearly the whole quota when traffic is uneven; this cannot.
///
/// Memory is bounded by `quota`: the stamps live in a ring of `u64` nanoseconds, sorted by
/// construction. [`new`](Sliding::new) reserves room for `min(quota, 4096)` stamps, so a
/// quota up to 4096 never allocates after construction; a larger quota lets the ring grow on
/// demand, up to `quota` stamps (8 bytes each), as traffic fills it. Nothing is allocated
/// for a quota the traffic never reaches: a quota of `u32::MAX` costs 32 KiB until the
/// window really holds more than 4096 events.
///
/// # Edge cases
///
/// Nothing here panics. A `window` below 1 ns is raised to 1 ns; a quota of 0 admits
/// nothing and [`next`](Sliding::next) is then `Duration::MAX`. Time is `now` on the
/// caller's clock in whole nanoseconds, saturating after about 584 years; the clock starts
/// at zero, and a `now` earlier than one already seen is read as the latest seen, so a clock
/// that steps back never frees room.
///
/// `Clone` makes an independent copy of the state (the stamps included): the two then count
/// separately, so cloning a limiter doubles what the pair admits.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Sliding;
///
/// let secs = Duration::from_secs;
/// // Two events in any ten seconds.
/// let mut limit = Sliding::new(2, secs(10));
/// assert!(limit.take(secs(1)));
/// assert!(limit.take(secs(9)));
/// assert!(!limit.take(secs(10)));
///
/// // The event at 1 s leaves the window at 11 s, not at a fixed boundary.
/// assert_eq!(limit.next(secs(10)), secs(1));
/// assert_eq!(limit.left(secs(11)), 1);
/// assert!(limit.take(secs(11)));
/// ```
#[derive(Debug, Clone)]
pub struct Sliding {
    quota: u32,
    /// The window, in nanoseconds (at least 1).
    window: u64,
    /// When each admitted event still (possibly) inside the window happened, oldest first.
    stamps: VecDeque<u64>,
    latest: Latest,
}

impl Sliding {
    /// An empty log admitting `quota` events in any stretch of `window`.
    ///
    /// A `window` below 1 ns is raised to 1 ns. Reserves `min(quota, 4096)` stamps.
    pub fn new(quota: u32, window: Duration) -> Self {
        Self {
            quota,
            window: nanos(window).max(1),
            stamps: VecDeque::with_capacity(quota.min(RESERVED) as usize),
            latest: Latest::default(),
        }
    }

    /// Changes the quota and the window in place at `now`, keeping the events the window
    /// holds.
    ///
    /// The events still inside the old window at `now` are kept, with their stamps, and from
    /// then on each counts until its stamp plus the new window: a longer window holds them
    /// longer, a shorter one lets them go sooner, and an event that had already left does
    /// not come back. A lower quota keeps only the newest `quota` of them. That is enough to
    /// decide exactly: a window holding `quota` events is full whatever older ones it also
    /// holds, and the newest `quota` are the last to leave, so every answer is the one a log
    /// of every kept event would give. Events admitted under the old quota are not taken
    /// back: a window left holding more than the new quota admits nothing until enough have
    /// left it.
    ///
    /// `window` is read as [`new`](Sliding::new) reads it. A `now` earlier than one already
    /// seen is read as the latest seen, and the log remembers it, as after a
    /// [`take`](Sliding::take). Retuning to the quota and window the log already has (as
    /// read) changes nothing, not even its clock. The ring's room follows the new quota as
    /// [`new`](Sliding::new) sets it: `min(quota, 4096)` stamps reserved, so decisions under a
    /// raised quota up to 4096 still never allocate, and a lowered quota gives back the room
    /// it no longer needs.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Sliding::new(5, secs(10));
    /// for t in 0..4 {
    ///     assert!(limit.take(secs(t)));
    /// }
    /// // A quota of 2: the four events inside more than fill it.
    /// limit.retune(2, secs(10), secs(4));
    /// assert_eq!(limit.left(secs(4)), 0);
    /// // The newest two (2 s and 3 s) decide: room again when the 2 s event leaves.
    /// assert_eq!(limit.next(secs(4)), secs(8));
    /// assert!(limit.take(secs(12)));
    ///
    /// // A longer window keeps the events it holds for longer.
    /// limit.retune(2, secs(60), secs(12));
    /// assert_eq!(limit.next(secs(12)), secs(51));
    /// ```
    pub fn retune(&mut self, quota: u32, window: Duration, now: Duration) {
        let window = nanos(window).max(1);
        if quota == self.quota && window == self.window {
            return;
        }
        let t = self.latest.advance(now);
        // The stamps that have left the old window go first, so that none comes back inside
        // a longer one; then all but the newest `quota`.
        let gone = self.first_inside(t);
        let excess = (self.stamps.len() - gone).saturating_sub(quota as usize);
        self.stamps.drain(..gone + excess);
        self.quota = quota;
        self.window = window;
        // Room as `new` reserves it, and none past the quota: memory stays bounded by it.
        let reserved = quota.min(RESERVED) as usize;
        if self.stamps.capacity() < reserved {
            self.stamps.reserve(reserved - self.stamps.len());
        } else if self.stamps.capacity() > quota as usize {
            self.stamps.shrink_to(reserved);
        }
    }

    /// Whether an event at `now` is within the quota, counting it if it is.
    ///
    /// Stamps that have left the window are dropped first. This is
    /// [`check`](Sliding::check) without the reason for a refusal.
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn take(&mut self, now: Duration) -> bool {
        self.check(now).is_ok()
    }

    /// [`take`](Sliding::take) with the numbers behind a refusal: `take` is this with the
    /// reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure. It carries the events inside the
    /// window (the refused one is not counted), the quota, and how long until the oldest of
    /// them leaves, which is what [`next`](Sliding::next) would answer (`Duration::MAX` for
    /// a quota of 0; see [`QuotaReason`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Sliding::new(2, secs(10));
    /// assert!(limit.check(secs(1)).is_ok());
    /// assert!(limit.check(secs(9)).is_ok());
    /// let reason = limit.check(secs(10)).expect_err("two in the window");
    /// assert_eq!((reason.count, reason.quota, reason.next), (2, 2, secs(1)));
    /// ```
    #[inline]
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn check(&mut self, now: Duration) -> Result<(), QuotaReason> {
        let t = self.latest.advance(now);
        while self
            .stamps
            .front()
            .is_some_and(|&stamp| self.gone(stamp, t))
        {
            self.stamps.pop_front();
        }
        // What is left in the ring is inside the window.
        let inside = self.stamps.len();
        if self.has_room(inside) {
            self.stamps.push_back(t);
            return Ok(());
        }
        // Full, so room comes when the oldest stamp leaves (it is inside: `t − oldest <
        // window`); with no stamp at all the quota is 0, and there is never room.
        let next = match self.stamps.front() {
            Some(&oldest) => Duration::from_nanos(self.window - (t - oldest)),
            None => Duration::MAX,
        };
        Err(QuotaReason {
            // The ring never holds more than `quota` stamps.
            count: inside as u32,
            quota: self.quota,
            next,
        })
    }

    /// How many more events the window has room for at `now`, without changing anything.
    #[must_use]
    pub fn left(&self, now: Duration) -> u32 {
        let t = self.latest.read(now);
        let inside = self.stamps.len() - self.first_inside(t);
        // The ring never holds more than `quota` stamps, so `inside` fits a `u32`.
        u32::try_from(inside).map_or(0, |inside| self.quota.saturating_sub(inside))
    }

    /// How long after `now` the window will next have room, without changing anything.
    ///
    /// Zero when there is room now; otherwise the time until the oldest event inside leaves
    /// it; `Duration::MAX` for a quota of 0, which never has room.
    #[must_use = "next only computes the wait; it counts nothing"]
    pub fn next(&self, now: Duration) -> Duration {
        if self.quota == 0 {
            return Duration::MAX;
        }
        let t = self.latest.read(now);
        let first = self.first_inside(t);
        if self.has_room(self.stamps.len() - first) {
            return Duration::ZERO;
        }
        // The window is full and the quota above 0, so `first` indexes the oldest stamp
        // inside it: `t − oldest < window`.
        let oldest = self.stamps[first];
        Duration::from_nanos(self.window - (t - oldest))
    }

    /// How long the log takes to be as good as new when left alone: its window.
    ///
    /// After a window without a take every stamp has left it, so the log answers as a fresh
    /// one would: a caller keeping a log per key may forget a key idle for longer and give it
    /// a new log when it returns, changing no answer.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let mut limit = Sliding::new(1, Duration::from_secs(60));
    /// assert!(limit.take(Duration::from_secs(5)));
    /// assert_eq!(limit.idle(), Duration::from_secs(60));
    /// assert_eq!(limit.left(Duration::from_secs(5) + limit.idle()), 1);
    /// ```
    #[must_use]
    pub fn idle(&self) -> Duration {
        self.window()
    }

    /// The most events the window admits.
    #[must_use]
    pub fn quota(&self) -> u32 {
        self.quota
    }

    /// How long the window is, as read by [`new`](Sliding::new).
    #[must_use]
    pub fn window(&self) -> Duration {
        Duration::from_nanos(self.window)
    }

    /// Whether an event stamped `stamp` has left the window at `t`.
    ///
    /// Stamps are past readings of the latest clock, so `t ≥ stamp`: comparing the gap
    /// rather than `stamp + window` is exact and cannot overflow at the end of the clock.
    fn gone(&self, stamp: u64, t: u64) -> bool {
        t - stamp >= self.window
    }

    /// The index of the oldest stamp still inside the window at `t` (the ring's length when
    /// none is): the stamps are sorted, so those that have left come first.
    fn first_inside(&self, t: u64) -> usize {
        self.stamps.partition_point(|&stamp| self.gone(stamp, t))
    }

    /// Whether a window holding `inside` events has room for another.
    fn has_room(&self, inside: usize) -> bool {
        (inside as u64) < u64::from(self.quota)
    }
}

#[cfg(test)]
mod tests;
