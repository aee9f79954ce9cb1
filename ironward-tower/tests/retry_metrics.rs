//! The `metrics` feature on `HttpRetryLayer`: the attempts it sent by kind, the calls it
//! finished by outcome (the core's labels: `success` or the stop's `as_str`) and the waits it
//! decided equal what a scripted backend on a manual clock saw, read from `metrics-util`'s
//! `DebuggingRecorder`, set as the test thread's recorder (`common/seen.rs`), so the handles
//! a layer registers when it makes its first service record to that test's recorder alone.
#![cfg(feature = "metrics")]

use crate::seen;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, Response};
use ironward::SharedBudget;
use ironward::http_retry::{Retried, Settings, Stop, StopReason};
use ironward_tower::retry::{GaveUp, HttpRetryLayer};
use ironward_tower::{Clock, Dice};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

use seen::Recording;

/// A backend that answers its `n`th request (from 0) with the status `script(n)`.
fn backend(
    script: impl Fn(usize) -> u16 + Clone + Send + 'static,
) -> impl Service<Request<()>, Response = Response<()>, Error = BoxError, Future: Send> + Clone {
    let sent = Arc::new(AtomicUsize::new(0));
    service_fn(move |_: Request<()>| {
        let status = script(sent.fetch_add(1, Ordering::Relaxed));
        async move { Ok::<_, BoxError>(Response::builder().status(status).body(()).unwrap()) }
    })
}

/// A layer on a manual clock with no jitter: the waits are 200, 400 and 800 ms exactly.
fn layer(settings: Settings) -> HttpRetryLayer {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    HttpRetryLayer::new(settings)
        .with_clock(clock)
        .with_dice(Dice::from_fn(|| 1.0))
}

async fn status_of<S>(client: S) -> (u16, Retried)
where
    S: Service<Request<()>, Response = Response<()>, Error = BoxError>,
{
    let response = client.oneshot(Request::new(())).await.expect("a response");
    let retried = *response.extensions().get::<Retried>().expect("a record");
    (response.status().as_u16(), retried)
}

#[tokio::test]
async fn a_call_that_recovers_counts_one_first_two_retries_and_a_success() {
    let recording = Recording::start();
    let layer = layer(Settings::default());
    let client = layer.layer(backend(|n| if n < 2 { 503 } else { 200 }));

    let (status, retried) = status_of(client).await;
    assert_eq!((status, retried.attempts), (200, 3));

    let seen = recording.seen();
    assert_eq!(seen.attempts("default", "first"), 1);
    assert_eq!(seen.attempts("default", "retry"), 2);
    assert_eq!(seen.calls("default", "success"), 1);
    assert_eq!(seen.all_calls("default"), 1);
    assert_eq!(seen.waits("default"), [0.2, 0.4]);
}

#[tokio::test]
async fn a_call_that_runs_out_of_retries_counts_attempts_exhausted() {
    let recording = Recording::start();
    let layer = layer(Settings::default());
    let client = layer.layer(backend(|_| 503));

    let (status, retried) = status_of(client).await;
    assert_eq!(status, 503);
    let exhausted = Stop::Decided(StopReason::AttemptsExhausted);
    assert_eq!((retried.attempts, retried.stop), (4, Some(exhausted)));

    let seen = recording.seen();
    assert_eq!(seen.attempts("default", "first"), 1);
    assert_eq!(seen.attempts("default", "retry"), 3);
    assert_eq!(seen.calls("default", "attempts_exhausted"), 1);
    assert_eq!(seen.calls("default", "success"), 0);
    assert_eq!(seen.all_calls("default"), 1);
    assert_eq!(seen.waits("default"), [0.2, 0.4, 0.8]);
}

#[tokio::test]
async fn a_retry_the_budget_holds_back_counts_throttled_and_no_retry() {
    // gRPC A6: two tokens, one lost to the first 503, leaves the budget at half: no retry.
    let budget = Arc::new(SharedBudget::new(2, 0.5));
    let recording = Recording::start();
    let layer = { layer(Settings::default()).with_budget(Arc::clone(&budget)) };
    let client = layer.layer(backend(|_| 503));

    let (status, retried) = status_of(client).await;
    assert_eq!((status, retried.attempts), (503, 1));
    assert_eq!(retried.stop, Some(Stop::Throttled));

    let seen = recording.seen();
    assert_eq!(seen.attempts("default", "first"), 1);
    assert_eq!(seen.attempts("default", "retry"), 0);
    assert_eq!(seen.calls("default", "throttled"), 1);
    assert_eq!(seen.all_calls("default"), 1);
    assert!(seen.waits("default").is_empty());
}

#[tokio::test]
async fn an_error_without_a_response_counts_its_stop_once() {
    // The default classifier retries no error: one attempt, stopped as not retryable, and
    // the call ends in a GaveUp, counted like any other end.
    let recording = Recording::start();
    let layer = layer(Settings::default());
    let refused = service_fn(|_: Request<()>| async {
        Err::<Response<()>, BoxError>("connection refused".into())
    });

    let err = layer
        .layer(refused)
        .oneshot(Request::new(()))
        .await
        .unwrap_err();
    let gave_up = err.downcast_ref::<GaveUp>().expect("a GaveUp");
    assert_eq!(gave_up.retried().outcome(), "not_retryable");

    let seen = recording.seen();
    assert_eq!(seen.attempts("default", "first"), 1);
    assert_eq!(seen.calls("default", "not_retryable"), 1);
    assert_eq!(seen.all_calls("default"), 1);
}

#[tokio::test]
async fn two_named_layers_count_apart_and_every_clone_counts_on_one() {
    let recording = Recording::start();
    let (search, reports) = {
        let search = layer(Settings::default()).with_name("search");
        let reports = layer(Settings {
            max_retries: 1,
            ..Settings::default()
        })
        .with_name("reports");
        (search, reports)
    };
    assert_eq!((search.name(), reports.name()), ("search", "reports"));
    let healthy = search.layer(backend(|_| 200));
    for _ in 0..3 {
        let (status, _) = status_of(healthy.clone()).await;
        assert_eq!(status, 200);
    }
    let (status, retried) = status_of(reports.layer(backend(|_| 502))).await;
    assert_eq!((status, retried.attempts), (502, 2));

    let seen = recording.seen();
    assert_eq!(seen.attempts("search", "first"), 3);
    assert_eq!(seen.attempts("search", "retry"), 0);
    assert_eq!(seen.calls("search", "success"), 3);
    assert_eq!(seen.all_calls("search"), 3);
    assert_eq!(seen.attempts("reports", "first"), 1);
    assert_eq!(seen.attempts("reports", "retry"), 1);
    assert_eq!(seen.calls("reports", "attempts_exhausted"), 1);
    assert_eq!(seen.all_calls("reports"), 1);
    assert_eq!(seen.waits("reports"), [0.2]);
}

#[tokio::test]
async fn every_outcome_is_registered_when_the_layer_makes_a_service() {
    // One counter per outcome, at zero, before any call: a dashboard sees every series from
    // the start, and a call costs an increment, never a registration. Nothing shows before
    // the first service, so a layer renamed after `new` leaves no `name="default"` series.
    let recording = Recording::start();
    let layer = layer(Settings::default()).with_name("search");
    assert!(recording.seen().is_empty());
    let _client = layer.layer(backend(|_| 200));

    let seen = recording.seen();
    let outcomes = std::iter::once("success").chain(Stop::ALL.iter().map(Stop::as_str));
    for outcome in outcomes {
        assert_eq!(seen.calls("search", outcome), 0, "{outcome}");
    }
    assert_eq!(seen.all_calls("search"), 0);
    assert_eq!(seen.attempts("search", "first"), 0);
    assert!(seen.waits("search").is_empty());
    for metric in [
        "ironward.retry.attempts",
        "ironward.retry.calls",
        "ironward.retry.wait",
    ] {
        assert_eq!(seen.series_named(metric, "default"), 0, "{metric}");
    }
}
