//! [`SharedLimiter`]: the adaptive concurrency limiter shared by every task, each call's
//! permit settled once, on drop if not before, and an optional wait queue in front of it.

mod admission;
mod permit;
mod queue;
mod state;
mod waiter;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex, TryLockError};
use std::task::Waker;
use std::time::Duration;

use ironward::{Adaptive, Criticality, Grant, Limiter, Settle};

pub use self::admission::{Admission, LimiterRefusal, Queued};
pub use self::permit::LimiterPermit;
pub use self::queue::{QUEUE, Queue};
use self::state::{Entry, Place, State};
pub use self::waiter::Waiter;
use crate::{Clock, Dice, lock};

/// An [`ironward::Limiter`] that every task shares: one adaptive concurrency limit, read and
/// moved under a lock held only for the core's decision, never across an await.
///
/// The core limiter is pure: it is told `now` and handed each call's [`Grant`] back. This
/// handle owns the [`Clock`] (read once per decision: to admit, to settle, to give up
/// waiting) and turns each grant into a [`LimiterPermit`], which settles the call when it is
/// told how the call ended and, if it is dropped first (the call's future was cancelled),
/// settles it as [`Settle::Ignored`]: the call leaves flight and teaches the limit nothing,
/// so no cancelled call stays counted in flight.
///
/// `Clone` is an `Arc` clone: every clone shares the one limiter, so cloning never
/// multiplies the limit.
///
/// [`Limiter`]'s docs say when to put a limiter in front of a backend, and when a breaker or
/// a shedder fits instead: the limiter follows latency, the breaker failures, the shedder
/// this server's CPU.
///
/// # The queue
///
/// By default a call that finds no room is refused at once ([`Admission::Refused`]). Made
/// [`with_queue`](Self::with_queue), the limiter may queue it instead
/// ([`Admission::Queued`]), as failsafe-go's adaptive limiter does with `WithQueueing`: the
/// [`Queue`] docs say how its chance of being turned away rises as the queue fills, and the
/// draw that decides comes from the limiter's [`Dice`]. The queue a call sees is the calls it
/// would wait behind, those of its class and above, so that a queue full of sheddable calls
/// never turns a critical one away (failsafe-go's plain queueing counts every queued call). As calls leave flight the queue's
/// calls are let in, the most critical first and, within a class, the first to arrive
/// first, each when the core would admit it: while the core's floor refuses its class, or
/// its class's share of the limit is full, it waits. Under partitions
/// ([`Adaptive::partitions`]) a less critical class may be let in on its reservation while a
/// more critical one waits for its own. A call that must never wait or be refused (a health
/// check) asks for a [`bypass`](Self::bypass) instead. A waiting call is looked at again
/// whenever a call arrives or leaves flight, at a retune, and once every cooling time
/// ([`Adaptive::cool`]) while it waits, so that a call held back only by the floor gets in
/// once the floor has cooled even when nothing else happens. A call waits at most the
/// queue's `wait`, then asks the core once more, which either lets it in or refuses it
/// (that refusal is the core's, and raises its floor as any refusal does). A [`Waiter`] that is
/// dropped leaves the queue; one dropped after it was let in settles its call as ignored,
/// and the room goes to the next.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::limit::{AIMD, Aimd, Algorithm};
/// use ironward::{ADAPTIVE, Adaptive, Criticality, Settle};
/// use ironward_tokio::{Admission, Clock, SharedLimiter};
///
/// let (clock, hand) = Clock::manual(Duration::ZERO);
/// let two = Adaptive { algorithm: Algorithm::Aimd(Aimd { initial: 2, min: 1, ..AIMD }), ..ADAPTIVE };
/// let limiter = SharedLimiter::new(two, clock);
/// let Admission::Admitted(first) = limiter.admit(Criticality::Critical) else { panic!() };
/// let Admission::Admitted(second) = limiter.admit(Criticality::Critical) else { panic!() };
/// let Admission::Refused(refusal) = limiter.admit(Criticality::Critical) else { panic!() };
/// assert_eq!((refusal.reason.flying, refusal.reason.limit), (2, 2));
///
/// hand.advance(Duration::from_millis(40));
/// first.settle(Settle::Success);
/// drop(second); // cancelled: settled as ignored
/// assert_eq!(limiter.flying(), 0);
/// ```
#[derive(Clone)]
pub struct SharedLimiter {
    inner: Arc<Inner>,
}

/// What every clone of a [`SharedLimiter`], its permits and its waiters share.
struct Inner {
    state: Mutex<State>,
    /// The core's limit, copied under the lock whenever it may have moved (a settle, a
    /// retune), so that reading it takes no lock: a gauge reads it after every call.
    limit: AtomicU32,
    clock: Clock,
    dice: Dice,
}

impl SharedLimiter {
    /// A limiter under `policy` on `clock`, with nothing in flight, that refuses at once a
    /// call that finds no room.
    pub fn new(policy: Adaptive, clock: Clock) -> Self {
        Self::build(policy, None, clock, Dice::default())
    }

    /// A limiter under `policy` on `clock` whose full limit queues calls as `queue` says,
    /// with `dice` drawing for the queue's gradual rejection.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive, Criticality, Settle};
    /// use ironward_tokio::{Admission, Clock, Dice, QUEUE, SharedLimiter};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let one = Adaptive { algorithm: Algorithm::Aimd(Aimd { initial: 1, min: 1, ..AIMD }), ..ADAPTIVE };
    /// let limiter = SharedLimiter::with_queue(one, QUEUE, Clock::monotonic(), Dice::from_fn(|| 0.5));
    /// let Admission::Admitted(running) = limiter.admit(Criticality::Critical) else { panic!() };
    /// let Admission::Queued(waiter) = limiter.admit(Criticality::Critical) else { panic!() };
    /// assert_eq!(limiter.queued(), 1);
    /// running.settle(Settle::Success);
    /// // The room went to the queued call: its waiter holds the permit.
    /// let permit = waiter.await.expect("let in");
    /// assert_eq!((limiter.flying(), limiter.queued()), (1, 0));
    /// # drop(permit);
    /// # }
    /// ```
    pub fn with_queue(policy: Adaptive, queue: Queue, clock: Clock, dice: Dice) -> Self {
        Self::build(policy, Some(queue), clock, dice)
    }

    /// A limiter under `policy`, `queue` (if any), `clock` and `dice`: what both constructors
    /// make, and what a `call::Limiter` rebuilds on another clock or dice.
    pub(crate) fn build(policy: Adaptive, queue: Option<Queue>, clock: Clock, dice: Dice) -> Self {
        let limiter = Limiter::new(policy, clock.now());
        Self {
            inner: Arc::new(Inner {
                limit: AtomicU32::new(limiter.limit()),
                state: Mutex::new(State {
                    limiter,
                    queue,
                    waiting: BTreeMap::new(),
                    counts: [0; 4],
                    granted: BTreeMap::new(),
                    next: 0,
                }),
                clock,
                dice,
            }),
        }
    }

    /// Asks to start a call of class `criticality` now: let in, queued, or refused.
    ///
    /// The clock is read once. If calls are queued, those the core would now admit are let
    /// in first (a floor that has cooled since the last call left may admit some), so a call
    /// never passes a queued one of its class or above. Without a queue the core then decides
    /// this call ([`Limiter::acquire_as`]), and a refusal is [`Queued::Off`]. With one, a
    /// call the core would not admit goes to the queue without asking the core, which would
    /// count it refused and raise its floor: only a call the queue turns away, or one whose
    /// wait runs out, is refused by the core, and raises the floor.
    pub fn admit(&self, criticality: Criticality) -> Admission {
        self.admit_at(self.inner.clock.now(), criticality)
    }

    /// [`admit`](Self::admit) with the reading `now` of the limiter's [`clock`](Self::clock)
    /// the caller already took: a server stack that decides several pieces on one request
    /// reads the clock once for them all.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{ADAPTIVE, Criticality, Settle};
    /// use ironward_tokio::{Admission, Clock, SharedLimiter};
    ///
    /// let (clock, hand) = Clock::manual(Duration::ZERO);
    /// let limiter = SharedLimiter::new(ADAPTIVE, clock.clone());
    /// let now = clock.now(); // read once, and shared with the other pieces
    /// let Admission::Admitted(permit) = limiter.admit_at(now, Criticality::Critical) else {
    ///     panic!("room")
    /// };
    /// assert_eq!(permit.start(), now);
    /// hand.advance(Duration::from_millis(30));
    /// permit.settle_at(Settle::Success, clock.now());
    /// assert_eq!(limiter.flying(), 0);
    /// ```
    pub fn admit_at(&self, now: Duration, criticality: Criticality) -> Admission {
        let mut wake = Vec::new();
        let admission = {
            let mut state = lock(&self.inner.state);
            if !state.waiting.is_empty() {
                state.pump(now, &mut wake);
            }
            state.admit(now, criticality, &self.inner.dice)
        };
        wake.into_iter().for_each(Waker::wake);
        match admission {
            Entry::Admitted(grant) => Admission::Admitted(self.inner.permit(grant)),
            Entry::Queued { place, wait, cool } => Admission::Queued(Waiter {
                inner: Arc::clone(&self.inner),
                place,
                arrived: now,
                wait,
                cool,
                sleep: None,
                done: false,
            }),
            Entry::Refused(refusal) => Admission::Refused(refusal),
        }
    }

    /// Lets in now a call the limiter must never refuse (a health check, an operator's
    /// call), counted nowhere: [`Limiter::acquire_bypass`]. The call neither waits in the
    /// queue nor takes a place in it, is not counted in flight, and its latency is not
    /// sampled; its permit settles as any other, and changes nothing.
    ///
    /// Which calls bypass is the caller's: run the predicate on the request (its path, a
    /// header) and ask here instead of [`admit`](Self::admit) when it holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive, Criticality, Settle};
    /// use ironward_tokio::{Admission, Clock, SharedLimiter};
    ///
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let one = Adaptive { algorithm: Algorithm::Aimd(Aimd { initial: 1, min: 1, ..AIMD }), ..ADAPTIVE };
    /// let limiter = SharedLimiter::new(one, clock);
    /// let Admission::Admitted(call) = limiter.admit(Criticality::Critical) else { panic!() };
    /// assert!(matches!(limiter.admit(Criticality::CriticalPlus), Admission::Refused(_)));
    /// let health = limiter.bypass();
    /// assert_eq!(limiter.flying(), 1, "the health check is not counted");
    /// health.settle(Settle::Success);
    /// call.settle(Settle::Success);
    /// assert_eq!(limiter.flying(), 0);
    /// ```
    pub fn bypass(&self) -> LimiterPermit {
        self.bypass_at(self.inner.clock.now())
    }

    /// [`bypass`](Self::bypass) with the reading `now` of the limiter's clock the caller
    /// already took.
    pub fn bypass_at(&self, now: Duration) -> LimiterPermit {
        let grant = lock(&self.inner.state).limiter.acquire_bypass(now);
        self.inner.permit(grant)
    }

    /// [`admit`](Self::admit), waiting in the queue if the call is queued: the permit, or
    /// why the call was refused.
    ///
    /// The decision is made when the future is first polled. Dropping the future leaves the
    /// queue, as dropping a [`Waiter`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{ADAPTIVE, Criticality, Settle};
    /// use ironward_tokio::{Clock, SharedLimiter};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let limiter = SharedLimiter::new(ADAPTIVE, Clock::monotonic());
    /// let permit = limiter.acquire(Criticality::CriticalPlus).await.expect("room");
    /// permit.settle(Settle::Success);
    /// assert_eq!(limiter.flying(), 0);
    /// # }
    /// ```
    pub async fn acquire(&self, criticality: Criticality) -> Result<LimiterPermit, LimiterRefusal> {
        match self.admit(criticality) {
            Admission::Admitted(permit) => Ok(permit),
            Admission::Queued(waiter) => waiter.await,
            Admission::Refused(refusal) => Err(refusal),
        }
    }

    /// The limit now ([`Limiter::limit`]), as the latest settle or retune left it; takes no
    /// lock.
    pub fn limit(&self) -> u32 {
        self.inner.limit.load(Relaxed)
    }

    /// Whether a probe is draining ([`Limiter::probing`]): admissions are held below
    /// [`limit`](Self::limit) until it has measured the latency with no queue.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{ADAPTIVE, Criticality, Settle};
    /// use ironward_tokio::{Clock, SharedLimiter};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let limiter = SharedLimiter::new(ADAPTIVE, Clock::monotonic());
    /// assert!(!limiter.probing());
    /// // The default first measures the backend with one call in flight.
    /// let permit = limiter.acquire(Criticality::Critical).await.expect("room");
    /// assert!(limiter.probing());
    /// assert_eq!(limiter.limit(), 20);
    /// permit.settle(Settle::Success);
    /// # }
    /// ```
    pub fn probing(&self) -> bool {
        lock(&self.inner.state).limiter.probing()
    }

    /// The calls let in and not yet settled ([`Limiter::flying`]), those let in from the
    /// queue whose waiter has not yet been polled included.
    pub fn flying(&self) -> u32 {
        lock(&self.inner.state).limiter.flying()
    }

    /// The calls waiting in the queue.
    pub fn queued(&self) -> usize {
        lock(&self.inner.state).waiting.len()
    }

    /// How many calls in flight a call of `criticality` may join now ([`Limiter::room`]).
    pub fn room(&self, criticality: Criticality) -> u32 {
        lock(&self.inner.state).limiter.room(criticality)
    }

    /// The least critical class admitted now ([`Limiter::floor`]); reads the clock.
    pub fn floor(&self) -> Criticality {
        let now = self.inner.clock.now();
        lock(&self.inner.state).limiter.floor(now)
    }

    /// The policy in force.
    pub fn policy(&self) -> Adaptive {
        *lock(&self.inner.state).limiter.policy()
    }

    /// The queue in front of the limit, if it has one.
    pub fn queue(&self) -> Option<Queue> {
        lock(&self.inner.state).queue
    }

    /// Changes the policy in place now, keeping the calls in flight, the limit reached, the
    /// open sampling window and the floor ([`Limiter::retune`]), and returns the policy it
    /// replaced.
    ///
    /// Under the lock every decision takes, so a call is decided wholly under the old policy
    /// or wholly under the new one. Queued calls the new policy makes room for are let in.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive};
    /// use ironward_tokio::{Clock, SharedLimiter};
    ///
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let limiter = SharedLimiter::new(ADAPTIVE, clock);
    /// let aimd = Adaptive { algorithm: Algorithm::Aimd(AIMD), ..ADAPTIVE };
    /// let was = limiter.retune(aimd);
    /// assert_eq!(was, ADAPTIVE);
    /// assert_eq!(limiter.policy(), aimd);
    /// ```
    pub fn retune(&self, policy: Adaptive) -> Adaptive {
        let now = self.inner.clock.now();
        let mut wake = Vec::new();
        let was = {
            let mut state = lock(&self.inner.state);
            let was = *state.limiter.policy();
            state.limiter.retune(policy, now);
            self.inner.limit.store(state.limiter.limit(), Relaxed);
            state.pump(now, &mut wake);
            was
        };
        wake.into_iter().for_each(Waker::wake);
        was
    }

    /// Puts `queue` in front of the limit from now on (`None`: no queue, a call that finds
    /// no room is refused at once), and returns the queue it replaced.
    ///
    /// Under the lock every decision takes. The calls already waiting keep their place and
    /// the wait they were promised, and are let in as room appears whatever the new queue
    /// says; only calls that arrive from now on are queued, turned away or refused under
    /// it. A limiter made by [`new`](SharedLimiter::new) draws a queue's gradual rejection
    /// from [`Dice::default`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::limit::{AIMD, Aimd, Algorithm};
    /// use ironward::{ADAPTIVE, Adaptive, Criticality};
    /// use ironward_tokio::{Admission, Clock, QUEUE, Queue, SharedLimiter};
    ///
    /// let one = Adaptive { algorithm: Algorithm::Aimd(Aimd { initial: 1, min: 1, ..AIMD }), ..ADAPTIVE };
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let limiter = SharedLimiter::new(one, clock);
    /// let Admission::Admitted(running) = limiter.admit(Criticality::Critical) else { panic!() };
    /// assert!(matches!(limiter.admit(Criticality::Critical), Admission::Refused(_)));
    ///
    /// // From now on a full limit queues: two waiting calls per unit of limit before any is
    /// // turned away.
    /// assert_eq!(limiter.retune_queue(Some(QUEUE)), None);
    /// assert_eq!(limiter.queue(), Some(QUEUE));
    /// assert!(matches!(limiter.admit(Criticality::Critical), Admission::Queued(_)));
    /// assert_eq!(limiter.retune_queue(None), Some(QUEUE));
    /// # drop(running);
    /// ```
    pub fn retune_queue(&self, queue: Option<Queue>) -> Option<Queue> {
        core::mem::replace(&mut lock(&self.inner.state).queue, queue)
    }

    /// The clock the limiter reads.
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// The dice the queue's gradual rejection draws from.
    pub(crate) fn dice(&self) -> &Dice {
        &self.inner.dice
    }
}

impl Inner {
    /// A permit for `grant`, settled through this limiter.
    fn permit(self: &Arc<Self>, grant: Grant) -> LimiterPermit {
        LimiterPermit {
            grant: Some(grant),
            inner: Arc::clone(self),
        }
    }

    /// Settles `grant` now, and lets in the queued calls its room admits.
    fn settle(&self, grant: Grant, settle: Settle, now: Duration) {
        let mut wake = Vec::new();
        {
            let mut state = lock(&self.state);
            state.limiter.settle(grant, settle, now);
            self.limit.store(state.limiter.limit(), Relaxed);
            if !state.waiting.is_empty() {
                state.pump(now, &mut wake);
            }
        }
        wake.into_iter().for_each(Waker::wake);
    }

    /// A look at the queue at `now` on a waiter's behalf, between its arrival and the end of
    /// its wait: the grant if the call is let in, else the cooling time in force, after
    /// which it looks again.
    fn look(&self, place: Place, now: Duration) -> Result<Grant, Duration> {
        let mut wake = Vec::new();
        let look = {
            let mut state = lock(&self.state);
            state.pump(now, &mut wake);
            state
                .granted
                .remove(&place.1)
                .ok_or(state.limiter.policy().cool)
        };
        wake.into_iter().for_each(Waker::wake);
        look
    }

    /// The end of a wait at `now`: the grant if the call was let in meanwhile (or now, the
    /// queue moved on first), else the core's answer to one last ask, out of the queue.
    fn expire(
        self: &Arc<Self>,
        place: Place,
        arrived: Duration,
        now: Duration,
    ) -> Result<LimiterPermit, LimiterRefusal> {
        let mut wake = Vec::new();
        let decision = {
            let mut state = lock(&self.state);
            state.pump(now, &mut wake);
            match state.granted.remove(&place.1) {
                Some(grant) => Ok(grant),
                None => {
                    state.leave(place);
                    state
                        .limiter
                        .acquire_as(now, place.0.0)
                        .map_err(|reason| LimiterRefusal {
                            reason,
                            queued: Queued::Expired {
                                waited: now.saturating_sub(arrived),
                            },
                        })
                }
            }
        };
        wake.into_iter().for_each(Waker::wake);
        decision.map(|grant| self.permit(grant))
    }
}

/// The limit, the calls in flight and queued if the lock is free (as `Mutex`'s own `Debug`
/// shows its value), and the clock and the dice by kind: formatting never waits, reads the
/// clock or draws.
impl fmt::Debug for SharedLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("SharedLimiter");
        let state = match self.inner.state.try_lock() {
            Ok(state) => Some(state),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        match state {
            Some(state) => out
                .field("limit", &state.limiter.limit())
                .field("flying", &state.limiter.flying())
                .field("queued", &state.waiting.len())
                .field("queue", &state.queue),
            None => out.field("state", &format_args!("<locked>")),
        };
        out.field("clock", &self.inner.clock)
            .field("dice", &self.inner.dice)
            .finish()
    }
}

#[cfg(test)]
mod tests;
