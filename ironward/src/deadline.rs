//! A time budget measured from the instant it started.

use core::time::Duration;

/// A time budget measured from the instant it started: whether it is spent, and what is
/// left.
///
/// A caller starts one when a request arrives and hands what [`remaining`](Deadline::remaining)
/// says to each call it makes, so that retries and downstream calls share one budget instead
/// of each taking a full timeout. A budget of zero never expires and has no remainder
/// (`None`): that is how go-zero (`rest/handler/timeouthandler.go` passes a request straight
/// through when its timeout is zero) and gRPC (a call with no deadline set) spell "no
/// timeout", and a configuration that leaves the timeout unset should not time everything
/// out at once.
///
/// The budget is spent at `now ≥ start + budget`. Time is `now` on the caller's clock, the
/// same clock `start` was read from.
///
/// # Edge cases
///
/// Nothing here panics, for any `start`, `budget` or `now` up to `Duration::MAX`. Elapsed
/// time is `now − start`, saturating at zero: a deadline holds no state to remember later
/// readings, so a `now` before the start reads as no time elapsed, and
/// [`remaining`](Deadline::remaining) never exceeds the budget. Pass readings of a monotonic
/// clock. A budget that would end past `Duration::MAX` expires when `now` reaches
/// `Duration::MAX`, if `budget` has then elapsed, and otherwise never.
///
/// A deadline is a plain value: `Copy` and `Clone` give an equal one that reads the same.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Deadline;
///
/// let ms = Duration::from_millis;
/// let deadline = Deadline::start(ms(300), ms(1000));
/// assert_eq!(deadline.remaining(ms(1100)), Some(ms(200)));
/// assert!(!deadline.expired(ms(1299)));
/// assert!(deadline.expired(ms(1300)));
/// assert_eq!(deadline.remaining(ms(5000)), Some(Duration::ZERO));
///
/// // A zero budget is no timeout at all.
/// let unbounded = Deadline::start(Duration::ZERO, ms(1000));
/// assert!(!unbounded.expired(Duration::MAX));
/// assert_eq!(unbounded.remaining(ms(5000)), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Deadline {
    start: Duration,
    budget: Duration,
}

impl Deadline {
    /// A deadline of `budget` starting at `now`; a zero budget never expires.
    pub fn start(budget: Duration, now: Duration) -> Self {
        Self { start: now, budget }
    }

    /// Whether the budget is spent at `now`: `now − start ≥ budget`, never for a zero budget.
    #[must_use]
    pub fn expired(&self, now: Duration) -> bool {
        !self.budget.is_zero() && self.elapsed(now) >= self.budget
    }

    /// What is left of the budget at `now`, never negative; zero once it is spent.
    ///
    /// `None` when there is no budget (zero), which has no finite remainder.
    #[must_use]
    pub fn remaining(&self, now: Duration) -> Option<Duration> {
        if self.budget.is_zero() {
            None
        } else {
            Some(self.budget.saturating_sub(self.elapsed(now)))
        }
    }

    /// The budget the deadline started with (zero for none).
    #[must_use]
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Time since the start, zero for a `now` before it.
    fn elapsed(&self, now: Duration) -> Duration {
        now.saturating_sub(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn expires_once_the_budget_is_spent() {
        let deadline = Deadline::start(ms(1000), ms(10_000));
        assert!(!deadline.expired(ms(10_000)));
        assert!(!deadline.expired(ms(11_000) - Duration::from_nanos(1)));
        assert!(deadline.expired(ms(11_000)));
        assert!(deadline.expired(Duration::MAX));
    }

    #[test]
    fn the_remainder_counts_down_to_zero_and_stays_there() {
        let deadline = Deadline::start(ms(1000), ms(10_000));
        assert_eq!(deadline.remaining(ms(10_000)), Some(ms(1000)));
        assert_eq!(deadline.remaining(ms(10_250)), Some(ms(750)));
        assert_eq!(deadline.remaining(ms(11_000)), Some(Duration::ZERO));
        assert_eq!(deadline.remaining(Duration::MAX), Some(Duration::ZERO));
    }

    // go-zero and gRPC: an unset (zero) timeout means no timeout.
    #[test]
    fn a_zero_budget_never_expires() {
        let deadline = Deadline::start(Duration::ZERO, ms(10));
        assert!(!deadline.expired(ms(10)));
        assert!(!deadline.expired(Duration::MAX));
        assert_eq!(deadline.remaining(ms(10)), None);
        assert_eq!(deadline.remaining(Duration::MAX), None);
        assert_eq!(deadline.budget(), Duration::ZERO);
    }

    #[test]
    fn a_now_before_the_start_reads_as_nothing_elapsed() {
        let deadline = Deadline::start(ms(1000), ms(10_000));
        assert!(!deadline.expired(ms(0)));
        assert_eq!(deadline.remaining(ms(0)), Some(ms(1000)));
    }

    #[test]
    fn a_budget_of_a_nanosecond_expires_a_nanosecond_later() {
        let deadline = Deadline::start(Duration::from_nanos(1), ms(5));
        assert!(!deadline.expired(ms(5)));
        assert!(deadline.expired(ms(5) + Duration::from_nanos(1)));
    }

    #[test]
    fn spans_of_duration_max_never_overflow() {
        let forever = Deadline::start(Duration::MAX, Duration::ZERO);
        assert!(!forever.expired(Duration::MAX - Duration::from_nanos(1)));
        assert!(forever.expired(Duration::MAX));
        assert_eq!(forever.remaining(ms(1)), Some(Duration::MAX - ms(1)));

        // Starting at the end of the range, the budget can never elapse.
        let late = Deadline::start(ms(1), Duration::MAX);
        assert!(!late.expired(Duration::MAX));
        assert_eq!(late.remaining(Duration::MAX), Some(ms(1)));
        assert_eq!(late.remaining(Duration::ZERO), Some(ms(1)));
    }
}
