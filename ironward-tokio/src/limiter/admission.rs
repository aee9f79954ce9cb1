//! What a [`SharedLimiter`](super::SharedLimiter) answers a call: let in, queued, or refused
//! with the numbers that decided it.

use std::fmt;
use std::time::Duration;

use ironward::LimiterReason;

use super::{LimiterPermit, Waiter};
#[cfg(doc)]
use super::{Queue, SharedLimiter};

/// The first answer of [`SharedLimiter::admit`]: in, queued, or refused.
#[must_use = "an admitted call must be settled, and a queued one awaited; dropping either settles or leaves at once"]
#[derive(Debug)]
pub enum Admission {
    /// The call is let in: run it, then settle the permit.
    Admitted(LimiterPermit),
    /// There was no room, and the call waits in the queue: await the waiter for a permit or
    /// the refusal.
    Queued(Waiter),
    /// There was no room, and no place in the queue (or no queue).
    Refused(LimiterRefusal),
}

/// Why a [`SharedLimiter`] refused a call: the core's reason, and what the queue did.
///
/// `Display` is one line, lower case: the core's reason and then, if there is a queue, why it
/// did not hold the call.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::{ADAPTIVE, Adaptive, Limiter};
/// use ironward_tokio::{LimiterRefusal, Queued};
///
/// // The core's reason, from a full limiter of 20 (no probe: the default's first window
/// // admits one call at a time).
/// let steady = Adaptive { probe: Duration::ZERO, ..ADAPTIVE };
/// let mut limiter = Limiter::new(steady, Duration::ZERO);
/// let grants: Vec<_> = (0..20).map(|_| limiter.acquire(Duration::ZERO).unwrap()).collect();
/// let reason = limiter.acquire(Duration::ZERO).unwrap_err();
/// let refusal = LimiterRefusal { reason, queued: Queued::Rejected { waiting: 50, rejection: 0.5 } };
/// assert_eq!(
///     refusal.to_string(),
///     "limiter refused a critical call: 20 in flight fill its room of 20 (limit 20); \
///      the queue of 50 turned it away (rejection 0.50)",
/// );
/// # drop(grants);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimiterRefusal {
    /// The core's refusal: on arrival, or after the wait in the queue.
    pub reason: LimiterReason,
    /// What the queue did with the call.
    pub queued: Queued,
}

/// What a [`SharedLimiter`]'s queue did with a call it refused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Queued {
    /// The limiter has no queue: the call was refused as soon as it found no room.
    Off,
    /// The queue turned the call away on arrival: `waiting` calls of its class or above were
    /// queued, and the chance of being turned away with that many was `rejection`
    /// ([`Queue::rejection`]).
    Rejected {
        /// The calls of this one's class or above queued when it arrived: those it would
        /// have waited behind.
        waiting: usize,
        /// The chance of being turned away, in `[0, 1]`; the draw was at most this.
        rejection: f64,
    },
    /// The call waited in the queue as long as the queue allows, and the core refused it
    /// then.
    Expired {
        /// How long it waited, on the limiter's clock.
        waited: Duration,
    },
}

impl LimiterRefusal {
    /// The `reason` label of each kind of refusal, as the limiting edges count them: no room
    /// for the class, a class under the floor, turned away by the queue, or out of time in
    /// it; [`label`](Self::label) says which one a refusal is.
    pub const REASONS: &'static [&'static str] = &["full", "floor", "queue", "expired"];

    /// Which of [`REASONS`](Self::REASONS) this refusal is: what the queue did, if it
    /// turned the call away or held it too long, else whether its class was under the floor.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{ADAPTIVE, Adaptive, Limiter};
    /// use ironward_tokio::{LimiterRefusal, Queued};
    ///
    /// let steady = Adaptive { probe: Duration::ZERO, ..ADAPTIVE };
    /// let mut limiter = Limiter::new(steady, Duration::ZERO);
    /// let grants: Vec<_> = (0..20).map(|_| limiter.acquire(Duration::ZERO).unwrap()).collect();
    /// let reason = limiter.acquire(Duration::ZERO).unwrap_err();
    /// let full = LimiterRefusal { reason, queued: Queued::Off };
    /// assert_eq!(LimiterRefusal::REASONS[full.label()], "full");
    /// let expired = LimiterRefusal { reason, queued: Queued::Expired { waited: Duration::ZERO } };
    /// assert_eq!(LimiterRefusal::REASONS[expired.label()], "expired");
    /// # drop(grants);
    /// ```
    pub fn label(&self) -> usize {
        match self.queued {
            Queued::Rejected { .. } => 2,
            Queued::Expired { .. } => 3,
            Queued::Off if self.reason.criticality < self.reason.floor => 1,
            Queued::Off => 0,
        }
    }
}

impl fmt::Display for LimiterRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.reason, f)?;
        match self.queued {
            Queued::Off => Ok(()),
            Queued::Rejected { waiting, rejection } => write!(
                f,
                "; the queue of {waiting} turned it away (rejection {rejection:.2})"
            ),
            Queued::Expired { waited } => write!(f, "; it waited {waited:?} in the queue"),
        }
    }
}

impl std::error::Error for LimiterRefusal {}
