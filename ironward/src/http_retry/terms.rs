//! The words a [`Run`](super::Run) is told and answers in: the call, each attempt's fault
//! and reading, the step, the stop and the record (the retry engine's, with HTTP's stops).

use core::fmt;
use core::time::Duration;

#[cfg(doc)]
use super::Run;
use super::StopReason;
#[cfg(doc)]
use crate::Budget;
#[cfg(doc)]
use crate::backoff::sample_ppm;
use crate::retry::Cause;

/// What a [`Run`] knows of the request, fixed for the whole call.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::{Call, vouches};
///
/// // A POST carrying an idempotency key the server honours.
/// let key = Some(&b"order-7"[..]);
/// let call = Call { method: "POST", body_replayable: true, replay_safe: vouches(key) };
/// assert!(call.replay_safe);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Call<'a> {
    /// The request method, case-sensitive (see [`Attempt::method`](super::Attempt::method)).
    pub method: &'a str,
    /// Whether the body can be sent again byte for byte; no body counts as replayable.
    pub body_replayable: bool,
    /// Whether the caller vouches that the server deduplicates the request, which lets a
    /// method that is not idempotent be retried; [`vouches`] is the rule for an idempotency
    /// key.
    pub replay_safe: bool,
}

/// Whether an idempotency key vouches for replay: the request carries one and it is not
/// empty (nor only spaces and tabs, which a header parser trims to nothing).
///
/// The one replay-safety rule every client here applies to a header such as
/// `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header): an empty key names no
/// operation, so the server cannot deduplicate by it. A key is only worth this when the server
/// honours it: one the client merely generates protects nothing.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::vouches;
///
/// assert!(vouches(Some(b"8e03978e-40d5-43e8-bc93-6894a57f9324")));
/// assert!(!vouches(Some(b"")));
/// assert!(!vouches(Some(b" \t")));
/// assert!(!vouches(None));
/// ```
#[must_use]
pub fn vouches(idempotency_key: Option<&[u8]>) -> bool {
    idempotency_key.is_some_and(|key| key.iter().any(|&b| b != b' ' && b != b'\t'))
}

/// How an attempt failed without a response, as the client that made it classifies the error.
///
/// A connection that was never made (refused, no route, a failed name lookup) sent nothing, so
/// sending the request again cannot repeat its effect, whatever its method: that is
/// [`Fault::Unsent`]. A connection that broke after the request was written (reset, closed
/// before the response, a client timeout) may have delivered it, so only a request that is
/// safe to replay may go again: [`Fault::Sent`]. Anything else (a request that could not be
/// built, a redirect loop, another layer's error) is [`Fault::Final`]: sending it again would
/// fail the same way.
///
/// A retried fault is decided like a `503 Service Unavailable` without `Retry-After`: the
/// attempt count, the backoff and the time budget apply as they do to responses.
///
/// # Examples
///
/// ```
/// use std::io;
/// use ironward::http_retry::Fault;
///
/// let classify = |err: &io::Error| match err.kind() {
///     io::ErrorKind::ConnectionRefused => Fault::Unsent,
///     io::ErrorKind::ConnectionReset | io::ErrorKind::TimedOut => Fault::Sent,
///     _ => Fault::Final,
/// };
/// assert_eq!(classify(&io::ErrorKind::ConnectionRefused.into()), Fault::Unsent);
/// assert_eq!(classify(&io::ErrorKind::PermissionDenied.into()), Fault::Final);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// Not worth retrying: the call ends with [`StopReason::NotRetryable`].
    Final,
    /// A transient failure after the request may have reached the server: retried only when
    /// the method is idempotent or the call is replay-safe.
    Sent,
    /// The request never reached the server: retried whatever its method.
    Unsent,
}

/// What the caller's sources read when an attempt ended: the monotonic clock, the wall clock
/// and a fresh draw.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::Reading;
///
/// let reading = Reading {
///     now: Duration::from_millis(350),
///     unix: Duration::from_secs(1_700_000_000),
///     roll: 0.5,
/// };
/// assert_eq!(reading.roll, 0.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The monotonic clock, on the same epoch as the `now` the [`Run`] started at.
    pub now: Duration,
    /// The wall clock as time since the Unix epoch, read only to turn an HTTP-date
    /// `Retry-After` into a delay (clock skew shifts that delay).
    pub unix: Duration,
    /// A draw from `[0, 1)` for this retry's jitter, read through [`sample_ppm`]; 1 or more
    /// is no jitter.
    pub roll: f64,
}

/// What to do after an attempt: the call is done, wait and send it again, or stop.
#[must_use = "a step that is not followed leaves the call neither retried nor ended"]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// The attempt succeeded (a status below 400): return its response.
    Done,
    /// Wait this long, then send the request again (after [`Run::attempt`] agrees).
    Wait(Duration),
    /// Do not retry, for this reason: return the last response or error.
    Stop(Stop),
}

/// Why a retry run stopped: the decision of the [rule order](super#rule-order), or one of the
/// guards a client may consult around it.
///
/// Its [`Display`](fmt::Display) is a short lower-case phrase.
///
/// # Examples
///
/// ```
/// use ironward::http_retry::{Stop, StopReason};
///
/// let stop = Stop::from(StopReason::InvalidRetryAfter);
/// assert_eq!(stop, Stop::Decided(StopReason::InvalidRetryAfter));
/// assert_eq!(stop.to_string(), "invalid retry-after value");
/// assert_eq!(Stop::Throttled.to_string(), "retry budget exhausted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stop {
    /// The rules said to stop: the status is final, the request is not safe to replay, the
    /// retries or the time budget are spent (during a wait or an attempt too), or the server's
    /// `Retry-After` is malformed, duplicated or above the cap.
    Decided(StopReason),
    /// The rules said to wait, but the shared retry [`Budget`] (gRPC A6 retry throttling) is
    /// at or below half full: too many recent attempts have failed for a retry to help.
    Throttled,
    /// A circuit breaker consulted before the next attempt refused it.
    Refused,
}

impl Stop {
    /// Every stop: each [`StopReason`] decided (in [`StopReason::ALL`]'s order), then
    /// [`Throttled`](Self::Throttled) and [`Refused`](Self::Refused).
    ///
    /// For a client that registers one handle per stop up front, as the retrying clients in
    /// this workspace register one metrics counter per call outcome.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::{Stop, StopReason};
    ///
    /// assert_eq!(Stop::ALL.len(), StopReason::ALL.len() + 2);
    /// assert_eq!(Stop::ALL.last(), Some(&Stop::Refused));
    /// ```
    pub const ALL: [Self; 10] = [
        Self::Decided(StopReason::InvalidSettings),
        Self::Decided(StopReason::InvalidInput),
        Self::Decided(StopReason::NotRetryable),
        Self::Decided(StopReason::NotReplayable),
        Self::Decided(StopReason::AttemptsExhausted),
        Self::Decided(StopReason::BudgetExhausted),
        Self::Decided(StopReason::ServerDelayExceedsCap),
        Self::Decided(StopReason::InvalidRetryAfter),
        Self::Throttled,
        Self::Refused,
    ];

    /// The stop as a fixed `snake_case` label, for a metric label or a structured log field:
    /// a decided stop is its reason's [`StopReason::as_str`], the two guards are `throttled`
    /// (the retry budget) and `refused` (the circuit breaker).
    ///
    /// Every variant has its own label, never reworded; the retrying clients in this
    /// workspace label a call's end with it (through [`Retried::outcome`]) so that they count
    /// alike, and no label is spelled in a client.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::http_retry::{Stop, StopReason};
    ///
    /// assert_eq!(Stop::Decided(StopReason::NotReplayable).as_str(), "not_replayable");
    /// assert_eq!(Stop::Throttled.as_str(), "throttled");
    /// assert_eq!(Stop::Refused.as_str(), "refused");
    /// ```
    #[must_use]
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::Decided(reason) => reason.as_str(),
            Self::Throttled => "throttled",
            Self::Refused => "refused",
        }
    }
}

impl From<StopReason> for Stop {
    fn from(reason: StopReason) -> Self {
        Self::Decided(reason)
    }
}

/// The retry engine's own stops in HTTP's words, so that a [`Run`] records what its engine
/// decides as HTTP's rule order names it: each keeps its label ([`Stop::as_str`] is
/// [`Cause::as_str`]).
///
/// # Examples
///
/// ```
/// use ironward::http_retry::{Stop, StopReason};
/// use ironward::retry::Cause;
///
/// let stop = Stop::from(Cause::ServerDelayExceedsCap);
/// assert_eq!(stop, Stop::Decided(StopReason::ServerDelayExceedsCap));
/// assert_eq!(Stop::from(Cause::Throttled), Stop::Throttled);
/// ```
impl From<Cause> for Stop {
    fn from(cause: Cause) -> Self {
        match cause {
            Cause::NotRetryable => Self::Decided(StopReason::NotRetryable),
            Cause::AttemptsExhausted => Self::Decided(StopReason::AttemptsExhausted),
            Cause::BudgetExhausted => Self::Decided(StopReason::BudgetExhausted),
            Cause::ServerDelayExceedsCap => Self::Decided(StopReason::ServerDelayExceedsCap),
            Cause::Throttled => Self::Throttled,
            Cause::Refused => Self::Refused,
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Decided(reason) => reason.fmt(f),
            Self::Throttled => f.write_str("retry budget exhausted"),
            Self::Refused => f.write_str("circuit breaker refused the request"),
        }
    }
}

impl core::error::Error for Stop {}

/// How a call went: the attempts sent, the waits between them, and why it stopped.
///
/// The one record of a retried call: [`Run::retried`] makes it, and the clients in this
/// workspace leave it on the response they return (or inside their error). It is the retry
/// engine's record, [`retry::Retried`](crate::retry::Retried), with HTTP's [`Stop`]s: its
/// fields are `attempts` (attempts sent, the first included; 0 when a breaker refused the
/// first), `waited` (the waits decided, added up, saturating) and `stop` (why the run stopped;
/// `None` while it runs and after a success).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::http_retry::{Retried, Stop, StopReason};
///
/// // A 503, a wait of 200 ms, then a 200: two attempts, and no reason to stop.
/// let recovered = Retried { attempts: 2, waited: Duration::from_millis(200), stop: None };
/// assert_eq!(recovered.retries(), 1);
/// assert!(recovered.is_success());
///
/// let exhausted = Retried {
///     attempts: 4,
///     waited: Duration::from_millis(1400),
///     stop: Some(Stop::Decided(StopReason::AttemptsExhausted)),
/// };
/// assert!(!exhausted.is_success());
/// ```
pub type Retried = crate::retry::Retried<Stop>;

impl crate::retry::Retried<Stop> {
    /// How the call ended, as a fixed `snake_case` label: `success`, or its stop's
    /// [`Stop::as_str`].
    ///
    /// The one label both retrying clients in this workspace give a finished call (their
    /// `ironward.retry.calls` counter's `outcome`), so a call ends under the same label
    /// whichever client made it. A run still going reads as `success`: it has no stop yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::http_retry::{Retried, Stop, StopReason};
    ///
    /// let recovered = Retried { attempts: 3, waited: Duration::from_millis(600), stop: None };
    /// assert_eq!(recovered.outcome(), "success");
    /// let exhausted = Retried {
    ///     stop: Some(Stop::Decided(StopReason::AttemptsExhausted)),
    ///     ..recovered
    /// };
    /// assert_eq!(exhausted.outcome(), "attempts_exhausted");
    /// ```
    #[must_use]
    pub const fn outcome(&self) -> &'static str {
        match &self.stop {
            None => "success",
            Some(stop) => stop.as_str(),
        }
    }
}
