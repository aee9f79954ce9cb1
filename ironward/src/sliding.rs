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
    fn a_lower_quota_keeps_the_newest_stamps_and_decides_as_if_it_kept_them_all() {
        let mut limit = Sliding::new(4, secs(10));
        for t in [0, 2, 4, 6] {
            assert!(limit.take(secs(t)));
        }
        limit.retune(2, secs(10), secs(7));
        assert_eq!(limit.stamps, [secs(4), secs(6)].map(nanos));
        // At 11 s a log of all four events holds three (2, 4 and 6 s); under a quota of 2 it
        // has room once only one is left, when the 4 s event leaves at 14 s.
        assert_eq!(limit.left(secs(11)), 0);
        assert_eq!(limit.next(secs(11)), secs(3));
        assert!(!limit.take(secs(14) - Duration::from_nanos(1)));
        assert!(limit.take(secs(14)));
        assert!(!limit.take(secs(14)));
    }

    #[test]
    fn a_higher_quota_has_room_at_once_and_keeps_counting_the_stamps() {
        let mut limit = Sliding::new(2, secs(10));
        assert!(limit.take(secs(1)));
        assert!(limit.take(secs(2)));
        assert!(!limit.take(secs(3)));
        limit.retune(3, secs(10), secs(3));
        assert!(limit.take(secs(3)));
        assert!(!limit.take(secs(4)));
        assert_eq!(limit.next(secs(4)), secs(7));
    }

    #[test]
    fn a_new_window_applies_to_the_kept_stamps_and_never_brings_one_back() {
        let mut limit = Sliding::new(2, secs(10));
        assert!(limit.take(secs(0)));
        assert!(limit.take(secs(8)));
        // At 12 s the 0 s event has left (though still in the ring): a longer window does
        // not bring it back.
        limit.retune(2, secs(60), secs(12));
        assert_eq!(limit.left(secs(12)), 1);
        assert_eq!(limit.left(secs(67)), 1);
        assert_eq!(limit.left(secs(68)), 2);
        // A shorter window lets the 8 s event go at 9 s.
        limit.retune(1, secs(1), secs(12));
        assert_eq!(limit.left(secs(12)), 1);
        assert!(limit.stamps.len() <= 1);
    }

    #[test]
    fn retuning_reads_a_clock_going_backwards_as_the_latest_seen() {
        let mut limit = Sliding::new(1, secs(10));
        assert!(limit.take(secs(100)));
        // Read as 100 s: the event is inside the old window and kept.
        limit.retune(1, secs(20), secs(0));
        assert!(!limit.take(secs(110)));
        assert!(limit.take(secs(120)));
    }

    #[test]
    fn retuning_to_the_same_policy_changes_nothing() {
        let mut limit = Sliding::new(2, Duration::ZERO);
        assert!(limit.take(secs(5)));
        limit.retune(2, Duration::from_nanos(1), secs(9));
        // The clock did not move to 9 s: 5 s is still the latest seen.
        assert_eq!(limit.latest.get(), nanos(secs(5)));
        assert_eq!(limit.stamps.len(), 1);
    }

    #[test]
    fn retuning_keeps_the_reservation_new_would_make() {
        let mut limit = Sliding::new(10, secs(1));
        limit.retune(3000, secs(1), secs(0));
        assert!(limit.stamps.capacity() >= 3000);
        let capacity = limit.stamps.capacity();
        assert!((0..3000).all(|i| limit.take(Duration::from_nanos(i))));
        assert_eq!(limit.stamps.capacity(), capacity);
        limit.retune(5, secs(1), ms(1));
        assert_eq!(limit.stamps.len(), 5);
        assert!(limit.stamps.capacity() < 3000);
        limit.retune(u32::MAX, secs(1), ms(1));
        assert!((4096..8192).contains(&limit.stamps.capacity()));
        limit.retune(0, secs(1), ms(1));
        assert!(limit.stamps.is_empty());
        assert!(!limit.take(ms(1)));
        assert_eq!(limit.next(ms(1)), Duration::MAX);
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
