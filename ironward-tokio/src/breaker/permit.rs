//! [`SharedSrePermit`]: the token a [`SharedSreBreaker`] hands out, marked with the breaker that
//! made it.

#[cfg(doc)]
use crate::SharedSreBreaker;
use crate::owner::Owner;

/// A call the [`SharedSreBreaker`] let through.
///
/// Exactly one of [`SharedSreBreaker::pass`] and [`SharedSreBreaker::fail`] of the breaker that made
/// it settles it, which consumes it; another breaker's hands it back. Not `Clone`, so a call
/// cannot be counted twice; dropping it unsettled leaves the call out of the record, as with
/// the core's [`SrePermit`](ironward::SrePermit).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::SRE;
/// use ironward_tokio::SharedSreBreaker;
///
/// let breaker = SharedSreBreaker::new(SRE, Duration::ZERO);
/// let permit = breaker.allow(Duration::ZERO, 0.5).expect("a fresh breaker refuses nothing");
/// breaker.fail(permit, Duration::from_millis(30));
/// ```
#[must_use = "settle the permit with SharedSreBreaker::pass or SharedSreBreaker::fail once the call has finished"]
#[derive(Debug)]
pub struct SharedSrePermit {
    /// The breaker that made it.
    breaker: u64,
}

impl SharedSrePermit {
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
