//! [`Run`]: what a retry loop must remember, from a call's first attempt to its last.

use core::time::Duration;

use super::date;
use super::retryable_status;
use super::rules::{Facts, Method, admit, server_delay};
use super::{Call, Fault, Reading, Retried, Settings, Step, Stop, StopReason, Timeout};
use crate::Budget;
#[cfg(target_has_atomic = "64")]
use crate::SharedBudget;
#[cfg(test)]
use crate::backoff::sample_ppm;
use crate::budget::Teller;
use crate::retry::{Class, Engine, Failure, Next};

/// The status a failure without a response is decided as: 503 Service Unavailable, the status
/// for a transient failure (RFC 9110 §15.6.4), with no server delay.
const UNAVAILABLE: u16 = 503;

/// One call's retries: what a retry loop must remember between attempts, and the one place
/// that decides each failed attempt.
///
/// A retry loop over HTTP, in any client, is the same few steps; this value holds its state
/// (the settings, the call's replay facts, when it started, the attempts made, the waits) and
/// answers each of them from what the caller passes in, so every client built on it retries
/// alike and a loop can be tested on a passed-in clock:
///
/// 1. [`Run::new`] when the call starts.
/// 2. [`attempt`](Run::attempt) before each attempt: the time it may take (what is left of the
///    total budget, or the caller's own shorter per-attempt timeout), or a stop when the
///    budget no longer holds the request reserve after a wait.
/// 3. After it: [`response`](Run::response) with the status and the raw `Retry-After` field
///    values, [`error`](Run::error) with the [`Fault`] when there was no response, or
///    [`timed_out`](Run::timed_out) when it ran out of its [`Timeout`]. Each answers a
///    [`Step`]: done, wait, or stop.
/// 4. [`retried`](Run::retried) is the record to hand back.
///
/// A `Run` is the core's retry [`Engine`] under [`Settings::rules`], with HTTP's rules in
/// front of it as its classifier: rules 1 to 4 of the [rule order](super#rule-order)
/// (settings, input, status, replay) say whether a failure may be retried, and the raw
/// `Retry-After` values are the wait the failure names; the engine does the rest (attempts,
/// backoff, budget, the server's wait against the cap, the retry budget, the record). So a
/// failed response is decided exactly as [`decide_response`](super::decide_response) decides
/// it, and a fault as [`decide`](super::decide) decides a 503 without a server delay, with
/// `retry_index` and `elapsed` from the run and the jitter sample from the reading's roll
/// through [`sample_ppm`](crate::backoff::sample_ppm). An optional shared retry [`Budget`] is
/// told of every attempt (a success passes; a retryable status or a retried fault fails;
/// anything else is neither, as gRPC A6 counts only the codes it would retry) and a wait is
/// taken only while [`Budget::can_retry`]; first attempts are never held back.
///
/// A clock that steps back is read as the latest reading seen. Nothing here allocates.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{
///     Call, Fault, Reading, Run, Settings, Step, Stop, StopReason, Timeout,
/// };
///
/// let ms = Duration::from_millis;
/// let call = Call { method: "GET", body_replayable: true, replay_safe: false };
/// let mut run = Run::new(Settings::default(), &call, ms(0));
/// let at = |now| Reading { now, unix: Duration::from_secs(1_700_000_000), roll: 1.0 };
///
/// // The first attempt may take the whole 120 s budget; a 1 s attempt timeout is shorter.
/// assert_eq!(run.attempt(ms(0), None), Ok(Timeout::Budget(Duration::from_secs(120))));
/// // A 503 with Retry-After: 1 waits the server's second, longer than the 200 ms backoff.
/// let step = run.response(503, [&b"1"[..]], at(ms(30)), None);
/// assert_eq!(step, Step::Wait(ms(1000)));
///
/// // After the wait, the second attempt; the connection is refused: nothing was sent.
/// assert!(run.attempt(ms(1030), None).is_ok());
/// assert_eq!(run.error(Fault::Unsent, at(ms(1031)), None), Step::Wait(ms(400)));
///
/// assert!(run.attempt(ms(1431), None).is_ok());
/// let stop = run.response(404, [], at(ms(1460)), None);
/// assert_eq!(stop, Step::Stop(StopReason::NotRetryable.into()));
/// let retried = run.retried();
/// assert_eq!((retried.attempts, retried.waited), (3, ms(1400)));
/// assert_eq!(retried.stop, Some(Stop::Decided(StopReason::NotRetryable)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    settings: Settings,
    method: Method,
    body_replayable: bool,
    replay_safe: bool,
    /// The loop itself: attempts, budget, waits and the record.
    engine: Engine<Stop>,
}

impl Run {
    /// A call of `call` deciding by `settings`, started at `now`; no attempt sent yet.
    ///
    /// Settings that are not [valid](Settings::valid) retry nothing: every failure stops with
    /// [`StopReason::InvalidSettings`].
    pub fn new(settings: Settings, call: &Call<'_>, now: Duration) -> Self {
        Self {
            settings,
            method: Method::of(call.method),
            body_replayable: call.body_replayable,
            replay_safe: call.replay_safe,
            engine: Engine::start(settings.rules(), now),
        }
    }

    /// The settings the run decides by.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The record so far: attempts sent, waits decided, and why the run stopped (if it did).
    pub fn retried(&self) -> Retried {
        self.engine.retried()
    }

    /// The last wait decided, if any: what the attempt about to be sent waited.
    #[must_use]
    pub fn previous(&self) -> Option<Duration> {
        self.engine.previous()
    }

    /// What is left of the total budget at `now`: [`Settings::total_budget`] less the time
    /// since the call started, never negative.
    #[must_use]
    pub fn remaining(&self, now: Duration) -> Duration {
        self.engine.remaining(now)
    }

    /// Counts the attempt about to be sent at `now`, and says how long it may take: what is
    /// left of the total budget, or `per_attempt` when that is shorter.
    ///
    /// A `per_attempt` of zero is none, as a zero timeout is everywhere in ironward: an
    /// attempt that may take no time at all could never be answered, so zero cannot be what
    /// a caller meant. Every edge passes its setting here unchanged, so this is the one place
    /// the rule is kept ([`Engine::attempt`]).
    ///
    /// Before a retry, this is the check the rules ask the caller to make after waking
    /// (it may have slept longer than asked): the budget must still hold the request reserve,
    /// strictly, else the run stops with [`StopReason::BudgetExhausted`] and nothing is
    /// counted. The first attempt always goes (its budget is the whole budget, more than the
    /// reserve of valid settings).
    ///
    /// # Errors
    ///
    /// [`Stop::Decided`]`(`[`StopReason::BudgetExhausted`]`)` when a retry no longer fits the
    /// budget; the record keeps the reason.
    pub fn attempt(
        &mut self,
        now: Duration,
        per_attempt: Option<Duration>,
    ) -> Result<Timeout, Stop> {
        self.engine.attempt(now, per_attempt)
    }

    /// The attempt got a response with `status`, carrying the `Retry-After` field values
    /// `retry_after` as received (raw bytes, uncombined, in order: none, one, or more).
    ///
    /// A status below 400 is [`Step::Done`]. Any other is decided by the rule order of
    /// [`decide_response`](super::decide_response), with this retry's index, the time since
    /// the call started, the wall clock and the reading's roll. A value that is not UTF-8 is
    /// malformed ([`StopReason::InvalidRetryAfter`]); only the first two values are read, since
    /// two already stop.
    pub fn response<'v>(
        &mut self,
        status: u16,
        retry_after: impl IntoIterator<Item = &'v [u8]>,
        reading: Reading,
        budget: Option<&mut Budget>,
    ) -> Step {
        self.respond(status, retry_after, reading, Teller::own(budget))
    }

    /// [`response`](Self::response), reporting to a retry budget shared by `&` across
    /// threads: the same decision, with the budget told and asked as `response` tells and
    /// asks a [`Budget`].
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::SharedBudget;
    /// use ironward::http_retry::{Call, Reading, Run, Settings, Step, Stop};
    ///
    /// let budget = SharedBudget::new(2, 0.1);
    /// budget.fail();
    /// let call = Call { method: "GET", body_replayable: true, replay_safe: false };
    /// let mut run = Run::new(Settings::default(), &call, Duration::ZERO);
    /// let reading = Reading { now: Duration::ZERO, unix: Duration::ZERO, roll: 1.0 };
    /// assert!(run.attempt(Duration::ZERO, None).is_ok());
    /// // The 503 takes the budget to 0 of 2: no retry.
    /// let step = run.response_shared(503, [], reading, Some(&budget));
    /// assert_eq!(step, Step::Stop(Stop::Throttled));
    /// assert_eq!(budget.tokens(), 0.0);
    /// ```
    #[cfg(target_has_atomic = "64")]
    pub fn response_shared<'v>(
        &mut self,
        status: u16,
        retry_after: impl IntoIterator<Item = &'v [u8]>,
        reading: Reading,
        budget: Option<&SharedBudget>,
    ) -> Step {
        self.respond(status, retry_after, reading, Teller::shared(budget))
    }

    /// [`response`](Self::response) with any budget.
    fn respond<'v>(
        &mut self,
        status: u16,
        retry_after: impl IntoIterator<Item = &'v [u8]>,
        reading: Reading,
        budget: Teller<'_>,
    ) -> Step {
        if status < 400 {
            self.engine.succeed(budget);
            return Step::Done;
        }
        let unix = unix_seconds(reading.unix);
        let facts = self.facts(status, self.replay_safe);
        let admitted = admit(&self.settings, &facts, date::in_range(unix));
        let failure = Failure {
            class: class(retryable_status(status), admitted),
            named: server_delay(retry_after, unix).map_err(Stop::from),
            now: reading.now,
            roll: reading.roll,
        };
        step(self.engine.fail(failure, budget))
    }

    /// The attempt failed without a response, as `fault` classifies it.
    ///
    /// [`Fault::Final`] stops with [`StopReason::NotRetryable`] and tells the budget nothing.
    /// [`Fault::Sent`] and [`Fault::Unsent`] fail the budget and are decided like a 503
    /// without `Retry-After`; an unsent request is replay-safe whatever its method.
    pub fn error(&mut self, fault: Fault, reading: Reading, budget: Option<&mut Budget>) -> Step {
        self.fault(fault, reading, Teller::own(budget))
    }

    /// [`error`](Self::error), reporting to a retry budget shared by `&` across threads.
    #[cfg(target_has_atomic = "64")]
    pub fn error_shared(
        &mut self,
        fault: Fault,
        reading: Reading,
        budget: Option<&SharedBudget>,
    ) -> Step {
        self.fault(fault, reading, Teller::shared(budget))
    }

    /// [`error`](Self::error) with any budget.
    fn fault(&mut self, fault: Fault, reading: Reading, budget: Teller<'_>) -> Step {
        let replay_safe = match fault {
            // Ended before any rule reads the clock, as the budget hears nothing of it.
            Fault::Final => return Step::Stop(self.engine.end(StopReason::NotRetryable.into())),
            Fault::Sent => self.replay_safe,
            Fault::Unsent => true,
        };
        let failure = self.unanswered(replay_safe, reading);
        step(self.engine.fail(failure, budget))
    }

    /// The attempt ran out of `timeout`, as [`attempt`](Self::attempt) gave it.
    ///
    /// Out of the budget: the call stops with [`StopReason::BudgetExhausted`] (the budget is
    /// told nothing: the deadline was the caller's). Out of the caller's per-attempt timeout:
    /// the request may have reached the server, so it is a [`Fault::Sent`].
    pub fn timed_out(
        &mut self,
        timeout: Timeout,
        reading: Reading,
        budget: Option<&mut Budget>,
    ) -> Step {
        self.expired(timeout, reading, Teller::own(budget))
    }

    /// [`timed_out`](Self::timed_out), reporting to a retry budget shared by `&` across
    /// threads.
    #[cfg(target_has_atomic = "64")]
    pub fn timed_out_shared(
        &mut self,
        timeout: Timeout,
        reading: Reading,
        budget: Option<&SharedBudget>,
    ) -> Step {
        self.expired(timeout, reading, Teller::shared(budget))
    }

    /// [`timed_out`](Self::timed_out) with any budget.
    fn expired(&mut self, timeout: Timeout, reading: Reading, budget: Teller<'_>) -> Step {
        let sent = self.unanswered(self.replay_safe, reading);
        step(self.engine.expire(timeout, sent, budget))
    }

    /// A circuit breaker refused the next attempt before it was sent: the run stops with
    /// [`Stop::Refused`], and the attempt is not counted (call this instead of
    /// [`attempt`](Self::attempt)).
    pub fn refused(&mut self) -> Stop {
        self.engine.refused()
    }

    /// What rules 2 to 4 are told about the attempt that just failed.
    fn facts(&self, status: u16, replay_safe: bool) -> Facts {
        Facts {
            method: self.method,
            status,
            body_replayable: self.body_replayable,
            replay_safe,
        }
    }

    /// A transient failure without a response, as the engine reads it: a 503 without a
    /// server delay (RFC 9110 §15.6.4), replay-safe as `replay_safe` says.
    fn unanswered(&self, replay_safe: bool, reading: Reading) -> Failure<Stop> {
        let facts = self.facts(UNAVAILABLE, replay_safe);
        Failure {
            class: class(true, admit(&self.settings, &facts, true)),
            named: Ok(None),
            now: reading.now,
            roll: reading.roll,
        }
    }
}

/// HTTP's verdict as the engine's class: a failure of a kind worth retrying (`counted`: a
/// retryable status, or a transient fault) is counted by the retry budget even when rules 1
/// to 4 stop it (a 503 to a POST); any other is final. Rule 3 stops every status that is not
/// counted, so an admitted failure is always counted.
fn class(counted: bool, admitted: Result<(), StopReason>) -> Class<Stop> {
    match admitted {
        Ok(()) => Class::Retryable,
        Err(reason) if counted => Class::Barred(reason.into()),
        Err(reason) => Class::Final(reason.into()),
    }
}

/// The engine's answer as a step.
fn step(next: Next<Stop>) -> Step {
    match next {
        Next::Wait(wait) => Step::Wait(wait),
        Next::Stop(stop) => Step::Stop(stop),
    }
}

/// Whole Unix seconds for the rules' `now_unix`; past `i64::MAX` is `i64::MAX`, which the
/// rules reject as outside the years 1601..=9999.
fn unix_seconds(since_epoch: Duration) -> i64 {
    i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod before;
#[cfg(test)]
mod equivalence;
#[cfg(test)]
mod tests;
