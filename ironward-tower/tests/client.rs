//! `ClientLayer`: the client stack around a `service_fn`, every piece optional, each refusal
//! typed, the deadline spent across retries, the breaker read by the retry, the limiter's
//! samples, permits released on drop, and one clock reading shared.

use std::convert::Infallible;
use std::future::{Future, pending};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use ironward::classic::{OpenWait, Record};
use ironward::http_retry::{Settings, Stop, StopReason};
use ironward::{CLASSIC, Classic, ClassicReason, SRE, Settle};
use ironward_tokio::SharedClassicBreaker;
use ironward_tower::{
    Answer, BreakerLayer, BreakerRefused, ClientLayer, Clock, DeadlineExceeded, DeadlineLayer,
    Dice, Failing, FinalErrors, GaveUp, HttpRetryLayer, LimiterLayer, LimiterRefused, QUEUE,
    Retried,
};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

use crate::common::limit_of;

fn get() -> Request<String> {
    Request::get("http://backend/items")
        .body(String::new())
        .unwrap()
}

fn poll_once<F: Future>(future: &mut std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
}

/// A backend answering each call with the next status of `statuses` (the last one once
/// they run out), counting the calls that reach it.
#[derive(Clone)]
struct Backend {
    reached: Arc<AtomicUsize>,
    statuses: Arc<Vec<u16>>,
}

impl Backend {
    fn new(statuses: &[u16]) -> Self {
        Self {
            reached: Arc::new(AtomicUsize::new(0)),
            statuses: Arc::new(statuses.to_vec()),
        }
    }

    fn reached(&self) -> usize {
        self.reached.load(Ordering::Relaxed)
    }

    fn service(
        &self,
    ) -> impl Service<
        Request<String>,
        Response = Response<String>,
        Error = Infallible,
        Future = impl Future<Output = Result<Response<String>, Infallible>> + Send,
    > + Clone
    + Send
    + 'static {
        let this = self.clone();
        service_fn(move |_: Request<String>| {
            let index = this.reached.fetch_add(1, Ordering::Relaxed);
            let status = this.statuses[index.min(this.statuses.len() - 1)];
            async move {
                let mut response = Response::new(String::from("body"));
                *response.status_mut() = StatusCode::from_u16(status).unwrap();
                Ok(response)
            }
        })
    }
}

/// Every choice of pieces is the one type `ClientLayer` (with the pieces' defaults), built
/// with no macro.
fn stack(deadline: bool, retry: bool, breaker: bool, limiter: bool) -> ClientLayer {
    let mut stack = ClientLayer::new();
    if deadline {
        stack = stack.deadline(DeadlineLayer::new(Duration::from_secs(5)));
    }
    if retry {
        stack = stack.retry(HttpRetryLayer::default());
    }
    if breaker {
        stack = stack.breaker(BreakerLayer::new(SRE));
    }
    if limiter {
        stack = stack.limiter(LimiterLayer::new(limit_of(8)));
    }
    stack
}

#[tokio::test]
async fn every_subset_of_pieces_is_one_type_and_answers() {
    let backend = Backend::new(&[200]);
    for bits in 0..16u8 {
        let layer = stack(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
        let response = layer.layer(backend.service()).oneshot(get()).await;
        let response = response.unwrap_or_else(|err| panic!("stack {bits:04b}: {err}"));
        assert_eq!(response.status(), StatusCode::OK, "stack {bits:04b}");
        // The retry's record is on the response exactly when the stack retries.
        let retried = response.extensions().get::<Retried>();
        assert_eq!(retried.is_some(), bits & 2 != 0, "stack {bits:04b}");
    }
    assert_eq!(backend.reached(), 16);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_refuses_with_its_own_error() {
    let hangs = service_fn(|_: Request<String>| pending::<Result<Response<String>, Infallible>>());
    let stack = ClientLayer::new()
        .deadline(DeadlineLayer::new(Duration::from_secs(1)))
        .retry(HttpRetryLayer::default());
    let start = tokio::time::Instant::now();
    let err = stack.layer(hangs).oneshot(get()).await.unwrap_err();
    assert!(err.is::<DeadlineExceeded>(), "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test]
async fn the_breaker_refuses_with_its_own_error_without_a_retry() {
    let backend = Backend::new(&[502]);
    let breaker = BreakerLayer::new(SRE).with_dice(Dice::from_fn(|| 0.0));
    let client = ClientLayer::new()
        .breaker(breaker.clone())
        .layer(backend.service());
    let mut refused = 0;
    for _ in 0..20 {
        match client.clone().oneshot(get()).await {
            Ok(response) => assert_eq!(response.status(), StatusCode::BAD_GATEWAY),
            Err(err) => {
                assert!(err.is::<BreakerRefused>(), "{err}");
                refused += 1;
            }
        }
    }
    assert!(refused > 0);
    assert_eq!(backend.reached() + refused, 20);
    assert!(breaker.ratio() > 0.0);
}

/// The default retry and an SRE breaker whose draw refuses whenever its ratio is above
/// zero, on one manual clock (the retry's waits move it at once).
fn retrying_sre() -> ClientLayer {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    ClientLayer::new()
        .retry(
            HttpRetryLayer::default()
                .with_clock(clock.clone())
                .with_dice(Dice::from_fn(|| 1.0)),
        )
        .breaker(
            BreakerLayer::new(SRE)
                .with_clock(clock)
                .with_dice(Dice::from_fn(|| 0.0)),
        )
}

#[tokio::test]
async fn an_sre_refusal_ends_the_retry_with_the_refusal_inside() {
    let backend = Backend::new(&[502]);
    let client = retrying_sre().layer(backend.service());
    // Fill the breaker's window with failures until it refuses the first attempt of a call.
    let mut last = None;
    for _ in 0..20 {
        if let Err(err) = client.clone().oneshot(get()).await {
            last = Some(err);
            break;
        }
    }
    let err = last.expect("the breaker refused a first attempt");
    let gave_up = err.downcast_ref::<GaveUp>().expect("a retry gives up");
    assert_eq!(gave_up.stop(), Stop::Refused);
    assert!(gave_up.error_as::<BreakerRefused>().is_some());
    // The refused attempt was not sent, so not counted.
    assert_eq!(gave_up.retried().attempts, 0);
}

#[tokio::test]
async fn a_failed_response_is_kept_when_the_breaker_refuses_its_retry() {
    let backend = Backend::new(&[503]);
    let client = retrying_sre().layer(backend.service());
    let mut seen = None;
    for _ in 0..20 {
        let response = match client.clone().oneshot(get()).await {
            Ok(response) => response,
            Err(_) => continue,
        };
        let retried = *response.extensions().get::<Retried>().unwrap();
        if retried.stop == Some(Stop::Refused) {
            seen = Some(response);
            break;
        }
    }
    let response = seen.expect("a retry the breaker refused");
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn the_limiter_refuses_with_its_own_error() {
    let limiter = LimiterLayer::new(limit_of(1));
    let hangs = service_fn(|_: Request<String>| pending::<Result<Response<String>, Infallible>>());
    let mut client = ClientLayer::new().limiter(limiter.clone()).layer(hangs);
    let first = client.ready().await.unwrap().call(get());
    let mut first = pin!(first);
    assert!(poll_once(&mut first).is_pending());
    assert_eq!(limiter.flying(), 1);
    let err = client.ready().await.unwrap().call(get()).await.unwrap_err();
    assert!(err.is::<LimiterRefused>(), "{err}");

    // With a retry, the refusal ends the run, inside its `GaveUp`.
    let hangs = service_fn(|_: Request<String>| pending::<Result<Response<String>, Infallible>>());
    let client = ClientLayer::new()
        .retry(HttpRetryLayer::default())
        .limiter(limiter.clone())
        .layer(hangs);
    let err = client.oneshot(get()).await.unwrap_err();
    let gave_up = err.downcast_ref::<GaveUp>().unwrap();
    assert_eq!(gave_up.stop(), Stop::Refused);
    assert!(gave_up.error_as::<LimiterRefused>().is_some());
}

// A call the limiter's predicate matches bypasses it on every attempt: with the limit full,
// the health check's first attempt (a 503) and its retry both reach the backend, neither
// counted in flight.
#[tokio::test(start_paused = true)]
async fn a_health_check_bypasses_the_full_limiter_on_every_attempt() {
    let limiter = LimiterLayer::new(limit_of(1)).with_bypass(|head| head.uri.path() == "/health");
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reached);
    let backend = service_fn(move |request: Request<String>| {
        let health = request.uri().path() == "/health";
        let attempt = if health {
            counter.fetch_add(1, Ordering::Relaxed)
        } else {
            0
        };
        async move {
            if !health {
                return pending().await;
            }
            let mut response = Response::new(String::new());
            if attempt == 0 {
                *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            }
            Ok::<_, Infallible>(response)
        }
    });
    let mut client = ClientLayer::new()
        .retry(HttpRetryLayer::default())
        .limiter(limiter.clone())
        .layer(backend);
    let first = client.ready().await.unwrap().call(get());
    let mut first = pin!(first);
    assert!(poll_once(&mut first).is_pending());
    assert_eq!(limiter.flying(), 1);
    let err = client.ready().await.unwrap().call(get()).await.unwrap_err();
    assert!(err.downcast_ref::<GaveUp>().is_some(), "{err}");

    let health = Request::get("http://backend/health")
        .body(String::new())
        .unwrap();
    let response = client.ready().await.unwrap().call(health).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        reached.load(Ordering::Relaxed),
        2,
        "the first attempt and its retry"
    );
    assert_eq!(limiter.flying(), 1, "neither attempt was counted");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_spent_across_retries() {
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&reached);
    // Each attempt takes 300 ms and fails with a 503.
    let slow = service_fn(move |_: Request<String>| {
        counter.fetch_add(1, Ordering::Relaxed);
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let mut response = Response::new(String::new());
            *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
            Ok::<_, Infallible>(response)
        }
    });
    let settings = Settings {
        max_retries: 10,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(100),
        ..Settings::default()
    };
    let client = ClientLayer::new()
        .deadline(DeadlineLayer::new(Duration::from_secs(1)))
        .retry(HttpRetryLayer::new(settings).with_dice(Dice::from_fn(|| 1.0)))
        .layer(slow);
    let start = tokio::time::Instant::now();
    let err = client.oneshot(get()).await.unwrap_err();
    assert!(err.is::<DeadlineExceeded>(), "{err}");
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    // 300 ms, 100 ms wait, 300 ms, 100 ms wait, then the third attempt is cut at 1 s.
    assert_eq!(reached.load(Ordering::Relaxed), 3);
}

/// A breaker's classifier as a plain function: an error or a 5xx is a failure.
type Judge = Failing<fn(Answer<'_>) -> bool>;

/// A classic breaker opening after three failures in a row, for `open`.
fn classic(open: Duration, clock: &Clock) -> BreakerLayer<Judge, SharedClassicBreaker> {
    let policy = Classic {
        record: Record::Consecutive { failures: 3 },
        open: OpenWait::Fixed(open),
        probes: 1,
        ..CLASSIC
    };
    let failed: fn(Answer<'_>) -> bool = |answer| {
        answer
            .status()
            .is_none_or(|status| status.is_server_error())
    };
    BreakerLayer::new(policy)
        .with_clock(clock.clone())
        .with_classifier(Failing::when(failed))
}

/// A retry of up to eight retries and a classic breaker open for `open` after three
/// failures, on one manual clock (the retry's waits move it at once).
fn retrying_classic(
    open: Duration,
) -> (ClientLayer<FinalErrors, Judge, SharedClassicBreaker>, Clock) {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let settings = Settings {
        max_retries: 8,
        ..Settings::default()
    };
    let stack = ClientLayer::new()
        .retry(
            HttpRetryLayer::new(settings)
                .with_clock(clock.clone())
                .with_dice(Dice::from_fn(|| 1.0)),
        )
        .breaker(classic(open, &clock));
    (stack, clock)
}

#[tokio::test]
async fn an_open_breaker_is_not_hammered_by_the_retry() {
    let backend = Backend::new(&[502]);
    let (stack, _clock) = retrying_classic(Duration::from_secs(60));
    let client = stack.layer(backend.service());
    let err = client.clone().oneshot(get()).await.unwrap_err();
    let gave_up = err.downcast_ref::<GaveUp>().unwrap();
    // Three 502s opened it; its 60 s are over the retry's 30 s cap, so the run stops there.
    assert_eq!(
        gave_up.stop(),
        Stop::Decided(StopReason::ServerDelayExceedsCap)
    );
    let refused = gave_up
        .error_as::<BreakerRefused<ClassicReason>>()
        .expect("the breaker's refusal");
    // Opened at the third failure (0.6 s), asked again after 0.8 s more of backoff.
    assert_eq!(refused.retry_after(), Some(Duration::from_millis(59_200)));
    assert_eq!(backend.reached(), 3);
    // The next call is refused at once: nothing reaches the backend while it is open.
    let err = client.oneshot(get()).await.unwrap_err();
    assert!(err.downcast_ref::<GaveUp>().is_some());
    assert_eq!(backend.reached(), 3);
}

#[tokio::test]
async fn a_known_open_wait_the_rules_accept_is_waited_out_then_probed() {
    // Three failures, then the backend recovers.
    let backend = Backend::new(&[502, 502, 502, 200]);
    let (stack, clock) = retrying_classic(Duration::from_secs(2));
    let client = stack.layer(backend.service());
    let response = client.oneshot(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let retried = response.extensions().get::<Retried>().unwrap();
    // Three sent, one refused (counted: the rules decided it), one probe that passed.
    assert_eq!(retried.attempts, 5);
    assert_eq!(backend.reached(), 4);
    // 200, 400 and 800 ms of backoff; the breaker, open since the third failure (0.6 s),
    // refuses at 1.4 s with 1.2 s left, a `Retry-After` of 2 s (whole seconds, rounded up).
    assert_eq!(clock.now(), Duration::from_millis(3400));
}

#[tokio::test]
async fn the_limiter_samples_each_attempt_and_never_a_refusal() {
    let backend = Backend::new(&[503, 503, 200]);
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let graded = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&graded);
    let grade = move |result: &Result<Response<String>, BoxError>| {
        let status = result.as_ref().map(|response| response.status().as_u16());
        log.lock().unwrap().push(status.unwrap_or(0));
        Settle::Success
    };
    let limiter = LimiterLayer::new(limit_of(4))
        .with_clock(clock.clone())
        .with_classifier(grade);
    let client = ClientLayer::new()
        .retry(
            HttpRetryLayer::default()
                .with_clock(clock.clone())
                .with_dice(Dice::from_fn(|| 1.0)),
        )
        .limiter(limiter.clone())
        .layer(backend.service());
    let response = client.oneshot(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(*graded.lock().unwrap(), [503, 503, 200]);
    assert_eq!(limiter.flying(), 0);
}

#[tokio::test]
async fn a_dropped_call_holds_no_permit() {
    let limiter = LimiterLayer::new(limit_of(1)).with_queue(QUEUE);
    let breaker = BreakerLayer::new(SRE);
    let hangs = service_fn(|_: Request<String>| pending::<Result<Response<String>, Infallible>>());
    let mut client = ClientLayer::new()
        .deadline(DeadlineLayer::new(Duration::from_secs(60)))
        .retry(HttpRetryLayer::default())
        .breaker(breaker.clone())
        .limiter(limiter.clone())
        .layer(hangs);
    let mut first = Box::pin(client.ready().await.unwrap().call(get()));
    assert!(poll_once(&mut first.as_mut()).is_pending());
    assert_eq!(limiter.flying(), 1);
    let mut second = Box::pin(client.ready().await.unwrap().call(get()));
    assert!(poll_once(&mut second.as_mut()).is_pending());
    assert_eq!(limiter.queued(), 1);
    // The queued call is dropped: it leaves the queue; the one in flight, its permit.
    drop(second);
    assert_eq!(limiter.queued(), 0);
    drop(first);
    assert_eq!(limiter.flying(), 0);
    // Nothing was recorded against the backend by the calls cancelled from outside.
    assert_eq!(breaker.ratio(), 0.0);
}

#[tokio::test]
async fn a_queued_attempt_is_sent_when_a_permit_frees() {
    let limiter = LimiterLayer::new(limit_of(1)).with_queue(QUEUE);
    // A request for `/hang` never answers; any other answers at once.
    let backend = service_fn(|request: Request<String>| async move {
        if request.uri().path() == "/hang" {
            pending::<()>().await;
        }
        Ok::<_, Infallible>(Response::new(String::from("ok")))
    });
    let mut client = ClientLayer::new()
        .retry(HttpRetryLayer::default())
        .limiter(limiter.clone())
        .layer(backend);
    let hang = Request::get("/hang").body(String::new()).unwrap();
    let mut first = Box::pin(client.ready().await.unwrap().call(hang));
    assert!(poll_once(&mut first.as_mut()).is_pending());
    let second = client.ready().await.unwrap().call(get());
    let mut second = pin!(second);
    assert!(poll_once(&mut second).is_pending());
    assert_eq!(limiter.queued(), 1);
    // The hanging call is cancelled: its permit goes to the queued one, which is sent.
    drop(first);
    let response = tokio::time::timeout(Duration::from_secs(10), second)
        .await
        .expect("the queued call answers")
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.extensions().get::<Retried>().unwrap().attempts, 1);
    assert_eq!(limiter.flying(), 0);
}

#[tokio::test]
async fn one_reading_before_and_one_after_each_attempt() {
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reads);
    let clock = Clock::from_fn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        Duration::from_secs(1)
    });
    let retry = || HttpRetryLayer::default().with_clock(clock.clone());
    let breaker = || BreakerLayer::new(SRE).with_clock(clock.clone());
    let limiter = || LimiterLayer::new(limit_of(4)).with_clock(clock.clone());
    let backend = Backend::new(&[200]);
    let mut client = ClientLayer::new()
        .retry(retry())
        .breaker(breaker())
        .limiter(limiter())
        .layer(backend.service());
    let before = reads.load(Ordering::Relaxed);
    let future = client.ready().await.unwrap().call(get());
    assert_eq!(
        reads.load(Ordering::Relaxed) - before,
        1,
        "one reading at call, for the run, the breaker and the limiter"
    );
    future.await.unwrap();
    assert_eq!(reads.load(Ordering::Relaxed) - before, 2);

    // The same layers stacked one by one read it six times: each decides and settles.
    let mut by_hand = tower::ServiceBuilder::new()
        .layer(retry())
        .layer(breaker())
        .layer(limiter())
        .service(backend.service());
    let before = reads.load(Ordering::Relaxed);
    by_hand.ready().await.unwrap().call(get()).await.unwrap();
    assert_eq!(reads.load(Ordering::Relaxed) - before, 6);
}

#[tokio::test]
async fn tuning_a_piece_retunes_the_stack() {
    // 60 answers, then failures: with k = 1.5 the breaker refuses once the calls exceed
    // 5 + 1.5 · 60 (the numbers of the `Tuner` docs).
    let mut statuses = vec![200; 60];
    statuses.push(502);
    let backend = Backend::new(&statuses);
    let breaker = BreakerLayer::new(SRE).with_dice(Dice::from_fn(|| 0.0));
    let tuner = breaker.tuner();
    let client = ClientLayer::new().breaker(breaker).layer(backend.service());
    for _ in 0..100 {
        let _ = client.clone().oneshot(get()).await;
    }
    let err = client.clone().oneshot(get()).await.unwrap_err();
    assert!(err.is::<BreakerRefused>(), "{err}");
    // With k = 2 the same 60 answers cover every call in the window: the next one goes
    // through, to its 502.
    tuner.retune(ironward::Sre { k: 2.0, ..SRE });
    let response = client.oneshot(get()).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
}

#[tokio::test]
async fn the_retry_tuner_retunes_the_stack_from_the_next_call() {
    let backend = Backend::new(&[503]);
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let retry = HttpRetryLayer::default().with_clock(clock.clone());
    let tuner = retry.tuner();
    let client = ClientLayer::new().retry(retry).layer(backend.service());
    let response = client.clone().oneshot(get()).await.unwrap();
    assert_eq!(response.extensions().get::<Retried>().unwrap().attempts, 4);
    let was = tuner.retune(Settings {
        max_retries: 0,
        ..Settings::default()
    });
    assert_eq!(was.max_retries, 3);
    let response = client.oneshot(get()).await.unwrap();
    assert_eq!(response.extensions().get::<Retried>().unwrap().attempts, 1);
    assert_eq!(backend.reached(), 5);
}

#[tokio::test]
async fn a_zero_deadline_is_none_and_an_endless_open_wait_is_over_the_cap() {
    // Zero is no deadline, as for the layer alone: the call answers.
    let backend = Backend::new(&[200]);
    let client = ClientLayer::new()
        .deadline(DeadlineLayer::new(Duration::ZERO))
        .layer(backend.service());
    assert_eq!(
        client.oneshot(get()).await.unwrap().status(),
        StatusCode::OK
    );

    // An open wait of `Duration::MAX`, as a `Retry-After`, saturates and is over any cap.
    let backend = Backend::new(&[502]);
    let (stack, _clock) = retrying_classic(Duration::MAX);
    let client = stack.layer(backend.service());
    let err = client.oneshot(get()).await.unwrap_err();
    let gave_up = err.downcast_ref::<GaveUp>().unwrap();
    assert_eq!(
        gave_up.stop(),
        Stop::Decided(StopReason::ServerDelayExceedsCap)
    );
    assert_eq!(backend.reached(), 3);
}

#[tokio::test]
async fn a_shadow_breaker_lets_its_refusals_through() {
    let backend = Backend::new(&[502]);
    let breaker = BreakerLayer::new(SRE)
        .with_dice(Dice::from_fn(|| 0.0))
        .with_mode(ironward_tower::Mode::Shadow);
    let client = ClientLayer::new()
        .breaker(breaker.clone())
        .layer(backend.service());
    for _ in 0..50 {
        let response = client.clone().oneshot(get()).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_GATEWAY);
    }
    // Every call reached the backend, though the breaker would have refused most.
    assert_eq!(backend.reached(), 50);
    assert!(breaker.ratio() > 0.5);
}

#[tokio::test(start_paused = true)]
async fn a_clock_going_backwards_is_answered_without_a_panic() {
    // Each reading a second earlier than the last, from an hour in.
    let readings = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&readings);
    let clock = Clock::from_fn(move || {
        let n = counter.fetch_add(1, Ordering::Relaxed) as u64;
        Duration::from_secs(3600_u64.saturating_sub(n))
    });
    let backend = Backend::new(&[503, 503, 200]);
    let client = ClientLayer::new()
        .retry(
            HttpRetryLayer::default()
                .with_clock(clock.clone())
                .with_dice(Dice::from_fn(|| 1.0)),
        )
        .breaker(BreakerLayer::new(SRE).with_clock(clock.clone()))
        .limiter(LimiterLayer::new(limit_of(4)).with_clock(clock))
        .layer(backend.service());
    let response = tokio::time::timeout(Duration::from_secs(10), client.oneshot(get()))
        .await
        .expect("an answer")
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.extensions().get::<Retried>().unwrap().attempts, 3);
    assert!(readings.load(Ordering::Relaxed) > 0);
}

#[cfg(feature = "metrics")]
mod metrics {
    use super::*;
    use crate::seen::Recording;

    /// The four pieces, named `api`, on `clock`; a breaker that never refuses.
    fn pieces(clock: &Clock) -> (DeadlineLayer, HttpRetryLayer, BreakerLayer, LimiterLayer) {
        (
            DeadlineLayer::new(Duration::from_secs(10)).with_name("api"),
            HttpRetryLayer::default()
                .with_clock(clock.clone())
                .with_dice(Dice::from_fn(|| 1.0))
                .with_name("api"),
            BreakerLayer::new(SRE)
                .with_clock(clock.clone())
                .with_dice(Dice::from_fn(|| 1.0))
                .with_name("api"),
            LimiterLayer::new(limit_of(4))
                .with_clock(clock.clone())
                .with_name("api"),
        )
    }

    /// One call retried to a 200, one that runs out of retries.
    const STATUSES: [u16; 7] = [503, 200, 503, 503, 503, 503, 200];

    /// What the stack `build` makes counted of the traffic: the pieces' requests, the retry's
    /// attempts and calls. The recording starts first: a layer registers its handles as it
    /// makes its service.
    async fn traffic<S>(build: impl FnOnce() -> S) -> Vec<Vec<(crate::seen::Labels, u64)>>
    where
        S: Service<Request<String>, Response = Response<String>, Error = BoxError> + Clone,
    {
        let recording = Recording::start();
        let client = build();
        let mut statuses = Vec::new();
        for _ in 0..2 {
            let response = client.clone().oneshot(get()).await.unwrap();
            statuses.push(response.status().as_u16());
        }
        assert_eq!(statuses, [200, 503]);
        let seen = recording.seen();
        [
            "ironward.requests",
            "ironward.retry.attempts",
            "ironward.retry.calls",
        ]
        .map(|metric| seen.counters(metric))
        .to_vec()
    }

    #[tokio::test]
    async fn the_stack_counts_what_the_four_layers_count() {
        let (clock, _hand) = Clock::manual(Duration::ZERO);
        let (first, second) = (Backend::new(&STATUSES), Backend::new(&STATUSES));
        let by_hand = traffic(|| {
            let (deadline, retry, breaker, limiter) = pieces(&clock);
            tower::ServiceBuilder::new()
                .layer(deadline)
                .layer(retry)
                .layer(breaker)
                .layer(limiter)
                .service(first.service())
        })
        .await;
        let stacked = traffic(|| {
            let (deadline, retry, breaker, limiter) = pieces(&clock);
            ClientLayer::new()
                .deadline(deadline)
                .retry(retry)
                .breaker(breaker)
                .limiter(limiter)
                .layer(second.service())
        })
        .await;
        assert!(stacked.iter().all(|counters| !counters.is_empty()));
        assert_eq!(stacked, by_hand);
    }
}
