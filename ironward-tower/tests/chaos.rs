//! `ChaosLayer` around a tower service, on tokio's paused clock: what each fault does to a
//! call, shadow mode, policies refused, and a layer that is off.

use std::convert::Infallible;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use ironward::chaos::{self, Chaos, ChaosError, Delay, Fault, Injected, Injection, Injector};
use ironward_tower::chaos::CHAOS_HEADER;
use ironward_tower::{ChaosLayer, Dice};
use tokio::time::Instant;
use tower::{Layer, Service, ServiceExt, service_fn};

/// A backend answering `200 real`, counting the calls that reach it when they are made.
fn backend(
    calls: &Arc<AtomicU64>,
) -> impl Service<Request<()>, Response = Response<String>, Error = Infallible, Future: Send>
+ Clone
+ use<> {
    let calls = Arc::clone(calls);
    service_fn(move |_: Request<()>| {
        calls.fetch_add(1, Ordering::SeqCst);
        async { Ok(Response::new("real".to_owned())) }
    })
}

/// A policy, on, injecting each of `faults` at its rate.
pub(crate) fn on(faults: &[(Fault, f64)]) -> Chaos {
    Chaos {
        enabled: true,
        shadow: false,
        faults: faults
            .iter()
            .map(|&(fault, rate)| Injection { fault, rate })
            .collect(),
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn an_error_answers_at_once_without_calling_the_inner_service() {
    let calls = Arc::new(AtomicU64::new(0));
    let layer = ChaosLayer::new(on(&[(Fault::Error, 1.0)])).unwrap();
    let start = Instant::now();
    let response = layer
        .layer(backend(&calls))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()[CHAOS_HEADER], "error");
    assert_eq!(response.body(), "Fault injected on purpose: error\n");
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!((layer.injected(), layer.requests()), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_latency_waits_the_drawn_delay_and_only_then_calls() {
    let calls = Arc::new(AtomicU64::new(0));
    let latency = Fault::Latency(Delay::Uniform {
        low: ms(100),
        high: ms(300),
    });
    let policy = on(&[(latency, 1.0)]);
    // The delay each request draws, as the core decides it from the same draw.
    let injector = Injector::new(policy.clone()).unwrap();
    let layer = ChaosLayer::new(policy).unwrap().with_seed(9);
    let service = layer.layer(backend(&calls));
    for i in 0..5 {
        let delay = injector.decide(chaos::draw(9, i)).unwrap().delay.unwrap();
        assert!((ms(100)..=ms(300)).contains(&delay));
        let start = Instant::now();
        // A task of its own, for the test to look at while time passes.
        let mut call = tokio::spawn(service.clone().oneshot(Request::new(())));
        tokio::time::sleep(delay - ms(1)).await;
        assert!(!call.is_finished(), "answered before its delay");
        assert_eq!(calls.load(Ordering::SeqCst), i, "called before its delay");
        let response = (&mut call).await.unwrap().unwrap();
        assert_eq!(response.body(), "real");
        // tokio's timer fires on the millisecond at or after the deadline.
        assert!((delay..=delay + ms(1)).contains(&start.elapsed()));
        assert_eq!(calls.load(Ordering::SeqCst), i + 1);
    }
    assert_eq!(layer.injected(), 5);
}

#[tokio::test(start_paused = true)]
async fn an_abort_never_answers_and_never_calls_until_the_caller_gives_up() {
    let calls = Arc::new(AtomicU64::new(0));
    let layer = ChaosLayer::new(on(&[(Fault::Abort, 1.0)])).unwrap();
    let service = layer.layer(backend(&calls));
    {
        let mut call = pin!(service.clone().oneshot(Request::new(())));
        // An hour on the paused clock: nothing.
        let waited = tokio::time::timeout(Duration::from_secs(3600), call.as_mut()).await;
        assert!(waited.is_err(), "an aborted call answered");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(layer.injected(), 1);

    // The layer is not stuck: with aborts off, the next request is served.
    layer.retune(Chaos::default()).unwrap();
    let response = service.oneshot(Request::new(())).await.unwrap();
    assert_eq!(response.body(), "real");
}

#[tokio::test(start_paused = true)]
async fn a_replace_calls_the_inner_service_and_answers_in_its_place() {
    let calls = Arc::new(AtomicU64::new(0));
    let layer = ChaosLayer::new(on(&[(Fault::Replace, 1.0)])).unwrap();
    let response = layer
        .layer(backend(&calls))
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(response.headers()[CHAOS_HEADER], "replace");
    assert_eq!(response.body(), "Fault injected on purpose: replace\n");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // An inner error is replaced too: the caller gets the replacement whatever the result.
    let failing = service_fn(|_: Request<()>| async { Err::<Response<String>, _>("down") });
    let response = layer
        .layer(failing)
        .oneshot(Request::new(()))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
}

#[tokio::test(start_paused = true)]
async fn a_custom_answer_sees_the_decision_and_the_replaced_response() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let answer = move |injected: &Injected, inner: Option<Response<String>>| {
        log.lock()
            .unwrap()
            .push((injected.fault, inner.as_ref().map(|r| r.body().clone())));
        Response::builder()
            .status(StatusCode::IM_A_TEAPOT)
            .body(String::new())
            .unwrap()
    };
    let policy = on(&[(Fault::Error, 0.5), (Fault::Replace, 0.5)]);
    let injector = Injector::new(policy.clone()).unwrap();
    let layer = ChaosLayer::new(policy)
        .unwrap()
        .with_seed(3)
        .with_response(answer);
    let calls = Arc::new(AtomicU64::new(0));
    let service = layer.layer(backend(&calls));
    let mut expected = Vec::new();
    for i in 0..20 {
        let response = service.clone().oneshot(Request::new(())).await.unwrap();
        assert_eq!(response.status(), StatusCode::IM_A_TEAPOT);
        let fault = injector.decide(chaos::draw(3, i)).unwrap().fault;
        expected.push((fault, (fault == Fault::Replace).then(|| "real".to_owned())));
    }
    assert_eq!(*seen.lock().unwrap(), expected);
    let replaced = expected.iter().filter(|(f, _)| *f == Fault::Replace);
    assert_eq!(calls.load(Ordering::SeqCst), replaced.count() as u64);
}

#[tokio::test(start_paused = true)]
async fn shadow_mode_injects_nothing_but_counts_what_it_would_have() {
    let calls = Arc::new(AtomicU64::new(0));
    let policy = Chaos {
        shadow: true,
        ..on(&[(Fault::Error, 0.3), (Fault::Abort, 0.3)])
    };
    let injector = Injector::new(policy.clone()).unwrap();
    let layer = ChaosLayer::new(policy).unwrap().with_seed(11);
    let service = layer.layer(backend(&calls));
    let start = Instant::now();
    for _ in 0..200 {
        let response = service.clone().oneshot(Request::new(())).await.unwrap();
        assert_eq!(
            (response.status(), response.body().as_str()),
            (StatusCode::OK, "real")
        );
        assert!(!response.headers().contains_key(CHAOS_HEADER));
    }
    let would: u64 = (0..200)
        .filter(|&i| injector.decide(chaos::draw(11, i)).is_some())
        .count() as u64;
    assert!(would > 80, "{would} of 200 at 60 %");
    assert_eq!((layer.injected(), layer.shadowed()), (0, would));
    assert_eq!(calls.load(Ordering::SeqCst), 200);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[test]
fn a_bad_policy_is_refused_by_new_with_the_cores_error() {
    let nan = on(&[(Fault::Error, f64::NAN)]);
    assert!(matches!(
        ChaosLayer::new(nan),
        Err(ChaosError::Rate { index: 0, rate }) if rate.is_nan()
    ));
    let over_one = on(&[(Fault::Error, 0.1), (Fault::Abort, 1.5)]);
    assert!(matches!(
        ChaosLayer::new(over_one),
        Err(ChaosError::Rate {
            index: 1,
            rate: 1.5
        })
    ));
    let negative = on(&[(Fault::Replace, -0.1)]);
    assert!(matches!(
        ChaosLayer::new(negative),
        Err(ChaosError::Rate { index: 0, .. })
    ));
    let sum_over_one = on(&[(Fault::Error, 0.6), (Fault::Replace, 0.6)]);
    assert!(matches!(
        ChaosLayer::new(sum_over_one),
        Err(ChaosError::Total { .. })
    ));
    let reversed = Fault::Latency(Delay::Uniform {
        low: ms(300),
        high: ms(100),
    });
    assert!(matches!(
        ChaosLayer::new(on(&[(reversed, 0.1)])),
        Err(ChaosError::Delay { index: 0 })
    ));
    // Even while off: a policy is checked as a whole, so turning it on cannot fail later.
    let off = Chaos {
        enabled: false,
        ..on(&[(Fault::Error, 2.0)])
    };
    assert!(ChaosLayer::new(off).is_err());
}

#[tokio::test(start_paused = true)]
async fn a_bad_policy_is_refused_by_retune_and_the_old_one_stays_in_force() {
    let calls = Arc::new(AtomicU64::new(0));
    let errors = on(&[(Fault::Error, 1.0)]);
    let layer = ChaosLayer::new(errors.clone()).unwrap();
    let service = layer.layer(backend(&calls));
    let bad = [
        on(&[(Fault::Error, f64::NAN)]),
        on(&[(Fault::Error, 1.5)]),
        on(&[(Fault::Error, 0.7), (Fault::Abort, 0.7)]),
    ];
    for policy in bad {
        assert!(layer.retune(policy.clone()).is_err(), "{policy:?} accepted");
        assert_eq!(layer.policy(), errors);
        let response = service.clone().oneshot(Request::new(())).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // A good one is taken, by every service of the layer at once.
    let other = layer.layer(backend(&calls));
    layer.retune(Chaos::default()).unwrap();
    for service in [service, other] {
        let response = service.oneshot(Request::new(())).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!((layer.requests(), layer.injected()), (5, 3));
}

#[tokio::test(start_paused = true)]
async fn off_by_default_and_when_disabled_nothing_is_injected_over_1000_requests() {
    let calls = Arc::new(AtomicU64::new(0));
    let default = ChaosLayer::new(Chaos::default()).unwrap();
    // Every fault at a share, but `enabled` is false: the core never decides one.
    let disabled = ChaosLayer::new(Chaos {
        enabled: false,
        ..on(&[
            (Fault::Error, 0.25),
            (Fault::Abort, 0.25),
            (Fault::Replace, 0.25),
            (Fault::Latency(Delay::Fixed(ms(50))), 0.25),
        ])
    })
    .unwrap()
    .with_dice(Dice::seeded(5));
    let start = Instant::now();
    for layer in [&default, &disabled] {
        let service = layer.layer(backend(&calls));
        for _ in 0..1000 {
            let response = service.clone().oneshot(Request::new(())).await.unwrap();
            assert_eq!(
                (response.status(), response.body().as_str()),
                (StatusCode::OK, "real")
            );
        }
        assert_eq!(
            (layer.requests(), layer.injected(), layer.shadowed()),
            (1000, 0, 0)
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2000);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn every_service_and_clone_of_a_layer_numbers_requests_in_one_sequence() {
    let calls = Arc::new(AtomicU64::new(0));
    let policy = on(&[(Fault::Error, 0.5)]);
    let injector = Injector::new(policy.clone()).unwrap();
    let layer = ChaosLayer::new(policy).unwrap().with_seed(21);
    // Two routes of one app: their requests interleave in one numbering.
    let routes = [
        layer.layer(backend(&calls)),
        layer.clone().layer(backend(&calls)),
    ];
    for i in 0..100_u64 {
        let route = routes[(i % 3 % 2) as usize].clone();
        let failed = route.oneshot(Request::new(())).await.unwrap().status()
            == StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(
            failed,
            injector.decide(chaos::draw(21, i)).is_some(),
            "request {i}"
        );
    }
    assert_eq!(layer.seed(), Some(21));
    // A new seed starts the numbering afresh.
    let reseeded = layer.clone().with_seed(22);
    assert_eq!((reseeded.requests(), layer.requests()), (0, 100));
}

#[tokio::test(start_paused = true)]
async fn dice_draw_each_request_and_a_name_is_kept() {
    let calls = Arc::new(AtomicU64::new(0));
    // Draws of 0.1 fall in the error's share; 0.9 past it.
    let draws = Arc::new(AtomicU64::new(0));
    let rolled = Arc::clone(&draws);
    let dice = Dice::from_fn(move || {
        if rolled.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
            0.1
        } else {
            0.9
        }
    });
    let layer = ChaosLayer::new(on(&[(Fault::Error, 0.2)]))
        .unwrap()
        .with_dice(dice)
        .with_name("checkout");
    assert_eq!((layer.name(), layer.seed()), ("checkout", None));
    let service = layer.layer(backend(&calls));
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(
            service
                .clone()
                .oneshot(Request::new(()))
                .await
                .unwrap()
                .status(),
        );
    }
    let (fail, ok) = (StatusCode::SERVICE_UNAVAILABLE, StatusCode::OK);
    assert_eq!(statuses, [fail, ok, fail, ok]);
    assert_eq!(draws.load(Ordering::SeqCst), 4);
}

/// The counters, read from the test thread's recorder as the other metrics tests do.
#[cfg(feature = "metrics")]
#[tokio::test(start_paused = true)]
async fn each_decision_counts_under_the_layers_name_and_the_fault_shadow_apart() {
    use crate::seen::Recording;

    let recording = Recording::start();
    let calls = Arc::new(AtomicU64::new(0));
    let policy = on(&[(Fault::Error, 0.3), (Fault::Replace, 0.3)]);
    let injector = Injector::new(policy.clone()).unwrap();
    let live = ChaosLayer::new(policy.clone())
        .unwrap()
        .with_seed(4)
        .with_name("live");
    let shadow = ChaosLayer::new(Chaos {
        shadow: true,
        ..policy
    })
    .unwrap()
    .with_seed(4)
    .with_name("shadow");
    let (live_service, shadow_service) =
        (live.layer(backend(&calls)), shadow.layer(backend(&calls)));
    for _ in 0..300 {
        live_service
            .clone()
            .oneshot(Request::new(()))
            .await
            .unwrap();
        let response = shadow_service
            .clone()
            .oneshot(Request::new(()))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    let count = |fault: Fault| {
        (0..300)
            .filter(|&i| injector.decide(chaos::draw(4, i)).map(|d| d.fault) == Some(fault))
            .count() as u64
    };
    let (errors, replaced) = (count(Fault::Error), count(Fault::Replace));
    assert!(
        errors > 50 && replaced > 50,
        "{errors} errors, {replaced} replaced"
    );

    let seen = recording.seen();
    // One counter, `shadow` telling what was injected from what was only reported.
    // A series registers when it first counts: one never counted reads 0.
    let counted = |name, fault, shadow| {
        let labels = [("name", name), ("fault", fault), ("shadow", shadow)];
        match seen.find("ironward.chaos.injected", &labels) {
            Some(metrics_util::debugging::DebugValue::Counter(count)) => *count,
            None => 0,
            Some(other) => panic!("ironward.chaos.injected is a counter, not {other:?}"),
        }
    };
    let injected = |name, fault| counted(name, fault, "false");
    let shadowed = |name, fault| counted(name, fault, "true");
    assert_eq!(injected("live", "error"), errors);
    assert_eq!(injected("live", "replace"), replaced);
    // Only the faults decided show: none of the others.
    assert_eq!(seen.series_named("ironward.chaos.injected", "live"), 2);
    assert_eq!(shadowed("live", "error"), 0);
    // The shadow layer decided the same faults, injected none, and counted them apart.
    assert_eq!(shadowed("shadow", "error"), errors);
    assert_eq!(shadowed("shadow", "replace"), replaced);
    assert_eq!(
        injected("shadow", "error") + injected("shadow", "replace"),
        0
    );
    assert_eq!(seen.series_named("ironward.chaos.injected", "default"), 0);
    assert_eq!(seen.series_named("ironward.chaos.shadowed", "live"), 0);
    assert_eq!(
        (live.injected(), shadow.shadowed()),
        (errors + replaced, errors + replaced)
    );
}

#[tokio::test(start_paused = true)]
async fn layers_from_one_shared_chaos_number_their_requests_in_one_sequence() {
    let calls = Arc::new(AtomicU64::new(0));
    let policy = on(&[(Fault::Error, 0.5)]);
    let injector = Injector::new(policy.clone()).unwrap();
    let shared = ironward_tokio::SharedChaos::new(policy)
        .unwrap()
        .with_seed(8)
        .with_name("edge");
    let server = ChaosLayer::from_shared(shared.clone());
    // A layer's own piece, taken back, is the same piece.
    let client = ChaosLayer::from_shared(server.chaos().clone());
    assert_eq!((server.name(), client.seed()), ("edge", Some(8)));
    let (server, client) = (server.layer(backend(&calls)), client.layer(backend(&calls)));
    for i in 0..60_u64 {
        let side = if i % 2 == 0 { &server } else { &client };
        let failed = side
            .clone()
            .oneshot(Request::new(()))
            .await
            .unwrap()
            .status()
            == StatusCode::SERVICE_UNAVAILABLE;
        assert_eq!(
            failed,
            injector.decide(chaos::draw(8, i)).is_some(),
            "request {i}"
        );
    }
    let errors = (0..60)
        .filter(|&i| injector.decide(chaos::draw(8, i)).is_some())
        .count() as u64;
    assert_eq!((shared.requests(), shared.injected()), (60, errors));
    // One retune through the shared piece turns both off.
    shared.retune(Chaos::default()).unwrap();
    for side in [server, client] {
        assert_eq!(
            side.oneshot(Request::new(())).await.unwrap().status(),
            StatusCode::OK
        );
    }
}
