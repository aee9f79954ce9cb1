//! ironward-tokio's `call::RateLimit` over this crate's limiters on a real Redis, through
//! `OnKey`: a refusal names the script's wait, a waiting call sleeps it on the piece's
//! (manual) clock and is admitted by Redis at the exact instant, a wait past the bound is
//! refused at once, and a Redis frozen past the store's timeout refuses as unavailable.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ironward_redis::{Bucket, OnKey, Options, Period, Sliding, Source};
use ironward_tokio::call::{Admit, CallError, RateCause, RateLimit, RateReason};
use ironward_tokio::{Clock, Quota};

use common::Server;

const START: Duration = Duration::from_secs(1_700_000_000);

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// A call that answers the clock's reading when it runs, and counts its runs.
fn stamp(
    clock: &Clock,
    runs: &Arc<AtomicUsize>,
) -> impl FnOnce() -> std::future::Ready<Result<Duration, ()>> + use<> {
    let (clock, runs) = (clock.clone(), Arc::clone(runs));
    move || {
        runs.fetch_add(1, Ordering::Relaxed);
        std::future::ready(Ok(clock.now()))
    }
}

fn refusal(answer: Result<Duration, CallError<(), RateReason>>) -> RateReason {
    match answer {
        Err(CallError::Refused(reason)) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// One call, a refusal naming `wait`, a wait past a short bound refused at once, and a
/// call waiting `wait` admitted at the instant, on `limiter`'s key `key`.
async fn refuses_then_waits<A: Admit>(limiter: A, limit: Quota, wait: Duration) {
    let (clock, _hand) = Clock::manual(START);
    let runs = Arc::new(AtomicUsize::new(0));
    assert_eq!(limiter.limit(), limit);
    let rate = RateLimit::over(limiter).with_clock(clock.clone());
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(START));
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    let expected = RateReason {
        cause: RateCause::Over,
        limit,
        cost: 1,
        wait,
        bound: Duration::ZERO,
    };
    assert_eq!(refused, expected);
    let short = rate.clone().wait_up_to(wait - Duration::from_millis(1));
    assert_eq!(refusal(short.call(stamp(&clock, &runs)).await).wait, wait);
    assert_eq!(clock.now(), START, "refused without sleeping");
    let patient = rate.clone().wait_up_to(wait);
    assert_eq!(patient.call(stamp(&clock, &runs)).await, Ok(START + wait));
    assert_eq!(runs.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn each_redis_limiter_refuses_and_waits_on_the_pieces_clock() {
    let server = Server::start();
    // Patient with a loaded machine: a call refused as unavailable would fail the test.
    let patient = Options {
        timeout: secs(5),
        ..Options::default()
    };
    let store = server.store(patient).await;
    let name = common::unique("rate");
    let bucket = Bucket::new(&store, &name, 1.0, 1.0);
    refuses_then_waits(OnKey::new(bucket, "b"), Quota::bucket(1.0, 1.0), secs(1)).await;
    let sliding = Sliding::new(&store, &name, 1, secs(10));
    refuses_then_waits(
        OnKey::new(sliding, "s"),
        Quota::sliding(1, secs(10)),
        secs(10),
    )
    .await;
    let period = Period::new(&store, &name, 1, secs(10));
    refuses_then_waits(
        OnKey::new(period, "p"),
        Quota::period(1, secs(10)),
        secs(10),
    )
    .await;
    let aligned = Period::aligned(&store, &name, 1, secs(7));
    // START is 6 s past a multiple of 7 s: the aligned period closes a second later.
    assert_eq!(START.as_secs() % 7, 6);
    refuses_then_waits(
        OnKey::new(aligned, "a"),
        Quota::aligned(1, secs(7)),
        secs(1),
    )
    .await;
    assert_eq!(
        store.source(),
        Source::Redis,
        "Redis decided, not the fallback"
    );
}

#[tokio::test]
async fn a_redis_that_does_not_answer_refuses_as_unavailable() {
    let server = Server::start();
    // Only a call to the frozen server waits for it: no call has to beat it.
    let timeout = Duration::from_millis(500);
    let store = server
        .store(Options {
            timeout,
            ..Options::default()
        })
        .await;
    let bucket = Bucket::new(&store, &common::unique("frozen"), 10.0, 10.0);
    let (clock, _hand) = Clock::manual(START);
    let runs = Arc::new(AtomicUsize::new(0));
    let rate = RateLimit::over(OnKey::new(bucket, "k"))
        .with_clock(clock.clone())
        .wait_up_to(secs(60));
    server.signal("STOP");
    let answer = rate.call(stamp(&clock, &runs)).await;
    server.signal("CONT");
    let refused = refusal(answer);
    assert_eq!(refused.cause, RateCause::Unavailable);
    assert_eq!(refused.retry_after(), timeout);
    assert_eq!(
        runs.load(Ordering::Relaxed),
        0,
        "an undecided call never runs"
    );
    assert_eq!(clock.now(), START, "nor sleeps");
    // A retune of a Redis limiter is refused: its limit is fixed.
    let other = Quota::bucket(1.0, 1.0);
    assert_eq!(rate.retune(other), Err(other));
}
