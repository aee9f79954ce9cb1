//! [`Hedge`]: hedged requests for any idempotent async call. The first attempt goes at once;
//! while none has answered, another after each hedging delay, up to a most; the first
//! answer the call takes wins, and every other attempt is dropped at once.
//!
//! The hedging delay is fixed ([`HedgeDelay::Fixed`]) or follows the tail of recent
//! latencies ([`HedgeDelay::Tail`], the core's [`Tail`]): the "hedged requests" of Dean and
//! Barroso, "The Tail at Scale" (CACM 2013), which send a second request once the first has
//! been outstanding longer than the 95th-percentile latency.
//!
//! Every rule of the hedging itself (when the next hedge is due, which failure ends the call,
//! a failure that shortcuts the delay, a named wait, the retry budget, the deadline) is the
//! core's gRPC A6 [`HedgingPlan`](ironward::grpc::HedgingPlan)'s, read through
//! [`HedgingPlan::on_end`](ironward::grpc::HedgingPlan::on_end): this module starts the
//! attempts, races them, drops the losers and reports. The hooks are the retry's:
//! [`When`](super::retry::When) says which errors let the others race on,
//! [`After`](super::retry::After) reads a wait an error names.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ironward::SharedBudget;
use ironward::grpc::{Halt, MAX_ATTEMPTS};
use ironward::latency::{Recent, TAIL, Tail};

use crate::meter::{Decisions, Retries};
use crate::{Clock, Knobs};

mod future;
mod record;

pub use future::{HedgeFuture, Hedging, Recorded};
pub use record::{HedgeReason, Hedged};

/// The refusals a hedge counts, as a [`Timeout`](super::Timeout) names them.
pub(crate) const REASONS: &[&str] = &["exceeded", "elapsed"];

/// How long a [`Hedge`] waits for an answer before it sends the next attempt.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::latency::TAIL;
/// use ironward_tokio::call::HedgeDelay;
///
/// let fixed = HedgeDelay::Fixed(Duration::from_millis(50));
/// let tail = HedgeDelay::Tail(TAIL);
/// assert_ne!(fixed, tail);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HedgeDelay {
    /// Always this long. Zero sends every attempt at once (gRPC A6: a `hedgingDelay` of
    /// `"0s"`); `Duration::MAX` sends the next only when one fails (Polly's "fallback mode").
    Fixed(Duration),
    /// A percentile of the latencies of the hedge's recent successful calls, bounded, and a
    /// fallback until enough are measured: [`Tail::delay`].
    Tail(Tail),
}

/// What a [`Hedge`] can change live ([`Hedge::retune`]): its delay and its most attempts.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::{Hedge, HedgeDelay, hedge::Tuning};
///
/// let hedge = Hedge::new(Duration::from_millis(100), 2);
/// let before = hedge.retune(Tuning { delay: HedgeDelay::Fixed(Duration::from_millis(20)), max_attempts: 3 });
/// assert_eq!(before.max_attempts, 2);
/// assert_eq!(hedge.delay(), Duration::from_millis(20));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    /// The hedging delay.
    pub delay: HedgeDelay,
    /// The most attempts a call makes, the first included: held to `2..=5` (gRPC A6's
    /// [`MAX_ATTEMPTS`]; one attempt is no hedge).
    pub max_attempts: u32,
}

/// Hedged requests for any idempotent async call, on the core's gRPC A6 hedging plan.
///
/// [`call`](Self::call) makes one call's [`Hedging`]; awaited, it runs:
///
/// - **When.** The first attempt at once; while no attempt has answered, the next after the
///   hedging delay ([`HedgeDelay`], read once when the call starts), up to `max_attempts`
///   in all (held to `2..=5`, gRPC A6's cap). Each delay is slept on the [`Clock`]: on
///   [`Clock::manual`] the sleep moves the clock, so a hedge starts at exactly its instant.
/// - **Who wins.** The first success. An error is a failure; [`Hedging::when`] says which
///   let the other attempts race on (by default every error): such a failure sends the next
///   hedge at once (A6: it "shortcuts the hedging delay"), or after the wait
///   [`Hedging::after`] reads from it (A6's pushback). Any other error is fatal: the call
///   takes it and drops the rest. When every attempt has failed and no more will be sent,
///   the call fails with **the last error to arrive**.
/// - **The budget.** With [`with_budget`](Self::with_budget), the same retry budget as a
///   [`Retry`](super::Retry)'s, by one rule, gRPC A6's (the core's): a hedge after the first
///   attempt is started only while the budget allows a retry, and one it refuses is not
///   started, nor any after it ([`Halt::Throttled`]); each failure that lets the others race
///   takes a token, a success gives `tokenRatio` back, a fatal failure is not counted. An
///   attempt dropped because another won is told nothing: it neither failed nor succeeded.
/// - **The deadline.** Under a [`Deadline`](super::Deadline), no hedge starts at or after
///   it ([`Halt::Deadline`]); when it passes with attempts in flight they are all dropped
///   and the call is refused with [`HedgeReason::Elapsed`] (A6: the call fails "regardless
///   of in-flight RPCs"); an attempt that answers after it, as the clock reads it when it
///   ends, is cut alike. A call whose deadline has passed starts nothing
///   ([`HedgeReason::Exceeded`]). The attempts run inside the call's future, so they read
///   the same deadline.
/// - **The tail.** Each success's latency (the winning attempt's, from its own start) is
///   kept for [`HedgeDelay::Tail`], shared by every clone.
///
/// **Cancellation.** Every attempt is a future owned by the call's future and polled by it:
/// nothing is spawned. Dropping the call's future drops every attempt in flight at once, so
/// no attempt is left running by construction; the budget, told only of attempts that
/// ended, loses no token; nothing is counted as ended.
///
/// `Clone` is an `Arc` clone. Each builder makes a new policy (with no latencies kept), so
/// configure first, then clone; [`retune`](Self::retune) changes every clone at once.
///
/// # Metrics and events
///
/// Through [`meter::Retries`](crate::meter::Retries), as the gRPC hedging client counts:
/// `ironward.retry.attempts{name, kind}` (`first`, `hedge`) for each attempt started, and
/// `ironward.retry.calls{name, outcome}` for each call that ended (`success`, or the stop:
/// `not_retryable` for a fatal error, `attempts_exhausted`, `throttled`, `pushback`,
/// `deadline` for either refusal). Through [`meter::Decisions`](crate::meter::Decisions):
/// `ironward.requests{piece="hedge", name, outcome}`, `admitted` for a call that answered,
/// `refused` with `reason` `exceeded` or `elapsed` as a timeout's. Each hedge is a `DEBUG`
/// event `hedging call`, a call that fails a `DEBUG` event `not hedging`, a refusal a `DEBUG`
/// event `hedge refused a call`, each with the name. A call dropped before it ends is not
/// counted as ended.
///
/// # Examples
///
/// The first attempt hangs; the hedge, sent at exactly 50 ms, answers, and the first is
/// dropped.
///
/// ```
/// use std::future::pending;
/// use std::time::Duration;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::Hedge;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let hedge = Hedge::new(Duration::from_millis(50), 2).with_clock(clock.clone());
/// let mut attempts = 0;
/// let (answer, hedged) = hedge
///     .call(|| {
///         attempts += 1;
///         let first = attempts == 1;
///         async move {
///             if first {
///                 pending::<()>().await;
///             }
///             Ok::<_, std::io::Error>("from the hedge")
///         }
///     })
///     .recorded()
///     .await;
/// assert_eq!(answer.unwrap(), "from the hedge");
/// assert_eq!(hedged.answered_by, Some(1));
/// assert_eq!(hedged.started, [Duration::ZERO, Duration::from_millis(50)]);
/// assert_eq!(clock.now(), Duration::from_millis(50));
/// # }
/// ```
#[derive(Clone)]
pub struct Hedge {
    shared: Arc<Shared>,
}

/// What every clone of a [`Hedge`] shares.
pub(crate) struct Shared {
    pub(crate) budget: Option<Arc<SharedBudget>>,
    /// The name and the clock; a hedge draws nothing and has no shadow mode.
    pub(crate) knobs: Knobs,
    pub(crate) meter: Retries<Halt>,
    pub(crate) decisions: Decisions,
    state: Mutex<State>,
}

/// What a [`Hedge`] changes as it runs: its tuning and the latencies it keeps.
struct State {
    tuning: Tuning,
    recent: Recent,
}

impl Hedge {
    /// Hedges after a fixed `delay`, up to `max_attempts` in all (held to `2..=5`), with no
    /// retry budget, on the monotonic clock, reporting as `"default"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::call::Hedge;
    ///
    /// assert_eq!(Hedge::new(Duration::from_millis(10), 0).max_attempts(), 2);
    /// assert_eq!(Hedge::new(Duration::MAX, u32::MAX).max_attempts(), 5);
    /// ```
    pub fn new(delay: Duration, max_attempts: u32) -> Self {
        Self::tuned(Tuning {
            delay: HedgeDelay::Fixed(delay),
            max_attempts,
        })
    }

    /// Hedges after the `tail` of recent latencies, up to `max_attempts` in all (held to
    /// `2..=5`); otherwise as [`new`](Self::new).
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::latency::TAIL;
    /// use ironward_tokio::call::Hedge;
    ///
    /// // No latency measured yet: the fallback.
    /// assert_eq!(Hedge::tail(TAIL, 2).delay(), TAIL.fallback);
    /// ```
    pub fn tail(tail: Tail, max_attempts: u32) -> Self {
        Self::tuned(Tuning {
            delay: HedgeDelay::Tail(tail),
            max_attempts,
        })
    }

    /// Hedges as `tuning` says; otherwise as [`new`](Self::new).
    pub fn tuned(tuning: Tuning) -> Self {
        Self::build(tuning, None, Knobs::default())
    }

    fn build(tuning: Tuning, budget: Option<Arc<SharedBudget>>, knobs: Knobs) -> Self {
        let tuning = held(tuning);
        let window = match tuning.delay {
            HedgeDelay::Tail(tail) => tail.window,
            HedgeDelay::Fixed(_) => TAIL.window,
        };
        Self {
            shared: Arc::new(Shared {
                budget,
                meter: Retries::new(knobs.name),
                decisions: Decisions::new("hedge", knobs.name, "refused", REASONS),
                knobs,
                state: Mutex::new(State {
                    tuning,
                    recent: Recent::new(window),
                }),
            }),
        }
    }

    /// A new policy with one part changed.
    fn rebuilt(&self, change: impl FnOnce(&mut Option<Arc<SharedBudget>>, &mut Knobs)) -> Self {
        let (mut budget, mut knobs) = (self.shared.budget.clone(), self.shared.knobs.clone());
        change(&mut budget, &mut knobs);
        Self::build(self.tuning(), budget, knobs)
    }

    /// The same policy asking and telling `budget`, shared with other hedges and retries
    /// (a [`Retry`](super::Retry)'s [`with_budget`](super::Retry::with_budget)), as gRPC A6
    /// counts: see [`Hedge`].
    #[must_use]
    pub fn with_budget(self, budget: Arc<SharedBudget>) -> Self {
        self.rebuilt(|b, _| *b = Some(budget))
    }

    /// The same policy reading and sleeping on `clock`.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuilt(|_, knobs| knobs.clock = clock)
    }

    /// The same policy reporting as `name`: the `name` label of its metrics and field of its
    /// events.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuilt(|_, knobs| knobs.name = name)
    }

    /// Changes the delay and the most attempts of every clone at once, and returns the
    /// tuning it replaced. A call under way keeps the tuning it started with.
    ///
    /// `max_attempts` is held to `2..=5`. The latencies kept stay; a [`Tail`] with another
    /// `window` keeps the newest that fit.
    pub fn retune(&self, tuning: Tuning) -> Tuning {
        let tuning = held(tuning);
        let mut state = self.shared.state();
        if let HedgeDelay::Tail(tail) = tuning.delay {
            state.recent = state.recent.resized(tail.window);
        }
        std::mem::replace(&mut state.tuning, tuning)
    }

    /// The tuning now.
    pub fn tuning(&self) -> Tuning {
        self.shared.state().tuning
    }

    /// The hedging delay a call starting now would wait.
    pub fn delay(&self) -> Duration {
        self.shared.start().0
    }

    /// The most attempts a call makes, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.tuning().max_attempts
    }

    /// The shared retry budget, if one was given.
    pub fn budget(&self) -> Option<&SharedBudget> {
        self.shared.budget.as_deref()
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.knobs.name
    }

    /// One call of `operation` under this policy: a [`Hedging`] to configure, then await.
    ///
    /// `operation` is called once per attempt, each a fresh future of a `Result`; the
    /// attempts may overlap, so the call must be idempotent.
    pub fn call<F>(&self, operation: F) -> Hedging<F> {
        Hedging::new(Arc::clone(&self.shared), operation)
    }
}

/// `max_attempts` held to what the plan takes: at least 2, at most A6's 5.
fn held(tuning: Tuning) -> Tuning {
    Tuning {
        max_attempts: tuning.max_attempts.clamp(2, MAX_ATTEMPTS),
        ..tuning
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // The state is whole after any panic: a tuning is replaced at once, a latency added
        // in one step.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The delay and the most attempts of a call starting now.
    pub(crate) fn start(&self) -> (Duration, u32) {
        let mut state = self.state();
        let delay = match state.tuning.delay {
            HedgeDelay::Fixed(delay) => delay,
            HedgeDelay::Tail(tail) => tail.delay(&mut state.recent),
        };
        (delay, state.tuning.max_attempts)
    }

    /// A call succeeded after `latency`.
    pub(crate) fn measured(&self, latency: Duration) {
        self.state().recent.add(latency);
    }
}

impl AsRef<Self> for Hedge {
    fn as_ref(&self) -> &Self {
        self
    }
}

impl fmt::Debug for Hedge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hedge")
            .field("tuning", &self.tuning())
            .field("budget", &self.shared.budget)
            .field("clock", &self.shared.knobs.clock)
            .field("name", &self.shared.knobs.name)
            .finish()
    }
}
