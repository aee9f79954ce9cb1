//! [`Retry`]: any async call (or a synchronous one) tried again, on the core's retry engine.
//!
//! The policy is a value, [`Retry`]; each call through it is a builder, [`Retrying`], that says
//! which errors are worth retrying ([`when`](Retrying::when)), reads a wait the error names
//! ([`after`](Retrying::after)) and hears of each wait ([`notify`](Retrying::notify)), then is
//! awaited, [`recorded`](Retrying::recorded) or run [`blocking`](Retrying::blocking).
//! [`RetryExt`] makes the same builder from the operation itself:
//! `(|| fetch(id)).retry(&policy).when(Error::is_transient).await`.
//!
//! Every rule (the attempts, the total budget and its reserve, the re-check after waking, the
//! backoff's draw, the cap on a named wait, the retry budget) is the core's
//! [`Engine`](ironward::retry::Engine)'s: this module runs the attempts, sleeps the waits it
//! decides on the [`Clock`], and reports. The traits [`When`], [`After`] and
//! [`Notify`] are what the builder's three hooks take: any closure of the right shape, or
//! the defaults [`AnyError`], [`Unnamed`] and [`Silent`].

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironward::SharedBudget;
use ironward::retry::{Cause, Retried, Rules};

use crate::meter::Retries;
use crate::{Clock, Dice, Knobs, lock};

mod driver;
mod ext;
mod future;
mod hooks;

pub use ext::RetryExt;
pub use future::{Recorded, RetryFuture, Retrying};
pub use hooks::{After, AnyError, Awaits, Fallible, Notify, Returns, Silent, Unnamed, When};

/// A retry policy for any call: the core engine's [`Rules`], a time limit on each attempt, an
/// optional retry budget shared with other callers, and the clock, dice and name it runs on.
///
/// [`call`](Self::call) (or [`RetryExt::retry`]) makes one call's [`Retrying`]; awaited, it
/// makes attempts until one succeeds or the engine stops:
///
/// - **Which errors.** Every error is retried unless [`Retrying::when`] says otherwise; one it
///   refuses stops the call at once ([`Cause::NotRetryable`]), and the retry budget is told
///   nothing of it.
/// - **How long between.** The [`Rules`]' backoff, drawn from the [`Dice`] once per failed
///   attempt (where its jitter reads a draw), lengthened to a wait the error names ([`Retrying::after`], as HTTP's
///   `Retry-After`); a named wait above the backoff's cap stops
///   ([`Cause::ServerDelayExceedsCap`]). Each wait is slept on the [`Clock`]: on
///   [`Clock::manual`] the sleep moves the clock, so an hour of retries runs in no time at
///   exact instants.
/// - **How long in all.** [`Rules::total_budget`], with its reserve, and the [`Deadline`]
///   the call runs under, whichever is sooner: what the deadline leaves when the call starts
///   is the call's budget if it is the smaller, so the engine stops before a wait that cannot
///   fit, never starts an attempt the deadline cannot hold, and cuts the last at it
///   ([`Cause::BudgetExhausted`]). A call whose deadline has passed makes no attempt.
/// - **How long each.** Each attempt runs under the smaller of the attempt timeout
///   ([`with_attempt_timeout`](Self::with_attempt_timeout)) and what is left of the budget,
///   as a [`Deadline`] that calls nested inside read. One cut by the attempt timeout is a
///   failed attempt the engine retries as its rules allow; one cut by the budget ends the
///   call. As for a [`Timeout`](super::Timeout), the attempt is judged on the clock when it
///   ends.
/// - **Shared retry budget.** With [`with_budget`](Self::with_budget), every attempt is
///   reported as gRPC A6 counts them (a success passes, a retryable failure fails, a failure
///   [`when`](Retrying::when) refuses is neither) and a wait is taken only while the budget
///   allows a retry ([`Cause::Throttled`]); first attempts are never held back.
///
/// **The answer.** The value; or [`CallError::Failed`](super::CallError::Failed) with the
/// last attempt's own error when the engine stopped after it; or
/// [`CallError::Refused`](super::CallError::Refused) with a [`GaveUp`] when there is no
/// error to return: the last attempt was cut by time, or none was made. Why the call stopped
/// is in the [`Retried`] record, beside the answer from [`Retrying::recorded`].
///
/// **Cancellation.** Dropping the call's future while it waits or while an attempt runs
/// drops that attempt's future and ends the call: nothing is spawned, and the retry budget,
/// told only of decisions already made, loses no token.
///
/// `Clone` is an `Arc` clone. Each builder makes a new policy, so configure first, then clone.
///
/// # Beside the HTTP edges
///
/// Given [`Settings::rules`](ironward::http_retry::Settings::rules), a `when` that retries
/// the statuses of [`retryable_status`](ironward::http_retry::retryable_status) and an `after`
/// that reads the failed reply's `Retry-After`, a `Retry` decides as ironward-tower's
/// `HttpRetryLayer` and ironward-reqwest's `RetryMiddleware` do: the same attempts, started
/// at the same instants, the same waits, the same stop and the same tokens left in a shared
/// retry budget (ironward-reqwest's `tests/front_door.rs` runs each case through all three).
/// Four differences are deliberate:
///
/// - **Any rules.** The HTTP edges decide by `Settings`, whose backoff always doubles with
///   full jitter; a `Retry` takes any [`Rules`], and draws each [`Jitter`](ironward::Jitter)
///   as the core's [`Backoff`](ironward::Backoff) does.
/// - **A draw only for a failure it may retry.** The HTTP edges roll the dice for every failed
///   attempt, a `404` too, before their rules find it final; a `Retry` rolls only for an error
///   [`when`](Retrying::when) retries, or an attempt cut by time. On dice shared between calls
///   (a seeded sequence, in a test), a final failure moves the HTTP edges' later draws on by
///   one, and not a `Retry`'s.
/// - **Attempt timeouts on the clock.** The HTTP edges cut an attempt with a tokio timer
///   whatever their clock; a `Retry` judges it on its [`Clock`], as a
///   [`Timeout`](super::Timeout) does. On tokio's time, real or paused, both cut at the same
///   instant (to tokio's millisecond); on a [manual](Clock::manual) clock, an attempt that
///   moves the clock past its deadline is cut here and kept by the HTTP edges.
/// - **A wait that cannot be read.** [`after`](Retrying::after) answers a wait or none, and
///   cannot stop a call; the HTTP edges stop on a `Retry-After` they cannot read
///   (`InvalidRetryAfter`). A `when` that refuses such a reply stops a `Retry` at the same
///   attempt, as [`Cause::NotRetryable`].
///
/// # Metrics and events
///
/// As ironward-reqwest's retry middleware, through [`meter::Retries`](crate::meter::Retries):
/// `ironward.retry.attempts{name, kind}` (`first`, `retry`) for each attempt made,
/// `ironward.retry.calls{name, outcome}` (`success`, or the stop's
/// [`Cause::as_str`]) for each call that ended, and `ironward.retry.wait{name}` (seconds) for
/// each wait decided; a wait is a `DEBUG` event `retrying call`, a stop a `DEBUG` event
/// `not retrying`, with the name. A call dropped before it ends is not counted as ended.
///
/// # Examples
///
/// Two failures, then a value, on a manual clock: the waits are the backoff's ceilings
/// (no jitter), slept exactly.
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
/// use ironward::retry::Rules;
/// use ironward::{BACKOFF, Backoff, Jitter};
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::Retry;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let retry = Retry::new(Rules::new(Backoff { jitter: Jitter::Rigid, ..BACKOFF }))
///     .with_clock(clock.clone());
/// let calls = AtomicU32::new(0);
/// let flaky = || async {
///     match calls.fetch_add(1, Ordering::Relaxed) {
///         0 | 1 => Err("busy"),
///         _ => Ok(42),
///     }
/// };
/// let (answer, retried) = retry.call(flaky).recorded().await;
/// assert_eq!(answer, Ok(42));
/// assert_eq!((retried.attempts, retried.waited), (3, Duration::from_millis(300)));
/// assert_eq!(clock.now(), Duration::from_millis(300), "100 ms, then 200 ms");
/// # }
/// ```
///
/// [`Deadline`]: super::Deadline
#[derive(Clone)]
pub struct Retry {
    shared: Arc<Shared>,
}

/// What every clone of a [`Retry`] shares: the rules in force, and its other parts.
pub(crate) struct Shared {
    /// Behind a lock so that [`Retry::retune`] changes them for every clone, which swaps in
    /// a new `Arc`; a call takes a clone of the `Arc` once, when it is made, and runs on it
    /// to its end. A call holds a pointer, not a copy: its future stays small (every
    /// executor moves it by value) and the read is a lock and a count, whatever the rules.
    tuned: Mutex<Arc<Tuned>>,
    fixed: Arc<Fixed>,
}

/// The rules one call runs on, with what does not change.
pub(crate) struct Tuned {
    pub(crate) rules: Rules,
    pub(crate) fixed: Arc<Fixed>,
}

/// What a [`Retry`] holds from its build on: its parts and the handles it reports through.
pub(crate) struct Fixed {
    pub(crate) parts: Parts,
    pub(crate) meter: Retries<Cause>,
}

/// What a [`Retry`] is built from besides its rules.
#[derive(Clone)]
pub(crate) struct Parts {
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) budget: Option<Arc<SharedBudget>>,
    /// The name, the clock the waits and the budget read, the dice of the jitter; a retry
    /// has no shadow mode.
    pub(crate) knobs: Knobs,
}

impl Retry {
    /// Retries by `rules`, with no attempt timeout and no retry budget, on the monotonic clock
    /// with real randomness, reporting as `"default"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::retry::Rules;
    /// use ironward_tokio::call::Retry;
    ///
    /// let retry = Retry::new(Rules::default());
    /// assert_eq!(retry.rules().backoff.attempts, 3);
    /// assert_eq!(retry.attempt_timeout(), None);
    /// ```
    pub fn new(rules: Rules) -> Self {
        Self::build(
            rules,
            Parts {
                attempt_timeout: None,
                budget: None,
                knobs: Knobs::default(),
            },
        )
    }

    fn build(rules: Rules, parts: Parts) -> Self {
        let fixed = Arc::new(Fixed {
            meter: Retries::new(parts.knobs.name),
            parts,
        });
        let tuned = Arc::new(Tuned {
            rules,
            fixed: Arc::clone(&fixed),
        });
        Self {
            shared: Arc::new(Shared {
                tuned: Mutex::new(tuned),
                fixed,
            }),
        }
    }

    /// A new policy with one part changed.
    fn rebuilt(&self, change: impl FnOnce(&mut Parts)) -> Self {
        let mut parts = self.shared.fixed.parts.clone();
        change(&mut parts);
        Self::build(self.rules(), parts)
    }

    /// The same policy cutting each attempt short after `timeout`, or when the time left
    /// runs out if that comes first. Zero is none, as the engine reads it
    /// ([`Engine::attempt`](ironward::retry::Engine::attempt)).
    ///
    /// An attempt cut by it is a failed attempt: retried as the rules allow (it has no error
    /// for [`when`](Retrying::when) to read, nor for [`notify`](Retrying::notify) to hear),
    /// and counted by the retry budget as a failure.
    #[must_use]
    pub fn with_attempt_timeout(self, timeout: Duration) -> Self {
        self.rebuilt(|s| s.attempt_timeout = Some(timeout))
    }

    /// The same policy reporting to `budget`, a retry budget (gRPC A6 retry throttling)
    /// shared with every policy and client that holds it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use ironward::SharedBudget;
    /// use ironward::retry::Rules;
    /// use ironward_tokio::call::Retry;
    ///
    /// let budget = Arc::new(SharedBudget::new(10, 0.1));
    /// let retry = Retry::new(Rules::default()).with_budget(Arc::clone(&budget));
    /// assert_eq!(retry.budget().map(|b| b.tokens()), Some(10.0));
    /// ```
    #[must_use]
    pub fn with_budget(self, budget: Arc<SharedBudget>) -> Self {
        self.rebuilt(|s| s.budget = Some(budget))
    }

    /// The same policy reading `clock` (by default [`Clock::monotonic`]) and sleeping its
    /// waits on it: the time budget, each attempt's deadline and each wait.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        self.rebuilt(|s| s.knobs.clock = clock)
    }

    /// The same policy drawing its jitter from `dice` (by default [`Dice::random`]): one draw
    /// per failed attempt the engine may retry, and none where the jitter reads no draw
    /// ([`Jitter::Rigid`](ironward::Jitter::Rigid); see
    /// [`Jitter::draws`](ironward::Jitter::draws)). A piece draws only what it reads, so dice
    /// shared with other pieces move on by its reads alone. `Dice::from_fn(|| 0.5)` draws the
    /// same each time; [`Dice::seeded`] a reproducible sequence.
    #[must_use]
    pub fn with_dice(self, dice: Dice) -> Self {
        self.rebuilt(|s| s.knobs.dice = dice)
    }

    /// The same policy reporting under `name` (by default `"default"`): the `name` label of
    /// its metrics and field of its events.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.rebuilt(|s| s.knobs.name = name)
    }

    /// The engine's rules, as the last [`new`](Self::new) or [`retune`](Self::retune) gave
    /// them.
    pub fn rules(&self) -> Rules {
        self.shared.tuned().rules
    }

    /// Runs `rules` from every clone's next call on, and returns the rules they replaced; a
    /// call already made ([`call`](Self::call), [`RetryExt::retry`]), awaited or not yet,
    /// keeps the rules it was made with. A `DEBUG` event with both.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::retry::Rules;
    /// use ironward::{BACKOFF, Backoff};
    /// use ironward_tokio::call::Retry;
    ///
    /// let retry = Retry::new(Rules::default());
    /// let once = Rules::new(Backoff { attempts: 1, ..BACKOFF });
    /// let was = retry.clone().retune(once);
    /// assert_eq!((was.backoff.attempts, retry.rules().backoff.attempts), (3, 1));
    /// ```
    pub fn retune(&self, rules: Rules) -> Rules {
        let tuned = Arc::new(Tuned {
            rules,
            fixed: Arc::clone(&self.shared.fixed),
        });
        let was = std::mem::replace(&mut *lock(&self.shared.tuned), tuned).rules;
        tracing::debug!(name = self.name(), from = ?was, to = ?rules, "retry retuned");
        was
    }

    /// The attempt timeout, if one was set.
    pub fn attempt_timeout(&self) -> Option<Duration> {
        self.shared.fixed.parts.attempt_timeout
    }

    /// The shared retry budget, if one was given.
    pub fn budget(&self) -> Option<&SharedBudget> {
        self.shared.fixed.parts.budget.as_deref()
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.fixed.parts.knobs.name
    }

    /// One call of `operation` under this policy: a [`Retrying`] to configure, then await
    /// (`operation` returns a future of a `Result`) or run [`blocking`](Retrying::blocking)
    /// (it returns a `Result`).
    ///
    /// `operation` is called once per attempt, so each attempt is a fresh future. The call
    /// runs on the rules in force now, when it is made: a [`retune`](Self::retune) after
    /// this leaves it as it is.
    pub fn call<F>(&self, operation: F) -> Retrying<F> {
        Retrying::new(self.shared.tuned(), operation)
    }
}

impl Shared {
    /// The rules in force, with the parts: what a call made now runs on.
    fn tuned(&self) -> Arc<Tuned> {
        Arc::clone(&lock(&self.tuned))
    }
}

impl Default for Retry {
    /// [`Retry::new`]`(`[`Rules::default`]`)`: the core's preset backoff, no time budget.
    fn default() -> Self {
        Self::new(Rules::default())
    }
}

impl AsRef<Self> for Retry {
    fn as_ref(&self) -> &Self {
        self
    }
}

impl fmt::Debug for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = &self.shared.fixed.parts;
        f.debug_struct("Retry")
            .field("rules", &self.rules())
            .field("attempt_timeout", &shared.attempt_timeout)
            .field("budget", &shared.budget)
            .field("clock", &shared.knobs.clock)
            .field("dice", &shared.knobs.dice)
            .field("name", &shared.knobs.name)
            .finish()
    }
}

/// Why a [`Retry`] ended with no error of the call's own to return: its last attempt was cut
/// by time, or it made none (the deadline it ran under had passed).
///
/// `cause` is the engine's stop; `retried` the whole record (its `stop` is `cause`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::retry::{Cause, Retried};
/// use ironward_tokio::call::retry::GaveUp;
///
/// let retried = Retried { attempts: 3, waited: Duration::from_millis(300), stop: Some(Cause::AttemptsExhausted) };
/// let gave_up = GaveUp { cause: Cause::AttemptsExhausted, retried };
/// assert_eq!(gave_up.to_string(), "retries exhausted after 3 attempts, the last cut off by time");
/// let none = GaveUp { cause: Cause::BudgetExhausted, retried: Retried { attempts: 0, ..retried } };
/// assert_eq!(none.to_string(), "time budget exhausted before any attempt");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GaveUp {
    /// Why the engine stopped.
    pub cause: Cause,
    /// The attempts made, the waits, and the stop.
    pub retried: Retried,
}

impl fmt::Display for GaveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.retried.attempts {
            0 => write!(f, "{} before any attempt", self.cause),
            1 => write!(f, "{} after 1 attempt, cut off by time", self.cause),
            n => write!(
                f,
                "{} after {n} attempts, the last cut off by time",
                self.cause
            ),
        }
    }
}

impl std::error::Error for GaveUp {}
