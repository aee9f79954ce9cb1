//! [`Engine`]: what a retry loop must remember, from a call's first attempt to its last.

use core::time::Duration;

use super::room::{Room, Short, fits};
use super::{Cause, Class, Failure, Next, Retried, Rules, Timeout};
use crate::Budget;
#[cfg(target_has_atomic = "64")]
use crate::SharedBudget;
use crate::budget::Teller;

/// One call's retries: what a retry loop must remember between attempts, and the one place
/// that decides each failed attempt, whatever the call is.
///
/// The loop is the same few steps for any operation; this value holds its state (the rules,
/// when the call started, the attempts made, the waits) and answers each step from what the
/// caller passes in, so a loop can be tested on a passed-in clock:
///
/// 1. [`Engine::new`] (or [`Engine::start`], with the caller's own stops `S`) when the call
///    starts.
/// 2. [`attempt`](Engine::attempt) before each attempt: the time it may take, or a stop when
///    the budget no longer holds the reserve after a wait.
/// 3. After it: [`succeeded`](Engine::succeeded), or [`failed`](Engine::failed) with the
///    [`Failure`] as the caller classified it, or [`timed_out`](Engine::timed_out) when it
///    ran out of its [`Timeout`]. A failure answers [`Next::Wait`] or [`Next::Stop`].
/// 4. [`retried`](Engine::retried) is the record to hand back.
///
/// The [module docs](super) give the order in which a failure is decided. A clock that steps
/// back is read as the latest reading seen. Nothing here allocates or panics.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::retry::{Cause, Engine, Failure, Next, Rules, Timeout};
/// use ironward::{BACKOFF, Backoff, Jitter};
///
/// let ms = Duration::from_millis;
/// let rules = Rules {
///     total_budget: ms(1_000),
///     request_reserve: ms(100),
///     ..Rules::new(Backoff { jitter: Jitter::Rigid, ..BACKOFF })
/// };
/// let mut engine = Engine::new(rules, ms(0));
/// assert_eq!(engine.attempt(ms(0), Some(ms(300))), Ok(Timeout::Attempt(ms(300))));
/// // The attempt failed at 20 ms: the first retry's 100 ms ceiling, unjittered.
/// assert_eq!(engine.failed(Failure::retryable(ms(20), 0.9), None), Next::Wait(ms(100)));
/// assert!(engine.attempt(ms(120), None).is_ok());
/// // A server names 700 ms: longer than the 200 ms backoff, within the 1 s cap, and the
/// // 880 ms left hold it and the 100 ms reserve.
/// let named = Failure::retryable(ms(120), 0.9).naming(ms(700));
/// assert_eq!(engine.failed(named, None), Next::Wait(ms(700)));
/// // Three attempts are the preset's: the third failure stops.
/// assert!(engine.attempt(ms(820), None).is_ok());
/// let last = engine.failed(Failure::retryable(ms(830), 0.9), None);
/// assert_eq!(last, Next::Stop(Cause::AttemptsExhausted));
/// let retried = engine.retried();
/// assert_eq!((retried.attempts, retried.waited), (3, ms(800)));
/// ```
#[must_use]
#[derive(Debug, Clone, PartialEq)]
pub struct Engine<S = Cause> {
    rules: Rules,
    /// When the call started, on the caller's monotonic clock.
    started: Duration,
    /// The latest reading seen, never before `started`.
    latest: Duration,
    record: Retried<S>,
    /// The last wait decided, which the next attempt follows.
    previous: Option<Duration>,
}

impl Engine<Cause> {
    /// A call deciding by `rules`, started at `now`, that stops in the engine's own words
    /// ([`Cause`]); no attempt made yet.
    pub fn new(rules: Rules, now: Duration) -> Self {
        Self::start(rules, now)
    }
}

impl<S: Copy + From<Cause>> Engine<S> {
    /// A call deciding by `rules`, started at `now`, that records its caller's stops `S`: its
    /// classifier's reasons, and each [`Cause`] turned into one by `From`.
    pub fn start(rules: Rules, now: Duration) -> Self {
        Self {
            rules,
            started: now,
            latest: now,
            record: Retried {
                attempts: 0,
                waited: Duration::ZERO,
                stop: None,
            },
            previous: None,
        }
    }

    /// The rules the engine decides by.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The record so far: attempts made, waits decided, and why the call stopped (if it did).
    pub fn retried(&self) -> Retried<S> {
        self.record
    }

    /// The last wait decided, if any: what the attempt about to be made waited.
    #[must_use]
    pub fn previous(&self) -> Option<Duration> {
        self.previous
    }

    /// What is left of the total budget at `now`: [`Rules::total_budget`] less the time
    /// since the call started (read from the latest reading seen), never negative.
    #[must_use]
    pub fn remaining(&self, now: Duration) -> Duration {
        let elapsed = now.max(self.latest) - self.started;
        self.rules.total_budget.saturating_sub(elapsed)
    }

    /// Counts the attempt about to be made at `now`, and says how long it may take: what is
    /// left of the total budget, or `per_attempt` when that is shorter.
    ///
    /// A `per_attempt` of zero is none: an attempt that may take no time at all could never
    /// be answered. Before a retry this is the re-check after waking (the caller may have
    /// slept longer than asked): what is left must still hold the reserve, strictly, else the
    /// call stops with [`Cause::BudgetExhausted`] and nothing is counted. The first attempt
    /// always goes.
    ///
    /// # Errors
    ///
    /// [`Cause::BudgetExhausted`], as `S`, when a retry no longer fits the budget; the record
    /// keeps it.
    pub fn attempt(&mut self, now: Duration, per_attempt: Option<Duration>) -> Result<Timeout, S> {
        self.observe(now);
        let left = self.remaining(now);
        if self.record.attempts > 0 && !fits(Duration::ZERO, self.rules.request_reserve, left) {
            return Err(self.end(Cause::BudgetExhausted.into()));
        }
        self.record.attempts = self.record.attempts.saturating_add(1);
        Ok(Timeout::within(left, per_attempt))
    }

    /// The attempt succeeded: the retry budget, if any, gets its `tokenRatio` back.
    pub fn succeeded(&mut self, budget: Option<&mut Budget>) {
        self.succeed(Teller::own(budget));
    }

    /// [`succeeded`](Self::succeeded), with a retry budget shared by `&` across threads.
    #[cfg(target_has_atomic = "64")]
    pub fn succeeded_shared(&mut self, budget: Option<&SharedBudget>) {
        self.succeed(Teller::shared(budget));
    }

    /// The attempt failed, as `failure` says: wait how long before the next, or stop and why.
    ///
    /// Decided in the order the [module docs](super#how-a-failure-is-decided) give; the
    /// retry budget, if any, is told of a retryable or barred failure and asked before a wait.
    pub fn failed(&mut self, failure: Failure<S>, budget: Option<&mut Budget>) -> Next<S> {
        self.fail(failure, Teller::own(budget))
    }

    /// [`failed`](Self::failed), with a retry budget shared by `&` across threads: the same
    /// decision, the budget told and asked alike.
    #[cfg(target_has_atomic = "64")]
    pub fn failed_shared(&mut self, failure: Failure<S>, budget: Option<&SharedBudget>) -> Next<S> {
        self.fail(failure, Teller::shared(budget))
    }

    /// The attempt ran out of `timeout`, as [`attempt`](Self::attempt) gave it, and failed
    /// as `failure` says.
    ///
    /// Out of the budget: the call stops with [`Cause::BudgetExhausted`] (the retry budget is
    /// told nothing: the deadline was the caller's). Out of the caller's per-attempt timeout:
    /// `failure` is decided as [`failed`](Self::failed) decides it.
    pub fn timed_out(
        &mut self,
        timeout: Timeout,
        failure: Failure<S>,
        budget: Option<&mut Budget>,
    ) -> Next<S> {
        self.expire(timeout, failure, Teller::own(budget))
    }

    /// [`timed_out`](Self::timed_out), with a retry budget shared by `&` across threads.
    #[cfg(target_has_atomic = "64")]
    pub fn timed_out_shared(
        &mut self,
        timeout: Timeout,
        failure: Failure<S>,
        budget: Option<&SharedBudget>,
    ) -> Next<S> {
        self.expire(timeout, failure, Teller::shared(budget))
    }

    /// A circuit breaker refused the next attempt before it was made: the call stops with
    /// [`Cause::Refused`], and the attempt is not counted (call this instead of
    /// [`attempt`](Self::attempt)).
    pub fn refused(&mut self) -> S {
        self.end(Cause::Refused.into())
    }

    /// Ends the call for the caller's own reason `stop` (a cancellation, a failure it will not
    /// classify), reading no clock and telling no budget; the record keeps it.
    pub fn end(&mut self, stop: S) -> S {
        self.record.stop = Some(stop);
        stop
    }

    /// [`succeeded`](Self::succeeded) with any budget.
    pub(crate) fn succeed(&mut self, mut budget: Teller<'_>) {
        budget.pass();
    }

    /// [`failed`](Self::failed) with any budget.
    pub(crate) fn fail(&mut self, failure: Failure<S>, mut budget: Teller<'_>) -> Next<S> {
        let elapsed = self.observe(failure.now);
        match failure.class {
            Class::Final(stop) => return Next::Stop(self.end(stop)),
            Class::Barred(stop) => {
                budget.fail();
                return Next::Stop(self.end(stop));
            }
            Class::Retryable => budget.fail(),
        }
        // A failure reported before any attempt was counted is read as the first's.
        let made = self.record.attempts.max(1);
        let backoff = &self.rules.backoff;
        if !backoff.more(made) {
            return self.stop(Cause::AttemptsExhausted);
        }
        let client = backoff.delay(made, failure.roll, self.previous);
        match Room::of(&self.rules, elapsed).settle(client, || failure.named) {
            Ok(_) if !budget.can_retry() => self.stop(Cause::Throttled),
            Ok(wait) => {
                self.record.waited = self.record.waited.saturating_add(wait);
                self.previous = Some(wait);
                Next::Wait(wait)
            }
            Err(Short::Budget) => self.stop(Cause::BudgetExhausted),
            Err(Short::Cap) => self.stop(Cause::ServerDelayExceedsCap),
            Err(Short::Named(stop)) => Next::Stop(self.end(stop)),
        }
    }

    /// [`timed_out`](Self::timed_out) with any budget.
    pub(crate) fn expire(
        &mut self,
        timeout: Timeout,
        failure: Failure<S>,
        budget: Teller<'_>,
    ) -> Next<S> {
        match timeout {
            Timeout::Attempt(_) => self.fail(failure, budget),
            Timeout::Budget(_) => {
                self.observe(failure.now);
                self.stop(Cause::BudgetExhausted)
            }
        }
    }

    /// Stops for one of the engine's own causes.
    fn stop(&mut self, cause: Cause) -> Next<S> {
        Next::Stop(self.end(cause.into()))
    }

    /// Reads `now` as the latest reading seen, and returns the time since the call started.
    fn observe(&mut self, now: Duration) -> Duration {
        self.latest = self.latest.max(now);
        self.latest - self.started
    }
}

#[cfg(test)]
mod tests;
