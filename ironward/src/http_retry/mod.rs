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
//!
//! # One backoff, one draw
//!
//! The client delay of rule 6 is the core's [`Backoff`] with full jitter
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

use core::fmt;
use core::time::Duration;

use crate::backoff::{PPM, full_jitter};
use crate::float::duration;
use crate::{Backoff, Jitter};
use rules::{Facts, baseline, ceiling, respond};

mod date;
mod gave_up;
mod retry_after;
mod rules;
mod run;

pub use crate::backoff::sample_ppm;
pub use date::parse_http_date;
pub use gave_up::GaveUp;
pub use retry_after::retry_after_delay;
pub use run::{Call, Fault, Reading, Retried, Run, Step, Stop, Timeout, vouches};

/// The most retries [`Settings::valid`] accepts (the initial request not counted).
const MAX_RETRIES: u32 = 1000;

/// The defaults of the MoonBit package `http_retry`: 3 retries, 200 ms base, 30 s cap, 120 s
/// budget, 1 s reserve.
///
/// The same value as [`Settings::default()`], usable in `const` contexts.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::{Settings, SETTINGS};
///
/// assert_eq!(SETTINGS, Settings::default());
/// assert_eq!(SETTINGS.max_retries, 3);
/// ```
pub const SETTINGS: Settings = Settings {
    max_retries: 3,
    base_delay: Duration::from_millis(200),
    max_delay: Duration::from_secs(30),
    total_budget: Duration::from_secs(120),
    request_reserve: Duration::from_secs(1),
};

/// How patient a client is: retry count, backoff and time budget.
///
/// A plain record: change it with `Settings { max_retries: 5, ..Settings::default() }`.
/// [`decide`] and [`decide_response`] check it on every call and stop with
/// [`StopReason::InvalidSettings`] when [`valid`](Settings::valid) fails, so a bad record
/// never panics and never retries.
///
/// # Default
///
/// The MoonBit package's contract, kept as is:
///
/// | field | value |
/// | --- | --- |
/// | `max_retries` | 3 |
/// | `base_delay` | 200 ms |
/// | `max_delay` | 30 s |
/// | `total_budget` | 120 s |
/// | `request_reserve` | 1 s |
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::Settings;
///
/// let patient = Settings { total_budget: Duration::from_secs(600), ..Settings::default() };
/// assert!(patient.valid());
/// assert_eq!(patient.base_delay, Duration::from_millis(200));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Settings {
    /// Retries allowed after the initial request, which is not counted; 0..=1000.
    pub max_retries: u32,
    /// The client delay before the first retry, doubled on each later one; at most
    /// `max_delay`.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub base_delay: Duration,
    /// The cap on the client delay, and the most a server may ask a client to wait: a
    /// longer `Retry-After` stops the retry.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub max_delay: Duration,
    /// The time allowed for the whole call, from the start of the first attempt to the end of
    /// the last.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub total_budget: Duration,
    /// The time set aside for the next attempt itself when judging whether a wait fits the
    /// budget; less than `total_budget`. An estimate, not a timeout.
    #[cfg_attr(feature = "serde", serde(with = "crate::humane"))]
    pub request_reserve: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        SETTINGS
    }
}

impl Settings {
    /// Whether the settings can be used: `max_retries ≤ 1000`, `base_delay ≤ max_delay` and
    /// `request_reserve < total_budget`.
    ///
    /// The bound on retries is the MoonBit package's; the other two keep the backoff and the
    /// budget meaningful (a reserve that fills the whole budget would make every retry stop).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::http_retry::Settings;
    ///
    /// assert!(Settings::default().valid());
    /// assert!(!Settings { max_retries: 1001, ..Settings::default() }.valid());
    /// let no_room = Settings { request_reserve: Duration::from_secs(120), ..Settings::default() };
    /// assert!(!no_room.valid());
    /// ```
    #[must_use]
    pub fn valid(&self) -> bool {
        self.max_retries <= MAX_RETRIES
            && self.base_delay <= self.max_delay
            && self.request_reserve < self.total_budget
    }

    /// The client delay as a [`Backoff`]: `base_delay` doubling to `max_delay`, full jitter,
    /// `max_retries + 1` attempts.
    ///
    /// Rule 6's client delay before retry `retry_index` is exactly
    /// `self.backoff().delay(retry_index + 1, roll, None)` when the attempt's `sample_ppm` is
    /// [`sample_ppm`]`(roll)`: one computation, in exact integer nanoseconds, so a caller that
    /// plans with [`Backoff::schedule`] sees the waits this module decides.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Jitter;
    /// use ironward::http_retry::Settings;
    ///
    /// let backoff = Settings::default().backoff();
    /// assert_eq!(backoff.jitter, Jitter::Full);
    /// assert_eq!(backoff.attempts, 4);
    /// assert_eq!(backoff.ceiling(3), Duration::from_millis(800));
    /// assert_eq!(backoff.delay(3, 0.5, None), Duration::from_millis(400));
    /// ```
    #[must_use]
    pub fn backoff(&self) -> Backoff {
        Backoff {
            base: self.base_delay,
            factor: 2.0,
            cap: self.max_delay,
            attempts: self.max_retries.saturating_add(1),
            jitter: Jitter::Full,
        }
    }
}

/// What the caller knows about the failed attempt and the retry it is considering.
///
/// Each field is one of the MoonBit package's named arguments. Build it with a struct
/// literal; every field is public.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{decide, Decision, Attempt, Settings};
///
/// // A POST that the server deduplicates with an idempotency key, answered 503.
/// let request = Attempt {
///     method: "POST",
///     status: 503,
///     retry_index: 0,
///     elapsed: Duration::from_millis(350),
///     body_replayable: true,
///     replay_safe: true,
///     sample_ppm: 1_000_000,
/// };
/// assert_eq!(
///     decide(&Settings::default(), &request, None),
///     Decision::Wait(Duration::from_millis(200))
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attempt<'a> {
    /// The request method, case-sensitive as RFC 9110 §9.1 has it (`"GET"`, not `"get"`);
    /// must be a non-empty token.
    pub method: &'a str,
    /// The response status code; must lie in 100..=599.
    pub status: u16,
    /// Which retry this would be: 0 for the first retry, after the initial request failed.
    pub retry_index: u32,
    /// Time since the first attempt started, from a monotonic clock.
    pub elapsed: Duration,
    /// Whether the request body can be sent again byte for byte (no body counts as
    /// replayable; a consumed stream does not). Every retry needs it.
    pub body_replayable: bool,
    /// Allows a method that is not idempotent (such as POST or PATCH) to be retried. Set it
    /// only when the server is known to deduplicate the request, for example by an
    /// idempotency key it honours, resent unchanged with the exact same body; a key the
    /// client merely generates is not enough.
    pub replay_safe: bool,
    /// A uniform random sample in parts per million, 0..=1_000_000, that scales the client
    /// delay down; 1_000_000 means no jitter. Draw it independently for each retry.
    pub sample_ppm: u32,
}

/// The answer for one failed response: wait and retry, or stop.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{Decision, StopReason};
///
/// let decision = Decision::Wait(Duration::from_millis(200));
/// assert!(matches!(decision, Decision::Wait(delay) if delay.as_millis() == 200));
/// assert_ne!(decision, Decision::Stop(StopReason::BudgetExhausted));
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Wait this long, then send the request again. The caller must re-check its deadline
    /// after waking.
    Wait(Duration),
    /// Do not retry, for this reason.
    Stop(StopReason),
}

/// Why a retry was refused.
///
/// One variant per rule of the [module's rule order](self#rule-order). Its [`Display`] is a
/// short lower-case phrase.
///
/// It also implements [`core::error::Error`], although a stop is not always a fault (a 404 is
/// simply final): a caller that gives up reports the reason as the cause of its last failure,
/// often boxed as `dyn Error`, and three of the eight variants are errors in the caller's own
/// input. The trait costs nothing and has no source to expose.
///
/// [`Display`]: fmt::Display
///
/// # Examples
///
/// ```
/// use ironward::http_retry::StopReason;
///
/// assert_eq!(StopReason::BudgetExhausted.to_string(), "time budget exhausted");
/// let cause: &dyn core::error::Error = &StopReason::InvalidRetryAfter;
/// assert_eq!(cause.to_string(), "invalid retry-after value");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// [`Settings::valid`] failed: too many retries allowed, a base delay above the cap, or
    /// a reserve that fills the budget.
    InvalidSettings,
    /// The request description is malformed: `sample_ppm` above 1_000_000, a status outside
    /// 100..=599, a method that is not a token, or a `now_unix` outside 1601..=9999.
    InvalidInput,
    /// The status is not a transient failure worth retrying (see [`retryable_status`]).
    NotRetryable,
    /// Sending the request again could repeat its effect or send a different body: the body
    /// cannot be replayed, or the method is not idempotent and not marked replay-safe.
    NotReplayable,
    /// All `max_retries` retries have been made.
    AttemptsExhausted,
    /// The wait plus the request reserve does not fit in what is left of the total budget.
    BudgetExhausted,
    /// The server asked for a longer wait than `max_delay`.
    ServerDelayExceedsCap,
    /// `Retry-After` was sent more than once, or its value is neither delta-seconds nor a
    /// strict IMF-fixdate.
    InvalidRetryAfter,
}

impl StopReason {
    /// Every reason, in the [rule order](self#rule-order)'s order.
    ///
    /// For a client that registers one handle per reason up front (a metrics counter, a log
    /// filter) rather than on first sight.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::StopReason;
    ///
    /// assert_eq!(StopReason::ALL.len(), 8);
    /// assert_eq!(StopReason::ALL[0], StopReason::InvalidSettings);
    /// ```
    pub const ALL: [Self; 8] = [
        Self::InvalidSettings,
        Self::InvalidInput,
        Self::NotRetryable,
        Self::NotReplayable,
        Self::AttemptsExhausted,
        Self::BudgetExhausted,
        Self::ServerDelayExceedsCap,
        Self::InvalidRetryAfter,
    ];

    /// The reason as a fixed `snake_case` label: the variant's name, for a metric label or a
    /// structured log field.
    ///
    /// Where [`Display`](fmt::Display) is a phrase for people, this is a value for machines:
    /// one per variant, distinct, never reworded, so that every client labels a stop alike and
    /// a dashboard keyed on it survives an upgrade.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::StopReason;
    ///
    /// assert_eq!(StopReason::AttemptsExhausted.as_str(), "attempts_exhausted");
    /// assert_eq!(StopReason::ServerDelayExceedsCap.as_str(), "server_delay_exceeds_cap");
    /// ```
    #[must_use]
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::InvalidSettings => "invalid_settings",
            Self::InvalidInput => "invalid_input",
            Self::NotRetryable => "not_retryable",
            Self::NotReplayable => "not_replayable",
            Self::AttemptsExhausted => "attempts_exhausted",
            Self::BudgetExhausted => "budget_exhausted",
            Self::ServerDelayExceedsCap => "server_delay_exceeds_cap",
            Self::InvalidRetryAfter => "invalid_retry_after",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidSettings => "invalid retry settings",
            Self::InvalidInput => "invalid retry input",
            Self::NotRetryable => "status is not retryable",
            Self::NotReplayable => "request is not safe to replay",
            Self::AttemptsExhausted => "retries exhausted",
            Self::BudgetExhausted => "time budget exhausted",
            Self::ServerDelayExceedsCap => "server delay exceeds the cap",
            Self::InvalidRetryAfter => "invalid retry-after value",
        })
    }
}

impl core::error::Error for StopReason {}

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
    let facts = Facts::of(request);
    decision(baseline(settings, &facts, true).and_then(|plan| plan.wait(settings, server_delay)))
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
    let facts = Facts::of(request);
    let fields = retry_after.iter().map(|value| value.as_bytes());
    decision(respond(settings, &facts, fields, now_unix))
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
