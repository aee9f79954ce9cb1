//! Unit tests of `run` that need its private items.

use super::*;
use crate::http_retry::{Attempt, Decision, SETTINGS, decide, decide_response, vouches};

const UNIX: Duration = Duration::from_secs(1_700_000_000);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(now: Duration, roll: f64) -> Reading {
    Reading {
        now,
        unix: UNIX,
        roll,
    }
}

fn get() -> Call<'static> {
    Call {
        method: "GET",
        body_replayable: true,
        replay_safe: false,
    }
}

fn post() -> Call<'static> {
    Call {
        method: "POST",
        ..get()
    }
}

#[test]
fn a_success_is_done_and_passes_the_budget() {
    let mut budget = Budget::new(10, 0.5);
    budget.fail();
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    assert_eq!(
        run.attempt(ms(0), None),
        Ok(Timeout::Budget(SETTINGS.total_budget))
    );
    assert_eq!(
        run.response(204, [], at(ms(5), 0.3), Some(&mut budget)),
        Step::Done
    );
    assert_eq!(budget.tokens(), 9.5);
    assert_eq!(
        run.retried(),
        Retried {
            attempts: 1,
            waited: Duration::ZERO,
            stop: None
        }
    );
}

#[test]
fn each_failure_is_decided_as_decide_response_decides_it() {
    let mut run = Run::new(SETTINGS, &get(), ms(1000));
    for (index, (status, values, now, roll)) in [
        (503u16, &[][..], ms(1100), 0.5),
        (429, &["2"][..], ms(1500), 0.0),
        (500, &["Wed, 21 Oct 2015 07:28:00 GMT"][..], ms(4000), 0.9),
    ]
    .into_iter()
    .enumerate()
    {
        let attempts = run.retried().attempts;
        assert!(run.attempt(now - ms(50), None).is_ok());
        assert_eq!(run.retried().attempts, attempts + 1);
        let attempt = Attempt {
            method: "GET",
            status,
            retry_index: index as u32,
            elapsed: now - ms(1000),
            body_replayable: true,
            replay_safe: false,
            sample_ppm: sample_ppm(roll),
        };
        let expected = decide_response(&SETTINGS, &attempt, values, 1_700_000_000);
        let fields = values.iter().map(|v| v.as_bytes());
        let step = run.response(status, fields, at(now, roll), None);
        match expected {
            Decision::Wait(wait) => assert_eq!(step, Step::Wait(wait), "{index}"),
            Decision::Stop(reason) => assert_eq!(step, Step::Stop(reason.into()), "{index}"),
        }
    }
}

#[test]
fn a_retry_after_that_is_not_utf8_is_malformed() {
    // RFC 9110 §5.5 allows obs-text bytes in a field value; none can be a delay.
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let _ = run.attempt(ms(0), None);
    let step = run.response(503, [&b"\xff5"[..]], at(ms(1), 1.0), None);
    assert_eq!(step, Step::Stop(StopReason::InvalidRetryAfter.into()));
    assert_eq!(
        run.retried().stop,
        Some(StopReason::InvalidRetryAfter.into())
    );
}

#[test]
fn two_retry_after_fields_stop_and_a_third_is_never_read() {
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let _ = run.attempt(ms(0), None);
    let mut read = 0;
    let fields = [&b"1"[..], b"1", b"1"].into_iter().inspect(|_| read += 1);
    let step = run.response(503, fields, at(ms(1), 1.0), None);
    assert_eq!(step, Step::Stop(StopReason::InvalidRetryAfter.into()));
    assert_eq!(read, 2);
}

#[test]
fn faults_follow_the_replay_rule() {
    let mut run = Run::new(SETTINGS, &post(), ms(0));
    let _ = run.attempt(ms(0), None);
    assert_eq!(
        run.error(Fault::Unsent, at(ms(1), 1.0), None),
        Step::Wait(ms(200))
    );
    let _ = run.attempt(ms(300), None);
    assert_eq!(
        run.error(Fault::Sent, at(ms(301), 1.0), None),
        Step::Stop(StopReason::NotReplayable.into())
    );
    let mut get = Run::new(SETTINGS, &get(), ms(0));
    let _ = get.attempt(ms(0), None);
    assert_eq!(
        get.error(Fault::Sent, at(ms(1), 1.0), None),
        Step::Wait(ms(200))
    );
    let _ = get.attempt(ms(300), None);
    assert_eq!(
        get.error(Fault::Final, at(ms(301), 1.0), None),
        Step::Stop(StopReason::NotRetryable.into())
    );
    let vouched = Call {
        replay_safe: true,
        ..post()
    };
    let mut keyed = Run::new(SETTINGS, &vouched, ms(0));
    let _ = keyed.attempt(ms(0), None);
    assert_eq!(
        keyed.error(Fault::Sent, at(ms(1), 1.0), None),
        Step::Wait(ms(200))
    );
}

#[test]
fn a_fault_is_decided_as_a_503_without_a_server_delay() {
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let _ = run.attempt(ms(0), None);
    let attempt = Attempt {
        method: "GET",
        status: 503,
        retry_index: 0,
        elapsed: ms(7),
        body_replayable: true,
        replay_safe: false,
        sample_ppm: sample_ppm(0.25),
    };
    let Decision::Wait(wait) = decide(&SETTINGS, &attempt, None) else {
        panic!("a 503 GET is retried");
    };
    assert_eq!(
        run.error(Fault::Sent, at(ms(7), 0.25), None),
        Step::Wait(wait)
    );
}

#[test]
fn the_budget_is_told_of_every_attempt_as_grpc_a6_counts_them() {
    let mut budget = Budget::new(4, 0.5);
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let _ = run.attempt(ms(0), None);
    // A 404 is not a code A6 would retry: neither a pass nor a failure.
    let _ = run.response(404, [], at(ms(1), 1.0), Some(&mut budget));
    assert_eq!(budget.tokens(), 4.0);
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let _ = run.attempt(ms(0), None);
    assert!(matches!(
        run.response(503, [], at(ms(1), 1.0), Some(&mut budget)),
        Step::Wait(_)
    ));
    assert_eq!(budget.tokens(), 3.0);
    let _ = run.attempt(ms(300), None);
    // 2 tokens left is half of 4: the wait the rules allow is not taken.
    assert_eq!(
        run.error(Fault::Sent, at(ms(301), 1.0), Some(&mut budget)),
        Step::Stop(Stop::Throttled)
    );
    assert_eq!(budget.tokens(), 2.0);
    assert_eq!(run.retried().stop, Some(Stop::Throttled));
    let _ = run.error(Fault::Final, at(ms(302), 1.0), Some(&mut budget));
    assert_eq!(
        budget.tokens(),
        2.0,
        "a final fault tells the budget nothing"
    );
}

// The same run told of the same attempts, once with a budget by `&mut` and once with the
// shared form by `&`: every step, and the budget after it, alike.
#[test]
fn a_shared_budget_is_told_and_asked_as_a_budget_is() {
    let mut own = Budget::new(4, 0.5);
    let shared = crate::SharedBudget::new(4, 0.5);
    let mut first = Run::new(SETTINGS, &get(), ms(0));
    let mut second = Run::new(SETTINGS, &get(), ms(0));
    let mut steps = 0;
    for (t, status) in [(1, 200), (2, 404), (3, 503), (4, 500), (5, 200), (6, 429)] {
        let _ = (first.attempt(ms(t), None), second.attempt(ms(t), None));
        assert_eq!(
            second.response_shared(status, [], at(ms(t), 1.0), Some(&shared)),
            first.response(status, [], at(ms(t), 1.0), Some(&mut own)),
            "{status}"
        );
        assert_eq!(shared.snapshot(), own, "{status}");
        steps += 1;
    }
    for (t, fault) in [(7, Fault::Sent), (8, Fault::Unsent), (9, Fault::Final)] {
        assert_eq!(
            second.error_shared(fault, at(ms(t), 1.0), Some(&shared)),
            first.error(fault, at(ms(t), 1.0), Some(&mut own)),
        );
        assert_eq!(shared.snapshot(), own);
        steps += 1;
    }
    let timeout = Timeout::Attempt(ms(5));
    assert_eq!(
        second.timed_out_shared(timeout, at(ms(10), 1.0), Some(&shared)),
        first.timed_out(timeout, at(ms(10), 1.0), Some(&mut own)),
    );
    assert_eq!(shared.snapshot(), own);
    assert_eq!(first.retried(), second.retried());
    // 4, full; 3 and 2 after the 503 and the 500; 2.5, 1.5, 0.5, then empty.
    assert_eq!((steps, shared.tokens()), (9, 0.0));
    // And no budget is no budget, either way.
    let mut alone = Run::new(SETTINGS, &get(), ms(0));
    let _ = alone.attempt(ms(0), None);
    assert!(matches!(
        alone.response_shared(503, [], at(ms(1), 1.0), None),
        Step::Wait(_)
    ));
}

#[test]
fn after_waking_the_budget_must_still_hold_the_reserve() {
    let settings = Settings {
        total_budget: Duration::from_secs(10),
        request_reserve: Duration::from_secs(1),
        ..SETTINGS
    };
    let mut run = Run::new(settings, &get(), ms(0));
    assert!(run.attempt(ms(0), None).is_ok());
    assert_eq!(
        run.error(Fault::Sent, at(ms(8_000), 1.0), None),
        Step::Wait(ms(200))
    );
    // Woken late: exactly the reserve left is not enough, as the rules' check is strict.
    assert_eq!(
        run.attempt(ms(9_000), None),
        Err(Stop::Decided(StopReason::BudgetExhausted))
    );
    assert_eq!(
        run.retried().attempts,
        1,
        "a retry refused after waking is not sent"
    );
    let mut early = Run::new(settings, &get(), ms(0));
    let _ = early.attempt(ms(0), None);
    let _ = early.error(Fault::Sent, at(ms(8_000), 1.0), None);
    assert_eq!(
        early.attempt(ms(8_999), None),
        Ok(Timeout::Budget(ms(1_001)))
    );
}

#[test]
fn an_attempt_never_outlasts_the_budget() {
    let settings = Settings {
        total_budget: Duration::from_secs(3),
        request_reserve: ms(100),
        ..SETTINGS
    };
    let second = Some(Duration::from_secs(1));
    let mut run = Run::new(settings, &get(), ms(0));
    assert_eq!(run.attempt(ms(0), second), Ok(Timeout::Attempt(ms(1000))));
    assert_eq!(
        run.timed_out(Timeout::Attempt(ms(1000)), at(ms(1000), 1.0), None),
        Step::Wait(ms(200))
    );
    assert_eq!(
        run.attempt(ms(1200), second),
        Ok(Timeout::Attempt(ms(1000)))
    );
    assert_eq!(
        run.timed_out(Timeout::Attempt(ms(1000)), at(ms(2200), 1.0), None),
        Step::Wait(ms(400))
    );
    // 400 ms left: the budget, not the attempt timeout, bounds the third attempt.
    let timeout = run.attempt(ms(2600), second).unwrap();
    assert_eq!(timeout, Timeout::Budget(ms(400)));
    assert_eq!(
        run.timed_out(timeout, at(ms(3000), 1.0), None),
        Step::Stop(StopReason::BudgetExhausted.into())
    );
    assert_eq!(run.retried().attempts, 3);
}

#[test]
fn a_zero_attempt_timeout_is_none() {
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let budget = SETTINGS.total_budget;
    assert_eq!(run.attempt(ms(0), Some(ms(0))), Ok(Timeout::Budget(budget)));
    assert_eq!(run.attempt(ms(0), None), Ok(Timeout::Budget(budget)));
    assert_eq!(run.retried().attempts, 2);
}

#[test]
fn a_clock_that_steps_back_is_read_as_the_latest_reading() {
    let mut run = Run::new(SETTINGS, &get(), ms(5_000));
    let _ = run.attempt(ms(6_000), None);
    assert_eq!(run.remaining(ms(1)), SETTINGS.total_budget - ms(1_000));
    let _ = run.error(Fault::Sent, at(ms(2), 1.0), None);
    assert_eq!(run.remaining(ms(5_500)), SETTINGS.total_budget - ms(1_000));
}

#[test]
fn a_refusal_is_not_counted_as_an_attempt() {
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    assert_eq!(run.refused(), Stop::Refused);
    assert_eq!(run.retried().attempts, 0);
    assert_eq!(run.retried().stop, Some(Stop::Refused));
}

#[test]
fn the_record_adds_up_the_waits_and_keeps_the_last() {
    let mut run = Run::new(SETTINGS, &get(), ms(0));
    let mut now = ms(0);
    for wait in [200, 400, 800] {
        let _ = run.attempt(now, None);
        assert_eq!(
            run.response(503, [], at(now, 1.0), None),
            Step::Wait(ms(wait))
        );
        assert_eq!(run.previous(), Some(ms(wait)));
        now += ms(wait);
    }
    let _ = run.attempt(now, None);
    assert_eq!(
        run.response(503, [], at(now, 1.0), None),
        Step::Stop(StopReason::AttemptsExhausted.into())
    );
    assert_eq!(
        run.retried(),
        Retried {
            attempts: 4,
            waited: ms(1400),
            stop: Some(StopReason::AttemptsExhausted.into())
        }
    );
}

#[test]
fn unix_seconds_saturate() {
    assert_eq!(unix_seconds(ms(1_500)), 1);
    assert_eq!(unix_seconds(Duration::MAX), i64::MAX);
}

#[test]
fn idempotency_keys_vouch_only_when_not_blank() {
    assert!(vouches(Some(b"k")));
    assert!(vouches(Some(b" k ")));
    assert!(!vouches(Some(b"")));
    assert!(!vouches(Some(b"  \t ")));
    assert!(!vouches(None));
}

/// The position of `reason` in the rule order; a new variant fails to compile here until it is
/// placed, and then fails `every_reason_is_in_all_in_order` until `StopReason::ALL` has it.
fn ordinal(reason: StopReason) -> usize {
    match reason {
        StopReason::InvalidSettings => 0,
        StopReason::InvalidInput => 1,
        StopReason::NotRetryable => 2,
        StopReason::NotReplayable => 3,
        StopReason::AttemptsExhausted => 4,
        StopReason::BudgetExhausted => 5,
        StopReason::ServerDelayExceedsCap => 6,
        StopReason::InvalidRetryAfter => 7,
    }
}

#[test]
fn every_reason_is_in_all_in_order() {
    let ordinals = StopReason::ALL.map(ordinal);
    assert_eq!(ordinals, [0, 1, 2, 3, 4, 5, 6, 7]);
    let guards = Stop::ALL
        .iter()
        .filter(|stop| matches!(stop, Stop::Throttled | Stop::Refused))
        .count();
    assert_eq!(guards, 2);
    for (i, reason) in StopReason::ALL.iter().enumerate() {
        assert_eq!(Stop::ALL[i], Stop::Decided(*reason));
    }
}

#[test]
fn every_stop_and_success_has_its_own_snake_case_label() {
    let mut labels: alloc::vec::Vec<&str> = Stop::ALL.iter().map(Stop::as_str).collect();
    labels.push(Retried::default().outcome());
    for label in &labels {
        assert!(
            !label.is_empty() && label.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{label} is not snake_case"
        );
    }
    let count = labels.len();
    labels.sort_unstable();
    labels.dedup();
    assert_eq!(
        labels.len(),
        count,
        "two outcomes share a label: {labels:?}"
    );
    assert_eq!(count, 11);
}

#[test]
fn a_decided_stop_is_labelled_by_its_reason() {
    for reason in StopReason::ALL {
        assert_eq!(Stop::from(reason).as_str(), reason.as_str());
        let retried = Retried {
            stop: Some(reason.into()),
            ..Retried::default()
        };
        assert_eq!(retried.outcome(), reason.as_str());
    }
    let refused = Retried {
        stop: Some(Stop::Refused),
        ..Retried::default()
    };
    assert_eq!(refused.outcome(), "refused");
}
