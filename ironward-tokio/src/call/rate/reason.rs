//! [`RateReason`]: why a [`RateLimit`](super::RateLimit) refused a call, with the numbers.

use std::fmt;
use std::time::Duration;

use crate::Quota;

/// What stood in a refused call's way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateCause {
    /// No room within what the piece waits (nothing, by default): the rate is spent.
    Over,
    /// Room would come, but only at or after the [`Deadline`](super::Deadline) the call runs
    /// under, which is sooner than the piece's own bound.
    Deadline,
    /// The limiter could not decide (a store that did not answer in time): nothing was
    /// admitted.
    Unavailable,
}

impl RateCause {
    /// The `reason` label of each cause, in order.
    pub const REASONS: &'static [&'static str] = &["over", "deadline", "unavailable"];

    /// Its `reason` label.
    pub const fn label(self) -> &'static str {
        Self::REASONS[self.index()]
    }

    /// Its index in [`REASONS`](Self::REASONS).
    pub(super) const fn index(self) -> usize {
        match self {
            Self::Over => 0,
            Self::Deadline => 1,
            Self::Unavailable => 2,
        }
    }
}

/// Why a [`RateLimit`](super::RateLimit) refused a call, and the numbers that decided it:
/// the limit, the call's cost, how long until there would have been room, and the longest
/// the call could have waited.
///
/// [`retry_after`](Self::retry_after) is the wait to tell a client (as the `Retry-After` of
/// a `429`, or ironward-tower's `Limited::retry_after`): how long until room for the same
/// cost, on the limiter as it stood; `Duration::MAX` for a cost the limit never has room for.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::Quota;
/// use ironward_tokio::call::{RateCause, RateReason};
///
/// let refused = RateReason {
///     cause: RateCause::Over,
///     limit: Quota::sliding(2, Duration::from_secs(60)),
///     cost: 1,
///     wait: Duration::from_secs(45),
///     bound: Duration::from_secs(10),
/// };
/// assert_eq!(refused.retry_after(), Duration::from_secs(45));
/// assert_eq!(
///     refused.to_string(),
///     "rate limited: room for 1 in 45s, later than the 10s it may wait (a sliding window of 2 per 60s)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateReason {
    /// What stood in its way.
    pub cause: RateCause,
    /// The limit it was refused under.
    pub limit: Quota,
    /// The call's cost.
    pub cost: u32,
    /// How long after the refusal there would be room for the cost (`Duration::MAX`:
    /// never); for [`RateCause::Unavailable`], how long to wait before asking again.
    pub wait: Duration,
    /// The longest the call could have waited: the piece's bound (zero when it refuses
    /// rather than waits), or what the deadline left if that was sooner.
    pub bound: Duration,
}

impl RateReason {
    /// How long to wait before trying again: [`wait`](Self::wait).
    #[must_use]
    pub fn retry_after(&self) -> Duration {
        self.wait
    }
}

impl fmt::Display for RateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (cost, wait, bound) = (self.cost, self.wait, self.bound);
        match self.cause {
            RateCause::Unavailable => {
                write!(f, "rate limiter unavailable: ask again in {wait:?}")?;
            }
            _ if wait == Duration::MAX => {
                write!(f, "rate limited: never room for {cost}")?;
            }
            RateCause::Over => write!(
                f,
                "rate limited: room for {cost} in {wait:?}, later than the {bound:?} it may wait"
            )?,
            RateCause::Deadline => write!(
                f,
                "rate limited: room for {cost} in {wait:?}, at or past its deadline {bound:?} away"
            )?,
        }
        write!(f, " ({})", Limit(&self.limit))
    }
}

impl std::error::Error for RateReason {}

/// A [`Quota`] told in a line.
struct Limit<'a>(&'a Quota);

impl fmt::Display for Limit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = self.0.kind();
        match *self.0 {
            Quota::Bucket { rate, burst } => write!(f, "{kind} of {rate}/s up to {burst}"),
            Quota::Sliding {
                quota,
                window: span,
            }
            | Quota::Period {
                quota,
                period: span,
                ..
            } => {
                write!(f, "{kind} of {quota} per {span:?}")
            }
        }
    }
}
