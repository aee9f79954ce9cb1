//! [`Gate`]: at most so many calls in flight at once, the rest refused at once.

use std::fmt;
use std::future::IntoFuture;
use std::sync::Arc;

use ironward::{GateReason, SharedGate};

use super::CallError;
use crate::meter::{DEFAULT_NAME, Decisions};

/// The one reason a gate refuses for, as the `reason` label gives it.
const REASONS: &[&str] = &["full"];

/// At most `limit` calls in flight at once through every clone; a call past it is refused at
/// once with the gate's [`GateReason`], and never runs.
///
/// The core's lock-free [`SharedGate`], as ironward-tower's `GateLayer` runs it: entering and
/// leaving are one compare-and-swap each. A call holds its room until it ends or its future
/// is dropped, so a cancelled call never keeps a place.
///
/// **No wait.** The gate refuses at once rather than queue, as go-zero's `maxconnshandler`
/// and the tower layer do, so a queue never becomes the outage. A bounded wait done right
/// needs a queue that is fair (first come, first in, no arrival taking the room a woken
/// waiter was given) and that drops a waiter's place when its future is dropped: that is the
/// adaptive [`Limiter`](super::Limiter)'s [`Queue`](crate::Queue), which a fixed limit runs
/// on too (an `Aimd` whose `min` and `max` are equal), so the gate does not grow a second one.
///
/// It reads no clock and draws nothing: how many calls are in flight has nothing to do with
/// time. `Clone` is an `Arc` clone: clones share the one count.
///
/// # Metrics and events
///
/// `ironward.requests{piece="gate", name, outcome, reason="full"}`, as the layer's; a
/// refusal is a `DEBUG` event with the count and the limit.
///
/// # Examples
///
/// ```
/// use std::future::pending;
/// use ironward::GateReason;
/// use ironward_tokio::call::{CallError, Gate};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let gate = Gate::new(1);
/// let running = tokio::spawn({
///     let gate = gate.clone();
///     async move { gate.call(pending::<Result<(), ()>>).await }
/// });
/// tokio::task::yield_now().await;
/// assert_eq!(gate.held(), 1);
/// let full = gate.call(|| async { Ok::<_, ()>(1) }).await;
/// assert_eq!(full, Err(CallError::Refused(GateReason { held: 1, limit: 1 })));
///
/// running.abort(); // its call is dropped, and its room given back
/// let _ = running.await;
/// assert_eq!(gate.held(), 0);
/// # }
/// ```
#[derive(Clone)]
pub struct Gate {
    shared: Arc<Shared>,
}

struct Shared {
    gate: SharedGate,
    name: &'static str,
    decisions: Decisions,
}

impl Gate {
    /// A gate with room for `limit` calls at once; 0 admits nothing.
    pub fn new(limit: u32) -> Self {
        Self::build(SharedGate::new(limit), DEFAULT_NAME)
    }

    fn build(gate: SharedGate, name: &'static str) -> Self {
        Self {
            shared: Arc::new(Shared {
                gate,
                name,
                decisions: Decisions::new("gate", name, "refused", REASONS),
            }),
        }
    }

    /// A new gate with the same limit, reporting under `name` (by default `"default"`).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        Self::build(SharedGate::new(self.limit()), name)
    }

    /// The calls in flight now.
    pub fn held(&self) -> u32 {
        self.shared.gate.held()
    }

    /// The most it lets in at once.
    pub fn limit(&self) -> u32 {
        self.shared.gate.limit()
    }

    /// Changes the limit in place, keeping the calls in flight ([`SharedGate::retune`]),
    /// and returns the limit it replaced.
    pub fn retune(&self, limit: u32) -> u32 {
        self.shared.gate.retune(limit)
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.name
    }

    /// Runs `call` if there is room now, holding it until the call ends: its value, its own
    /// error as [`CallError::Failed`], or the gate's refusal, in which case `call` is never
    /// called.
    pub async fn call<T, E, Fut>(
        &self,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, GateReason>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        let shared = &*self.shared;
        if let Err(reason) = shared.gate.check() {
            shared.decisions.refused(0);
            tracing::debug!(
                name = shared.name,
                outcome = "refused",
                held = reason.held,
                limit = reason.limit,
                "gate refused a call"
            );
            return Err(CallError::Refused(reason));
        }
        shared.decisions.admitted();
        let _room = Room(&shared.gate);
        call().await.map_err(CallError::Failed)
    }
}

/// A place in the gate, given back when dropped: when the call ends, or its future is.
struct Room<'a>(&'a SharedGate);

impl Drop for Room<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("gate", &self.shared.gate)
            .field("name", &self.shared.name)
            .finish()
    }
}
