//! [`Limiter`]: the adaptive concurrency limit around any async call, with its optional
//! bounded queue.

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;

use ironward::Criticality;

use super::{CallError, Grade, SampleOk};
use crate::meter::{DEFAULT_NAME, Decisions, Level};
use crate::{Clock, Dice, LimiterRefusal, SharedLimiter};

/// The adaptive concurrency limit (after Netflix's concurrency-limits) around any async
/// call: a [`SharedLimiter`], its queue if it has one, and its clock and dice, as
/// ironward-tower's `LimiterLayer` runs it.
///
/// A call is let in, queued (made [`SharedLimiter::with_queue`]: it waits at most the
/// [`Queue`](crate::Queue)'s `wait`, and is turned away gradually as the queue fills), or
/// refused with the [`LimiterRefusal`] that says why, in which case it never runs. One let
/// in holds its place until it ends, then settles as the grade (`G`, by default
/// [`SampleOk`]) reads its result, its latency measured on the limiter's clock. A call
/// admitted by class ([`call_as`](Self::call_as)) meets the floor the limiter raises under
/// overload, so that sheddable calls give way before critical ones.
///
/// **Cancellation.** A call whose future is dropped while it waits leaves the queue; one
/// dropped while it runs is settled as ignored: out of flight, its latency not sampled, and
/// its room goes to the next in the queue.
///
/// `Clone` is an `Arc` clone, over one shared limiter.
///
/// # Metrics and events
///
/// As the layer: `ironward.requests{piece="limiter", name, outcome, reason, criticality}`
/// with the reasons of [`LimiterRefusal::REASONS`], and `ironward.limiter.limit`; a refusal
/// is a `DEBUG` event with the numbers.
///
/// # Examples
///
/// A limit of one, and a queue in front of it:
///
/// ```
/// use std::time::Duration;
/// use ironward::limit::{AIMD, Aimd, Algorithm};
/// use ironward::{ADAPTIVE, Adaptive};
/// use ironward_tokio::call::Limiter;
/// use ironward_tokio::{Clock, Dice, QUEUE, SharedLimiter};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let one = Adaptive { algorithm: Algorithm::Aimd(Aimd { initial: 1, min: 1, max: 1, ..AIMD }), ..ADAPTIVE };
/// let shared = SharedLimiter::with_queue(one, QUEUE, Clock::monotonic(), Dice::seeded(1));
/// let limiter = Limiter::new(shared);
/// let (a, b) = tokio::join!(
///     limiter.call(|| async { Ok::<_, ()>("first") }),
///     limiter.call(|| async { Ok::<_, ()>("second") }),
/// );
/// assert_eq!((a, b), (Ok("first"), Ok("second")));
/// assert_eq!(limiter.limiter().flying(), 0);
/// # }
/// ```
pub struct Limiter<G = SampleOk> {
    shared: Arc<Shared<G>>,
}

struct Shared<G> {
    limiter: SharedLimiter,
    grade: G,
    name: &'static str,
    decisions: Decisions,
    limit: Level,
}

impl Limiter {
    /// Calls through `limiter` (its policy, queue, clock and dice), graded by [`SampleOk`].
    pub fn new(limiter: SharedLimiter) -> Self {
        Self::build(limiter, SampleOk, DEFAULT_NAME)
    }
}

impl<G> Limiter<G> {
    fn build(limiter: SharedLimiter, grade: G, name: &'static str) -> Self {
        Self {
            shared: Arc::new(Shared {
                limiter,
                grade,
                name,
                decisions: Decisions::new("limiter", name, "refused", LimiterRefusal::REASONS)
                    .by_criticality(),
                limit: Level::limiter_limit(name),
            }),
        }
    }

    /// The same limiter, its calls settled as `grade` reads their results (a closure over
    /// `&Result<T, E>` answering a [`Settle`](ironward::Settle), or any [`Grade`]).
    #[must_use]
    pub fn with_grade<H>(self, grade: H) -> Limiter<H> {
        Limiter::build(self.shared.limiter.clone(), grade, self.shared.name)
    }

    /// The shared limiter the calls go through, for its limit, its calls in flight and
    /// queued, and a retune.
    pub fn limiter(&self) -> &SharedLimiter {
        &self.shared.limiter
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.name
    }

    /// [`call_as`](Self::call_as) a [`Criticality::Critical`] call, the default class.
    pub async fn call<T, E, Fut>(
        &self,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, LimiterRefusal>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
        G: Grade<T, E>,
    {
        self.call_as(Criticality::Critical, call).await
    }

    /// Runs `call` as a call of class `criticality` once the limiter lets it in (at once,
    /// or from its queue), and settles it when it ends: its value, its own error as
    /// [`CallError::Failed`], or the limiter's refusal, in which case `call` is never
    /// called.
    pub async fn call_as<T, E, Fut>(
        &self,
        criticality: Criticality,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, LimiterRefusal>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
        G: Grade<T, E>,
    {
        let shared = &*self.shared;
        let permit = match shared.limiter.acquire(criticality).await {
            Ok(permit) => permit,
            Err(refusal) => {
                shared.refused(&refusal);
                return Err(CallError::Refused(refusal));
            }
        };
        shared.decisions.admitted_as(criticality);
        let result = call().await;
        permit.settle(shared.grade.grade(&result));
        if Level::is_read() {
            shared.limit.set(f64::from(shared.limiter.limit()));
        }
        result.map_err(CallError::Failed)
    }
}

impl<G: Clone> Limiter<G> {
    /// The same limiter reporting under `name` (by default `"default"`).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        Self::build(self.shared.limiter.clone(), self.shared.grade.clone(), name)
    }

    /// A new limiter under the policy and the queue in force, reading `clock`: nothing in
    /// flight, nothing queued, the limit back at the policy's initial one. The
    /// [`SharedLimiter`] this one went through is left as it is, so configure first, then
    /// clone.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        let dice = self.shared.limiter.dice().clone();
        self.rebuilt(clock, dice)
    }

    /// A new limiter as [`with_clock`](Self::with_clock) makes one, its queue drawing from
    /// `dice`.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        let clock = self.shared.limiter.clock().clone();
        self.rebuilt(clock, dice)
    }

    fn rebuilt(&self, clock: Clock, dice: Dice) -> Self {
        let limiter = &self.shared.limiter;
        let fresh = SharedLimiter::build(limiter.policy(), limiter.queue(), clock, dice);
        Self::build(fresh, self.shared.grade.clone(), self.shared.name)
    }
}

impl<G> Shared<G> {
    /// Counts and reports a refusal.
    #[cold]
    fn refused(&self, refusal: &LimiterRefusal) {
        let index = refusal.label();
        let reason = refusal.reason;
        self.decisions.refused_as(index, reason.criticality);
        tracing::debug!(
            name = self.name,
            outcome = "refused",
            reason = LimiterRefusal::REASONS[index],
            criticality = reason.criticality.name(),
            floor = reason.floor.name(),
            flying = reason.flying,
            limit = reason.limit,
            queued = ?refusal.queued,
            "limiter refused a call"
        );
    }
}

impl<G> Clone for Limiter<G> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<G: fmt::Debug> fmt::Debug for Limiter<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("limiter", &self.shared.limiter)
            .field("grade", &self.shared.grade)
            .field("name", &self.shared.name)
            .finish()
    }
}
