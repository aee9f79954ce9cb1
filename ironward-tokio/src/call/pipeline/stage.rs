//! The places of a [`Pipeline`](super::Pipeline): the trait each place's slot implements,
//! which hands the pipeline the piece standing there (or none, for [`Skip`]), and what the
//! builder and the tuner ask of every piece.
//!
//! The traits are sealed: the pieces of [`call`](crate::call) implement them (each in
//! `pieces`), and the pipeline runs them in its order; nothing outside the crate adds a
//! slot.

use std::future::{Future, ready};

use super::super::replace::Replace;
use super::super::{
    Admit, Breaker, CallError, Classify, Errors, Fallback, Gate, Grade, Limiter, LocalRate,
    RateLimit, SampleOk, Timeout,
};
use super::hedging::{HedgeWith, RefusalHalts};
use super::retrying::{RefusalWait, RetryWith, Retryable};
use super::tuner::Tuner;
use super::{BreakerRefusal, Refusal};
use crate::call::retry::{After, AnyError, Notify, Silent, When};
use crate::{Clock, Dice, SharedCircuitBreaker, SharedSreBreaker};

mod pieces;

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
impl<W, A> sealed::Sealed for HedgeWith<W, A> {}
impl<A> sealed::Sealed for RateLimit<A> {}
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

/// The outermost place: the [`Fallback`] that answers instead of the pipeline's error, its
/// rule reading that error.
pub trait FallbackSlot<T, E>: Slot {
    /// The fallback's rule ([`Skip`] hands every error on).
    type Rule: Replace<T, CallError<E, Refusal>>;

    /// The fallback, if this place holds one.
    fn fallback(&self) -> Option<&Fallback<Self::Rule>>;
}

/// The retry's place: the [`Retry`](crate::call::Retry) and its hooks, each reading the
/// pipeline's error.
pub trait RetrySlot<T, E>: Slot {
    /// Which errors are retried.
    type When: When<CallError<E, Refusal>>;
    /// The wait an error names.
    type After: After<CallError<E, Refusal>>;
    /// Who hears of each wait.
    type Notify: Notify<CallError<E, Refusal>>;

    /// The retry with its hooks, if this place holds one.
    fn retry_with(&self) -> Option<&RetryWith<Self::When, Self::After, Self::Notify>>;
}

/// The hedge's place: the [`Hedge`](crate::call::Hedge) and its hooks, each reading the
/// pipeline's error.
pub trait HedgeSlot<T, E>: Slot {
    /// Which errors let the other copies race on.
    type When: When<CallError<E, Refusal>>;
    /// The wait before the next copy an error names.
    type After: After<CallError<E, Refusal>>;

    /// The place's future: the hedge's, or for [`Skip`] that of the places inside, with
    /// nothing of the hedge's in its layout (an empty place costs nothing).
    #[doc(hidden)]
    type Stage<P: Future, S: Future<Output = P::Output>>: Future<Output = P::Output>;

    /// The hedge with its hooks, if this place holds one.
    fn hedge_with(&self) -> Option<&HedgeWith<Self::When, Self::After>>;

    /// `piece` run with the hedge this place holds, or `skip` for none.
    #[doc(hidden)]
    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a HedgeWith<Self::When, Self::After>) -> P,
        skip: impl FnOnce() -> S,
    ) -> Self::Stage<P, S>
    where
        Self::When: 'a,
        Self::After: 'a;
}

/// The rate limit's place: a [`RateLimit`] on any [`Admit`].
pub trait RateSlot: Slot {
    /// The limiter the rate limit runs.
    type Admit: Admit;

    /// The place's future: the rate limit's, or for [`Skip`] that of the places inside,
    /// with nothing of the rate limit's in its layout (an empty place costs nothing).
    #[doc(hidden)]
    type Stage<P: Future, S: Future<Output = P::Output>>: Future<Output = P::Output>;

    /// The rate limit, if this place holds one.
    fn rate(&self) -> Option<&RateLimit<Self::Admit>>;

    /// `piece` run with the rate limit this place holds, or `skip` for none.
    #[doc(hidden)]
    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a RateLimit<Self::Admit>) -> P,
        skip: impl FnOnce() -> S,
    ) -> Self::Stage<P, S>;
}

/// The concurrency limit's place: a [`Gate`] or a [`Limiter`], its grade reading the
/// pipeline's error.
pub trait ConcurrencySlot<T, E>: Slot {
    /// The limiter's grade.
    type Grade: Grade<T, CallError<E, Refusal>>;

    /// The place's future: the gate's, the limiter's, or for [`Skip`] that of the places
    /// inside.
    #[doc(hidden)]
    type Stage<G: Future, L: Future<Output = G::Output>, S: Future<Output = G::Output>>: Future<
        Output = G::Output,
    >;

    /// The gate, if this place holds one.
    fn gate(&self) -> Option<&Gate>;

    /// The limiter, if this place holds one.
    fn limiter(&self) -> Option<&Limiter<Self::Grade>>;

    /// `gate` or `limiter` run with the piece this place holds, or `skip` for none.
    #[doc(hidden)]
    fn stage<'a, G: Future, L: Future<Output = G::Output>, S: Future<Output = G::Output>>(
        &'a self,
        gate: impl FnOnce(&'a Gate) -> G,
        limiter: impl FnOnce(&'a Limiter<Self::Grade>) -> L,
        skip: impl FnOnce() -> S,
    ) -> Self::Stage<G, L, S>
    where
        Self::Grade: 'a;
}

/// The breaker's place: a [`Breaker`] of either family, its classifier reading the
/// pipeline's error.
pub trait BreakerSlot<T, E>: Slot {
    /// The breaker's shared form, whose refusal is a [`BreakerRefusal`].
    type Shared: SharedCircuitBreaker<Reason: Into<BreakerRefusal>>;
    /// The breaker's classifier.
    type Classify: Classify<T, CallError<E, Refusal>>;

    /// The place's future: the breaker's, or for [`Skip`] that of the places inside.
    #[doc(hidden)]
    type Stage<P: Future, S: Future<Output = P::Output>>: Future<Output = P::Output>;

    /// The breaker, if this place holds one.
    fn breaker(&self) -> Option<&Breaker<Self::Shared, Self::Classify>>;

    /// `piece` run with the breaker this place holds, or `skip` for none.
    #[doc(hidden)]
    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a Breaker<Self::Shared, Self::Classify>) -> P,
        skip: impl FnOnce() -> S,
    ) -> Self::Stage<P, S>
    where
        Self::Shared: 'a,
        Self::Classify: 'a;
}

/// The timeout's place.
pub trait TimeoutSlot: Slot {
    /// The place's future: the timeout's, or for [`Skip`] that of the places inside.
    #[doc(hidden)]
    type Stage<P: Future, S: Future<Output = P::Output>>: Future<Output = P::Output>;

    /// The timeout, if this place holds one.
    fn timeout(&self) -> Option<&Timeout>;

    /// `piece` run with the timeout this place holds, or `skip` for none.
    #[doc(hidden)]
    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a Timeout) -> P,
        skip: impl FnOnce() -> S,
    ) -> Self::Stage<P, S>;
}

/// The breaker's place as a [`Tuner`] reads it: the family's policy type.
pub trait TunesBreaker: Slot {
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
pub(super) fn flatten<T, E, R>(
    answer: Result<T, CallError<CallError<E, Refusal>, R>>,
    refused: impl FnOnce(R) -> Refusal,
) -> Answer<T, E> {
    answer.map_err(|error| match error {
        CallError::Refused(reason) => CallError::Refused(refused(reason)),
        CallError::Failed(inner) => inner,
    })
}

/// An empty fallback's rule: every error handed on as it came.
impl<T, X> Replace<T, X> for Skip {
    fn replace(&self, error: X) -> impl Future<Output = Result<T, X>> {
        ready(Err(error))
    }
}

impl Slot for Skip {
    const PIECE: Option<&'static str> = None;
}

impl<T, E> FallbackSlot<T, E> for Skip {
    type Rule = Skip;

    fn fallback(&self) -> Option<&Fallback<Skip>> {
        None
    }
}

impl<T, E> RetrySlot<T, E> for Skip {
    type When = Retryable;
    type After = RefusalWait;
    type Notify = Silent;

    fn retry_with(&self) -> Option<&RetryWith> {
        None
    }
}

impl<T, E> HedgeSlot<T, E> for Skip {
    type When = AnyError;
    type After = RefusalHalts;

    type Stage<P: Future, S: Future<Output = P::Output>> = S;

    fn hedge_with(&self) -> Option<&HedgeWith> {
        None
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        _piece: impl FnOnce(&'a HedgeWith) -> P,
        skip: impl FnOnce() -> S,
    ) -> S
    where
        AnyError: 'a,
        RefusalHalts: 'a,
    {
        skip()
    }
}

impl RateSlot for Skip {
    type Admit = LocalRate;

    type Stage<P: Future, S: Future<Output = P::Output>> = S;

    fn rate(&self) -> Option<&RateLimit> {
        None
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        _piece: impl FnOnce(&'a RateLimit) -> P,
        skip: impl FnOnce() -> S,
    ) -> S {
        skip()
    }
}

impl<T, E> ConcurrencySlot<T, E> for Skip {
    type Grade = SampleOk;
    type Stage<G: Future, L: Future<Output = G::Output>, S: Future<Output = G::Output>> = S;

    fn gate(&self) -> Option<&Gate> {
        None
    }

    fn limiter(&self) -> Option<&Limiter> {
        None
    }

    fn stage<'a, G: Future, L: Future<Output = G::Output>, S: Future<Output = G::Output>>(
        &'a self,
        _gate: impl FnOnce(&'a Gate) -> G,
        _limiter: impl FnOnce(&'a Limiter) -> L,
        skip: impl FnOnce() -> S,
    ) -> S {
        skip()
    }
}

impl<T, E> BreakerSlot<T, E> for Skip {
    type Shared = SharedSreBreaker;
    type Classify = Errors;
    type Stage<P: Future, S: Future<Output = P::Output>> = S;

    fn breaker(&self) -> Option<&Breaker> {
        None
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        _piece: impl FnOnce(&'a Breaker) -> P,
        skip: impl FnOnce() -> S,
    ) -> S {
        skip()
    }
}

impl TimeoutSlot for Skip {
    type Stage<P: Future, S: Future<Output = P::Output>> = S;

    fn timeout(&self) -> Option<&Timeout> {
        None
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        _piece: impl FnOnce(&'a Timeout) -> P,
        skip: impl FnOnce() -> S,
    ) -> S {
        skip()
    }
}

impl TunesBreaker for Skip {
    type Policy = std::convert::Infallible;
}
