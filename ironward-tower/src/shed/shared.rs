//! What every clone of one service shares: the shedder and the handles it reports through.

use crate::meter::{Level, Meter};
use crate::tuner::Tune;
use crate::{Classify, Cpu, Mode};
use ironward::{Criticality, Shed, ShedReason};
use ironward_tokio::Knobs;
use ironward_tokio::{SharedShedder, ShedTicket};
use std::time::Duration;
use tower::BoxError;

/// What every clone of one service shares: the shedder, its sources, its classifier and the
/// handles it reports through.
#[derive(Debug)]
pub(crate) struct Shared<C> {
    shedder: SharedShedder,
    knobs: Knobs,
    cpu: Cpu,
    classify: C,
    pub(crate) meter: Meter,
    in_flight: Level,
}

/// The reasons a shedder refuses for, as the `reason` label gives them: at or over the CPU
/// threshold, under it within the cooling time of the last overload, or a class below the
/// floor a more critical class's refusal raised.
const REASONS: &[&str] = &["overloaded", "cooling", "floor"];

impl<C> Shared<C> {
    pub(crate) fn new(shedder: SharedShedder, cpu: Cpu, classify: C, knobs: Knobs) -> Self {
        Self {
            shedder,
            cpu,
            classify,
            meter: Meter::of(&knobs, "shed", REASONS),
            in_flight: Level::shed_in_flight(knobs.name),
            knobs,
        }
    }

    /// Registers the shedder's metrics, if they are not yet: when its layer makes a service,
    /// its name final.
    pub(crate) fn register(&self) {
        self.meter.register();
        self.in_flight.register();
    }

    /// Whether the shedder enforces its refusals or only reports them.
    pub(crate) fn mode(&self) -> Mode {
        self.knobs.mode
    }

    /// Asks the shedder to admit a request of class `criticality` now, with the numbers
    /// behind a refusal ([`SharedShedder::check_as`]): one clock read, the start of the
    /// request's response time. The count in flight the gauge is set to is read just after
    /// the decision, and only when a recorder reads the gauge.
    pub(super) fn check(&self, criticality: Criticality) -> Result<ShedTicket, ShedReason> {
        self.check_at(self.knobs.clock.now(), criticality)
    }

    /// [`check`](Self::check) on a reading of the shedder's [`clock`](Self::clock) the
    /// caller took, which a server stack shares among its pieces.
    pub(crate) fn check_at(
        &self,
        now: Duration,
        criticality: Criticality,
    ) -> Result<ShedTicket, ShedReason> {
        let decision = self.shedder.check_as(now, self.cpu.read(), criticality);
        if Level::is_read() {
            self.in_flight.set(self.shedder.flying() as f64);
        }
        decision
    }

    /// Reports a refusal (or, in shadow mode, a would-be refusal): the counter for its heat (or
    /// the floor) and a debug event with the numbers that decided it.
    pub(crate) fn refused(&self, reason: &ShedReason) {
        // Below the floor whatever the heat; else the core refused while hot: overloaded, or
        // else cooling.
        let index = if reason.criticality < reason.floor {
            2
        } else {
            usize::from(!reason.overloaded)
        };
        self.meter.refused(index);
        tracing::debug!(
            name = self.meter.name(),
            outcome = self.meter.refusal(),
            criticality = reason.criticality.name(),
            floor = reason.floor.name(),
            cpu = reason.cpu,
            flying = reason.flying,
            average = reason.average,
            capacity = reason.capacity,
            overloaded = reason.overloaded,
            cooling = reason.cooling,
            "shedder refused a request"
        );
    }

    /// Lands the request behind `ticket` as the classifier reads `result`: a pass reads the
    /// clock a second time, for the end of its response time.
    pub(crate) fn settle<Res>(&self, ticket: ShedTicket, result: &Result<Res, BoxError>)
    where
        C: Classify<Res>,
    {
        self.settle_at(ticket, result, || self.knobs.clock.now());
    }

    /// [`settle`](Self::settle), a pass reading `now` for the end of its response time: a
    /// server stack shares that reading among its pieces.
    pub(crate) fn settle_at<Res>(
        &self,
        ticket: ShedTicket,
        result: &Result<Res, BoxError>,
        now: impl FnOnce() -> Duration,
    ) where
        C: Classify<Res>,
    {
        if self.classify.is_failure(result) {
            self.abandon(ticket);
        } else {
            self.shedder.pass(ticket, now());
            self.landed();
        }
    }

    /// The clock the shedder reads.
    #[cfg(feature = "axum")]
    pub(crate) fn clock(&self) -> &crate::Clock {
        &self.knobs.clock
    }

    /// Lands the request behind `ticket` as a failure: out of flight, no response time.
    pub(crate) fn abandon(&self, ticket: ShedTicket) {
        self.shedder.fail(ticket);
        self.landed();
    }

    /// Sets the gauge of calls in flight, read as a request landed, if a recorder reads it.
    pub(super) fn landed(&self) {
        if Level::is_read() {
            self.in_flight.set(self.shedder.flying() as f64);
        }
    }

    /// The knobs and the CPU source, for a layer made anew on them.
    pub(crate) fn sources(&self) -> (Knobs, Cpu) {
        (self.knobs.clone(), self.cpu.clone())
    }

    /// The classifier, for a layer made anew with it.
    pub(crate) fn classifier(&self) -> &C {
        &self.classify
    }

    /// The policy the shedder runs, for a tuner and for a layer made anew under it.
    pub(crate) fn shed(&self) -> Shed {
        self.shedder.shed()
    }

    /// How many requests are in flight now.
    pub(crate) fn flying(&self) -> u64 {
        self.shedder.flying()
    }
}

impl<C: Send + Sync> Tune<Shed> for Shared<C> {
    fn retune(&self, shed: Shed) -> Shed {
        let was = self.shedder.retune(shed, self.knobs.clock.now());
        tracing::debug!(from = ?was, to = ?shed, "shedder retuned");
        was
    }

    fn policy(&self) -> Shed {
        Shared::shed(self)
    }
}
