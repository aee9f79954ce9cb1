//! The classic breaker's unit tests: resilience4j's `CircuitBreakerStateMachineTest` cases,
//! failsafe-go's consecutive-failure threshold, and every out-of-range input.

use alloc::string::ToString;
use alloc::vec::Vec;
use core::time::Duration;

use super::*;
use crate::CircuitBreaker;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// The configuration of resilience4j's `CircuitBreakerStateMachineTest.setUp`: 50 % failed
/// or 50 % slower than 4 s, a time window of 20 s (a bucket a second) and 5 calls at least,
/// 4 calls half-open, 5 s open.
pub(super) fn resilience4j() -> Classic {
    Classic {
        record: Record::Time {
            span: secs(20),
            buckets: 20,
        },
        failure_rate: 0.5,
        slow_rate: 0.5,
        slow_call: secs(4),
        minimum: 5,
        open: OpenWait::Fixed(secs(5)),
        probes: 4,
        ..CLASSIC
    }
}

/// One call let through at `at` and settled after `took`, failed or not.
fn call(breaker: &mut ClassicBreaker, at: Duration, took: Duration, failed: bool) {
    let permit = breaker.check(at).expect("let through");
    let settled = if failed {
        breaker.fail(permit, at + took)
    } else {
        breaker.pass(permit, at + took)
    };
    assert!(settled.is_none());
}

/// A breaker opened by failures at `at`, under `policy`.
fn opened(policy: Classic, at: Duration) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(policy, at);
    while breaker.state(at) == State::Closed {
        call(&mut breaker, at, Duration::ZERO, true);
    }
    assert_eq!(breaker.state(at), State::Open);
    breaker
}

// resilience4j `shouldOpenAfterFailureRateThresholdExceeded`: three failures and a success
// stay closed (under the minimum of 5), the fifth call makes 60 % failed, and it opens.
#[test]
fn opens_once_the_minimum_is_reached_and_the_failure_rate_is_at_the_threshold() {
    let mut breaker = ClassicBreaker::new(resilience4j(), secs(0));
    for failed in [true, true, true, false] {
        call(&mut breaker, secs(0), Duration::ZERO, failed);
        assert_eq!(breaker.state(secs(0)), State::Closed);
    }
    assert_eq!(breaker.take_transition(), None);
    call(&mut breaker, secs(0), Duration::ZERO, false);
    assert_eq!(breaker.state(secs(0)), State::Open);
    let change = Transition {
        from: State::Closed,
        to: State::Open,
    };
    assert_eq!(breaker.take_transition(), Some(change));
    assert_eq!(breaker.take_transition(), None, "taken once");
    let reason = breaker.check(secs(0)).expect_err("open");
    assert_eq!((reason.state, reason.next), (State::Open, secs(5)));
    assert!((reason.failure_rate - 0.6).abs() < 1e-12);
}

// resilience4j `shouldOpenAfterSlowCallRateThresholdExceeded`: three slow calls (one
// failed) and two fast ones of 100 ms (one failed): 60 % slow, 40 % failed. resilience4j
// passes each call's duration; here every call starts at 0 and is settled when it ends, the
// fast ones first, so that the clock only moves forward, and a slow call takes just over the
// 4 s threshold.
#[test]
fn opens_on_the_slow_call_rate_whether_the_slow_calls_failed_or_not() {
    let mut breaker = ClassicBreaker::new(resilience4j(), secs(0));
    let permits: Vec<_> = (0..5)
        .map(|_| breaker.check(secs(0)).expect("closed"))
        .collect();
    let slow = ms(4_001);
    let ends = [
        (ms(100), true),
        (ms(100), false),
        (slow, true),
        (slow, false),
        (slow, false),
    ];
    for (i, (permit, (took, failed))) in permits.into_iter().zip(ends).enumerate() {
        assert_eq!(breaker.state(took), State::Closed, "before call {i} ends");
        let _ = if failed {
            breaker.fail(permit, took)
        } else {
            breaker.pass(permit, took)
        };
    }
    let reason = breaker.check(slow).expect_err("open");
    assert!((reason.slow_rate - 0.6).abs() < 1e-12, "{reason}");
    assert!((reason.failure_rate - 0.4).abs() < 1e-12, "{reason}");
}

// resilience4j `shouldTransitionToHalfOpenAfterWaitDuration`: refused 3 s into the 5 s
// wait, let through (half-open) 6 s in.
#[test]
fn the_first_call_after_the_wait_is_a_probe() {
    let mut breaker = opened(resilience4j(), secs(0));
    let _ = breaker.take_transition();
    assert!(breaker.check(secs(3)).is_err());
    assert_eq!(breaker.state(secs(3)), State::Open);
    let probe = breaker.check(secs(6)).expect("half-open");
    assert_eq!(breaker.state(secs(6)), State::HalfOpen);
    let change = Transition {
        from: State::Open,
        to: State::HalfOpen,
    };
    assert_eq!(breaker.take_transition(), Some(change));
    assert!(breaker.owns(&probe));
}

// resilience4j `shouldOnlyPermitFourCallsInHalfOpenState`.
#[test]
fn half_open_lets_through_only_its_probes() {
    let mut breaker = opened(resilience4j(), secs(0));
    let probes: Vec<_> = (0..4)
        .map(|_| breaker.check(secs(5)).expect("probe"))
        .collect();
    for _ in 0..2 {
        let reason = breaker.check(secs(5)).expect_err("every probe out");
        assert_eq!(reason.state, State::HalfOpen);
        assert_eq!(reason.next, secs(60), "until the first lease runs out");
    }
    assert_eq!(probes.len(), 4);
}

// resilience4j `shouldTransitionBackToOpenStateWhenFailureRateIsAboveThreshold`: probes
// fail, fail, pass, fail: 75 %, open again.
#[test]
fn probes_over_the_failure_rate_open_it_again() {
    let mut breaker = opened(resilience4j(), secs(0));
    let probes: Vec<_> = (0..4)
        .map(|_| breaker.check(secs(5)).expect("probe"))
        .collect();
    for (probe, failed) in probes.into_iter().zip([true, true, false, true]) {
        let _ = if failed {
            breaker.fail(probe, secs(5))
        } else {
            breaker.pass(probe, secs(5))
        };
    }
    assert_eq!(breaker.state(secs(5)), State::Open);
    let reason = breaker.check(secs(5)).expect_err("open again");
    assert!((reason.failure_rate - 0.75).abs() < 1e-12);
    assert_eq!(reason.next, secs(5));
    assert_eq!(breaker.transitions(), 3, "closed → open → half-open → open");
}

// resilience4j `shouldTransitionBackToClosedStateWhenFailureIsBelowThreshold`: probes
// failed, passed, passed, passed: closed, with an empty record.
#[test]
fn probes_under_the_rates_close_it_with_an_empty_record() {
    let mut breaker = opened(resilience4j(), secs(0));
    let probes: Vec<_> = (0..4)
        .map(|_| breaker.check(secs(5)).expect("probe"))
        .collect();
    for (probe, failed) in probes.into_iter().zip([true, false, false, false]) {
        let _ = if failed {
            breaker.fail(probe, secs(5))
        } else {
            breaker.pass(probe, secs(5))
        };
    }
    assert_eq!(breaker.state(secs(5)), State::Closed);
    // The record starts empty: four failures are under the minimum again.
    for _ in 0..4 {
        call(&mut breaker, secs(6), Duration::ZERO, true);
    }
    assert_eq!(breaker.state(secs(6)), State::Closed);
}

// resilience4j `shouldTransitionToHalfOpenAfterWaitInterval`, with its
// `IntervalFunction.ofExponentialBackoff(5000)` (a multiplier of 1.5): 5 s, then 7.5 s.
#[test]
fn a_growing_wait_grows_with_each_reopening() {
    let policy = Classic {
        open: OpenWait::Growing {
            first: secs(5),
            factor: 1.5,
            max: secs(3600),
        },
        probes: 1,
        ..resilience4j()
    };
    let mut breaker = opened(policy, secs(0));
    let probe = breaker.check(secs(5)).expect("half-open after 5 s");
    let _ = breaker.fail(probe, secs(5));
    assert!(breaker.check(secs(11)).is_err(), "6 s into 7.5 s");
    assert!(breaker.check(ms(12_500)).is_ok(), "7.5 s on");
}

#[test]
fn a_probe_that_never_reports_gives_its_place_up_when_its_lease_runs_out() {
    let policy = Classic {
        probes: 1,
        lease: secs(2),
        ..resilience4j()
    };
    let mut breaker = opened(policy, secs(0));
    let lost = breaker.check(secs(5)).expect("probe");
    assert!(breaker.check(secs(6)).is_err(), "its lease holds the place");
    let probe = breaker.check(secs(7)).expect("the lease ran out");
    // The lost probe reports late: its place is gone, so it counts for nothing.
    assert!(breaker.fail(lost, secs(8)).is_none());
    assert_eq!(breaker.state(secs(8)), State::HalfOpen);
    let _ = breaker.pass(probe, secs(8));
    assert_eq!(breaker.state(secs(8)), State::Closed);
}

// failsafe-go `WithFailureThreshold(3)` and Polly v7's `exceptionsAllowedBeforeBreaking`:
// three failures in a row open it; a success between starts the count again.
#[test]
fn a_consecutive_record_opens_at_the_nth_failure_in_a_row() {
    let policy = Classic {
        record: Record::Consecutive { failures: 3 },
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(policy, secs(0));
    for failed in [true, true, false, true, true] {
        call(&mut breaker, secs(0), Duration::ZERO, failed);
    }
    assert_eq!(breaker.state(secs(0)), State::Closed);
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(0)), State::Open);
}

#[test]
fn a_count_record_keeps_the_last_calls_only() {
    let policy = Classic {
        record: Record::Count { calls: 4 },
        minimum: 100,
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(policy, secs(0));
    // The minimum is held to the window's size: 4 calls, 2 failed, 50 %.
    for failed in [false, false, false, false, false, false, true] {
        call(&mut breaker, secs(0), Duration::ZERO, failed);
        assert_eq!(breaker.state(secs(0)), State::Closed);
    }
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(0)), State::Open);
}

#[test]
fn a_time_record_forgets_the_calls_that_left_its_span() {
    let mut breaker = ClassicBreaker::new(resilience4j(), secs(0));
    for _ in 0..4 {
        call(&mut breaker, secs(0), Duration::ZERO, true);
    }
    // Twenty seconds on, the four failures have left the window: one more is under the
    // minimum.
    call(&mut breaker, secs(20), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(20)), State::Closed);
}

#[test]
fn automatic_reads_half_open_once_the_wait_has_passed() {
    let policy = Classic {
        automatic: true,
        ..resilience4j()
    };
    let breaker = opened(policy, secs(0));
    assert_eq!(breaker.state(secs(4)), State::Open);
    assert_eq!(breaker.state(secs(5)), State::HalfOpen);
    // The next call would be let through, as the first probe.
    assert_eq!((breaker.ratio(secs(4)), breaker.ratio(secs(5))), (1.0, 0.0));
}

// resilience4j `shouldThrowCallNotPermittedExceptionWhenStateIsForcedOpen`, and its
// `DISABLED` and `METRICS_ONLY` states.
#[test]
fn forced_states_override_the_record() {
    let mut forced = ClassicBreaker::new(
        Classic {
            force: Force::Open,
            ..resilience4j()
        },
        secs(0),
    );
    let reason = forced.check(secs(0)).expect_err("forced open");
    assert_eq!(
        (reason.state, reason.next),
        (State::ForcedOpen, Duration::MAX)
    );
    assert_eq!(<ClassicBreaker as CircuitBreaker>::refusal(&reason), 2);

    for force in [Force::Disabled, Force::MetricsOnly] {
        let policy = Classic {
            force,
            ..resilience4j()
        };
        let mut breaker = ClassicBreaker::new(policy, secs(0));
        for _ in 0..50 {
            call(&mut breaker, secs(0), Duration::ZERO, true);
        }
        assert_eq!(breaker.ratio(secs(0)), 0.0, "{force:?}");
        // Back under the record's rule: only the metrics-only breaker kept the calls.
        breaker.retune(resilience4j(), secs(0));
        call(&mut breaker, secs(0), Duration::ZERO, true);
        let open = breaker.state(secs(0)) == State::Open;
        assert_eq!(open, force == Force::MetricsOnly, "{force:?}");
    }
}

#[test]
fn a_permit_from_another_breaker_or_an_earlier_state_changes_nothing() {
    let mut one = ClassicBreaker::new(resilience4j(), secs(0));
    let mut other = ClassicBreaker::new(resilience4j(), secs(0));
    let stranger = other.check(secs(0)).expect("closed");
    assert!(one.fail(stranger, secs(0)).is_some());
    assert_eq!(one.foreign(), 1);

    let mut breaker = ClassicBreaker::new(resilience4j(), secs(0));
    let late = breaker.check(secs(0)).expect("closed");
    for _ in 0..5 {
        call(&mut breaker, secs(0), Duration::ZERO, true);
    }
    assert_eq!(breaker.state(secs(0)), State::Open);
    // Let through while closed, settled after it opened: not counted anywhere.
    assert!(breaker.pass(late, secs(1)).is_none());
    assert_eq!(breaker.state(secs(1)), State::Open);
}

#[test]
fn a_retune_keeps_a_record_of_the_same_shape() {
    let mut breaker = ClassicBreaker::new(resilience4j(), secs(0));
    for _ in 0..4 {
        call(&mut breaker, secs(0), Duration::ZERO, true);
    }
    breaker.retune(
        Classic {
            failure_rate: 0.9,
            ..resilience4j()
        },
        secs(0),
    );
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(0)), State::Open, "the four stood");

    let mut reshaped = ClassicBreaker::new(resilience4j(), secs(0));
    for _ in 0..4 {
        call(&mut reshaped, secs(0), Duration::ZERO, true);
    }
    reshaped.retune(
        Classic {
            record: Record::Count { calls: 10 },
            ..resilience4j()
        },
        secs(0),
    );
    call(&mut reshaped, secs(0), Duration::ZERO, true);
    assert_eq!(reshaped.state(secs(0)), State::Closed, "a new record");
}

#[test]
fn out_of_range_policies_are_read_as_documented() {
    // NaN rates never open it; a probe count and a window of 0 are 1.
    let never = Classic {
        failure_rate: f64::NAN,
        slow_rate: f64::NAN,
        record: Record::Count { calls: 0 },
        minimum: 0,
        probes: 0,
        ..CLASSIC
    };
    let mut breaker = ClassicBreaker::new(never, secs(0));
    for _ in 0..10 {
        call(&mut breaker, secs(0), Duration::ZERO, true);
    }
    assert_eq!(breaker.state(secs(0)), State::Closed);

    // A rate of 0 opens at the first failure, and a rate past 1 at 100 %.
    let eager = Classic {
        failure_rate: -1.0,
        record: Record::Count { calls: 0 },
        probes: 0,
        ..CLASSIC
    };
    let mut breaker = opened(eager, secs(0));
    let probe = breaker.check(secs(60)).expect("one probe");
    assert!(breaker.check(secs(60)).is_err(), "a probe count of 0 is 1");
    let _ = breaker.pass(probe, secs(60));
    assert_eq!(breaker.state(secs(60)), State::Closed);

    // A growing wait past `Duration::MAX` holds at the maximum, and a factor under 1 is 1.
    let huge = OpenWait::Growing {
        first: secs(1),
        factor: f64::INFINITY,
        max: Duration::MAX,
    };
    assert_eq!(huge.after(1), Duration::MAX);
    let shrinking = OpenWait::Growing {
        first: secs(2),
        factor: f64::NAN,
        max: secs(10),
    };
    assert_eq!(shrinking.after(5), secs(2));
}

#[test]
fn a_clock_that_goes_back_reads_as_the_latest_seen() {
    let mut breaker = opened(resilience4j(), secs(100));
    let reason = breaker
        .check(secs(1))
        .expect_err("still open at the latest reading");
    assert_eq!(reason.next, secs(5));
    assert!(breaker.check(secs(105)).is_ok());
}

#[test]
fn the_presets_are_resilience4j_and_pollys_defaults() {
    assert_eq!(Classic::default(), CLASSIC);
    assert_eq!(CLASSIC.record, Record::Count { calls: 100 });
    assert_eq!((CLASSIC.minimum, CLASSIC.probes), (100, 10));
    assert_eq!(CLASSIC.open.after(0), secs(60));
    assert_eq!(POLLY.failure_rate, 0.1);
    assert_eq!(POLLY.open.after(3), secs(5));
    // Polly's breaker opens on 10 % failed of at least 100 calls in 30 s.
    let mut breaker = ClassicBreaker::new(POLLY, secs(0));
    for i in 0..100 {
        call(&mut breaker, ms(i * 10), Duration::ZERO, i % 10 == 0);
    }
    assert_eq!(breaker.state(secs(1)), State::Open);
}

#[test]
fn a_reason_reads_as_one_line() {
    let mut breaker = opened(resilience4j(), secs(0));
    let reason = breaker.check(secs(2)).expect_err("open");
    assert_eq!(
        reason.to_string(),
        "breaker open (100.0% failed, 0.0% slow): half-open in 3s"
    );
    let _probes: Vec<_> = (0..4).map(|_| breaker.check(secs(5)).unwrap()).collect();
    let full = breaker.check(secs(5)).expect_err("half-open, full");
    assert_eq!(
        full.to_string(),
        "breaker half-open with every probe out: a place again in 60s"
    );
}
