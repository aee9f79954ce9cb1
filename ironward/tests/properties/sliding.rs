//! Properties of `sliding`, against a naive log: a list of every admitted stamp, searched
//! in full each time.

use std::time::Duration;

use ironward::Sliding;
use proptest::prelude::*;

use super::strategies::{Clock, Op, backwards_reads_as_latest, op, span, step};

/// The naive log: every admitted stamp, and a full scan for each question.
struct Log {
    quota: u32,
    window: u64,
    stamps: Vec<u64>,
}

impl Log {
    /// Admitted stamps inside `(t − window, t]`.
    fn inside(&self, t: u64) -> Vec<u64> {
        self.stamps
            .iter()
            .copied()
            .filter(|&s| s <= t && t - s < self.window)
            .collect()
    }

    fn take(&mut self, t: u64) -> bool {
        let admit = self.inside(t).len() < self.quota as usize;
        if admit {
            self.stamps.push(t);
        }
        admit
    }

    fn left(&self, t: u64) -> u32 {
        self.quota - self.inside(t).len() as u32
    }

    fn next(&self, t: u64) -> Duration {
        let inside = self.inside(t);
        if self.quota == 0 {
            Duration::MAX
        } else if inside.len() < self.quota as usize {
            Duration::ZERO
        } else {
            let oldest = inside.iter().min().copied().unwrap_or(t);
            // In u128: `oldest + window` can pass u64::MAX, the answer cannot.
            let wait = u128::from(oldest) + u128::from(self.window) - u128::from(t);
            Duration::from_nanos(wait as u64)
        }
    }
}

proptest! {
    // Every answer matches the naive log fed the latest-seen times, and no window-long
    // stretch ever holds more than `quota` admitted events.
    #[test]
    fn matches_a_naive_log_and_never_admits_more_than_the_quota_in_any_window(
        quota in 0..8_u32,
        window in span(),
        ops in prop::collection::vec((step(3_000), op()), 1..200),
    ) {
        let mut limit = Sliding::new(quota, window);
        let window = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX).max(1);
        let mut log = Log { quota, window, stamps: Vec::new() };
        let mut clock = Clock::new(0);
        for (step, op) in ops {
            let now = clock.read(step);
            match op {
                Op::Take => prop_assert_eq!(limit.take(now), log.take(clock.change(now))),
                Op::Left => prop_assert_eq!(limit.left(now), log.left(clock.query(now))),
                Op::Next => prop_assert_eq!(limit.next(now), log.next(clock.query(now))),
            }
        }
        // Any stretch holding the most events can be slid to end on an admitted stamp.
        for &end in &log.stamps {
            let inside = log.stamps.iter().filter(|&&s| s <= end && end - s < window).count();
            prop_assert!(inside <= quota as usize, "{} in the window ending {}", inside, end);
        }
    }

    // A `now` earlier than one already seen (by `take`) gets the same answer as the latest seen:
    // a clock that steps back never frees room.
    #[test]
    fn a_clock_going_backwards_reads_as_the_latest_seen(
        quota in 0..6_u32,
        window in span(),
        ops in prop::collection::vec((step(3_000), op()), 1..200),
    ) {
        backwards_reads_as_latest(Sliding::new(quota, window), ops)?;
    }

    // Hostile quotas, windows and readings: nothing panics, `left` stays within the quota,
    // and `next` is zero exactly when there is room.
    #[test]
    fn no_input_makes_a_sliding_window_panic(
        quota in prop_oneof![Just(0), Just(1), Just(u32::MAX), any::<u32>()],
        window in span(),
        ops in prop::collection::vec((step(u64::MAX), op()), 1..100),
    ) {
        let mut limit = Sliding::new(quota, window);
        let mut clock = Clock::new(0);
        for (step, op) in ops {
            let now = clock.read(step);
            match op {
                Op::Take => {
                    let before = limit.left(now);
                    let taken = limit.take(now);
                    prop_assert_eq!(taken, before > 0);
                    prop_assert_eq!(limit.left(now), before - u32::from(taken));
                }
                Op::Left | Op::Next => {
                    let left = limit.left(now);
                    prop_assert!(left <= quota);
                    prop_assert_eq!(limit.next(now) == Duration::ZERO, left > 0);
                }
            }
        }
    }
}
