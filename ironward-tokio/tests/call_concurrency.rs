//! `call::Gate` and `call::Limiter` around plain calls: the room they count, refusals that
//! never start a call, the limiter's queue on a manual clock, and calls dropped mid-flight
//! or mid-wait that keep no room.

use std::future::pending;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use ironward::limit::{AIMD, Aimd, Algorithm};
use ironward::{ADAPTIVE, Adaptive, Criticality, GateReason, Settle};
use ironward_tokio::call::{CallError, Gate, Limiter};
use ironward_tokio::{Clock, Dice, QUEUE, Queue, Queued, SharedLimiter};

use crate::call_breaker::{poll_once, secs};

/// An adaptive policy held at `limit`.
fn fixed(limit: u32) -> Adaptive {
    Adaptive {
        algorithm: Algorithm::Aimd(Aimd {
            initial: limit,
            min: limit,
            max: limit,
            ..AIMD
        }),
        ..ADAPTIVE
    }
}

#[test]
fn a_gate_counts_its_calls_and_a_dropped_one_gives_its_room_back() {
    let gate = Gate::new(2);
    let started = AtomicUsize::new(0);
    {
        let mut first = pin!(gate.call(pending::<Result<(), ()>>));
        let mut second = pin!(gate.call(pending::<Result<(), ()>>));
        assert!(poll_once(first.as_mut()).is_pending());
        assert!(poll_once(second.as_mut()).is_pending());
        assert_eq!(gate.held(), 2);
        let third = pin!(gate.call(|| {
            started.fetch_add(1, Ordering::Relaxed);
            async { Ok::<(), ()>(()) }
        }));
        let full = GateReason { held: 2, limit: 2 };
        assert_eq!(poll_once(third), Poll::Ready(Err(CallError::Refused(full))));
        assert_eq!(started.load(Ordering::Relaxed), 0);
    }
    assert_eq!(gate.held(), 0, "both dropped mid-flight");
    let done = pin!(gate.call(|| async { Err::<(), _>("down") }));
    assert_eq!(poll_once(done), Poll::Ready(Err(CallError::Failed("down"))));
    assert_eq!(gate.held(), 0);
    // A clone shares the count; a retune keeps those inside.
    let clone = gate.clone();
    let mut held = pin!(clone.call(pending::<Result<(), ()>>));
    assert!(poll_once(held.as_mut()).is_pending());
    assert_eq!(gate.retune(0), 2);
    assert_eq!((gate.held(), gate.limit()), (1, 0));
    let closed = pin!(gate.call(|| async { Ok::<(), ()>(()) }));
    assert!(matches!(
        poll_once(closed),
        Poll::Ready(Err(CallError::Refused(_)))
    ));
}

#[test]
fn a_gate_of_zero_admits_nothing() {
    let gate = Gate::new(0).with_name("closed");
    let call = pin!(gate.call(|| async { Ok::<(), ()>(()) }));
    let nothing = GateReason { held: 0, limit: 0 };
    assert_eq!(
        poll_once(call),
        Poll::Ready(Err(CallError::Refused(nothing)))
    );
    assert_eq!(gate.name(), "closed");
}

#[test]
fn a_limiter_call_holds_its_place_until_it_ends_or_is_dropped() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let limiter = Limiter::new(SharedLimiter::new(fixed(1), clock));
    {
        let mut running = pin!(limiter.call(pending::<Result<(), ()>>));
        assert!(poll_once(running.as_mut()).is_pending());
        assert_eq!(limiter.limiter().flying(), 1);
        let refused = pin!(limiter.call(|| async { Ok::<(), ()>(()) }));
        match poll_once(refused) {
            Poll::Ready(Err(CallError::Refused(refusal))) => {
                assert_eq!(refusal.queued, Queued::Off);
                assert_eq!((refusal.reason.flying, refusal.reason.limit), (1, 1));
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(limiter.limiter().flying(), 0, "dropped mid-flight");
    hand.advance(Duration::from_millis(30));
    let done = pin!(limiter.call(|| async { Ok::<_, ()>(5) }));
    assert_eq!(poll_once(done), Poll::Ready(Ok(5)));
    assert_eq!(limiter.limiter().flying(), 0);
}

#[test]
fn a_queued_call_waits_at_most_the_queue_s_wait_on_the_clock() {
    let (clock, _hand) = Clock::manual(secs(100));
    // One cooling time covers the wait, so the waiter sleeps once, to its end.
    let policy = Adaptive {
        cool: secs(5),
        ..fixed(1)
    };
    let queue = Queue {
        wait: Duration::from_millis(1500),
        ..QUEUE
    };
    let shared = SharedLimiter::with_queue(policy, queue, clock.clone(), Dice::from_fn(|| 0.5));
    let limiter = Limiter::new(shared);
    let mut running = pin!(limiter.call(pending::<Result<(), ()>>));
    assert!(poll_once(running.as_mut()).is_pending());
    let queued = pin!(limiter.call(|| async { Ok::<(), ()>(()) }));
    match poll_once(queued) {
        Poll::Ready(Err(CallError::Refused(refusal))) => {
            let waited = Duration::from_millis(1500);
            assert_eq!(refusal.queued, Queued::Expired { waited });
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(clock.now(), secs(100) + Duration::from_millis(1500));
    assert_eq!(limiter.limiter().queued(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_queued_call_runs_when_room_comes_and_a_dropped_one_leaves_the_queue() {
    let shared = SharedLimiter::with_queue(fixed(1), QUEUE, Clock::monotonic(), Dice::seeded(3));
    let limiter = Limiter::new(shared).with_name("api");
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let first = tokio::spawn({
        let limiter = limiter.clone();
        async move {
            limiter
                .call(|| async { released.await.map_err(drop) })
                .await
        }
    });
    tokio::task::yield_now().await;
    assert_eq!(limiter.limiter().flying(), 1);

    // A waiter dropped leaves the queue.
    {
        let mut waiting = pin!(limiter.call(|| async { Ok::<_, ()>("never") }));
        assert!(poll_once(waiting.as_mut()).is_pending());
        assert_eq!(limiter.limiter().queued(), 1);
    }
    assert_eq!(limiter.limiter().queued(), 0);

    let second = tokio::spawn({
        let limiter = limiter.clone();
        async move { limiter.call(|| async { Ok::<_, ()>("second") }).await }
    });
    tokio::task::yield_now().await;
    assert_eq!(limiter.limiter().queued(), 1);
    release.send(()).unwrap();
    assert_eq!(first.await.unwrap(), Ok(()));
    assert_eq!(second.await.unwrap(), Ok("second"));
    assert_eq!(
        (limiter.limiter().flying(), limiter.limiter().queued()),
        (0, 0)
    );
}

#[tokio::test]
async fn the_grade_settles_each_call_and_criticality_meets_the_floor() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let drops = AtomicUsize::new(0);
    let limiter = Limiter::new(SharedLimiter::new(ADAPTIVE, clock)).with_grade(
        |result: &Result<(), &str>| match result {
            Err("busy") => {
                drops.fetch_add(1, Ordering::Relaxed);
                Settle::Dropped
            }
            Err(_) => Settle::Ignored,
            Ok(()) => Settle::Success,
        },
    );
    for answer in [Err("busy"), Err("bad"), Ok(())] {
        hand.advance(Duration::from_millis(10));
        let result = limiter
            .call_as(Criticality::Sheddable, || async { answer })
            .await;
        assert_eq!(result, answer.map_err(CallError::Failed));
    }
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    assert_eq!(limiter.limiter().flying(), 0);
}
