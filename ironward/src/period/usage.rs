//! Where a period stands after an event.

#[cfg(doc)]
use super::Period;

/// Where a [`Period`] stands after an event: under the quota, exactly on it, or past it.
///
/// The event that reaches the quota is still admitted; it is told apart because it is the
/// last one, which is when a caller would warn that the next will be refused. These are
/// go-zero's `Allowed`, `HitQuota` and `OverQuota` (`core/limit/periodlimit.go`).
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Period, Usage};
///
/// let mut limit = Period::new(2, Duration::from_secs(1));
/// let answers: Vec<Usage> = (0..3).map(|_| limit.take(Duration::ZERO)).collect();
/// assert_eq!(answers, [Usage::Under, Usage::Hit, Usage::Over]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Usage {
    /// Admitted, with room left in the period.
    Under,
    /// Admitted, and the quota is now used up: the next event in this period is refused.
    Hit,
    /// Refused: the quota was already used up in this period.
    Over,
}
