//! The classic circuit breaker: closed, open, half-open, as resilience4j, Polly, failsafe-go
//! and Hystrix users know it, beside [`SreBreaker`](crate::SreBreaker).
//!
//! The SRE breaker refuses a share of calls that follows the record: it never stops every
//! call, and it lets traffic back as the successes come. The classic breaker is a switch: a
//! hard stop while open, a few probes half-open, and every call again once they pass (or, with
//! a progressive [`HalfOpen`], growing shares of them first), with each change of state a
//! value a caller can alert on ([`ClassicBreaker::take_transition`]). Pick it when the backend
//! cannot take even a share of calls while it fails, or when the team's alerts and runbooks
//! speak of open and closed; pick the SRE breaker when the backend recovers gradually and
//! a step back to the whole load would knock it over again. The [breakers
//! guide](crate::_guide::breakers) argues the choice with the simulator's figures.
//!
//! Both families implement [`CircuitBreaker`](crate::CircuitBreaker), so every edge takes
//! either, picked by the policy value: `BreakerLayer::new(CLASSIC)` (ironward-tower), and
//! `ironward-tokio`'s `SharedClassicBreaker` shares it between threads.
//!
//! # Where it differs
//!
//! The tests port each reference's test vectors with a citation per case, and a case that
//! meets one of these differences says so.
//!
//! ## From resilience4j (`CircuitBreakerStateMachine`, its sliding windows)
//!
//! - The states put by hand ([`Force`]) are part of the policy, changed with `retune`;
//!   `transitionToOpenState`, `transitionToOpenStateFor`, `transitionToClosedState` and
//!   `reset` have no counterpart. Lifting a force returns to the state the record says, and a
//!   retune to another record shape is the way to start an empty record.
//! - Entering [`Force::MetricsOnly`] keeps the record, where resilience4j starts an empty one.
//! - A half-open probe holds its place for a [`lease`](Classic::lease), after which another
//!   takes it; resilience4j has `maxWaitDurationInHalfOpenState` for the whole stage instead
//!   (0, forever, by default). A permit dropped without a verdict (resilience4j's
//!   `releasePermission`, an ignored exception) frees its place when its lease runs out, not
//!   at once.
//! - An outcome of a call let through in an earlier state (closed, before the breaker opened)
//!   is not counted; resilience4j counts it in the state it arrives in.
//! - A time record counts in `buckets` buckets over its span, where resilience4j keeps one a
//!   second; with a bucket a second the counts are the same.
//! - resilience4j's and Polly's exception predicates are the edge's classifier's job.
//!
//! ## From failsafe-go (`circuitbreaker`)
//!
//! - Thresholds are shares of the record. `WithFailureThresholdRatio(k, n)` is a count record
//!   of `n` calls with a rate of `k / n` and a minimum of `n`: failsafe-go opens at `k`
//!   failures before the window is full, this breaker once it is.
//!   `WithFailureThresholdPeriod(k, period)`, a count of failures in a span whatever the
//!   successes, has no counterpart; a time record with a share is the nearest.
//! - Half-open decides once every probe has reported, on their shares; failsafe-go closes or
//!   reopens as soon as the probes still out cannot change the answer, and has a success
//!   threshold of its own.
//!
//! ## From Polly (v8 `CircuitBreakerStrategy`)
//!
//! - The record is read after every outcome, as resilience4j reads it, so a success that
//!   brings the record to its minimum can open the breaker; Polly reads it after a failure
//!   only.
//! - A time record's buckets are aligned on the caller's clock and its count is the
//!   policy's; Polly's start at the first call, and it keeps a single window below a 200 ms
//!   sampling duration.
//! - A progressive half-open admits by count where seatbelt draws: [`HalfOpen`] says why.

use core::time::Duration;

use crate::clock::{Latest, nanos};
use crate::internal::owner::{Mark, Owner};
use crate::window::Outcome;

mod constants;
mod counts;
mod family;
mod half_open;
mod horizon;
mod policy;
mod reason;
#[cfg(test)]
mod tests;

use constants::Constants;
use counts::Counts;
use half_open::{Trial, Verdict};
pub use policy::{CLASSIC, Classic, Force, HalfOpen, OpenWait, POLLY, Record};
pub use reason::{ClassicReason, Refusing};

/// Where a classic breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Every call goes through, and its outcome is recorded.
    Closed,
    /// Every call is refused until the open wait has passed.
    Open,
    /// A few probes go through (then, progressive, growing shares of the calls); their
    /// outcomes close or reopen the breaker.
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
    Open { until: u64 },
    HalfOpen(Trial),
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
    /// The policy's numbers, read once per policy.
    constants: Constants,
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
        let counts = Counts::new(policy.record);
        Self {
            constants: Constants::read(&policy, counts.capacity()),
            counts,
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
    /// probe. Half-open, a probe whose lease ran out gives its place up first, and a
    /// progressive stage past its end is judged (see [`HalfOpen`]) before the call is taken.
    #[inline]
    #[must_use = "a decision that is not followed neither makes the call nor refuses it"]
    pub fn check(&mut self, now: Duration) -> Result<ClassicPermit, ClassicReason> {
        let t = self.latest.advance(now);
        // The answers that change nothing but the clock, ahead of the rest.
        if self.policy.force == Force::None {
            match self.stage {
                Stage::Closed => return Ok(self.permit(t, None)),
                Stage::Open { until } if t < until => {
                    return Err(self.refusal(State::Open, Duration::from_nanos(until - t)));
                }
                Stage::Open { .. } | Stage::HalfOpen(_) => {}
            }
        }
        self.decide(t)
    }

    /// [`check`](Self::check) at `t` past its answers for a closed breaker and an open one
    /// within its wait: a state put by hand, an open wait that has passed, half-open.
    fn decide(&mut self, t: u64) -> Result<ClassicPermit, ClassicReason> {
        match self.policy.force {
            Force::Open => return Err(self.refusal(State::ForcedOpen, Duration::MAX)),
            Force::Disabled | Force::MetricsOnly => return Ok(self.permit(t, None)),
            Force::None => {}
        }
        match &self.stage {
            Stage::Closed => return Ok(self.permit(t, None)),
            // Open within its wait is `check`'s to refuse: here the wait has passed.
            Stage::Open { .. } => {
                let trial = Trial::probes(self.constants.probes);
                self.enter(Stage::HalfOpen(trial), State::Open, State::HalfOpen);
            }
            Stage::HalfOpen(trial) => {
                let verdict = trial.verdict(t, self.constants.probes, self.constants.rates);
                self.conclude(verdict, t);
            }
        }
        let Constants { probes, lease, .. } = self.constants;
        let (expires, id) = (t.saturating_add(lease), self.next_lease);
        match &mut self.stage {
            // Closed by the verdict just above.
            Stage::Closed => Ok(self.permit(t, None)),
            // Reopened by the verdict just above: refused, even with no wait, so that one
            // decision makes one change of state.
            Stage::Open { until } => {
                let next = Duration::from_nanos(until.saturating_sub(t));
                Err(self.refusal(State::Open, next))
            }
            Stage::HalfOpen(trial) => match trial.admit(t, probes, expires, id) {
                Ok(probe) => {
                    self.next_lease += u64::from(probe.is_some());
                    Ok(self.permit(t, probe))
                }
                Err(wait) => Err(self.refusal(State::HalfOpen, Duration::from_nanos(wait))),
            },
        }
    }

    /// Whether a call may be made at `now`: [`check`](Self::check) with the reason
    /// discarded.
    #[inline]
    #[must_use = "a decision that is not followed neither makes the call nor refuses it"]
    pub fn allow(&mut self, now: Duration) -> Option<ClassicPermit> {
        self.check(now).ok()
    }

    /// Records the call behind `permit` as a success at `now` (slow if it took longer than
    /// the policy's `slow_call`); `None`, or the permit back if another breaker made it.
    #[inline]
    pub fn pass(&mut self, permit: ClassicPermit, now: Duration) -> Option<ClassicPermit> {
        self.settle(permit, false, now)
    }

    /// Records the call behind `permit` as a failure at `now`; `None`, or the permit back if
    /// another breaker made it.
    #[inline]
    pub fn fail(&mut self, permit: ClassicPermit, now: Duration) -> Option<ClassicPermit> {
        self.settle(permit, true, now)
    }

    /// Records one outcome heard without a permit (a pool's check of a connection it holds)
    /// at `now`, as a call that took no time; a drop is no call. Only a closed (or
    /// metrics-only) breaker records it: half-open, only the calls it let through decide.
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
        match self.stage {
            Stage::Open { until }
                if self.policy.force == Force::None
                    && self.policy.automatic
                    && self.latest.read(now) >= until =>
            {
                State::HalfOpen
            }
            _ => self.current(),
        }
    }

    /// The change of state the last decisions made, taken once: `None` if none did since
    /// the last take. A decision (a check, a settle, a retune) makes at most one, and every
    /// change of state is one (each counted in [`transitions`](Self::transitions)), so a
    /// caller that takes after each decision sees every change.
    #[must_use = "a transition taken and dropped is lost to every later take"]
    pub fn take_transition(&mut self) -> Option<Transition> {
        self.transition.take()
    }

    /// How many changes of state the breaker has made.
    pub fn transitions(&self) -> u64 {
        self.transitions
    }

    /// Whether the next call at `now` would be refused, as a share: 1 open before its wait
    /// has passed, half-open with every probe out or with the next call outside a stage's
    /// share, or forced open; 0 otherwise (closed, put aside, recording only, open past its
    /// wait, half-open with room for the next call).
    pub fn ratio(&self, now: Duration) -> f64 {
        let t = self.latest.read(now);
        let refusing = match self.policy.force {
            Force::Open => true,
            Force::Disabled | Force::MetricsOnly => false,
            Force::None => match &self.stage {
                Stage::Closed => false,
                Stage::Open { until } => t < *until,
                Stage::HalfOpen(trial) => {
                    match trial.verdict(t, self.constants.probes, self.constants.rates) {
                        Verdict::Pending => trial.room(t, self.constants.probes).is_err(),
                        Verdict::Reopen(_) => true,
                        // The next stage's first call, a restarted stage's, or a closed breaker.
                        Verdict::Pass | Verdict::Restart => false,
                    }
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
    /// window size, or span and buckets) and starting an empty one otherwise. The open wait
    /// already set stands, and so does a half-open trial (its probes out, and a stage's share
    /// and end; the new shares apply from the next stage).
    ///
    /// A retune that changes the [`force`](Classic::force) changes the state: it is a
    /// [`Transition`] like any other, from the state before to the state after (lifting a
    /// force returns to what the record says, the state the breaker stood in before it).
    /// Calls let through before it are then from an earlier state and not counted, and a
    /// half-open trial starts again with no probe out.
    pub fn retune(&mut self, policy: Classic, now: Duration) {
        self.latest.advance(now);
        let before = self.current();
        if !self.counts.fits(policy.record) {
            self.counts = Counts::new(policy.record);
        }
        self.policy = policy;
        self.constants = Constants::read(&self.policy, self.counts.capacity());
        let after = self.current();
        if before != after {
            if let Stage::HalfOpen(trial) = &mut self.stage {
                *trial = Trial::probes(self.constants.probes);
            }
            self.change(before, after);
        }
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

    /// The state the breaker stands in: the one put by hand, or the record's (an open wait
    /// that has passed still reads open, until a call moves it).
    fn current(&self) -> State {
        match (self.policy.force, &self.stage) {
            (Force::Open, _) => State::ForcedOpen,
            (Force::Disabled, _) => State::Disabled,
            (Force::MetricsOnly, _) => State::MetricsOnly,
            (Force::None, Stage::Closed) => State::Closed,
            (Force::None, Stage::Open { .. }) => State::Open,
            (Force::None, Stage::HalfOpen(_)) => State::HalfOpen,
        }
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

    #[inline]
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
        let slow = t.saturating_sub(permit.at) > self.constants.slow;
        // A closed breaker's own call, ahead of the rest.
        if self.policy.force == Force::None
            && permit.epoch == self.epoch
            && matches!(self.stage, Stage::Closed)
        {
            self.closed_outcome(t, failed, slow);
            return None;
        }
        self.settle_rest(permit, failed, slow, t);
        None
    }

    /// [`settle`](Self::settle) of the breaker's own permit at `t` past a closed breaker's
    /// call of its stage: a state put by hand, a call of an earlier stage, a half-open one.
    fn settle_rest(&mut self, permit: ClassicPermit, failed: bool, slow: bool, t: u64) {
        match self.policy.force {
            Force::MetricsOnly => {
                self.counts.add(t, failed, slow);
                return;
            }
            Force::Open | Force::Disabled => return,
            Force::None => {}
        }
        if permit.epoch != self.epoch {
            return;
        }
        match &mut self.stage {
            Stage::Closed => self.closed_outcome(t, failed, slow),
            Stage::Open { .. } => {}
            Stage::HalfOpen(trial) => {
                if trial.hear(permit.probe, failed, slow) {
                    let Constants { probes, rates, .. } = self.constants;
                    let verdict = trial.verdict(t, probes, rates);
                    self.conclude(verdict, t);
                }
            }
        }
    }

    /// Records a closed breaker's call at `t`, and opens it if the record says to.
    fn closed_outcome(&mut self, t: u64, failed: bool, slow: bool) {
        self.counts.add(t, failed, slow);
        let totals = self.counts.totals(t);
        let trips = match self.counts.run_reached(self.policy.record) {
            Some(reached) => reached,
            None => totals.calls >= self.constants.minimum && totals.reach(self.constants.rates),
        };
        if trips {
            self.open(t, totals.shares(), State::Closed);
        }
    }

    /// Applies a half-open trial's verdict at `t`: at most one change of state.
    fn conclude(&mut self, verdict: Verdict, t: u64) {
        let hold = self.constants.hold;
        let Stage::HalfOpen(trial) = &mut self.stage else {
            return;
        };
        match verdict {
            Verdict::Pending => {}
            Verdict::Restart => trial.restart(t.saturating_add(hold)),
            Verdict::Reopen(shares) => {
                self.reopened = self.reopened.saturating_add(1);
                self.open(t, shares, State::HalfOpen);
            }
            Verdict::Pass => {
                let next = trial.next_stage();
                match self.policy.half_open.share(next) {
                    // A stage is no change of state: the breaker stays half-open.
                    Some(share) => *trial = Trial::stage(next, share, t.saturating_add(hold)),
                    None => {
                        self.counts = Counts::new(self.policy.record);
                        self.reopened = 0;
                        self.enter(Stage::Closed, State::HalfOpen, State::Closed);
                    }
                }
            }
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
        self.change(from, to);
    }

    /// The one place a change of state is made known: a new epoch (the calls let through
    /// before it are not counted), the transition to take, and the count.
    fn change(&mut self, from: State, to: State) {
        self.epoch += 1;
        self.transition = Some(Transition { from, to });
        self.transitions += 1;
    }
}
