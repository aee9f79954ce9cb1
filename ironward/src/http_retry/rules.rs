//! The rule order, once: what [`decide`](super::decide),
//! [`decide_response`](super::decide_response) and [`Run`](super::Run) all answer by. Rules 1
//! to 4 are HTTP's own ([`admit`]), the classifier a `Run` puts in front of the retry engine;
//! from rule 5 on they are the engine's, shared through [`Room`].

use core::time::Duration;

use super::{
    Attempt, Settings, StopReason, idempotent_method, retry_after_delay, retryable_status,
};
use crate::backoff::{PPM, full_jitter};
use crate::internal::float::duration;
use crate::retry::room::{Room, Short};

/// What rules 2 to 4 read about a failed attempt: the method already classified, the status
/// and the replay facts, so that a [`Run`](super::Run), which outlives the request's borrow,
/// admits by the same rules as [`decide`](super::decide).
#[derive(Debug, Clone, Copy)]
pub(super) struct Facts {
    pub(super) method: Method,
    pub(super) status: u16,
    pub(super) body_replayable: bool,
    pub(super) replay_safe: bool,
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
            body_replayable: attempt.body_replayable,
            replay_safe: attempt.replay_safe,
        }
    }
}

/// Rules 1 to 4 of the rule order: whether the failure may be retried at all, the HTTP
/// classifier in front of the retry engine. `input_valid` carries the rest of rule 2, the
/// sample and the clock, which only the per-response functions can get wrong.
pub(super) fn admit(
    settings: &Settings,
    facts: &Facts,
    input_valid: bool,
) -> Result<(), StopReason> {
    if !settings.valid() {
        return Err(StopReason::InvalidSettings);
    }
    if !input_valid || !(100..=599).contains(&facts.status) || facts.method == Method::Invalid {
        return Err(StopReason::InvalidInput);
    }
    if !retryable_status(facts.status) {
        return Err(StopReason::NotRetryable);
    }
    if !facts.body_replayable || !(facts.method == Method::Idempotent || facts.replay_safe) {
        return Err(StopReason::NotReplayable);
    }
    Ok(())
}

/// Rules 1 to 10 for one failed response: what [`decide`](super::decide) and
/// [`decide_response`](super::decide_response) answer. `now_valid` carries
/// `decide_response`'s clock check into rule 2; `named` reads the server's delay, and is
/// called only once rules 1 to 6 let the retry through.
///
/// Rules 5 to 9 are the retry engine's, on the attempt that failed: [`Backoff::more`]
/// counts the attempts and [`Room::settle`] fits the waits, as for
/// [`Engine`](crate::retry::Engine); only the client delay is drawn here from the caller's
/// integer sample rather than a roll.
///
/// [`Backoff::more`]: crate::Backoff::more
pub(super) fn judge(
    settings: &Settings,
    attempt: &Attempt<'_>,
    now_valid: bool,
    named: impl FnOnce() -> Result<Option<Duration>, StopReason>,
) -> Result<Duration, StopReason> {
    let valid = attempt.sample_ppm <= PPM && now_valid;
    admit(settings, &Facts::of(attempt), valid)?;
    let rules = settings.rules();
    let retry = attempt.retry_index.saturating_add(1);
    if !rules.backoff.more(retry) {
        return Err(StopReason::AttemptsExhausted);
    }
    let client = duration(full_jitter(
        rules.backoff.ceiling_nanos(retry),
        attempt.sample_ppm,
    ));
    Room::of(&rules, attempt.elapsed)
        .settle(client, named)
        .map_err(|short| match short {
            Short::Budget => StopReason::BudgetExhausted,
            Short::Cap => StopReason::ServerDelayExceedsCap,
            Short::Named(reason) => reason,
        })
}

/// Rule 7 for raw field values: none is no minimum, and exactly one must read as a delay.
/// `Retry-After` is not a list (RFC 9110 §10.2.3), so a second field, even an identical one,
/// leaves the server's intent unclear; a third is never read. A value that is not UTF-8
/// (RFC 9110 §5.5 allows obs-text bytes) cannot be a delay, so it is malformed like any other.
pub(super) fn server_delay<'v>(
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

/// Whether `wait` plus the request reserve is strictly less than `remaining`: the engine's
/// fit ([`room::fits`](crate::retry::room::fits)) with the settings' reserve, which rules 6
/// and 9 apply through [`Room::settle`]. Kept for the unit tests that pin it down.
#[cfg(test)]
pub(super) fn fits(wait: Duration, settings: &Settings, remaining: Duration) -> bool {
    crate::retry::room::fits(wait, settings.request_reserve, remaining)
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
