//! Why a quota refused: the count against it, for a period and for a sliding log alike.

use core::fmt;
use core::time::Duration;

/// Why a [`Sliding`](crate::Sliding) log or a [`Period`](crate::Period) refused an event:
/// the count against the quota, from [`Sliding::check`](crate::Sliding::check) or
/// [`Period::check`](crate::Period::check).
///
/// A refusal of one event always has `count ≥ quota` (of a cost, `count + cost > quota`). A
/// sliding log counts the events inside its window, the refused one left out, so its count is
/// the quota; a period counts every event, the refused one included, as go-zero's
/// `core/limit/periodlimit.go` does, so its count is past the quota.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Period, Usage};
///
/// let secs = Duration::from_secs;
/// let mut limit = Period::new(2, secs(60));
/// assert_eq!(limit.check(secs(0)), Ok(Usage::Under));
/// assert_eq!(limit.check(secs(1)), Ok(Usage::Hit));
/// let reason = limit.check(secs(15)).expect_err("over the quota");
/// assert!(reason.count >= reason.quota);
/// assert_eq!(reason.to_string(), "quota used up: 3 counted against 2, room again in 45s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuotaReason {
    /// The events counted (see above), saturating at `u32::MAX`.
    pub count: u32,
    /// The most events the window or period admits.
    pub quota: u32,
    /// How long until there is room again: what `next` would answer at the refusal.
    /// `Duration::MAX` for a sliding log with a quota of 0, which never has room.
    pub next: Duration,
}

impl fmt::Display for QuotaReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "quota used up: {} counted against {}, ",
            self.count, self.quota
        )?;
        match self.next {
            Duration::MAX => f.write_str("never room again"),
            next => write!(f, "room again in {next:?}"),
        }
    }
}

impl core::error::Error for QuotaReason {}

#[cfg(test)]
mod tests {
    extern crate std;

    use std::string::ToString;

    use super::*;

    #[test]
    fn a_quota_that_never_has_room_says_so() {
        let reason = QuotaReason {
            count: 0,
            quota: 0,
            next: Duration::MAX,
        };
        assert_eq!(
            reason.to_string(),
            "quota used up: 0 counted against 0, never room again"
        );
    }
}
