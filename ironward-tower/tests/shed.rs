//! The shedder: go-zero's adaptive shedding through the tower layer, on tokio's paused clock,
//! and end to end on an axum route under concurrent load over TCP.

use crate::GLOBAL;
use crate::common;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::http::StatusCode;
use axum::routing::get;
use http::Response;
use ironward::{Criticality, SHED, ShedReason};
use ironward_tower::{Clock, Cpu, ShedLayer, ShedRefused, ShedService};
use stats_alloc::Region;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// What the inner service of the paused-clock tests does with a request.
#[derive(Debug, Clone, Copy)]
enum Call {
    /// Answers with this status after this long.
    Answer(u16, Duration),
    /// Fails with tower's timeout error after this long.
    TimeOut(Duration),
    /// Fails with some other error after this long.
    Break(Duration),
    /// Never answers.
    Hang,
}

type Server = ShedService<
    tower::util::ServiceFn<
        fn(Call) -> std::pin::Pin<Box<dyn Future<Output = Result<Response<()>, BoxError>> + Send>>,
    >,
>;

fn serve(
    call: Call,
) -> std::pin::Pin<Box<dyn Future<Output = Result<Response<()>, BoxError>> + Send>> {
    Box::pin(async move {
        match call {
            Call::Answer(status, after) => {
                tokio::time::sleep(after).await;
                Ok(Response::builder().status(status).body(())?)
            }
            Call::TimeOut(after) => {
                tokio::time::sleep(after).await;
                Err(tower::timeout::error::Elapsed::new().into())
            }
            Call::Break(after) => {
                tokio::time::sleep(after).await;
                Err("handler failed".into())
            }
            Call::Hang => std::future::pending().await,
        }
    })
}

fn server(cpu: Cpu) -> Server {
    ShedLayer::new(SHED, cpu).layer(service_fn(serve as fn(Call) -> _))
}

/// Starts `call` on `server` at the current instant, running it on a task of its own.
async fn start(
    server: &mut Server,
    call: Call,
) -> tokio::task::JoinHandle<Result<Response<()>, BoxError>> {
    let future = server.ready().await.expect("ready").call(call);
    tokio::spawn(future)
}

/// Whether `server` sheds a request made now.
async fn sheds(server: &mut Server) -> bool {
    shed(server).await.is_some()
}

/// Why `server` sheds a request made now, or `None` if it admits it.
async fn shed(server: &mut Server) -> Option<ShedReason> {
    match server
        .ready()
        .await
        .expect("ready")
        .call(Call::Hang)
        .now_or_never()
    {
        Some(Err(err)) => {
            let refused = err.downcast_ref::<ShedRefused>();
            Some(refused.unwrap_or_else(|| panic!("{err}")).reason())
        }
        Some(Ok(_)) => unreachable!("a hanging call never answers"),
        None => None,
    }
}

/// `now_or_never` without a dependency: polls a future once.
trait NowOrNever: Future + Sized {
    fn now_or_never(self) -> Option<Self::Output> {
        match pin!(self).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(output) => Some(output),
            Poll::Pending => None,
        }
    }
}

impl<F: Future> NowOrNever for F {}

#[tokio::test(start_paused = true)]
async fn follows_the_go_zero_virtual_clock_sequence_through_the_layer() {
    // The virtual-clock sequence of go-zero's core/load/adaptiveshedder_test.go: a hundred
    // admitted while nothing is known, fifty of them finishing in 50 ms, then refusals while
    // hot or still hot, and an admission once the cooling time has passed.
    let (cpu, dial) = Cpu::scripted(950);
    let mut server = server(cpu);
    let origin = tokio::time::Instant::now();
    let mut held = Vec::new();
    for i in 0..100 {
        let call = if i < 50 {
            Call::Answer(200, ms(50))
        } else {
            Call::Hang
        };
        held.push(start(&mut server, call).await);
    }
    assert_eq!(
        server.flying(),
        100,
        "t=0: all admitted, the average is still 0"
    );
    for answered in held.drain(..50) {
        answered.await.expect("task").expect("answered");
    }
    assert_eq!(origin.elapsed(), ms(50));
    assert_eq!(server.flying(), 50);
    tokio::time::sleep_until(origin + ms(60)).await;
    // Each refusal carries the numbers the core's own run of this sequence gives
    // (ironward's shedder tests): max_pass 1, min_rt 1000 ms, max_flight 10, factor 0.5.
    let hot = ShedReason {
        cpu: 950,
        flying: 50,
        average: 58.43823850240212,
        capacity: 5.0,
        overloaded: true,
        cooling: false,
        criticality: Criticality::Critical,
        floor: Criticality::Sheddable,
    };
    assert_eq!(shed(&mut server).await, Some(hot), "t=60, 950 ‰: m = 5");
    dial.set(0);
    let cooling = ShedReason {
        cpu: 0,
        capacity: 10.0,
        overloaded: false,
        cooling: true,
        floor: Criticality::Critical,
        ..hot
    };
    assert_eq!(
        shed(&mut server).await,
        Some(cooling),
        "t=60, 0 ‰: still hot"
    );
    tokio::time::sleep_until(origin + ms(150)).await;
    dial.set(950);
    assert!(sheds(&mut server).await, "t=150, 950 ‰: m = 12.5");
    dial.set(0);
    tokio::time::sleep_until(origin + ms(1_061)).await;
    assert!(sheds(&mut server).await, "t=1061: 911 ms since hot");
    tokio::time::sleep_until(origin + ms(1_150)).await;
    let admitted = server.ready().await.expect("ready").call(Call::Hang);
    let mut admitted = pin!(admitted);
    let polled = admitted
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()));
    assert!(polled.is_pending(), "t=1150: cooled, admitted");
    assert_eq!(server.flying(), 51);
}

/// Whether a request is admitted at t=150 ms at 950 ‰, after 37 admitted at t=0 of which 30
/// ended at t=50 ms as `ending` says and 7 are still in flight (the moving average of requests
/// in flight is then 14.05 either way).
async fn admitted_after(ending: fn(Duration) -> Call) -> bool {
    let (cpu, _dial) = Cpu::scripted(950);
    let mut server = server(cpu);
    let origin = tokio::time::Instant::now();
    let mut ended = Vec::new();
    for _ in 0..30 {
        ended.push(start(&mut server, ending(ms(50))).await);
    }
    for _ in 0..7 {
        drop(start(&mut server, Call::Hang).await);
    }
    for call in ended {
        let _ = call.await.expect("task");
    }
    assert_eq!(server.flying(), 7);
    tokio::time::sleep_until(origin + ms(150)).await;
    !sheds(&mut server).await
}

#[tokio::test(start_paused = true)]
async fn a_503_or_a_timeout_lands_as_a_failure_and_anything_else_as_a_pass() {
    // go-zero rest/handler/sheddinghandler.go fails a 503 and passes every other status;
    // zrpc sheddinginterceptor.go fails context.DeadlineExceeded and passes every other error.
    // Thirty passes in 50 ms show a capacity of 15 in flight, halved at 950 ‰ to 7.5, which
    // admits with 7 in flight; thirty failures show nothing, leaving the assumed 10, halved
    // to 5, which sheds.
    assert!(
        admitted_after(|after| Call::Answer(200, after)).await,
        "200 passes"
    );
    assert!(
        admitted_after(|after| Call::Answer(500, after)).await,
        "500 passes"
    );
    assert!(
        admitted_after(Call::Break).await,
        "an error that is no timeout passes"
    );
    assert!(
        !admitted_after(|after| Call::Answer(503, after)).await,
        "503 fails"
    );
    assert!(!admitted_after(Call::TimeOut).await, "a timeout fails");
}

#[tokio::test(start_paused = true)]
async fn a_shed_request_is_a_shed_refused_error_that_says_why_and_never_reaches_the_service() {
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reached);
    let mut server = ShedLayer::new(SHED, Cpu::fixed(1000)).layer(service_fn(move |()| {
        counter.fetch_add(1, Ordering::Relaxed);
        std::future::pending::<Result<Response<()>, BoxError>>()
    }));
    let mut held = Vec::new();
    for _ in 0..30 {
        held.push(server.ready().await.unwrap().call(()));
    }
    held.truncate(10);
    let err: BoxError = server.ready().await.unwrap().call(()).await.unwrap_err();
    assert!(err.is::<ShedRefused>());
    assert!(
        err.source().is_none(),
        "the reason is in the line, not a source"
    );
    let reason = err.downcast_ref::<ShedRefused>().unwrap().reason();
    // Nothing has passed, so the capacity is the assumed 10 in flight scaled at 1000 ‰ by
    // the floor factor, 0.1; the ten still held exceed it, and so does their average.
    assert_eq!(
        (reason.cpu, reason.flying, reason.capacity),
        (1000, 10, 1.0)
    );
    assert!(reason.overloaded && !reason.cooling);
    assert!(reason.flying as f64 > reason.capacity && reason.average > reason.capacity);
    let line = err.to_string();
    assert!(
        line.starts_with("load shedding dropped the request: shedder refused at cpu 100.0% (overloaded): 10 in flight"),
        "{line}"
    );
    assert!(!line.contains('\n') && !line.ends_with('.'));
    assert_eq!(line, line.to_lowercase());
    assert_eq!(reached.load(Ordering::Relaxed), 30);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_request_leaves_flight() {
    // A client that hangs up makes axum drop the handler's future: the request no longer
    // occupies the server, so it must not stay counted in flight (go-zero's deferred
    // promise.Fail/Pass runs however the handler returns).
    let mut server = server(Cpu::fixed(0));
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(server.ready().await.unwrap().call(Call::Hang));
    }
    assert_eq!(server.flying(), 20);
    held.truncate(5);
    assert_eq!(server.flying(), 5);
    let task = start(&mut server, Call::Hang).await;
    tokio::task::yield_now().await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(server.flying(), 5);
    drop(held);
    assert_eq!(server.flying(), 0);
}

#[tokio::test(start_paused = true)]
async fn two_clones_see_one_shedder() {
    // Every connection gets a clone of the service, and axum gives every route and method a
    // service of its own from one layer: the count in flight must be the server's, as go-zero
    // puts one shedder in front of every route.
    let (cpu, _dial) = Cpu::scripted(1000);
    let layer = ShedLayer::new(SHED, cpu);
    let mut first = layer.layer(service_fn(serve as fn(Call) -> _));
    let mut second = first.clone();
    let mut other_route = layer.clone().layer(service_fn(serve as fn(Call) -> _));
    let mut held = Vec::new();
    for _ in 0..30 {
        held.push(first.ready().await.unwrap().call(Call::Hang));
    }
    assert_eq!(second.flying(), 30);
    assert_eq!(other_route.flying(), 30);
    assert_eq!(layer.flying(), 30);
    held.truncate(10);
    assert_eq!(second.flying(), 10);
    // The first clone's load sheds the others' requests.
    assert!(sheds(&mut second).await);
    assert!(sheds(&mut other_route).await);
    assert!(sheds(&mut first).await);
}

#[tokio::test(start_paused = true)]
async fn response_times_run_from_admission_to_completion_on_the_layers_clock() {
    // go-zero's promise.Pass records time.Since(start): here the layer's clock at completion
    // minus its reading at admission. The layer's clock is moved 50 ms while the requests
    // take 1 ms of tokio's: thirty passes of 50 ms show a capacity of 15, halved at 950 ‰ to
    // 7.5, which admits with 7 in flight (of 1 ms, the capacity would be 1 and this would shed).
    let nanos = Arc::new(AtomicU64::new(0));
    let manual = {
        let nanos = Arc::clone(&nanos);
        Clock::from_fn(move || Duration::from_nanos(nanos.load(Ordering::Relaxed)))
    };
    let set = |at: Duration| nanos.store(at.as_nanos() as u64, Ordering::Relaxed);
    let (cpu, _dial) = Cpu::scripted(950);
    let mut server: Server = ShedLayer::new(SHED, cpu)
        .with_clock(manual)
        .layer(service_fn(serve as fn(Call) -> _));
    let mut ended = Vec::new();
    for _ in 0..30 {
        ended.push(start(&mut server, Call::Answer(200, ms(1))).await);
    }
    for _ in 0..7 {
        drop(start(&mut server, Call::Hang).await);
    }
    set(ms(50));
    for call in ended {
        call.await.expect("task").expect("answered");
    }
    set(ms(150));
    assert_eq!(server.flying(), 7);
    assert!(!sheds(&mut server).await);
}

#[test]
fn shedding_allocates_only_the_box_of_its_error() {
    // As refusing_allocates_only_the_box_of_its_error in tests/breaker.rs: other threads only
    // add to a window's count, so the fewest any window around one refusal saw is what
    // shedding allocates, and that is the `Box` of the error.
    let mut server = ShedLayer::new(SHED, Cpu::fixed(1000))
        .with_clock(Clock::from_fn(|| Duration::from_secs(1)))
        .layer(service_fn(|()| {
            std::future::pending::<Result<Response<()>, BoxError>>()
        }));
    let mut cx = Context::from_waker(Waker::noop());
    let mut held = Vec::new();
    for _ in 0..30 {
        assert!(server.poll_ready(&mut cx).is_ready());
        held.push(Box::pin(server.call(())));
    }
    for call in &mut held {
        assert!(call.as_mut().poll(&mut cx).is_pending());
    }
    held.truncate(10);
    let mut once = |server: &mut ShedService<_>| {
        assert!(server.poll_ready(&mut cx).is_ready());
        match pin!(server.call(())).poll(&mut cx) {
            Poll::Ready(Err(err)) => err.is::<ShedRefused>(),
            _ => false,
        }
    };
    assert!(once(&mut server), "the shedder sheds by now");
    let mut fewest = usize::MAX;
    for _ in 0..2_000 {
        let region = Region::new(GLOBAL);
        let shed = once(&mut server);
        let allocations = region.change().allocations;
        assert!(shed);
        fewest = fewest.min(allocations);
    }
    assert_eq!(fewest, 1, "shedding allocates its box and nothing else");
}

/// The slow handler of the end-to-end test, counting the requests that reach it.
async fn slow(entered: Arc<AtomicUsize>) -> &'static str {
    entered.fetch_add(1, Ordering::Relaxed);
    tokio::time::sleep(ms(100)).await;
    "done"
}

async fn overloaded_is_503(err: BoxError) -> StatusCode {
    if err.is::<ShedRefused>() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shedder_on_a_hot_cpu_sheds_concurrent_load_and_recovers_when_the_cpu_cools() {
    // go-zero's shedding handler on a route: at 1000 ‰ the shedder keeps no more in flight
    // than a tenth of what the route has shown it can finish, answering the rest 503 at once;
    // once the CPU has been cool for the cooling time (1 s), everything is admitted again.
    let (cpu, dial) = Cpu::scripted(1000);
    let entered = Arc::new(AtomicUsize::new(0));
    let handler = {
        let entered = Arc::clone(&entered);
        move || slow(Arc::clone(&entered))
    };
    let route = get(handler).layer(
        ServiceBuilder::new()
            .layer(HandleErrorLayer::new(overloaded_is_503))
            .layer(ShedLayer::new(SHED, cpu)),
    );
    let server = common::Server::start(Router::new().route("/slow", route)).await;
    let url = server.url("/slow");
    let http = common::client();

    // Forty clients, each sending one request after another for two seconds.
    let workers: Vec<_> = (0..40)
        .map(|_| {
            let (http, url) = (http.clone(), url.clone());
            tokio::spawn(async move {
                let (mut served, mut shed) = (0usize, 0usize);
                let start = Instant::now();
                while start.elapsed() < Duration::from_secs(2) {
                    let response = http.get(&url).send().await.expect("response");
                    match response.status() {
                        StatusCode::OK => served += 1,
                        StatusCode::SERVICE_UNAVAILABLE => {
                            shed += 1;
                            tokio::time::sleep(ms(10)).await;
                        }
                        other => panic!("unexpected status {other}"),
                    }
                }
                (served, shed)
            })
        })
        .collect();
    let (mut served, mut shed) = (0, 0);
    for worker in workers {
        let (s, r) = worker.await.expect("worker");
        served += s;
        shed += r;
    }
    eprintln!("hot: {served} served, {shed} shed (503) from 40 concurrent clients in 2 s");
    assert_eq!(
        entered.load(Ordering::Relaxed),
        served,
        "shed requests never reach it"
    );
    assert!(served >= 40, "served {served}");
    assert!(shed >= 40, "shed {shed}");

    // The CPU cools; after the cooling time, forty at once are all served.
    dial.set(100);
    tokio::time::sleep(SHED.cool + ms(500)).await;
    let burst: Vec<_> = (0..40)
        .map(|_| {
            let request = http.get(&url);
            tokio::spawn(async move { request.send().await.expect("response").status() })
        })
        .collect();
    for request in burst {
        assert_eq!(request.await.expect("request"), StatusCode::OK);
    }
    eprintln!("cooled: 40 concurrent requests all served");
}

/// A request whose class is `class` in `x-criticality` and whose handling is `call`.
fn classed(class: &str, call: Call) -> http::Request<()> {
    let mut request = http::Request::builder()
        .header("x-criticality", class)
        .body(())
        .expect("request");
    request.extensions_mut().insert(call);
    request
}

// The core's `Shedder::check_as` through the layer: hot, with four requests in flight
// against the capacity of five assumed while nothing has passed, a sheddable request (half
// of it) is shed and a critical one admitted; a malformed class reads as critical.
#[tokio::test(start_paused = true)]
async fn a_hot_server_sheds_the_sheddable_first_by_the_requests_header() {
    let layer = ShedLayer::new(SHED, Cpu::fixed(950))
        .with_criticality(ironward_tower::CriticalityHeader::default());
    let mut server = layer.layer(service_fn(|request: http::Request<()>| {
        let call = request
            .extensions()
            .get::<Call>()
            .copied()
            .unwrap_or(Call::Hang);
        serve(call)
    }));
    let mut held = Vec::new();
    for k in 0..100 {
        let call = if k < 96 {
            Call::Answer(200, ms(50))
        } else {
            Call::Hang
        };
        held.push(tokio::spawn(
            server
                .ready()
                .await
                .unwrap()
                .call(classed("critical", call)),
        ));
    }
    tokio::time::sleep(ms(60)).await;
    assert_eq!(layer.flying(), 4);
    let err = server
        .ready()
        .await
        .unwrap()
        .call(classed("SHEDDABLE", Call::Hang))
        .await
        .unwrap_err();
    let reason = err.downcast_ref::<ShedRefused>().unwrap().reason();
    assert_eq!(
        (reason.criticality, reason.flying, reason.capacity),
        (Criticality::Sheddable, 4, 2.5)
    );
    // Not a class: critical, which the capacity of five still admits.
    held.push(tokio::spawn(
        server
            .ready()
            .await
            .unwrap()
            .call(classed("very important", Call::Hang)),
    ));
    tokio::task::yield_now().await;
    assert_eq!(layer.flying(), 5);
    for call in held {
        call.abort();
    }
}
