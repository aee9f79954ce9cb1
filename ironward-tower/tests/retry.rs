//! `HttpRetry`: issue 5's retry scenarios through tower's `Retry`, on tokio's paused clock,
//! and end to end against an axum server over TCP with hyper-util's client.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use ironward::Budget;
use ironward::http_retry::{Settings, StopReason, jitter_delay};
use ironward_tower::{Attempts, Clock, Dice, Fault, HttpRetry, RetryStop};
use tokio::time::Instant;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Dice that always roll `r`: `sample_ppm` is `r · 1_000_000`, so every wait is exact.
fn fixed(r: f64) -> Dice {
    Dice::from_fn(move || r)
}

/// One request as the backend saw it: when it arrived, its method, `Idempotency-Key` and
/// body.
type Sighting = (Instant, Method, Option<String>, String);

/// Every request the backend saw.
#[derive(Default)]
struct Seen(Mutex<Vec<Sighting>>);

impl Seen {
    fn lock(&self) -> MutexGuard<'_, Vec<Sighting>> {
        self.0.lock().unwrap()
    }

    fn count(&self) -> usize {
        self.lock().len()
    }

    /// The time between each request and the next.
    fn gaps(&self) -> Vec<Duration> {
        let seen = self.lock();
        seen.windows(2).map(|w| w[1].0 - w[0].0).collect()
    }

    /// Each request's method, key and body, in order.
    fn requests(&self) -> Vec<(Method, Option<String>, String)> {
        let seen = self.lock();
        seen.iter()
            .map(|(_, method, key, body)| (method.clone(), key.clone(), body.clone()))
            .collect()
    }
}

/// A response with `status` and one `Retry-After` field per value.
fn answer(status: u16, retry_after: &[&str]) -> Response<String> {
    let mut response = Response::builder().status(status);
    for value in retry_after {
        response = response.header("retry-after", *value);
    }
    response.body(String::new()).unwrap()
}

/// A backend that answers its `n`th request (from 0) with `script(n)`, after `work` of
/// (paused) time, recording what it saw.
fn backend(
    seen: &Arc<Seen>,
    work: Duration,
    script: impl Fn(usize) -> Response<String> + Clone + Send + 'static,
) -> impl Service<
    Request<String>,
    Response = Response<String>,
    Error = &'static str,
    Future: Send + 'static,
> + Clone
+ Send
+ 'static {
    let seen = Arc::clone(seen);
    service_fn(move |request: Request<String>| {
        let n = {
            let mut seen = seen.lock();
            let key = request
                .headers()
                .get("idempotency-key")
                .map(|v| v.to_str().unwrap().to_owned());
            let method = request.method().clone();
            seen.push((Instant::now(), method, key, request.into_body()));
            seen.len() - 1
        };
        let script = script.clone();
        async move {
            tokio::time::sleep(work).await;
            Ok(script(n))
        }
    })
}

/// Sends `request` through `Retry` with `policy` to `service` and returns the response and
/// the `Attempts` it carries.
async fn send<S>(policy: HttpRetry, service: S, request: Request<String>) -> (StatusCode, Attempts)
where
    S: Service<Request<String>, Response = Response<String>, Error = &'static str> + Clone,
{
    let response = ServiceBuilder::new()
        .retry(policy)
        .service(service)
        .oneshot(request)
        .await
        .expect("a response");
    let attempts = *response.extensions().get::<Attempts>().expect("attempts");
    (response.status(), attempts)
}

fn get() -> Request<String> {
    Request::get("http://backend/items")
        .body(String::new())
        .unwrap()
}

fn post(key: Option<&str>) -> Request<String> {
    let mut request = Request::post("http://backend/orders");
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.body(String::from(r#"{"item":7}"#)).unwrap()
}

fn stopped(reason: StopReason) -> Option<RetryStop> {
    Some(RetryStop::Decided(reason))
}

#[tokio::test(start_paused = true)]
async fn retries_503s_with_growing_waits_until_a_200() {
    // Issue 5, scenario 2: 503, 503, then 200. A fixed roll of 0.5 halves each ceiling:
    // 200 ms · 2⁰ · 0.5, then 200 ms · 2¹ · 0.5.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |n| {
        answer(if n < 2 { 503 } else { 200 }, &[])
    });
    let policy = HttpRetry::default().with_dice(fixed(0.5));
    let (status, attempts) = send(policy, service, get()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        attempts,
        Attempts {
            sent: 3,
            stop: None
        }
    );
    assert_eq!(seen.gaps(), [ms(100), ms(200)]);
}

#[tokio::test(start_paused = true)]
async fn seeded_dice_jitter_each_wait_below_its_ceiling_reproducibly() {
    // Full jitter: each wait is floor(ceiling · floor(roll · 10⁶) / 10⁶) for the seeded rolls,
    // which a second die with the same seed replays. tokio's timer counts whole milliseconds,
    // so a wait may run up to 1 ms long, never short.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |n| {
        answer(if n < 3 { 503 } else { 200 }, &[])
    });
    let policy = HttpRetry::default().with_dice(Dice::seeded(11));
    let (status, attempts) = send(policy, service, get()).await;
    assert_eq!((status, attempts.sent), (StatusCode::OK, 4));

    let replay = Dice::seeded(11);
    for (i, gap) in seen.gaps().into_iter().enumerate() {
        let ppm = (replay.roll() * 1e6) as u32;
        let want = jitter_delay(ms(200) * 2u32.pow(i as u32), ppm).unwrap();
        assert!(
            gap >= want && gap < want + ms(1),
            "retry {i}: waited {gap:?}, want {want:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_429_with_retry_after_2_waits_exactly_two_seconds() {
    // Issue 5, scenario 1, and the seed's rate-limited GET: zero jitter cannot shorten the
    // server's minimum (RFC 9110 §10.2.3).
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |n| {
        if n == 0 {
            answer(429, &["2"])
        } else {
            answer(200, &[])
        }
    });
    let policy = HttpRetry::default().with_dice(fixed(0.0));
    let (status, attempts) = send(policy, service, get()).await;
    assert_eq!(
        (status, attempts),
        (
            StatusCode::OK,
            Attempts {
                sent: 2,
                stop: None
            }
        )
    );
    assert_eq!(seen.gaps(), [Duration::from_secs(2)]);
}

#[tokio::test(start_paused = true)]
async fn an_http_date_retry_after_is_read_against_the_wall_clock() {
    // Issue 5, scenario 10: the date three seconds after the wall clock's now.
    let now = Duration::from_secs(1_445_412_468); // Wed, 21 Oct 2015 07:27:48 GMT
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |n| {
        if n == 0 {
            answer(503, &["Wed, 21 Oct 2015 07:27:51 GMT"])
        } else {
            answer(200, &[])
        }
    });
    let policy = HttpRetry::default()
        .with_dice(fixed(1.0))
        .with_wall_clock(Clock::from_fn(move || now));
    let (status, _) = send(policy, service, get()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(seen.gaps(), [Duration::from_secs(3)]);
}

#[tokio::test(start_paused = true)]
async fn a_post_without_an_idempotency_key_is_not_retried() {
    // Issue 5, scenario 3; RFC 9110 §9.2.2: POST is not idempotent.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |_| answer(503, &[]));
    let (status, attempts) = send(HttpRetry::default(), service, post(None)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        attempts,
        Attempts {
            sent: 1,
            stop: stopped(StopReason::NotReplayable)
        }
    );
    assert_eq!(seen.count(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_post_with_an_idempotency_key_is_retried_unchanged() {
    // Issue 5, scenario 4: the server deduplicates by the key, so the POST may go again,
    // with the same key and the same body.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |n| {
        answer(if n == 0 { 503 } else { 201 }, &[])
    });
    let policy = HttpRetry::default().with_dice(fixed(1.0));
    let (status, attempts) = send(policy, service, post(Some("order-7"))).await;
    assert_eq!(
        (status, attempts),
        (
            StatusCode::CREATED,
            Attempts {
                sent: 2,
                stop: None
            }
        )
    );
    let sent = (
        Method::POST,
        Some("order-7".to_owned()),
        r#"{"item":7}"#.to_owned(),
    );
    assert_eq!(seen.requests(), [sent.clone(), sent]);
    assert_eq!(seen.gaps(), [ms(200)]);
}

#[tokio::test(start_paused = true)]
async fn a_404_is_not_retried() {
    // Issue 5, scenario 11: only 408, 429, 500, 502, 503 and 504 are transient.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |_| answer(404, &["1"]));
    let (status, attempts) = send(HttpRetry::default(), service, get()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        attempts,
        Attempts {
            sent: 1,
            stop: stopped(StopReason::NotRetryable)
        }
    );
    assert_eq!(seen.count(), 1);
}

#[tokio::test(start_paused = true)]
async fn attempts_run_out_after_max_retries_plus_one_requests() {
    // Issue 5, scenario 6: a server that always answers 503.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |_| answer(503, &[]));
    let settings = Settings {
        max_retries: 2,
        ..Settings::default()
    };
    let policy = HttpRetry::new(settings).with_dice(fixed(1.0));
    let (status, attempts) = send(policy, service, get()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        attempts,
        Attempts {
            sent: 3,
            stop: stopped(StopReason::AttemptsExhausted)
        }
    );
    assert_eq!(seen.gaps(), [ms(200), ms(400)]);
}

#[tokio::test(start_paused = true)]
async fn the_time_budget_counts_from_the_first_attempt() {
    // Issue 5, scenario 5. Each attempt takes 1.5 s; with a 4 s budget and 1 s reserve the
    // first retry fits (0.2 + 1 < 4 - 1.5) and the second does not (0.4 + 1 < 4 - 3.2 fails).
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, ms(1500), |_| answer(503, &[]));
    let settings = Settings {
        total_budget: Duration::from_secs(4),
        ..Settings::default()
    };
    let policy = HttpRetry::new(settings).with_dice(fixed(1.0));
    let (_, attempts) = send(policy, service, get()).await;
    assert_eq!(
        attempts,
        Attempts {
            sent: 2,
            stop: stopped(StopReason::BudgetExhausted)
        }
    );
    assert_eq!(seen.gaps(), [ms(1700)]);
}

#[tokio::test(start_paused = true)]
async fn a_malformed_or_repeated_retry_after_stops_the_retry() {
    // Issue 5, scenarios 7 and 8: neither is a delay the client can trust.
    for fields in [&["in a minute"][..], &["1", "1"]] {
        let seen = Arc::new(Seen::default());
        let service = backend(&seen, Duration::ZERO, move |_| answer(503, fields));
        let (_, attempts) = send(HttpRetry::default(), service, get()).await;
        assert_eq!(
            attempts,
            Attempts {
                sent: 1,
                stop: stopped(StopReason::InvalidRetryAfter)
            },
            "{fields:?}"
        );
        assert_eq!(seen.count(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_over_the_cap_is_not_waited_for() {
    // Issue 5, scenario 9: an hour is over the 30 s cap, and is not clipped to it.
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |_| answer(503, &["3600"]));
    let start = Instant::now();
    let (_, attempts) = send(HttpRetry::default(), service, get()).await;
    assert_eq!(
        attempts,
        Attempts {
            sent: 1,
            stop: stopped(StopReason::ServerDelayExceedsCap)
        }
    );
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_draining_budget_stops_retries_while_first_attempts_continue() {
    // gRPC A6: each failure takes a token and retries stop at half of max_tokens. The first
    // call fails four times (10 → 6 tokens) and runs out of attempts; the next two are sent
    // once each, and their retries are throttled (5, then 4 tokens).
    let seen = Arc::new(Seen::default());
    let service = backend(&seen, Duration::ZERO, |_| answer(503, &[]));
    let budget = Arc::new(Mutex::new(Budget::new(10, 0.1)));
    let policy = HttpRetry::default()
        .with_dice(fixed(1.0))
        .with_budget(Arc::clone(&budget));
    let client = ServiceBuilder::new().retry(policy).service(service);

    let mut stops = Vec::new();
    for _ in 0..3 {
        let response = client.clone().oneshot(get()).await.unwrap();
        let attempts = *response.extensions().get::<Attempts>().unwrap();
        stops.push((attempts.sent, attempts.stop));
    }
    assert_eq!(
        stops,
        [
            (4, stopped(StopReason::AttemptsExhausted)),
            (1, Some(RetryStop::Throttled)),
            (1, Some(RetryStop::Throttled)),
        ]
    );
    assert_eq!(seen.count(), 6);
    assert_eq!(budget.lock().unwrap().tokens(), 4.0);
}

#[tokio::test(start_paused = true)]
async fn each_call_counts_and_times_its_own_attempts() {
    // tower's Retry clones the policy per call: a later call starts with no retries made and
    // its own clock, however long ago and however badly the previous one ended.
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let service = service_fn(move |_: Request<String>| {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        // Calls 0 to 3 are the first request's; the second request's first attempt fails too.
        async move { Ok::<_, &str>(answer(if n < 5 { 503 } else { 200 }, &[])) }
    });
    let policy = HttpRetry::default().with_dice(fixed(1.0));
    let client = ServiceBuilder::new().retry(policy).service(service);

    let first = client.clone().oneshot(get()).await.unwrap();
    assert_eq!(first.extensions().get::<Attempts>().unwrap().sent, 4);
    // Past the whole 120 s budget, had it kept counting from the first call.
    tokio::time::advance(Duration::from_secs(200)).await;
    let second = client.oneshot(get()).await.unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    assert_eq!(
        second.extensions().get::<Attempts>(),
        Some(&Attempts {
            sent: 2,
            stop: None
        })
    );
}

#[tokio::test(start_paused = true)]
async fn errors_are_final_unless_a_classifier_says_otherwise() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    // Refuses the first two connections, then answers.
    let service = service_fn(move |_: Request<String>| {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        async move {
            if n < 2 {
                Err("connection refused")
            } else {
                Ok(answer(200, &[]))
            }
        }
    });

    let by_default = ServiceBuilder::new()
        .retry(HttpRetry::default())
        .service(service.clone());
    assert_eq!(
        by_default.oneshot(post(None)).await.unwrap_err(),
        "connection refused"
    );
    assert_eq!(calls.load(Ordering::Relaxed), 1);

    // Nothing was sent, so even an unkeyed POST may go again.
    let unsent = |err: &&str| {
        if *err == "connection refused" {
            Fault::Unsent
        } else {
            Fault::Final
        }
    };
    let policy = HttpRetry::default()
        .with_dice(fixed(1.0))
        .with_errors(unsent);
    let classified = ServiceBuilder::new().retry(policy).service(service);
    let start = Instant::now();
    let response = classified.oneshot(post(None)).await.unwrap();
    assert_eq!(
        response.extensions().get::<Attempts>(),
        Some(&Attempts {
            sent: 2,
            stop: None
        })
    );
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(start.elapsed(), ms(200));
}

mod over_http {
    //! A real axum server on 127.0.0.1 and hyper-util's client, with real (short) waits.

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
    use ironward_tower::{Attempts, Dice, HttpRetry, RetryStop};
    use tower::{ServiceBuilder, ServiceExt};

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
        async fn orders(
            State(log): State<Arc<Log>>,
            headers: HeaderMap,
            body: Bytes,
        ) -> StatusCode {
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
    fn policy() -> HttpRetry {
        let settings = Settings {
            base_delay: Duration::from_millis(50),
            ..Settings::default()
        };
        HttpRetry::new(settings).with_dice(Dice::from_fn(|| 1.0))
    }

    /// Sends `request` through `Retry` over hyper-util's client, every wait bounded.
    async fn send(request: Request<Full<Bytes>>) -> (StatusCode, Attempts, Bytes) {
        let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let retrying = ServiceBuilder::new().retry(policy()).service(client);
        let response = tokio::time::timeout(Duration::from_secs(10), retrying.oneshot(request))
            .await
            .expect("an answer within 10 s")
            .expect("no transport error");
        let attempts = *response.extensions().get::<Attempts>().expect("attempts");
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        (status, attempts, body)
    }

    // Issue 5, scenario 2 over real HTTP: three requests, the second wait at least twice the
    // first's 50 ms.
    #[tokio::test]
    async fn a_flaky_route_is_retried_over_tcp_with_growing_waits() {
        let log = Arc::new(Log::default());
        let server = Server::start(app(Arc::clone(&log))).await;
        let request = Request::get(server.url("/flaky"))
            .body(Full::default())
            .unwrap();

        let (status, attempts, _) = send(request).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            attempts,
            Attempts {
                sent: 3,
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

    // Issue 5, scenarios 3 and 4 over real HTTP: the server counts side effects.
    #[tokio::test]
    async fn only_a_keyed_post_is_replayed_and_the_server_creates_it_once() {
        let log = Arc::new(Log::default());
        let server = Server::start(app(Arc::clone(&log))).await;
        let order = || Full::new(Bytes::from_static(b"order 7"));

        let unkeyed = Request::post(server.url("/orders")).body(order()).unwrap();
        let (status, attempts, _) = send(unkeyed).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        let not_replayable = Some(RetryStop::Decided(StopReason::NotReplayable));
        assert_eq!(
            attempts,
            Attempts {
                sent: 1,
                stop: not_replayable
            }
        );
        assert_eq!(log.stamps.lock().unwrap().len(), 1);

        let keyed = Request::post(server.url("/orders"))
            .header("idempotency-key", "k-7")
            .body(order())
            .unwrap();
        let (status, attempts, _) = send(keyed).await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(
            attempts,
            Attempts {
                sent: 2,
                stop: None
            }
        );
        assert_eq!(log.stamps.lock().unwrap().len(), 3);
        assert_eq!(*log.orders.lock().unwrap(), ["order 7", "k-7"]);
    }
}
