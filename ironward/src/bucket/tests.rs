//! Unit tests of `bucket` that need its private items.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[test]
fn a_bucket_made_with_tokens_holds_them_within_the_burst() {
    assert_eq!(
        Bucket::with_tokens(1.0, 3.0, 2.5, secs(0)).tokens(secs(0)),
        2.5
    );
    assert_eq!(
        Bucket::with_tokens(1.0, 3.0, 7.0, secs(0)).tokens(secs(0)),
        3.0
    );
    assert_eq!(
        Bucket::with_tokens(1.0, 3.0, f64::NAN, secs(0)).tokens(secs(0)),
        0.0
    );
    // Negative tokens are a debt, paid by the refill before a take passes.
    let mut debt = Bucket::with_tokens(1.0, 3.0, -1.0, secs(0));
    assert_eq!(debt.tokens(secs(0)), -1.0);
    assert_eq!(debt.next(secs(0), 1.0), secs(2));
    assert!(!debt.take(ms(500), 0.0));
    assert!(debt.take(secs(2), 1.0));
    assert_eq!(
        Bucket::with_tokens(1.0, 3.0, f64::NEG_INFINITY, secs(0)).tokens(secs(9)),
        -f64::MAX
    );
    let mut bucket = Bucket::with_tokens(3.0, 1.0, 0.0, secs(5));
    let wait = bucket.next(secs(5), 1.0);
    assert!(!bucket.take(secs(5) + wait - Duration::from_nanos(1), 1.0));
    assert!(bucket.take(secs(5) + wait, 1.0));
}

#[test]
fn starts_full_and_lets_the_burst_through() {
    let mut bucket = Bucket::new(1.0, 3.0, secs(0));
    assert_eq!(bucket.tokens(secs(0)), 3.0);
    assert!(bucket.take(secs(0), 1.0));
    assert!(bucket.take(secs(0), 1.0));
    assert!(bucket.take(secs(0), 1.0));
    assert!(!bucket.take(secs(0), 1.0));
}

#[test]
fn refills_at_the_rate() {
    let mut bucket = Bucket::new(10.0, 1.0, secs(0));
    assert!(bucket.take(secs(0), 1.0));
    assert_eq!(bucket.tokens(ms(50)), 0.5);
    assert!(!bucket.take(ms(50), 1.0));
    assert!(bucket.take(ms(100), 1.0));
}

#[test]
fn never_holds_more_than_the_burst() {
    let bucket = Bucket::new(100.0, 5.0, secs(0));
    assert_eq!(bucket.tokens(secs(3600)), 5.0);
    let mut bucket = Bucket::new(100.0, 5.0, secs(0));
    assert!(bucket.take(secs(0), 5.0));
    assert_eq!(bucket.tokens(secs(3600)), 5.0);
}

#[test]
fn the_clock_starts_at_creation() {
    let mut bucket = Bucket::new(1.0, 2.0, secs(100));
    assert!(bucket.take(secs(100), 2.0));
    assert_eq!(bucket.tokens(secs(101)), 1.0);
}

#[test]
fn takes_fractional_costs() {
    let mut bucket = Bucket::new(0.5, 1.0, secs(0));
    assert!(bucket.take(secs(0), 0.25));
    assert!(bucket.take(secs(0), 0.75));
    assert!(!bucket.take(secs(0), 0.25));
    assert!(bucket.take(ms(500), 0.25));
}

#[test]
fn a_cost_of_zero_always_passes() {
    let mut bucket = Bucket::new(0.0, 1.0, secs(0));
    assert!(bucket.take(secs(0), 1.0));
    assert!(bucket.take(secs(0), 0.0));
    assert!(bucket.take(secs(0), -0.0));
    assert_eq!(bucket.next(secs(0), 0.0), Duration::ZERO);
}

#[test]
fn a_burst_below_one_or_nan_is_raised_to_one() {
    for burst in [0.0, 0.5, -3.0, f64::NEG_INFINITY, f64::NAN] {
        let mut bucket = Bucket::new(1.0, burst, secs(0));
        assert_eq!(bucket.burst(), 1.0, "burst {burst}");
        assert!(bucket.take(secs(0), 1.0));
        assert!(!bucket.take(secs(0), 1.0));
    }
}

#[test]
fn an_infinite_burst_admits_every_finite_cost() {
    let mut bucket = Bucket::new(0.0, f64::INFINITY, secs(0));
    for _ in 0..1000 {
        assert!(bucket.take(secs(0), f64::MAX));
    }
    assert_eq!(bucket.tokens(secs(0)), f64::INFINITY);
    assert_eq!(bucket.next(secs(0), 1e300), Duration::ZERO);
    assert!(!bucket.take(secs(0), f64::INFINITY));
}

#[test]
fn a_negative_nan_or_infinite_rate_never_refills() {
    for rate in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut bucket = Bucket::new(rate, 1.0, secs(0));
        assert_eq!(bucket.rate(), 0.0, "rate {rate}");
        assert!(bucket.take(secs(0), 1.0));
        assert!(!bucket.take(secs(1_000_000), 1.0));
        assert_eq!(bucket.next(secs(1_000_000), 1.0), Duration::MAX);
    }
}

#[test]
fn a_negative_nan_or_infinite_cost_is_refused() {
    let mut bucket = Bucket::new(1.0, 5.0, secs(0));
    for n in [
        -1.0,
        -f64::MIN_POSITIVE,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ] {
        assert!(!bucket.take(secs(0), n), "cost {n}");
        assert_eq!(bucket.next(secs(0), n), Duration::MAX, "cost {n}");
    }
    assert_eq!(bucket.tokens(secs(0)), 5.0);
}

#[test]
fn a_huge_rate_fills_at_once_without_overflowing() {
    let mut bucket = Bucket::new(f64::MAX, 2.0, secs(0));
    assert!(bucket.take(secs(0), 2.0));
    assert_eq!(bucket.tokens(Duration::from_nanos(1)), 2.0);
    assert_eq!(bucket.tokens(Duration::MAX), 2.0);
    assert_eq!(bucket.next(secs(0), 1.0), Duration::from_nanos(1));
}

#[test]
fn next_is_zero_when_the_tokens_are_there() {
    let bucket = Bucket::new(1.0, 2.0, secs(0));
    assert_eq!(bucket.next(secs(0), 2.0), Duration::ZERO);
}

#[test]
fn next_is_forever_past_the_burst() {
    let bucket = Bucket::new(1.0, 2.0, secs(0));
    assert_eq!(bucket.next(secs(0), 2.5), Duration::MAX);
}

#[test]
fn next_counts_from_what_is_already_there() {
    let mut bucket = Bucket::new(2.0, 4.0, secs(0));
    assert!(bucket.take(secs(0), 4.0));
    // At 250 ms half a token is there; the three more needed take 1.5 s at two a second.
    assert_eq!(bucket.next(ms(250), 3.5), ms(1500));
}

// The one place the crate rounds up: a third of a second is not whole nanoseconds.
#[test]
fn next_rounds_up_so_that_taking_then_succeeds() {
    let mut bucket = Bucket::new(3.0, 1.0, secs(0));
    assert!(bucket.take(secs(0), 1.0));
    let wait = bucket.next(secs(0), 1.0);
    assert_eq!(wait, Duration::from_nanos(333_333_334));
    assert!(!bucket.clone().take(wait - Duration::from_nanos(1), 1.0));
    assert!(bucket.take(wait, 1.0));
}

#[test]
fn next_is_exact_for_awkward_rates() {
    for rate in [3.0, 7.0, 0.3, 1e-3, 123.456, 1e9 / 3.0] {
        let mut bucket = Bucket::new(rate, 1.5, secs(7));
        assert!(bucket.take(secs(7), 1.5));
        let now = secs(7) + Duration::from_nanos(1);
        let wait = bucket.next(now, 1.0);
        assert!(wait > Duration::ZERO, "rate {rate}");
        assert!(bucket.clone().take(now + wait, 1.0), "rate {rate}");
        assert!(
            !bucket.take(now + wait - Duration::from_nanos(1), 1.0),
            "rate {rate}"
        );
    }
}

#[test]
fn next_is_forever_when_the_tokens_would_come_after_the_clock_runs_out() {
    let mut bucket = Bucket::new(1e-300, 1.0, secs(0));
    assert!(bucket.take(secs(0), 1.0));
    assert_eq!(bucket.next(secs(0), 1.0), Duration::MAX);
    // Half a token in 584 years.
    let mut bucket = Bucket::new(1.0 / u64::MAX as f64 * 5e8, 1.0, secs(0));
    assert!(bucket.take(secs(0), 1.0));
    assert_eq!(bucket.next(secs(0), 1.0), Duration::MAX);
    assert!(bucket.next(secs(0), 0.4) < Duration::MAX);
}

#[test]
fn a_clock_going_backwards_never_adds_tokens() {
    let mut bucket = Bucket::new(1.0, 1.0, secs(10));
    assert!(bucket.take(secs(10), 1.0));
    assert!(!bucket.take(secs(5), 1.0));
    assert!(!bucket.take(secs(0), 1.0));
    assert_eq!(bucket.tokens(secs(0)), 0.0);
    assert_eq!(bucket.next(secs(0), 1.0), secs(1));
    // The steps back did not move the clock either.
    assert!(bucket.take(secs(11), 1.0));
}

#[test]
fn survives_a_clock_at_the_end_of_its_range() {
    let mut bucket = Bucket::new(1.0, 2.0, Duration::MAX);
    assert!(bucket.take(Duration::MAX, 2.0));
    assert!(!bucket.take(Duration::MAX, 1.0));
    // Time has stopped: the tokens never come back.
    assert_eq!(bucket.next(Duration::MAX, 1.0), Duration::MAX);
    assert_eq!(bucket.tokens(Duration::MAX), 0.0);

    let mut bucket = Bucket::new(1.0, 2.0, secs(0));
    assert!(bucket.take(secs(0), 2.0));
    assert_eq!(bucket.tokens(Duration::MAX), 2.0);
    assert!(bucket.take(Duration::MAX, 2.0));
}

#[test]
fn idle_is_the_time_from_empty_to_full() {
    assert_eq!(Bucket::new(10.0, 20.0, secs(0)).idle(), secs(2));
    assert_eq!(Bucket::new(4.0, 2.0, secs(9)).idle(), ms(500));
    // A third of a second is not whole nanoseconds: rounded up, so the bucket is full.
    let idle = Bucket::new(3.0, 1.0, secs(0)).idle();
    assert_eq!(idle, Duration::from_nanos(333_333_334));
    for (rate, burst) in [
        (3.0, 1.0),
        (7.0, 2.5),
        (0.3, 1.0),
        (123.456, 9.75),
        (1e9 / 3.0, 5.0),
    ] {
        let mut bucket = Bucket::new(rate, burst, secs(0));
        assert!(bucket.take(secs(0), burst));
        let idle = bucket.idle();
        assert_eq!(bucket.tokens(idle), burst, "rate {rate}, burst {burst}");
        assert!(
            bucket.tokens(idle - Duration::from_nanos(1)) < burst,
            "rate {rate}, burst {burst}"
        );
    }
}

#[test]
fn idle_does_not_depend_on_what_the_bucket_holds_or_its_clock() {
    let mut bucket = Bucket::new(2.0, 4.0, secs(100));
    let fresh = bucket.idle();
    assert!(bucket.take(secs(100), 3.5));
    assert_eq!(bucket.idle(), fresh);
    assert_eq!(
        Bucket::with_tokens(2.0, 4.0, 1.0, Duration::MAX).idle(),
        fresh
    );
}

#[test]
fn idle_is_forever_for_a_bucket_that_never_fills() {
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            Bucket::new(rate, 5.0, secs(0)).idle(),
            Duration::MAX,
            "rate {rate}"
        );
    }
    assert_eq!(
        Bucket::new(1.0, f64::INFINITY, secs(0)).idle(),
        Duration::MAX
    );
    // Longer than the clock's range.
    assert_eq!(Bucket::new(1e-300, 1.0, secs(0)).idle(), Duration::MAX);
    // A burst below 1 is 1, a huge rate fills in a nanosecond.
    assert_eq!(Bucket::new(2.0, 0.0, secs(0)).idle(), ms(500));
    assert_eq!(
        Bucket::new(f64::MAX, 2.0, secs(0)).idle(),
        Duration::from_nanos(1)
    );
}

#[test]
fn retuning_refills_at_the_old_rate_up_to_now_then_at_the_new_one() {
    let mut bucket = Bucket::new(10.0, 5.0, secs(0));
    assert!(bucket.take(secs(0), 5.0));
    bucket.retune(1.0, 5.0, ms(200));
    // Two tokens at ten a second, then one a second.
    assert_eq!(bucket.tokens(ms(200)), 2.0);
    assert_eq!(bucket.tokens(ms(1200)), 3.0);
    assert_eq!(bucket.next(ms(200), 3.0), secs(1));
    let twin = Bucket::with_tokens(1.0, 5.0, 2.0, ms(200));
    for at in [ms(200), ms(700), secs(3), secs(60)] {
        assert_eq!(bucket.tokens(at), twin.tokens(at));
        assert_eq!(bucket.next(at, 4.5), twin.next(at, 4.5));
    }
}

#[test]
fn retuning_caps_the_tokens_at_the_new_burst_and_never_fills_a_larger_one() {
    let mut bucket = Bucket::new(1.0, 10.0, secs(0));
    // Full, and capped at the old burst however long it waited.
    bucket.retune(1.0, 4.0, secs(100));
    assert_eq!(bucket.tokens(secs(100)), 4.0);
    bucket.retune(1.0, 50.0, secs(100));
    assert_eq!(bucket.tokens(secs(100)), 4.0);
    assert!(!bucket.take(secs(100), 5.0));
    assert!(bucket.take(secs(101), 5.0));
    // An infinite burst held infinite tokens: a finite one caps them.
    let mut endless = Bucket::new(0.0, f64::INFINITY, secs(0));
    endless.retune(0.0, 7.0, secs(0));
    assert_eq!(endless.tokens(secs(0)), 7.0);
}

#[test]
fn retuning_reads_the_rate_and_burst_as_new_does() {
    let mut bucket = Bucket::new(2.0, 3.0, secs(0));
    for (rate, burst) in [
        (f64::NAN, f64::NAN),
        (-1.0, 0.5),
        (f64::INFINITY, f64::NEG_INFINITY),
    ] {
        bucket.retune(rate, burst, secs(1));
        let fresh = Bucket::new(rate, burst, secs(0));
        assert_eq!(
            (bucket.rate(), bucket.burst()),
            (fresh.rate(), fresh.burst())
        );
        assert_eq!((bucket.rate(), bucket.burst()), (0.0, 1.0));
    }
    assert_eq!(bucket.tokens(Duration::MAX), 1.0);
}

#[test]
fn retuning_reads_a_clock_going_backwards_as_the_latest_seen() {
    let mut bucket = Bucket::new(1.0, 10.0, secs(10));
    assert!(bucket.take(secs(10), 10.0));
    // Read as 10 s: nothing accrued at the old rate, and the clock stays at 10 s.
    bucket.retune(5.0, 10.0, secs(2));
    assert_eq!(bucket.tokens(secs(0)), 0.0);
    assert_eq!(bucket.tokens(secs(11)), 5.0);
}

#[test]
fn retuning_to_the_same_policy_changes_nothing() {
    let mut bucket = Bucket::new(3.0, 2.0, secs(0));
    assert!(bucket.take(secs(0), 2.0));
    let twin = bucket.clone();
    // Not even the clock: a later `now` read before this one still counts from 0 s.
    bucket.retune(3.0, 2.0, secs(50));
    assert_eq!(bucket.tokens(ms(100)), twin.tokens(ms(100)));
    assert_eq!(bucket.next(ms(100), 1.0), twin.next(ms(100), 1.0));
    // A NaN burst is 1 as read, which is the burst `new` gave `Bucket::new(_, 0.2, _)`.
    let mut low = Bucket::new(1.0, 0.2, secs(0));
    let low_twin = low.clone();
    low.retune(1.0, f64::NAN, secs(9));
    assert_eq!(low.tokens(secs(1)), low_twin.tokens(secs(1)));
}

#[test]
fn a_clone_spends_independently() {
    let mut bucket = Bucket::new(0.0, 1.0, secs(0));
    let mut twin = bucket.clone();
    assert!(bucket.take(secs(0), 1.0));
    assert!(twin.take(secs(0), 1.0));
    assert!(!bucket.take(secs(0), 1.0));
}

#[test]
fn a_refusal_gives_the_tokens_held_and_the_wait_for_the_rest() {
    let mut bucket = Bucket::new(2.0, 4.0, secs(0));
    assert!(bucket.take(secs(0), 4.0));
    // At 250 ms half a token is there; the three more needed take 1.5 s at two a second.
    let reason = bucket.check(ms(250), 3.5).expect_err("half a token");
    assert_eq!(
        reason,
        BucketReason {
            tokens: 0.5,
            wanted: 3.5,
            burst: 4.0,
            rate: 2.0,
            at: ms(250),
        }
    );
    assert_eq!(reason.next(), ms(1500));
    // The refusal kept the tokens: the bucket answers as the reason does.
    assert_eq!(bucket.tokens(ms(250)), reason.tokens);
    assert_eq!(bucket.next(ms(250), 3.5), reason.next());
}

#[test]
fn a_refusal_reads_the_clock_as_the_decision_did() {
    let mut bucket = Bucket::new(3.0, 1.0, secs(10));
    assert!(bucket.take(secs(10), 1.0));
    // A clock going backwards is read as the latest seen, and so is the reason's.
    let reason = bucket.check(secs(5), 1.0).expect_err("empty");
    assert_eq!((reason.tokens, reason.at), (0.0, secs(10)));
    // A third of a second, rounded up as `next` rounds it.
    assert_eq!(reason.next(), Duration::from_nanos(333_333_334));
    let reason = bucket
        .check(Duration::MAX, 2.0)
        .expect_err("over the burst");
    assert_eq!(reason.at, Duration::from_nanos(u64::MAX));
    assert_eq!(reason.next(), Duration::MAX);
}

#[test]
fn a_refused_cost_that_is_no_cost_never_comes() {
    let mut bucket = Bucket::new(1.0, 5.0, secs(0));
    for n in [-1.0, f64::NAN, f64::INFINITY, 6.0] {
        let reason = bucket
            .check(secs(0), n)
            .expect_err("not a cost a bucket charges");
        assert_eq!(reason.tokens, 5.0);
        assert_eq!(reason.next(), Duration::MAX, "{n}");
        assert_eq!(reason.next(), bucket.next(secs(0), n), "{n}");
    }
    let mut still = Bucket::new(0.0, 5.0, secs(0));
    assert!(still.take(secs(0), 5.0));
    assert_eq!(still.check(secs(9), 1.0).unwrap_err().next(), Duration::MAX);
}

#[test]
fn take_is_check_with_the_reason_discarded() {
    let mut bucket = Bucket::new(7.0, 3.0, secs(0));
    let mut twin = bucket.clone();
    let mut walk = crate::internal::walk::Walk::new();
    let mut refused = 0;
    for step in 0..5_000 {
        let (now, x) = walk.step();
        let n = (x % 5) as f64 * 0.75;
        let now = ms(now / 50);
        match (bucket.take(now, n), twin.check(now, n)) {
            (true, Ok(())) => {}
            // The wait from the bucket as the refusal left it, its tokens counted at `now`.
            (false, Err(reason)) => {
                assert_eq!(reason.next(), twin.next(now, n), "step {step}");
                refused += 1;
            }
            (taken, checked) => panic!("step {step}: take {taken}, check {checked:?}"),
        }
        assert_eq!(bucket.tokens(now), twin.tokens(now));
    }
    assert!(refused > 0, "the walk refuses some takes");
}
