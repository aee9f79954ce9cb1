//! [`Admit`]: what a [`RateLimit`](super::RateLimit) asks of a rate limiter, and [`LocalRate`],
//! the core's limiters in memory.

use std::fmt;
use std::future::{Future, ready};
use std::sync::Mutex;
use std::time::Duration;

use ironward::Reservation;

use crate::{Quota, QuotaLimiter, lock};

/// The last reading the core's clock holds: nanoseconds in a `u64`.
const END: Duration = Duration::from_nanos(u64::MAX);

/// A rate limiter a [`RateLimit`](super::RateLimit) runs: it admits a call of a cost at a
/// reading of the clock, now or at an instant it holds for it, and says how long until
/// room when it cannot.
///
/// Implemented here by [`LocalRate`] (the core's `Bucket`, `Sliding` and `Period` in memory),
/// and by ironward-redis for its limiters on a key (its `OnKey`). The piece reads the
/// clock, sleeps, counts and reports; the limiter only decides.
///
/// **Holding a slot ahead.** A limiter that can (the local ones) answers a call that fits
/// within `within` by taking its cost now at the first instant with room, and
/// [`Admitted::wait`] says how long until that instant: the caller then sleeps and runs
/// exactly then, and nobody arriving later can take its place. Its [`Admitted::slot`] is
/// handed back through [`give_back`](Self::give_back) if the caller is dropped before then.
/// A limiter that cannot hold a slot ahead (a Redis script decides at the reading it is
/// given) answers [`Denied::Later`] with the wait even when it is within `within`; the
/// piece then sleeps that long and asks again.
pub trait Admit: Send + Sync + 'static {
    /// What a call admitted ahead holds until its instant, to be given back if it never
    /// runs.
    type Slot: Send + 'static;

    /// Admits a call of `cost` at `now`, or holds the first instant with room for it if that
    /// is at most `within` after `now`; else says how long until room (nothing taken).
    ///
    /// An answer of [`Admitted`] has a `wait` of at most `within`; a `Duration::MAX` wait is
    /// never, which no bound reaches.
    fn admit(
        &self,
        now: Duration,
        cost: u32,
        within: Duration,
    ) -> impl Future<Output = Result<Admitted<Self::Slot>, Denied>> + Send;

    /// Gives back the slot of a call admitted ahead that will not run (its future was
    /// dropped while it waited), read at `now`.
    fn give_back(&self, slot: Self::Slot, now: Duration);

    /// The limit it keeps, for a refusal to tell.
    fn limit(&self) -> Quota;

    /// Changes the limit in place at `now`, keeping what the limiter has counted, or hands
    /// `limit` back if this limiter cannot take it (another kind of limiter, or one whose
    /// limit is fixed, as the default says).
    fn retune(&self, limit: Quota, now: Duration) -> Result<(), Quota> {
        let _ = now;
        Err(limit)
    }
}

/// A call an [`Admit`] let in: now, or after `wait`, at an instant held for it.
#[derive(Debug)]
pub struct Admitted<S> {
    /// How long after the reading it was asked at the call may start: zero for now.
    pub wait: Duration,
    /// What it holds until then, given back if it never runs; `None` for nothing to give.
    pub slot: Option<S>,
}

/// Why an [`Admit`] did not let a call in. Nothing was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Denied {
    /// No room now, nor within what the caller would wait: room comes after `wait`
    /// (`Duration::MAX`: never, a cost above what the limiter ever holds).
    Later {
        /// How long until there is room for the call's cost.
        wait: Duration,
    },
    /// The limiter could not decide (a store that did not answer): nothing was admitted,
    /// and asking again after `retry_after` may.
    Unavailable {
        /// How long to wait before asking again.
        retry_after: Duration,
    },
}

/// One of the core's limiters in memory, behind a `std::sync::Mutex` held for one decision
/// (never across an await): the [`Admit`] a [`RateLimit::new`](super::RateLimit::new) runs.
///
/// It holds slots ahead: a call that must wait reserves its cost (the core's `reserve`) at
/// the first instant with room, and the limiter's clock moves on to that instant, so a call
/// asked for at an earlier reading is decided there, after every call already waiting,
/// first come first served.
///
/// **A slot given back.** The last slot held is settled at a cost of zero (the core's
/// `settle`) at its own instant, where the limiter's clock stands, and its cost is refunded
/// in full: a bucket's tokens, a window's entry, a period's count. A slot with later ones
/// behind it cannot be refunded there (the limiter has moved past it, and the waiters behind
/// keep their instants), so it stays charged at its instant and goes to the next call that
/// fits in it (a cost no larger), which is admitted then, ahead of the limiter's own next
/// slot and delaying nobody; a smaller call takes it whole. One nobody takes before its
/// instant passes is spent, as a slot is when its call runs.
///
/// A reading earlier than one the limiter has seen (a clock set back, or a slot held ahead)
/// is read as the latest seen, as the core reads it; the wait it answers is counted from
/// the reading it was asked at, so a caller whose clock stepped back is told the wait on its
/// own clock, as ironward-redis's local fallback tells it.
pub struct LocalRate {
    state: Mutex<State>,
}

struct State {
    limiter: QuotaLimiter,
    limit: Quota,
    /// The latest reading the limiter has been given: a slot held ahead moves it on.
    latest: Duration,
    /// Slots given back from the middle of the queue, still charged to the limiter, each
    /// free for the next call that fits in it.
    vacant: Vec<LocalSlot>,
}

/// The slot a call waiting on a [`LocalRate`] holds: its cost, reserved on the core limiter
/// at the instant the call starts.
#[derive(Debug)]
pub struct LocalSlot {
    reservation: Reservation,
    at: Duration,
    cost: u32,
}

impl LocalRate {
    /// The core limiter `limit` names, fresh (a bucket full).
    pub fn new(limit: Quota) -> Self {
        let limiter = QuotaLimiter::new(&limit, Duration::ZERO);
        Self {
            state: Mutex::new(State {
                limiter,
                limit,
                latest: Duration::ZERO,
                vacant: Vec::new(),
            }),
        }
    }

    /// The decision [`admit`](Admit::admit) answers, taken under the lock.
    fn decide(
        &self,
        now: Duration,
        cost: u32,
        within: Duration,
    ) -> Result<Admitted<LocalSlot>, Denied> {
        let mut state = lock(&self.state);
        let vacant = state.vacancy(now, cost);
        let at = now.max(state.latest);
        let next = state.limiter.next(at, cost);
        // The wait counted from `now`, the caller's reading: `at` is later only for a clock
        // set back or a slot held ahead.
        let fresh = if next == Duration::MAX {
            next
        } else {
            next.saturating_add(at - now)
        };
        if let Some((index, wait)) = vacant
            && wait <= fresh
        {
            if wait > within {
                return Err(Denied::Later { wait });
            }
            let slot = state.vacant.swap_remove(index);
            return Ok(Admitted {
                wait,
                slot: Some(slot),
            });
        }
        let instant = at.saturating_add(next);
        // A slot past the end of the core's clock (nanoseconds in a `u64`, about 584 years)
        // is never there: its reading would saturate back into the past.
        if fresh == Duration::MAX || instant > END {
            return Err(Denied::Later {
                wait: Duration::MAX,
            });
        }
        if fresh > within {
            return Err(Denied::Later { wait: fresh });
        }
        // `next` said there is room then, and the core's `next` is exact (a bucket's is
        // rounded up to the first nanosecond a take succeeds at), so this holds.
        let reservation = state.limiter.reserve(instant, cost).ok_or(Denied::Later {
            wait: Duration::MAX,
        })?;
        state.latest = instant;
        Ok(Admitted {
            wait: fresh,
            slot: Some(LocalSlot {
                reservation,
                at: instant,
                cost,
            }),
        })
    }
}

impl State {
    /// The earliest slot given back that a call of `cost` at `now` fits in, and its wait;
    /// slots whose instant has passed are dropped, their cost spent.
    fn vacancy(&mut self, now: Duration, cost: u32) -> Option<(usize, Duration)> {
        if self.vacant.is_empty() {
            return None;
        }
        self.vacant.retain(|slot| slot.at >= now);
        self.vacant
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.cost >= cost)
            .min_by_key(|(_, slot)| slot.at)
            .map(|(index, slot)| (index, slot.at - now))
    }
}

impl Admit for LocalRate {
    type Slot = LocalSlot;

    fn admit(
        &self,
        now: Duration,
        cost: u32,
        within: Duration,
    ) -> impl Future<Output = Result<Admitted<LocalSlot>, Denied>> + Send {
        ready(self.decide(now, cost, within))
    }

    fn give_back(&self, slot: LocalSlot, now: Duration) {
        let mut state = lock(&self.state);
        if slot.at >= state.latest {
            // The last slot held: the limiter's clock is at its instant, where the refund
            // counts in full.
            let at = now.max(state.latest);
            state.limiter.refund(slot.reservation, at);
        } else {
            // A slot with later ones behind it: its cost stays charged at its instant, for
            // the next call that fits in it.
            state.vacant.push(slot);
        }
    }

    fn limit(&self) -> Quota {
        lock(&self.state).limit
    }

    fn retune(&self, limit: Quota, now: Duration) -> Result<(), Quota> {
        let mut state = lock(&self.state);
        if !state.limit.retunes_to(&limit) {
            return Err(limit);
        }
        let at = now.max(state.latest);
        if !state.limiter.retune(&limit, at) {
            return Err(limit);
        }
        state.limit = limit;
        state.latest = at;
        Ok(())
    }
}

/// What a [`LocalRate`] asks of its limiter beyond a take: the core's `next`, `reserve` and
/// `settle`, each of the three kinds read alike.
impl QuotaLimiter {
    /// How long after `at` a cost fits (the core's `next`): `Duration::MAX` for never.
    fn next(&self, at: Duration, cost: u32) -> Duration {
        match self {
            Self::Bucket(bucket) => bucket.next(at, f64::from(cost)),
            Self::Sliding(log) => log.next_n(at, cost),
            Self::Period(counter) => counter.next_n(at, cost),
        }
    }

    /// Takes `cost` at `at`, held until it is given back or runs, if it fits then.
    fn reserve(&mut self, at: Duration, cost: u32) -> Option<Reservation> {
        // A slot is given back whenever its caller is dropped, however late: no deadline.
        let forever = Duration::MAX;
        match self {
            Self::Bucket(bucket) => bucket.reserve(at, f64::from(cost), forever).ok(),
            Self::Sliding(log) => log.reserve(at, cost, forever).ok(),
            Self::Period(counter) => counter.reserve(at, cost, forever).ok(),
        }
    }

    /// Gives a reservation's whole cost back at `at`.
    fn refund(&mut self, reservation: Reservation, at: Duration) {
        // Each reservation was made by this limiter: a settle answers `None`.
        let _ = match self {
            Self::Bucket(bucket) => bucket.settle(reservation, 0.0, at),
            Self::Sliding(log) => log.settle(reservation, 0, at),
            Self::Period(counter) => counter.settle(reservation, 0, at),
        };
    }
}

impl fmt::Debug for LocalRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("LocalRate")
            .field("limit", &state.limit)
            .field("latest", &state.latest)
            .finish()
    }
}
