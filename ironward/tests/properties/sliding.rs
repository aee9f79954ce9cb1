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

    /// Saturating: a log retuned to a lower quota may hold more than it.
    fn left(&self, t: u64) -> u32 {
        self.quota.saturating_sub(self.inside(t).len() as u32)
    }

    fn next(&self, t: u64) -> Duration {
        let inside = self.inside(t);
        if self.quota == 0 {
            Duration::MAX
        } else if inside.len() < self.quota as usize {
            Duration::ZERO
        } else {
            // Room comes when fewer than `quota` are left: when the `quota`-th newest leaves,
            // which is the oldest unless a lower quota left the log holding more.
            let mut inside = inside;
            inside.sort_unstable();
            let oldest = inside[inside.len() - self.quota as usize];
            // In u128: `oldest + window` can pass u64::MAX, the answer cannot.
            let wait = u128::from(oldest) + u128::from(self.window) - u128::from(t);
            Duration::from_nanos(wait as u64)
        }
    }

    /// What `Sliding::retune` keeps at `t`: the newest `quota` of the stamps inside the old
    /// window, each then counted under the new one.
    fn retune(&mut self, quota: u32, window: u64, t: u64) {
        let mut kept = self.inside(t);
        kept.sort_unstable();
        let excess = kept.len().saturating_sub(quota as usize);
        kept.drain(..excess);
        *self = Log {
            quota,
            window,
            stamps: kept,
        };
    }
}

/// A window as `Sliding::new` reads it, in nanoseconds.
fn read(window: Duration) -> u64 {
    u64::try_from(window.as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// What a sliding log is asked, or a new policy.
#[derive(Debug, Clone, Copy)]
enum Act {
    Ask(Op),
    Retune(u32, Duration),
}

/// Mostly questions, with retunes to hostile policies mixed in.
fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        12 => op().prop_map(Act::Ask),
        1 => (prop_oneof![0..8_u32, Just(u32::MAX)], span()).prop_map(|(q, w)| Act::Retune(q, w)),
    ]
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

    // Retuning to the quota and window the log already has, as read (a zero window and a
    // nanosecond are the same), changes nothing: every later answer is the un-retuned
    // twin's, a clock going backwards included.
    #[test]
    fn retuning_to_the_same_policy_changes_nothing(
        quota in 0..8_u32,
        window in span(),
        ops in prop::collection::vec((step(3_000), op(), any::<bool>()), 1..200),
    ) {
        let mut limit = Sliding::new(quota, window);
        let mut twin = limit.clone();
        let same = if read(window) == 1 { Duration::ZERO } else { Duration::from_nanos(read(window)) };
        let mut clock = Clock::new(0);
        for (step, op, retune) in ops {
            let now = clock.read(step);
            if retune {
                limit.retune(quota, same, now);
            }
            match op {
                Op::Take => prop_assert_eq!(limit.take(now), twin.take(now)),
                Op::Left => prop_assert_eq!(limit.left(now), twin.left(now)),
                Op::Next => prop_assert_eq!(limit.next(now), twin.next(now)),
            }
        }
    }

    // Through any run of questions and retunes to any policy, every answer is a naive log's
    // that keeps, at each retune, the newest `quota` of the stamps inside the old window.
    #[test]
    fn a_retuned_log_answers_as_a_naive_log_of_the_stamps_it_kept(
        quota in 0..8_u32,
        window in span(),
        acts in prop::collection::vec((step(3_000), act()), 1..200),
    ) {
        let mut limit = Sliding::new(quota, window);
        let mut log = Log { quota, window: read(window), stamps: Vec::new() };
        let mut clock = Clock::new(0);
        for (step, act) in acts {
            let now = clock.read(step);
            match act {
                Act::Retune(quota, window) => {
                    limit.retune(quota, window, now);
                    if (quota, read(window)) != (log.quota, log.window) {
                        log.retune(quota, read(window), clock.change(now));
                    }
                    prop_assert_eq!(limit.quota(), quota);
                    prop_assert_eq!(limit.window(), Duration::from_nanos(read(window)));
                }
                Act::Ask(Op::Take) => prop_assert_eq!(limit.take(now), log.take(clock.change(now))),
                Act::Ask(Op::Left) => prop_assert_eq!(limit.left(now), log.left(clock.query(now))),
                Act::Ask(Op::Next) => prop_assert_eq!(limit.next(now), log.next(clock.query(now))),
            }
        }
    }

    // After lowering the quota (and keeping or shortening the window) every answer is that
    // of a log holding every event ever admitted under the new policy: keeping only the
    // newest `quota` stamps loses nothing. No window-long stretch that ends at an event
    // admitted after the retune holds more than the new quota.
    #[test]
    fn after_a_lower_quota_no_window_admits_more_than_it(
        quota in 1..8_u32,
        lower in 0..8_u32,
        window in 1..5_000_u64,
        shorter in 1..5_000_u64,
        before in prop::collection::vec((step(1_000), op()), 0..100),
        at in step(1_000),
        after in prop::collection::vec((step(1_000), op()), 1..150),
    ) {
        let lower = lower.min(quota - 1);
        let shorter = shorter.min(window);
        let mut limit = Sliding::new(quota, Duration::from_nanos(window));
        let mut log = Log { quota, window, stamps: Vec::new() };
        let mut clock = Clock::new(0);
        for (step, op) in before {
            let now = clock.read(step);
            if let Op::Take = op {
                prop_assert_eq!(limit.take(now), log.take(clock.change(now)));
            }
        }
        let now = clock.read(at);
        limit.retune(lower, Duration::from_nanos(shorter), now);
        let t = clock.change(now);
        // Every stamp ever admitted, with the new policy: nothing forgotten.
        log.quota = lower;
        log.window = shorter;
        let mut admitted_after = Vec::new();
        for (step, op) in after {
            let now = clock.read(step);
            match op {
                Op::Take => {
                    let at = clock.change(now);
                    let answer = limit.take(now);
                    prop_assert_eq!(answer, log.take(at));
                    if answer {
                        admitted_after.push(at);
                    }
                }
                Op::Left => prop_assert_eq!(limit.left(now), log.left(clock.query(now))),
                Op::Next => prop_assert_eq!(limit.next(now), log.next(clock.query(now))),
            }
        }
        for &end in &admitted_after {
            prop_assert!(end >= t);
            let inside = log.stamps.iter().filter(|&&s| s <= end && end - s < shorter).count();
            prop_assert!(inside <= lower as usize, "{} in the window ending {}", inside, end);
        }
    }

    // After raising the quota (any window), the log answers as a fresh limiter of the new
    // policy fed the stamps it kept (those inside the old window at the retune): nothing
    // the new policy would admit is refused.
    #[test]
    fn after_a_higher_quota_nothing_the_new_policy_admits_is_refused(
        quota in 0..6_u32,
        higher in 0..8_u32,
        window in span(),
        retuned in span(),
        before in prop::collection::vec((step(3_000), op()), 0..100),
        at in step(3_000),
        after in prop::collection::vec((step(3_000), op()), 1..150),
    ) {
        let higher = higher.max(quota);
        prop_assume!((higher, read(retuned)) != (quota, read(window)));
        let mut limit = Sliding::new(quota, window);
        let mut log = Log { quota, window: read(window), stamps: Vec::new() };
        let mut clock = Clock::new(0);
        for (step, op) in before {
            let now = clock.read(step);
            if let Op::Take = op {
                prop_assert_eq!(limit.take(now), log.take(clock.change(now)));
            }
        }
        let now = clock.read(at);
        limit.retune(higher, retuned, now);
        let t = clock.change(now);
        let mut kept = log.inside(t);
        kept.sort_unstable();
        let mut fresh = Sliding::new(higher, retuned);
        for &stamp in &kept {
            prop_assert!(fresh.take(Duration::from_nanos(stamp)), "a kept stamp is refused");
        }
        for (step, op) in after {
            let now = clock.read(step);
            let at = |t| Duration::from_nanos(t);
            match op {
                Op::Take => prop_assert_eq!(limit.take(now), fresh.take(at(clock.change(now)))),
                Op::Left => prop_assert_eq!(limit.left(now), fresh.left(at(clock.query(now)))),
                Op::Next => prop_assert_eq!(limit.next(now), fresh.next(at(clock.query(now)))),
            }
        }
    }
}

proptest! {
    // `take` is `check` with the reason discarded: twins, one asked through each, decide
    // alike on every event, retunes to hostile policies included. A refusal's reason shows
    // a refusing state, the window holding at least the quota, with the count and the wait
    // of a naive log of every admitted stamp.
    #[test]
    fn check_decides_as_take_and_its_reason_shows_a_refusal(
        quota in 0..8_u32,
        window in span(),
        acts in prop::collection::vec((step(3_000), act()), 1..200),
    ) {
        let mut limit = Sliding::new(quota, window);
        let mut twin = limit.clone();
        let mut log = Log { quota, window: read(window), stamps: Vec::new() };
        let mut clock = Clock::new(0);
        for (step, act) in acts {
            let now = clock.read(step);
            match act {
                Act::Retune(quota, window) => {
                    limit.retune(quota, window, now);
                    twin.retune(quota, window, now);
                    // A retune to the policy in force changes nothing, not even the clock.
                    if (quota, read(window)) != (log.quota, log.window) {
                        log.retune(quota, read(window), clock.change(now));
                    }
                }
                Act::Ask(Op::Take) => {
                    let t = clock.change(now);
                    let admitted = log.take(t);
                    match (limit.take(now), twin.check(now)) {
                        (true, Ok(())) => prop_assert!(admitted),
                        (false, Err(reason)) => {
                            prop_assert!(!admitted);
                            prop_assert!(reason.count >= reason.quota, "{:?}", reason);
                            prop_assert_eq!(reason.quota, log.quota);
                            prop_assert_eq!(reason.count as usize, log.inside(t).len());
                            prop_assert_eq!(reason.next, log.next(t));
                            prop_assert_eq!(reason.next, twin.next(now));
                            prop_assert!(reason.next > Duration::ZERO);
                        }
                        (a, b) => prop_assert!(false, "take {}, check {:?}", a, b),
                    }
                }
                Act::Ask(_) => {}
            }
        }
    }
}
