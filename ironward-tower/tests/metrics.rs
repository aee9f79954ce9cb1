//! The `metrics` feature: every layer's counters equal what the test sent and saw, by piece,
//! outcome, reason and name, read from `metrics-util`'s `DebuggingRecorder`. Each test makes
//! its layers inside `metrics::with_local_recorder`, so the handles they register in `new`
//! record to that test's recorder alone, whichever thread runs the traffic afterwards.
#![cfg(feature = "metrics")]

use std::future::pending;
use std::time::Duration;

use http::{Request, Response};
use ironward::{SHED, SRE};
use ironward_tower::{
    AnyError, BreakerLayer, BreakerRefused, Cpu, DeadlineLayer, GateFull, GateLayer, Limit,
    Limited, RateLimitLayer, RequestDeadline, ShedLayer, ShedRefused,
};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

/// Every value in one snapshot, keyed by name and sorted labels.
struct Seen(Vec<(String, Labels, DebugValue)>);

/// A metric's labels, sorted by key.
type Labels = Vec<(String, String)>;

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

    fn find(&self, name: &str, labels: &[(&str, &str)]) -> Option<&DebugValue> {
        let mut want: Vec<_> = labels
            .iter()
            .map(|&(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        want.sort();
        self.0
            .iter()
            .find(|(n, l, _)| n == name && *l == want)
            .map(|(_, _, value)| value)
    }

    /// The count of `ironward.requests` with these labels; a counter never registered is 0.
    fn requests(&self, labels: &[(&str, &str)]) -> u64 {
        match self.find("ironward.requests", labels) {
            Some(DebugValue::Counter(count)) => *count,
            None => 0,
            Some(other) => panic!("ironward.requests is a counter, not {other:?}"),
        }
    }

    fn admitted(&self, piece: &str, name: &str) -> u64 {
        self.requests(&[("piece", piece), ("name", name), ("outcome", "admitted")])
    }

    fn refused(&self, piece: &str, name: &str, reason: &str) -> u64 {
        self.requests(&[
            ("piece", piece),
            ("name", name),
            ("outcome", "refused"),
            ("reason", reason),
        ])
    }

    fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        match self.find(name, labels) {
            Some(DebugValue::Gauge(value)) => value.0,
            other => panic!("{name} {labels:?} is a gauge, not {other:?}"),
        }
    }

    /// Every refusal counted, whatever its labels.
    fn total(&self, outcome: &str) -> u64 {
        self.0
            .iter()
            .filter(|(n, l, _)| {
                n == "ironward.requests" && l.contains(&("outcome".to_owned(), outcome.to_owned()))
            })
            .map(|(_, _, value)| match value {
                DebugValue::Counter(count) => *count,
                _ => 0,
            })
            .sum()
    }
}

fn ok() -> impl Service<Request<()>, Response = Response<()>, Error = BoxError, Future: Send> + Clone
{
    service_fn(|_: Request<()>| async { Ok::<_, BoxError>(Response::new(())) })
}

#[tokio::test(start_paused = true)]
async fn two_named_breakers_count_apart_and_the_gauge_is_the_last_refusals_drop() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let (failing, healthy) = metrics::with_local_recorder(&recorder, || {
        let failing = BreakerLayer::new(SRE)
            .with_classifier(AnyError)
            .with_dice(ironward_tower::Dice::seeded(7))
            .with_name("payments");
        let healthy = BreakerLayer::new(SRE).with_name("search");
        (failing, healthy)
    });
    let down = failing.layer(service_fn(|()| async { Err::<(), _>("backend down") }));
    let up = healthy.layer(service_fn(|()| async {
        Ok::<_, BoxError>(Response::new(()))
    }));

    let (mut admitted, mut refused, mut last_drop) = (0, 0, None);
    for _ in 0..200 {
        match down.clone().oneshot(()).await {
            Err(err) if err.is::<BreakerRefused>() => {
                refused += 1;
                last_drop = Some(err.downcast_ref::<BreakerRefused>().unwrap().reason().drop);
            }
            _ => admitted += 1,
        }
    }
    for _ in 0..50 {
        up.clone().oneshot(()).await.unwrap();
    }
    assert!(refused > 100, "refused {refused} of 200");

    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.admitted("breaker", "payments"), admitted);
    assert_eq!(seen.refused("breaker", "payments", "throttled"), refused);
    assert_eq!(seen.admitted("breaker", "search"), 50);
    assert_eq!(seen.refused("breaker", "search", "throttled"), 0);
    assert_eq!(seen.total("refused"), refused);
    assert_eq!(
        seen.gauge("ironward.breaker.ratio", &[("name", "payments")]),
        last_drop.unwrap()
    );
}

#[tokio::test(start_paused = true)]
async fn the_shedder_counts_overloaded_refusals_and_its_calls_in_flight() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let shed = metrics::with_local_recorder(&recorder, || {
        ShedLayer::new(SHED, Cpu::fixed(1000)).with_name("api")
    });
    let mut server = shed.layer(service_fn(|()| pending::<Result<Response<()>, BoxError>>()));
    // As the shedding tests do: 30 held, 20 let go, then the ten still held exceed the
    // capacity assumed while nothing has passed.
    let mut held = Vec::new();
    for _ in 0..30 {
        held.push(server.ready().await.unwrap().call(()));
    }
    held.truncate(10);
    let (mut overloaded, mut cooling) = (0, 0);
    for _ in 0..5 {
        let err = server.ready().await.unwrap().call(()).await.unwrap_err();
        let reason = err.downcast_ref::<ShedRefused>().unwrap().reason();
        if reason.overloaded {
            overloaded += 1;
        } else {
            cooling += 1;
        }
    }
    assert_eq!((overloaded, cooling), (5, 0));

    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.admitted("shed", "api"), 30);
    assert_eq!(seen.refused("shed", "api", "overloaded"), overloaded);
    assert_eq!(seen.refused("shed", "api", "cooling"), cooling);
    assert_eq!(seen.total("refused"), 5);
    assert_eq!(
        seen.gauge("ironward.shed.in_flight", &[("name", "api")]),
        10.0
    );
    drop(held);
}

#[tokio::test]
async fn the_gate_counts_what_it_let_in_and_what_it_found_full() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let gate = metrics::with_local_recorder(&recorder, || GateLayer::new(2).with_name("db"));
    let mut service = gate.layer(service_fn(|()| pending::<Result<(), BoxError>>()));
    let _held = [service.call(()), service.call(())];
    for _ in 0..3 {
        assert!(service.call(()).await.unwrap_err().is::<GateFull>());
    }
    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.admitted("gate", "db"), 2);
    assert_eq!(seen.refused("gate", "db", "full"), 3);
    assert_eq!(seen.total("refused"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_reports_under_its_policy_name() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let (named, unnamed) = metrics::with_local_recorder(&recorder, || {
        let named = RateLimitLayer::new(Limit::sliding(3, Duration::from_secs(60))).named("login");
        let unnamed = RateLimitLayer::new(Limit::sliding(1, Duration::from_secs(60)));
        (named, unnamed)
    });
    let (login, other) = (named.layer(ok()), unnamed.layer(ok()));
    let mut limited = 0;
    for _ in 0..5 {
        if let Err(err) = login.clone().oneshot(Request::new(())).await {
            assert!(err.is::<Limited>());
            limited += 1;
        }
    }
    other.clone().oneshot(Request::new(())).await.unwrap();
    assert!(other.oneshot(Request::new(())).await.is_err());
    assert_eq!(limited, 2);

    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.admitted("rate_limit", "login"), 3);
    assert_eq!(seen.refused("rate_limit", "login", "limited"), 2);
    assert_eq!(seen.admitted("rate_limit", "default"), 1);
    assert_eq!(seen.refused("rate_limit", "default", "limited"), 1);
    assert_eq!(seen.total("refused"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_deadline_counts_a_request_that_arrived_out_of_time_as_refused() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let layer = DeadlineLayer::new(Duration::from_secs(1)).with_name("edge");
    // The layer registers when it makes its service.
    let service = metrics::with_local_recorder(&recorder, || layer.layer(ok()));
    service.clone().oneshot(Request::new(())).await.unwrap();

    let outer = RequestDeadline::start(Duration::from_millis(10));
    tokio::time::advance(Duration::from_millis(20)).await;
    let mut late = Request::new(());
    late.extensions_mut().insert(outer);
    let err = service.oneshot(late).await.unwrap_err();
    assert!(err.is::<ironward_tower::DeadlineExceeded>());

    let seen = Seen::take(&snapshotter);
    assert_eq!(seen.admitted("deadline", "edge"), 1);
    assert_eq!(seen.refused("deadline", "edge", "exceeded"), 1);
    assert_eq!(seen.total("refused"), 1);
}

#[test]
fn a_layer_made_without_a_recorder_records_nowhere() {
    // No recorder is installed in this test binary: the handles are no-ops, and a layer made
    // inside another test's recorder is unaffected by it.
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let gate = GateLayer::new(1);
    let _service = gate.layer(ok());
    assert!(Seen::take(&snapshotter).0.is_empty());
}
