//! What a closed classic breaker keeps of its calls: the last N, the last span in buckets,
//! or the failures in a row.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

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

    /// Whether the failed or the slow share of these calls reaches its rate of `rates` (as
    /// the policy reads them: never NaN, never 0): `shares().0 >= rates.0 || shares().1 >=
    /// rates.1`, without a division where a share is 0, which reaches no rate.
    pub(crate) fn reach(self, rates: (f64, f64)) -> bool {
        (self.failures > 0 && self.share(self.failures) >= rates.0)
            || (self.slow > 0 && self.share(self.slow) >= rates.1)
    }

    /// The failed and the slow share of these calls; `(0, 0)` when there are none.
    pub(crate) fn shares(self) -> (f64, f64) {
        if self.calls == 0 {
            return (0.0, 0.0);
        }
        (self.share(self.failures), self.share(self.slow))
    }

    /// `part` of these calls as a share of them.
    fn share(self, part: u64) -> f64 {
        part as f64 / self.calls as f64
    }

    fn merge(&mut self, other: Tallies) {
        self.calls += other.calls;
        self.failures += other.failures;
        self.slow += other.slow;
    }
}

/// One call's outcome in a count window: bit 0 a failure, bit 1 slow.
type Flags = u8;

/// The record itself, of the kind its [`Record`] names.
#[derive(Clone)]
pub(crate) enum Counts {
    /// The last `ring.len()` calls, `next` the slot the next one overwrites (the slots from
    /// `totals.calls` on hold no call yet, and read as a success in time).
    Count {
        ring: Vec<Flags>,
        next: usize,
        totals: Tallies,
    },
    /// The calls of the last span: a bucket per `width` nanoseconds, each stamped with the
    /// start of the stretch it counts (`None` while it has counted none; any `u64` is a
    /// start, the clock's last nanosecond included).
    Time {
        buckets: Vec<(Option<u64>, Tallies)>,
        width: u64,
        /// The stretch of the latest call added, if any.
        newest: Option<Newest>,
    },
    /// Failures in a row (the policy's record says how many open the breaker, so that a
    /// retune of that number is read at once).
    Consecutive { run: u64 },
}

/// The stretch of a time record's latest call: its start, its bucket, and what the record
/// holds while the clock stays in it (the sum of the buckets [`Counts::totals`] would read).
///
/// A cache: calls mostly come many to a stretch, and while they do, adding one and reading
/// the record's totals are a compare and an add each, where working them out is two
/// divisions and a pass over every bucket. It is `Some` only with `sum` equal to that pass
/// and the bucket `slot` stamped `start`; every change to the buckets keeps it so.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Newest {
    start: u64,
    slot: usize,
    sum: Tallies,
}

impl Newest {
    /// Whether `t` falls in this stretch of `width` nanoseconds.
    fn holds(&self, t: u64, width: u64) -> bool {
        t >= self.start && t - self.start < width
    }
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
                totals: Tallies::default(),
            },
            Record::Time { span, buckets } => {
                let buckets = (buckets as usize).clamp(1, MAX_SIZE);
                let width = (nanos(span) / buckets as u64).max(1);
                Self::Time {
                    buckets: vec![(None, Tallies::default()); buckets],
                    width,
                    newest: None,
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
                Self::Time { buckets, width, .. },
                Self::Time {
                    buckets: b,
                    width: w,
                    ..
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
    #[inline]
    pub(crate) fn add(&mut self, t: u64, failed: bool, slow: bool) {
        match self {
            Self::Count { ring, next, totals } => {
                // The call it overwrites leaves the record, or none while the ring is not yet
                // full: that slot holds 0, and takes nothing away. (`next` is always a slot of
                // the ring.)
                let Some(slot) = ring.get_mut(*next) else {
                    return;
                };
                let old = core::mem::replace(slot, Flags::from(failed) | Flags::from(slow) << 1);
                totals.failures = totals.failures + u64::from(failed) - u64::from(old & 1);
                totals.slow = totals.slow + u64::from(slow) - u64::from(old >> 1);
                if totals.calls < ring.len() as u64 {
                    totals.calls += 1;
                }
                // The ring's next slot, wrapping at its end: a compare, not a division.
                *next += 1;
                if *next == ring.len() {
                    *next = 0;
                }
            }
            Self::Time {
                buckets,
                width,
                newest,
            } => match newest {
                Some(newest) if newest.holds(t, *width) => {
                    buckets[newest.slot].1.add(failed, slow);
                    newest.sum.add(failed, slow);
                }
                _ => self.add_in_new_stretch(t, failed, slow),
            },
            Self::Consecutive { run } => {
                *run = if failed { *run + 1 } else { 0 };
            }
        }
    }

    /// [`add`](Self::add) to a time record at `t`, outside the stretch of its latest call:
    /// the bucket of `t` found (and started afresh if it counted an earlier stretch) and
    /// made the newest.
    #[inline(never)]
    fn add_in_new_stretch(&mut self, t: u64, failed: bool, slow: bool) {
        let Self::Time {
            buckets,
            width,
            newest,
        } = self
        else {
            return;
        };
        let start = t - t % *width;
        let slot = (start / *width % buckets.len() as u64) as usize;
        let bucket = &mut buckets[slot];
        if bucket.0 != Some(start) {
            *bucket = (Some(start), Tallies::default());
        }
        bucket.1.add(failed, slow);
        *newest = Some(Newest {
            start,
            slot,
            sum: span_sum(buckets, *width, start),
        });
    }

    /// What the record holds at `t`: for a time window, the buckets whose stretch has not
    /// yet left the span.
    #[inline]
    pub(crate) fn totals(&self, t: u64) -> Tallies {
        match self {
            Self::Count { totals, .. } => *totals,
            Self::Time {
                buckets,
                width,
                newest,
            } => match newest {
                Some(newest) if newest.holds(t, *width) => newest.sum,
                _ => span_sum(buckets, *width, t - t % *width),
            },
            Self::Consecutive { run } => Tallies {
                calls: *run,
                failures: *run,
                slow: 0,
            },
        }
    }

    /// Whether the record holds enough failures in a row to open under `record` (at least
    /// one), for a consecutive record; `None` for the others, which decide by their shares.
    #[inline]
    pub(crate) fn run_reached(&self, record: Record) -> Option<bool> {
        match (self, record) {
            (Self::Consecutive { run }, Record::Consecutive { failures }) => {
                Some(*run >= u64::from(failures.max(1)))
            }
            _ => None,
        }
    }

    /// Adds `more` calls that succeeded to the newest stretch's bucket, which the last
    /// [`add`](Self::add) made the one at `t`, holding it to `most` calls (or as many as it
    /// holds, if more): how a time record takes successes in bulk. Nothing for other records.
    pub(crate) fn add_to_newest(&mut self, more: u64, most: u64) {
        if let Self::Time {
            buckets,
            newest: Some(newest),
            ..
        } = self
        {
            let bucket = &mut buckets[newest.slot].1;
            let calls = bucket.calls;
            bucket.calls = calls.saturating_add(more).min(most).max(calls);
            newest.sum.calls += bucket.calls - calls;
        }
    }
}

/// What a time record's buckets hold for the span whose newest stretch starts at `start`:
/// the buckets whose stretch has not yet left it.
fn span_sum(buckets: &[(Option<u64>, Tallies)], width: u64, start: u64) -> Tallies {
    // The buckets before the newest: `width · (len - 1)` is at most the span's nanoseconds,
    // and the start of the oldest saturates at the clock's origin.
    let oldest = start.saturating_sub(width * (buckets.len() as u64 - 1));
    let mut sum = Tallies::default();
    for &(at, tallies) in buckets {
        if at.is_some_and(|at| (oldest..=start).contains(&at)) {
            sum.merge(tallies);
        }
    }
    sum
}

/// The record as what it holds: a time record's cache of its newest stretch is left out, being
/// the buckets read another way.
impl fmt::Debug for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Count { ring, next, totals } => f
                .debug_struct("Count")
                .field("ring", ring)
                .field("next", next)
                .field("totals", totals)
                .finish(),
            Self::Time { buckets, width, .. } => f
                .debug_struct("Time")
                .field("buckets", buckets)
                .field("width", width)
                .finish_non_exhaustive(),
            Self::Consecutive { run } => f.debug_struct("Consecutive").field("run", run).finish(),
        }
    }
}

#[cfg(test)]
mod tests;
