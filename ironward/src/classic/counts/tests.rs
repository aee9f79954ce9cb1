//! The record's counts against the reference implementations' window tests: resilience4j's
//! `FixedSizeSlidingWindowMetricsTest` and `SlidingTimeWindowMetricsTest` (resilience4j-core,
//! `io.github.resilience4j.core.metrics`; `LockFreeFixedSizeSlidingWindowMetricsTest` and
//! `LockFreeSlidingTimeWindowMetricsTest` stress the same windows under threads and add no
//! numbers), Polly v8's `Health/RollingHealthMetricsTests` and `Health/SingleHealthMetricsTests`,
//! and the counting half of failsafe-go's `TestGetSuccessAndFailureStats`.

use alloc::vec::Vec;
use core::time::Duration;

use super::{Counts, Tallies};
use crate::classic::Record;

const MS: u64 = 1_000_000;
const S: u64 = 1_000 * MS;

/// Calls, failures and slow calls, as resilience4j's snapshot counts them.
fn tallies(calls: u64, failures: u64, slow: u64) -> Tallies {
    Tallies {
        calls,
        failures,
        slow,
    }
}

fn count(calls: u32) -> Counts {
    Counts::new(Record::Count { calls })
}

fn time(span: Duration, buckets: u32) -> Counts {
    Counts::new(Record::Time { span, buckets })
}

// `FixedSizeSlidingWindowMetricsTest` `checkInitialBucketCreation`, `testRecordSuccess`,
// `testRecordError`, `testRecordSlowSuccess` (a window of 5) and `testSlowCallsPercentage`:
// a slow success, a slow error and three successes are 40 % slow.
#[test]
fn fixed_size_window_records_each_outcome() {
    assert_eq!(count(5).totals(0), Tallies::default());
    for (failed, slow, expected) in [
        (false, false, tallies(1, 0, 0)),
        (true, false, tallies(1, 1, 0)),
        (false, true, tallies(1, 0, 1)),
    ] {
        let mut window = count(5);
        window.add(0, failed, slow);
        assert_eq!(window.totals(0), expected);
    }
    let mut window = count(5);
    for (failed, slow) in [
        (false, true),
        (true, true),
        (false, false),
        (false, false),
        (false, false),
    ] {
        window.add(0, failed, slow);
    }
    assert_eq!(window.totals(0), tallies(5, 1, 2));
    assert_eq!(window.totals(0).shares(), (0.2, 0.4));
}

// `testSlidingWindowMetrics`: a window of 4; an error and four successes, the error dropping
// out with the fifth call.
#[test]
fn fixed_size_window_slides() {
    let mut window = count(4);
    let expected = [
        tallies(1, 1, 0),
        tallies(2, 1, 0),
        tallies(3, 1, 0),
        tallies(4, 1, 0),
        tallies(4, 0, 0),
    ];
    for (i, want) in expected.into_iter().enumerate() {
        window.add(0, i == 0, false);
        assert_eq!(window.totals(0), want, "call {i}");
    }
    assert_eq!(window.totals(0).shares().0, 0.0);
}

// `testSlidingWindowMetricsWithSlowCalls`: a window of 2; a slow error, a slow success, then
// three successes push both out.
#[test]
fn fixed_size_window_slides_slow_calls_out() {
    let mut window = count(2);
    let steps = [
        ((true, true), tallies(1, 1, 1)),
        ((false, true), tallies(2, 1, 2)),
        ((false, false), tallies(2, 0, 1)),
        ((false, false), tallies(2, 0, 0)),
        ((false, false), tallies(2, 0, 0)),
    ];
    for (i, ((failed, slow), want)) in steps.into_iter().enumerate() {
        window.add(0, failed, slow);
        assert_eq!(window.totals(0), want, "call {i}");
    }
}

// `SlidingTimeWindowMetricsTest.shouldClearSlidingTimeWindowMetrics`: a window of 5 s, a
// bucket a second, the clock on a whole second at the start.
#[test]
fn time_window_clears_as_the_span_passes() {
    let mut window = time(Duration::from_secs(5), 5);
    window.add(0, true, false);
    assert_eq!(window.totals(0), tallies(1, 1, 0));
    window.add(100 * MS, false, false);
    assert_eq!(window.totals(100 * MS), tallies(2, 1, 0));
    window.add(800 * MS, true, true);
    assert_eq!(window.totals(800 * MS), tallies(3, 2, 1));
    assert_eq!(
        window.totals(4_800 * MS),
        tallies(3, 2, 1),
        "4 s on: still in"
    );
    assert_eq!(
        window.totals(5_800 * MS),
        Tallies::default(),
        "5 s on: gone"
    );
    window.add(5_900 * MS, false, false);
    assert_eq!(window.totals(5_900 * MS), tallies(1, 0, 0));
    window.add(10_900 * MS, false, false);
    assert_eq!(window.totals(10_900 * MS), tallies(1, 0, 0));
}

// `SlidingTimeWindowMetricsTest.testSlidingTimeWindowMetrics`: calls at 0, 0.1, 0.2, then a
// second apart; the first second's three leave together at 5.2 s.
#[test]
fn time_window_drops_whole_buckets() {
    let mut window = time(Duration::from_secs(5), 5);
    let steps = [
        (0, true, tallies(1, 1, 0)),
        (100 * MS, false, tallies(2, 1, 0)),
        (200 * MS, false, tallies(3, 1, 0)),
        (1_200 * MS, false, tallies(4, 1, 0)),
        (2_200 * MS, false, tallies(5, 1, 0)),
        (3_200 * MS, true, tallies(6, 2, 0)),
        (4_200 * MS, false, tallies(7, 2, 0)),
        (5_200 * MS, false, tallies(5, 1, 0)),
        (6_200 * MS, false, tallies(5, 1, 0)),
        (11_200 * MS, false, tallies(1, 0, 0)),
    ];
    for (t, failed, want) in steps {
        window.add(t, failed, false);
        assert_eq!(window.totals(t), want, "at {t} ns");
    }
}

// Polly `RollingHealthMetricsTests` (a sampling duration of 10 s in 10 windows):
// `Ctor_EnsureDefaults`, `Increment_Ok` (one failure, four successes: 0.2),
// `GetHealthInfo_EnsureWindowRespected`, `GetHealthInfo_EnsureWindowCapacityRespected` and
// `GetHealthInfo_SamplingDurationRespected` (with and without 1 ms of variance).
#[test]
fn rolling_health_metrics() {
    let new = || time(Duration::from_secs(10), 10);
    assert_eq!(new().totals(0), Tallies::default());
    let mut metrics = new();
    for failed in [true, false, false, false, false] {
        metrics.add(0, failed, false);
    }
    assert_eq!(metrics.totals(0).shares().0, 0.2);

    // Two calls every 2 s, the first two rounds with a failure; read 2 s after each round.
    let mut metrics = new();
    let mut read = Vec::new();
    for i in 0..5_u64 {
        metrics.add(2 * i * S, i < 2, false);
        metrics.add(2 * i * S, false, false);
        read.push(metrics.totals(2 * (i + 1) * S));
    }
    read.push(metrics.totals(12 * S));
    assert_eq!(read[0], tallies(2, 1, 0));
    assert_eq!(read[1], tallies(4, 2, 0));
    assert_eq!(read[3], tallies(8, 2, 0));
    assert_eq!(read[4], tallies(8, 1, 0));
    assert_eq!(read[4].shares().0, 0.125);
    assert_eq!(read[5], tallies(6, 0, 0));

    let mut metrics = new();
    for i in 0..10 {
        metrics.add(i * S, false, false);
    }
    assert_eq!(metrics.totals(10 * S).calls, 9);
    assert_eq!(metrics.totals(11 * S).calls, 8);

    for variance in [0, MS] {
        let mut metrics = new();
        metrics.add(0, false, false);
        metrics.add(0, false, false);
        assert_eq!(metrics.totals(10 * S + variance), Tallies::default());
    }
}

// Polly `SingleHealthMetricsTests` (one window of 100 ms): `Increment_Ok` and
// `SamplingDurationRespected_Ok`.
#[test]
fn single_health_metrics() {
    let mut metrics = time(Duration::from_millis(100), 1);
    for failed in [true, false, false, false, false] {
        metrics.add(0, failed, false);
    }
    assert_eq!(metrics.totals(0), tallies(5, 1, 0));
    assert_eq!(metrics.totals(99 * MS).calls, 5);
    assert_eq!(metrics.totals(100 * MS), Tallies::default());
}

// failsafe-go `TestGetSuccessAndFailureStats` (`WithFailureThresholdRatio(5, 10)`: a count
// window of 10): seven calls in turn are 3 failures (0.43); fifteen more with a failure
// every fourth leave 2 failures and 8 successes of the last ten (0.2).
#[test]
fn failsafe_count_stats() {
    let mut window = count(10);
    for i in 0..7 {
        window.add(0, i % 2 == 1, false);
    }
    let totals = window.totals(0);
    assert_eq!((totals.calls, totals.failures), (7, 3));
    assert!((totals.shares().0 - 0.43).abs() < 0.005);
    for i in 0..15 {
        window.add(0, i % 4 == 0, false);
    }
    let totals = window.totals(0);
    assert_eq!((totals.calls, totals.failures), (10, 2));
    assert_eq!(totals.shares().0, 0.2);
}

#[test]
fn sizes_are_held_and_the_clock_end_is_a_bucket_start() {
    assert_eq!(count(0).capacity(), 1);
    assert_eq!(count(u32::MAX).capacity(), 65_536);
    let mut end = time(Duration::from_nanos(10), 10);
    end.add(u64::MAX, true, false);
    assert_eq!(end.totals(u64::MAX), tallies(1, 1, 0));
    let mut whole = time(Duration::MAX, u32::MAX);
    whole.add(u64::MAX, false, true);
    assert_eq!(whole.totals(u64::MAX), tallies(1, 0, 1));
    assert!(whole.fits(Record::Time {
        span: Duration::MAX,
        buckets: 65_536
    }));
}

/// What a record holds by a list of its calls, each `(t, failed, slow)`: the last `last` of
/// them whose time `keep` takes.
fn naive(calls: &[(u64, bool, bool)], keep: impl Fn(u64) -> bool, last: usize) -> Tallies {
    let mut sum = Tallies::default();
    let skip = calls.len().saturating_sub(last);
    for &(_, failed, slow) in calls.iter().skip(skip).filter(|call| keep(call.0)) {
        sum.add(failed, slow);
    }
    sum
}

proptest::proptest! {
    // Any run of calls at readings that go forward, in steps within a bucket and across
    // several: a count record holds the last `size` of them and a time record the ones whose
    // bucket has not left the span, however its newest stretch was last read.
    #[test]
    fn each_record_holds_what_a_list_of_its_calls_says(
        size in 1..12u32,
        (width, len) in (1..50u64, 1..8u32),
        calls in proptest::collection::vec(
            (proptest::prop_oneof![0..5u64, 0..200u64], proptest::bool::ANY, proptest::bool::ANY),
            0..120,
        ),
    ) {
        let mut ring = count(size);
        let mut span = time(Duration::from_nanos(width * u64::from(len)), len);
        let mut seen = Vec::new();
        let mut t = 1_000;
        for (step, failed, slow) in calls {
            t += step;
            ring.add(t, failed, slow);
            span.add(t, failed, slow);
            seen.push((t, failed, slow));
            proptest::prop_assert_eq!(
                ring.totals(t),
                naive(&seen, |_| true, size as usize)
            );
            // Read at the call's time and a little after it, in this stretch and the next.
            for later in [t, t + width / 2, t + width] {
                let start = later - later % width;
                let oldest = start.saturating_sub(width * (u64::from(len) - 1));
                let held = naive(&seen, |at| at - at % width >= oldest, usize::MAX);
                proptest::prop_assert_eq!(span.totals(later), held);
            }
        }
    }

    // The trip test without a division where a share is 0 answers as the shares compared with
    // the rates do, for every rate the policy can read, its edges included.
    #[test]
    fn reach_is_the_shares_compared_with_the_rates(
        calls in 0..200u64,
        failures in 0..200u64,
        slow in 0..200u64,
        rates in (0..6usize, 0..6usize, 0.0..=1.0f64),
    ) {
        let read = [f64::MIN_POSITIVE, 1.0, f64::INFINITY, 0.5, 0.1, rates.2];
        let rates = (read[rates.0], read[rates.1]);
        let tallies = Tallies { calls, failures: failures.min(calls), slow: slow.min(calls) };
        let shares = tallies.shares();
        proptest::prop_assert_eq!(
            tallies.reach(rates),
            shares.0 >= rates.0 || shares.1 >= rates.1
        );
    }
}

// A count record of one call keeps the latest only, and a full one forgets the oldest as each
// call comes: the ring's next slot wraps at its end.
#[test]
fn the_ring_wraps_at_its_end() {
    let mut one = count(1);
    for (failed, slow) in [(true, true), (false, true), (false, false)] {
        one.add(0, failed, slow);
        assert_eq!(
            one.totals(0),
            tallies(1, u64::from(failed), u64::from(slow))
        );
    }
    let mut three = count(3);
    for failed in [true, true, false, false, false, true] {
        three.add(0, failed, false);
    }
    assert_eq!(three.totals(0), tallies(3, 1, 0));
}

// Successes in bulk land in the newest stretch's bucket, which a later read of that stretch
// and a pass over every bucket both count.
#[test]
fn bulk_successes_count_in_the_newest_stretch() {
    let mut span = time(Duration::from_nanos(40), 4);
    span.add(5, true, false);
    span.add(12, false, false);
    span.add_to_newest(1_000, u64::MAX);
    assert_eq!(span.totals(19), tallies(1_002, 1, 0));
    // A later stretch reads the buckets anew: the same calls, until their buckets leave the
    // span (the first at 40 ns, the second at 50 ns).
    assert_eq!(span.totals(39), tallies(1_002, 1, 0));
    assert_eq!(span.totals(41), tallies(1_001, 0, 0));
    assert_eq!(span.totals(50), Tallies::default());
}
