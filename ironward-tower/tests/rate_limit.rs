//! `QuotaLayer`: budgets shared across connections and keys, over real TCP with an axum
//! server, and under paused tokio time for refills, windows, periods and eviction.

use crate::common;

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::ConnectInfo;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::{HeaderName, Request, StatusCode};
use ironward_tower::{Clock, Limited, Quota, QuotaLayer};
use tower::{Layer, Service, ServiceExt, service_fn};

use common::{Server, client};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// What the tests' apps do with an error: a refusal becomes its `429`, anything else `500`.
async fn refuse(err: BoxError) -> Response {
    match err.downcast_ref::<Limited>() {
        Some(limited) => limited.into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// A route behind `limit`, mapping refusals to `429` with the layer's own headers.
fn app(limit: QuotaLayer) -> Router {
    Router::new()
        .route("/", get(|| async { "hello" }))
        .layer((HandleErrorLayer::new(refuse), limit))
}

/// A clock the test sets by hand, in milliseconds.
fn manual_clock() -> (Clock, Arc<AtomicU64>) {
    let millis = Arc::new(AtomicU64::new(0));
    let reading = Arc::clone(&millis);
    let clock = Clock::from_fn(move || Duration::from_millis(reading.load(Ordering::Relaxed)));
    (clock, millis)
}

/// The status and the three rate-limit header fields of a response (empty when absent).
fn fields(response: &reqwest::Response) -> (StatusCode, [String; 3]) {
    let field = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    (
        response.status(),
        [
            field("retry-after"),
            field("ratelimit-policy"),
            field("ratelimit"),
        ],
    )
}

/// Calls `service` once with a request built by `request`, and says whether it was
/// admitted or how long the refusal says to wait.
async fn take<S>(service: &mut S, request: Request<()>) -> Result<(), Duration>
where
    S: Service<Request<()>, Response = Response<()>, Error = BoxError>,
{
    match service.ready().await.unwrap().call(request).await {
        Ok(_) => Ok(()),
        Err(err) => Err(err
            .downcast_ref::<Limited>()
            .expect("a refusal")
            .retry_after()),
    }
}

fn ok()
-> impl Service<Request<()>, Response = Response<()>, Error = BoxError, Future: Send> + Clone + Send
{
    service_fn(|_: Request<()>| async { Ok(Response::new(())) })
}

fn keyed(key: &str) -> Request<()> {
    Request::get("/").header("x-key", key).body(()).unwrap()
}

// A rate-limited route answers 429 with a correct Retry-After once exactly the quota is
// spent. The clock is set by hand so that the expected wait is exact over real TCP.
#[tokio::test]
async fn a_route_answers_429_with_retry_after_once_the_quota_is_spent() {
    let (clock, millis) = manual_clock();
    let limit = QuotaLayer::new(Quota::period(5, secs(60)))
        .with_clock(clock)
        .with_headers(true);
    let server = Server::start(app(limit)).await;
    let client = client();

    for n in 0..5 {
        millis.store(n * 1000, Ordering::Relaxed);
        let response = client.get(server.url("/")).send().await.unwrap();
        // Each admitted response shows the headroom left: no Retry-After, the fields only.
        let expected = [
            String::new(),
            r#""default";q=5;w=60"#.to_owned(),
            format!(r#""default";r={};t={}"#, 4 - n, 60 - n),
        ];
        assert_eq!(fields(&response), (StatusCode::OK, expected), "request {n}");
        assert_eq!(response.text().await.unwrap(), "hello");
    }
    // The period opened at 0 s; at 17.2 s it has 42.8 s to go, which is 43 whole seconds.
    millis.store(17_200, Ordering::Relaxed);
    for _ in 0..2 {
        let refused = client.get(server.url("/")).send().await.unwrap();
        let expected = [
            "43".to_owned(),
            r#""default";q=5;w=60"#.to_owned(),
            r#""default";r=0;t=43"#.to_owned(),
        ];
        assert_eq!(fields(&refused), (StatusCode::TOO_MANY_REQUESTS, expected));
    }
    millis.store(60_000, Ordering::Relaxed);
    let again = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_bucket_route_tells_the_client_when_the_next_token_comes() {
    let (clock, millis) = manual_clock();
    let limit = QuotaLayer::new(Quota::bucket(2.0, 3.0))
        .with_clock(clock)
        .with_name("burst")
        .with_headers(true);
    let server = Server::start(app(limit)).await;
    let client = client();

    // Each admission leaves a token fewer, and the whole burst back 500 ms later than the
    // last: 0.5 s, 1 s, 1.5 s, in whole seconds 1, 1, 2.
    for (left, full) in [(2, 1), (1, 1), (0, 2)] {
        let response = client.get(server.url("/")).send().await.unwrap();
        let expected = [
            String::new(),
            r#""burst";q=3;w=2"#.to_owned(),
            format!(r#""burst";r={left};t={full}"#),
        ];
        assert_eq!(fields(&response), (StatusCode::OK, expected));
    }
    // A token every 500 ms: half a second rounds up to 1 s. The burst of 3 refills in 1.5 s,
    // which the policy reports as 2 whole seconds.
    let refused = client.get(server.url("/")).send().await.unwrap();
    let expected = [
        "1".to_owned(),
        r#""burst";q=3;w=2"#.to_owned(),
        r#""burst";r=0;t=1"#.to_owned(),
    ];
    assert_eq!(fields(&refused), (StatusCode::TOO_MANY_REQUESTS, expected));
    millis.store(500, Ordering::Relaxed);
    let response = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

/// The integer parameter `name` (`q`, `w`, `r`) of a one-member `RateLimit-Policy` or
/// `RateLimit` value.
fn param(value: &http::HeaderValue, name: &str) -> Option<u64> {
    value.to_str().unwrap().split(';').find_map(|param| {
        let (key, number) = param.split_once('=')?;
        (key == name).then(|| number.parse().unwrap())
    })
}

// draft-ietf-httpapi-ratelimit-headers-11 §3.1 and §4.1: a policy is `q` quota units per
// `w` whole seconds, and `r` the units left of it. One limit tells a client one thing: the
// policy field of every response, the `r` that counts down from the quota, and the detail
// of the refusal's problem give the same quota over the same whole seconds.
#[tokio::test(start_paused = true)]
async fn the_policy_field_the_remaining_count_and_the_refusal_agree() {
    let ms = Duration::from_millis;
    for (limit, layer, quota, window) in [
        // The burst over the time it takes to refill: 400 ms, rounded up to a second.
        (Quota::bucket(50.0, 20.0), 20, Some(1)),
        // Slower than one a second: a token every 2 s.
        (Quota::bucket(0.5, 1.0), 1, Some(2)),
        // 7.5 s to refill, rounded up.
        (Quota::bucket(0.4, 3.0), 3, Some(8)),
        (Quota::bucket(10.0, 1.0), 1, Some(1)),
        (Quota::bucket(1e9, 5.0), 5, Some(1)),
        // A bucket that never refills (an infinite rate is read as 0): no window at all.
        (Quota::bucket(0.0, 2.0), 2, None),
        (Quota::bucket(f64::INFINITY, 3.0), 3, None),
        (Quota::sliding(3, ms(400)), 3, Some(1)),
        (Quota::sliding(5, ms(1500)), 5, Some(2)),
        (Quota::sliding(2, secs(60)), 2, Some(60)),
        (Quota::period(4, ms(250)), 4, Some(1)),
        (Quota::aligned(2, secs(3600)), 2, Some(3600)),
    ]
    .into_iter()
    .flat_map(|(limit, quota, window)| {
        // The one budget of a layer without keys, and a key's, are made apart.
        let one_key = |_: &http::request::Parts| Some(());
        [
            (limit, QuotaLayer::new(limit), quota, window),
            (limit, QuotaLayer::keyed(limit, 10, one_key), quota, window),
        ]
    }) {
        let mut service = layer.with_headers(true).layer(ok());
        let mut left = Vec::new();
        let refused = loop {
            let request = Request::new(());
            match service.ready().await.unwrap().call(request).await {
                Ok(response) => {
                    let policy = &response.headers()["ratelimit-policy"];
                    assert_eq!(param(policy, "q"), Some(quota), "{limit:?}");
                    assert_eq!(param(policy, "w"), window, "{limit:?}");
                    left.push(param(&response.headers()["ratelimit"], "r").unwrap());
                }
                Err(err) => break *err.downcast_ref::<Limited>().unwrap(),
            }
            assert!(left.len() <= 100, "{limit:?} admits without end");
        };
        assert_eq!(left, Vec::from_iter((0..quota).rev()), "{limit:?}");
        assert_eq!(
            (refused.quota(), refused.window()),
            (quota, window.map(secs)),
            "{limit:?}"
        );
        let field = match window {
            Some(window) => format!(r#""default";q={quota};w={window}"#),
            None => format!(r#""default";q={quota}"#),
        };
        assert_eq!(refused.headers()["ratelimit-policy"], field, "{limit:?}");
        let problem = ironward_tower::http::Problem::from_error(&refused).unwrap();
        let noun = if quota == 1 { "request" } else { "requests" };
        let said = match window {
            Some(window) => format!("rate limit reached: {quota} {noun} per {window}s, "),
            None => format!("rate limit reached: {quota} {noun} that never come back, "),
        };
        assert!(problem.detail().starts_with(&said), "{}", problem.detail());
    }
}

// draft-ietf-httpapi-ratelimit-headers-11 §3 and §4: both fields are lists, a member per
// policy, so a request that passed two limits carries both, the inner layer's first.
#[tokio::test]
async fn stacked_limits_each_add_their_member_to_the_fields() {
    let minute = QuotaLayer::new(Quota::sliding(5, secs(60)))
        .with_name("minute")
        .with_headers(true);
    let hour = QuotaLayer::new(Quota::period(100, secs(3600)))
        .with_name("hour")
        .with_headers(true);
    let mut service = hour.layer(minute.layer(ok()));
    let response = service
        .ready()
        .await
        .unwrap()
        .call(Request::new(()))
        .await
        .unwrap();
    let all = |name| {
        response
            .headers()
            .get_all(name)
            .iter()
            .map(|value| value.to_str().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        all("ratelimit"),
        [r#""minute";r=4;t=60"#, r#""hour";r=99;t=3600"#]
    );
    assert_eq!(
        all("ratelimit-policy"),
        [r#""minute";q=5;w=60"#, r#""hour";q=100;w=3600"#]
    );
}

// A layer not told to publish its limits (the default) sends the fields on its refusals
// only.
#[tokio::test]
async fn a_layer_without_headers_sends_them_on_refusals_only() {
    let limit = QuotaLayer::new(Quota::period(1, secs(60)));
    assert!(!limit.headers());
    assert!(
        !limit
            .clone()
            .with_headers(true)
            .with_headers(false)
            .headers()
    );
    let server = Server::start(app(limit)).await;
    let client = client();
    let admitted = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(
        fields(&admitted),
        (
            StatusCode::OK,
            [String::new(), String::new(), String::new()]
        )
    );
    let refused = client.get(server.url("/")).send().await.unwrap();
    let (status, [retry_after, policy, _]) = fields(&refused);
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(!retry_after.is_empty() && !policy.is_empty());
}

// Clones share state: a limit of 10 across 4 connections admits 10 in total. axum clones the
// app for every connection, and the client opens one per request.
#[tokio::test]
async fn a_limit_of_ten_admits_ten_in_total_across_four_clients() {
    let ports = Arc::new(Mutex::new(HashSet::new()));
    let seen = Arc::clone(&ports);
    let limit = QuotaLayer::new(Quota::period(10, secs(3600)));
    let app = Router::new()
        .route(
            "/",
            get(
                move |ConnectInfo(peer): ConnectInfo<SocketAddr>| async move {
                    seen.lock().unwrap().insert(peer.port());
                    "hello"
                },
            ),
        )
        .layer((HandleErrorLayer::new(refuse), limit.clone()));
    let server = Arc::new(Server::start(app).await);

    let clients = (0..4).map(|_| {
        let server = Arc::clone(&server);
        tokio::spawn(async move {
            let client = client();
            let mut statuses = Vec::new();
            for _ in 0..10 {
                let response = client.get(server.url("/")).send().await.unwrap();
                statuses.push(response.status());
            }
            statuses
        })
    });
    let mut statuses = Vec::new();
    for client in clients {
        statuses.extend(client.await.unwrap());
    }
    let admitted = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert_eq!((admitted, refused), (10, 30));
    // Each admitted request came over a connection of its own.
    assert_eq!(ports.lock().unwrap().len(), 10);
}

#[tokio::test]
async fn a_keyed_limit_gives_each_api_key_its_own_quota() {
    let name = HeaderName::from_static("x-api-key");
    let limit = QuotaLayer::by_header(Quota::period(3, secs(3600)), 1000, name);
    let server = Server::start(app(limit.clone())).await;
    let client = client();
    let status = |key: Option<&'static str>| {
        let mut request = client.get(server.url("/"));
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        async move { request.send().await.unwrap().status() }
    };

    for key in [Some("alice"), Some("bob"), None] {
        for _ in 0..3 {
            assert_eq!(status(key).await, StatusCode::OK, "{key:?}");
        }
        assert_eq!(status(key).await, StatusCode::TOO_MANY_REQUESTS, "{key:?}");
    }
    // Requests without the header share one budget, which is not a key.
    assert_eq!(limit.keys(), 2);
    assert_eq!(status(Some("carol")).await, StatusCode::OK);
}

#[tokio::test]
async fn a_keyed_limit_gives_each_peer_address_its_own_quota() {
    let limit = Quota::sliding(2, secs(3600));
    // With the `axum` feature the layer reads axum's `ConnectInfo` itself.
    #[cfg(feature = "axum")]
    let layer = QuotaLayer::by_peer(limit, 1000);
    #[cfg(not(feature = "axum"))]
    let layer = QuotaLayer::keyed(limit, 1000, |head: &http::request::Parts| {
        let ConnectInfo(peer) = head.extensions.get::<ConnectInfo<SocketAddr>>()?;
        Some(peer.ip())
    });
    let server = Server::start(app(layer.clone())).await;

    // The whole of 127.0.0.0/8 is loopback: two clients, two source addresses.
    for last in [2, 3] {
        let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, last));
        let client = reqwest::Client::builder()
            .local_address(from)
            .timeout(secs(10))
            .connect_timeout(secs(2))
            .build()
            .unwrap();
        for _ in 0..2 {
            let response = client.get(server.url("/")).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{from}");
        }
        let refused = client.get(server.url("/")).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS, "{from}");
    }
    assert_eq!(layer.keys(), 2);
}

// 10⁵ distinct keys stay within the key bound, so a flood of keys costs evictions, not memory.
#[tokio::test]
async fn a_hundred_thousand_distinct_keys_stay_within_the_key_bound() {
    let layer = QuotaLayer::by_header(
        Quota::bucket(1.0, 5.0),
        1000,
        HeaderName::from_static("x-key"),
    );
    let mut service = layer.layer(ok());
    let started = Instant::now();
    for i in 0..100_000 {
        // Every key is new, so every request is admitted on a fresh budget.
        assert_eq!(take(&mut service, keyed(&i.to_string())).await, Ok(()));
        if i % 1000 == 999 {
            assert!(service.keys() <= 1000, "{} keys after {i}", service.keys());
        }
    }
    assert_eq!(service.keys(), 1000);
    eprintln!("10^5 distinct keys in {:?}", started.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_bucket_refills_at_its_rate_up_to_its_burst() {
    let mut service = QuotaLayer::new(Quota::bucket(10.0, 5.0)).layer(ok());
    for _ in 0..5 {
        assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    }
    assert_eq!(
        take(&mut service, Request::new(())).await,
        Err(Duration::from_millis(100))
    );
    tokio::time::advance(Duration::from_millis(40)).await;
    assert_eq!(
        take(&mut service, Request::new(())).await,
        Err(Duration::from_millis(60))
    );
    tokio::time::advance(Duration::from_millis(60)).await;
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    // A long quiet spell refills to the burst, not beyond it.
    tokio::time::advance(secs(60)).await;
    for _ in 0..5 {
        assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    }
    assert!(take(&mut service, Request::new(())).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn a_sliding_window_frees_room_as_requests_leave_it() {
    let mut service = QuotaLayer::new(Quota::sliding(2, secs(10))).layer(ok());
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    tokio::time::advance(secs(4)).await;
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    tokio::time::advance(secs(5)).await;
    // At 9 s: the request from 0 s leaves the window at 10 s.
    assert_eq!(take(&mut service, Request::new(())).await, Err(secs(1)));
    tokio::time::advance(secs(1)).await;
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    // At 10 s the window holds 4 s and 10 s: the next room is at 14 s, not at a boundary.
    assert_eq!(take(&mut service, Request::new(())).await, Err(secs(4)));
}

#[tokio::test(start_paused = true)]
async fn a_period_resets_when_it_ends() {
    let mut service = QuotaLayer::new(Quota::period(2, secs(10))).layer(ok());
    tokio::time::advance(secs(3)).await;
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    tokio::time::advance(secs(5)).await;
    // The period opened at 3 s, with the first request, and ends at 13 s.
    assert_eq!(take(&mut service, Request::new(())).await, Err(secs(5)));
    tokio::time::advance(secs(5)).await;
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    assert_eq!(take(&mut service, Request::new(())).await, Ok(()));
    assert_eq!(take(&mut service, Request::new(())).await, Err(secs(10)));
}

#[tokio::test(start_paused = true)]
async fn idle_keys_are_evicted_once_their_limit_is_as_good_as_new() {
    let layer = QuotaLayer::by_header(
        Quota::sliding(1, secs(10)),
        10_000,
        HeaderName::from_static("x-key"),
    );
    let mut service = layer.layer(ok());
    for i in 0..50 {
        assert_eq!(take(&mut service, keyed(&format!("old-{i}"))).await, Ok(()));
    }
    assert_eq!(take(&mut service, keyed("old-0")).await, Err(secs(10)));
    tokio::time::advance(secs(10)).await;
    // Not yet: a key must be idle for longer than the window.
    for i in 0..50 {
        assert_eq!(take(&mut service, keyed(&format!("new-{i}"))).await, Ok(()));
    }
    assert_eq!(service.keys(), 100);

    tokio::time::advance(Duration::from_millis(1)).await;
    // Each access drops idle keys from its shard; go on until every old key is gone.
    let mut fresh = 0;
    while service.keys() > 50 + fresh && fresh < 10_000 {
        let key = format!("fresh-{fresh}");
        assert_eq!(take(&mut service, keyed(&key)).await, Ok(()));
        fresh += 1;
    }
    assert_eq!(service.keys(), 50 + fresh, "after {fresh} fresh keys");
    // An evicted key comes back to a whole budget, which it would have had anyway.
    assert_eq!(take(&mut service, keyed("old-0")).await, Ok(()));
}

// The shards lock separately: requests racing on many threads still get exactly their
// key's quota, no more and no less.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_requests_get_exactly_their_keys_quota() {
    let layer = QuotaLayer::by_header(
        Quota::period(3, secs(3600)),
        10_000,
        HeaderName::from_static("x-key"),
    );
    let service = layer.layer(ok());
    let tasks = (0..8).map(|_| {
        let mut service = service.clone();
        tokio::spawn(async move {
            let mut admitted = 0;
            for _ in 0..2 {
                for key in 0..200 {
                    if take(&mut service, keyed(&key.to_string())).await.is_ok() {
                        admitted += 1;
                    }
                }
            }
            admitted
        })
    });
    let mut admitted = 0;
    for task in tasks {
        admitted += task.await.unwrap();
    }
    assert_eq!(admitted, 200 * 3);
    assert_eq!(layer.keys(), 200);
}
