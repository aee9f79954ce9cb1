//! `call::Timeout` and `call::Deadline` on a manual clock: a call cut at its budget, a late
//! value cut as the timer would have cut it, a nested deadline bounding an inner timeout,
//! a deadline already passed, and no deadline at all.

use std::future::{Future, pending};
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use ironward_tokio::Clock;
use ironward_tokio::call::{CallError, Deadline, Timeout, TimeoutReason};

use crate::call_breaker::{poll_once, secs};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn elapsed<E>(budget: Duration) -> Result<(), CallError<E, TimeoutReason>> {
    Err(CallError::Refused(TimeoutReason::Elapsed { budget }))
}

#[tokio::test]
async fn a_hung_call_is_cut_at_its_budget_exactly() {
    let (clock, _hand) = Clock::manual(secs(10));
    let timeout = Timeout::new(ms(250)).with_clock(clock.clone());
    let cut = timeout.call(pending::<Result<(), ()>>).await;
    assert_eq!(cut, elapsed(ms(250)));
    assert_eq!(clock.now(), secs(10) + ms(250));
    // A value ready at once moves no clock.
    assert_eq!(timeout.call(|| async { Ok::<_, ()>(7) }).await, Ok(7));
    assert_eq!(
        timeout.call(|| async { Err::<(), _>(7) }).await,
        Err(CallError::Failed(7))
    );
    assert_eq!(clock.now(), secs(10) + ms(250));
}

#[tokio::test]
async fn a_value_ready_by_the_deadline_is_delivered_and_a_later_one_cut() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let timeout = Timeout::new(secs(1)).with_clock(clock.clone());
    let sleeper = |took: Duration| {
        let clock = clock.clone();
        move || async move {
            clock.sleep(took).await;
            Ok::<_, ()>(())
        }
    };
    assert_eq!(timeout.call(sleeper(secs(1))).await, Ok(()));
    assert_eq!(clock.now(), secs(1));
    assert_eq!(
        timeout.call(sleeper(secs(1) + ms(1))).await,
        elapsed(secs(1))
    );
    assert_eq!(
        clock.now(),
        secs(2) + ms(1),
        "the call's own sleep moved the clock"
    );
}

#[tokio::test]
async fn a_nested_deadline_bounds_an_inner_timeout() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let outer = Timeout::new(secs(1)).with_clock(clock.clone());
    let inner = Timeout::new(secs(5)).with_clock(clock.clone());
    // Inside both, the call reads the outer deadline, less the 200 ms spent on the way in.
    let seen = outer
        .call(|| async {
            hand.advance(ms(200));
            inner
                .call(|| async { Ok::<_, ()>(Deadline::current().map(|d| d.remaining())) })
                .await
        })
        .await;
    assert_eq!(seen, Ok(Some(ms(800))));

    // A hung call: the inner timeout cuts it where the outer deadline falls, at 1.2 s.
    let cut = outer
        .call(|| async {
            hand.advance(ms(200));
            inner.call(pending::<Result<(), ()>>).await
        })
        .await;
    // The inner timeout's refusal is the outer one's failure, delivered at its deadline.
    let inner_cut = CallError::Refused(TimeoutReason::Elapsed { budget: ms(800) });
    assert_eq!(cut, Err(CallError::Failed(inner_cut)));
    assert_eq!(clock.now(), ms(1200));

    // A deadline scoped by hand bounds it alike; a later one inside changes nothing.
    let start = clock.now();
    let hung = inner.call(pending::<Result<(), ()>>);
    let cut = Deadline::after(secs(2), &clock)
        .scope(Deadline::after(secs(60), &clock).scope(hung))
        .await;
    assert_eq!(cut, elapsed(secs(2)));
    assert_eq!(clock.now(), start + secs(2));
}

#[tokio::test]
async fn a_deadline_already_passed_never_starts_the_call() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let timeout = Timeout::new(secs(5)).with_clock(clock.clone());
    let started = AtomicUsize::new(0);
    let deadline = Deadline::after(secs(1), &clock);
    hand.advance(secs(1));
    assert!(deadline.expired());
    let refused = deadline
        .scope(timeout.call(|| {
            started.fetch_add(1, Ordering::Relaxed);
            async { Ok::<_, ()>(()) }
        }))
        .await;
    assert_eq!(refused, Err(CallError::Refused(TimeoutReason::Exceeded)));
    assert_eq!(started.into_inner(), 0);
    assert_eq!(clock.now(), secs(1));
}

#[tokio::test]
async fn a_zero_budget_is_no_timeout_of_its_own() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let unbounded = Timeout::new(Duration::ZERO).with_clock(clock.clone());
    let slow = unbounded
        .call(|| async {
            clock.sleep(secs(3600)).await;
            Ok::<_, ()>(Deadline::current().is_none())
        })
        .await;
    assert_eq!(slow, Ok(true), "no deadline handed on either");
    // Under a deadline it still stops there.
    let hung = unbounded.call(pending::<Result<(), ()>>);
    assert_eq!(
        Deadline::after(secs(3), &clock).scope(hung).await,
        elapsed(secs(3))
    );
}

#[tokio::test]
async fn enormous_budgets_saturate_without_panicking() {
    let (clock, _hand) = Clock::manual(Duration::MAX);
    let timeout = Timeout::new(Duration::MAX).with_clock(clock.clone());
    assert_eq!(timeout.call(|| async { Ok::<_, ()>(1) }).await, Ok(1));
    let deadline = Deadline::after(Duration::MAX, &clock);
    assert_eq!(deadline.instant(), Duration::MAX);
    assert!(!deadline.expired());
    // The manual clock saturates below the deadline: the hung call is still cut.
    let cut = timeout.call(pending::<Result<(), ()>>).await;
    assert!(matches!(
        cut,
        Err(CallError::Refused(TimeoutReason::Elapsed { .. }))
    ));
}

#[tokio::test]
async fn the_deadline_reads_its_own_clock_and_stays_in_its_task() {
    let (manual, hand) = Clock::manual(Duration::ZERO);
    let deadline = Deadline::after(secs(1), &manual);
    // A timeout on another clock still reads the deadline on the deadline's clock.
    let other = Timeout::new(secs(5)).with_clock(Clock::from_fn(|| secs(1_000_000)));
    let left = deadline
        .clone()
        .scope(async {
            hand.advance(ms(400));
            let spawned = tokio::spawn(async { Deadline::current().is_none() });
            let inherited = spawned.await.unwrap();
            let inner = other.call(|| async { Ok::<_, ()>(Deadline::left()) }).await;
            (inherited, inner)
        })
        .await;
    assert_eq!(left, (true, Ok(Some(ms(600)))));
    assert!(Deadline::current().is_none());
    assert!(Deadline::left().is_none());
    // The sooner of two, whichever clock each is on.
    let far = Deadline::after(secs(9), &Clock::from_fn(|| secs(5)));
    assert_eq!(deadline.clone().sooner(far.clone()).instant(), secs(1));
    assert_eq!(far.sooner(deadline).instant(), secs(1));
}

/// Counts its drops.
struct Guard<'a>(&'a AtomicUsize);

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A call that never ends, counting its drop in `dropped`.
fn hung(dropped: &AtomicUsize) -> impl Future<Output = Result<(), ()>> + '_ {
    let guard = Guard(dropped);
    async move {
        let _guard = guard;
        pending::<Result<(), ()>>().await
    }
}

#[test]
fn a_cut_call_is_dropped_at_once() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let timeout = Timeout::new(secs(1)).with_clock(clock.clone());
    let dropped = AtomicUsize::new(0);
    let call = pin!(timeout.call(|| hung(&dropped)));
    // On a manual clock the first poll finds it pending and the timer rings at once.
    assert!(matches!(
        poll_once(call),
        Poll::Ready(Err(CallError::Refused(_)))
    ));
    assert_eq!(dropped.load(Ordering::Relaxed), 1);
    assert_eq!(clock.now(), secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_timeout_dropped_mid_flight_drops_its_call() {
    let clock = Clock::monotonic();
    let timeout = Timeout::new(secs(1)).with_clock(clock.clone());
    let dropped = AtomicUsize::new(0);
    {
        let call = pin!(timeout.call(|| hung(&dropped)));
        assert!(poll_once(call).is_pending());
        assert_eq!(dropped.load(Ordering::Relaxed), 0);
    }
    assert_eq!(dropped.load(Ordering::Relaxed), 1);
    assert_eq!(clock.now(), Duration::ZERO);
}

#[tokio::test]
async fn a_clock_set_back_mid_call_neither_panics_nor_cuts() {
    let (clock, hand) = Clock::manual(secs(10));
    let timeout = Timeout::new(secs(1)).with_clock(clock.clone());
    let answer = timeout
        .call(|| async {
            hand.set(secs(5));
            Ok::<_, ()>(Deadline::left())
        })
        .await;
    // Set back, the deadline at 11 s has 6 s left: read as it reads, never negative.
    assert_eq!(answer, Ok(Some(secs(6))));
    let hung = timeout.call(pending::<Result<(), ()>>).await;
    assert_eq!(hung, elapsed(secs(1)));
    assert_eq!(clock.now(), secs(6));
}
