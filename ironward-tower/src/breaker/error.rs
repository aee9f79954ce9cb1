//! The error a refused call fails with.

use std::fmt;
use std::time::Duration;

use ironward::SreReason;

/// The breaker refused the call: it failed fast, without reaching the inner service.
///
/// A [`BreakerService`](crate::BreakerService) returns it boxed, as tower's middleware return
/// their refusals (`tower::load_shed::error::Overloaded`), so a caller tests the boxed error
/// with `err.is::<BreakerRefused>()` and reads it with `err.downcast_ref::<BreakerRefused>()`.
/// The conventional HTTP answer is `503 Service Unavailable`, which go-zero's breaker handler
/// gives.
///
/// It carries the reason the breaker refused with: for the SRE breaker the [`SreReason`]
/// of [`SreBreaker::check`](ironward::SreBreaker::check), the window the breaker read, the drop
/// fraction and the draw. The reason was computed by the decision anyway, so a refusal costs
/// the one `Box` that makes it a `BoxError` and nothing else; nothing is formatted until it is displayed.
/// `Display` is one line, what refused and then the reason's own line; because the reason is
/// in it, [`source`](std::error::Error::source) is `None`, so that a report walking the chain
/// does not print it twice.
///
/// It also carries how long until the breaker lets a call through again, where the family
/// knows ([`retry_after`](Self::retry_after)): the rest of a classic breaker's open wait,
/// which [`http::response_for`](crate::http::response_for) sends as `Retry-After`; nothing
/// for the SRE breaker, which admits a share of calls at every moment.
///
/// Its fields are private, so that it can gain another without breaking a caller; make one
/// with [`BreakerRefused::new`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SreBreaker, SRE};
/// use ironward_tower::breaker::BreakerRefused;
///
/// let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
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
/// [`SreReason`], so `err.is::<BreakerRefused>()` asks after the default family, and
/// `err.is::<BreakerRefused<ClassicReason>>()` after the classic one:
///
/// ```
/// use std::time::Duration;
/// use ironward::classic::{OpenWait, Record};
/// use ironward::{CLASSIC, Classic, ClassicReason};
/// use ironward_tower::{AnyError, BreakerLayer, BreakerRefused};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let policy = Classic {
///     record: Record::Consecutive { failures: 3 },
///     open: OpenWait::Fixed(Duration::from_secs(30)),
///     ..CLASSIC
/// };
/// let down = service_fn(|_request: ()| async { Err::<(), _>("backend down") });
/// let client = BreakerLayer::new(policy).with_classifier(AnyError).layer(down);
/// for _ in 0..3 {
///     let _ = client.clone().oneshot(()).await;
/// }
/// tokio::time::advance(Duration::from_secs(10)).await;
/// let err = client.oneshot(()).await.unwrap_err();
/// let refused = err.downcast_ref::<BreakerRefused<ClassicReason>>().expect("open");
/// assert_eq!(refused.retry_after(), Some(Duration::from_secs(20)));
/// assert!(!err.is::<BreakerRefused>(), "not the SRE breaker's");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerRefused<R = SreReason> {
    reason: R,
    retry_after: Option<Duration>,
}

impl<R> BreakerRefused<R> {
    /// The refusal of one call, for the reason the core gave, with no known wait.
    ///
    /// The layer makes these; this is for other breakers and for tests of what a caller does
    /// with one.
    pub const fn new(reason: R) -> Self {
        Self {
            reason,
            retry_after: None,
        }
    }

    /// The same refusal, saying the breaker lets a call through again after `wait` (or that
    /// no wait is known, for `None`): what the layer gives it from
    /// [`SharedCircuitBreaker::retry_after`](ironward_tokio::SharedCircuitBreaker::retry_after).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::CLASSIC;
    /// use ironward::classic::{Force, State};
    /// use ironward::{Classic, ClassicBreaker};
    /// use ironward_tower::BreakerRefused;
    ///
    /// let mut breaker = ClassicBreaker::new(Classic { force: Force::Open, ..CLASSIC }, Duration::ZERO);
    /// let reason = breaker.check(Duration::ZERO).unwrap_err();
    /// let refused = BreakerRefused::new(reason).with_retry_after(Some(Duration::from_secs(3)));
    /// assert_eq!(refused.retry_after(), Some(Duration::from_secs(3)));
    /// assert_eq!(refused.reason().state, State::ForcedOpen);
    /// assert_eq!(BreakerRefused::new(reason).retry_after(), None);
    /// ```
    #[must_use]
    pub fn with_retry_after(self, wait: Option<Duration>) -> Self {
        Self {
            retry_after: wait,
            ..self
        }
    }

    /// How long after the refusal the breaker lets a call through again, where its family
    /// knows: for a classic breaker refusing open, the rest of its open wait; `None` for the
    /// SRE breaker (a draw decides each call), a classic one half-open (a probe may report at
    /// any moment) or forced open (until the policy lifts it).
    pub const fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// Why the breaker refused: the numbers [`SreBreaker::check`](ironward::SreBreaker::check)
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
