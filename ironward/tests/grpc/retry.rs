//! The retry plan, case by case, after grpc-go's `test/retry_test.go` and `stream.go`.

use core::time::Duration;

use ironward::grpc::{
    AttemptEnd, Code, Codes, Halt, PolicyError, RETRY_POLICY, RetryPlan, RetryPolicy, RetryStep,
};
use ironward::{Budget, Jitter};

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// grpc-go's test policy: `MaxAttempts` 4, `.01s` both ways, multiplier 1.
pub(crate) fn policy(codes: &[Code]) -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        initial_backoff: ms(10),
        max_backoff: ms(10),
        backoff_multiplier: 1.0,
        retryable_status_codes: Codes::of(codes),
    }
}

/// One call against a server that answers its `i`-th attempt (counted across calls, from 0)
/// with `server(i)`: the code the call ends with, and how it stopped.
fn call(
    policy: &RetryPolicy,
    server: &dyn Fn(u32) -> Code,
    i: &mut i64,
    mut budget: Option<&mut Budget>,
) -> (Code, RetryStep) {
    let mut now = ms(0);
    let mut plan = RetryPlan::new(policy, None, now).expect("a valid policy");
    loop {
        *i += 1;
        let code = server(*i as u32);
        now += ms(1);
        let step = plan.on_outcome(AttemptEnd::new(code), now, 0.5, budget.as_deref_mut());
        match step {
            RetryStep::Wait(wait) => now += wait,
            RetryStep::Done | RetryStep::Halt(_) => return (code, step),
        }
    }
}

// grpc-go `test/retry_test.go`, `TestRetryUnary`: the server succeeds on its attempts 0, 2
// and 5, fails with the non-retryable INTERNAL on 6, 8 and 11, and with the retryable
// ALREADY_EXISTS otherwise; each row is the code a call ends with and the server's count.
#[test]
fn retry_unary_retries_the_retryable_code_up_to_four_attempts() {
    let server = |i| match i {
        0 | 2 | 5 => Code::Ok,
        6 | 8 | 11 => Code::Internal,
        _ => Code::AlreadyExists,
    };
    let policy = policy(&[Code::AlreadyExists]);
    let mut i = -1;
    let want = [
        (Code::Ok, 0, RetryStep::Done),
        (Code::Ok, 2, RetryStep::Done),
        (Code::Ok, 5, RetryStep::Done),
        (Code::Internal, 6, RetryStep::Halt(Halt::NotRetryable)),
        (Code::Internal, 8, RetryStep::Halt(Halt::NotRetryable)),
        (Code::Internal, 11, RetryStep::Halt(Halt::NotRetryable)),
        (
            Code::AlreadyExists,
            15,
            RetryStep::Halt(Halt::AttemptsSpent),
        ),
    ];
    for (code, count, step) in want {
        assert_eq!(call(&policy, &server, &mut i, None), (code, step));
        assert_eq!(i, count);
    }
}

// grpc-go `test/retry_test.go`, `TestRetryThrottling`: maxTokens 10, tokenRatio 0.5, the
// server succeeding on its attempts 0, 3, 6, 10 to 14, 16 and 18 and failing with UNAVAILABLE
// otherwise. grpc-go asserts the code and the count; the tokens are what A6 leaves after each
// call (grpc-go's comments give 6 after the third call and 5.5 after the eleventh, which its
// own rule, a token per failure and 0.5 per success, does not reach: 8.5 − 2 + 0.5 is 7).
#[test]
fn retry_throttling_turns_retries_off_and_back_on() {
    let server = |i| match i {
        0 | 3 | 6 | 10..=14 | 16 | 18 => Code::Ok,
        _ => Code::Unavailable,
    };
    let policy = policy(&[Code::Unavailable]);
    let mut budget = Budget::new(10, 0.5);
    let mut i = -1;
    let want = [
        (Code::Ok, 0, 10.0),
        (Code::Ok, 3, 8.5),
        (Code::Ok, 6, 7.0),
        // 6 after the first failure: retried; 5 after the second: not above half, stopped.
        (Code::Unavailable, 8, 5.0),
        (Code::Unavailable, 9, 4.0),
        (Code::Ok, 10, 4.5),
        (Code::Ok, 11, 5.0),
        (Code::Ok, 12, 5.5),
        (Code::Ok, 13, 6.0),
        (Code::Ok, 14, 6.5),
        (Code::Ok, 16, 6.0),
        (Code::Unavailable, 17, 5.0),
    ];
    for (n, (code, count, tokens)) in want.into_iter().enumerate() {
        let (ended, step) = call(&policy, &server, &mut i, Some(&mut budget));
        assert_eq!(
            (ended, i, budget.tokens()),
            (code, count, tokens),
            "call {n}"
        );
        if code == Code::Unavailable {
            assert_eq!(step, RetryStep::Halt(Halt::Throttled), "call {n}");
        }
    }
}

fn unavailable_with(pushback: &'static [&'static str]) -> AttemptEnd<'static> {
    AttemptEnd {
        pushback,
        ..AttemptEnd::new(Code::Unavailable)
    }
}

// grpc-go `test/retry_test.go`, `TestRetryStreaming`: "Negative server pushback - no retry",
// "Non-numeric server pushback - no retry", "Multiple server pushback values - no retry".
// `stream.go` counts each as a failure for throttling.
#[test]
fn pushback_that_says_stop_stops_and_counts_a_failure() {
    for values in [&["-1"][..], &["xxx"], &["100", "10"]] {
        let mut budget = Budget::new(10, 0.1);
        let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
        let outcome = AttemptEnd {
            pushback: values,
            ..AttemptEnd::new(Code::Unavailable)
        };
        let step = plan.on_outcome(outcome, ms(5), 0.5, Some(&mut budget));
        assert_eq!(step, RetryStep::Halt(Halt::Pushback), "{values:?}");
        assert_eq!((plan.attempts(), budget.tokens()), (1, 9.0), "{values:?}");
    }
    // Counted even when the code is not retryable: grpc-go reads the pushback first.
    let mut budget = Budget::new(10, 0.1);
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
    let outcome = AttemptEnd {
        pushback: &["-5"],
        ..AttemptEnd::new(Code::InvalidArgument)
    };
    let step = plan.on_outcome(outcome, ms(5), 0.5, Some(&mut budget));
    assert_eq!(
        (step, budget.tokens()),
        (RetryStep::Halt(Halt::Pushback), 9.0)
    );
}

// grpc-go `test/retry_test.go`, `TestRetryStreaming`: "1s server pushback - delayed retry".
#[test]
fn pushback_of_a_second_waits_exactly_a_second() {
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
    for draw in [0.0, 0.5, 0.99, f64::NAN] {
        let mut plan = plan.clone();
        let step = plan.on_outcome(unavailable_with(&["1000"]), ms(3), draw, None);
        assert_eq!(step, RetryStep::Wait(ms(1000)), "draw {draw}");
    }
    let step = plan.on_outcome(unavailable_with(&["0"]), ms(3), 0.5, None);
    assert_eq!(step, RetryStep::Wait(Duration::ZERO));
}

// grpc-go `stream.go`, `numRetriesSincePushback`, and A6 "Pushback": after a pushback the
// backoff starts again from initialBackoff.
#[test]
fn pushback_resets_the_backoff() {
    let policy = RetryPolicy {
        max_attempts: 5,
        ..RETRY_POLICY
    };
    let mut plan = RetryPlan::new(&policy, None, ms(0)).unwrap();
    let mut waits = Vec::new();
    for outcome in [
        AttemptEnd::new(Code::Unavailable),
        AttemptEnd::new(Code::Unavailable),
        unavailable_with(&["50"]),
        AttemptEnd::new(Code::Unavailable),
    ] {
        // A draw of 0.5 is the ceiling itself under A6's random(0.8, 1.2).
        match plan.on_outcome(outcome, ms(0), 0.5, None) {
            RetryStep::Wait(wait) => waits.push(wait),
            step => panic!("{step:?}"),
        }
    }
    assert_eq!(waits, [ms(100), ms(200), ms(50), ms(100)]);
    assert_eq!(plan.attempts(), 5);
}

// A6 "Pushback": "If the client has already exhausted its maxAttempts, the call will not be
// retried even if the server says to retry after a given delay."
#[test]
fn pushback_does_not_add_attempts() {
    let policy = RetryPolicy {
        max_attempts: 2,
        ..RETRY_POLICY
    };
    let mut plan = RetryPlan::new(&policy, None, ms(0)).unwrap();
    let first = plan.on_outcome(unavailable_with(&["10"]), ms(0), 0.5, None);
    assert_eq!(first, RetryStep::Wait(ms(10)));
    let second = plan.on_outcome(unavailable_with(&["10"]), ms(10), 0.5, None);
    assert_eq!(second, RetryStep::Halt(Halt::AttemptsSpent));
}

// grpc-go `test/retry_test.go`, `TestMaxCallAttempts`: the service asks for 8 attempts and
// the client's default maximum of 5 holds (its `{8, -1, 5}` row), or for 3 and gets 3.
#[test]
fn max_attempts_are_capped_at_five() {
    for (asked, made) in [(8, 5), (3, 3), (5, 5), (2, 2), (u32::MAX, 5)] {
        let policy = RetryPolicy {
            max_attempts: asked,
            ..policy(&[Code::Unavailable])
        };
        let server = |_| Code::Unavailable;
        let mut i = -1;
        let (code, step) = call(&policy, &server, &mut i, None);
        assert_eq!(
            (code, step),
            (Code::Unavailable, RetryStep::Halt(Halt::AttemptsSpent))
        );
        assert_eq!(i + 1, i64::from(made), "asked {asked}");
    }
}

// A6 "Retry Throttling", grpc-go `stream.go`: "we count this as a failure only if the code
// matched a retryable code".
#[test]
fn a_code_that_is_not_retryable_stops_and_counts_nothing() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
    let step = plan.on_outcome(
        AttemptEnd::new(Code::InvalidArgument),
        ms(1),
        0.5,
        Some(&mut budget),
    );
    assert_eq!(
        (step, budget.tokens()),
        (RetryStep::Halt(Halt::NotRetryable), 10.0)
    );
}

// A6 "Retry Throttling": the last attempt's retryable failure is counted too, as grpc-go
// throttles before it checks the attempts.
#[test]
fn the_last_attempts_failure_takes_a_token() {
    let mut budget = Budget::new(100, 0.1);
    let policy = RetryPolicy {
        max_attempts: 2,
        ..RETRY_POLICY
    };
    let mut plan = RetryPlan::new(&policy, None, ms(0)).unwrap();
    let unavailable = AttemptEnd::new(Code::Unavailable);
    assert!(matches!(
        plan.on_outcome(unavailable, ms(0), 0.5, Some(&mut budget)),
        RetryStep::Wait(_)
    ));
    let step = plan.on_outcome(unavailable, ms(500), 0.5, Some(&mut budget));
    assert_eq!(
        (step, budget.tokens()),
        (RetryStep::Halt(Halt::AttemptsSpent), 98.0)
    );
}

// A6 "Retry Throttling": "Every successful RPC will increment the token_count by
// tokenRatio", a success after retries included.
#[test]
fn a_success_gives_back_the_token_ratio() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
    let _ = plan.on_outcome(
        AttemptEnd::new(Code::Unavailable),
        ms(0),
        0.5,
        Some(&mut budget),
    );
    let step = plan.on_outcome(AttemptEnd::new(Code::Ok), ms(200), 0.5, Some(&mut budget));
    assert_eq!((step, budget.tokens()), (RetryStep::Done, 9.1));
}

// A6 "Committing": once the response headers have arrived the call is committed, and a
// committed call is never retried (grpc-go retries only a trailers-only response). It is
// not counted either: grpc-go returns before it throttles.
#[test]
fn a_committed_call_is_never_retried() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
    let outcome = AttemptEnd {
        committed: true,
        pushback: &["10"],
        ..AttemptEnd::new(Code::Unavailable)
    };
    let step = plan.on_outcome(outcome, ms(1), 0.5, Some(&mut budget));
    assert_eq!(
        (step, budget.tokens()),
        (RetryStep::Halt(Halt::Committed), 10.0)
    );
}

// Once a plan has answered, a further outcome is a caller's slip: it stops, and counts
// nothing.
#[test]
fn an_ended_plan_answers_committed() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, ms(0)).unwrap();
    assert_eq!(
        plan.on_outcome(AttemptEnd::new(Code::Ok), ms(1), 0.5, Some(&mut budget)),
        RetryStep::Done
    );
    for code in [Code::Ok, Code::Unavailable] {
        let step = plan.on_outcome(AttemptEnd::new(code), ms(2), 0.5, Some(&mut budget));
        assert_eq!(step, RetryStep::Halt(Halt::Committed));
    }
    assert_eq!(budget.tokens(), 10.0);
}

// A6 "Retry Policy": deadlines apply to the whole chain of attempts. A wait that would start
// the next attempt at or after the deadline stops at once (grpc-go sleeps it first).
#[test]
fn no_attempt_starts_at_or_after_the_deadline() {
    let rigid = |deadline| {
        RetryPlan::new(&RETRY_POLICY, Some(deadline), ms(0))
            .unwrap()
            .with_jitter(Jitter::Rigid)
    };
    let unavailable = AttemptEnd::new(Code::Unavailable);
    // The first backoff is 100 ms from 50 ms: 150 ms.
    let mut plan = rigid(ms(150));
    assert_eq!(
        plan.on_outcome(unavailable, ms(50), 0.5, None),
        RetryStep::Halt(Halt::Deadline)
    );
    let mut plan = rigid(ms(150) + Duration::from_nanos(1));
    assert_eq!(
        plan.on_outcome(unavailable, ms(50), 0.5, None),
        RetryStep::Wait(ms(100))
    );
    // A pushback is held to the deadline as well.
    let mut plan = rigid(ms(1000));
    assert_eq!(
        plan.on_outcome(unavailable_with(&["2000"]), ms(50), 0.5, None),
        RetryStep::Halt(Halt::Deadline)
    );
    // A deadline already passed stops the first retry, even a zero wait.
    let mut plan = rigid(ms(10));
    assert_eq!(
        plan.on_outcome(unavailable_with(&["0"]), ms(10), 0.5, None),
        RetryStep::Halt(Halt::Deadline)
    );
}

// A6 "Retry Throttling" still counts the failure when the deadline stops the retry.
#[test]
fn a_retry_stopped_by_the_deadline_still_counted_its_failure() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = RetryPlan::new(&RETRY_POLICY, Some(ms(1)), ms(0)).unwrap();
    let step = plan.on_outcome(
        AttemptEnd::new(Code::Unavailable),
        ms(0),
        0.5,
        Some(&mut budget),
    );
    assert_eq!(
        (step, budget.tokens()),
        (RetryStep::Halt(Halt::Deadline), 9.0)
    );
}

// A6 "Exposed Retry Metadata": `grpc-previous-rpc-attempts` is absent on the first attempt,
// 1 on the second, and so on.
#[test]
fn each_attempt_knows_the_attempts_before_it() {
    let policy = RetryPolicy {
        max_attempts: 5,
        ..RETRY_POLICY
    };
    let mut plan = RetryPlan::new(&policy, None, ms(0)).unwrap();
    let mut seen = vec![plan.previous_attempts()];
    while let RetryStep::Wait(_) =
        plan.on_outcome(AttemptEnd::new(Code::Unavailable), ms(0), 0.5, None)
    {
        seen.push(plan.previous_attempts());
    }
    assert_eq!(seen, [0, 1, 2, 3, 4]);
}

// A6's backoff formula: the ceiling of the n-th retry is
// min(initialBackoff · multiplier^(n−1), maxBackoff); full jitter draws within it.
#[test]
fn the_backoff_grows_to_max_backoff() {
    let policy = RetryPolicy {
        max_attempts: 5,
        initial_backoff: ms(100),
        max_backoff: ms(500),
        backoff_multiplier: 3.0,
        ..RETRY_POLICY
    };
    let waits = |jitter, draw| {
        let mut plan = RetryPlan::new(&policy, None, ms(0))
            .unwrap()
            .with_jitter(jitter);
        let mut waits = Vec::new();
        while let RetryStep::Wait(wait) =
            plan.on_outcome(AttemptEnd::new(Code::Unavailable), ms(0), draw, None)
        {
            waits.push(wait);
        }
        waits
    };
    assert_eq!(
        waits(Jitter::Rigid, 0.0),
        [ms(100), ms(300), ms(500), ms(500)]
    );
    assert_eq!(
        waits(Jitter::Full, 0.5),
        [ms(50), ms(150), ms(250), ms(250)]
    );
    assert_eq!(waits(Jitter::Full, 0.0), [ms(0); 4]);
    // A6's random(0.8, 1.2): a fifth either way, past maxBackoff at the top.
    assert_eq!(
        waits(ironward::grpc::A6_JITTER, 0.0),
        [ms(80), ms(240), ms(400), ms(400)]
    );
    assert_eq!(
        waits(ironward::grpc::A6_JITTER, 1.0),
        [ms(120), ms(360), ms(600), ms(600)]
    );
    // A multiplier below 1 shrinks the backoff, as grpc-go's math.Pow does.
    let shrinking = RetryPolicy {
        backoff_multiplier: 0.5,
        ..policy
    };
    let mut plan = RetryPlan::new(&shrinking, None, ms(0))
        .unwrap()
        .with_jitter(Jitter::Rigid);
    let unavailable = AttemptEnd::new(Code::Unavailable);
    assert_eq!(
        plan.on_outcome(unavailable, ms(0), 0.0, None),
        RetryStep::Wait(ms(100))
    );
    assert_eq!(
        plan.on_outcome(unavailable, ms(0), 0.0, None),
        RetryStep::Wait(ms(50))
    );
}

#[test]
fn an_invalid_policy_is_an_error_before_the_first_attempt() {
    let bad = RetryPolicy {
        max_attempts: 1,
        ..RETRY_POLICY
    };
    assert_eq!(
        RetryPlan::new(&bad, None, ms(0)).unwrap_err(),
        PolicyError::MaxAttempts
    );
    let bad = RetryPolicy {
        backoff_multiplier: f64::NAN,
        ..RETRY_POLICY
    };
    assert_eq!(
        RetryPlan::new(&bad, None, ms(0)).unwrap_err().to_string(),
        "backoff multiplier must be above zero and finite"
    );
}

// The core's clock rule: a `now` earlier than one seen is the latest seen, so a clock that
// steps back cannot slip a retry in before the deadline.
#[test]
fn a_clock_going_backwards_is_read_as_the_latest_seen() {
    let mut plan = RetryPlan::new(&RETRY_POLICY, Some(ms(1000)), ms(0))
        .unwrap()
        .with_jitter(Jitter::Rigid);
    let unavailable = AttemptEnd::new(Code::Unavailable);
    assert_eq!(
        plan.on_outcome(unavailable, ms(850), 0.0, None),
        RetryStep::Wait(ms(100))
    );
    assert_eq!(
        plan.on_outcome(unavailable, ms(0), 0.0, None),
        RetryStep::Halt(Halt::Deadline),
        "850 ms + 200 ms passes the deadline"
    );
}

#[test]
fn waits_near_the_end_of_the_clock_saturate() {
    let end = Duration::MAX;
    let huge = &["9223372036854775807"];
    let mut plan = RetryPlan::new(&RETRY_POLICY, Some(end), end - ms(1)).unwrap();
    assert_eq!(
        plan.on_outcome(unavailable_with(huge), end - ms(1), 0.5, None),
        RetryStep::Halt(Halt::Deadline)
    );
    let mut plan = RetryPlan::new(&RETRY_POLICY, None, end).unwrap();
    assert_eq!(
        plan.on_outcome(unavailable_with(huge), end, 0.5, None),
        RetryStep::Wait(Duration::from_millis(i64::MAX as u64))
    );
    let enormous = RetryPolicy {
        initial_backoff: Duration::MAX,
        max_backoff: Duration::MAX,
        backoff_multiplier: f64::MAX,
        ..RETRY_POLICY
    };
    let mut plan = RetryPlan::new(&enormous, None, ms(0))
        .unwrap()
        .with_jitter(Jitter::Rigid);
    let unavailable = AttemptEnd::new(Code::Unavailable);
    for _ in 0..3 {
        assert_eq!(
            plan.on_outcome(unavailable, end, 0.5, None),
            RetryStep::Wait(end)
        );
    }
}

#[test]
fn stop_reasons_say_why_in_lower_case() {
    let all = [
        (Halt::NotRetryable, "status code not retryable"),
        (Halt::AttemptsSpent, "attempts spent"),
        (Halt::Throttled, "retries throttled"),
        (Halt::Pushback, "server pushback said stop"),
        (Halt::Committed, "call committed"),
        (Halt::Deadline, "deadline would pass"),
    ];
    for (stop, text) in all {
        assert_eq!(stop.to_string(), text);
        let error: &dyn core::error::Error = &stop;
        assert!(error.source().is_none());
    }
}
