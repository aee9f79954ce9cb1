//! [`RateLimit`]: a rate limit around any async call, that refuses a call over the rate at
//! once or lets it wait, up to a bound, for the instant it is admitted at.

mod admit;
mod reason;

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

pub use admit::{Admit, Admitted, Denied, LocalRate, LocalSlot};
pub use reason::{RateCause, RateReason};

use super::{CallError, Deadline};
use crate::meter::{DEFAULT_NAME, Decisions};
use crate::{Clock, Quota};

/// A rate limit around any async call, on one of the core's limiters in memory
/// ([`LocalRate`]: a token bucket, a sliding window or a fixed period, as a [`Quota`] names
/// it) or any other [`Admit`] (ironward-redis's limiters on a key, shared by a fleet).
///
/// **Refuse, or wait up to a bound.** By default a call over the rate is refused at once
/// with a [`RateReason`] that says how long until room ([`retry_after`](RateReason::retry_after)),
/// and never runs, as ironward-tower's `QuotaLayer` refuses. Made
/// [`wait_up_to(bound)`](Self::wait_up_to), a call waits for room as governor's
/// `until_ready` does, but only while the wait is at most `bound` and ends before the
/// [`Deadline`] the call runs under: a call whose wait would be longer, or would reach the
/// deadline, is refused at once, without sleeping, its reason saying how long it would have
/// waited. A wait sleeps on the piece's [`Clock`], so on a [manual](Clock::manual) clock it
/// moves the clock rather than waiting.
///
/// **Fair and exact.** On a limiter that holds slots ahead (every [`LocalRate`]), a call that
/// must wait takes its cost at once, at the first instant with room, and sleeps until
/// exactly then: it is admitted at the instant it was told, in the order calls came, and a
/// call arriving later cannot take its place (it is decided after it, refused or queued
/// behind it). On a limiter that cannot (a Redis script decides at the reading it is given),
/// a call sleeps the wait it was told and asks again, within the same bound: as fair as the
/// store, which other processes share.
///
/// **Cancellation.** A call whose future is dropped while it waits gives its slot back: the
/// cost it held is refunded to the limiter ([`Admit::give_back`]), so no token is lost. A
/// call that has started has spent its cost, whatever becomes of it.
///
/// **A limiter that cannot decide.** An [`Admit`] that answers [`Denied::Unavailable`] (the
/// Redis limiters, when Redis does not answer in time) has the call refused with
/// [`RateCause::Unavailable`] and the wait it names, as ironward-redis's `FleetQuotaLayer`
/// refuses it: a rate limit that is not known to have room admits nothing. (A Redis that is
/// down is not that case: its limiters decide on their local fallback.)
///
/// **Bad input.** A cost the limit never has room for (above a bucket's burst, a window's or
/// a period's quota; any cost under a rate or quota of zero) is refused at once with a wait
/// of `Duration::MAX`, whatever the bound. A bound of zero is the default, refusing; a bound
/// of `Duration::MAX` waits as long as room takes, but never for a room that never comes.
/// A clock read earlier than the limiter has seen is read as the latest seen, and the wait
/// counted on the caller's clock (see [`LocalRate`]).
///
/// `Clone` is an `Arc` clone: clones share one limiter. `with_clock`, `with_name` and
/// `wait_up_to` keep the limiter too, so a piece that waits and one that refuses may share a
/// budget (on one clock: the limiter reads every reading it is given as one clock's). [`retune`](Self::retune) changes the limit live for every clone.
///
/// # Metrics and events
///
/// `ironward.requests{piece="rate", name, outcome, reason}`: `admitted` for a call let
/// through (after its wait), `refused` with `reason` one of [`RateCause::REASONS`]
/// (`"over"`, `"deadline"`, `"unavailable"`); each refusal is a `DEBUG` event with its
/// numbers. A call dropped while it waits is counted neither way.
///
/// # Examples
///
/// Two calls a minute: the third is refused, then a piece that waits up to a minute on the
/// same limiter is admitted at the instant the window has room, on a manual clock.
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::{Clock, Quota};
/// use ironward_tokio::call::{CallError, RateCause, RateLimit};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let secs = Duration::from_secs;
/// let (clock, hand) = Clock::manual(Duration::ZERO);
/// let limit = RateLimit::new(Quota::sliding(2, secs(60))).with_clock(clock.clone());
/// let ok = || async { Ok::<_, std::io::Error>("served") };
///
/// assert_eq!(limit.call(ok).await.unwrap(), "served");
/// hand.advance(secs(10));
/// assert_eq!(limit.call(ok).await.unwrap(), "served");
/// let Err(CallError::Refused(refused)) = limit.call(ok).await else { panic!() };
/// assert_eq!((refused.cause, refused.retry_after()), (RateCause::Over, secs(50)));
///
/// let patient = limit.clone().wait_up_to(secs(60));
/// assert_eq!(patient.call(ok).await.unwrap(), "served");
/// assert_eq!(clock.now(), secs(60), "admitted as the first call left the window");
/// # }
/// ```
pub struct RateLimit<A = LocalRate> {
    shared: Arc<Shared<A>>,
}

struct Shared<A> {
    limiter: Arc<A>,
    /// The longest a call waits: zero refuses.
    bound: Duration,
    clock: Clock,
    name: &'static str,
    decisions: Decisions,
}

impl RateLimit {
    /// A rate limit of `limit` in memory ([`LocalRate`]), refusing a call over it, on the
    /// monotonic clock.
    pub fn new(limit: Quota) -> Self {
        Self::over(LocalRate::new(limit))
    }
}

impl<A: Admit> RateLimit<A> {
    /// A rate limit kept by `limiter`, refusing a call over it, on the monotonic clock.
    pub fn over(limiter: A) -> Self {
        Self::build(
            Arc::new(limiter),
            Duration::ZERO,
            Clock::default(),
            DEFAULT_NAME,
        )
    }

    fn build(limiter: Arc<A>, bound: Duration, clock: Clock, name: &'static str) -> Self {
        Self {
            shared: Arc::new(Shared {
                limiter,
                bound,
                clock,
                name,
                decisions: Decisions::new("rate", name, "refused", RateCause::REASONS),
            }),
        }
    }

    fn rebuilt(&self, bound: Duration, clock: Clock, name: &'static str) -> Self {
        Self::build(Arc::clone(&self.shared.limiter), bound, clock, name)
    }

    /// The same limiter, letting a call wait up to `bound` for room (zero: refuse at once,
    /// the default; `Duration::MAX`: as long as room takes), and never past the deadline it
    /// runs under.
    #[must_use]
    pub fn wait_up_to(self, bound: Duration) -> Self {
        self.rebuilt(bound, self.shared.clock.clone(), self.shared.name)
    }

    /// The same limiter read and slept on `clock` (by default [`Clock::monotonic`]).
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuilt(self.shared.bound, clock, self.shared.name)
    }

    /// The same limiter reporting under `name` (by default `"default"`).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuilt(self.shared.bound, self.shared.clock.clone(), name)
    }

    /// The longest a call waits for room: zero when it refuses at once.
    pub fn bound(&self) -> Duration {
        self.shared.bound
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.name
    }

    /// The limiter it runs.
    pub fn limiter(&self) -> &A {
        &self.shared.limiter
    }

    /// The limit it keeps now.
    pub fn limit(&self) -> Quota {
        self.shared.limiter.limit()
    }

    /// Changes the limit live, for every clone, keeping what the limiter has counted (the
    /// core's `retune`: a bucket keeps its tokens, a window its entries, a period its count),
    /// read at the clock's reading now. A limit of another kind (a bucket for a window, an
    /// aligned period for one that is not), or a limiter whose limit is fixed (a Redis one),
    /// is handed back as `Err` and nothing changes: [`Quota::retunes_to`] says which.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::{Clock, Quota};
    /// use ironward_tokio::call::RateLimit;
    ///
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let limit = RateLimit::new(Quota::bucket(1.0, 1.0)).with_clock(clock);
    /// assert_eq!(limit.retune(Quota::bucket(10.0, 5.0)), Ok(()));
    /// assert_eq!(limit.limit(), Quota::bucket(10.0, 5.0));
    /// let window = Quota::sliding(5, Duration::from_secs(1));
    /// assert_eq!(limit.retune(window), Err(window));
    /// ```
    pub fn retune(&self, limit: Quota) -> Result<(), Quota> {
        let shared = &*self.shared;
        shared.limiter.retune(limit, shared.clock.now())
    }

    /// Runs `call` at a cost of one: [`call_n`](Self::call_n).
    pub async fn call<T, E, Fut>(
        &self,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, RateReason>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        self.call_n(1, call).await
    }

    /// Runs `call` at a cost of `cost` (tokens of a bucket, units of a window or a period)
    /// once the limiter admits it: at once, or after a wait within the bound and the
    /// deadline. Its value, its own error as [`CallError::Failed`], or the refusal, in which
    /// case `call` is never called. A cost of zero takes nothing and passes at once, as the
    /// core's limiters pass it.
    pub async fn call_n<T, E, Fut>(
        &self,
        cost: u32,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, RateReason>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        let shared = &*self.shared;
        if let Err(reason) = shared.admit(cost).await {
            shared.refused(&reason);
            return Err(CallError::Refused(reason));
        }
        shared.decisions.admitted();
        call().await.map_err(CallError::Failed)
    }
}

impl<A: Admit> Shared<A> {
    /// Waits until the limiter admits a call of `cost`, or says why it will not.
    async fn admit(&self, cost: u32) -> Result<(), RateReason> {
        // One reading a decision: the clock is read again only after a sleep.
        let start = self.clock.now();
        let mut now = start;
        loop {
            let own = self.bound.saturating_sub(now.saturating_sub(start));
            // A call may start strictly before its deadline: one admitted as it is reached
            // has no time left to run.
            let (within, cause, bound) = match Deadline::left() {
                Some(left) if left.saturating_sub(Duration::from_nanos(1)) < own => (
                    left.saturating_sub(Duration::from_nanos(1)),
                    RateCause::Deadline,
                    left,
                ),
                _ => (own, RateCause::Over, self.bound),
            };
            let refusal = |cause, wait| RateReason {
                cause,
                limit: self.limiter.limit(),
                cost,
                wait,
                bound,
            };
            match self.limiter.admit(now, cost, within).await {
                Ok(Admitted { wait, slot }) => {
                    let mut held = Held {
                        limiter: &*self.limiter,
                        clock: &self.clock,
                        slot,
                    };
                    if !wait.is_zero() {
                        // To the instant, from whatever the clock reads after the decision.
                        let instant = now.saturating_add(wait);
                        self.clock
                            .sleep(instant.saturating_sub(self.clock.now()))
                            .await;
                    }
                    // Its time has come: the slot is spent, not given back.
                    held.slot = None;
                    return Ok(());
                }
                // A limiter that holds nothing ahead: sleep the wait and ask again.
                Err(Denied::Later { wait })
                    if !wait.is_zero() && wait != Duration::MAX && wait <= within =>
                {
                    self.clock.sleep(wait).await;
                    // A clock that a sleep does not move (a manual one at the end of its
                    // range, one read from a constant) can never bring the room.
                    let then = self.clock.now();
                    if then <= now {
                        return Err(refusal(cause, wait));
                    }
                    now = then;
                }
                Err(Denied::Later { wait }) => {
                    let cause = if wait == Duration::MAX {
                        RateCause::Over
                    } else {
                        cause
                    };
                    return Err(refusal(cause, wait));
                }
                Err(Denied::Unavailable { retry_after }) => {
                    return Err(refusal(RateCause::Unavailable, retry_after));
                }
            }
        }
    }

    /// Counts and reports a refusal.
    #[cold]
    fn refused(&self, reason: &RateReason) {
        self.decisions.refused(reason.cause.index());
        tracing::debug!(
            name = self.name,
            outcome = "refused",
            reason = reason.cause.label(),
            cost = reason.cost,
            wait = ?reason.wait,
            bound = ?reason.bound,
            limit = ?reason.limit,
            "rate limit refused a call"
        );
    }
}

/// A slot held ahead for a waiting call, given back if the call is dropped before its
/// instant.
struct Held<'a, A: Admit> {
    limiter: &'a A,
    clock: &'a Clock,
    slot: Option<A::Slot>,
}

impl<A: Admit> Drop for Held<'_, A> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.limiter.give_back(slot, self.clock.now());
        }
    }
}

impl<A> Clone for RateLimit<A> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<A: fmt::Debug> fmt::Debug for RateLimit<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("limiter", &self.shared.limiter)
            .field("bound", &self.shared.bound)
            .field("clock", &self.shared.clock)
            .field("name", &self.shared.name)
            .finish()
    }
}
