//! The busiest and the fastest bucket of the shedder's window, kept as buckets complete.

use alloc::collections::VecDeque;

use crate::window::Total;

/// The largest pass count and the smallest mean response time among the complete buckets
/// still in a [`Window`](crate::Window) of [`Total`]s, readable in O(1) whatever its size.
///
/// A bucket is taken in once, when time first passes its end. Nothing writes to it after
/// that: the [`Shedder`](crate::Shedder) writes only to the bucket `now` falls in, and its
/// clock never goes back. It leaves the window `size` widths after its start, in the order
/// it came in, so each queue below holds bucket starts oldest first and drops its front
/// as buckets leave. A newer bucket at least as busy as an older one outlives it in the
/// window, so the older can never be the busiest again and is dropped when the newer
/// arrives; the busiest queue's counts therefore fall from front to back, and its front is
/// the answer. Likewise for the fastest mean. Each bucket enters and leaves each queue at
/// most once: O(1) amortised per reading, where a scan of the buckets is O(size).
///
/// Both queues are allocated at `size` entries up front, and never hold more: every entry is
/// a distinct bucket start within the last `size` widths.
#[derive(Debug, Clone)]
pub(crate) struct Extremes {
    /// Bucket starts and pass counts, counts strictly falling from front to back.
    busiest: VecDeque<(u64, u64)>,
    /// Bucket starts and mean response times, means strictly rising from front to back.
    fastest: VecDeque<(u64, f64)>,
    /// The start of the last bucket taken in.
    taken: Option<u64>,
    /// The width of a bucket, in nanoseconds (at least 1).
    width: u64,
    /// How long after its start a bucket leaves the window: `size · width`, or `None` when
    /// that is past `u64::MAX` and no bucket ever leaves by age.
    reach: Option<u64>,
    /// The newest bucket's start and a time before which [`advance`](Extremes::advance)
    /// has nothing to do while that bucket stays the newest: when it completes, or the
    /// first front leaves, whichever is sooner.
    still: (u64, u64),
}

impl Extremes {
    /// Nothing taken in yet, for a window of `size` buckets `width` nanoseconds wide.
    pub(crate) fn new(size: usize, width: u64) -> Self {
        // As the window reads it, so that no size allocates more than the window does.
        let size = size.clamp(1, crate::window::MAX_SIZE);
        Self {
            busiest: VecDeque::with_capacity(size),
            fastest: VecDeque::with_capacity(size),
            taken: None,
            width: width.max(1),
            reach: u64::try_from(size)
                .ok()
                .and_then(|size| size.checked_mul(width.max(1))),
            still: (0, 0),
        }
    }

    /// Brings the extremes to `now`: takes in the window's newest bucket, which starts at
    /// `start`, once `now` is past its end, then drops the buckets that have left.
    ///
    /// The caller passes the newest bucket before writing at `now`, so that a bucket is taken
    /// in before the window clears it for reuse.
    ///
    /// Nearly every call finds nothing to do, and says so with two comparisons: a bucket
    /// completes and a front leaves only at instants on the window's grid, worked out when
    /// something last changed.
    #[inline]
    pub(crate) fn advance(&mut self, now: u64, start: u64, newest: &Total) {
        if start == self.still.0 && now < self.still.1 {
            return;
        }
        self.catch_up(now, start, newest);
    }

    /// [`advance`](Extremes::advance) when something may have to change.
    fn catch_up(&mut self, now: u64, start: u64, newest: &Total) {
        if self.taken != Some(start) && now.saturating_sub(start) >= self.width {
            self.taken = Some(start);
            if newest.count > 0 {
                while self.busiest.back().is_some_and(|&(_, c)| c <= newest.count) {
                    self.busiest.pop_back();
                }
                self.busiest.push_back((start, newest.count));
            }
            if let Some(mean) = newest.mean() {
                while self.fastest.back().is_some_and(|&(_, m)| m >= mean) {
                    self.fastest.pop_back();
                }
                self.fastest.push_back((start, mean));
            }
        }
        // The newest bucket completes at `start + width`; a sum past `u64::MAX` is never.
        let mut until = if self.taken == Some(start) {
            u64::MAX
        } else {
            start.saturating_add(self.width)
        };
        if let Some(reach) = self.reach {
            let gone = |begun: u64| now.saturating_sub(begun) >= reach;
            while self.busiest.front().is_some_and(|&(s, _)| gone(s)) {
                self.busiest.pop_front();
            }
            while self.fastest.front().is_some_and(|&(s, _)| gone(s)) {
                self.fastest.pop_front();
            }
            let fronts = self.busiest.front().map(|&(s, _)| s);
            for begun in fronts
                .into_iter()
                .chain(self.fastest.front().map(|&(s, _)| s))
            {
                until = until.min(begun.saturating_add(reach));
            }
        }
        self.still = (start, until);
    }

    /// The most passes in one complete bucket still in the window, if any bucket had one.
    pub(crate) fn busiest(&self) -> Option<u64> {
        self.busiest.front().map(|&(_, count)| count)
    }

    /// The smallest mean response time of a complete bucket still in the window, in
    /// nanoseconds, if any bucket had a pass.
    pub(crate) fn fastest(&self) -> Option<f64> {
        self.fastest.front().map(|&(_, mean)| mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(sum: u64, count: u64) -> Total {
        Total { sum, count }
    }

    #[test]
    fn a_bucket_counts_only_once_time_has_passed_its_end() {
        let mut extremes = Extremes::new(3, 10);
        extremes.advance(9, 0, &total(20, 4));
        assert_eq!(extremes.busiest(), None);
        extremes.advance(10, 0, &total(20, 4));
        assert_eq!(
            (extremes.busiest(), extremes.fastest()),
            (Some(4), Some(5.0))
        );
        // Taken in once: the same bucket seen again later is not counted twice.
        extremes.advance(15, 0, &total(99, 99));
        assert_eq!(extremes.busiest(), Some(4));
    }

    #[test]
    fn the_front_is_the_extreme_of_the_buckets_still_in_the_window() {
        // Three buckets 10 ns wide: a bucket starting at s leaves at s + 30.
        let mut extremes = Extremes::new(3, 10);
        extremes.advance(10, 0, &total(90, 9)); // count 9, mean 10
        extremes.advance(20, 10, &total(20, 2)); // count 2, mean 10
        extremes.advance(25, 20, &total(0, 0));
        assert_eq!(
            (extremes.busiest(), extremes.fastest()),
            (Some(9), Some(10.0))
        );
        // At 30 the bucket of 0 has left; bucket 20 is complete with 5 passes at mean 2.
        extremes.advance(30, 20, &total(10, 5));
        assert_eq!(
            (extremes.busiest(), extremes.fastest()),
            (Some(5), Some(2.0))
        );
        // At 45 only bucket 20 is left; at 50 it has gone too.
        extremes.advance(45, 40, &total(0, 0));
        assert_eq!(extremes.busiest(), Some(5));
        extremes.advance(50, 40, &total(0, 0));
        assert_eq!((extremes.busiest(), extremes.fastest()), (None, None));
    }

    #[test]
    fn a_window_wider_than_u64_never_ages_a_bucket_out() {
        let mut extremes = Extremes::new(4, u64::MAX / 2);
        extremes.advance(u64::MAX / 2, 0, &total(1, 1));
        extremes.advance(u64::MAX, u64::MAX / 2, &total(0, 0));
        assert_eq!(extremes.busiest(), Some(1));
    }

    #[test]
    fn the_queues_never_outgrow_the_window() {
        // Falling counts and rising means: no bucket is dominated, so only age trims.
        let mut extremes = Extremes::new(4, 10);
        let capacity = (extremes.busiest.capacity(), extremes.fastest.capacity());
        for k in 0..100u64 {
            let count = 1_000 - k;
            extremes.advance((k + 1) * 10, k * 10, &total((k + 1) * count, count));
            assert!(extremes.busiest.len() <= 4 && extremes.fastest.len() <= 4);
        }
        // At 1000 the buckets of 970, 980 and 990 are left: the oldest is the extreme.
        assert_eq!(extremes.busiest(), Some(903));
        assert_eq!(extremes.fastest(), Some(98.0));
        assert_eq!(
            (extremes.busiest.capacity(), extremes.fastest.capacity()),
            capacity
        );
    }

    proptest::proptest! {
        // The shortcut that skips a call with nothing to do against an advance that always
        // does the whole work: the same extremes after every call, over buckets of random
        // counts and means, clocks that dwell in a bucket or jump several widths.
        #[test]
        fn skipping_when_nothing_is_due_changes_no_reading(
            size in 1usize..6,
            width in 1u64..50,
            steps in proptest::collection::vec((0u64..3, 0u64..120, 0u64..9, 0u64..500), 1..200),
        ) {
            let (mut quick, mut whole) = (Extremes::new(size, width), Extremes::new(size, width));
            let (mut now, mut start) = (0u64, 0u64);
            for (rolls, dwell, count, sum) in steps {
                // The window's newest bucket moves on only when written at a later bucket.
                if rolls > 0 {
                    start = now / width * width;
                }
                now += dwell % (2 * width);
                let newest = total(sum * count, count);
                quick.advance(now, start, &newest);
                whole.catch_up(now, start, &newest);
                proptest::prop_assert_eq!(quick.busiest(), whole.busiest());
                proptest::prop_assert_eq!(quick.fastest(), whole.fastest());
            }
        }
    }
}
