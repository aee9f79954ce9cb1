//! [`Quota`]: which core limiter a rate limit runs, in memory or in Redis; [`QuotaLimiter`],
//! that limiter in memory.

use std::time::Duration;

use ironward::{Bucket, Period, Sliding};

/// Which limiter of the `ironward` core a rate limit runs, with its parameters: a token
/// bucket, a sliding window or a fixed period; the one description that ironward-tower's
/// `QuotaLayer` (in memory) and ironward-redis's limiters (in Redis) both take.
///
/// Every request costs one. The three answer different questions, and the core's docs say
/// which to pick: a [`Bucket`] smooths (a burst after a quiet spell, then a steady rate: what
/// a human-facing API wants), a [`Sliding`] window counts exactly over any window-long stretch
/// ("a thousand an hour", with no double quota either side of a boundary), and a [`Period`]
/// counts per fixed period, cheaply, as go-zero's `core/limit/periodlimit.go` does (made by
/// [`Quota::aligned`], periods lie on multiples of the period on the layer's clock, so on
/// [`Clock::unix`](crate::Clock::unix) a daily quota resets at midnight UTC).
///
/// Out-of-range parameters are read as the core reads them (a NaN rate never refills, a
/// window under 1 ns is 1 ns, a quota of 0 refuses everything): see `ironward`'s guide,
/// [edge cases](ironward::_guide::edge_cases).
///
/// # What a client is told
///
/// A limit is told to a client as a quota `q` over a window `w` ([`policy`](Quota::policy)
/// gives them before rounding): for a [`Quota::Bucket`] its burst in whole tokens over the
/// time to refill from empty, `burst / rate`; for a [`Quota::Sliding`] or a
/// [`Quota::Period`] its `quota` over its `window` or `period`. ironward-tower's `Limited` and
/// `Headroom` say how the HTTP fields round them.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::Quota;
///
/// let secs = Duration::from_secs;
/// assert_eq!(Quota::bucket(10.0, 20.0), Quota::Bucket { rate: 10.0, burst: 20.0 });
/// assert_eq!(Quota::sliding(100, secs(60)), Quota::Sliding { quota: 100, window: secs(60) });
/// let daily = Quota::aligned(1000, secs(86_400));
/// assert_eq!(daily, Quota::Period { quota: 1000, period: secs(86_400), align: true });
///
/// // A key left alone this long is as good as new, so a keyed layer may forget it.
/// assert_eq!(Quota::bucket(10.0, 20.0).idle(), secs(2));
/// assert_eq!(daily.idle(), secs(86_400));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quota {
    /// A token bucket ([`Bucket`]), full at first.
    Bucket {
        /// Tokens a second; each request takes one.
        rate: f64,
        /// The most tokens the bucket holds: the largest burst after a quiet spell.
        burst: f64,
    },
    /// A sliding-window log ([`Sliding`]): at most `quota` requests in any `window`.
    Sliding {
        /// The most requests in any window.
        quota: u32,
        /// How long the window is.
        window: Duration,
    },
    /// A fixed-window counter ([`Period`]): at most `quota` requests a period.
    Period {
        /// The most requests in a period.
        quota: u32,
        /// How long a period is.
        period: Duration,
        /// Whether periods lie on multiples of `period` on the layer's clock (go-zero's
        /// `Align`), rather than opening at the first request after the last one closed.
        align: bool,
    },
}

impl Quota {
    /// A token bucket: `rate` tokens a second, up to `burst`.
    pub const fn bucket(rate: f64, burst: f64) -> Self {
        Self::Bucket { rate, burst }
    }

    /// A sliding window: at most `quota` requests in any `window`.
    pub const fn sliding(quota: u32, window: Duration) -> Self {
        Self::Sliding { quota, window }
    }

    /// A fixed period: at most `quota` requests a `period`, a period opening at the first
    /// request after the last one closed (`ironward::Period::new`).
    pub const fn period(quota: u32, period: Duration) -> Self {
        Self::Period {
            quota,
            period,
            align: false,
        }
    }

    /// A fixed period aligned on the layer's clock: at most `quota` requests a `period`,
    /// periods lying on multiples of `period` (`ironward::Period::aligned`, go-zero's
    /// `Align`). On [`Clock::unix`](crate::Clock::unix) a daily quota resets at midnight UTC.
    pub const fn aligned(quota: u32, period: Duration) -> Self {
        Self::Period {
            quota,
            period,
            align: true,
        }
    }

    /// How long a limiter left alone takes to be as good as new: a bucket's time to refill
    /// from empty (`burst / rate`, rounded up to whole nanoseconds), a window or a period.
    ///
    /// The core's answer (`idle` on `ironward::Bucket`, `Sliding` and `Period`). A keyed
    /// layer forgets a key idle for longer than this, which changes no answer: the limiter it
    /// would have kept is the fresh one a returning key gets. `Duration::MAX` for a bucket
    /// that never fills (a rate of 0, an infinite burst), whose keys are only ever evicted
    /// when the table is full.
    #[must_use]
    pub fn idle(&self) -> Duration {
        // Neither a bucket nor a period allocates, nor does a log with a quota of 0: the core
        // reads the parameters, and answers, without a stamp reserved.
        match *self {
            Self::Bucket { rate, burst } => Bucket::new(rate, burst, Duration::ZERO).idle(),
            Self::Sliding { window, .. } => Sliding::new(0, window).idle(),
            Self::Period { period, .. } => Period::new(0, period).idle(),
        }
    }

    /// Whether a limiter of this limit can be retuned to `other` in place: the same core
    /// limiter, and for a period the same alignment (the core's `Period` keeps its alignment
    /// for life).
    #[must_use]
    pub fn retunes_to(&self, other: &Quota) -> bool {
        match (self, other) {
            (Self::Bucket { .. }, Self::Bucket { .. })
            | (Self::Sliding { .. }, Self::Sliding { .. }) => true,
            (Self::Period { align, .. }, Self::Period { align: other, .. }) => align == other,
            _ => false,
        }
    }

    /// What the kind of limiter is called, with its article, in an error.
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Bucket { .. } => "a token bucket",
            Self::Sliding { .. } => "a sliding window",
            Self::Period { align: false, .. } => "a fixed period",
            Self::Period { align: true, .. } => "an aligned period",
        }
    }

    /// The quota and the span it is counted over, as
    /// [what a client is told](Quota#what-a-client-is-told) says, before any rounding; no
    /// span for a quota that never comes back (a bucket of rate 0, an infinite burst).
    #[must_use]
    pub fn policy(&self) -> (u64, Option<Duration>) {
        match *self {
            Self::Bucket { rate, burst } => {
                let bucket = Bucket::new(rate, burst, Duration::ZERO);
                bucket_policy(bucket.rate(), bucket.burst())
            }
            Self::Sliding { quota, .. } | Self::Period { quota, .. } => {
                (u64::from(quota), Some(self.idle()))
            }
        }
    }
}

/// The quota and span a bucket of `rate` and `burst`, as the core reads them, reports: its
/// whole tokens, and the time it takes to refill from empty.
fn bucket_policy(rate: f64, burst: f64) -> (u64, Option<Duration>) {
    // `as` saturates: an infinite burst is `u64::MAX`.
    let quota = burst.floor() as u64;
    let window = (rate > 0.0)
        .then(|| Duration::try_from_secs_f64(burst / rate).ok())
        .flatten();
    (quota, window)
}

/// The core limiter a [`Quota`] names, with its state: what every rate limit in memory runs
/// (ironward-tower's `QuotaLayer`, one per budget or key, and the front door's
/// [`LocalRate`](crate::call::LocalRate)), so that a quota becomes a limiter, and is retuned,
/// by one rule.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::{Quota, QuotaLimiter};
///
/// let secs = Duration::from_secs;
/// let mut limiter = QuotaLimiter::new(&Quota::sliding(1, secs(10)), secs(0));
/// let QuotaLimiter::Sliding(window) = &mut limiter else { unreachable!() };
/// assert!(window.check(secs(0)).is_ok());
/// assert!(window.check(secs(1)).is_err());
///
/// // A limit of another kind leaves the limiter as it is.
/// assert!(!limiter.retune(&Quota::bucket(1.0, 1.0), secs(2)));
/// assert!(limiter.retune(&Quota::sliding(2, secs(10)), secs(2)));
/// ```
#[derive(Debug, Clone)]
pub enum QuotaLimiter {
    /// A [`Quota::Bucket`]'s token bucket.
    Bucket(Bucket),
    /// A [`Quota::Sliding`]'s window log.
    Sliding(Sliding),
    /// A [`Quota::Period`]'s counter, aligned or not.
    Period(Period),
}

impl QuotaLimiter {
    /// A fresh limiter for `limit` (a bucket full), its clock at `now`.
    pub fn new(limit: &Quota, now: Duration) -> Self {
        match *limit {
            Quota::Bucket { rate, burst } => Self::Bucket(Bucket::new(rate, burst, now)),
            Quota::Sliding { quota, window } => Self::Sliding(Sliding::new(quota, window)),
            Quota::Period {
                quota,
                period,
                align: false,
            } => Self::Period(Period::new(quota, period)),
            Quota::Period {
                quota,
                period,
                align: true,
            } => Self::Period(Period::aligned(quota, period)),
        }
    }

    /// Moves the limiter to `limit` at `now`, keeping its history (the core's `retune`:
    /// tokens, stamps in the window, the open period and its count), and says whether it
    /// did: a limit of another kind ([`Quota::retunes_to`]) leaves it as it is.
    pub fn retune(&mut self, limit: &Quota, now: Duration) -> bool {
        match (self, *limit) {
            (Self::Bucket(bucket), Quota::Bucket { rate, burst }) => {
                bucket.retune(rate, burst, now);
            }
            (Self::Sliding(sliding), Quota::Sliding { quota, window }) => {
                sliding.retune(quota, window, now);
            }
            (Self::Period(counter), Quota::Period { quota, period, .. }) => {
                counter.retune(quota, period, now);
            }
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_key_is_idle_once_its_limiter_is_as_good_as_new() {
        assert_eq!(Quota::bucket(4.0, 2.0).idle(), ms(500));
        assert_eq!(Quota::sliding(5, secs(60)).idle(), secs(60));
        assert_eq!(Quota::aligned(5, secs(10)).idle(), secs(10));
    }

    #[test]
    fn idle_reads_parameters_as_the_core_does() {
        assert_eq!(Quota::bucket(0.0, 5.0).idle(), Duration::MAX);
        assert_eq!(Quota::bucket(f64::NAN, 5.0).idle(), Duration::MAX);
        assert_eq!(Quota::bucket(2.0, f64::INFINITY).idle(), Duration::MAX);
        // A burst below 1 is 1.
        assert_eq!(Quota::bucket(2.0, 0.0).idle(), ms(500));
        assert_eq!(
            Quota::sliding(0, Duration::ZERO).idle(),
            Duration::from_nanos(1)
        );
        assert_eq!(
            Quota::period(0, Duration::ZERO).idle(),
            Duration::from_nanos(1)
        );
    }

    #[test]
    fn idle_is_the_cores_answer() {
        // A third of a second is not whole nanoseconds: the core rounds up, so that a bucket
        // left alone this long is full.
        assert_eq!(
            Quota::bucket(3.0, 1.0).idle(),
            Bucket::new(3.0, 1.0, Duration::ZERO).idle()
        );
        assert_eq!(
            Quota::bucket(3.0, 1.0).idle(),
            Duration::from_nanos(333_333_334)
        );
        assert_eq!(
            Quota::sliding(7, ms(1500)).idle(),
            Sliding::new(7, ms(1500)).idle()
        );
        assert_eq!(
            Quota::aligned(7, ms(1500)).idle(),
            Period::aligned(7, ms(1500)).idle()
        );
    }

    #[test]
    fn a_bucket_reports_its_burst_over_its_refill_time() {
        assert_eq!(Quota::bucket(10.0, 20.0).policy(), (20, Some(secs(2))));
        assert_eq!(Quota::bucket(2.0, 2.5).policy(), (2, Some(ms(1250))));
        assert_eq!(Quota::bucket(0.0, 3.0).policy(), (3, None));
        assert_eq!(Quota::bucket(1.0, f64::INFINITY).policy(), (u64::MAX, None));
    }

    #[test]
    fn windows_and_periods_report_their_quota() {
        assert_eq!(Quota::sliding(7, secs(30)).policy(), (7, Some(secs(30))));
        assert_eq!(Quota::period(9, secs(60)).policy(), (9, Some(secs(60))));
    }

    #[test]
    fn only_a_limiter_of_the_same_kind_retunes() {
        let bucket = Quota::bucket(1.0, 1.0);
        assert!(bucket.retunes_to(&Quota::bucket(5.0, 50.0)));
        assert!(!bucket.retunes_to(&Quota::sliding(1, secs(1))));
        assert!(Quota::sliding(1, secs(1)).retunes_to(&Quota::sliding(9, secs(9))));
        assert!(Quota::period(1, secs(1)).retunes_to(&Quota::period(2, secs(2))));
        assert!(Quota::aligned(1, secs(1)).retunes_to(&Quota::aligned(2, secs(2))));
        // The core's `Period` keeps its alignment for life.
        assert!(!Quota::period(1, secs(1)).retunes_to(&Quota::aligned(1, secs(1))));
        assert!(!Quota::aligned(1, secs(1)).retunes_to(&Quota::period(1, secs(1))));
    }
}
