//! What a pool's owner holds of its ward: counts, retunes, checkouts and command outcomes.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ironward::{CircuitBreaker, Outcome, Reconnect, Slot, SreBreaker};

use super::{Counts, Shared};
use crate::error::CheckoutRefused;
#[cfg(doc)]
use {super::Warded, ironward::Ward};

/// The ward of a [`Warded`] manager, kept after the pool has taken the manager: what it has
/// decided, its policy, and the checkout admission.
///
/// `Clone` shares the one ward.
pub struct Handle<B: CircuitBreaker = SreBreaker> {
    pub(super) shared: Arc<Shared<B>>,
}

impl<B: CircuitBreaker> Clone for Handle<B> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<B: CircuitBreaker> fmt::Debug for Handle<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("name", &self.shared.knobs.name)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl<B: CircuitBreaker> Handle<B> {
    /// What the ward has decided since it was made.
    pub fn counts(&self) -> Counts {
        let c = &self.shared.counts;
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        Counts {
            attempts: load(&c.attempts),
            connected: load(&c.connected),
            failed: load(&c.failed),
            refused_by_breaker: load(&c.refused[0]),
            refused_by_bucket: load(&c.refused[1]),
            refused_by_backoff: load(&c.refused[2]),
            checkouts_refused: load(&c.checkouts_refused),
        }
    }

    /// The policy in force.
    pub fn policy(&self) -> Reconnect<B::Policy> {
        ironward_tokio::lock(&self.shared.state)
            .ward
            .policy()
            .clone()
    }

    /// Changes the policy now, keeping the ward's history ([`Ward::retune`]).
    pub fn retune(&self, policy: Reconnect<B::Policy>) {
        let now = self.shared.knobs.clock.now();
        tracing::debug!(name = self.shared.knobs.name, ?policy, "ward retuned");
        let changed = {
            let mut state = ironward_tokio::lock(&self.shared.state);
            state.ward.retune(policy, now);
            Shared::changed(&mut state)
        };
        // A policy that puts the breaker in a state by hand, or lifts one, changes it now.
        self.shared.transitioned(changed);
    }

    /// Tells the ward's breaker how a command on a connection from the pool went:
    /// `Outcome::Success` or `Outcome::Failure` ([`Ward::record`]).
    ///
    /// The pool sees only its own checks of a connection (a recycle, a validity check); a
    /// command's error goes to the caller. A backend that accepts connections but fails
    /// their commands (one that flaps, or refuses them all) shows in the breaker by a single
    /// failed recycle per connect, which the connect's success offsets; a caller that records
    /// its commands' outcomes here lets the breaker see every failure, and refuse sooner.
    /// Record the backend's failures only: a command refused for the caller's own mistake
    /// (a wrong type, a syntax error) is not the backend failing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::Outcome;
    /// use ironward_pool::Warded;
    ///
    /// # struct Manager;
    /// let handle = Warded::new(Manager).handle();
    /// for _ in 0..20 {
    ///     handle.record(Outcome::Failure); // the commands fail, no connect was asked for
    /// }
    /// assert!(handle.ratio() > 0.0);
    /// ```
    pub fn record(&self, outcome: Outcome) {
        self.shared.record(outcome);
    }

    /// The breaker's drop fraction now ([`Ward::ratio`]): the share of connects it refuses.
    pub fn ratio(&self) -> f64 {
        let now = self.shared.knobs.clock.now();
        ironward_tokio::lock(&self.shared.state).ward.ratio(now)
    }

    /// Whether connects are failing: the last one settled failed.
    pub fn is_failing(&self) -> bool {
        ironward_tokio::lock(&self.shared.state).ward.is_failing()
    }

    /// How long from now until a connect could next be let through ([`Ward::next`]).
    pub fn next(&self) -> Duration {
        let now = self.shared.knobs.clock.now();
        ironward_tokio::lock(&self.shared.state).ward.next(now)
    }

    /// Asks to check a connection out now, by [`Reconnect::checkouts`]: a [`Checkout`] to
    /// hold while the connection is in use, or the gate's or the shedder's refusal.
    ///
    /// A pool does not call this itself: call it before the pool's `get`, and keep the
    /// checkout beside the connection. It settles when dropped: as a checkout that went well,
    /// unless [`abandon`](Checkout::abandon) says otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::{Checkouts, RECONNECT, Reconnect};
    /// use ironward_pool::Warded;
    ///
    /// # struct Manager;
    /// let policy = Reconnect { checkouts: Checkouts::Gate(1), ..RECONNECT };
    /// let handle = Warded::with_policy(Manager, policy).handle();
    /// let checkout = handle.checkout().expect("room for one");
    /// assert!(handle.checkout().is_err());
    /// drop(checkout);
    /// assert!(handle.checkout().is_ok());
    /// assert_eq!(handle.counts().checkouts_refused, 1);
    /// ```
    pub fn checkout(&self) -> Result<Checkout<B>, CheckoutRefused> {
        let shared = &self.shared;
        let now = shared.knobs.clock.now();
        let cpu = (shared.cpu)();
        let answer = ironward_tokio::lock(&shared.state).ward.checkout(now, cpu);
        match answer {
            Ok(slot) => {
                shared.checkouts.admitted();
                Ok(Checkout {
                    shared: Arc::clone(shared),
                    slot: Some(slot),
                })
            }
            Err(refusal) => {
                shared
                    .counts
                    .checkouts_refused
                    .fetch_add(1, Ordering::Relaxed);
                let reason = match refusal {
                    ironward::CheckoutRefusal::Gate(_) => 0,
                    ironward::CheckoutRefusal::Shed(_) => 1,
                };
                shared.checkouts.refused(reason);
                tracing::debug!(name = shared.knobs.name, reason = %refusal, "ward refused a checkout");
                Err(CheckoutRefused::new(refusal))
            }
        }
    }
}

/// A checkout the ward let through: hold it while the connection is in use.
///
/// Dropped, it settles as a checkout that went well (the shedder learns how long it took);
/// [`abandon`](Checkout::abandon) settles it as one that failed.
#[must_use = "dropping the checkout at once ends it: hold it while the connection is in use"]
pub struct Checkout<B: CircuitBreaker = SreBreaker> {
    shared: Arc<Shared<B>>,
    slot: Option<Slot>,
}

impl<B: CircuitBreaker> fmt::Debug for Checkout<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checkout").finish_non_exhaustive()
    }
}

impl<B: CircuitBreaker> Checkout<B> {
    /// Settles the checkout as one that failed: the connection broke, or the caller gave up.
    pub fn abandon(mut self) {
        if let Some(slot) = self.slot.take() {
            ironward_tokio::lock(&self.shared.state).ward.abandon(slot);
        }
    }
}

impl<B: CircuitBreaker> Drop for Checkout<B> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let now = self.shared.knobs.clock.now();
            ironward_tokio::lock(&self.shared.state)
                .ward
                .checkin(slot, now);
        }
    }
}
