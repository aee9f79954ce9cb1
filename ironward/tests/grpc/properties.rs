//! Invariants of the retry and hedging plans for random policies, codes, pushbacks, clocks
//! and draws, hostile values among them, checked against a naive model of the bounds; each
//! plan against a twin that reports to a `SharedBudget`, which must decide alike; and the
//! retry plan against a naive model of grpc-go's `shouldRetry` steps (`stream.go`).

use core::time::Duration;

use ironward::grpc::{
    A6_JITTER, AttemptEnd, Code, Codes, Ending, Halt, Hedge, HedgingPlan, HedgingPolicy,
    MAX_ATTEMPTS, Pushback, RetryPlan, RetryPolicy, RetryStep, Verdict,
};
use ironward::{Budget, Jitter, SharedBudget};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// Spans from nothing to the end of the clock, small ones most often.
fn span() -> impl Strategy<Value = Duration> {
    prop_oneof![
        1 => Just(Duration::ZERO),
        8 => (1u64..=3_000_000_000).prop_map(Duration::from_nanos),
        1 => any::<u64>().prop_map(Duration::from_secs),
        1 => Just(Duration::MAX),
    ]
}

/// Draws in `[0, 1)` mostly, and every kind of float outside it.
fn draw() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.0..1.0f64,
        1 => any::<f64>(),
        1 => prop::sample::select(vec![
            f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.0, -0.0, -1.0, 1.0 + f64::EPSILON,
        ]),
    ]
}

fn multiplier() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 0.01..10.0f64,
        1 => prop::sample::select(vec![
            f64::NAN, f64::INFINITY, 0.0, -1.0, f64::MAX, f64::MIN_POSITIVE, 1.0,
        ]),
    ]
}

fn codes() -> impl Strategy<Value = Codes> {
    any::<u32>().prop_map(|bits| {
        Code::ALL
            .into_iter()
            .filter(|code| bits & 1 << code.number() != 0)
            .collect()
    })
}

fn code() -> impl Strategy<Value = Code> {
    prop::sample::select(Code::ALL.to_vec())
}

/// Raw pushback values: none most often, valid counts, and the malformed.
fn pushback() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        6 => Just(Vec::new()),
        3 => (0u64..5_000).prop_map(|ms| vec![ms.to_string()]),
        1 => any::<i64>().prop_map(|ms| vec![ms.to_string()]),
        1 => prop::sample::select(vec!["", "xxx", "-1", "1.5", " 5", "99999999999999999999"])
            .prop_map(|s| vec![s.to_string()]),
        1 => Just(vec!["100".to_string(), "10".to_string()]),
    ]
}

fn attempts() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 0u32..=8, 1 => Just(u32::MAX)]
}

#[derive(Debug, Clone)]
struct Event {
    code: Code,
    committed: bool,
    pushback: Vec<String>,
    /// Nanoseconds forward (or back, when `back`) from the latest reading.
    step: u64,
    back: bool,
    draw: f64,
}

fn event() -> impl Strategy<Value = Event> {
    (
        code(),
        prop::bool::weighted(0.1),
        pushback(),
        prop_oneof![4 => 0u64..2_000_000_000, 1 => any::<u64>()],
        prop::bool::weighted(0.15),
        draw(),
    )
        .prop_map(|(code, committed, pushback, step, back, draw)| Event {
            code,
            committed,
            pushback,
            step,
            back,
            draw,
        })
}

fn budget() -> impl Strategy<Value = Option<Budget>> {
    prop_oneof![
        1 => Just(None),
        3 => (0u32..=1200, prop_oneof![0.0..2.0f64, any::<f64>()])
            .prop_map(|(tokens, ratio)| Some(Budget::new(tokens, ratio))),
    ]
}

/// The latest reading moved by one event's step, saturating at both ends.
fn advance(now: Duration, event: &Event) -> Duration {
    let step = Duration::from_nanos(event.step);
    if event.back {
        now.saturating_sub(step)
    } else {
        now.saturating_add(step)
    }
}

fn within(budget: &Option<Budget>) -> bool {
    budget
        .as_ref()
        .is_none_or(|b| (0.0..=f64::from(b.max_tokens())).contains(&b.tokens()))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2_000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/proptest-regressions/grpc.txt",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn retry_plans_keep_every_bound(
        max_attempts in attempts(),
        initial_backoff in span(),
        max_backoff in span(),
        backoff_multiplier in multiplier(),
        retryable_status_codes in codes(),
        full in any::<bool>(),
        start in span(),
        deadline in prop::option::of(span()),
        mut budget in budget(),
        events in prop::collection::vec(event(), 0..12),
    ) {
        let policy = RetryPolicy {
            max_attempts,
            initial_backoff,
            max_backoff,
            backoff_multiplier,
            retryable_status_codes,
        };
        let plan = RetryPlan::new(&policy, deadline, start);
        prop_assert_eq!(plan.is_ok(), policy.validate().is_ok());
        let Ok(plan) = plan else { return Ok(()) };
        let jitter = if full { Jitter::Full } else { A6_JITTER };
        let mut plan = plan.with_jitter(jitter);
        // A twin reporting to a shared budget must decide alike.
        let mut twin = plan.clone();
        let shared = budget.map(SharedBudget::from);
        let most = max_attempts.min(MAX_ATTEMPTS);
        // The bound on a backoff: maxBackoff, or a fifth past it under random(0.8, 1.2), to
        // f64's precision (a part in 2^50: a second in a billion years' wait).
        let bound = if full {
            max_backoff
        } else {
            max_backoff
                .saturating_add(max_backoff / 5)
                .saturating_add(max_backoff / (1u32 << 25) / (1u32 << 25))
                .saturating_add(Duration::from_nanos(1))
        };
        let (mut latest, mut reading) = (start, start);
        for event in &events {
            reading = advance(reading, event);
            latest = latest.max(reading);
            let values: Vec<&str> = event.pushback.iter().map(String::as_str).collect();
            let outcome = AttemptEnd { code: event.code, committed: event.committed, pushback: &values };
            let step = plan.on_outcome(outcome, reading, event.draw, budget.as_mut());
            let twin_step = twin.on_outcome_shared(outcome, reading, event.draw, shared.as_ref());
            prop_assert_eq!(step, twin_step);
            prop_assert_eq!(shared.as_ref().map(SharedBudget::snapshot), budget);
            prop_assert!(plan.attempts() <= most, "{} attempts of {}", plan.attempts(), most);
            prop_assert!(within(&budget), "{:?}", budget);
            if let RetryStep::Wait(wait) = step {
                if let Some(deadline) = deadline {
                    prop_assert!(latest.saturating_add(wait) < deadline, "{:?} + {:?}", latest, wait);
                }
                match Pushback::from_values(&values) {
                    Pushback::Wait(pushed) => prop_assert_eq!(wait, pushed),
                    Pushback::Absent => prop_assert!(wait <= bound, "{:?} past {:?}", wait, bound),
                    Pushback::Halt => prop_assert!(false, "a stopping pushback waited"),
                }
                prop_assert!(retryable_status_codes.contains(event.code));
            }
        }
    }

    #[test]
    fn hedging_plans_keep_every_bound(
        max_attempts in attempts(),
        hedging_delay in span(),
        non_fatal_status_codes in codes(),
        start in span(),
        deadline in prop::option::of(span()),
        mut budget in budget(),
        events in prop::collection::vec((event(), 0u32..10, 0u8..3), 0..24),
    ) {
        let policy = HedgingPolicy { max_attempts, hedging_delay, non_fatal_status_codes };
        let plan = HedgingPlan::new(&policy, deadline, start);
        prop_assert_eq!(plan.is_ok(), policy.validate().is_ok());
        let Ok(mut plan) = plan else { return Ok(()) };
        let mut twin = plan.clone();
        let shared = budget.map(SharedBudget::from);
        // A twin told each uncommitted outcome as the caller's own reading (`on_end`), which
        // must decide as the code's reading does: one rule for both.
        let (mut read, mut read_budget) = (plan.clone(), budget);
        let most = max_attempts.min(MAX_ATTEMPTS);
        let (mut latest, mut reading) = (start, start);
        let mut sent = 0;
        let mut committed = false;
        for (event, attempt, action) in &events {
            reading = advance(reading, event);
            // `commit` takes no reading, so the plan's latest is the latest of the others.
            if *action != 2 {
                latest = latest.max(reading);
            }
            match action {
                0 => {
                    let hedge = plan.send(reading, budget.as_ref());
                    prop_assert_eq!(hedge, twin.send_shared(reading, shared.as_ref()));
                    prop_assert_eq!(hedge, read.send(reading, read_budget.as_ref()));
                    if let Hedge::Send(n) = hedge {
                        prop_assert_eq!(n, sent, "attempts go out in order");
                        prop_assert!(!committed, "a hedge after the commit");
                        if n > 0 {
                            if let Some(deadline) = deadline {
                                prop_assert!(latest < deadline, "a hedge at {:?}", latest);
                            }
                            if let Some(budget) = &budget {
                                prop_assert!(budget.can_retry(), "a hedge while throttled");
                            }
                        }
                        sent += 1;
                    }
                    if let Hedge::Wait(wait) = hedge {
                        prop_assert_eq!(plan.next(reading), Some(wait));
                    }
                }
                1 => {
                    let values: Vec<&str> = event.pushback.iter().map(String::as_str).collect();
                    let outcome =
                        AttemptEnd { code: event.code, committed: event.committed, pushback: &values };
                    let verdict = plan.on_outcome(*attempt, outcome, reading, budget.as_mut());
                    let twin_verdict =
                        twin.on_outcome_shared(*attempt, outcome, reading, shared.as_ref());
                    prop_assert_eq!(verdict, twin_verdict);
                    let end = match event.code {
                        Code::Ok => Ending::Succeeded,
                        code => Ending::Failed {
                            fatal: !non_fatal_status_codes.contains(code),
                            pushback: Pushback::from_values(&values),
                        },
                    };
                    let read_verdict = if event.committed {
                        read.on_outcome(*attempt, outcome, reading, read_budget.as_mut())
                    } else {
                        read.on_end(*attempt, end, reading, read_budget.as_mut())
                    };
                    prop_assert_eq!(verdict, read_verdict);
                    if let Verdict::Commit { attempt: taken, cancel } = verdict {
                        prop_assert_eq!(taken, *attempt);
                        prop_assert!(!cancel.contains(taken));
                        committed = true;
                    }
                    if let Verdict::Fail(_) = verdict {
                        prop_assert!(plan.in_flight().is_empty());
                    }
                }
                _ => {
                    let cancel = plan.commit(*attempt);
                    prop_assert_eq!(cancel, twin.commit(*attempt));
                    prop_assert_eq!(cancel, read.commit(*attempt));
                    if cancel.is_some() {
                        committed = true;
                    }
                }
            }
            prop_assert!(plan.attempts() <= most);
            prop_assert_eq!(plan.attempts(), sent);
            prop_assert!(plan.in_flight().len() <= sent);
            prop_assert!(plan.in_flight().iter().all(|n| n < sent));
            prop_assert!(within(&budget), "{:?}", budget);
            prop_assert_eq!(shared.as_ref().map(SharedBudget::snapshot), budget);
            prop_assert_eq!(&plan, &twin);
            prop_assert_eq!(&plan, &read);
            prop_assert_eq!(read_budget, budget);
            if committed {
                prop_assert_eq!(plan.next(reading), None);
                prop_assert!(plan.in_flight().len() <= 1);
            }
        }
    }
}

/// A naive model of grpc-go's `csAttempt.shouldRetry` (`stream.go`), written from its steps,
/// with a rigid jitter so that every wait is the ceiling itself.
struct Model {
    policy: RetryPolicy,
    deadline: Option<Duration>,
    made: u32,
    since_pushback: u32,
    latest: Duration,
    ended: bool,
}

impl Model {
    fn step(
        &mut self,
        code: Code,
        committed: bool,
        values: &[&str],
        now: Duration,
        budget: Option<&mut Budget>,
    ) -> RetryStep {
        self.latest = self.latest.max(now);
        if self.ended {
            return RetryStep::Halt(Halt::Committed);
        }
        let step = self.decide(code, committed, values, budget);
        match step {
            RetryStep::Wait(_) => self.made += 1,
            _ => self.ended = true,
        }
        step
    }

    fn decide(
        &mut self,
        code: Code,
        committed: bool,
        values: &[&str],
        mut budget: Option<&mut Budget>,
    ) -> RetryStep {
        if code == Code::Ok {
            if let Some(b) = budget {
                b.pass();
            }
            return RetryStep::Done;
        }
        if committed {
            return RetryStep::Halt(Halt::Committed);
        }
        // `strconv.Atoi` on the one value, by the standard library's own parser.
        let pushback = match values {
            [] => None,
            [one] => match one.parse::<i64>() {
                Ok(ms) if ms >= 0 => Some(ms as u64),
                _ => {
                    if let Some(b) = budget.as_deref_mut() {
                        b.fail();
                    }
                    return RetryStep::Halt(Halt::Pushback);
                }
            },
            _ => {
                if let Some(b) = budget.as_deref_mut() {
                    b.fail();
                }
                return RetryStep::Halt(Halt::Pushback);
            }
        };
        if !self.policy.retryable_status_codes.contains(code) {
            return RetryStep::Halt(Halt::NotRetryable);
        }
        if let Some(b) = budget {
            b.fail();
            if !b.can_retry() {
                return RetryStep::Halt(Halt::Throttled);
            }
        }
        if self.made >= self.policy.max_attempts.min(5) {
            return RetryStep::Halt(Halt::AttemptsSpent);
        }
        let wait = match pushback {
            Some(ms) => Duration::from_millis(ms),
            None => {
                let mut ceiling = self.policy.initial_backoff.as_nanos() as f64;
                for _ in 0..self.since_pushback {
                    ceiling *= self.policy.backoff_multiplier;
                }
                let cap = self.policy.max_backoff;
                let nanos = ceiling.min(cap.as_nanos() as f64).round();
                if nanos >= cap.as_nanos() as f64 {
                    cap
                } else {
                    Duration::from_nanos(nanos as u64)
                }
            }
        };
        if self
            .deadline
            .is_some_and(|deadline| self.latest.saturating_add(wait) >= deadline)
        {
            return RetryStep::Halt(Halt::Deadline);
        }
        if pushback.is_some() {
            self.since_pushback = 0;
        } else {
            self.since_pushback += 1;
        }
        RetryStep::Wait(wait)
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2_000,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/proptest-regressions/grpc.txt",
        ))),
        ..ProptestConfig::default()
    })]

    // The plan decides every outcome as the naive model of grpc-go's steps does, and tells
    // the budget the same.
    #[test]
    fn retry_plans_decide_as_the_model_of_grpc_go(
        max_attempts in 2u32..=7,
        initial_backoff in (1u64..=2_000_000_000).prop_map(Duration::from_nanos),
        max_backoff in (1u64..=5_000_000_000).prop_map(Duration::from_nanos),
        backoff_multiplier in 0.1..4.0f64,
        retryable_status_codes in codes(),
        deadline in prop::option::of((0u64..=20_000_000_000).prop_map(Duration::from_nanos)),
        budget in budget(),
        events in prop::collection::vec(event(), 0..10),
    ) {
        let policy = RetryPolicy {
            max_attempts,
            initial_backoff,
            max_backoff,
            backoff_multiplier,
            retryable_status_codes,
        };
        let mut plan = RetryPlan::new(&policy, deadline, Duration::ZERO)
            .unwrap()
            .with_jitter(Jitter::Rigid);
        let mut model = Model {
            policy,
            deadline,
            made: 1,
            since_pushback: 0,
            latest: Duration::ZERO,
            ended: false,
        };
        let (mut ours, mut theirs) = (budget, budget);
        let mut reading = Duration::ZERO;
        for event in &events {
            reading = advance(reading, event).min(Duration::from_secs(1_000_000));
            let values: Vec<&str> = event.pushback.iter().map(String::as_str).collect();
            let outcome = AttemptEnd { code: event.code, committed: event.committed, pushback: &values };
            let step = plan.on_outcome(outcome, reading, event.draw, ours.as_mut());
            let want = model.step(event.code, event.committed, &values, reading, theirs.as_mut());
            match (step, want) {
                // The model's float chain may round a nanosecond apart from the plan's.
                (RetryStep::Wait(a), RetryStep::Wait(b)) => {
                    prop_assert!(a.abs_diff(b) <= Duration::from_nanos(1), "{:?} vs {:?}", a, b);
                }
                _ => prop_assert_eq!(step, want),
            }
            prop_assert_eq!(ours, theirs);
            prop_assert_eq!(plan.attempts(), model.made);
        }
    }
}
