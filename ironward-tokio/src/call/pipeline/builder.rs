//! [`Builder`]: how a [`Pipeline`] is made, each piece in any order, each once.

use std::fmt;
use std::sync::Arc;

use super::{HedgeWith, Pipeline, RetryWith, Skip, Slot, Slots};
use crate::call::{Breaker, Fallback, Gate, Hedge, Limiter, RateLimit, Retry, Timeout};
use crate::{Clock, Dice, SharedCircuitBreaker};

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

/// The builder with one slot changed, the rest kept: a new piece in the slot named, or (`map`)
/// the piece there changed by a function; the caller names the slots kept.
macro_rules! reslot {
    ($self:ident, map $field:ident with $change:expr; $($kept:ident),+) => {{
        let Slots { $field, $($kept,)+ } = $self.slots;
        let $field = $change($field);
        Builder {
            slots: Slots { $field, $($kept,)+ },
            name: $self.name,
            clock: $self.clock,
            dice: $self.dice,
        }
    }};
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
    /// error ([`PipelineError`](super::PipelineError)) reads.
    pub fn fallback<F>(
        self,
        fallback: Fallback<F>,
    ) -> Builder<Fallback<F>, Rt, Hg, Rl, Cn, Bk, To> {
        reslot!(self, fallback: fallback; retry, hedge, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, Hg, Rl, Cn, Bk, To> Builder<Fb, Skip, Hg, Rl, Cn, Bk, To> {
    /// The retry, inside the fallback, its calls run with the default hooks ([`Retryable`](super::Retryable),
    /// [`RefusalWait`](super::RefusalWait), no notify) until [`when`](Self::when), [`after`](Self::after) or
    /// [`notify`](Self::notify) replace them.
    pub fn retry(self, retry: Retry) -> Builder<Fb, RetryWith, Hg, Rl, Cn, Bk, To> {
        reslot!(self, retry: RetryWith::new(retry); fallback, hedge, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, W, A, N, Hg, Rl, Cn, Bk, To> Builder<Fb, RetryWith<W, A, N>, Hg, Rl, Cn, Bk, To> {
    /// Retries only the errors `when` finds worth it (any `Fn(&PipelineError<E>) -> bool`),
    /// in place of [`Retryable`](super::Retryable): `error.refusal()` says which piece refused.
    pub fn when<W2>(self, when: W2) -> Builder<Fb, RetryWith<W2, A, N>, Hg, Rl, Cn, Bk, To> {
        self.rehook(|retry| retry.when(when))
    }

    /// Reads the wait each error names (any `Fn(&PipelineError<E>) -> Option<Duration>`), in
    /// place of [`RefusalWait`](super::RefusalWait).
    pub fn after<A2>(self, after: A2) -> Builder<Fb, RetryWith<W, A2, N>, Hg, Rl, Cn, Bk, To> {
        self.rehook(|retry| retry.after(after))
    }

    /// Hears of each wait before it is slept (any `Fn(&PipelineError<E>, Duration)`).
    pub fn notify<N2>(self, notify: N2) -> Builder<Fb, RetryWith<W, A, N2>, Hg, Rl, Cn, Bk, To> {
        self.rehook(|retry| retry.notify(notify))
    }

    /// The same builder with the retry's hooks changed by `change`.
    fn rehook<W2, A2, N2>(
        self,
        change: impl FnOnce(RetryWith<W, A, N>) -> RetryWith<W2, A2, N2>,
    ) -> Builder<Fb, RetryWith<W2, A2, N2>, Hg, Rl, Cn, Bk, To> {
        reslot!(self, map retry with change; fallback, hedge, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, Rt, Rl, Cn, Bk, To> Builder<Fb, Rt, Skip, Rl, Cn, Bk, To> {
    /// The hedge, inside the retry (a hedged round is one attempt) and outside every other
    /// piece, so that each copy it sends passes the rate limit, the concurrency limit, the
    /// breaker and the timeout as a call of its own. Its calls run with the default hooks
    /// (every error lets the other copies race on; a refusal stops further copies:
    /// [`RefusalHalts`](super::RefusalHalts)) until [`hedge_when`](Self::hedge_when) or
    /// [`hedge_after`](Self::hedge_after) replace them.
    pub fn hedge(self, hedge: Hedge) -> Builder<Fb, Rt, HedgeWith, Rl, Cn, Bk, To> {
        reslot!(self, hedge: HedgeWith::new(hedge); fallback, retry, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, Rt, W, A, Rl, Cn, Bk, To> Builder<Fb, Rt, HedgeWith<W, A>, Rl, Cn, Bk, To> {
    /// Lets the other copies race on only after the errors `when` accepts (any
    /// `Fn(&PipelineError<E>) -> bool`); any other is fatal to the race: the hedged round
    /// takes it and drops the copies in flight. By default none is fatal.
    pub fn hedge_when<W2>(self, when: W2) -> Builder<Fb, Rt, HedgeWith<W2, A>, Rl, Cn, Bk, To> {
        reslot!(self, map hedge with |hedge: HedgeWith<W, A>| hedge.when(when); fallback, retry, rate, concurrency, breaker, timeout)
    }

    /// Reads the wait before the next copy an error names (any `Fn(&PipelineError<E>) ->
    /// Option<Duration>`; `Duration::MAX` sends no more), in place of
    /// [`RefusalHalts`](super::RefusalHalts).
    pub fn hedge_after<A2>(self, after: A2) -> Builder<Fb, Rt, HedgeWith<W, A2>, Rl, Cn, Bk, To> {
        reslot!(self, map hedge with |hedge: HedgeWith<W, A>| hedge.after(after); fallback, retry, rate, concurrency, breaker, timeout)
    }
}

impl<Fb, Rt, Hg, Cn, Bk, To> Builder<Fb, Rt, Hg, Skip, Cn, Bk, To> {
    /// The rate limit, on any [`Admit`](crate::call::Admit) (the in-memory
    /// [`LocalRate`](crate::call::LocalRate), a Redis one): inside the retry and the hedge,
    /// so that every attempt and every copy spends from the rate, and outside the
    /// concurrency limit, so that a call waiting for its slot
    /// ([`RateLimit::wait_up_to`]) holds no room and the limiter's latency samples do not
    /// include that wait.
    pub fn rate_limit<A>(
        self,
        rate: RateLimit<A>,
    ) -> Builder<Fb, Rt, Hg, RateLimit<A>, Cn, Bk, To> {
        reslot!(self, rate: rate; fallback, retry, hedge, concurrency, breaker, timeout)
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
    /// the default [`Errors`](crate::call::Errors)).
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
    /// hedge, the rate limit, the limiter, the breaker, the timeout. As each piece's own
    /// `with_clock`, this makes the piece anew, its state not shared with the handle the
    /// builder was given (but for the rate limit, whose `with_clock` keeps its limiter).
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
