//! [`Terms`], [`Budget`] and [`Limiter`]: the one state a [`QuotaLayer`](super::QuotaLayer)
//! keeps per budget, and what it reads from its [`Quota`].

use std::time::Duration;

use http::HeaderValue;
use ironward_tokio::QuotaLimiter;

use super::error::Said;
use super::http::Stamp;
use super::{Headroom, KindMismatch, Limited, Quota};

/// What every budget under one limit reads from it, worked out once per limit rather than
/// once a request: the limit, how long a key may idle, and the refusal to give.
#[derive(Debug, Clone)]
pub(super) struct Terms {
    pub(super) limit: Quota,
    /// [`Quota::idle`].
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
    pub(super) fn new(limit: Quota, policy: &'static str) -> Self {
        let refusal = Limited::for_limit(&limit, Duration::ZERO).named(policy);
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
    pub(super) fn retuned(&self, limit: Quota) -> Result<Self, KindMismatch> {
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

/// The state behind one budget: the core limiter a [`Quota`] names.
#[derive(Debug)]
pub(super) struct Limiter(QuotaLimiter);

impl Limiter {
    /// A fresh limiter for `limit`, its clock at `now`.
    pub(super) fn new(limit: &Quota, now: Duration) -> Self {
        Self(QuotaLimiter::new(limit, now))
    }

    /// Takes one request at `now`, or says how long until one would be admitted.
    ///
    /// The core's `check` decides, and the wait is its reason's: a window's or a period's
    /// `next` as the refusal computed it, a bucket's reason itself, from which
    /// [`BucketReason::next`](ironward::BucketReason::next) works the wait out when it is
    /// asked for, so the wait comes from the same reading as the refusal and costs nothing
    /// until then.
    pub(super) fn take(&mut self, now: Duration) -> Result<(), Wait> {
        match &mut self.0 {
            QuotaLimiter::Bucket(bucket) => bucket.check(now, 1.0).map_err(Wait::Bucket),
            QuotaLimiter::Sliding(sliding) => sliding
                .check(now)
                .map_err(|reason| Wait::Known(reason.next)),
            QuotaLimiter::Period(period) => period
                .check(now)
                .map(drop)
                .map_err(|reason| Wait::Known(reason.next)),
        }
    }

    /// What is left right after a take at `now`, and how long until all of it is back: the
    /// draft's `r` and `t`, read from the core without changing anything.
    pub(super) fn left(&self, now: Duration) -> (u64, Duration) {
        match &self.0 {
            // `as` saturates: an infinite burst holds `u64::MAX` whole tokens.
            QuotaLimiter::Bucket(bucket) => (
                bucket.tokens(now).floor() as u64,
                bucket.next(now, bucket.burst()),
            ),
            // The stamp just taken is the newest: the whole quota is back a window on.
            QuotaLimiter::Sliding(sliding) => (u64::from(sliding.left(now)), sliding.window()),
            QuotaLimiter::Period(period) => (u64::from(period.left(now)), period.next(now)),
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
    /// A limit this one cannot be retuned to ([`Quota::retunes_to`]) is the caller's to
    /// refuse beforehand; given one anyway, the limiter stays as it is.
    pub(super) fn retune(&mut self, limit: &Quota, now: Duration) {
        self.0.retune(limit, now);
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
    fn a_refusal_says_when_the_next_request_would_pass() {
        let mut bucket = Limiter::new(&Quota::bucket(4.0, 1.0), Duration::ZERO);
        assert!(bucket.take(Duration::ZERO).is_ok());
        assert_eq!(waited(bucket.take(ms(100))), Err(ms(150)));

        let mut sliding = Limiter::new(&Quota::sliding(1, secs(10)), Duration::ZERO);
        assert!(sliding.take(secs(2)).is_ok());
        assert_eq!(waited(sliding.take(secs(5))), Err(secs(7)));

        let mut period = Limiter::new(&Quota::aligned(2, secs(10)), Duration::ZERO);
        assert!(period.take(secs(13)).is_ok());
        // The request that hits the quota is still admitted.
        assert!(period.take(secs(14)).is_ok());
        assert_eq!(waited(period.take(secs(15))), Err(secs(5)));
    }

    // The draft's `r` and `t` of an admission: what is left, and when all of it is back.
    #[test]
    fn an_admission_says_what_is_left_and_when_all_of_it_is_back() {
        // Four a second, a burst of 3: one taken leaves 2 whole tokens, full again in 250 ms.
        let mut bucket = Limiter::new(&Quota::bucket(4.0, 3.0), Duration::ZERO);
        assert_eq!(
            bucket.take_reading(Duration::ZERO, true),
            Ok(Some((2, ms(250))))
        );
        assert_eq!(bucket.take_reading(ms(100), true), Ok(Some((1, ms(400)))));
        // A bucket that never refills is never whole again.
        let mut frozen = Limiter::new(&Quota::bucket(0.0, 2.0), Duration::ZERO);
        assert_eq!(
            frozen.take_reading(secs(1), true),
            Ok(Some((1, Duration::MAX)))
        );

        // A window is whole again one window after its newest stamp: the one just taken.
        let mut sliding = Limiter::new(&Quota::sliding(3, secs(10)), Duration::ZERO);
        assert_eq!(sliding.take_reading(secs(2), true), Ok(Some((2, secs(10)))));
        assert_eq!(sliding.take_reading(secs(7), true), Ok(Some((1, secs(10)))));

        // A period is whole again when it ends.
        let mut period = Limiter::new(&Quota::aligned(2, secs(10)), Duration::ZERO);
        assert_eq!(period.take_reading(secs(13), true), Ok(Some((1, secs(7)))));
        assert_eq!(period.take_reading(secs(14), true), Ok(Some((0, secs(6)))));
    }

    #[test]
    fn a_retuned_budget_keeps_its_history_and_reports_its_new_terms() {
        let terms = Terms::new(Quota::sliding(3, secs(10)), "api");
        let mut budget = Budget::new(terms.clone(), Duration::ZERO);
        let first = budget.take(secs(1), true).unwrap().unwrap();
        assert_eq!(
            (first.headroom.remaining(), first.headroom.policy()),
            (2, "api")
        );
        assert_eq!(first.policy.unwrap(), r#""api";q=3;w=10"#);
        assert!(budget.take(secs(2), false).unwrap().is_none());
        let lower = terms.retuned(Quota::sliding(2, secs(10))).unwrap();
        budget.retune(lower, secs(3));
        // The two taken fill the new quota: the next is refused under the new terms.
        let refused = budget.take(secs(3), true).unwrap_err();
        assert_eq!((refused.quota(), refused.policy()), (2, "api"));
        assert_eq!(refused.retry_after(), secs(8));
        let mismatch = terms.retuned(Quota::bucket(1.0, 1.0)).unwrap_err();
        assert_eq!(mismatch.in_force(), Quota::sliding(3, secs(10)));
    }

    #[test]
    fn a_limiter_given_another_kind_stays_as_it_is() {
        let mut limiter = Limiter::new(&Quota::period(1, secs(10)), Duration::ZERO);
        assert!(limiter.take(secs(1)).is_ok());
        limiter.retune(&Quota::bucket(100.0, 100.0), secs(2));
        assert_eq!(waited(limiter.take(secs(2))), Err(secs(9)));
    }

    #[test]
    fn a_quota_of_zero_refuses_everything() {
        let mut sliding = Limiter::new(&Quota::sliding(0, secs(1)), Duration::ZERO);
        assert_eq!(waited(sliding.take(Duration::ZERO)), Err(Duration::MAX));
        let mut period = Limiter::new(&Quota::period(0, secs(1)), Duration::ZERO);
        assert_eq!(waited(period.take(ms(300))), Err(secs(1)));
    }
}
