//! [`Driver`]: one call's steps between the engine and whatever runs the attempts, the same
//! for the async and the blocking form: ask for an attempt, settle how it ended, report.

use std::sync::Arc;
use std::time::Duration;

use ironward::SharedBudget;
use ironward::retry::{Cause, Engine, Failure, Next, Retried, Rules, Timeout};

use super::super::{CallError, Deadline};
use super::{After, GaveUp, Notify, Tuned, When};
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
///
/// The engine is made by the first failure: a call whose first attempt succeeds (the common
/// case) reads only when it started and the budget it had, and the engine, with its own
/// copy of the rules, lives out of line, so that the call's future, which every executor
/// moves by value, stays small.
pub(super) struct Driver {
    tuned: Arc<Tuned>,
    /// When the call started, and its time budget: read by the first attempt.
    start: Option<Start>,
    /// What the engine gave the attempt under way.
    timeout: Timeout,
    /// The engine, once a failure needs one: made with the call's start, its first attempt
    /// counted as the engine would have counted it.
    engine: Option<Box<Engine>>,
}

/// When a call started, on its clock, and the time budget it runs under.
#[derive(Clone, Copy)]
struct Start {
    now: Duration,
    /// The smaller of the rules' own budget and what the [current
    /// deadline](Deadline::current) left at the start. An attempt of a call without one
    /// (`Duration::MAX`) is not raced against a timer, which on a manual clock would move it
    /// to the end of time.
    budget: Duration,
}

impl Driver {
    /// A call on `tuned`, not started yet.
    pub(super) fn new(tuned: Arc<Tuned>) -> Self {
        Self {
            timeout: Timeout::Budget(tuned.rules.total_budget),
            start: None,
            engine: None,
            tuned,
        }
    }

    /// The clock the call reads and sleeps on.
    pub(super) fn clock(&self) -> &Clock {
        &self.tuned.fixed.parts.knobs.clock
    }

    /// The policy's attempt timeout.
    pub(super) fn attempt_timeout(&self) -> Option<Duration> {
        self.tuned.fixed.parts.attempt_timeout
    }

    /// The record so far.
    pub(super) fn retried(&self) -> Retried {
        match &self.engine {
            Some(engine) => engine.retried(),
            // Started and no engine: the first attempt is under way or succeeded.
            None => Retried {
                attempts: u32::from(self.start.is_some()),
                waited: Duration::ZERO,
                stop: None,
            },
        }
    }

    /// The call's engine, made now if no failure has needed it yet: started when the call
    /// started, with `attempted` attempts (0 or 1) counted as the engine counts them.
    fn engine(&mut self, attempted: bool) -> &mut Engine {
        Self::made(&mut self.engine, &self.tuned.rules, self.start, attempted)
    }

    /// [`engine`](Self::engine), by its fields: `slot`'s engine, or one made now on `rules`.
    fn made<'a>(
        slot: &'a mut Option<Box<Engine>>,
        rules: &Rules,
        start: Option<Start>,
        attempted: bool,
    ) -> &'a mut Engine {
        slot.get_or_insert_with(|| {
            let Start { now, budget } = start.unwrap_or(Start {
                now: Duration::ZERO,
                budget: rules.total_budget,
            });
            let mut engine = Engine::new(
                Rules {
                    total_budget: budget,
                    ..*rules
                },
                now,
            );
            if attempted {
                // The first attempt always goes: this counts it, at the start, as it was made.
                let _ = engine.attempt(now, None);
            }
            Box::new(engine)
        })
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
        let timeout = match self.start {
            // The first attempt: the call starts now, with the smaller of its own budget and
            // what the current deadline leaves, all of which the first attempt may take.
            None => {
                let rules = &self.tuned.rules;
                let left = Deadline::left();
                let budget = left.map_or(rules.total_budget, |left| rules.total_budget.min(left));
                self.start = Some(Start { now, budget });
                if left.is_some_and(|left| left.is_zero()) {
                    // The deadline the call runs under has passed: it makes no attempt.
                    let stop = self.engine(false).end(Cause::BudgetExhausted);
                    return Err(self.stop(last, stop));
                }
                Timeout::within(budget, per_attempt)
            }
            Some(_) => match self.engine(true).attempt(now, per_attempt) {
                Ok(timeout) => timeout,
                Err(stop) => return Err(self.stop(last, stop)),
            },
        };
        self.timeout = timeout;
        self.tuned.fixed.meter.attempt(self.retried().attempts);
        let bounded = self
            .start
            .is_some_and(|start| start.budget != Duration::MAX);
        let limited = matches!(timeout, Timeout::Attempt(_)) || bounded;
        Ok(limited.then(|| Deadline::after(timeout.duration(), self.clock())))
    }

    /// Settles the attempt that `ended`, as the hooks read its error: the answer, or the wait
    /// before the next.
    pub(super) fn settle<T, E>(
        &mut self,
        ended: Ended<T, E>,
        hooks: &(impl When<E>, impl After<E>, impl Notify<E>),
    ) -> Then<T, E> {
        let tuned = &*self.tuned;
        let parts = &tuned.fixed.parts;
        let budget = parts.budget.as_deref();
        let (when, after, notify) = hooks;
        let (next, error) = match ended {
            // A success decides nothing that takes the time: the clock is read for failures.
            Ended::Returned(Ok(value)) => {
                match &mut self.engine {
                    Some(engine) => engine.succeeded_shared(budget),
                    // What `Engine::succeeded_shared` does, for a call that needed no engine:
                    // the budget gets its `tokenRatio` back.
                    None => budget.into_iter().for_each(SharedBudget::pass),
                }
                tuned.fixed.meter.ended(None);
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
                let engine = Self::made(&mut self.engine, &tuned.rules, self.start, true);
                (engine.failed_shared(failure, budget), Some(error))
            }
            Ended::TimedOut => {
                let now = parts.knobs.clock.now();
                let failure = Failure::retryable(now, self.roll());
                let engine = Self::made(&mut self.engine, &tuned.rules, self.start, true);
                let next = engine.timed_out_shared(self.timeout, failure, budget);
                (next, None)
            }
        };
        match next {
            Next::Wait(wait) => {
                if let Some(error) = &error {
                    notify.notify(error, wait);
                }
                tuned.fixed.meter.wait(wait);
                tracing::debug!(
                    name = parts.knobs.name,
                    attempt = self.retried().attempts,
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
        if self.tuned.rules.backoff.jitter.draws() {
            self.tuned.fixed.parts.knobs.dice.roll()
        } else {
            0.0
        }
    }

    /// Ends the call for `stop`: the last attempt's error if it had one, else a [`GaveUp`].
    fn stop<T, E>(&self, last: Option<E>, stop: Cause) -> Answer<T, E> {
        let retried = self.retried();
        self.tuned.fixed.meter.ended(Some(stop));
        // A refusal to retry is an answer, not an error.
        tracing::debug!(
            name = self.tuned.fixed.parts.knobs.name,
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
