//! The error a shed request fails with.

use std::fmt;

use ironward::ShedReason;

/// The server is overloaded and shed the request: it failed at once, without reaching the
/// inner service.
///
/// A [`ShedService`](crate::ShedService) returns it boxed, as tower's `load_shed` returns its
/// own `Overloaded` (a different type, which this one does not shadow), so a caller tests the
/// boxed error with `err.is::<ShedRefused>()` and reads it with
/// `err.downcast_ref::<ShedRefused>()`. The conventional answers are HTTP
/// `503 Service Unavailable` (go-zero's HTTP shedding handler) and gRPC `RESOURCE_EXHAUSTED`
/// (its gRPC interceptor).
///
/// It carries the [`ShedReason`] the core's [`Shedder::check`](ironward::Shedder::check)
/// refused with: the CPU reading, the requests in flight and their average, the capacity
/// they exceeded, and the heat. The reason is `Copy` and was computed by the decision anyway,
/// so shedding costs the one `Box` that makes it a `BoxError` and nothing else; nothing is
/// formatted until it is displayed. `Display` is one line, what refused and then the reason's
/// own line; because the reason is in it, [`source`](std::error::Error::source) is `None`, so
/// that a report walking the chain does not print it twice.
///
/// Its field is private, so that it can gain another without breaking a caller; make one
/// with [`ShedRefused::new`].
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{SHED, Shedder};
/// use ironward_tower::shed::ShedRefused;
///
/// let ms = Duration::from_millis;
/// let mut shedder = Shedder::new(SHED, ms(0));
/// let mut tickets: Vec<_> = (0..100).map(|_| shedder.allow(ms(0), 950).unwrap()).collect();
/// for ticket in tickets.drain(..50) {
///     shedder.pass(ticket, ms(50));
/// }
/// let reason = shedder.check(ms(60), 950).expect_err("hot and full");
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(ShedRefused::new(reason));
/// assert!(err.is::<ShedRefused>());
/// assert_eq!(err.downcast_ref::<ShedRefused>().unwrap().reason().flying, 50);
/// assert_eq!(
///     err.to_string(),
///     "load shedding dropped the request: shedder refused at cpu 95.0% (overloaded): \
///      50 in flight, 58.44 on average, over a capacity of 5.00",
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShedRefused {
    reason: ShedReason,
}

impl ShedRefused {
    /// The refusal of one request, for the reason the core gave.
    ///
    /// The layer makes these; this is for other shedders and for tests of what a caller does
    /// with one.
    pub const fn new(reason: ShedReason) -> Self {
        Self { reason }
    }

    /// Why the shedder refused: the numbers [`Shedder::check`](ironward::Shedder::check)
    /// decided by.
    pub const fn reason(&self) -> ShedReason {
        self.reason
    }
}

impl fmt::Display for ShedRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written straight to `f`: one formatting of the reason, not one inside another.
        f.write_str("load shedding dropped the request: ")?;
        fmt::Display::fmt(&self.reason, f)
    }
}

impl std::error::Error for ShedRefused {}
