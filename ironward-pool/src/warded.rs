//! The warded manager and the handle its ward is read and changed through.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::classic::{State as BreakerState, Transition};
use ironward::{
    CircuitBreaker, ConnectPermit, Outcome, RECONNECT, Reconnect, Refusal, SreBreaker, Ward,
    WardPiece,
};
use ironward_tokio::meter::{Decisions, Level, States};
use ironward_tokio::{BreakerPolicy, Clock, Dice, Knobs};

use crate::error::{ConnectRefused, WardError};

/// The `reason` labels of a refused connect, in the order [`piece_index`] numbers them.
const CONNECT_REASONS: &[&str] = &["breaker", "bucket", "backoff"];

/// The `reason` labels of a refused checkout.
const CHECKOUT_REASONS: &[&str] = &["gate", "shed"];

fn piece_index(piece: WardPiece) -> usize {
    match piece {
        WardPiece::Breaker => 0,
        WardPiece::Bucket => 1,
        WardPiece::Backoff => 2,
    }
}

/// A pool's connection manager with a ward in front of its connects: the inner manager `M`
/// (a deadpool `Manager` or a bb8 `ManageConnection`), asked only when the ward lets a
/// connect through.
///
/// Wrapping is one line, `Warded::new(manager)`, and the pool is built from the result as
/// from the manager. [`handle`](Warded::handle) gives the ward's [`Handle`] before the pool
/// takes the manager: its counts, its policy, and the checkout admission.
///
/// The ward is shared: every clone of a `Warded` (and every [`Handle`]) reads and settles one
/// core [`Ward`] behind one lock, so cloning never multiplies the connects allowed.
///
/// # Examples
///
/// ```
/// use ironward::{RECONNECT, Reconnect};
/// use ironward_pool::Warded;
///
/// # struct Manager;
/// let warded = Warded::with_policy(Manager, Reconnect { rate: 2.0, ..RECONNECT });
/// assert_eq!(warded.handle().policy().rate, 2.0);
/// assert_eq!(warded.handle().counts().attempts, 0);
/// ```
///
/// `B` is the ward's breaker family, by default [`SreBreaker`], and whichever family
/// the policy given to [`with_policy`](Warded::with_policy) names ([`BreakerPolicy`]): the
/// classic breaker for a `Reconnect<Classic>` such as
/// [`RECONNECT_CLASSIC`](ironward::RECONNECT_CLASSIC). [`for_breaker`](Warded::for_breaker)
/// takes any other [`CircuitBreaker`].
pub struct Warded<M, B: CircuitBreaker = SreBreaker> {
    inner: M,
    shared: Arc<Shared<B>>,
}

impl<M: Clone, B: CircuitBreaker> Clone for Warded<M, B> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<M, B: CircuitBreaker> fmt::Debug for Warded<M, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Warded")
            .field("name", &self.shared.knobs.name)
            .finish_non_exhaustive()
    }
}

/// What every clone of a [`Warded`] and every [`Handle`] share.
struct Shared<B: CircuitBreaker> {
    state: Mutex<State<B>>,
    /// The name, the clock and the dice the ward decides by; a ward has no shadow mode.
    knobs: Knobs,
    cpu: Cpu,
    counts: Counters,
    connects: Decisions,
    checkouts: Decisions,
    ratio: Level,
    /// The breaker's state gauge and changes counter, registered only for a family with
    /// states.
    states: States,
}

/// The core ward and what the events are told about it.
struct State<B: CircuitBreaker> {
    ward: Ward<B>,
    /// Whether the breaker was throttling (a drop fraction above zero) at the last look.
    throttling: bool,
}

#[derive(Default)]
struct Counters {
    attempts: AtomicU64,
    connected: AtomicU64,
    failed: AtomicU64,
    refused: [AtomicU64; 3],
    checkouts_refused: AtomicU64,
}

/// What a ward has decided since it was made: every connect the pool asked for, and how each
/// ended.
///
/// # Examples
///
/// ```
/// use ironward_pool::Warded;
///
/// # struct Manager;
/// let counts = Warded::new(Manager).handle().counts();
/// assert_eq!((counts.attempts, counts.refused()), (0, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Counts {
    /// Connects the ward let through to the inner manager.
    pub attempts: u64,
    /// Of those, connects the inner manager made.
    pub connected: u64,
    /// Of those, connects the inner manager failed (or that were dropped before they ended).
    pub failed: u64,
    /// Connects the breaker refused.
    pub refused_by_breaker: u64,
    /// Connects the bucket refused.
    pub refused_by_bucket: u64,
    /// Connects the backoff refused.
    pub refused_by_backoff: u64,
    /// Checkouts the gate or the shedder refused.
    pub checkouts_refused: u64,
}

impl Counts {
    /// Connects refused, by any piece.
    pub fn refused(&self) -> u64 {
        self.refused_by_breaker + self.refused_by_bucket + self.refused_by_backoff
    }
}

impl<M> Warded<M> {
    /// `inner` behind a ward with the preset policy, [`RECONNECT`].
    pub fn new(inner: M) -> Self {
        Self::with_policy(inner, RECONNECT)
    }

    /// `inner` behind a ward with `policy`, on tokio's monotonic clock and real randomness,
    /// running the breaker family the policy's `breaker` names ([`BreakerPolicy`]): the SRE
    /// breaker for [`RECONNECT`] and any `Reconnect<Sre>`, the classic breaker for
    /// [`RECONNECT_CLASSIC`](ironward::RECONNECT_CLASSIC) and any `Reconnect<Classic>`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::{Outcome, RECONNECT_CLASSIC, WardPiece};
    /// use ironward_pool::{WardError, Warded};
    /// use ironward_tokio::Clock;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (clock, hand) = Clock::manual(Duration::ZERO);
    /// let warded = Warded::with_policy((), RECONNECT_CLASSIC).with_clock(clock);
    /// // Five failed checks of held connections open the classic breaker.
    /// for _ in 0..5 {
    ///     warded.record(Outcome::Failure);
    /// }
    /// let Err(WardError::Refused(refused)) = warded.attempt(async { Ok::<_, ()>(()) }).await else {
    ///     unreachable!("open")
    /// };
    /// assert_eq!(refused.piece(), WardPiece::Breaker);
    /// // Its first open wait, 1 s, over: the probe connects, and the breaker closes.
    /// hand.advance(Duration::from_secs(1));
    /// assert!(warded.attempt(async { Ok::<_, ()>(()) }).await.is_ok());
    /// assert!(warded.attempt(async { Ok::<_, ()>(()) }).await.is_ok());
    /// # }
    /// ```
    pub fn with_policy<P: BreakerPolicy>(inner: M, policy: Reconnect<P>) -> Warded<M, P::Breaker> {
        Self::for_breaker(inner, policy)
    }

    /// `inner` behind a ward running the breaker family `B` under `policy`, otherwise as
    /// [`with_policy`](Warded::with_policy).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{SreBreaker, RECONNECT};
    /// use ironward_pool::Warded;
    ///
    /// # struct Manager;
    /// let warded = Warded::for_breaker::<SreBreaker>(Manager, RECONNECT);
    /// assert_eq!(warded.handle().policy(), RECONNECT);
    /// ```
    pub fn for_breaker<B: CircuitBreaker>(inner: M, policy: Reconnect<B::Policy>) -> Warded<M, B> {
        let parts = Parts {
            knobs: Knobs::default(),
            cpu: Arc::new(|| 0),
        };
        Warded::build(inner, policy, parts)
    }
}

impl<M, B: CircuitBreaker> Warded<M, B> {
    fn build(inner: M, policy: Reconnect<B::Policy>, parts: Parts) -> Self {
        let Parts { knobs, cpu } = parts;
        let name = knobs.name;
        let ward = Ward::for_breaker(policy, knobs.clock.now());
        let shared = Shared {
            state: Mutex::new(State {
                ward,
                throttling: false,
            }),
            knobs,
            cpu,
            counts: Counters::default(),
            connects: Decisions::new("pool_connect", name, "refused", CONNECT_REASONS),
            checkouts: Decisions::new("pool_checkout", name, "refused", CHECKOUT_REASONS),
            ratio: Level::breaker_ratio(name),
            states: States::new(name),
        };
        Self {
            inner,
            shared: Arc::new(shared),
        }
    }

    /// The same manager with a ward made anew on `clock` (for tests, [`Clock::manual`]).
    ///
    /// Each `with_*` makes the ward anew, at the clock's reading and with nothing decided:
    /// call them before taking a [`handle`](Warded::handle), which reads the ward it was
    /// taken from.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuild(|parts| parts.knobs.clock = clock)
    }

    /// The same manager with a ward made anew drawing from `dice` (for tests,
    /// a [`Dice::from_fn`] of fixed draws).
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        self.rebuild(|parts| parts.knobs.dice = dice)
    }

    /// The same manager with a ward made anew, reporting under `name` (the `name` label of
    /// its metrics and the field of its events).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuild(|parts| parts.knobs.name = name)
    }

    /// The same manager with a ward that reads this server's CPU in thousandths from `cpu`,
    /// for [`Checkouts::Shed`](ironward::Checkouts::Shed) (without one it reads 0, and a
    /// shedder never finds the server hot).
    #[must_use]
    pub fn with_cpu(self, cpu: impl Fn() -> u32 + Send + Sync + 'static) -> Self {
        self.rebuild(|parts| parts.cpu = Arc::new(cpu))
    }

    fn rebuild(self, change: impl FnOnce(&mut Parts)) -> Self {
        let policy = ironward_tokio::lock(&self.shared.state)
            .ward
            .policy()
            .clone();
        let mut parts = Parts {
            knobs: self.shared.knobs.clone(),
            cpu: Arc::clone(&self.shared.cpu),
        };
        change(&mut parts);
        Self::build(self.inner, policy, parts)
    }

    /// The ward's handle: its counts, its policy and the checkout admission, kept after the
    /// pool has taken the manager.
    ///
    /// The ward's name is final once a handle is taken: its metrics are registered then
    /// (showing at zero before the first connect), or else at the first connect, so that a
    /// ward renamed with [`with_name`](Warded::with_name) leaves no series under its old name.
    pub fn handle(&self) -> Handle<B> {
        self.shared.connects.register();
        self.shared.checkouts.register();
        self.shared.ratio.register();
        if B::STATEFUL {
            let now = self.shared.knobs.clock.now();
            self.shared.states.register(|| {
                let state = ironward_tokio::lock(&self.shared.state).ward.state(now);
                state.unwrap_or(BreakerState::Closed)
            });
        }
        Handle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The inner manager.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// Asks the ward, then awaits `connect` if it lets the connect through, and settles the
    /// connect by its result: the one step the deadpool and bb8 adapters take, public for a
    /// pool of another kind. A connect dropped before it ends is settled as failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::WardPiece;
    /// use ironward_pool::{WardError, Warded};
    /// use ironward_tokio::Clock;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let warded = Warded::new(()).with_clock(clock);
    /// let refused = async { Err::<(), _>("connection refused") };
    /// assert!(matches!(warded.attempt(refused).await, Err(WardError::Backend(_))));
    /// // Inside the backoff's wait: refused without awaiting the connect.
    /// let Err(WardError::Refused(refused)) = warded.attempt(async { Ok::<_, ()>(()) }).await else {
    ///     unreachable!()
    /// };
    /// assert_eq!(refused.piece(), WardPiece::Backoff);
    /// # }
    /// ```
    pub async fn attempt<T, E>(
        &self,
        connect: impl Future<Output = Result<T, E>>,
    ) -> Result<T, WardError<E, B::Reason>> {
        let pending = self.shared.ask().map_err(WardError::Refused)?;
        let result = connect.await;
        pending.settle(result.is_ok());
        result.map_err(WardError::Backend)
    }

    /// Tells the ward's breaker how a check of a held connection went (a recycle, a validity
    /// check, a command): `Outcome::Success` or `Outcome::Failure`. The adapters call it for
    /// each recycle or validity check; public for a pool of another kind.
    pub fn record(&self, outcome: Outcome) {
        self.shared.record(outcome);
    }
}

/// A CPU reading in thousandths, for a shedder of checkouts.
type Cpu = Arc<dyn Fn() -> u32 + Send + Sync>;

/// What a ward is made with besides its policy.
struct Parts {
    knobs: Knobs,
    cpu: Cpu,
}

impl<B: CircuitBreaker> Shared<B> {
    fn ask(self: &Arc<Self>) -> Result<Pending<B>, ConnectRefused<B::Reason>> {
        let now = self.knobs.clock.now();
        let roll = self.knobs.dice.roll();
        let mut state = ironward_tokio::lock(&self.state);
        let connect = state.ward.connect(now, roll);
        let changed = Self::changed(&mut state);
        drop(state);
        self.transitioned(changed);
        match connect {
            Ok(permit) => {
                self.counts.attempts.fetch_add(1, Ordering::Relaxed);
                self.connects.admitted();
                Ok(Pending {
                    shared: Arc::clone(self),
                    permit: Some(permit),
                })
            }
            Err(refusal) => {
                self.refused(&refusal);
                Err(ConnectRefused::new(refusal))
            }
        }
    }

    /// The change of state the breaker's last decisions made, taken under the lock: for a
    /// family without states (`STATEFUL` false, the SRE breaker), `None` without asking,
    /// decided when the ward is compiled.
    fn changed(state: &mut State<B>) -> Option<Transition> {
        if B::STATEFUL {
            state.ward.take_transition()
        } else {
            None
        }
    }

    /// Reports a change of state, if there was one, once the lock is let go: the gauge and
    /// the counter, and an event at `INFO` (an operator acts on a breaker that opens or
    /// closes).
    fn transitioned(&self, changed: Option<Transition>) {
        let Some(transition) = changed else {
            return;
        };
        self.states.transition(transition);
        let Transition { from, to } = transition;
        tracing::info!(
            name = self.knobs.name,
            from = from.as_str(),
            to = to.as_str(),
            from_number = States::number(from),
            to_number = States::number(to),
            "the ward's breaker changed state"
        );
    }

    fn refused(&self, refusal: &Refusal<B::Reason>) {
        let piece = refusal.piece();
        self.counts.refused[piece_index(piece)].fetch_add(1, Ordering::Relaxed);
        self.connects.refused(piece_index(piece));
        if let Refusal::Breaker { reason, .. } = refusal {
            self.ratio.set(B::ratio_of(reason));
        }
        tracing::debug!(
            name = self.knobs.name,
            piece = piece.name(),
            next = ?refusal.next(),
            reason = %refusal,
            "ward refused a connect"
        );
    }

    fn settle(&self, permit: ConnectPermit<B::Permit>, ok: bool) {
        let now = self.knobs.clock.now();
        let roll = self.knobs.dice.roll();
        let mut state = ironward_tokio::lock(&self.state);
        let was_failing = state.ward.is_failing();
        if ok {
            self.counts.connected.fetch_add(1, Ordering::Relaxed);
            state.ward.connected(permit, now);
        } else {
            self.counts.failed.fetch_add(1, Ordering::Relaxed);
            state.ward.failed(permit, now, roll);
        }
        let (failing, failures, next) = (
            state.ward.is_failing(),
            state.ward.failures(),
            state.ward.next(now),
        );
        self.watch(&mut state, now);
        let changed = Self::changed(&mut state);
        drop(state);
        self.transitioned(changed);
        if failing && !was_failing {
            tracing::debug!(
                name = self.knobs.name,
                failures,
                next = ?next,
                "connects failing: the ward backs off"
            );
        } else if !failing && was_failing {
            tracing::debug!(
                name = self.knobs.name,
                "a connect succeeded: the ward stops backing off"
            );
        }
    }

    fn record(&self, outcome: Outcome) {
        let now = self.knobs.clock.now();
        let mut state = ironward_tokio::lock(&self.state);
        state.ward.record(outcome, now);
        self.watch(&mut state, now);
        let changed = Self::changed(&mut state);
        drop(state);
        self.transitioned(changed);
    }

    /// Tells the events when the breaker starts or stops throttling.
    fn watch(&self, state: &mut State<B>, now: Duration) {
        let ratio = state.ward.ratio(now);
        let throttling = ratio > 0.0;
        if throttling != state.throttling {
            state.throttling = throttling;
            self.ratio.set(ratio);
            if throttling {
                tracing::debug!(
                    name = self.knobs.name,
                    ratio,
                    "the ward's breaker starts refusing connects"
                );
            } else {
                tracing::debug!(
                    name = self.knobs.name,
                    "the ward's breaker lets every connect through"
                );
            }
        }
    }
}

/// A connect the ward let through, settled as failed if dropped before it ends.
struct Pending<B: CircuitBreaker> {
    shared: Arc<Shared<B>>,
    permit: Option<ConnectPermit<B::Permit>>,
}

impl<B: CircuitBreaker> Pending<B> {
    fn settle(mut self, ok: bool) {
        if let Some(permit) = self.permit.take() {
            self.shared.settle(permit, ok);
        }
    }
}

impl<B: CircuitBreaker> Drop for Pending<B> {
    fn drop(&mut self) {
        if let Some(permit) = self.permit.take() {
            self.shared.settle(permit, false);
        }
    }
}

mod handle;

pub use handle::{Checkout, Handle};
