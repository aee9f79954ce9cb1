//! What a call the limiter let in carries to its settle, and how it ended.

use core::time::Duration;

#[cfg(doc)]
use super::{Adaptive, Limiter};
use crate::criticality::Criticality;
use crate::internal::owner::Mark;

/// A call the [`Limiter`] let in: when, how many were in flight with it, and its class.
///
/// [`Limiter::settle`] of the limiter that made it consumes it; another limiter's changes
/// nothing and hands it back. Not `Clone`, so a call cannot leave flight twice; dropping a
/// grant unsettled leaves the call counted in flight.
///
/// A grant from [`Limiter::acquire_bypass`] is counted nowhere ([`bypassed`](Grant::bypassed)):
/// its settle only checks that it is this limiter's.
#[must_use = "settle the grant with Limiter::settle once the call has finished, or it stays counted in flight"]
#[derive(Debug, PartialEq, Eq)]
pub struct Grant {
    pub(super) start: u64,
    pub(super) flying: u32,
    /// The class the call asked as; `None` for a call let in by
    /// [`Limiter::acquire_bypass`], counted in no class nor in flight and not sampled. (One
    /// byte, as a bare class is: a grant is returned and settled by value on every call.)
    pub(super) class: Option<Criticality>,
    pub(super) limiter: Mark,
}

impl Grant {
    /// When the call was let in, on the limiter's clock.
    #[must_use]
    pub fn start(&self) -> Duration {
        Duration::from_nanos(self.start)
    }

    /// The calls in flight once this one was let in, itself included: what the algorithm
    /// weighs the call's latency against. For a [bypassed](Grant::bypassed) call, the calls
    /// in flight when it was let in, which it is not one of.
    #[must_use]
    pub fn flying(&self) -> u32 {
        self.flying
    }

    /// The class the call asked as; [`Criticality::Critical`], the default, for a
    /// [bypassed](Grant::bypassed) call, which asked as none.
    #[must_use]
    pub fn criticality(&self) -> Criticality {
        self.class.unwrap_or_default()
    }

    /// Whether the call was let in by [`Limiter::acquire_bypass`]: counted in no class and
    /// not in flight, and its latency not sampled.
    #[must_use]
    pub fn bypassed(&self) -> bool {
        self.class.is_none()
    }
}

/// How a call the [`Limiter`] let in ended, as [`Limiter::settle`] is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settle {
    /// The call finished: its latency is a sample of the backend's.
    Success,
    /// The backend shed the call or it timed out: a sign of overload (Netflix's
    /// `onDropped`). Its latency is sampled as a success's is, and the window it falls in
    /// is marked dropped; what that does to the limit is the algorithm's, as in Netflix's:
    ///
    /// - [`Aimd`](crate::limit::Aimd) multiplies the limit by its `backoff` (`AIMDLimit`);
    /// - [`Vegas`](crate::limit::Vegas) cuts it by its `decrease` (`VegasLimit`), unless the
    ///   window only sets the latency with no queue (the first, one faster than any since
    ///   the last probe, or the probe's own), which leaves the limit where it is;
    /// - [`Gradient2`](crate::limit::Gradient2) ignores the drop (`Gradient2Limit` ignores
    ///   `didDrop`): the window's latency moves the limit as any other's does.
    ///
    /// Whatever the algorithm, a limiter's probe ([`Adaptive::probe`]) whose window holds a
    /// drop takes no baseline from it.
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm, GRADIENT2, Gradient2};
    /// use ironward::{ADAPTIVE, Adaptive, Limiter, Settle};
    ///
    /// let ms = Duration::from_millis;
    /// let after_a_drop = |algorithm| {
    ///     let mut limiter = Limiter::new(Adaptive { algorithm, ..ADAPTIVE }, ms(0));
    ///     let grants: Vec<_> = (0..20).map(|_| limiter.acquire(ms(0)).unwrap()).collect();
    ///     for (i, grant) in grants.into_iter().enumerate() {
    ///         // The last, past the window's second, closes it with all 20 in it.
    ///         let done = if i == 19 { ms(1_010) } else { ms(10) };
    ///         limiter.settle(grant, Settle::Dropped, done);
    ///     }
    ///     limiter.limit()
    /// };
    /// let aimd = Aimd { min: 1, ..AIMD };
    /// assert_eq!(after_a_drop(Algorithm::Aimd(aimd)), 18, "20 × 0.9");
    /// let gradient2 = Gradient2 { min: 1, ..GRADIENT2 };
    /// assert_eq!(after_a_drop(Algorithm::Gradient2(gradient2)), 20, "no lower than before");
    /// ```
    Dropped,
    /// The call failed in a way that says nothing of load (a bad request, a cancellation):
    /// it leaves flight and is not sampled (Netflix's `onIgnore`).
    Ignored,
}
