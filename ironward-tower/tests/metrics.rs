//! The `metrics` feature: every layer's counters equal what the test sent and saw, by piece,
//! outcome, reason and name, read from `metrics-util`'s `DebuggingRecorder`, set as the test
//! thread's recorder (`common/seen.rs`), so the handles a layer registers when it makes its
//! first service record to that test's recorder alone.
#![cfg(feature = "metrics")]

use crate::seen;

use std::future::pending;
use std::time::Duration;

use http::{Request, Response};
use ironward::{SHED, SRE};
use ironward_tower::{
    AnyError, BreakerLayer, BreakerRefused, Cpu, DeadlineLayer, GateFull, GateLayer, Limited,
    Quota, QuotaLayer, RequestDeadline, ShedLayer, ShedRefused,
};
use metrics_util::debugging::DebuggingRecorder;
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

use seen::{Recording, Seen};

fn ok() -> impl Service<Request<()>, Response = Response<()>, Error = BoxError, Future: Send> + Clone
{
    service_fn(|_: Request<()>| async { Ok::<_, BoxError>(Response::new(())) })
}

#[tokio::test(start_paused = true)]
async fn two_named_breakers_count_apart_and_the_gauge_is_the_last_refusals_drop() {
    let recording = Recording::start();
    let (failing, healthy) = {
        let failing = BreakerLayer::new(SRE)
            .with_classifier(AnyError)
            .with_dice(ironward_tower::Dice::seeded(7))
            .with_name("payments");
        let healthy = BreakerLayer::new(SRE).with_name("search");
        (failing, healthy)
    };
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

    let seen = recording.seen();
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
    let recording = Recording::start();
    let shed = { ShedLayer::new(SHED, Cpu::fixed(1000)).with_name("api") };
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

    let seen = recording.seen();
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
    let recording = Recording::start();
    let gate = GateLayer::new(2).with_name("db");
    let mut service = gate.layer(service_fn(|()| pending::<Result<(), BoxError>>()));
    let _held = [service.call(()), service.call(())];
    for _ in 0..3 {
        assert!(service.call(()).await.unwrap_err().is::<GateFull>());
    }
    let seen = recording.seen();
    assert_eq!(seen.admitted("gate", "db"), 2);
    assert_eq!(seen.refused("gate", "db", "full"), 3);
    assert_eq!(seen.total("refused"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_reports_under_its_policy_name() {
    let recording = Recording::start();
    let (named, unnamed) = {
        let named = QuotaLayer::new(Quota::sliding(3, Duration::from_secs(60))).with_name("login");
        let unnamed = QuotaLayer::new(Quota::sliding(1, Duration::from_secs(60)));
        (named, unnamed)
    };
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

    let seen = recording.seen();
    assert_eq!(seen.admitted("rate_limit", "login"), 3);
    assert_eq!(seen.refused("rate_limit", "login", "limited"), 2);
    assert_eq!(seen.admitted("rate_limit", "default"), 1);
    assert_eq!(seen.refused("rate_limit", "default", "limited"), 1);
    assert_eq!(seen.total("refused"), 3);
}

#[tokio::test(start_paused = true)]
async fn a_deadline_counts_a_request_that_arrived_out_of_time_as_refused() {
    let recording = Recording::start();
    let layer = DeadlineLayer::new(Duration::from_secs(1)).with_name("edge");
    let service = layer.layer(ok());
    service.clone().oneshot(Request::new(())).await.unwrap();

    let outer = RequestDeadline::start(Duration::from_millis(10));
    tokio::time::advance(Duration::from_millis(20)).await;
    let mut late = Request::new(());
    late.extensions_mut().insert(outer);
    let err = service.oneshot(late).await.unwrap_err();
    assert!(err.is::<ironward_tower::DeadlineExceeded>());

    let seen = recording.seen();
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
    assert!(Seen::take(&snapshotter).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_renamed_layer_leaves_no_series_under_its_old_name() {
    // Each builder of these layers makes its shared state anew; the series are registered
    // only when the layer makes a service, under the name it then has.
    let recording = Recording::start();
    let breaker = BreakerLayer::new(SRE).with_name("backend");
    let shed = ShedLayer::new(SHED, Cpu::fixed(0)).with_name("api");
    let gate = GateLayer::new(4).with_name("db");
    let limit = QuotaLayer::new(Quota::bucket(10.0, 20.0)).with_name("login");
    let deadline = DeadlineLayer::new(Duration::from_secs(1)).with_name("edge");
    assert!(
        recording.seen().is_empty(),
        "nothing shows before a service is made"
    );

    let _services = (
        breaker.layer(service_fn(|()| async { Ok::<_, BoxError>(()) })),
        shed.layer(service_fn(|()| async { Ok::<_, BoxError>(()) })),
        gate.layer(service_fn(|()| async { Ok::<_, BoxError>(()) })),
        limit.layer(ok()),
        deadline.layer(ok()),
    );

    let seen = recording.seen();
    for metric in [
        "ironward.requests",
        "ironward.breaker.ratio",
        "ironward.shed.in_flight",
    ] {
        assert_eq!(seen.series_named(metric, "default"), 0, "{metric}");
    }
    assert_eq!(seen.series_named("ironward.requests", "backend"), 2);
    assert_eq!(seen.series_named("ironward.breaker.ratio", "backend"), 1);
    // The shedder's admitted, and its refusals `overloaded`, `cooling` and `floor`.
    assert_eq!(seen.series_named("ironward.requests", "api"), 4);
    assert_eq!(seen.series_named("ironward.shed.in_flight", "api"), 1);
    assert_eq!(seen.series_named("ironward.requests", "db"), 2);
    assert_eq!(seen.series_named("ironward.requests", "login"), 2);
    assert_eq!(seen.series_named("ironward.requests", "edge"), 3);
}

// A classic breaker driven closed, open, half-open, open, half-open, closed: the state gauge
// reads each state's number (resilience4j's order) as it is entered, and each change counts
// once under its `from` and `to`. An SRE breaker, which has no states, shows neither series.
#[tokio::test(start_paused = true)]
async fn a_classic_breaker_reports_each_state_and_each_change_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use ironward::classic::{OpenWait, Record};
    use ironward::{CLASSIC, Classic};
    use ironward_tower::Clock;

    let recording = Recording::start();
    let policy = Classic {
        record: Record::Consecutive { failures: 3 },
        open: OpenWait::Fixed(Duration::from_secs(1)),
        probes: 1,
        ..CLASSIC
    };
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let down = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&down);
    let backend = service_fn(move |()| {
        let failing = flag.load(Ordering::Relaxed);
        async move {
            if failing {
                Err::<(), BoxError>("backend down".into())
            } else {
                Ok(())
            }
        }
    });
    let layer = BreakerLayer::new(policy)
        .with_classifier(AnyError)
        .with_clock(clock)
        .with_name("payments");
    let tuner = layer.tuner();
    let mut client = layer.layer(backend);
    let _sre = BreakerLayer::new(SRE)
        .with_name("search")
        .layer(service_fn(|()| async { Ok::<_, BoxError>(()) }));

    let state = |seen: &Seen| seen.gauge("ironward.breaker.state", &[("name", "payments")]);
    let changes = |seen: &Seen, from: &str, to: &str| {
        seen.counter(
            "ironward.breaker.transitions",
            &[("name", "payments"), ("from", from), ("to", to)],
        )
    };
    // Registered with the service: closed, and the four changes the record makes at zero.
    let seen = recording.seen();
    assert_eq!(state(&seen), 0.0);
    assert_eq!(
        seen.series_named("ironward.breaker.transitions", "payments"),
        4
    );
    assert_eq!(seen.series_named("ironward.breaker.state", "search"), 0);
    assert_eq!(
        seen.series_named("ironward.breaker.transitions", "search"),
        0
    );

    // Three failures in a row: open (1).
    for _ in 0..3 {
        let _ = client.ready().await.unwrap().call(()).await;
    }
    let seen = recording.seen();
    assert_eq!((state(&seen), changes(&seen, "closed", "open")), (1.0, 1));
    // A snapshot reads the counts since the one before.
    assert_eq!(changes(&seen, "open", "half_open"), 0);

    // The wait over, the probe's check turns it half-open (2) before the probe is answered;
    // the probe fails, and it opens again.
    hand.advance(Duration::from_secs(1));
    let probe = client.ready().await.unwrap().call(());
    let seen = recording.seen();
    assert_eq!(
        (state(&seen), changes(&seen, "open", "half_open")),
        (2.0, 1)
    );
    assert!(probe.await.is_err());
    let seen = recording.seen();
    assert_eq!(
        (state(&seen), changes(&seen, "half_open", "open")),
        (1.0, 1)
    );

    // Healed: the next probe passes, and the breaker closes (0).
    down.store(false, Ordering::Relaxed);
    hand.advance(Duration::from_secs(1));
    client.ready().await.unwrap().call(()).await.unwrap();
    let seen = recording.seen();
    assert_eq!(state(&seen), 0.0);
    assert_eq!(changes(&seen, "open", "half_open"), 1);
    assert_eq!(changes(&seen, "half_open", "closed"), 1);
    assert_eq!(changes(&seen, "closed", "open"), 0);
    assert_eq!(seen.admitted("breaker", "payments"), 1);

    // Forced open by a retune (4), with no call to carry the change, and lifted again.
    use ironward::classic::Force;
    tuner.retune(Classic {
        force: Force::Open,
        ..policy
    });
    let seen = recording.seen();
    assert_eq!(
        (state(&seen), changes(&seen, "closed", "forced_open")),
        (4.0, 1)
    );
    tuner.retune(policy);
    let seen = recording.seen();
    assert_eq!(
        (state(&seen), changes(&seen, "forced_open", "closed")),
        (0.0, 1)
    );
}
