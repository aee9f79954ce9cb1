//! What the limiter properties share: the caller's clock as a naive model sees it, and the
//! strategies for spans and questions.

use std::fmt::Debug;
use std::time::Duration;

use ironward::{Period, Sliding, Usage};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// One clock reading, relative to the latest one seen.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step {
    /// This many nanoseconds after the latest reading.
    Forward(u64),
    /// This many nanoseconds before the latest reading: a clock going backwards.
    Back(u64),
    /// `Duration::MAX`, past the end of the nanosecond clock.
    End,
}

/// Steps of up to `scale` nanoseconds: mostly forward, a fifth of them backwards, a few to
/// the end of the clock.
pub(crate) fn step(scale: u64) -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (0..=scale).prop_map(Step::Forward),
        4 => (0..=scale).prop_map(Step::Back),
        1 => Just(Step::Back(u64::MAX)),
        1 => Just(Step::End),
    ]
}

/// The caller's clock as a naive model sees it.
///
/// `latest` is the latest reading the caller took, which the steps move from; `seen` is the
/// latest reading passed to a call that changes state. Queries (`&self`) remember nothing,
/// so a piece reads any `now` as the later of it and `seen`: that is the time the model
/// answers at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// The caller's latest reading, in nanoseconds (the core saturates at `u64::MAX`).
    pub(crate) latest: u64,
    /// The latest reading a state-changing call was given, in nanoseconds.
    pub(crate) seen: u64,
}

impl Clock {
    /// A clock whose first reading, already seen by the piece, is `start`.
    pub(crate) fn new(start: u64) -> Self {
        Self {
            latest: start,
            seen: start,
        }
    }

    /// Takes one step and returns the `now` to pass in.
    pub(crate) fn read(&mut self, step: Step) -> Duration {
        match step {
            Step::Forward(by) => {
                self.latest = self.latest.saturating_add(by);
                Duration::from_nanos(self.latest)
            }
            Step::Back(by) => Duration::from_nanos(self.latest.saturating_sub(by)),
            Step::End => {
                self.latest = u64::MAX;
                Duration::MAX
            }
        }
    }

    /// The time a state-changing call at `now` acts at, which it then remembers.
    pub(crate) fn change(&mut self, now: Duration) -> u64 {
        self.seen = self.query(now);
        self.seen
    }

    /// The time a query at `now` reads at: the later of `now` and the latest seen.
    pub(crate) fn query(&self, now: Duration) -> u64 {
        self.seen
            .max(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The caller's latest reading as a `Duration`.
    pub(crate) fn now(&self) -> Duration {
        Duration::from_nanos(self.latest)
    }
}

/// A window or period: mostly short, sometimes zero (read as 1 ns) or `Duration::MAX`.
pub(crate) fn span() -> impl Strategy<Value = Duration> {
    prop_oneof![
        8 => (1..5_000_u64).prop_map(Duration::from_nanos),
        1 => Just(Duration::ZERO),
        1 => Just(Duration::MAX),
        1 => any::<u64>().prop_map(Duration::from_nanos),
    ]
}

/// What a counting limiter is asked.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    Take,
    Left,
    Next,
}

/// Mostly takes, with reads mixed in.
pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![3 => Just(Op::Take), 1 => Just(Op::Left), 1 => Just(Op::Next)]
}

/// A counting limiter, asked the three questions `Op` names.
pub(crate) trait Counter: Clone {
    type Taken: PartialEq + Debug;
    fn take(&mut self, now: Duration) -> Self::Taken;
    fn left(&self, now: Duration) -> u32;
    fn next(&self, now: Duration) -> Duration;
}

impl Counter for Sliding {
    type Taken = bool;
    fn take(&mut self, now: Duration) -> bool {
        Sliding::take(self, now)
    }
    fn left(&self, now: Duration) -> u32 {
        Sliding::left(self, now)
    }
    fn next(&self, now: Duration) -> Duration {
        Sliding::next(self, now)
    }
}

impl Counter for Period {
    type Taken = Usage;
    fn take(&mut self, now: Duration) -> Usage {
        Period::take(self, now)
    }
    fn left(&self, now: Duration) -> u32 {
        Period::left(self, now)
    }
    fn next(&self, now: Duration) -> Duration {
        Period::next(self, now)
    }
}

/// A limiter given the raw readings answers as a twin given the latest-seen times does: a
/// clock that goes backwards reads as the latest seen.
pub(crate) fn backwards_reads_as_latest<C: Counter>(
    mut raw: C,
    ops: Vec<(Step, Op)>,
) -> Result<(), TestCaseError> {
    let mut kept = raw.clone();
    let mut clock = Clock::new(0);
    for (step, op) in ops {
        let now = clock.read(step);
        let at = |t| Duration::from_nanos(t);
        match op {
            Op::Take => prop_assert_eq!(raw.take(now), kept.take(at(clock.change(now)))),
            Op::Left => prop_assert_eq!(raw.left(now), kept.left(at(clock.query(now)))),
            Op::Next => prop_assert_eq!(raw.next(now), kept.next(at(clock.query(now)))),
        }
    }
    Ok(())
}
