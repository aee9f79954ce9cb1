//! [`Limit`]: which core limiter a [`RateLimitLayer`](super::RateLimitLayer) runs, and the
//! one state it keeps per budget.

use std::time::Duration;

use ironward::{Bucket, Period, Sliding};

use http::HeaderValue;

use super::error::Said;
use super::headroom::Stamp;
use super::{Headroom, KindMismatch, Limited};

/// Which limiter of the `ironward` core a [`RateLimitLayer`](super::RateLimitLayer) runs, with
/// its parameters: a token bucket, a sliding window or a fixed period.
///
/// Every request costs one. The three answer different questions, and the core's docs say
/// which to pick: a [`Bucket`] smooths (a burst after a quiet spell, then a steady rate: what
/// a human-facing API wants), a [`Sliding`] window counts exactly over any window-long stretch
/// ("a thousand an hour", with no double quota either side of a boundary), and a [`Period`]
/// counts per fixed period, cheaply, as go-zero's `core/limit/periodlimit.go` does (made by
/// [`Limit::aligned`], periods lie on multiples of the period on the layer's clock, so on
/// [`Clock::unix`](crate::Clock::unix) a daily quota resets at midnight UTC).
///
/// Out-of-range parameters are read as the core reads them (a NaN rate never refills, a
/// window under 1 ns is 1 ns, a quota of 0 refuses everything): see the crate docs of
/// `ironward`, "Edge cases".
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::Limit;
///
/// let secs = Duration::from_secs;
/// assert_eq!(Limit::bucket(10.0, 20.0), Limit::Bucket { rate: 10.0, burst: 20.0 });
/// assert_eq!(Limit::sliding(100, secs(60)), Limit::Sliding { quota: 100, window: secs(60) });
/// let daily = Limit::aligned(1000, secs(86_400));
/// assert_eq!(daily, Limit::Period { quota: 1000, period: secs(86_400), align: true });
///
/// // A key left alone this long is as good as new, so a keyed layer may forget it.
/// assert_eq!(Limit::bucket(10.0, 20.0).idle(), secs(2));
/// assert_eq!(daily.idle(), secs(86_400));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
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

impl Limit {
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

    /// The refusal of a request under this limit that would be admitted after
    /// `retry_after`: a [`Limited`] with the limit's quota and window, as this crate's
    /// [`RateLimitLayer`](super::RateLimitLayer) gives it, under the policy name
    /// `"default"` ([`Limited::named`] changes it).
    ///
    /// For a limiter kept elsewhere (`ironward-redis` keeps the same limits in Redis), so
    /// that its refusals, and their HTTP headers, are this crate's.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tower::Limit;
    ///
    /// let limited = Limit::sliding(100, Duration::from_secs(60)).refusal(Duration::from_secs(5));
    /// assert_eq!(limited.retry_after(), Duration::from_secs(5));
    /// assert_eq!((limited.quota(), limited.window()), (100, Some(Duration::from_secs(60))));
    /// assert_eq!(limited.headers()["retry-after"], "5");
    /// ```
    pub fn refusal(&self, retry_after: Duration) -> Limited {
        let (quota, window) = self.policy();
        Limited::new(retry_after, quota, window)
    }

    /// Whether a limiter of this limit can be retuned to `other` in place: the same core
    /// limiter, and for a period the same alignment (the core's `Period` keeps its alignment
    /// for life).
    pub(super) fn retunes_to(&self, other: &Limit) -> bool {
        match (self, other) {
            (Self::Bucket { .. }, Self::Bucket { .. })
            | (Self::Sliding { .. }, Self::Sliding { .. }) => true,
            (Self::Period { align, .. }, Self::Period { align: other, .. }) => align == other,
            _ => false,
        }
    }

    /// What the kind of limiter is called, with its article, in an error.
    pub(super) const fn kind(&self) -> &'static str {
        match self {
            Self::Bucket { .. } => "a token bucket",
            Self::Sliding { .. } => "a sliding window",
            Self::Period { align: false, .. } => "a fixed period",
            Self::Period { align: true, .. } => "an aligned period",
        }
    }

    /// The quota and window a refusal reports, as [`Limited::quota`](super::Limited::quota)
    /// and [`Limited::window`](super::Limited::window) document them.
    pub(super) fn policy(&self) -> (u64, Option<Duration>) {
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

/// The quota and window a bucket of `rate` and `burst`, as the core reads them, reports: its
/// whole tokens, and the time it takes to refill from empty.
pub(super) fn bucket_policy(rate: f64, burst: f64) -> (u64, Option<Duration>) {
    // `as` saturates: an infinite burst is `u64::MAX`.
    let quota = burst.floor() as u64;
    let window = (rate > 0.0)
        .then(|| Duration::try_from_secs_f64(burst / rate).ok())
        .flatten();
    (quota, window)
}

/// What every budget under one limit reads from it, worked out once per limit rather than
/// once a request: the limit, how long a key may idle, and the refusal to give.
#[derive(Debug, Clone)]
pub(super) struct Terms {
    pub(super) limit: Limit,
    /// [`Limit::idle`].
    pub(super) idle: Duration,
    /// What a refusal or a headroom says of the policy: the limit's quota and window, as
    /// [`Limited::quota`] and [`Limited::window`] give them, and the policy's name, read as
    /// [`Limited::named`] reads it.
    quota: u64,
    window: Option<Duration>,
    policy: &'static str,
    /// The `RateLimit-Policy` value every admitted response under these terms carries.
    policy_field: Option<HeaderValue>,
}

impl Terms {
    /// The terms of `limit` under the policy named `policy`.
    pub(super) fn new(limit: Limit, policy: &'static str) -> Self {
        let refusal = limit.refusal(Duration::ZERO).named(policy);
        let (quota, window, policy) = (refusal.quota(), refusal.window(), refusal.policy());
        Self {
            limit,
            idle: limit.idle(),
            quota,
            window,
            policy,
            policy_field: super::http::policy_field(policy, quota, window),
        }
    }

    /// The terms of `limit` under the same policy name, if a limiter of these terms can be
    /// retuned to it.
    pub(super) fn retuned(&self, limit: Limit) -> Result<Self, KindMismatch> {
        if self.limit.retunes_to(&limit) {
            Ok(Self::new(limit, self.policy()))
        } else {
            Err(KindMismatch::new(self.limit, limit))
        }
    }

    /// The policy's name, as a refusal gives it.
    pub(super) fn policy(&self) -> &'static str {
        self.policy
    }

    /// The refusal of a request that would be admitted after `wait`.
    pub(super) fn refusal(&self, wait: Wait) -> Limited {
        let said = match wait {
            Wait::Known(wait) => Said::Known {
                wait,
                quota: self.quota,
                window: self.window,
            },
            Wait::Bucket(reason) => Said::Bucket(reason),
        };
        Limited::of(said, self.policy)
    }

    /// An admission's headroom under these terms: `remaining` left, all back after `reset`.
    pub(super) fn headroom(&self, (remaining, reset): (u64, Duration)) -> Headroom {
        Headroom::of(remaining, reset, self.quota, self.window, self.policy)
    }

    /// What to stamp on the response of an admission that left `left`: its headroom and the
    /// policy's value.
    pub(super) fn stamp(&self, left: (u64, Duration)) -> Stamp {
        Stamp::new(self.headroom(left), self.policy_field.clone())
    }

    /// The answer to one take: what to stamp on its response if its headroom was read, or
    /// its refusal.
    pub(super) fn answer(
        &self,
        taken: Result<Option<(u64, Duration)>, Wait>,
    ) -> Result<Option<Stamp>, Limited> {
        match taken {
            Ok(left) => Ok(left.map(|left| self.stamp(left))),
            Err(wait) => Err(self.refusal(wait)),
        }
    }
}

/// One budget on its own (a global limit's, or the one a keyed table gives requests
/// without a key): a limiter and the terms it runs under.
#[derive(Debug)]
pub(super) struct Budget {
    limiter: Limiter,
    terms: Terms,
}

impl Budget {
    /// A fresh budget under `terms`, its clock at `now`.
    pub(super) fn new(terms: Terms, now: Duration) -> Self {
        Self {
            limiter: Limiter::new(&terms.limit, now),
            terms,
        }
    }

    /// Takes one request at `now`, or refuses it, saying how long to wait.
    /// Takes one request at `now`, reading what it left when `headroom` is asked for.
    pub(super) fn take(&mut self, now: Duration, headroom: bool) -> Result<Option<Stamp>, Limited> {
        self.terms.answer(self.limiter.take_reading(now, headroom))
    }

    /// Moves the budget to `terms` at `now`, keeping its history ([`Limiter::retune`]).
    pub(super) fn retune(&mut self, terms: Terms, now: Duration) {
        self.limiter.retune(&terms.limit, now);
        self.terms = terms;
    }

    /// The terms the budget runs under.
    pub(super) fn terms(&self) -> &Terms {
        &self.terms
    }
}

/// How long a refused request should wait: known when the limiter refused, or a bucket's
/// reason, from which [`BucketReason::next`](ironward::BucketReason::next) works it out when
/// it is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Wait {
    /// A window's or a period's `next`.
    Known(Duration),
    /// A bucket's refusal.
    Bucket(ironward::BucketReason),
}

impl Wait {
    /// The wait, worked out now if it is a bucket's.
    #[cfg(test)]
    pub(super) fn get(&self) -> Duration {
        match self {
            Self::Known(wait) => *wait,
            Self::Bucket(reason) => reason.next(),
        }
    }
}

/// The state behind one budget: the core limiter a [`Limit`] names.
#[derive(Debug)]
pub(super) enum Limiter {
    Bucket(Bucket),
    Sliding(Sliding),
    Period(Period),
}

impl Limiter {
    /// A fresh limiter for `limit`, its clock at `now`.
    pub(super) fn new(limit: &Limit, now: Duration) -> Self {
        match *limit {
            Limit::Bucket { rate, burst } => Self::Bucket(Bucket::new(rate, burst, now)),
            Limit::Sliding { quota, window } => Self::Sliding(Sliding::new(quota, window)),
            Limit::Period {
                quota,
                period,
                align: false,
            } => Self::Period(Period::new(quota, period)),
            Limit::Period {
                quota,
                period,
                align: true,
            } => Self::Period(Period::aligned(quota, period)),
        }
    }

    /// Takes one request at `now`, or says how long until one would be admitted.
    ///
    /// The core's `check` decides, and the wait is its reason's: a window's or a period's
    /// `next` as the refusal computed it, a bucket's reason itself, from which
    /// [`BucketReason::next`](ironward::BucketReason::next) works the wait out when it is
    /// asked for, so the wait comes from the same reading as the refusal and costs nothing
    /// until then.
    pub(super) fn take(&mut self, now: Duration) -> Result<(), Wait> {
        match self {
            Self::Bucket(bucket) => bucket.check(now, 1.0).map_err(Wait::Bucket),
            Self::Sliding(sliding) => sliding
                .check(now)
                .map_err(|reason| Wait::Known(reason.next)),
            Self::Period(period) => period
                .check(now)
                .map(drop)
                .map_err(|reason| Wait::Known(reason.next)),
        }
    }

    /// What is left right after a take at `now`, and how long until all of it is back: the
    /// draft's `r` and `t`, read from the core without changing anything.
    pub(super) fn left(&self, now: Duration) -> (u64, Duration) {
        match self {
            // `as` saturates: an infinite burst holds `u64::MAX` whole tokens.
            Self::Bucket(bucket) => (
                bucket.tokens(now).floor() as u64,
                bucket.next(now, bucket.burst()),
            ),
            // The stamp just taken is the newest: the whole quota is back a window on.
            Self::Sliding(sliding) => (u64::from(sliding.left(now)), sliding.window()),
            Self::Period(period) => (u64::from(period.left(now)), period.next(now)),
        }
    }

    /// A take at `now` and, when `headroom` is asked for, what it left.
    pub(super) fn take_reading(
        &mut self,
        now: Duration,
        headroom: bool,
    ) -> Result<Option<(u64, Duration)>, Wait> {
        self.take(now)?;
        Ok(headroom.then(|| self.left(now)))
    }

    /// Moves the limiter to `limit` at `now`, keeping its history: the core's `retune`
    /// (tokens, stamps in the window, the open period and its count).
    ///
    /// A limit this one cannot be retuned to ([`Limit::retunes_to`]) is the caller's to
    /// refuse beforehand; given one anyway, the limiter stays as it is.
    pub(super) fn retune(&mut self, limit: &Limit, now: Duration) {
        match (self, *limit) {
            (Self::Bucket(bucket), Limit::Bucket { rate, burst }) => {
                bucket.retune(rate, burst, now);
            }
            (Self::Sliding(sliding), Limit::Sliding { quota, window }) => {
                sliding.retune(quota, window, now);
            }
            (Self::Period(period_limit), Limit::Period { quota, period, .. }) => {
                period_limit.retune(quota, period, now);
            }
            _ => {}
        }
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

    /// A take's answer with its wait worked out.
    fn waited(taken: Result<(), Wait>) -> Result<(), Duration> {
        taken.map_err(|wait| wait.get())
    }

    #[test]
    fn a_key_is_idle_once_its_limiter_is_as_good_as_new() {
        assert_eq!(Limit::bucket(4.0, 2.0).idle(), ms(500));
        assert_eq!(Limit::sliding(5, secs(60)).idle(), secs(60));
        assert_eq!(Limit::aligned(5, secs(10)).idle(), secs(10));
    }

    #[test]
    fn idle_reads_parameters_as_the_core_does() {
        assert_eq!(Limit::bucket(0.0, 5.0).idle(), Duration::MAX);
        assert_eq!(Limit::bucket(f64::NAN, 5.0).idle(), Duration::MAX);
        assert_eq!(Limit::bucket(2.0, f64::INFINITY).idle(), Duration::MAX);
        // A burst below 1 is 1.
        assert_eq!(Limit::bucket(2.0, 0.0).idle(), ms(500));
        assert_eq!(
            Limit::sliding(0, Duration::ZERO).idle(),
            Duration::from_nanos(1)
        );
        assert_eq!(
            Limit::period(0, Duration::ZERO).idle(),
            Duration::from_nanos(1)
        );
    }

    #[test]
    fn idle_is_the_cores_answer() {
        // A third of a second is not whole nanoseconds: the core rounds up, so that a bucket
        // left alone this long is full.
        assert_eq!(
            Limit::bucket(3.0, 1.0).idle(),
            Bucket::new(3.0, 1.0, Duration::ZERO).idle()
        );
        assert_eq!(
            Limit::bucket(3.0, 1.0).idle(),
            Duration::from_nanos(333_333_334)
        );
        assert_eq!(
            Limit::sliding(7, ms(1500)).idle(),
            Sliding::new(7, ms(1500)).idle()
        );
        assert_eq!(
            Limit::aligned(7, ms(1500)).idle(),
            Period::aligned(7, ms(1500)).idle()
        );
    }

    #[test]
    fn a_bucket_reports_its_burst_over_its_refill_time() {
        assert_eq!(Limit::bucket(10.0, 20.0).policy(), (20, Some(secs(2))));
        assert_eq!(Limit::bucket(2.0, 2.5).policy(), (2, Some(ms(1250))));
        assert_eq!(Limit::bucket(0.0, 3.0).policy(), (3, None));
        assert_eq!(Limit::bucket(1.0, f64::INFINITY).policy(), (u64::MAX, None));
    }

    #[test]
    fn windows_and_periods_report_their_quota() {
        assert_eq!(Limit::sliding(7, secs(30)).policy(), (7, Some(secs(30))));
        assert_eq!(Limit::period(9, secs(60)).policy(), (9, Some(secs(60))));
    }

    #[test]
    fn a_refusal_says_when_the_next_request_would_pass() {
        let mut bucket = Limiter::new(&Limit::bucket(4.0, 1.0), Duration::ZERO);
        assert!(bucket.take(Duration::ZERO).is_ok());
        assert_eq!(waited(bucket.take(ms(100))), Err(ms(150)));

        let mut sliding = Limiter::new(&Limit::sliding(1, secs(10)), Duration::ZERO);
        assert!(sliding.take(secs(2)).is_ok());
        assert_eq!(waited(sliding.take(secs(5))), Err(secs(7)));

        let mut period = Limiter::new(&Limit::aligned(2, secs(10)), Duration::ZERO);
        assert!(period.take(secs(13)).is_ok());
        // The request that hits the quota is still admitted.
        assert!(period.take(secs(14)).is_ok());
        assert_eq!(waited(period.take(secs(15))), Err(secs(5)));
    }

    // The draft's `r` and `t` of an admission: what is left, and when all of it is back.
    #[test]
    fn an_admission_says_what_is_left_and_when_all_of_it_is_back() {
        // Four a second, a burst of 3: one taken leaves 2 whole tokens, full again in 250 ms.
        let mut bucket = Limiter::new(&Limit::bucket(4.0, 3.0), Duration::ZERO);
        assert_eq!(
            bucket.take_reading(Duration::ZERO, true),
            Ok(Some((2, ms(250))))
        );
        assert_eq!(bucket.take_reading(ms(100), true), Ok(Some((1, ms(400)))));
        // A bucket that never refills is never whole again.
        let mut frozen = Limiter::new(&Limit::bucket(0.0, 2.0), Duration::ZERO);
        assert_eq!(
            frozen.take_reading(secs(1), true),
            Ok(Some((1, Duration::MAX)))
        );

        // A window is whole again one window after its newest stamp: the one just taken.
        let mut sliding = Limiter::new(&Limit::sliding(3, secs(10)), Duration::ZERO);
        assert_eq!(sliding.take_reading(secs(2), true), Ok(Some((2, secs(10)))));
        assert_eq!(sliding.take_reading(secs(7), true), Ok(Some((1, secs(10)))));

        // A period is whole again when it ends.
        let mut period = Limiter::new(&Limit::aligned(2, secs(10)), Duration::ZERO);
        assert_eq!(period.take_reading(secs(13), true), Ok(Some((1, secs(7)))));
        assert_eq!(period.take_reading(secs(14), true), Ok(Some((0, secs(6)))));
    }

    #[test]
    fn only_a_limiter_of_the_same_kind_retunes() {
        let bucket = Limit::bucket(1.0, 1.0);
        assert!(bucket.retunes_to(&Limit::bucket(5.0, 50.0)));
        assert!(!bucket.retunes_to(&Limit::sliding(1, secs(1))));
        assert!(Limit::sliding(1, secs(1)).retunes_to(&Limit::sliding(9, secs(9))));
        assert!(Limit::period(1, secs(1)).retunes_to(&Limit::period(2, secs(2))));
        assert!(Limit::aligned(1, secs(1)).retunes_to(&Limit::aligned(2, secs(2))));
        // The core's `Period` keeps its alignment for life.
        assert!(!Limit::period(1, secs(1)).retunes_to(&Limit::aligned(1, secs(1))));
        assert!(!Limit::aligned(1, secs(1)).retunes_to(&Limit::period(1, secs(1))));
    }

    #[test]
    fn a_retuned_budget_keeps_its_history_and_reports_its_new_terms() {
        let terms = Terms::new(Limit::sliding(3, secs(10)), "api");
        let mut budget = Budget::new(terms.clone(), Duration::ZERO);
        let first = budget.take(secs(1), true).unwrap().unwrap();
        assert_eq!(
            (first.headroom.remaining(), first.headroom.policy()),
            (2, "api")
        );
        assert_eq!(first.policy.unwrap(), r#""api";q=3;w=10"#);
        assert!(budget.take(secs(2), false).unwrap().is_none());
        let lower = terms.retuned(Limit::sliding(2, secs(10))).unwrap();
        budget.retune(lower, secs(3));
        // The two taken fill the new quota: the next is refused under the new terms.
        let refused = budget.take(secs(3), true).unwrap_err();
        assert_eq!((refused.quota(), refused.policy()), (2, "api"));
        assert_eq!(refused.retry_after(), secs(8));
        let mismatch = terms.retuned(Limit::bucket(1.0, 1.0)).unwrap_err();
        assert_eq!(mismatch.in_force(), Limit::sliding(3, secs(10)));
    }

    #[test]
    fn a_limiter_given_another_kind_stays_as_it_is() {
        let mut limiter = Limiter::new(&Limit::period(1, secs(10)), Duration::ZERO);
        assert!(limiter.take(secs(1)).is_ok());
        limiter.retune(&Limit::bucket(100.0, 100.0), secs(2));
        assert_eq!(waited(limiter.take(secs(2))), Err(secs(9)));
    }

    #[test]
    fn a_quota_of_zero_refuses_everything() {
        let mut sliding = Limiter::new(&Limit::sliding(0, secs(1)), Duration::ZERO);
        assert_eq!(waited(sliding.take(Duration::ZERO)), Err(Duration::MAX));
        let mut period = Limiter::new(&Limit::period(0, secs(1)), Duration::ZERO);
        assert_eq!(waited(period.take(ms(300))), Err(secs(1)));
    }
}
