//! The error a refused call fails with.

use std::fmt;

use ironward::BreakerReason;

/// The breaker refused the call: it failed fast, without reaching the inner service.
///
/// A [`BreakerService`](crate::BreakerService) returns it boxed, as tower's middleware return
/// their refusals (`tower::load_shed::error::Overloaded`), so a caller tests the boxed error
/// with `err.is::<BreakerRefused>()` and reads it with `err.downcast_ref::<BreakerRefused>()`.
/// The conventional HTTP answer is `503 Service Unavailable`, which go-zero's breaker handler
/// gives.
///
/// It carries the reason the breaker refused with: for the SRE breaker the [`BreakerReason`]
/// of [`Breaker::check`](ironward::Breaker::check), the window the breaker read, the drop
/// fraction and the draw. The reason was computed by the decision anyway, so a refusal costs
/// the one `Box` that makes it a `BoxError` and nothing else; nothing is formatted until it is displayed.
/// `Display` is one line, what refused and then the reason's own line; because the reason is
/// in it, [`source`](std::error::Error::source) is `None`, so that a report walking the chain
/// does not print it twice.
///
/// Its field is private, so that it can gain another without breaking a caller; make one
/// with [`BreakerRefused::new`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Breaker, SRE};
/// use ironward_tower::breaker::BreakerRefused;
///
/// let mut breaker = Breaker::new(SRE, Duration::ZERO);
/// for _ in 0..100 {
///     let permit = breaker.allow(Duration::ZERO, 0.99).expect("over the drop fraction");
///     breaker.fail(permit, Duration::ZERO);
/// }
/// let reason = breaker.check(Duration::ZERO, 0.25).expect_err("under the drop fraction");
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(BreakerRefused::new(reason));
/// assert!(err.is::<BreakerRefused>());
/// assert_eq!(err.downcast_ref::<BreakerRefused>().unwrap().reason().total, 100);
/// assert_eq!(
///     err.to_string(),
///     "circuit breaker refused the call: breaker dropped 94.1% of calls (roll 0.25): \
///      0 accepts in 100 calls, failing 1 bucket, working 0",
/// );
/// ```
///
/// `R` is the reason of the breaker family that refused; it defaults to the SRE breaker's
/// [`BreakerReason`], so `err.is::<BreakerRefused>()` asks after the default family.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerRefused<R = BreakerReason> {
    reason: R,
}

impl<R> BreakerRefused<R> {
    /// The refusal of one call, for the reason the core gave.
    ///
    /// The layer makes these; this is for other breakers and for tests of what a caller does
    /// with one.
    pub const fn new(reason: R) -> Self {
        Self { reason }
    }

    /// Why the breaker refused: the numbers [`Breaker::check`](ironward::Breaker::check)
    /// decided by.
    pub const fn reason(&self) -> &R {
        &self.reason
    }
}

impl<R: fmt::Display> fmt::Display for BreakerRefused<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "circuit breaker refused the call: {}", self.reason)
    }
}

impl<R: fmt::Debug + fmt::Display> std::error::Error for BreakerRefused<R> {}
