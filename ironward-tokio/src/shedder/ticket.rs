//! [`ShedTicket`]: the token a [`SharedShedder`] hands out, marked with the shedder that made
//! it.

use std::time::Duration;

#[cfg(doc)]
use crate::SharedShedder;
use crate::owner::Owner;

/// A call the [`SharedShedder`] let through, remembering when it started.
///
/// Exactly one of [`SharedShedder::pass`] and [`SharedShedder::fail`] of the shedder that made
/// it settles it, which consumes it; another shedder's hands it back. Not `Clone`, so a call
/// cannot leave flight twice. Dropping it unsettled leaves the call counted in flight. It is
/// [`ironward::Ticket`]'s twin for the shared form.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::SHED;
/// use ironward_tokio::SharedShedder;
///
/// let shedder = SharedShedder::new(SHED, Duration::ZERO);
/// let ticket = shedder.allow(Duration::from_millis(5), 300).expect("a cool server");
/// assert_eq!(ticket.start(), Duration::from_millis(5));
/// shedder.pass(ticket, Duration::from_millis(25));
/// assert_eq!(shedder.flying(), 0);
/// ```
#[must_use = "settle the ticket with SharedShedder::pass or SharedShedder::fail once the call has finished"]
#[derive(Debug)]
pub struct ShedTicket {
    start: u64,
    /// The shedder that made it.
    shedder: u64,
}

impl ShedTicket {
    /// A ticket of the shedder `owner` is for a call let in at `start` (nanoseconds).
    #[inline]
    pub(super) fn new(start: u64, owner: &Owner) -> Self {
        Self {
            start,
            shedder: owner.mark(),
        }
    }

    /// When the call was let in, in nanoseconds.
    #[inline]
    pub(super) fn start_nanos(&self) -> u64 {
        self.start
    }

    /// The mark of the shedder that made it.
    #[inline]
    pub(super) fn shedder(&self) -> u64 {
        self.shedder
    }

    /// When the call was let through, on the shedder's clock.
    #[must_use]
    pub fn start(&self) -> Duration {
        Duration::from_nanos(self.start)
    }
}
