//! [`CircuitBreaker`]: what every breaker family answers, so that an edge takes any of them.

use core::fmt;
use core::time::Duration;

use super::{Sre, SreBreaker, SrePermit};
use crate::breaker::SreReason;
use crate::classic::{State, Transition};
use crate::window::Outcome;

/// A circuit breaker of any family: asked before a call, told how the call went.
///
/// The edges (ironward-tower's `BreakerLayer`, ironward-reqwest's breaker, ironward-pool's
/// ward, the simulator) are written against this trait rather than against [`SreBreaker`], so
/// that a second family is a new type implementing it, not a change to each edge. Like every
/// piece of the core it is pure: `now` is the caller's monotonic clock and `roll` the caller's
/// draw from `[0, 1)`, which a family that decides without chance ignores.
///
/// The contract every implementation keeps:
///
/// - [`check`](Self::check) answers a permit or the reason for a refusal, and never panics,
///   for any `now` (earlier than one already seen reads as the latest seen) and any `roll`.
/// - Exactly one of [`pass`](Self::pass) and [`fail`](Self::fail) settles a permit; a permit
///   this breaker did not make changes nothing, comes back as `Some` and is counted by
///   [`foreign`](Self::foreign). A permit dropped unsettled leaves the call out of the record.
/// - [`retune`](Self::retune) takes a new policy live and keeps what the breaker has seen.
///
/// # Examples
///
/// A retry loop that takes any breaker:
///
/// ```
/// use core::time::Duration;
/// use ironward::{SreBreaker, CircuitBreaker, SRE};
///
/// /// Calls `attempt` until it succeeds or the breaker refuses, and counts the calls made.
/// fn drive<B: CircuitBreaker>(breaker: &mut B, mut attempt: impl FnMut() -> bool) -> u32 {
///     let mut made = 0;
///     for i in 0..1_000 {
///         let now = Duration::from_millis(i);
///         let Ok(permit) = breaker.check(now, 0.5) else { break };
///         made += 1;
///         if attempt() {
///             let _ = breaker.pass(permit, now);
///             break;
///         }
///         let _ = breaker.fail(permit, now);
///     }
///     made
/// }
///
/// let mut breaker = SreBreaker::new(SRE, Duration::ZERO);
/// let made = drive(&mut breaker, || false);
/// // SRE throttling refuses a draw of 0.5 once the drop fraction passes it.
/// assert!(made < 1_000);
/// assert!(breaker.ratio(Duration::from_secs(1)) > 0.5);
/// ```
pub trait CircuitBreaker {
    /// The policy record the breaker runs.
    type Policy: Clone + fmt::Debug;
    /// What a call let through carries until it is settled.
    type Permit: fmt::Debug;
    /// Why a call was refused: the numbers that decided it.
    type Reason: Clone + fmt::Debug + fmt::Display;

    /// The label of every kind of refusal, in the order [`refusal`](Self::refusal) indexes,
    /// as an edge's metrics give them.
    const REFUSALS: &'static [&'static str];

    /// Whether the family has states whose changes [`take_transition`](Self::take_transition)
    /// returns, so that an edge asks for them only where there can be one; `false` by
    /// default.
    const STATEFUL: bool = false;

    /// A breaker under `policy` with nothing seen yet, its record opening at `now`.
    fn new(policy: Self::Policy, now: Duration) -> Self
    where
        Self: Sized;

    /// Asks to make one call at `now` with the draw `roll`: a permit, or why not.
    fn check(&mut self, now: Duration, roll: f64) -> Result<Self::Permit, Self::Reason>;

    /// Records the call behind `permit` as a success at `now`; `None`, or the permit back if
    /// another breaker made it.
    fn pass(&mut self, permit: Self::Permit, now: Duration) -> Option<Self::Permit>;

    /// Records the call behind `permit` as a failure at `now`; `None`, or the permit back if
    /// another breaker made it.
    fn fail(&mut self, permit: Self::Permit, now: Duration) -> Option<Self::Permit>;

    /// Records one outcome heard without a permit (a pool's check of a connection it holds),
    /// at `now`.
    fn record(&mut self, outcome: Outcome, now: Duration);

    /// Whether this breaker made `permit`.
    fn owns(&self, permit: &Self::Permit) -> bool;

    /// Permits `pass` and `fail` handed back because another breaker made them.
    fn foreign(&self) -> u64;

    /// The share of calls the breaker would refuse at `now`, in `[0, 1]`: 0 while it lets
    /// everything through, 1 while it lets nothing through.
    fn ratio(&self, now: Duration) -> f64;

    /// The policy the breaker runs, as it was last given.
    fn policy(&self) -> &Self::Policy;

    /// Runs `policy` from now on, keeping what the breaker has seen.
    fn retune(&mut self, policy: Self::Policy, now: Duration);

    /// Which of [`REFUSALS`](Self::REFUSALS) `reason` is.
    fn refusal(reason: &Self::Reason) -> usize;

    /// The share of calls the breaker was refusing when it refused for `reason`: what
    /// [`ratio`](Self::ratio) would have read then, for a gauge that costs no second look.
    fn ratio_of(reason: &Self::Reason) -> f64;

    /// How long until the breaker lets a call through again, where `reason` knows it: an
    /// edge's `Retry-After`. `None` where no wait is known (a draw decides, or a state put by
    /// hand holds until it is lifted); the default.
    fn retry_after(reason: &Self::Reason) -> Option<Duration> {
        let _ = reason;
        None
    }

    /// The change of state the decisions since the last take made, taken once: `None` if
    /// there was none, and always for a family without states (the default, and the SRE
    /// breaker, whose refusals follow the record by degrees).
    #[must_use = "a transition taken and dropped is lost to every later take"]
    fn take_transition(&mut self) -> Option<Transition> {
        None
    }

    /// The state the breaker is in at `now`, for a family with states; `None` for one
    /// without (the default, and the SRE breaker). An edge's state gauge starts from it.
    fn state(&self, now: Duration) -> Option<State> {
        let _ = now;
        None
    }
}

/// The SRE breaker refuses for one reason, `throttled`: a draw under the drop fraction.
impl CircuitBreaker for SreBreaker {
    type Policy = Sre;
    type Permit = SrePermit;
    type Reason = SreReason;

    const REFUSALS: &'static [&'static str] = &["throttled"];

    fn new(policy: Sre, now: Duration) -> Self {
        SreBreaker::new(policy, now)
    }

    fn check(&mut self, now: Duration, roll: f64) -> Result<SrePermit, SreReason> {
        SreBreaker::check(self, now, roll)
    }

    fn pass(&mut self, permit: SrePermit, now: Duration) -> Option<SrePermit> {
        SreBreaker::pass(self, permit, now)
    }

    fn fail(&mut self, permit: SrePermit, now: Duration) -> Option<SrePermit> {
        SreBreaker::fail(self, permit, now)
    }

    fn record(&mut self, outcome: Outcome, now: Duration) {
        SreBreaker::record(self, outcome, 1, now);
    }

    fn owns(&self, permit: &SrePermit) -> bool {
        self.made(permit)
    }

    fn foreign(&self) -> u64 {
        SreBreaker::foreign(self)
    }

    fn ratio(&self, now: Duration) -> f64 {
        SreBreaker::ratio(self, now)
    }

    fn policy(&self) -> &Sre {
        self.sre()
    }

    fn retune(&mut self, policy: Sre, now: Duration) {
        SreBreaker::retune(self, policy, now);
    }

    fn refusal(_: &SreReason) -> usize {
        0
    }

    fn ratio_of(reason: &SreReason) -> f64 {
        reason.drop
    }
}
