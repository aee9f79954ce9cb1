//! An exact sliding-window log: a quota counted over any window-long stretch.

use alloc::collections::VecDeque;
use core::time::Duration;

use crate::clock::{Latest, nanos};

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

    /// Whether an event at `now` is within the quota, counting it if it is.
    ///
    /// Stamps that have left the window are dropped first.
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn take(&mut self, now: Duration) -> bool {
        let t = self.latest.advance(now);
        while self
            .stamps
            .front()
            .is_some_and(|&stamp| self.gone(stamp, t))
        {
            self.stamps.pop_front();
        }
        // What is left in the ring is inside the window.
        if self.has_room(self.stamps.len()) {
            self.stamps.push_back(t);
            true
        } else {
            false
        }
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
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn admits_the_quota_then_refuses() {
        let mut limit = Sliding::new(3, secs(1));
        assert!(limit.take(ms(0)));
        assert!(limit.take(ms(10)));
        assert!(limit.take(ms(20)));
        assert!(!limit.take(ms(30)));
        assert!(!limit.take(ms(999)));
    }

    #[test]
    fn an_event_leaves_exactly_one_window_later() {
        let mut limit = Sliding::new(1, secs(1));
        assert!(limit.take(ms(500)));
        assert!(!limit.take(ms(1500) - Duration::from_nanos(1)));
        assert!(limit.take(ms(1500)));
    }

    // The boundary burst a fixed window allows and a sliding one does not.
    #[test]
    fn counts_any_window_long_stretch_not_fixed_periods() {
        let mut limit = Sliding::new(2, secs(1));
        assert!(limit.take(ms(900)));
        assert!(limit.take(ms(950)));
        assert!(!limit.take(ms(1100)));
        assert!(!limit.take(ms(1899)));
        assert!(limit.take(ms(1900)));
        assert!(!limit.take(ms(1949)));
        assert!(limit.take(ms(1950)));
    }

    #[test]
    fn refused_events_are_not_counted() {
        let mut limit = Sliding::new(1, secs(1));
        assert!(limit.take(ms(0)));
        for t in 1..1000 {
            assert!(!limit.take(ms(t)));
        }
        assert!(limit.take(ms(1000)));
    }

    #[test]
    fn left_counts_down_without_changing_anything() {
        let mut limit = Sliding::new(3, secs(1));
        assert_eq!(limit.left(ms(0)), 3);
        assert!(limit.take(ms(0)));
        assert!(limit.take(ms(400)));
        assert_eq!(limit.left(ms(400)), 1);
        assert_eq!(limit.left(ms(1000)), 2);
        assert_eq!(limit.left(ms(5000)), 3);
        // Reading the future dropped nothing and moved no clock.
        assert_eq!(limit.stamps.len(), 2);
        assert_eq!(limit.left(ms(400)), 1);
    }

    #[test]
    fn next_is_when_the_oldest_event_leaves() {
        let mut limit = Sliding::new(2, secs(1));
        assert_eq!(limit.next(ms(0)), Duration::ZERO);
        assert!(limit.take(ms(100)));
        assert!(limit.take(ms(300)));
        assert_eq!(limit.next(ms(300)), ms(800));
        assert_eq!(limit.next(ms(1099)), ms(1));
        assert_eq!(limit.next(ms(1100)), Duration::ZERO);
        let wait = limit.next(ms(500));
        assert!(limit.take(ms(500) + wait));
    }

    #[test]
    fn a_quota_of_zero_never_admits() {
        let mut limit = Sliding::new(0, secs(1));
        assert!(!limit.take(ms(0)));
        assert!(!limit.take(Duration::MAX));
        assert_eq!(limit.left(ms(0)), 0);
        assert_eq!(limit.next(ms(0)), Duration::MAX);
    }

    #[test]
    fn a_window_below_a_nanosecond_is_raised_to_one() {
        let mut limit = Sliding::new(1, Duration::ZERO);
        assert_eq!(limit.window(), Duration::from_nanos(1));
        assert!(limit.take(Duration::from_nanos(5)));
        assert!(!limit.take(Duration::from_nanos(5)));
        assert_eq!(limit.next(Duration::from_nanos(5)), Duration::from_nanos(1));
        assert!(limit.take(Duration::from_nanos(6)));
    }

    #[test]
    fn a_window_of_duration_max_holds_events_until_the_clock_runs_out() {
        let mut limit = Sliding::new(1, Duration::MAX);
        assert!(limit.take(Duration::from_nanos(1)));
        assert_eq!(limit.next(secs(0)), Duration::from_nanos(u64::MAX));
        assert!(!limit.take(secs(1_000_000_000)));
        // At the end of the clock's range the event at 1 ns is a nanosecond short of a
        // window old.
        assert!(!limit.take(Duration::from_nanos(u64::MAX)));
        assert!(!limit.take(Duration::MAX));
        let mut limit = Sliding::new(1, Duration::MAX);
        assert!(limit.take(Duration::ZERO));
        assert!(limit.take(Duration::MAX));
    }

    #[test]
    fn reserves_at_most_4096_stamps_up_front() {
        assert!(Sliding::new(10, secs(1)).stamps.capacity() >= 10);
        let huge = Sliding::new(u32::MAX, secs(1));
        assert!(huge.stamps.capacity() >= 4096);
        assert!(huge.stamps.capacity() < 8192);
    }

    #[test]
    fn decisions_never_allocate_up_to_4096() {
        let mut limit = Sliding::new(4096, secs(1));
        let capacity = limit.stamps.capacity();
        for round in 0..3 {
            // Each round frees the previous round's stamps one by one: the quota again.
            let admitted = (0..5000)
                .filter(|&i| limit.take(secs(round) + Duration::from_nanos(i)))
                .count();
            assert_eq!(admitted, 4096, "round {round}");
        }
        assert_eq!(limit.stamps.capacity(), capacity);
        assert_eq!(limit.left(secs(2)), 0);
    }

    #[test]
    fn grows_past_4096_on_demand_up_to_the_quota() {
        let mut limit = Sliding::new(5000, secs(1));
        for i in 0..5000 {
            assert!(limit.take(Duration::from_nanos(i)));
        }
        assert!(!limit.take(ms(1)));
        assert_eq!(limit.stamps.len(), 5000);
    }

    #[test]
    fn a_quota_of_u32_max_admits_without_reserving_it() {
        let mut limit = Sliding::new(u32::MAX, secs(1));
        for _ in 0..10_000 {
            assert!(limit.take(ms(0)));
        }
        assert_eq!(limit.left(ms(0)), u32::MAX - 10_000);
        assert_eq!(limit.next(ms(0)), Duration::ZERO);
    }

    #[test]
    fn a_clock_going_backwards_never_frees_room() {
        let mut limit = Sliding::new(1, secs(10));
        assert!(limit.take(secs(100)));
        // Read as 100 s: the event is still inside.
        assert!(!limit.take(secs(0)));
        assert_eq!(limit.left(secs(0)), 0);
        assert_eq!(limit.next(secs(0)), secs(10));
        assert!(!limit.take(secs(109)));
        assert!(limit.take(secs(110)));
    }

    #[test]
    fn survives_a_clock_at_the_end_of_its_range() {
        let mut limit = Sliding::new(2, secs(1));
        assert!(limit.take(Duration::MAX));
        assert!(limit.take(Duration::MAX));
        // Time has stopped, so the window never empties.
        assert!(!limit.take(Duration::MAX));
        assert_eq!(limit.next(Duration::MAX), secs(1));
        assert_eq!(limit.left(Duration::MAX), 0);
    }

    #[test]
    fn idle_is_the_window_after_which_the_log_is_as_good_as_new() {
        let mut limit = Sliding::new(3, secs(10));
        let fresh = limit.clone();
        for t in [0, 4, 9] {
            assert!(limit.take(secs(t)));
        }
        assert_eq!(limit.idle(), secs(10));
        let later = secs(9) + limit.idle();
        assert_eq!(limit.left(later), fresh.left(later));
        assert_eq!(limit.next(later), fresh.next(later));
        assert_eq!(limit.left(later - Duration::from_nanos(1)), 2);
        assert_eq!(
            Sliding::new(0, Duration::ZERO).idle(),
            Duration::from_nanos(1)
        );
        assert_eq!(
            Sliding::new(5, Duration::MAX).idle(),
            Duration::from_nanos(u64::MAX)
        );
    }

    #[test]
    fn a_clone_counts_independently() {
        let mut limit = Sliding::new(1, secs(1));
        let mut twin = limit.clone();
        assert!(limit.take(ms(0)));
        assert!(twin.take(ms(0)));
        assert!(!limit.take(ms(0)));
    }
}
