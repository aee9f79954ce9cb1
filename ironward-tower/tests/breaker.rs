//! The client-side breaker: go-zero's SRE breaker behaviour through the tower layer, on tokio's
//! paused clock, and end to end against a real backend over TCP.

use crate::GLOBAL;
use crate::common;

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use http::Response;
use ironward::{SRE, SreBreaker, SreReason};
use ironward_tower::{AnyError, BreakerLayer, BreakerRefused, BreakerService, Clock, Dice};
use stats_alloc::Region;
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A draw the test sets before each call.
fn scripted_dice() -> (Dice, Arc<AtomicU64>) {
    let roll = Arc::new(AtomicU64::new(0.5f64.to_bits()));
    let read = Arc::clone(&roll);
    let dice = Dice::from_fn(move || f64::from_bits(read.load(Ordering::Relaxed)));
    (dice, roll)
}

/// A backend that fails every call at once, and counts the calls that reach it.
fn failing_backend(
    reached: &Arc<AtomicUsize>,
) -> impl Service<(), Response = (), Error = BoxError, Future: Send> + Clone {
    let reached = Arc::clone(reached);
    service_fn(move |()| {
        reached.fetch_add(1, Ordering::Relaxed);
        async { Err::<(), BoxError>("backend down".into()) }
    })
}

#[tokio::test(start_paused = true)]
async fn follows_the_go_zero_virtual_clock_sequence_through_the_layer() {
    // The virtual-clock sequence of go-zero's core/breaker/googlebreaker_test.go: a hundred
    // failures, a pass at 0.99, refusals, then the probe strictly after one second.
    let (dice, roll) = scripted_dice();
    let reached = Arc::new(AtomicUsize::new(0));
    let mut client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(dice)
        .layer(failing_backend(&reached));
    let mut call = async |at: f64| {
        roll.store(at.to_bits(), Ordering::Relaxed);
        client.ready().await.expect("ready").call(()).await
    };
    let refused =
        |result: Result<(), BoxError>| result.expect_err("all fail").is::<BreakerRefused>();

    for _ in 0..100 {
        assert!(!refused(call(0.99).await));
    }
    tokio::time::advance(ms(100)).await;
    assert!(
        !refused(call(0.99).await),
        "t=100: 0.99 is over the drop of 0.9405"
    );
    tokio::time::advance(ms(100)).await;
    assert!(refused(call(0.0).await), "t=200: refused");
    tokio::time::advance(ms(900)).await;
    assert!(
        refused(call(0.0).await),
        "t=1100: exactly the probe since the last pass"
    );
    tokio::time::advance(Duration::from_nanos(1)).await;
    assert!(!refused(call(0.0).await), "t=1100 ms + 1 ns: the probe");
    assert_eq!(
        reached.load(Ordering::Relaxed),
        102,
        "refusals never reach the backend"
    );
    tokio::time::advance(ms(10_000 - 1_100)).await;
    assert!(
        !refused(call(0.0).await),
        "t=10 s: the failures have left the window"
    );
    assert_eq!(reached.load(Ordering::Relaxed), 103);
}

#[tokio::test(start_paused = true)]
async fn a_refusal_is_a_breaker_refused_and_an_admitted_error_comes_back_as_it_was() {
    let mut client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(Dice::from_fn(|| 0.0))
        .layer(service_fn(|()| async {
            Err::<(), _>(std::io::Error::other("connection reset"))
        }));
    let first = client.ready().await.unwrap().call(()).await.unwrap_err();
    let io = first
        .downcast_ref::<std::io::Error>()
        .expect("the inner error");
    assert_eq!(io.to_string(), "connection reset");
    for _ in 0..10 {
        let _ = client.ready().await.unwrap().call(()).await;
    }
    let refused = client.ready().await.unwrap().call(()).await.unwrap_err();
    assert!(refused.is::<BreakerRefused>());
    assert!(
        refused.source().is_none(),
        "the reason is in the line, not a source"
    );
}

#[tokio::test]
async fn a_refusal_carries_the_numbers_the_core_decided_by() {
    // The first of go-zero googlebreaker_test.go's history cases, which the core's tests
    // work out: a window of 100 failures drops (100 − 5) / 101 of calls, so a roll of 0 is
    // refused. The layer's refusal holds what a core breaker given the same calls answers.
    let (dice, roll) = scripted_dice();
    let reached = Arc::new(AtomicUsize::new(0));
    let mut client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_clock(Clock::from_fn(|| Duration::ZERO))
        .with_dice(dice)
        .layer(failing_backend(&reached));
    roll.store(0.99f64.to_bits(), Ordering::Relaxed);
    for _ in 0..100 {
        let err = client.ready().await.unwrap().call(()).await.unwrap_err();
        assert!(!err.is::<BreakerRefused>());
    }
    roll.store(0.0f64.to_bits(), Ordering::Relaxed);
    let err: BoxError = client.ready().await.unwrap().call(()).await.unwrap_err();
    assert!(err.is::<BreakerRefused>());
    let reason = err.downcast_ref::<BreakerRefused>().unwrap().reason();
    assert_eq!(reason.drop, 0.9405940594059405);
    assert_eq!((reason.total, reason.accepts), (100, 0));
    assert_eq!((reason.failing, reason.working), (1, 0));
    assert_eq!(reason.roll, 0.0);

    let mut core = SreBreaker::new(SRE, Duration::ZERO);
    for _ in 0..100 {
        let permit = core.allow(Duration::ZERO, 0.99).expect("admitted");
        core.fail(permit, Duration::ZERO);
    }
    let expected: SreReason = core.check(Duration::ZERO, 0.0).unwrap_err();
    assert_eq!(*reason, expected);

    let line = err.to_string();
    assert_eq!(
        line,
        "circuit breaker refused the call: breaker dropped 94.1% of calls (roll 0.00): \
         0 accepts in 100 calls, failing 1 bucket, working 0"
    );
    assert!(!line.contains('\n') && !line.ends_with('.'));
    assert_eq!(line, line.to_lowercase());
    assert_eq!(reached.load(Ordering::Relaxed), 100);
}

#[tokio::test(start_paused = true)]
async fn two_clones_see_one_breaker() {
    // Clones are how a server or a client pool shares a service; they must share the record
    // (tower's own RateLimit keeps its window in each clone, so a cloned service limits each
    // clone apart). So must every service one layer makes, and every clone of the layer.
    let (dice, roll) = scripted_dice();
    let reached = Arc::new(AtomicUsize::new(0));
    let layer = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(dice);
    let first: BreakerService<_, AnyError> = layer.layer(failing_backend(&reached));
    let second = first.clone();
    let third = layer.clone().layer(failing_backend(&reached));
    roll.store(0.99f64.to_bits(), Ordering::Relaxed);
    for _ in 0..100 {
        let err = first.clone().oneshot(()).await.unwrap_err();
        assert!(!err.is::<BreakerRefused>());
    }
    assert_eq!(reached.load(Ordering::Relaxed), 100);
    assert!(second.ratio() > 0.9);
    assert_eq!(second.ratio(), first.ratio());
    assert_eq!(third.ratio(), first.ratio());
    assert_eq!(layer.ratio(), first.ratio());
    // One clone's failures refuse the others' calls.
    roll.store(0.0f64.to_bits(), Ordering::Relaxed);
    for _ in 0..100 {
        let err = second.clone().oneshot(()).await.unwrap_err();
        assert!(err.is::<BreakerRefused>());
        let err = third.clone().oneshot(()).await.unwrap_err();
        assert!(err.is::<BreakerRefused>());
    }
    assert_eq!(reached.load(Ordering::Relaxed), 100);
    // A layer configured anew is a breaker of its own.
    let fresh = layer.with_dice(Dice::from_fn(|| 0.0));
    assert_eq!(fresh.ratio(), 0.0);
}

#[tokio::test(start_paused = true)]
async fn a_permit_is_settled_when_the_call_completes_on_the_layers_clock() {
    // go-zero settles a promise when the call returns; a call that takes 9 s is recorded 9 s
    // after it started, and stays in the 10 s window until 19 s.
    let client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_clock(Clock::monotonic())
        .with_dice(Dice::seeded(1))
        .layer(service_fn(|()| async {
            tokio::time::sleep(Duration::from_secs(9)).await;
            Err::<(), BoxError>("too slow".into())
        }));
    let calls: Vec<_> = (0..10)
        .map(|_| tokio::spawn(client.clone().oneshot(())))
        .collect();
    tokio::time::sleep(ms(8_000)).await;
    assert_eq!(
        client.ratio(),
        0.0,
        "nothing is recorded while the calls run"
    );
    for call in calls {
        assert!(call.await.expect("task").is_err());
    }
    // Ten failures: (10 − 5) / 11, go-zero googlebreaker.go's
    // (total − protection − k·accepts) / (total + 1).
    assert_eq!(client.ratio(), 5.0 / 11.0);
    tokio::time::sleep(ms(15_000 - 9_000)).await;
    assert_eq!(
        client.ratio(),
        5.0 / 11.0,
        "t=15 s: recorded at 9 s, still in the window"
    );
    tokio::time::sleep(ms(4_500)).await;
    assert_eq!(client.ratio(), 0.0, "t=19.5 s: gone with its bucket");
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_leaves_its_permit_unsettled() {
    // ironward::SrePermit: dropping a permit unsettled leaves the call out of the record.
    let slow = service_fn(|fail: bool| async move {
        tokio::time::sleep(ms(100)).await;
        if fail {
            Err("failed".into())
        } else {
            Ok::<(), BoxError>(())
        }
    });
    let mut client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(Dice::seeded(2))
        .layer(slow);
    for _ in 0..20 {
        let call = client.ready().await.unwrap().call(true);
        // Polled once, then abandoned, as a timeout outside the breaker would.
        assert!(tokio::time::timeout(ms(10), call).await.is_err());
    }
    assert_eq!(client.ratio(), 0.0);
    for _ in 0..20 {
        let _ = client.ready().await.unwrap().call(true).await;
    }
    // Only the twenty completed failures count: (20 − 5) / 21.
    assert_eq!(client.ratio(), 15.0 / 21.0);
}

#[tokio::test(start_paused = true)]
async fn http_failures_count_5xx_against_the_backend_and_not_4xx() {
    // go-zero rest/handler/breakerhandler.go: a status under 500 is accepted.
    let answer =
        service_fn(|status: u16| async move { Response::builder().status(status).body(()) });
    let client: BreakerService<_> = BreakerLayer::new(SRE)
        .with_dice(Dice::seeded(3))
        .layer(answer);
    for _ in 0..50 {
        let response = client.clone().oneshot(404).await.expect("a response");
        assert_eq!(response.status(), 404);
    }
    assert_eq!(client.ratio(), 0.0);
    for _ in 0..50 {
        let _ = client.clone().oneshot(503).await;
    }
    assert!(client.ratio() > 0.0);
}

#[test]
fn refusing_allocates_only_the_box_of_its_error() {
    // The decision takes no allocation and the reason is carried by value, so a refusal's
    // one allocation is the `Box` that makes it a `BoxError`.
    // Other tests in this binary allocate on their own threads at any moment, so a window
    // around one refusal is measured many times: they can only add to a window's count, so
    // the fewest any window saw is what the refusal itself allocates.
    let reached = Arc::new(AtomicUsize::new(0));
    let mut client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_clock(Clock::from_fn(|| Duration::from_secs(1)))
        .with_dice(Dice::from_fn(|| 0.0))
        .layer(failing_backend(&reached));
    let mut cx = Context::from_waker(Waker::noop());
    let mut once = |client: &mut BreakerService<_, AnyError>| {
        assert!(client.poll_ready(&mut cx).is_ready());
        let call = pin!(client.call(()));
        match call.poll(&mut cx) {
            Poll::Ready(Err(err)) => err.is::<BreakerRefused>(),
            _ => false,
        }
    };
    for _ in 0..20 {
        once(&mut client);
    }
    assert!(once(&mut client), "the breaker refuses by now");
    let mut fewest = usize::MAX;
    for _ in 0..2_000 {
        let region = Region::new(GLOBAL);
        let refused = once(&mut client);
        let allocations = region.change().allocations;
        assert!(refused);
        fewest = fewest.min(allocations);
    }
    assert_eq!(fewest, 1, "a refusal allocates its box and nothing else");
}

/// What the backend of the end-to-end test does and has seen.
#[derive(Clone, Default)]
struct Backend {
    healthy: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
}

async fn backend(State(backend): State<Backend>) -> StatusCode {
    backend.hits.fetch_add(1, Ordering::Relaxed);
    if backend.healthy.load(Ordering::Relaxed) {
        StatusCode::OK
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_breaker_refuses_a_failing_backend_and_lets_traffic_back_as_it_recovers() {
    // Google SRE client-side throttling as go-zero's zrpc client breaker applies it: a backend
    // failing every call sees most calls refused at the client within a second, and traffic
    // returns as it recovers, through the recovery scaling and the probe.
    let state = Backend::default();
    let server = common::Server::start(
        Router::new()
            .route("/", get(backend))
            .with_state(state.clone()),
    )
    .await;
    let http = common::client();
    let url = server.url("/");
    let call = service_fn(move |()| {
        let request = http.get(&url);
        async move { Ok::<_, reqwest::Error>(Response::from(request.send().await?)) }
    });
    let client: BreakerService<_> = BreakerLayer::new(SRE)
        .with_dice(Dice::seeded(4))
        .layer(call);

    // One second against a backend that fails every call.
    let (mut attempts, mut refused, mut admitted) = (0usize, 0usize, 0usize);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        attempts += 1;
        match client.clone().oneshot(()).await {
            Err(err) if err.is::<BreakerRefused>() => refused += 1,
            Ok(response) => {
                assert_eq!(response.status(), 500);
                admitted += 1;
            }
            Err(err) => panic!("transport error: {err}"),
        }
        tokio::time::sleep(ms(1)).await;
    }
    let hits = state.hits.load(Ordering::Relaxed);
    eprintln!(
        "failing: {attempts} calls in 1 s, {refused} refused, {admitted} reached the backend \
         (ratio {:.3})",
        client.ratio()
    );
    assert_eq!(hits, admitted, "refused calls never reach the backend");
    assert!(attempts >= 20, "only {attempts} calls in a second");
    assert!(refused * 2 > attempts, "refused {refused} of {attempts}");
    assert!(client.ratio() > 0.5);

    // The backend recovers. Traffic comes back by degrees (the successes outweigh the window's
    // failures and drops, and the run of working buckets scales the drop down): count, second
    // by second, the share of calls let through, until a whole second lets 80 % through.
    state.healthy.store(true, Ordering::Relaxed);
    let start = Instant::now();
    let mut seconds: Vec<(usize, usize)> = vec![(0, 0)];
    loop {
        let elapsed = start.elapsed();
        assert!(
            elapsed < Duration::from_secs(30),
            "not recovered: (calls, let through) each second {seconds:?}"
        );
        if elapsed.as_secs() as usize >= seconds.len() {
            let (calls, through) = *seconds.last().expect("a second");
            if through * 5 >= calls * 4 {
                break;
            }
            seconds.push((0, 0));
        }
        let second = seconds.last_mut().expect("a second");
        second.0 += 1;
        match client.clone().oneshot(()).await {
            Err(err) if err.is::<BreakerRefused>() => {}
            Ok(response) => {
                assert_eq!(response.status(), 200);
                admitted += 1;
                second.1 += 1;
            }
            Err(err) => panic!("transport error: {err}"),
        }
        tokio::time::sleep(ms(1)).await;
    }
    eprintln!("recovering: (calls, let through) each second {seconds:?}");
    assert_eq!(
        state.hits.load(Ordering::Relaxed),
        admitted,
        "refused calls never reach it"
    );
}

// ---------------------------------------------------------------------------------------
// Another breaker family through the same layer
// ---------------------------------------------------------------------------------------

/// A breaker family of the test's own: it opens for good after `after` failures, and says
/// how many it saw. It stands for any family the core may gain, so that these tests check
/// the layer asks the trait, not the SRE breaker.
#[derive(Debug)]
struct Latch {
    after: u32,
    failures: u32,
    foreign: u64,
}

#[derive(Debug, Clone, PartialEq)]
struct Latched {
    failures: u32,
}

impl std::fmt::Display for Latched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "latched open after {} failures", self.failures)
    }
}

impl ironward::CircuitBreaker for Latch {
    type Policy = u32;
    type Permit = ();
    type Reason = Latched;

    const REFUSALS: &'static [&'static str] = &["latched"];

    fn new(after: u32, _: Duration) -> Self {
        Self {
            after,
            failures: 0,
            foreign: 0,
        }
    }

    fn check(&mut self, _: Duration, _: f64) -> Result<(), Latched> {
        if self.failures >= self.after {
            Err(Latched {
                failures: self.failures,
            })
        } else {
            Ok(())
        }
    }

    fn pass(&mut self, (): (), _: Duration) -> Option<()> {
        None
    }

    fn fail(&mut self, (): (), _: Duration) -> Option<()> {
        self.failures += 1;
        None
    }

    fn record(&mut self, _: ironward::Outcome, _: Duration) {}

    fn owns(&self, (): &()) -> bool {
        true
    }

    fn foreign(&self) -> u64 {
        self.foreign
    }

    fn ratio(&self, _: Duration) -> f64 {
        if self.failures >= self.after {
            1.0
        } else {
            0.0
        }
    }

    fn policy(&self) -> &u32 {
        &self.after
    }

    fn retune(&mut self, after: u32, _: Duration) {
        self.after = after;
    }

    fn refusal(_: &Latched) -> usize {
        0
    }

    fn ratio_of(_: &Latched) -> f64 {
        1.0
    }
}

// The layer runs a family it knows nothing of: its refusal is that family's, typed, and the
// layer's tuner retunes it with that family's policy.
#[tokio::test(start_paused = true)]
async fn the_layer_runs_any_breaker_family_and_refuses_with_its_reason() {
    let reached = Arc::new(AtomicUsize::new(0));
    let backend = failing_backend(&reached);
    let layer = BreakerLayer::for_breaker::<std::sync::Mutex<Latch>>(3).with_classifier(AnyError);
    let client = layer.layer(backend);
    for _ in 0..3 {
        let err = client.clone().oneshot(()).await.unwrap_err();
        assert!(!err.is::<BreakerRefused<Latched>>(), "{err}");
    }
    let err = client.clone().oneshot(()).await.unwrap_err();
    let refused = err
        .downcast_ref::<BreakerRefused<Latched>>()
        .expect("the family's refusal");
    assert_eq!(refused.reason(), &Latched { failures: 3 });
    assert_eq!(
        err.to_string(),
        "circuit breaker refused the call: latched open after 3 failures"
    );
    assert!(!err.is::<BreakerRefused>(), "not the SRE breaker's refusal");
    assert_eq!(reached.load(Ordering::Relaxed), 3);
    assert_eq!(layer.ratio(), 1.0);

    // Retuned to open after five, with its three failures kept: two more calls go through.
    let tuner = layer.tuner();
    assert_eq!(tuner.retune(5), 3);
    assert_eq!(tuner.policy(), 5);
    for _ in 0..2 {
        let err = client.clone().oneshot(()).await.unwrap_err();
        assert!(!err.is::<BreakerRefused<Latched>>());
    }
    assert!(
        client
            .clone()
            .oneshot(())
            .await
            .unwrap_err()
            .is::<BreakerRefused<Latched>>()
    );
    assert_eq!(reached.load(Ordering::Relaxed), 5);
}

// The SRE breaker behind a plain lock decides call for call as the lock-free `SharedSreBreaker`
// the layer runs by default: the layer adds nothing of its own to either.
#[tokio::test(start_paused = true)]
async fn the_sre_breaker_behind_a_lock_decides_as_the_default_layer() {
    async fn run<B>(layer: BreakerLayer<AnyError, B>) -> Vec<bool>
    where
        B: ironward_tokio::SharedCircuitBreaker<Reason = SreReason>,
    {
        let reached = Arc::new(AtomicUsize::new(0));
        let client = layer.layer(failing_backend(&reached));
        let mut refused = Vec::new();
        for _ in 0..300 {
            let err = client.clone().oneshot(()).await.unwrap_err();
            refused.push(err.is::<BreakerRefused>());
            tokio::time::advance(ms(7)).await;
        }
        refused
    }
    let locked = BreakerLayer::for_breaker::<std::sync::Mutex<SreBreaker>>(SRE)
        .with_classifier(AnyError)
        .with_dice(Dice::seeded(11));
    let fast = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(Dice::seeded(11));
    let (locked, fast) = (run(locked).await, run(fast).await);
    assert!(fast.iter().filter(|&&r| r).count() > 150);
    assert_eq!(locked, fast);
}

// The classic breaker by its policy value alone; its refusal while open carries the time
// until half-open, which the response sends as `Retry-After`.
#[tokio::test(start_paused = true)]
async fn the_layer_runs_the_core_classic_breaker_open_then_half_open() {
    use ironward::classic::{OpenWait, Record, State};
    use ironward::{CLASSIC, Classic, ClassicReason};
    use ironward_tower::http::{Format, response_for};

    let reached = Arc::new(AtomicUsize::new(0));
    let policy = Classic {
        record: Record::Count { calls: 3 },
        minimum: 3,
        open: OpenWait::Fixed(Duration::from_secs(1)),
        probes: 1,
        ..CLASSIC
    };
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let layer = BreakerLayer::new(policy)
        .with_classifier(AnyError)
        .with_clock(clock);
    let client = layer.layer(failing_backend(&reached));
    for _ in 0..3 {
        let err = client.clone().oneshot(()).await.unwrap_err();
        assert!(!err.is::<BreakerRefused<ClassicReason>>(), "{err}");
    }
    // Open: refused without reaching the backend, with the time until half-open.
    let err = client.clone().oneshot(()).await.unwrap_err();
    let refused = err
        .downcast_ref::<BreakerRefused<ClassicReason>>()
        .expect("the classic breaker's refusal");
    assert_eq!(refused.reason().state, State::Open);
    assert_eq!(refused.reason().next, Duration::from_secs(1));
    assert_eq!(refused.retry_after(), Some(Duration::from_secs(1)));
    assert_eq!((reached.load(Ordering::Relaxed), layer.ratio()), (3, 1.0));
    hand.advance(ms(400));
    let err = client.clone().oneshot(()).await.unwrap_err();
    let wait = err.downcast_ref::<BreakerRefused<ClassicReason>>().unwrap();
    assert_eq!(wait.retry_after(), Some(ms(600)));
    let response = response_for::<String>(&err, Format::Text).unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1", "0.6 s rounds up");
    hand.advance(ms(600));
    // A second on, one probe goes through; it fails, and the breaker opens again.
    let err = client.clone().oneshot(()).await.unwrap_err();
    assert!(
        !err.is::<BreakerRefused<ClassicReason>>(),
        "the probe: {err}"
    );
    assert_eq!(reached.load(Ordering::Relaxed), 4);
    let err = client.clone().oneshot(()).await.unwrap_err();
    assert!(
        err.is::<BreakerRefused<ClassicReason>>(),
        "open again: {err}"
    );
    assert_eq!(reached.load(Ordering::Relaxed), 4);
}

// The SRE breaker's refusal knows no wait: a 503 without `Retry-After`.
#[tokio::test(start_paused = true)]
async fn the_sre_breakers_refusal_sends_no_retry_after() {
    use ironward_tower::http::{Format, response_for};

    let reached = Arc::new(AtomicUsize::new(0));
    let client = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(Dice::from_fn(|| 0.0))
        .layer(failing_backend(&reached));
    let mut refusal = None;
    for _ in 0..20 {
        let err = client.clone().oneshot(()).await.unwrap_err();
        if err.is::<BreakerRefused>() {
            refusal = Some(err);
            break;
        }
    }
    let err = refusal.expect("refused within 20 failures");
    assert_eq!(
        err.downcast_ref::<BreakerRefused>().unwrap().retry_after(),
        None
    );
    let response = response_for::<String>(&err, Format::Problem).unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.headers().get("retry-after").is_none());
}
