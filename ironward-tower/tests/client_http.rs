//! `ClientLayer` end to end: an axum server on 127.0.0.1 started by the test, and
//! hyper-util's client inside the stack, with real (short, bounded) waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use http::Request;
use http_body_util::Full;
use hyper_util::client::legacy::{Client, Error};
use hyper_util::rt::TokioExecutor;
use ironward::classic::{OpenWait, Record};
use ironward::http_retry::{Settings, Stop, StopReason};
use ironward::{CLASSIC, Classic, ClassicReason};
use ironward_tower::{
    BreakerLayer, BreakerRefused, ClientLayer, DeadlineExceeded, DeadlineLayer, Dice, Failing,
    Fault, GaveUp, HttpRetryLayer, LimiterLayer, Retried,
};
use tower::{BoxError, Layer, ServiceExt};

use super::common::Server;

/// `/flaky` answers 503 twice, then 200; `/down` always 502; `/slow` after 30 s.
fn app(hits: Arc<AtomicUsize>) -> Router {
    async fn flaky(State(hits): State<Arc<AtomicUsize>>) -> StatusCode {
        match hits.fetch_add(1, Ordering::Relaxed) {
            0 | 1 => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::OK,
        }
    }
    async fn down(State(hits): State<Arc<AtomicUsize>>) -> StatusCode {
        hits.fetch_add(1, Ordering::Relaxed);
        StatusCode::BAD_GATEWAY
    }
    async fn slow(State(hits): State<Arc<AtomicUsize>>) -> StatusCode {
        hits.fetch_add(1, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_secs(30)).await;
        StatusCode::OK
    }
    Router::new()
        .route("/flaky", get(flaky))
        .route("/down", get(down))
        .route("/slow", get(slow))
        .with_state(hits)
}

/// A 10 ms base delay and no jitter keep the real waits short.
fn retry() -> HttpRetryLayer<impl Fn(&Error) -> Fault + Clone> {
    let settings = Settings {
        base_delay: Duration::from_millis(10),
        max_retries: 5,
        ..Settings::default()
    };
    HttpRetryLayer::new(settings)
        .with_dice(Dice::from_fn(|| 1.0))
        .with_attempt_timeout(Duration::from_secs(5))
        .with_errors(|err: &Error| {
            if err.is_connect() {
                Fault::Unsent
            } else {
                Fault::Sent
            }
        })
}

fn hyper() -> Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>()
}

fn request(server: &Server, path: &str) -> Request<Full<Bytes>> {
    Request::get(server.url(path))
        .body(Full::default())
        .unwrap()
}

/// Bounds a call's wait, so a hung server fails the test instead of hanging it.
async fn bounded<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("an answer within 20 s")
}

#[tokio::test]
async fn a_flaky_route_is_retried_through_every_piece() {
    let hits = Arc::new(AtomicUsize::new(0));
    let server = Server::start(app(Arc::clone(&hits))).await;
    let limiter = LimiterLayer::new(ironward::ADAPTIVE);
    let breaker = BreakerLayer::new(ironward::SRE);
    let client = ClientLayer::new()
        .deadline(DeadlineLayer::new(Duration::from_secs(15)))
        .retry(retry())
        .breaker(breaker.clone())
        .limiter(limiter.clone())
        .layer(hyper());
    let response = bounded(client.oneshot(request(&server, "/flaky")))
        .await
        .expect("an answer");
    assert_eq!(response.status(), StatusCode::OK);
    let retried = response.extensions().get::<Retried>().unwrap();
    assert_eq!(retried.attempts, 3);
    assert_eq!(hits.load(Ordering::Relaxed), 3);
    assert_eq!(limiter.flying(), 0);
}

#[tokio::test]
async fn an_open_breaker_spares_a_down_backend() {
    let hits = Arc::new(AtomicUsize::new(0));
    let server = Server::start(app(Arc::clone(&hits))).await;
    let policy = Classic {
        record: Record::Consecutive { failures: 3 },
        open: OpenWait::Fixed(Duration::from_secs(60)),
        ..CLASSIC
    };
    let breaker = BreakerLayer::new(policy).with_classifier(Failing::when(|answer| {
        answer
            .status()
            .is_none_or(|status| status.is_server_error())
    }));
    let client = ClientLayer::new()
        .retry(retry())
        .breaker(breaker)
        .layer(hyper());
    let err: BoxError = bounded(client.clone().oneshot(request(&server, "/down")))
        .await
        .unwrap_err();
    let gave_up = err.downcast_ref::<GaveUp>().expect("the retry gave up");
    assert_eq!(
        gave_up.stop(),
        Stop::Decided(StopReason::ServerDelayExceedsCap)
    );
    assert!(
        gave_up
            .error_as::<BreakerRefused<ClassicReason>>()
            .is_some()
    );
    assert_eq!(hits.load(Ordering::Relaxed), 3);
    // Ten more calls while it is open: none reaches the server.
    for _ in 0..10 {
        let err = bounded(client.clone().oneshot(request(&server, "/down")))
            .await
            .unwrap_err();
        assert!(err.downcast_ref::<GaveUp>().is_some());
    }
    assert_eq!(hits.load(Ordering::Relaxed), 3);
}

#[tokio::test]
async fn the_deadline_cuts_a_slow_backend_and_frees_the_permit() {
    let hits = Arc::new(AtomicUsize::new(0));
    let server = Server::start(app(Arc::clone(&hits))).await;
    let limiter = LimiterLayer::new(ironward::ADAPTIVE);
    let client = ClientLayer::new()
        .deadline(DeadlineLayer::new(Duration::from_millis(200)))
        .retry(retry())
        .limiter(limiter.clone())
        .layer(hyper());
    let err = bounded(client.oneshot(request(&server, "/slow")))
        .await
        .unwrap_err();
    assert!(err.is::<DeadlineExceeded>(), "{err}");
    assert_eq!(hits.load(Ordering::Relaxed), 1);
    assert_eq!(limiter.flying(), 0);
}
