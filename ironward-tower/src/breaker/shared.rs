//! What every clone of one service shares: the breaker and the handles it reports through.

use std::time::Duration;

use crate::meter::{Level, Meter, States};
use crate::tuner::Tune;
use crate::{Classify, Mode};
use ironward::classic::{State, Transition};
use ironward_tokio::Knobs;
use ironward_tokio::{SharedCircuitBreaker, SharedSreBreaker};
use tower::BoxError;

/// What every clone of one service shares: the breaker, its sources, its classifier and the
/// handles it reports through.
#[derive(Debug)]
pub(crate) struct Shared<C, B = SharedSreBreaker> {
    breaker: B,
    knobs: Knobs,
    classify: C,
    pub(crate) meter: Meter,
    ratio: Level,
    /// The state gauge and the changes counter, registered only for a family with states.
    states: States,
}

impl<C, B: SharedCircuitBreaker> Shared<C, B> {
    pub(crate) fn new(breaker: B, classify: C, knobs: Knobs) -> Self {
        Self {
            breaker,
            classify,
            meter: Meter::of(&knobs, "breaker", B::REFUSALS),
            ratio: Level::breaker_ratio(knobs.name),
            states: States::new(knobs.name),
            knobs,
        }
    }

    /// Registers the breaker's metrics, if they are not yet: when its layer makes a service,
    /// its name final.
    pub(crate) fn register(&self) {
        self.meter.register();
        self.ratio.register();
        if B::STATEFUL {
            let now = self.knobs.clock.now();
            self.states
                .register(|| self.breaker.state(now).unwrap_or(State::Closed));
        }
    }

    /// Whether the breaker enforces its refusals or only reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.knobs.mode
    }

    /// Reports a refusal (or, in shadow mode, a would-be refusal): the counter under the
    /// reason's label, the share of calls the breaker refused then, and a debug event with
    /// the numbers that decided it.
    pub(crate) fn refused(&self, reason: &B::Reason) {
        let kind = B::refusal(reason);
        self.meter.refused(kind);
        self.ratio.set(B::ratio_of(reason));
        tracing::debug!(
            name = self.meter.name(),
            outcome = self.meter.refusal(),
            reason = B::REFUSALS[kind],
            numbers = ?reason,
            "breaker refused a call"
        );
    }

    /// Asks the breaker for a call now, with the numbers behind a refusal
    /// ([`SharedCircuitBreaker::check`]; for [`SharedSreBreaker`] one load while the backend is
    /// healthy), and reports the change of state it made, if any.
    pub(super) fn check(&self) -> Result<B::Permit, B::Reason> {
        self.check_at(self.knobs.clock.now())
    }

    /// [`check`](Self::check) at the reading `now` of the breaker's clock the caller already
    /// took: a client stack decides its pieces on one reading.
    pub(crate) fn check_at(&self, now: Duration) -> Result<B::Permit, B::Reason> {
        let roll = B::draw(&self.knobs.dice);
        let checked = self.breaker.check(now, roll);
        self.watch(now);
        checked
    }

    /// Reports the change of state the last decisions made, if any ([`States::watch`]: for
    /// a family without states, the SRE breaker, nothing, decided when the layer is
    /// compiled, so its calls never ask).
    #[inline]
    fn watch(&self, now: Duration) {
        if let Some(transition) = self.states.watch(&self.breaker, now) {
            self.transitioned(transition);
        }
    }

    /// The event of one change of state, at `INFO`: an operator acts on a breaker that opens
    /// or closes.
    #[cold]
    fn transitioned(&self, transition: Transition) {
        let Transition { from, to } = transition;
        tracing::info!(
            name = self.meter.name(),
            from = from.as_str(),
            to = to.as_str(),
            from_number = States::number(from),
            to_number = States::number(to),
            "breaker changed state"
        );
    }

    /// Records the call behind `permit` as the classifier reads `result`, now.
    pub(crate) fn settle<Res>(&self, permit: B::Permit, result: &Result<Res, BoxError>)
    where
        C: Classify<Res>,
    {
        self.settle_at(permit, result, self.knobs.clock.now());
    }

    /// [`settle`](Self::settle) at the reading `now` the caller took as the call ended, which
    /// a client stack shares among its pieces.
    pub(crate) fn settle_at<Res>(
        &self,
        permit: B::Permit,
        result: &Result<Res, BoxError>,
        now: Duration,
    ) where
        C: Classify<Res>,
    {
        let failed = self.classify.is_failure(result);
        // The layer's own breaker made the permit: nothing comes back.
        let _ = if failed {
            self.breaker.fail(permit, now)
        } else {
            self.breaker.pass(permit, now)
        };
        self.watch(now);
    }

    /// The clock the breaker reads.
    pub(crate) fn clock(&self) -> &crate::Clock {
        &self.knobs.clock
    }

    /// The knobs, for a layer made anew on them.
    pub(crate) fn knobs(&self) -> &Knobs {
        &self.knobs
    }

    /// The classifier, for a layer made anew with it.
    pub(crate) fn classifier(&self) -> &C {
        &self.classify
    }

    /// The policy the breaker runs, for a tuner and for a layer made anew under it.
    pub(crate) fn policy(&self) -> B::Policy {
        self.breaker.policy()
    }

    /// The standing throttle now.
    pub(crate) fn ratio(&self) -> f64 {
        self.breaker.ratio(self.knobs.clock.now())
    }
}

impl<C: Send + Sync, B: SharedCircuitBreaker> Tune<B::Policy> for Shared<C, B> {
    fn retune(&self, policy: B::Policy) -> B::Policy {
        let now = self.knobs.clock.now();
        let was = self.breaker.retune(policy.clone(), now);
        tracing::debug!(from = ?was, to = ?policy, "breaker retuned");
        // A policy that puts the breaker in a state by hand, or lifts one, changes it now.
        self.watch(now);
        was
    }

    fn policy(&self) -> B::Policy {
        Shared::policy(self)
    }
}
