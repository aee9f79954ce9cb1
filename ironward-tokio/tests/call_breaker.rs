//! `call::Breaker` around plain async calls, on a manual clock: both families through the
//! same `call`, the caller's classifier, slow calls by the clock, and a call dropped
//! mid-flight leaving its permit unsettled.

use std::future::{Future, pending};
use std::pin::pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ironward::classic::{OpenWait, Record, State};
use ironward::{CLASSIC, Classic, ClassicReason, SRE, SreBreaker, SreReason};
use ironward_tokio::call::{Breaker, CallError, Errors, Slower};
use ironward_tokio::{Clock, Dice, SharedCircuitBreaker, SharedSreBreaker};

/// `n` seconds.
pub fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Polls `future` once, outside any runtime: what a caller that gives up after one poll
/// does before dropping it.
pub fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// A classic policy that opens after `failures` in a row, for 30 s.
fn consecutive(failures: u32) -> Classic {
    Classic {
        record: Record::Consecutive { failures },
        open: OpenWait::Fixed(secs(30)),
        probes: 1,
        ..CLASSIC
    }
}

/// 100 calls, each failing, a millisecond apart on `hand`'s clock: how many ran, and the
/// refusals' reasons.
async fn hammer<B: SharedCircuitBreaker>(
    breaker: &Breaker<B>,
    hand: &ironward_tokio::Hand,
) -> (usize, Vec<B::Reason>) {
    let ran = AtomicUsize::new(0);
    let mut refusals = Vec::new();
    for _ in 0..100 {
        hand.advance(Duration::from_millis(1));
        let answer = breaker
            .call(|| async {
                ran.fetch_add(1, Ordering::Relaxed);
                Err::<(), _>("down")
            })
            .await;
        match answer {
            Err(CallError::Refused(reason)) => refusals.push(reason),
            Err(CallError::Failed(error)) => assert_eq!(error, "down"),
            other => panic!("{other:?}"),
        }
    }
    (ran.into_inner(), refusals)
}

#[tokio::test]
async fn both_families_run_through_the_same_call() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let classic = Breaker::new(consecutive(3)).with_clock(clock.clone());
    let (ran, refusals) = hammer(&classic, &hand).await;
    assert_eq!((ran, refusals.len()), (3, 97));
    let first: &ClassicReason = &refusals[0];
    assert_eq!(first.state, State::Open);
    assert_eq!(
        classic.retry_after(first),
        Some(secs(30) - Duration::from_millis(1))
    );
    assert_eq!(classic.state(), Some(State::Open));

    // The SRE breaker, lock-free and behind a lock, decides alike with the same draws.
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let sre = Breaker::new(SRE)
        .with_clock(clock.clone())
        .with_dice(Dice::seeded(5));
    let (ran, refusals) = hammer(&sre, &hand).await;
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let locked = Breaker::for_breaker::<Mutex<SreBreaker>>(SRE)
        .with_clock(clock)
        .with_dice(Dice::seeded(5));
    let (ran_locked, refusals_locked) = hammer(&locked, &hand).await;
    assert_eq!(ran, ran_locked);
    assert_eq!(refusals, refusals_locked);
    assert!((10..100).contains(&ran), "{ran} ran");
    let last: &SreReason = refusals.last().unwrap();
    assert!(last.drop > 0.5, "{last:?}");
    assert_eq!(sre.retry_after(last), None);
    assert_eq!(sre.state(), None);
}

#[tokio::test]
async fn a_refused_call_is_never_started() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let breaker = Breaker::new(consecutive(1)).with_clock(clock);
    let _ = breaker.call(|| async { Err::<(), _>(()) }).await;
    let started = AtomicUsize::new(0);
    let refused = breaker
        .call(|| {
            started.fetch_add(1, Ordering::Relaxed);
            async { Ok::<(), ()>(()) }
        })
        .await;
    assert!(refused.unwrap_err().is_refused());
    assert_eq!(started.into_inner(), 0);
}

#[tokio::test]
async fn the_classifier_decides_which_results_are_failures() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    // "busy" is a failure though it is an `Ok`; a 404 is a success though it is an `Err`.
    let breaker = Breaker::new(consecutive(2))
        .with_clock(clock)
        .with_classifier(|result: &Result<&str, u16>| match result {
            Ok(answer) => *answer == "busy",
            Err(status) => *status != 404,
        });
    for _ in 0..5 {
        assert_eq!(
            breaker.call(|| async { Err(404) }).await,
            Err(CallError::Failed(404))
        );
        assert_eq!(breaker.call(|| async { Ok("busy") }).await, Ok("busy"));
    }
    assert_eq!(
        breaker.state(),
        Some(State::Closed),
        "never two failures in a row"
    );
    assert_eq!(breaker.call(|| async { Ok("busy") }).await, Ok("busy"));
    assert_eq!(breaker.state(), Some(State::Open));
    assert!(breaker.call(|| async { Ok("done") }).await.is_err());
}

#[tokio::test]
async fn slow_calls_are_told_by_the_clock_as_slow_call_says() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    // Four calls decide; half of them slower than a second opens it.
    let policy = Classic {
        record: Record::Count { calls: 4 },
        minimum: 4,
        slow_call: secs(1),
        slow_rate: 0.5,
        ..consecutive(100)
    };
    let breaker = Breaker::new(policy).with_clock(clock.clone());
    let call = |took: Duration| {
        let clock = clock.clone();
        move || async move {
            clock.sleep(took).await;
            Ok::<_, ()>(took)
        }
    };
    breaker.call(call(secs(1))).await.unwrap(); // at the threshold: not slow
    breaker
        .call(call(Duration::from_millis(100)))
        .await
        .unwrap();
    breaker.call(call(secs(2))).await.unwrap();
    assert_eq!(clock.now(), Duration::from_millis(3100));
    assert_eq!(breaker.state(), Some(State::Closed));
    breaker.call(call(secs(5))).await.unwrap();
    assert_eq!(breaker.state(), Some(State::Open), "two slow of four");
    let reason = breaker.call(call(secs(1))).await.unwrap_err();
    assert_eq!(reason.refusal().map(|r| r.slow_rate), Some(0.5));
    // Open for its 30 s from the fourth call's end, at 8.1 s.
    hand.set(Duration::from_millis(38_099));
    assert!(breaker.call(call(Duration::ZERO)).await.is_err());
    hand.set(Duration::from_millis(38_100));
    assert!(
        breaker.call(call(Duration::ZERO)).await.is_ok(),
        "the probe"
    );
}

#[tokio::test]
async fn a_classifier_counts_a_call_slower_than_its_limit_as_an_sre_failure() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let breaker = Breaker::new(SRE)
        .with_clock(clock.clone())
        .with_classifier(Slower::new(Errors, secs(1)));
    let call = |took: Duration| {
        let clock = clock.clone();
        move || async move {
            clock.sleep(took).await;
            Ok::<_, ()>(took)
        }
    };
    // Exactly the limit is not slow; a nanosecond over it is, though it answered `Ok`.
    breaker.call(call(secs(1))).await.unwrap();
    assert_eq!(outcomes(breaker.breaker(), clock.now()), (1, 0));
    breaker
        .call(call(secs(1) + Duration::from_nanos(1)))
        .await
        .unwrap();
    assert_eq!(outcomes(breaker.breaker(), clock.now()), (1, 1));
    // An error is a failure whatever its time, as the classifier it wraps says.
    let failed = breaker.call(|| async { Err::<Duration, _>(()) }).await;
    assert_eq!(failed, Err(CallError::Failed(())));
    assert_eq!(outcomes(breaker.breaker(), clock.now()), (1, 2));
}

/// The successes and failures in an SRE breaker's window at `now`.
fn outcomes(breaker: &SharedSreBreaker, now: Duration) -> (u64, u64) {
    let mut seen = (0, 0);
    breaker.snapshot().window().each(now, |t| {
        seen = (seen.0 + t.success, seen.1 + t.failure);
    });
    seen
}

#[test]
fn a_call_dropped_mid_flight_records_nothing() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let breaker = Breaker::new(SRE).with_clock(clock.clone());
    {
        let call = pin!(breaker.call(pending::<Result<(), ()>>));
        let mut call = call;
        assert!(poll_once(call.as_mut()).is_pending());
    }
    assert_eq!(outcomes(breaker.breaker(), clock.now()), (0, 0));
    let failed = pin!(breaker.call(|| async { Err::<(), _>(()) }));
    assert!(matches!(
        poll_once(failed),
        Poll::Ready(Err(CallError::Failed(())))
    ));
    assert_eq!(outcomes(breaker.breaker(), clock.now()), (0, 1));

    // A classic breaker that opens at one failure stays closed: the dropped call failed
    // nothing.
    let classic = Breaker::new(consecutive(1)).with_clock(clock);
    for _ in 0..3 {
        let call = pin!(classic.call(pending::<Result<(), ()>>));
        assert!(poll_once(call).is_pending());
    }
    assert_eq!(classic.state(), Some(State::Closed));
}

#[tokio::test]
async fn clones_share_one_breaker_and_builders_make_a_new_one() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let breaker = Breaker::new(consecutive(1)).with_clock(clock.clone());
    let clone = breaker.clone();
    let _ = clone.call(|| async { Err::<(), _>(()) }).await;
    assert_eq!(breaker.state(), Some(State::Open));
    let renamed = breaker.with_name("payments");
    assert_eq!(renamed.name(), "payments");
    assert_eq!(
        renamed.state(),
        Some(State::Closed),
        "a builder makes a new breaker"
    );
    assert_eq!(clone.state(), Some(State::Open));
}

#[test]
fn pieces_and_their_calls_are_send_and_sync() {
    fn shared<T: Clone + Send + Sync + 'static>(_: &T) {}
    fn send<T: Send>(_: T) {}
    let breaker = Breaker::new(SRE);
    shared(&breaker);
    shared(&Breaker::new(CLASSIC));
    send(breaker.call(|| async { Ok::<_, ()>(1) }));
}

#[tokio::test]
async fn a_clock_set_back_mid_call_is_read_as_the_latest_time() {
    let (clock, hand) = Clock::manual(secs(100));
    let breaker = Breaker::new(consecutive(1)).with_clock(clock);
    let failed = breaker
        .call(|| async {
            hand.set(secs(1));
            Err::<(), _>("down")
        })
        .await;
    assert_eq!(failed, Err(CallError::Failed("down")));
    assert_eq!(breaker.state(), Some(State::Open));
    // Open from 100 s, the latest time seen, for 30 s: at 129 s on the clock still refused.
    hand.set(secs(129));
    let refused = breaker.call(|| async { Ok::<(), &str>(()) }).await;
    assert!(refused.unwrap_err().is_refused());
    hand.set(secs(130));
    assert_eq!(breaker.call(|| async { Ok::<(), &str>(()) }).await, Ok(()));
}

#[tokio::test]
async fn the_classic_breaker_draws_nothing_and_the_sre_breaker_one_draw_a_call() {
    let draws = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&draws);
    let dice = Dice::from_fn(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        0.5
    });
    let (clock, _hand) = Clock::manual(secs(1));
    let classic = Breaker::new(consecutive(2))
        .with_clock(clock.clone())
        .with_dice(dice.clone());
    for _ in 0..3 {
        let _ = classic.call(|| async { Err::<(), _>("down") }).await;
    }
    assert_eq!(classic.state(), Some(State::Open));
    assert_eq!(
        draws.load(Ordering::Relaxed),
        0,
        "the classic breaker reads no draw"
    );
    let sre = Breaker::new(SRE).with_clock(clock).with_dice(dice);
    for _ in 0..3 {
        let _ = sre.call(|| async { Ok::<_, ()>(()) }).await;
    }
    assert_eq!(draws.load(Ordering::Relaxed), 3);
}
