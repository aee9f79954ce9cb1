//! [`BreakerPermit`]: the token a [`SharedBreaker`] hands out, marked with the breaker that
//! made it.

#[cfg(doc)]
use crate::SharedBreaker;
use crate::owner::Owner;

/// A call the [`SharedBreaker`] let through.
///
/// Exactly one of [`SharedBreaker::pass`] and [`SharedBreaker::fail`] of the breaker that made
/// it settles it, which consumes it; another breaker's hands it back. Not `Clone`, so a call
/// cannot be counted twice; dropping it unsettled leaves the call out of the record, as with
/// the core's [`Permit`](ironward::Permit).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::SRE;
/// use ironward_tokio::SharedBreaker;
///
/// let breaker = SharedBreaker::new(SRE, Duration::ZERO);
/// let permit = breaker.allow(Duration::ZERO, 0.5).expect("a fresh breaker refuses nothing");
/// breaker.fail(permit, Duration::from_millis(30));
/// ```
#[must_use = "settle the permit with SharedBreaker::pass or SharedBreaker::fail once the call has finished"]
#[derive(Debug)]
pub struct BreakerPermit {
    /// The breaker that made it.
    breaker: u64,
}

impl BreakerPermit {
    /// A permit of the breaker `owner` is.
    #[inline]
    pub(super) fn new(owner: &Owner) -> Self {
        Self {
            breaker: owner.mark(),
        }
    }

    /// The mark of the breaker that made it.
    #[inline]
    pub(super) fn breaker(&self) -> u64 {
        self.breaker
    }
}
