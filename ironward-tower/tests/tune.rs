//! Live retuning through the tower layers: a tuner changes the policy of the one core value a
//! layer's services share, on their next request, and the core keeps its history. Time is a
//! `Clock::manual` or tokio's paused clock; the core types, fed the same readings, are the
//! reference the layers are held to.

use std::future::{Future, pending};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use http::{HeaderName, Request, Response};
use ironward::{SHED, SRE, Shed, Sre, SreBreaker};
use ironward_tower::{
    AnyError, BreakerLayer, Clock, Cpu, Dice, GateFull, GateLayer, GateService, KindMismatch,
    Limited, Quota, QuotaLayer, QuotaTuner, ShedLayer, ShedRefused, Tuner,
};
use tower::{BoxError, Layer, Service, ServiceExt, service_fn};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Polls a future once: whether it finished, and with what.
fn poll_once<F: Future>(future: F) -> Option<F::Output> {
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

// ---------------------------------------------------------------------------------------
// SreBreaker
// ---------------------------------------------------------------------------------------

/// A backend that answers `true` and fails `false`.
fn backend() -> impl Service<bool, Response = (), Error = BoxError, Future: Send> + Clone {
    service_fn(|ok: bool| async move {
        if ok {
            Ok(())
        } else {
            Err::<(), BoxError>("backend down".into())
        }
    })
}

/// A draw the test sets before each call.
fn scripted_dice() -> (Dice, Arc<AtomicU64>) {
    let roll = Arc::new(AtomicU64::new(0.5f64.to_bits()));
    let read = Arc::clone(&roll);
    let dice = Dice::from_fn(move || f64::from_bits(read.load(Ordering::Relaxed)));
    (dice, roll)
}

#[tokio::test]
async fn a_breaker_retuned_under_load_changes_its_ratio_on_the_next_call_and_keeps_its_window() {
    // The core's `SreBreaker`, fed the same instants, draws and outcomes, is the reference: the
    // layer must decide every call as it does, before and after both are retuned at the same
    // instant from go-zero's k = 1.5 to k = 2.
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let (dice, roll) = scripted_dice();
    let layer = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_clock(clock)
        .with_dice(dice);
    let tuner = layer.tuner();
    let client = layer.layer(backend());
    let mut model = SreBreaker::new(SRE, Duration::ZERO);
    let (mut total, mut accepts) = (0u32, 0u32);

    // One call every 5 ms, one in three succeeding, with a spread of draws.
    let step = async |i: u64, draw: f64, model: &mut SreBreaker| {
        let now = ms(5 * i);
        hand.set(now);
        roll.store(draw.to_bits(), Ordering::Relaxed);
        let ok = i.is_multiple_of(3);
        let answer = client.clone().oneshot(ok).await;
        let expected = model.allow(now, draw);
        let refused = answer
            .as_ref()
            .is_err_and(|err| err.is::<ironward_tower::BreakerRefused>());
        assert_eq!(refused, expected.is_none(), "call {i} at {now:?}");
        if let Some(permit) = expected {
            if ok {
                model.pass(permit, now);
            } else {
                model.fail(permit, now);
            }
        }
        assert_eq!(layer.ratio(), model.ratio(now), "call {i}");
        (u32::from(ok && !refused), refused)
    };
    let draw = |i: u64| ((i * 7919) % 1000) as f64 / 1000.0;
    for i in 0..400 {
        let (accepted, _) = step(i, draw(i), &mut model).await;
        total += 1;
        accepts += accepted;
    }
    let now = ms(5 * 400);
    hand.set(now);
    let before = layer.ratio();
    let expected_before =
        (f64::from(total) - 5.0 - 1.5 * f64::from(accepts)) / f64::from(total + 1);
    assert!(
        (before - expected_before).abs() < 1e-12,
        "{before} against {expected_before}"
    );
    assert!(before > 0.3, "under load: {before}");

    let mut unretuned = model.clone();
    let two = Sre { k: 2.0, ..SRE };
    tuner.retune(two);
    model.retune(two, now);
    assert_eq!(tuner.policy(), two);

    // The same calls in the window, weighed with k = 2: lower, but not the 0 of a window
    // opened afresh.
    let after = layer.ratio();
    let expected_after = (f64::from(total) - 5.0 - 2.0 * f64::from(accepts)) / f64::from(total + 1);
    assert!(
        (after - expected_after).abs() < 1e-12,
        "{after} against {expected_after}"
    );
    assert!(0.0 < after && after < before, "{after} after {before}");
    assert_eq!(after, model.ratio(now));

    // The next call draws between the two ratios: refused under k = 1.5, let through now.
    let between = f64::midpoint(after, before);
    assert!(unretuned.allow(now, between).is_none());
    let (_, refused) = step(400, between, &mut model).await;
    assert!(!refused, "the next call is decided with k = 2");

    // From then on, call for call as the retuned core, until the window has let go of the
    // load: 8 s later the outcomes recorded before the retune are still in it.
    for i in 401..600 {
        step(i, draw(i), &mut model).await;
    }
    hand.set(secs(9));
    assert!(layer.ratio() > 0.0);
    assert_eq!(layer.ratio(), model.ratio(secs(9)));
    hand.set(secs(13));
    assert_eq!(layer.ratio(), 0.0);
}

#[tokio::test(start_paused = true)]
async fn every_clone_of_a_breaker_layer_and_of_its_services_runs_the_retuned_policy() {
    let layer = BreakerLayer::new(SRE)
        .with_classifier(AnyError)
        .with_dice(Dice::from_fn(|| 0.0));
    let twin = layer.clone();
    let first = layer.layer(backend());
    let second = twin.layer(backend());
    let tuner = twin.tuner().clone();

    // 60 accepts, then failures until k = 1.5 refuses: every service and clone refuses.
    for ok in [true; 60].into_iter().chain([false; 40]) {
        let _ = first.clone().oneshot(ok).await;
    }
    for client in [first.clone(), second.clone()] {
        let err = client.oneshot(true).await.unwrap_err();
        assert!(err.is::<ironward_tower::BreakerRefused>());
    }

    tuner.retune(Sre { k: 2.0, ..SRE });
    for client in [first.clone(), second.clone(), layer.layer(backend())] {
        assert!(client.oneshot(true).await.is_ok());
    }
    assert_eq!((layer.ratio(), twin.ratio()), (0.0, 0.0));
    assert_eq!(layer.tuner().policy().k, 2.0);

    // A builder starts a new breaker under the policy in force, which the old tuner leaves.
    let rebuilt = layer.with_dice(Dice::from_fn(|| 0.0));
    assert_eq!(rebuilt.tuner().policy().k, 2.0);
    tuner.retune(SRE);
    assert_eq!(
        (rebuilt.tuner().policy().k, twin.tuner().policy().k),
        (2.0, 1.5)
    );
}

// ---------------------------------------------------------------------------------------
// Shedder
// ---------------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_shed_layer_retuned_keeps_its_requests_in_flight_and_decides_the_next_by_the_new_policy()
{
    let hangs = service_fn(|_request: ()| pending::<Result<Response<()>, BoxError>>());
    let layer = ShedLayer::new(SHED, Cpu::fixed(950));
    let mut server = layer.layer(hangs);
    let clone = server.clone();
    let tuner = layer.clone().tuner();

    // Hot at 950 ‰ and full: nothing has finished, so the server is assumed to carry ten,
    // halved at 950 ‰, and twenty are in flight.
    let mut held = Vec::new();
    for _ in 0..40 {
        held.push(server.ready().await.unwrap().call(()));
    }
    held.truncate(20);
    let shed = |answer: Option<Result<Response<()>, BoxError>>| match answer {
        Some(Err(err)) => err.is::<ShedRefused>(),
        _ => false,
    };
    assert!(shed(poll_once(clone.clone().oneshot(()))));

    // Overloaded only at 1000 ‰ and never still hot: the next request is admitted, by the
    // clone as by the original, and the twenty in flight are still counted.
    let lenient = Shed {
        cpu: 1000,
        cool: Duration::ZERO,
        ..SHED
    };
    tuner.retune(lenient);
    assert_eq!(tuner.policy(), lenient);
    assert_eq!(layer.flying(), 20);
    held.push(clone.clone().ready().await.unwrap().call(()));
    held.push(server.ready().await.unwrap().call(()));
    assert_eq!(layer.flying(), 22);

    // Back to the preset: the same load is shed again at once, with nothing relearnt.
    tuner.retune(SHED);
    assert!(shed(poll_once(server.ready().await.unwrap().call(()))));
    drop(held);
    assert_eq!(clone.flying(), 0);
}

// ---------------------------------------------------------------------------------------
// Gate
// ---------------------------------------------------------------------------------------

/// Whether `service` refuses a request made now because its gate is full.
fn full<S: Service<(), Error = BoxError>>(service: &mut GateService<S>) -> bool {
    match poll_once(service.call(())) {
        Some(Err(err)) => err.is::<GateFull>(),
        _ => false,
    }
}

#[tokio::test]
async fn a_gate_lowered_below_the_calls_inside_admits_nobody_until_enough_leave() {
    let layer = GateLayer::new(5);
    let stuck = service_fn(|()| pending::<Result<(), BoxError>>());
    let mut a = layer.layer(stuck);
    let mut b = a.clone();
    let mut c = layer.clone().layer(stuck);
    let tuner = layer.tuner();

    let mut inside: Vec<_> = (0..5).map(|_| a.call(())).collect();
    tuner.retune(2);
    assert_eq!((layer.limit(), b.limit(), layer.held()), (2, 2, 5));
    // Five inside, room for two: three must leave before anyone gets in.
    for leaving in 0..3 {
        assert!(
            full(&mut a) && full(&mut b) && full(&mut c),
            "{leaving} left"
        );
        inside.pop();
    }
    assert_eq!(layer.held(), 2);
    assert!(full(&mut c));
    inside.pop();
    inside.push(c.call(()));
    assert!(full(&mut b));

    // Raised, there is room at once, for every clone.
    tuner.retune(4);
    inside.push(a.call(()));
    inside.push(b.call(()));
    assert_eq!(layer.held(), 4);
    assert!(full(&mut c));
    drop(inside);
    assert_eq!(c.held(), 0);
}

// ---------------------------------------------------------------------------------------
// Rate limits
// ---------------------------------------------------------------------------------------

fn ok() -> impl Service<Request<()>, Response = Response<()>, Error = BoxError> + Clone {
    service_fn(|_: Request<()>| async { Ok(Response::new(())) })
}

/// Whether `service` admits a request now; a refusal must be a `Limited`, which is returned.
async fn call<S>(service: &mut S, request: Request<()>) -> Result<(), Limited>
where
    S: Service<Request<()>, Error = BoxError>,
{
    match service.ready().await.unwrap().call(request).await {
        Ok(_) => Ok(()),
        Err(err) => Err(*err.downcast_ref::<Limited>().expect("a refusal")),
    }
}

async fn admitted<S>(service: &mut S) -> bool
where
    S: Service<Request<()>, Error = BoxError>,
{
    call(service, Request::new(())).await.is_ok()
}

/// How many of `n` requests made now `service` admits.
async fn admits<S>(service: &mut S, n: usize) -> usize
where
    S: Service<Request<()>, Error = BoxError>,
{
    let mut count = 0;
    for _ in 0..n {
        count += usize::from(admitted(service).await);
    }
    count
}

#[tokio::test]
async fn a_lowered_sliding_window_admits_no_more_than_the_new_quota_in_any_window() {
    // A naive model: the stamps admitted, and the count inside any 60 s ending at a stamp.
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let layer = QuotaLayer::new(Quota::sliding(10, secs(60))).with_clock(clock);
    let mut service = layer.layer(ok());
    let mut stamps = Vec::new();
    for t in 0..4 {
        hand.set(secs(t));
        assert!(admitted(&mut service).await);
        stamps.push(secs(t));
    }
    layer.tuner().retune(Quota::sliding(6, secs(60))).unwrap();
    // Every second for three minutes, five requests: never more than six in a window.
    for t in 4..180 {
        hand.set(secs(t));
        for _ in 0..5 {
            match call(&mut service, Request::new(())).await {
                Ok(_) => stamps.push(secs(t)),
                Err(limited) => {
                    assert_eq!((limited.quota(), limited.window()), (6, Some(secs(60))));
                    assert!(limited.retry_after() <= secs(60));
                }
            }
        }
    }
    for (i, &at) in stamps.iter().enumerate() {
        let inside = stamps[..=i].iter().filter(|&&s| at - s < secs(60)).count();
        assert!(inside <= 6, "{inside} in the window ending at {at:?}");
    }
    // Two more at once after the retune, then six a minute, each as a stamp leaves the
    // window (at 60, 61, 62, 63 the first four, at 64 the two taken at 4 s, and so on).
    assert_eq!(stamps.iter().filter(|&&s| s < secs(60)).count(), 6);
    assert_eq!(stamps.len(), 6 + 6 + 6);
}

#[tokio::test(start_paused = true)]
async fn a_lowered_bucket_or_period_admits_no_more_than_the_new_quota() {
    // A full bucket of 10 retuned to a burst of 2 keeps 2 tokens, and refills at 1 a second.
    let layer = QuotaLayer::new(Quota::bucket(10.0, 10.0));
    let mut service = layer.layer(ok());
    assert_eq!(admits(&mut service, 3).await, 3);
    layer.tuner().retune(Quota::bucket(1.0, 2.0)).unwrap();
    assert_eq!(admits(&mut service, 5).await, 2);
    tokio::time::advance(ms(999)).await;
    assert!(!admitted(&mut service).await);
    tokio::time::advance(ms(1)).await;
    assert_eq!(admits(&mut service, 5).await, 1);

    // A period of 10 with 4 taken, lowered to 5: one more in the period that is open.
    let layer = QuotaLayer::new(Quota::period(10, secs(60)));
    let mut service = layer.layer(ok());
    assert_eq!(admits(&mut service, 4).await, 4);
    tokio::time::advance(secs(20)).await;
    layer.tuner().retune(Quota::period(5, secs(60))).unwrap();
    assert_eq!(admits(&mut service, 5).await, 1);
    let refused = call(&mut service, Request::new(())).await.unwrap_err();
    assert_eq!((refused.quota(), refused.retry_after()), (5, secs(40)));
    tokio::time::advance(secs(40)).await;
    assert_eq!(admits(&mut service, 10).await, 5);
}

#[tokio::test(start_paused = true)]
async fn a_raised_limit_admits_what_the_new_policy_allows() {
    // A period: the count stands, the quota grows. The refused third request is counted
    // too, as go-zero's `INCRBY` counts it, so two of the five are left.
    let layer = QuotaLayer::new(Quota::period(2, secs(60)));
    let mut service = layer.layer(ok());
    assert_eq!(admits(&mut service, 3).await, 2);
    layer.tuner().retune(Quota::period(5, secs(60))).unwrap();
    assert_eq!(admits(&mut service, 5).await, 2);

    // A sliding window: the stamps stand, the quota grows.
    let layer = QuotaLayer::new(Quota::sliding(2, secs(60)));
    let mut service = layer.layer(ok());
    assert_eq!(admits(&mut service, 3).await, 2);
    layer.tuner().retune(Quota::sliding(5, secs(60))).unwrap();
    assert_eq!(admits(&mut service, 5).await, 3);

    // A bucket: empty, it refills at the new rate up to the new burst, not to a full one.
    let layer = QuotaLayer::new(Quota::bucket(1.0, 1.0));
    let mut service = layer.layer(ok());
    assert_eq!(admits(&mut service, 2).await, 1);
    layer.tuner().retune(Quota::bucket(10.0, 5.0)).unwrap();
    let refused = call(&mut service, Request::new(())).await.unwrap_err();
    assert_eq!((refused.quota(), refused.retry_after()), (5, ms(100)));
    tokio::time::advance(secs(2)).await;
    assert_eq!(admits(&mut service, 10).await, 5);
}

#[tokio::test(start_paused = true)]
async fn a_keyed_limit_retunes_the_keys_it_holds_and_the_keys_to_come() {
    let key = HeaderName::from_static("x-key");
    let layer = QuotaLayer::by_header(Quota::sliding(2, secs(60)), 100, key);
    let service = &mut layer.layer(ok());
    let from = |client: &str| Request::get("/").header("x-key", client).body(()).unwrap();

    assert_eq!(from_key(service, Some("alice"), 3).await, 2);
    assert_eq!(from_key(service, Some("bob"), 1).await, 1);
    assert_eq!(from_key(service, None, 1).await, 1);
    assert_eq!(layer.keys(), 2);

    // Raised: each key keeps what it took; a new key gets the new quota.
    layer.tuner().retune(Quota::sliding(3, secs(60))).unwrap();
    assert_eq!(from_key(service, Some("alice"), 3).await, 1);
    assert_eq!(from_key(service, Some("bob"), 3).await, 2);
    assert_eq!(from_key(service, None, 3).await, 2);
    assert_eq!(from_key(service, Some("carol"), 4).await, 3);

    // Lowered to one: every key held is full, and a new key gets one.
    layer.tuner().retune(Quota::sliding(1, secs(60))).unwrap();
    for client in [Some("alice"), Some("bob"), Some("carol"), None] {
        assert_eq!(from_key(service, client, 1).await, 0, "{client:?}");
    }
    assert_eq!(from_key(service, Some("dave"), 2).await, 1);
    let refused = call(service, from("dave")).await.unwrap_err();
    assert_eq!((refused.quota(), refused.window()), (1, Some(secs(60))));
    assert_eq!(
        (layer.limit(), layer.keys()),
        (Quota::sliding(1, secs(60)), 4)
    );

    // The keys held leave as their stamps do: one window after each one's newest.
    tokio::time::advance(secs(60)).await;
    assert_eq!(from_key(service, Some("alice"), 2).await, 1);
}

/// How many of `n` requests made now from `client` (its `x-key`; none for `None`) `service`
/// admits.
async fn from_key<S>(service: &mut S, client: Option<&str>, n: usize) -> usize
where
    S: Service<Request<()>, Error = BoxError>,
{
    let mut count = 0;
    for _ in 0..n {
        let request = match client {
            Some(client) => Request::get("/").header("x-key", client).body(()).unwrap(),
            None => Request::new(()),
        };
        count += usize::from(call(service, request).await.is_ok());
    }
    count
}

#[tokio::test(start_paused = true)]
async fn a_limit_of_another_kind_is_refused_and_changes_nothing() {
    let layer = QuotaLayer::new(Quota::bucket(1.0, 2.0));
    let mut service = layer.layer(ok());
    assert!(admitted(&mut service).await);
    let tuner = layer.tuner();
    let window = Quota::sliding(100, secs(1));
    assert_eq!(
        tuner.retune(window),
        Err(KindMismatch::new(Quota::bucket(1.0, 2.0), window))
    );
    assert_eq!(tuner.limit(), Quota::bucket(1.0, 2.0));
    // The bucket still holds the one token it had left.
    assert_eq!(admits(&mut service, 3).await, 1);

    // A period keeps its alignment: fixed and aligned periods are two kinds.
    let key = HeaderName::from_static("x-key");
    let keyed = QuotaLayer::by_header(Quota::period(1, secs(10)), 10, key);
    let mut service = keyed.layer(ok());
    let alice = || Request::get("/").header("x-key", "alice").body(()).unwrap();
    assert!(call(&mut service, alice()).await.is_ok());
    let err = keyed
        .tuner()
        .retune(Quota::aligned(5, secs(10)))
        .unwrap_err();
    assert_eq!(err.offered(), Quota::aligned(5, secs(10)));
    assert_eq!(
        err.to_string(),
        "a fixed period cannot be retuned into an aligned period"
    );
    assert_eq!(keyed.limit(), Quota::period(1, secs(10)));
    assert!(call(&mut service, alice()).await.is_err());
    let boxed: BoxError = Box::new(err);
    assert!(boxed.is::<KindMismatch>());
}

#[tokio::test(start_paused = true)]
async fn every_clone_of_a_rate_limit_layer_and_of_its_services_sees_the_change() {
    let layer = QuotaLayer::new(Quota::sliding(4, secs(60)));
    let twin = layer.clone();
    let mut a = layer.layer(ok());
    let mut b = a.clone();
    let mut c = twin.layer(ok());
    let tuner: QuotaTuner = twin.tuner().clone();
    assert!(admitted(&mut a).await && admitted(&mut b).await && admitted(&mut c).await);

    tuner.retune(Quota::sliding(5, secs(60))).unwrap();
    assert_eq!(
        (layer.limit(), twin.limit()),
        (tuner.limit(), tuner.limit())
    );
    // One budget of five: the three taken, and two more from whichever service.
    let mut d = layer.layer(ok());
    assert!(admitted(&mut d).await && admitted(&mut b).await);
    for service in [&mut a, &mut b, &mut c, &mut d] {
        let refused = call(service, Request::new(())).await.unwrap_err();
        assert_eq!(refused.quota(), 5);
    }

    // A builder makes new budgets under the limit in force, which the old tuner leaves.
    let renamed = layer.with_name("reloaded");
    assert_eq!(renamed.limit(), Quota::sliding(5, secs(60)));
    tuner.retune(Quota::sliding(1, secs(60))).unwrap();
    assert_eq!(renamed.limit(), Quota::sliding(5, secs(60)));
    let mut e = renamed.layer(ok());
    let refused = loop {
        if let Err(refused) = call(&mut e, Request::new(())).await {
            break refused;
        }
    };
    assert_eq!((refused.quota(), refused.policy()), (5, "reloaded"));
}

// ---------------------------------------------------------------------------------------
// The handles
// ---------------------------------------------------------------------------------------

#[test]
fn a_tuner_is_a_cheap_shared_handle() {
    fn handle<T: Clone + std::fmt::Debug + Send + Sync + 'static>(_: &T) {}
    let breaker = BreakerLayer::new(SRE).tuner();
    let shed = ShedLayer::new(SHED, Cpu::fixed(0)).tuner();
    let rate = QuotaLayer::new(Quota::bucket(1.0, 1.0)).tuner();
    let gate = GateLayer::new(3).tuner();
    handle::<Tuner<Sre>>(&breaker);
    handle::<Tuner<Shed>>(&shed);
    handle::<QuotaTuner>(&rate);
    handle::<Tuner<u32>>(&gate);
    // One `Arc` each: a pointer, and for the generic tuner, which erases the layer's other
    // parameters, its vtable.
    assert_eq!(size_of::<QuotaTuner>(), size_of::<usize>());
    assert_eq!(size_of::<Tuner<u32>>(), 2 * size_of::<usize>());
    assert_eq!(size_of::<Tuner<Sre>>(), 2 * size_of::<usize>());
    assert_eq!(size_of::<Tuner<Shed>>(), 2 * size_of::<usize>());
    assert!(format!("{breaker:?}").starts_with("Tuner { policy: Sre { k: 1.5"));
    assert!(format!("{shed:?}").starts_with("Tuner { policy: Shed { size: 50"));
    assert_eq!(
        format!("{rate:?}"),
        "QuotaTuner { limit: Bucket { rate: 1.0, burst: 1.0 } }"
    );
    assert_eq!(format!("{gate:?}"), "Tuner { policy: 3 }");
}
