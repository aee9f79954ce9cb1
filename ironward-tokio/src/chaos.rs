//! [`SharedChaos`]: the core's chaos policy shared by every task of an edge, each request
//! numbered in the order it arrives so that a seeded run replays.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use ironward::chaos::{self, Chaos, ChaosError, Injected, Injector};

use crate::Dice;
use crate::meter::{DEFAULT_NAME, Injections};

/// Where a [`SharedChaos`] takes each request's draw from.
#[derive(Clone)]
enum Draws {
    /// `chaos::draw(seed, index)`: the same faults on the same request numbers in every run.
    Seeded(u64),
    /// One roll of the dice per request.
    Dice(Dice),
}

/// The core's [`Injector`] shared by `&` between every task of an edge: it numbers each
/// request as it arrives and decides that request's fault from its draw, so that the edges
/// (the front door's [`Faults`](crate::call::Faults), ironward-reqwest's chaos middleware)
/// only apply what it decides.
///
/// **Replayable.** Built [`with_seed`](Self::with_seed), request number `i` (counted from 0
/// by an atomic counter, in the order requests ask [`next`](Self::next)) draws
/// [`chaos::draw(seed, i)`](ironward::chaos::draw): the same seed injects the same faults on
/// the same request numbers in a unit test, the simulator and a real server, as
/// `Injector::decide(chaos::draw(seed, i))` gives them. Without a seed each request rolls
/// the [`Dice`] (real randomness unless [`with_dice`](Self::with_dice) says otherwise).
///
/// **Checked.** [`new`](Self::new) and [`retune`](Self::retune) refuse a bad policy (a rate
/// outside `[0, 1]`, rates adding up to more than 1, a delay's bounds reversed) with the
/// core's [`ChaosError`]; a refused retune leaves the policy in force.
///
/// `Clone` is an `Arc` clone: clones share the policy, the counter and the dice.
///
/// # Metrics and events
///
/// Every fault decided counts `ironward.chaos.injected{name, fault, shadow}`
/// ([`Injections`]): `shadow="true"` for a policy in shadow mode, whose faults are reported
/// and not injected, `"false"` otherwise. Each is a `DEBUG` event, as the front door's
/// refusals are, with the `name`, the `fault`'s label, the request's `index`, whether it was
/// `shadow` and any `delay`. A request without a fault counts and logs nothing.
/// [`injected`](Self::injected), [`shadowed`](Self::shadowed) and
/// [`requests`](Self::requests) read the same counts without a recorder.
///
/// # Examples
///
/// ```
/// use ironward::chaos::{self, Chaos, Fault, Injection, Injector};
/// use ironward_tokio::SharedChaos;
///
/// let policy = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Error, rate: 0.3 }],
///     ..Chaos::default()
/// };
/// let shared = SharedChaos::new(policy.clone()).unwrap().with_seed(42).with_name("payments");
/// let injector = Injector::new(policy).unwrap();
/// // Request i gets what the core decides for the i-th draw of the run seeded 42.
/// for i in 0..100 {
///     assert_eq!(shared.next(), injector.decide(chaos::draw(42, i)));
/// }
/// assert_eq!(shared.requests(), 100);
/// ```
#[derive(Clone)]
pub struct SharedChaos {
    shared: Arc<Shared>,
}

struct Shared {
    injector: RwLock<Injector>,
    draws: Draws,
    /// The number the next request gets.
    next: AtomicU64,
    /// Faults injected, and faults decided in shadow mode: what the metrics count, read
    /// without a recorder.
    injected: AtomicU64,
    shadowed: AtomicU64,
    meter: Injections,
}

impl SharedChaos {
    /// The policy, checked by [`Injector::new`], unseeded (each request rolls
    /// [`Dice::random`]) and named `"default"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, ChaosError, Fault, Injection};
    /// use ironward_tokio::SharedChaos;
    ///
    /// let over = Chaos {
    ///     enabled: true,
    ///     faults: vec![
    ///         Injection { fault: Fault::Error, rate: 0.7 },
    ///         Injection { fault: Fault::Abort, rate: 0.7 },
    ///     ],
    ///     ..Chaos::default()
    /// };
    /// assert!(matches!(SharedChaos::new(over), Err(ChaosError::Total { .. })));
    /// ```
    pub fn new(policy: Chaos) -> Result<Self, ChaosError> {
        let injector = Injector::new(policy)?;
        Ok(Self::build(
            injector,
            Draws::Dice(Dice::random()),
            DEFAULT_NAME,
        ))
    }

    fn build(injector: Injector, draws: Draws, name: &'static str) -> Self {
        Self {
            shared: Arc::new(Shared {
                injector: RwLock::new(injector),
                draws,
                next: AtomicU64::new(0),
                injected: AtomicU64::new(0),
                shadowed: AtomicU64::new(0),
                meter: Injections::new(name),
            }),
        }
    }

    /// The same policy drawing request `i`'s fault from `chaos::draw(seed, i)`, counting
    /// requests afresh from 0: the form a replay relies on.
    #[must_use]
    pub fn with_seed(self, seed: u64) -> Self {
        Self::build(self.injector(), Draws::Seeded(seed), self.name())
    }

    /// The same policy rolling `dice` for each request, counting requests afresh from 0: a
    /// closure's draws ([`Dice::from_fn`]) script a test's faults one by one.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        Self::build(self.injector(), Draws::Dice(dice), self.name())
    }

    /// The same policy and draws reporting under `name` (by default `"default"`), counting
    /// requests afresh from 0.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        Self::build(self.injector(), self.shared.draws.clone(), name)
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.meter.name()
    }

    /// The policy in force.
    pub fn policy(&self) -> Chaos {
        self.read().policy().clone()
    }

    /// How many requests have asked for their fault: the number the next one gets.
    pub fn requests(&self) -> u64 {
        self.shared.next.load(Ordering::Relaxed)
    }

    /// The faults decided and injected so far (not those of a policy in shadow mode): the
    /// sum of the `ironward.chaos.injected{shadow="false"}` series, read without a recorder,
    /// so that a test or a debug endpoint sees how many calls were harmed on purpose.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, Fault, Injection};
    /// use ironward_tokio::SharedChaos;
    ///
    /// let every = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 1.0 }],
    ///     ..Chaos::default()
    /// };
    /// let live = SharedChaos::new(every.clone()).unwrap();
    /// let dry = SharedChaos::new(Chaos { shadow: true, ..every }).unwrap();
    /// for _ in 0..3 {
    ///     let _ = (live.next(), dry.next());
    /// }
    /// assert_eq!((live.injected(), live.shadowed()), (3, 0));
    /// assert_eq!((dry.injected(), dry.shadowed()), (0, 3));
    /// ```
    pub fn injected(&self) -> u64 {
        self.shared.injected.load(Ordering::Relaxed)
    }

    /// The faults decided in shadow mode so far: reported, and not injected (the
    /// `ironward.chaos.injected{shadow="true"}` series, read without a recorder).
    pub fn shadowed(&self) -> u64 {
        self.shared.shadowed.load(Ordering::Relaxed)
    }

    /// The seed each request's draw comes from ([`with_seed`](Self::with_seed)), or `None`
    /// when each request rolls the dice.
    pub fn seed(&self) -> Option<u64> {
        match self.shared.draws {
            Draws::Seeded(seed) => Some(seed),
            Draws::Dice(_) => None,
        }
    }

    /// Gives every clone `policy` from the next request on, checked as [`new`](Self::new)
    /// checks it; a refused policy leaves the one in force. The request count goes on, so a
    /// seeded run retuned mid-way still draws request `i`'s fault from `chaos::draw(seed, i)`.
    /// A `DEBUG` event with the policy replaced and the one taken, as the front door's other
    /// retunes log theirs.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::chaos::{Chaos, Fault, Injection};
    /// use ironward_tokio::SharedChaos;
    ///
    /// let shared = SharedChaos::new(Chaos::default()).unwrap();
    /// assert_eq!(shared.next(), None, "off by default");
    /// let always = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Abort, rate: 1.0 }],
    ///     ..Chaos::default()
    /// };
    /// shared.retune(always).unwrap();
    /// assert_eq!(shared.next().map(|i| i.fault), Some(Fault::Abort));
    /// let nan = Chaos { faults: vec![Injection { fault: Fault::Error, rate: f64::NAN }], ..Chaos::default() };
    /// assert!(shared.retune(nan).is_err());
    /// assert!(shared.policy().enabled, "a refused policy leaves the one in force");
    /// ```
    pub fn retune(&self, policy: Chaos) -> Result<(), ChaosError> {
        let injector = Injector::new(policy)?;
        let mut slot = self
            .shared
            .injector
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let was = std::mem::replace(&mut *slot, injector);
        let (from, to) = (was.policy(), slot.policy());
        tracing::debug!(name = self.name(), ?from, ?to, "chaos retuned");
        Ok(())
    }

    /// The next request's fault: it takes the next number, draws, and asks the core's
    /// [`Injector::decide`]. `None` is no fault: call as usual. A fault
    /// [`shadow`](Injected::shadow) is reported only: call as usual too. Every fault is
    /// counted and logged here (see the type's docs), so an edge only applies it.
    #[must_use = "the fault decided is counted and logged, and only the caller can apply it"]
    pub fn next(&self) -> Option<Injected> {
        let shared = &*self.shared;
        let index = shared.next.fetch_add(1, Ordering::Relaxed);
        let draw = match &shared.draws {
            Draws::Seeded(seed) => chaos::draw(*seed, index),
            Draws::Dice(dice) => dice.roll(),
        };
        let injected = self.read().decide(draw)?;
        let count = if injected.shadow {
            &shared.shadowed
        } else {
            &shared.injected
        };
        count.fetch_add(1, Ordering::Relaxed);
        shared.meter.injected(&injected.fault, injected.shadow);
        tracing::debug!(
            name = self.name(),
            fault = injected.fault.label(),
            index,
            shadow = injected.shadow,
            delay = ?injected.delay,
            "chaos decided a fault"
        );
        Some(injected)
    }

    /// A copy of the injector in force.
    fn injector(&self) -> Injector {
        self.read().clone()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Injector> {
        self.shared
            .injector
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for SharedChaos {
    /// The name, the policy, whether it is seeded and how many requests have asked; never
    /// draws.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedChaos")
            .field("name", &self.name())
            .field("policy", self.read().policy())
            .field("seed", &self.seed())
            .field("requests", &self.requests())
            .field("injected", &self.injected())
            .field("shadowed", &self.shadowed())
            .finish()
    }
}

#[cfg(test)]
mod tests;
