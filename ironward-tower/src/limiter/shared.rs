//! What every clone of one service shares: the limiter and the handles it reports through.

use crate::classify::Grade;
use crate::meter::{Level, Meter};
use crate::tuner::Tune;
use ironward::{Adaptive, Settle};
use ironward_tokio::Knobs;
use ironward_tokio::{Admission, LimiterPermit, LimiterRefusal, Queue, SharedLimiter};
use std::fmt;
use std::time::Duration;
use tower::BoxError;

use super::bypass::Pass;

/// What every clone of one service shares: the limiter, the grade, and the handles it
/// reports through.
pub(crate) struct Shared<C> {
    pub(crate) limiter: SharedLimiter,
    classify: C,
    pub(crate) meter: Meter,
    limit: Level,
}

/// The reasons a limiter refuses for, as the `reason` label gives them
/// ([`LimiterRefusal::REASONS`]).
const REASONS: &[&str] = LimiterRefusal::REASONS;

impl<C> Shared<C> {
    pub(crate) fn new(limiter: SharedLimiter, classify: C, knobs: &Knobs) -> Self {
        Self {
            limiter,
            classify,
            meter: Meter::of(knobs, "limiter", REASONS).by_criticality(),
            limit: Level::limiter_limit(knobs.name),
        }
    }

    /// Registers the limiter's metrics, if they are not yet: when its layer makes a service,
    /// its name final. The gauge starts at the limit.
    pub(crate) fn register(&self) {
        self.meter.register();
        self.limit.register();
        self.gauge();
    }

    /// The grade, for a layer made anew with it.
    pub(crate) fn classifier(&self) -> &C {
        &self.classify
    }

    /// The limiter's decision on a request that reads as `pass`, at the reading `now` of the
    /// limiter's clock (read here when `None`), counted and reported as every layer counts
    /// it: an admission by its class, a refusal by its reason ([`refused`](Self::refused)),
    /// a bypass at trace level and in no count (the meter has no outcome for it). A bypass
    /// is [`Admission::Admitted`] with a permit the limiter counts nowhere.
    pub(crate) fn admit_at(&self, pass: Pass, now: Option<Duration>) -> Admission {
        let class = match pass {
            Pass::Counted(class) => class,
            Pass::Bypass => {
                let permit = match now {
                    Some(now) => self.limiter.bypass_at(now),
                    None => self.limiter.bypass(),
                };
                tracing::trace!(name = self.meter.name(), "limiter let a request bypass");
                return Admission::Admitted(permit);
            }
        };
        let admission = match now {
            Some(now) => self.limiter.admit_at(now, class),
            None => self.limiter.admit(class),
        };
        match &admission {
            Admission::Admitted(_) => self.meter.admitted_as(class),
            Admission::Refused(refusal) => self.refused(refusal),
            Admission::Queued(_) => {}
        }
        admission
    }

    /// Reports how a queued request's wait ended (`admitted`, from its
    /// [`Waiter`](ironward_tokio::Waiter)), as [`admit_at`](Self::admit_at) reports a
    /// decision on arrival: an admission by the class the permit was let in as, a refusal by
    /// its reason.
    pub(crate) fn waited(&self, admitted: &Result<LimiterPermit, LimiterRefusal>) {
        match admitted {
            Ok(permit) => self.meter.admitted_as(permit.criticality()),
            Err(refusal) => self.refused(refusal),
        }
    }

    /// Reports a refusal: the counter for its reason and class, and a debug event with the
    /// numbers that decided it (under partitions, `room` is the class's reservation and
    /// `class_flying` its own calls in flight).
    pub(crate) fn refused(&self, refusal: &LimiterRefusal) {
        let reason = refusal.reason;
        let index = refusal.label();
        self.meter.refused_as(index, reason.criticality);
        tracing::debug!(
            name = self.meter.name(),
            outcome = self.meter.refusal(),
            reason = REASONS[index],
            criticality = reason.criticality.name(),
            floor = reason.floor.name(),
            flying = reason.flying,
            limit = reason.limit,
            room = reason.room,
            class_flying = reason.class_flying,
            queued = ?refusal.queued,
            "limiter refused a request"
        );
    }

    /// How `result` settles its call, by the grade.
    pub(super) fn grade<Res>(&self, result: &Result<Res, BoxError>) -> Settle
    where
        C: Grade<Res>,
    {
        self.classify.grade(result)
    }

    /// Sets the limit gauge, if a recorder reads it: after a settle, which may have moved it.
    pub(super) fn gauge(&self) {
        if Level::is_read() {
            self.limit.set(f64::from(self.limiter.limit()));
        }
    }
}

impl<C> fmt::Debug for Shared<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("limiter", &self.limiter)
            .field("name", &self.meter.name())
            .finish_non_exhaustive()
    }
}

impl<C: Send + Sync> Tune<Adaptive> for Shared<C> {
    fn retune(&self, policy: Adaptive) -> Adaptive {
        let was = self.limiter.retune(policy);
        self.gauge();
        tracing::debug!(from = ?was, to = ?policy, "limiter retuned");
        was
    }

    fn policy(&self) -> Adaptive {
        self.limiter.policy()
    }
}

impl<C: Send + Sync> Tune<Option<Queue>> for Shared<C> {
    fn retune(&self, queue: Option<Queue>) -> Option<Queue> {
        let was = self.limiter.retune_queue(queue);
        tracing::debug!(from = ?was, to = ?queue, "limiter queue retuned");
        was
    }

    fn policy(&self) -> Option<Queue> {
        self.limiter.queue()
    }
}
