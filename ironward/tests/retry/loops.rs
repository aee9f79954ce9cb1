//! Whole loops on a clock that moves only when the loop says: each attempt takes what the
//! test draws (cut short at its timeout), each wait is slept exactly.

use std::time::Duration;

use proptest::prelude::*;

use ironward::retry::{Cause, Engine, Failure, Next, Timeout};

use super::{roll, rules};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn a_loop_that_sleeps_as_told_keeps_its_budget_and_its_attempts(
        rules in rules(),
        start in (0u64..1_000_000).prop_map(Duration::from_millis),
        attempts in proptest::collection::vec(
            ((0u64..3_000).prop_map(Duration::from_millis), roll(), any::<bool>()),
            1..40,
        ),
        per_attempt in proptest::option::of((0u64..2_000).prop_map(Duration::from_millis)),
    ) {
        let mut engine = Engine::new(rules, start);
        let mut now = start;
        let mut waits = Duration::ZERO;
        let mut ended = None;
        for (took, roll, transient) in attempts {
            let timeout = match engine.attempt(now, per_attempt) {
                Ok(timeout) => timeout,
                Err(stop) => {
                    ended = Some(stop);
                    break;
                }
            };
            now = now.saturating_add(took.min(timeout.duration()));
            let failure = if transient {
                Failure::retryable(now, roll)
            } else {
                Failure::fatal(Cause::NotRetryable, now)
            };
            let next = if took >= timeout.duration() {
                engine.timed_out(timeout, failure, None)
            } else {
                engine.failed(failure, None)
            };
            match next {
                Next::Wait(wait) => {
                    waits = waits.saturating_add(wait);
                    now = now.saturating_add(wait);
                }
                Next::Stop(stop) => {
                    ended = Some(stop);
                    break;
                }
            }
            if let Timeout::Budget(_) = timeout {
                prop_assert!(took < timeout.duration(), "out of the budget is a stop");
            }
        }
        let retried = engine.retried();
        prop_assert_eq!(retried.stop, ended);
        prop_assert_eq!(retried.waited, waits);
        prop_assert!(retried.attempts <= rules.backoff.attempts.max(1));
        // Exact sleeps never take the call past its budget (when the clock could hold it).
        if start.checked_add(rules.total_budget).is_some() {
            prop_assert!(now - start <= rules.total_budget, "{:?} > {:?}", now - start, rules.total_budget);
        }
    }
}
