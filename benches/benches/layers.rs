//! The cost of one request through a tower layer: ironward-tower's layers beside tower's own
//! `RateLimit` and `ConcurrencyLimit`, and each ironward layer beside the bare inner service.
//!
//! One request is `poll_ready`, `call` and one poll of the response future, driven by hand with
//! `Waker::noop()`, so no executor is measured. The inner service answers every request at
//! once with an empty `http::Response` (`std::future::ready`), so its response future completes
//! on the first poll and what is measured is the layer. Every row builds a fresh
//! `http::Request<()>` (no allocation) and drops the response or the boxed error inside the
//! routine, so a refusal that allocates its error pays for it.
//!
//! A tokio current-thread runtime (time enabled) is entered, not run, for the whole bench:
//! tower's `RateLimit` makes a `tokio::time::Sleep` when it is built and polls it when its
//! rate is used up, and ironward's `DeadlineService` makes one per request; both need the
//! runtime's timer in the thread's context. Nothing else here needs a runtime (tower's
//! `ConcurrencyLimit` is a tokio semaphore, which does not), and none of these futures is ever
//! woken: the timers are never due within a run.
//!
//! Function ids are `<crate>/<case>`. `tower+load_shed` is tower's layer with tower's
//! `LoadShed` in front of it, which is how tower turns "not ready" into an immediate error,
//! the nearest tower has to ironward's refusals. `scripts/bench` turns the estimates into
//! `BENCHMARKS.md`.

mod common;

use common::overhead::{self, Piece};
use common::{answer, answered, group, refused_with, send};

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http::Uri;

use criterion::Criterion;
use http::Request;
use ironward_tower::{Clock, DeadlineLayer, GateFull, GateLayer, Limited, Quota, QuotaLayer};
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer as TowerRateLimitLayer};
use tower::load_shed::LoadShedLayer;
use tower::load_shed::error::Overloaded as TowerOverloaded;
use tower::timeout::TimeoutLayer;
use tower::{Layer, Service, service_fn};

/// ironward-tower's `QuotaLayer` (one global token bucket behind a `Mutex`, read on its
/// default clock, tokio's monotonic one, which is `std::time::Instant` outside tests) against
/// tower's `RateLimitLayer` (a fixed window kept in the service itself, `&mut self`, reading
/// `tokio::time::Instant::now` in `call`). Both read the real clock once per request.
///
/// Allowed: a bucket of a billion a second with a burst of a billion; tower's `u64::MAX`
/// requests an hour. Neither runs out within a run, which is checked after it.
///
/// Refused: the two do different things, which is why both of tower's forms are shown.
/// ironward's layer is always ready and answers `call` at once with `Limited` (the bucket's
/// reason, its wait not worked out until asked; the one `Box` of the error is an allocation,
/// and its free is in the row too): here a bucket of
/// one token, taken in the setup, refilling at one token in about 11 days. tower's
/// `RateLimit`, once its window is used up (one request an hour, the one taken in the setup),
/// answers `poll_ready` with `Pending` and parks the caller on a `Sleep` until the next window;
/// its row is that `poll_ready`, on a `Sleep` already registered with the timer by the setup's
/// first poll, as every later poll of a waiting caller finds it. A caller of tower's layer is
/// never refused, it waits. `tower+load_shed` puts tower's `LoadShed` in front, which turns
/// that `Pending` into an immediate `Overloaded` error (zero-sized: boxing it does not
/// allocate); that row is the like-for-like refusal.
fn rate_limit(c: &mut Criterion) {
    let mut g = group(c, "layer_rate_limit");
    // The default layer, which sends no `RateLimit` fields on an admitted response, as tower's
    // sends none.
    g.bench_function("ironward/allowed", |b| {
        let mut service = QuotaLayer::new(Quota::bucket(1e9, 1e9)).layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        let sent = send(&mut service);
        assert!(matches!(&sent, Poll::Ready(Ok(r)) if r.headers().is_empty()));
    });
    // The same made `with_headers(true)`: each admitted response carries the two fields, in a
    // header map that was empty, which is what the row pays for.
    g.bench_function("ironward/allowed_with_headers", |b| {
        let layer = QuotaLayer::new(Quota::bucket(1e9, 1e9)).with_headers(true);
        let mut service = layer.layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        let sent = send(&mut service);
        assert!(matches!(&sent, Poll::Ready(Ok(r)) if r.headers().contains_key("ratelimit")));
    });
    // The same on `Clock::coarse`: a reading is one load of what a ticker thread stored, not
    // a read of the system clock, which is what the option buys a server.
    let coarse = Clock::coarse(Duration::from_millis(1));
    g.bench_function("ironward/allowed_coarse_clock", |b| {
        let layer = QuotaLayer::new(Quota::bucket(1e9, 1e9)).with_clock(coarse.clone());
        let mut service = layer.layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });
    let plenty = || TowerRateLimitLayer::new(u64::MAX, Duration::from_secs(3600));
    g.bench_function("tower/allowed", |b| {
        let mut service = plenty().layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });
    g.bench_function("tower+load_shed/allowed", |b| {
        let mut service = LoadShedLayer::new().layer(plenty().layer(service_fn(answer)));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });

    g.bench_function("ironward/refused", |b| {
        let mut service = QuotaLayer::new(Quota::bucket(1e-6, 1.0)).layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        assert!(refused_with::<Limited>(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(refused_with::<Limited>(&send(&mut service)));
    });
    g.bench_function("ironward/refused_coarse_clock", |b| {
        let layer = QuotaLayer::new(Quota::bucket(1e-6, 1.0)).with_clock(coarse.clone());
        let mut service = layer.layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        assert!(refused_with::<Limited>(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(refused_with::<Limited>(&send(&mut service)));
    });
    let one_an_hour = || TowerRateLimitLayer::new(1, Duration::from_secs(3600));
    g.bench_function("tower/refused", |b| {
        let mut service = one_an_hour().layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        assert!(send(&mut service).is_pending());
        b.iter(|| send(&mut service));
        assert!(send(&mut service).is_pending());
    });
    g.bench_function("tower+load_shed/refused", |b| {
        let mut service = LoadShedLayer::new().layer(one_an_hour().layer(service_fn(answer)));
        assert!(answered(&send(&mut service)));
        assert!(refused_with::<TowerOverloaded>(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(refused_with::<TowerOverloaded>(&send(&mut service)));
    });
    g.finish();
}

/// ironward-tower's `GateLayer` (a core `Gate` behind an `Arc<Mutex>`, entered in `call` and
/// left when the response future completes) against tower's `ConcurrencyLimitLayer` (a tokio
/// semaphore: a permit taken in `poll_ready`, held by the response future until it is
/// dropped).
///
/// Allowed: a limit of 8, one request at a time, so there is always room.
///
/// Refused: a limit of 1, held by a request whose response future the setup keeps pending.
/// ironward's `call` answers at once with `GateFull`, which carries the gate's count and limit
/// (8 bytes, so the one `Box` of the error is an allocation, and its free is in the row too). tower's
/// `poll_ready` answers `Pending`: the setup's first poll queued the service as a waiter on the
/// semaphore (an allocation, once), and each later poll re-polls that queued acquire, as a
/// caller woken spuriously would. `tower+load_shed` turns the `Pending` into tower's
/// `Overloaded` error at once, the like-for-like refusal; in front of a full limit it re-polls
/// the same queued acquire on every request.
fn concurrency(c: &mut Criterion) {
    let mut g = group(c, "layer_concurrency");
    g.bench_function("ironward/allowed", |b| {
        let layer = GateLayer::new(8);
        let mut service = layer.layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert_eq!(layer.held(), 0);
    });
    g.bench_function("tower/allowed", |b| {
        let mut service = ConcurrencyLimitLayer::new(8).layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });
    g.bench_function("tower+load_shed/allowed", |b| {
        let mut service =
            LoadShedLayer::new().layer(ConcurrencyLimitLayer::new(8).layer(service_fn(answer)));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });

    g.bench_function("ironward/refused", |b| {
        let layer = GateLayer::new(1);
        let mut service = layer.layer(service_fn(answer));
        // Not polled, so it holds its room until it is dropped after the measurement.
        let held = service.call(Request::new(()));
        assert_eq!(layer.held(), 1);
        assert!(refused_with::<GateFull>(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(refused_with::<GateFull>(&send(&mut service)));
        drop(held);
        assert_eq!(layer.held(), 0);
    });
    g.bench_function("tower/refused", |b| {
        let mut service = ConcurrencyLimitLayer::new(1).layer(service_fn(answer));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(service.poll_ready(&mut cx).is_ready());
        let held = service.call(Request::new(()));
        assert!(send(&mut service).is_pending());
        b.iter(|| send(&mut service));
        assert!(send(&mut service).is_pending());
        drop(held);
    });
    g.bench_function("tower+load_shed/refused", |b| {
        let mut service =
            LoadShedLayer::new().layer(ConcurrencyLimitLayer::new(1).layer(service_fn(answer)));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(service.poll_ready(&mut cx).is_ready());
        let held = service.call(Request::new(()));
        assert!(refused_with::<TowerOverloaded>(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(refused_with::<TowerOverloaded>(&send(&mut service)));
        drop(held);
    });
    g.finish();
}

/// What each ironward layer adds to a request that it lets through, over the bare inner
/// service (`bare/inner`): each layer as `common::overhead` builds it (its docs say what each
/// row does), beside tower's `TimeoutLayer` for the deadline. `metered.rs` measures the same
/// layers with their metrics on.
///
/// `tower/deadline` is tower's `TimeoutLayer` of one second, the same race as ironward's
/// `DeadlineLayer` with no deadline handed to the inner service: a `Sleep` made in `call`
/// (ironward's makes its own only when the inner future is pending), the inner future polled
/// first.
fn overhead(c: &mut Criterion) {
    let mut g = group(c, "layer_overhead");
    g.bench_function("bare/inner", |b| {
        let mut service = service_fn(answer);
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
    });
    for piece in Piece::ALL {
        g.bench_function(format!("ironward/{}", piece.name()), |b| {
            overhead::admitted(b, piece);
        });
    }
    // The deadline cut alone, handing nothing to the inner service: what tower's
    // `TimeoutLayer` does, like for like (the `deadline` row above puts the
    // `RequestDeadline` in the request's extensions, which is where its allocations are).
    g.bench_function("ironward/deadline_without_extension", |b| {
        let layer = DeadlineLayer::new(Duration::from_secs(1)).with_extension(false);
        let mut service = layer.layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });
    g.bench_function("tower/deadline", |b| {
        let mut service = TimeoutLayer::new(Duration::from_secs(1)).layer(service_fn(answer));
        assert!(answered(&send(&mut service)));
        b.iter(|| send(&mut service));
        assert!(answered(&send(&mut service)));
    });
    // The same two on a request that carries extensions already, as a request reaching an
    // axum route carries `OriginalUri` and `MatchedPath` (here a `Uri` and a number in their
    // place): the deadline's `RequestDeadline` goes into a map that is there,
    // one allocation rather than three. Both rows pay for the request's own two.
    g.bench_function("ironward/deadline_routed", |b| {
        let mut service = DeadlineLayer::new(Duration::from_secs(1)).layer(service_fn(answer));
        assert!(answered(&send_routed(&mut service)));
        b.iter(|| send_routed(&mut service));
        assert!(answered(&send_routed(&mut service)));
    });
    g.bench_function("tower/deadline_routed", |b| {
        let mut service = TimeoutLayer::new(Duration::from_secs(1)).layer(service_fn(answer));
        assert!(answered(&send_routed(&mut service)));
        b.iter(|| send_routed(&mut service));
        assert!(answered(&send_routed(&mut service)));
    });
    g.finish();
}

/// [`send`] with a request that carries two extensions, as one reaching an axum route does.
fn send_routed<S: Service<Request<()>>>(service: &mut S) -> Poll<Result<S::Response, S::Error>> {
    let mut cx = Context::from_waker(Waker::noop());
    match service.poll_ready(&mut cx) {
        Poll::Ready(Ok(())) => {}
        Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
        Poll::Pending => return Poll::Pending,
    }
    let mut request = Request::new(());
    let extensions = request.extensions_mut();
    extensions.insert(Uri::from_static("/"));
    extensions.insert(1_u64);
    let mut future = pin!(service.call(black_box(request)));
    future.as_mut().poll(&mut cx)
}

fn main() {
    // Entered, never run: see the module docs.
    let runtime = common::timer();
    let _context = runtime.enter();
    let mut c = common::criterion();
    rate_limit(&mut c);
    concurrency(&mut c);
    overhead(&mut c);
    c.final_summary();
}
