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
//! | 1 | [`Fallback`] | sees everything: every piece's refusal and the retry's last error |
//! | 2 | [`Retry`] | each attempt passes every piece inside it; a wait between attempts holds no room, no token, no probe; it stops at the current [`Deadline`](super::Deadline) as a timeout does |
//! | 3 | (a hedge) | reserved: see below |
//! | 4 | (a rate limit) | reserved: see below |
//! | 5 | [`Gate`] or [`Limiter`] | outside the breaker, so that its refusals (a local decision) are not counted by the breaker as the backend's failures |
//! | 6 | [`Breaker`] | counts each attempt that reached the backend, cut ones included |
//! | 7 | [`Timeout`] | innermost, per attempt: a call cut off by time is a failure the breaker counts, and its room in the gate is given back when it is cut |
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
//! **The two reserved places.** A rate limit goes inside the retry, so that every attempt
//! spends a token (the quota is what the backend takes per second, and a retry is a request
//! to it), and outside the concurrency limit, so that a call waiting for a token holds no
//! room and the limiter's latency samples do not include that wait. A hedge goes inside the
//! retry (a hedged round is one attempt, which the retry may repeat) and outside the rate
//! limit, the concurrency limit, the breaker and the timeout, so that each copy it sends
//! spends its own token, holds its own room, is counted by the breaker and cut by the
//! timeout: each is a request the backend serves. That is the order of the standard hedging
//! pipeline of Microsoft.Extensions.Http.Resilience (hedging, then per endpoint a rate
//! limiter, a circuit breaker and an attempt timeout).
//!
//! **One error.** Every piece's refusal is a [`Refusal`] naming the piece, with its numbers;
//! the pipeline answers `Result<T, CallError<E, Refusal>>` ([`PipelineError`]), and the
//! fallback's rule, the breaker's classifier, the limiter's grade and the retry's hooks all
//! read that one type. The retry's default `when` ([`Retryable`]) retries the call's own
//! errors, a timeout's cut, and a refusal that names when to come back (after that wait),
//! and no other refusal: its docs say why.
//!
//! **Nothing counted twice.** The pipeline counts and logs nothing of its own: each piece
//! counts `ironward.requests{piece, name, outcome, reason}` (and the retry
//! `ironward.retry.*`) as it does alone. [`Builder::with_name`] names every piece at once,
//! each keeping its own `piece` label.
//!
//! **Cancellation.** Dropping the pipeline's future drops whatever it is in: an attempt
//! (its breaker permit unsettled, its room in the gate or the limiter given back), a wait in
//! the limiter's queue (its place left), or the retry's wait (its budget told only of the
//! decisions made). Nothing is spawned.

use std::fmt;
use std::future::{IntoFuture, ready};
use std::sync::{Arc, Mutex};

use ironward::retry::Retried;

use super::{Breaker, CallError, Fallback, Gate, Limiter, Retry, Timeout};
use crate::{Clock, Dice, SharedCircuitBreaker, lock};

mod ext;
mod refusal;
mod retrying;
mod stage;
mod tuner;

pub use ext::Protect;
pub use refusal::{BreakerReason, Refusal};
use retrying::Lent;
pub use retrying::{RefusalWait, RetryWith, Retryable};
use stage::flatten;
pub use stage::{
    Answer, BreakerSlot, ConcurrencySlot, FallbackSlot, RetrySlot, Skip, Slot, TimeoutSlot,
    TunesBreaker,
};
pub use tuner::Tuner;

/// The error a [`Pipeline`] answers: the call's own error `E`, or a piece's [`Refusal`].
pub type PipelineError<E> = CallError<E, Refusal>;

/// The pieces of [`call`](crate::call) as one value: `pipeline.call(|| fetch(id)).await`
/// runs the call through each piece it holds, in the [order](self) the module gives,
/// whatever order the builder was given them in, and answers one error type.
///
/// Made by [`Pipeline::builder`]: `.fallback(..)`, `.retry(..)`, `.gate(..)` or
/// `.limiter(..)`, `.breaker(..)`, `.timeout(..)`, each at most once (a second is a compile
/// error, as are a gate and a limiter both, and a retry's hooks without a retry), then
/// [`build`](Builder::build). Each type parameter is one place: the piece standing there, or
/// [`Skip`].
///
/// `Clone` is an `Arc` clone, and every piece is itself a shared handle: every clone, and
/// every handle to a piece given to the builder (unless [`Builder::with_clock`],
/// [`with_dice`](Builder::with_dice) or [`with_name`](Builder::with_name) rebuilt it), shares
/// its state. [`tuner`](Self::tuner) retunes the pieces live.
///
/// The operation is called once per attempt, and only once every piece has let the attempt
/// through: a refused attempt never calls it. It may be `FnMut`; the pipeline calls it under
/// a lock it holds only for the call that makes the future, never across an `.await`.
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

/// How a [`Pipeline`] is made: each piece in any order, each once, then what every piece
/// shares, then [`build`](Self::build).
///
/// # Examples
///
/// ```
/// use ironward::CLASSIC;
/// use ironward_tokio::call::{Breaker, Gate, Pipeline};
///
/// let pipeline = Pipeline::builder().breaker(Breaker::new(CLASSIC)).gate(Gate::new(4)).with_name("pricing").build();
/// assert_eq!(format!("{pipeline:?}"), r#"Pipeline { pieces: ["gate", "breaker"] }"#);
/// assert_eq!((pipeline.concurrency().name(), pipeline.breaker().name()), ("pricing", "pricing"));
/// ```
#[must_use = "a builder does nothing until built"]
pub struct Builder<Fb = Skip, Rt = Skip, Hg = Skip, Rl = Skip, Cn = Skip, Bk = Skip, To = Skip> {
    slots: Slots<Fb, Rt, Hg, Rl, Cn, Bk, To>,
    name: Option<&'static str>,
    clock: Option<Clock>,
    dice: Option<Dice>,
}

impl Pipeline {
    /// A builder with every place empty and nothing shared set.
    pub fn builder() -> Builder {
        Builder {
            slots: Slots {
                fallback: Skip,
                retry: Skip,
                hedge: Skip,
                rate: Skip,
                concurrency: Skip,
                breaker: Skip,
                timeout: Skip,
            },
            name: None,
            clock: None,
            dice: None,
        }
    }
}

/// A builder with its slots replaced by `slots`, the rest kept: the field names bound by
/// destructuring `$self.slots`, each method's new slot given by name.
macro_rules! reslot {
    ($self:ident, $($field:ident: $value:expr),+ ; $($kept:ident),+) => {{
        let Slots { $($field: _,)+ $($kept,)+ } = $self.slots;
        Builder {
            slots: Slots { $($field: $value,)+ $($kept,)+ },
            name: $self.name,
            clock: $self.clock,
            dice: $self.dice,
        }
    }};
}

impl<Rt, Hg, Rl, Cn, Bk, To> Builder<Skip, Rt, Hg, Rl, Cn, Bk, To> {
    /// The fallback, outermost: it answers the errors its rule replaces, as the pipeline's
    /// error ([`PipelineError`]) reads.
    pub fn fallback<F>(
        self,
        fallback: Fallback<F>,
    ) -> Builder<Fallback<F>, Rt, Hg, Rl, Cn, Bk, To> {
        reslot!(self, fallback: fallback; retry, hedge, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, Hg, Rl, Cn, Bk, To> Builder<Fb, Skip, Hg, Rl, Cn, Bk, To> {
    /// The retry, inside the fallback, its calls run with the default hooks ([`Retryable`],
    /// [`RefusalWait`], no notify) until [`when`](Self::when), [`after`](Self::after) or
    /// [`notify`](Self::notify) replace them.
    pub fn retry(self, retry: Retry) -> Builder<Fb, RetryWith, Hg, Rl, Cn, Bk, To> {
        reslot!(self, retry: RetryWith::new(retry); fallback, hedge, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, W, A, N, Hg, Rl, Cn, Bk, To> Builder<Fb, RetryWith<W, A, N>, Hg, Rl, Cn, Bk, To> {
    /// Retries only the errors `when` finds worth it (any `Fn(&PipelineError<E>) -> bool`),
    /// in place of [`Retryable`]: `error.refusal()` says which piece refused.
    pub fn when<W2>(self, when: W2) -> Builder<Fb, RetryWith<W2, A, N>, Hg, Rl, Cn, Bk, To> {
        let Slots {
            fallback,
            retry,
            hedge,
            rate,
            concurrency,
            breaker,
            timeout,
        } = self.slots;
        let retry = retry.when(when);
        let slots = Slots {
            fallback,
            retry,
            hedge,
            rate,
            concurrency,
            breaker,
            timeout,
        };
        Builder {
            slots,
            name: self.name,
            clock: self.clock,
            dice: self.dice,
        }
    }

    /// Reads the wait each error names (any `Fn(&PipelineError<E>) -> Option<Duration>`), in
    /// place of [`RefusalWait`].
    pub fn after<A2>(self, after: A2) -> Builder<Fb, RetryWith<W, A2, N>, Hg, Rl, Cn, Bk, To> {
        let Slots {
            fallback,
            retry,
            hedge,
            rate,
            concurrency,
            breaker,
            timeout,
        } = self.slots;
        let retry = retry.after(after);
        let slots = Slots {
            fallback,
            retry,
            hedge,
            rate,
            concurrency,
            breaker,
            timeout,
        };
        Builder {
            slots,
            name: self.name,
            clock: self.clock,
            dice: self.dice,
        }
    }

    /// Hears of each wait before it is slept (any `Fn(&PipelineError<E>, Duration)`).
    pub fn notify<N2>(self, notify: N2) -> Builder<Fb, RetryWith<W, A, N2>, Hg, Rl, Cn, Bk, To> {
        let Slots {
            fallback,
            retry,
            hedge,
            rate,
            concurrency,
            breaker,
            timeout,
        } = self.slots;
        let retry = retry.notify(notify);
        let slots = Slots {
            fallback,
            retry,
            hedge,
            rate,
            concurrency,
            breaker,
            timeout,
        };
        Builder {
            slots,
            name: self.name,
            clock: self.clock,
            dice: self.dice,
        }
    }
}

impl<Fb, Rt, Hg, Rl, Bk, To> Builder<Fb, Rt, Hg, Rl, Skip, Bk, To> {
    /// The concurrency gate, inside the retry and outside the breaker.
    pub fn gate(self, gate: Gate) -> Builder<Fb, Rt, Hg, Rl, Gate, Bk, To> {
        reslot!(self, concurrency: gate; fallback, retry, hedge, rate, breaker, timeout)
    }

    /// The adaptive limiter, in the gate's place; its grade reads the pipeline's error.
    pub fn limiter<G>(self, limiter: Limiter<G>) -> Builder<Fb, Rt, Hg, Rl, Limiter<G>, Bk, To> {
        reslot!(self, concurrency: limiter; fallback, retry, hedge, rate, breaker, timeout)
    }
}

impl<Fb, Rt, Hg, Rl, Cn, To> Builder<Fb, Rt, Hg, Rl, Cn, Skip, To> {
    /// The breaker of either family, inside the concurrency limit; its classifier reads the
    /// pipeline's error (a timeout's cut is a `CallError::Refused`, counted as a failure by
    /// the default [`Errors`](super::Errors)).
    pub fn breaker<B: SharedCircuitBreaker, C>(
        self,
        breaker: Breaker<B, C>,
    ) -> Builder<Fb, Rt, Hg, Rl, Cn, Breaker<B, C>, To> {
        reslot!(self, breaker: breaker; fallback, retry, hedge, rate, concurrency, timeout)
    }
}

impl<Fb, Rt, Hg, Rl, Cn, Bk> Builder<Fb, Rt, Hg, Rl, Cn, Bk, Skip> {
    /// The timeout, innermost: a limit on each attempt.
    pub fn timeout(self, timeout: Timeout) -> Builder<Fb, Rt, Hg, Rl, Cn, Bk, Timeout> {
        reslot!(self, timeout: timeout; fallback, retry, hedge, rate, concurrency, breaker)
    }
}

impl<Fb, Rt, Hg, Rl, Cn, Bk, To> Builder<Fb, Rt, Hg, Rl, Cn, Bk, To> {
    /// Every piece reports under `name` (its `with_name`), each keeping its own `piece`
    /// label; given to the pieces when built, whenever they were added.
    pub fn with_name(self, name: &'static str) -> Self {
        Self {
            name: Some(name),
            ..self
        }
    }

    /// Every piece that reads a clock reads `clock` (its `with_clock`): the retry, the
    /// limiter, the breaker, the timeout. As each piece's own `with_clock`, this makes the
    /// piece anew, its state not shared with the handle the builder was given.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self {
            clock: Some(clock),
            ..self
        }
    }

    /// Every piece that draws reads `dice` (its `with_dice`): the retry's jitter, the
    /// breaker, the limiter's queue. Makes those pieces anew, as [`with_clock`](Self::with_clock).
    pub fn with_dice(self, dice: Dice) -> Self {
        Self {
            dice: Some(dice),
            ..self
        }
    }

    /// The pipeline, each piece given the name, clock and dice set.
    pub fn build(self) -> Pipeline<Fb, Rt, Hg, Rl, Cn, Bk, To>
    where
        Fb: Slot,
        Rt: Slot,
        Hg: Slot,
        Rl: Slot,
        Cn: Slot,
        Bk: Slot,
        To: Slot,
    {
        fn knobs<S: Slot>(
            slot: S,
            builder: (Option<&'static str>, &Option<Clock>, &Option<Dice>),
        ) -> S {
            let (name, clock, dice) = builder;
            let slot = match name {
                Some(name) => slot.named(name),
                None => slot,
            };
            let slot = match clock {
                Some(clock) => slot.clocked(clock),
                None => slot,
            };
            match dice {
                Some(dice) => slot.diced(dice),
                None => slot,
            }
        }
        let set = (self.name, &self.clock, &self.dice);
        let s = self.slots;
        Pipeline {
            slots: Arc::new(Slots {
                fallback: knobs(s.fallback, set),
                retry: knobs(s.retry, set),
                hedge: knobs(s.hedge, set),
                rate: knobs(s.rate, set),
                concurrency: knobs(s.concurrency, set),
                breaker: knobs(s.breaker, set),
                timeout: knobs(s.timeout, set),
            }),
        }
    }
}

impl<Fb, Rt, Hg, Rl, Cn, Bk, To> Pipeline<Fb, Rt, Hg, Rl, Cn, Bk, To> {
    /// Runs `operation` through every piece: its value, its own error as
    /// [`CallError::Failed`], or the [`Refusal`] of the piece that refused it (what the
    /// fallback did not replace).
    pub async fn call<T, E, F, Fut>(&self, operation: F) -> Answer<T, E>
    where
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
        Cn: ConcurrencySlot<T, E>,
        Bk: BreakerSlot<T, E>,
        To: TimeoutSlot,
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        self.recorded(operation).await.0
    }

    /// [`call`](Self::call), with the retry's [`Retried`] record beside the answer (attempts
    /// made, time waited, why it stopped), as
    /// [`Retrying::recorded`](super::retry::Retrying::recorded) gives it; `None` for a
    /// pipeline without a retry.
    pub async fn recorded<T, E, F, Fut>(&self, operation: F) -> (Answer<T, E>, Option<Retried>)
    where
        Fb: FallbackSlot<T, E>,
        Rt: RetrySlot<T, E>,
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
        let timeout = move || async move {
            match s.timeout.timeout() {
                Some(timeout) => flatten(timeout.call(call).await, Refusal::Timeout),
                None => call().await,
            }
        };
        let breaker = move || async move {
            match s.breaker.breaker() {
                Some(breaker) => flatten(breaker.call(timeout).await, |reason| {
                    Refusal::Breaker(reason.into())
                }),
                None => timeout().await,
            }
        };
        let concurrency = move || async move {
            if let Some(gate) = s.concurrency.gate() {
                flatten(gate.call(breaker).await, Refusal::Gate)
            } else if let Some(limiter) = s.concurrency.limiter() {
                flatten(limiter.call(breaker).await, Refusal::Limiter)
            } else {
                breaker().await
            }
        };
        let (answer, record) = match s.retry.retry_with() {
            Some(retry) => {
                let (when, after, notify) = retry.hooks();
                let (answer, record) = retry
                    .retry()
                    .call(concurrency)
                    .when(Lent(when))
                    .after(Lent(after))
                    .notify(Lent(notify))
                    .recorded()
                    .await;
                (flatten(answer, Refusal::Retry), Some(record))
            }
            None => (concurrency().await, None),
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

impl<Fb: Slot, Rt: Slot, Hg: Slot, Rl: Slot, Cn: Slot, Bk: Slot, To: Slot> fmt::Debug
    for Builder<Fb, Rt, Hg, Rl, Cn, Bk, To>
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("pieces", &self.slots.pieces())
            .field("name", &self.name)
            .field("clock", &self.clock)
            .field("dice", &self.dice)
            .finish()
    }
}
