//! The places of a [`Pipeline`](super::Pipeline), and what a piece does in each: the traits
//! its slots implement, [`Skip`] for an empty one, and each piece's part.
//!
//! The traits are sealed: the pieces of [`call`](crate::call) implement them, and a pipeline
//! runs them in its order; nothing outside the crate adds a slot.

use std::future::{Future, ready};
use std::sync::Arc;

use ironward::retry::Retried;

use super::super::replace::Replace;
use super::super::{Breaker, CallError, Classify, Fallback, Gate, Grade, Limiter, Timeout};
use super::retrying::{Lent, RetryWith};
use super::tuner::{BreakerTune, Tuner};
use super::{BreakerReason, Refusal};
use crate::call::retry::{After, Notify, When};
use crate::{Clock, Dice, SharedCircuitBreaker};

/// What a pipeline answers: the call's value, its own error as
/// [`CallError::Failed`], or a piece's [`Refusal`].
pub type Answer<T, E> = Result<T, CallError<E, Refusal>>;

/// An empty place in a [`Pipeline`](super::Pipeline): the piece that would stand there is
/// not in it, and the call passes straight through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skip;

mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for Skip {}
impl<F> sealed::Sealed for Fallback<F> {}
impl<W, A, N> sealed::Sealed for RetryWith<W, A, N> {}
impl sealed::Sealed for Gate {}
impl<G> sealed::Sealed for Limiter<G> {}
impl<B: SharedCircuitBreaker, C> sealed::Sealed for Breaker<B, C> {}
impl sealed::Sealed for Timeout {}

/// A piece as a pipeline holds it: its label, and what the pipeline's builder and tuner ask
/// of every piece at once.
pub trait Slot: sealed::Sealed + Sized {
    /// The piece's `piece` label; `None` for [`Skip`].
    const PIECE: Option<&'static str>;

    /// The same piece reporting under `name`, as its own `with_name` makes it.
    #[doc(hidden)]
    fn named(self, name: &'static str) -> Self {
        let _ = name;
        self
    }

    /// The same piece reading `clock`, as its own `with_clock` makes it, if it reads one.
    #[doc(hidden)]
    fn clocked(self, clock: &Clock) -> Self {
        let _ = clock;
        self
    }

    /// The same piece drawing from `dice`, as its own `with_dice` makes it, if it draws.
    #[doc(hidden)]
    fn diced(self, dice: &Dice) -> Self {
        let _ = dice;
        self
    }

    /// Hands the tuner a handle on this piece, if it has something to retune other than a
    /// breaker's policy ([`BreakerSlot`]).
    #[doc(hidden)]
    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        let _ = tuner;
    }
}

/// The outermost place: what answers instead of the pipeline's error ([`Fallback`]).
pub trait Answers<T, E>: Slot {
    /// The pipeline's answer, as this piece hands it on.
    #[doc(hidden)]
    fn answer(&self, answer: Answer<T, E>) -> impl Future<Output = Answer<T, E>>;
}

/// The place that runs the inner pieces more than once ([`RetryWith`]), and the record it
/// keeps: [`Retried`] for a retry, `()` for none.
pub trait Attempts<T, E>: Slot {
    /// What [`Pipeline::recorded`](super::Pipeline::recorded) answers beside the result.
    type Record;

    /// Runs `attempt` (the inner pieces around one call) as this piece says.
    #[doc(hidden)]
    fn attempts<Op, Fut>(&self, attempt: Op) -> impl Future<Output = (Answer<T, E>, Self::Record)>
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Answer<T, E>>;
}

/// A place inside the retry, around one attempt: the gate or the limiter, the breaker, the
/// timeout.
pub trait Stage<T, E>: Slot {
    /// Runs `next` (the pieces inside this one) as this piece lets it.
    #[doc(hidden)]
    fn run<Next, Fut>(&self, next: Next) -> impl Future<Output = Answer<T, E>>
    where
        Next: Fn() -> Fut,
        Fut: Future<Output = Answer<T, E>>;
}

/// The breaker's place, whose policy type is its family's: what a [`Tuner`] retunes.
pub trait BreakerSlot: Slot {
    /// The breaker's policy ([`Classic`](ironward::Classic), [`Sre`](ironward::Sre));
    /// [`Infallible`](std::convert::Infallible) for no breaker.
    type Policy;

    /// Hands the tuner a handle on the breaker.
    #[doc(hidden)]
    fn tune_breaker(&self, tuner: &mut Tuner<Self::Policy>) {
        let _ = tuner;
    }
}

/// An inner piece's answer made the pipeline's: its refusal named by `refused`, the answer
/// of the pieces inside it as it came.
fn flatten<T, E, R>(
    answer: Result<T, CallError<CallError<E, Refusal>, R>>,
    refused: impl FnOnce(R) -> Refusal,
) -> Answer<T, E> {
    answer.map_err(|error| match error {
        CallError::Refused(reason) => CallError::Refused(refused(reason)),
        CallError::Failed(inner) => inner,
    })
}

impl Slot for Skip {
    const PIECE: Option<&'static str> = None;
}

impl<T, E> Answers<T, E> for Skip {
    fn answer(&self, answer: Answer<T, E>) -> impl Future<Output = Answer<T, E>> {
        ready(answer)
    }
}

impl<T, E> Attempts<T, E> for Skip {
    type Record = ();

    async fn attempts<Op, Fut>(&self, mut attempt: Op) -> (Answer<T, E>, ())
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        (attempt().await, ())
    }
}

impl<T, E> Stage<T, E> for Skip {
    fn run<Next, Fut>(&self, next: Next) -> impl Future<Output = Answer<T, E>>
    where
        Next: Fn() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        next()
    }
}

impl BreakerSlot for Skip {
    type Policy = std::convert::Infallible;
}

impl<F: Clone> Slot for Fallback<F> {
    const PIECE: Option<&'static str> = Some("fallback");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }
}

impl<T, E, F: Clone + Replace<T, CallError<E, Refusal>>> Answers<T, E> for Fallback<F> {
    fn answer(&self, answer: Answer<T, E>) -> impl Future<Output = Answer<T, E>> {
        self.call(move || ready(answer))
    }
}

impl<W, A, N> Slot for RetryWith<W, A, N> {
    const PIECE: Option<&'static str> = Some("retry");

    fn named(self, name: &'static str) -> Self {
        self.map(|retry| retry.with_name(name))
    }

    fn clocked(self, clock: &Clock) -> Self {
        self.map(|retry| retry.with_clock(clock.clone()))
    }

    fn diced(self, dice: &Dice) -> Self {
        self.map(|retry| retry.with_dice(dice.clone()))
    }

    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        tuner.retry = Some(self.retry().clone());
    }
}

impl<T, E, W, A, N> Attempts<T, E> for RetryWith<W, A, N>
where
    W: When<CallError<E, Refusal>>,
    A: After<CallError<E, Refusal>>,
    N: Notify<CallError<E, Refusal>>,
{
    type Record = Retried;

    async fn attempts<Op, Fut>(&self, attempt: Op) -> (Answer<T, E>, Retried)
    where
        Op: FnMut() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        let (when, after, notify) = self.hooks();
        let (answer, retried) = self
            .retry()
            .call(attempt)
            .when(Lent(when))
            .after(Lent(after))
            .notify(Lent(notify))
            .recorded()
            .await;
        (flatten(answer, Refusal::Retry), retried)
    }
}

impl Slot for Gate {
    const PIECE: Option<&'static str> = Some("gate");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }

    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        tuner.gate = Some(self.clone());
    }
}

impl<T, E> Stage<T, E> for Gate {
    async fn run<Next, Fut>(&self, next: Next) -> Answer<T, E>
    where
        Next: Fn() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        flatten(self.call(next).await, Refusal::Gate)
    }
}

impl<G: Clone> Slot for Limiter<G> {
    const PIECE: Option<&'static str> = Some("limiter");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }

    fn clocked(self, clock: &Clock) -> Self {
        self.with_clock(clock.clone())
    }

    fn diced(self, dice: &Dice) -> Self {
        self.with_dice(dice.clone())
    }

    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        tuner.limiter = Some(self.limiter().clone());
    }
}

impl<T, E, G: Clone + Grade<T, CallError<E, Refusal>>> Stage<T, E> for Limiter<G> {
    async fn run<Next, Fut>(&self, next: Next) -> Answer<T, E>
    where
        Next: Fn() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        flatten(self.call(next).await, Refusal::Limiter)
    }
}

impl<B: SharedCircuitBreaker, C: Clone> Slot for Breaker<B, C> {
    const PIECE: Option<&'static str> = Some("breaker");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }

    fn clocked(self, clock: &Clock) -> Self {
        self.with_clock(clock.clone())
    }

    fn diced(self, dice: &Dice) -> Self {
        self.with_dice(dice.clone())
    }
}

impl<T, E, B, C> Stage<T, E> for Breaker<B, C>
where
    B: SharedCircuitBreaker,
    B::Reason: Into<BreakerReason>,
    C: Clone + Classify<T, CallError<E, Refusal>>,
{
    async fn run<Next, Fut>(&self, next: Next) -> Answer<T, E>
    where
        Next: Fn() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        flatten(self.call(next).await, |reason| {
            Refusal::Breaker(reason.into())
        })
    }
}

impl<B, C> BreakerSlot for Breaker<B, C>
where
    B: SharedCircuitBreaker,
    C: Clone + Send + Sync + 'static,
{
    type Policy = B::Policy;

    fn tune_breaker(&self, tuner: &mut Tuner<B::Policy>) {
        tuner.breaker = Some(Arc::new(self.clone()) as Arc<dyn BreakerTune<B::Policy>>);
    }
}

impl Slot for Timeout {
    const PIECE: Option<&'static str> = Some("timeout");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }

    fn clocked(self, clock: &Clock) -> Self {
        self.with_clock(clock.clone())
    }

    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        tuner.timeout = Some(self.clone());
    }
}

impl<T, E> Stage<T, E> for Timeout {
    async fn run<Next, Fut>(&self, next: Next) -> Answer<T, E>
    where
        Next: Fn() -> Fut,
        Fut: Future<Output = Answer<T, E>>,
    {
        flatten(self.call(next).await, Refusal::Timeout)
    }
}
