//! What a closed classic breaker keeps of its calls: the last N, the last span in buckets,
//! or the failures in a row.

use alloc::vec;
use alloc::vec::Vec;

use super::policy::Record;
use crate::clock::nanos;
use crate::window::MAX_SIZE;

/// Calls, failures and slow calls counted together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tallies {
    pub(crate) calls: u64,
    pub(crate) failures: u64,
    pub(crate) slow: u64,
}

impl Tallies {
    pub(crate) fn add(&mut self, failed: bool, slow: bool) {
        self.calls += 1;
        self.failures += u64::from(failed);
        self.slow += u64::from(slow);
    }

    /// The failed and the slow share of these calls; `(0, 0)` when there are none.
    pub(crate) fn shares(self) -> (f64, f64) {
        if self.calls == 0 {
            return (0.0, 0.0);
        }
        let calls = self.calls as f64;
        (self.failures as f64 / calls, self.slow as f64 / calls)
    }

    fn merge(&mut self, other: Tallies) {
        self.calls += other.calls;
        self.failures += other.failures;
        self.slow += other.slow;
    }

    fn remove(&mut self, other: Tallies) {
        self.calls -= other.calls;
        self.failures -= other.failures;
        self.slow -= other.slow;
    }
}

/// One call's outcome in a count window: bit 0 a failure, bit 1 slow.
type Flags = u8;

/// The record itself, of the kind its [`Record`] names.
#[derive(Debug, Clone)]
pub(crate) enum Counts {
    /// The last `ring.len()` calls, `next` the slot the next one overwrites.
    Count {
        ring: Vec<Flags>,
        next: usize,
        filled: usize,
        totals: Tallies,
    },
    /// The calls of the last span: a bucket per `width` nanoseconds, each stamped with the
    /// start of the stretch it counts (`None` while it has counted none; any `u64` is a
    /// start, the clock's last nanosecond included).
    Time {
        buckets: Vec<(Option<u64>, Tallies)>,
        width: u64,
    },
    /// Failures in a row (the policy's record says how many open the breaker, so that a
    /// retune of that number is read at once).
    Consecutive { run: u64 },
}

impl Counts {
    /// An empty record of the kind `record` names, its sizes read as the policy says: a
    /// count window and a bucket count held to `1 ..= 65 536` (allocated at once, a size
    /// taken as given could abort the process), a bucket at least 1 ns wide.
    pub(crate) fn new(record: Record) -> Self {
        match record {
            Record::Count { calls } => Self::Count {
                ring: vec![0; (calls as usize).clamp(1, MAX_SIZE)],
                next: 0,
                filled: 0,
                totals: Tallies::default(),
            },
            Record::Time { span, buckets } => {
                let buckets = (buckets as usize).clamp(1, MAX_SIZE);
                let width = (nanos(span) / buckets as u64).max(1);
                Self::Time {
                    buckets: vec![(None, Tallies::default()); buckets],
                    width,
                }
            }
            Record::Consecutive { .. } => Self::Consecutive { run: 0 },
        }
    }

    /// Whether this record is of the shape `record` names, so that a retune keeps it.
    pub(crate) fn fits(&self, record: Record) -> bool {
        let fresh = Self::new(record);
        match (self, &fresh) {
            (Self::Count { ring, .. }, Self::Count { ring: other, .. }) => {
                ring.len() == other.len()
            }
            (
                Self::Time { buckets, width },
                Self::Time {
                    buckets: b,
                    width: w,
                },
            ) => buckets.len() == b.len() && width == w,
            (Self::Consecutive { .. }, Self::Consecutive { .. }) => true,
            _ => false,
        }
    }

    /// The most calls the record can hold: its size for a count window, unbounded otherwise.
    pub(crate) fn capacity(&self) -> u64 {
        match self {
            Self::Count { ring, .. } => ring.len() as u64,
            Self::Time { .. } | Self::Consecutive { .. } => u64::MAX,
        }
    }

    /// Adds one call at `t` (nanoseconds).
    pub(crate) fn add(&mut self, t: u64, failed: bool, slow: bool) {
        match self {
            Self::Count {
                ring,
                next,
                filled,
                totals,
            } => {
                if *filled == ring.len() {
                    let old = ring[*next];
                    totals.remove(Tallies {
                        calls: 1,
                        failures: u64::from(old & 1),
                        slow: u64::from(old >> 1 & 1),
                    });
                } else {
                    *filled += 1;
                }
                ring[*next] = Flags::from(failed) | Flags::from(slow) << 1;
                totals.add(failed, slow);
                *next = (*next + 1) % ring.len();
            }
            Self::Time { buckets, width } => {
                let start = t - t % *width;
                let slot = (start / *width % buckets.len() as u64) as usize;
                let bucket = &mut buckets[slot];
                if bucket.0 != Some(start) {
                    *bucket = (Some(start), Tallies::default());
                }
                bucket.1.add(failed, slow);
            }
            Self::Consecutive { run } => {
                *run = if failed { *run + 1 } else { 0 };
            }
        }
    }

    /// What the record holds at `t`: for a time window, the buckets whose stretch has not
    /// yet left the span.
    pub(crate) fn totals(&self, t: u64) -> Tallies {
        match self {
            Self::Count { totals, .. } => *totals,
            Self::Time { buckets, width } => {
                let start = t - t % *width;
                // The buckets before the newest: `width · (len - 1)` is at most the span's
                // nanoseconds, and the start of the oldest saturates at the clock's origin.
                let oldest = start.saturating_sub(*width * (buckets.len() as u64 - 1));
                let mut sum = Tallies::default();
                for &(at, tallies) in buckets.iter() {
                    if at.is_some_and(|at| (oldest..=start).contains(&at)) {
                        sum.merge(tallies);
                    }
                }
                sum
            }
            Self::Consecutive { run } => Tallies {
                calls: *run,
                failures: *run,
                slow: 0,
            },
        }
    }

    /// Whether the record holds enough failures in a row to open under `record` (at least
    /// one), for a consecutive record; `None` for the others, which decide by their shares.
    pub(crate) fn run_reached(&self, record: Record) -> Option<bool> {
        match (self, record) {
            (Self::Consecutive { run }, Record::Consecutive { failures }) => {
                Some(*run >= u64::from(failures.max(1)))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
