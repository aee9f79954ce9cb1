//! [`Breaker`]: a circuit breaker of either family around any async call.

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use ironward::classic::{State, Transition};

use super::{CallError, Classify, Errors};
use crate::meter::{Decisions, Level, States};
use crate::{BreakerPolicy, Clock, Dice, Knobs, SharedCircuitBreaker, SharedSreBreaker};

/// A circuit breaker around any async call: `breaker.call(|| fetch()).await`.
///
/// Each call first asks the breaker, at the clock's `now` with a draw of the dice where the
/// family reads one (the SRE breaker; the classic breaker draws nothing). A refused
/// call never runs: its closure is not even called, and the answer is
/// [`CallError::Refused`] with the family's reason (the SRE breaker's
/// [`SreReason`](ironward::SreReason), the classic one's
/// [`ClassicReason`](ironward::ClassicReason), whose wait until the next probe
/// [`retry_after`](Self::retry_after) reads). A call let through runs, and when it ends the
/// classifier (`C`, by default [`Errors`]) says whether it failed and the breaker records it
/// then, on the same clock, so that the classic breaker tells a slow call from its permit's
/// time as its policy's `slow_call` says. Its own error comes back as
/// [`CallError::Failed`].
///
/// These are the decisions and the shared forms ironward-tower's `BreakerLayer` runs, for a
/// call that is not a tower service: `B` is any [`SharedCircuitBreaker`], picked by the
/// policy value in [`new`](Self::new) ([`SharedSreBreaker`] for [`SRE`](ironward::SRE),
/// [`SharedClassicBreaker`](crate::SharedClassicBreaker) for
/// [`CLASSIC`](ironward::CLASSIC)), or named in [`for_breaker`](Self::for_breaker).
///
/// **Cancellation.** A call whose future is dropped before it ends leaves its permit
/// unsettled: recorded neither as a success nor as a failure, as the tower layer and the
/// core do, since a call given up from outside says nothing about the backend. (A classic
/// breaker's half-open probe dropped so holds its place until its lease runs out.) Put a
/// [`Timeout`](super::Timeout) *inside* the breaker, so that a call cut off by time ends
/// with an error the breaker counts.
///
/// `Clone` is an `Arc` clone: every clone shares the one breaker, its record and its
/// metrics. Each builder makes a new breaker on the parts it was given, as the layer's do,
/// so configure first, then clone.
///
/// # Metrics and events
///
/// As the layer: `ironward.requests{piece="breaker", name, outcome, reason}` (the family's
/// refusal labels), `ironward.breaker.ratio`, and for a family with states
/// `ironward.breaker.state` and `ironward.breaker.transitions`
/// ([`meter`](crate::meter)); a refusal is a `DEBUG` event and a change of state an `INFO`
/// one, with the name.
///
/// # Examples
///
/// The classic breaker: three failures in a row open it for 30 s, during which no call runs.
///
/// ```
/// use std::time::Duration;
/// use ironward::classic::{OpenWait, Record};
/// use ironward::{CLASSIC, Classic, ClassicReason};
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{Breaker, CallError};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, hand) = Clock::manual(Duration::ZERO);
/// let policy = Classic {
///     record: Record::Consecutive { failures: 3 },
///     open: OpenWait::Fixed(Duration::from_secs(30)),
///     ..CLASSIC
/// };
/// let breaker = Breaker::new(policy).with_clock(clock);
/// for _ in 0..3 {
///     let failed = breaker.call(|| async { Err::<u32, _>("down") }).await;
///     assert_eq!(failed, Err(CallError::Failed("down")));
/// }
/// let refused = breaker.call(|| async { Ok::<u32, &str>(1) }).await.unwrap_err();
/// let reason: &ClassicReason = refused.refusal().unwrap();
/// assert_eq!(breaker.retry_after(reason), Some(Duration::from_secs(30)));
///
/// hand.advance(Duration::from_secs(30));
/// assert_eq!(breaker.call(|| async { Ok::<u32, &str>(7) }).await, Ok(7));
/// # }
/// ```
pub struct Breaker<B: SharedCircuitBreaker = SharedSreBreaker, C = Errors> {
    shared: Arc<Shared<B, C>>,
}

/// What every clone of a [`Breaker`] shares.
struct Shared<B, C> {
    breaker: B,
    classify: C,
    knobs: Knobs,
    decisions: Decisions,
    ratio: Level,
    /// The state gauge and the changes counter, used only for a family with states.
    states: States,
}

impl Breaker {
    /// A breaker of the family `policy` names ([`BreakerPolicy`]), its record opening now,
    /// counting every `Err` as a failure, on the monotonic clock with real randomness:
    /// `Breaker::new(SRE)` and `Breaker::new(CLASSIC)` differ in nothing else.
    pub fn new<P: BreakerPolicy>(policy: P) -> Breaker<P::Shared> {
        Self::for_breaker(policy)
    }

    /// A breaker of the shared form `B` under `policy`, otherwise as [`new`](Self::new):
    /// for a family [`new`](Self::new) does not pick by its policy, or another shared form
    /// of one it does (a core breaker behind a `Mutex`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Mutex;
    /// use ironward::{SreBreaker, SRE};
    /// use ironward_tokio::call::Breaker;
    ///
    /// let locked = Breaker::for_breaker::<Mutex<SreBreaker>>(SRE);
    /// assert_eq!(locked.ratio(), 0.0);
    /// ```
    pub fn for_breaker<B: SharedCircuitBreaker>(policy: B::Policy) -> Breaker<B> {
        Shared::build(policy, Errors, Knobs::default())
    }
}

impl<B: SharedCircuitBreaker, C> Breaker<B, C> {
    /// The same breaker's parts with `classify`, built anew.
    fn rebuilt<D>(&self, classify: D, change: impl FnOnce(&mut Knobs)) -> Breaker<B, D> {
        let mut knobs = self.shared.knobs.clone();
        change(&mut knobs);
        Shared::build(self.shared.breaker.policy(), classify, knobs)
    }

    /// A new breaker under the policy in force that records as `classify` reads each result
    /// (a closure over `&Result<T, E>`, or any [`Classify`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::CLASSIC;
    /// use ironward_tokio::call::Breaker;
    ///
    /// // A "busy" answer is a failure, though it is an `Ok`.
    /// let breaker = Breaker::new(CLASSIC)
    ///     .with_classifier(|result: &Result<&str, String>| matches!(result, Ok("busy") | Err(_)));
    /// # drop(breaker);
    /// ```
    #[must_use]
    pub fn with_classifier<D>(self, classify: D) -> Breaker<B, D> {
        self.rebuilt(classify, |_| ())
    }

    /// The breaker the calls share, for what its own methods tell: its
    /// [`state`](SharedCircuitBreaker::state), its policy, a
    /// [`retune`](SharedCircuitBreaker::retune) while it serves.
    pub fn breaker(&self) -> &B {
        &self.shared.breaker
    }

    /// The share of calls the breaker would refuse now, on its clock.
    pub fn ratio(&self) -> f64 {
        self.shared.breaker.ratio(self.shared.knobs.clock.now())
    }

    /// The state the breaker is in now; `None` for a family without states (SRE).
    pub fn state(&self) -> Option<State> {
        self.shared.breaker.state(self.shared.knobs.clock.now())
    }

    /// How long until a breaker that refused for `reason` lets a call through again, as
    /// [`SharedCircuitBreaker::retry_after`]: an open classic breaker's wait, `None` for
    /// the SRE breaker, which refuses a share of calls rather than all of them for a time.
    pub fn retry_after(&self, reason: &B::Reason) -> Option<std::time::Duration> {
        B::retry_after(reason)
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.knobs.name
    }

    /// The policy in force.
    pub fn policy(&self) -> B::Policy {
        self.shared.breaker.policy()
    }

    /// Runs `policy` from now on its clock, for every clone, keeping what the breaker has
    /// seen ([`SharedCircuitBreaker::retune`]); the policy it replaced. A policy that forces
    /// a state, or lifts one, changes it now, and the change is reported as any other; the
    /// retune is a `DEBUG` event with both policies, as the tower layer's tuner logs it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::classic::Force;
    /// use ironward::{CLASSIC, Classic};
    /// use ironward::classic::State;
    /// use ironward_tokio::call::Breaker;
    ///
    /// let breaker = Breaker::new(CLASSIC);
    /// let was = breaker.clone().retune(Classic { force: Force::Open, ..CLASSIC });
    /// assert_eq!(was, CLASSIC);
    /// assert_eq!(breaker.state(), Some(State::ForcedOpen));
    /// ```
    pub fn retune(&self, policy: B::Policy) -> B::Policy {
        let shared = &*self.shared;
        let now = shared.knobs.clock.now();
        let was = shared.breaker.retune(policy.clone(), now);
        tracing::debug!(name = shared.knobs.name, from = ?was, to = ?policy, "breaker retuned");
        shared.watch(now);
        was
    }

    /// Runs `call` if the breaker lets it through now, and records how it ended: its value,
    /// its own error as [`CallError::Failed`], or the breaker's refusal as
    /// [`CallError::Refused`], in which case `call` is never called.
    ///
    /// Dropping the returned future before it ends leaves the permit unsettled: nothing is
    /// recorded (see the type's docs).
    pub async fn call<T, E, Fut>(
        &self,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, B::Reason>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
        C: Classify<T, E>,
    {
        let shared = &*self.shared;
        let (permit, start) = shared.check().map_err(CallError::Refused)?;
        let result = call().await;
        shared.settle(permit, start, &result);
        result.map_err(CallError::Failed)
    }
}

impl<B: SharedCircuitBreaker, C: Clone> Breaker<B, C> {
    /// A new breaker under the policy in force, reading `now` from `clock` (by default
    /// [`Clock::monotonic`]), its record opening now on it.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuilt(self.shared.classify.clone(), |k| k.clock = clock)
    }

    /// A new breaker under the policy in force, drawing from `dice` (by default
    /// [`Dice::random`]): one draw a call where the family reads it
    /// ([`SharedCircuitBreaker::DRAWS`]), none for the classic breaker. A piece draws only
    /// what it reads, so dice shared with other pieces move on by its reads alone.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        self.rebuilt(self.shared.classify.clone(), |k| k.dice = dice)
    }

    /// A new breaker under the policy in force, reporting under `name` (by default
    /// `"default"`): the `name` label of its metrics and field of its events.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuilt(self.shared.classify.clone(), |k| k.name = name)
    }
}

impl<B: SharedCircuitBreaker, C> Shared<B, C> {
    /// A breaker on these parts, its record opening now on their clock.
    fn build(policy: B::Policy, classify: C, knobs: Knobs) -> Breaker<B, C> {
        let breaker = B::new(policy, knobs.clock.now());
        Breaker {
            shared: Arc::new(Self {
                breaker,
                classify,
                decisions: Decisions::new("breaker", knobs.name, "refused", B::REFUSALS),
                ratio: Level::breaker_ratio(knobs.name),
                states: States::new(knobs.name),
                knobs,
            }),
        }
    }

    /// Asks the breaker for a call now, counts the answer and reports a change of state; the
    /// permit and the instant it was given.
    fn check(&self) -> Result<(B::Permit, Duration), B::Reason> {
        let now = self.knobs.clock.now();
        let checked = self.breaker.check(now, B::draw(&self.knobs.dice));
        match &checked {
            Ok(_) => self.decisions.admitted(),
            Err(reason) => self.refused(reason),
        }
        self.watch(now);
        checked.map(|permit| (permit, now))
    }

    /// Records the call behind `permit`, given at `start`, as the classifier reads `result`
    /// and the time it took, now.
    fn settle<T, E>(&self, permit: B::Permit, start: Duration, result: &Result<T, E>)
    where
        C: Classify<T, E>,
    {
        let now = self.knobs.clock.now();
        let failed = self
            .classify
            .is_failure_in(result, now.saturating_sub(start));
        // This breaker made the permit: nothing comes back.
        let _ = if failed {
            self.breaker.fail(permit, now)
        } else {
            self.breaker.pass(permit, now)
        };
        self.watch(now);
    }

    /// Counts and reports a refusal.
    #[cold]
    fn refused(&self, reason: &B::Reason) {
        let kind = B::refusal(reason);
        self.decisions.refused(kind);
        self.ratio.set(B::ratio_of(reason));
        tracing::debug!(
            name = self.knobs.name,
            outcome = "refused",
            reason = B::REFUSALS.get(kind).copied().unwrap_or("unknown"),
            numbers = ?reason,
            "breaker refused a call"
        );
    }

    /// Reports the change of state the last decisions made, if any, the state gauge
    /// registered at the first ([`States::watch`]); nothing, decided when compiled, for a
    /// family without states.
    #[inline]
    fn watch(&self, now: Duration) {
        if let Some(Transition { from, to }) = self.states.watch(&self.breaker, now) {
            tracing::info!(
                name = self.knobs.name,
                from = from.as_str(),
                to = to.as_str(),
                "breaker changed state"
            );
        }
    }
}

impl<B: SharedCircuitBreaker, C> Clone for Breaker<B, C> {
    /// A breaker sharing this one's record.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<B: SharedCircuitBreaker + fmt::Debug, C: fmt::Debug> fmt::Debug for Breaker<B, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Breaker")
            .field("breaker", &self.shared.breaker)
            .field("classify", &self.shared.classify)
            .field("knobs", &self.shared.knobs)
            .finish()
    }
}
