//! The service a [`BreakerLayer`](crate::BreakerLayer) makes.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward_tokio::{SharedBreaker, SharedCircuitBreaker};
use tower::BoxError;
use tower_service::Service;

use super::future::BreakerFuture;
use crate::meter::{Level, Meter};
use crate::tuner::Tune;
use crate::{Classify, Clock, Dice, HttpFailures, Mode};

/// A service behind an SRE circuit breaker; made by a [`BreakerLayer`](crate::BreakerLayer),
/// whose docs say what it does and where it belongs.
///
/// The breaker decides in `call`, with the clock and the draw read at that moment; readiness is
/// the inner service's. A refused call returns a future that fails at once with
/// [`BreakerRefused`](crate::BreakerRefused), boxed; an admitted call's error is boxed as it
/// is, so the caller can downcast it. Every clone, and every service the same layer made,
/// shares one breaker: an [`ironward_tokio::SharedBreaker`] behind an `Arc`, which lets a
/// healthy backend's calls through and records their successes without a lock (one load to
/// decide, an add to the thread's stripe to record), and takes its lock for the rest, never
/// across an await. It decides exactly as one [`ironward::Breaker`] would; its docs say
/// what may differ between calls that overlap.
///
/// The clock is read twice a call, when it is decided and when it completes: an outcome is
/// news about the backend at the time it is seen, and a call that fails after a 30 s timeout
/// belongs to the bucket it failed in.
///
/// `C` is the classifier; it defaults to [`HttpFailures`], so the common case is written
/// `BreakerService<S>`. It is a type parameter rather than a boxed value because what it reads
/// depends on the response type: boxing it would put that type in the service's name instead,
/// and the ready-made classifiers are zero-sized. `B` is the shared breaker, by default the
/// SRE one ([`SharedBreaker`]); see [`BreakerLayer::for_breaker`](crate::BreakerLayer::for_breaker).
///
/// # Examples
///
/// ```
/// use http::{Response, StatusCode};
/// use ironward::SRE;
/// use ironward_tower::{BreakerLayer, BreakerService, Dice};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let backend = service_fn(|_request: ()| async {
///     Response::builder().status(StatusCode::BAD_GATEWAY).body(())
/// });
/// let client: BreakerService<_> = BreakerLayer::new(SRE).with_dice(Dice::seeded(1)).layer(backend);
/// let other = client.clone();
/// assert_eq!(other.ratio(), 0.0);
/// for _ in 0..50 {
///     let _ = client.clone().oneshot(()).await;
/// }
/// // The 502s went on one record, which the clone reads.
/// assert!(other.ratio() > 0.5);
/// # }
/// ```
pub struct BreakerService<S, C = HttpFailures, B: SharedCircuitBreaker = SharedBreaker> {
    inner: S,
    shared: Arc<Shared<C, B>>,
}

impl<S, C, B: SharedCircuitBreaker> BreakerService<S, C, B> {
    pub(crate) fn new(inner: S, shared: Arc<Shared<C, B>>) -> Self {
        Self { inner, shared }
    }

    /// The fraction of calls the breaker would refuse now, zero while the backend is healthy
    /// ([`Breaker::ratio`](ironward::Breaker::ratio): the standing throttle, without the probe),
    /// for a dashboard or an alert.
    pub fn ratio(&self) -> f64 {
        self.shared.ratio()
    }
}

impl<S: Clone, C, B: SharedCircuitBreaker> Clone for BreakerService<S, C, B> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<S: fmt::Debug, C: fmt::Debug, B> fmt::Debug for BreakerService<S, C, B>
where
    B: SharedCircuitBreaker + fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerService")
            .field("inner", &self.inner)
            .field("shared", &self.shared)
            .finish()
    }
}

impl<S, C, B, Request> Service<Request> for BreakerService<S, C, B>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    C: Classify<S::Response>,
    B: SharedCircuitBreaker,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BreakerFuture<S::Future, C, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self.shared.check() {
            Ok(permit) => {
                self.shared.meter.admitted();
                BreakerFuture::called(self.inner.call(request), permit, Arc::clone(&self.shared))
            }
            Err(reason) => {
                self.shared.refused(&reason);
                match self.shared.meter.mode() {
                    Mode::Enforce => BreakerFuture::refused(reason),
                    // No permit: the enforcing twin never ran the call, so nothing of it is
                    // recorded.
                    Mode::Shadow => BreakerFuture::shadowed(self.inner.call(request)),
                }
            }
        }
    }
}

/// What every clone of one service shares: the breaker, its sources, its classifier and the
/// handles it reports through.
#[derive(Debug)]
pub(crate) struct Shared<C, B = SharedBreaker> {
    breaker: B,
    clock: Clock,
    dice: Dice,
    classify: C,
    meter: Meter,
    ratio: Level,
}

impl<C, B: SharedCircuitBreaker> Shared<C, B> {
    pub(crate) fn new(
        breaker: B,
        clock: Clock,
        dice: Dice,
        classify: C,
        name: &'static str,
        mode: Mode,
    ) -> Self {
        Self {
            breaker,
            clock,
            dice,
            classify,
            meter: Meter::new("breaker", name, B::REFUSALS, mode),
            ratio: Level::breaker_ratio(name),
        }
    }

    /// Registers the breaker's metrics, if they are not yet: when its layer makes a service,
    /// its name final.
    pub(crate) fn register(&self) {
        self.meter.register();
        self.ratio.register();
    }

    /// The name the breaker reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.meter.name()
    }

    /// Whether the breaker enforces its refusals or only reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.meter.mode()
    }

    /// Reports a refusal (or, in shadow mode, a would-be refusal): the counter under the
    /// reason's label, the share of calls the breaker refused then, and a debug event with
    /// the numbers that decided it.
    fn refused(&self, reason: &B::Reason) {
        let kind = B::refusal(reason);
        self.meter.refused(kind);
        self.ratio.set(B::ratio_of(reason));
        tracing::debug!(
            name = self.meter.name(),
            outcome = self.meter.refusal(),
            reason = B::REFUSALS[kind],
            numbers = ?reason,
            "breaker refused a call"
        );
    }

    /// Asks the breaker for a call now, with the numbers behind a refusal
    /// ([`SharedCircuitBreaker::check`]; for [`SharedBreaker`] one load while the backend is
    /// healthy).
    fn check(&self) -> Result<B::Permit, B::Reason> {
        let now = self.clock.now();
        let roll = self.dice.roll();
        self.breaker.check(now, roll)
    }

    /// Records the call behind `permit` as the classifier reads `result`, now.
    pub(crate) fn settle<Res>(&self, permit: B::Permit, result: &Result<Res, BoxError>)
    where
        C: Classify<Res>,
    {
        let failed = self.classify.is_failure(result);
        let now = self.clock.now();
        // The layer's own breaker made the permit: nothing comes back.
        let _ = if failed {
            self.breaker.fail(permit, now)
        } else {
            self.breaker.pass(permit, now)
        };
    }

    /// The clock and the dice, for a layer made anew on them.
    pub(crate) fn sources(&self) -> (Clock, Dice) {
        (self.clock.clone(), self.dice.clone())
    }

    /// The classifier, for a layer made anew with it.
    pub(crate) fn classifier(&self) -> &C {
        &self.classify
    }

    /// The policy the breaker runs, for a tuner and for a layer made anew under it.
    pub(crate) fn policy(&self) -> B::Policy {
        self.breaker.policy()
    }

    /// The standing throttle now.
    pub(crate) fn ratio(&self) -> f64 {
        self.breaker.ratio(self.clock.now())
    }
}

impl<C: Send + Sync, B: SharedCircuitBreaker> Tune<B::Policy> for Shared<C, B> {
    fn retune(&self, policy: B::Policy) -> B::Policy {
        let was = self.breaker.retune(policy.clone(), self.clock.now());
        tracing::debug!(from = ?was, to = ?policy, "breaker retuned");
        was
    }

    fn policy(&self) -> B::Policy {
        Shared::policy(self)
    }
}
