//! What a classic breaker shared between threads needs to let a healthy breaker's calls
//! through and count their successes without a lock, and to refuse an open one's: how long
//! each is safe, successes recorded in bulk, and permits made for the calls it let through.
//!
//! A closed breaker lets every call through; only outcomes move it. A shared form can answer
//! the closed breaker's calls itself and count their successes on counters of its own, as long
//! as it knows that no such success could have opened the breaker, and it hands the counts
//! over before anything reads the record. An open breaker refuses every call until its wait
//! ends, with a reason fixed when it opened, so a shared form can answer those calls too. These
//! are the breaker's side of that bargain.

use core::time::Duration;

use super::counts::Counts;
use super::{ClassicBreaker, ClassicPermit, Force, Refusing, Stage};
use crate::clock::nanos;

impl ClassicBreaker {
    /// Until when no success can open the breaker: `Some(end)`, exclusive, or `None` when
    /// that is not certain (or the breaker is not closed).
    ///
    /// A shared form lets a closed breaker's calls through and counts their successes
    /// outside its lock while this holds, and takes the lock for anything else. It is `Some`
    /// when the breaker is closed, put in no state by hand, and the failed and slow shares its
    /// record would hold after one more success are both under the rates. From there more
    /// successes only lower the shares: a count record's calls never fall and its failures
    /// and slow calls never rise as successes come (each one evicts the oldest call, at worst
    /// a success); a time record's likewise, but only within one bucket, since a bucket that
    /// leaves the span takes its successes with it, so `end` is the end of the bucket the
    /// latest reading falls in. A consecutive record starts its count again at a success, so
    /// no success opens it. For a count or consecutive record `end` is `Duration::MAX`.
    ///
    /// The promise: however many successes of the current [`epoch`](Self::epoch) are then
    /// recorded at times before `end` ([`pass`](Self::pass) of calls that were not slow,
    /// [`record`](Self::record) or [`record_successes`](Self::record_successes)), the breaker
    /// stays closed, and every [`check`](Self::check) before `end` lets its call through. A
    /// failure, a slow call, a [`retune`](Self::retune) or a change of state breaks it: ask
    /// again after any of them.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::classic::Record;
    /// use ironward::{CLASSIC, Classic, ClassicBreaker};
    ///
    /// let ms = Duration::from_millis;
    /// let per_second = Record::Time { span: ms(1000), buckets: 4 };
    /// let policy = Classic { record: per_second, minimum: 4, ..CLASSIC };
    /// let mut breaker = ClassicBreaker::new(policy, ms(300));
    /// // Healthy until the 250 ms bucket that 300 ms falls in ends.
    /// assert_eq!(breaker.healthy_until(), Some(ms(500)));
    /// // One failure: one more success leaves 1 of 2 calls failed, at the 50 % rate, so it
    /// // is not certain that no success opens the breaker.
    /// let permit = breaker.check(ms(300)).expect("closed");
    /// let _ = breaker.fail(permit, ms(300));
    /// assert_eq!(breaker.healthy_until(), None);
    /// // Two successes later, one more leaves 1 of 4: healthy again.
    /// breaker.record_successes(2, ms(310));
    /// assert_eq!(breaker.healthy_until(), Some(ms(500)));
    /// // A count record's answer has no end.
    /// assert_eq!(ClassicBreaker::new(CLASSIC, ms(300)).healthy_until(), Some(Duration::MAX));
    /// ```
    #[must_use]
    pub fn healthy_until(&self) -> Option<Duration> {
        if self.policy.force != Force::None || !matches!(self.stage, Stage::Closed) {
            return None;
        }
        let t = self.latest.get();
        if !self.successes_cannot_open(t) {
            return None;
        }
        let end = match &self.counts {
            Counts::Time { width, .. } => (t - t % width).saturating_add(*width),
            Counts::Count { .. } | Counts::Consecutive { .. } => u64::MAX,
        };
        Some(if end == u64::MAX {
            Duration::MAX
        } else {
            Duration::from_nanos(end)
        })
    }

    /// Records `n` calls that succeeded at `now`, none of them slow, as `n`
    /// [`record`](Self::record)s of [`Outcome::Success`](crate::Outcome::Success) at `now`
    /// would, in a few steps rather than `n`.
    ///
    /// For a shared form that counted the successes of the healthy case outside its lock
    /// (see [`healthy_until`](Self::healthy_until)) and hands them over together. Like
    /// `record`, only a closed (or metrics-only) breaker records them, and a success that
    /// opens the breaker leaves the rest unrecorded, as the open breaker would. It moves the
    /// clock to `now` (an earlier reading reads as the latest seen) even when `n` is 0,
    /// which records nothing: that is how a shared form hands over the times its calls saw.
    ///
    /// A count record takes at most its size in steps, whatever `n`; a time or consecutive
    /// record a few. A time record's bucket stops counting successes in bulk at half of
    /// `u64::MAX` divided by the number of buckets, so that the record's total never
    /// overflows (no run of real calls comes near it).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{CLASSIC, ClassicBreaker, Outcome};
    ///
    /// let (mut bulk, mut one_by_one) = (ClassicBreaker::new(CLASSIC, Duration::ZERO), ClassicBreaker::new(CLASSIC, Duration::ZERO));
    /// bulk.record_successes(1_000_000, Duration::from_secs(1));
    /// for _ in 0..1_000_000 {
    ///     one_by_one.record(Outcome::Success, Duration::from_secs(1));
    /// }
    /// assert_eq!(bulk.healthy_until(), one_by_one.healthy_until());
    /// assert_eq!(bulk.latest(), Duration::from_secs(1));
    /// ```
    pub fn record_successes(&mut self, n: u64, now: Duration) {
        let t = self.latest.advance(now);
        match (self.policy.force, &self.stage) {
            (Force::MetricsOnly, _) => self.counts.add_successes(t, n),
            (Force::None, Stage::Closed) => self.closed_successes(t, n),
            _ => {}
        }
    }

    /// Until when every check refuses whatever else comes, and with what reason:
    /// `Some` while the breaker is open within its wait or forced open, `None` otherwise.
    ///
    /// A shared form refuses those calls without its lock while this holds. Open, a
    /// [`check`](Self::check) before the wait's end refuses with the shares that opened the
    /// breaker and the rest of the wait, and changes nothing but the breaker's clock; forced
    /// open, every check refuses so. Nothing but a [`retune`](Self::retune) changes that
    /// answer: either lets no call through to settle, a settle of a permit of an earlier
    /// stage counts for nothing, and [`record`](Self::record) and
    /// [`record_successes`](Self::record_successes) record nothing. So until a retune, a check at any `now` refuses with
    /// [`Refusing::at`] of the time it reads `now` as, the later of it and the
    /// [`latest`](Self::latest) reading seen, if that is `Some`; only then does it do more.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::classic::Force;
    /// use ironward::{CLASSIC, Classic, ClassicBreaker};
    ///
    /// let s = Duration::from_secs;
    /// let mut breaker = ClassicBreaker::new(CLASSIC, s(0));
    /// assert_eq!(breaker.refusing(), None, "closed");
    /// breaker.retune(Classic { force: Force::Open, ..CLASSIC }, s(1));
    /// let forced = breaker.refusing().expect("forced open");
    /// assert_eq!((forced.until, forced.forced), (Duration::MAX, true));
    /// assert_eq!(forced.at(s(1)), breaker.check(s(1)).err());
    /// ```
    #[must_use]
    pub fn refusing(&self) -> Option<Refusing> {
        let until = match (self.policy.force, &self.stage) {
            (Force::Open, _) => Duration::MAX,
            (Force::None, Stage::Open { until }) if self.latest.get() < *until => {
                Duration::from_nanos(*until)
            }
            _ => return None,
        };
        let (failure_rate, slow_rate) = self.opened_by;
        Some(Refusing {
            until,
            forced: self.policy.force == Force::Open,
            failure_rate,
            slow_rate,
        })
    }

    /// The number of the stage the breaker is in: it moves on at every change of state, and
    /// a permit made in one stage counts for nothing in a later one (its outcome was news of
    /// the backend before the breaker changed its mind).
    ///
    /// A shared form notes it with the calls it lets through itself, to make their permits
    /// with [`permit_in`](Self::permit_in) when it settles them here.
    #[must_use]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The latest clock reading the breaker has seen, which is the time it reads any earlier
    /// `now` as.
    #[must_use]
    pub fn latest(&self) -> Duration {
        Duration::from_nanos(self.latest.get())
    }

    /// A permit for a call let through at `at` while the breaker was closed in stage `epoch`,
    /// as [`check`](Self::check) would have made it then, without asking the breaker.
    ///
    /// For a shared form that let the call through on its own while the breaker was healthy
    /// and settles it here when it cannot count it itself (a failure, a slow call, a success
    /// after the stage ended): [`pass`](Self::pass) and [`fail`](Self::fail) then weigh it as
    /// any permit of that stage, slow if it ends more than `slow_call` after `at`, and for
    /// nothing if `epoch` is not the breaker's stage any more. `at` is the time `check` would
    /// have read, the latest reading then seen included. Nothing in the breaker changes; a
    /// permit made for the current closed stage and passed counts a call as
    /// [`record`](Self::record) does, so it opens no door `record` does not.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::classic::{Record, State};
    /// use ironward::{CLASSIC, Classic, ClassicBreaker};
    ///
    /// let s = Duration::from_secs;
    /// let policy = Classic { record: Record::Consecutive { failures: 1 }, ..CLASSIC };
    /// let mut breaker = ClassicBreaker::new(policy, s(0));
    /// let epoch = breaker.epoch();
    /// let permit = breaker.permit_in(epoch, s(1));
    /// let _ = breaker.fail(permit, s(2));
    /// assert_eq!(breaker.state(s(2)), State::Open);
    /// // A permit of the closed stage, settled after the breaker opened, counts for nothing.
    /// let late = breaker.permit_in(epoch, s(1));
    /// assert!(breaker.pass(late, s(3)).is_none());
    /// assert_eq!(breaker.epoch(), epoch + 1);
    /// ```
    pub fn permit_in(&mut self, epoch: u64, at: Duration) -> ClassicPermit {
        ClassicPermit {
            mark: self.owner.mark(),
            epoch,
            at: nanos(at),
            probe: None,
        }
    }

    /// `n` successes at `t` on a closed breaker, as `n` calls of `closed_outcome`: one at a
    /// time only where one of them might open it, the rest at once.
    fn closed_successes(&mut self, t: u64, mut n: u64) {
        while n > 0 && matches!(self.stage, Stage::Closed) {
            if self.successes_cannot_open(t) {
                self.counts.add_successes(t, n);
                return;
            }
            // Under the minimum no share is read: the successes that leave the record short
            // of it open nothing, whatever the shares.
            let calls = self.counts.totals(t).calls;
            let short = self
                .constants
                .minimum
                .saturating_sub(calls.saturating_add(1));
            if short > 0 {
                let k = short.min(n);
                self.counts.add_successes(t, k);
                n -= k;
            } else {
                self.closed_outcome(t, false, false);
                n -= 1;
            }
        }
    }

    /// Whether no run of successes at times in the bucket `t` falls in can open a closed
    /// breaker: the shares after one more success are under both rates (see
    /// [`healthy_until`](Self::healthy_until)), or the record counts failures in a row.
    fn successes_cannot_open(&self, t: u64) -> bool {
        if self.counts.run_reached(self.policy.record).is_some() {
            return true;
        }
        let mut after = self.counts.totals(t);
        // A full count record evicts a call for each success: the calls stay, and the
        // failures and slow calls are counted as if the evicted one were a success, the most
        // they can be.
        after.calls = after.calls.saturating_add(1).min(self.counts.capacity());
        !after.reach(self.constants.rates)
    }
}

impl Counts {
    /// Adds `n` calls that succeeded at `t`, none slow, as `n` calls of `add` would.
    fn add_successes(&mut self, t: u64, n: u64) {
        match self {
            Self::Count { ring, .. } => {
                let len = ring.len() as u64;
                let each = n.min(len);
                for _ in 0..each {
                    self.add(t, false, false);
                }
                // Past `len` every slot holds a success: each further one only moves the
                // ring's start on.
                if let Self::Count { next, .. } = self {
                    let skip = ((n - each) % len) as usize;
                    *next = (*next + skip) % len as usize;
                }
            }
            Self::Time { buckets, .. } => {
                if n == 0 {
                    return;
                }
                let most = u64::MAX / 2 / buckets.len() as u64;
                // The first as one call, which starts the bucket afresh if it is stale; the
                // rest join the bucket it stamped, which stops counting them at half its
                // share of a `u64`, so that the buckets' sum never overflows.
                self.add(t, false, false);
                self.add_to_newest(n - 1, most);
            }
            Self::Consecutive { .. } => {
                if n > 0 {
                    self.add(t, false, false);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
