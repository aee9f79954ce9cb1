//! HTTP retry decisions: after a failed response, wait how long, or stop and why.
//!
//! A client that has just received a failed HTTP response has to answer three questions: may
//! this request be sent again at all, how long should it wait first, and does the time left
//! allow it? [`decide`] and [`decide_response`] answer them with a [`Decision`]:
//! [`Decision::Wait`] with the delay, or [`Decision::Stop`] with a [`StopReason`]. Everything
//! the answer depends on is passed in (the status and method, whether the body can be sent
//! again, which retry this would be, how long the caller has been trying, the raw
//! `Retry-After` values, the wall clock and a random sample), so equal inputs always give
//! equal answers. Nothing here performs I/O, reads a clock, draws a random number or
//! allocates.
//!
//! This ports the MoonBit package `http_retry`. The semantics follow RFC 9110: idempotent
//! methods (§9.2.2), `Retry-After` (§10.2.3) and the IMF-fixdate (§5.6.7).
//!
//! # Rule order
//!
//! Both functions apply these rules in order; the first that applies gives the answer.
//!
//! 1. [`Settings::valid`] fails → [`StopReason::InvalidSettings`].
//! 2. The input is malformed → [`StopReason::InvalidInput`]: `sample_ppm` above 1_000_000, a
//!    status outside 100..=599, a method that is not a non-empty RFC 9110 token (§5.6.2), or
//!    (for [`decide_response`]) a `now_unix` outside the years 1601..=9999.
//! 3. The status is not one of 408, 429, 500, 502, 503, 504 ([`retryable_status`]) →
//!    [`StopReason::NotRetryable`].
//! 4. The body cannot be sent again, or the method is not idempotent ([`idempotent_method`])
//!    and the caller has not vouched for [`Attempt::replay_safe`] →
//!    [`StopReason::NotReplayable`].
//! 5. `retry_index ≥ max_retries` → [`StopReason::AttemptsExhausted`].
//! 6. The client delay is the exponential backoff ceiling
//!    `min(base_delay · 2^retry_index, max_delay)` ([`backoff_ceiling`]), scaled by
//!    `sample_ppm / 1_000_000` and floored to whole nanoseconds ([`jitter_delay`]). With
//!    `remaining = total_budget − elapsed` (nothing when `elapsed ≥ total_budget`), the retry
//!    needs `client + request_reserve < remaining`, strictly, else
//!    [`StopReason::BudgetExhausted`].
//! 7. The server's minimum delay: [`decide`] takes it already parsed (`None` for none);
//!    [`decide_response`] takes the raw, uncombined `Retry-After` field values. No value means
//!    no minimum; two or more values (even identical ones), or one that [`retry_after_delay`]
//!    rejects → [`StopReason::InvalidRetryAfter`].
//! 8. A server delay above `max_delay` → [`StopReason::ServerDelayExceedsCap`]: a server
//!    minimum is never clipped to the cap, nor shortened by jitter.
//! 9. The wait is `max(client, server)`; it needs `wait + request_reserve < remaining`, else
//!    [`StopReason::BudgetExhausted`].
//! 10. [`Decision::Wait`] with that wait.
//!
//! # Precedence
//!
//! Because the first applicable rule answers, earlier invalid input, status, replay, attempt
//! or baseline budget failures take precedence over anything the server said: a 404 with a
//! malformed `Retry-After` is [`NotRetryable`](StopReason::NotRetryable), and a retry that
//! the budget could not hold even without a server delay is
//! [`BudgetExhausted`](StopReason::BudgetExhausted) whatever its `Retry-After` values. The
//! budget is checked twice: first against the client delay alone (rule 6), then against the
//! final wait (rule 9), after the server delay has been checked against the cap, so a server
//! delay both above the cap and beyond the budget is
//! [`ServerDelayExceedsCap`](StopReason::ServerDelayExceedsCap).
//!
//! # After the wait
//!
//! A [`Decision::Wait`] is a plan, not a guarantee. The caller must re-check its own deadline
//! after waking, since it may have slept longer than asked, and must still enforce its
//! request timeout and cancellation. [`Settings::request_reserve`] is an estimate of how long
//! the next attempt needs, set aside when judging the budget; it is not a timeout.
//!
//! # A whole retry loop: [`Run`]
//!
//! [`decide`] and [`decide_response`] judge one failed response. A loop around them has to
//! remember the rest: which retry comes next, when the call started, what was waited, and why
//! it stopped; it also has to re-check the budget after waking, cap each attempt at what is
//! left of the budget, draw the jitter, read the raw header bytes and tell a retry budget how
//! each attempt went. [`Run`] is that loop's state and those answers, pure like the rest of
//! this module, so every HTTP client built on it (the `ironward-tower` and `ironward-reqwest`
//! edges among them) retries alike on the same inputs, and leaves the same [`Retried`] record.
//! It is the core's [retry engine](crate::retry) with rules 1 to 4 as its classifier and the
//! `Retry-After` values as the wait a failure names: rules 5 to 9 are the engine's own.
//!
//! # One backoff, one draw
//!
//! The client delay of rule 6 is the core's [`Backoff`](crate::Backoff) with full jitter
//! ([`Settings::backoff`]), computed once: exact integer nanoseconds, the ceiling
//! `min(base_delay · 2^retry_index, max_delay)` scaled by `sample_ppm / 1_000_000` and
//! floored. These per-response functions take the MoonBit package's integer `sample_ppm`;
//! everything else in the crate, [`Run`] included, takes a `roll: f64` from `[0, 1)`, and the
//! one conversion between the two is [`sample_ppm`] (`⌊roll · 1_000_001⌋`, uniform over
//! `0..=1_000_000`).
//!
//! # Units and clocks
//!
//! Spans are [`Duration`]s. [`Attempt::elapsed`] is read from a monotonic clock, measured from
//! the start of the first attempt; `now_unix` is wall-clock time in Unix seconds, used only to
//! turn an HTTP-date into a delay (clock skew between client and server shifts that delay;
//! pass a trusted or corrected clock). [`Attempt::sample_ppm`] is a uniform random sample in
//! parts per million that the caller draws: 1_000_000 means no jitter, and an independent
//! uniform draw on each retry gives "full jitter".
//!
//! # Differs from the MoonBit package
//!
//! - The package counts milliseconds in an `Int64`; this returns [`Duration`]s of the same
//!   length, and jitter floors to whole nanoseconds rather than whole milliseconds.
//! - The package's named arguments are the fields of [`Attempt`]; its `defaults()` is
//!   [`Settings::default`] (also [`SETTINGS`]) and its `valid_settings` is
//!   [`Settings::valid`].
//! - The package bounds a `Retry-After` value at 1024 UTF-16 code units; this bounds it at
//!   1024 bytes. Only ASCII values can be valid, and there the two counts agree.
//! - The package leaves the loop (attempt counting, the re-check after waking, transport
//!   errors) to each HTTP adapter; [`Run`] is that loop, once.
//!
//! # Not covered
//!
//! Redirects, credential refresh, replaying a streamed body, cancellation and distributed rate
//! limiting belong to the HTTP adapter (and to the other pieces of this crate). Which errors
//! left a request unsent is the client's to say ([`Fault`]).
//!
//! # Examples
//!
//! ```
//! use core::time::Duration;
//! use ironward::http_retry::{decide_response, Decision, Attempt, Settings, StopReason};
//!
//! let settings = Settings::default();
//! let mut request = Attempt {
//!     method: "GET",
//!     status: 429,
//!     retry_index: 0,
//!     elapsed: Duration::from_millis(100),
//!     body_replayable: true,
//!     replay_safe: false,
//!     sample_ppm: 0,
//! };
//! // The MoonBit package's rate-limited GET: zero jitter cannot shorten the server's five
//! // seconds.
//! let now = 1_700_000_000;
//! assert_eq!(
//!     decide_response(&settings, &request, &["5"], now),
//!     Decision::Wait(Duration::from_secs(5))
//! );
//!
//! // Two Retry-After fields are ambiguous, so the retry stops.
//! assert_eq!(
//!     decide_response(&settings, &request, &["5", "5"], now),
//!     Decision::Stop(StopReason::InvalidRetryAfter)
//! );
//!
//! // A 404 is not retried, whatever the server says about waiting.
//! request.status = 404;
//! assert_eq!(
//!     decide_response(&settings, &request, &["soon"], now),
//!     Decision::Stop(StopReason::NotRetryable)
//! );
//! ```

use core::time::Duration;

use crate::backoff::{PPM, full_jitter};
use crate::internal::float::duration;
use rules::{ceiling, judge, server_delay};

mod date;
mod decision;
mod gave_up;
mod retry_after;
mod rules;
mod run;
mod settings;
mod terms;

pub use crate::backoff::sample_ppm;
pub use crate::retry::Timeout;
pub use date::parse_http_date;
pub use decision::{Attempt, Decision, StopReason};
pub use gave_up::GaveUp;
pub use retry_after::retry_after_delay;
pub use run::Run;
pub use settings::{SETTINGS, Settings};
pub use terms::{Call, Fault, Reading, Retried, Step, Stop, vouches};

/// Decides whether to retry a failed response, given the server's delay already parsed.
///
/// Applies the [rule order](self#rule-order) with `server_delay` as the server's minimum
/// (`None` when it named none). Use [`decide_response`] to hand over the raw `Retry-After`
/// values instead.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{decide, Decision, Attempt, Settings, StopReason};
///
/// let settings = Settings::default();
/// let request = Attempt {
///     method: "GET",
///     status: 503,
///     retry_index: 2,
///     elapsed: Duration::from_secs(3),
///     body_replayable: true,
///     replay_safe: false,
///     sample_ppm: 500_000,
/// };
/// // The third retry: 200 ms · 2² = 800 ms, halved by the sample.
/// assert_eq!(decide(&settings, &request, None), Decision::Wait(Duration::from_millis(400)));
/// // The server's minimum wins over the shorter client delay.
/// let server = Some(Duration::from_secs(2));
/// assert_eq!(decide(&settings, &request, server), Decision::Wait(Duration::from_secs(2)));
/// // But not when it is above the cap.
/// let server = Some(Duration::from_secs(31));
/// assert_eq!(
///     decide(&settings, &request, server),
///     Decision::Stop(StopReason::ServerDelayExceedsCap)
/// );
/// ```
pub fn decide(
    settings: &Settings,
    request: &Attempt<'_>,
    server_delay: Option<Duration>,
) -> Decision {
    decision(judge(settings, request, true, || Ok(server_delay)))
}

/// Decides whether to retry a failed response, given its raw `Retry-After` field values.
///
/// `retry_after` holds each `Retry-After` field of the response as received, uncombined: an
/// empty slice when there was none. `now_unix` is the caller's wall clock in Unix seconds,
/// used to read an HTTP-date; it must lie in the years 1601..=9999 even when there is no
/// date to read. Otherwise the same as [`decide`] (see the [rule order](self#rule-order)).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{decide_response, Decision, Attempt, Settings, StopReason};
///
/// let settings = Settings::default();
/// let request = Attempt {
///     method: "GET",
///     status: 503,
///     retry_index: 0,
///     elapsed: Duration::from_millis(250),
///     body_replayable: true,
///     replay_safe: false,
///     sample_ppm: 1_000_000,
/// };
/// let now = 1_445_412_468; // 2015-10-21T07:27:48Z
/// assert_eq!(
///     decide_response(&settings, &request, &["Wed, 21 Oct 2015 07:28:00 GMT"], now),
///     Decision::Wait(Duration::from_secs(12))
/// );
/// assert_eq!(
///     decide_response(&settings, &request, &[], now),
///     Decision::Wait(Duration::from_millis(200))
/// );
/// assert_eq!(
///     decide_response(&settings, &request, &["in a minute"], now),
///     Decision::Stop(StopReason::InvalidRetryAfter)
/// );
/// ```
pub fn decide_response(
    settings: &Settings,
    request: &Attempt<'_>,
    retry_after: &[&str],
    now_unix: i64,
) -> Decision {
    let fields = retry_after.iter().map(|value| value.as_bytes());
    decision(judge(settings, request, date::in_range(now_unix), || {
        server_delay(fields, now_unix)
    }))
}

/// The exponential backoff ceiling before retry `retry_index`: `min(base_delay ·
/// 2^retry_index, max_delay)`.
///
/// Exact and saturating: the product is taken in nanoseconds and anything past the cap is the
/// cap, for every `retry_index` up to `u32::MAX` and every duration up to [`Duration::MAX`].
/// `None` when the settings are not [valid](Settings::valid).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{backoff_ceiling, Settings};
///
/// let settings = Settings::default();
/// assert_eq!(backoff_ceiling(&settings, 0), Some(Duration::from_millis(200)));
/// assert_eq!(backoff_ceiling(&settings, 3), Some(Duration::from_millis(1600)));
/// assert_eq!(backoff_ceiling(&settings, u32::MAX), Some(Duration::from_secs(30)));
/// let invalid = Settings { max_retries: 5000, ..settings };
/// assert_eq!(backoff_ceiling(&invalid, 0), None);
/// ```
pub fn backoff_ceiling(settings: &Settings, retry_index: u32) -> Option<Duration> {
    settings
        .valid()
        .then(|| duration(ceiling(settings, retry_index)))
}

/// Scales a delay by a caller-drawn sample: `floor(ceiling · sample_ppm / 1_000_000)`.
///
/// Full jitter as in AWS's "Exponential Backoff and Jitter": with `sample_ppm` drawn
/// uniformly from 0..=1_000_000, the delay is spread uniformly below the ceiling. Exact
/// integer arithmetic in whole nanoseconds (floored), for any `ceiling` up to
/// [`Duration::MAX`]. `None` when `sample_ppm` is above 1_000_000.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::jitter_delay;
///
/// let ceiling = Duration::from_millis(200);
/// assert_eq!(jitter_delay(ceiling, 1_000_000), Some(ceiling));
/// assert_eq!(jitter_delay(ceiling, 250_000), Some(Duration::from_millis(50)));
/// assert_eq!(jitter_delay(ceiling, 0), Some(Duration::ZERO));
/// assert_eq!(jitter_delay(ceiling, 1_000_001), None);
/// ```
pub fn jitter_delay(ceiling: Duration, sample_ppm: u32) -> Option<Duration> {
    (sample_ppm <= PPM).then(|| duration(full_jitter(ceiling.as_nanos(), sample_ppm)))
}

/// Whether a method is idempotent: `GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS` or `TRACE`.
///
/// RFC 9110 §9.2.2 defines these as the methods whose intended effect is the same however
/// many times an identical request is sent, which is what makes them safe to repeat after a
/// failure. Method names are case-sensitive (RFC 9110 §9.1), so `"get"` is not one. Whether
/// the body can be sent again is a separate question ([`Attempt::body_replayable`]).
///
/// # Examples
///
/// ```
/// use ironward::http_retry::idempotent_method;
///
/// assert!(idempotent_method("PUT"));
/// assert!(!idempotent_method("POST"));
/// assert!(!idempotent_method("get"));
/// ```
pub fn idempotent_method(method: &str) -> bool {
    matches!(
        method,
        "GET" | "HEAD" | "PUT" | "DELETE" | "OPTIONS" | "TRACE"
    )
}

/// Whether a status is worth retrying: 408, 429, 500, 502, 503 or 504.
///
/// The MoonBit package's conservative defaults, statuses that usually mean a transient condition:
/// Request Timeout, Too Many Requests, Internal Server Error, Bad Gateway, Service
/// Unavailable, Gateway Timeout (RFC 9110 §15, RFC 6585 §4). A retryable status does not by
/// itself make repeating the request safe; that is [`idempotent_method`]'s question.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::retryable_status;
///
/// assert!(retryable_status(503));
/// assert!(!retryable_status(501));
/// assert!(!retryable_status(404));
/// ```
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
}

/// A rule's verdict as the public answer.
fn decision(verdict: Result<Duration, StopReason>) -> Decision {
    verdict.map_or_else(Decision::Stop, Decision::Wait)
}

#[cfg(test)]
mod tests;
