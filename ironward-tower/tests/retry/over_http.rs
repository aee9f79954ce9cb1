//! End to end: a real server on 127.0.0.1 and hyper-util's client, with real (short,
//! bounded) waits.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use ironward::http_retry::{Settings, StopReason};
use ironward_tower::Dice;
use ironward_tower::retry::{GaveUp, HttpRetryLayer, Retried, Stop};
use tokio::net::TcpListener;
use tower::{Layer, ServiceExt};

use super::common::Server;

/// What the server saw: the time of each request and the orders it created.
#[derive(Default)]
struct Log {
    stamps: Mutex<Vec<Instant>>,
    orders: Mutex<Vec<String>>,
}

/// `/flaky` answers 503 twice, then 200. `/orders` fails the first request for each
/// idempotency key with 503 after creating the order, and answers a replay of a key it has
/// seen with 201 without creating it again; a request without a key creates an order and
/// fails.
fn app(log: Arc<Log>) -> Router {
    async fn flaky(State(log): State<Arc<Log>>) -> StatusCode {
        let mut stamps = log.stamps.lock().unwrap();
        stamps.push(Instant::now());
        if stamps.len() <= 2 {
            StatusCode::SERVICE_UNAVAILABLE
        } else {
            StatusCode::OK
        }
    }
    async fn orders(State(log): State<Arc<Log>>, headers: HeaderMap, body: Bytes) -> StatusCode {
        log.stamps.lock().unwrap().push(Instant::now());
        let key = headers
            .get("idempotency-key")
            .map(|v| v.to_str().unwrap().to_owned());
        let mut orders = log.orders.lock().unwrap();
        match key {
            Some(key) if orders.contains(&key) => StatusCode::CREATED,
            Some(key) => {
                orders.push(key);
                StatusCode::SERVICE_UNAVAILABLE
            }
            None => {
                orders.push(String::from_utf8_lossy(&body).into_owned());
                StatusCode::SERVICE_UNAVAILABLE
            }
        }
    }
    Router::new()
        .route("/flaky", get(flaky))
        .route("/orders", post(orders))
        .with_state(log)
}

/// A 50 ms base delay and no jitter keep the real waits short and their lower bounds exact.
fn layer() -> HttpRetryLayer {
    let settings = Settings {
        base_delay: Duration::from_millis(50),
        ..Settings::default()
    };
    HttpRetryLayer::new(settings)
        .with_dice(Dice::from_fn(|| 1.0))
        .with_attempt_timeout(Duration::from_secs(5))
}

/// Sends `request` through the layer over hyper-util's client, every wait bounded.
async fn send(request: Request<Full<Bytes>>) -> (StatusCode, Retried, Bytes) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let retrying = layer().layer(client);
    let response = tokio::time::timeout(Duration::from_secs(10), retrying.oneshot(request))
        .await
        .expect("an answer within 10 s")
        .expect("no transport error");
    let retried = *response.extensions().get::<Retried>().expect("a record");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (status, retried, body)
}

// Three requests, the second wait at least twice the first's 50 ms.
#[tokio::test]
async fn a_flaky_route_is_retried_over_tcp_with_growing_waits() {
    let log = Arc::new(Log::default());
    let server = Server::start(app(Arc::clone(&log))).await;
    let request = Request::get(server.url("/flaky"))
        .body(Full::default())
        .unwrap();

    let (status, retried, _) = send(request).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        retried,
        Retried {
            attempts: 3,
            waited: Duration::from_millis(150),
            stop: None
        }
    );
    let stamps = log.stamps.lock().unwrap();
    assert_eq!(stamps.len(), 3);
    assert!(
        stamps[1] - stamps[0] >= Duration::from_millis(50),
        "{stamps:?}"
    );
    assert!(
        stamps[2] - stamps[1] >= Duration::from_millis(100),
        "{stamps:?}"
    );
}

// RFC 9110 §9.2.2 over real HTTP: the server counts side effects.
#[tokio::test]
async fn only_a_keyed_post_is_replayed_and_the_server_creates_it_once() {
    let log = Arc::new(Log::default());
    let server = Server::start(app(Arc::clone(&log))).await;
    let order = || Full::new(Bytes::from_static(b"order 7"));

    let unkeyed = Request::post(server.url("/orders")).body(order()).unwrap();
    let (status, retried, _) = send(unkeyed).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(retried.attempts, 1);
    assert_eq!(retried.stop, Some(Stop::Decided(StopReason::NotReplayable)));
    assert_eq!(log.stamps.lock().unwrap().len(), 1);

    let keyed = Request::post(server.url("/orders"))
        .header("idempotency-key", "k-7")
        .body(order())
        .unwrap();
    let (status, retried, _) = send(keyed).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(retried.attempts, 2);
    assert!(retried.is_success());
    assert_eq!(log.stamps.lock().unwrap().len(), 3);
    assert_eq!(*log.orders.lock().unwrap(), ["order 7", "k-7"]);
}

// hyper-util's legacy client sets no timeout on a request: against a server that accepts
// the connection and never answers, the attempt timeout and the budget are all that end
// the call. Two attempts are cut off at 1 s each, 200 ms apart; the third gets the 400 ms
// left of the 3 s budget.
#[tokio::test]
async fn a_server_that_never_answers_is_given_up_on_within_the_budget() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local address");
    let accepted = Arc::new(Mutex::new(Vec::new()));
    let held = Arc::clone(&accepted);
    let server = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            held.lock().unwrap().push(socket);
        }
    });

    let settings = Settings {
        total_budget: Duration::from_secs(3),
        request_reserve: Duration::from_millis(100),
        ..Settings::default()
    };
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let retrying = HttpRetryLayer::new(settings)
        .with_dice(Dice::from_fn(|| 1.0))
        .with_attempt_timeout(Duration::from_secs(1))
        .layer(client);
    let request = Request::get(format!("http://{addr}/never"))
        .body(Full::default())
        .unwrap();

    // Spawned, which also shows the call's future is `Send`.
    let start = Instant::now();
    let call = tokio::spawn(retrying.oneshot(request));
    let outcome = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("an end within 10 s")
        .expect("the call's task");
    let took = start.elapsed();
    server.abort();

    let err = outcome.expect_err("no response");
    let gave_up = err.downcast_ref::<GaveUp>().expect("a GaveUp");
    assert!(gave_up.timed_out());
    assert_eq!(
        gave_up.retried().stop,
        Some(Stop::Decided(StopReason::BudgetExhausted))
    );
    // Two 1 s attempts and a wait at least; the budget, and some slack for a loaded
    // machine's timers, at most.
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_millis(3500), "{took:?}");
    assert!(!accepted.lock().unwrap().is_empty());
}
