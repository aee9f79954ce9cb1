//! Why the limiter refused a call, with the numbers that decided it.

use core::fmt;

#[cfg(doc)]
use super::{Adaptive, Limiter};
use crate::criticality::Criticality;

/// Why a [`Limiter`] refused a call: what was in flight, the limit, and the class's room.
///
/// Under ceilings (the default), `room` is the class's ceiling over all calls in flight and
/// `class_flying` is `None`. Under partitions ([`Adaptive::partitions`]), `room` is the
/// class's reservation and `class_flying` its own calls in flight: such a call is refused
/// when `flying` has reached `limit` and `class_flying` has reached `room`.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::{Adaptive, Criticality, ADAPTIVE, Limiter};
///
/// // No probe: the default's first window would admit one call at a time.
/// let steady = Adaptive { probe: Duration::ZERO, ..ADAPTIVE };
/// let mut limiter = Limiter::new(steady, Duration::ZERO);
/// let grants: Vec<_> = (0..10).map(|_| limiter.acquire(Duration::ZERO).unwrap()).collect();
/// let reason = limiter.acquire_as(Duration::ZERO, Criticality::Sheddable).unwrap_err();
/// assert_eq!((reason.flying, reason.limit, reason.room), (10, 20, 10));
/// assert_eq!(
///     reason.to_string(),
///     "limiter refused a sheddable call: 10 in flight fill its room of 10 (limit 20)",
/// );
/// # drop(grants);
/// ```
///
/// Under partitions, the class's own count is what refused it:
///
/// ```
/// use core::time::Duration;
/// use ironward::{ADAPTIVE, Adaptive, Criticality, Limiter, Partitions};
///
/// let now = Duration::ZERO;
/// let partitions = Partitions { sheddable: 0.3, critical: 0.7, ..Partitions::NONE };
/// let policy = Adaptive { partitions: Some(partitions), probe: Duration::ZERO, ..ADAPTIVE };
/// let mut limiter = Limiter::new(policy, now);
/// // The sheddable borrow the whole limit of 20, then meet their reservation of 6.
/// let grants: Vec<_> = (0..20)
///     .map(|_| limiter.acquire_as(now, Criticality::Sheddable).unwrap())
///     .collect();
/// let reason = limiter.acquire_as(now, Criticality::Sheddable).unwrap_err();
/// assert_eq!((reason.flying, reason.limit, reason.room, reason.class_flying), (20, 20, 6, Some(20)));
/// assert_eq!(
///     reason.to_string(),
///     "limiter refused a sheddable call: 20 in flight fill the limit of 20, and its class's 20 \
///      fill its reservation of 6",
/// );
/// # drop(grants);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimiterReason {
    /// Calls in flight, not counting this one.
    pub flying: u32,
    /// The limit admissions were held to: the estimator's, or the probe's room while a probe
    /// drains ([`Estimator::probe_room`](crate::limit::Estimator::probe_room)).
    pub limit: u32,
    /// How many calls in flight the class may join: under ceilings, the limit times the
    /// class's share; under partitions, the class's reservation.
    pub room: u32,
    /// Under partitions ([`Adaptive::partitions`]), the calls of the class in flight, not
    /// counting this one; `None` under ceilings, where only `flying` is counted.
    pub class_flying: Option<u32>,
    /// The class the call asked as.
    pub criticality: Criticality,
    /// The least critical class admitted at the time. A `criticality` below it was refused
    /// because a more critical call was refused within the cooling time, whatever the room.
    pub floor: Criticality,
    /// A probe was draining ([`Adaptive::probe`]), so `limit` is the probe's room, not the
    /// estimator's.
    pub probing: bool,
}

impl fmt::Display for LimiterReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "limiter refused a {} call: ", self.criticality)?;
        if self.criticality < self.floor {
            write!(
                f,
                "classes below {} are refused after a refusal ({} in flight, limit {})",
                self.floor, self.flying, self.limit
            )
        } else {
            let probe = if self.probing {
                ", held there by a probe"
            } else {
                ""
            };
            match self.class_flying {
                None => write!(
                    f,
                    "{} in flight fill its room of {} (limit {}{probe})",
                    self.flying, self.room, self.limit,
                ),
                Some(own) => write!(
                    f,
                    "{} in flight fill the limit of {}{probe}, and its class's {own} fill its \
                     reservation of {}",
                    self.flying, self.limit, self.room,
                ),
            }
        }
    }
}

impl core::error::Error for LimiterReason {}
