extern crate std;

use std::format;

use super::*;
use crate::Bucket;

const MS: fn(u64) -> Duration = Duration::from_millis;

#[test]
fn refuses_past_the_burst_and_reports_the_numbers() {
    let bucket = SharedBucket::new(10.0, 20.0, MS(0));
    assert!((0..20).all(|_| bucket.take(MS(0), 1.0)));
    let reason = bucket.check(MS(0), 1.0).expect_err("empty");
    assert_eq!(
        reason,
        BucketReason {
            tokens: 0.0,
            wanted: 1.0,
            burst: 20.0,
            rate: 10.0,
            at: MS(0)
        }
    );
    assert_eq!(reason.next(), MS(100));
    assert_eq!(bucket.next(MS(0), 1.0), MS(100));
}

// `Bucket::next`'s own example: at 3 a second one token is 333 333 333.3 ns.
#[test]
fn a_third_of_a_second_rounds_up_to_the_first_nanosecond_that_admits() {
    let bucket = SharedBucket::new(3.0, 1.0, Duration::ZERO);
    assert!(bucket.take(Duration::ZERO, 1.0));
    let wait = bucket.next(Duration::ZERO, 1.0);
    assert_eq!(wait, Duration::from_nanos(333_333_334));
    let mut alone = Bucket::new(3.0, 1.0, Duration::ZERO);
    assert!(alone.take(Duration::ZERO, 1.0));
    assert_eq!(alone.next(Duration::ZERO, 1.0), wait);
    assert!(!bucket.take(wait - Duration::from_nanos(1), 1.0));
    assert!(bucket.take(wait, 1.0));
}

#[test]
fn hostile_rates_bursts_and_costs_read_as_bucket_reads_them() {
    let never = SharedBucket::new(f64::NAN, f64::NAN, MS(0));
    assert_eq!((never.rate(), never.burst()), (0.0, 1.0));
    assert!(never.take(MS(0), 1.0));
    assert!(!never.take(Duration::MAX, 1.0));
    assert_eq!(never.next(MS(0), 1.0), Duration::MAX);
    assert_eq!(never.idle(), Duration::MAX);
    for n in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(!never.take(MS(0), n), "{n}");
        assert_eq!(never.next(MS(0), n), Duration::MAX);
    }
    assert!(never.take(MS(0), 0.0), "a cost of zero always passes");

    let open = SharedBucket::new(1.0, f64::INFINITY, MS(0));
    assert!(open.take(MS(0), f64::MAX));
    assert!(open.take(MS(0), 1e300));
    assert_eq!(open.tokens(MS(0)), f64::INFINITY);
    assert_eq!(open.check_left(MS(0), 5.0), Ok(f64::INFINITY));
    assert!(!open.take(MS(0), f64::INFINITY));
    assert_eq!(open.idle(), Duration::MAX);
}

#[test]
fn the_end_of_the_clock_stops_time_rather_than_wrapping() {
    let bucket = SharedBucket::new(1.0, 2.0, Duration::from_nanos(u64::MAX - 5));
    assert!(bucket.take(Duration::MAX, 2.0));
    assert!(!bucket.take(Duration::MAX, 1.0));
    assert_eq!(bucket.tokens(Duration::MAX), 0.0);
    assert_eq!(bucket.next(Duration::MAX, 1.0), Duration::MAX);

    let early = SharedBucket::new(1e9, 1e9, Duration::ZERO);
    assert!(early.take(Duration::MAX, 1e9));
    assert!(!early.take(Duration::MAX, 1.0), "time has stopped");
    assert_eq!(early.next(Duration::MAX, 1.0), Duration::MAX);
}

#[test]
fn an_earlier_reading_finds_fewer_tokens_never_more() {
    let bucket = SharedBucket::new(1.0, 2.0, MS(0));
    assert!(bucket.take(MS(0), 2.0));
    assert_eq!(bucket.tokens(MS(1500)), 1.5);
    assert!(bucket.take(MS(1500), 1.0));
    // Back to 1 s: what was left at 1.5 s less the half second not yet accrued.
    assert_eq!(bucket.tokens(MS(1000)), 0.0);
    assert!(!bucket.take(MS(1000), 0.5));
    assert!(bucket.take(MS(1000), 0.0));
    assert_eq!(bucket.tokens(MS(2000)), 1.0);
}

// A retune read before the takes that emptied the bucket converts it where it was empty:
// it does not hand back what they spent.
#[test]
fn a_retune_at_an_earlier_reading_frees_nothing_the_takes_spent() {
    let bucket = SharedBucket::new(100.0, 10.0, MS(0));
    assert!(bucket.take(MS(50), 10.0));
    bucket.retune(1000.0, 3.0, MS(0));
    assert_eq!(bucket.tokens(MS(50)), 0.0);
    assert!(!bucket.take(MS(50), 1.0));
    // From empty at 50 ms, at the new rate: a token a millisecond, up to three.
    assert!(bucket.take(MS(51), 1.0));
    assert_eq!(bucket.tokens(MS(60)), 3.0);
}

#[test]
fn a_refill_past_the_word_s_span_never_refills() {
    // One a year with a burst of a hundred: a hundred years to refill.
    let year = 365.25 * 86_400.0;
    let bucket = SharedBucket::new(1.0 / year, 100.0, MS(0));
    assert!(bucket.take(MS(0), 100.0));
    assert!(!bucket.take(Duration::from_secs(400 * 86_400 * 365), 1.0));
    assert_eq!(bucket.idle(), Duration::MAX);
}

#[test]
fn retune_keeps_the_tokens_and_moves_to_a_new_generation() {
    let bucket = SharedBucket::new(1.0, 10.0, MS(0));
    assert!(bucket.take(MS(0), 10.0));
    for round in 0..9_u32 {
        bucket.retune(f64::from(round % 3 + 1), 10.0, MS(0));
    }
    assert_eq!(bucket.tokens(MS(0)), 0.0);
    assert_eq!(bucket.rate(), 3.0);
    bucket.retune(0.0, 10.0, MS(1000));
    assert_eq!(bucket.tokens(Duration::MAX), 3.0);
    bucket.retune(1.0, f64::INFINITY, MS(1000));
    assert_eq!(bucket.tokens(MS(2000)), 4.0);
}

#[test]
fn debug_shows_the_terms_and_when_it_is_full() {
    let bucket = SharedBucket::new(10.0, 20.0, MS(5));
    assert!(bucket.take(MS(5), 2.0));
    assert_eq!(
        format!("{bucket:?}"),
        "SharedBucket { rate: 10.0, burst: 20.0, full_at: 205ms }"
    );
}
