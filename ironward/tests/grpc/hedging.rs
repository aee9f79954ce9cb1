//! The hedging plan, case by case, after gRPC A6's "Hedging Policy" and its "Summary of Retry
//! and Hedging Logic". grpc-go does not implement hedging, so A6's text is the reference.

use core::time::Duration;

use ironward::Budget;
use ironward::grpc::{
    AttemptEnd, Attempts, Code, Codes, HEDGING_POLICY, Halt, Hedge, HedgingPlan, HedgingPolicy,
    PolicyError, Verdict,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn fresh(policy: &HedgingPolicy) -> HedgingPlan {
    HedgingPlan::new(policy, None, ms(0)).expect("a valid policy")
}

fn attempts(set: Attempts) -> Vec<u32> {
    set.iter().collect()
}

fn with_pushback(code: Code, pushback: &'static [&'static str]) -> AttemptEnd<'static> {
    AttemptEnd {
        pushback,
        ..AttemptEnd::new(code)
    }
}

// A6 "Hedging Policy": with hedgingDelay 0.5s and maxAttempts 4, "after 1ms there would be
// one outstanding RPC (the original), after 501ms there would be two ..., after 1001ms there
// would be three ..., and after 1501ms there would be four".
#[test]
fn hedges_go_out_at_their_delay() {
    let mut plan = fresh(&HEDGING_POLICY);
    let mut outstanding = Vec::new();
    for t in [1, 499, 501, 999, 1001, 1499, 1501, 5000] {
        while let Hedge::Send(_) = plan.send(ms(t), None) {}
        outstanding.push(plan.in_flight().len());
    }
    assert_eq!(outstanding, [1, 1, 2, 2, 3, 3, 4, 4]);
    assert_eq!(plan.next(ms(5000)), None);
    assert_eq!(plan.send(ms(5000), None), Hedge::Halt(Halt::AttemptsSpent));
}

#[test]
fn the_next_hedge_is_due_a_delay_after_the_last_was_sent() {
    let mut plan = fresh(&HEDGING_POLICY);
    assert_eq!(
        plan.next(ms(0)),
        Some(Duration::ZERO),
        "the first goes at once"
    );
    assert_eq!(plan.send(ms(0), None), Hedge::Send(0));
    assert_eq!(plan.next(ms(200)), Some(ms(300)));
    assert_eq!(plan.send(ms(200), None), Hedge::Wait(ms(300)));
    // Sent late, at 700 ms: the next is due 500 ms after that.
    assert_eq!(plan.send(ms(700), None), Hedge::Send(1));
    assert_eq!(plan.next(ms(700)), Some(ms(500)));
}

// A6 "Hedging Policy": "If a non-fatal status code is received from a hedged request, then
// the next hedged request in line is sent immediately, shortcutting its hedging delay"; the
// summary's case 3: "Subsequent hedged requests will resume at hedgingDelay".
#[test]
fn a_non_fatal_code_sends_the_next_hedge_at_once() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = fresh(&HEDGING_POLICY);
    assert_eq!(plan.send(ms(0), Some(&budget)), Hedge::Send(0));
    let verdict = plan.on_outcome(
        0,
        AttemptEnd::new(Code::Unavailable),
        ms(100),
        Some(&mut budget),
    );
    assert_eq!(verdict, Verdict::Pending);
    assert_eq!(budget.tokens(), 9.0, "a non-fatal failure takes a token");
    assert_eq!(plan.next(ms(100)), Some(Duration::ZERO));
    assert_eq!(plan.send(ms(100), Some(&budget)), Hedge::Send(1));
    assert_eq!(plan.next(ms(100)), Some(ms(500)));
}

// A6 "Hedging Policy": "If any other status code is received, all outstanding RPCs are
// canceled and the error is returned"; a fatal code is not counted for throttling.
#[test]
fn a_fatal_code_commits_and_cancels_the_others() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = fresh(&HEDGING_POLICY);
    for t in [0, 500, 1000] {
        assert!(matches!(plan.send(ms(t), Some(&budget)), Hedge::Send(_)));
    }
    let verdict = plan.on_outcome(
        1,
        AttemptEnd::new(Code::InvalidArgument),
        ms(1100),
        Some(&mut budget),
    );
    let Verdict::Commit { attempt, cancel } = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!((attempt, attempts(cancel)), (1, vec![0, 2]));
    assert_eq!(budget.tokens(), 10.0);
    assert_eq!(plan.next(ms(1500)), None);
    assert_eq!(plan.send(ms(1500), None), Hedge::Halt(Halt::Committed));
    // The cancelled attempts' outcomes change nothing.
    for n in [0, 2] {
        let late = plan.on_outcome(n, AttemptEnd::new(Code::Ok), ms(1200), Some(&mut budget));
        assert_eq!(late, Verdict::Ignored);
    }
    assert_eq!(budget.tokens(), 10.0);
}

// A6 summary, case 1: "Successful response, cancel previous and pending hedges"; and
// "Every successful RPC will increment the token_count by tokenRatio".
#[test]
fn a_success_commits_and_gives_back_the_token_ratio() {
    let mut budget = Budget::new(10, 0.1);
    budget.fail();
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), Some(&budget));
    let _ = plan.send(ms(500), Some(&budget));
    let verdict = plan.on_outcome(0, AttemptEnd::new(Code::Ok), ms(600), Some(&mut budget));
    let Verdict::Commit { attempt, cancel } = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!((attempt, attempts(cancel)), (0, vec![1]));
    assert_eq!(budget.tokens(), 9.1);
    assert!(plan.in_flight().is_empty());
}

// A6 "Committing": once an attempt's headers arrive the call is committed to it and the
// others are cancelled; its own outcome then ends the call whatever its code.
#[test]
fn headers_commit_the_call_to_their_attempt() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), None);
    let _ = plan.send(ms(500), None);
    assert_eq!(plan.commit(7), None, "never sent");
    let cancel = plan.commit(1).expect("in flight");
    assert_eq!(attempts(cancel), [0]);
    assert_eq!(attempts(plan.in_flight()), [1]);
    assert_eq!(plan.commit(1), None, "already committed");
    assert_eq!(plan.next(ms(1000)), None);
    let verdict = plan.on_outcome(
        1,
        AttemptEnd::new(Code::Unavailable),
        ms(900),
        Some(&mut budget),
    );
    assert_eq!(
        verdict,
        Verdict::Commit {
            attempt: 1,
            cancel: Attempts::EMPTY
        }
    );
    assert_eq!(budget.tokens(), 10.0, "a committed failure is not counted");
    // A committed attempt that succeeds gives the ratio back.
    let mut budget = Budget::new(10, 0.1);
    budget.fail();
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), None);
    assert_eq!(plan.commit(0), Some(Attempts::EMPTY));
    let verdict = plan.on_outcome(0, AttemptEnd::new(Code::Ok), ms(50), Some(&mut budget));
    assert!(matches!(verdict, Verdict::Commit { attempt: 0, .. }));
    assert_eq!(budget.tokens(), 9.1);
    assert_eq!(
        plan.on_outcome(0, AttemptEnd::new(Code::Unavailable), ms(900), None),
        Verdict::Ignored
    );
}

// A6 "Pushback": "If the pushback says to retry after a given delay, the next hedged request
// (if any) will be issued after the given delay has elapsed"; the summary's case 5:
// "Subsequent hedged requests will resume at n + hedgingDelay".
#[test]
fn pushback_sets_when_the_next_hedge_goes() {
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), None);
    let verdict = plan.on_outcome(0, with_pushback(Code::Unavailable, &["300"]), ms(100), None);
    assert_eq!(verdict, Verdict::Pending);
    assert_eq!(plan.next(ms(100)), Some(ms(300)));
    assert_eq!(plan.send(ms(399), None), Hedge::Wait(ms(1)));
    assert_eq!(plan.send(ms(400), None), Hedge::Send(1));
    assert_eq!(
        plan.next(ms(400)),
        Some(ms(500)),
        "resumes at n + hedgingDelay"
    );
}

// A6 "Pushback": "If the pushback says not to retry, no further hedged requests will be
// sent"; A6 "Retry Throttling" counts such a response as a failure.
#[test]
fn pushback_that_says_stop_sends_no_more_hedges() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), Some(&budget));
    let _ = plan.send(ms(500), Some(&budget));
    let verdict = plan.on_outcome(
        0,
        with_pushback(Code::Unavailable, &["-1"]),
        ms(600),
        Some(&mut budget),
    );
    assert_eq!(verdict, Verdict::Pending, "attempt 1 is still in flight");
    assert_eq!(budget.tokens(), 9.0, "counted once");
    assert_eq!(plan.next(ms(600)), None);
    assert_eq!(
        plan.send(ms(2000), Some(&budget)),
        Hedge::Halt(Halt::Pushback)
    );
    // The last attempt in flight fails too: the call fails.
    let verdict = plan.on_outcome(
        1,
        AttemptEnd::new(Code::Internal),
        ms(700),
        Some(&mut budget),
    );
    assert_eq!(verdict, Verdict::Fail(Halt::Pushback));
    assert_eq!(budget.tokens(), 8.0);
    // A pushback that says stop on a fatal code is counted, and the fatal code commits.
    let mut budget = Budget::new(10, 0.1);
    let mut plan = plan_of_two();
    let verdict = plan.on_outcome(
        0,
        with_pushback(Code::InvalidArgument, &["x"]),
        ms(1),
        Some(&mut budget),
    );
    assert!(matches!(verdict, Verdict::Commit { attempt: 0, .. }));
    assert_eq!(budget.tokens(), 9.0);
}

fn plan_of_two() -> HedgingPlan {
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), None);
    let _ = plan.send(ms(500), None);
    plan
}

// A6 "Retry Throttling": "The first outgoing RPC will always be sent, but subsequent hedged
// RPCs will only be sent if token_count is greater than the threshold"; the throttled hedge
// "is cancelled, and if there are no other already-sent hedged RPCs the failure is returned".
#[test]
fn throttling_holds_back_every_hedge_but_the_first() {
    let mut budget = Budget::new(10, 0.1);
    for _ in 0..5 {
        budget.fail();
    }
    assert!(!budget.can_retry());
    let mut plan = fresh(&HEDGING_POLICY);
    assert_eq!(plan.send(ms(0), Some(&budget)), Hedge::Send(0));
    assert_eq!(
        plan.send(ms(500), Some(&budget)),
        Hedge::Halt(Halt::Throttled)
    );
    assert_eq!(plan.next(ms(500)), None);
    // The original still answers.
    let verdict = plan.on_outcome(0, AttemptEnd::new(Code::Ok), ms(600), Some(&mut budget));
    assert!(matches!(verdict, Verdict::Commit { attempt: 0, .. }));
    // A non-fatal failure that leaves the budget at half fails the call at once.
    let mut budget = Budget::new(10, 0.1);
    for _ in 0..4 {
        budget.fail();
    }
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), Some(&budget));
    let verdict = plan.on_outcome(
        0,
        AttemptEnd::new(Code::Unavailable),
        ms(10),
        Some(&mut budget),
    );
    assert_eq!(verdict, Verdict::Fail(Halt::Throttled));
    assert_eq!(budget.tokens(), 5.0);
}

// A6 "Hedging Policy": "If all instances of a hedged RPC fail, there are no additional retry
// attempts."
#[test]
fn when_every_attempt_fails_the_call_fails() {
    let policy = HedgingPolicy {
        max_attempts: 3,
        ..HEDGING_POLICY
    };
    let mut plan = fresh(&policy);
    let mut now = ms(0);
    let mut verdicts = Vec::new();
    while let Hedge::Send(n) = plan.send(now, None) {
        now += ms(10);
        verdicts.push(plan.on_outcome(n, AttemptEnd::new(Code::Unavailable), now, None));
    }
    assert_eq!(
        verdicts,
        [
            Verdict::Pending,
            Verdict::Pending,
            Verdict::Fail(Halt::AttemptsSpent)
        ]
    );
    assert_eq!(plan.attempts(), 3);
}

// A6 "hedgingPolicy": "Set this to "0s", or leave unset, to immediately send all maxAttempts
// RPCs", and no more than 5 of them (A6 "Maximum Number of Retries").
#[test]
fn a_zero_delay_sends_every_attempt_at_once() {
    let policy = HedgingPolicy {
        max_attempts: 9,
        hedging_delay: Duration::ZERO,
        non_fatal_status_codes: Codes::EMPTY,
    };
    let mut plan = fresh(&policy);
    let mut sent = Vec::new();
    while let Hedge::Send(n) = plan.send(ms(0), None) {
        sent.push(n);
    }
    assert_eq!(sent, [0, 1, 2, 3, 4]);
    // With no non-fatal code, any failure is fatal.
    let verdict = plan.on_outcome(3, AttemptEnd::new(Code::Unavailable), ms(1), None);
    let Verdict::Commit { attempt, cancel } = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!((attempt, attempts(cancel)), (3, vec![0, 1, 2, 4]));
}

// A6 "Hedging Policy": "gRPC call deadlines apply to the entire chain of hedged requests".
#[test]
fn no_hedge_is_sent_at_or_after_the_deadline() {
    let mut plan = HedgingPlan::new(&HEDGING_POLICY, Some(ms(1000)), ms(0)).unwrap();
    assert_eq!(plan.send(ms(0), None), Hedge::Send(0));
    assert_eq!(plan.send(ms(500), None), Hedge::Send(1));
    assert_eq!(
        plan.next(ms(500)),
        None,
        "the third would go at the deadline"
    );
    assert_eq!(plan.send(ms(998), None), Hedge::Halt(Halt::Deadline));
    // A shortcut before the deadline still goes.
    let verdict = plan.on_outcome(0, AttemptEnd::new(Code::Unavailable), ms(999), None);
    assert_eq!(verdict, Verdict::Pending);
    assert_eq!(plan.send(ms(999), None), Hedge::Send(2));
    // Attempt 1 fails at 999 ms too: the fourth is due at once, before the deadline, but
    // the caller is late and asks at the deadline: too late to send.
    let verdict = plan.on_outcome(1, AttemptEnd::new(Code::Unavailable), ms(999), None);
    assert_eq!(verdict, Verdict::Pending);
    assert_eq!(plan.next(ms(999)), Some(Duration::ZERO));
    assert_eq!(plan.send(ms(1000), None), Hedge::Halt(Halt::Deadline));
    let verdict = plan.on_outcome(2, AttemptEnd::new(Code::Unavailable), ms(1000), None);
    assert_eq!(verdict, Verdict::Fail(Halt::Deadline));
}

#[test]
fn outcomes_of_attempts_not_in_flight_are_ignored() {
    let mut budget = Budget::new(10, 0.1);
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(0), None);
    for n in [1, 4, 7, 8, 31, u32::MAX] {
        let verdict = plan.on_outcome(n, AttemptEnd::new(Code::Ok), ms(1), Some(&mut budget));
        assert_eq!(verdict, Verdict::Ignored, "attempt {n}");
    }
    let _ = plan.on_outcome(
        0,
        AttemptEnd::new(Code::Unavailable),
        ms(2),
        Some(&mut budget),
    );
    let again = plan.on_outcome(
        0,
        AttemptEnd::new(Code::Unavailable),
        ms(3),
        Some(&mut budget),
    );
    assert_eq!(again, Verdict::Ignored, "already ended");
    assert_eq!(budget.tokens(), 9.0);
}

#[test]
fn a_clock_going_backwards_is_read_as_the_latest_seen() {
    let mut plan = fresh(&HEDGING_POLICY);
    let _ = plan.send(ms(1000), None);
    assert_eq!(plan.send(ms(0), None), Hedge::Wait(ms(500)));
    assert_eq!(plan.next(ms(0)), Some(ms(500)));
    let _ = plan.on_outcome(0, AttemptEnd::new(Code::Unavailable), ms(10), None);
    assert_eq!(
        plan.send(ms(20), None),
        Hedge::Send(1),
        "due at the latest reading"
    );
    assert_eq!(plan.next(ms(0)), Some(ms(500)));
}

#[test]
fn times_near_the_end_of_the_clock_saturate() {
    let end = Duration::MAX;
    let mut plan = HedgingPlan::new(&HEDGING_POLICY, None, end - ms(100)).unwrap();
    assert_eq!(plan.send(end - ms(100), None), Hedge::Send(0));
    assert_eq!(
        plan.next(end - ms(100)),
        Some(ms(100)),
        "due at the end of the clock"
    );
    let pushed = with_pushback(Code::Unavailable, &["9223372036854775807"]);
    assert_eq!(plan.on_outcome(0, pushed, end, None), Verdict::Pending);
    assert_eq!(plan.send(end, None), Hedge::Send(1));
    let mut plan = HedgingPlan::new(&HEDGING_POLICY, Some(end), end - ms(100)).unwrap();
    let _ = plan.send(end - ms(100), None);
    assert_eq!(plan.next(end), None, "the next would go at the deadline");
}

#[test]
fn an_invalid_policy_is_an_error_before_the_first_attempt() {
    let once = HedgingPolicy {
        max_attempts: 1,
        ..HEDGING_POLICY
    };
    assert_eq!(
        HedgingPlan::new(&once, None, ms(0)).unwrap_err(),
        PolicyError::MaxAttempts
    );
}
