//! The service a [`LimiterLayer`](crate::LimiterLayer) makes.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward::Criticality;
use ironward_tokio::Admission;

use super::bypass::ReadPass;
use tower::BoxError;
use tower_service::Service;

use super::future::{Flight, LimiterFuture};
use super::shared::Shared;
use crate::classify::{Grade, Overloads};

/// A service behind an adaptive concurrency limit; made by a
/// [`LimiterLayer`](crate::LimiterLayer), whose docs say what it does.
///
/// The limiter decides in `call`, with the request's class read first and the clock read
/// once; readiness is the inner service's. A refused request returns a future that fails at
/// once with [`LimiterRefused`](crate::LimiterRefused), boxed; an admitted request's error
/// is boxed as it is. A request the limiter queues waits in its future, holding the inner
/// service that `poll_ready` made ready (a clone takes its place in this service, as tower's
/// docs advise), and calls it once let in. Every clone, and every service the same layer
/// made, shares one limiter (one [`SharedLimiter`](ironward_tokio::SharedLimiter) behind an `Arc`, its lock held only for
/// each decision), so the count in flight is the server's, not one connection's.
///
/// `C` is the grade (by default [`Overloads`]) and `Q` the criticality source (by default a
/// fixed `Critical`; with a bypass, a [`Bypassing`](super::Bypassing) one, read as a
/// [`Pass`](super::Pass)); both are type parameters for the reason
/// [`BreakerService`](crate::BreakerService) gives: what they read depends on the response
/// and the request type.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::ADAPTIVE;
/// use ironward_tower::{LimiterLayer, LimiterService};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let slow = service_fn(|_request: ()| async {
///     tokio::time::sleep(Duration::from_millis(100)).await;
///     Ok::<_, std::convert::Infallible>(http::Response::new(()))
/// });
/// let mut server: LimiterService<_> = LimiterLayer::new(ADAPTIVE).layer(slow);
/// let other = server.clone();
///
/// let call = server.ready().await.unwrap().call(());
/// assert_eq!(other.flying(), 1); // one limiter, seen from the clone
/// call.await.unwrap();
/// assert_eq!(other.flying(), 0);
/// # }
/// ```
pub struct LimiterService<S, C = Overloads, Q = Criticality> {
    inner: S,
    shared: Arc<Shared<C>>,
    criticality: Q,
}

impl<S, C, Q> LimiterService<S, C, Q> {
    pub(crate) fn new(inner: S, shared: Arc<Shared<C>>, criticality: Q) -> Self {
        Self {
            inner,
            shared,
            criticality,
        }
    }

    /// How many requests are in flight: admitted and not yet completed.
    pub fn flying(&self) -> u32 {
        self.shared.limiter.flying()
    }

    /// The limit now.
    pub fn limit(&self) -> u32 {
        self.shared.limiter.limit()
    }
}

impl<S: Clone, C, Q: Clone> Clone for LimiterService<S, C, Q> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            criticality: self.criticality.clone(),
        }
    }
}

impl<S: fmt::Debug, C, Q> fmt::Debug for LimiterService<S, C, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimiterService")
            .field("inner", &self.inner)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl<S, C, Q, R> Service<R> for LimiterService<S, C, Q>
where
    S: Service<R> + Clone,
    S::Error: Into<BoxError>,
    C: Grade<S::Response>,
    Q: ReadPass<R>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = LimiterFuture<S, R, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: R) -> Self::Future {
        let pass = self.criticality.pass(&mut request);
        match self.shared.admit_at(pass, None) {
            Admission::Admitted(permit) => {
                // In flight before the inner call starts, so that even a panicking `call`
                // settles the permit as the guard unwinds.
                let flight = Flight::new(permit, Arc::clone(&self.shared));
                LimiterFuture::called(self.inner.call(request), flight)
            }
            Admission::Queued(waiter) => {
                // The ready service waits with the request; a clone, not yet ready, stays.
                let clone = self.inner.clone();
                let ready = std::mem::replace(&mut self.inner, clone);
                LimiterFuture::waiting(waiter, ready, request, Arc::clone(&self.shared))
            }
            Admission::Refused(refusal) => LimiterFuture::refused(refusal),
        }
    }
}
