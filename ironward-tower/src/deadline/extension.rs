//! [`RequestDeadline`]: the budget a request carries in its extensions.

use std::time::Duration;

use ironward::Deadline;
use tokio::time::Instant;

/// What is left of a request's time budget, as a handler reads it from the request's
/// extensions.
///
/// [`DeadlineService`](super::DeadlineService) puts one in every request it passes on, so a
/// handler can hand a shorter budget to whatever it calls next (a database query, an
/// outgoing request) instead of each downstream call taking a full timeout of its own, as
/// gRPC propagates deadlines. In axum, take it with the `Extension` extractor:
///
/// ```
/// use axum::Extension;
/// use ironward_tower::RequestDeadline;
///
/// async fn handler(Extension(deadline): Extension<RequestDeadline>) -> String {
///     match deadline.remaining() {
///         Some(left) => format!("{} ms left", left.as_millis()),
///         None => "no deadline".to_owned(),
///     }
/// }
/// # let _: axum::routing::MethodRouter = axum::routing::get(handler);
/// ```
///
/// It is the core [`Deadline`] with the instant it started, read on tokio's clock (the one
/// that enforces it, so `tokio::time::pause` drives both). A zero budget is no deadline:
/// [`remaining`](Self::remaining) is then `None` and it never [expires](Self::expired). It is
/// `Copy`: a copy reads the same deadline.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::RequestDeadline;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let deadline = RequestDeadline::start(Duration::from_secs(2));
/// tokio::time::advance(Duration::from_millis(500)).await;
/// assert_eq!(deadline.remaining(), Some(Duration::from_millis(1500)));
/// assert!(!deadline.expired());
/// tokio::time::advance(Duration::from_secs(2)).await;
/// assert_eq!(deadline.remaining(), Some(Duration::ZERO));
/// assert!(deadline.expired());
/// assert_eq!(RequestDeadline::start(Duration::ZERO).remaining(), None);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestDeadline {
    origin: Instant,
    deadline: Deadline,
}

impl RequestDeadline {
    /// A deadline of `budget` starting now on tokio's clock; a zero budget is none.
    pub fn start(budget: Duration) -> Self {
        Self::start_at(budget, Instant::now())
    }

    /// A deadline of `budget` starting at `origin` on tokio's clock: a reading taken for
    /// something else at the same moment, not taken again.
    pub(super) fn start_at(budget: Duration, origin: Instant) -> Self {
        Self {
            origin,
            deadline: Deadline::start(budget, Duration::ZERO),
        }
    }

    /// What is left of the budget now, zero once it is spent; `None` for no deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline.remaining(self.origin.elapsed())
    }

    /// Whether the budget is spent; never, for no deadline.
    pub fn expired(&self) -> bool {
        self.deadline.expired(self.origin.elapsed())
    }

    /// The budget it started with (zero for none).
    pub fn budget(&self) -> Duration {
        self.deadline.budget()
    }

    /// When it started, on tokio's clock.
    pub(super) fn origin(&self) -> Instant {
        self.origin
    }

    /// The instant it ends, `None` for never (no budget, or past the clock's range).
    pub(super) fn end(&self) -> Option<Instant> {
        if self.budget().is_zero() {
            None
        } else {
            self.origin.checked_add(self.budget())
        }
    }

    /// Whichever of the two ends first.
    pub(super) fn earlier(self, other: Self) -> Self {
        match (self.end(), other.end()) {
            (_, None) => self,
            (None, Some(_)) => other,
            (Some(mine), Some(theirs)) if theirs < mine => other,
            _ => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[tokio::test(start_paused = true)]
    async fn the_earlier_of_two_deadlines_is_the_one_that_ends_first() {
        let long = RequestDeadline::start(s(10));
        tokio::time::advance(s(1)).await;
        let short = RequestDeadline::start(s(3));
        let none = RequestDeadline::start(Duration::ZERO);
        assert_eq!(long.earlier(short), short);
        assert_eq!(short.earlier(long), short);
        assert_eq!(none.earlier(long), long);
        assert_eq!(long.earlier(none), long);
        assert_eq!(none.earlier(none).remaining(), None);
        // Started earlier but longer: ends at 10 s, after the other's 4 s.
        assert_eq!(long.earlier(short).remaining(), Some(s(3)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_budget_past_the_clock_range_never_ends_and_never_panics() {
        let forever = RequestDeadline::start(Duration::MAX);
        let short = RequestDeadline::start(s(1));
        assert_eq!(forever.earlier(short), short);
        tokio::time::advance(s(3600)).await;
        assert!(!forever.expired());
        assert_eq!(forever.remaining(), Some(Duration::MAX - s(3600)));
    }
}
