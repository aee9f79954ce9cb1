//! A fixed-window counter: a quota per period, go-zero's `PeriodLimit` without Redis.

use core::time::Duration;

use crate::clock::{Latest, nanos};

/// Where a [`Period`] stands after an event: under the quota, exactly on it, or past it.
///
/// The event that reaches the quota is still admitted; it is told apart because it is the
/// last one, which is when a caller would warn that the next will be refused. These are
/// go-zero's `Allowed`, `HitQuota` and `OverQuota` (`core/limit/periodlimit.go`).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Period, Quota};
///
/// let mut limit = Period::new(2, Duration::from_secs(1));
/// let answers: Vec<Quota> = (0..3).map(|_| limit.take(Duration::ZERO)).collect();
/// assert_eq!(answers, [Quota::Under, Quota::Hit, Quota::Over]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quota {
    /// Admitted, with room left in the period.
    Under,
    /// Admitted, and the quota is now used up: the next event in this period is refused.
    Hit,
    /// Refused: the quota was already used up in this period.
    Over,
}

/// A fixed-window counter: at most `quota` events per `period`, the count starting again
/// when a period ends.
///
/// Cheaper than [`Sliding`](crate::Sliding), which keeps a stamp per event, and coarser: a
/// client can spend one quota at the end of a period and another at the start of the next.
/// That is the trade go-zero's `PeriodLimit` (`core/limit/periodlimit.go`) makes, and this is
/// its arithmetic without Redis: every event is counted, and the count decides the answer
/// ([`Quota::Under`] below the quota, [`Quota::Hit`] on it, [`Quota::Over`] past it).
///
/// Where a period starts:
///
/// * made with [`new`](Period::new), a period opens at the first event after the last one
///   closed, as go-zero's key expires `period` after its first increment: a daily quota
///   resets a day after first use;
/// * made with [`aligned`](Period::aligned), periods lie on the multiples of `period` on the
///   caller's clock (go-zero's `Align` option). Pass `now` as time since the Unix epoch and a
///   daily quota resets at 00:00 UTC.
///
/// A period that starts at `S` is open while `now < S + period`.
///
/// # Edge cases
///
/// Nothing here panics. A `period` below 1 ns is raised to 1 ns. A quota of 0 answers
/// [`Quota::Over`] to every event; a quota of 1 answers [`Quota::Hit`] to the first. The
/// count is a saturating `u64`, so even a quota of `u32::MAX` tells `Hit` from `Over`. Time
/// is `now` on the caller's clock in whole nanoseconds, saturating after about 584 years;
/// the clock starts at zero, and a `now` earlier than one already seen is read as the latest
/// seen, so a clock that steps back never reopens a period.
///
/// `Clone` makes an independent copy of the state: the two then count separately, so
/// cloning a limiter doubles what the pair admits.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Period, Quota};
///
/// // A thousand a day, resetting at midnight UTC on a Unix clock.
/// let day = Duration::from_secs(86_400);
/// let mut daily = Period::aligned(1000, day);
/// let noon = Duration::from_secs(1_709_294_400); // 2024-03-01 12:00:00 UTC
/// assert_eq!(daily.take(noon), Quota::Under);
/// assert_eq!(daily.left(noon), 999);
/// assert_eq!(daily.next(noon), day / 2);
///
/// // Three a minute, counted from the first event.
/// let minute = Duration::from_secs(60);
/// let mut limit = Period::new(3, minute);
/// let at = Duration::from_secs;
/// assert_eq!(limit.take(at(10)), Quota::Under);
/// assert_eq!(limit.take(at(20)), Quota::Under);
/// assert_eq!(limit.take(at(30)), Quota::Hit);
/// assert_eq!(limit.take(at(69)), Quota::Over);
/// assert_eq!(limit.take(at(70)), Quota::Under);
/// ```
#[derive(Debug, Clone)]
pub struct Period {
    quota: u32,
    /// The period, in nanoseconds (at least 1).
    period: u64,
    align: bool,
    /// When the latest period started, in nanoseconds; `None` before the first event.
    start: Option<u64>,
    /// Events counted in the latest period, admitted or not.
    count: u64,
    latest: Latest,
}

impl Period {
    /// A counter no event has touched, admitting `quota` events per `period`, a period
    /// opening at the first event after the last one closed (go-zero's `PeriodLimit`).
    ///
    /// A `period` below 1 ns is raised to 1 ns.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Quota};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(1, secs(10));
    /// assert_eq!(limit.take(secs(7)), Quota::Hit);
    /// // The period opened at 7 s: it ends at 17 s.
    /// assert_eq!(limit.next(secs(7)), secs(10));
    /// assert_eq!(limit.take(secs(16)), Quota::Over);
    /// assert_eq!(limit.take(secs(17)), Quota::Hit);
    /// ```
    pub fn new(quota: u32, period: Duration) -> Self {
        Self::with(quota, period, false)
    }

    /// A counter no event has touched, admitting `quota` events per `period`, periods lying
    /// on the multiples of `period` on the caller's clock (go-zero's `Align` option).
    ///
    /// With `now` read as time since the Unix epoch, a daily quota resets at 00:00 UTC and an
    /// hourly one on the hour. A `period` below 1 ns is raised to 1 ns.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Quota};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::aligned(1, secs(10));
    /// assert_eq!(limit.take(secs(7)), Quota::Hit);
    /// // The period is [0 s, 10 s): it ends at 10 s, whenever the first event came.
    /// assert_eq!(limit.next(secs(7)), secs(3));
    /// assert_eq!(limit.take(secs(10)), Quota::Hit);
    /// ```
    pub fn aligned(quota: u32, period: Duration) -> Self {
        Self::with(quota, period, true)
    }

    /// [`new`](Period::new) or, with `align`, [`aligned`](Period::aligned).
    fn with(quota: u32, period: Duration, align: bool) -> Self {
        Self {
            quota,
            period: nanos(period).max(1),
            align,
            start: None,
            count: 0,
            latest: Latest::default(),
        }
    }

    /// Counts one event at `now` and says where the quota stands.
    ///
    /// Every event is counted, refused ones too, as go-zero's `INCRBY` counts them.
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn take(&mut self, now: Duration) -> Quota {
        let t = self.latest.advance(now);
        if self.open(t).is_none() {
            let start = if self.align { t - t % self.period } else { t };
            self.start = Some(start);
            self.count = 0;
        }
        self.count = self.count.saturating_add(1);
        let quota = u64::from(self.quota);
        if self.count < quota {
            Quota::Under
        } else if self.count == quota {
            Quota::Hit
        } else {
            Quota::Over
        }
    }

    /// Changes the quota and the period in place at `now`, keeping the period open at `now`
    /// and its count.
    ///
    /// The period open at `now` keeps its start and every event it has counted, and ends
    /// at its start plus the new period: a longer period stays open longer, and a shorter
    /// one may already have ended, the next event then opening a fresh one. On an
    /// [`aligned`](Period::aligned) counter the open period becomes the one of the new
    /// length that holds its start, so that periods stay on the multiples of the new period
    /// (an hourly quota made daily at 12:30 counts the hour's events until midnight). A
    /// period that had ended by `now` stays ended. Events admitted under the old quota are
    /// not taken back: a lower quota counts them, so the open period admits only what is
    /// left of the new quota, and nothing if they already reach it; a higher quota admits
    /// the difference at once.
    ///
    /// `period` is read as [`new`](Period::new) reads it. A `now` earlier than one already
    /// seen is read as the latest seen, and the counter remembers it, as after a
    /// [`take`](Period::take). Retuning to the quota and period the counter already has (as
    /// read) changes nothing, not even its clock.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Quota};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(10, secs(60));
    /// for _ in 0..4 {
    ///     assert_eq!(limit.take(secs(5)), Quota::Under);
    /// }
    /// // Five a period now: the four already taken count, one is left.
    /// limit.retune(5, secs(60), secs(20));
    /// assert_eq!(limit.left(secs(20)), 1);
    /// assert_eq!(limit.take(secs(20)), Quota::Hit);
    /// assert_eq!(limit.take(secs(20)), Quota::Over);
    /// // A two-minute period: the one open since 5 s now ends at 125 s.
    /// limit.retune(5, secs(120), secs(30));
    /// assert_eq!(limit.next(secs(30)), secs(95));
    /// ```
    pub fn retune(&mut self, quota: u32, period: Duration, now: Duration) {
        let period = nanos(period).max(1);
        if quota == self.quota && period == self.period {
            return;
        }
        let t = self.latest.advance(now);
        self.start = self.open(t).map(|start| {
            if self.align {
                start - start % period
            } else {
                start
            }
        });
        if self.start.is_none() {
            self.count = 0;
        }
        self.quota = quota;
        self.period = period;
    }

    /// How many more events the period admits at `now`, without changing anything.
    ///
    /// The whole quota when no period is open at `now`, since the next event opens one.
    #[must_use]
    pub fn left(&self, now: Duration) -> u32 {
        match self.open(self.latest.read(now)) {
            // Below the quota the difference fits a `u32`.
            Some(_) => {
                u32::try_from(u64::from(self.quota).saturating_sub(self.count)).unwrap_or(u32::MAX)
            }
            None => self.quota,
        }
    }

    /// How long after `now` the open period ends, without changing anything.
    ///
    /// Zero when no period is open at `now`, because the next event would open one.
    #[must_use = "next only computes the wait; it counts nothing"]
    pub fn next(&self, now: Duration) -> Duration {
        let t = self.latest.read(now);
        match self.open(t) {
            Some(start) => Duration::from_nanos(self.period - (t - start)),
            None => Duration::ZERO,
        }
    }

    /// How long the counter takes to be as good as new when left alone: its period.
    ///
    /// A period is open for at most `period` after its first event, so after a period
    /// without an event none is open and the counter answers as a fresh one would: a caller
    /// keeping a counter per key may forget a key idle for longer and give it a new counter
    /// when it returns, changing no answer.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Quota};
    ///
    /// let minute = Duration::from_secs(60);
    /// let mut limit = Period::new(1, minute);
    /// assert_eq!(limit.take(Duration::ZERO), Quota::Hit);
    /// assert_eq!(limit.idle(), minute);
    /// assert_eq!(limit.take(limit.idle()), Quota::Hit);
    /// ```
    #[must_use]
    pub fn idle(&self) -> Duration {
        self.period()
    }

    /// The most events a period admits.
    #[must_use]
    pub fn quota(&self) -> u32 {
        self.quota
    }

    /// How long a period is, as read by [`new`](Period::new) or [`aligned`](Period::aligned).
    #[must_use]
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period)
    }

    /// The start of the period open at `t`, if one is.
    ///
    /// Starts are past readings of the latest clock (or multiples of the period below them),
    /// so `t ≥ start`: comparing the gap rather than `start + period` is exact and cannot
    /// overflow, where a saturating sum would reopen a period at the end of the clock.
    fn open(&self, t: u64) -> Option<u64> {
        self.start.filter(|&start| t - start < self.period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    /// Counts the answers to `events` takes at `now`.
    fn tally(period: &mut Period, now: Duration, events: usize) -> [usize; 3] {
        let mut seen = [0; 3];
        for _ in 0..events {
            match period.take(now) {
                Quota::Under => seen[0] += 1,
                Quota::Hit => seen[1] += 1,
                Quota::Over => seen[2] += 1,
            }
        }
        seen
    }

    // go-zero periodlimit_test.go, testPeriodLimit: quota 5 over 1 s, 100 takes give
    // quota − 1 Allowed, 1 HitQuota and total − quota OverQuota.
    #[test]
    fn reproduces_go_zero_period_limit_take() {
        let mut period = Period::new(5, secs(1));
        assert_eq!(tally(&mut period, secs(0), 100), [4, 1, 95]);
    }

    // The same case with go-zero's Align option (TestPeriodLimit_TakeWithAlign).
    #[test]
    fn reproduces_go_zero_period_limit_take_with_align() {
        let mut period = Period::aligned(5, secs(1));
        assert_eq!(tally(&mut period, secs(7), 100), [4, 1, 95]);
    }

    #[test]
    fn a_period_opens_at_the_first_event_after_the_last_one_closed() {
        let mut period = Period::new(2, secs(10));
        assert_eq!(period.take(secs(3)), Quota::Under);
        assert_eq!(period.take(secs(5)), Quota::Hit);
        assert_eq!(period.take(secs(13) - Duration::from_nanos(1)), Quota::Over);
        // The period that opened at 3 s closed at 13 s; the next one opens at 20 s, not 23 s.
        assert_eq!(period.take(secs(20)), Quota::Under);
        assert_eq!(period.next(secs(20)), secs(10));
        assert_eq!(period.take(secs(29)), Quota::Hit);
        assert_eq!(period.take(secs(30)), Quota::Under);
    }

    #[test]
    fn aligned_periods_start_on_multiples_of_the_period() {
        let mut period = Period::aligned(2, secs(10));
        assert_eq!(period.take(secs(17)), Quota::Under);
        assert_eq!(period.next(secs(17)), secs(3));
        assert_eq!(period.take(secs(19)), Quota::Hit);
        assert_eq!(period.take(secs(20)), Quota::Under);
    }

    // A Unix clock and a daily aligned quota: the reset is at 00:00 UTC.
    #[test]
    fn an_aligned_daily_quota_resets_at_midnight_utc() {
        let day = secs(86_400);
        let midnight = secs(1_709_337_600); // 2024-03-02 00:00:00 UTC
        let mut daily = Period::aligned(2, day);
        let evening = midnight - secs(3600);
        assert_eq!(daily.take(evening), Quota::Under);
        assert_eq!(daily.take(evening), Quota::Hit);
        assert_eq!(daily.next(evening), secs(3600));
        assert_eq!(daily.take(midnight - Duration::from_nanos(1)), Quota::Over);
        assert_eq!(daily.left(midnight), 2);
        assert_eq!(daily.take(midnight), Quota::Under);
        assert_eq!(daily.next(midnight), day);
    }

    #[test]
    fn a_quota_of_zero_is_always_over() {
        let mut period = Period::new(0, secs(1));
        assert_eq!(period.take(secs(0)), Quota::Over);
        assert_eq!(period.take(secs(5)), Quota::Over);
        assert_eq!(period.left(secs(5)), 0);
    }

    #[test]
    fn a_quota_of_one_hits_on_the_first_event() {
        let mut period = Period::new(1, secs(1));
        assert_eq!(period.take(secs(0)), Quota::Hit);
        assert_eq!(period.take(secs(0)), Quota::Over);
        assert_eq!(period.take(secs(1)), Quota::Hit);
    }

    #[test]
    fn a_quota_of_u32_max_tells_hit_from_over() {
        let mut period = Period::new(u32::MAX, secs(1));
        assert_eq!(period.take(secs(0)), Quota::Under);
        assert_eq!(period.left(secs(0)), u32::MAX - 1);
        period.count = u64::from(u32::MAX) - 1;
        assert_eq!(period.take(secs(0)), Quota::Hit);
        assert_eq!(period.left(secs(0)), 0);
        assert_eq!(period.take(secs(0)), Quota::Over);
        period.count = u64::MAX;
        assert_eq!(period.take(secs(0)), Quota::Over);
        assert_eq!(period.left(secs(0)), 0);
    }

    #[test]
    fn left_and_next_read_without_changing_anything() {
        let mut period = Period::new(3, secs(10));
        assert_eq!(period.left(secs(0)), 3);
        assert_eq!(period.next(secs(0)), Duration::ZERO);
        assert_eq!(period.take(secs(2)), Quota::Under);
        assert_eq!(period.left(secs(2)), 2);
        assert_eq!(period.next(secs(2)), secs(10));
        assert_eq!(period.next(secs(11)), secs(1));
        assert_eq!(period.left(secs(12)), 3);
        assert_eq!(period.next(secs(12)), Duration::ZERO);
        // Reading past the end closed nothing.
        assert_eq!(period.take(secs(3)), Quota::Under);
        assert_eq!(period.take(secs(3)), Quota::Hit);
    }

    #[test]
    fn a_period_below_a_nanosecond_is_raised_to_one() {
        let mut period = Period::new(1, Duration::ZERO);
        assert_eq!(period.period(), Duration::from_nanos(1));
        assert_eq!(period.take(secs(1)), Quota::Hit);
        assert_eq!(period.take(secs(1)), Quota::Over);
        assert_eq!(period.next(secs(1)), Duration::from_nanos(1));
        assert_eq!(period.take(secs(1) + Duration::from_nanos(1)), Quota::Hit);
    }

    #[test]
    fn a_period_of_duration_max_lasts_until_the_clock_runs_out() {
        let mut period = Period::aligned(1, Duration::MAX);
        assert_eq!(period.take(secs(5)), Quota::Hit);
        assert_eq!(period.take(secs(1_000_000_000)), Quota::Over);
        assert_eq!(
            period.next(secs(0)),
            Duration::from_nanos(u64::MAX - 1_000_000_000 * 1_000_000_000)
        );
        // The aligned period started at zero and ends exactly where the clock does.
        assert_eq!(period.take(Duration::MAX), Quota::Hit);
        assert_eq!(period.take(Duration::MAX), Quota::Over);
    }

    #[test]
    fn a_clock_going_backwards_never_reopens_a_period() {
        let mut period = Period::new(1, secs(10));
        assert_eq!(period.take(secs(100)), Quota::Hit);
        assert_eq!(period.take(secs(0)), Quota::Over);
        assert_eq!(period.left(secs(0)), 0);
        assert_eq!(period.next(secs(0)), secs(10));
        assert_eq!(period.take(secs(109)), Quota::Over);
        assert_eq!(period.take(secs(110)), Quota::Hit);
    }

    #[test]
    fn survives_a_clock_at_the_end_of_its_range() {
        for mut period in [Period::new(2, secs(1)), Period::aligned(2, secs(1))] {
            assert_eq!(period.take(Duration::MAX), Quota::Under);
            assert_eq!(period.take(Duration::MAX), Quota::Hit);
            // Time has stopped, so the period never ends.
            assert_eq!(period.take(Duration::MAX), Quota::Over);
            assert_eq!(period.left(Duration::MAX), 0);
            assert!(period.next(Duration::MAX) > Duration::ZERO);
        }
    }

    #[test]
    fn idle_is_the_period_after_which_the_counter_is_as_good_as_new() {
        for made in [Period::new, Period::aligned] {
            let mut period = made(2, secs(10));
            let fresh = period.clone();
            assert_eq!(period.take(secs(13)), Quota::Under);
            assert_eq!(period.take(secs(14)), Quota::Hit);
            assert_eq!(period.idle(), secs(10));
            let later = secs(14) + period.idle();
            assert_eq!(period.left(later), fresh.left(later));
            assert_eq!(period.next(later), fresh.next(later));
        }
        assert_eq!(
            Period::new(0, Duration::ZERO).idle(),
            Duration::from_nanos(1)
        );
        assert_eq!(
            Period::aligned(1, Duration::MAX).idle(),
            Duration::from_nanos(u64::MAX)
        );
    }

    #[test]
    fn a_lower_quota_counts_what_the_open_period_already_took() {
        let mut period = Period::new(5, secs(10));
        assert_eq!(tally(&mut period, secs(1), 3), [3, 0, 0]);
        period.retune(2, secs(10), secs(2));
        assert_eq!(period.left(secs(2)), 0);
        assert_eq!(period.take(secs(2)), Quota::Over);
        assert_eq!(period.take(secs(11) - Duration::from_nanos(1)), Quota::Over);
        // The period opened at 1 s still ends at 11 s.
        assert_eq!(tally(&mut period, secs(11), 3), [1, 1, 1]);
    }

    #[test]
    fn a_higher_quota_admits_the_difference_at_once() {
        let mut period = Period::new(2, secs(10));
        assert_eq!(tally(&mut period, secs(0), 3), [1, 1, 1]);
        // Three events counted, the refused one included, as go-zero counts them.
        period.retune(5, secs(10), secs(1));
        assert_eq!(period.left(secs(1)), 2);
        assert_eq!(tally(&mut period, secs(1), 3), [1, 1, 1]);
    }

    #[test]
    fn a_new_period_moves_the_end_of_the_open_one_and_never_reopens_an_ended_one() {
        let mut period = Period::new(1, secs(10));
        assert_eq!(period.take(secs(3)), Quota::Hit);
        period.retune(1, secs(30), secs(5));
        assert_eq!(period.next(secs(5)), secs(28));
        assert_eq!(period.take(secs(32)), Quota::Over);
        // Shortened under the time already spent: the period has ended.
        period.retune(1, secs(20), secs(32));
        assert_eq!(period.left(secs(32)), 1);
        assert_eq!(period.next(secs(32)), Duration::ZERO);
        // A period that had ended stays ended, however long the new one.
        let mut ended = Period::new(1, secs(10));
        assert_eq!(ended.take(secs(0)), Quota::Hit);
        ended.retune(1, secs(100), secs(50));
        assert_eq!(ended.take(secs(50)), Quota::Hit);
        assert_eq!(ended.next(secs(50)), secs(100));
    }

    #[test]
    fn an_aligned_period_moves_to_the_new_grid() {
        let hour = secs(3600);
        let day = secs(86_400);
        let mut period = Period::aligned(10, hour);
        let half_past_noon = secs(12 * 3600 + 1800);
        assert_eq!(tally(&mut period, half_past_noon, 4), [4, 0, 0]);
        // Daily from now: the hour's four events count until midnight.
        period.retune(5, day, half_past_noon);
        assert_eq!(period.left(half_past_noon), 1);
        assert_eq!(period.next(half_past_noon), secs(11 * 3600 + 1800));
        assert_eq!(period.take(day - Duration::from_nanos(1)), Quota::Hit);
        assert_eq!(period.take(day), Quota::Under);
        // Hourly again at 06:10: the day's period shrinks to [00:00, 01:00), long ended.
        let ten_past_six = day + secs(6 * 3600 + 600);
        period.retune(5, hour, ten_past_six);
        assert_eq!(period.left(ten_past_six), 5);
        assert_eq!(period.take(ten_past_six), Quota::Under);
        assert_eq!(period.next(ten_past_six), secs(50 * 60));
    }

    #[test]
    fn retuning_reads_a_clock_going_backwards_as_the_latest_seen() {
        let mut period = Period::new(1, secs(10));
        assert_eq!(period.take(secs(100)), Quota::Hit);
        // Read as 100 s: the period is open, and is kept.
        period.retune(2, secs(10), secs(0));
        assert_eq!(period.left(secs(0)), 1);
        assert_eq!(period.next(secs(0)), secs(10));
    }

    #[test]
    fn retuning_to_the_same_policy_changes_nothing() {
        let mut period = Period::new(2, Duration::ZERO);
        assert_eq!(period.take(secs(5)), Quota::Under);
        period.retune(2, Duration::from_nanos(1), secs(9));
        // The clock did not move to 9 s, so the period opened at 5 s is still open there.
        assert_eq!(period.take(secs(5)), Quota::Hit);
    }

    #[test]
    fn a_clone_counts_independently() {
        let mut period = Period::new(1, secs(1));
        let mut twin = period.clone();
        assert_eq!(period.take(secs(0)), Quota::Hit);
        assert_eq!(twin.take(secs(0)), Quota::Hit);
        assert_eq!(period.take(secs(0)), Quota::Over);
    }
}
