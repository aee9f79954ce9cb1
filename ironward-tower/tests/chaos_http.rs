//! `ChaosLayer` end to end: on an axum server on 127.0.0.1 started by the test, asked by a
//! real client, and around hyper-util's client. Waits are real and bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::routing::get;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use ironward::chaos::{self, Chaos, Delay, Fault, Injector};
use ironward_tower::ChaosLayer;
use ironward_tower::chaos::CHAOS_HEADER;
use tower::{Layer, ServiceBuilder, ServiceExt};

use super::chaos::on;
use super::common::{Server, keeping_client};

/// An app whose one route answers `200 ok`, counting the requests that reach it, behind
/// `chaos`.
fn app(chaos: &ChaosLayer, hits: &Arc<AtomicU64>) -> Router {
    async fn ok(State(hits): State<Arc<AtomicU64>>) -> &'static str {
        hits.fetch_add(1, Ordering::SeqCst);
        "ok"
    }
    Router::new()
        .route("/", get(ok))
        .with_state(Arc::clone(hits))
        .layer(chaos.clone())
}

/// What a request came back as: its status and the chaos header, if any.
type Outcome = (u16, Option<String>);

/// The outcome the default answers give the fault the core decides for `draw`.
fn expected(injector: &Injector, draw: f64) -> Outcome {
    match injector.decide(draw).map(|injected| injected.fault) {
        Some(Fault::Error) => (503, Some("error".to_owned())),
        Some(Fault::Replace) => (500, Some("replace".to_owned())),
        // A latency answers as the route does, later.
        None | Some(Fault::Latency(_)) => (200, None),
        Some(Fault::Abort) => unreachable!("no aborts in this policy"),
    }
}

fn outcome(response: &reqwest::Response) -> Outcome {
    let header = response.headers().get(CHAOS_HEADER.as_str());
    let header = header.map(|value| value.to_str().expect("ascii").to_owned());
    (response.status().as_u16(), header)
}

// The replay the seeded layer promises: request i of a run seeded 42 gets the fault
// `Injector::decide(chaos::draw(42, i))` gives, here over a real connection as in the core.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeded_server_injects_request_by_request_what_the_core_decides() {
    const REQUESTS: u64 = 2000;
    let latency = Fault::Latency(Delay::Uniform {
        low: Duration::from_millis(1),
        high: Duration::from_millis(3),
    });
    let policy = on(&[
        (Fault::Error, 0.05),
        (latency, 0.05),
        (Fault::Replace, 0.05),
    ]);
    let injector = Injector::new(policy.clone()).unwrap();
    let chaos = ChaosLayer::new(policy).unwrap().with_seed(42);
    let hits = Arc::new(AtomicU64::new(0));
    let server = Server::start(app(&chaos, &hits)).await;
    let client = keeping_client();

    let (mut seen, mut waits) = (Vec::new(), Vec::new());
    for _ in 0..REQUESTS {
        let start = Instant::now();
        let response = client.get(server.url("/")).send().await.expect("answered");
        waits.push(start.elapsed());
        seen.push(outcome(&response));
        let body = response.bytes().await.expect("body");
        assert!(!body.is_empty());
    }

    let want: Vec<Outcome> = (0..REQUESTS)
        .map(|i| expected(&injector, chaos::draw(42, i)))
        .collect();
    for (i, (seen, want)) in seen.iter().zip(&want).enumerate() {
        assert_eq!(seen, want, "request {i}");
    }
    // A delayed request took at least its delay; the rest of its time is the connection's.
    let mut delayed = 0;
    for (i, wait) in waits.iter().enumerate() {
        let decided = injector.decide(chaos::draw(42, i as u64));
        if let Some(delay) = decided.and_then(|injected| injected.delay) {
            assert!(
                *wait >= delay,
                "request {i} took {wait:?}, under its {delay:?}"
            );
            delayed += 1;
        }
    }
    let count = |status| want.iter().filter(|(s, _)| *s == status).count() as u64;
    let (errors, replaced) = (count(503), count(500));
    // About 5 % each of 2000: a policy drawn this way cannot pass by injecting nothing.
    for n in [errors, replaced, delayed] {
        assert!(
            (50..=150).contains(&n),
            "{errors} errors, {replaced} replaced, {delayed} delayed"
        );
    }
    // An error never reaches the route; a replaced response and a delayed one do.
    assert_eq!(hits.load(Ordering::SeqCst), REQUESTS - errors);
    assert_eq!(chaos.requests(), REQUESTS);
    assert_eq!(chaos.injected(), errors + replaced + delayed);
}

// An aborted request hangs until the client's own timeout ends it; the server goes on
// serving the requests after it meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_request_never_answers_while_the_next_is_served() {
    let policy = on(&[(Fault::Abort, 0.5)]);
    let injector = Injector::new(policy.clone()).unwrap();
    let aborts = |seed, i| injector.decide(chaos::draw(seed, i)).is_some();
    // A seed whose first request is aborted and whose second is not.
    let seed = (0..).find(|&s| aborts(s, 0) && !aborts(s, 1)).unwrap();
    let chaos = ChaosLayer::new(policy).unwrap().with_seed(seed);
    let hits = Arc::new(AtomicU64::new(0));
    let server = Server::start(app(&chaos, &hits)).await;
    let client = keeping_client();

    let aborted = {
        let (client, url) = (client.clone(), server.url("/"));
        tokio::spawn(async move {
            let start = Instant::now();
            let result = client
                .get(url)
                .timeout(Duration::from_millis(300))
                .send()
                .await;
            (result, start.elapsed())
        })
    };
    // The next request is sent once the first has reached the layer, so that it is second.
    let arrived = Instant::now();
    while chaos.requests() == 0 {
        assert!(arrived.elapsed() < Duration::from_secs(10), "never arrived");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let served = client.get(server.url("/")).send().await.expect("served");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.text().await.unwrap(), "ok");

    let (result, waited) = aborted.await.unwrap();
    let err = result.expect_err("an aborted request answered");
    assert!(err.is_timeout(), "{err}");
    assert!(waited >= Duration::from_millis(300));
    assert_eq!((chaos.requests(), chaos.injected()), (2, 1));
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the aborted request reached the route"
    );
}

// On the client side: around hyper-util's client, whose `Incoming` bodies are mapped into
// axum's `Body` so that the default answers can be made. An error never leaves the client;
// a replaced response did reach the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn around_a_client_errors_stay_local_and_replacements_reach_the_server() {
    let hits = Arc::new(AtomicU64::new(0));
    let off = ChaosLayer::new(Chaos::default()).unwrap();
    let server = Server::start(app(&off, &hits)).await;

    let policy = on(&[(Fault::Error, 0.3), (Fault::Replace, 0.3)]);
    let injector = Injector::new(policy.clone()).unwrap();
    let chaos = ChaosLayer::new(policy)
        .unwrap()
        .with_seed(8)
        .with_name("backend");
    let hyper = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let client = chaos.layer(
        ServiceBuilder::new()
            .map_response(|response: Response<_>| response.map(Body::new))
            .service(hyper),
    );

    let mut want_hits = 0;
    for i in 0..60 {
        let request = Request::get(server.url("/")).body(Full::default()).unwrap();
        let response =
            tokio::time::timeout(Duration::from_secs(10), client.clone().oneshot(request))
                .await
                .expect("answered in time")
                .expect("sent");
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        match injector
            .decide(chaos::draw(8, i))
            .map(|injected| injected.fault)
        {
            Some(Fault::Error) => assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE),
            Some(Fault::Replace) => {
                want_hits += 1;
                assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
                assert_ne!(&body[..], b"ok");
            }
            _ => {
                want_hits += 1;
                assert_eq!((status, &body[..]), (StatusCode::OK, &b"ok"[..]));
            }
        }
    }
    assert!(want_hits < 60 && chaos.injected() > 10);
    assert_eq!(hits.load(Ordering::SeqCst), want_hits);
    assert_eq!(off.injected(), 0);
}
