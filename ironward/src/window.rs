//! The rolling window the breaker and the shedder read.

use alloc::vec::Vec;
use core::time::Duration;

use crate::clock::nanos;

mod tally;

pub use tally::{Outcome, Tally, Total};

/// The most buckets a window holds: a larger size is read as this.
///
/// A window's buckets are allocated at once, so a size taken as given would let a typo (or
/// `usize::MAX`) abort the process on an allocation it can never make. 65 536 buckets is far
/// past any window worth reading (go-zero's breaker uses 40, its shedder 50), and at the
/// breaker's 32 bytes a bucket is 2 MiB.
pub(crate) const MAX_SIZE: usize = 65_536;

/// A rolling window: `size` buckets that together cover the last `window` of time, the
/// oldest dropping off as time moves on.
///
/// The bucket type is the caller's: the [`SreBreaker`](crate::SreBreaker) keeps a
/// [`Tally`](crate::Tally) of outcomes per bucket, the [`Shedder`](crate::Shedder) a
/// [`Total`](crate::Total) of response times; any type with a `Default` can be a bucket, and
/// the default is what a bucket is cleared back to. This is go-zero's
/// `core/collection/rollingwindow.go`, with the clock passed in.
///
/// Bucket boundaries lie on a grid fixed at creation (`start + k·width`), so buckets keep
/// their width instead of drifting with the arrival time of each write. Time never moves on
/// its own: writing at a later `now` ([`slot`](Window::slot)) clears the buckets the gap swept
/// past; reading at a later `now` ([`each`](Window::each), [`each_past`](Window::each_past))
/// skips them without clearing, so a window nobody writes to still ages out, and two reads at
/// the same `now` agree. Data written in a bucket that starts at `T` is visible until
/// `T + size·width`, exclusive.
///
/// A `now` earlier than the start of the newest bucket is read as falling in it, so a clock
/// that steps backwards never writes into, or reads back, a bucket that has gone. A window
/// holds 1 to 65 536 buckets: a size outside that is read as the nearest end, so that no size
/// makes [`new`](Window::new) panic or abort on an allocation. `Clone` copies every bucket:
/// the clone and the original then age independently.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::Window;
///
/// let ms = Duration::from_millis;
/// // Three buckets of 50 ms each.
/// let mut window = Window::<u64>::new(3, ms(150), ms(0));
/// *window.slot(ms(0)) += 1;
/// *window.slot(ms(60)) += 2;
///
/// let mut seen = Vec::new();
/// window.each(ms(60), |b| seen.push(*b));
/// assert_eq!(seen, [0, 1, 2]);
///
/// // Leaving out the bucket 60 ms falls in, which has seen only part of its time.
/// seen.clear();
/// window.each_past(ms(60), |b| seen.push(*b));
/// assert_eq!(seen, [0, 1]);
///
/// // At 160 ms the first write has left the window; reading did not clear anything.
/// seen.clear();
/// window.each(ms(160), |b| seen.push(*b));
/// assert_eq!(seen, [2]);
/// ```
#[derive(Debug, Clone)]
pub struct Window<B> {
    buckets: Vec<B>,
    /// Width of one bucket, in nanoseconds (at least 1).
    width: u64,
    /// Index of the newest bucket.
    head: usize,
    /// Where the newest bucket starts, in nanoseconds on the caller's clock.
    start: u64,
}

impl<B: Default> Window<B> {
    /// An empty window of `size` buckets spanning `window`, its first bucket opening at
    /// `now`.
    ///
    /// Each bucket is `window / size` wide, in whole nanoseconds. A `size` below 1 is raised
    /// to 1 and one above 65 536 lowered to 65 536; a width below 1 ns is raised to 1 ns.
    /// Memory is `size` buckets, allocated here and never again.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Window;
    ///
    /// let window = Window::<u64>::new(usize::MAX, Duration::from_secs(65_536), Duration::ZERO);
    /// assert_eq!(window.size(), 65_536);
    /// assert_eq!(window.width(), Duration::from_secs(1));
    /// ```
    pub fn new(size: usize, window: Duration, now: Duration) -> Self {
        let (size, width) = grid(size, window);
        let mut buckets = Vec::with_capacity(size);
        buckets.resize_with(size, B::default);
        Self {
            buckets,
            width,
            head: 0,
            start: nanos(now),
        }
    }

    /// The bucket `now` falls in, for the caller to add to.
    ///
    /// The buckets the gap since the last write swept past are cleared first, and the
    /// newest bucket's start is snapped to the grid.
    #[must_use = "the slot is for adding to; asking for it only clears the buckets that have ended"]
    pub fn slot(&mut self, now: Duration) -> &mut B {
        self.slot_at(nanos(now))
    }

    /// [`slot`](Window::slot) with `now` in nanoseconds.
    pub(crate) fn slot_at(&mut self, now: u64) -> &mut B {
        self.slot_clearing(now, |_| {})
    }

    /// [`slot_at`](Window::slot_at), showing `gone` each bucket before it is cleared, so an
    /// owner that keeps totals over the window can take the bucket out of them.
    #[inline]
    pub(crate) fn slot_clearing(&mut self, now: u64, gone: impl FnMut(&B)) -> &mut B {
        let since = now.saturating_sub(self.start);
        // Most writes fall in the newest bucket: a comparison settles that, inline, and the
        // sweep past ended buckets stays out of line.
        if since >= self.width {
            self.sweep(since, gone);
        }
        &mut self.buckets[self.head]
    }

    /// Keeps the newest `size` buckets (read as [`new`](Window::new) reads it) on the same
    /// grid: the window first moves to `now` as [`slot`](Window::slot) does, clearing the
    /// buckets that have ended, then drops its oldest buckets, or adds empty ones older than
    /// them, so that the newest bucket, its start and its width stay as they are.
    pub(crate) fn resize(&mut self, size: usize, now: u64) {
        let size = size.clamp(1, MAX_SIZE);
        self.slot_at(now);
        let old = self.buckets.len();
        let keep = old.min(size);
        let mut buckets = Vec::with_capacity(size);
        buckets.resize_with(size - keep, B::default);
        // The `keep` buckets ending at the head, oldest first.
        for back in (0..keep).rev() {
            let at = (self.head + old - back) % old;
            buckets.push(core::mem::take(&mut self.buckets[at]));
        }
        self.buckets = buckets;
        self.head = size - 1;
    }

    /// Moves the newest bucket on by the whole widths in `since` (at least one), clearing
    /// the buckets passed after showing each to `gone`.
    #[inline(never)]
    fn sweep(&mut self, since: u64, mut gone: impl FnMut(&B)) {
        let widths = since / self.width;
        let size = self.buckets.len();
        let span = self.span(widths);
        for step in 1..=span {
            let bucket = &mut self.buckets[(self.head + step) % size];
            gone(bucket);
            *bucket = B::default();
        }
        self.head = (self.head + span) % size;
        // `widths · width` is at most `since`: no overflow, and never past `now`.
        self.start += widths * self.width;
    }
}

impl<B> Window<B> {
    /// Visits every bucket still inside the window at `now`, the one `now` falls in included,
    /// oldest first, without changing anything.
    ///
    /// This is how go-zero's breaker reads its window (`core/breaker/googlebreaker.go`): the
    /// current bucket's calls count as soon as they are made.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Window;
    ///
    /// let ms = Duration::from_millis;
    /// let mut window = Window::<u64>::new(3, ms(150), ms(0));
    /// *window.slot(ms(10)) += 1;
    /// *window.slot(ms(110)) += 4;
    /// let mut sum = 0;
    /// window.each(ms(120), |b| sum += b);
    /// assert_eq!(sum, 5);
    /// ```
    pub fn each(&self, now: Duration, f: impl FnMut(&B)) {
        self.visit(nanos(now), true, f);
    }

    /// Visits the buckets still inside the window at `now` except the one `now` falls in,
    /// oldest first, without changing anything: go-zero's `IgnoreCurrentBucket`.
    ///
    /// The bucket `now` falls in has seen only part of its time, and a reading that takes
    /// the busiest or the fastest bucket should not compare a partial one against whole ones.
    /// go-zero's shedder reads its windows this way (`core/load/adaptiveshedder.go`). When
    /// `now` is past the newest bucket written, the bucket it falls in holds nothing yet, and
    /// the visit is the same as [`each`](Window::each)'s.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use ironward::Window;
    ///
    /// let ms = Duration::from_millis;
    /// let mut window = Window::<u64>::new(3, ms(150), ms(0));
    /// *window.slot(ms(10)) += 1;
    /// *window.slot(ms(110)) += 4;
    /// let mut seen = Vec::new();
    /// window.each_past(ms(120), |b| seen.push(*b));
    /// assert_eq!(seen, [1, 0]);
    /// ```
    pub fn each_past(&self, now: Duration, f: impl FnMut(&B)) {
        self.visit(nanos(now), false, f);
    }

    /// [`each`](Window::each) (with `current`) or [`each_past`](Window::each_past)
    /// (without), with `now` in nanoseconds.
    pub(crate) fn visit(&self, now: u64, current: bool, f: impl FnMut(&B)) {
        let size = self.buckets.len();
        let since = now.saturating_sub(self.start);
        let span = if since < self.width {
            0
        } else {
            self.span(since / self.width)
        };
        // The `count` buckets ending at the head, or just before it when the head is the
        // bucket `now` falls in and is left out.
        let (count, newest) = if span == 0 && !current {
            (size - 1, self.head + size - 1)
        } else {
            (size - span, self.head)
        };
        if count == 0 {
            return;
        }
        // Oldest first: the ring read as at most two slices, with no division per bucket.
        let oldest = (newest + size + 1 - count) % size;
        let (front, back) = if oldest + count <= size {
            (&self.buckets[oldest..oldest + count], &self.buckets[..0])
        } else {
            (
                &self.buckets[oldest..],
                &self.buckets[..oldest + count - size],
            )
        };
        front.iter().chain(back).for_each(f);
    }

    /// The newest bucket and where it starts, in nanoseconds: the one the last write went to
    /// (or the first, before any), which may have ended since.
    pub(crate) fn newest(&self) -> (u64, &B) {
        (self.start, &self.buckets[self.head])
    }

    /// The width of one bucket, in nanoseconds.
    pub(crate) fn width_nanos(&self) -> u64 {
        self.width
    }

    /// Whether [`new`](Window::new) given `size` and `window` would lay out the same buckets
    /// as this window has: as many, as wide.
    pub(crate) fn fits(&self, size: usize, window: Duration) -> bool {
        grid(size, window) == (self.buckets.len(), self.width)
    }

    /// The buckets a gap of `widths` whole widths sweeps past: all of them past `size`.
    fn span(&self, widths: u64) -> usize {
        let size = self.buckets.len();
        if widths >= size as u64 {
            size
        } else {
            widths as usize
        }
    }

    /// How many buckets the window has.
    #[must_use]
    pub fn size(&self) -> usize {
        self.buckets.len()
    }

    /// How much time one bucket covers.
    #[must_use]
    pub fn width(&self) -> Duration {
        Duration::from_nanos(self.width)
    }
}

/// The bucket count and width, in nanoseconds, of a window of `size` buckets over `window`:
/// the count held to 1 ..= 65 536, the width at least 1 ns.
pub(crate) fn grid(size: usize, window: Duration) -> (usize, u64) {
    let size = size.clamp(1, MAX_SIZE);
    (size, (nanos(window) / size as u64).max(1))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use std::vec::Vec;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn sums(window: &Window<u64>, now: Duration, current: bool) -> Vec<u64> {
        let mut seen = Vec::new();
        if current {
            window.each(now, |b| seen.push(*b));
        } else {
            window.each_past(now, |b| seen.push(*b));
        }
        seen
    }

    fn add(window: &mut Window<u64>, now: Duration, values: &[u64]) {
        for v in values {
            *window.slot(now) += v;
        }
    }

    // go-zero rollingwindow_test.go, TestRollingWindowAdd: three buckets of 50 ms.
    #[test]
    fn reproduces_go_zero_rolling_window_add() {
        let mut w = Window::new(3, ms(150), ms(0));
        assert_eq!(sums(&w, ms(0), true), [0, 0, 0]);
        add(&mut w, ms(0), &[1]);
        assert_eq!(sums(&w, ms(0), true), [0, 0, 1]);
        add(&mut w, ms(50), &[2, 3]);
        assert_eq!(sums(&w, ms(50), true), [0, 1, 5]);
        add(&mut w, ms(100), &[4, 5, 6]);
        assert_eq!(sums(&w, ms(100), true), [1, 5, 15]);
        add(&mut w, ms(150), &[7]);
        assert_eq!(sums(&w, ms(150), true), [5, 15, 7]);
    }

    // go-zero rollingwindow_test.go, TestRollingWindowReset with IgnoreCurrentBucket.
    #[test]
    fn reproduces_go_zero_rolling_window_ignoring_the_current_bucket() {
        let mut w = Window::new(3, ms(150), ms(0));
        add(&mut w, ms(0), &[1]);
        assert_eq!(sums(&w, ms(50), false), [0, 1]);
        assert_eq!(sums(&w, ms(100), false), [1]);
        assert_eq!(sums(&w, ms(150), false), Vec::<u64>::new());
    }

    // go-zero rollingwindow_test.go, TestRollingWindowReduce/TestRollingWindowBucketTimeBoundary:
    // buckets of 30 ms, writes that land inside buckets rather than on their edges.
    #[test]
    fn reproduces_go_zero_rolling_window_bucket_time_boundary() {
        let mut w = Window::new(3, ms(90), ms(0));
        add(&mut w, ms(0), &[1]);
        assert_eq!(sums(&w, ms(0), true), [0, 0, 1]);
        add(&mut w, ms(45), &[2, 3]);
        assert_eq!(sums(&w, ms(45), true), [0, 1, 5]);
        add(&mut w, ms(65), &[4, 5, 6]);
        assert_eq!(sums(&w, ms(65), true), [1, 5, 15]);
        add(&mut w, ms(165), &[7, 8, 9]);
        assert_eq!(sums(&w, ms(165), true), [0, 0, 24]);
    }

    #[test]
    fn ignoring_the_current_bucket_at_its_own_time_shows_the_older_ones() {
        let mut w = Window::new(3, ms(150), ms(0));
        add(&mut w, ms(0), &[1]);
        add(&mut w, ms(50), &[2]);
        assert_eq!(sums(&w, ms(60), false), [0, 1]);
        assert_eq!(sums(&w, ms(60), true), [0, 1, 2]);
    }

    #[test]
    fn boundaries_stay_on_the_grid_fixed_at_creation() {
        let mut w = Window::new(4, ms(40), ms(3));
        add(&mut w, ms(27), &[1]);
        // The bucket written at 27 ms started at 23 ms, so it is visible until 63 ms.
        assert_eq!(sums(&w, Duration::from_nanos(62_999_999), true), [1]);
        assert_eq!(sums(&w, ms(63), true), Vec::<u64>::new());
        // Reading did not clear it; writing at 63 ms does.
        add(&mut w, ms(63), &[5]);
        assert_eq!(sums(&w, ms(63), true), [0, 0, 0, 5]);
    }

    #[test]
    fn data_is_visible_for_exactly_size_widths() {
        let mut w = Window::new(40, Duration::from_secs(10), ms(0));
        add(&mut w, ms(0), &[1]);
        assert_eq!(
            sums(&w, Duration::from_nanos(9_999_999_999), true)
                .iter()
                .sum::<u64>(),
            1
        );
        assert_eq!(sums(&w, ms(10_000), true).iter().sum::<u64>(), 0);
    }

    #[test]
    fn a_clock_going_backwards_writes_into_the_newest_bucket() {
        let mut w = Window::new(3, ms(150), ms(100));
        add(&mut w, ms(160), &[1]);
        add(&mut w, ms(20), &[2]);
        assert_eq!(sums(&w, ms(160), true), [0, 0, 3]);
        assert_eq!(sums(&w, ms(0), true), [0, 0, 3]);
    }

    #[test]
    fn sizes_and_widths_below_their_minimum_are_raised() {
        let w = Window::<u64>::new(0, Duration::ZERO, ms(0));
        assert_eq!(w.size(), 1);
        assert_eq!(w.width(), Duration::from_nanos(1));
        let w = Window::<u64>::new(10, Duration::from_nanos(5), ms(0));
        assert_eq!(w.width(), Duration::from_nanos(1));
    }

    #[test]
    fn sizes_above_the_maximum_are_lowered_to_it() {
        let w = Window::<u64>::new(usize::MAX, Duration::from_secs(10), ms(0));
        assert_eq!(w.size(), MAX_SIZE);
        assert_eq!(w.width(), Duration::from_nanos(10_000_000_000 / 65_536));
        // A size whose buckets could never be allocated (2^61 bytes) does not abort.
        let mut w = Window::<u8>::new(1 << 61, Duration::MAX, ms(0));
        assert_eq!(w.size(), MAX_SIZE);
        *w.slot(ms(1)) += 1;
        let mut seen = 0;
        w.each(ms(1), |b| seen += u64::from(*b));
        assert_eq!(seen, 1);
        assert_eq!(Window::<u64>::new(MAX_SIZE, ms(1), ms(0)).size(), MAX_SIZE);
        assert_eq!(
            Window::<u64>::new(MAX_SIZE + 1, ms(1), ms(0)).size(),
            MAX_SIZE
        );
    }

    #[test]
    fn resizing_keeps_the_newest_buckets_on_the_same_grid() {
        let mut w = Window::new(4, ms(40), ms(0));
        for (at, value) in [(0, 1), (10, 2), (20, 3), (35, 4)] {
            add(&mut w, ms(at), &[value]);
        }
        // Fewer buckets: the oldest go, the newest keeps its start (30 ms) and width.
        let mut fewer = w.clone();
        fewer.resize(2, nanos(ms(35)));
        assert_eq!((fewer.size(), fewer.width()), (2, ms(10)));
        assert_eq!(sums(&fewer, ms(35), true), [3, 4]);
        assert_eq!(sums(&fewer, ms(45), true), [4]);
        add(&mut fewer, ms(41), &[5]);
        assert_eq!(sums(&fewer, ms(41), true), [4, 5]);
        // More buckets: empty ones are added before the oldest, and every bucket stays
        // until the longer window has passed it.
        let mut more = w.clone();
        more.resize(6, nanos(ms(35)));
        assert_eq!(sums(&more, ms(35), true), [0, 0, 1, 2, 3, 4]);
        assert_eq!(sums(&more, ms(45), true), [0, 1, 2, 3, 4]);
        // Resizing moves the window to `now` first: at 55 ms the buckets of 0 and 10 are
        // gone from the four-bucket window, and a larger window does not bring them back.
        let mut later = w.clone();
        later.resize(8, nanos(ms(55)));
        assert_eq!(sums(&later, ms(55), true), [0, 0, 0, 0, 3, 4, 0, 0]);
    }

    #[test]
    fn a_window_fits_the_sizes_new_would_read_the_same() {
        let w = Window::<u64>::new(40, Duration::from_secs(10), ms(0));
        assert!(w.fits(40, Duration::from_secs(10)));
        // The same 250 ms buckets, the extra nanosecond lost to the division.
        assert!(w.fits(40, Duration::from_secs(10) + Duration::from_nanos(1)));
        assert!(!w.fits(41, Duration::from_secs(10)));
        assert!(!w.fits(40, Duration::from_secs(20)));
        let huge = Window::<u64>::new(usize::MAX, Duration::ZERO, ms(0));
        assert!(huge.fits(MAX_SIZE, Duration::ZERO));
        assert!(huge.fits(MAX_SIZE + 1, Duration::from_nanos(1)));
    }

    #[test]
    fn a_single_bucket_window_reads_nothing_when_the_current_bucket_is_left_out() {
        let mut w = Window::new(1, ms(10), ms(0));
        add(&mut w, ms(0), &[4]);
        assert_eq!(sums(&w, ms(5), true), [4]);
        assert_eq!(sums(&w, ms(5), false), Vec::<u64>::new());
        assert_eq!(sums(&w, ms(10), true), Vec::<u64>::new());
    }

    #[test]
    fn times_near_the_end_of_the_clock_do_not_overflow() {
        let mut w = Window::new(7, Duration::MAX, Duration::MAX);
        add(&mut w, Duration::MAX, &[3]);
        assert_eq!(sums(&w, Duration::MAX, true).iter().sum::<u64>(), 3);
        let mut w = Window::new(5, ms(5), ms(0));
        add(&mut w, Duration::MAX, &[1]);
        add(&mut w, ms(1), &[1]);
        assert_eq!(sums(&w, Duration::MAX, true).iter().sum::<u64>(), 2);
    }
}
