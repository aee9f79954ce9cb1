//! [`Refusal`]: which piece of a [`Pipeline`](super::Pipeline) refused a call, and why.

use std::error::Error;
use std::fmt;
use std::time::Duration;

use ironward::{CircuitBreaker, ClassicBreaker, ClassicReason, GateReason, SreReason};

use super::super::{GaveUp, HedgeReason, RateReason, TimeoutReason};
use crate::LimiterRefusal;

/// The piece of a [`Pipeline`](super::Pipeline) that refused a call, carrying the numbers
/// it decided by: the `R` of the pipeline's [`CallError`](super::super::CallError)`<E,
/// Refusal>`, so that one error type answers for every piece.
///
/// A `match` on it is what a [`Fallback`](super::super::Fallback)'s rule or a retry's
/// [`when`](super::Builder::when) reads to tell the pieces apart; [`piece`](Self::piece) is
/// the `piece` label the refusing piece counts it under, and
/// [`retry_after`](Self::retry_after) the wait it names, where it names one. `Display` is the
/// refusal's own line, as [`CallError`](super::super::CallError)'s is.
///
/// The enum is `#[non_exhaustive]`: a piece a later release places in the pipeline adds its
/// variant without breaking a `match` written today.
///
/// # Examples
///
/// ```
/// use ironward::GateReason;
/// use ironward_tokio::call::Refusal;
///
/// let full = Refusal::Gate(GateReason { held: 8, limit: 8 });
/// assert_eq!(full.piece(), "gate");
/// assert_eq!(full.retry_after(), None);
/// assert_eq!(full.to_string(), "gate full: 8 held against a limit of 8");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Refusal {
    /// The retry ended with no error of the call's own to return: the time it had ran out
    /// during or before an attempt ([`GaveUp`]).
    Retry(GaveUp),
    /// The hedge's deadline passed before any copy answered, or before the call began.
    Hedge(HedgeReason),
    /// The rate limit refused the attempt: over the rate (beyond the wait it allows), past
    /// the deadline, or its limiter unable to decide.
    RateLimit(RateReason),
    /// The concurrency gate was full.
    Gate(GateReason),
    /// The adaptive limiter refused, at once or after the wait in its queue.
    Limiter(LimiterRefusal),
    /// The breaker refused: the call never ran.
    Breaker(BreakerRefusal),
    /// The timeout cut the attempt, or its deadline had passed before it began.
    Timeout(TimeoutReason),
}

impl Refusal {
    /// The piece that refused, as the `piece` label of `ironward.requests` names it:
    /// `"retry"`, `"hedge"`, `"rate"`, `"gate"`, `"limiter"`, `"breaker"` or `"timeout"`.
    pub fn piece(&self) -> &'static str {
        match self {
            Self::Retry(_) => "retry",
            Self::Hedge(_) => "hedge",
            Self::RateLimit(_) => "rate",
            Self::Gate(_) => "gate",
            Self::Limiter(_) => "limiter",
            Self::Breaker(_) => "breaker",
            Self::Timeout(_) => "timeout",
        }
    }

    /// How long until the refusing piece lets a call through again, where it knows: a
    /// classic breaker refusing open names the rest of its open wait, a rate limit the wait
    /// until room for the call ([`RateReason::retry_after`]: `Duration::MAX` for a cost it
    /// never has room for; for a limiter that could not decide, when to ask again); every
    /// other refusal names none (a gate or a limiter frees room when a call ends, which no
    /// clock tells; a passed deadline does not come back).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::classic::State;
    /// use ironward::ClassicReason;
    /// use ironward_tokio::call::{BreakerRefusal, Refusal};
    ///
    /// let open = ClassicReason { state: State::Open, next: Duration::from_secs(20), failure_rate: 1.0, slow_rate: 0.0 };
    /// let refused = Refusal::Breaker(BreakerRefusal::Classic(open));
    /// assert_eq!(refused.retry_after(), Some(Duration::from_secs(20)));
    /// ```
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Breaker(reason) => reason.retry_after(),
            Self::RateLimit(reason) => Some(reason.retry_after()),
            Self::Retry(_)
            | Self::Hedge(_)
            | Self::Gate(_)
            | Self::Limiter(_)
            | Self::Timeout(_) => None,
        }
    }
}

impl fmt::Display for Refusal {
    /// The refusal's own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Retry(reason) => reason.fmt(f),
            Self::Hedge(reason) => reason.fmt(f),
            Self::RateLimit(reason) => reason.fmt(f),
            Self::Gate(reason) => reason.fmt(f),
            Self::Limiter(reason) => reason.fmt(f),
            Self::Breaker(reason) => reason.fmt(f),
            Self::Timeout(reason) => reason.fmt(f),
        }
    }
}

/// `Display` is the refusal's own line and none of them has a cause, so the source is `None`.
impl Error for Refusal {}

/// Why a breaker of either family refused, as [`Refusal::Breaker`] carries it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::classic::State;
/// use ironward::ClassicReason;
/// use ironward_tokio::call::BreakerRefusal;
///
/// let forced = ClassicReason { state: State::ForcedOpen, next: Duration::MAX, failure_rate: 0.0, slow_rate: 0.0 };
/// let reason = BreakerRefusal::from(forced);
/// assert_eq!(reason.retry_after(), None, "until the policy lifts it");
/// assert_eq!(reason.to_string(), "breaker forced open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum BreakerRefusal {
    /// The SRE breaker's ([`SreReason`]).
    Sre(SreReason),
    /// The classic breaker's ([`ClassicReason`]).
    Classic(ClassicReason),
}

impl BreakerRefusal {
    /// How long until the breaker lets a call through again, as the family's
    /// [`CircuitBreaker::retry_after`] says: the rest of a classic breaker's open wait;
    /// `None` half-open, forced open, or for the SRE breaker (a draw decides each call).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Sre(_) => None,
            Self::Classic(reason) => <ClassicBreaker as CircuitBreaker>::retry_after(reason),
        }
    }
}

impl From<SreReason> for BreakerRefusal {
    fn from(reason: SreReason) -> Self {
        Self::Sre(reason)
    }
}

impl From<ClassicReason> for BreakerRefusal {
    fn from(reason: ClassicReason) -> Self {
        Self::Classic(reason)
    }
}

impl fmt::Display for BreakerRefusal {
    /// The family's own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sre(reason) => reason.fmt(f),
            Self::Classic(reason) => reason.fmt(f),
        }
    }
}

impl Error for BreakerRefusal {}
