//! [`SharedCircuitBreaker`]: a breaker of any family shared by `&`, the form the edges take;
//! and [`BreakerPolicy`], which names a family by its policy, so that an edge's constructor
//! takes the policy value alone.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use ironward::classic::{State, Transition};
use ironward::{CircuitBreaker, Classic, ClassicBreaker, Sre, SreBreaker, SreReason};

use super::{SharedClassicBreaker, SharedSreBreaker, SharedSrePermit};
use crate::{Dice, lock};

/// A circuit breaker every task shares by `&`: what ironward-tower's `BreakerLayer` and
/// ironward-reqwest's breaker take, so that they run any family.
///
/// The methods are the core's [`CircuitBreaker`] with `&self`; each decides exactly as the
/// core breaker it shares would, one call at a time. Three forms implement it:
///
/// - [`SharedSreBreaker`], the SRE breaker with its lock-free paths for a healthy and for a
///   refusing backend;
/// - [`SharedClassicBreaker`], the classic breaker with its lock-free path for a healthy
///   backend;
/// - `Mutex<B>` for any core family `B`: one lock a call, the form a new family has from the
///   day it is written, before (or instead of) a lock-free one of its own.
///
/// # Examples
///
/// The same decisions through either form:
///
/// ```
/// use std::sync::Mutex;
/// use std::time::Duration;
/// use ironward::{SreBreaker, SRE};
/// use ironward_tokio::{SharedSreBreaker, SharedCircuitBreaker};
///
/// fn refusals<B: SharedCircuitBreaker>(breaker: &B) -> usize {
///     let mut refused = 0;
///     for i in 0..200 {
///         let now = Duration::from_millis(i);
///         match breaker.check(now, 0.5) {
///             Ok(permit) => drop(breaker.fail(permit, now)),
///             Err(_) => refused += 1,
///         }
///     }
///     refused
/// }
///
/// let fast = SharedSreBreaker::new(SRE, Duration::ZERO);
/// let locked = Mutex::new(SreBreaker::new(SRE, Duration::ZERO));
/// assert_eq!(refusals(&fast), refusals(&locked));
/// assert!(refusals(&fast) > 100);
/// ```
pub trait SharedCircuitBreaker: Send + Sync + 'static {
    /// The policy record the breaker runs.
    type Policy: Clone + fmt::Debug + Send + Sync + 'static;
    /// What a call let through carries until it is settled.
    type Permit: fmt::Debug + Send + 'static;
    /// Why a call was refused.
    type Reason: Clone + fmt::Debug + fmt::Display + Send + Sync + 'static;

    /// The label of every kind of refusal, as [`CircuitBreaker::REFUSALS`].
    const REFUSALS: &'static [&'static str];

    /// Whether the family has states, as [`CircuitBreaker::STATEFUL`]: an edge asks for
    /// [`take_transition`](Self::take_transition) after its decisions only where it is `true`.
    const STATEFUL: bool = false;

    /// Whether [`check`](Self::check) reads its `roll` at all. Where it is `false` (the
    /// classic breaker, which refuses by its state alone) an edge draws nothing for it:
    /// [`draw`](Self::draw) hands `check` a constant instead, saving a draw a call, and a
    /// [`Dice`] shared with other pieces is moved on only by the draws somebody reads.
    const DRAWS: bool = true;

    /// A breaker under `policy` with nothing seen yet, its record opening at `now`.
    fn new(policy: Self::Policy, now: Duration) -> Self
    where
        Self: Sized;

    /// Asks to make one call at `now` with the draw `roll`: a permit, or why not.
    fn check(&self, now: Duration, roll: f64) -> Result<Self::Permit, Self::Reason>;

    /// The `roll` an edge hands [`check`](Self::check): a draw from `dice` where the family
    /// reads one ([`DRAWS`](Self::DRAWS)), else `0.0`, which nobody reads. Every edge asks
    /// through this, so a piece draws only what it reads.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tokio::{Dice, SharedCircuitBreaker, SharedClassicBreaker, SharedSreBreaker};
    ///
    /// let dice = Dice::from_fn(|| panic!("the classic breaker reads no draw"));
    /// assert_eq!(SharedClassicBreaker::draw(&dice), 0.0);
    /// assert_eq!(SharedSreBreaker::draw(&Dice::from_fn(|| 0.25)), 0.25);
    /// ```
    #[inline]
    fn draw(dice: &Dice) -> f64 {
        if Self::DRAWS { dice.roll() } else { 0.0 }
    }

    /// Records the call behind `permit` as a success at `now`; another breaker's permit comes
    /// back.
    fn pass(&self, permit: Self::Permit, now: Duration) -> Option<Self::Permit>;

    /// Records the call behind `permit` as a failure at `now`; another breaker's permit comes
    /// back.
    fn fail(&self, permit: Self::Permit, now: Duration) -> Option<Self::Permit>;

    /// Permits handed back because another breaker made them.
    fn foreign(&self) -> u64;

    /// The share of calls the breaker would refuse at `now`, in `[0, 1]`.
    fn ratio(&self, now: Duration) -> f64;

    /// The policy the breaker runs, as it was last given.
    fn policy(&self) -> Self::Policy;

    /// Runs `policy` from now on, keeping what the breaker has seen; the policy it replaced,
    /// read in the same turn.
    fn retune(&self, policy: Self::Policy, now: Duration) -> Self::Policy;

    /// Which of [`REFUSALS`](Self::REFUSALS) `reason` is.
    fn refusal(reason: &Self::Reason) -> usize;

    /// The share of calls the breaker was refusing when it refused for `reason`, as
    /// [`CircuitBreaker::ratio_of`].
    fn ratio_of(reason: &Self::Reason) -> f64;

    /// How long until the breaker lets a call through again, as
    /// [`CircuitBreaker::retry_after`].
    fn retry_after(reason: &Self::Reason) -> Option<Duration> {
        let _ = reason;
        None
    }

    /// The change of state the decisions since the last take made, taken once, as
    /// [`CircuitBreaker::take_transition`]; `None` for a family without states.
    #[must_use = "a transition taken and dropped is lost to every later take"]
    fn take_transition(&self) -> Option<Transition> {
        None
    }

    /// The state the breaker is in at `now`, as [`CircuitBreaker::state`]; `None` for a
    /// family without states.
    fn state(&self, now: Duration) -> Option<State> {
        let _ = now;
        None
    }
}

/// A breaker family's policy record, naming the family it runs: what lets an edge's
/// constructor take the policy value alone (`BreakerLayer::new(CLASSIC)`,
/// `ClientBreaker::new(SRE)`, `Warded::with_policy(manager, Reconnect { breaker: CLASSIC, .. })`)
/// and switch families by changing that value.
///
/// Each policy names two forms of its family: [`SreBreaker`](Self::Breaker), the core's `&mut`
/// breaker, for an edge that already holds a lock around more than the breaker (a pool's
/// ward), and [`Shared`](Self::Shared), the form every task shares by `&`, for the edges that
/// take a breaker alone (a tower layer, a reqwest client's breaker). A family without a
/// lock-free form of its own shares its core breaker behind a `Mutex`; when it gains one,
/// its `Shared` changes and every edge made from its policy runs the new form, with no
/// change at the call sites. An edge's `for_breaker` still takes any other
/// [`SharedCircuitBreaker`] by naming its type.
///
/// | policy | `SreBreaker` | `Shared` |
/// | --- | --- | --- |
/// | [`Sre`] | [`ironward::SreBreaker`] | [`SharedSreBreaker`]: lock-free for a healthy and for a refusing backend |
/// | [`Classic`] | [`ClassicBreaker`] | [`SharedClassicBreaker`]: lock-free for a healthy backend and for an open breaker's refusals |
///
/// # Examples
///
/// A helper that takes any family by its policy, and the same failures through both:
///
/// ```
/// use std::time::Duration;
/// use ironward::classic::Record;
/// use ironward::{CLASSIC, Classic, SRE};
/// use ironward_tokio::{BreakerPolicy, SharedCircuitBreaker};
///
/// /// Calls made of 100 to a backend that fails every one, a millisecond apart.
/// fn made<P: BreakerPolicy>(policy: P) -> usize {
///     let breaker = P::Shared::new(policy, Duration::ZERO);
///     (0..100)
///         .filter_map(|i| {
///             let now = Duration::from_millis(i);
///             let permit = breaker.check(now, 0.5).ok()?;
///             let _ = breaker.fail(permit, now);
///             Some(())
///         })
///         .count()
/// }
///
/// let quick = Classic { record: Record::Count { calls: 10 }, minimum: 10, ..CLASSIC };
/// // The classic breaker opens at the tenth failure and stays open for its 60 s.
/// assert_eq!(made(quick), 10);
/// // SRE throttling refuses a growing share: a draw of 0.5 once the share passes it.
/// assert!((10..100).contains(&made(SRE)));
/// ```
pub trait BreakerPolicy: Clone + fmt::Debug + Send + Sync + 'static {
    /// The core breaker the policy runs, decided by `&mut`.
    type Breaker: CircuitBreaker<Policy = Self> + Send + 'static;
    /// The breaker every task shares by `&`, deciding as [`SreBreaker`](Self::Breaker) does.
    type Shared: SharedCircuitBreaker<Policy = Self>;
}

/// The SRE breaker: its lock-free shared form.
impl BreakerPolicy for Sre {
    type Breaker = SreBreaker;
    type Shared = SharedSreBreaker;
}

/// The classic breaker: its shared form, lock-free while the backend is healthy.
impl BreakerPolicy for Classic {
    type Breaker = ClassicBreaker;
    type Shared = SharedClassicBreaker;
}

impl SharedCircuitBreaker for SharedSreBreaker {
    type Policy = Sre;
    type Permit = SharedSrePermit;
    type Reason = SreReason;

    const REFUSALS: &'static [&'static str] = <ironward::SreBreaker as CircuitBreaker>::REFUSALS;

    fn new(policy: Sre, now: Duration) -> Self {
        SharedSreBreaker::new(policy, now)
    }

    fn check(&self, now: Duration, roll: f64) -> Result<SharedSrePermit, SreReason> {
        SharedSreBreaker::check(self, now, roll)
    }

    fn pass(&self, permit: SharedSrePermit, now: Duration) -> Option<SharedSrePermit> {
        SharedSreBreaker::pass(self, permit, now)
    }

    fn fail(&self, permit: SharedSrePermit, now: Duration) -> Option<SharedSrePermit> {
        SharedSreBreaker::fail(self, permit, now)
    }

    fn foreign(&self) -> u64 {
        SharedSreBreaker::foreign(self)
    }

    fn ratio(&self, now: Duration) -> f64 {
        SharedSreBreaker::ratio(self, now)
    }

    fn policy(&self) -> Sre {
        self.sre()
    }

    fn retune(&self, policy: Sre, now: Duration) -> Sre {
        SharedSreBreaker::retune(self, policy, now)
    }

    fn refusal(reason: &SreReason) -> usize {
        <ironward::SreBreaker as CircuitBreaker>::refusal(reason)
    }

    fn ratio_of(reason: &SreReason) -> f64 {
        <ironward::SreBreaker as CircuitBreaker>::ratio_of(reason)
    }
}

/// Any core family behind one poison-tolerant lock ([`lock`]).
impl<B> SharedCircuitBreaker for Mutex<B>
where
    B: CircuitBreaker + Send + 'static,
    B::Policy: Send + Sync + 'static,
    B::Permit: Send + 'static,
    B::Reason: Send + Sync + 'static,
{
    type Policy = B::Policy;
    type Permit = B::Permit;
    type Reason = B::Reason;

    const REFUSALS: &'static [&'static str] = B::REFUSALS;

    const STATEFUL: bool = B::STATEFUL;

    fn new(policy: B::Policy, now: Duration) -> Self {
        Mutex::new(B::new(policy, now))
    }

    fn check(&self, now: Duration, roll: f64) -> Result<B::Permit, B::Reason> {
        lock(self).check(now, roll)
    }

    fn pass(&self, permit: B::Permit, now: Duration) -> Option<B::Permit> {
        lock(self).pass(permit, now)
    }

    fn fail(&self, permit: B::Permit, now: Duration) -> Option<B::Permit> {
        lock(self).fail(permit, now)
    }

    fn foreign(&self) -> u64 {
        lock(self).foreign()
    }

    fn ratio(&self, now: Duration) -> f64 {
        lock(self).ratio(now)
    }

    fn policy(&self) -> B::Policy {
        lock(self).policy().clone()
    }

    fn retune(&self, policy: B::Policy, now: Duration) -> B::Policy {
        let mut breaker = lock(self);
        let was = breaker.policy().clone();
        breaker.retune(policy, now);
        was
    }

    fn refusal(reason: &B::Reason) -> usize {
        B::refusal(reason)
    }

    fn ratio_of(reason: &B::Reason) -> f64 {
        B::ratio_of(reason)
    }

    fn retry_after(reason: &B::Reason) -> Option<Duration> {
        B::retry_after(reason)
    }

    /// One more turn of the lock. Two decisions on other threads that each change the state
    /// between a decision and its take leave the later change in the family's one slot, so
    /// under that overlap a change can be missed; a form of its own (such as
    /// [`SharedClassicBreaker`]) keeps every one.
    fn take_transition(&self) -> Option<Transition> {
        lock(self).take_transition()
    }

    fn state(&self, now: Duration) -> Option<State> {
        if B::STATEFUL {
            lock(self).state(now)
        } else {
            None
        }
    }
}
