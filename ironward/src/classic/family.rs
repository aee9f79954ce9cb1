//! The classic breaker as a [`CircuitBreaker`], so that every edge takes it.

use core::time::Duration;

use super::{Classic, ClassicBreaker, ClassicPermit, ClassicReason, State, Transition};
use crate::CircuitBreaker;
use crate::window::Outcome;

/// The classic breaker refuses for three reasons: `open`, `half_open` (every probe out) and
/// `forced_open`. It decides without chance, so the draw is not read.
impl CircuitBreaker for ClassicBreaker {
    type Policy = Classic;
    type Permit = ClassicPermit;
    type Reason = ClassicReason;

    const REFUSALS: &'static [&'static str] = &["open", "half_open", "forced_open"];

    const STATEFUL: bool = true;

    fn new(policy: Classic, now: Duration) -> Self {
        ClassicBreaker::new(policy, now)
    }

    fn check(&mut self, now: Duration, _roll: f64) -> Result<ClassicPermit, ClassicReason> {
        ClassicBreaker::check(self, now)
    }

    fn pass(&mut self, permit: ClassicPermit, now: Duration) -> Option<ClassicPermit> {
        ClassicBreaker::pass(self, permit, now)
    }

    fn fail(&mut self, permit: ClassicPermit, now: Duration) -> Option<ClassicPermit> {
        ClassicBreaker::fail(self, permit, now)
    }

    fn record(&mut self, outcome: Outcome, now: Duration) {
        ClassicBreaker::record(self, outcome, now);
    }

    fn owns(&self, permit: &ClassicPermit) -> bool {
        ClassicBreaker::owns(self, permit)
    }

    fn foreign(&self) -> u64 {
        ClassicBreaker::foreign(self)
    }

    fn ratio(&self, now: Duration) -> f64 {
        ClassicBreaker::ratio(self, now)
    }

    fn policy(&self) -> &Classic {
        ClassicBreaker::policy(self)
    }

    fn retune(&mut self, policy: Classic, now: Duration) {
        ClassicBreaker::retune(self, policy, now);
    }

    fn refusal(reason: &ClassicReason) -> usize {
        match reason.state {
            State::HalfOpen => 1,
            State::ForcedOpen => 2,
            _ => 0,
        }
    }

    fn ratio_of(_: &ClassicReason) -> f64 {
        1.0
    }

    /// The rest of the open wait; `None` half-open (a probe may report at any moment) and
    /// forced open (until the policy lifts it).
    fn retry_after(reason: &ClassicReason) -> Option<Duration> {
        (reason.state == State::Open).then_some(reason.next)
    }

    fn take_transition(&mut self) -> Option<Transition> {
        ClassicBreaker::take_transition(self)
    }

    fn state(&self, now: Duration) -> Option<State> {
        Some(ClassicBreaker::state(self, now))
    }
}
