//! What the middleware and the breaker report through the `metrics` facade, on the handles
//! the edges share ([`ironward_tokio::meter`]), so the names, labels and stop labels are
//! `ironward-tower`'s and the two edges count alike.
//!
//! The handles are registered on first use, when the middleware sends its first attempt or
//! the breaker decides its first call: neither has a step after which its name is final (the
//! middleware is handed to `reqwest_middleware` as it is), so a middleware or a breaker
//! renamed after `new` leaves no series under `name="default"`. A decision then costs an
//! increment on a handle and no lookup by name. Without the `metrics` feature a meter holds
//! its name and nothing else, and every method is empty.
//!
//! The names, units and labels are documented in the guide's [metrics](crate::_guide::metrics).

use std::time::Duration;

use ironward::classic::Transition;
use ironward_tokio::SharedCircuitBreaker;
pub(crate) use ironward_tokio::meter::{DEFAULT_NAME, Retries as RetryMeter, States};
use ironward_tokio::meter::{Decisions, Level};

/// One breaker's handles, under `ironward-tower`'s breaker labels: `piece="breaker"`, its
/// `name`, `outcome` `admitted` or `refused` (with its family's `reason`), its drop fraction,
/// and for a family with states, its state and its changes of state.
#[derive(Debug)]
pub(crate) struct BreakerMeter {
    name: &'static str,
    decisions: Decisions,
    ratio: Level,
    /// A stateful family's state and changes, registered at its first decision.
    states: States,
}

impl BreakerMeter {
    /// The handles of the breaker `name`, which refuses for `reasons` (its family's
    /// labels), registered on first use.
    pub(crate) fn new(name: &'static str, reasons: &'static [&'static str]) -> Self {
        Self {
            name,
            decisions: Decisions::new("breaker", name, "refused", reasons),
            ratio: Level::breaker_ratio(name),
            states: States::new(name),
        }
    }

    /// The name the breaker reports under.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Counts one attempt the breaker let through.
    pub(crate) fn admitted(&self) {
        self.decisions.admitted();
        self.register();
    }

    /// Registers the ratio's gauge, if it is not yet (a stateful family's state gauge
    /// registers at its first [`watch`](Self::watch), which reads the breaker's state:
    /// [`States::watch`]).
    fn register(&self) {
        self.ratio.register();
    }

    /// Takes and reports the change of state `breaker` made by `now`, if its family has
    /// states, registering its state gauge first if it is not yet ([`States::watch`]); the
    /// change, for the event.
    #[inline]
    pub(crate) fn watch<B: SharedCircuitBreaker>(
        &self,
        breaker: &B,
        now: Duration,
    ) -> Option<Transition> {
        self.states.watch(breaker, now)
    }

    /// Counts one attempt the breaker refused for the reason numbered `kind`, at the share
    /// of calls `ratio` it was refusing then.
    pub(crate) fn refused(&self, kind: usize, ratio: f64) {
        self.decisions.refused(kind);
        self.register();
        self.ratio.set(ratio);
    }
}
