//! [`SharedClassicBreaker`] as a [`SharedCircuitBreaker`], so that every edge takes it:
//! `BreakerLayer::new(CLASSIC)`.

use std::time::Duration;

use ironward::classic::{State, Transition};
use ironward::{CircuitBreaker, Classic, ClassicBreaker, ClassicReason};

use super::{SharedClassicBreaker, SharedClassicPermit};
use crate::SharedCircuitBreaker;

/// The classic breaker's refusals and waits, as the core's [`CircuitBreaker`] gives them;
/// the draw is not read, so none is made ([`DRAWS`](SharedCircuitBreaker::DRAWS) is
/// `false`). Every change of state is kept for
/// [`take_transition`](SharedClassicBreaker::take_transition), in order.
impl SharedCircuitBreaker for SharedClassicBreaker {
    type Policy = Classic;
    type Permit = SharedClassicPermit;
    type Reason = ClassicReason;

    const REFUSALS: &'static [&'static str] = <ClassicBreaker as CircuitBreaker>::REFUSALS;

    const STATEFUL: bool = true;

    const DRAWS: bool = false;

    fn new(policy: Classic, now: Duration) -> Self {
        SharedClassicBreaker::new(policy, now)
    }

    fn check(&self, now: Duration, _roll: f64) -> Result<SharedClassicPermit, ClassicReason> {
        SharedClassicBreaker::check(self, now)
    }

    fn pass(&self, permit: SharedClassicPermit, now: Duration) -> Option<SharedClassicPermit> {
        SharedClassicBreaker::pass(self, permit, now)
    }

    fn fail(&self, permit: SharedClassicPermit, now: Duration) -> Option<SharedClassicPermit> {
        SharedClassicBreaker::fail(self, permit, now)
    }

    fn foreign(&self) -> u64 {
        SharedClassicBreaker::foreign(self)
    }

    fn ratio(&self, now: Duration) -> f64 {
        SharedClassicBreaker::ratio(self, now)
    }

    fn policy(&self) -> Classic {
        SharedClassicBreaker::policy(self)
    }

    fn retune(&self, policy: Classic, now: Duration) -> Classic {
        SharedClassicBreaker::retune(self, policy, now)
    }

    fn refusal(reason: &ClassicReason) -> usize {
        <ClassicBreaker as CircuitBreaker>::refusal(reason)
    }

    fn ratio_of(reason: &ClassicReason) -> f64 {
        <ClassicBreaker as CircuitBreaker>::ratio_of(reason)
    }

    fn retry_after(reason: &ClassicReason) -> Option<Duration> {
        <ClassicBreaker as CircuitBreaker>::retry_after(reason)
    }

    fn take_transition(&self) -> Option<Transition> {
        SharedClassicBreaker::take_transition(self)
    }

    fn state(&self, now: Duration) -> Option<State> {
        Some(SharedClassicBreaker::state(self, now))
    }
}
