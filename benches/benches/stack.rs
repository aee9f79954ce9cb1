//! The cost of one request through a whole server stack: ironward-tower's `ProtectLayer`
//! (`ironward/<case>`: shed, quota, gate, deadline as one layer, one future, one clock
//! reading), the same four ironward layers stacked one by one behind axum's
//! `HandleErrorLayer` (`layers/<case>`: what an axum app wrote before the stack), and tower's
//! `LoadShed + RateLimit + ConcurrencyLimit + Timeout` (`tower/<case>`), bare and with the
//! handler an axum app writes to answer its errors (`tower+handle_error`).
//!
//! Driven by hand as `layers.rs` drives its rows (`poll_ready`, `call`, one poll, a no-op
//! waker, a tokio runtime entered for the deadline's timer and never run). The inner service
//! answers at once with an empty axum response, the response type the stack serves.
//!
//! Allowed: a cool CPU, a bucket of a billion a second, a gate of a million, a one-second
//! deadline; tower's rate of `u64::MAX` an hour. Refused: the gate at 0 (tower: a concurrency
//! limit of 0 behind `LoadShed`). ironward's refused rows build the 503 a client receives,
//! its body included; `tower/refused` returns its zero-sized `Overloaded` error, which an axum
//! app would still have to turn into a response: `tower+handle_error/refused` is that
//! response, made by the handler an axum app writes. The stack's refusal by each of its other
//! pieces has a row of its own (`refused_by_shed`, `refused_by_quota`, `refused_by_deadline`),
//! with no peer.
//!
//! Like for like, and where it is not:
//!
//! - **The deadline.** tower's `Timeout` makes a `tokio::time::Sleep` in every `call` (a
//!   clock read and a clone of the runtime's handle, dropped unregistered, since the inner
//!   future answers at once); ironward's makes one only when a poll finds the handler
//!   pending, starts its deadline on the reading its other pieces decided on, and hands the
//!   handler its `RequestDeadline` in the request's extensions, which tower does not: three
//!   allocations on these requests, which carry no extensions, one on an axum route's,
//!   where axum has put `OriginalUri` and `MatchedPath` already.
//! - **The rate limit.** tower's `RateLimit` is on the hot path: every `call` reads
//!   `Instant::now` and counts its window down, in the service itself (`&mut self`, no
//!   atomic). It is not `Clone`, so an axum app (whose router clones its services) puts a
//!   `Buffer` in front of it, a channel to one worker task, which these rows leave out.
//!   ironward's quota is one bucket every clone shares (a compare-and-swap).
//! - **What is measured.** ironward's shedder also reads the clock as the response lands,
//!   for the response time its capacity is learnt from; tower's stack keeps no time.

mod common;

use common::group;

use std::convert::Infallible;
use std::future::{Future, Ready, ready};
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::Body;
use axum::error_handling::HandleErrorLayer;
use axum::response::{IntoResponse, Response};
use criterion::Criterion;
use http::{Request, StatusCode};
use ironward::SHED;
use ironward::classic::Force;
use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, CLASSIC, Classic};
use ironward_tokio::SharedClassicBreaker;
use ironward_tower::{BreakerLayer, ClientLayer, HttpFailures, HttpRetryLayer, LimiterLayer};
use ironward_tower::{
    Cpu, DeadlineLayer, GateLayer, ProtectLayer, Quota, QuotaLayer, RequestDeadline, ShedLayer,
};
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer};
use tower::load_shed::LoadShedLayer;
use tower::load_shed::error::Overloaded;
use tower::retry::RetryLayer;
use tower::timeout::TimeoutLayer;
use tower::timeout::error::Elapsed;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt, service_fn};

/// The handler: an empty `200 OK` axum response, ready at once.
fn answer(_request: Request<Body>) -> Ready<Result<Response, Infallible>> {
    ready(Ok(Response::new(Body::empty())))
}

/// The handler of the shedder's refusing row: answers at once, but never for `/hang`, whose
/// requests the setup keeps in flight.
fn answer_or_hang(request: Request<Body>) -> Answer {
    Answer((request.uri().path() != "/hang").then(|| Response::new(Body::empty())))
}

/// [`answer_or_hang`]'s future: its response at once, or never.
struct Answer(Option<Response>);

impl Future for Answer {
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        self.0
            .take()
            .map_or(Poll::Pending, |response| Poll::Ready(Ok(response)))
    }
}

/// What an axum app writes to turn tower's stack's errors into responses: 503 for
/// `Overloaded`, 504 for `Elapsed`, 500 otherwise, each with a line of text. (Its error type
/// stays tower's, which `poll_ready` fails with and `map_result` passes on; it never fails.)
fn tower_error(result: Result<Response, BoxError>) -> Result<Response, BoxError> {
    let err = match result {
        Ok(response) => return Ok(response),
        Err(err) => err,
    };
    let answer = if err.is::<Overloaded>() {
        (StatusCode::SERVICE_UNAVAILABLE, "service overloaded")
    } else if err.is::<Elapsed>() {
        (StatusCode::GATEWAY_TIMEOUT, "request timed out")
    } else {
        (StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
    };
    Ok(answer.into_response())
}

/// One request through `service`, by hand; its status, or `None` when not ready or failed.
fn send<S: Service<Request<Body>, Response = Response>>(service: &mut S) -> Option<StatusCode> {
    send_request(service, Request::new(Body::empty()))
}

/// [`send`] with `request`, of any body: the server stack's and the client stack's alike.
fn send_request<S, B, ResB>(service: &mut S, request: Request<B>) -> Option<StatusCode>
where
    S: Service<Request<B>, Response = http::Response<ResB>>,
{
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        _ => return None,
    }
    let mut future = pin!(service.call(black_box(request)));
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

/// The four pieces as one `ProtectLayer`.
fn protect(
    (shed, quota, gate, deadline): (ShedLayer, QuotaLayer, GateLayer, DeadlineLayer),
) -> ProtectLayer {
    ProtectLayer::new()
        .shed(shed)
        .quota(quota)
        .gate(gate)
        .deadline(deadline)
}

/// tower's equivalent of the four pieces: `LoadShed + RateLimit + ConcurrencyLimit +
/// Timeout`, `limit` requests at once, around the handler.
fn tower_stack(limit: usize) -> impl Service<Request<Body>, Response = Response, Error = BoxError> {
    ServiceBuilder::new()
        .layer(LoadShedLayer::new())
        .layer(RateLimitLayer::new(u64::MAX, Duration::from_secs(3600)))
        .layer(ConcurrencyLimitLayer::new(limit))
        .layer(TimeoutLayer::new(Duration::from_secs(1)))
        .service(service_fn(answer))
}

fn stack(c: &mut Criterion) {
    let mut g = group(c, "layer_stack");
    for (case, gate, status) in [
        ("allowed", 1_000_000, StatusCode::OK),
        ("refused", 0, StatusCode::SERVICE_UNAVAILABLE),
    ] {
        g.bench_function(format!("ironward/{case}"), |b| {
            let mut service = protect(pieces(gate)).layer(service_fn(answer));
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
    refused_by_each_piece(&mut g);
    for (case, limit) in [("allowed", usize::MAX >> 4), ("refused", 0)] {
        let expected = (limit > 0).then_some(StatusCode::OK);
        g.bench_function(format!("tower/{case}"), |b| {
            let mut service = tower_stack(limit);
            assert_eq!(send(&mut service), expected);
            b.iter(|| send(&mut service));
            assert_eq!(send(&mut service), expected);
        });
        // The same stack with its errors answered as responses, as an axum app must: with
        // the handler an app writes, run in place by `map_result`. That is a lower bound on
        // what the app pays: axum's `HandleErrorLayer` would box each request's future and
        // clone the stack beneath it for each request, and cannot take this stack as it is,
        // since tower's `RateLimit` is not `Clone` (an app puts a `Buffer` in front, whose
        // worker task this by-hand driving never runs).
        let expected = expected.or(Some(StatusCode::SERVICE_UNAVAILABLE));
        g.bench_function(format!("tower+handle_error/{case}"), |b| {
            let mut service = tower_stack(limit).map_result(tower_error);
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
    send_request(service, Request::new(()))
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

/// The stack refused by each of its pieces but the gate, whose refusal is `ironward/refused`:
/// the shedder (a CPU at 1000 ‰ with ten requests in flight, against a capacity of one
/// learnt from none), the quota (a bucket of one token, taken by the setup, refilling in
/// about 11 days) and the deadline (a request arriving with a `RequestDeadline` already
/// spent, which the row's request carries in its extensions: three allocations of its own).
fn refused_by_each_piece(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.bench_function("ironward/refused_by_shed", |b| {
        let (_, quota, gate, deadline) = pieces(1_000_000);
        let hot = ShedLayer::new(SHED, Cpu::fixed(1000));
        let mut service = protect((hot, quota, gate, deadline)).layer(service_fn(answer_or_hang));
        let mut cx = Context::from_waker(Waker::noop());
        let mut held: Vec<_> = (0..30)
            .map(|_| {
                let hang = Request::get("/hang").body(Body::empty()).unwrap();
                let mut future = Box::pin(service.call(hang));
                assert!(future.as_mut().poll(&mut cx).is_pending());
                future
            })
            .collect();
        held.truncate(10);
        let shed = Some(StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(send(&mut service), shed);
        b.iter(|| send(&mut service));
        assert_eq!(send(&mut service), shed);
        drop(held);
    });
    g.bench_function("ironward/refused_by_quota", |b| {
        let (shed, _, gate, deadline) = pieces(1_000_000);
        let one = QuotaLayer::new(Quota::bucket(1e-6, 1.0));
        let mut service = protect((shed, one, gate, deadline)).layer(service_fn(answer));
        assert_eq!(send(&mut service), Some(StatusCode::OK));
        let limited = Some(StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(send(&mut service), limited);
        b.iter(|| send(&mut service));
        assert_eq!(send(&mut service), limited);
    });
    g.bench_function("ironward/refused_by_deadline", |b| {
        let mut service = protect(pieces(1_000_000)).layer(service_fn(answer));
        // Spent as it is made: a budget of a nanosecond, read a millisecond on.
        let spent = RequestDeadline::start(Duration::from_nanos(1));
        std::thread::sleep(Duration::from_millis(1));
        let request = || {
            let mut request = Request::new(Body::empty());
            request.extensions_mut().insert(spent);
            request
        };
        let exceeded = Some(StatusCode::GATEWAY_TIMEOUT);
        assert_eq!(send_request(&mut service, request()), exceeded);
        b.iter(|| send_request(&mut service, request()));
        assert_eq!(send_request(&mut service, request()), exceeded);
    });
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
