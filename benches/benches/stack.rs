//! The cost of one request through a whole server stack: ironward-tower's `ProtectLayer`
//! (`ironward/<case>`: shed, quota, gate, deadline as one layer, one future, one clock
//! reading), the same four ironward layers stacked one by one behind axum's
//! `HandleErrorLayer` (`layers/<case>`: what an axum app wrote before the stack), and tower's
//! `LoadShed + RateLimit + ConcurrencyLimit + Timeout` (`tower/<case>`).
//!
//! Driven by hand as `layers.rs` drives its rows (`poll_ready`, `call`, one poll, a no-op
//! waker, a tokio runtime entered for the deadline's timer and never run). The inner service
//! answers at once with an empty axum response, the response type the stack serves.
//!
//! Allowed: a cool CPU, a bucket of a billion a second, a gate of a million, a one-second
//! deadline; tower's rate of `u64::MAX` an hour. Refused: the gate at 0 (tower: a concurrency
//! limit of 0 behind `LoadShed`). ironward's refused rows build the 503 a client receives,
//! its body included; tower's returns its zero-sized `Overloaded` error, which an axum app
//! would still have to turn into a response.

mod common;

use common::group;

use std::convert::Infallible;
use std::future::{Future, Ready, ready};
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::response::Response;
use criterion::Criterion;
use http::{Request, StatusCode};
use ironward::SHED;
use ironward::classic::Force;
use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, CLASSIC, Classic};
use ironward_tokio::SharedClassicBreaker;
use ironward_tower::{BreakerLayer, ClientLayer, HttpFailures, HttpRetryLayer, LimiterLayer};
use ironward_tower::{Cpu, DeadlineLayer, GateLayer, ProtectLayer, Quota, QuotaLayer, ShedLayer};
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer};
use tower::load_shed::LoadShedLayer;
use tower::retry::RetryLayer;
use tower::timeout::TimeoutLayer;
use tower::{Layer, Service, ServiceBuilder, service_fn};

/// The handler: an empty `200 OK` axum response, ready at once.
fn answer(_request: Request<Body>) -> Ready<Result<Response, Infallible>> {
    ready(Ok(Response::new(Body::empty())))
}

/// One request through `service`, by hand; its status, or `None` when not ready or failed.
fn send<S: Service<Request<Body>, Response = Response>>(service: &mut S) -> Option<StatusCode> {
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        _ => return None,
    }
    let mut future = pin!(service.call(black_box(Request::new(Body::empty()))));
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(Ok(response)) => Some(response.status()),
        Poll::Ready(Err(_)) => None,
        Poll::Pending => panic!("a response future waited on the inner service"),
    }
}

/// The four ironward pieces, the gate's room `gate`.
fn pieces(gate: u32) -> (ShedLayer, QuotaLayer, GateLayer, DeadlineLayer) {
    (
        ShedLayer::new(SHED, Cpu::fixed(0)),
        QuotaLayer::new(Quota::bucket(1e9, 1e9)),
        GateLayer::new(gate),
        DeadlineLayer::new(Duration::from_secs(1)),
    )
}

fn stack(c: &mut Criterion) {
    let mut g = group(c, "layer_stack");
    for (case, gate, status) in [
        ("allowed", 1_000_000, StatusCode::OK),
        ("refused", 0, StatusCode::SERVICE_UNAVAILABLE),
    ] {
        g.bench_function(format!("ironward/{case}"), |b| {
            let (shed, quota, gate, deadline) = pieces(gate);
            let layer = ProtectLayer::new()
                .shed(shed)
                .quota(quota)
                .gate(gate)
                .deadline(deadline);
            let mut service = layer.layer(service_fn(answer));
            assert_eq!(send(&mut service), Some(status));
            b.iter(|| send(&mut service));
            assert_eq!(send(&mut service), Some(status));
        });
        g.bench_function(format!("layers/{case}"), |b| {
            let (shed, quota, gate, deadline) = pieces(gate);
            let mut service = ServiceBuilder::new()
                .layer(HandleErrorLayer::new(ironward_tower::axum::handle_error))
                .layer(shed)
                .layer(quota)
                .layer(gate)
                .layer(deadline)
                .service(service_fn(answer));
            assert_eq!(send(&mut service), Some(status));
            b.iter(|| send(&mut service));
            assert_eq!(send(&mut service), Some(status));
        });
    }
    for (case, limit) in [("allowed", usize::MAX >> 4), ("refused", 0)] {
        g.bench_function(format!("tower/{case}"), |b| {
            let mut service = ServiceBuilder::new()
                .layer(LoadShedLayer::new())
                .layer(RateLimitLayer::new(u64::MAX, Duration::from_secs(3600)))
                .layer(ConcurrencyLimitLayer::new(limit))
                .layer(TimeoutLayer::new(Duration::from_secs(1)))
                .service(service_fn(answer));
            let expected = (limit > 0).then_some(StatusCode::OK);
            assert_eq!(send(&mut service), expected);
            b.iter(|| send(&mut service));
            assert_eq!(send(&mut service), expected);
        });
    }
    g.finish();
}

/// The backend of the client stack: an empty `200 OK`, ready at once.
fn backend(_request: Request<()>) -> Ready<Result<http::Response<()>, Infallible>> {
    ready(Ok(http::Response::new(())))
}

/// One call through a client `service`, by hand as [`send`] does; its status, or `None`
/// when not ready or refused.
fn call<S>(service: &mut S) -> Option<StatusCode>
where
    S: Service<Request<()>, Response = http::Response<()>>,
{
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        _ => return None,
    }
    let mut future = pin!(service.call(black_box(Request::new(()))));
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(Ok(response)) => Some(response.status()),
        Poll::Ready(Err(_)) => None,
        Poll::Pending => panic!("a response future waited on the inner service"),
    }
}

/// The four client pieces of ironward: a one-second deadline, the default retry with a
/// one-second attempt timeout, a classic breaker (forced open to refuse) and a limiter of
/// a million.
fn client_pieces(
    open: bool,
) -> (
    DeadlineLayer,
    HttpRetryLayer,
    BreakerLayer<HttpFailures, SharedClassicBreaker>,
    LimiterLayer,
) {
    let force = if open { Force::Open } else { Force::None };
    let limit = Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: 1_000_000,
            max: 1_000_000,
            ..AIMD
        }),
        ..ADAPTIVE
    };
    (
        DeadlineLayer::new(Duration::from_secs(1)),
        HttpRetryLayer::default().with_attempt_timeout(Duration::from_secs(1)),
        BreakerLayer::new(Classic { force, ..CLASSIC }),
        LimiterLayer::new(limit),
    )
}

/// tower's retry of a 5xx, three times, as the default `HttpRetryLayer` retries it.
#[derive(Clone)]
struct Retries(u32);

impl<E> tower::retry::Policy<Request<()>, http::Response<()>, E> for Retries {
    type Future = Ready<()>;

    fn retry(
        &mut self,
        _request: &mut Request<()>,
        result: &mut Result<http::Response<()>, E>,
    ) -> Option<Self::Future> {
        let failed = result
            .as_ref()
            .map_or(true, |r| r.status().is_server_error());
        (failed && self.0 > 0).then(|| {
            self.0 -= 1;
            ready(())
        })
    }

    fn clone_request(&mut self, request: &Request<()>) -> Option<Request<()>> {
        let mut copy = Request::new(());
        *copy.method_mut() = request.method().clone();
        *copy.uri_mut() = request.uri().clone();
        *copy.headers_mut() = request.headers().clone();
        Some(copy)
    }
}

/// The cost of one call through a whole client stack: `ClientLayer` (`ironward/<case>`:
/// deadline, retry, breaker, limiter as one layer, one future, one clock reading a side),
/// the same four layers stacked one by one (`layers/<case>`), and tower's `LoadShed +
/// Timeout + Retry + Timeout + ConcurrencyLimit` (`tower/<case>`). Allowed: a healthy
/// backend; refused: ironward's breaker forced open, tower's concurrency limit of 0 behind
/// `LoadShed`.
fn client_stack(c: &mut Criterion) {
    let mut g = group(c, "client_stack");
    for (case, open) in [("allowed", false), ("refused", true)] {
        let expected = (!open).then_some(StatusCode::OK);
        g.bench_function(format!("ironward/{case}"), |b| {
            let (deadline, retry, breaker, limiter) = client_pieces(open);
            let layer = ClientLayer::new()
                .deadline(deadline)
                .retry(retry)
                .breaker(breaker)
                .limiter(limiter);
            let mut service = layer.layer(service_fn(backend));
            assert_eq!(call(&mut service), expected);
            b.iter(|| call(&mut service));
            assert_eq!(call(&mut service), expected);
        });
        g.bench_function(format!("layers/{case}"), |b| {
            let (deadline, retry, breaker, limiter) = client_pieces(open);
            let mut service = ServiceBuilder::new()
                .layer(deadline)
                .layer(retry)
                .layer(breaker)
                .layer(limiter)
                .service(service_fn(backend));
            assert_eq!(call(&mut service), expected);
            b.iter(|| call(&mut service));
            assert_eq!(call(&mut service), expected);
        });
    }
    for (case, limit) in [("allowed", usize::MAX >> 4), ("refused", 0)] {
        g.bench_function(format!("tower/{case}"), |b| {
            let mut service = ServiceBuilder::new()
                .layer(LoadShedLayer::new())
                .layer(TimeoutLayer::new(Duration::from_secs(1)))
                .layer(RetryLayer::new(Retries(3)))
                .layer(TimeoutLayer::new(Duration::from_secs(1)))
                .layer(ConcurrencyLimitLayer::new(limit))
                .service(service_fn(backend));
            let expected = (limit > 0).then_some(StatusCode::OK);
            assert_eq!(call(&mut service), expected);
            b.iter(|| call(&mut service));
            assert_eq!(call(&mut service), expected);
        });
    }
    g.finish();
}

fn main() {
    // Entered, never run: see `layers.rs`.
    let runtime = common::timer();
    let _context = runtime.enter();
    let mut c = common::criterion();
    stack(&mut c);
    client_stack(&mut c);
    c.final_summary();
}
