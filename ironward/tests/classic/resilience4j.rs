//! resilience4j `CircuitBreakerStateMachineTest` cases (resilience4j-circuitbreaker,
//! `io.github.resilience4j.circuitbreaker.internal`), on the test's own configuration and a
//! manual clock that starts at 0 where the test's `MockClock` starts at 12:00:00. The cases
//! already in the unit tests (`src/classic/tests.rs`) are not repeated here.

use core::time::Duration;

use ironward::classic::{Force, OpenWait, Record, State};
use ironward::{CLASSIC, Classic, ClassicBreaker};

use super::{call, ms, open, secs, settle};

/// `setUp`: 50 % failed or 50 % slower than 4 s, a time window of 20 s (a bucket a second)
/// and 5 calls at least, 4 calls half-open, 5 s open.
fn set_up() -> Classic {
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

/// The breaker half-open at 5 s (the test's `transitionToOpenState` then
/// `transitionToHalfOpenState`: here opened by failures at 0, its wait passed).
fn half_open(policy: Classic) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(policy, secs(0));
    open(&mut breaker, secs(0));
    breaker
}

// `shouldOpenAfterFailureRateThresholdExceeded2`: three successes and two failures a second
// apart are 40 %, closed; a third failure at 5 s makes 50 % of six, and it opens.
#[test]
fn should_open_after_failure_rate_threshold_exceeded_2() {
    let mut breaker = ClassicBreaker::new(set_up(), secs(0));
    for (s, failed) in [(0, false), (1, false), (2, false), (3, true), (4, true)] {
        call(&mut breaker, secs(s), Duration::ZERO, failed);
    }
    assert_eq!(breaker.state(secs(4)), State::Closed);
    assert_eq!(breaker.state(secs(5)), State::Closed);
    call(&mut breaker, secs(5), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(5)), State::Open);
}

// `shouldOpenAfterSlowCallRateThresholdExceededUsingMockClock`: calls of 5, 5, 1, 1 and 5 s
// one after the other; three of five slower than 4 s open it at 60 %.
#[test]
fn should_open_after_slow_call_rate_threshold_exceeded_using_mock_clock() {
    let mut breaker = ClassicBreaker::new(set_up(), secs(0));
    let mut t = secs(0);
    for took in [5, 5, 1, 1] {
        call(&mut breaker, t, secs(took), false);
        t += secs(took);
        assert_eq!(breaker.state(t), State::Closed);
    }
    call(&mut breaker, t, secs(5), false);
    t += secs(5);
    let reason = breaker.check(t).expect_err("open");
    assert_eq!(reason.state, State::Open);
    assert!((reason.slow_rate - 0.6).abs() < 1e-12);
    assert_eq!(reason.failure_rate, 0.0);
}

// `shouldTransitionBackToOpenStateWhenSlowCallRateIsAboveThreshold`: probes of 5, 5, 5 and
// 1 s, none failed: 75 % slow, open again.
#[test]
fn should_transition_back_to_open_state_when_slow_call_rate_is_above_threshold() {
    let mut breaker = half_open(set_up());
    let probes: Vec<_> = (0..4).map(|_| breaker.check(secs(5)).unwrap()).collect();
    assert_eq!(breaker.state(secs(5)), State::HalfOpen);
    for (probe, took) in probes.into_iter().zip([1, 5, 5, 5]) {
        settle(&mut breaker, probe, secs(5 + took), false);
    }
    let reason = breaker.check(secs(10)).expect_err("open again");
    assert_eq!(reason.state, State::Open);
    assert_eq!((reason.slow_rate, reason.failure_rate), (0.75, 0.0));
}

// `shouldTransitionToHalfOpenAfterPassedWaitDuration` (`transitionToOpenStateFor(2h)`) and
// `shouldTransitionToHalfOpenAfterPassedWaitUntil` (30 min): the wait by hand is the policy's
// here. Refused half-way, a probe a second after.
#[test]
fn should_transition_to_half_open_after_a_passed_wait_set_by_hand() {
    for wait in [secs(2 * 3_600), secs(30 * 60)] {
        let mut breaker = half_open(Classic {
            open: OpenWait::Fixed(wait),
            ..set_up()
        });
        assert!(breaker.check(wait / 2).is_err());
        assert_eq!(breaker.state(wait / 2), State::Open);
        assert!(breaker.check(wait + secs(1)).is_ok());
        assert_eq!(breaker.state(wait + secs(1)), State::HalfOpen);
    }
}

// `shouldIncreaseCounterOnReleasePermission` and `shouldIgnoreExceptionsAndThenTransitionToClosed`:
// resilience4j frees a probe's place at once when its permission is released (an ignored
// exception releases it). Here the edge drops the permit, and the place comes free when the
// lease runs out (the setUp's `maxWaitDurationInHalfOpenState` of 1 s serves as the lease).
#[test]
fn a_dropped_probe_frees_its_place_when_its_lease_runs_out_not_at_once() {
    let mut breaker = half_open(Classic {
        lease: secs(1),
        ..set_up()
    });
    let ignored: Vec<_> = (0..4).map(|_| breaker.check(secs(5)).unwrap()).collect();
    assert!(breaker.check(secs(5)).is_err());
    drop(ignored);
    assert!(
        breaker.check(ms(5_999)).is_err(),
        "resilience4j would admit here"
    );
    for _ in 0..4 {
        call(&mut breaker, secs(6), Duration::ZERO, false);
    }
    assert_eq!(breaker.state(secs(6)), State::Closed);
}

// `shouldDisableCircuitBreaker`: disabled, every call goes through and nothing is recorded:
// four failures then, and one after it is lifted, stay under the minimum of 5.
#[test]
fn should_disable_circuit_breaker() {
    let disabled = Classic {
        force: Force::Disabled,
        ..set_up()
    };
    let mut breaker = ClassicBreaker::new(disabled, secs(0));
    assert_eq!(breaker.state(secs(0)), State::Disabled);
    for _ in 0..4 {
        call(&mut breaker, secs(0), Duration::ZERO, true);
    }
    breaker.retune(set_up(), secs(0));
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(0)), State::Closed);
}

// `shouldRecordMetricsInMetricsOnlyState` and `circuitBreakerInitializeInMetricOnlyState`:
// three failures and two successes are 60 %, yet the breaker stays metrics-only with no
// transition. Where resilience4j's `shouldResetMetricsAfterMetricsOnlyStateTransition`
// starts an empty record, this breaker keeps it: once the force is lifted, the next outcome
// is read against the five.
#[test]
fn should_record_metrics_in_metrics_only_state() {
    let metrics = Classic {
        force: Force::MetricsOnly,
        ..set_up()
    };
    let mut breaker = ClassicBreaker::new(metrics, secs(0));
    assert_eq!(breaker.state(secs(0)), State::MetricsOnly);
    for failed in [true, true, true, false, false, true] {
        call(&mut breaker, secs(0), Duration::ZERO, failed);
        assert_eq!(breaker.state(secs(0)), State::MetricsOnly);
    }
    assert_eq!(breaker.take_transition(), None);
    assert_eq!(breaker.transitions(), 0);
    breaker.retune(set_up(), secs(0));
    call(&mut breaker, secs(0), Duration::ZERO, false);
    assert_eq!(
        breaker.state(secs(0)),
        State::Open,
        "4 of 7 failed: the record was kept"
    );
}
