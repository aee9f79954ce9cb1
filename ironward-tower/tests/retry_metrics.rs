//! The `metrics` feature on `HttpRetryLayer`: the attempts it sent by kind, the calls it
//! finished by outcome (the core's labels: `success` or the stop's `as_str`) and the waits it
//! decided equal what a scripted backend on a manual clock saw, read from `metrics-util`'s
//! `DebuggingRecorder`. Each test makes its layers inside `metrics::with_local_recorder`, so
//! the handles they register record to that test's recorder alone.
#![cfg(feature = "metrics")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response};
use ironward::Budget;
use ironward::http_retry::{Retried, Settings, Stop, StopReason};
use ironward_tower::retry::{GaveUp, HttpRetryLayer};
use ironward_tower::{Clock, Dice};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

/// A metric's labels, sorted by key.
type Labels = Vec<(String, String)>;

/// One snapshot of a recorder: every value by name and sorted labels.
struct Seen(Vec<(String, Labels, DebugValue)>);

impl Seen {
    fn take(snapshotter: &Snapshotter) -> Self {
        let values = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(key, _, _, value)| {
                let key = key.key();
                let mut labels: Vec<_> = key
                    .labels()
                    .map(|l| (l.key().to_owned(), l.value().to_owned()))
                    .collect();
                labels.sort();
                (key.name().to_owned(), labels, value)
            })
            .collect();
        Self(values)
    }

    fn find(&self, metric: &str, labels: &[(&str, &str)]) -> Option<&DebugValue> {
        let mut want: Vec<_> = labels
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        want.sort();
        self.0
            .iter()
            .find(|(n, l, _)| n == metric && *l == want)
            .map(|(_, _, value)| value)
    }

    fn counter(&self, metric: &str, labels: &[(&str, &str)]) -> u64 {
        match self.find(metric, labels) {
            Some(DebugValue::Counter(count)) => *count,
            other => panic!("{metric} {labels:?} is a registered counter, not {other:?}"),
        }
    }

    /// The attempts the layer `name` sent of `kind` (`first` or `retry`).
    fn attempts(&self, name: &str, kind: &str) -> u64 {
        self.counter("ironward.retry.attempts", &[("name", name), ("kind", kind)])
    }

    /// The calls the layer `name` finished with `outcome`.
    fn calls(&self, name: &str, outcome: &str) -> u64 {
        self.counter(
            "ironward.retry.calls",
            &[("name", name), ("outcome", outcome)],
        )
    }

    /// Every call the layer `name` finished, whatever the outcome.
    fn all_calls(&self, name: &str) -> u64 {
        let label = ("name".to_owned(), name.to_owned());
        self.0
            .iter()
            .filter(|(n, l, _)| n == "ironward.retry.calls" && l.contains(&label))
            .map(|(_, _, value)| match value {
                DebugValue::Counter(count) => *count,
                other => panic!("a calls counter, not {other:?}"),
            })
            .sum()
    }

    /// The waits the layer `name` decided, in seconds, in order.
    fn waits(&self, name: &str) -> Vec<f64> {
        match self.find("ironward.retry.wait", &[("name", name)]) {
            Some(DebugValue::Histogram(values)) => values.iter().map(|v| v.0).collect(),
            other => panic!("ironward.retry.wait is a histogram, not {other:?}"),
        }
    }
}

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
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let layer = metrics::with_local_recorder(&recorder, || layer(Settings::default()));
    let client = layer.layer(backend(|n| if n < 2 { 503 } else { 200 }));

    let (status, retried) = status_of(client).await;
    assert_eq!((status, retried.attempts), (200, 3));

    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.attempts("default", "first"), 1);
    assert_eq!(seen.attempts("default", "retry"), 2);
    assert_eq!(seen.calls("default", "success"), 1);
    assert_eq!(seen.all_calls("default"), 1);
    assert_eq!(seen.waits("default"), [0.2, 0.4]);
}

#[tokio::test]
async fn a_call_that_runs_out_of_retries_counts_attempts_exhausted() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let layer = metrics::with_local_recorder(&recorder, || layer(Settings::default()));
    let client = layer.layer(backend(|_| 503));

    let (status, retried) = status_of(client).await;
    assert_eq!(status, 503);
    let exhausted = Stop::Decided(StopReason::AttemptsExhausted);
    assert_eq!((retried.attempts, retried.stop), (4, Some(exhausted)));

    let seen = Seen::take(&snapshotter);
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
    let budget = Arc::new(Mutex::new(Budget::new(2, 0.5)));
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let layer = metrics::with_local_recorder(&recorder, || {
        layer(Settings::default()).with_budget(Arc::clone(&budget))
    });
    let client = layer.layer(backend(|_| 503));

    let (status, retried) = status_of(client).await;
    assert_eq!((status, retried.attempts), (503, 1));
    assert_eq!(retried.stop, Some(Stop::Throttled));

    let seen = Seen::take(&snapshotter);
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
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let layer = metrics::with_local_recorder(&recorder, || layer(Settings::default()));
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

    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.attempts("default", "first"), 1);
    assert_eq!(seen.calls("default", "not_retryable"), 1);
    assert_eq!(seen.all_calls("default"), 1);
}

#[tokio::test]
async fn two_named_layers_count_apart_and_every_clone_counts_on_one() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let (search, reports) = metrics::with_local_recorder(&recorder, || {
        let search = layer(Settings::default()).with_name("search");
        let reports = layer(Settings {
            max_retries: 1,
            ..Settings::default()
        })
        .with_name("reports");
        (search, reports)
    });
    assert_eq!((search.name(), reports.name()), ("search", "reports"));
    let healthy = search.layer(backend(|_| 200));
    for _ in 0..3 {
        let (status, _) = status_of(healthy.clone()).await;
        assert_eq!(status, 200);
    }
    let (status, retried) = status_of(reports.layer(backend(|_| 502))).await;
    assert_eq!((status, retried.attempts), (502, 2));

    let seen = Seen::take(&snapshotter);
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
async fn every_outcome_is_registered_when_the_layer_is_made() {
    // One counter per outcome, at zero, before any call: a dashboard sees every series from
    // the start, and a call costs an increment, never a registration.
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _layer = metrics::with_local_recorder(&recorder, || layer(Settings::default()));

    let seen = Seen::take(&snapshotter);
    let outcomes = std::iter::once("success").chain(Stop::ALL.iter().map(Stop::as_str));
    for outcome in outcomes {
        assert_eq!(seen.calls("default", outcome), 0, "{outcome}");
    }
    assert_eq!(seen.all_calls("default"), 0);
    assert_eq!(seen.attempts("default", "first"), 0);
    assert!(seen.waits("default").is_empty());
}
