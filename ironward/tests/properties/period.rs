//! Properties of `period`, against a naive model: a list of every period opened, with the
//! events counted in each, in 128-bit arithmetic.

use std::time::Duration;

use ironward::{Period, Quota};
use proptest::prelude::*;

use super::strategies::{Clock, Op, backwards_reads_as_latest, op, span, step};

/// One period the model opened.
#[derive(Debug, Default)]
struct Opened {
    start: u64,
    events: u64,
    admitted: u64,
    hits: u64,
}

/// The naive model: go-zero's PeriodLimit as a list of the periods it opened.
struct Model {
    quota: u32,
    period: u64,
    align: bool,
    opened: Vec<Opened>,
}

impl Model {
    /// The period open at `t`, if any: `t < start + period`, summed without overflow.
    fn open(&self, t: u64) -> Option<&Opened> {
        self.opened
            .last()
            .filter(|p| u128::from(t) < u128::from(p.start) + u128::from(self.period))
    }

    fn take(&mut self, t: u64) -> Quota {
        if self.open(t).is_none() {
            let start = if self.align { t - t % self.period } else { t };
            self.opened.push(Opened {
                start,
                ..Opened::default()
            });
        }
        let quota = u64::from(self.quota);
        let p = self.opened.last_mut().expect("a period is open");
        p.events += 1;
        let answer = if p.events < quota {
            Quota::Under
        } else if p.events == quota {
            Quota::Hit
        } else {
            Quota::Over
        };
        if answer != Quota::Over {
            p.admitted += 1;
        }
        if answer == Quota::Hit {
            p.hits += 1;
        }
        answer
    }

    fn left(&self, t: u64) -> u32 {
        match self.open(t) {
            Some(p) => u64::from(self.quota).saturating_sub(p.events) as u32,
            None => self.quota,
        }
    }

    fn next(&self, t: u64) -> Duration {
        match self.open(t) {
            Some(p) => {
                let end = u128::from(p.start) + u128::from(self.period);
                Duration::from_nanos((end - u128::from(t)) as u64)
            }
            None => Duration::ZERO,
        }
    }
}

/// A period made by `Period::aligned` when `align` is set, else by `Period::new`.
fn made(quota: u32, period: Duration, align: bool) -> Period {
    if align {
        Period::aligned(quota, period)
    } else {
        Period::new(quota, period)
    }
}

proptest! {
    // Every answer matches the naive model fed the latest-seen times, and no period admits
    // more than `quota` events (Under or Hit), with exactly one Hit once the quota is reached.
    #[test]
    fn matches_a_naive_model_and_never_admits_more_than_the_quota_per_period(
        quota in 0..8_u32,
        period in span(),
        align in any::<bool>(),
        ops in prop::collection::vec((step(3_000), op()), 1..200),
    ) {
        let mut limit = made(quota, period, align);
        let period = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1);
        let mut model = Model { quota, period, align, opened: Vec::new() };
        let mut clock = Clock::new(0);
        for (step, op) in ops {
            let now = clock.read(step);
            match op {
                Op::Take => prop_assert_eq!(limit.take(now), model.take(clock.change(now))),
                Op::Left => prop_assert_eq!(limit.left(now), model.left(clock.query(now))),
                Op::Next => prop_assert_eq!(limit.next(now), model.next(clock.query(now))),
            }
        }
        for p in &model.opened {
            prop_assert!(p.admitted <= u64::from(quota), "{:?}", p);
            prop_assert_eq!(p.admitted, p.events.min(u64::from(quota)));
            prop_assert_eq!(p.hits, u64::from(quota != 0 && p.events >= u64::from(quota)));
            if align {
                prop_assert_eq!(p.start % period, 0);
            }
        }
    }

    // A `now` earlier than one already seen (by `take`) gets the same answer as the latest seen:
    // a clock that steps back never reopens a period.
    #[test]
    fn a_clock_going_backwards_reads_as_the_latest_seen(
        quota in 0..6_u32,
        period in span(),
        align in any::<bool>(),
        ops in prop::collection::vec((step(3_000), op()), 1..200),
    ) {
        backwards_reads_as_latest(made(quota, period, align), ops)?;
    }

    // Hostile quotas, periods and readings: nothing panics, `left` stays within the quota
    // and `next` within the period.
    #[test]
    fn no_input_makes_a_period_panic(
        quota in prop_oneof![Just(0), Just(1), Just(u32::MAX), any::<u32>()],
        period in span(),
        align in any::<bool>(),
        ops in prop::collection::vec((step(u64::MAX), op()), 1..100),
    ) {
        let mut limit = made(quota, period, align);
        let longest = period.max(Duration::from_nanos(1));
        let mut clock = Clock::new(0);
        for (step, op) in ops {
            let now = clock.read(step);
            match op {
                Op::Take => {
                    let answer = limit.take(now);
                    let left = limit.left(now);
                    prop_assert_eq!(left > 0, answer == Quota::Under, "{:?} with {} left", answer, left);
                }
                Op::Left | Op::Next => {
                    prop_assert!(limit.left(now) <= quota);
                    prop_assert!(limit.next(now) <= longest);
                }
            }
        }
    }
}
