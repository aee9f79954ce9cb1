//! The error a refused call fails with.

use std::fmt;

/// The breaker refused the call: it failed fast, without reaching the inner service.
///
/// A [`BreakerService`](crate::BreakerService) returns it boxed, as tower's middleware return
/// their refusals (`tower::load_shed::error::Overloaded`), so a caller tests the boxed error
/// with `err.is::<BreakerRefused>()`. It is zero-sized, and boxing a zero-sized value does not
/// allocate, so a refusal costs no allocation. The conventional HTTP answer is
/// `503 Service Unavailable`, which go-zero's breaker handler gives.
///
/// Its field is private, so that it can gain one (the ratio that refused the call, say)
/// without breaking a caller; make one with [`BreakerRefused::new`] or `Default`.
///
/// # Examples
///
/// ```
/// use ironward_tower::breaker::BreakerRefused;
///
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(BreakerRefused::new());
/// assert!(err.is::<BreakerRefused>());
/// assert_eq!(err.to_string(), "circuit breaker refused the call");
/// assert_eq!(size_of::<BreakerRefused>(), 0);
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BreakerRefused {
    _p: (),
}

impl BreakerRefused {
    /// The refusal of one call.
    pub const fn new() -> Self {
        Self { _p: () }
    }
}

impl fmt::Debug for BreakerRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BreakerRefused")
    }
}

impl fmt::Display for BreakerRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("circuit breaker refused the call")
    }
}

impl std::error::Error for BreakerRefused {}
