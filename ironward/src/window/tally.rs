//! What a bucket of a [`Window`](crate::Window) counts: outcomes, or a sum of values.

/// How a call ended, as an [`SreBreaker`](crate::SreBreaker) records it.
///
/// A `Drop` is a call refused before it ran: traffic, but neither a success nor a failure
/// of whatever is downstream.
///
/// # Examples
///
/// ```
/// use ironward::{Outcome, Tally};
///
/// let mut tally = Tally::default();
/// tally.add(Outcome::Drop);
/// assert_eq!((tally.total, tally.drop), (1, 1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The call ran and succeeded.
    Success,
    /// The call ran and failed.
    Failure,
    /// The call was refused before it ran.
    Drop,
}

/// Outcomes counted in one bucket.
///
/// `total` counts every call including the dropped ones, so a bucket being throttled still
/// reads as busy rather than idle. Counts saturate at `u64::MAX`.
///
/// # Examples
///
/// ```
/// use ironward::{Outcome, Tally};
///
/// let mut tally = Tally::default();
/// tally.add(Outcome::Success);
/// tally.add(Outcome::Failure);
/// tally.add(Outcome::Failure);
/// assert_eq!(tally, Tally { total: 3, success: 1, failure: 2, drop: 0 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tally {
    /// Every call counted: successes, failures and drops.
    pub total: u64,
    /// Calls that succeeded.
    pub success: u64,
    /// Calls that failed.
    pub failure: u64,
    /// Calls refused before they ran.
    pub drop: u64,
}

impl Tally {
    /// Counts one call ending as `outcome`.
    pub fn add(&mut self, outcome: Outcome) {
        self.total = self.total.saturating_add(1);
        let count = match outcome {
            Outcome::Success => &mut self.success,
            Outcome::Failure => &mut self.failure,
            Outcome::Drop => &mut self.drop,
        };
        *count = count.saturating_add(1);
    }
}

/// A sum and how many values went into it, which is a mean once `count` is positive.
///
/// The [`Shedder`](crate::Shedder) keeps one per bucket: the sum of response times in
/// nanoseconds, and the count of calls that passed. Both saturate at `u64::MAX`.
///
/// # Examples
///
/// ```
/// use ironward::Total;
///
/// let mut total = Total::default();
/// assert_eq!(total.mean(), None);
/// total.add(10);
/// total.add(20);
/// assert_eq!(total.mean(), Some(15.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Total {
    /// The sum of the values added.
    pub sum: u64,
    /// How many values were added.
    pub count: u64,
}

impl Total {
    /// Adds one value.
    pub fn add(&mut self, v: u64) {
        self.sum = self.sum.saturating_add(v);
        self.count = self.count.saturating_add(1);
    }

    /// The mean of the values added, or `None` when there are none.
    #[must_use]
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_counts_every_outcome_in_its_total() {
        let mut tally = Tally::default();
        for outcome in [
            Outcome::Success,
            Outcome::Drop,
            Outcome::Failure,
            Outcome::Drop,
        ] {
            tally.add(outcome);
        }
        assert_eq!(
            tally,
            Tally {
                total: 4,
                success: 1,
                failure: 1,
                drop: 2
            }
        );
    }

    #[test]
    fn counts_saturate_instead_of_wrapping() {
        let mut tally = Tally {
            total: u64::MAX,
            success: u64::MAX,
            ..Tally::default()
        };
        tally.add(Outcome::Success);
        assert_eq!((tally.total, tally.success), (u64::MAX, u64::MAX));
        let mut total = Total {
            sum: u64::MAX - 1,
            count: 1,
        };
        total.add(5);
        assert_eq!(
            total,
            Total {
                sum: u64::MAX,
                count: 2
            }
        );
    }

    #[test]
    fn the_mean_of_nothing_is_none() {
        assert_eq!(Total::default().mean(), None);
        let mut total = Total::default();
        total.add(3);
        total.add(4);
        assert_eq!(total.mean(), Some(3.5));
    }
}
