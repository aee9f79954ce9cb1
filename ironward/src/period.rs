//! A fixed-window counter: a quota per period, go-zero's `PeriodLimit` without Redis.

use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::internal::owner::Owner;
use crate::reservation::{self, Reservation, Reserves};

mod reason;
#[cfg(target_has_atomic = "64")]
mod shared;
mod usage;

pub use reason::QuotaReason;
#[cfg(target_has_atomic = "64")]
pub use shared::{PeriodLeft, SharedPeriod};
pub use usage::Usage;

/// A fixed-window counter: at most `quota` events per `period`, the count starting again
/// when a period ends.
///
/// Cheaper than [`Sliding`](crate::Sliding), which keeps a stamp per event, and coarser: a
/// client can spend one quota at the end of a period and another at the start of the next.
/// That is the trade go-zero's `PeriodLimit` (`core/limit/periodlimit.go`) makes, and this is
/// its arithmetic without Redis: every event is counted, and the count decides the answer
/// ([`Usage::Under`] below the quota, [`Usage::Hit`] on it, [`Usage::Over`] past it).
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
/// [`Usage::Over`] to every event; a quota of 1 answers [`Usage::Hit`] to the first. The
/// count is a saturating `u64`, so even a quota of `u32::MAX` tells `Hit` from `Over`. Time
/// is `now` on the caller's clock in whole nanoseconds, saturating after about 584 years;
/// the clock starts at zero, and a `now` earlier than one already seen is read as the latest
/// seen, so a clock that steps back never reopens a period.
///
/// # Costs
///
/// [`take_n`](Period::take_n), [`check_n`](Period::check_n) and [`next_n`](Period::next_n)
/// charge a request its cost in units (tokens of a language model, bytes): it passes when
/// the period's count plus its cost is at most the quota, answering [`Usage::Hit`] when it
/// lands exactly on it. The methods without `_n` are these with a cost of 1. A refused cost
/// is not counted while the period has room left, so a request too large for what is left
/// does not spend it; once the quota is used up, a refusal counts as one event, as go-zero
/// counts every call over the quota (at a cost of 1 these are the same rule). A cost of 0
/// passes unless the count is already past the quota, and opens a period like any event. A
/// cost above the quota never passes: `next_n` answers `Duration::MAX` for it.
/// [`left`](Period::left) stays a count of units.
///
/// # Costs known after the fact
///
/// [`reserve`](Period::reserve) takes an estimate now and [`settle`](Period::settle)
/// corrects it to the actual cost later (a [`Reservation`]). A refund is taken off the count
/// of the period the estimate was counted in, if that period is still open; once it has
/// closed there is nothing to give back, and nothing changes. A debt is counted in the period
/// open when it is settled (opening one if none is), past the quota if need be: nothing more
/// passes in that period. A settle after the reservation's deadline changes nothing.
///
/// The bound this keeps: in any one period, the units charged (takes, estimates less their
/// refunds, debts) are at most the quota plus the debts settled in it after its last
/// admission. At that admission the count held every unit then charged to the period, and
/// they fitted; what came after is debts of reservations in flight at it. With one
/// reservation in flight at a time, the bound is the quota plus the largest single
/// overshoot (actual minus estimate).
///
/// `Clone` makes an independent copy of the state: the two then count separately, so
/// cloning a limiter doubles what the pair admits.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Period, Usage};
///
/// // A thousand a day, resetting at midnight UTC on a Unix clock.
/// let day = Duration::from_secs(86_400);
/// let mut daily = Period::aligned(1000, day);
/// let noon = Duration::from_secs(1_709_294_400); // 2024-03-01 12:00:00 UTC
/// assert_eq!(daily.take(noon), Usage::Under);
/// assert_eq!(daily.left(noon), 999);
/// assert_eq!(daily.next(noon), day / 2);
///
/// // Three a minute, counted from the first event.
/// let minute = Duration::from_secs(60);
/// let mut limit = Period::new(3, minute);
/// let at = Duration::from_secs;
/// assert_eq!(limit.take(at(10)), Usage::Under);
/// assert_eq!(limit.take(at(20)), Usage::Under);
/// assert_eq!(limit.take(at(30)), Usage::Hit);
/// assert_eq!(limit.take(at(69)), Usage::Over);
/// assert_eq!(limit.take(at(70)), Usage::Under);
/// ```
#[derive(Debug, Clone)]
pub struct Period {
    quota: u32,
    /// The period, in nanoseconds (at least 1).
    period: u64,
    align: bool,
    /// When the latest period started, in nanoseconds; `None` before the first event.
    start: Option<u64>,
    /// Units counted in the latest period: those admitted, debts, and refusals once the
    /// quota is used up.
    count: u64,
    /// Periods opened and retunes that changed the policy: a refund applies only within the
    /// same one.
    epoch: u64,
    latest: Latest,
    /// Marks its reservations, which only its own `settle` settles.
    pub(crate) owner: Owner,
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
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(1, secs(10));
    /// assert_eq!(limit.take(secs(7)), Usage::Hit);
    /// // The period opened at 7 s: it ends at 17 s.
    /// assert_eq!(limit.next(secs(7)), secs(10));
    /// assert_eq!(limit.take(secs(16)), Usage::Over);
    /// assert_eq!(limit.take(secs(17)), Usage::Hit);
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
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::aligned(1, secs(10));
    /// assert_eq!(limit.take(secs(7)), Usage::Hit);
    /// // The period is [0 s, 10 s): it ends at 10 s, whenever the first event came.
    /// assert_eq!(limit.next(secs(7)), secs(3));
    /// assert_eq!(limit.take(secs(10)), Usage::Hit);
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
            epoch: 0,
            latest: Latest::default(),
            owner: Owner::default(),
        }
    }

    /// Counts one event at `now` and says where the quota stands.
    ///
    /// Every event is counted, refused ones too, as go-zero's `INCRBY` counts them. This is
    /// [`check`](Period::check) with a refusal read as [`Usage::Over`], and
    /// [`take_n`](Period::take_n) with a cost of 1.
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn take(&mut self, now: Duration) -> Usage {
        self.check(now).unwrap_or(Usage::Over)
    }

    /// Counts a request costing `cost` units at `now` and says where the quota stands.
    ///
    /// It passes when the count plus `cost` is at most the quota: [`Usage::Hit`] when it
    /// lands on it, [`Usage::Under`] below. A refused cost is counted as one event once the
    /// quota is used up, and not at all while room is left (see the type's docs). This is
    /// [`check_n`](Period::check_n) with a refusal read as [`Usage::Over`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// // A million tokens a day.
    /// let mut daily = Period::new(1_000_000, secs(86_400));
    /// assert_eq!(daily.take_n(secs(0), 900_000), Usage::Under);
    /// // Too large for what is left: refused, and the 100 000 left stay.
    /// assert_eq!(daily.take_n(secs(1), 200_000), Usage::Over);
    /// assert_eq!(daily.left(secs(1)), 100_000);
    /// assert_eq!(daily.take_n(secs(2), 100_000), Usage::Hit);
    /// assert_eq!(daily.take_n(secs(3), 1_000_001), Usage::Over);
    /// ```
    #[must_use = "an unchecked take counts the cost without enforcing the quota"]
    pub fn take_n(&mut self, now: Duration, cost: u32) -> Usage {
        self.check_n(now, cost).unwrap_or(Usage::Over)
    }

    /// [`take`](Period::take) with the numbers behind a refusal: `Ok(Under)` or `Ok(Hit)` for
    /// an event admitted, `Err` for one [`Usage::Over`]. `take` is this with the reason read
    /// as `Over`, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure. It carries the events the open
    /// period has counted, the refused one included (as go-zero counts it, saturating at
    /// `u32::MAX`), the quota, and how long until the period ends, which is what
    /// [`next`](Period::next) would answer (see [`QuotaReason`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(1, secs(10));
    /// assert_eq!(limit.check(secs(3)), Ok(Usage::Hit));
    /// let reason = limit.check(secs(5)).expect_err("the quota is used up");
    /// assert_eq!((reason.count, reason.quota, reason.next), (2, 1, secs(8)));
    /// ```
    #[inline]
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn check(&mut self, now: Duration) -> Result<Usage, QuotaReason> {
        self.check_n(now, 1)
    }

    /// [`take_n`](Period::take_n) with the numbers behind a refusal: `take_n` is this with
    /// the reason read as [`Usage::Over`], so the two always decide alike.
    ///
    /// `Err` carries the open period's count after the refusal (saturating at `u32::MAX`),
    /// the quota, and how long until the period ends, which is what [`next`](Period::next)
    /// answers, even for a cost above the quota that no period admits (ask
    /// [`next_n`](Period::next_n), which answers `Duration::MAX` for it). Its count plus
    /// `cost` is past the quota; with a cost above 1 the count alone may be below it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Period;
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(100, secs(60));
    /// assert!(limit.check_n(secs(0), 70).is_ok());
    /// let reason = limit.check_n(secs(20), 50).expect_err("30 are left");
    /// assert_eq!((reason.count, reason.quota, reason.next), (70, 100, secs(40)));
    /// assert_eq!(limit.check_n(secs(20), 101).unwrap_err().next, secs(40));
    /// assert_eq!(limit.next_n(secs(20), 101), Duration::MAX);
    /// ```
    #[inline]
    #[must_use = "an unchecked take counts the cost without enforcing the quota"]
    pub fn check_n(&mut self, now: Duration, cost: u32) -> Result<Usage, QuotaReason> {
        let t = self.latest.advance(now);
        let start = self.open_at(t);
        let quota = u64::from(self.quota);
        let after = self.count.saturating_add(u64::from(cost));
        if after <= quota {
            self.count = after;
            return Ok(if after < quota {
                Usage::Under
            } else {
                Usage::Hit
            });
        }
        if self.count >= quota {
            self.count = self.count.saturating_add(1);
        }
        Err(QuotaReason {
            count: u32::try_from(self.count).unwrap_or(u32::MAX),
            quota: self.quota,
            // The period is open at `t`: `t − start < period`.
            next: Duration::from_nanos(self.period - (t - start)),
        })
    }

    /// Takes an estimated cost now, to be settled at the actual cost with
    /// [`settle`](Period::settle) within `timeout`.
    ///
    /// The estimate is decided exactly as [`check_n`](Period::check_n) decides a cost (a
    /// refused estimate is counted as that rule says, and says why); the reservation it
    /// answers carries the estimate, the period it was counted in and its deadline, `now`
    /// (read as the latest seen) plus `timeout`. A reservation never settled, or settled
    /// after its deadline, costs its estimate.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Period;
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(1_000, secs(60));
    /// let reservation = limit.reserve(secs(0), 800, secs(30)).expect("room for it");
    /// assert_eq!(limit.left(secs(1)), 200);
    /// limit.settle(reservation, 300, secs(2));
    /// assert_eq!(limit.left(secs(2)), 700);
    /// ```
    #[must_use = "a reservation left unsettled keeps costing its estimate: settle it with the actual cost"]
    pub fn reserve(
        &mut self,
        now: Duration,
        estimate: u32,
        timeout: Duration,
    ) -> Result<Reservation, QuotaReason> {
        self.check_n(now, estimate)?;
        let (at, epoch) = (self.latest.get(), self.epoch);
        Ok(Reservation::taken(
            &mut self.owner,
            f64::from(estimate),
            at,
            epoch,
            timeout,
        ))
    }

    /// Settles a [`reserve`](Period::reserve)d cost at its `actual` cost, at `now`.
    ///
    /// Below the estimate, the difference is taken off the count, if the period the estimate
    /// was counted in is still open (and no retune that changed the policy came between);
    /// once it has closed there is nothing to give back and nothing changes. Above the
    /// estimate, the difference is counted in the period open at `now`, opening one if none
    /// is, even past the quota. At `now` after the reservation's deadline nothing changes,
    /// not even the clock. A `now` earlier than one already seen is read as the latest seen.
    /// The answer is `None`, except for a reservation another counter made: that changes
    /// nothing here, and comes back as `Some`, to be settled on the counter that made it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(1_000, secs(60));
    /// let reservation = limit.reserve(secs(0), 800, secs(30)).unwrap();
    /// // It cost 1 100: 300 past the quota, so nothing more passes this period.
    /// limit.settle(reservation, 1_100, secs(10));
    /// assert_eq!(limit.take_n(secs(10), 0), Usage::Over);
    /// assert_eq!(limit.next_n(secs(10), 1), secs(50));
    /// ```
    pub fn settle(
        &mut self,
        reservation: Reservation,
        actual: u32,
        now: Duration,
    ) -> Option<Reservation> {
        reservation::settle(self, reservation, actual, now)
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
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(10, secs(60));
    /// for _ in 0..4 {
    ///     assert_eq!(limit.take(secs(5)), Usage::Under);
    /// }
    /// // Five a period now: the four already taken count, one is left.
    /// limit.retune(5, secs(60), secs(20));
    /// assert_eq!(limit.left(secs(20)), 1);
    /// assert_eq!(limit.take(secs(20)), Usage::Hit);
    /// assert_eq!(limit.take(secs(20)), Usage::Over);
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
        self.epoch = self.epoch.saturating_add(1);
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

    /// How long after `now` a request costing `cost` units would pass, without changing
    /// anything.
    ///
    /// Zero when it would pass now, or when no period is open (the next event opens one);
    /// otherwise the time until the open period ends; `Duration::MAX` for a cost above the
    /// quota, which never passes. Unlike [`next`](Period::next), which is when the open period
    /// ends whatever room is left, this is zero while the cost fits: the two agree whenever
    /// an event would be refused.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{Period, Usage};
    ///
    /// let secs = Duration::from_secs;
    /// let mut limit = Period::new(100, secs(60));
    /// assert_eq!(limit.take_n(secs(0), 60), Usage::Under);
    /// assert_eq!(limit.next_n(secs(15), 40), Duration::ZERO);
    /// assert_eq!(limit.next_n(secs(15), 41), secs(45));
    /// assert_eq!(limit.next_n(secs(15), 101), Duration::MAX);
    /// ```
    #[must_use = "next only computes the wait; it counts nothing"]
    pub fn next_n(&self, now: Duration, cost: u32) -> Duration {
        if cost > self.quota {
            return Duration::MAX;
        }
        let t = self.latest.read(now);
        match self.open(t) {
            Some(start) if self.count.saturating_add(u64::from(cost)) > u64::from(self.quota) => {
                Duration::from_nanos(self.period - (t - start))
            }
            _ => Duration::ZERO,
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
    /// use ironward::{Period, Usage};
    ///
    /// let minute = Duration::from_secs(60);
    /// let mut limit = Period::new(1, minute);
    /// assert_eq!(limit.take(Duration::ZERO), Usage::Hit);
    /// assert_eq!(limit.idle(), minute);
    /// assert_eq!(limit.take(limit.idle()), Usage::Hit);
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

    /// The start of the period open at `t`, opening one (its count 0) if none is.
    fn open_at(&mut self, t: u64) -> u64 {
        match self.open(t) {
            Some(start) => start,
            None => {
                let start = if self.align { t - t % self.period } else { t };
                self.start = Some(start);
                self.count = 0;
                self.epoch = self.epoch.saturating_add(1);
                start
            }
        }
    }
}

impl Reserves for Period {
    type Cost = u32;

    fn owner(&self) -> &Owner {
        &self.owner
    }

    fn settle_own(&mut self, reservation: &Reservation, actual: u32, now: Duration) {
        let Some((t, estimate, actual)) = reservation.whole(&mut self.latest, now, actual) else {
            return;
        };
        if actual > estimate {
            self.open_at(t);
            self.count = self.count.saturating_add(actual - estimate);
        } else if reservation.epoch == self.epoch && self.open(t).is_some() {
            self.count = self.count.saturating_sub(estimate - actual);
        }
    }
}

#[cfg(test)]
mod tests;
