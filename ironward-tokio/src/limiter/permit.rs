//! A call a [`SharedLimiter`](super::SharedLimiter) let in, to be settled.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use ironward::{Criticality, Grant, Settle};

use super::Inner;
#[cfg(doc)]
use {super::SharedLimiter, ironward::Limiter};

/// A call a [`SharedLimiter`] let in: settle it with how the call ended.
///
/// [`settle`](Self::settle) consumes it, once. Dropped unsettled (the call's future was
/// cancelled, a panic unwound), it settles as [`Settle::Ignored`]: the call leaves flight and
/// its latency is not sampled. Either way the room it held goes to the first call in the
/// queue the core would now admit.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::{ADAPTIVE, Criticality, Settle};
/// use ironward_tokio::{Admission, Clock, SharedLimiter};
///
/// let (clock, hand) = Clock::manual(Duration::ZERO);
/// let limiter = SharedLimiter::new(ADAPTIVE, clock);
/// let Admission::Admitted(permit) = limiter.admit(Criticality::Sheddable) else { panic!() };
/// assert_eq!(permit.criticality(), Criticality::Sheddable);
/// assert_eq!(limiter.flying(), 1);
/// hand.advance(Duration::from_millis(30));
/// permit.settle(Settle::Dropped);
/// assert_eq!(limiter.flying(), 0);
/// ```
#[must_use = "settle the permit once the call has finished; dropped, it settles as ignored and the call's latency is lost"]
pub struct LimiterPermit {
    pub(super) grant: Option<Grant>,
    pub(super) inner: Arc<Inner>,
}

impl LimiterPermit {
    /// The call ended as `settle` says: it leaves flight now and, unless ignored, its
    /// latency (from when it was let in to now, on the limiter's clock) is sampled
    /// ([`Limiter::settle`]).
    pub fn settle(self, settle: Settle) {
        let now = self.inner.clock.now();
        self.settle_at(settle, now);
    }

    /// [`settle`](Self::settle) with the reading `now` of the limiter's clock the caller
    /// already took, for a stack whose pieces share one reading as a call ends.
    pub fn settle_at(mut self, settle: Settle, now: Duration) {
        if let Some(grant) = self.grant.take() {
            self.inner.settle(grant, settle, now);
        }
    }

    /// The class the call was let in as.
    pub fn criticality(&self) -> Criticality {
        self.grant
            .as_ref()
            .map_or(Criticality::Critical, Grant::criticality)
    }

    /// When the call was let in, on the limiter's clock: the start of its latency.
    pub fn start(&self) -> Duration {
        self.grant.as_ref().map_or(Duration::ZERO, Grant::start)
    }
}

impl Drop for LimiterPermit {
    /// Settles an unsettled call as ignored: out of flight, not sampled.
    fn drop(&mut self) {
        if let Some(grant) = self.grant.take() {
            self.inner
                .settle(grant, Settle::Ignored, self.inner.clock.now());
        }
    }
}

impl fmt::Debug for LimiterPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LimiterPermit")
            .field("grant", &self.grant)
            .finish_non_exhaustive()
    }
}
