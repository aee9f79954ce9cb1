//! [`Pipeline`]: the pieces of [`call`](crate::call) composed as one value, in one fixed
//! order, answering one error type.
//!
//! Polly's `ResiliencePipeline` and failsafe-go's `failsafe.With(policies...)` compose their
//! pieces in the order the caller lists them. Here the order is the pipeline's, because
//! every place in it is decided by what the pieces around it count, and a wrong order is
//! silently wrong (a breaker that counts a gate's refusals as the backend's failures). A
//! builder takes the pieces in any order, each once; the pipeline runs them so, outermost
//! first:
//!
//! | place | piece | why there |
//! | --- | --- | --- |
//! | 1 | [`Fallback`](super::Fallback) | sees everything: every piece's refusal and the retry's last error |
//! | 2 | [`Retry`](super::Retry) | each attempt passes every piece inside it; a wait between attempts holds no room, no token, no probe; it stops at the current [`Deadline`](super::Deadline) as a timeout does |
//! | 3 | [`Hedge`](super::Hedge) | a hedged round is one attempt, which the retry may repeat; each copy it sends passes every piece inside it (its own token, its own room, counted by the breaker, cut by the timeout: each is a request the backend serves) |
//! | 4 | [`RateLimit`](super::RateLimit) | every attempt and every copy spends from the rate (the quota is what the backend takes, and a retry or a hedge is a request to it); outside the concurrency limit, so that a call waiting for its slot holds no room and the limiter's latency samples do not include that wait |
//! | 5 | [`Gate`](super::Gate) or [`Limiter`](super::Limiter) | outside the breaker, so that its refusals (a local decision) are not counted by the breaker as the backend's failures |
//! | 6 | [`Breaker`](super::Breaker) | counts each attempt that reached the backend, cut ones included |
//! | 7 | [`Timeout`](super::Timeout) | innermost, per attempt: a call cut off by time is a failure the breaker counts, and its room in the gate is given back when it is cut |
//!
//! This is the order failsafe-go and Failsafe recommend ("a `Fallback` as the outer-most
//! policy, followed by a `RetryPolicy`, a `CircuitBreaker` or `RateLimiter`, a `Bulkhead`,
//! and a `Timeout` as the inner-most", Failsafe's `docs/policies.md`), and Polly's (its
//! `docs/pipelines/index.md`: a retry outside a per-attempt timeout), with the one change
//! its reason above gives: the concurrency limit outside the breaker, whose default
//! classifier counts every error. A time limit on the whole call is the retry's
//! [`Rules::total_budget`](ironward::retry::Rules::total_budget), or a
//! [`Deadline`](super::Deadline) scoped around the call, which every piece inside keeps to.
//!
//! The hedge's place is that of the standard hedging pipeline of
//! Microsoft.Extensions.Http.Resilience (hedging, then per attempt a rate limiter, a circuit
//! breaker and an attempt timeout). Its copies race inside the hedge's own future (nothing
//! is spawned); each calls the operation, under the lock the pipeline holds only to make an
//! attempt's future. Inside the pipeline the hedge reads the pipeline's error: by default
//! no error is fatal to the race, and a copy refused by a piece inside the hedge stops
//! further copies ([`RefusalHalts`]: the copies already let through race on, and a copy
//! sent after a refusal would meet the same one); [`Builder::hedge_when`] and
//! [`Builder::hedge_after`] say otherwise.
//!
//! **One error.** Every piece's refusal is a [`Refusal`] naming the piece, with its numbers;
//! the pipeline answers `Result<T, CallError<E, Refusal>>` ([`PipelineError`]), and the
//! fallback's rule, the breaker's classifier, the limiter's grade and the retry's hooks all
//! read that one type. The retry's default `when` ([`Retryable`]) retries the call's own
//! errors, a timeout's cut, and a refusal that names when to come back (a rate limit's, a
//! classic breaker's open wait: after that wait, if the backoff's cap allows it), and no
//! other refusal: its docs say why.
//!
//! **Nothing counted twice.** The pipeline counts and logs nothing of its own: each piece
//! counts `ironward.requests{piece, name, outcome, reason}` (and the retry
//! `ironward.retry.*`) as it does alone. [`Builder::with_name`] names every piece at once,
//! each keeping its own `piece` label.
//!
//! **Cancellation.** Dropping the pipeline's future drops whatever it is in: an attempt
//! (its breaker permit unsettled, its room in the gate or the limiter given back), every
//! hedged copy in flight (each so dropped; the budget told only of copies that ended), a
//! wait for the rate limit's slot (the slot given back to its limiter), a wait in the
//! limiter's queue (its place left), or the retry's wait (its budget told only of the
//! decisions made). Nothing is spawned.

use std::fmt;
use std::future::{Future, IntoFuture, ready};
use std::sync::{Arc, Mutex};

use ironward::Criticality;
use ironward::retry::Retried;

use super::CallError;
use crate::lock;

mod builder;
mod ext;
mod hedging;
mod refusal;
mod retrying;
mod stage;
mod tuner;

pub use builder::Builder;
pub use ext::Protect;
pub use hedging::{HedgeWith, RefusalHalts};
pub use refusal::{BreakerRefusal, Refusal};
use retrying::Lent;
pub use retrying::{RefusalWait, RetryWith, Retryable};
use stage::flatten;
pub use stage::{
    Answer, BreakerSlot, ConcurrencySlot, FallbackSlot, HedgeSlot, RateSlot, RetrySlot, Skip, Slot,
    TimeoutSlot, TunesBreaker,
};
pub use tuner::Tuner;

/// The error a [`Pipeline`] answers: the call's own error `E`, or a piece's [`Refusal`].
pub type PipelineError<E> = CallError<E, Refusal>;

/// The pieces of [`call`](crate::call) as one value: `pipeline.call(|| fetch(id)).await`
/// runs the call through each piece it holds, in the [order](self) the module gives,
/// whatever order the builder was given them in, and answers one error type.
///
/// Made by [`Pipeline::builder`]: `.fallback(..)`, `.retry(..)`, `.hedge(..)`,
/// `.rate_limit(..)`, `.gate(..)` or `.limiter(..)`, `.breaker(..)`, `.timeout(..)`, each at
/// most once (a second is a compile error, as are a gate and a limiter both, and a retry's
/// or a hedge's hooks without it), then
/// [`build`](Builder::build). Each type parameter is one place: the piece standing there, or
/// [`Skip`].
///
/// `Clone` is an `Arc` clone, and every piece is itself a shared handle: every clone, and
/// every handle to a piece given to the builder (unless [`Builder::with_clock`],
/// [`with_dice`](Builder::with_dice) or [`with_name`](Builder::with_name) rebuilt it), shares
/// its state. [`tuner`](Self::tuner) retunes the pieces live.
///
/// The operation is called once per attempt (once per hedged copy), and only once every
/// piece has let the attempt through: a refused attempt never calls it. It may be `FnMut`;
/// the pipeline calls it under a lock it holds only for the call that makes the future,
/// never across an `.await`.
///
/// # Examples
///
/// Three attempts, each cut by the timeout; the retry waits 100 ms and 200 ms between them
/// and gives up, and the fallback answers: at 3.3 s on a manual clock.
///
/// ```
/// use std::{future::pending, time::Duration};
/// use ironward::{BACKOFF, Backoff, CLASSIC, Jitter, retry::Rules};
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{Breaker, Fallback, Pipeline, Retry, Timeout};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let pipeline = Pipeline::builder()
///     .timeout(Timeout::new(Duration::from_secs(1)))
///     .breaker(Breaker::new(CLASSIC))
///     .retry(Retry::new(Rules::new(Backoff { jitter: Jitter::Rigid, ..BACKOFF })))
///     .fallback(Fallback::value("cached"))
///     .with_clock(clock.clone())
///     .build();
/// let answer = pipeline.call(pending::<Result<&str, std::io::Error>>).await;
/// assert_eq!((answer.unwrap(), clock.now()), ("cached", Duration::from_millis(3_300)));
/// # }
/// ```
pub struct Pipeline<Fb = Skip, Rt = Skip, Hg = Skip, Rl = Skip, Cn = Skip, Bk = Skip, To = Skip> {
    slots: Arc<Slots<Fb, Rt, Hg, Rl, Cn, Bk, To>>,
}

/// The pieces, one a place, outermost first.
struct Slots<Fb, Rt, Hg, Rl, Cn, Bk, To> {
    fallback: Fb,
    retry: Rt,
    hedge: Hg,
    rate: Rl,
    concurrency: Cn,
    breaker: Bk,
    timeout: To,
}

impl<Fb, Rt, Hg, Rl, Cn, Bk, To> Pipeline<Fb, Rt, Hg, Rl, Cn, Bk, To> {
    /// Runs `operation` through every piece: its value, its own error as
    /// [`CallError::Failed`], or the [`Refusal`] of the piece that refused it (what the
    /// fallback did not replace).
    pub async fn call<T, E, F, Fut>(&self, operation: F) -> Answer<T, E>
    where
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
        Hg: HedgeSlot<T, E>,
        Rl: RateSlot,
        Cn: ConcurrencySlot<T, E>,
        Bk: BreakerSlot<T, E>,
        To: TimeoutSlot,
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        self.run(Criticality::Critical, operation).await.0
    }

    /// [`call`](Self::call), with the retry's [`Retried`] record beside the answer (attempts
    /// made, time waited, why it stopped), as
    /// [`Retrying::recorded`](super::retry::Retrying::recorded) gives it; `None` for a
    /// pipeline without a retry.
    pub fn recorded<T, E, F, Fut>(
        &self,
        operation: F,
    ) -> impl Future<Output = (Answer<T, E>, Option<Retried>)>
    where
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
        Hg: HedgeSlot<T, E>,
        Rl: RateSlot,
        Cn: ConcurrencySlot<T, E>,
        Bk: BreakerSlot<T, E>,
        To: TimeoutSlot,
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        // Its future is the run's, not one more layer around it.
        self.run(Criticality::Critical, operation)
    }

    /// [`call`](Self::call) as a call of class `criticality`, which a
    /// [`Limiter`](super::Limiter) in the pipeline admits by ([`Limiter::call_as`](super::Limiter::call_as)):
    /// every attempt, each hedged copy, is of that class. Every other piece admits every
    /// class alike; `call` is `call_as(Criticality::Critical, ..)`, the limiter's default.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{ADAPTIVE, Criticality};
    /// use ironward_tokio::call::{Limiter, Pipeline};
    /// use ironward_tokio::{Clock, SharedLimiter};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let limiter = Limiter::new(SharedLimiter::new(ADAPTIVE, Clock::monotonic()));
    /// let pipeline = Pipeline::builder().limiter(limiter).build();
    /// let ok = || async { Ok::<_, std::io::Error>("served") };
    /// assert_eq!(pipeline.call_as(Criticality::Sheddable, ok).await.unwrap(), "served");
    /// # }
    /// ```
    pub async fn call_as<T, E, F, Fut>(
        &self,
        criticality: Criticality,
        operation: F,
    ) -> Answer<T, E>
    where
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
        Hg: HedgeSlot<T, E>,
        Rl: RateSlot,
        Cn: ConcurrencySlot<T, E>,
        Bk: BreakerSlot<T, E>,
        To: TimeoutSlot,
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        self.run(criticality, operation).await.0
    }

    /// Runs `operation` as a call of class `criticality` through every piece, outermost
    /// first: each place a closure that runs its piece around the places inside it, or
    /// hands straight through to them.
    async fn run<T, E, F, Fut>(
        &self,
        criticality: Criticality,
        operation: F,
    ) -> (Answer<T, E>, Option<Retried>)
    where
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
        Hg: HedgeSlot<T, E>,
        Rl: RateSlot,
        Cn: ConcurrencySlot<T, E>,
        Bk: BreakerSlot<T, E>,
        To: TimeoutSlot,
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        let s = &*self.slots;
        // Shared by reference with each attempt, which calls it only once every piece let
        // it through; locked only to make the attempt's future.
        let operation = &Mutex::new(operation);
        let call = move || {
            let attempt = (lock(operation))().into_future();
            async move { attempt.await.map_err(CallError::Failed) }
        };
        // Each place hands over its piece's future around the places inside, or, empty,
        // theirs as it is, with nothing of the piece's in its layout. Each piece's future is
        // an `async` block, which is a future whatever it holds: a future type whose
        // `Future` impl has bounds (a mapping future, a hedge's) would have those bounds
        // proven for every lifetime of the call's types by a task's `Send` check, which
        // fails (rust-lang/rust's higher-ranked lifetimes in coroutine witnesses).
        let timeout = move || {
            s.timeout.stage(
                move |timeout| async move { flatten(timeout.call(call).await, Refusal::Timeout) },
                call,
            )
        };
        let breaker = move || {
            s.breaker.stage(
                move |breaker| async move {
                    flatten(breaker.call(timeout).await, |reason| {
                        Refusal::Breaker(reason.into())
                    })
                },
                timeout,
            )
        };
        let concurrency = move || {
            s.concurrency.stage(
                move |gate| async move { flatten(gate.call(breaker).await, Refusal::Gate) },
                move |limiter| async move {
                    flatten(
                        limiter.call_as(criticality, breaker).await,
                        Refusal::Limiter,
                    )
                },
                breaker,
            )
        };
        let rate = move || {
            s.rate.stage(
                move |rate| async move { flatten(rate.call(concurrency).await, Refusal::RateLimit) },
                concurrency,
            )
        };
        // Each copy the hedge sends runs every place inside it; the copies race inside the
        // hedge's own future.
        let hedge = move || {
            s.hedge.stage(
                move |hedge| async move {
                    let (when, after) = hedge.hooks();
                    let hedging = hedge.hedge().call(rate);
                    let hedging = hedging.rehook(|_| (Lent(when), Lent(after)));
                    flatten(hedging.await, Refusal::Hedge)
                },
                rate,
            )
        };
        let (answer, record) = match s.retry.retry_with() {
            Some(retry) => {
                let (when, after, notify) = retry.hooks();
                let (answer, record) = retry
                    .retry()
                    .call(hedge)
                    .rehook(|_| (Lent(when), Lent(after), Lent(notify)))
                    .recorded()
                    .await;
                (flatten(answer, Refusal::Retry), Some(record))
            }
            None => (hedge().await, None),
        };
        let answer = match s.fallback.fallback() {
            Some(fallback) => fallback.call(move || ready(answer)).await,
            None => answer,
        };
        (answer, record)
    }

    /// The fallback, or [`Skip`].
    pub fn fallback(&self) -> &Fb {
        &self.slots.fallback
    }

    /// The retry with its hooks ([`RetryWith::retry`] is the policy), or [`Skip`].
    pub fn retry(&self) -> &Rt {
        &self.slots.retry
    }

    /// The hedge with its hooks ([`HedgeWith::hedge`] is the policy), or [`Skip`].
    pub fn hedge(&self) -> &Hg {
        &self.slots.hedge
    }

    /// The rate limit, or [`Skip`].
    pub fn rate(&self) -> &Rl {
        &self.slots.rate
    }

    /// The gate or the limiter, or [`Skip`].
    pub fn concurrency(&self) -> &Cn {
        &self.slots.concurrency
    }

    /// The breaker, or [`Skip`].
    pub fn breaker(&self) -> &Bk {
        &self.slots.breaker
    }

    /// The timeout, or [`Skip`].
    pub fn timeout(&self) -> &To {
        &self.slots.timeout
    }

    /// A handle that retunes every piece of this pipeline live ([`Tuner`]).
    pub fn tuner(&self) -> Tuner<Bk::Policy>
    where
        Rt: Slot,
        Hg: Slot,
        Rl: Slot,
        Cn: Slot,
        Bk: TunesBreaker,
        To: Slot,
    {
        let s = &*self.slots;
        let mut tuner = Tuner::empty();
        s.retry.tune(&mut tuner);
        s.hedge.tune(&mut tuner);
        s.rate.tune(&mut tuner);
        s.concurrency.tune(&mut tuner);
        s.breaker.tune_breaker(&mut tuner);
        s.timeout.tune(&mut tuner);
        tuner
    }
}

impl<Fb, Rt, Hg, Rl, Cn, Bk, To> Clone for Pipeline<Fb, Rt, Hg, Rl, Cn, Bk, To> {
    /// A pipeline sharing this one's pieces.
    fn clone(&self) -> Self {
        Self {
            slots: Arc::clone(&self.slots),
        }
    }
}

impl<Fb: Slot, Rt: Slot, Hg: Slot, Rl: Slot, Cn: Slot, Bk: Slot, To: Slot>
    Slots<Fb, Rt, Hg, Rl, Cn, Bk, To>
{
    /// The labels of the pieces it holds, outermost first.
    fn pieces(&self) -> Vec<&'static str> {
        [
            Fb::PIECE,
            Rt::PIECE,
            Hg::PIECE,
            Rl::PIECE,
            Cn::PIECE,
            Bk::PIECE,
            To::PIECE,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

impl<Fb: Slot, Rt: Slot, Hg: Slot, Rl: Slot, Cn: Slot, Bk: Slot, To: Slot> fmt::Debug
    for Pipeline<Fb, Rt, Hg, Rl, Cn, Bk, To>
{
    /// The pieces it holds, in the order it runs them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("pieces", &self.slots.pieces())
            .finish()
    }
}
