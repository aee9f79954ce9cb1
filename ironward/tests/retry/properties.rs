//! The engine against a naive model of its rule order (the module docs' "How a failure is
//! decided"), written in `u128` nanoseconds where no sum saturates. The backoff's draw is
//! `Backoff::delay` itself, which the core's backoff properties hold to their own model.

use std::time::Duration;

use proptest::prelude::*;

use ironward::Budget;
use ironward::retry::{Cause, Class, Engine, Failure, Next, Retried, Rules, Timeout};

use super::{duration, roll, rules};

/// One thing the caller does.
#[derive(Debug, Clone, Copy)]
enum Op {
    Attempt(Duration, Option<Duration>),
    Failed(Failure),
    TimedOut(bool, Failure),
    Succeeded,
    Refused,
}

fn class() -> impl Strategy<Value = Class> {
    let cause = proptest::sample::select(&Cause::ALL[..]);
    prop_oneof![
        4 => Just(Class::Retryable),
        1 => cause.clone().prop_map(Class::Barred),
        1 => cause.prop_map(Class::Final),
    ]
}

fn failure() -> impl Strategy<Value = Failure> {
    let named = prop_oneof![
        3 => Just(Ok(None)),
        3 => duration().prop_map(|d| Ok(Some(d))),
        1 => proptest::sample::select(&Cause::ALL[..]).prop_map(Err),
    ];
    (class(), named, duration(), roll()).prop_map(|(class, named, now, roll)| Failure {
        class,
        named,
        now,
        roll,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (duration(), proptest::option::of(duration())).prop_map(|(n, p)| Op::Attempt(n, p)),
        4 => failure().prop_map(Op::Failed),
        1 => (any::<bool>(), failure()).prop_map(|(b, f)| Op::TimedOut(b, f)),
        1 => Just(Op::Succeeded),
        1 => Just(Op::Refused),
    ]
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

fn from_nanos(n: u128) -> Duration {
    let n = n.min(Duration::MAX.as_nanos());
    Duration::new((n / 1_000_000_000) as u64, (n % 1_000_000_000) as u32)
}

/// The engine, naively.
struct Model {
    rules: Rules,
    started: u128,
    latest: u128,
    record: Retried,
    previous: Option<Duration>,
}

impl Model {
    fn left(&self) -> u128 {
        nanos(self.rules.total_budget).saturating_sub(self.latest - self.started)
    }

    fn see(&mut self, now: Duration) {
        self.latest = self.latest.max(nanos(now));
    }

    fn end(&mut self, stop: Cause) -> Cause {
        self.record.stop = Some(stop);
        stop
    }

    fn attempt(&mut self, now: Duration, per_attempt: Option<Duration>) -> Result<Timeout, Cause> {
        self.see(now);
        let left = self.left();
        if self.record.attempts > 0 && nanos(self.rules.request_reserve) >= left {
            return Err(self.end(Cause::BudgetExhausted));
        }
        self.record.attempts = self.record.attempts.saturating_add(1);
        Ok(match per_attempt {
            Some(p) if nanos(p) > 0 && nanos(p) < left => Timeout::Attempt(p),
            _ => Timeout::Budget(from_nanos(left)),
        })
    }

    fn failed(&mut self, failure: Failure, budget: &mut Budget) -> Next {
        self.see(failure.now);
        match failure.class {
            Class::Final(stop) => return Next::Stop(self.end(stop)),
            Class::Barred(stop) => {
                budget.fail();
                return Next::Stop(self.end(stop));
            }
            Class::Retryable => budget.fail(),
        }
        let n = self.record.attempts.max(1);
        if n >= self.rules.backoff.attempts {
            return Next::Stop(self.end(Cause::AttemptsExhausted));
        }
        let client = nanos(self.rules.backoff.delay(n, failure.roll, self.previous));
        let (left, reserve) = (self.left(), nanos(self.rules.request_reserve));
        if client + reserve >= left {
            return Next::Stop(self.end(Cause::BudgetExhausted));
        }
        let named = match failure.named {
            Err(stop) => return Next::Stop(self.end(stop)),
            Ok(named) => named.map_or(0, nanos),
        };
        if named > nanos(self.rules.backoff.cap) {
            return Next::Stop(self.end(Cause::ServerDelayExceedsCap));
        }
        let wait = client.max(named);
        if wait + reserve >= left {
            return Next::Stop(self.end(Cause::BudgetExhausted));
        }
        if !budget.can_retry() {
            return Next::Stop(self.end(Cause::Throttled));
        }
        self.record.waited = from_nanos(nanos(self.record.waited) + wait);
        self.previous = Some(from_nanos(wait));
        Next::Wait(from_nanos(wait))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn the_engine_decides_as_a_naive_model(
        rules in rules(),
        start in duration(),
        (tokens, ratio) in (1u32..12, 0.05f64..1.5),
        ops in proptest::collection::vec(op(), 1..24),
        probe in duration(),
    ) {
        let mut engine = Engine::new(rules, start);
        let mut model = Model {
            rules,
            started: nanos(start),
            latest: nanos(start),
            record: Retried::default(),
            previous: None,
        };
        let (mut budget, mut naive) = (Budget::new(tokens, ratio), Budget::new(tokens, ratio));
        for (i, op) in ops.into_iter().enumerate() {
            match op {
                Op::Attempt(now, per) => {
                    prop_assert_eq!(engine.attempt(now, per), model.attempt(now, per), "{}", i);
                }
                Op::Failed(failure) => prop_assert_eq!(
                    engine.failed(failure, Some(&mut budget)),
                    model.failed(failure, &mut naive),
                    "{}: {:?}", i, failure
                ),
                Op::TimedOut(whole, failure) => {
                    let timeout = if whole {
                        Timeout::Budget(failure.now)
                    } else {
                        Timeout::Attempt(failure.now)
                    };
                    let expected = if whole {
                        model.see(failure.now);
                        Next::Stop(model.end(Cause::BudgetExhausted))
                    } else {
                        model.failed(failure, &mut naive)
                    };
                    prop_assert_eq!(engine.timed_out(timeout, failure, Some(&mut budget)), expected);
                }
                Op::Succeeded => {
                    engine.succeeded(Some(&mut budget));
                    naive.pass();
                }
                Op::Refused => prop_assert_eq!(engine.refused(), model.end(Cause::Refused)),
            }
            prop_assert_eq!(engine.retried(), model.record, "{}", i);
            prop_assert_eq!(engine.previous(), model.previous);
            prop_assert_eq!(engine.remaining(probe), {
                let seen = model.latest.max(nanos(probe));
                from_nanos(nanos(rules.total_budget).saturating_sub(seen - model.started))
            });
            prop_assert_eq!(budget, naive);
        }
    }
}
