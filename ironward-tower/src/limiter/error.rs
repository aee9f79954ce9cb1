//! The refusal of a full adaptive limit.

use std::fmt;

use ironward::LimiterReason;
use ironward_tokio::{LimiterRefusal, Queued};

/// The adaptive limit was full for the request's class: it was refused (at once, or after
/// its wait in the queue) and never reached the inner service.
///
/// A [`LimiterService`](crate::LimiterService) returns it boxed, so a caller tests the boxed
/// error with `err.is::<LimiterRefused>()` and reads it with
/// `err.downcast_ref::<LimiterRefused>()`, as with tower's `load_shed::error::Overloaded`
/// (a different type, which this one does not shadow). Over HTTP it is
/// `503 Service Unavailable` ([`crate::http::status_for`]): the limit is the state of the
/// server (or of the backend a client limits its calls to), not anything the client did.
///
/// It carries the core's [`LimiterReason`] ([`reason`](Self::reason): the calls in flight,
/// the limit, the class's room and the floor), and what the queue did with the call
/// ([`queued`](Self::queued)). Both are `Copy` and were computed by the decision anyway, so
/// a refusal costs the one `Box` that makes it a boxed error and nothing else; nothing is
/// formatted until it is displayed. `Display` is one line, what refused and then the
/// refusal's own line; because the refusal is in it, [`source`](std::error::Error::source)
/// is `None`, so that a report walking the chain does not print it twice.
///
/// Its field is private, so that it can gain another without breaking a caller; make one
/// with [`LimiterRefused::new`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::{ADAPTIVE, Adaptive, Criticality, Limiter};
/// use ironward_tower::{LimiterRefusal, LimiterRefused, Queued};
///
/// // The core's reason, from a limiter of 20 with 10 in flight: a sheddable call's room (no
/// // probe: the default's first window admits one call at a time).
/// let steady = Adaptive { probe: Duration::ZERO, ..ADAPTIVE };
/// let mut limiter = Limiter::new(steady, Duration::ZERO);
/// let grants: Vec<_> = (0..10).map(|_| limiter.acquire(Duration::ZERO).unwrap()).collect();
/// let reason = limiter.acquire_as(Duration::ZERO, Criticality::Sheddable).unwrap_err();
/// let refused = LimiterRefused::new(LimiterRefusal { reason, queued: Queued::Off });
/// let err: Box<dyn std::error::Error + Send + Sync> = Box::new(refused);
/// assert!(err.is::<LimiterRefused>());
/// assert_eq!(err.downcast_ref::<LimiterRefused>().unwrap().reason().room, 10);
/// assert_eq!(
///     err.to_string(),
///     "adaptive concurrency limit refused the request: limiter refused a sheddable call: \
///      10 in flight fill its room of 10 (limit 20)",
/// );
/// # drop(grants);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimiterRefused {
    refusal: LimiterRefusal,
}

impl LimiterRefused {
    /// The refusal of one request, for the reason the limiter gave.
    ///
    /// The layer makes these; this is for other limiters and for tests of what a caller does
    /// with one.
    pub const fn new(refusal: LimiterRefusal) -> Self {
        Self { refusal }
    }

    /// Why the core refused: the numbers [`Limiter::acquire_as`](ironward::Limiter::acquire_as)
    /// decided by, on arrival or at the end of the wait.
    pub const fn reason(&self) -> LimiterReason {
        self.refusal.reason
    }

    /// What the queue did with the request: [`Queued::Off`] without a queue.
    pub const fn queued(&self) -> Queued {
        self.refusal.queued
    }

    /// The whole refusal, as the shared limiter gave it.
    pub const fn refusal(&self) -> LimiterRefusal {
        self.refusal
    }
}

impl fmt::Display for LimiterRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written straight to `f`: one formatting of the refusal, not one inside another.
        f.write_str("adaptive concurrency limit refused the request: ")?;
        fmt::Display::fmt(&self.refusal, f)
    }
}

impl std::error::Error for LimiterRefused {}
