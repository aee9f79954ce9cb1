//! The words an [`Engine`](super::Engine) is told and answers in: its rules, its own stops,
//! a failed attempt as the caller classified it, the next step, the time an attempt may take
//! and the record of the call.

use core::fmt;
use core::time::Duration;

#[cfg(doc)]
use super::Engine;
use crate::{BACKOFF, Backoff};
#[cfg(doc)]
use crate::{Budget, Jitter};

/// What an [`Engine`] decides by: the attempts and the backoff, the total time budget and the
/// reserve set aside for each attempt.
///
/// A plain record: change it with `Rules { total_budget: Duration::from_secs(10), ..rules }`.
/// Every value is decided without a panic: nothing is validated, and the answers say what
/// each extreme means (an `attempts` of 0 or 1 retries nothing, a reserve that fills the
/// budget stops every retry for the budget, a budget of [`Duration::MAX`] is as good as none).
///
/// # Default
///
/// [`Rules::new`]`(`[`BACKOFF`]`)`: the core's preset backoff (three attempts, 100 ms doubling
/// to 1 s, spread a fifth either way) with no time budget to speak of.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::retry::Rules;
/// use ironward::{BACKOFF, Backoff};
///
/// let rules = Rules {
///     total_budget: Duration::from_secs(10),
///     request_reserve: Duration::from_millis(500),
///     ..Rules::new(Backoff { attempts: 5, ..BACKOFF })
/// };
/// assert_eq!(rules.backoff.attempts, 5);
/// assert_eq!(Rules::default().total_budget, Duration::MAX);
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// The attempts allowed, the first included ([`Backoff::attempts`]), the backoff drawn
    /// before each retry ([`Backoff::delay`], any [`Jitter`]), and the cap on a wait the
    /// failure names ([`Backoff::cap`]).
    pub backoff: Backoff,
    /// The time allowed for the whole call, from the start of the first attempt to the end of
    /// the last; [`Duration::MAX`] for as good as none.
    pub total_budget: Duration,
    /// The time set aside for the next attempt itself when judging whether a wait fits the
    /// budget: an estimate, not a timeout. A retry needs `wait + request_reserve` strictly
    /// less than what is left.
    pub request_reserve: Duration,
}

impl Rules {
    /// The rules of `backoff` alone: no time budget to speak of ([`Duration::MAX`]) and no
    /// reserve.
    pub const fn new(backoff: Backoff) -> Self {
        Self {
            backoff,
            total_budget: Duration::MAX,
            request_reserve: Duration::ZERO,
        }
    }
}

impl Default for Rules {
    /// [`Rules::new`]`(`[`BACKOFF`]`)`.
    fn default() -> Self {
        Self::new(BACKOFF)
    }
}

/// Why an [`Engine`] stopped, in its own words: the stops its rules make, and the caller's
/// plain "not retryable".
///
/// An engine whose caller has stops of its own (as `http_retry::Stop`) records those instead,
/// and turns each of these into one through `From<Cause>`. Its [`Display`](fmt::Display) is a
/// short lower-case phrase; its [`as_str`](Cause::as_str) is the label the HTTP stop it maps
/// to has, so a call ends under the same label whichever loop made it.
///
/// # Examples
///
/// ```
/// use ironward::retry::Cause;
///
/// assert_eq!(Cause::BudgetExhausted.to_string(), "time budget exhausted");
/// assert_eq!(Cause::Throttled.as_str(), "throttled");
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The caller's classifier found the failure final ([`Class::Final`]), or a final
    /// failure of its own.
    NotRetryable,
    /// The failed attempt was the last [`Backoff::attempts`] allows.
    AttemptsExhausted,
    /// What is left of the total time budget cannot hold the wait and the reserve: before a
    /// wait, after waking ([`Engine::attempt`]), or when an attempt ran out of the budget.
    BudgetExhausted,
    /// The failure named a wait longer than the backoff's cap.
    ServerDelayExceedsCap,
    /// The rules allowed a wait, but the shared retry [`Budget`] (gRPC A6 retry throttling)
    /// is at or below half full.
    Throttled,
    /// A circuit breaker refused the next attempt ([`Engine::refused`]).
    Refused,
}

impl Cause {
    /// Every cause, in the order the engine checks them.
    pub const ALL: [Self; 6] = [
        Self::NotRetryable,
        Self::AttemptsExhausted,
        Self::BudgetExhausted,
        Self::ServerDelayExceedsCap,
        Self::Throttled,
        Self::Refused,
    ];

    /// The cause as a fixed `snake_case` label, for a metric label or a log field: the same
    /// label `http_retry::Stop::as_str` gives the stop this cause becomes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::retry::Cause;
    ///
    /// assert_eq!(Cause::ServerDelayExceedsCap.as_str(), "server_delay_exceeds_cap");
    /// ```
    #[must_use]
    pub const fn as_str(&self) -> &'static str {
        match self {
            Self::NotRetryable => "not_retryable",
            Self::AttemptsExhausted => "attempts_exhausted",
            Self::BudgetExhausted => "budget_exhausted",
            Self::ServerDelayExceedsCap => "server_delay_exceeds_cap",
            Self::Throttled => "throttled",
            Self::Refused => "refused",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotRetryable => "failure is not retryable",
            Self::AttemptsExhausted => "retries exhausted",
            Self::BudgetExhausted => "time budget exhausted",
            Self::ServerDelayExceedsCap => "server delay exceeds the cap",
            Self::Throttled => "retry budget exhausted",
            Self::Refused => "circuit breaker refused the request",
        })
    }
}

impl core::error::Error for Cause {}

/// What the caller's classifier made of a failed attempt: whether it is worth retrying, and if
/// not, why not, as a stop `S` the engine records.
///
/// The shared retry budget counts a failure by its kind, and the call retries it by its own
/// facts; the two can differ, which is why there are three answers and not two. A `503` to a
/// `POST` is the kind of failure a retry helps (the budget counts it) that this call still may
/// not repeat (it is not replay-safe): [`Barred`](Class::Barred).
///
/// # Examples
///
/// ```
/// use ironward::retry::{Cause, Class};
///
/// let classify = |transient: bool| -> Class {
///     if transient { Class::Retryable } else { Class::Final(Cause::NotRetryable) }
/// };
/// assert_eq!(classify(false), Class::Final(Cause::NotRetryable));
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class<S = Cause> {
    /// Worth retrying: the retry budget counts it failed, and the engine retries it if its
    /// rules allow.
    Retryable,
    /// Of a kind worth retrying, so the retry budget counts it failed, but not to be repeated
    /// by this call, for this reason: the call stops with it.
    Barred(S),
    /// Not worth retrying (a malformed request is no sign of an overloaded server): the retry
    /// budget is told nothing, and the call stops with this reason.
    Final(S),
}

/// One failed attempt, as the engine reads it: the classifier's verdict, a wait the failure
/// itself names, the clock reading and the draw.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::retry::{Cause, Class, Failure};
///
/// let now = Duration::from_millis(40);
/// // A transient failure whose server asked for two seconds.
/// let failure: Failure = Failure::retryable(now, 0.3).naming(Duration::from_secs(2));
/// assert_eq!(failure.named, Ok(Some(Duration::from_secs(2))));
/// let final_: Failure = Failure::fatal(Cause::NotRetryable, now);
/// assert_eq!(final_.class, Class::Final(Cause::NotRetryable));
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failure<S = Cause> {
    /// Whether the failure is worth retrying, as the caller's classifier decided.
    pub class: Class<S>,
    /// A wait the failure itself names, such as a server's `Retry-After`: `Ok(None)` for none,
    /// `Err(stop)` for one the caller could not read. It is read after the attempts and the
    /// backoff's fit to the budget: the longer of it and the backoff is waited, and one above
    /// the backoff's cap stops ([`Cause::ServerDelayExceedsCap`]).
    pub named: Result<Option<Duration>, S>,
    /// The caller's monotonic clock when the attempt ended, on the engine's epoch.
    pub now: Duration,
    /// A draw from `[0, 1)` for this retry's backoff jitter; NaN and negatives are read as 0,
    /// 1 and above as just below 1.
    pub roll: f64,
}

impl<S> Failure<S> {
    /// A failure worth retrying, at `now`, drawing `roll`, naming no wait.
    pub const fn retryable(now: Duration, roll: f64) -> Self {
        Self {
            class: Class::Retryable,
            named: Ok(None),
            now,
            roll,
        }
    }

    /// A final failure at `now`: the call stops with `stop`, and the retry budget is told
    /// nothing.
    pub const fn fatal(stop: S, now: Duration) -> Self {
        Self {
            class: Class::Final(stop),
            named: Ok(None),
            now,
            roll: 0.0,
        }
    }

    /// This failure naming the wait `wait` (a server's): at least this long before the next
    /// attempt.
    pub fn naming(self, wait: Duration) -> Self {
        Self {
            named: Ok(Some(wait)),
            ..self
        }
    }
}

/// What to do after a failed attempt: wait and try again, or stop.
#[must_use = "a step that is not followed leaves the call neither retried nor ended"]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Next<S = Cause> {
    /// Wait this long, then try again (after [`Engine::attempt`] agrees).
    Wait(Duration),
    /// Do not retry, for this reason: return the last failure.
    Stop(S),
}

/// How long the next attempt may take, and what it means if it takes that long.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::retry::Timeout;
///
/// assert_eq!(Timeout::Budget(Duration::from_secs(2)).duration(), Duration::from_secs(2));
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timeout {
    /// The caller's own per-attempt timeout, shorter than what is left of the budget: an
    /// attempt cut short by it is a failure like any other, retried if the classifier says so
    /// (over HTTP, an `http_retry::Fault::Sent`).
    Attempt(Duration),
    /// What is left of the total budget: an attempt cut short by it ends the call with
    /// [`Cause::BudgetExhausted`] (over HTTP, `StopReason::BudgetExhausted`), so the call
    /// never ends later than its budget.
    Budget(Duration),
}

impl Timeout {
    /// The time an attempt may take when `left` is what is left of the budget and
    /// `per_attempt` the caller's own limit: that limit where it is shorter, else `left`. A
    /// `per_attempt` of zero is none. [`Engine::attempt`] answers by this; a caller that
    /// knows what is left before it makes an engine (the first attempt, at the start, has
    /// the whole budget) may ask it directly.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::retry::Timeout;
    ///
    /// let s = Duration::from_secs;
    /// assert_eq!(Timeout::within(s(5), Some(s(2))), Timeout::Attempt(s(2)));
    /// assert_eq!(Timeout::within(s(5), Some(s(9))), Timeout::Budget(s(5)));
    /// assert_eq!(Timeout::within(s(5), Some(s(0))), Timeout::Budget(s(5)));
    /// assert_eq!(Timeout::within(s(5), None), Timeout::Budget(s(5)));
    /// ```
    #[inline]
    pub fn within(left: Duration, per_attempt: Option<Duration>) -> Self {
        match per_attempt {
            Some(limit) if !limit.is_zero() && limit < left => Self::Attempt(limit),
            _ => Self::Budget(left),
        }
    }

    /// How long the attempt may take.
    #[must_use]
    #[inline]
    pub fn duration(&self) -> Duration {
        match *self {
            Self::Attempt(d) | Self::Budget(d) => d,
        }
    }
}

/// How a call went: the attempts made, the waits between them, and why it stopped.
///
/// The one record of a retried call: [`Engine::retried`] makes it, with the engine's stops
/// `S` (its own [`Cause`] unless its caller has its own); `http_retry::Retried` is this record
/// with HTTP's stops.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::retry::{Cause, Retried};
///
/// let recovered: Retried = Retried { attempts: 2, waited: Duration::from_millis(200), stop: None };
/// assert_eq!((recovered.retries(), recovered.outcome()), (1, "success"));
/// let spent = Retried { stop: Some(Cause::AttemptsExhausted), ..recovered };
/// assert!(!spent.is_success());
/// assert_eq!(spent.outcome(), "attempts_exhausted");
/// ```
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Retried<S = Cause> {
    /// Attempts made, the first included; 0 when a breaker refused the first.
    pub attempts: u32,
    /// The waits the decisions asked for, added up: the time spent asleep between attempts,
    /// as planned (a loaded runtime may oversleep it slightly). Saturates.
    pub waited: Duration,
    /// Why the call stopped; `None` while it runs and after a success.
    pub stop: Option<S>,
}

impl<S> Default for Retried<S> {
    /// No attempt yet, nothing waited, no stop.
    fn default() -> Self {
        Self {
            attempts: 0,
            waited: Duration::ZERO,
            stop: None,
        }
    }
}

impl<S> Retried<S> {
    /// The retries made: the attempts after the first.
    #[must_use]
    pub fn retries(&self) -> u32 {
        self.attempts.saturating_sub(1)
    }

    /// Whether the call ended for want of a reason to retry: the last attempt succeeded.
    #[must_use]
    pub fn is_success(&self) -> bool {
        self.stop.is_none()
    }
}

impl Retried<Cause> {
    /// How the call ended, as a fixed `snake_case` label: `success`, or its cause's
    /// [`Cause::as_str`]. A run still going reads as `success`: it has no stop yet.
    #[must_use]
    pub const fn outcome(&self) -> &'static str {
        match &self.stop {
            None => "success",
            Some(cause) => cause.as_str(),
        }
    }
}
