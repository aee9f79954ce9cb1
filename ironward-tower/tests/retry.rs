//! `HttpRetryLayer`: the retry scenarios of the MoonBit package `http_retry` (RFC 9110 §9.2.2,
//! §10.2.3) and gRPC A6's retry throttling, on a manual clock with `service_fn` backends;
//! deadlines on tokio's paused clock (`deadlines`); and end to end over TCP with hyper-util's
//! client (`over_http`).

use crate::common;
#[path = "retry/deadlines.rs"]
mod deadlines;
#[path = "retry/over_http.rs"]
mod over_http;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode};
use ironward::SharedBudget;
use ironward::http_retry::{Settings, StopReason};
use ironward_tower::retry::{Fault, GaveUp, HttpRetryLayer, Retried, Stop};
use ironward_tower::{Clock, Dice};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Dice that always roll `r`.
fn fixed(r: f64) -> Dice {
    Dice::from_fn(move || r)
}

/// One request as the backend saw it: when it arrived on the test's clock, its method,
/// `Idempotency-Key` and body.
type Sighting = (Duration, Method, Option<String>, String);

/// A manual clock, and every request a backend on it saw.
struct Rig {
    clock: Clock,
    hand: ironward_tokio::Hand,
    seen: Arc<Mutex<Vec<Sighting>>>,
}

impl Rig {
    fn new() -> Self {
        let (clock, hand) = Clock::manual(Duration::ZERO);
        Self {
            clock,
            hand,
            seen: Arc::default(),
        }
    }

    fn seen(&self) -> MutexGuard<'_, Vec<Sighting>> {
        self.seen.lock().unwrap()
    }

    fn count(&self) -> usize {
        self.seen().len()
    }

    /// When each request arrived, from the call's start.
    fn arrivals(&self) -> Vec<Duration> {
        self.seen().iter().map(|s| s.0).collect()
    }

    /// The time between each request and the next: the waits, exactly.
    fn gaps(&self) -> Vec<Duration> {
        let arrivals = self.arrivals();
        arrivals.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Each request's method, key and body, in order.
    fn requests(&self) -> Vec<(Method, Option<String>, String)> {
        let seen = self.seen();
        seen.iter()
            .map(|(_, method, key, body)| (method.clone(), key.clone(), body.clone()))
            .collect()
    }

    /// A layer on this clock, rolling `r` for every failed attempt.
    fn layer(&self, settings: Settings, r: f64) -> HttpRetryLayer {
        HttpRetryLayer::new(settings)
            .with_clock(self.clock.clone())
            .with_dice(fixed(r))
    }

    /// A backend that answers its `n`th request (from 0) with `script(n)`, after moving the
    /// clock on by `work`, recording what it saw.
    fn backend(
        &self,
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
        let seen = Arc::clone(&self.seen);
        let clock = self.clock.clone();
        let hand = self.hand.clone();
        service_fn(move |request: Request<String>| {
            let n = {
                let mut seen = seen.lock().unwrap();
                let key = request
                    .headers()
                    .get("idempotency-key")
                    .map(|v| v.to_str().unwrap().to_owned());
                let method = request.method().clone();
                seen.push((clock.now(), method, key, request.into_body()));
                seen.len() - 1
            };
            hand.advance(work);
            let response = script(n);
            async move { Ok(response) }
        })
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

/// Sends `request` through `layer` to `service`; the response's status and its `Retried`.
async fn send<S>(
    layer: HttpRetryLayer,
    service: S,
    request: Request<String>,
) -> (StatusCode, Retried)
where
    S: Service<Request<String>, Response = Response<String>, Error = &'static str> + Clone,
{
    let response = layer
        .layer(service)
        .oneshot(request)
        .await
        .expect("a response");
    let retried = *response.extensions().get::<Retried>().expect("a record");
    (response.status(), retried)
}

/// The `GaveUp` inside an error the layer returned.
fn gave_up_in(err: &BoxError) -> &GaveUp {
    err.downcast_ref::<GaveUp>().expect("a GaveUp")
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

fn record(attempts: u32, waited: Duration, stop: Option<StopReason>) -> Retried {
    Retried {
        attempts,
        waited,
        stop: stop.map(Stop::Decided),
    }
}

#[tokio::test]
async fn retries_503s_with_growing_waits_until_a_200() {
    // 503, 503, then 200. A roll of 0.5 halves each ceiling: 200 ms · 2⁰ · 0.5, then
    // 200 ms · 2¹ · 0.5.
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |n| {
        answer(if n < 2 { 503 } else { 200 }, &[])
    });
    let (status, retried) = send(rig.layer(Settings::default(), 0.5), service, get()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(retried, record(3, ms(300), None));
    assert_eq!(rig.gaps(), [ms(100), ms(200)]);
}

#[tokio::test]
async fn seeded_dice_give_the_cores_backoff_to_the_nanosecond() {
    // Full jitter: each wait is the core's `Settings::backoff` for the roll drawn after that
    // failed attempt, which a second die with the same seed replays. On a manual clock the
    // waits are exact.
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |n| {
        answer(if n < 3 { 503 } else { 200 }, &[])
    });
    let layer = rig
        .layer(Settings::default(), 0.0)
        .with_dice(Dice::seeded(11));
    let (status, retried) = send(layer, service, get()).await;
    assert_eq!((status, retried.attempts), (StatusCode::OK, 4));

    let replay = Dice::seeded(11);
    let backoff = Settings::default().backoff();
    let want: Vec<Duration> = (1..=3)
        .map(|attempt| backoff.delay(attempt, replay.roll(), None))
        .collect();
    assert_eq!(rig.gaps(), want);
    assert_eq!(retried.waited, want.iter().sum::<Duration>());
    assert!(
        want.iter().any(|w| w.subsec_nanos() % 1_000_000 != 0),
        "{want:?}"
    );
}

#[tokio::test]
async fn a_429_with_retry_after_2_waits_exactly_two_seconds() {
    // The MoonBit package's rate-limited GET: a roll of zero cannot shorten the server's
    // minimum (RFC 9110 §10.2.3).
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |n| {
        if n == 0 {
            answer(429, &["2"])
        } else {
            answer(200, &[])
        }
    });
    let (status, retried) = send(rig.layer(Settings::default(), 0.0), service, get()).await;
    assert_eq!(
        (status, retried),
        (StatusCode::OK, record(2, secs(2), None))
    );
    assert_eq!(rig.gaps(), [secs(2)]);
}

#[tokio::test]
async fn an_http_date_retry_after_is_read_against_the_wall_clock() {
    // RFC 9110 §10.2.3: the date three seconds after the wall clock's now.
    let now = Duration::from_secs(1_445_412_468); // Wed, 21 Oct 2015 07:27:48 GMT
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |n| {
        if n == 0 {
            answer(503, &["Wed, 21 Oct 2015 07:27:51 GMT"])
        } else {
            answer(200, &[])
        }
    });
    let layer = rig
        .layer(Settings::default(), 1.0)
        .with_wall_clock(Clock::from_fn(move || now));
    let (status, _) = send(layer, service, get()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rig.gaps(), [secs(3)]);
}

#[tokio::test]
async fn a_post_without_an_idempotency_key_is_not_retried() {
    // RFC 9110 §9.2.2: POST is not idempotent.
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |_| answer(503, &[]));
    let (status, retried) = send(rig.layer(Settings::default(), 1.0), service, post(None)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        retried,
        record(1, Duration::ZERO, Some(StopReason::NotReplayable))
    );
    assert_eq!(rig.count(), 1);
}

#[tokio::test]
async fn a_post_with_an_empty_key_is_not_replay_safe() {
    // The core's `vouches`: an empty or blank key names no operation the server could
    // deduplicate by.
    for key in ["", " \t "] {
        let rig = Rig::new();
        let service = rig.backend(Duration::ZERO, |_| answer(503, &[]));
        let layer = rig.layer(Settings::default(), 1.0);
        let (_, retried) = send(layer, service, post(Some(key))).await;
        assert_eq!(
            retried.stop,
            Some(Stop::Decided(StopReason::NotReplayable)),
            "{key:?}"
        );
        assert_eq!(rig.count(), 1);
    }
}

#[tokio::test]
async fn a_post_with_an_idempotency_key_is_retried_unchanged() {
    // The server deduplicates by the key, so the POST may go again, with the same key and
    // the same body.
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |n| {
        answer(if n == 0 { 503 } else { 201 }, &[])
    });
    let layer = rig.layer(Settings::default(), 1.0);
    let (status, retried) = send(layer, service, post(Some("order-7"))).await;
    assert_eq!(
        (status, retried),
        (StatusCode::CREATED, record(2, ms(200), None))
    );
    let sent = (
        Method::POST,
        Some("order-7".to_owned()),
        r#"{"item":7}"#.to_owned(),
    );
    assert_eq!(rig.requests(), [sent.clone(), sent]);
    assert_eq!(rig.gaps(), [ms(200)]);
}

#[tokio::test]
async fn the_idempotency_header_can_be_renamed_or_ignored() {
    // A backend that always answers 503: a POST that may be replayed runs out of retries, one
    // that may not stops at once.
    let keyed = |header: &str| {
        Request::post("http://backend/orders")
            .header(header, "order-7")
            .body(String::new())
            .unwrap()
    };
    let x_request_id = HeaderName::from_static("x-request-id");
    let replayable = StopReason::AttemptsExhausted;
    let not = StopReason::NotReplayable;
    for (header, sent, stop) in [
        (Some(x_request_id.clone()), "x-request-id", replayable),
        // The default header no longer vouches under a renamed one.
        (Some(x_request_id), "idempotency-key", not),
        (None, "idempotency-key", not),
    ] {
        let rig = Rig::new();
        let service = rig.backend(Duration::ZERO, |_| answer(503, &[]));
        let layer = rig
            .layer(Settings::default(), 1.0)
            .with_idempotency_header(header.clone());
        let (_, retried) = send(layer, service, keyed(sent)).await;
        assert_eq!(
            retried.stop,
            Some(Stop::Decided(stop)),
            "{header:?}, {sent}"
        );
    }
}

#[tokio::test]
async fn a_404_is_not_retried() {
    // Only 408, 429, 500, 502, 503 and 504 are transient (the MoonBit package's defaults).
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |_| answer(404, &["1"]));
    let (status, retried) = send(rig.layer(Settings::default(), 1.0), service, get()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        retried,
        record(1, Duration::ZERO, Some(StopReason::NotRetryable))
    );
}

#[tokio::test]
async fn attempts_run_out_after_max_retries_plus_one_requests() {
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |_| answer(503, &[]));
    let settings = Settings {
        max_retries: 2,
        ..Settings::default()
    };
    let (status, retried) = send(rig.layer(settings, 1.0), service, get()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        retried,
        record(3, ms(600), Some(StopReason::AttemptsExhausted))
    );
    assert_eq!(rig.gaps(), [ms(200), ms(400)]);
}

#[tokio::test]
async fn the_time_budget_counts_from_the_first_attempt() {
    // Each attempt takes 1.5 s; with a 4 s budget and 1 s reserve the first retry fits
    // (0.2 + 1 < 4 - 1.5) and the second does not (0.4 + 1 < 4 - 3.2 fails).
    let rig = Rig::new();
    let service = rig.backend(ms(1500), |_| answer(503, &[]));
    let settings = Settings {
        total_budget: secs(4),
        ..Settings::default()
    };
    let (_, retried) = send(rig.layer(settings, 1.0), service, get()).await;
    assert_eq!(
        retried,
        record(2, ms(200), Some(StopReason::BudgetExhausted))
    );
    assert_eq!(rig.gaps(), [ms(1700)]);
}

#[tokio::test]
async fn a_malformed_or_repeated_retry_after_stops_the_retry() {
    // RFC 9110 §10.2.3: `Retry-After` is one value, not a list; two fields, even identical
    // ones, leave the server's intent unclear.
    for fields in [&["in a minute"][..], &["1", "1"]] {
        let rig = Rig::new();
        let service = rig.backend(Duration::ZERO, move |_| answer(503, fields));
        let (_, retried) = send(rig.layer(Settings::default(), 1.0), service, get()).await;
        assert_eq!(
            retried,
            record(1, Duration::ZERO, Some(StopReason::InvalidRetryAfter)),
            "{fields:?}"
        );
        assert_eq!(rig.count(), 1);
    }
}

#[tokio::test]
async fn a_retry_after_that_is_not_utf8_is_invalid() {
    // RFC 9110 §5.5 allows obs-text bytes in a field value; none can be a delay.
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |_| {
        let mut response = answer(503, &[]);
        let value = HeaderValue::from_bytes(b"\xff5").unwrap();
        response.headers_mut().insert("retry-after", value);
        response
    });
    let (_, retried) = send(rig.layer(Settings::default(), 1.0), service, get()).await;
    assert_eq!(
        retried.stop,
        Some(Stop::Decided(StopReason::InvalidRetryAfter))
    );
    assert_eq!(rig.count(), 1);
}

#[tokio::test]
async fn a_retry_after_over_the_cap_is_not_waited_for() {
    // An hour is over the 30 s cap, and is not clipped to it.
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |_| answer(503, &["3600"]));
    let (_, retried) = send(rig.layer(Settings::default(), 1.0), service, get()).await;
    assert_eq!(
        retried,
        record(1, Duration::ZERO, Some(StopReason::ServerDelayExceedsCap))
    );
    assert_eq!(rig.clock.now(), Duration::ZERO);
}

#[tokio::test]
async fn a_draining_budget_stops_retries_while_first_attempts_continue() {
    // gRPC A6: each failure takes a token and retries stop at half of max_tokens. The first
    // call fails four times (10 → 6 tokens) and runs out of attempts; the next two are sent
    // once each, and their retries are throttled (5, then 4 tokens).
    let rig = Rig::new();
    let service = rig.backend(Duration::ZERO, |_| answer(503, &[]));
    let budget = Arc::new(SharedBudget::new(10, 0.1));
    let client = rig
        .layer(Settings::default(), 1.0)
        .with_budget(Arc::clone(&budget))
        .layer(service);

    let mut stops = Vec::new();
    for _ in 0..3 {
        let response = client.clone().oneshot(get()).await.unwrap();
        let retried = *response.extensions().get::<Retried>().unwrap();
        stops.push((retried.attempts, retried.stop));
    }
    let exhausted = Some(Stop::Decided(StopReason::AttemptsExhausted));
    assert_eq!(
        stops,
        [
            (4, exhausted),
            (1, Some(Stop::Throttled)),
            (1, Some(Stop::Throttled))
        ]
    );
    assert_eq!(rig.count(), 6);
    assert_eq!(budget.tokens(), 4.0);
}

#[tokio::test]
async fn each_call_counts_and_times_its_own_attempts() {
    // A later call starts with no retries made and its own start, however long ago and
    // however badly the previous one ended.
    let rig = Rig::new();
    // Requests 0 to 3 are the first call's; the second call's first attempt fails too.
    let service = rig.backend(Duration::ZERO, |n| {
        answer(if n < 5 { 503 } else { 200 }, &[])
    });
    let client = rig.layer(Settings::default(), 1.0).layer(service);

    let first = client.clone().oneshot(get()).await.unwrap();
    assert_eq!(first.extensions().get::<Retried>().unwrap().attempts, 4);
    // Past the whole 120 s budget, had it kept counting from the first call.
    rig.hand.advance(secs(200));
    let second = client.oneshot(get()).await.unwrap();
    assert_eq!(second.status(), StatusCode::OK);
    assert_eq!(
        second.extensions().get::<Retried>(),
        Some(&record(2, ms(200), None))
    );
}

#[tokio::test]
async fn errors_are_final_unless_a_classifier_says_otherwise() {
    // A backend that fails every attempt with the error it is given.
    let failing = |error: &'static str| {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let service = service_fn(move |_: Request<String>| {
            counter.fetch_add(1, Ordering::Relaxed);
            async move { Err::<Response<String>, _>(error) }
        });
        (service, calls)
    };
    let rig = Rig::new();

    // By default an error ends the call at once: a GaveUp holding it.
    let (service, calls) = failing("connection refused");
    let err = rig
        .layer(Settings::default(), 1.0)
        .layer(service)
        .oneshot(post(None))
        .await
        .unwrap_err();
    let gave_up = gave_up_in(&err);
    assert_eq!(
        gave_up.retried(),
        record(1, Duration::ZERO, Some(StopReason::NotRetryable))
    );
    assert_eq!(
        gave_up.error().map(ToString::to_string).as_deref(),
        Some("connection refused")
    );
    assert!(!gave_up.timed_out());
    assert_eq!(calls.load(Ordering::Relaxed), 1);

    let classify = |err: &&'static str| match *err {
        "connection refused" => Fault::Unsent,
        "connection reset" => Fault::Sent,
        _ => Fault::Final,
    };
    let settings = Settings {
        max_retries: 1,
        ..Settings::default()
    };
    // (error, request, attempts, why it stopped)
    let cases = [
        // Nothing was sent, so even an unkeyed POST may go again.
        (
            "connection refused",
            post(None),
            2,
            StopReason::AttemptsExhausted,
        ),
        // A POST that may have arrived may not.
        ("connection reset", post(None), 1, StopReason::NotReplayable),
        // A GET may: it is idempotent.
        ("connection reset", get(), 2, StopReason::AttemptsExhausted),
        // A keyed POST may: the server deduplicates it.
        (
            "connection reset",
            post(Some("k")),
            2,
            StopReason::AttemptsExhausted,
        ),
        ("bad uri", get(), 1, StopReason::NotRetryable),
    ];
    for (error, request, attempts, reason) in cases {
        let (service, calls) = failing(error);
        let layer = rig.layer(settings, 1.0).with_errors(classify);
        let err = layer.layer(service).oneshot(request).await.unwrap_err();
        let gave_up = gave_up_in(&err);
        assert_eq!(gave_up.retried().attempts, attempts, "{error}");
        assert_eq!(
            gave_up.retried().stop,
            Some(Stop::Decided(reason)),
            "{error}"
        );
        assert_eq!(calls.load(Ordering::Relaxed), attempts as usize, "{error}");
        assert_eq!(gave_up.error().unwrap().to_string(), error);
    }
}

#[test]
fn debug_names_the_classifier_and_never_reads_the_clock() {
    let clock = Clock::from_fn(|| panic!("Debug must not read the clock"));
    let layer = HttpRetryLayer::default()
        .with_clock(clock)
        .with_errors(|_: &&str| Fault::Sent);
    let text = format!("{layer:?}");
    assert!(text.contains("attempt_timeout: None"), "{text}");
    assert!(text.contains("closure"), "{text}");
    let text = format!("{:?}", HttpRetryLayer::default());
    assert!(text.contains("FinalErrors"), "{text}");
}
