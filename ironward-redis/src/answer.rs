//! [`Answer`]: what a limiter decided, when it would next admit, and who decided.

use std::time::Duration;

use ironward::Usage;

use crate::Source;
use crate::meter::Admits;

/// What a fleet-wide limiter answered to a `take`: the in-memory type's answer, its
/// `next()` right after, and which store decided.
///
/// `value` is what the `ironward` core type's `take` returns: a [`Usage`] for a
/// [`Period`](crate::Period), a `bool` for a [`Bucket`](crate::Bucket) or a
/// [`Sliding`](crate::Sliding) log. `next` is what the core type's `next(now)` returns
/// after that `take`, at the same `now`, so a refusal says how long to wait without a
/// second round trip, as governor's `NotUntil` does; it is what `Retry-After` carries. For
/// the cost forms (`take_n`) it is the core's `next_n(now, cost)`: when a request of the
/// same cost would pass.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::Usage;
/// use ironward_redis::{Answer, Source};
///
/// let hit = Answer { value: Usage::Hit, next: Duration::from_secs(3), source: Source::Redis };
/// assert!(hit.admitted());
/// let refused = Answer { value: false, next: Duration::from_millis(250), source: Source::Local };
/// assert!(!refused.admitted());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Answer<T> {
    /// The core type's answer: [`Usage`] or `bool`.
    pub value: T,
    /// The core type's `next(now)` after this take: for a period the time until it ends
    /// (even when admitted), for a bucket or a log zero while there is room, else the wait
    /// for it; `Duration::MAX` for never. After a `take_n`, `next_n(now, cost)`: zero while
    /// a request of that cost would pass.
    pub next: Duration,
    /// Which store decided: the fleet's quota in Redis, or this process's fallback.
    pub source: Source,
}

impl Answer<Usage> {
    /// Whether the event was admitted: [`Usage::Under`] or [`Usage::Hit`].
    pub fn admitted(&self) -> bool {
        self.value.admits()
    }
}

impl Answer<bool> {
    /// Whether the event was admitted.
    pub fn admitted(&self) -> bool {
        self.value.admits()
    }
}
