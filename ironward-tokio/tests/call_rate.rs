//! `call::RateLimit` on each of the core's limiters: refusals with the wait they name, waits
//! admitted at the exact instant on a manual clock, waits refused at once past the bound or
//! the deadline, two waiters served in order, a dropped waiter's slot given back, and bad
//! input answered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ironward_tokio::call::{
    Admit, Admitted, CallError, Deadline, Denied, RateCause, RateLimit, RateReason,
};
use ironward_tokio::{Clock, Quota};

use crate::call_breaker::secs;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

type Answer = Result<Duration, CallError<(), RateReason>>;

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

/// The refusal of an answer, or a panic saying what came instead.
fn refusal(answer: Answer) -> RateReason {
    match answer {
        Err(CallError::Refused(reason)) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn over(limit: Quota, cost: u32, wait: Duration, bound: Duration) -> RateReason {
    RateReason {
        cause: RateCause::Over,
        limit,
        cost,
        wait,
        bound,
    }
}

#[tokio::test]
async fn a_bucket_refuses_past_its_burst_and_names_the_refill() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::bucket(2.0, 2.0);
    let rate = RateLimit::new(limit).with_clock(clock.clone());
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(0)));
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(0)));
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    assert_eq!(refused, over(limit, 1, ms(500), Duration::ZERO));
    assert_eq!(refused.retry_after(), ms(500));
    assert_eq!(runs.load(Ordering::Relaxed), 2, "a refused call never runs");
    assert_eq!(clock.now(), secs(0), "a refusal sleeps nothing");
    hand.advance(ms(499));
    assert_eq!(refusal(rate.call(stamp(&clock, &runs)).await).wait, ms(1));
    hand.advance(ms(1));
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(ms(500)));
}

#[tokio::test]
async fn a_sliding_window_refuses_until_its_oldest_call_leaves() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::sliding(2, secs(60));
    let rate = RateLimit::new(limit).with_clock(clock.clone());
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    hand.set(secs(10));
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    hand.set(secs(30));
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    assert_eq!(refused, over(limit, 1, secs(30), Duration::ZERO));
    hand.set(secs(60));
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(60)));
    assert_eq!(
        refusal(rate.call(stamp(&clock, &runs)).await).wait,
        secs(10)
    );
    assert_eq!(runs.load(Ordering::Relaxed), 3);
}

#[tokio::test]
async fn a_period_refuses_until_it_closes() {
    let (clock, hand) = Clock::manual(secs(5));
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::period(2, secs(60));
    let rate = RateLimit::new(limit).with_clock(clock.clone());
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    hand.set(secs(25));
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    // The period opened at 5 s closes at 65 s.
    assert_eq!(refused, over(limit, 1, secs(40), Duration::ZERO));
    hand.set(secs(65));
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(65)));
    // An aligned period closes on a multiple of the period.
    let aligned = RateLimit::new(Quota::aligned(1, secs(60))).with_clock(clock.clone());
    assert!(aligned.call(stamp(&clock, &runs)).await.is_ok());
    assert_eq!(
        refusal(aligned.call(stamp(&clock, &runs)).await).wait,
        secs(55)
    );
}

#[tokio::test]
async fn a_waiting_call_is_admitted_at_the_exact_instant() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    // Three tokens a second: one token takes 333 333 334 ns, rounded up.
    let rate = RateLimit::new(Quota::bucket(3.0, 1.0))
        .with_clock(clock.clone())
        .wait_up_to(secs(1));
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(0)));
    let third = Duration::from_nanos(333_333_334);
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(third));
    // The next token is a third of a second on, from the instant the last was taken.
    let next = rate.call(stamp(&clock, &runs)).await.unwrap();
    assert!(next - third <= third && next - third >= third - Duration::from_nanos(1));
    for limit in [Quota::sliding(1, secs(10)), Quota::period(1, secs(10))] {
        let (clock, _hand) = Clock::manual(secs(3));
        let rate = RateLimit::new(limit)
            .with_clock(clock.clone())
            .wait_up_to(secs(10));
        assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(3)));
        assert_eq!(
            rate.call(stamp(&clock, &runs)).await,
            Ok(secs(13)),
            "{limit:?}"
        );
        assert_eq!(
            rate.call(stamp(&clock, &runs)).await,
            Ok(secs(23)),
            "{limit:?}"
        );
    }
}

#[tokio::test]
async fn a_weighted_call_waits_for_its_whole_cost() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::bucket(1.0, 5.0);
    let rate = RateLimit::new(limit).with_clock(clock.clone());
    assert_eq!(rate.call_n(5, stamp(&clock, &runs)).await, Ok(secs(0)));
    let refused = refusal(rate.call_n(3, stamp(&clock, &runs)).await);
    assert_eq!(refused, over(limit, 3, secs(3), Duration::ZERO));
    let patient = rate.clone().wait_up_to(secs(3));
    assert_eq!(patient.call_n(3, stamp(&clock, &runs)).await, Ok(secs(3)));
    // Units of a window too.
    let window = RateLimit::new(Quota::sliding(10, secs(60)))
        .with_clock(clock.clone())
        .wait_up_to(secs(60));
    assert_eq!(window.call_n(7, stamp(&clock, &runs)).await, Ok(secs(3)));
    assert_eq!(window.call_n(4, stamp(&clock, &runs)).await, Ok(secs(63)));
    // A cost of zero passes on a spent limit of each kind, at once, and takes nothing.
    for limit in [
        Quota::bucket(1.0, 1.0),
        Quota::sliding(1, secs(60)),
        Quota::period(1, secs(60)),
    ] {
        let rate = RateLimit::new(limit).with_clock(clock.clone());
        assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
        assert_eq!(
            rate.call_n(0, stamp(&clock, &runs)).await,
            Ok(clock.now()),
            "{limit:?}"
        );
        assert_eq!(refusal(rate.call(stamp(&clock, &runs)).await).cost, 1);
    }
}

#[tokio::test]
async fn a_wait_over_the_bound_is_refused_at_once() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::sliding(1, secs(60));
    let rate = RateLimit::new(limit)
        .with_clock(clock.clone())
        .wait_up_to(secs(10));
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    assert_eq!(refused, over(limit, 1, secs(60), secs(10)));
    assert_eq!(clock.now(), secs(0), "refused without sleeping");
    assert_eq!(runs.load(Ordering::Relaxed), 1);
    // The refusal held nothing: a call at 60 s still has the window to itself.
    let exact = rate.clone().wait_up_to(secs(60));
    assert_eq!(exact.call(stamp(&clock, &runs)).await, Ok(secs(60)));
}

#[tokio::test]
async fn a_wait_that_reaches_the_deadline_is_refused_at_once() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::bucket(1.0, 1.0);
    let rate = RateLimit::new(limit)
        .with_clock(clock.clone())
        .wait_up_to(secs(10));
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    for left in [ms(500), secs(1)] {
        let answer = Deadline::after(left, &clock)
            .scope(rate.call(stamp(&clock, &runs)))
            .await;
        let expected = RateReason {
            cause: RateCause::Deadline,
            ..over(limit, 1, secs(1), left)
        };
        let refused = refusal(answer);
        assert_eq!(refused, expected);
        assert_eq!(clock.now(), secs(0), "refused without sleeping");
        let line = format!("rate limited: room for 1 in 1s, at or past its deadline {left:?} away");
        assert!(refused.to_string().starts_with(&line), "{refused}");
    }
    // A nanosecond more, and it starts before the deadline.
    let answer = Deadline::after(secs(1) + Duration::from_nanos(1), &clock)
        .scope(rate.call(stamp(&clock, &runs)))
        .await;
    assert_eq!(answer, Ok(secs(1)));
    // A deadline later than the bound leaves the bound to decide.
    let answer = Deadline::after(secs(60), &clock)
        .scope(rate.call_n(2, stamp(&clock, &runs)))
        .await;
    assert_eq!(refusal(answer).cause, RateCause::Over);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_keeps_its_place_against_later_calls() {
    let clock = Clock::monotonic();
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::bucket(1.0, 1.0);
    let refusing = RateLimit::new(limit).with_clock(clock.clone());
    let waiting = refusing.clone().wait_up_to(secs(10));
    assert!(refusing.call(stamp(&clock, &runs)).await.is_ok());
    let first = tokio::spawn({
        let (waiting, call) = (waiting.clone(), stamp(&clock, &runs));
        async move { waiting.call(call).await }
    });
    tokio::task::yield_now().await;
    tokio::time::advance(ms(500)).await;
    // The token of 1 s is the first waiter's: a later call is refused until the next one.
    let refused = refusal(refusing.call(stamp(&clock, &runs)).await);
    assert_eq!(refused.wait, ms(1_500));
    let second = tokio::spawn({
        let (waiting, call) = (waiting.clone(), stamp(&clock, &runs));
        async move { waiting.call(call).await }
    });
    assert_eq!(first.await.unwrap(), Ok(secs(1)));
    assert_eq!(second.await.unwrap(), Ok(secs(2)));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_waiter_gives_its_slot_back() {
    let clock = Clock::monotonic();
    let runs = Arc::new(AtomicUsize::new(0));
    let refusing = RateLimit::new(Quota::sliding(2, secs(60))).with_clock(clock.clone());
    let waiting = refusing.clone().wait_up_to(secs(120));
    assert!(refusing.call(stamp(&clock, &runs)).await.is_ok());
    assert!(refusing.call(stamp(&clock, &runs)).await.is_ok());
    let waiter = tokio::spawn({
        let (waiting, call) = (waiting.clone(), stamp(&clock, &runs));
        async move { waiting.call(call).await }
    });
    tokio::task::yield_now().await;
    tokio::time::advance(secs(30)).await;
    waiter.abort();
    assert!(waiter.await.unwrap_err().is_cancelled());
    assert_eq!(
        runs.load(Ordering::Relaxed),
        2,
        "the dropped waiter never ran"
    );
    tokio::time::advance(secs(30)).await;
    // Both places of the window from 60 s are there: the waiter's came back.
    assert_eq!(refusing.call(stamp(&clock, &runs)).await, Ok(secs(60)));
    assert_eq!(refusing.call(stamp(&clock, &runs)).await, Ok(secs(60)));
    assert_eq!(
        refusal(refusing.call(stamp(&clock, &runs)).await).wait,
        secs(60)
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_waiters_tokens_go_to_the_next_caller() {
    let clock = Clock::monotonic();
    let runs = Arc::new(AtomicUsize::new(0));
    let waiting = RateLimit::new(Quota::bucket(1.0, 3.0))
        .with_clock(clock.clone())
        .wait_up_to(secs(10));
    assert!(waiting.call_n(3, stamp(&clock, &runs)).await.is_ok());
    let waiter = tokio::spawn({
        let (waiting, call) = (waiting.clone(), stamp(&clock, &runs));
        async move { waiting.call_n(3, call).await }
    });
    tokio::task::yield_now().await;
    tokio::time::advance(secs(1)).await;
    waiter.abort();
    let _ = waiter.await;
    // Its three tokens came back: three more are there at 3 s, as if it had never asked.
    assert_eq!(waiting.call_n(3, stamp(&clock, &runs)).await, Ok(secs(3)));
    assert_eq!(runs.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn a_limit_that_never_has_room_refuses_whatever_the_bound() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let never = Duration::MAX;
    for limit in [
        Quota::bucket(0.0, 1.0),
        Quota::bucket(f64::NAN, 1.0),
        Quota::sliding(0, secs(60)),
        Quota::period(0, secs(60)),
    ] {
        let rate = RateLimit::new(limit)
            .with_clock(clock.clone())
            .wait_up_to(Duration::MAX);
        // A bucket starts full; a quota of zero admits nothing.
        let _ = rate.call(stamp(&clock, &runs)).await;
        let refused = refusal(rate.call(stamp(&clock, &runs)).await);
        assert_eq!(
            (refused.cause, refused.wait),
            (RateCause::Over, never),
            "{limit:?}"
        );
        assert!(
            refused.to_string().contains("never room for 1"),
            "{refused}"
        );
    }
    // A cost above the burst never fits.
    let rate = RateLimit::new(Quota::bucket(1.0, 2.0)).with_clock(clock.clone());
    assert_eq!(
        refusal(rate.call_n(3, stamp(&clock, &runs)).await).wait,
        never
    );
    assert_eq!(clock.now(), Duration::ZERO);
}

#[tokio::test]
async fn bounds_of_zero_and_of_forever_are_answered() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::bucket(1.0, 1.0);
    let zero = RateLimit::new(limit)
        .with_clock(clock.clone())
        .wait_up_to(Duration::ZERO);
    assert_eq!(zero.bound(), Duration::ZERO);
    assert!(zero.call(stamp(&clock, &runs)).await.is_ok());
    assert_eq!(
        refusal(zero.call(stamp(&clock, &runs)).await),
        over(limit, 1, secs(1), Duration::ZERO)
    );
    let forever = zero.wait_up_to(Duration::MAX);
    assert_eq!(forever.call(stamp(&clock, &runs)).await, Ok(secs(1)));
    assert_eq!(forever.call_n(1, stamp(&clock, &runs)).await, Ok(secs(2)));
    // A wait of about 2^25 s (388 days) is within forever, and ends where the core's
    // bucket says its token comes (floats at that size are a few nanoseconds apart).
    let rate = 1.0 / 33_554_432.0;
    let mut core = ironward::Bucket::new(rate, 1.0, Duration::ZERO);
    assert!(core.take(secs(2), 1.0));
    let token = secs(2) + core.next(secs(2), 1.0);
    assert!(token.abs_diff(secs(2 + 33_554_432)) < Duration::from_nanos(10));
    let slow = RateLimit::new(Quota::bucket(rate, 1.0))
        .with_clock(clock.clone())
        .wait_up_to(Duration::MAX);
    assert!(slow.call(stamp(&clock, &runs)).await.is_ok());
    assert_eq!(slow.call(stamp(&clock, &runs)).await, Ok(token));
}

#[tokio::test]
async fn a_clock_set_back_is_read_as_the_latest_seen() {
    let (clock, hand) = Clock::manual(secs(10));
    let runs = Arc::new(AtomicUsize::new(0));
    let limit = Quota::bucket(1.0, 1.0);
    let rate = RateLimit::new(limit).with_clock(clock.clone());
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    hand.set(secs(5));
    // The bucket is at 10 s: its token comes at 11 s, six seconds on the caller's clock.
    assert_eq!(
        refusal(rate.call(stamp(&clock, &runs)).await),
        over(limit, 1, secs(6), Duration::ZERO)
    );
    let waiting = rate.wait_up_to(secs(6));
    assert_eq!(waiting.call(stamp(&clock, &runs)).await, Ok(secs(11)));
}

#[tokio::test]
async fn a_retune_changes_the_limit_for_every_clone() {
    let (clock, hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let rate = RateLimit::new(Quota::sliding(1, secs(60))).with_clock(clock.clone());
    let other = rate.clone().with_name("other");
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    assert!(refusal(other.call(stamp(&clock, &runs)).await).wait == secs(60));
    hand.set(secs(1));
    assert_eq!(other.retune(Quota::sliding(2, secs(60))), Ok(()));
    assert_eq!(rate.limit(), Quota::sliding(2, secs(60)));
    assert!(rate.call(stamp(&clock, &runs)).await.is_ok());
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    assert_eq!(refused.limit, Quota::sliding(2, secs(60)));
    assert_eq!(refused.wait, secs(59));
    let bucket = Quota::bucket(1.0, 1.0);
    assert_eq!(rate.retune(bucket), Err(bucket));
    assert_eq!(rate.limit(), Quota::sliding(2, secs(60)));
    // A period keeps its alignment.
    let period = RateLimit::new(Quota::period(1, secs(1)));
    assert_eq!(
        period.retune(Quota::aligned(1, secs(1))),
        Err(Quota::aligned(1, secs(1)))
    );
}

#[test]
fn a_rate_limit_is_a_shared_handle() {
    fn shared<T: Clone + Send + Sync + 'static>() {}
    shared::<RateLimit>();
    let limit = RateLimit::new(Quota::bucket(1.0, 1.0)).with_name("api");
    assert_eq!(limit.name(), "api");
    assert!(format!("{limit:?}").contains("RateLimit"));
    // The future of a call is `Send`, so a spawned task can run it.
    fn sendable<F: Send>(_: &F) {}
    let call = limit.call(|| async { Ok::<_, ()>(()) });
    sendable(&call);
}

#[tokio::test]
async fn at_the_end_of_the_clock_a_wait_past_it_is_never() {
    let end = Duration::from_nanos(u64::MAX);
    let (clock, _hand) = Clock::manual(end - ms(500));
    let runs = Arc::new(AtomicUsize::new(0));
    for limit in [
        Quota::bucket(1.0, 1.0),
        Quota::sliding(1, secs(1)),
        Quota::period(1, secs(1)),
    ] {
        let rate = RateLimit::new(limit)
            .with_clock(clock.clone())
            .wait_up_to(Duration::MAX);
        assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(end - ms(500)));
        // The next room lies past the clock's last reading: never, and at once.
        let refused = refusal(rate.call(stamp(&clock, &runs)).await);
        assert_eq!(
            (refused.cause, refused.wait),
            (RateCause::Over, Duration::MAX)
        );
        assert_eq!(clock.now(), end - ms(500), "{limit:?}");
    }
    assert_eq!(runs.load(Ordering::Relaxed), 3);
}

/// A limiter that holds nothing ahead: room from `open` on, asked `asks` times; or one that
/// cannot decide.
struct Opens {
    open: Option<Duration>,
    asks: AtomicUsize,
}

impl Admit for Opens {
    type Slot = ();

    async fn admit(
        &self,
        now: Duration,
        _cost: u32,
        _within: Duration,
    ) -> Result<Admitted<()>, Denied> {
        self.asks.fetch_add(1, Ordering::Relaxed);
        match self.open {
            Some(open) if now >= open => Ok(Admitted {
                wait: Duration::ZERO,
                slot: None,
            }),
            Some(open) => Err(Denied::Later { wait: open - now }),
            None => Err(Denied::Unavailable {
                retry_after: ms(250),
            }),
        }
    }

    fn give_back(&self, (): (), _now: Duration) {}

    fn limit(&self) -> Quota {
        Quota::sliding(1, secs(1))
    }
}

fn opens(open: Option<Duration>) -> Opens {
    Opens {
        open,
        asks: AtomicUsize::new(0),
    }
}

#[tokio::test]
async fn a_limiter_that_holds_nothing_ahead_is_asked_again_after_the_wait() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let rate = RateLimit::over(opens(Some(secs(3))))
        .with_clock(clock.clone())
        .wait_up_to(secs(3));
    assert_eq!(rate.call(stamp(&clock, &runs)).await, Ok(secs(3)));
    assert_eq!(rate.limiter().asks.load(Ordering::Relaxed), 2);
    // Past the bound: refused on the first answer, without sleeping.
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let short = RateLimit::over(opens(Some(secs(3))))
        .with_clock(clock.clone())
        .wait_up_to(secs(2));
    let refused = refusal(short.call(stamp(&clock, &runs)).await);
    assert_eq!((refused.wait, refused.bound), (secs(3), secs(2)));
    assert_eq!(clock.now(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_clock_that_a_sleep_does_not_move_ends_the_wait() {
    let clock = Clock::from_fn(|| Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let rate = RateLimit::over(opens(Some(secs(1))))
        .with_clock(clock.clone())
        .wait_up_to(secs(10));
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    assert_eq!((refused.cause, refused.wait), (RateCause::Over, secs(1)));
    assert_eq!(rate.limiter().asks.load(Ordering::Relaxed), 1);
    assert_eq!(runs.load(Ordering::Relaxed), 0);
}

#[tokio::test]
async fn a_limiter_that_cannot_decide_refuses_as_unavailable() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    let rate = RateLimit::over(opens(None))
        .with_clock(clock.clone())
        .wait_up_to(secs(10));
    let refused = refusal(rate.call(stamp(&clock, &runs)).await);
    assert_eq!(refused.cause, RateCause::Unavailable);
    assert_eq!(refused.retry_after(), ms(250));
    assert_eq!(
        refused.to_string(),
        "rate limiter unavailable: ask again in 250ms (a sliding window of 1 per 1s)"
    );
    assert_eq!(
        (runs.load(Ordering::Relaxed), clock.now()),
        (0, Duration::ZERO)
    );
}

#[tokio::test(start_paused = true)]
async fn waiters_are_admitted_in_the_order_they_came_a_token_apart() {
    let clock = Clock::monotonic();
    let runs = Arc::new(AtomicUsize::new(0));
    // Ten a second, no burst beyond one: a token every 100 ms.
    let waiting = RateLimit::new(Quota::bucket(10.0, 1.0))
        .with_clock(clock.clone())
        .wait_up_to(secs(10));
    let mut waiters = Vec::new();
    for _ in 0..20 {
        let (waiting, call) = (waiting.clone(), stamp(&clock, &runs));
        waiters.push(tokio::spawn(async move { waiting.call(call).await }));
        // Each is polled, and holds its slot, before the next is spawned.
        tokio::task::yield_now().await;
    }
    // A call arriving now is behind all twenty: the next slot is at 2 s.
    let refusing = waiting.clone().wait_up_to(Duration::ZERO);
    assert_eq!(
        refusal(refusing.call(stamp(&clock, &runs)).await).wait,
        secs(2)
    );
    for (i, waiter) in (0u64..).zip(waiters) {
        assert_eq!(waiter.await.unwrap(), Ok(ms(100 * i)), "waiter {i}");
    }
    assert_eq!(runs.load(Ordering::Relaxed), 20);
}

#[tokio::test(start_paused = true)]
async fn a_slot_given_back_ahead_of_another_waiter_goes_to_the_next_call() {
    for limit in [
        Quota::bucket(0.1, 1.0),
        Quota::sliding(1, secs(10)),
        Quota::period(1, secs(10)),
    ] {
        // A clock counting from this round's start.
        let clock = Clock::monotonic();
        let runs = Arc::new(AtomicUsize::new(0));
        let waiting = RateLimit::new(limit)
            .with_clock(clock.clone())
            .wait_up_to(secs(60));
        assert!(waiting.call(stamp(&clock, &runs)).await.is_ok());
        let mut waiters = Vec::new();
        for _ in 0..2 {
            let (waiting, call) = (waiting.clone(), stamp(&clock, &runs));
            waiters.push(tokio::spawn(async move { waiting.call(call).await }));
            tokio::task::yield_now().await;
        }
        // The first waiter holds 10 s, the second 20 s; the first is dropped at 1 s.
        tokio::time::advance(secs(1)).await;
        waiters[0].abort();
        tokio::task::yield_now().await;
        // Its slot at 10 s is the next call's: a refusal names it, a wait takes it.
        let refusing = waiting.clone().wait_up_to(Duration::ZERO);
        let refused = refusal(refusing.call(stamp(&clock, &runs)).await);
        assert_eq!(refused.wait, secs(9), "{limit:?}");
        assert_eq!(
            waiting.call(stamp(&clock, &runs)).await,
            Ok(secs(10)),
            "{limit:?}"
        );
        assert_eq!(
            waiters.pop().unwrap().await.unwrap(),
            Ok(secs(20)),
            "{limit:?}"
        );
        // And then the limiter's own next slot, after the second waiter's.
        assert_eq!(
            waiting.call(stamp(&clock, &runs)).await,
            Ok(secs(30)),
            "{limit:?}"
        );
        assert_eq!(runs.load(Ordering::Relaxed), 4, "{limit:?}");
    }
}

#[test]
fn threads_calling_at_once_get_the_quota_and_no_more() {
    let (clock, _hand) = Clock::manual(Duration::ZERO);
    let runs = Arc::new(AtomicUsize::new(0));
    for limit in [
        Quota::bucket(1.0, 100.0),
        Quota::sliding(100, secs(60)),
        Quota::period(100, secs(60)),
    ] {
        runs.store(0, Ordering::Relaxed);
        let rate = RateLimit::new(limit).with_clock(clock.clone());
        // Four threads, each with a runtime of its own, 250 calls each.
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (rate, clock, runs) = (rate.clone(), clock.clone(), Arc::clone(&runs));
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    runtime.block_on(async {
                        let mut admitted = 0;
                        for _ in 0..250 {
                            let call = stamp(&clock, &runs);
                            admitted += usize::from(rate.call(call).await.is_ok());
                        }
                        admitted
                    })
                })
            })
            .collect();
        let admitted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(
            (admitted, runs.load(Ordering::Relaxed)),
            (100, 100),
            "{limit:?}"
        );
    }
}
