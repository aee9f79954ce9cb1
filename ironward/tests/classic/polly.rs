//! Polly v8's circuit breaker tests (`test/Polly.Core.Tests/CircuitBreaker/`):
//! `Controller/AdvancedCircuitBehaviorTests`, `Controller/CircuitStateControllerTests`, on
//! the [`POLLY`] preset and a manual clock where Polly's tests advance a `FakeTimeProvider`.
//! Polly's health metrics tests are the record's unit tests (`src/classic/counts/tests.rs`).

use core::time::Duration;

use ironward::classic::{Force, OpenWait, Record, State, Transition};
use ironward::{CircuitBreaker, Classic, ClassicBreaker, POLLY};

use super::{call, ms, secs};

/// Polly's controller tests break on demand (a substitute behaviour): here one failure does.
fn on_demand() -> Classic {
    Classic {
        record: Record::Consecutive { failures: 1 },
        ..POLLY
    }
}

fn opened(policy: Classic, at: Duration) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(policy, at);
    call(&mut breaker, at, Duration::ZERO, true);
    assert_eq!(breaker.state(at), State::Open);
    breaker
}

// `AdvancedCircuitBehaviorTests.OnActionFailure_WhenClosed_EnsureCorrectBehavior`: a failure
// breaks the circuit when the throughput has reached the minimum (10) and the failure rate
// the threshold (0.1). Each row: the calls (failures last, as the failure is what Polly
// reads on), and whether it breaks.
#[test]
fn on_action_failure_when_closed() {
    let policy = Classic {
        minimum: 10,
        failure_rate: 0.1,
        ..POLLY
    };
    let rows = [
        (10, 0, false),
        (10, 1, true),
        (10, 2, true),
        (11, 2, true),
        (9, 1, false),
    ];
    for (throughput, failures, breaks) in rows {
        let mut breaker = ClassicBreaker::new(policy, secs(0));
        for i in 0..throughput {
            if breaker.state(secs(0)) == State::Open {
                break;
            }
            call(
                &mut breaker,
                secs(0),
                Duration::ZERO,
                i >= throughput - failures,
            );
        }
        let open = breaker.state(secs(0)) == State::Open;
        assert_eq!(open, breaks, "{throughput} calls, {failures} failed");
    }
    // Where it differs: Polly reads the record on a failure only, so one failure and then
    // nine successes leave it closed; this breaker reads it after every outcome and opens on
    // the success that reaches the minimum.
    let mut breaker = ClassicBreaker::new(policy, secs(0));
    call(&mut breaker, secs(0), Duration::ZERO, true);
    for _ in 0..9 {
        call(&mut breaker, secs(0), Duration::ZERO, false);
    }
    assert_eq!(breaker.state(secs(0)), State::Open, "Polly: closed");
}

// `OnActionPreExecute_CircuitOpenedByValue` (blocked for the break duration, a retry-after
// given), `IsolateAsync_Ok` (isolated: refused with no retry-after, a break of
// `TimeSpan.MaxValue`; closed again by hand) and `OnActionSuccess_EnsureCorrectBehavior`
// (isolated stays isolated).
#[test]
fn opened_and_isolated() {
    let mut breaker = opened(on_demand(), secs(1));
    let reason = breaker.check(secs(1)).expect_err("open");
    assert_eq!(reason.next, secs(5));
    assert_eq!(
        <ClassicBreaker as CircuitBreaker>::retry_after(&reason),
        Some(secs(5))
    );

    let isolated = Classic {
        force: Force::Open,
        ..on_demand()
    };
    let mut breaker = ClassicBreaker::new(on_demand(), secs(1));
    breaker.retune(isolated, secs(1));
    let reason = breaker.check(secs(1)).expect_err("isolated");
    assert_eq!(
        (reason.state, reason.next),
        (State::ForcedOpen, Duration::MAX)
    );
    assert_eq!(
        <ClassicBreaker as CircuitBreaker>::retry_after(&reason),
        None
    );
    breaker.record(ironward::Outcome::Success, secs(2));
    assert_eq!(breaker.state(secs(2)), State::ForcedOpen);
    breaker.retune(on_demand(), secs(2));
    let closed = Transition {
        from: State::ForcedOpen,
        to: State::Closed,
    };
    assert_eq!(breaker.take_transition(), Some(closed));
    assert!(breaker.check(secs(2)).is_ok());
}

// `OnActionPreExecute_HalfOpen` and `HalfOpen_EnsureBreakDuration`: after the break the
// first call goes through half-open and the next is refused; a probe that never reports is
// followed by another a break duration later (the preset's lease).
#[test]
fn half_open_lets_one_call_through_each_break_duration() {
    let mut breaker = opened(on_demand(), secs(0));
    let _lost = breaker.check(secs(5)).expect("half-open");
    let reason = breaker.check(secs(5)).expect_err("one at a time");
    assert_eq!((reason.state, reason.next), (State::HalfOpen, secs(5)));
    assert!(breaker.check(ms(9_999)).is_err());
    assert!(
        breaker.check(secs(10)).is_ok(),
        "the lost probe's break has passed"
    );
}

// `HalfOpen_EnsureCorrectStateTransitionAfterExecution` and `Flow_Closed_HalfOpen_Closed`:
// the probe's success closes it, its failure opens it again.
#[test]
fn the_probe_closes_or_reopens() {
    for (failed, state) in [(false, State::Closed), (true, State::Open)] {
        let mut breaker = opened(on_demand(), secs(0));
        call(&mut breaker, secs(5), Duration::ZERO, failed);
        assert_eq!(breaker.state(secs(5)), state);
    }
}

// `Flow_Closed_HalfOpen_Open_HalfOpen_Closed`: reopened by the probe, refused 1 ms later with
// a retry-after of the break less 1 ms; two breaks later half-open, and a success closes it.
#[test]
fn flow_closed_half_open_open_half_open_closed() {
    let mut breaker = opened(on_demand(), secs(0));
    call(&mut breaker, secs(5), Duration::ZERO, true);
    let reason = breaker.check(ms(5_001)).expect_err("open again");
    assert_eq!(
        <ClassicBreaker as CircuitBreaker>::retry_after(&reason),
        Some(ms(4_999))
    );
    call(&mut breaker, ms(15_001), Duration::ZERO, false);
    assert_eq!(breaker.state(ms(15_001)), State::Closed);
    assert_eq!(breaker.transitions(), 5);
}

// `BreakDurationGenerator_EnsureHalfOpenAttempts`: the generator is handed the half-open
// attempts since the circuit last closed, 0, 1, 2, 3, 4, then 0, 1, 2 after closing; here the
// growing wait reads the same count (a first wait of 1 s, doubling).
#[test]
fn a_growing_wait_counts_the_reopenings_since_the_circuit_closed() {
    let policy = Classic {
        open: OpenWait::Growing {
            first: secs(1),
            factor: 2.0,
            max: secs(3_600),
        },
        ..on_demand()
    };
    let mut breaker = opened(policy, secs(0));
    let mut t = secs(0);
    let mut waits = Vec::new();
    for round in 0..8 {
        let reason = breaker.check(t).expect_err("open");
        waits.push(reason.next.as_secs());
        t += reason.next;
        // The fifth probe passes and closes it; the next failure opens it afresh.
        let closes = round == 4;
        call(&mut breaker, t, Duration::ZERO, !closes);
        if closes {
            call(&mut breaker, t, Duration::ZERO, true);
        }
    }
    assert_eq!(waits, [1, 2, 4, 8, 16, 1, 2, 4]);
}

// `OnActionFailureAsync_EnsureBreakDurationNotOverflow`: opened a break duration (less or
// more 10 ms) before the clock's end, blocked until the end at most.
#[test]
fn a_break_near_the_clock_end_saturates() {
    let end = Duration::from_nanos(u64::MAX);
    for (at, next) in [(end - secs(5), secs(5)), (end - ms(4_990), ms(4_990))] {
        let mut breaker = opened(on_demand(), at);
        assert_eq!(breaker.check(at).expect_err("open").next, next);
        assert!(breaker.check(end).is_ok(), "half-open at the end");
    }
}

// `OnActionFailureAsync_EnsureCorrectBehavior`: a failure heard while open (a call let
// through before it opened) leaves it open, with the same break.
#[test]
fn a_late_failure_while_open_changes_nothing() {
    let mut breaker = ClassicBreaker::new(on_demand(), secs(0));
    let late = breaker.check(secs(0)).expect("closed");
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert!(breaker.fail(late, secs(1)).is_none());
    assert_eq!(breaker.state(secs(1)), State::Open);
    assert_eq!(breaker.check(secs(1)).expect_err("open").next, secs(4));
    assert_eq!(breaker.transitions(), 1);
}
