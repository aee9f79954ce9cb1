//! The HTTP retry loop as it was before the retry engine, kept for the tests only: `Before`
//! is the old `Run`, whole, with the old rule functions it decided by (`baseline`, `respond`,
//! the old `wait` and `fits`). The equivalence properties drive it beside today's `Run` and
//! require the same answers, the same records and the same budgets, step for step.
//!
//! It reuses only what the engine left untouched: the method's class, the status list, the
//! `Retry-After` and date readers, the ceiling and the full jitter.

use core::time::Duration;

use crate::backoff::{PPM, full_jitter, sample_ppm};
use crate::budget::Teller;
use crate::http_retry::date;
use crate::http_retry::rules::{Method, ceiling, server_delay};
use crate::http_retry::{
    Call, Fault, Reading, Retried, Settings, Step, Stop, StopReason, Timeout, retryable_status,
};
use crate::internal::float::duration;

const UNAVAILABLE: u16 = 503;

#[derive(Debug, Clone, Copy)]
struct Facts {
    method: Method,
    status: u16,
    retry_index: u32,
    elapsed: Duration,
    body_replayable: bool,
    replay_safe: bool,
    sample_ppm: u32,
}

struct Baseline {
    client: Duration,
    remaining: Duration,
}

fn baseline(settings: &Settings, facts: &Facts, now_valid: bool) -> Result<Baseline, StopReason> {
    if !settings.valid() {
        return Err(StopReason::InvalidSettings);
    }
    if facts.sample_ppm > PPM
        || !(100..=599).contains(&facts.status)
        || facts.method == Method::Invalid
        || !now_valid
    {
        return Err(StopReason::InvalidInput);
    }
    if !retryable_status(facts.status) {
        return Err(StopReason::NotRetryable);
    }
    if !facts.body_replayable || !(facts.method == Method::Idempotent || facts.replay_safe) {
        return Err(StopReason::NotReplayable);
    }
    if facts.retry_index >= settings.max_retries {
        return Err(StopReason::AttemptsExhausted);
    }
    let client = duration(full_jitter(
        ceiling(settings, facts.retry_index),
        facts.sample_ppm,
    ));
    let remaining = settings.total_budget.saturating_sub(facts.elapsed);
    if !fits(client, settings, remaining) {
        return Err(StopReason::BudgetExhausted);
    }
    Ok(Baseline { client, remaining })
}

fn respond<'v>(
    settings: &Settings,
    facts: &Facts,
    fields: impl IntoIterator<Item = &'v [u8]>,
    now_unix: i64,
) -> Result<Duration, StopReason> {
    baseline(settings, facts, date::in_range(now_unix))
        .and_then(|plan| plan.wait(settings, server_delay(fields, now_unix)?))
}

impl Baseline {
    fn wait(self, settings: &Settings, server: Option<Duration>) -> Result<Duration, StopReason> {
        let server = server.unwrap_or(Duration::ZERO);
        if server > settings.max_delay {
            return Err(StopReason::ServerDelayExceedsCap);
        }
        let wait = self.client.max(server);
        if !fits(wait, settings, self.remaining) {
            return Err(StopReason::BudgetExhausted);
        }
        Ok(wait)
    }
}

fn fits(wait: Duration, settings: &Settings, remaining: Duration) -> bool {
    wait.saturating_add(settings.request_reserve) < remaining
}

/// The old `Run`, its docs left out.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Before {
    settings: Settings,
    method: Method,
    body_replayable: bool,
    replay_safe: bool,
    started: Duration,
    latest: Duration,
    record: Retried,
    previous: Option<Duration>,
}

impl Before {
    pub(super) fn new(settings: Settings, call: &Call<'_>, now: Duration) -> Self {
        Self {
            settings,
            method: Method::of(call.method),
            body_replayable: call.body_replayable,
            replay_safe: call.replay_safe,
            started: now,
            latest: now,
            record: Retried::default(),
            previous: None,
        }
    }

    pub(super) fn retried(&self) -> Retried {
        self.record
    }

    pub(super) fn previous(&self) -> Option<Duration> {
        self.previous
    }

    pub(super) fn remaining(&self, now: Duration) -> Duration {
        let elapsed = now.max(self.latest) - self.started;
        self.settings.total_budget.saturating_sub(elapsed)
    }

    pub(super) fn attempt(
        &mut self,
        now: Duration,
        per_attempt: Option<Duration>,
    ) -> Result<Timeout, Stop> {
        self.observe(now);
        let left = self.remaining(now);
        if self.record.attempts > 0 && left <= self.settings.request_reserve {
            return Err(self.end(StopReason::BudgetExhausted.into()));
        }
        self.record.attempts = self.record.attempts.saturating_add(1);
        Ok(match per_attempt {
            Some(limit) if !limit.is_zero() && limit < left => Timeout::Attempt(limit),
            _ => Timeout::Budget(left),
        })
    }

    pub(super) fn respond<'v>(
        &mut self,
        status: u16,
        retry_after: impl IntoIterator<Item = &'v [u8]>,
        reading: Reading,
        mut budget: Teller<'_>,
    ) -> Step {
        if status < 400 {
            budget.pass();
            return Step::Done;
        }
        if retryable_status(status) {
            budget.fail();
        }
        let facts = self.facts(status, self.replay_safe, reading);
        let unix = i64::try_from(reading.unix.as_secs()).unwrap_or(i64::MAX);
        let verdict = respond(&self.settings, &facts, retry_after, unix);
        self.conclude(verdict, budget)
    }

    pub(super) fn fault(&mut self, fault: Fault, reading: Reading, mut budget: Teller<'_>) -> Step {
        let replay_safe = match fault {
            Fault::Final => return Step::Stop(self.end(StopReason::NotRetryable.into())),
            Fault::Sent => self.replay_safe,
            Fault::Unsent => true,
        };
        budget.fail();
        let facts = self.facts(UNAVAILABLE, replay_safe, reading);
        let verdict =
            baseline(&self.settings, &facts, true).and_then(|plan| plan.wait(&self.settings, None));
        self.conclude(verdict, budget)
    }

    pub(super) fn expired(
        &mut self,
        timeout: Timeout,
        reading: Reading,
        budget: Teller<'_>,
    ) -> Step {
        match timeout {
            Timeout::Attempt(_) => self.fault(Fault::Sent, reading, budget),
            Timeout::Budget(_) => {
                self.observe(reading.now);
                Step::Stop(self.end(StopReason::BudgetExhausted.into()))
            }
        }
    }

    pub(super) fn refused(&mut self) -> Stop {
        self.end(Stop::Refused)
    }

    fn facts(&mut self, status: u16, replay_safe: bool, reading: Reading) -> Facts {
        Facts {
            method: self.method,
            status,
            retry_index: self.record.attempts.saturating_sub(1),
            elapsed: self.observe(reading.now),
            body_replayable: self.body_replayable,
            replay_safe,
            sample_ppm: sample_ppm(reading.roll),
        }
    }

    fn conclude(&mut self, verdict: Result<Duration, StopReason>, budget: Teller<'_>) -> Step {
        match verdict {
            Ok(_) if !budget.can_retry() => Step::Stop(self.end(Stop::Throttled)),
            Ok(wait) => {
                self.record.waited = self.record.waited.saturating_add(wait);
                self.previous = Some(wait);
                Step::Wait(wait)
            }
            Err(reason) => Step::Stop(self.end(reason.into())),
        }
    }

    fn end(&mut self, stop: Stop) -> Stop {
        self.record.stop = Some(stop);
        stop
    }

    fn observe(&mut self, now: Duration) -> Duration {
        self.latest = self.latest.max(now);
        self.latest - self.started
    }
}
