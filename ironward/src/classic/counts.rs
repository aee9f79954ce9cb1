//! What a closed classic breaker keeps of its calls: the last N, the last span in buckets,
//! or the failures in a row.

use alloc::vec;
use alloc::vec::Vec;

use super::policy::Record;
use crate::clock::nanos;

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
    /// start of the stretch it counts.
    Time {
        buckets: Vec<(u64, Tallies)>,
        width: u64,
    },
    /// Failures in a row, and the most that opens the breaker.
    Consecutive { run: u64, failures: u64 },
}

impl Counts {
    /// An empty record of the kind `record` names, its sizes read as the policy says.
    pub(crate) fn new(record: Record) -> Self {
        match record {
            Record::Count { calls } => Self::Count {
                ring: vec![0; calls.max(1) as usize],
                next: 0,
                filled: 0,
                totals: Tallies::default(),
            },
            Record::Time { span, buckets } => {
                let buckets = u64::from(buckets.max(1));
                let width = (nanos(span) / buckets).max(1);
                Self::Time {
                    buckets: vec![(u64::MAX, Tallies::default()); buckets as usize],
                    width,
                }
            }
            Record::Consecutive { failures } => Self::Consecutive {
                run: 0,
                failures: u64::from(failures.max(1)),
            },
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
                if bucket.0 != start {
                    *bucket = (start, Tallies::default());
                }
                bucket.1.add(failed, slow);
            }
            Self::Consecutive { run, .. } => {
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
                let span = *width * buckets.len() as u64;
                let oldest = (start + *width).saturating_sub(span);
                let mut sum = Tallies::default();
                for &(at, tallies) in buckets.iter() {
                    if at != u64::MAX && at >= oldest && at <= start {
                        sum.calls += tallies.calls;
                        sum.failures += tallies.failures;
                        sum.slow += tallies.slow;
                    }
                }
                sum
            }
            Self::Consecutive { run, .. } => Tallies {
                calls: *run,
                failures: *run,
                slow: 0,
            },
        }
    }

    /// Whether the record holds enough failures in a row to open, for a consecutive record;
    /// `None` for the others, which decide by their shares.
    pub(crate) fn run_reached(&self) -> Option<bool> {
        match self {
            Self::Consecutive { run, failures } => Some(run >= failures),
            _ => None,
        }
    }
}
