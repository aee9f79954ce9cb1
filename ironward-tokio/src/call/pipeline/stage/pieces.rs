//! Each piece of [`call`](crate::call) in its place of a [`Pipeline`](super::super::Pipeline):
//! its label, how the builder's name, clock and dice reach it, what the tuner holds of it,
//! and its stage, its own future around the places inside it.

use std::future::Future;
use std::sync::Arc;

use super::super::super::replace::Replace;
use super::super::super::{
    Admit, Breaker, CallError, Classify, Fallback, Gate, Grade, Limiter, RateLimit, SampleOk,
    Timeout,
};
use super::super::hedging::HedgeWith;
use super::super::retrying::RetryWith;
use super::super::tuner::{BreakerTune, RateTune, Tuner};
use super::super::{BreakerRefusal, Refusal};
use super::{
    BreakerSlot, ConcurrencySlot, FallbackSlot, HedgeSlot, RateSlot, RetrySlot, Slot, TimeoutSlot,
    TunesBreaker,
};
use crate::call::retry::{After, Notify, When};
use crate::{Clock, Dice, SharedCircuitBreaker};

impl<F: Clone> Slot for Fallback<F> {
    const PIECE: Option<&'static str> = Some("fallback");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }
}

impl<T, E, F: Clone + Replace<T, CallError<E, Refusal>>> FallbackSlot<T, E> for Fallback<F> {
    type Rule = F;

    fn fallback(&self) -> Option<&Fallback<F>> {
        Some(self)
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

impl<T, E, W, A, N> RetrySlot<T, E> for RetryWith<W, A, N>
where
    W: When<CallError<E, Refusal>>,
    A: After<CallError<E, Refusal>>,
    N: Notify<CallError<E, Refusal>>,
{
    type When = W;
    type After = A;
    type Notify = N;

    fn retry_with(&self) -> Option<&Self> {
        Some(self)
    }
}

impl<W, A> Slot for HedgeWith<W, A> {
    const PIECE: Option<&'static str> = Some("hedge");

    fn named(self, name: &'static str) -> Self {
        self.map(|hedge| hedge.with_name(name))
    }

    fn clocked(self, clock: &Clock) -> Self {
        self.map(|hedge| hedge.with_clock(clock.clone()))
    }

    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        tuner.hedge = Some(self.hedge().clone());
    }
}

impl<T, E, W, A> HedgeSlot<T, E> for HedgeWith<W, A>
where
    W: When<CallError<E, Refusal>>,
    A: After<CallError<E, Refusal>>,
{
    type When = W;
    type After = A;

    type Stage<P: Future, S: Future<Output = P::Output>> = P;

    fn hedge_with(&self) -> Option<&Self> {
        Some(self)
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a Self) -> P,
        _skip: impl FnOnce() -> S,
    ) -> P
    where
        W: 'a,
        A: 'a,
    {
        piece(self)
    }
}

impl<A: Admit> Slot for RateLimit<A> {
    const PIECE: Option<&'static str> = Some("rate");

    fn named(self, name: &'static str) -> Self {
        self.with_name(name)
    }

    fn clocked(self, clock: &Clock) -> Self {
        self.with_clock(clock.clone())
    }

    fn tune<P>(&self, tuner: &mut Tuner<P>) {
        tuner.rate = Some(Arc::new(self.clone()) as Arc<dyn RateTune>);
    }
}

impl<A: Admit> RateSlot for RateLimit<A> {
    type Admit = A;

    type Stage<P: Future, S: Future<Output = P::Output>> = P;

    fn rate(&self) -> Option<&Self> {
        Some(self)
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a Self) -> P,
        _skip: impl FnOnce() -> S,
    ) -> P {
        piece(self)
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

impl<T, E> ConcurrencySlot<T, E> for Gate {
    type Grade = SampleOk;
    type Stage<G: Future, L: Future<Output = G::Output>, S: Future<Output = G::Output>> = G;

    fn gate(&self) -> Option<&Gate> {
        Some(self)
    }

    fn limiter(&self) -> Option<&Limiter> {
        None
    }

    fn stage<'a, G: Future, L: Future<Output = G::Output>, S: Future<Output = G::Output>>(
        &'a self,
        gate: impl FnOnce(&'a Gate) -> G,
        _limiter: impl FnOnce(&'a Limiter) -> L,
        _skip: impl FnOnce() -> S,
    ) -> G {
        gate(self)
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

impl<T, E, G: Clone + Grade<T, CallError<E, Refusal>>> ConcurrencySlot<T, E> for Limiter<G> {
    type Grade = G;
    type Stage<P: Future, L: Future<Output = P::Output>, S: Future<Output = P::Output>> = L;

    fn gate(&self) -> Option<&Gate> {
        None
    }

    fn limiter(&self) -> Option<&Self> {
        Some(self)
    }

    fn stage<'a, P: Future, L: Future<Output = P::Output>, S: Future<Output = P::Output>>(
        &'a self,
        _gate: impl FnOnce(&'a Gate) -> P,
        limiter: impl FnOnce(&'a Self) -> L,
        _skip: impl FnOnce() -> S,
    ) -> L
    where
        G: 'a,
    {
        limiter(self)
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

impl<T, E, B, C> BreakerSlot<T, E> for Breaker<B, C>
where
    B: SharedCircuitBreaker<Reason: Into<BreakerRefusal>>,
    C: Clone + Classify<T, CallError<E, Refusal>>,
{
    type Shared = B;
    type Classify = C;
    type Stage<P: Future, S: Future<Output = P::Output>> = P;

    fn breaker(&self) -> Option<&Self> {
        Some(self)
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a Self) -> P,
        _skip: impl FnOnce() -> S,
    ) -> P
    where
        B: 'a,
        C: 'a,
    {
        piece(self)
    }
}

impl<B, C> TunesBreaker for Breaker<B, C>
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

impl TimeoutSlot for Timeout {
    type Stage<P: Future, S: Future<Output = P::Output>> = P;

    fn timeout(&self) -> Option<&Timeout> {
        Some(self)
    }

    fn stage<'a, P: Future, S: Future<Output = P::Output>>(
        &'a self,
        piece: impl FnOnce(&'a Timeout) -> P,
        _skip: impl FnOnce() -> S,
    ) -> P {
        piece(self)
    }
}
