//! One failed attempt as [`decide`](super::decide) reads it, and what it answers.

use core::fmt;
use core::time::Duration;

#[cfg(doc)]
use super::{Settings, retryable_status};

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
/// One variant per rule of the [module's rule order](super#rule-order). Its [`Display`] is a
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
    /// Every reason, in the [rule order](super#rule-order)'s order.
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
