//! The progressive half-open: growing shares of the calls, each held for a while, after the
//! probes (seatbelt's progressive `HalfOpenMode`, admitting by count instead of a draw).

use core::time::Duration;

use ironward::classic::{HalfOpen, OpenWait, Record, State, Transition};
use ironward::{CLASSIC, Classic, ClassicBreaker};

use super::{call, open, secs, settle};

/// A count record of 4, one probe, then stages of 10 % and 50 % held for 10 s each; the
/// wait 1 s, doubling with each reopening.
fn ramp() -> Classic {
    Classic {
        record: Record::Count { calls: 4 },
        minimum: 4,
        failure_rate: 0.5,
        slow_rate: 0.5,
        slow_call: secs(1),
        open: OpenWait::Growing {
            first: secs(1),
            factor: 2.0,
            max: secs(60),
        },
        probes: 1,
        lease: secs(5),
        half_open: HalfOpen::Progressive {
            first: 0.1,
            factor: 5.0,
            stages: 2,
            hold: secs(10),
        },
        ..CLASSIC
    }
}

/// A breaker under `policy` opened at 0, whose probe passed at 1 s: in stage 0 until 11 s.
fn in_first_stage(policy: Classic) -> ClassicBreaker {
    let mut breaker = ClassicBreaker::new(policy, secs(0));
    open(&mut breaker, secs(0));
    call(&mut breaker, secs(1), Duration::ZERO, false);
    assert_eq!(
        breaker.state(secs(1)),
        State::HalfOpen,
        "the probe passed: stage 0"
    );
    assert_eq!(breaker.transitions(), 2, "closed → open → half-open");
    breaker
}

/// Asks `n` calls at `at`: which were let through, with `ratio` read before each agreeing.
fn ask(breaker: &mut ClassicBreaker, at: Duration, n: usize) -> Vec<ironward::ClassicPermit> {
    let mut admitted = Vec::new();
    for i in 0..n {
        let refusing = breaker.ratio(at) == 1.0;
        match breaker.check(at) {
            Ok(permit) => {
                assert!(!refusing, "call {i}: the ratio said refused");
                admitted.push(permit);
            }
            Err(reason) => {
                assert!(refusing, "call {i}: the ratio said admitted");
                assert_eq!(
                    (reason.state, reason.next),
                    (State::HalfOpen, Duration::ZERO)
                );
            }
        }
    }
    admitted
}

#[test]
fn stages_admit_their_share_by_count_and_close_after_the_last() {
    let mut breaker = in_first_stage(ramp());
    let _ = breaker.take_transition();
    // 10 %: the first call, then one each ten: calls 1, 11 and 21 of 25.
    let admitted = ask(&mut breaker, secs(2), 25);
    assert_eq!(admitted.len(), 3);
    let refused = breaker.check(secs(2)).expect_err("call 26");
    assert_eq!(
        refused.to_string(),
        "breaker half-open: the call is outside the share it lets through"
    );
    for permit in admitted {
        settle(&mut breaker, permit, secs(2), false);
    }
    assert_eq!(breaker.state(secs(10)), State::HalfOpen, "held until 11 s");
    assert_eq!(
        breaker.take_transition(),
        None,
        "a stage is no change of state"
    );
    // At 11 s the first call judges stage 0 (three passed) and is the first of 50 %.
    let admitted = ask(&mut breaker, secs(11), 9);
    assert_eq!(admitted.len(), 5, "calls 1, 3, 5, 7 and 9");
    for permit in admitted {
        settle(&mut breaker, permit, secs(12), false);
    }
    assert_eq!(breaker.take_transition(), None);
    // After the last stage, closed with an empty record.
    call(&mut breaker, secs(21), Duration::ZERO, true);
    let closed = Transition {
        from: State::HalfOpen,
        to: State::Closed,
    };
    assert_eq!(breaker.take_transition(), Some(closed));
    assert_eq!(
        breaker.state(secs(21)),
        State::Closed,
        "one failure of four"
    );
    assert_eq!(breaker.transitions(), 3);
}

#[test]
fn a_stage_whose_failed_share_reaches_the_rate_opens_again_with_the_next_wait() {
    let mut breaker = in_first_stage(ramp());
    let admitted = ask(&mut breaker, secs(2), 11);
    assert_eq!(admitted.len(), 2);
    for (permit, failed) in admitted.into_iter().zip([true, false]) {
        settle(&mut breaker, permit, secs(2), failed);
    }
    assert_eq!(
        breaker.ratio(secs(11)),
        1.0,
        "the verdict at 11 s will refuse"
    );
    let reason = breaker.check(secs(11)).expect_err("opened again");
    assert_eq!((reason.state, reason.next), (State::Open, secs(2)));
    assert_eq!(reason.failure_rate, 0.5);
    let reopened = Transition {
        from: State::HalfOpen,
        to: State::Open,
    };
    assert_eq!(breaker.take_transition(), Some(reopened));
    // The probe step again after the doubled wait.
    assert!(breaker.check(secs(13)).is_ok());
    assert!(breaker.check(secs(13)).is_err(), "one probe");
}

#[test]
fn a_stage_slow_share_at_the_rate_opens_it_again() {
    let mut breaker = in_first_stage(ramp());
    let permit = breaker.check(secs(2)).expect("the stage's first call");
    settle(&mut breaker, permit, secs(4), false);
    let reason = breaker.check(secs(11)).expect_err("slow: 2 s over 1 s");
    assert_eq!((reason.state, reason.slow_rate), (State::Open, 1.0));
}

#[test]
fn a_stage_that_heard_nothing_starts_again_with_its_first_call_admitted() {
    let mut breaker = in_first_stage(ramp());
    let lost = breaker.check(secs(2)).expect("admitted, never settled");
    assert!(breaker.check(secs(2)).is_err());
    drop(lost);
    // 11 s: nothing heard, so the stage starts again rather than pass on nothing.
    let first = breaker
        .check(secs(11))
        .expect("the restarted stage's first call");
    assert!(breaker.check(secs(11)).is_err(), "10 % again");
    settle(&mut breaker, first, secs(12), false);
    assert_eq!(
        breaker.state(secs(20)),
        State::HalfOpen,
        "restarted until 21 s"
    );
    let _fifty = breaker.check(secs(21)).expect("stage 1");
    assert!(
        breaker.check(secs(21)).is_err(),
        "50 %: the second call waits"
    );
    assert!(breaker.check(secs(21)).is_ok(), "and the third goes");
}

#[test]
fn a_late_outcome_judges_the_stage_after_counting_itself() {
    let mut breaker = in_first_stage(ramp());
    let permit = breaker.check(secs(2)).expect("admitted");
    let _ = breaker.take_transition();
    // Settled past the stage's end: counted, then the stage judged on it.
    settle(&mut breaker, permit, secs(12), true);
    assert_eq!(breaker.state(secs(12)), State::Open);
    assert_eq!(breaker.take_transition().map(|t| t.to), Some(State::Open));
}

#[test]
fn a_reopening_verdict_refuses_the_call_that_made_it_even_with_no_wait() {
    let policy = Classic {
        open: OpenWait::Fixed(Duration::ZERO),
        ..ramp()
    };
    let mut breaker = in_first_stage(policy);
    let permit = breaker.check(secs(2)).expect("admitted");
    settle(&mut breaker, permit, secs(2), true);
    let before = breaker.transitions();
    let reason = breaker
        .check(secs(11))
        .expect_err("one decision, one change");
    assert_eq!((reason.state, reason.next), (State::Open, Duration::ZERO));
    assert_eq!(breaker.transitions(), before + 1);
    assert!(breaker.check(secs(11)).is_ok(), "the next call is a probe");
    assert_eq!(breaker.transitions(), before + 2);
}

#[test]
fn a_retune_to_probes_lets_the_running_stage_finish_then_closes() {
    let mut breaker = in_first_stage(ramp());
    let permit = breaker.check(secs(2)).expect("admitted");
    settle(&mut breaker, permit, secs(2), false);
    breaker.retune(
        Classic {
            half_open: HalfOpen::Probes,
            ..ramp()
        },
        secs(3),
    );
    assert_eq!(
        breaker.take_transition().map(|t| t.to),
        Some(State::HalfOpen)
    );
    assert!(breaker.check(secs(4)).is_err(), "the stage's share stands");
    assert!(breaker.check(secs(11)).is_ok());
    assert_eq!(breaker.state(secs(11)), State::Closed, "no stage after it");
}

#[test]
fn zero_stages_are_the_probes_and_a_zero_share_admits_each_stage_first_call_only() {
    let none = Classic {
        half_open: HalfOpen::Progressive {
            first: 0.5,
            factor: 2.0,
            stages: 0,
            hold: secs(10),
        },
        ..ramp()
    };
    let mut probes = ClassicBreaker::new(none, secs(0));
    open(&mut probes, secs(0));
    call(&mut probes, secs(1), Duration::ZERO, false);
    assert_eq!(
        probes.state(secs(1)),
        State::Closed,
        "closed after the probe"
    );

    let trickle = Classic {
        half_open: HalfOpen::Progressive {
            first: 0.0,
            factor: f64::INFINITY,
            stages: 1,
            hold: secs(10),
        },
        ..ramp()
    };
    let mut breaker = in_first_stage(trickle);
    assert_eq!(ask(&mut breaker, secs(2), 1_000).len(), 1);
}

#[test]
fn shares_out_of_range_read_as_documented() {
    let ramp = |first: f64, factor: f64| HalfOpen::Progressive {
        first,
        factor,
        stages: 3,
        hold: secs(1),
    };
    assert_eq!(ramp(f64::NAN, 2.0).share(0), Some(1.0), "NaN refuses least");
    assert_eq!(ramp(-1.0, 2.0).share(2), Some(0.0));
    assert_eq!(ramp(7.0, 2.0).share(1), Some(1.0));
    assert_eq!(ramp(0.1, f64::NAN).share(2), Some(0.1), "a NaN factor is 1");
    assert_eq!(ramp(0.1, 0.5).share(2), Some(0.1), "a factor under 1 is 1");
    assert_eq!(ramp(0.1, f64::INFINITY).share(1), Some(1.0));
    assert_eq!(ramp(0.0, f64::INFINITY).share(2), Some(0.0), "not NaN");
    assert_eq!(ramp(0.1, 2.0).share(3), None, "past the last stage");
    let long = HalfOpen::Progressive {
        first: 1e-9,
        factor: 1.5,
        stages: u32::MAX,
        hold: Duration::MAX,
    };
    assert_eq!(long.share(u32::MAX - 1), Some(1.0));
    assert_eq!(long.hold(), Duration::MAX);
    assert_eq!(HalfOpen::Probes.hold(), Duration::ZERO);
}
