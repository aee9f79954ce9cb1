//! The SRE circuit breaker: client-side adaptive throttling.

use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::internal::float::unit;
use crate::internal::owner::{Mark, Owner};
use crate::window::{Outcome, Tally, Window};

pub use family::CircuitBreaker;
pub use reason::SreReason;
use runs::Runs;
use sre::{Constants, History, refusal};
pub use sre::{SRE, Sre, SreThrottle};

/// A circuit breaker that sheds a fraction of calls rather than all of them.
///
/// There is no open, half-open and closed. The breaker keeps a rolling window of outcomes and
/// refuses each new call with a probability that grows with the failures in it, so a
/// struggling backend keeps receiving what it can still serve instead of being cut off and
/// then flooded again when it recovers. With `accepts` successes out of `total` calls in the
/// window (current bucket included), `failing` the run of all-failure buckets at its newest
/// end and `working` the run of all-success ones:
///
/// ```text
/// w    = max(k − (k − floor)·failing/size, floor)
/// drop = (total − protection − w·accepts) / (total + 1)
/// drop = drop · ((size − working)/size)
/// ```
///
/// A drop at or below zero lets everything through, which is the whole healthy case. While
/// refusing, a call is let through whenever more than `probe` has passed since the last one
/// (go-zero's probe). A refused call is recorded as a [`Outcome::Drop`], so a breaker that
/// is refusing never reads back as idle.
///
/// Differs from go-zero: the failing and working runs are divided by `size`, where go-zero
/// divides by its constant 40; the two agree for the preset.
///
/// Time is the caller's: a `now` earlier than one already seen is read as the latest seen.
/// `Clone` copies the whole state; the copies then evolve independently, each settling only
/// the permits it hands out. A permit of another breaker changes nothing here: `pass` and
/// `fail` hand it back and count it ([`foreign`](SreBreaker::foreign)).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SreBreaker, Sre};
///
/// let ms = Duration::from_millis;
/// let mut breaker = SreBreaker::new(Sre::default(), ms(0));
/// // The backend fails everything for a while.
/// for i in 0..100 {
///     if let Some(permit) = breaker.allow(ms(i), 0.99) {
///         breaker.fail(permit, ms(i));
///     }
/// }
/// assert!(breaker.ratio(ms(100)) > 0.9);
/// // With the draw under the ratio, the call is refused without reaching the backend.
/// assert!(breaker.allow(ms(100), 0.5).is_none());
/// ```
#[derive(Debug, Clone)]
pub struct SreBreaker {
    sre: Sre,
    /// `k`, `floor` and `protection` as the breaker reads them.
    constants: Constants,
    window: Window<Tally>,
    /// Successes and calls in the window's buckets, kept as buckets fill and clear so that
    /// the healthy case needs no scan of the window.
    accepts: u64,
    total: u64,
    /// The failing and working runs and the buckets holding a success and a failure, kept the
    /// same way so that a refusing breaker needs no scan either.
    runs: Runs,
    /// When a call was last let through while the breaker was dropping.
    last: Option<u64>,
    clock: Latest,
    owner: Owner,
    /// Permits of other breakers `pass` and `fail` handed back.
    foreign: u64,
}

/// A call the [`SreBreaker`] let through.
///
/// Exactly one of [`SreBreaker::pass`] and [`SreBreaker::fail`] of the breaker that made it settles
/// it, which consumes it; until then the window holds no record of how the call went, and
/// another breaker's hands it back. Not `Clone`, so a call cannot be counted twice. Dropping a
/// permit unsettled leaves the call out of the record.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SreBreaker, SRE};
///
/// let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
/// let permit = breaker.allow(Duration::ZERO, 0.5).expect("a fresh breaker refuses nothing");
/// // ... the call runs and fails 30 ms later ...
/// breaker.fail(permit, Duration::from_millis(30));
/// // `permit` has been consumed: it cannot be settled a second time.
/// ```
#[must_use = "settle the permit with SreBreaker::pass or SreBreaker::fail once the call has finished"]
#[derive(Debug)]
pub struct SrePermit {
    breaker: Mark,
}

impl SreBreaker {
    /// A breaker with an empty window opening at `now`.
    pub fn new(sre: Sre, now: Duration) -> Self {
        Self {
            sre,
            constants: Constants::read(&sre),
            window: Window::new(sre.size, sre.window, now),
            accepts: 0,
            total: 0,
            runs: Runs::default(),
            last: None,
            clock: Latest::new(now),
            owner: Owner::default(),
            foreign: 0,
        }
    }

    /// Asks to make one call at `now`; `Some` means go ahead, `None` that the call is refused.
    ///
    /// `roll` is a draw from `[0, 1)` that the caller makes (NaN and negatives read as 0, 1 and
    /// above as just below 1); the call is refused when it falls under the drop fraction. A
    /// refusal is recorded as a [`Outcome::Drop`]. The caller settles the permit with
    /// [`pass`](SreBreaker::pass) or [`fail`](SreBreaker::fail) once the call has finished.
    ///
    /// This is [`check`](SreBreaker::check) without the reason for a refusal.
    #[must_use = "dropping the answer loses the SrePermit: the call goes unrecorded, and a refusal is ignored"]
    pub fn allow(&mut self, now: Duration, roll: f64) -> Option<SrePermit> {
        self.check(now, roll).ok()
    }

    /// [`allow`](SreBreaker::allow) with the numbers behind a refusal: `allow` is this with the
    /// reason discarded, so the two always decide alike.
    ///
    /// `Err` is a refusal, an answer rather than a failure. It carries the window the breaker
    /// read, the weight `k` had decayed to, the drop fraction and the draw as clamped, each
    /// computed by the decision anyway (see [`SreReason`]); the refusal is then recorded
    /// as a [`Outcome::Drop`], which the reason's `total` leaves out.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, SRE};
    ///
    /// let ms = Duration::from_millis;
    /// let mut breaker = SreBreaker::new(SRE, ms(0));
    /// for _ in 0..100 {
    ///     let permit = breaker.check(ms(0), 0.99).expect("over the drop fraction");
    ///     breaker.fail(permit, ms(0));
    /// }
    /// let reason = breaker.check(ms(100), 0.5).expect_err("under the drop fraction");
    /// // No accepts in 100 calls, one bucket of failures: (100 − 5 − 1.49·0) / 101.
    /// assert_eq!((reason.total, reason.accepts, reason.failing), (100, 0, 1));
    /// assert_eq!((reason.drop, reason.roll), (95.0 / 101.0, 0.5));
    /// ```
    #[inline]
    #[must_use = "dropping the answer loses the SrePermit: the call goes unrecorded, and a refusal is ignored"]
    pub fn check(&mut self, now: Duration, roll: f64) -> Result<SrePermit, SreReason> {
        let now = self.clock.advance(now);
        // Clearing the buckets that have left the window changes no reading at `now` or
        // later, and brings the kept totals up to `now`.
        self.roll(now);
        // The largest the drop can be is with `w` at its floor, and its sign is that of its
        // numerator (the denominator is at least 1). When even that is not positive, the
        // exact value is not either (step 3): no division is needed to let the call through.
        if self.throttled(self.constants.floor) <= 0.0 {
            return Ok(self.permit());
        }
        let history = History {
            accepts: self.accepts,
            total: self.total,
            working: self.runs.working,
            failing: self.runs.failing,
        };
        debug_assert_eq!(
            history,
            self.history(now),
            "the kept history matches a scan"
        );
        let throttle = self.weigh(&history);
        let drop = throttle.drop(history.total);
        if drop <= 0.0 {
            return Ok(self.permit());
        }
        let probed = self
            .last
            .is_some_and(|last| now - last > nanos(self.sre.probe));
        if probed {
            self.last = Some(now);
            return Ok(self.permit());
        }
        let (roll, drop) = (unit(roll), throttle.recover(drop));
        if roll >= drop {
            self.last = Some(now);
            return Ok(self.permit());
        }
        self.add(now, Outcome::Drop);
        Err(throttle.reason(history.total, drop, roll))
    }

    /// Until when, exclusive, every refusal is decided by the window as it stands, and the
    /// window it reads: `Some((until, window))` while a draw of 0 at the latest time seen
    /// would be refused, `None` otherwise.
    ///
    /// A breaker shared between threads can refuse without its lock if it knows which
    /// history the refusals read. Between two calls let through or settled, a refusal
    /// changes only the window's call total (one drop in the newest bucket) and the clock;
    /// the accepts, the runs, the constants and the probe's time stay as they are. So until
    /// the newest bucket ends, or the probe falls due if sooner, [`check`](SreBreaker::check)
    /// at any `now` decides as [`Sre::refusal`] does given this window's counts with the
    /// refusals since added to its `total`: a refusal there is the same refusal with the
    /// same reason, recorded as a drop in that bucket, which [`record`](SreBreaker::record)
    /// can do for many at once. A call it lets through is not covered: ask `check`.
    ///
    /// The returned reason is the one a draw of 0 is refused with at the latest time seen;
    /// its `total`, `accepts`, `failing` and `working` are the window to weigh.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, Outcome, SRE};
    ///
    /// let ms = Duration::from_millis;
    /// let mut breaker = SreBreaker::new(SRE, ms(0));
    /// assert_eq!(breaker.refusing(), None);
    /// breaker.record(Outcome::Failure, 100, ms(10));
    /// let (until, window) = breaker.refusing().expect("a window of failures");
    /// // The preset's first bucket ends at 250 ms; no call has been let through to probe.
    /// assert_eq!((until, window.total), (ms(250), 100));
    /// // Three refusals later, a draw of 0.5 is refused with the reason `check` gives.
    /// breaker.record(Outcome::Drop, 3, ms(20));
    /// let weighed = SRE.refusal(window.total + 3, window.accepts, window.failing, window.working, 0.5);
    /// assert_eq!(weighed, breaker.check(ms(30), 0.5).err());
    /// ```
    #[must_use]
    pub fn refusing(&self) -> Option<(Duration, SreReason)> {
        let (start, _) = self.window.newest();
        let end = start.saturating_add(self.window.width_nanos());
        // `now − last > probe` is `now ≥ last + probe + 1`; saturated, a probe that never
        // falls due only sends the calls at the end of the clock to `check`.
        let due = self.last.map_or(u64::MAX, |last| {
            last.saturating_add(nanos(self.sre.probe)).saturating_add(1)
        });
        let until = end.min(due);
        if self.clock.get() >= until {
            return None;
        }
        let history = History {
            accepts: self.accepts,
            total: self.total,
            working: self.runs.working,
            failing: self.runs.failing,
        };
        let reason = refusal(&self.constants, self.window.size(), &history, 0.0)?;
        Some((Duration::from_nanos(until), reason))
    }

    /// Records the call behind `permit` as a success, at `now` (its completion time), and
    /// answers `None`. A permit another breaker made changes nothing here (not even the
    /// clock): it comes back as `Some`, to be settled on that breaker, and is counted by
    /// [`foreign`](SreBreaker::foreign).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, SRE};
    ///
    /// let now = Duration::ZERO;
    /// let (mut a, mut b) = (SreBreaker::new(SRE, now), SreBreaker::new(SRE, now));
    /// let permit = a.allow(now, 0.5).expect("a fresh breaker refuses nothing");
    /// let permit = b.pass(permit, now).expect("not b's: handed back");
    /// assert_eq!(b.foreign(), 1);
    /// assert!(a.pass(permit, now).is_none());
    /// ```
    pub fn pass(&mut self, permit: SrePermit, now: Duration) -> Option<SrePermit> {
        self.settle(permit, now, Outcome::Success)
    }

    /// Records the call behind `permit` as a failure, at `now` (its completion time), and
    /// answers `None`; another breaker's permit comes back as `Some`, as from
    /// [`pass`](SreBreaker::pass).
    pub fn fail(&mut self, permit: SrePermit, now: Duration) -> Option<SrePermit> {
        self.settle(permit, now, Outcome::Failure)
    }

    /// Permits [`pass`](SreBreaker::pass) and [`fail`](SreBreaker::fail) handed back because
    /// another breaker made them, saturating: above 0 is a caller's bug.
    #[must_use]
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// The fraction of calls the breaker would refuse at `now`, zero while the window is
    /// healthy.
    ///
    /// Always in `[0, 1]`, and what [`allow`](SreBreaker::allow) decides by: a draw under the
    /// ratio is refused (unless the probe lets it through), any other is let through, so a
    /// ratio of 0 lets every draw through. The probe is left out: this is the standing
    /// throttle, which is what a dashboard or an alert wants.
    #[must_use]
    pub fn ratio(&self, now: Duration) -> f64 {
        let history = self.history(self.clock.read(now));
        let throttle = self.weigh(&history);
        let drop = throttle.drop(history.total);
        if drop > 0.0 {
            throttle.recover(drop)
        } else {
            0.0
        }
    }

    /// Changes the policy in place, keeping the outcomes in the window.
    ///
    /// New constants (`k`, `floor`, `protection`, `probe`) take effect on the next call, over
    /// the same window: nothing recorded is lost, and the probe keeps its clock. While the
    /// window's buckets stay the same (the same count and width, as [`Window::new`] reads
    /// `size` and `window`) it is kept exactly as it is, every bucket included, and `now` is
    /// not read.
    ///
    /// A new bucket count or width rebuilds the window at `now`: the new window's first
    /// bucket opens there, on a grid of its own, and takes every outcome the old window held
    /// at `now` (its current bucket included), so the two totals the drop is computed from,
    /// accepts and calls (drops included), are kept exactly. Buckets of one width cannot be
    /// cut into another's, so what is lost is which bucket each outcome fell in: the failing
    /// and working runs start again from that one bucket, and the kept outcomes leave the
    /// window together, one new window after `now`. A `now` earlier than one already seen is
    /// read as the latest seen, which the breaker then remembers.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::{SreBreaker, Sre, SRE};
    ///
    /// let ms = Duration::from_millis;
    /// let mut breaker = SreBreaker::new(SRE, ms(0));
    /// // Two calls in five fail.
    /// for i in 0..100 {
    ///     let permit = breaker.allow(ms(i), 0.99).expect("over the ratio");
    ///     if i % 5 < 3 {
    ///         breaker.pass(permit, ms(i));
    ///     } else {
    ///         breaker.fail(permit, ms(i));
    ///     }
    /// }
    /// // 100 calls, 60 accepted: (100 − 5 − 1.5·60) / 101.
    /// assert_eq!(breaker.ratio(ms(100)), 5.0 / 101.0);
    ///
    /// // A new window keeps the outcomes, so the ratio stands ...
    /// let wide = Sre { window: Duration::from_secs(60), ..SRE };
    /// breaker.retune(wide, ms(100));
    /// assert_eq!(breaker.ratio(ms(100)), 5.0 / 101.0);
    /// // ... and a larger k weighs the same accepts more: 2·60 covers all 100 calls.
    /// breaker.retune(Sre { k: 2.0, ..wide }, ms(100));
    /// assert_eq!(breaker.ratio(ms(100)), 0.0);
    /// ```
    pub fn retune(&mut self, sre: Sre, now: Duration) {
        if !self.window.fits(sre.size, sre.window) {
            let now = self.clock.advance(now);
            self.roll(now);
            let mut kept = Tally::default();
            self.window.visit(now, true, |tally| {
                kept.total = kept.total.saturating_add(tally.total);
                kept.success = kept.success.saturating_add(tally.success);
                kept.failure = kept.failure.saturating_add(tally.failure);
                kept.drop = kept.drop.saturating_add(tally.drop);
            });
            self.window = Window::new(sre.size, sre.window, Duration::from_nanos(now));
            *self.window.slot_at(now) = kept;
            self.accepts = kept.success;
            self.total = kept.total;
            self.runs = Runs::of(&kept);
        }
        self.sre = sre;
        self.constants = Constants::read(&sre);
    }

    /// The policy this breaker runs, as it was given.
    #[must_use]
    pub fn sre(&self) -> &Sre {
        &self.sre
    }

    /// A permit for a call let through now.
    #[inline]
    fn permit(&mut self) -> SrePermit {
        SrePermit {
            breaker: self.owner.mark(),
        }
    }

    /// Whether this breaker made `permit`: a ward settles its connects only then.
    pub(crate) fn made(&self, permit: &SrePermit) -> bool {
        self.owner.owns(permit.breaker)
    }

    fn settle(&mut self, permit: SrePermit, now: Duration, outcome: Outcome) -> Option<SrePermit> {
        if !self.made(&permit) {
            self.foreign = self.foreign.saturating_add(1);
            return Some(permit);
        }
        let now = self.clock.advance(now);
        self.add(now, outcome);
        None
    }

    /// Counts `outcome` in the bucket `now` falls in, and in the kept totals.
    fn add(&mut self, now: u64, outcome: Outcome) {
        // The bucket the roll lands on is the one to add to: one walk to it, not two.
        let bucket = Self::roll_window(
            &mut self.window,
            (&mut self.accepts, &mut self.total, &mut self.runs),
            now,
        );
        self.runs.count(bucket, outcome);
        bucket.add(outcome);
        self.total = self.total.saturating_add(1);
        if outcome == Outcome::Success {
            self.accepts = self.accepts.saturating_add(1);
        }
    }

    /// Moves the window to `now`, taking the buckets it clears out of the kept totals.
    fn roll(&mut self, now: u64) -> &mut Tally {
        Self::roll_window(
            &mut self.window,
            (&mut self.accepts, &mut self.total, &mut self.runs),
            now,
        )
    }

    /// [`roll`](SreBreaker::roll) on the fields it touches, so that the caller may go on
    /// using the kept totals while it holds the bucket.
    fn roll_window<'w>(
        window: &'w mut Window<Tally>,
        (accepts, total, runs): (&mut u64, &mut u64, &mut Runs),
        now: u64,
    ) -> &'w mut Tally {
        window.slot_clearing(now, |gone| {
            *accepts = accepts.saturating_sub(gone.success);
            *total = total.saturating_sub(gone.total);
            runs.clear(gone);
        })
    }

    /// Sums the window at `now`, current bucket included, oldest to newest.
    fn history(&self, now: u64) -> History {
        let mut history = History {
            accepts: 0,
            total: 0,
            working: 0,
            failing: 0,
        };
        self.window.visit(now, true, |tally| {
            history.accepts = history.accepts.saturating_add(tally.success);
            history.total = history.total.saturating_add(tally.total);
            match (tally.success > 0, tally.failure > 0) {
                (true, false) => {
                    history.working += 1;
                    history.failing = 0;
                }
                (false, true) => {
                    history.failing += 1;
                    history.working = 0;
                }
                (true, true) => {
                    history.working = 0;
                    history.failing = 0;
                }
                // Empty, or drops only: neither breaks nor extends a run.
                (false, false) => {}
            }
        });
        history
    }

    /// SRE equation 21-1 with go-zero's decaying `k`, for `history`: steps 1 and 2 of the
    /// decision, its drop fraction [`SreThrottle::drop`] of the history's total.
    ///
    /// The drop is below 1 and never NaN: the constants are finite and not negative, so `w`
    /// is too, the product `w·accepts` is at worst `+inf` and the numerator at worst `−inf`.
    fn weigh(&self, history: &History) -> SreThrottle {
        history.throttle(&self.constants, self.window.size())
    }

    /// The numerator of the drop over the kept totals with `w` given:
    /// `total − protection − w·accepts`, which has the drop's sign.
    fn throttled(&self, w: f64) -> f64 {
        self.total as f64 - self.constants.protection - w * self.accepts as f64
    }
}

mod family;
mod horizon;
mod reason;
mod runs;
mod sre;

#[cfg(test)]
mod tests;
