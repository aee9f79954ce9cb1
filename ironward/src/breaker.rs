//! The SRE circuit breaker: client-side adaptive throttling.

use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::constant::constant;
use crate::float::unit;
use crate::tally::{Outcome, Tally};
use crate::window::Window;

/// The constants of Google SRE client-side throttling, with go-zero's refinements.
///
/// `k` and `protection` are the K and the floor of equation 21-1 in the SRE book's chapter
/// "Handling Overload"; the decay of `k` towards `floor` while failures persist, the probe and
/// the recovery scaling are go-zero's additions (`core/breaker/googlebreaker.go`).
///
/// A policy is changed the Rust way: `Sre { k: 2.0, ..Sre::default() }`.
///
/// `k`, `floor` and `protection` mean something from 0 up to infinity. A negative value
/// (`-inf` included) is read as 0, and NaN as infinity, the value that refuses least; an
/// infinite `k`, `floor` or `protection` turns the throttle off, so every call goes through
/// and [`Breaker::ratio`] is 0. (The crate docs' "Edge cases" state this rule for every
/// policy constant.)
///
/// # Default
///
/// [`SRE`], go-zero's constants:
///
/// | field | value | meaning |
/// | --- | --- | --- |
/// | `k` | 1.5 | accepts are weighted by `k` while nothing is failing |
/// | `floor` | 1.1 | the weight `k` decays to as the failing run fills the window |
/// | `protection` | 5.0 | calls the breaker never refuses, however bad the record |
/// | `probe` | 1 s | after this long without letting a call through, one goes through |
/// | `size` | 40 | buckets in the window |
/// | `window` | 10 s | the history the breaker remembers |
///
/// # Examples
///
/// ```
/// use ironward::{Sre, SRE};
///
/// let eager = Sre { k: 2.0, ..Sre::default() };
/// assert_eq!(eager.floor, SRE.floor);
/// assert_eq!(Sre::default(), SRE);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Sre {
    /// How many times the accepted calls the breaker lets through before refusing any: 0 to
    /// infinity (infinity, and NaN, turn the throttle off).
    pub k: f64,
    /// The least `k` decays to while the newest buckets hold nothing but failures: 0 to
    /// infinity (infinity, and NaN, turn the throttle off).
    pub floor: f64,
    /// Calls allowed before any refusal, whatever the record shows: 0 to infinity (infinity,
    /// and NaN, turn the throttle off).
    pub protection: f64,
    /// The longest the breaker goes without letting a call through once it is refusing
    /// (strictly longer than this lets one through).
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub probe: Duration,
    /// Buckets in the window: 1 to 65 536, a size outside that read as the nearest end (see
    /// [`Window`]).
    pub size: usize,
    /// The span of history the window covers.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub window: Duration,
}

/// The go-zero preset: k 1.5 decaying to 1.1, protection 5, a probe after 1 s, 40 buckets
/// over 10 s.
pub const SRE: Sre = Sre {
    k: 1.5,
    floor: 1.1,
    protection: 5.0,
    probe: Duration::from_secs(1),
    size: 40,
    window: Duration::from_secs(10),
};

impl Default for Sre {
    fn default() -> Self {
        SRE
    }
}

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
/// `Clone` copies the whole state; the copies then evolve independently.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Breaker, Sre};
///
/// let ms = Duration::from_millis;
/// let mut breaker = Breaker::new(Sre::default(), ms(0));
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
pub struct Breaker {
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
}

/// A call the [`Breaker`] let through.
///
/// Exactly one of [`Breaker::pass`] and [`Breaker::fail`] settles it, which consumes it; until
/// then the window holds no record of how the call went. Not `Clone`, so a call cannot be
/// counted twice. Dropping a permit unsettled leaves the call out of the record.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Breaker, SRE};
///
/// let mut breaker = Breaker::new(SRE, Duration::ZERO);
/// let permit = breaker.allow(Duration::ZERO, 0.5).expect("a fresh breaker refuses nothing");
/// // ... the call runs and fails 30 ms later ...
/// breaker.fail(permit, Duration::from_millis(30));
/// // `permit` has been consumed: it cannot be settled a second time.
/// ```
#[must_use = "settle the permit with Breaker::pass or Breaker::fail once the call has finished"]
#[derive(Debug)]
pub struct Permit {
    _settle_once: (),
}

/// The runs at the newest end of the window, kept as outcomes are counted and buckets clear.
///
/// A bucket holding a success ends the failing run, one holding a failure ends the working
/// run, and one holding neither (empty, or drops only) changes neither, as in the scan of
/// [`Breaker::history`]. The run of failure-only buckets is therefore every failure-only
/// bucket newer than the newest bucket holding a success, or all of them when none does; the
/// bucket that clears is always the oldest, so it leaves the run exactly when no bucket holds
/// a success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Runs {
    failing: usize,
    working: usize,
    /// Buckets in the window holding at least one success.
    succeeded: usize,
    /// Buckets in the window holding at least one failure.
    failed: usize,
}

impl Runs {
    /// The runs of a window whose only bucket holding anything is `bucket`.
    fn of(bucket: &Tally) -> Self {
        let (succeeded, failed) = (bucket.success > 0, bucket.failure > 0);
        Self {
            failing: usize::from(failed && !succeeded),
            working: usize::from(succeeded && !failed),
            succeeded: usize::from(succeeded),
            failed: usize::from(failed),
        }
    }

    /// `bucket`, the newest, is about to count `outcome`.
    fn count(&mut self, bucket: &Tally, outcome: Outcome) {
        match outcome {
            Outcome::Success => {
                if bucket.success == 0 {
                    self.succeeded += 1;
                    if bucket.failure == 0 {
                        self.working += 1;
                    }
                }
                self.failing = 0;
            }
            Outcome::Failure => {
                if bucket.failure == 0 {
                    self.failed += 1;
                    if bucket.success == 0 {
                        self.failing += 1;
                    }
                }
                self.working = 0;
            }
            Outcome::Drop => {}
        }
    }

    /// `bucket`, the oldest, leaves the window.
    fn clear(&mut self, bucket: &Tally) {
        if bucket.success > 0 {
            self.succeeded -= 1;
        }
        if bucket.failure > 0 {
            self.failed -= 1;
        }
        if bucket.failure > 0 && bucket.success == 0 && self.succeeded == 0 {
            self.failing -= 1;
        }
        if bucket.success > 0 && bucket.failure == 0 && self.failed == 0 {
            self.working -= 1;
        }
    }
}

/// The float constants of an [`Sre`] as the breaker reads them: finite and not negative.
///
/// Each is held to `[0, inf]`, NaN read as infinity (the value that refuses least). When one
/// is infinite the throttle is off, which is kept as a protection no count can use up, with
/// weights of 0: every drop is then about `−f64::MAX`, so the decision needs no case of its
/// own and no product of infinities can make a NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Constants {
    k: f64,
    floor: f64,
    protection: f64,
}

impl Constants {
    fn read(sre: &Sre) -> Self {
        let read = |x| constant(x, 0.0, f64::INFINITY, f64::INFINITY);
        let (k, floor, protection) = (read(sre.k), read(sre.floor), read(sre.protection));
        if k == f64::INFINITY || floor == f64::INFINITY || protection == f64::INFINITY {
            Self {
                k: 0.0,
                floor: 0.0,
                protection: f64::MAX,
            }
        } else {
            Self {
                k,
                floor,
                protection,
            }
        }
    }
}

/// What the window says at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
struct History {
    accepts: u64,
    total: u64,
    working: usize,
    failing: usize,
}

impl Breaker {
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
        }
    }

    /// Asks to make one call at `now`; `Some` means go ahead, `None` that the call is refused.
    ///
    /// `roll` is a draw from `[0, 1)` that the caller makes (NaN and negatives read as 0, 1 and
    /// above as just below 1); the call is refused when it falls under the drop fraction. A
    /// refusal is recorded as a [`Outcome::Drop`]. The caller settles the permit with
    /// [`pass`](Breaker::pass) or [`fail`](Breaker::fail) once the call has finished.
    #[must_use = "dropping the answer loses the Permit: the call goes unrecorded, and a refusal is ignored"]
    pub fn allow(&mut self, now: Duration, roll: f64) -> Option<Permit> {
        let now = self.clock.advance(now);
        // Clearing the buckets that have left the window changes no reading at `now` or
        // later, and brings the kept totals up to `now`.
        self.roll(now);
        // The largest the drop can be is with `w` at its floor, and its sign is that of its
        // numerator (the denominator is at least 1). When even that is not positive, the
        // exact value is not either (step 3): no division is needed to let the call through.
        if self.throttled(self.constants.floor) <= 0.0 {
            return Some(Permit { _settle_once: () });
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
        let drop = self.throttle(&history);
        if drop <= 0.0 {
            return Some(Permit { _settle_once: () });
        }
        let probed = self
            .last
            .is_some_and(|last| now - last > nanos(self.sre.probe));
        if probed || unit(roll) >= self.recover(drop, &history) {
            self.last = Some(now);
            return Some(Permit { _settle_once: () });
        }
        self.record(now, Outcome::Drop);
        None
    }

    /// Records the call behind `permit` as a success, at `now` (its completion time).
    pub fn pass(&mut self, permit: Permit, now: Duration) {
        self.settle(permit, now, Outcome::Success);
    }

    /// Records the call behind `permit` as a failure, at `now` (its completion time).
    pub fn fail(&mut self, permit: Permit, now: Duration) {
        self.settle(permit, now, Outcome::Failure);
    }

    /// The fraction of calls the breaker would refuse at `now`, zero while the window is
    /// healthy.
    ///
    /// Always in `[0, 1]`, and what [`allow`](Breaker::allow) decides by: a draw under the
    /// ratio is refused (unless the probe lets it through), any other is let through, so a
    /// ratio of 0 lets every draw through. The probe is left out: this is the standing
    /// throttle, which is what a dashboard or an alert wants.
    #[must_use]
    pub fn ratio(&self, now: Duration) -> f64 {
        let history = self.history(self.clock.read(now));
        let drop = self.throttle(&history);
        if drop > 0.0 {
            self.recover(drop, &history)
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
    /// use ironward::{Breaker, Sre, SRE};
    ///
    /// let ms = Duration::from_millis;
    /// let mut breaker = Breaker::new(SRE, ms(0));
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

    fn settle(&mut self, Permit { _settle_once: () }: Permit, now: Duration, outcome: Outcome) {
        let now = self.clock.advance(now);
        self.record(now, outcome);
    }

    /// Counts `outcome` in the bucket `now` falls in, and in the kept totals.
    fn record(&mut self, now: u64, outcome: Outcome) {
        self.roll(now);
        let bucket = self.window.slot_at(now);
        self.runs.count(bucket, outcome);
        bucket.add(outcome);
        self.total = self.total.saturating_add(1);
        if outcome == Outcome::Success {
            self.accepts = self.accepts.saturating_add(1);
        }
    }

    /// Moves the window to `now`, taking the buckets it clears out of the kept totals.
    fn roll(&mut self, now: u64) -> &mut Tally {
        let (accepts, total, runs) = (&mut self.accepts, &mut self.total, &mut self.runs);
        self.window.slot_clearing(now, |gone| {
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

    /// SRE equation 21-1 with go-zero's decaying `k`: steps 1 and 2 of the decision.
    ///
    /// Below 1 and never NaN: the constants are finite and not negative, so `w` is too, the
    /// product `w·accepts` is at worst `+inf` and the numerator at worst `−inf`.
    fn throttle(&self, history: &History) -> f64 {
        let Constants {
            k,
            floor,
            protection,
        } = self.constants;
        let size = self.window.size() as f64;
        let failing = history.failing as f64;
        let decay = (k - floor) * failing;
        // The decay is a fraction of `k − floor`; multiplied first, as go-zero does, it can
        // pass `f64::MAX` for a `k` or `floor` near it, and is then divided first instead.
        let decay = if decay.is_finite() {
            decay / size
        } else {
            (k - floor) * (failing / size)
        };
        let w = (k - decay).max(floor);
        let total = history.total as f64;
        (total - protection - w * history.accepts as f64) / (total + 1.0)
    }

    /// The numerator of [`throttle`](Breaker::throttle) over the kept totals with `w` given:
    /// `total − protection − w·accepts`, which has the drop's sign.
    fn throttled(&self, w: f64) -> f64 {
        self.total as f64 - self.constants.protection - w * self.accepts as f64
    }

    /// go-zero's recovery scaling: a run of all-success buckets eases the throttle.
    fn recover(&self, drop: f64, history: &History) -> f64 {
        if history.working == 0 {
            // The scaling is exactly 1: skip its division on the refusing path.
            return drop;
        }
        let size = self.window.size();
        drop * ((size - history.working) as f64 / size as f64)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A preset breaker whose buckets hold `(success, failure, drop)`, oldest first, one per
    /// 250 ms, read at the start of the newest.
    fn with_buckets(buckets: &[(u64, u64, u64)]) -> (Breaker, u64) {
        with_policy(SRE, buckets)
    }

    /// [`with_buckets`] under the policy `sre`.
    fn with_policy(sre: Sre, buckets: &[(u64, u64, u64)]) -> (Breaker, u64) {
        let mut breaker = Breaker::new(sre, ms(0));
        let width = nanos(breaker.window.width());
        let mut now = 0;
        for (i, &(success, failure, drop)) in buckets.iter().enumerate() {
            now = i as u64 * width;
            *breaker.roll(now) = Tally {
                total: success + failure + drop,
                success,
                failure,
                drop,
            };
            breaker.accepts += success;
            breaker.total += success + failure + drop;
        }
        let history = breaker.history(now);
        breaker.runs = Runs {
            failing: history.failing,
            working: history.working,
            succeeded: buckets.iter().filter(|b| b.0 > 0).count(),
            failed: buckets.iter().filter(|b| b.1 > 0).count(),
        };
        (breaker, now)
    }

    fn repeat(n: usize, bucket: (u64, u64, u64)) -> impl Iterator<Item = (u64, u64, u64)> {
        core::iter::repeat_n(bucket, n)
    }

    // The breaker's worked values, from go-zero googlebreaker_test.go's history
    // cases, with the production constants.
    #[test]
    fn reproduces_the_worked_drop_ratios() {
        // (buckets oldest first, accepts, total, failing, working, drop)
        type Case<'a> = (&'a [(u64, u64, u64)], u64, u64, usize, usize, f64);
        let cases: [Case<'_>; 8] = [
            (&[(0, 100, 0)], 0, 100, 1, 0, 0.9405940594059405),
            (&[(100, 100, 0)], 100, 200, 0, 0, 0.22388059701492538),
            (
                &repeat(10, (0, 10, 0))
                    .chain(repeat(4, (10, 0, 0)))
                    .collect::<std::vec::Vec<_>>(),
                40,
                140,
                0,
                4,
                0.4787234042553192,
            ),
            (
                &repeat(1, (100, 0, 0))
                    .chain(repeat(20, (0, 10, 0)))
                    .collect::<std::vec::Vec<_>>(),
                100,
                300,
                20,
                0,
                0.5481727574750831,
            ),
            (&[(0, 6, 0)], 0, 6, 1, 0, 0.14285714285714285),
            (
                &[
                    (10, 0, 0),
                    (10, 0, 0),
                    (10, 0, 0),
                    (0, 0, 10),
                    (0, 0, 10),
                    (0, 50, 0),
                ],
                30,
                100,
                1,
                0,
                0.498019801980198,
            ),
            (
                &repeat(20, (0, 20, 0))
                    .chain(repeat(10, (10, 0, 0)))
                    .collect::<std::vec::Vec<_>>(),
                100,
                500,
                0,
                10,
                0.5164670658682635,
            ),
            (&[(0, 5, 0)], 0, 5, 1, 0, 0.0),
        ];
        for (buckets, accepts, total, failing, working, drop) in cases {
            let (breaker, now) = with_buckets(buckets);
            let history = breaker.history(now);
            assert_eq!(
                history,
                History {
                    accepts,
                    total,
                    working,
                    failing
                },
                "{buckets:?}"
            );
            assert_eq!(
                breaker.ratio(Duration::from_nanos(now)),
                drop,
                "{buckets:?}"
            );
        }
    }

    // (0,5,0) is the protection at work: five failures are never throttled.
    #[test]
    fn allows_everything_within_the_protection() {
        let (mut breaker, now) = with_buckets(&[(0, 5, 0)]);
        let now = Duration::from_nanos(now);
        assert!(breaker.throttle(&breaker.history(nanos(now))) <= 0.0);
        for _ in 0..10 {
            let permit = breaker.allow(now, 0.0).expect("within the protection");
            breaker.pass(permit, now);
        }
        // Allowing while healthy records nothing and leaves the probe clock alone.
        assert_eq!(breaker.last, None);
    }

    // A virtual-clock sequence after go-zero googlebreaker_test.go's probe cases.
    #[test]
    fn reproduces_the_virtual_clock_sequence() {
        let mut breaker = Breaker::new(SRE, ms(0));
        for _ in 0..100 {
            let permit = breaker.allow(ms(0), 0.99).expect("a roll of 0.99 passes");
            breaker.fail(permit, ms(0));
        }
        assert_eq!(breaker.ratio(ms(100)), 0.9405940594059405);
        let permit = breaker.allow(ms(100), 0.99).expect("0.99 is over 0.9405…");
        breaker.fail(permit, ms(100));

        assert_eq!(breaker.ratio(ms(200)), 0.9411764705882353);
        assert!(breaker.allow(ms(200), 0.0).is_none());
        // Exactly one probe interval since the last pass is not more than it.
        assert!(breaker.allow(ms(1100), 0.0).is_none());
        let probe = ms(1100) + Duration::from_nanos(1);
        assert!(
            breaker.allow(probe, 0.0).is_some(),
            "the probe lets one through"
        );

        // At 10 s the first bucket has left the window; what remains is the drop at 1100 ms.
        let history = breaker.history(nanos(ms(10_000)));
        assert_eq!((history.total, history.accepts), (1, 0));
        assert!(breaker.allow(ms(10_000), 0.0).is_some());
        assert_eq!(breaker.ratio(ms(10_000)), 0.0);
    }

    #[test]
    fn refusals_are_recorded_as_drops() {
        let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
        let now = Duration::from_nanos(now);
        assert!(breaker.allow(now, 0.0).is_none());
        assert!(breaker.allow(now, 0.5).is_none());
        let history = breaker.history(nanos(now));
        assert_eq!(history.total, 102);
        assert_eq!(breaker.window.slot(now).drop, 2);
    }

    #[test]
    fn a_run_of_successes_eases_the_throttle() {
        let (breaker, now) =
            with_buckets(&[(0, 100, 0), (0, 0, 0), (5, 0, 0), (0, 0, 3), (5, 0, 0)]);
        let history = breaker.history(now);
        assert_eq!((history.working, history.failing), (2, 0));
        let drop = breaker.throttle(&history);
        assert_eq!(
            breaker.ratio(Duration::from_nanos(now)),
            drop * (38.0 / 40.0)
        );
    }

    #[test]
    fn a_bucket_with_both_outcomes_ends_both_runs() {
        let (breaker, now) = with_buckets(&[(0, 10, 0), (0, 10, 0), (1, 1, 0)]);
        let history = breaker.history(now);
        assert_eq!((history.working, history.failing), (0, 0));
        let (breaker, now) = with_buckets(&[(0, 10, 0), (1, 1, 0), (0, 10, 0), (0, 0, 4)]);
        assert_eq!(breaker.history(now).failing, 1);
    }

    #[test]
    fn a_clock_going_backwards_is_read_as_the_latest_seen() {
        let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
        let later = Duration::from_nanos(now) + ms(100);
        assert!(breaker.allow(later, 0.0).is_none());
        // Settling at an earlier time lands in the newest bucket, not a past one.
        let permit = breaker.allow(later, 0.999).expect("over the ratio");
        breaker.fail(permit, ms(0));
        assert_eq!(breaker.window.slot(later).failure, 101);
        // The probe measures from the latest time seen, so going back cannot trigger it.
        assert!(breaker.allow(ms(0), 0.0).is_none());
        assert_eq!(breaker.ratio(ms(0)), breaker.ratio(later));
    }

    #[test]
    fn hostile_rolls_are_clamped() {
        let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
        let now = Duration::from_nanos(now);
        assert!(breaker.allow(now, f64::NAN).is_none(), "NaN reads as 0");
        assert!(breaker.allow(now, -3.0).is_none());
        assert!(breaker.allow(now, 1.0).is_some(), "1 reads as just below 1");
        assert!(breaker.allow(now, f64::INFINITY).is_some());
    }

    #[test]
    fn the_probe_lets_one_call_through_per_interval() {
        let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
        let now = Duration::from_nanos(now);
        assert!(
            breaker.allow(now, 0.999).is_some(),
            "a lucky draw sets the probe clock"
        );
        let probe = now + SRE.probe + Duration::from_nanos(1);
        assert!(breaker.allow(probe, 0.0).is_some());
        assert!(breaker.allow(probe, 0.0).is_none());
        assert!(breaker.allow(probe + SRE.probe, 0.0).is_none());
        assert!(
            breaker
                .allow(probe + SRE.probe + Duration::from_nanos(1), 0.0)
                .is_some()
        );
    }

    #[test]
    fn the_kept_totals_match_a_scan_of_the_window() {
        let mut breaker = Breaker::new(SRE, ms(0));
        let mut draw = 0.37;
        for step in 0..5_000u64 {
            // Bursts of failures and quiet spells, with the clock sometimes stepping back.
            let now = ms(step * 7 % 40_000 + step / 3);
            draw = (draw * 7.3) % 1.0;
            if let Some(permit) = breaker.allow(now, draw) {
                if (step / 400) % 2 == 0 {
                    breaker.fail(permit, now);
                } else {
                    breaker.pass(permit, now);
                }
            }
            let latest = breaker.clock.read(now);
            breaker.roll(latest);
            let history = breaker.history(latest);
            assert_eq!(
                (breaker.accepts, breaker.total),
                (history.accepts, history.total)
            );
        }
    }

    #[test]
    fn the_kept_runs_match_a_scan_of_the_window() {
        for size in [1, 3, 40, 100] {
            let mut breaker = Breaker::new(Sre { size, ..SRE }, ms(0));
            let mut walk = crate::walk::Walk::new();
            for step in 0..20_000u64 {
                let (now, x) = walk.step();
                let at = ms(now);
                let draw = (x >> 11) as f64 / (1u64 << 53) as f64;
                if let Some(permit) = breaker.allow(at, draw) {
                    // Phases of failures and of successes, with mixed spells between.
                    match (step / 700) % 3 {
                        0 => breaker.fail(permit, at),
                        1 => breaker.pass(permit, at),
                        _ if x & 1 == 0 => breaker.fail(permit, at),
                        _ => breaker.pass(permit, at),
                    }
                }
                let latest = breaker.clock.get();
                breaker.roll(latest);
                let history = breaker.history(latest);
                assert_eq!(
                    (breaker.runs.failing, breaker.runs.working),
                    (history.failing, history.working),
                    "size {size}, step {step}"
                );
            }
        }
    }

    /// Windows that exercise every part of the formula: failing, recovering, healthy, empty,
    /// within the protection, and decaying `k` over a long failing run.
    const WINDOWS: [&[(u64, u64, u64)]; 6] = [
        &[(0, 100, 0)],
        &[(100, 100, 0)],
        &[(10, 0, 0), (0, 0, 4), (10, 0, 0)],
        &[],
        &[(0, 3, 0)],
        &[
            (100, 0, 0),
            (0, 10, 0),
            (0, 10, 0),
            (0, 10, 0),
            (0, 10, 0),
            (0, 10, 0),
        ],
    ];

    /// Every field of `Sre` that is an `f64`, set to `value`.
    fn each_constant(value: f64) -> [(&'static str, Sre); 3] {
        [
            ("k", Sre { k: value, ..SRE }),
            (
                "floor",
                Sre {
                    floor: value,
                    ..SRE
                },
            ),
            (
                "protection",
                Sre {
                    protection: value,
                    ..SRE
                },
            ),
        ]
    }

    // Edge cases: a NaN constant is read as infinity, the value that refuses least, and an
    // infinite one turns the throttle off. A NaN `floor` or `protection` used to refuse
    // every call while `ratio` reported 0.
    #[test]
    fn a_nan_or_infinite_constant_lets_every_call_through() {
        for value in [f64::NAN, f64::INFINITY] {
            for (field, sre) in each_constant(value) {
                for buckets in WINDOWS {
                    let (mut breaker, now) = with_policy(sre, buckets);
                    let now = Duration::from_nanos(now);
                    assert_eq!(breaker.ratio(now), 0.0, "{field} {value} {buckets:?}");
                    for _ in 0..50 {
                        let permit = breaker.allow(now, 0.0).expect("the throttle is off");
                        breaker.fail(permit, now);
                    }
                    assert_eq!(breaker.ratio(now), 0.0, "{field} {value} {buckets:?}");
                }
            }
        }
    }

    // Edge cases: a constant below its range (negative, `-inf` included) is read as 0. A
    // `protection` of `-inf` used to refuse everything with a ratio of infinity.
    #[test]
    fn a_negative_constant_is_read_as_zero() {
        for value in [-1.0, -f64::MIN_POSITIVE, -1e300, f64::NEG_INFINITY] {
            for ((field, hostile), (_, zero)) in
                each_constant(value).into_iter().zip(each_constant(0.0))
            {
                for buckets in WINDOWS {
                    let (mut a, now) = with_policy(hostile, buckets);
                    let (mut b, _) = with_policy(zero, buckets);
                    let at = Duration::from_nanos(now);
                    let ratio = a.ratio(at);
                    assert_eq!(ratio, b.ratio(at), "{field} {value} {buckets:?}");
                    assert!((0.0..=1.0).contains(&ratio), "{field} {value}: {ratio}");
                    for roll in [0.0, 0.25, 0.5, 0.75, 0.999] {
                        // Each refusal is a drop in the window: read the ratio afresh.
                        let ratio = a.ratio(at);
                        assert_eq!(ratio, b.ratio(at), "{field} {value} {roll}");
                        let (x, y) = (a.allow(at, roll), b.allow(at, roll));
                        assert_eq!(x.is_some(), y.is_some(), "{field} {value} {roll}");
                        assert_eq!(x.is_none(), roll < ratio, "{field} {value} {roll}");
                        for permit in [x, y].into_iter().flatten() {
                            drop(permit);
                        }
                    }
                }
            }
        }
    }

    // Huge finite constants stay finite in the decay of `k`: with `k` at `f64::MAX` the
    // product `(k − floor)·failing` overflows, and `w` would fall to the floor.
    #[test]
    fn huge_constants_never_make_a_nan() {
        let buckets = WINDOWS[5];
        let sre = Sre {
            k: f64::MAX,
            floor: 0.0,
            ..SRE
        };
        let (breaker, now) = with_policy(sre, buckets);
        assert_eq!(breaker.history(now).failing, 5);
        // Half of `f64::MAX` and more weighs on the 100 accepts: nothing is refused.
        assert_eq!(breaker.ratio(Duration::from_nanos(now)), 0.0);
        for (k, floor, protection) in [
            (0.0, f64::MAX, 0.0),
            (f64::MAX, f64::MAX, f64::MAX),
            (0.0, 0.0, f64::MAX),
            (f64::MIN_POSITIVE, 0.0, 0.0),
        ] {
            for buckets in WINDOWS {
                let sre = Sre {
                    k,
                    floor,
                    protection,
                    ..SRE
                };
                let (breaker, now) = with_policy(sre, buckets);
                let ratio = breaker.ratio(Duration::from_nanos(now));
                assert!((0.0..=1.0).contains(&ratio), "{sre:?} {buckets:?}: {ratio}");
            }
        }
    }

    #[test]
    fn a_huge_size_is_lowered_to_the_most_buckets_a_window_holds() {
        for size in [usize::MAX, 1 << 61, crate::window::MAX_SIZE + 1] {
            let mut breaker = Breaker::new(Sre { size, ..SRE }, ms(0));
            assert_eq!(breaker.window.size(), crate::window::MAX_SIZE);
            for i in 0..200 {
                if let Some(permit) = breaker.allow(ms(i), 0.5) {
                    breaker.fail(permit, ms(i));
                }
            }
            assert!(breaker.ratio(ms(200)) > 0.0);
            assert!(breaker.ratio(ms(200)) <= 1.0);
        }
    }

    #[test]
    fn a_zero_sized_policy_is_raised_to_one_bucket() {
        let sre = Sre {
            size: 0,
            window: Duration::ZERO,
            ..SRE
        };
        let mut breaker = Breaker::new(sre, ms(0));
        for _ in 0..50 {
            if let Some(permit) = breaker.allow(ms(0), 0.5) {
                breaker.fail(permit, ms(0));
            }
        }
        assert!(breaker.ratio(ms(0)) > 0.0);
        assert_eq!(breaker.ratio(Duration::MAX), 0.0);
    }

    /// Every bucket still in the window at `now`, oldest first.
    fn buckets(breaker: &Breaker, now: u64) -> std::vec::Vec<Tally> {
        let mut seen = std::vec::Vec::new();
        breaker.window.visit(now, true, |tally| seen.push(*tally));
        seen
    }

    #[test]
    fn retuning_the_constants_changes_the_next_ratio_and_keeps_the_window() {
        let (mut breaker, now) = with_buckets(&[(0, 40, 0), (100, 100, 0)]);
        let at = Duration::from_nanos(now);
        let twin = breaker.clone();
        // 240 calls, 100 accepted: (240 − 5 − 1.5·100) / 241 under the preset.
        assert_eq!(breaker.ratio(at), 85.0 / 241.0);
        breaker.retune(Sre { k: 1.75, ..SRE }, at);
        assert_eq!(breaker.ratio(at), 60.0 / 241.0);
        assert_eq!(buckets(&breaker, now), buckets(&twin, now));
        assert_eq!(breaker.history(now), twin.history(now));
        assert_eq!(
            (breaker.accepts, breaker.total, breaker.runs),
            (twin.accepts, twin.total, twin.runs)
        );
        // A draw between the two ratios: the old policy refuses it, the new one does not.
        assert!(twin.clone().allow(at, 0.3).is_none());
        assert!(breaker.allow(at, 0.3).is_some());
        assert_eq!(breaker.sre().k, 1.75);
    }

    #[test]
    fn retuning_away_and_back_changes_nothing() {
        let mut breaker = Breaker::new(SRE, ms(0));
        let mut twin = breaker.clone();
        let mut walk = crate::walk::Walk::new();
        for step in 0..5_000u64 {
            let (now, x) = walk.step();
            let at = ms(now);
            if step % 97 == 0 {
                // Constants only, then the same policy, neither of which reads the clock.
                breaker.retune(
                    Sre {
                        k: 9.0,
                        probe: Duration::ZERO,
                        window: SRE.window + Duration::from_nanos(39),
                        ..SRE
                    },
                    at + ms(10_000),
                );
                breaker.retune(SRE, at + ms(10_000));
                breaker.retune(SRE, at + ms(10_000));
            }
            let draw = (x >> 11) as f64 / (1u64 << 53) as f64;
            assert_eq!(breaker.ratio(at), twin.ratio(at), "step {step}");
            match (breaker.allow(at, draw), twin.allow(at, draw)) {
                (Some(a), Some(b)) if x & 1 == 0 => {
                    breaker.fail(a, at);
                    twin.fail(b, at);
                }
                (Some(a), Some(b)) => {
                    breaker.pass(a, at);
                    twin.pass(b, at);
                }
                (None, None) => {}
                _ => panic!("the two breakers disagree at step {step}"),
            }
        }
    }

    #[test]
    fn a_new_window_moves_every_outcome_into_its_first_bucket() {
        let (mut breaker, now) = with_buckets(&[(10, 0, 0), (0, 0, 4), (0, 30, 0), (0, 20, 0)]);
        let before = breaker.history(now);
        assert_eq!((before.accepts, before.total, before.failing), (10, 64, 2));
        let sre = Sre {
            size: 10,
            window: Duration::from_secs(5),
            ..SRE
        };
        breaker.retune(sre, Duration::from_nanos(now));
        let mut expected = [Tally::default(); 10];
        expected[9] = Tally {
            total: 64,
            success: 10,
            failure: 50,
            drop: 4,
        };
        assert_eq!(buckets(&breaker, now), expected);
        // The one bucket holds successes and failures: both runs start again at 0.
        let after = breaker.history(now);
        assert_eq!(
            after,
            History {
                accepts: 10,
                total: 64,
                working: 0,
                failing: 0
            }
        );
        assert_eq!(breaker.ratio(Duration::from_nanos(now)), 44.0 / 65.0);
        // The kept outcomes leave together, one new window after the retune.
        let gone = now + nanos(Duration::from_secs(5));
        assert_eq!(breaker.history(gone - 1).total, 64);
        assert_eq!(breaker.history(gone).total, 0);
        assert_eq!(breaker.ratio(Duration::from_nanos(gone)), 0.0);
    }

    #[test]
    fn a_new_window_keeps_a_failing_run_of_one_bucket() {
        let (mut breaker, now) = with_buckets(&[(0, 10, 0), (0, 10, 0), (0, 0, 3), (0, 10, 0)]);
        assert_eq!(breaker.history(now).failing, 3);
        breaker.retune(Sre { size: 20, ..SRE }, Duration::from_nanos(now));
        assert_eq!(
            breaker.runs,
            Runs {
                failing: 1,
                working: 0,
                succeeded: 0,
                failed: 1
            }
        );
        assert_eq!(breaker.history(now).failing, 1);
        let (mut working, now) = with_buckets(&[(5, 0, 0), (5, 0, 2)]);
        working.retune(Sre { size: 3, ..SRE }, Duration::from_nanos(now));
        assert_eq!((working.runs.working, working.history(now).working), (1, 1));
    }

    #[test]
    fn rebuilding_the_window_reads_a_clock_going_backwards_as_the_latest_seen() {
        let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
        let later = Duration::from_nanos(now) + ms(100);
        assert!(breaker.allow(later, 0.0).is_none());
        breaker.retune(Sre { size: 8, ..SRE }, ms(0));
        assert_eq!(breaker.window.newest().0, nanos(later));
        assert_eq!(breaker.history(nanos(later)).total, 101);
        // The new window opened at the latest reading, not at zero.
        assert_eq!(breaker.history(nanos(later + SRE.window) - 1).total, 101);
    }

    #[test]
    fn the_probe_keeps_its_clock_across_a_retune() {
        let (mut breaker, now) = with_buckets(&[(0, 100, 0)]);
        let now = Duration::from_nanos(now);
        assert!(breaker.allow(now, 0.999).is_some(), "sets the probe clock");
        let sre = Sre {
            size: 7,
            window: Duration::from_secs(30),
            ..SRE
        };
        breaker.retune(sre, now + ms(500));
        assert!(breaker.allow(now + SRE.probe, 0.0).is_none());
        assert!(
            breaker
                .allow(now + SRE.probe + Duration::from_nanos(1), 0.0)
                .is_some()
        );
    }

    #[test]
    fn hostile_sizes_and_windows_retune_without_panicking() {
        let (mut breaker, now) = with_buckets(&[(3, 40, 1), (0, 9, 0)]);
        let at = Duration::from_nanos(now);
        for (size, window) in [
            (usize::MAX, Duration::MAX),
            (0, Duration::ZERO),
            (1 << 61, Duration::from_nanos(3)),
            (40, Duration::MAX),
            (1, Duration::ZERO),
        ] {
            breaker.retune(
                Sre {
                    size,
                    window,
                    ..SRE
                },
                at,
            );
            assert!(breaker.window.fits(size, window));
            let history = breaker.history(nanos(at));
            assert_eq!(
                (history.accepts, history.total),
                (3, 53),
                "{size} {window:?}"
            );
            let ratio = breaker.ratio(at);
            assert!((0.0..=1.0).contains(&ratio));
        }
        breaker.retune(SRE, Duration::MAX);
        assert!(breaker.allow(Duration::MAX, 0.5).is_some());
    }

    #[test]
    fn the_kept_totals_and_runs_match_a_scan_across_retunes() {
        let policies = [
            SRE,
            Sre { size: 3, ..SRE },
            Sre {
                size: 100,
                window: Duration::from_secs(3),
                ..SRE
            },
            Sre { k: 1.2, ..SRE },
            Sre {
                size: 1,
                window: Duration::from_millis(700),
                ..SRE
            },
        ];
        let mut breaker = Breaker::new(SRE, ms(0));
        let mut walk = crate::walk::Walk::new();
        for step in 0..20_000u64 {
            let (now, x) = walk.step();
            let at = ms(now);
            if step % 333 == 0 {
                let sre = policies[(x >> 40) as usize % policies.len()];
                breaker.retune(sre, at);
            }
            let draw = (x >> 11) as f64 / (1u64 << 53) as f64;
            if let Some(permit) = breaker.allow(at, draw) {
                match (step / 700) % 3 {
                    0 => breaker.fail(permit, at),
                    1 => breaker.pass(permit, at),
                    _ if x & 1 == 0 => breaker.fail(permit, at),
                    _ => breaker.pass(permit, at),
                }
            }
            let latest = breaker.clock.get();
            breaker.roll(latest);
            let history = breaker.history(latest);
            assert_eq!(
                History {
                    accepts: breaker.accepts,
                    total: breaker.total,
                    working: breaker.runs.working,
                    failing: breaker.runs.failing
                },
                history,
                "step {step}"
            );
        }
    }
}
