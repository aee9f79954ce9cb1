//! Partitions of the limit as Netflix concurrency-limits' `AbstractPartitionedLimiter` has
//! them: a reservation per class that holds only once the whole limit is in flight.

use crate::criticality::Criticality;
use crate::internal::constant::constant;
use crate::internal::float::ceil_nanos;

#[cfg(doc)]
use super::{Adaptive, Limiter};

/// The fraction of the limit reserved to each class, when the limiter admits by partitions
/// ([`Adaptive::partitions`]) rather than by ceilings ([`Shares`](crate::Shares)).
///
/// Under partitions a class is not held to a share: while fewer calls than the limit are in
/// flight, any call is let in, whatever its class, so a class may borrow the room the others
/// leave unused, up to the whole limit. Once the limit is full, a call is let in only while
/// its own class has fewer calls in flight than its reservation: a class that borrowed is
/// refused until its calls leave, and a class that returns finds its reservation waiting,
/// even above the limit. The calls in flight may so exceed the limit by the reservations of
/// the classes that come back, never by more; the borrowers give the room back as their
/// calls finish. This is Netflix's `AbstractPartitionedLimiter` over the four classes of
/// [`Criticality`].
///
/// A class's reservation is the limit times its fraction, rounded up as Netflix rounds it,
/// so a class with any fraction has at least one call of its own and the reservations may
/// sum to a little more than the limit.
///
/// # Reading
///
/// Each fraction is read in `[0, 1]`: a negative one is 0, one past 1 is 1, and NaN is 0,
/// no reservation, so a class whose fraction is garbage borrows like any call and takes no
/// room from the others. Fractions that sum to more than 1 are scaled down in proportion
/// to sum to 1 (Netflix refuses to build such a limiter; a policy here has no error path,
/// and the proportions are what the operator meant). A sum under 1 leaves the rest
/// reserved to no one. A fraction of 0 reserves nothing: the class borrows while the limit
/// has room and is refused once it is full. (Netflix gives every partition at least one
/// call; here the four classes always exist, and 0 is how a policy says a class only
/// borrows.)
///
/// # When to choose partitions over ceilings
///
/// Ceilings ([`Shares`](crate::Shares), the default) rank the classes: the less critical
/// meet a full limit first, and after a refusal the floor holds them out while the more
/// critical take the room. Choose them when the classes are priorities of one workload.
///
/// Partitions guarantee: each class keeps a part of the limit however busy the others are,
/// and none is idle while another has work. Choose them when the classes are different
/// tenants or kinds of work (batch and live, Netflix's example) that must each make
/// progress. The floor ([`Adaptive::cool`]) still applies under partitions: a refused call
/// holds the less critical classes out, their reservations included; a `cool` of zero
/// turns it off and decides exactly as Netflix's partitions do.
///
/// # Examples
///
/// ```
/// use ironward::{Criticality, Partitions};
///
/// let batch_and_live = Partitions { sheddable: 0.3, critical: 0.7, ..Partitions::NONE };
/// assert_eq!(batch_and_live.reserved(10, Criticality::Sheddable), 3);
/// assert_eq!(batch_and_live.reserved(10, Criticality::Critical), 7);
/// // Over 1 in all: scaled down in proportion.
/// let greedy = Partitions { sheddable: 1.0, critical: 3.0, ..Partitions::NONE };
/// assert_eq!(greedy.of(Criticality::Sheddable), 0.5);
/// assert_eq!(greedy.reserved(10, Criticality::Critical), 5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default, deny_unknown_fields)
)]
pub struct Partitions {
    /// The fraction of the limit reserved to [`Criticality::Sheddable`].
    pub sheddable: f64,
    /// The fraction of the limit reserved to [`Criticality::SheddableConcurrent`].
    pub sheddable_concurrent: f64,
    /// The fraction of the limit reserved to [`Criticality::Critical`].
    pub critical: f64,
    /// The fraction of the limit reserved to [`Criticality::CriticalPlus`].
    pub critical_plus: f64,
}

impl Partitions {
    /// Nothing reserved to any class: the start of a record written as
    /// `Partitions { critical: 0.7, ..Partitions::NONE }`, and what a field left out of a
    /// configuration file reads as.
    pub const NONE: Self = Self {
        sheddable: 0.0,
        sheddable_concurrent: 0.0,
        critical: 0.0,
        critical_plus: 0.0,
    };

    /// The fraction reserved to `class`, as the limiter reads it (see [Reading](Partitions#reading)).
    #[must_use]
    pub fn of(&self, class: Criticality) -> f64 {
        self.read()[class.rank()]
    }

    /// The calls in flight reserved to `class` under `limit`: the limit times the class's
    /// fraction, rounded up. No more than `limit`.
    #[must_use]
    pub fn reserved(&self, limit: u32, class: Criticality) -> u32 {
        reserved(limit, self.of(class))
    }

    /// Every class's fraction as [`of`](Partitions::of) reads it, least critical first: what
    /// a limiter keeps so that a decision indexes it.
    pub(crate) fn read(&self) -> [f64; 4] {
        let raw = [
            self.sheddable,
            self.sheddable_concurrent,
            self.critical,
            self.critical_plus,
        ]
        .map(|fraction| constant(fraction, 0.0, 1.0, 0.0));
        let sum: f64 = raw.iter().sum();
        if sum > 1.0 {
            raw.map(|fraction| fraction / sum)
        } else {
            raw
        }
    }
}

impl Default for Partitions {
    fn default() -> Self {
        Self::NONE
    }
}

/// The calls in flight a class with `fraction` (in `[0, 1]`) of `limit` keeps for itself:
/// the product rounded up, as Netflix's `Partition.updateLimit` rounds it.
pub(super) fn reserved(limit: u32, fraction: f64) -> u32 {
    // The product is in [0, limit], so its ceiling fits a u32 but for a float a hair over
    // `limit`, which `min` holds back.
    let whole = ceil_nanos(f64::from(limit) * fraction);
    u32::try_from(whole).unwrap_or(u32::MAX).min(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_held_to_zero_and_one_and_nan_reserves_nothing() {
        let odd = Partitions {
            sheddable: f64::NAN,
            sheddable_concurrent: -0.5,
            critical: 0.25,
            critical_plus: f64::NEG_INFINITY,
        };
        assert_eq!(odd.read(), [0.0, 0.0, 0.25, 0.0]);
        assert_eq!(odd.reserved(10, Criticality::Sheddable), 0);
        assert_eq!(odd.reserved(10, Criticality::Critical), 3, "2.5 rounded up");
        let one = Partitions {
            critical: f64::INFINITY,
            ..Partitions::NONE
        };
        assert_eq!(one.read(), [0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn fractions_over_one_in_all_are_scaled_to_one_in_proportion() {
        let over = Partitions {
            sheddable: 0.5,
            sheddable_concurrent: 0.5,
            critical: 1.0,
            critical_plus: 2.0,
        };
        // 2.0 reads as 1, so the sum is 3.
        let read = over.read();
        assert_eq!(read, [0.5 / 3.0, 0.5 / 3.0, 1.0 / 3.0, 1.0 / 3.0]);
        assert!((read.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // A sum of exactly 1 or under is left as written.
        let under = Partitions {
            sheddable: 0.3,
            critical: 0.6,
            ..Partitions::NONE
        };
        assert_eq!(under.read(), [0.3, 0.0, 0.6, 0.0]);
    }

    #[test]
    fn a_reservation_rounds_up_and_never_passes_the_limit() {
        assert_eq!(reserved(10, 0.3), 3);
        assert_eq!(reserved(10, 0.7), 7);
        assert_eq!(reserved(20, 0.3), 6);
        assert_eq!(reserved(10, 0.01), 1, "any fraction keeps one call");
        assert_eq!(reserved(10, 0.0), 0);
        // A limit of 1: every class with a fraction keeps the one call.
        assert_eq!(reserved(1, 0.3), 1);
        assert_eq!(reserved(1, 0.7), 1);
        // Near u32::MAX, the product's ceiling still fits and stays within the limit.
        assert_eq!(reserved(u32::MAX, 1.0), u32::MAX);
        assert_eq!(reserved(u32::MAX, 0.5), u32::MAX / 2 + 1);
        assert_eq!(reserved(u32::MAX, 1.0 - f64::EPSILON), u32::MAX);
        assert_eq!(reserved(0, 0.5), 0);
    }
}
