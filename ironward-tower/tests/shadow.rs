//! Shadow mode: each refusing layer in `Mode::Shadow` beside an enforcing twin under the same
//! traffic (the same seeded dice, the same manual clock, the same CPU script). The shadow lets
//! every request through to its inner service, and the requests it shadowed are exactly the
//! ones its twin refused, by index; with the `metrics` feature, its `shadowed` counters equal
//! the twin's `refused` ones.

use std::collections::BTreeSet;
use std::future::{Future, pending, ready};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response};
use ironward::{SHED, SRE};
use ironward_tower::{
    AnyError, BreakerLayer, BreakerRefused, Clock, Cpu, DeadlineExceeded, DeadlineLayer, Dice,
    GateFull, GateLayer, Limited, Mode, Quota, QuotaLayer, RequestDeadline, ShedLayer, ShedRefused,
};
use tokio::time::Instant;
use tower::{BoxError, Layer, Service, service_fn};

/// A future the inner services return: ready at once, or never.
type Reply<T> = Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>;

/// The indices of the requests an inner service was called with, in order.
#[derive(Clone, Default)]
struct Reached(Arc<Mutex<Vec<usize>>>);

impl Reached {
    fn push(&self, index: usize) {
        self.0.lock().unwrap().push(index);
    }

    fn all(&self) -> Vec<usize> {
        self.0.lock().unwrap().clone()
    }
}

/// Whether a response future is one its layer shadowed, as its `Debug` says.
fn is_shadowed(future: &impl std::fmt::Debug) -> bool {
    format!("{future:?}").contains("shadowed")
}

/// The counters of both layers of a test, when the `metrics` feature records them: a
/// recorder set as the test thread's while this lives, since a layer registers its handles
/// when it makes its service, and the test makes its services and runs them on that thread.
struct Counters {
    #[cfg(feature = "metrics")]
    recorder: &'static metrics_util::debugging::DebuggingRecorder,
    #[cfg(feature = "metrics")]
    _guard: metrics::LocalRecorderGuard<'static>,
}

impl Counters {
    fn new() -> Self {
        #[cfg(feature = "metrics")]
        {
            // Leaked so that the guard may borrow it for the rest of the test: a few bytes.
            let recorder: &'static _ =
                Box::leak(Box::new(metrics_util::debugging::DebuggingRecorder::new()));
            Self {
                recorder,
                _guard: metrics::set_default_local_recorder(recorder),
            }
        }
        #[cfg(not(feature = "metrics"))]
        Self {}
    }

    /// Makes a layer whose handles record here.
    fn make<T>(&self, make: impl FnOnce() -> T) -> T {
        make()
    }

    /// With the feature: the shadow layer (named `shadow`) counted as shadowed exactly what
    /// the twin (named `twin`) counted as refused, reason by reason, admitted the same, and
    /// refused nothing.
    fn agree(&self, piece: &str, reasons: &[&str], refused: usize) {
        #[cfg(feature = "metrics")]
        {
            use metrics_util::debugging::DebugValue;
            let snapshot = self.recorder.snapshotter().snapshot().into_vec();
            let count = |name: &str, outcome: &str, reason: Option<&str>| -> u64 {
                snapshot
                    .iter()
                    .filter(|(key, ..)| {
                        let key = key.key();
                        let label = |k: &str| {
                            key.labels()
                                .find(|l| l.key() == k)
                                .map(|l| l.value().to_owned())
                        };
                        key.name() == "ironward.requests"
                            && label("piece").as_deref() == Some(piece)
                            && label("name").as_deref() == Some(name)
                            && label("outcome").as_deref() == Some(outcome)
                            && (reason.is_none() || label("reason").as_deref() == reason)
                    })
                    .map(|(.., value)| match value {
                        DebugValue::Counter(n) => *n,
                        other => panic!("ironward.requests is a counter, not {other:?}"),
                    })
                    .sum()
            };
            let mut total = 0;
            for &reason in reasons {
                let twin = count("twin", "refused", Some(reason));
                assert_eq!(count("shadow", "shadowed", Some(reason)), twin, "{reason}");
                total += twin;
            }
            assert_eq!(total, refused as u64);
            assert_eq!(count("shadow", "refused", None), 0);
            assert_eq!(count("twin", "shadowed", None), 0);
            assert_eq!(
                count("shadow", "admitted", None),
                count("twin", "admitted", None)
            );
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (piece, reasons, refused);
    }
}

/// Asserts what every test shows: the shadow reached its inner service with every request of
/// `0..sent`, it shadowed what the twin refused, and the twin refused some but not all.
fn same_decisions(sent: usize, reached: &Reached, shadowed: &BTreeSet<usize>, refused: &[usize]) {
    assert_eq!(reached.all(), (0..sent).collect::<Vec<_>>());
    let refused: BTreeSet<usize> = refused.iter().copied().collect();
    assert_eq!(*shadowed, refused);
    assert!(
        !refused.is_empty() && refused.len() < sent,
        "refused {} of {sent}",
        refused.len()
    );
    eprintln!("the twin refused {} of {sent}", refused.len());
}

#[test]
fn every_layer_enforces_unless_told_otherwise() {
    assert_eq!(Mode::default(), Mode::Enforce);
    assert_eq!(BreakerLayer::new(SRE).mode(), Mode::Enforce);
    assert_eq!(ShedLayer::new(SHED, Cpu::fixed(0)).mode(), Mode::Enforce);
    assert_eq!(
        QuotaLayer::new(Quota::bucket(1.0, 1.0)).mode(),
        Mode::Enforce
    );
    assert_eq!(GateLayer::new(1).mode(), Mode::Enforce);
    // Each builder keeps the mode.
    let breaker = BreakerLayer::new(SRE)
        .with_mode(Mode::Shadow)
        .with_name("b")
        .with_classifier(AnyError)
        .with_dice(Dice::seeded(1));
    assert!(breaker.mode().is_shadow());
    let shed = ShedLayer::new(SHED, Cpu::fixed(0))
        .with_mode(Mode::Shadow)
        .with_name("s")
        .with_classifier(AnyError);
    assert!(shed.mode().is_shadow());
    let (clock, _) = Clock::manual(Duration::ZERO);
    let limit = QuotaLayer::new(Quota::bucket(1.0, 1.0))
        .with_mode(Mode::Shadow)
        .with_name("r")
        .with_clock(clock);
    assert!(limit.mode().is_shadow());
    assert!(
        GateLayer::new(1)
            .with_mode(Mode::Shadow)
            .with_name("g")
            .mode()
            .is_shadow()
    );
}

/// A backend that fails its first 300 calls and every third after: the breaker throttles,
/// recovers as passes come back, and throttles again.
fn breaker_fails(index: usize) -> bool {
    index < 300 || index.is_multiple_of(3)
}

#[tokio::test]
async fn a_shadow_breaker_lets_through_exactly_what_its_twin_refuses() {
    let counters = Counters::new();
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let make = |name, mode| {
        counters.make(|| {
            BreakerLayer::new(SRE)
                .with_classifier(AnyError)
                .with_clock(clock.clone())
                .with_dice(Dice::seeded(7))
                .with_name(name)
                .with_mode(mode)
        })
    };
    let (twin, shadow) = (make("twin", Mode::Enforce), make("shadow", Mode::Shadow));
    assert_eq!(shadow.mode(), Mode::Shadow);
    let backend = |reached: Reached| {
        service_fn(move |index: usize| {
            reached.push(index);
            ready(if breaker_fails(index) {
                Err::<usize, BoxError>("backend down".into())
            } else {
                Ok(index)
            })
        })
    };
    let reached = Reached::default();
    let mut twin = twin.layer(backend(Reached::default()));
    let mut shadow = shadow.layer(backend(reached.clone()));

    let sent = 1000;
    let (mut refused, mut shadowed) = (Vec::new(), BTreeSet::new());
    for index in 0..sent {
        hand.advance(Duration::from_millis(25));
        match twin.call(index).await {
            Err(err) if err.is::<BreakerRefused>() => refused.push(index),
            Err(_) => assert!(breaker_fails(index)),
            Ok(n) => assert_eq!(n, index),
        }
        let future = shadow.call(index);
        if is_shadowed(&future) {
            shadowed.insert(index);
        }
        // Shadowed or not, the answer is the backend's.
        match future.await {
            Err(err) => assert!(!err.is::<BreakerRefused>() && breaker_fails(index)),
            Ok(n) => assert_eq!(n, index),
        }
    }
    same_decisions(sent, &reached, &shadowed, &refused);
    // A shadowed call's outcome was not recorded: both breakers read the same window.
    assert_eq!(twin.ratio(), shadow.ratio());
    counters.agree("breaker", &["throttled"], refused.len());
}

#[tokio::test]
async fn a_shadow_shedder_lets_through_exactly_what_its_twin_sheds() {
    let counters = Counters::new();
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let (cpu, dial) = Cpu::scripted(100);
    let make = |name, mode| {
        counters.make(|| {
            ShedLayer::new(SHED, cpu.clone())
                .with_clock(clock.clone())
                .with_name(name)
                .with_mode(mode)
        })
    };
    let (twin, shadow) = (make("twin", Mode::Enforce), make("shadow", Mode::Shadow));
    // Every fifth request answers at once; the rest hang until the test lets them go.
    let server = |reached: Reached| {
        service_fn(move |index: usize| -> Reply<Response<()>> {
            reached.push(index);
            if index.is_multiple_of(5) {
                Box::pin(ready(Ok(Response::new(()))))
            } else {
                Box::pin(pending())
            }
        })
    };
    let reached = Reached::default();
    let mut twin = twin.layer(server(Reached::default()));
    let mut shadow = shadow.layer(server(reached.clone()));

    let sent = 600;
    let (mut refused, mut shadowed) = (Vec::new(), BTreeSet::new());
    let (mut twin_held, mut shadow_held) = (Vec::new(), Vec::new());
    for index in 0..sent {
        hand.advance(Duration::from_millis(7));
        // Hot from the 200th request to the 400th, then cool again.
        dial.set(if (200..400).contains(&index) {
            950
        } else {
            100
        });
        // Every 40 requests, the oldest half of what hangs is let go.
        if index % 40 == 39 {
            let (t, s) = (twin_held.len() / 2, shadow_held.len() / 2);
            twin_held.drain(..t);
            shadow_held.drain(..s);
        }

        let future = twin.call(index);
        if index.is_multiple_of(5) {
            if let Err(err) = future.await {
                assert!(err.is::<ShedRefused>());
                refused.push(index);
            }
        } else if format!("{future:?}").contains("overloaded") {
            assert!(future.await.unwrap_err().is::<ShedRefused>());
            refused.push(index);
        } else {
            twin_held.push(future);
        }

        let future = shadow.call(index);
        if is_shadowed(&future) {
            shadowed.insert(index);
            // Out of flight: holding it or not changes nothing.
            drop(future);
        } else if index.is_multiple_of(5) {
            future.await.unwrap();
        } else {
            shadow_held.push(future);
        }
        assert_eq!(shadow.flying(), twin.flying());
    }
    same_decisions(sent, &reached, &shadowed, &refused);
    counters.agree("shed", &["overloaded", "cooling"], refused.len());
}

#[tokio::test]
async fn a_shadow_rate_limit_lets_through_exactly_what_its_twin_limits() {
    let counters = Counters::new();
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let make = |name, mode| {
        counters.make(|| {
            // Told to send the fields, which a shadow layer still never does.
            QuotaLayer::new(Quota::bucket(10.0, 5.0))
                .with_clock(clock.clone())
                .with_name(name)
                .with_headers(true)
                .with_mode(mode)
        })
    };
    let (twin, shadow) = (make("twin", Mode::Enforce), make("shadow", Mode::Shadow));
    // The handler answers with the refusal it finds in the request's extensions.
    let handler = |reached: Reached| {
        service_fn(move |request: Request<usize>| {
            reached.push(*request.body());
            ready(Ok::<_, BoxError>(Response::new(
                request.extensions().get::<Limited>().copied(),
            )))
        })
    };
    let reached = Reached::default();
    let mut twin = twin.layer(handler(Reached::default()));
    let mut shadow = shadow.layer(handler(reached.clone()));

    let sent = 500;
    let (mut refused, mut shadowed) = (Vec::new(), BTreeSet::new());
    for index in 0..sent {
        // Bursts of twelve 5 ms apart, then eight 150 ms apart: ten a second is too few for
        // the bursts.
        let gap = if index % 20 < 12 { 5 } else { 150 };
        hand.advance(Duration::from_millis(gap));
        let twin_limited = match twin.call(Request::new(index)).await {
            Err(err) => {
                refused.push(index);
                err.downcast_ref::<Limited>().copied()
            }
            Ok(found) => {
                assert_eq!(*found.body(), None);
                None
            }
        };
        let found = shadow.call(Request::new(index)).await.unwrap();
        // A shadow limit sends no fields: its policy is not in force.
        assert!(found.headers().get("ratelimit").is_none());
        let found = found.into_body();
        if let Some(limited) = found {
            shadowed.insert(index);
            // The same refusal, to the numbers, but for the policy's name.
            let twin_limited = twin_limited.expect("the twin refused it too");
            assert_eq!(limited.policy(), "shadow");
            assert_eq!(limited.retry_after(), twin_limited.retry_after());
            assert_eq!(limited.quota(), twin_limited.quota());
        }
    }
    same_decisions(sent, &reached, &shadowed, &refused);
    counters.agree("rate_limit", &["limited"], refused.len());
}

#[tokio::test]
async fn a_shadow_gate_lets_through_exactly_what_its_twin_finds_full() {
    let counters = Counters::new();
    let make = |name, mode| counters.make(|| GateLayer::new(3).with_name(name).with_mode(mode));
    let (twin, shadow) = (make("twin", Mode::Enforce), make("shadow", Mode::Shadow));
    let stuck = |reached: Reached| {
        service_fn(move |index: usize| {
            reached.push(index);
            pending::<Result<(), BoxError>>()
        })
    };
    let reached = Reached::default();
    let mut twin_service = twin.layer(stuck(Reached::default()));
    let mut shadow_service = shadow.layer(stuck(reached.clone()));

    let sent: usize = 300;
    let (mut refused, mut shadowed) = (Vec::new(), BTreeSet::new());
    let (mut twin_held, mut shadow_held) = (Vec::new(), Vec::new());
    for index in 0..sent {
        // Now and then the oldest request in flight completes.
        if index.is_multiple_of(4) && !twin_held.is_empty() {
            twin_held.remove(0);
            shadow_held.remove(0);
        }
        let future = twin_service.call(index);
        if format!("{future:?}").contains("full") {
            assert!(future.await.unwrap_err().is::<GateFull>());
            refused.push(index);
        } else {
            twin_held.push(future);
        }
        let future = shadow_service.call(index);
        if is_shadowed(&future) {
            shadowed.insert(index);
        } else {
            shadow_held.push(future);
        }
        // A shadowed entry holds nothing.
        assert_eq!(shadow.held(), twin.held());
    }
    same_decisions(sent, &reached, &shadowed, &refused);
    counters.agree("gate", &["full"], refused.len());
}

#[test]
fn a_deadline_enforces_unless_told_otherwise() {
    assert_eq!(
        DeadlineLayer::new(Duration::from_secs(1)).mode(),
        Mode::Enforce
    );
    // `with_mode` is `const`, as `new` is, and the other builders keep it.
    const SHADOW: DeadlineLayer = DeadlineLayer::new(Duration::from_secs(1))
        .with_mode(Mode::Shadow)
        .with_name("d");
    assert!(SHADOW.mode().is_shadow());
    let grpc = DeadlineLayer::from_grpc_timeout(Duration::from_secs(1)).with_mode(Mode::Shadow);
    assert!(grpc.mode().is_shadow());
    assert!(format!("{grpc:?}").contains("Shadow"));
}

/// What a deadline's handler answers: the request's index, whether the would-be refusal was
/// in its extensions, and the deadline it found there.
type Seen = (usize, bool, Option<RequestDeadline>);

/// A handler that works for `work(index)`, then answers with what it found.
fn deadline_handler(
    reached: Reached,
    work: fn(usize) -> Duration,
) -> impl Service<Request<usize>, Response = Seen, Error = BoxError, Future: Send> {
    service_fn(move |request: Request<usize>| {
        let index = *request.body();
        reached.push(index);
        async move {
            tokio::time::sleep(work(index)).await;
            let extensions = request.extensions();
            Ok::<_, BoxError>((
                index,
                extensions.get::<DeadlineExceeded>().is_some(),
                extensions.get::<RequestDeadline>().copied(),
            ))
        }
    })
}

/// The layers' budget in the scripted traffic.
const BUDGET: Duration = Duration::from_millis(200);

/// How long the handler works on request `index`: under the budget, at it (a tie the
/// enforcing race delivers), or past it.
fn deadline_work(index: usize) -> Duration {
    match index % 10 {
        3 => BUDGET,
        4 | 8 => BUDGET + Duration::from_millis(1 + index as u64 % 97),
        n => Duration::from_millis(20 * n as u64),
    }
}

/// Request `index` as the script sends it: every seventh carries a deadline from further out
/// that is already spent, every seventh after those one with 100 ms left, shorter than the
/// layer's own. Advances the paused clock to spend what is spent.
async fn deadline_request(index: usize) -> Request<usize> {
    let mut request = Request::new(index);
    match index % 7 {
        0 => {
            let outer = RequestDeadline::start(Duration::from_millis(50));
            tokio::time::advance(Duration::from_millis(50)).await;
            request.extensions_mut().insert(outer);
        }
        1 => {
            let outer = RequestDeadline::start(Duration::from_millis(150));
            tokio::time::advance(Duration::from_millis(50)).await;
            request.extensions_mut().insert(outer);
        }
        _ => {}
    }
    request
}

#[tokio::test(start_paused = true)]
async fn a_shadow_deadline_lets_through_exactly_what_its_twin_cuts() {
    let counters = Counters::new();
    let twin_reached = Reached::default();
    let reached = Reached::default();
    // A deadline registers its counters when it makes its service.
    let mut twin = counters.make(|| {
        DeadlineLayer::new(BUDGET)
            .with_name("twin")
            .layer(deadline_handler(twin_reached.clone(), deadline_work))
    });
    let mut shadow = counters.make(|| {
        DeadlineLayer::new(BUDGET)
            .with_name("shadow")
            .with_mode(Mode::Shadow)
            .layer(deadline_handler(reached.clone(), deadline_work))
    });

    let sent = 140;
    let (mut exceeded, mut cut, mut shadowed) = (Vec::new(), Vec::new(), BTreeSet::new());
    for index in 0..sent {
        let work = deadline_work(index);
        let request = deadline_request(index).await;
        let start = Instant::now();
        let answer = twin.call(request).await;
        let took = start.elapsed();
        match answer {
            Ok((n, found, _)) => assert!(n == index && !found && took == work),
            Err(err) if twin_reached.all().last() == Some(&index) => {
                assert!(err.is::<DeadlineExceeded>() && took < work);
                cut.push(index);
            }
            Err(err) => {
                assert!(err.is::<DeadlineExceeded>() && took.is_zero());
                exceeded.push(index);
            }
        }

        let request = deadline_request(index).await;
        let start = Instant::now();
        let future = shadow.call(request);
        if is_shadowed(&future) {
            shadowed.insert(index);
        }
        // Whatever the twin did, the shadow's answer is the handler's, after all its work.
        let (n, found, deadline) = future.await.unwrap();
        assert_eq!(start.elapsed(), work);
        assert_eq!(n, index);
        // The would-be refusal is in the extensions exactly when it was shadowed on arrival.
        assert_eq!(found, shadowed.contains(&index));
        let deadline = deadline.expect("the handler sees its deadline");
        assert!(!found || deadline.expired());
    }
    // Shadowed on arrival: the ones the twin refused on arrival.
    same_decisions(sent, &reached, &shadowed, &exceeded);
    assert!(!cut.is_empty());
    eprintln!("the twin cut {} of {sent} inside", cut.len());
    // By reason, the shadow's counters are the twin's refusals, both kinds.
    counters.agree(
        "deadline",
        &["exceeded", "elapsed"],
        exceeded.len() + cut.len(),
    );
}

#[tokio::test(start_paused = true)]
async fn a_shadow_deadline_lets_a_slow_call_finish_with_its_own_response() {
    let counters = Counters::new();
    let slow = || {
        service_fn(|_: Request<()>| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok::<_, BoxError>("the slow answer")
        })
    };
    let make = |name, mode| {
        counters.make(|| {
            DeadlineLayer::new(Duration::from_millis(100))
                .with_name(name)
                .with_mode(mode)
                .layer(slow())
        })
    };
    let (mut twin, mut shadow) = (make("twin", Mode::Enforce), make("shadow", Mode::Shadow));

    let start = Instant::now();
    let err = twin.call(Request::new(())).await.unwrap_err();
    assert!(err.is::<DeadlineExceeded>());
    assert_eq!(start.elapsed(), Duration::from_millis(100));

    let start = Instant::now();
    let future = shadow.call(Request::new(()));
    // Not known to be shadowed until it runs out.
    assert!(!is_shadowed(&future));
    assert_eq!(future.await.unwrap(), "the slow answer");
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    counters.agree("deadline", &["exceeded", "elapsed"], 1);
}

// Without the feature there is nothing to read: the call was never answered.
#[cfg(feature = "metrics")]
#[tokio::test(start_paused = true)]
async fn a_deadline_counts_a_dropped_call_by_the_clock_in_either_mode() {
    let counters = Counters::new();
    let never = || service_fn(|_: Request<()>| pending::<Result<(), BoxError>>());
    let make = |name, mode| {
        counters.make(|| {
            DeadlineLayer::new(Duration::from_millis(100))
                .with_name(name)
                .with_mode(mode)
                .layer(never())
        })
    };
    let (mut twin, mut shadow) = (make("twin", Mode::Enforce), make("shadow", Mode::Shadow));
    // Dropped in time: admitted.
    let early = (twin.call(Request::new(())), shadow.call(Request::new(())));
    tokio::time::advance(Duration::from_millis(100)).await;
    drop(early);
    // Dropped, never polled, after its deadline: it ran out inside.
    let late = (twin.call(Request::new(())), shadow.call(Request::new(())));
    tokio::time::advance(Duration::from_millis(101)).await;
    drop(late);
    counters.agree("deadline", &["exceeded", "elapsed"], 1);
}
