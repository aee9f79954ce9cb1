//! Unit tests of `SharedSreBreaker` that read its fast path's state.

use super::*;
use ironward::SRE;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Whether the fast path is open, as the lock holder sees it.
fn is_open(breaker: &SharedSreBreaker) -> bool {
    breaker.exact().open
}

#[test]
fn a_fresh_breaker_opens_the_fast_path_until_its_first_bucket_ends() {
    let breaker = SharedSreBreaker::new(SRE, ms(1_000));
    assert!(is_open(&breaker));
    assert_eq!(breaker.horizon.load(Ordering::Relaxed), nanos(ms(1_250)));
}

#[test]
fn healthy_calls_before_the_horizon_take_no_lock() {
    let breaker = SharedSreBreaker::new(SRE, ms(0));
    let held = breaker.exact();
    // With the lock held here, a call that took it would never return.
    let permit = breaker.allow(ms(10), 0.0).expect("healthy");
    breaker.pass(permit, ms(20));
    drop(held);
    let mut successes = 0;
    breaker
        .snapshot()
        .window()
        .each(ms(20), |t| successes += t.success);
    assert_eq!(successes, 1);
}

#[test]
fn a_failure_that_ends_the_healthy_answer_closes_the_fast_path() {
    let breaker = SharedSreBreaker::new(SRE, ms(0));
    for _ in 0..10 {
        let permit = breaker.allow(ms(0), 0.99).expect("over the ratio");
        breaker.fail(permit, ms(0));
    }
    assert!(!is_open(&breaker));
    assert_eq!(breaker.horizon.load(Ordering::Relaxed), 0);
    // Refused under the lock, with the reason.
    let reason = breaker.check(ms(0), 0.0).expect_err("under the ratio");
    assert_eq!((reason.total, reason.accepts), (10, 0));
}

// Edge cases: a floor below 1 never opens the fast path (each success raises the drop a
// little), and a protection that covers every count keeps it open through failures.
#[test]
fn a_floor_below_one_keeps_the_fast_path_closed_and_no_throttle_keeps_it_open() {
    let low = SharedSreBreaker::new(Sre { floor: 0.5, ..SRE }, ms(0));
    assert!(!is_open(&low));
    let permit = low.allow(ms(0), 0.0).expect("a fresh breaker");
    low.pass(permit, ms(0));
    assert_eq!(low.ratio(ms(0)), 0.0);
    let off = SharedSreBreaker::new(
        Sre {
            protection: f64::INFINITY,
            ..SRE
        },
        ms(0),
    );
    for _ in 0..100 {
        let permit = off.allow(ms(0), 0.0).expect("the throttle is off");
        off.fail(permit, ms(0));
    }
    assert!(is_open(&off));
}

// A retune to narrower buckets does not publish a horizon earlier than one an add may still
// hold; the fast path waits for a bucket that ends past it.
#[test]
fn the_horizon_never_moves_back() {
    let breaker = SharedSreBreaker::new(SRE, ms(0));
    assert_eq!(breaker.horizon.load(Ordering::Relaxed), nanos(ms(250)));
    let _was = breaker.retune(
        Sre {
            window: Duration::from_secs(1),
            ..SRE
        },
        ms(10),
    );
    // 25 ms buckets from 10 ms: the first ends at 35 ms, before 250 ms.
    assert!(!is_open(&breaker));
    // The bucket of 230 ms ends at 235 ms, still before.
    let permit = breaker.allow(ms(230), 0.0).expect("healthy");
    breaker.pass(permit, ms(230));
    assert!(!is_open(&breaker));
    // The bucket of 240 ms ends at 260 ms: open again.
    let permit = breaker.allow(ms(240), 0.0).expect("healthy");
    breaker.pass(permit, ms(240));
    assert!(is_open(&breaker));
    assert_eq!(breaker.horizon.load(Ordering::Relaxed), nanos(ms(260)));
}

// Edge cases: times at the end of the clock go to the lock (nothing is before a horizon of
// `u64::MAX` nanoseconds there), and a full stripe hands its successes over.
#[test]
fn the_end_of_the_clock_and_a_full_stripe_lose_nothing() {
    let breaker = SharedSreBreaker::new(SRE, Duration::MAX);
    let permit = breaker.allow(Duration::MAX, 0.0).expect("healthy");
    breaker.pass(permit, Duration::MAX);
    let mut successes = 0;
    breaker
        .snapshot()
        .window()
        .each(Duration::MAX, |t| successes += t.success);
    assert_eq!(successes, 1);

    let breaker = SharedSreBreaker::new(SRE, ms(0));
    breaker
        .stripes
        .mine()
        .successes
        .store(FULL - 1, Ordering::Relaxed);
    for _ in 0..2 {
        let permit = breaker.allow(ms(1), 0.0).expect("healthy");
        breaker.pass(permit, ms(1));
    }
    assert!(breaker.stripes.mine().successes.load(Ordering::Relaxed) < FULL);
    let mut successes = 0;
    breaker
        .snapshot()
        .window()
        .each(ms(1), |t| successes += t.success);
    assert_eq!(successes, FULL + 1);
}

#[test]
fn debug_shows_the_policy_and_never_waits_for_the_lock() {
    let breaker = SharedSreBreaker::new(SRE, ms(0));
    assert!(format!("{breaker:?}").contains("k: 1.5"));
    let _held = breaker.exact();
    assert!(format!("{breaker:?}").contains("<locked>"));
}

#[test]
fn a_refusing_breaker_refuses_without_the_lock() {
    let breaker = SharedSreBreaker::new(SRE, ms(0));
    for _ in 0..100 {
        let permit = breaker.allow(ms(0), 0.99).expect("over the ratio");
        breaker.fail(permit, ms(0));
    }
    assert!(breaker.exact().refusing);
    let word = breaker.stripes.mine().refused.load(Ordering::Relaxed);
    assert_eq!(word & OPEN, OPEN, "{word:x}");
    assert_eq!(breaker.view.until.load(Ordering::Relaxed), nanos(ms(250)));
}
