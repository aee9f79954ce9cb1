//! The service a [`BreakerLayer`](crate::BreakerLayer) makes.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward_tokio::{SharedCircuitBreaker, SharedSreBreaker};
use tower::BoxError;
use tower_service::Service;

use super::future::BreakerFuture;
use super::shared::Shared;
use crate::{Classify, HttpFailures, Mode};

/// A service behind a circuit breaker (by default the SRE one); made by a
/// [`BreakerLayer`](crate::BreakerLayer), whose docs say what it does and where it belongs.
///
/// The breaker decides in `call`, with the clock and the draw read at that moment; readiness is
/// the inner service's. A refused call returns a future that fails at once with
/// [`BreakerRefused`](crate::BreakerRefused), boxed; an admitted call's error is boxed as it
/// is, so the caller can downcast it. Every clone, and every service the same layer made,
/// shares one breaker: an [`ironward_tokio::SharedSreBreaker`] behind an `Arc`, which lets a
/// healthy backend's calls through and records their successes without a lock (one load to
/// decide, an add to the thread's stripe to record), and takes its lock for the rest, never
/// across an await. It decides exactly as one [`ironward::SreBreaker`] would; its docs say
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
/// SRE one ([`SharedSreBreaker`]); see [`BreakerLayer::for_breaker`](crate::BreakerLayer::for_breaker).
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
pub struct BreakerService<S, C = HttpFailures, B: SharedCircuitBreaker = SharedSreBreaker> {
    inner: S,
    shared: Arc<Shared<C, B>>,
}

impl<S, C, B: SharedCircuitBreaker> BreakerService<S, C, B> {
    pub(crate) fn new(inner: S, shared: Arc<Shared<C, B>>) -> Self {
        Self { inner, shared }
    }

    /// The fraction of calls the breaker would refuse now, zero while the backend is healthy
    /// ([`SreBreaker::ratio`](ironward::SreBreaker::ratio): the standing throttle, without the probe),
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
