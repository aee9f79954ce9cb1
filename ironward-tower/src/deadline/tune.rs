//! A fixed budget that a [`Tuner`](crate::Tuner) changes live: the deadline's shared state
//! for a configuration reload.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::tuner::Tune;

/// The budget of a [`DeadlineLayer::tuned`](super::DeadlineLayer::tuned) layer, in whole
/// nanoseconds, read by each request (one relaxed load) and written by its tuner.
///
/// A budget is read wholly old or wholly new: one atomic word holds it. Nanoseconds in a
/// `u64` reach 584 years; a longer budget is held as that, which no request outlives.
#[derive(Debug)]
pub(crate) struct TunedBudget {
    nanos: AtomicU64,
}

impl TunedBudget {
    pub(crate) fn new(budget: Duration) -> Self {
        Self {
            nanos: AtomicU64::new(nanos(budget)),
        }
    }

    /// The budget in force.
    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

/// `budget` in whole nanoseconds, `u64::MAX` past them.
fn nanos(budget: Duration) -> u64 {
    u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX)
}

impl Tune<Duration> for TunedBudget {
    fn retune(&self, budget: Duration) -> Duration {
        let was = Duration::from_nanos(self.nanos.swap(nanos(budget), Ordering::Relaxed));
        tracing::debug!(from = ?was, to = ?budget, "deadline retuned");
        was
    }

    fn policy(&self) -> Duration {
        self.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_past_u64_nanoseconds_is_held_as_the_most_they_count() {
        let budget = TunedBudget::new(Duration::MAX);
        assert_eq!(budget.get(), Duration::from_nanos(u64::MAX));
        let was = budget.retune(Duration::from_millis(5));
        assert_eq!(
            (was, budget.policy()),
            (Duration::from_nanos(u64::MAX), Duration::from_millis(5))
        );
    }
}
