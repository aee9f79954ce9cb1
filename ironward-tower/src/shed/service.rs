//! The service a [`ShedLayer`](crate::ShedLayer) makes.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward::Criticality;
use tower::BoxError;
use tower_service::Service;

use super::future::{Flight, ShedFuture};
use super::shared::Shared;
use crate::criticality::ReadCriticality;
use crate::{Classify, Mode, ShedFailures};

/// A service behind an adaptive load shedder; made by a [`ShedLayer`](crate::ShedLayer), whose
/// docs say what it does.
///
/// The shedder decides in `call`, with the clock and the CPU read at that moment; readiness is
/// the inner service's. A shed request returns a future that fails at once with
/// [`ShedRefused`](crate::ShedRefused), boxed; an admitted request's error is boxed as it is.
/// Every clone, and every service the same layer made, shares one shedder (one
/// [`SharedShedder`](ironward_tokio::SharedShedder) behind an `Arc`: a cool server's requests
/// are let in and recorded without a lock, and the lock a hot one takes is held only to decide
/// and to record, never across an await), so the count in flight is the server's, not one
/// connection's.
///
/// `C` is the classifier; it defaults to [`ShedFailures`], so the common case is written
/// `ShedService<S>` (see [`BreakerService`](crate::BreakerService) for why it is a type
/// parameter). `Q` is where each request's class is read
/// ([`ReadCriticality`](crate::criticality::ReadCriticality)); it defaults to a fixed
/// `Critical`, which decides as go-zero's shedder, without classes.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::SHED;
/// use ironward_tower::{Cpu, ShedLayer, ShedService};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let slow = service_fn(|_request: ()| async {
///     tokio::time::sleep(Duration::from_millis(100)).await;
///     Ok::<_, std::convert::Infallible>(http::Response::new(()))
/// });
/// let mut server: ShedService<_> = ShedLayer::new(SHED, Cpu::fixed(100)).layer(slow);
/// let other = server.clone();
///
/// let call = server.ready().await.unwrap().call(());
/// assert_eq!(other.flying(), 1); // one shedder, seen from the clone
/// call.await.unwrap();
/// assert_eq!(other.flying(), 0);
/// # }
/// ```
pub struct ShedService<S, C = ShedFailures, Q = Criticality> {
    inner: S,
    shared: Arc<Shared<C>>,
    criticality: Q,
}

impl<S, C, Q> ShedService<S, C, Q> {
    pub(crate) fn new(inner: S, shared: Arc<Shared<C>>, criticality: Q) -> Self {
        Self {
            inner,
            shared,
            criticality,
        }
    }

    /// How many requests are in flight: admitted and not yet completed
    /// ([`Shedder::flying`](ironward::Shedder::flying)).
    pub fn flying(&self) -> u64 {
        self.shared.flying()
    }
}

impl<S: Clone, C, Q: Clone> Clone for ShedService<S, C, Q> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
            criticality: self.criticality.clone(),
        }
    }
}

impl<S: fmt::Debug, C: fmt::Debug, Q> fmt::Debug for ShedService<S, C, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShedService")
            .field("inner", &self.inner)
            .field("shared", &self.shared)
            .finish_non_exhaustive()
    }
}

impl<S, C, Q, Request> Service<Request> for ShedService<S, C, Q>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
    C: Classify<S::Response>,
    Q: ReadCriticality<Request>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ShedFuture<S::Future, C>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let class = self.criticality.criticality(&request);
        match self.shared.check(class) {
            Ok(ticket) => {
                self.shared.meter.admitted();
                // In flight before the inner call starts, so that even a panicking `call`
                // lands the ticket as the guard unwinds.
                let flight = Flight::new(ticket, Arc::clone(&self.shared));
                ShedFuture::called(self.inner.call(request), flight)
            }
            Err(reason) => {
                self.shared.refused(&reason);
                match self.shared.meter.mode() {
                    Mode::Enforce => ShedFuture::overloaded(reason),
                    // Not in flight, as the enforcing twin never let it in.
                    Mode::Shadow => ShedFuture::shadowed(self.inner.call(request)),
                }
            }
        }
    }
}
