//! Unit tests of the engine: each rule of the order, the budget's accounting, and every
//! extreme input answered without a panic.

use super::*;
use crate::{BACKOFF, Backoff, Jitter};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 100 ms doubling to 1 s, no jitter, four attempts; a 10 s budget with a 1 s reserve.
const RULES: Rules = Rules {
    backoff: Backoff {
        base: Duration::from_millis(100),
        factor: 2.0,
        cap: Duration::from_secs(1),
        attempts: 4,
        jitter: Jitter::Rigid,
    },
    total_budget: Duration::from_secs(10),
    request_reserve: Duration::from_secs(1),
};

fn started() -> Engine {
    let mut engine = Engine::new(RULES, ms(0));
    assert_eq!(engine.attempt(ms(0), None), Ok(Timeout::Budget(ms(10_000))));
    engine
}

fn retryable(now: u64) -> Failure {
    Failure::retryable(ms(now), 0.5)
}

#[test]
fn the_waits_follow_the_backoff_until_the_attempts_are_spent() {
    let mut engine = started();
    let mut now = 0;
    for wait in [100, 200, 400] {
        now += 10;
        assert_eq!(engine.failed(retryable(now), None), Next::Wait(ms(wait)));
        assert_eq!(engine.previous(), Some(ms(wait)));
        now += wait;
        assert!(engine.attempt(ms(now), None).is_ok());
    }
    assert_eq!(
        engine.failed(retryable(now + 10), None),
        Next::Stop(Cause::AttemptsExhausted)
    );
    assert_eq!(
        engine.retried(),
        Retried {
            attempts: 4,
            waited: ms(700),
            stop: Some(Cause::AttemptsExhausted)
        }
    );
}

#[test]
fn one_attempt_or_none_retries_nothing() {
    for attempts in [0, 1] {
        let rules = Rules {
            backoff: Backoff {
                attempts,
                ..RULES.backoff
            },
            ..RULES
        };
        let mut engine = Engine::new(rules, ms(0));
        assert!(engine.attempt(ms(0), None).is_ok());
        let next = engine.failed(retryable(1), None);
        assert_eq!(next, Next::Stop(Cause::AttemptsExhausted), "{attempts}");
    }
}

#[test]
fn a_failure_before_any_attempt_is_read_as_the_first() {
    let mut engine = Engine::new(RULES, ms(0));
    assert_eq!(engine.failed(retryable(5), None), Next::Wait(ms(100)));
    assert_eq!(engine.retried().attempts, 0);
}

#[test]
fn the_budget_is_checked_against_the_backoff_then_the_wait_strictly() {
    // At 8.9 s, 1.1 s are left: the 100 ms backoff and the 1 s reserve fill them exactly.
    let mut engine = started();
    let next = engine.failed(retryable(8_900), None);
    assert_eq!(next, Next::Stop(Cause::BudgetExhausted));
    let mut engine = started();
    assert_eq!(engine.failed(retryable(8_899), None), Next::Wait(ms(100)));
    // The backoff fits; a named 200 ms does not, and stops for the budget too.
    let mut engine = started();
    let named = retryable(8_700).naming(ms(300));
    assert_eq!(
        engine.failed(named, None),
        Next::Stop(Cause::BudgetExhausted)
    );
    let mut engine = started();
    let named = retryable(8_700).naming(ms(299));
    assert_eq!(engine.failed(named, None), Next::Wait(ms(299)));
}

#[test]
fn a_named_wait_lengthens_the_backoff_and_never_passes_the_cap() {
    let mut engine = started();
    let named = retryable(0).naming(ms(40));
    assert_eq!(
        engine.failed(named, None),
        Next::Wait(ms(100)),
        "shorter: the backoff"
    );
    let _ = engine.attempt(ms(100), None);
    let named = retryable(100).naming(ms(1_000));
    assert_eq!(
        engine.failed(named, None),
        Next::Wait(ms(1_000)),
        "the cap itself"
    );
    let _ = engine.attempt(ms(1_100), None);
    let named = retryable(1_100).naming(ms(1_001));
    let next = engine.failed(named, None);
    assert_eq!(next, Next::Stop(Cause::ServerDelayExceedsCap));
}

#[test]
fn earlier_rules_take_precedence_over_the_named_wait() {
    // Spent attempts, and a backoff the budget cannot hold, answer before a named wait is
    // read; a wait above the cap answers before the budget's second check.
    let unreadable = |now| Failure {
        named: Err(Cause::Refused),
        ..retryable(now)
    };
    let mut spent = Engine::new(
        Rules {
            backoff: Backoff {
                attempts: 1,
                ..RULES.backoff
            },
            ..RULES
        },
        ms(0),
    );
    let _ = spent.attempt(ms(0), None);
    let next = spent.failed(unreadable(1), None);
    assert_eq!(next, Next::Stop(Cause::AttemptsExhausted));
    let next = started().failed(unreadable(9_500), None);
    assert_eq!(next, Next::Stop(Cause::BudgetExhausted));
    let next = started().failed(unreadable(1), None);
    assert_eq!(
        next,
        Next::Stop(Cause::Refused),
        "read once the backoff fits"
    );
    let beyond_both = retryable(8_000).naming(ms(5_000));
    let next = started().failed(beyond_both, None);
    assert_eq!(next, Next::Stop(Cause::ServerDelayExceedsCap));
}

#[test]
fn the_retry_budget_counts_as_grpc_a6_does() {
    let mut budget = Budget::new(6, 0.5);
    let mut engine = started();
    engine.succeeded(Some(&mut budget));
    assert_eq!(budget.tokens(), 6.0, "full already");
    let final_ = Failure::fatal(Cause::NotRetryable, ms(1));
    let next = engine.failed(final_, Some(&mut budget));
    assert_eq!(next, Next::Stop(Cause::NotRetryable));
    assert_eq!(budget.tokens(), 6.0, "a final failure is neither");
    let barred = Failure {
        class: Class::Barred(Cause::Refused),
        ..retryable(2)
    };
    assert_eq!(
        started().failed(barred, Some(&mut budget)),
        Next::Stop(Cause::Refused)
    );
    assert_eq!(budget.tokens(), 5.0, "a barred failure fails");
    let mut engine = started();
    let next = engine.failed(retryable(3), Some(&mut budget));
    assert_eq!((next, budget.tokens()), (Next::Wait(ms(100)), 4.0));
    engine.succeeded(Some(&mut budget));
    assert_eq!(budget.tokens(), 4.5);
    let _ = engine.attempt(ms(110), None);
    let next = engine.failed(retryable(120), Some(&mut budget));
    assert_eq!((next, budget.tokens()), (Next::Wait(ms(200)), 3.5));
    // 2.5 left is not above half of 6: the wait the rules allow is not taken.
    let _ = engine.attempt(ms(320), None);
    let next = engine.failed(retryable(330), Some(&mut budget));
    assert_eq!((next, budget.tokens()), (Next::Stop(Cause::Throttled), 2.5));
    assert_eq!(
        engine.retried().waited,
        ms(300),
        "a throttled wait is not waited"
    );
}

#[test]
fn spent_attempts_answer_before_the_retry_budget() {
    let mut budget = Budget::new(2, 0.1);
    let mut engine = Engine::new(
        Rules {
            backoff: Backoff {
                attempts: 1,
                ..RULES.backoff
            },
            ..RULES
        },
        ms(0),
    );
    let _ = engine.attempt(ms(0), None);
    let next = engine.failed(retryable(1), Some(&mut budget));
    assert_eq!(next, Next::Stop(Cause::AttemptsExhausted));
    assert_eq!(budget.tokens(), 1.0, "and the failure is counted");
}

#[cfg(target_has_atomic = "64")]
#[test]
fn a_shared_budget_is_told_and_asked_as_a_budget_is() {
    let mut own = Budget::new(3, 0.5);
    let shared = crate::SharedBudget::new(3, 0.5);
    let (mut first, mut second) = (started(), started());
    for now in 1..6 {
        let failure = retryable(now);
        assert_eq!(
            first.failed(failure, Some(&mut own)),
            second.failed_shared(failure, Some(&shared))
        );
        assert_eq!(shared.snapshot(), own);
        let timeout = Timeout::Attempt(ms(5));
        assert_eq!(
            first.timed_out(timeout, failure, Some(&mut own)),
            second.timed_out_shared(timeout, failure, Some(&shared))
        );
        first.succeeded(Some(&mut own));
        second.succeeded_shared(Some(&shared));
        assert_eq!(shared.snapshot(), own);
    }
    assert_eq!(first.retried(), second.retried());
}

#[test]
fn after_waking_what_is_left_must_hold_the_reserve() {
    let mut engine = started();
    assert_eq!(engine.failed(retryable(8_000), None), Next::Wait(ms(100)));
    // Overslept to 9 s: exactly the reserve left is not enough.
    let woke = engine.attempt(ms(9_000), None);
    assert_eq!(woke, Err(Cause::BudgetExhausted));
    assert_eq!(
        engine.retried().attempts,
        1,
        "a retry refused on waking is not made"
    );
    let mut early = engine_at(8_000);
    assert_eq!(
        early.attempt(ms(8_999), Some(ms(2_000))),
        Ok(Timeout::Budget(ms(1_001)))
    );
    assert_eq!(
        early.attempt(ms(8_999), Some(ms(1_000))),
        Ok(Timeout::Attempt(ms(1_000)))
    );
    assert_eq!(
        early.attempt(ms(8_999), Some(ms(0))),
        Ok(Timeout::Budget(ms(1_001)))
    );
}

/// An engine whose first attempt failed at `now` ms and is waiting.
fn engine_at(now: u64) -> Engine {
    let mut engine = started();
    assert!(matches!(engine.failed(retryable(now), None), Next::Wait(_)));
    engine
}

#[test]
fn a_timeout_of_the_budget_stops_and_of_the_attempt_is_a_failure() {
    let mut budget = Budget::new(10, 0.5);
    let mut engine = started();
    let next = engine.timed_out(Timeout::Attempt(ms(50)), retryable(50), Some(&mut budget));
    assert_eq!((next, budget.tokens()), (Next::Wait(ms(100)), 9.0));
    let _ = engine.attempt(ms(150), None);
    let spent = Timeout::Budget(ms(9_850));
    let next = engine.timed_out(spent, retryable(10_000), Some(&mut budget));
    assert_eq!(
        (next, budget.tokens()),
        (Next::Stop(Cause::BudgetExhausted), 9.0)
    );
    assert_eq!(
        engine.remaining(ms(0)),
        Duration::ZERO,
        "the clock was read"
    );
}

#[test]
fn a_refusal_or_an_end_counts_no_attempt_and_reads_no_clock() {
    let mut engine = Engine::new(RULES, ms(0));
    assert_eq!(engine.refused(), Cause::Refused);
    assert_eq!(
        engine.retried(),
        Retried {
            attempts: 0,
            waited: Duration::ZERO,
            stop: Some(Cause::Refused)
        }
    );
    let mut engine = engine_at(100);
    assert_eq!(engine.end(Cause::NotRetryable), Cause::NotRetryable);
    assert_eq!(engine.remaining(ms(0)), ms(9_900));
}

#[test]
fn a_clock_that_steps_back_is_read_as_the_latest_reading() {
    let mut engine = Engine::new(RULES, ms(5_000));
    let _ = engine.attempt(ms(12_000), None);
    // 7 s in, then a reading of 1 ms: still 7 s in, so 3 s left: 100 ms and 1 s fit.
    assert_eq!(engine.remaining(ms(1)), ms(3_000));
    assert_eq!(engine.failed(retryable(1), None), Next::Wait(ms(100)));
    assert_eq!(engine.attempt(ms(0), None), Ok(Timeout::Budget(ms(3_000))));
    // A clock before the start itself.
    let mut early = Engine::new(RULES, ms(5_000));
    assert_eq!(early.attempt(ms(0), None), Ok(Timeout::Budget(ms(10_000))));
}

#[test]
fn draws_out_of_range_are_read_as_everywhere_in_the_core() {
    for (jitter, nan, high) in [
        (Jitter::Full, ms(0), ms(100)),
        (Jitter::Equal, ms(50), ms(100)),
        (Jitter::Spread(0.2), ms(80), ms(120)),
        (Jitter::Decorrelated, ms(100), ms(300)),
    ] {
        let rules = Rules {
            backoff: Backoff {
                jitter,
                ..RULES.backoff
            },
            ..RULES
        };
        for (roll, want) in [
            (f64::NAN, nan),
            (-1.0, nan),
            (f64::INFINITY, high),
            (2.0, high),
        ] {
            let mut engine = Engine::new(rules, ms(0));
            let next = engine.failed(Failure::retryable(ms(0), roll), None);
            assert_eq!(next, Next::Wait(want), "{jitter:?} {roll}");
        }
    }
}

#[test]
fn decorrelated_jitter_grows_from_the_last_wait() {
    let rules = Rules {
        backoff: Backoff {
            jitter: Jitter::Decorrelated,
            cap: ms(10_000),
            ..RULES.backoff
        },
        total_budget: Duration::MAX,
        ..RULES
    };
    let mut engine = Engine::new(rules, ms(0));
    let _ = engine.attempt(ms(0), None);
    // Just below 1: three times the base, then three times that.
    let high = 0.999_999_999;
    assert!(
        matches!(engine.failed(Failure::retryable(ms(0), high), None), Next::Wait(w) if w.abs_diff(ms(300)) < ms(1))
    );
    let _ = engine.attempt(ms(300), None);
    let Next::Wait(second) = engine.failed(Failure::retryable(ms(300), high), None) else {
        panic!("a second retry");
    };
    assert!(second.abs_diff(ms(900)) < ms(1), "{second:?}");
}

#[test]
fn the_largest_budgets_and_waits_saturate_and_never_fit() {
    let rules = Rules {
        backoff: Backoff {
            base: Duration::MAX,
            cap: Duration::MAX,
            attempts: u32::MAX,
            ..BACKOFF
        },
        total_budget: Duration::MAX,
        request_reserve: Duration::MAX,
    };
    let mut engine = Engine::new(rules, Duration::MAX);
    assert_eq!(
        engine.attempt(Duration::MAX, Some(Duration::MAX)),
        Ok(Timeout::Budget(Duration::MAX))
    );
    let next = engine.failed(Failure::retryable(Duration::MAX, 0.5), None);
    assert_eq!(next, Next::Stop(Cause::BudgetExhausted));
    // No reserve, a wait of 1 ns against a budget of Duration::MAX: it fits.
    let roomy = Rules {
        backoff: Backoff {
            base: Duration::from_nanos(1),
            jitter: Jitter::Rigid,
            ..rules.backoff
        },
        request_reserve: Duration::ZERO,
        ..rules
    };
    let mut engine = Engine::new(roomy, ms(0));
    let next = engine.failed(Failure::retryable(ms(0), 0.5), None);
    assert_eq!(next, Next::Wait(Duration::from_nanos(1)));
    // A named wait of Duration::MAX is within a cap of Duration::MAX, but never fits.
    let named = Failure::retryable(ms(0), 0.5).naming(Duration::MAX);
    assert_eq!(
        engine.failed(named, None),
        Next::Stop(Cause::BudgetExhausted)
    );
    // The total waited saturates rather than overflows.
    engine.record.waited = Duration::MAX - Duration::from_nanos(1);
    let _ = engine.failed(Failure::retryable(ms(0), 0.5), None);
    let _ = engine.failed(Failure::retryable(ms(0), 0.5), None);
    assert_eq!(engine.retried().waited, Duration::MAX);
}

#[test]
fn the_attempt_count_saturates_at_u32_max() {
    let rules = Rules {
        backoff: Backoff {
            attempts: u32::MAX,
            ..RULES.backoff
        },
        total_budget: Duration::MAX,
        ..RULES
    };
    let mut engine = Engine::new(rules, ms(0));
    engine.record.attempts = u32::MAX - 2;
    assert!(engine.attempt(ms(0), None).is_ok());
    // The attempt before the last: the cap, 1 s.
    assert_eq!(engine.failed(retryable(0), None), Next::Wait(ms(1_000)));
    assert!(engine.attempt(ms(1_000), None).is_ok());
    assert!(engine.attempt(ms(1_000), None).is_ok());
    assert_eq!(engine.retried().attempts, u32::MAX);
    let next = engine.failed(retryable(1_000), None);
    assert_eq!(next, Next::Stop(Cause::AttemptsExhausted));
}
