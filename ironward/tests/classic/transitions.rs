//! Every change of state is one transition, a retune's included, so that an edge's state
//! gauge, set from `take_transition`, follows the breaker.

use core::time::Duration;

use ironward::classic::{Force, OpenWait, Record, State, Transition};
use ironward::{CLASSIC, Classic, ClassicBreaker};

use super::{call, open, secs, settle};

fn small() -> Classic {
    Classic {
        record: Record::Count { calls: 4 },
        minimum: 4,
        open: OpenWait::Fixed(secs(5)),
        probes: 2,
        lease: secs(60),
        ..CLASSIC
    }
}

fn forced(force: Force) -> Classic {
    Classic { force, ..small() }
}

fn change(from: State, to: State) -> Option<Transition> {
    Some(Transition { from, to })
}

// resilience4j `CircuitBreakerStateMachineTest.circuitBreakerDoesNotPublishStateTransitionEventsForInternalTransitions`:
// each move to a state put by hand is one transition, a second move to the same state none.
#[test]
fn a_retune_that_changes_the_force_is_one_transition_and_one_that_does_not_is_none() {
    let mut breaker = ClassicBreaker::new(small(), secs(0));
    let steps = [
        (Force::Open, change(State::Closed, State::ForcedOpen)),
        (Force::Open, None),
        (Force::Disabled, change(State::ForcedOpen, State::Disabled)),
        (
            Force::MetricsOnly,
            change(State::Disabled, State::MetricsOnly),
        ),
        (Force::MetricsOnly, None),
        (Force::None, change(State::MetricsOnly, State::Closed)),
        (Force::None, None),
    ];
    for (i, (force, expected)) in steps.into_iter().enumerate() {
        let before = breaker.transitions();
        breaker.retune(forced(force), secs(i as u64));
        assert_eq!(breaker.take_transition(), expected, "step {i}: {force:?}");
        let counted = breaker.transitions() - before;
        assert_eq!(counted, u64::from(expected.is_some()), "step {i}");
        assert_eq!(
            breaker.state(secs(i as u64)),
            expected.map_or(breaker.state(secs(0)), |t| t.to)
        );
    }
    assert_eq!(breaker.transitions(), 4);
}

#[test]
fn lifting_a_force_returns_to_the_state_the_record_says() {
    let mut breaker = ClassicBreaker::new(small(), secs(0));
    open(&mut breaker, secs(0));
    let _ = breaker.take_transition();
    breaker.retune(forced(Force::Open), secs(1));
    assert_eq!(
        breaker.take_transition(),
        change(State::Open, State::ForcedOpen)
    );
    // Forced open holds past the wait: no half-open (resilience4j
    // `shouldForceOpenCircuitBreaker` waits 6 s of a 5 s wait).
    assert_eq!(
        breaker.check(secs(6)).expect_err("forced").state,
        State::ForcedOpen
    );
    breaker.retune(small(), secs(2));
    assert_eq!(
        breaker.take_transition(),
        change(State::ForcedOpen, State::Open)
    );
    // The clock read 6 s: the wait set at 0 has passed, so the next call is a probe.
    assert!(breaker.check(secs(6)).is_ok());
    assert_eq!(
        breaker.take_transition(),
        change(State::Open, State::HalfOpen)
    );
}

#[test]
fn a_force_lifted_while_half_open_starts_the_trial_again() {
    let mut breaker = ClassicBreaker::new(small(), secs(0));
    open(&mut breaker, secs(0));
    let stale = [
        breaker.check(secs(5)).unwrap(),
        breaker.check(secs(5)).unwrap(),
    ];
    assert!(breaker.check(secs(5)).is_err(), "both probes out");
    breaker.retune(forced(Force::Disabled), secs(5));
    breaker.retune(small(), secs(5));
    assert_eq!(
        breaker.take_transition(),
        change(State::Disabled, State::HalfOpen)
    );
    // The probes out before are from an earlier state: they neither count nor hold places.
    for permit in stale {
        settle(&mut breaker, permit, secs(5), true);
    }
    assert_eq!(breaker.state(secs(5)), State::HalfOpen);
    call(&mut breaker, secs(5), Duration::ZERO, false);
    call(&mut breaker, secs(5), Duration::ZERO, false);
    assert_eq!(breaker.state(secs(5)), State::Closed);
}

#[test]
fn a_call_let_through_under_a_force_is_not_counted_after_it_is_lifted() {
    let policy = Classic {
        record: Record::Consecutive { failures: 1 },
        ..small()
    };
    let mut breaker = ClassicBreaker::new(
        Classic {
            force: Force::Disabled,
            ..policy
        },
        secs(0),
    );
    let early = breaker.check(secs(0)).expect("disabled");
    breaker.retune(policy, secs(1));
    settle(&mut breaker, early, secs(1), true);
    assert_eq!(breaker.state(secs(1)), State::Closed, "not counted");
    call(&mut breaker, secs(1), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(1)), State::Open);
}

#[test]
fn a_gauge_set_from_each_transition_follows_the_state() {
    let mut breaker = ClassicBreaker::new(small(), secs(0));
    let mut gauge = State::Closed;
    let mut seen = 0;
    let mut follow = |breaker: &mut ClassicBreaker, now: Duration| {
        if let Some(t) = breaker.take_transition() {
            assert_eq!(t.from, gauge, "each change starts where the last ended");
            gauge = t.to;
            seen += 1;
        }
        assert_eq!(gauge, breaker.state(now));
        assert_eq!(seen, breaker.transitions());
    };
    for s in 0..40_u64 {
        let now = secs(s);
        match s % 7 {
            3 => breaker.retune(forced(Force::Open), now),
            4 => breaker.retune(small(), now),
            _ => {
                if let Ok(permit) = breaker.check(now) {
                    follow(&mut breaker, now);
                    settle(&mut breaker, permit, now, s % 5 != 0);
                }
            }
        }
        follow(&mut breaker, now);
    }
    assert!(seen >= 10, "the run moved through its states: {seen}");
}

#[test]
fn a_retune_of_the_failures_in_a_row_is_read_at_once() {
    let run = |failures| Classic {
        record: Record::Consecutive { failures },
        ..small()
    };
    let mut breaker = ClassicBreaker::new(run(2), secs(0));
    call(&mut breaker, secs(0), Duration::ZERO, true);
    breaker.retune(run(3), secs(0));
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert_eq!(
        breaker.state(secs(0)),
        State::Closed,
        "two of three, the run kept"
    );
    call(&mut breaker, secs(0), Duration::ZERO, true);
    assert_eq!(breaker.state(secs(0)), State::Open);
}
