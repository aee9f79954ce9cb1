//! [`Tuner`]: retunes every piece of a [`Pipeline`](super::Pipeline) live, from one handle.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward::Adaptive;
use ironward::retry::Rules;

use crate::call::hedge::Tuning;
use crate::call::{Admit, Breaker, Gate, Hedge, RateLimit, Retry, Timeout};
use crate::{Queue, Quota, SharedCircuitBreaker, SharedLimiter};

/// What the tuner asks of a breaker whatever its classifier: the classifier stays out of
/// the tuner's type.
pub(super) trait BreakerTune<P>: Send + Sync {
    fn retune(&self, policy: P) -> P;
}

impl<B: SharedCircuitBreaker, C: Send + Sync> BreakerTune<B::Policy> for Breaker<B, C> {
    fn retune(&self, policy: B::Policy) -> B::Policy {
        Breaker::retune(self, policy)
    }
}

/// What the tuner asks of a rate limit whatever its limiter: the limiter stays out of the
/// tuner's type.
pub(super) trait RateTune: Send + Sync {
    fn retune(&self, limit: Quota) -> Result<Quota, Quota>;
}

impl<A: Admit> RateTune for RateLimit<A> {
    fn retune(&self, limit: Quota) -> Result<Quota, Quota> {
        let before = self.limit();
        RateLimit::retune(self, limit).map(|()| before)
    }
}

/// Changes the pieces of a [`Pipeline`](super::Pipeline) in place, for a configuration
/// reload: every clone of the pipeline sees the change on its next call, and each piece
/// keeps its state (the breaker's record, the calls inside the gate or the limiter).
///
/// Made by [`Pipeline::tuner`](super::Pipeline::tuner); `P` is the breaker's policy
/// ([`Classic`](ironward::Classic), [`Sre`](ironward::Sre)), [`Infallible`] for a pipeline
/// without a breaker. Each `retune_*` calls the piece's own retune
/// ([`Retry::retune`], [`Hedge::retune`], [`RateLimit::retune`], [`Breaker::retune`],
/// [`Timeout::retune`], [`Gate::retune`], [`SharedLimiter::retune`],
/// [`SharedLimiter::retune_queue`]) and returns what it replaced,
/// or `None`, changing nothing, when the pipeline has no such piece. A call under way keeps
/// the retry rules, the hedge's tuning and the timeout it started with; the rate limit, the
/// breaker, the gate and the limiter decide each call wholly under the old or wholly under
/// the new.
///
/// It holds the pieces' shared handles, so it is cheap to clone, `Send` and `Sync`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::{Gate, Pipeline, Timeout};
///
/// let pipeline = Pipeline::builder().gate(Gate::new(8)).timeout(Timeout::new(Duration::from_secs(2))).build();
/// let tuner = pipeline.tuner();
/// assert_eq!(tuner.retune_timeout(Duration::from_secs(1)), Some(Duration::from_secs(2)));
/// assert_eq!(tuner.retune_gate(16), Some(8));
/// assert_eq!(tuner.retune_retry(Default::default()), None, "no retry to retune");
/// assert_eq!(pipeline.timeout().budget(), Duration::from_secs(1));
/// ```
pub struct Tuner<P = Infallible> {
    pub(super) retry: Option<Retry>,
    pub(super) hedge: Option<Hedge>,
    pub(super) rate: Option<Arc<dyn RateTune>>,
    pub(super) gate: Option<Gate>,
    pub(super) limiter: Option<SharedLimiter>,
    pub(super) breaker: Option<Arc<dyn BreakerTune<P>>>,
    pub(super) timeout: Option<Timeout>,
}

impl<P> Tuner<P> {
    /// A tuner of nothing, which the pipeline's pieces fill.
    pub(super) fn empty() -> Self {
        Self {
            retry: None,
            hedge: None,
            rate: None,
            gate: None,
            limiter: None,
            breaker: None,
            timeout: None,
        }
    }

    /// The retry's rules from its next call on ([`Retry::retune`]); the rules replaced.
    pub fn retune_retry(&self, rules: Rules) -> Option<Rules> {
        self.retry.as_ref().map(|retry| retry.retune(rules))
    }

    /// The hedge's delay and most attempts from its next call on ([`Hedge::retune`]); the
    /// tuning replaced.
    pub fn retune_hedge(&self, tuning: Tuning) -> Option<Tuning> {
        self.hedge.as_ref().map(|hedge| hedge.retune(tuning))
    }

    /// The rate limit's limit ([`RateLimit::retune`], keeping what its limiter has counted):
    /// `Ok` with the limit replaced, or `Err` with `limit` handed back and nothing changed
    /// (a limit of another kind, or a limiter whose limit is fixed).
    pub fn retune_rate(&self, limit: Quota) -> Option<Result<Quota, Quota>> {
        self.rate.as_ref().map(|rate| rate.retune(limit))
    }

    /// The gate's limit ([`Gate::retune`]); the limit replaced.
    pub fn retune_gate(&self, limit: u32) -> Option<u32> {
        self.gate.as_ref().map(|gate| gate.retune(limit))
    }

    /// The limiter's policy ([`SharedLimiter::retune`]); the policy replaced.
    pub fn retune_limiter(&self, policy: Adaptive) -> Option<Adaptive> {
        self.limiter.as_ref().map(|limiter| limiter.retune(policy))
    }

    /// The limiter's queue ([`SharedLimiter::retune_queue`], `None` for none); the queue
    /// replaced, itself `None` if it had none.
    pub fn retune_queue(&self, queue: Option<Queue>) -> Option<Option<Queue>> {
        self.limiter
            .as_ref()
            .map(|limiter| limiter.retune_queue(queue))
    }

    /// The breaker's policy ([`Breaker::retune`]); the policy replaced.
    pub fn retune_breaker(&self, policy: P) -> Option<P> {
        self.breaker.as_ref().map(|breaker| breaker.retune(policy))
    }

    /// The timeout's budget from its next call on ([`Timeout::retune`]); the budget
    /// replaced.
    pub fn retune_timeout(&self, budget: Duration) -> Option<Duration> {
        self.timeout.as_ref().map(|timeout| timeout.retune(budget))
    }
}

impl<P> Clone for Tuner<P> {
    fn clone(&self) -> Self {
        Self {
            retry: self.retry.clone(),
            hedge: self.hedge.clone(),
            rate: self.rate.clone(),
            gate: self.gate.clone(),
            limiter: self.limiter.clone(),
            breaker: self.breaker.clone(),
            timeout: self.timeout.clone(),
        }
    }
}

impl<P> fmt::Debug for Tuner<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tuner")
            .field("retry", &self.retry)
            .field("hedge", &self.hedge)
            .field("rate", &self.rate.is_some())
            .field("gate", &self.gate)
            .field("limiter", &self.limiter)
            .field("breaker", &self.breaker.is_some())
            .field("timeout", &self.timeout)
            .finish()
    }
}
