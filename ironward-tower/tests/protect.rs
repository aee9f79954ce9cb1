//! `ProtectLayer`: one infallible layer for axum, every piece optional, each refusal answered
//! as `axum::handle_error` answers it, one clock reading at `call`, and the metrics of the
//! separate layers.
#![cfg(feature = "axum")]

use std::convert::Infallible;
use std::future::{Future, pending};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::response::Response;
use axum::routing::get;
use http::{Request, StatusCode};
use ironward::SHED;
use ironward_tower::{
    Clock, Cpu, DeadlineLayer, GateLayer, Limited, LimiterLayer, ProtectLayer, Quota, QuotaLayer,
    ShedLayer,
};
use tower::{Layer, Service, ServiceExt, service_fn};

use crate::common::{Server, client, limit_of};

/// `/` answers at once, `/slow` after ten seconds, `/hang` never.
fn app() -> Router {
    Router::new()
        .route("/", get(|| async { "hello" }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "slow"
            }),
        )
        .route("/hang", get(pending::<&'static str>))
}

fn get_(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

async fn text(response: Response) -> String {
    let bytes = to_bytes(response.into_body(), 1 << 16).await.unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Polls `future` once.
fn poll_once<F: Future>(future: &mut std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
}

#[tokio::test]
async fn every_piece_is_optional() {
    let shed = || ShedLayer::new(SHED, Cpu::fixed(0));
    let quota = || QuotaLayer::new(Quota::bucket(100.0, 100.0));
    let gate = || GateLayer::new(8);
    let limiter = || LimiterLayer::new(limit_of(8));
    let deadline = || DeadlineLayer::new(Duration::from_secs(5));
    let apps = [
        app().layer(ProtectLayer::new()),
        app().layer(ProtectLayer::new().shed(shed())),
        app().layer(ProtectLayer::new().quota(quota())),
        app().layer(ProtectLayer::new().gate(gate())),
        app().layer(ProtectLayer::new().limiter(limiter())),
        app().layer(ProtectLayer::new().deadline(deadline())),
        app().layer(ProtectLayer::new().shed(shed()).deadline(deadline())),
        app().layer(ProtectLayer::new().quota(quota()).limiter(limiter())),
        // All four, given in an order other than the stack's.
        app().layer(
            ProtectLayer::new()
                .deadline(deadline())
                .gate(gate())
                .quota(quota())
                .shed(shed()),
        ),
        app().layer(
            ProtectLayer::new()
                .shed(shed())
                .quota(quota())
                .limiter(limiter())
                .deadline(deadline()),
        ),
        app().route_layer(ProtectLayer::new().shed(shed()).gate(gate())),
    ];
    for (index, app) in apps.into_iter().enumerate() {
        let response = app.oneshot(get_("/")).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "stack {index}");
        assert_eq!(text(response).await, "hello", "stack {index}");
    }
}

#[tokio::test]
async fn a_quota_refusal_is_a_429_with_retry_after_and_the_ratelimit_fields_over_http() {
    let stack = ProtectLayer::new().quota(
        QuotaLayer::new(Quota::bucket(1.0, 1.0))
            .with_name("api")
            .with_headers(true),
    );
    let server = Server::start(app().layer(stack)).await;
    let client = client();
    let first = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert!(first.headers().contains_key("ratelimit"), "{first:?}");
    let refused = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    let headers = refused.headers().clone();
    assert_eq!(headers["retry-after"], "1");
    assert!(
        headers["ratelimit"].to_str().unwrap().contains("\"api\""),
        "{headers:?}"
    );
    assert!(headers.contains_key("ratelimit-policy"), "{headers:?}");
    assert!(refused.text().await.unwrap().contains("rate limit"));
}

#[tokio::test]
async fn a_quota_by_peer_keys_each_client_address_over_http() {
    let quota = QuotaLayer::by_peer(Quota::bucket(1.0, 1.0), 16);
    let server = Server::start(app().layer(ProtectLayer::new().quota(quota.clone()))).await;
    let client = client();
    let statuses = [
        client.get(server.url("/")).send().await.unwrap().status(),
        client.get(server.url("/")).send().await.unwrap().status(),
    ];
    assert_eq!(statuses.map(|s| s.as_u16()), [200, 429]);
    // One budget, the loopback client's, shared with the layer the stack was given.
    assert_eq!(quota.keys(), 1);
}

#[tokio::test]
async fn a_shadow_quota_admits_and_tells_the_handler_what_would_have_refused() {
    let quota = QuotaLayer::new(Quota::bucket(1.0, 1.0)).with_mode(ironward_tower::Mode::Shadow);
    let app = Router::new()
        .route(
            "/",
            get(|request: Request<Body>| async move {
                request.extensions().get::<Limited>().is_some().to_string()
            }),
        )
        .layer(ProtectLayer::new().quota(quota));
    let first = app.clone().oneshot(get_("/")).await.unwrap();
    assert_eq!(text(first).await, "false");
    let second = app.oneshot(get_("/")).await.unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    assert_eq!(text(second).await, "true");
}

#[tokio::test]
async fn a_full_gate_is_a_503_in_problem_details_when_the_client_asks_over_http() {
    let server = Server::start(app().layer(ProtectLayer::new().gate(GateLayer::new(0)))).await;
    let client = client();
    let problem = client
        .get(server.url("/"))
        .header("accept", "application/problem+json")
        .send()
        .await
        .unwrap();
    assert_eq!(problem.status(), 503);
    assert_eq!(
        problem.headers()["content-type"],
        "application/problem+json"
    );
    let json: serde_json::Value = serde_json::from_str(&problem.text().await.unwrap()).unwrap();
    assert_eq!(
        (json["piece"].as_str(), json["status"].as_u64()),
        (Some("gate"), Some(503))
    );
    let plain = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(plain.status(), 503);
    assert!(
        plain.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
}

#[tokio::test]
async fn a_hot_full_server_is_shed_with_a_503() {
    let stack = ProtectLayer::new().shed(ShedLayer::new(SHED, Cpu::fixed(1000)));
    let mut server = app().layer(stack);
    // Nothing has passed, so the capacity is 1 at 1000 ‰: ten hanging requests exceed it.
    let mut held = Vec::new();
    for _ in 0..30 {
        let mut future = Box::pin(Service::<Request<Body>>::call(&mut server, get_("/hang")));
        assert!(poll_once(&mut future.as_mut()).is_pending());
        held.push(future);
    }
    held.truncate(10);
    let response = server.oneshot(get_("/")).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(text(response).await.contains("load shedding"));
}

/// Fills a limit of one in `server` with a request to `/hang` (`flying` then reads 1) and
/// checks that a request to `/` is refused by the limiter; the hanging request, to drop.
async fn fill_the_one_permit<S>(
    server: &mut S,
    flying: impl Fn() -> u32,
) -> std::pin::Pin<Box<S::Future>>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible>,
{
    let mut hanging = Box::pin(server.call(get_("/hang")));
    assert!(poll_once(&mut hanging.as_mut()).is_pending());
    assert_eq!(flying(), 1);
    let refused = server.call(get_("/")).await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(text(refused).await.contains("limiter"));
    hanging
}

#[tokio::test]
async fn a_full_limiter_is_a_503_and_a_dropped_request_gives_its_permit_back() {
    let limiter = LimiterLayer::new(limit_of(1));
    let mut server = app().layer(ProtectLayer::new().limiter(limiter.clone()));
    let hanging = fill_the_one_permit(&mut server, || limiter.flying()).await;
    // The client hangs up mid-flight: the permit goes back, unsampled.
    drop(hanging);
    assert_eq!(limiter.flying(), 0);
    let admitted = server.oneshot(get_("/")).await.unwrap();
    assert_eq!(admitted.status(), StatusCode::OK);
}

#[tokio::test(start_paused = true)]
async fn a_handler_past_its_deadline_is_a_504_and_its_permit_is_settled() {
    let limiter = LimiterLayer::new(limit_of(4));
    let stack = ProtectLayer::new()
        .limiter(limiter.clone())
        .deadline(DeadlineLayer::new(Duration::from_millis(50)));
    let request = Request::get("/slow")
        .header("accept", "application/json")
        .body(Body::empty())
        .unwrap();
    let response = app().layer(stack).oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::GATEWAY_TIMEOUT);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    assert!(text(response).await.contains("\"deadline\""));
    assert_eq!(limiter.flying(), 0);
}

#[tokio::test]
async fn call_reads_the_clock_once_for_shed_quota_and_limiter() {
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reads);
    let clock = Clock::from_fn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        Duration::from_secs(1)
    });
    let stack = ProtectLayer::new()
        .shed(ShedLayer::new(SHED, Cpu::fixed(0)).with_clock(clock.clone()))
        .quota(QuotaLayer::new(Quota::bucket(10.0, 10.0)).with_clock(clock.clone()))
        .limiter(LimiterLayer::new(limit_of(4)).with_clock(clock.clone()));
    let mut server = stack.layer(service_fn(|_: Request<Body>| async {
        Ok::<_, Infallible>(Response::new(Body::from("ok")))
    }));
    let before = reads.load(Ordering::Relaxed);
    let future = server.call(get_("/"));
    assert_eq!(
        reads.load(Ordering::Relaxed) - before,
        1,
        "one reading at call"
    );
    let response = future.await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // One more as the call ends, shared by the shedder's pass and the limiter's sample.
    assert_eq!(reads.load(Ordering::Relaxed) - before, 2);

    // The same three layers stacked one by one read it five times: each decision, the
    // limiter's sample and the shedder's pass.
    let mut by_hand = tower::ServiceBuilder::new()
        .layer(ShedLayer::new(SHED, Cpu::fixed(0)).with_clock(clock.clone()))
        .layer(QuotaLayer::new(Quota::bucket(10.0, 10.0)).with_clock(clock.clone()))
        .layer(LimiterLayer::new(limit_of(4)).with_clock(clock.clone()))
        .service(service_fn(|_: Request<Body>| async {
            Ok::<_, Infallible>(Response::new(Body::from("ok")))
        }));
    let before = reads.load(Ordering::Relaxed);
    by_hand.call(get_("/")).await.unwrap();
    assert_eq!(reads.load(Ordering::Relaxed) - before, 5);
}

#[tokio::test]
async fn an_inner_service_with_a_queued_limiter_waits_its_turn() {
    let limiter = LimiterLayer::new(limit_of(1)).with_queue(ironward_tower::QUEUE);
    let mut server = app().layer(ProtectLayer::new().limiter(limiter.clone()));
    let mut first = Box::pin(Service::<Request<Body>>::call(&mut server, get_("/hang")));
    assert!(poll_once(&mut first.as_mut()).is_pending());
    let second = Service::<Request<Body>>::call(&mut server, get_("/"));
    let mut second = pin!(second);
    assert!(poll_once(&mut second.as_mut()).is_pending());
    assert_eq!(limiter.queued(), 1);
    // The hanging request is cancelled: its room goes to the queued one, which answers.
    drop(first);
    let response = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(limiter.flying(), 0);
}

// A health check passes a full limiter in the stack, uncounted, while the pieces around the
// limiter decide it as any request: the quota still spends a token on it and refuses it once
// they are gone.
#[tokio::test(start_paused = true)]
async fn a_health_check_bypasses_the_stacks_full_limiter_but_not_its_quota() {
    let limiter = LimiterLayer::new(limit_of(1)).with_bypass(|head| head.uri.path() == "/health");
    let stack = ProtectLayer::new()
        .quota(QuotaLayer::new(Quota::bucket(0.001, 3.0)))
        .limiter(limiter.clone())
        .deadline(DeadlineLayer::new(Duration::from_secs(5)));
    let mut server = app().route("/health", get(|| async { "ok" })).layer(stack);
    let hanging = fill_the_one_permit(&mut server, || limiter.flying()).await;

    let mut health = pin!(Service::<Request<Body>>::call(&mut server, get_("/health")));
    assert_eq!(
        limiter.flying(),
        1,
        "the health check is not counted in flight"
    );
    let Poll::Ready(Ok(response)) = poll_once(&mut health.as_mut()) else {
        panic!("a health check is answered at once");
    };
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(text(response).await, "ok");
    assert_eq!(limiter.flying(), 1);

    // The quota's three tokens went to the hanging call, the refused one and the health
    // check: the next health check is over the quota, which the bypass does not pass.
    let over = Service::<Request<Body>>::call(&mut server, get_("/health"))
        .await
        .unwrap();
    assert_eq!(over.status(), StatusCode::TOO_MANY_REQUESTS);
    drop(hanging);
    assert_eq!(limiter.flying(), 0);
}

#[cfg(feature = "metrics")]
mod metrics {
    use axum::error_handling::HandleErrorLayer;
    use tower::ServiceBuilder;

    use super::*;
    use crate::seen::Recording;

    /// What both stacks are sent: two answered, one past its deadline, two over the quota.
    async fn traffic(app: Router) -> Vec<StatusCode> {
        let mut statuses = Vec::new();
        for path in ["/", "/slow", "/", "/", "/"] {
            let response = app.clone().oneshot(get_(path)).await.unwrap();
            statuses.push(response.status());
        }
        statuses
    }

    fn pieces() -> (ShedLayer, QuotaLayer, LimiterLayer, DeadlineLayer) {
        (
            ShedLayer::new(SHED, Cpu::fixed(0)).with_name("web"),
            QuotaLayer::new(Quota::bucket(3.0, 3.0)).with_name("web"),
            LimiterLayer::new(limit_of(4)).with_name("web"),
            DeadlineLayer::new(Duration::from_millis(50)).with_name("web"),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn the_stack_counts_what_the_four_layers_count() {
        let separate = Recording::start();
        let (shed, quota, limiter, deadline) = pieces();
        let by_hand = app().layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(ironward_tower::axum::handle_error))
                .layer(shed)
                .layer(quota)
                .layer(limiter)
                .layer(deadline),
        );
        let by_hand_statuses = traffic(by_hand).await;
        let by_hand_counts = separate.seen().counters("ironward.requests");
        drop(separate);

        let stacked = Recording::start();
        let (shed, quota, limiter, deadline) = pieces();
        let stack = ProtectLayer::new()
            .shed(shed)
            .quota(quota)
            .limiter(limiter)
            .deadline(deadline);
        let stack_statuses = traffic(app().layer(stack)).await;
        let stack_counts = stacked.seen().counters("ironward.requests");

        assert_eq!(
            by_hand_statuses,
            [200, 504, 200, 429, 429].map(|s| StatusCode::from_u16(s).unwrap())
        );
        assert_eq!(stack_statuses, by_hand_statuses);
        assert!(!stack_counts.is_empty());
        assert_eq!(stack_counts, by_hand_counts);
    }
}
