//! [`ClientService`]: each call's deadline started, and its first attempt decided on one
//! clock reading.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use ironward_tokio::SharedCircuitBreaker;
use tower::BoxError;
use tower_service::Service;

use super::future::{ClientFuture, Trip};
use super::layer::Pieces;
use crate::classify::Grade;
use crate::deadline::{Start, start};
use crate::limiter::ReadPass;
use crate::retry::ClassifyError;
use crate::{Classify, DeadlineFuture};

/// The service a [`ClientLayer`](crate::ClientLayer) makes: each call under the deadline,
/// retried, each attempt asked of the breaker and held to the limiter, in
/// [that order](super#the-order).
///
/// `call` starts the deadline, reads the clock once, and on that reading starts the retry's
/// run and decides the first attempt's breaker and limiter; the call then runs in one
/// [`ClientFuture`]. Readiness is the inner service's. The inner service is an HTTP client,
/// as [`HttpRetryService`](crate::HttpRetryService)'s is: requests `http::Request<B>` with a
/// body `B: Clone` (each retry sends a copy), responses `http::Response<_>`, cloned once a
/// call (the call's future drives its clone's readiness before each retry).
///
/// Its error is `tower::BoxError`, as each layer's is: the typed refusal of the piece that
/// refused ([`DeadlineExceeded`](crate::DeadlineExceeded),
/// [`BreakerRefused`](crate::BreakerRefused), [`LimiterRefused`](crate::LimiterRefused)) or
/// the inner service's error, and, with a retry, whatever ended the run inside a
/// [`GaveUp`](crate::GaveUp), in the shape the layers stacked by hand in this order return
/// them ([`super`] says why).
pub struct ClientService<S, F, BC, BB: SharedCircuitBreaker, LC, LQ> {
    inner: S,
    pieces: Arc<Pieces<F, BC, BB, LC, LQ>>,
}

impl<S, F, BC, BB: SharedCircuitBreaker, LC, LQ> ClientService<S, F, BC, BB, LC, LQ> {
    pub(super) fn new(inner: S, pieces: Arc<Pieces<F, BC, BB, LC, LQ>>) -> Self {
        Self { inner, pieces }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: Clone, F, BC, BB: SharedCircuitBreaker, LC, LQ> Clone
    for ClientService<S, F, BC, BB, LC, LQ>
{
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            pieces: Arc::clone(&self.pieces),
        }
    }
}

impl<S: fmt::Debug, F, BC, BB: SharedCircuitBreaker, LC, LQ> fmt::Debug
    for ClientService<S, F, BC, BB, LC, LQ>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientService")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, B, ResB, F, BC, BB, LC, LQ> Service<Request<B>> for ClientService<S, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>, Response = Response<ResB>> + Clone,
    S::Error: Into<BoxError>,
    B: Clone,
    F: ClassifyError<S::Error>,
    BC: Classify<Response<ResB>>,
    BB: SharedCircuitBreaker,
    LC: Grade<Response<ResB>>,
    LQ: ReadPass<Request<B>>,
{
    type Response = Response<ResB>;
    type Error = BoxError;
    type Future = ClientFuture<S, B, F, BC, BB, LC, LQ>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let pieces = &self.pieces;
        // The deadline first: its budget is the whole call's, retries and waits included.
        let started = pieces.deadline.as_ref().map(|(budget, extension, meter)| {
            (start(budget, *extension, meter, &mut request, None), meter)
        });
        if let Some((Start::Exceeded, _)) = started {
            return ClientFuture::new(DeadlineFuture::exceeded());
        }
        // The ready service goes with the call; a clone, not yet ready, stays.
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        let trip = Trip::start(ready, request, Arc::clone(pieces));
        let future = match started {
            None => DeadlineFuture::bare(trip),
            Some((Start::Run { end, budget }, meter)) => {
                DeadlineFuture::new(trip, end, budget, meter)
            }
            Some((Start::Shadowed | Start::Exceeded, _)) => DeadlineFuture::shadowed(trip),
        };
        ClientFuture::new(future)
    }
}
