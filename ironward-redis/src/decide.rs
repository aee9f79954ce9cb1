//! The one skeleton by which every Redis limiter decides a take, reads its wait and settles a
//! reservation, and the [`Kind`] that each of [`Bucket`](crate::Bucket),
//! [`Sliding`](crate::Sliding) and [`Period`](crate::Period) fills it in with.
//!
//! A take (and a reservation, which is a take that can be settled) is decided in one order
//! for every kind: an answer no state could change; then the memory of keys Redis refused
//! lately; then the kind's script in Redis; and, while Redis is away, the kind's core
//! limiter in the local fallback (or a refusal, when the fallback's share is below one). A
//! wait is read, and a settle made, in the same order. Only the scripts, their replies and
//! the core limiter differ from kind to kind.

use std::time::Duration;

use crate::batch::Call;
use crate::blocked::Blocked;
use crate::local::{self, Fallback, Local};
use crate::meter::Meter;
use crate::reservation::{self, Held, Reservation};
use crate::store::Ran;
use crate::wire::Reading;
use crate::{Answer, Source, Store, StoreError};

/// What the skeleton reads of every limiter, whatever its kind.
pub(crate) struct Common<'a, L> {
    /// Which limiter this is, for telling its reservations from others'.
    pub(crate) id: u64,
    pub(crate) store: &'a Store,
    pub(crate) meter: &'a Meter,
    pub(crate) blocked: &'a Blocked,
    pub(crate) local: &'a Local<L>,
}

/// What one kind of limiter adds to the skeleton of [`decide`], [`next`] and [`settle`].
pub(crate) trait Kind: Sync {
    /// The core limiter the fallback keeps for each key.
    type Core: Fallback;
    /// What a take answers: whether it passed, or where a period stands.
    type Value: Copy;
    /// A take's cost as the kind reads it.
    type Cost: Copy;
    /// The unit a settle counts in: what a reservation's estimate and an actual cost are.
    type Units: Copy + Into<f64>;

    /// The answer of a refusal.
    const REFUSED: Self::Value;

    /// The parts of the limiter every kind has.
    fn common(&self) -> Common<'_, Self::Core>;

    /// Whether `value` admitted the take.
    fn admitted(value: Self::Value) -> bool;

    /// The cost a reservation of `cost` holds.
    fn amount(cost: Self::Cost) -> f64;

    /// The cost the memory of refusals files a take of `cost` under: the amount, unless the
    /// kind's answer to it does not depend on the cost alone.
    fn memo(cost: Self::Cost) -> f64 {
        Self::amount(cost)
    }

    /// The answer that no state could change, before anything is asked; `None` for most.
    fn stateless(&self, _cost: Self::Cost) -> Option<Answer<Self::Value>> {
        None
    }

    /// The script call that decides `cost` for `key` at `reading`.
    fn call(&self, key: Option<&[u8]>, reading: &Reading, cost: Self::Cost) -> Call;

    /// The decision in the script's `reply`, and with `reserve` (a time-out), where an
    /// admitted estimate went; `None` for a reply no script gives.
    fn decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        cost: Self::Cost,
        reserve: Option<Duration>,
    ) -> Option<(Answer<Self::Value>, Option<Held>)>;

    /// The fallback's answer when it keeps no core limiter (its share of the quota is below
    /// the least one holds); `None` when it keeps one.
    fn refused_locally(&self, cost: Self::Cost) -> Option<Answer<Self::Value>>;

    /// A fresh core limiter for the fallback, its clock at `now`.
    fn fresh(&self, now: Duration) -> Self::Core;

    /// The fallback's decision on `core`: the value, and with `reserve` the core's
    /// reservation of an admitted estimate.
    fn local(
        &self,
        core: &mut Self::Core,
        now: Duration,
        cost: Self::Cost,
        reserve: Option<Duration>,
    ) -> (Self::Value, Option<ironward::Reservation>);

    /// The core's wait on `core` for a take of `cost` at `now`.
    fn local_next(&self, core: &Self::Core, now: Duration, cost: Self::Cost) -> Duration;

    /// The script call that reads, without changing anything, when a take of `cost` for
    /// `key` would pass.
    fn next_call(&self, key: Option<&[u8]>, reading: &Reading, cost: Self::Cost) -> Call;

    /// The wait in that script's `reply`; `None` for a reply no script gives.
    fn next_decode(
        &self,
        reply: &redis::Value,
        reading: &Reading,
        cost: Self::Cost,
    ) -> Option<Duration>;

    /// A reservation's `estimate` in units, if a settle at `actual` can change anything
    /// (`None` for a cost the kind never charges).
    fn units(estimate: f64, actual: Self::Units) -> Option<Self::Units>;

    /// The script call that settles `estimate` at `actual` for `key` at `reading`, the
    /// estimate held `at` (the scripts' microseconds) until `deadline`.
    fn settle_call(
        &self,
        key: Option<&[u8]>,
        reading: &Reading,
        estimate: Self::Units,
        actual: Self::Units,
        at: u64,
        deadline: u64,
    ) -> Call;

    /// The fallback's settle of `held` on `core`.
    fn settle_local(
        &self,
        core: &mut Self::Core,
        held: ironward::Reservation,
        actual: Self::Units,
        now: Duration,
    );
}

/// Decides a take of `cost` for `key` at `now` as the skeleton above says; with `reserve`
/// (a time-out), an admitted cost is also a [`Reservation`] to settle.
pub(crate) async fn decide<K: Kind>(
    kind: &K,
    key: Option<&[u8]>,
    now: Duration,
    cost: K::Cost,
    reserve: Option<Duration>,
) -> Result<(Answer<K::Value>, Option<Reservation>), StoreError> {
    let this = kind.common();
    let reservation = |held| Reservation::new(this.id, key, K::amount(cost), held);
    // An admission that took nothing has nothing to settle.
    let nothing = |answer: &Answer<K::Value>| {
        reserve
            .filter(|_| K::admitted(answer.value))
            .map(|_| reservation(Held::Nothing(answer.source)))
    };
    if let Some(answer) = kind.stateless(cost) {
        let held = nothing(&answer);
        return Ok((answer, held));
    }
    if let Some(next) = this.blocked.check(key, now, K::memo(cost)) {
        this.store.answered_blocked();
        let answer = Answer {
            value: K::REFUSED,
            next,
            source: Source::Redis,
        };
        return Ok((answer, None));
    }
    let reading = Reading::new(this.store.options().time, now);
    let call = kind.call(key, &reading, cost);
    let decode = |reply: &redis::Value| kind.decode(reply, &reading, cost, reserve);
    match this.store.run(this.meter, call, decode).await? {
        Ran::Answered((answer, held)) => {
            let refused = !K::admitted(answer.value);
            this.blocked
                .note(key, now, refused, answer.next, K::memo(cost));
            Ok((answer, held.map(reservation)))
        }
        Ran::Local => {
            this.store.answered_locally();
            if let Some(answer) = kind.refused_locally(cost) {
                let held = nothing(&answer);
                return Ok((answer, held));
            }
            let make = || kind.fresh(now);
            Ok(this.local.with(key, now, make, |core, latest| {
                let (value, held) = kind.local(core, now, cost, reserve);
                let answer = Answer {
                    value,
                    next: local::from_now(kind.local_next(core, now, cost), latest, now),
                    source: Source::Local,
                };
                (answer, held.map(|held| reservation(Held::Local(held))))
            }))
        }
    }
}

/// How long after `now` a take of `cost` for `key` would pass, without changing anything:
/// the same order as [`decide`], but for the memory of refusals, which only takes answer
/// from.
pub(crate) async fn next<K: Kind>(
    kind: &K,
    key: Option<&[u8]>,
    now: Duration,
    cost: K::Cost,
) -> Result<Duration, StoreError> {
    let this = kind.common();
    if let Some(answer) = kind.stateless(cost) {
        return Ok(answer.next);
    }
    let reading = Reading::new(this.store.options().time, now);
    let call = kind.next_call(key, &reading, cost);
    let decode = |reply: &redis::Value| kind.next_decode(reply, &reading, cost);
    match this.store.run(this.meter, call, decode).await? {
        Ran::Answered(wait) => Ok(wait),
        Ran::Local => {
            this.store.answered_locally();
            if let Some(answer) = kind.refused_locally(cost) {
                return Ok(answer.next);
            }
            let make = || kind.fresh(now);
            let next = |core: &K::Core, latest| {
                local::from_now(kind.local_next(core, now, cost), latest, now)
            };
            Ok(this.local.peek(key, now, make, next))
        }
    }
}

/// Settles a reservation at its `actual` cost at `now`, where its estimate was counted: in
/// Redis, in the fallback, or nowhere; another limiter's reservation changes nothing.
pub(crate) async fn settle<K: Kind>(
    kind: &K,
    reservation: Reservation,
    actual: K::Units,
    now: Duration,
) -> Result<(), StoreError> {
    let this = kind.common();
    let Some((key, estimate, held)) = reservation.into_parts(this.id) else {
        return Ok(());
    };
    let Some(estimate) = K::units(estimate, actual) else {
        return Ok(());
    };
    let key = key.as_deref();
    this.blocked.settled(key, estimate.into(), actual.into());
    let local = |held| {
        let make = || kind.fresh(now);
        this.local.with(key, now, make, |core, _| {
            kind.settle_local(core, held, actual, now)
        });
    };
    let call = |at, deadline| {
        let reading = Reading::new(this.store.options().time, now);
        kind.settle_call(key, &reading, estimate, actual, at, deadline)
    };
    reservation::settle(this.store, this.meter, held, local, call).await
}
