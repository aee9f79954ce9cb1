//! [`Driver`]: one call's steps between the engine and whatever runs the attempts, the same
//! for the async and the blocking form: ask for an attempt, settle how it ended, report.

use std::sync::Arc;
use std::time::Duration;

use ironward::retry::{Cause, Engine, Failure, Next, Retried, Rules, Timeout};

use super::super::{CallError, Deadline};
use super::{After, GaveUp, Notify, Shared, When};
use crate::Clock;

/// What a call through a [`Retry`](super::Retry) answers.
pub(super) type Answer<T, E> = Result<T, CallError<E, GaveUp>>;

/// How an attempt ended, as the driver is told: its result, or cut by its deadline.
pub(super) enum Ended<T, E> {
    Returned(Result<T, E>),
    TimedOut,
}

/// What to do after an attempt: sleep this long and try again (the failed attempt's error
/// kept, if it had one, to be returned should the next attempt not be made), or answer.
pub(super) enum Then<T, E> {
    Wait(Duration, Option<E>),
    Answer(Answer<T, E>),
}

/// One call's engine and the policy it runs under.
pub(super) struct Driver {
    shared: Arc<Shared>,
    /// The policy's rules, read once: a retune while the call runs leaves it as it began.
    rules: Rules,
    engine: Engine,
    /// What the engine gave the attempt under way.
    timeout: Timeout,
    /// Whether the call has a time budget at all (its own or a deadline's): an attempt of a
    /// call without one is not raced against a timer, which on a manual clock would move it
    /// to the end of time.
    bounded: bool,
    /// Whether the deadline the call runs under had passed when it started: it makes no
    /// attempt.
    passed: bool,
    /// Whether [`begin`](Self::begin) has read the clock and the deadline.
    started: bool,
}

impl Driver {
    /// A call of `shared`'s policy, not started yet.
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        let rules = shared.rules();
        Self {
            rules,
            engine: Engine::new(rules, Duration::ZERO),
            timeout: Timeout::Budget(rules.total_budget),
            bounded: false,
            passed: false,
            started: false,
            shared,
        }
    }

    /// The call starts now, on the policy's clock, with the smaller of its own budget and what
    /// the [current deadline](Deadline::current) leaves.
    fn begin(&mut self, now: Duration) {
        let rules = self.rules;
        let left = Deadline::left();
        let total_budget = left.map_or(rules.total_budget, |left| rules.total_budget.min(left));
        self.engine = Engine::new(
            Rules {
                total_budget,
                ..rules
            },
            now,
        );
        self.bounded = total_budget != Duration::MAX;
        self.passed = left.is_some_and(|left| left.is_zero());
        self.started = true;
    }

    /// The clock the call reads and sleeps on.
    pub(super) fn clock(&self) -> &Clock {
        &self.shared.parts.knobs.clock
    }

    /// The policy's attempt timeout.
    pub(super) fn attempt_timeout(&self) -> Option<Duration> {
        self.shared.parts.attempt_timeout
    }

    /// The record so far.
    pub(super) fn retried(&self) -> Retried {
        self.engine.retried()
    }

    /// Asks for the next attempt: the deadline it runs under (`None`: none at all), or the
    /// answer when the engine makes none, `last` being the previous attempt's error.
    ///
    /// `per_attempt` is the attempt timeout the form applies: the policy's, or none for a
    /// blocking attempt, which cannot be cut.
    pub(super) fn attempt<T, E>(
        &mut self,
        last: Option<E>,
        per_attempt: Option<Duration>,
    ) -> Result<Option<Deadline>, Answer<T, E>> {
        let now = self.clock().now();
        if !self.started {
            self.begin(now);
        }
        if self.passed {
            let stop = self.engine.end(Cause::BudgetExhausted);
            return Err(self.stop(last, stop));
        }
        match self.engine.attempt(now, per_attempt) {
            Ok(timeout) => {
                self.timeout = timeout;
                self.shared.meter.attempt(self.engine.retried().attempts);
                let limited = matches!(timeout, Timeout::Attempt(_)) || self.bounded;
                Ok(limited.then(|| Deadline::after(timeout.duration(), self.clock())))
            }
            Err(stop) => Err(self.stop(last, stop)),
        }
    }

    /// Settles the attempt that `ended`, as the hooks read its error: the answer, or the wait
    /// before the next.
    pub(super) fn settle<T, E>(
        &mut self,
        ended: Ended<T, E>,
        hooks: &(impl When<E>, impl After<E>, impl Notify<E>),
    ) -> Then<T, E> {
        let parts = &self.shared.parts;
        let budget = parts.budget.as_deref();
        let (when, after, notify) = hooks;
        let (next, error) = match ended {
            // A success decides nothing that takes the time: the clock is read for failures.
            Ended::Returned(Ok(value)) => {
                self.engine.succeeded_shared(budget);
                self.shared.meter.ended(None);
                return Then::Answer(Ok(value));
            }
            Ended::Returned(Err(error)) => {
                let now = parts.knobs.clock.now();
                let failure = if when.retryable(&error) {
                    let retryable = Failure::retryable(now, self.roll());
                    Failure {
                        named: Ok(after.named(&error)),
                        ..retryable
                    }
                } else {
                    Failure::fatal(Cause::NotRetryable, now)
                };
                (self.engine.failed_shared(failure, budget), Some(error))
            }
            Ended::TimedOut => {
                let now = parts.knobs.clock.now();
                let failure = Failure::retryable(now, self.roll());
                let next = self.engine.timed_out_shared(self.timeout, failure, budget);
                (next, None)
            }
        };
        match next {
            Next::Wait(wait) => {
                if let Some(error) = &error {
                    notify.notify(error, wait);
                }
                self.shared.meter.wait(wait);
                tracing::debug!(
                    name = parts.knobs.name,
                    attempt = self.engine.retried().attempts,
                    wait = ?wait,
                    timed_out = error.is_none(),
                    "retrying call"
                );
                Then::Wait(wait, error)
            }
            Next::Stop(stop) => Then::Answer(self.stop(error, stop)),
        }
    }

    /// The draw for a failure the engine may retry: one of the dice where the backoff's jitter
    /// reads it ([`Jitter::draws`](ironward::Jitter::draws)), else `0.0`, which it does not.
    /// A piece draws only what it reads, so dice shared with other pieces move on by its
    /// reads alone.
    fn roll(&self) -> f64 {
        if self.engine.rules().backoff.jitter.draws() {
            self.shared.parts.knobs.dice.roll()
        } else {
            0.0
        }
    }

    /// Ends the call for `stop`: the last attempt's error if it had one, else a [`GaveUp`].
    fn stop<T, E>(&self, last: Option<E>, stop: Cause) -> Answer<T, E> {
        let retried = self.engine.retried();
        self.shared.meter.ended(Some(stop));
        // A refusal to retry is an answer, not an error.
        tracing::debug!(
            name = self.shared.parts.knobs.name,
            attempts = retried.attempts,
            waited = ?retried.waited,
            stop = stop.as_str(),
            reason = %stop,
            "not retrying"
        );
        Err(match last {
            Some(error) => CallError::Failed(error),
            None => CallError::Refused(GaveUp {
                cause: stop,
                retried,
            }),
        })
    }
}
