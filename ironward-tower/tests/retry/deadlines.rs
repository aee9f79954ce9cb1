//! Deadlines: the check after waking, attempt timeouts, the budget's cap on the last
//! attempt, and readiness before a retry, on tokio's paused clock.

use std::future::{Future, pending};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use ironward::http_retry::{Settings, StopReason};
use ironward_tower::Clock;
use ironward_tower::retry::{Fault, HttpRetryLayer, Retried};
use tower::{Layer, Service, ServiceExt, service_fn};

use super::{answer, fixed, gave_up_in, get, ms, post, record, secs};

#[tokio::test(start_paused = true)]
async fn the_budget_is_checked_again_after_waking() {
    // A wait is a plan: a process that stalls while asleep may wake with too little budget
    // left for the reserve, and the retry is then not sent. The clock is tokio's plus an
    // offset that jumps 119 s while the call sleeps its 200 ms. The call ends with what the
    // last attempt ended with: its 503, kept through the wait, or its error.
    for fails_with_error in [false, true] {
        let offset = Arc::new(AtomicU64::new(0));
        let origin = tokio::time::Instant::now();
        let read = Arc::clone(&offset);
        let clock = Clock::from_fn(move || {
            origin.elapsed() + Duration::from_secs(read.load(Ordering::Relaxed))
        });
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&calls);
        let backend = service_fn(move |_: Request<String>| {
            counter.fetch_add(1, Ordering::Relaxed);
            let stall = Arc::clone(&offset);
            tokio::spawn(async move {
                tokio::time::sleep(ms(100)).await;
                stall.store(119, Ordering::Relaxed);
            });
            async move {
                match fails_with_error {
                    true => Err("connection reset"),
                    false => Ok(answer(503, &[])),
                }
            }
        });
        let layer = HttpRetryLayer::default()
            .with_clock(clock)
            .with_dice(fixed(1.0))
            .with_errors(|_: &&str| Fault::Sent);
        let result = layer.layer(backend).oneshot(get()).await;
        let exhausted = record(1, ms(200), Some(StopReason::BudgetExhausted));
        assert_eq!(calls.load(Ordering::Relaxed), 1, "the retry is not sent");
        match result {
            Ok(response) => {
                assert!(!fails_with_error);
                assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
                assert_eq!(response.extensions().get::<Retried>(), Some(&exhausted));
            }
            Err(err) => {
                assert!(fails_with_error);
                let gave_up = gave_up_in(&err);
                assert_eq!(gave_up.retried(), exhausted);
                assert!(!gave_up.timed_out());
                assert_eq!(gave_up.error().unwrap().to_string(), "connection reset");
            }
        }
    }
}

/// A backend that never answers: every attempt hangs until it is cut off.
fn hangs() -> impl Service<
    Request<String>,
    Response = Response<String>,
    Error = &'static str,
    Future: Send + 'static,
> + Clone {
    service_fn(|_: Request<String>| pending::<Result<Response<String>, &'static str>>())
}

#[tokio::test(start_paused = true)]
async fn an_attempt_timeout_retries_and_the_budget_cuts_the_last_attempt() {
    // A 3 s budget, a 100 ms reserve and 1 s attempts: cut off at 1 s, retried after 200 ms,
    // cut off at 2.2 s, retried after 400 ms; the third attempt gets the 400 ms left and the
    // call ends on its budget, never later.
    let settings = Settings {
        total_budget: secs(3),
        request_reserve: ms(100),
        ..Settings::default()
    };
    let layer = HttpRetryLayer::new(settings)
        .with_dice(fixed(1.0))
        .with_attempt_timeout(secs(1));
    let start = tokio::time::Instant::now();
    let err = layer.layer(hangs()).oneshot(get()).await.unwrap_err();
    assert_eq!(start.elapsed(), secs(3));
    let gave_up = gave_up_in(&err);
    assert!(gave_up.timed_out());
    assert!(gave_up.error().is_none());
    assert_eq!(
        gave_up.retried(),
        record(3, ms(600), Some(StopReason::BudgetExhausted))
    );
}

#[tokio::test(start_paused = true)]
async fn without_an_attempt_timeout_one_hung_attempt_takes_the_whole_budget() {
    // A zero attempt timeout is none, as on the reqwest edge.
    for zero in [false, true] {
        let settings = Settings {
            total_budget: secs(3),
            request_reserve: ms(100),
            ..Settings::default()
        };
        let mut layer = HttpRetryLayer::new(settings);
        if zero {
            layer = layer.with_attempt_timeout(Duration::ZERO);
        }
        let start = tokio::time::Instant::now();
        let err = layer.layer(hangs()).oneshot(get()).await.unwrap_err();
        assert_eq!(start.elapsed(), secs(3));
        assert_eq!(
            gave_up_in(&err).retried(),
            record(1, Duration::ZERO, Some(StopReason::BudgetExhausted))
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_attempt_timeout_is_a_sent_fault_so_a_post_is_not_retried() {
    let layer = HttpRetryLayer::default()
        .with_dice(fixed(1.0))
        .with_attempt_timeout(secs(1));
    let start = tokio::time::Instant::now();
    let err = layer.layer(hangs()).oneshot(post(None)).await.unwrap_err();
    assert_eq!(start.elapsed(), secs(1));
    let gave_up = gave_up_in(&err);
    assert!(gave_up.timed_out());
    assert_eq!(
        gave_up.retried(),
        record(1, Duration::ZERO, Some(StopReason::NotReplayable))
    );
}

/// A backend that counts its `poll_ready`s and its calls and answers 503 twice, then 200;
/// its clones are never ready when `clones_stuck`. The retry layer sends each retry on a
/// clone, as tower's `Retry` does.
struct Counted {
    ready: Arc<AtomicUsize>,
    calls: Arc<AtomicUsize>,
    stuck: bool,
    clones_stuck: bool,
}

impl Counted {
    fn new(clones_stuck: bool) -> Self {
        Self {
            ready: Arc::default(),
            calls: Arc::default(),
            stuck: false,
            clones_stuck,
        }
    }
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Self {
            ready: Arc::clone(&self.ready),
            calls: Arc::clone(&self.calls),
            stuck: self.clones_stuck,
            clones_stuck: self.clones_stuck,
        }
    }
}

impl Service<Request<String>> for Counted {
    type Response = Response<String>;
    type Error = &'static str;
    type Future = Pin<Box<dyn Future<Output = Result<Response<String>, &'static str>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.ready.fetch_add(1, Ordering::Relaxed);
        if self.stuck {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    }

    fn call(&mut self, _: Request<String>) -> Self::Future {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move { Ok(answer(if n < 2 { 503 } else { 200 }, &[])) })
    }
}

#[tokio::test(start_paused = true)]
async fn the_inner_service_is_made_ready_before_each_retry() {
    // As tower's `Retry`: the first attempt goes to the service the caller made ready, and
    // each retry to the call's clone once its `poll_ready` says so.
    let counted = Counted::new(false);
    let (ready, calls) = (Arc::clone(&counted.ready), Arc::clone(&counted.calls));
    let client = HttpRetryLayer::default()
        .with_dice(fixed(1.0))
        .layer(counted);
    let response = client.oneshot(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    // One by `oneshot` before the call, one before each of the two retries.
    assert_eq!(ready.load(Ordering::Relaxed), 3);
}

#[tokio::test(start_paused = true)]
async fn waiting_for_readiness_counts_against_the_attempt() {
    // A retry whose service never becomes ready is cut off by its timeout like one that never
    // answers: a 503 at 0, a 200 ms wait, the wait for readiness cut off at 1.2 s, a 400 ms
    // wait, cut off at 2.6 s; the 800 ms wait before a fourth attempt would not leave the
    // reserve.
    let counted = Counted::new(true);
    let calls = Arc::clone(&counted.calls);
    let settings = Settings {
        total_budget: secs(3),
        request_reserve: ms(100),
        ..Settings::default()
    };
    let layer = HttpRetryLayer::new(settings)
        .with_dice(fixed(1.0))
        .with_attempt_timeout(secs(1));
    let start = tokio::time::Instant::now();
    let err = layer.layer(counted).oneshot(get()).await.unwrap_err();
    assert_eq!(start.elapsed(), ms(2600));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    let gave_up = gave_up_in(&err);
    assert!(gave_up.timed_out());
    assert_eq!(
        gave_up.retried(),
        record(3, ms(600), Some(StopReason::BudgetExhausted))
    );
}
