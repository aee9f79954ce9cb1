//! Properties of `period`, against a naive model: a list of every period opened, with the
//! events counted in each, in 128-bit arithmetic.

use std::time::Duration;

use ironward::{Period, Usage};
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
    /// Whether a retune found no period open: the last one has ended for good.
    ended: bool,
}

impl Model {
    /// The period open at `t`, if any: `t < start + period`, summed without overflow.
    fn open(&self, t: u64) -> Option<&Opened> {
        self.opened
            .last()
            .filter(|_| !self.ended)
            .filter(|p| u128::from(t) < u128::from(p.start) + u128::from(self.period))
    }

    /// What `Period::retune` does at `t`: the period open then keeps its events and its
    /// start (moved onto the new grid when aligned), and ends one new period after it.
    fn retune(&mut self, quota: u32, period: u64, t: u64) {
        self.ended = self.open(t).is_none();
        if let Some(p) = self.opened.last_mut().filter(|_| self.align) {
            p.start -= p.start % period;
        }
        self.quota = quota;
        self.period = period;
    }

    fn take(&mut self, t: u64) -> Usage {
        if self.open(t).is_none() {
            let start = if self.align { t - t % self.period } else { t };
            self.ended = false;
            self.opened.push(Opened {
                start,
                ..Opened::default()
            });
        }
        let quota = u64::from(self.quota);
        let p = self.opened.last_mut().expect("a period is open");
        p.events += 1;
        let answer = if p.events < quota {
            Usage::Under
        } else if p.events == quota {
            Usage::Hit
        } else {
            Usage::Over
        };
        if answer != Usage::Over {
            p.admitted += 1;
        }
        if answer == Usage::Hit {
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

/// A period as `Period::new` reads it, in nanoseconds.
fn read(period: Duration) -> u64 {
    u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// What a counter is asked, or a new policy.
#[derive(Debug, Clone, Copy)]
enum Act {
    Ask(Op),
    Retune(u32, Duration),
}

/// Mostly questions, with retunes to hostile policies mixed in.
fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        12 => op().prop_map(Act::Ask),
        1 => (prop_oneof![0..8_u32, Just(u32::MAX)], span()).prop_map(|(q, p)| Act::Retune(q, p)),
    ]
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
        let mut model = Model { quota, period, align, opened: Vec::new(), ended: false };
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
                    prop_assert_eq!(left > 0, answer == Usage::Under, "{:?} with {} left", answer, left);
                }
                Op::Left | Op::Next => {
                    prop_assert!(limit.left(now) <= quota);
                    prop_assert!(limit.next(now) <= longest);
                }
            }
        }
    }

    // Retuning to the quota and period the counter already has, as read (a zero period and
    // a nanosecond are the same), changes nothing: every later answer is the un-retuned
    // twin's, a clock going backwards included.
    #[test]
    fn retuning_to_the_same_policy_changes_nothing(
        quota in 0..8_u32,
        period in span(),
        align in any::<bool>(),
        ops in prop::collection::vec((step(3_000), op(), any::<bool>()), 1..200),
    ) {
        let mut limit = made(quota, period, align);
        let mut twin = limit.clone();
        let same = if read(period) == 1 { Duration::ZERO } else { Duration::from_nanos(read(period)) };
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

    // Through any run of questions and retunes to any policy, every answer is the naive
    // model's: the period open at a retune keeps its count and its start (on the new grid
    // when aligned), one that had ended stays ended, and aligned periods stay on the
    // multiples of the period they were opened or retuned under.
    #[test]
    fn a_retuned_counter_answers_as_the_naive_model(
        quota in 0..8_u32,
        period in span(),
        align in any::<bool>(),
        acts in prop::collection::vec((step(3_000), act()), 1..200),
    ) {
        let mut limit = made(quota, period, align);
        let mut model = Model { quota, period: read(period), align, opened: Vec::new(), ended: false };
        let mut clock = Clock::new(0);
        for (step, act) in acts {
            let now = clock.read(step);
            match act {
                Act::Retune(quota, period) => {
                    limit.retune(quota, period, now);
                    if (quota, read(period)) != (model.quota, model.period) {
                        model.retune(quota, read(period), clock.change(now));
                    }
                    prop_assert_eq!((limit.quota(), limit.period()), (quota, Duration::from_nanos(read(period))));
                }
                Act::Ask(Op::Take) => prop_assert_eq!(limit.take(now), model.take(clock.change(now))),
                Act::Ask(Op::Left) => prop_assert_eq!(limit.left(now), model.left(clock.query(now))),
                Act::Ask(Op::Next) => prop_assert_eq!(limit.next(now), model.next(clock.query(now))),
            }
            if let (true, Some(p)) = (align, model.opened.last()) {
                prop_assert_eq!(p.start % model.period, 0, "{:?}", p);
            }
        }
    }

    // After lowering the quota, the period open at the retune counts what it had already
    // taken: it admits only what is left of the new quota, nothing if that was already
    // reached, and its answers are those of a counter of the new quota that had seen the
    // same events.
    #[test]
    fn after_a_lower_quota_the_open_period_counts_what_it_took(
        quota in 1..10_u32,
        lower in 0..10_u32,
        period in 1..5_000_u64,
        align in any::<bool>(),
        before in prop::collection::vec(step(300), 0..20),
        at in step(300),
        after in prop::collection::vec((step(300), op()), 1..100),
    ) {
        let lower = lower.min(quota - 1);
        let span = Duration::from_nanos(period);
        let mut limit = made(quota, span, align);
        let mut model = Model { quota, period, align, opened: Vec::new(), ended: false };
        let mut clock = Clock::new(0);
        for step in before {
            let now = clock.read(step);
            prop_assert_eq!(limit.take(now), model.take(clock.change(now)));
        }
        let now = clock.read(at);
        limit.retune(lower, span, now);
        let t = clock.change(now);
        let open = model.open(t).map(|p| (p.start, p.events));
        let taken = open.map_or(0, |(_, events)| events);
        let end = open.map(|(start, _)| u128::from(start) + u128::from(period));
        // The same events, counted under the new quota from the start.
        let opened = open.map(|(start, events)| Opened { start, events, ..Opened::default() });
        let mut twin = Model {
            quota: lower,
            period,
            align,
            opened: opened.into_iter().collect(),
            ended: false,
        };
        let mut admitted = 0_u64;
        for (step, op) in after {
            let now = clock.read(step);
            match op {
                Op::Take => {
                    let at = clock.change(now);
                    let answer = limit.take(now);
                    prop_assert_eq!(answer, twin.take(at));
                    // Admitted in the period open at the retune, while it still is.
                    if answer != Usage::Over && end.is_some_and(|end| u128::from(at) < end) {
                        admitted += 1;
                    }
                }
                Op::Left => prop_assert_eq!(limit.left(now), twin.left(clock.query(now))),
                Op::Next => prop_assert_eq!(limit.next(now), twin.next(clock.query(now))),
            }
        }
        prop_assert!(
            admitted <= u64::from(lower).saturating_sub(taken),
            "{} admitted after {} were taken, under a quota of {}", admitted, taken, lower
        );
    }

    // After raising the quota, the period open at the retune counts what it had already
    // taken and admits the difference at once: `left` is the new quota less those events,
    // every event in that period is admitted until they reach the new quota, and every
    // answer is that of a counter of the new quota that had seen the same events. Nothing
    // the new policy admits is refused.
    #[test]
    fn after_a_higher_quota_nothing_the_new_policy_admits_is_refused(
        quota in 0..10_u32,
        more in prop_oneof![8 => 1..10_u32, 1 => Just(u32::MAX)],
        period in 1..5_000_u64,
        align in any::<bool>(),
        before in prop::collection::vec(step(300), 0..20),
        at in step(300),
        after in prop::collection::vec((step(300), op()), 1..100),
    ) {
        let higher = quota.saturating_add(more);
        let span = Duration::from_nanos(period);
        let mut limit = made(quota, span, align);
        let mut model = Model { quota, period, align, opened: Vec::new(), ended: false };
        let mut clock = Clock::new(0);
        for step in before {
            let now = clock.read(step);
            prop_assert_eq!(limit.take(now), model.take(clock.change(now)));
        }
        let now = clock.read(at);
        limit.retune(higher, span, now);
        let t = clock.change(now);
        let open = model.open(t).map(|p| (p.start, p.events));
        let end = open.map(|(start, _)| u128::from(start) + u128::from(period));
        // The difference, at once: the events already taken count against the new quota.
        let taken = open.map_or(0, |(_, events)| events);
        let left = u64::from(higher).saturating_sub(taken);
        prop_assert_eq!(u64::from(limit.left(now)), if open.is_some() { left } else { u64::from(higher) });
        // The same events, counted under the new quota from the start.
        let opened = open.map(|(start, events)| Opened { start, events, ..Opened::default() });
        let mut twin = Model {
            quota: higher,
            period,
            align,
            opened: opened.into_iter().collect(),
            ended: false,
        };
        let mut events = taken;
        for (step, op) in after {
            let now = clock.read(step);
            match op {
                Op::Take => {
                    let at = clock.change(now);
                    let answer = limit.take(now);
                    prop_assert_eq!(answer, twin.take(at));
                    // In the period open at the retune, while it still is: admitted until
                    // its events reach the new quota.
                    if end.is_some_and(|end| u128::from(at) < end) {
                        events += 1;
                        if events <= u64::from(higher) {
                            prop_assert_ne!(answer, Usage::Over, "event {} of {} refused", events, higher);
                        }
                    }
                }
                Op::Left => prop_assert_eq!(limit.left(now), twin.left(clock.query(now))),
                Op::Next => prop_assert_eq!(limit.next(now), twin.next(clock.query(now))),
            }
        }
    }
}

proptest! {
    // `take` is `check` with a refusal read as `Over`: twins, one asked through each, answer
    // alike on every event, retunes to hostile policies included. A refusal's reason shows a
    // refusing state, a count past the quota, with the count and the wait of the naive model.
    #[test]
    fn check_decides_as_take_and_its_reason_shows_a_refusal(
        quota in 0..8_u32,
        period in span(),
        align in any::<bool>(),
        acts in prop::collection::vec((step(3_000), act()), 1..200),
    ) {
        let mut limit = made(quota, period, align);
        let mut twin = limit.clone();
        let mut model = Model { quota, period: read(period), align, opened: Vec::new(), ended: false };
        let mut clock = Clock::new(0);
        for (step, act) in acts {
            let now = clock.read(step);
            match act {
                Act::Retune(quota, period) => {
                    limit.retune(quota, period, now);
                    twin.retune(quota, period, now);
                    // A retune to the policy in force changes nothing, not even the clock.
                    if (quota, read(period)) != (model.quota, model.period) {
                        model.retune(quota, read(period), clock.change(now));
                    }
                }
                Act::Ask(Op::Take) => {
                    let t = clock.change(now);
                    let answer = model.take(t);
                    let checked = twin.check(now);
                    prop_assert_eq!(limit.take(now), answer);
                    prop_assert_eq!(checked.unwrap_or(Usage::Over), answer);
                    if let Err(reason) = checked {
                        let events = model.open(t).map_or(0, |p| p.events);
                        prop_assert!(reason.count > reason.quota, "{:?}", reason);
                        prop_assert_eq!(reason.quota, model.quota);
                        prop_assert_eq!(u64::from(reason.count), events.min(u64::from(u32::MAX)));
                        prop_assert_eq!(reason.next, model.next(t));
                        prop_assert_eq!(reason.next, twin.next(now));
                        prop_assert!(reason.next > Duration::ZERO);
                    }
                }
                Act::Ask(_) => {}
            }
        }
    }
}
