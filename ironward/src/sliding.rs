//! An exact sliding-window log: a quota counted over any window-long stretch.

use alloc::collections::VecDeque;
use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::internal::owner::Owner;
use crate::period::QuotaReason;
use crate::reservation::{self, Reservation, Reserves};

/// Entries reserved up front: enough that quotas up to this size never allocate again.
const RESERVED: u32 = 4096;

/// An admitted cost: when it was taken, in nanoseconds, and how many units (at least 1).
type Entry = (u64, u64);

/// A sliding-window log: at most `quota` events (or units of cost) in any window-long
/// stretch of time.
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
/// Memory is bounded by `quota`: the log is a ring of entries, each a stamp in nanoseconds
/// and the cost admitted at it (16 bytes), sorted by construction. Costs taken at the same
/// reading share one entry, and a cost of 0 takes none, so every entry holds at least one
/// unit and a window never holds more entries than its quota. [`new`](Sliding::new) reserves
/// room for `min(quota, 4096)` entries, so a quota up to 4096 never allocates after
/// construction; a larger quota lets the ring grow on demand, up to `quota` entries, as
/// traffic fills it. Nothing is allocated for a quota the traffic never reaches: a quota of
/// `u32::MAX` costs 64 KiB until the window really holds more than 4096 entries. (Debts
/// settled by [`settle`](Sliding::settle) add one entry each, so the bound is then the quota
/// plus the reservations settled above their estimate within a window.)
///
/// # Costs
///
/// [`take_n`](Sliding::take_n), [`check_n`](Sliding::check_n) and
/// [`next_n`](Sliding::next_n) charge a request its cost in units (tokens of a language
/// model, bytes): it passes when the units inside the window plus its cost are at most the
/// quota. A cost of 1 is an event, and the methods without `_n` are these with a cost of 1.
/// A cost of 0 passes unless settled debts hold the window past its quota, and takes no
/// room. A cost above the quota never passes: `next_n` answers `Duration::MAX` for it.
/// [`left`](Sliding::left) stays a count of units.
///
/// # Costs known after the fact
///
/// [`reserve`](Sliding::reserve) takes an estimate now and [`settle`](Sliding::settle)
/// corrects it to the actual cost later (a [`Reservation`]). A refund lowers the entry the
/// estimate was stamped with, so the room comes back at once and for as long as the estimate
/// would have held it; a refund after the estimate has left the window changes nothing, as
/// there is nothing left to give back. A debt is a new entry stamped when it is settled,
/// which holds the window for a window from then, past the quota if need be: nothing passes
/// until enough has left. A settle after the reservation's deadline changes nothing.
///
/// The bound this keeps: in any window-long stretch, the units charged (takes, estimates
/// less their refunds, debts) are at most the quota plus the debts settled in the stretch
/// after its last admission. At that admission the log saw every unit then in the stretch,
/// and they fitted; what came after is debts of reservations in flight at it. With one
/// reservation in flight at a time, the bound is the quota plus the largest single
/// overshoot (actual minus estimate).
///
/// # Edge cases
///
/// Nothing here panics. A `window` below 1 ns is raised to 1 ns; a quota of 0 admits
/// nothing and [`next`](Sliding::next) is then `Duration::MAX`. Time is `now` on the
/// caller's clock in whole nanoseconds, saturating after about 584 years; the clock starts
/// at zero, and a `now` earlier than one already seen is read as the latest seen, so a clock
/// that steps back never frees room.
///
/// `Clone` makes an independent copy of the state (the entries included): the two then count
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
    /// Each admitted cost still (possibly) inside the window, oldest first; stamps unique.
    entries: VecDeque<Entry>,
    /// The units in `entries`, saturating.
    used: u64,
    /// Retunes that changed the policy: a refund applies only to an estimate taken since the
    /// latest, since a retune may have forgotten older entries.
    epoch: u64,
    latest: Latest,
    /// Marks its reservations, which only its own `settle` settles.
    pub(crate) owner: Owner,
}

impl Sliding {
    /// An empty log admitting `quota` events in any stretch of `window`.
    ///
    /// A `window` below 1 ns is raised to 1 ns. Reserves `min(quota, 4096)` entries.
    pub fn new(quota: u32, window: Duration) -> Self {
        Self {
            quota,
            window: nanos(window).max(1),
            entries: VecDeque::with_capacity(quota.min(RESERVED) as usize),
            used: 0,
            epoch: 0,
            latest: Latest::default(),
            owner: Owner::default(),
        }
    }

    /// Changes the quota and the window in place at `now`, keeping the events the window
    /// holds.
    ///
    /// The events still inside the old window at `now` are kept, with their stamps, and from
    /// then on each counts until its stamp plus the new window: a longer window holds them
    /// longer, a shorter one lets them go sooner, and an event that had already left does
    /// not come back. A lower quota keeps only the fewest newest entries that hold `quota`
    /// units (the newest `quota` events, at a cost of 1 each). That is enough to decide
    /// exactly: a window holding `quota` units is full whatever older ones it also holds, and
    /// the newest are the last to leave, so every answer is the one a log of every kept event
    /// would give. Events admitted under the old quota are not taken back: a window left
    /// holding more than the new quota admits nothing until enough have left it. For the same
    /// reason a [`Reservation`] taken before a retune that changes the policy gets no refund
    /// (its debt is still charged): its entry may be one the retune forgot.
    ///
    /// `window` is read as [`new`](Sliding::new) reads it. A `now` earlier than one already
    /// seen is read as the latest seen, and the log remembers it, as after a
    /// [`take`](Sliding::take). Retuning to the quota and window the log already has (as
    /// read) changes nothing, not even its clock. The ring's room follows the new quota as
    /// [`new`](Sliding::new) sets it: `min(quota, 4096)` entries reserved, so decisions under a
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
        // The entries that have left the old window go first, so that none comes back inside
        // a longer one; then all but the fewest newest that hold the quota.
        self.drop_gone(t);
        let quota_units = u64::from(quota);
        while let Some(front) = self.entries.front_mut() {
            let rest = self.used.saturating_sub(front.1);
            if rest < quota_units {
                // Units at one stamp are alike: keep just enough of the oldest kept entry.
                let excess = self.used.saturating_sub(quota_units);
                front.1 -= excess;
                self.used -= excess;
                break;
            }
            self.entries.pop_front();
            self.used = rest;
        }
        self.quota = quota;
        self.window = window;
        self.epoch = self.epoch.saturating_add(1);
        // Room as `new` reserves it, and none past the quota: memory stays bounded by it.
        let reserved = quota.min(RESERVED) as usize;
        if self.entries.capacity() < reserved {
            self.entries.reserve(reserved - self.entries.len());
        } else if self.entries.capacity() > quota as usize {
            self.entries.shrink_to(reserved);
        }
    }

    /// Whether an event at `now` is within the quota, counting it if it is.
    ///
    /// Entries that have left the window are dropped first. This is
    /// [`check`](Sliding::check) without the reason for a refusal, and
    /// [`take_n`](Sliding::take_n) with a cost of 1.
    #[must_use = "an unchecked take counts the event without enforcing the quota"]
    pub fn take(&mut self, now: Duration) -> bool {
        self.admit(now, 1).is_ok()
    }

    /// Whether a request costing `cost` units at `now` is within the quota, counting its cost
    /// if it is.
    ///
    /// It passes when the units inside the window plus `cost` are at most the quota. A cost
    /// of 0 passes without taking room (unless settled debts hold the window past its quota);
    /// a cost above the quota never passes. This is [`check_n`](Sliding::check_n) without
    /// the reason for a refusal.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// // 10 000 tokens in any minute.
    /// let mut tokens = Sliding::new(10_000, secs(60));
    /// assert!(tokens.take_n(secs(0), 6_000));
    /// assert!(!tokens.take_n(secs(30), 5_000));
    /// assert!(tokens.take_n(secs(30), 4_000));
    /// assert_eq!(tokens.left(secs(30)), 0);
    /// // The 6 000 leave at 60 s.
    /// assert!(tokens.take_n(secs(60), 5_000));
    /// assert!(!tokens.take_n(secs(60), 10_001));
    /// ```
    #[must_use = "an unchecked take counts the cost without enforcing the quota"]
    pub fn take_n(&mut self, now: Duration, cost: u32) -> bool {
        self.admit(now, u64::from(cost)).is_ok()
    }

    /// [`take`](Sliding::take) with the numbers behind a refusal: `take` is this with the
    /// reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure. It carries the events inside the
    /// window (the refused one is not counted), the quota, and how long until the oldest of
    /// them leaves (until enough have left, while settled debts hold the window past its
    /// quota), which is what [`next`](Sliding::next) would answer (`Duration::MAX` for a
    /// quota of 0; see [`QuotaReason`]).
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
        self.check_n(now, 1)
    }

    /// [`take_n`](Sliding::take_n) with the numbers behind a refusal: `take_n` is this with
    /// the reason discarded, so the two always decide alike.
    ///
    /// `Err` carries the units inside the window (the refused cost not counted, saturating
    /// at `u32::MAX`), the quota, and how long until enough have left for `cost` to pass,
    /// which is what [`next_n`](Sliding::next_n) would answer: `Duration::MAX` for a cost
    /// above the quota. Its count plus `cost` is past the quota; with a cost above 1 the
    /// count alone may be below it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// let mut tokens = Sliding::new(100, secs(10));
    /// assert!(tokens.check_n(secs(0), 60).is_ok());
    /// assert!(tokens.check_n(secs(4), 30).is_ok());
    /// let reason = tokens.check_n(secs(5), 50).expect_err("90 of 100 are taken");
    /// assert_eq!((reason.count, reason.quota, reason.next), (90, 100, secs(5)));
    /// assert_eq!(tokens.check_n(secs(5), 101).unwrap_err().next, Duration::MAX);
    /// ```
    #[inline]
    #[must_use = "an unchecked take counts the cost without enforcing the quota"]
    pub fn check_n(&mut self, now: Duration, cost: u32) -> Result<(), QuotaReason> {
        let cost = u64::from(cost);
        self.admit(now, cost).map_err(|t| QuotaReason {
            count: u32::try_from(self.used).unwrap_or(u32::MAX),
            quota: self.quota,
            next: self.wait(t, 0, self.used, cost),
        })
    }

    /// Takes an estimated cost now, to be settled at the actual cost with
    /// [`settle`](Sliding::settle) within `timeout`.
    ///
    /// The estimate is decided exactly as [`check_n`](Sliding::check_n) decides a cost (a
    /// refused estimate takes nothing and says why); the reservation it answers carries the
    /// estimate, the stamp it was taken at and its deadline, `now` (read as the latest seen)
    /// plus `timeout`. A reservation never settled, or settled after its deadline, costs its
    /// estimate for a window.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// let mut tokens = Sliding::new(1_000, secs(60));
    /// let reservation = tokens.reserve(secs(0), 700, secs(10)).expect("room for it");
    /// assert!(tokens.reserve(secs(1), 400, secs(10)).is_err());
    /// // It cost 1 100: 400 more, charged at 2 s, for a minute from then.
    /// tokens.settle(reservation, 1_100, secs(2));
    /// assert_eq!(tokens.left(secs(2)), 0);
    /// // 100 pass once the 700 leave at 60 s.
    /// assert_eq!(tokens.next_n(secs(2), 100), secs(58));
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

    /// Settles a [`reserve`](Sliding::reserve)d cost at its `actual` cost, at `now`.
    ///
    /// Below the estimate, the difference is taken off the entry the estimate was stamped
    /// with, so the room comes back at once; if the estimate has already left the window,
    /// or a retune that changed the policy came between, there is nothing to give back and
    /// nothing changes. Above the estimate, the difference is charged as a debt stamped
    /// `now`, even past the quota: it holds the window for a window from `now`. At `now`
    /// after the reservation's deadline nothing changes, not even the clock. A `now` earlier
    /// than one already seen is read as the latest seen.
    /// The answer is `None`, except for a reservation another log made: that changes
    /// nothing here, and comes back as `Some`, to be settled on the log that made it.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// let mut tokens = Sliding::new(1_000, secs(60));
    /// let early = tokens.reserve(secs(0), 600, secs(120)).unwrap();
    /// let late = tokens.reserve(secs(0), 400, secs(120)).unwrap();
    /// // Settled within the window: 500 come back at once.
    /// tokens.settle(early, 100, secs(30));
    /// assert_eq!(tokens.left(secs(30)), 500);
    /// // Settled after the window: the estimate has left already, nothing to refund.
    /// tokens.settle(late, 0, secs(90));
    /// assert_eq!(tokens.left(secs(90)), 1_000);
    /// ```
    pub fn settle(
        &mut self,
        reservation: Reservation,
        actual: u32,
        now: Duration,
    ) -> Option<Reservation> {
        reservation::settle(self, reservation, actual, now)
    }

    /// How many more units the window has room for at `now`, without changing anything:
    /// events, at a cost of 1 each.
    #[must_use]
    pub fn left(&self, now: Duration) -> u32 {
        let t = self.latest.read(now);
        let (_, inside) = self.inside(t);
        u32::try_from(u64::from(self.quota).saturating_sub(inside)).unwrap_or(0)
    }

    /// How long after `now` the window will next have room, without changing anything.
    ///
    /// Zero when there is room now; otherwise the time until the oldest event inside leaves
    /// it (until enough have left, while settled debts hold the window past its quota);
    /// `Duration::MAX` for a quota of 0, which never has room. This is
    /// [`next_n`](Sliding::next_n) with a cost of 1.
    #[must_use = "next only computes the wait; it counts nothing"]
    pub fn next(&self, now: Duration) -> Duration {
        self.next_n(now, 1)
    }

    /// How long after `now` a request costing `cost` units would pass, without changing
    /// anything.
    ///
    /// Zero when it would pass now; otherwise the time until enough of the units inside have
    /// left the window, oldest first; `Duration::MAX` for a cost above the quota, which never
    /// passes.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Sliding;
    ///
    /// let secs = Duration::from_secs;
    /// let mut tokens = Sliding::new(100, secs(10));
    /// assert!(tokens.take_n(secs(0), 50));
    /// assert!(tokens.take_n(secs(3), 50));
    /// assert_eq!(tokens.next_n(secs(5), 0), Duration::ZERO);
    /// assert_eq!(tokens.next_n(secs(5), 50), secs(5));
    /// assert_eq!(tokens.next_n(secs(5), 51), secs(8));
    /// assert_eq!(tokens.next_n(secs(5), 101), Duration::MAX);
    /// ```
    #[must_use = "next only computes the wait; it counts nothing"]
    pub fn next_n(&self, now: Duration, cost: u32) -> Duration {
        let t = self.latest.read(now);
        let (first, inside) = self.inside(t);
        self.wait(t, first, inside, u64::from(cost))
    }

    /// How long the log takes to be as good as new when left alone: its window.
    ///
    /// After a window without a take every entry has left it, so the log answers as a fresh
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

    /// The most events (units) the window admits.
    #[must_use]
    pub fn quota(&self) -> u32 {
        self.quota
    }

    /// How long the window is, as read by [`new`](Sliding::new).
    #[must_use]
    pub fn window(&self) -> Duration {
        Duration::from_nanos(self.window)
    }

    /// Whether an entry stamped `stamp` has left the window at `t`.
    ///
    /// Stamps are past readings of the latest clock, so `t ≥ stamp`: comparing the gap
    /// rather than `stamp + window` is exact and cannot overflow at the end of the clock.
    fn gone(&self, stamp: u64, t: u64) -> bool {
        t - stamp >= self.window
    }

    /// The one rule of `take`, `check` and their cost forms: whether `cost` fits at `now`,
    /// counting it if it does; `Err` is the reading it was refused at. The reason is built by
    /// `check_n` alone, so that a `take` never works out a wait it would discard.
    #[inline]
    fn admit(&mut self, now: Duration, cost: u64) -> Result<(), u64> {
        let t = self.latest.advance(now);
        self.drop_gone(t);
        // What is left in the ring is inside the window.
        if self.used.saturating_add(cost) <= u64::from(self.quota) {
            self.charge(t, cost);
            Ok(())
        } else {
            Err(t)
        }
    }

    /// Drops the entries that have left the window at `t`.
    fn drop_gone(&mut self, t: u64) {
        while let Some(&(stamp, cost)) = self.entries.front() {
            if !self.gone(stamp, t) {
                break;
            }
            self.entries.pop_front();
            self.used = self.used.saturating_sub(cost);
        }
    }

    /// The index of the oldest entry still inside the window at `t`, and the units from it
    /// on. The entries are sorted, so those that have left come first; they are usually few,
    /// so their units are subtracted rather than the rest added.
    fn inside(&self, t: u64) -> (usize, u64) {
        let first = self
            .entries
            .partition_point(|&(stamp, _)| self.gone(stamp, t));
        let gone: u64 = self.entries.range(..first).map(|&(_, cost)| cost).sum();
        (first, self.used.saturating_sub(gone))
    }

    /// Counts `cost` units at `t`, the latest reading: into the newest entry when it has the
    /// same stamp, none for a cost of 0.
    fn charge(&mut self, t: u64, cost: u64) {
        if cost == 0 {
            return;
        }
        self.used = self.used.saturating_add(cost);
        match self.entries.back_mut() {
            Some(back) if back.0 == t => back.1 = back.1.saturating_add(cost),
            _ => self.entries.push_back((t, cost)),
        }
    }

    /// How long after `t` a cost passes, the entries from `first` on holding `inside` units.
    fn wait(&self, t: u64, first: usize, mut inside: u64, cost: u64) -> Duration {
        let quota = u64::from(self.quota);
        if cost > quota {
            return Duration::MAX;
        }
        if inside.saturating_add(cost) <= quota {
            return Duration::ZERO;
        }
        // Room comes when enough of the oldest have left; each is inside: `t − stamp <
        // window`. Usually the oldest alone is enough, so it is asked first, without the
        // ring's two-slice iterator.
        if let Some(&(stamp, units)) = self.entries.get(first)
            && inside.saturating_sub(units).saturating_add(cost) <= quota
        {
            return Duration::from_nanos(self.window - (t - stamp));
        }
        for &(stamp, units) in self.entries.range(first..) {
            inside = inside.saturating_sub(units);
            if inside.saturating_add(cost) <= quota {
                return Duration::from_nanos(self.window - (t - stamp));
            }
        }
        // Unreachable: with every entry gone `inside` is 0 and the cost fits the quota.
        Duration::MAX
    }
}

impl Reserves for Sliding {
    type Cost = u32;

    fn owner(&self) -> &Owner {
        &self.owner
    }

    fn settle_own(&mut self, reservation: &Reservation, actual: u32, now: Duration) {
        let Some((t, estimate, actual)) = reservation.whole(&mut self.latest, now, actual) else {
            return;
        };
        if actual > estimate {
            self.charge(t, actual - estimate);
            return;
        }
        let at = reservation.at;
        if reservation.epoch != self.epoch || at > t || self.gone(at, t) {
            return;
        }
        let index = self.entries.partition_point(|&(stamp, _)| stamp < at);
        if let Some(entry) = self.entries.get_mut(index).filter(|entry| entry.0 == at) {
            let refund = (estimate - actual).min(entry.1);
            entry.1 -= refund;
            self.used = self.used.saturating_sub(refund);
            if entry.1 == 0 {
                self.entries.remove(index);
            }
        }
    }
}

#[cfg(test)]
mod tests;
