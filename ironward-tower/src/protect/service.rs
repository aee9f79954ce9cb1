//! [`ProtectService`]: every piece decided on one clock reading, in the stack's order.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use http::Request;
use ironward_tokio::Admission;
use tower::BoxError;
use tower_service::Service;

use super::future::{Hold, ProtectFuture, Settled};
use super::layer::{Concurrency, Pieces};
use crate::classify::Grade;
use crate::criticality::ReadCriticality;
use crate::http::Format;
use crate::limiter::ReadPass;
use crate::{Classify, GateFull, Limited, LimiterRefused, Mode, ShedRefused};

/// The service a [`ProtectLayer`](crate::ProtectLayer) makes: never fails, answering each
/// refusal with the response [`handle_error`](crate::axum::handle_error) gives it.
///
/// `call` reads the clock once and decides the shedder, the rate limit and the concurrency
/// limit on that reading, in that order, stopping at the first refusal; an admitted request
/// runs under the deadline in one [`ProtectFuture`]. Readiness is the inner service's. The
/// inner service is an axum route or anything like it: requests `http::Request<B>`,
/// responses `axum::response::Response`, and no error. It is cloned only for a request the
/// limiter queues, which waits with a clone of its own, as [`LimiterService`](crate::LimiterService)'s does.
pub struct ProtectService<S, SC, SQ, LC, LQ> {
    inner: S,
    pieces: Arc<Pieces<SC, SQ, LC, LQ>>,
}

impl<S, SC, SQ, LC, LQ> ProtectService<S, SC, SQ, LC, LQ> {
    pub(super) fn new(inner: S, pieces: Arc<Pieces<SC, SQ, LC, LQ>>) -> Self {
        Self { inner, pieces }
    }
}

impl<S: Clone, SC, SQ, LC, LQ> Clone for ProtectService<S, SC, SQ, LC, LQ> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            pieces: Arc::clone(&self.pieces),
        }
    }
}

impl<S: fmt::Debug, SC, SQ, LC, LQ> fmt::Debug for ProtectService<S, SC, SQ, LC, LQ> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectService")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, B, SC, SQ, LC, LQ> Service<Request<B>> for ProtectService<S, SC, SQ, LC, LQ>
where
    S: Service<Request<B>, Response = Response, Error = Infallible> + Clone,
    SC: Classify<Response>,
    SQ: ReadCriticality<Request<B>>,
    LC: Grade<Response>,
    LQ: ReadPass<Request<B>>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ProtectFuture<S, B, SC, SQ, LC, LQ>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let pieces = &*self.pieces;
        let now = pieces.clock.as_ref().map(ironward_tokio::Clock::now);
        let mut settled = Settled::new(Arc::clone(&self.pieces));
        // Shed first: the cheapest refusal, made before anything is taken.
        if let Some((shared, criticality)) = &pieces.shed {
            let class = criticality.criticality(&request);
            match shared.check_at(now.unwrap_or_default(), class) {
                Ok(ticket) => {
                    shared.meter.admitted();
                    settled.shed = Some(ticket);
                }
                Err(reason) => {
                    shared.refused(&reason);
                    if shared.mode() == Mode::Enforce {
                        let refused: BoxError = Box::new(ShedRefused::new(reason));
                        return ProtectFuture::refused(settled, &request, refused, now);
                    }
                }
            }
        }
        // The rate limit second: a client over its quota spends no concurrency.
        if let Some(shared) = &pieces.quota {
            match shared.take(&mut request, now.unwrap_or_default()) {
                Ok(stamp) => settled.stamp = stamp.map(Box::new),
                Err(limited) => {
                    let refused: BoxError = Box::<Limited>::new(limited);
                    return ProtectFuture::refused(settled, &request, refused, now);
                }
            }
        }
        // The concurrency limit third, its permit held from here to the response.
        match &pieces.concurrency {
            Concurrency::Unlimited => {}
            Concurrency::Limiter((shared, source)) => {
                let pass = source.pass(&mut request);
                match shared.admit_at(pass, now) {
                    Admission::Admitted(permit) => {
                        settled.hold =
                            Hold::Limiter(crate::limiter::Flight::new(permit, Arc::clone(shared)));
                    }
                    Admission::Queued(waiter) => {
                        // The ready service waits with the request; a clone, not yet ready,
                        // stays.
                        let clone = self.inner.clone();
                        let ready = std::mem::replace(&mut self.inner, clone);
                        return ProtectFuture::waiting(settled, waiter, ready, request);
                    }
                    Admission::Refused(refusal) => {
                        let refused: BoxError = Box::new(LimiterRefused::new(refusal));
                        return ProtectFuture::refused(settled, &request, refused, now);
                    }
                }
            }
            Concurrency::Gate((gate, meter)) => match gate.check() {
                Ok(()) => {
                    meter.admitted();
                    settled.hold = Hold::Gate;
                }
                Err(reason) => {
                    crate::gate::refused(meter, &reason);
                    if meter.mode() == Mode::Enforce {
                        let refused: BoxError = Box::new(GateFull::new(reason));
                        return ProtectFuture::refused(settled, &request, refused, now);
                    }
                }
            },
        }
        // The deadline last, around the handler alone.
        ProtectFuture::run(settled, &mut self.inner, request, now)
    }
}

/// The format a refusal of `request` is answered in.
pub(super) fn format_of<B>(request: &Request<B>) -> Format {
    Format::from_accept(request.headers())
}

/// The response [`handle_error`](crate::axum::handle_error) gives `refused`, as `request`
/// asks for it.
pub(super) fn answer(refused: &BoxError, format: Format) -> Response<Body> {
    crate::axum::respond(refused, format)
}
