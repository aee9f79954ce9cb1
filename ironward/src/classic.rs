//! The classic circuit breaker: closed, open, half-open, as resilience4j, Polly, failsafe-go
//! and Hystrix users know it, beside the SRE [`Breaker`](crate::Breaker).
//!
//! The SRE breaker refuses a share of calls that follows the record: it never stops every
//! call, and it lets traffic back as the successes come. The classic breaker is a switch: a
//! hard stop while open, a few probes half-open, and every call again once they pass, with
//! each change of state a value a caller can alert on ([`ClassicBreaker::take_transition`]).
//! Pick it when the backend cannot take even a share of calls while it fails, or when the
//! team's alerts and runbooks speak of open and closed; pick the SRE breaker when the backend
//! recovers gradually and a step back to the whole load would knock it over again.
//!
//! Both families implement [`CircuitBreaker`](crate::CircuitBreaker), so every edge takes
//! either: `BreakerLayer::for_breaker::<Mutex<ClassicBreaker>>(CLASSIC)`.
//!
//! # Where it differs from resilience4j
//!
//! - The states put by hand ([`Force`]) are part of the policy, changed with `retune`, not
//!   transition methods; `transitionToOpenState` and the like have no counterpart.
//! - A half-open probe holds its place for a [`lease`](Classic::lease), after which another
//!   takes it; resilience4j has `maxWaitDurationInHalfOpenState` for the whole stage instead
//!   (0, forever, by default).
//! - An outcome of a call let through in an earlier state (closed, before the breaker opened)
//!   is not counted; resilience4j counts it in the state it arrives in.
//! - A time record counts in `buckets` buckets over its span, where resilience4j keeps one a
//!   second.
//! - resilience4j's and Polly's exception predicates are the edge's classifier's job.
//! - No progressive half-open (a growing share of calls, as seatbelt's) yet.

use alloc::vec::Vec;
use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::internal::constant::constant;
use crate::internal::owner::{Mark, Owner};
use crate::window::Outcome;

mod counts;
mod family;
mod horizon;
mod policy;
mod reason;
#[cfg(test)]
mod tests;

use counts::{Counts, Tallies};
pub use policy::{CLASSIC, Classic, Force, OpenWait, POLLY, Record};
pub use reason::ClassicReason;

/// Where a classic breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Every call goes through, and its outcome is recorded.
    Closed,
    /// Every call is refused until the open wait has passed.
    Open,
    /// A few probes go through; their outcomes close or reopen the breaker.
    HalfOpen,
    /// Put open by hand ([`Force::Open`]): every call is refused.
    ForcedOpen,
    /// Put aside by hand ([`Force::Disabled`]): every call goes through, nothing is recorded.
    Disabled,
    /// Recording only ([`Force::MetricsOnly`]): every call goes through and is recorded.
    MetricsOnly,
}

impl State {
    /// The state's name in lower case, as an edge's metrics and events give it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Open => "open",
            Self::HalfOpen => "half_open",
            Self::ForcedOpen => "forced_open",
            Self::Disabled => "disabled",
            Self::MetricsOnly => "metrics_only",
        }
    }
}

/// A change of state a decision made: the state left and the state entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transition {
    /// The state the breaker left.
    pub from: State,
    /// The state it entered.
    pub to: State,
}

/// A call a [`ClassicBreaker`] let through, to be settled with
/// [`pass`](ClassicBreaker::pass) or [`fail`](ClassicBreaker::fail).
#[derive(Debug)]
#[must_use = "a permit that is not settled leaves the call out of the record"]
pub struct ClassicPermit {
    mark: Mark,
    /// The stage it was let through in: an outcome from an earlier one is not counted.
    epoch: u64,
    /// When it was let through, in nanoseconds, for telling a slow call.
    at: u64,
    /// The lease of a half-open probe.
    probe: Option<u64>,
}

/// What the record says now.
#[derive(Debug, Clone)]
enum Stage {
    Closed,
    Open {
        until: u64,
    },
    HalfOpen {
        /// The probes out: their lease numbers and when each runs out.
        leases: Vec<(u64, u64)>,
        /// The probes that reported back.
        heard: Tallies,
    },
}

/// A classic circuit breaker under a [`Classic`] policy: closed, open, half-open.
///
/// Pure like every piece of the core: `now` is the caller's monotonic clock (one earlier than
/// the latest seen reads as the latest). It allocates its record when it is made (and anew
/// when a retune changes the record's shape), and a half-open stage's leases, never per call.
///
/// # Examples
///
/// ```
/// use core::time::Duration;
/// use ironward::classic::{OpenWait, Record, State, Transition};
/// use ironward::{CLASSIC, Classic, ClassicBreaker};
///
/// let ms = Duration::from_millis;
/// let policy = Classic {
///     record: Record::Count { calls: 4 },
///     minimum: 4,
///     open: OpenWait::Fixed(ms(100)),
///     probes: 2,
///     ..CLASSIC
/// };
/// let mut breaker = ClassicBreaker::new(policy, ms(0));
/// for _ in 0..4 {
///     let permit = breaker.check(ms(0)).expect("closed");
///     let _ = breaker.fail(permit, ms(1));
/// }
/// assert_eq!(breaker.take_transition(), Some(Transition { from: State::Closed, to: State::Open }));
/// assert!(breaker.check(ms(50)).is_err());
/// // After the wait, two probes; both pass, and the breaker closes.
/// let probes = [breaker.check(ms(101)).unwrap(), breaker.check(ms(101)).unwrap()];
/// assert!(breaker.check(ms(101)).is_err(), "every probe is out");
/// for probe in probes {
///     let _ = breaker.pass(probe, ms(110));
/// }
/// assert_eq!(breaker.state(ms(110)), State::Closed);
/// ```
#[derive(Debug, Clone)]
pub struct ClassicBreaker {
    policy: Classic,
    counts: Counts,
    stage: Stage,
    epoch: u64,
    next_lease: u64,
    /// Reopenings since the breaker last closed, for a growing wait.
    reopened: u32,
    /// The shares that last opened it.
    opened_by: (f64, f64),
    latest: Latest,
    owner: Owner,
    foreign: u64,
    transition: Option<Transition>,
    transitions: u64,
}

impl ClassicBreaker {
    /// A closed breaker under `policy` with an empty record, at `now`.
    pub fn new(policy: Classic, now: Duration) -> Self {
        let mut latest = Latest::default();
        latest.advance(now);
        Self {
            counts: Counts::new(policy.record),
            policy,
            stage: Stage::Closed,
            epoch: 0,
            next_lease: 0,
            reopened: 0,
            opened_by: (0.0, 0.0),
            latest,
            owner: Owner::default(),
            foreign: 0,
            transition: None,
            transitions: 0,
        }
    }

    /// Asks to make one call at `now`: a permit, or why not.
    ///
    /// Open, the first call at or after the wait moves the breaker half-open and is its first
    /// probe. Half-open, a probe whose lease ran out gives its place up first.
    #[must_use = "a decision that is not followed neither makes the call nor refuses it"]
    pub fn check(&mut self, now: Duration) -> Result<ClassicPermit, ClassicReason> {
        let t = self.latest.advance(now);
        match self.policy.force {
            Force::Open => return Err(self.refusal(State::ForcedOpen, Duration::MAX)),
            Force::Disabled | Force::MetricsOnly => return Ok(self.permit(t, None)),
            Force::None => {}
        }
        if let Stage::Open { until } = self.stage {
            if t < until {
                let next = Duration::from_nanos(until - t);
                return Err(self.refusal(State::Open, next));
            }
            self.enter(
                Stage::HalfOpen {
                    leases: Vec::with_capacity(self.probes() as usize),
                    heard: Tallies::default(),
                },
                State::Open,
                State::HalfOpen,
            );
        }
        let probes = self.probes();
        match &mut self.stage {
            Stage::Closed => Ok(self.permit(t, None)),
            Stage::Open { .. } => unreachable!("an open stage past its wait is half-open now"),
            Stage::HalfOpen { leases, heard } => {
                leases.retain(|&(_, expires)| expires > t);
                if (leases.len() as u64).saturating_add(heard.calls) >= u64::from(probes) {
                    let soonest = leases.iter().map(|&(_, e)| e).min().unwrap_or(t);
                    let next = Duration::from_nanos(soonest.saturating_sub(t));
                    return Err(self.refusal(State::HalfOpen, next));
                }
                let id = self.next_lease;
                self.next_lease += 1;
                let expires = t.saturating_add(nanos(self.policy.lease));
                leases.push((id, expires));
                Ok(self.permit(t, Some(id)))
            }
        }
    }

    /// Whether a call may be made at `now`: [`check`](Self::check) with the reason
    /// discarded.
    #[must_use = "a decision that is not followed neither makes the call nor refuses it"]
    pub fn allow(&mut self, now: Duration) -> Option<ClassicPermit> {
        self.check(now).ok()
    }

    /// Records the call behind `permit` as a success at `now` (slow if it took longer than
    /// the policy's `slow_call`); `None`, or the permit back if another breaker made it.
    pub fn pass(&mut self, permit: ClassicPermit, now: Duration) -> Option<ClassicPermit> {
        self.settle(permit, false, now)
    }

    /// Records the call behind `permit` as a failure at `now`; `None`, or the permit back if
    /// another breaker made it.
    pub fn fail(&mut self, permit: ClassicPermit, now: Duration) -> Option<ClassicPermit> {
        self.settle(permit, true, now)
    }

    /// Records one outcome heard without a permit (a pool's check of a connection it holds)
    /// at `now`, as a call that took no time; a drop is no call. Only a closed (or
    /// metrics-only) breaker records it: half-open, only probes decide.
    pub fn record(&mut self, outcome: Outcome, now: Duration) {
        let failed = match outcome {
            Outcome::Success => false,
            Outcome::Failure => true,
            Outcome::Drop => return,
        };
        let t = self.latest.advance(now);
        match (self.policy.force, &self.stage) {
            (Force::MetricsOnly, _) => self.counts.add(t, failed, false),
            (Force::None, Stage::Closed) => self.closed_outcome(t, failed, false),
            _ => {}
        }
    }

    /// The state at `now`: with `automatic`, an open breaker whose wait has passed reads as
    /// half-open before a call moves it.
    pub fn state(&self, now: Duration) -> State {
        match self.policy.force {
            Force::Open => return State::ForcedOpen,
            Force::Disabled => return State::Disabled,
            Force::MetricsOnly => return State::MetricsOnly,
            Force::None => {}
        }
        match self.stage {
            Stage::Closed => State::Closed,
            Stage::Open { until } if self.policy.automatic && self.latest.read(now) >= until => {
                State::HalfOpen
            }
            Stage::Open { .. } => State::Open,
            Stage::HalfOpen { .. } => State::HalfOpen,
        }
    }

    /// The change of state the last decisions made, taken once: `None` if none did since
    /// the last take. A decision makes at most one, so a caller that takes after each one
    /// sees every change.
    #[must_use = "a transition taken and dropped is lost to every later take"]
    pub fn take_transition(&mut self) -> Option<Transition> {
        self.transition.take()
    }

    /// How many changes of state the breaker has made.
    pub fn transitions(&self) -> u64 {
        self.transitions
    }

    /// Whether the next call at `now` would be refused, as a share: 1 open before its wait
    /// has passed, half-open with every probe out, or forced open; 0 otherwise (closed, put
    /// aside, recording only, open past its wait, half-open with a probe's place free).
    pub fn ratio(&self, now: Duration) -> f64 {
        let t = self.latest.read(now);
        let refusing = match self.policy.force {
            Force::Open => true,
            Force::Disabled | Force::MetricsOnly => false,
            Force::None => match &self.stage {
                Stage::Closed => false,
                Stage::Open { until } => t < *until,
                Stage::HalfOpen { leases, heard } => {
                    let out = leases.iter().filter(|&&(_, expires)| expires > t).count();
                    (out as u64).saturating_add(heard.calls) >= u64::from(self.probes())
                }
            },
        };
        if refusing { 1.0 } else { 0.0 }
    }

    /// The policy, as it was last given.
    pub fn policy(&self) -> &Classic {
        &self.policy
    }

    /// Runs `policy` from `now` on, keeping the record if its shape is unchanged (the same
    /// window size, or span and buckets) and starting an empty one otherwise; the state, the
    /// open wait already set and the probes out stand.
    pub fn retune(&mut self, policy: Classic, now: Duration) {
        self.latest.advance(now);
        if !self.counts.fits(policy.record) {
            self.counts = Counts::new(policy.record);
        }
        self.policy = policy;
    }

    /// Permits [`pass`](Self::pass) and [`fail`](Self::fail) handed back because another
    /// breaker made them.
    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// Whether this breaker made `permit`.
    pub fn owns(&self, permit: &ClassicPermit) -> bool {
        self.owner.owns(permit.mark)
    }

    fn probes(&self) -> u32 {
        self.policy.probes.max(1)
    }

    fn permit(&mut self, t: u64, probe: Option<u64>) -> ClassicPermit {
        ClassicPermit {
            mark: self.owner.mark(),
            epoch: self.epoch,
            at: t,
            probe,
        }
    }

    fn refusal(&self, state: State, next: Duration) -> ClassicReason {
        ClassicReason {
            state,
            next,
            failure_rate: self.opened_by.0,
            slow_rate: self.opened_by.1,
        }
    }

    fn settle(
        &mut self,
        permit: ClassicPermit,
        failed: bool,
        now: Duration,
    ) -> Option<ClassicPermit> {
        if !self.owns(&permit) {
            self.foreign += 1;
            return Some(permit);
        }
        let t = self.latest.advance(now);
        let slow = t.saturating_sub(permit.at) > nanos(self.policy.slow_call);
        match self.policy.force {
            Force::MetricsOnly => {
                self.counts.add(t, failed, slow);
                return None;
            }
            Force::Open | Force::Disabled => return None,
            Force::None => {}
        }
        if permit.epoch != self.epoch {
            return None;
        }
        let probes = u64::from(self.probes());
        match &mut self.stage {
            Stage::Closed => self.closed_outcome(t, failed, slow),
            Stage::Open { .. } => {}
            Stage::HalfOpen { leases, heard } => {
                let Some(i) = leases.iter().position(|&(id, _)| Some(id) == permit.probe) else {
                    // Its lease ran out, and its place went to another probe.
                    return None;
                };
                leases.swap_remove(i);
                heard.add(failed, slow);
                if heard.calls >= probes {
                    let heard = *heard;
                    let (failure, slow) = self.shares(heard);
                    if failure >= self.failure_rate() || slow >= self.slow_rate() {
                        self.reopened = self.reopened.saturating_add(1);
                        self.open(t, (failure, slow), State::HalfOpen);
                    } else {
                        self.counts = Counts::new(self.policy.record);
                        self.reopened = 0;
                        self.enter(Stage::Closed, State::HalfOpen, State::Closed);
                    }
                }
            }
        }
        None
    }

    /// Records a closed breaker's call at `t`, and opens it if the record says to.
    fn closed_outcome(&mut self, t: u64, failed: bool, slow: bool) {
        self.counts.add(t, failed, slow);
        let totals = self.counts.totals(t);
        let shares = self.shares(totals);
        let trips = match self.counts.run_reached() {
            Some(reached) => reached,
            None => {
                let minimum = u64::from(self.policy.minimum)
                    .min(self.counts.capacity())
                    .max(1);
                totals.calls >= minimum
                    && (shares.0 >= self.failure_rate() || shares.1 >= self.slow_rate())
            }
        };
        if trips {
            self.open(t, shares, State::Closed);
        }
    }

    fn open(&mut self, t: u64, shares: (f64, f64), from: State) {
        let wait = self.policy.open.after(self.reopened);
        self.opened_by = shares;
        let until = t.saturating_add(nanos(wait));
        self.enter(Stage::Open { until }, from, State::Open);
    }

    fn enter(&mut self, stage: Stage, from: State, to: State) {
        self.stage = stage;
        self.epoch += 1;
        self.transition = Some(Transition { from, to });
        self.transitions += 1;
    }

    fn shares(&self, tallies: Tallies) -> (f64, f64) {
        if tallies.calls == 0 {
            return (0.0, 0.0);
        }
        let calls = tallies.calls as f64;
        (tallies.failures as f64 / calls, tallies.slow as f64 / calls)
    }

    fn failure_rate(&self) -> f64 {
        constant(self.policy.failure_rate, 0.0, 1.0, f64::INFINITY).max(f64::MIN_POSITIVE)
    }

    fn slow_rate(&self) -> f64 {
        constant(self.policy.slow_rate, 0.0, 1.0, f64::INFINITY).max(f64::MIN_POSITIVE)
    }
}
