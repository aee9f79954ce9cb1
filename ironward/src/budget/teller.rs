//! [`Teller`]: the retry budget a retry run or a gRPC plan reports to, whichever kind the
//! caller holds.

use crate::Budget;
#[cfg(target_has_atomic = "64")]
use crate::SharedBudget;

/// The retry budget a retry run or a gRPC plan reports to, if any: one the caller holds by
/// `&mut` (behind its own lock, if shared), or a [`SharedBudget`] shared by `&` across
/// threads. Both decide by the same A6 rule; this only lets one body serve both, for
/// `http_retry::Run` and for `grpc`'s plans alike.
pub(crate) enum Teller<'a> {
    /// No budget (no `retryThrottling`): nothing is counted and nothing throttled.
    Nobody,
    /// A budget the caller holds by `&mut`.
    Own(&'a mut Budget),
    /// A budget shared by `&` across threads.
    #[cfg(target_has_atomic = "64")]
    Shared(&'a SharedBudget),
}

impl<'a> Teller<'a> {
    #[inline]
    pub(crate) fn own(budget: Option<&'a mut Budget>) -> Self {
        budget.map_or(Self::Nobody, Self::Own)
    }

    #[cfg(target_has_atomic = "64")]
    #[inline]
    pub(crate) fn shared(budget: Option<&'a SharedBudget>) -> Self {
        budget.map_or(Self::Nobody, Self::Shared)
    }

    /// A call succeeded: `tokenRatio` back.
    #[inline]
    pub(crate) fn pass(&mut self) {
        match self {
            Self::Nobody => {}
            Self::Own(budget) => budget.pass(),
            #[cfg(target_has_atomic = "64")]
            Self::Shared(budget) => budget.pass(),
        }
    }

    /// An attempt failed in a way A6 counts: one token goes.
    #[inline]
    pub(crate) fn fail(&mut self) {
        match self {
            Self::Nobody => {}
            Self::Own(budget) => budget.fail(),
            #[cfg(target_has_atomic = "64")]
            Self::Shared(budget) => budget.fail(),
        }
    }

    /// Whether a retry or a hedge may go: the budget, if any, is above half.
    #[inline]
    pub(crate) fn can_retry(&self) -> bool {
        match self {
            Self::Nobody => true,
            Self::Own(budget) => budget.can_retry(),
            #[cfg(target_has_atomic = "64")]
            Self::Shared(budget) => budget.can_retry(),
        }
    }
}
