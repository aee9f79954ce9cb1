//! Out-of-range input: NaN and infinite rates and factors, zero and enormous sizes and
//! durations, a clock at its last nanosecond. Each is read as the docs say, and none panics
//! or aborts on an allocation.

use core::time::Duration;

use ironward::classic::{HalfOpen, OpenWait, Record, State};
use ironward::{CLASSIC, Classic, ClassicBreaker};

use super::{call, open, secs};

fn count(calls: u32) -> Classic {
    Classic {
        record: Record::Count { calls },
        minimum: calls,
        ..CLASSIC
    }
}

/// Whether `outcomes` (failed or not) at 0 open a breaker under `policy`.
fn opens(policy: Classic, outcomes: &[bool]) -> bool {
    let mut breaker = ClassicBreaker::new(policy, secs(0));
    for &failed in outcomes {
        if breaker.state(secs(0)) != State::Closed {
            break;
        }
        call(&mut breaker, secs(0), Duration::ZERO, failed);
    }
    breaker.state(secs(0)) == State::Open
}

#[test]
fn infinite_and_nan_rates_read_as_documented() {
    let at = |failure_rate| Classic {
        failure_rate,
        ..count(4)
    };
    // Infinity is 1: only every call failed opens it.
    assert!(!opens(at(f64::INFINITY), &[true, true, true, false]));
    assert!(opens(at(f64::INFINITY), &[true, true, true, true]));
    // Minus infinity is the least above 0: one failure of four opens it.
    assert!(opens(at(f64::NEG_INFINITY), &[false, false, false, true]));
    assert!(!opens(at(f64::NEG_INFINITY), &[false, false, false, false]));
    // NaN is a rate no share reaches.
    assert!(!opens(at(f64::NAN), &[true; 8]));
    let slow = Classic {
        slow_rate: f64::NAN,
        slow_call: Duration::ZERO,
        ..count(2)
    };
    let mut breaker = ClassicBreaker::new(slow, secs(0));
    for _ in 0..4 {
        call(&mut breaker, secs(0), secs(1), false);
    }
    assert_eq!(
        breaker.state(secs(10)),
        State::Closed,
        "every call slow, never opens"
    );
}

#[test]
fn zero_and_enormous_sizes_neither_panic_nor_abort() {
    // A count window of 0 is 1; one of `u32::MAX` is held to 65 536 (and so is the minimum).
    assert!(opens(count(0), &[true]));
    let mut huge = vec![false; 65_535];
    huge.push(true);
    assert!(!opens(
        Classic {
            failure_rate: 0.5,
            ..count(u32::MAX)
        },
        &huge
    ));
    assert!(
        opens(
            Classic {
                failure_rate: 1e-6,
                ..count(u32::MAX)
            },
            &huge
        ),
        "65 536 calls held"
    );
    // A consecutive record of 0 is 1.
    assert!(opens(
        Classic {
            record: Record::Consecutive { failures: 0 },
            ..CLASSIC
        },
        &[true]
    ));
    // Time records of no span and no buckets, and of the longest span in the most buckets.
    for (span, buckets) in [
        (Duration::ZERO, 0),
        (Duration::MAX, u32::MAX),
        (Duration::MAX, 1),
    ] {
        let policy = Classic {
            record: Record::Time { span, buckets },
            minimum: 2,
            ..CLASSIC
        };
        assert!(opens(policy, &[true, true]), "{span:?} in {buckets}");
    }
    // `u32::MAX` probes reserve nothing up front, and each goes out.
    let mut breaker = ClassicBreaker::new(
        Classic {
            probes: u32::MAX,
            ..count(1)
        },
        secs(0),
    );
    open(&mut breaker, secs(0));
    for _ in 0..1_000 {
        assert!(breaker.check(secs(60)).is_ok());
    }
}

#[test]
fn durations_at_their_ends() {
    // The longest wait saturates the clock: refused to its last nanosecond but one.
    let forever = Classic {
        open: OpenWait::Fixed(Duration::MAX),
        ..count(1)
    };
    let mut breaker = ClassicBreaker::new(forever, secs(1));
    open(&mut breaker, secs(1));
    let reason = breaker.check(secs(1 << 33)).expect_err("still open");
    assert_eq!(
        reason.next,
        Duration::from_nanos(u64::MAX - (1 << 33) * 1_000_000_000)
    );
    assert!(reason.next > secs(1 << 33));
    // A lease of `Duration::MAX` holds a lost probe's place for good.
    let held = Classic {
        lease: Duration::MAX,
        probes: 1,
        open: OpenWait::Fixed(Duration::ZERO),
        ..count(1)
    };
    let mut breaker = ClassicBreaker::new(held, secs(0));
    open(&mut breaker, secs(0));
    let _lost = breaker.check(secs(0)).expect("the probe");
    let late = secs(1 << 33);
    let reason = breaker.check(late).expect_err("its place is held");
    assert_eq!(reason.state, State::HalfOpen);
    assert_eq!(reason.next, Duration::from_nanos(u64::MAX) - late);
    // Stages held for no time are judged at the next event that finds something heard.
    let instant = Classic {
        probes: 1,
        open: OpenWait::Fixed(Duration::ZERO),
        half_open: HalfOpen::Progressive {
            first: 0.5,
            factor: 2.0,
            stages: 2,
            hold: Duration::ZERO,
        },
        ..count(1)
    };
    let mut breaker = ClassicBreaker::new(instant, secs(0));
    open(&mut breaker, secs(0));
    for _ in 0..3 {
        call(&mut breaker, secs(0), Duration::ZERO, false);
    }
    assert_eq!(
        breaker.state(secs(0)),
        State::Closed,
        "probe, stage 0, stage 1"
    );
}

#[test]
fn a_clock_at_its_last_nanosecond_still_counts() {
    let end = Duration::MAX;
    // A bucket a nanosecond wide starts at `u64::MAX` itself there, and one of the whole
    // span covers it: both count the calls made at the end of time.
    for record in [
        Record::Time {
            span: Duration::from_nanos(10),
            buckets: 10,
        },
        Record::Time {
            span: Duration::MAX,
            buckets: 1,
        },
    ] {
        let policy = Classic {
            record,
            minimum: 2,
            ..CLASSIC
        };
        let mut breaker = ClassicBreaker::new(policy, end);
        call(&mut breaker, end, Duration::ZERO, true);
        assert_eq!(breaker.state(end), State::Closed);
        call(&mut breaker, end, Duration::ZERO, true);
        assert_eq!(breaker.state(end), State::Open, "{record:?}");
        // The wait saturates at the end, which the clock cannot pass: half-open at once.
        assert_eq!(breaker.ratio(end), 0.0);
        assert!(breaker.check(end).is_ok());
        assert_eq!(breaker.state(end), State::HalfOpen);
    }
}

#[test]
fn a_growing_wait_near_duration_max_neither_panics_nor_loops() {
    let growing = |first, factor, max| OpenWait::Growing { first, factor, max };
    let max = Duration::MAX;
    assert_eq!(growing(max, 2.0, max).after(u32::MAX), max);
    assert_eq!(growing(secs(1), 1e300, max).after(2), max);
    assert_eq!(growing(secs(1), f64::INFINITY, max).after(0), secs(1));
    assert_eq!(
        growing(Duration::ZERO, f64::INFINITY, secs(10)).after(3),
        Duration::ZERO
    );
    assert_eq!(
        growing(Duration::from_nanos(1), 1.0, max).after(u32::MAX),
        Duration::from_nanos(1)
    );
    assert_eq!(
        growing(secs(3), 2.0, secs(1)).after(0),
        secs(1),
        "first held to max"
    );
    let slow = growing(secs(1), 1.0 + 1e-12, max).after(u32::MAX);
    assert!(slow > secs(1) && slow < secs(2), "{slow:?}");
    // Just under the float of `Duration::MAX`, still held to it.
    let edge = growing(secs(u64::MAX / 2), 1.999_999_999_999, max).after(1);
    assert!(edge <= max);
}
