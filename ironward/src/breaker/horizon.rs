//! What a breaker shared between threads needs to decide the healthy case without a lock:
//! how long the healthy answer lasts, outcomes counted in bulk, and the window to read.

use core::time::Duration;

use super::SreBreaker;
use crate::window::{Outcome, Tally, Window};

/// The largest window total for which [`SreBreaker::healthy_until`] answers `Some` (unless the
/// protection covers every count): 2^52, so that the total, and the total with fewer than
/// 2^52 successes more, convert to `f64` exactly.
const EXACT: u64 = 1 << 52;

/// The relative margin the healthy test keeps: `2^-50`, eight units in the last place of an
/// `f64`, more than the three roundings of `total − protection − w·accepts` can move it.
const MARGIN: f64 = 1.0 / (1u64 << 50) as f64;

impl SreBreaker {
    /// Until when every call is let through without being weighed, however many successes
    /// are recorded meanwhile: `Some(end)`, exclusive, or `None` when that is not certain.
    ///
    /// A server's every call asks the breaker, and while the backend is healthy the answer is
    /// always yes. A breaker shared between threads can give that answer without taking its
    /// lock if it knows how long the answer holds; this is that time. It is `Some` when the
    /// window's totals put the drop below zero (the first test [`check`](SreBreaker::check)
    /// makes, with `k` at its floor), by a margin no rounding can cross, and successes cannot
    /// raise the drop: the floor is at least 1, so that a success adds at least as much to
    /// `w·accepts` as to the calls, or the protection alone covers any count (`2^64` or more,
    /// infinite constants included). The end is that of the window's newest bucket, the one
    /// the latest time seen falls in: before it no bucket leaves the window.
    ///
    /// The promise: for every `now` before the end, after any outcomes at all but failures and
    /// drops (fewer than 2^52 successes, [`pass`](SreBreaker::pass) or
    /// [`record`](SreBreaker::record), at times before the end), `check(now, roll)` lets
    /// the call through at its first test, without reading `roll` or touching the probe. A
    /// failure, a drop or a [`retune`](SreBreaker::retune) breaks the promise, so ask again
    /// after any of them. A floor below 1 gives `None` (each success then raises the drop a
    /// little), and so does a window already throttling or within a rounding of it.
    ///
    /// # Why no rounding breaks it
    ///
    /// With `T` calls, `A` accepts, protection `p` and floor weight `w`, the test is that the
    /// computed `D = (T − p) − w·A` is at most `−(|T − p| + |w·A|)·2^-50`, each term as
    /// computed. Each of the three roundings is within one part in 2^53 of its operands, so the
    /// exact real `T − p − w·A` is then at most 0. `n` successes change it by `n·(1 − w)`,
    /// which is not positive, so the exact value stays at most 0; `T + n` and `A + n` are below
    /// 2^53 and convert exactly, and rounding is monotone, so the computed `T + n − p` is at
    /// most the computed `w·(A + n)`, and the drop `check` computes is not positive.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, Outcome, SRE};
    ///
    /// let ms = Duration::from_millis;
    /// let mut breaker = SreBreaker::new(SRE, ms(0));
    /// // The preset's buckets are 250 ms wide: the answer holds until the first one ends.
    /// assert_eq!(breaker.healthy_until(), Some(ms(250)));
    /// breaker.record(Outcome::Success, 1_000, ms(300));
    /// assert_eq!(breaker.healthy_until(), Some(ms(500)));
    /// // A window of failures is not healthy.
    /// for _ in 0..100 {
    ///     let permit = breaker.allow(ms(300), 0.99).expect("over the ratio");
    ///     breaker.fail(permit, ms(300));
    /// }
    /// assert!(breaker.healthy_until().is_some(), "1.1 · 1000 accepts still cover 1100 calls");
    /// for _ in 0..100 {
    ///     if let Some(permit) = breaker.allow(ms(300), 0.99) {
    ///         breaker.fail(permit, ms(300));
    ///     }
    /// }
    /// assert_eq!(breaker.healthy_until(), None);
    /// ```
    #[must_use]
    pub fn healthy_until(&self) -> Option<Duration> {
        let (start, _) = self.window.newest();
        let end = Duration::from_nanos(start.saturating_add(self.window.width_nanos()));
        let super::Constants {
            floor, protection, ..
        } = self.constants;
        // `T ≤ u64::MAX < 2^64 ≤ p`: no count reaches the protection, whatever it holds.
        if protection >= 18_446_744_073_709_551_616.0 {
            return Some(end);
        }
        if floor < 1.0 || self.total >= EXACT {
            return None;
        }
        let calls = self.total as f64 - protection;
        let weighed = floor * self.accepts as f64;
        let drop = calls - weighed;
        (drop <= -((calls.abs() + weighed.abs()) * MARGIN)).then_some(end)
    }

    /// Records `n` calls ending as `outcome` at `now`, as `n` calls let through and settled
    /// at `now` would be (or, for [`Outcome::Drop`], `n` refused at `now`), without their
    /// permits.
    ///
    /// For a breaker shared between threads, which hands out permits of its own: it counts
    /// the successes of the healthy case outside its lock and hands them over together, at a
    /// time in the bucket they were counted in (see
    /// [`healthy_until`](SreBreaker::healthy_until)), and settles the rest one at a time. Like
    /// [`pass`](SreBreaker::pass), it moves the breaker's clock to `now` (read as the latest seen
    /// if earlier), so `n = 0` records nothing and only moves the clock, as a call let through
    /// at `now` does. Counts saturate at `u64::MAX`.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, Outcome, SRE, Tally};
    ///
    /// let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
    /// breaker.record(Outcome::Success, 3, Duration::from_millis(10));
    /// breaker.record(Outcome::Failure, 1, Duration::from_millis(10));
    /// let mut seen = Tally::default();
    /// breaker.window().each(Duration::from_millis(10), |t| seen = *t);
    /// assert_eq!(seen, Tally { total: 4, success: 3, failure: 1, drop: 0 });
    /// ```
    pub fn record(&mut self, outcome: Outcome, n: u64, now: Duration) {
        let now = self.clock.advance(now);
        self.roll(now);
        if n == 0 {
            return;
        }
        let bucket = self.window.slot_at(now);
        self.runs.count(bucket, outcome);
        bucket.total = bucket.total.saturating_add(n);
        let count = match outcome {
            Outcome::Success => &mut bucket.success,
            Outcome::Failure => &mut bucket.failure,
            Outcome::Drop => &mut bucket.drop,
        };
        *count = count.saturating_add(n);
        self.total = self.total.saturating_add(n);
        if outcome == Outcome::Success {
            self.accepts = self.accepts.saturating_add(n);
        }
    }

    /// The window of outcomes the breaker decides by, for a dashboard or a test that reads it
    /// bucket by bucket.
    ///
    /// The window moves only when the breaker records, so read it with
    /// [`Window::each`] at a `now`, which skips the buckets that have left it by then.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, SRE};
    ///
    /// let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
    /// let permit = breaker.allow(Duration::ZERO, 0.5).expect("a fresh breaker refuses nothing");
    /// breaker.fail(permit, Duration::from_millis(300));
    /// let mut failures = Vec::new();
    /// breaker.window().each(Duration::from_millis(300), |t| failures.push(t.failure));
    /// // 40 buckets of 250 ms: the failure is in the second.
    /// assert_eq!(&failures[38..], [0, 1]);
    /// ```
    #[must_use]
    pub fn window(&self) -> &Window<Tally> {
        &self.window
    }
}
