//! `LimiterLayer` under tokio's paused clock: the limit follows the inner service's latency,
//! refusals carry the core's reason, each request's class comes from a header or an
//! extractor, the queue turns requests away gradually and lets them in by criticality,
//! nothing cancelled stays counted, the policy retunes live, and an overload at twice the
//! backend's capacity refuses the sheddable classes first.

use std::convert::Infallible;
use std::future::pending;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use ironward::limit::{AIMD, Aimd, Algorithm, SAMPLING, Sampling};
use ironward::{ADAPTIVE, Adaptive, Criticality, Partitions};
use ironward_tower::criticality::CriticalityHeader;
use ironward_tower::http::{Format, response_for, status_for};
use ironward_tower::{Dice, LimiterLayer, LimiterRefused, QUEUE, Queue, Queued};
use tokio::sync::Semaphore;
use tokio::time::{Instant, sleep};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Aimd from `initial`, between `min` and 100, a window latency over `timeout` a drop;
/// every call its own sample, in windows of 50 ms.
fn aimd(initial: u32, min: u32, timeout: Duration) -> Adaptive {
    Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial,
            min,
            max: 100,
            timeout,
            ..AIMD
        }),
        sampling: Sampling {
            size: 1,
            min_window: ms(50),
            max_window: ms(50),
            ..SAMPLING
        },
        ..ADAPTIVE
    }
}

/// A limit of exactly `n` while nothing is sampled.
fn of(n: u32) -> Adaptive {
    aimd(n, 1, Duration::from_secs(5))
}

type Hangs = Result<Response<()>, Infallible>;

/// A request marked with `class` in `x-criticality`.
fn marked(class: &str) -> Request<()> {
    Request::builder()
        .header("x-criticality", class)
        .body(())
        .expect("request")
}

/// The refusal inside a boxed error, if it is one.
fn refusal(err: &BoxError) -> Option<LimiterRefused> {
    err.downcast_ref::<LimiterRefused>().copied()
}

// Netflix's AIMDLimit: a window slower than the timeout backs the limit off by 0.9; a window
// within it, with at least half the limit in flight, adds one.
#[tokio::test(start_paused = true)]
async fn the_limit_falls_behind_a_slow_service_and_rises_behind_a_fast_one() {
    let latency = Arc::new(AtomicU64::new(200));
    let read = Arc::clone(&latency);
    let backend = service_fn(move |_: Request<()>| {
        let wait = ms(read.load(Ordering::Relaxed));
        async move {
            sleep(wait).await;
            Ok::<_, Infallible>(Response::new(()))
        }
    });
    let layer = LimiterLayer::new(aimd(20, 1, ms(100)));
    let service = layer.layer(backend);
    let mut limits = Vec::new();
    for round in 0..10 {
        if round == 5 {
            latency.store(60, Ordering::Relaxed);
        }
        // As many calls at once as the limit lets in, all admitted.
        let calls: Vec<_> = (0..layer.limit())
            .map(|_| tokio::spawn(service.clone().oneshot(Request::new(()))))
            .collect();
        for call in calls {
            call.await.unwrap().expect("within the limit");
        }
        limits.push(layer.limit());
    }
    // 200 ms against a 100 ms timeout: 20 → 18 → 16 → 14 → 12 → 10. Then 60 ms: the first
    // fast window still holds slow calls (one more backoff), then one more a round.
    assert_eq!(limits, vec![18, 16, 14, 12, 10, 9, 10, 11, 12, 13]);
    assert_eq!(layer.flying(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_refusal_carries_the_cores_reason_and_answers_503() {
    let layer = LimiterLayer::new(of(2));
    let mut service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    let held = [
        service.call(Request::new(())),
        service.call(Request::new(())),
    ];
    let err = service.call(Request::new(())).await.unwrap_err();
    let refused = refusal(&err).expect("a LimiterRefused");
    let reason = refused.reason();
    assert_eq!(
        (reason.flying, reason.limit, reason.room, reason.criticality),
        (2, 2, 2, Criticality::Critical)
    );
    assert_eq!(refused.queued(), Queued::Off);
    assert!(err.source().is_none(), "the reason is in the line");
    let line = err.to_string();
    assert_eq!(
        line,
        "adaptive concurrency limit refused the request: limiter refused a critical call: \
         2 in flight fill its room of 2 (limit 2)"
    );
    assert_eq!(status_for(&*err), Some(StatusCode::SERVICE_UNAVAILABLE));
    let problem = response_for::<String>(&err, Format::Problem).unwrap();
    let body: serde_json::Value = serde_json::from_str(problem.body()).unwrap();
    assert_eq!(body["piece"], "limiter");
    assert_eq!(body["detail"], line);
    assert!(problem.headers().get("retry-after").is_none());
    drop(held);
    assert_eq!(layer.flying(), 0);
}

// The class comes from the layer's source: a header, read leniently; an extractor; and, for
// a missing or malformed header, `Critical`.
#[tokio::test(start_paused = true)]
async fn the_class_comes_from_a_header_or_an_extractor_and_a_malformed_one_is_critical() {
    let layer = LimiterLayer::new(of(4)).with_criticality(CriticalityHeader::default());
    let mut service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    let mut held = vec![
        service.call(Request::new(())),
        service.call(Request::new(())),
    ];
    // Two in flight fill a sheddable call's half of 4.
    let err = service.call(marked("SHEDDABLE")).await.unwrap_err();
    assert_eq!(
        refusal(&err).unwrap().reason().criticality,
        Criticality::Sheddable
    );
    // Malformed: not a class, not text. Read as critical, which has room.
    held.push(service.call(marked("urgent, please")));
    let mut garbled = Request::new(());
    garbled.headers_mut().insert(
        "x-criticality",
        http::HeaderValue::from_bytes(b"sheddable\xfe").unwrap(),
    );
    held.push(service.call(garbled));
    assert_eq!(layer.flying(), 4);
    // Full: a critical-plus call is refused as critical-plus.
    let err = service.call(marked("critical-plus")).await.unwrap_err();
    let reason = refusal(&err).unwrap().reason();
    assert_eq!(
        (reason.criticality, reason.flying),
        (Criticality::CriticalPlus, 4)
    );
    drop(held);

    // An extractor: the path decides.
    let by_path = |request: &Request<()>| match request.uri().path() {
        "/batch" => Criticality::Sheddable,
        _ => Criticality::CriticalPlus,
    };
    let layer = LimiterLayer::new(of(2)).with_criticality(by_path);
    let mut service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    let _held = service.call(Request::new(()));
    let batch = Request::builder().uri("/batch").body(()).unwrap();
    let err = service.call(batch).await.unwrap_err();
    assert_eq!(
        refusal(&err).unwrap().reason().criticality,
        Criticality::Sheddable
    );
    let _other = service.call(Request::new(()));
    assert_eq!(layer.flying(), 2);
}

// failsafe-go's `WithQueueing(1, 2)` with a limit of 2: nothing turned away while at most 2
// wait, a chance of 0.5 at 3, every request from 4; a draw at most the chance turns away.
#[tokio::test(start_paused = true)]
async fn the_queue_turns_requests_away_gradually_at_fixed_draws() {
    let draw = Arc::new(AtomicU64::new(0f64.to_bits()));
    let read = Arc::clone(&draw);
    let dice = Dice::from_fn(move || f64::from_bits(read.load(Ordering::Relaxed)));
    let set = |value: f64| draw.store(value.to_bits(), Ordering::Relaxed);
    let queue = Queue {
        initial: 1.0,
        max: 2.0,
        wait: Duration::from_secs(30),
    };
    let layer = LimiterLayer::new(of(2)).with_queue(queue).with_dice(dice);
    let service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    let call = || tokio::spawn(service.clone().oneshot(Request::new(())));
    let _running = [call(), call()];
    // 0, 1 and 2 waiting: a chance of 0, queued though every draw is 0.
    let queued = [call(), call(), call()];
    tokio::task::yield_now().await;
    assert_eq!((layer.flying(), layer.queued()), (2, 3));
    // 3 waiting: a chance of 0.5. A draw of 0.5 is turned away, 0.6 queued.
    set(0.5);
    let err = service.clone().oneshot(Request::new(())).await.unwrap_err();
    assert_eq!(
        refusal(&err).unwrap().queued(),
        Queued::Rejected {
            waiting: 3,
            rejection: 0.5
        }
    );
    set(0.6);
    let fourth = call();
    tokio::task::yield_now().await;
    assert_eq!(layer.queued(), 4);
    // 4 waiting: a chance of 1, whatever the draw.
    set(0.999);
    let err = service.clone().oneshot(Request::new(())).await.unwrap_err();
    assert_eq!(
        refusal(&err).unwrap().queued(),
        Queued::Rejected {
            waiting: 4,
            rejection: 1.0
        }
    );
    drop((queued, fourth));
}

// Queued requests reach the inner service in order of criticality, then of arrival, as
// calls leave flight, each when its class has room (a sheddable request's is half the
// limit). The floor is off so that the order is the queue's alone.
#[tokio::test(start_paused = true)]
async fn queued_requests_are_let_in_by_criticality_then_arrival() {
    let served = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&served);
    let backend = service_fn(move |request: Request<()>| {
        let class = request.headers()["x-criticality"]
            .to_str()
            .unwrap()
            .to_owned();
        log.lock().unwrap().push(class);
        async {
            sleep(ms(10)).await;
            Ok::<_, Infallible>(Response::new(()))
        }
    });
    let roomy = Queue {
        initial: 10.0,
        max: 20.0,
        ..QUEUE
    };
    let no_floor = Adaptive {
        cool: Duration::ZERO,
        ..of(2)
    };
    let layer = LimiterLayer::new(no_floor)
        .with_queue(roomy)
        .with_criticality(CriticalityHeader::default());
    let service = layer.layer(backend);
    let first = [
        tokio::spawn(service.clone().oneshot(marked("critical"))),
        tokio::spawn(service.clone().oneshot(marked("critical"))),
    ];
    tokio::task::yield_now().await;
    let order = [
        "sheddable",
        "critical",
        "critical_plus",
        "sheddable",
        "critical_plus",
    ];
    let mut calls = Vec::new();
    for class in order {
        calls.push(tokio::spawn(service.clone().oneshot(marked(class))));
        tokio::task::yield_now().await;
    }
    assert_eq!(layer.queued(), 5);
    for call in first.into_iter().chain(calls) {
        call.await.unwrap().expect("let in");
    }
    assert_eq!(
        *served.lock().unwrap(),
        vec![
            "critical",
            "critical",
            "critical_plus",
            "critical_plus",
            "critical",
            "sheddable",
            "sheddable"
        ]
    );
    assert_eq!((layer.flying(), layer.queued()), (0, 0));
}

// A request dropped while it waits leaves the queue; one dropped while in flight leaves
// flight; nothing stays counted, and the inner service never sees a dropped waiter.
#[tokio::test(start_paused = true)]
async fn cancelled_waiters_and_calls_leave_nothing_counted() {
    let reached = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&reached);
    let backend = service_fn(move |_: Request<()>| {
        count.fetch_add(1, Ordering::Relaxed);
        pending::<Hangs>()
    });
    let layer = LimiterLayer::new(of(1)).with_queue(QUEUE);
    let mut service = layer.layer(backend);
    let running = service.ready().await.unwrap().call(Request::new(()));
    let waiting = service.ready().await.unwrap().call(Request::new(()));
    let also_waiting = service.ready().await.unwrap().call(Request::new(()));
    assert_eq!(
        format!("{waiting:?}"),
        "LimiterFuture { state: \"waiting\", .. }"
    );
    assert_eq!((layer.flying(), layer.queued()), (1, 2));
    drop(waiting);
    assert_eq!(layer.queued(), 1);
    // The running call is cancelled: the room goes to the waiter, which calls the inner
    // service when it is polled.
    drop(running);
    assert_eq!((layer.flying(), layer.queued()), (1, 0));
    let handle = tokio::spawn(also_waiting);
    tokio::task::yield_now().await;
    assert_eq!(reached.load(Ordering::Relaxed), 2);
    handle.abort();
    let _ = handle.await;
    assert_eq!((layer.flying(), layer.queued()), (0, 0));
    // A waiter cut by a timeout outside the layer leaves the queue too.
    let _running = service.ready().await.unwrap().call(Request::new(()));
    let cut = tower::timeout::Timeout::new(service.clone(), ms(5))
        .oneshot(Request::new(()))
        .await;
    assert!(cut.unwrap_err().is::<tower::timeout::error::Elapsed>());
    assert_eq!((layer.flying(), layer.queued()), (1, 0));
    assert_eq!(reached.load(Ordering::Relaxed), 3);
}

// The tuner changes the policy of every service and clone at once, keeping the calls in
// flight; the queued requests the new policy has room for go in.
#[tokio::test(start_paused = true)]
async fn a_tuner_retunes_the_limit_live() {
    let layer = LimiterLayer::new(of(1)).with_queue(QUEUE);
    let tuner = layer.tuner();
    let service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    let calls: Vec<_> = (0..3)
        .map(|_| tokio::spawn(service.clone().oneshot(Request::new(()))))
        .collect();
    tokio::task::yield_now().await;
    assert_eq!((layer.flying(), layer.queued()), (1, 2));
    let three = Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: 3,
            min: 3,
            ..AIMD
        }),
        ..of(1)
    };
    tuner.retune(three);
    assert_eq!(tuner.policy(), three);
    assert_eq!((layer.limit(), layer.flying(), layer.queued()), (3, 3, 0));
    assert!(format!("{tuner:?}").starts_with("Tuner { policy: Adaptive"));
    for call in calls {
        call.abort();
        let _ = call.await;
    }
    assert_eq!(layer.flying(), 0);
}

// A queue put in front of a layer built without one, by its tuner: requests from then on
// wait, drawing the gradual rejection from the layer's own dice; taken away again, the
// next request is refused at once and the waiting one still gets in when room appears.
#[tokio::test(start_paused = true)]
async fn a_tuner_puts_a_queue_in_front_live_and_takes_it_away() {
    let draws = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&draws);
    let dice = Dice::from_fn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        0.9
    });
    let gate = Arc::new(Semaphore::new(0));
    let held = Arc::clone(&gate);
    let layer = LimiterLayer::new(of(1)).with_dice(dice);
    let tuner = layer.queue_tuner();
    let service = layer.layer(service_fn(move |_: Request<()>| {
        let held = Arc::clone(&held);
        async move {
            let _pass = held.acquire().await;
            Ok::<_, Infallible>(Response::new(()))
        }
    }));
    let call = || tokio::spawn(service.clone().oneshot(Request::new(())));
    let running = call();
    tokio::task::yield_now().await;
    let err = service.clone().oneshot(Request::new(())).await.unwrap_err();
    assert_eq!(refusal(&err).unwrap().queued(), Queued::Off);

    let queue = Queue {
        initial: 0.0,
        max: 2.0,
        wait: Duration::from_secs(30),
    };
    assert_eq!(tuner.retune(Some(queue)), None);
    assert_eq!((layer.queue(), tuner.policy()), (Some(queue), Some(queue)));
    // The first waits for sure; the second, behind one, is turned away with a chance of
    // a half, and the draw of 0.9 keeps it.
    let waiting = [call(), call()];
    tokio::task::yield_now().await;
    assert_eq!(layer.queued(), 2);
    assert_eq!(
        draws.load(Ordering::Relaxed),
        1,
        "the layer's dice drew once"
    );

    assert_eq!(tuner.retune(None), Some(queue));
    let err = service.clone().oneshot(Request::new(())).await.unwrap_err();
    assert_eq!(refusal(&err).unwrap().queued(), Queued::Off);
    gate.add_permits(3);
    assert!(running.await.unwrap().is_ok());
    for waiter in waiting {
        assert!(waiter.await.unwrap().is_ok(), "a waiting request got in");
    }
    assert_eq!((layer.flying(), layer.queued()), (0, 0));
}

/// What happened to one request of the overload test: when, its class, and whether it was
/// let in.
type Outcome = (Duration, Criticality, bool);

/// A backend that runs 10 calls at once, 10 ms each, and queues the rest inside (so that its
/// latency grows past its capacity), behind `layer`, sent 2000 requests a second (twice what
/// it serves) for three seconds, each tenth request of the classes in `mix`.
async fn overload<Q>(
    layer: LimiterLayer<ironward_tower::Overloads, Q>,
    mix: [&'static str; 10],
) -> (Vec<Outcome>, usize)
where
    Q: ironward_tower::ReadCriticality<Request<()>> + Clone + Send + Sync + 'static,
{
    let capacity = Arc::new(Semaphore::new(10));
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (count, peak) = (Arc::clone(&inside), Arc::clone(&most));
    let backend = service_fn(move |_: Request<()>| {
        let capacity = Arc::clone(&capacity);
        let (count, peak) = (Arc::clone(&count), Arc::clone(&peak));
        async move {
            let now = count.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            let _slot = capacity.acquire().await.expect("open");
            sleep(ms(10)).await;
            count.fetch_sub(1, Ordering::SeqCst);
            Ok::<_, Infallible>(Response::new(()))
        }
    });
    let service = layer.layer(backend);
    let start = Instant::now();
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let requests: Vec<_> = (0..6000u64)
        .map(|k| {
            let service = service.clone();
            let outcomes = Arc::clone(&outcomes);
            let class = mix[(k % 10) as usize];
            tokio::spawn(async move {
                tokio::time::sleep_until(start + Duration::from_micros(500 * k)).await;
                let at = start.elapsed();
                let result = service.oneshot(marked(class)).await;
                let parsed: Criticality = class.parse().unwrap();
                match result {
                    Ok(_) => outcomes.lock().unwrap().push((at, parsed, true)),
                    Err(err) => {
                        assert!(err.is::<LimiterRefused>(), "{err}");
                        outcomes.lock().unwrap().push((at, parsed, false));
                    }
                }
            })
        })
        .collect();
    for request in requests {
        request.await.unwrap();
    }
    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    (outcomes, most.load(Ordering::SeqCst))
}

/// Per class, least critical first: (admitted, refused).
fn tally(outcomes: &[Outcome]) -> [(usize, usize); 4] {
    let mut counts = [(0, 0); 4];
    for &(_, class, admitted) in outcomes {
        let slot = &mut counts[class.rank()];
        if admitted {
            slot.0 += 1;
        } else {
            slot.1 += 1;
        }
    }
    counts
}

/// Twice the backend's capacity: of every ten requests three sheddable, three
/// sheddable-concurrent, three critical and one critical-plus.
const MIX: [&str; 10] = [
    "critical_plus",
    "sheddable",
    "critical",
    "sheddable_concurrent",
    "sheddable",
    "critical",
    "sheddable_concurrent",
    "sheddable",
    "critical",
    "sheddable_concurrent",
];

// The SRE book's "Handling Overload": the less critical classes are refused first. With no
// queue, a critical or critical-plus request is refused only when the limit is full, and for
// the second after it the core's floor refuses every sheddable request outright: no
// sheddable request is admitted within a second after a critical one is refused.
#[tokio::test(start_paused = true)]
async fn at_twice_capacity_no_critical_request_is_refused_while_a_sheddable_one_is_admitted() {
    let layer =
        LimiterLayer::new(aimd(10, 4, ms(30))).with_criticality(CriticalityHeader::default());
    let (outcomes, most) = overload(layer.clone(), MIX).await;
    let sheddable = |class: Criticality| class <= Criticality::SheddableConcurrent;
    let critical_refusals: Vec<Duration> = outcomes
        .iter()
        .filter(|&&(_, class, admitted)| !sheddable(class) && !admitted)
        .map(|&(at, ..)| at)
        .collect();
    for &(at, class, admitted) in &outcomes {
        if sheddable(class) && admitted {
            for &refused in &critical_refusals {
                assert!(
                    !(refused <= at && at < refused + Duration::from_secs(1)),
                    "a {class} request admitted at {at:?}, within a second of a critical refusal at {refused:?}"
                );
            }
        }
    }
    let counts = tally(&outcomes);
    let rate = |(admitted, refused): (usize, usize)| admitted as f64 / (admitted + refused) as f64;
    let critical = rate((counts[2].0 + counts[3].0, counts[2].1 + counts[3].1));
    let shed = rate((counts[0].0 + counts[1].0, counts[0].1 + counts[1].1));
    eprintln!(
        "no queue: per class (admitted, refused), sheddable first: {counts:?}; critical \
         refusals {}; critical admitted {critical:.3}, sheddable {shed:.3}; limit {}; most \
         inside the backend {most}",
        critical_refusals.len(),
        layer.limit()
    );
    // Neither check is empty, and the critical classes come through far better.
    assert!(!critical_refusals.is_empty(), "the limit was full at times");
    assert!(counts[0].0 + counts[1].0 > 0, "some sheddable admitted");
    assert!(counts[0].1 + counts[1].1 > 0, "some sheddable refused");
    assert!(critical > 0.9 && shed < 0.5, "{critical} against {shed}");
    assert!(
        most <= 100,
        "the backend never held more than the limit's maximum"
    );
    assert_eq!(layer.flying(), 0);
}

// With a queue, a critical request that finds no room waits (ahead of every sheddable one)
// instead of being refused: at twice capacity no critical or critical-plus request is
// refused at all, while sheddable ones are still admitted.
#[tokio::test(start_paused = true)]
async fn at_twice_capacity_a_queue_refuses_no_critical_request() {
    let queue = Queue {
        wait: ms(200),
        ..QUEUE
    };
    let layer = LimiterLayer::new(aimd(10, 4, ms(30)))
        .with_queue(queue)
        .with_dice(Dice::seeded(11))
        .with_criticality(CriticalityHeader::default());
    let (outcomes, _) = overload(layer.clone(), MIX).await;
    let counts = tally(&outcomes);
    eprintln!(
        "queue: per class (admitted, refused), sheddable first: {counts:?}; limit {}",
        layer.limit()
    );
    assert_eq!((counts[2].1, counts[3].1), (0, 0), "{counts:?}");
    assert!(
        counts[0].0 + counts[1].0 > 0,
        "some sheddable admitted: {counts:?}"
    );
    assert!(
        counts[0].1 + counts[1].1 > 0,
        "some sheddable refused: {counts:?}"
    );
    assert_eq!((layer.flying(), layer.queued()), (0, 0));
}

/// `path` marked with `class` in `x-criticality`.
fn at(path: &str, class: &str) -> Request<()> {
    Request::get(path)
        .header("x-criticality", class)
        .body(())
        .expect("request")
}

/// A limit of exactly `n`, with each class reserved its part (sheddable, critical).
fn partitioned(n: u32, sheddable: f64, critical: f64) -> Adaptive {
    Adaptive {
        partitions: Some(Partitions {
            sheddable,
            critical,
            ..Partitions::NONE
        }),
        ..of(n)
    }
}

// A health check is let through a full limiter with a full queue: never queued nor refused,
// not counted in flight, and never sampled: five successes of 10 ms in windows of their own,
// sampled, would raise the limit of 1 (each with its one call in flight, half the limit, as
// the Aimd test above has it), where the limit stays 1. (They take time because latencies
// under the sampling's `min_rtt` of 100 µs are never sampled anyway.)
#[tokio::test(start_paused = true)]
async fn a_health_check_bypasses_a_full_limiter_uncounted_and_unsampled() {
    let layer = LimiterLayer::new(of(1))
        // One waiting call fills the queue.
        .with_queue(Queue {
            initial: 1.0,
            max: 1.0,
            wait: Duration::from_secs(30),
        })
        .with_dice(Dice::from_fn(|| 0.5))
        .with_criticality(CriticalityHeader::default())
        .with_bypass(|head| head.uri.path() == "/health");
    let mut service = layer.layer(service_fn(|request: Request<()>| async move {
        if request.uri().path() == "/health" {
            sleep(ms(10)).await;
            Ok::<_, Infallible>(Response::new(()))
        } else {
            pending().await
        }
    }));
    let held = service.call(at("/work", "critical"));
    let waiting = tokio::spawn(service.clone().oneshot(at("/work", "critical-plus")));
    tokio::task::yield_now().await;
    assert_eq!((layer.flying(), layer.queued()), (1, 1));
    let err = service.call(at("/work", "critical")).await.unwrap_err();
    assert!(refusal(&err).is_some(), "the limit and the queue are full");

    for _ in 0..5 {
        let health = service.call(at("/health", "sheddable"));
        assert_eq!(layer.flying(), 1, "the health check is not counted");
        health.await.expect("a health check is never refused");
        assert_eq!((layer.flying(), layer.queued()), (1, 1));
        sleep(ms(60)).await; // past a sampling window
    }
    assert_eq!(layer.limit(), 1, "no health check was sampled");
    // The held call leaves, the waiting one takes its place, and then its caller leaves.
    drop(held);
    tokio::task::yield_now().await;
    assert_eq!((layer.flying(), layer.queued()), (1, 0));
    waiting.abort();
    let _ = waiting.await;
    assert_eq!(layer.flying(), 0);
}

// Under partitions a class is admitted past the limit while under its reservation, and
// refused at it; the refusal names the class's own calls in flight and its reservation, in
// the error's line and in both bodies of the HTTP answer.
#[tokio::test(start_paused = true)]
async fn a_partitioned_limiter_refuses_a_class_at_its_reservation_and_says_so() {
    // Of 4: sheddable 0.25 reserves 1, critical 0.75 reserves 3.
    let layer = LimiterLayer::new(partitioned(4, 0.25, 0.75))
        .with_criticality(CriticalityHeader::default());
    let mut service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    // Four critical calls borrow the whole limit; a sheddable one still has its reservation.
    let mut held: Vec<_> = (0..4).map(|_| service.call(marked("critical"))).collect();
    held.push(service.call(marked("sheddable")));
    assert_eq!(
        layer.flying(),
        5,
        "one call past the limit, on its reservation"
    );

    let err = service.call(marked("sheddable")).await.unwrap_err();
    let reason = refusal(&err).expect("a LimiterRefused").reason();
    assert_eq!(
        (reason.criticality, reason.flying, reason.limit, reason.room),
        (Criticality::Sheddable, 5, 4, 1)
    );
    assert_eq!(reason.class_flying, Some(1));
    let line = "adaptive concurrency limit refused the request: limiter refused a sheddable \
                call: 5 in flight fill the limit of 4, and its class's 1 fill its reservation of 1";
    assert_eq!(err.to_string(), line);
    let problem = response_for::<String>(&err, Format::Problem).unwrap();
    assert_eq!(problem.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: serde_json::Value = serde_json::from_str(problem.body()).unwrap();
    assert_eq!(body["detail"], line);
    let text = response_for::<String>(&err, Format::Text).unwrap();
    assert!(
        text.body().ends_with(&format!(": {line}\n")),
        "{}",
        text.body()
    );
    drop(held);
    assert_eq!(layer.flying(), 0);
}

#[cfg(feature = "metrics")]
use crate::seen;

// The limiter's series carry each request's class: admitted and refused by reason and
// criticality, each registered the first time it counts (not the 20 combinations up front),
// and the limit as a gauge from the start.
#[cfg(feature = "metrics")]
#[tokio::test(start_paused = true)]
async fn the_limiter_counts_by_class_and_reason_and_gauges_its_limit() {
    let recording = seen::Recording::start();
    let layer = LimiterLayer::new(of(2))
        .with_criticality(CriticalityHeader::default())
        .with_name("pool");
    let mut service = layer.layer(service_fn(|_: Request<()>| pending::<Hangs>()));
    let seen = recording.seen();
    // Nothing counted yet, so no request series; the gauge at the limit.
    assert_eq!(seen.series_named("ironward.requests", "pool"), 0);
    assert_eq!(
        seen.gauge("ironward.limiter.limit", &[("name", "pool")]),
        2.0
    );

    let _first = service.call(marked("critical"));
    // A sheddable request's room is 1: full.
    assert!(service.call(marked("sheddable")).await.is_err());
    let _second = service.call(marked("critical"));
    // Full for the critical too, which raises the floor: the sheddable are then refused
    // outright.
    assert!(service.call(marked("critical")).await.is_err());
    assert!(service.call(marked("sheddable")).await.is_err());

    let seen = recording.seen();
    let count = |outcome: &str, reason: Option<&str>, class: &str| {
        let mut labels = vec![
            ("piece", "limiter"),
            ("name", "pool"),
            ("outcome", outcome),
            ("criticality", class),
        ];
        labels.extend(reason.map(|reason| ("reason", reason)));
        seen.requests(&labels)
    };
    assert_eq!(count("admitted", None, "critical"), 2);
    assert_eq!(count("admitted", None, "sheddable"), 0);
    assert_eq!(count("refused", Some("full"), "sheddable"), 1);
    assert_eq!(count("refused", Some("full"), "critical"), 1);
    assert_eq!(count("refused", Some("floor"), "sheddable"), 1);
    assert_eq!(seen.total("refused"), 3);
    // Only the four combinations that counted have a series.
    assert_eq!(seen.series_named("ironward.requests", "pool"), 4);
}

// A bypass is no decision: it counts in no series, while the next counted request does.
#[cfg(feature = "metrics")]
#[tokio::test(start_paused = true)]
async fn a_bypass_is_counted_in_no_series() {
    let recording = seen::Recording::start();
    let layer = LimiterLayer::new(of(1))
        .with_name("health")
        .with_bypass(|head| head.uri.path() == "/health");
    let mut service = layer.layer(service_fn(|_: Request<()>| async {
        Ok::<_, Infallible>(Response::new(()))
    }));
    for _ in 0..3 {
        let health = Request::get("/health").body(()).unwrap();
        service.call(health).await.unwrap();
    }
    let seen = recording.seen();
    assert_eq!(seen.series_named("ironward.requests", "health"), 0);
    service.call(Request::new(())).await.unwrap();
    let seen = recording.seen();
    assert_eq!(seen.series_named("ironward.requests", "health"), 1);
    assert_eq!(
        seen.requests(&[
            ("piece", "limiter"),
            ("name", "health"),
            ("outcome", "admitted"),
            ("criticality", "critical"),
        ]),
        1
    );
}
