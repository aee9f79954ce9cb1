//! The rule order, once: what [`decide`](super::decide),
//! [`decide_response`](super::decide_response) and [`Run`](super::Run) all answer by.

use core::time::Duration;

use super::date;
use super::{
    Attempt, Settings, StopReason, idempotent_method, retry_after_delay, retryable_status,
};
use crate::backoff::{PPM, full_jitter};
use crate::internal::float::duration;

/// What the rules read about an attempt: [`Attempt`]'s fields with the method already
/// classified, so that a [`Run`](super::Run), which outlives the request's borrow, decides by
/// the same rules as [`decide`](super::decide).
#[derive(Debug, Clone, Copy)]
pub(super) struct Facts {
    pub(super) method: Method,
    pub(super) status: u16,
    pub(super) retry_index: u32,
    pub(super) elapsed: Duration,
    pub(super) body_replayable: bool,
    pub(super) replay_safe: bool,
    pub(super) sample_ppm: u32,
}

/// What rule 2 and rule 4 need to know of a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    /// Not an RFC 9110 token: invalid input.
    Invalid,
    /// One of [`idempotent_method`]'s.
    Idempotent,
    /// A valid method that is not idempotent: retried only when replay-safe.
    Unsafe,
}

impl Method {
    pub(super) fn of(method: &str) -> Self {
        if idempotent_method(method) {
            Self::Idempotent
        } else if is_token(method) {
            Self::Unsafe
        } else {
            Self::Invalid
        }
    }
}

impl Facts {
    pub(super) fn of(attempt: &Attempt<'_>) -> Self {
        Self {
            method: Method::of(attempt.method),
            status: attempt.status,
            retry_index: attempt.retry_index,
            elapsed: attempt.elapsed,
            body_replayable: attempt.body_replayable,
            replay_safe: attempt.replay_safe,
            sample_ppm: attempt.sample_ppm,
        }
    }
}

/// What rules 1 to 6 leave for the last rules: the client delay and the time remaining.
pub(super) struct Baseline {
    client: Duration,
    remaining: Duration,
}

/// Rules 1 to 6 of the rule order; `now_valid` carries `decide_response`'s clock check into
/// rule 2.
pub(super) fn baseline(
    settings: &Settings,
    facts: &Facts,
    now_valid: bool,
) -> Result<Baseline, StopReason> {
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

/// Rules 1 to 10 for a response whose raw `Retry-After` field values are `fields`: what
/// [`decide_response`](super::decide_response) and [`Run::response`](super::Run::response)
/// answer.
pub(super) fn respond<'v>(
    settings: &Settings,
    facts: &Facts,
    fields: impl IntoIterator<Item = &'v [u8]>,
    now_unix: i64,
) -> Result<Duration, StopReason> {
    baseline(settings, facts, date::in_range(now_unix))
        .and_then(|plan| plan.wait(settings, server_delay(fields, now_unix)?))
}

/// Rule 7 for raw field values: none is no minimum, and exactly one must read as a delay.
/// `Retry-After` is not a list (RFC 9110 §10.2.3), so a second field, even an identical one,
/// leaves the server's intent unclear; a third is never read. A value that is not UTF-8
/// (RFC 9110 §5.5 allows obs-text bytes) cannot be a delay, so it is malformed like any other.
fn server_delay<'v>(
    fields: impl IntoIterator<Item = &'v [u8]>,
    now_unix: i64,
) -> Result<Option<Duration>, StopReason> {
    let mut fields = fields.into_iter();
    match (fields.next(), fields.next()) {
        (None, _) => Ok(None),
        (Some(value), None) => core::str::from_utf8(value)
            .ok()
            .and_then(|value| retry_after_delay(value, now_unix))
            .map(Some)
            .ok_or(StopReason::InvalidRetryAfter),
        (Some(_), Some(_)) => Err(StopReason::InvalidRetryAfter),
    }
}

impl Baseline {
    /// Rules 8 to 10: the server delay against the cap, then the final wait against the
    /// budget.
    pub(super) fn wait(
        self,
        settings: &Settings,
        server: Option<Duration>,
    ) -> Result<Duration, StopReason> {
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

/// Whether `wait` plus the request reserve is strictly less than `remaining`. A sum past
/// `Duration::MAX` saturates there, which is never less than `remaining`.
pub(super) fn fits(wait: Duration, settings: &Settings, remaining: Duration) -> bool {
    wait.saturating_add(settings.request_reserve) < remaining
}

/// `min(base_delay · 2^retry_index, max_delay)` in exact nanoseconds: the ceiling of
/// [`Settings::backoff`] before its retry `retry_index + 1`.
pub(super) fn ceiling(settings: &Settings, retry_index: u32) -> u128 {
    settings
        .backoff()
        .ceiling_nanos(retry_index.saturating_add(1))
}

/// Whether `method` is an RFC 9110 token (§5.6.2): one or more `tchar`s.
pub(super) fn is_token(method: &str) -> bool {
    !method.is_empty()
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}
