//! [`SharedClassicPermit`]: the token a [`SharedClassicBreaker`] hands out, marked with the
//! breaker that made it.

use ironward::ClassicPermit;

#[cfg(doc)]
use super::SharedClassicBreaker;
use crate::owner::Owner;

/// A call the [`SharedClassicBreaker`] let through.
///
/// Exactly one of [`SharedClassicBreaker::pass`] and [`SharedClassicBreaker::fail`] of the
/// breaker that made it settles it, which consumes it; another breaker's hands it back. Not
/// `Clone`, so a call cannot be counted twice; dropping it unsettled leaves the call out of
/// the record, as with the core's [`ClassicPermit`] (a half-open probe's place is given up
/// when its lease runs out).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::CLASSIC;
/// use ironward_tokio::SharedClassicBreaker;
///
/// let breaker = SharedClassicBreaker::new(CLASSIC, Duration::ZERO);
/// let permit = breaker.allow(Duration::ZERO).expect("a fresh breaker is closed");
/// breaker.fail(permit, Duration::from_millis(30));
/// ```
#[must_use = "settle the permit with SharedClassicBreaker::pass or SharedClassicBreaker::fail once the call has finished"]
#[derive(Debug)]
pub struct SharedClassicPermit {
    /// The breaker that made it.
    breaker: u64,
    call: Call,
}

/// What the breaker needs to settle a call.
#[derive(Debug)]
pub(super) enum Call {
    /// Let through while the breaker was healthy, in stage `epoch` at `at` (in nanoseconds):
    /// all a closed stage's permit says, so its success may be counted on a stripe.
    Closed { epoch: u64, at: u64 },
    /// Let through by the exact breaker in any other state: a probe, a forced state's call, a
    /// call while not certainly healthy. Settled under the lock.
    Exact(ClassicPermit),
}

impl SharedClassicPermit {
    /// A permit of the breaker `owner` is, for `call`.
    #[inline]
    pub(super) fn new(owner: &Owner, call: Call) -> Self {
        Self {
            breaker: owner.mark(),
            call,
        }
    }

    /// The mark of the breaker that made it.
    #[inline]
    pub(super) fn breaker(&self) -> u64 {
        self.breaker
    }

    /// The stage and time a call let through closed was let through at, or `None` for the
    /// exact breaker's permit.
    #[inline]
    pub(super) fn closed(&self) -> Option<(u64, u64)> {
        match self.call {
            Call::Closed { epoch, at } => Some((epoch, at)),
            Call::Exact(_) => None,
        }
    }

    /// What its breaker settles.
    #[inline]
    pub(super) fn into_call(self) -> Call {
        self.call
    }
}
