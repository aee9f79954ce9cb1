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
use ironward_tower::{Cpu, DeadlineLayer, GateLayer, ProtectLayer, Quota, QuotaLayer, ShedLayer};
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer};
use tower::load_shed::LoadShedLayer;
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

fn main() {
    // Entered, never run: see `layers.rs`.
    let runtime = common::timer();
    let _context = runtime.enter();
    let mut c = common::criterion();
    stack(&mut c);
    c.final_summary();
}
