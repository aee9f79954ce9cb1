//! [`Timeout`]: a time limit on any async call, bounded by the deadline it runs under.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use ironward::clock::nanos;
use pin_project_lite::pin_project;

use super::{CallError, Deadline, Scope};
use crate::meter::{DEFAULT_NAME, Decisions};
use crate::{Clock, Delay};

/// The reasons a timeout refuses for, as the `reason` label gives them.
const REASONS: &[&str] = &["exceeded", "elapsed"];
/// The index in [`REASONS`] of a call whose deadline had passed before it started.
const EXCEEDED: usize = 0;
/// The index in [`REASONS`] of a call cut off by its deadline.
const ELAPSED: usize = 1;

/// Why a [`Timeout`] ended a call.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::call::TimeoutReason;
///
/// let cut = TimeoutReason::Elapsed { budget: Duration::from_millis(250) };
/// assert_eq!(cut.to_string(), "call timed out after 250ms");
/// assert_eq!(TimeoutReason::Exceeded.to_string(), "deadline exceeded before the call started");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeoutReason {
    /// The deadline the call ran under had passed when it was asked for: it never ran.
    Exceeded,
    /// The call ran out of time: it had `budget`, the smaller of the timeout's own and what
    /// the deadline it ran under left, and had not ended by then.
    Elapsed {
        /// The time the call had, from its start.
        budget: Duration,
    },
}

impl fmt::Display for TimeoutReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exceeded => f.write_str("deadline exceeded before the call started"),
            Self::Elapsed { budget } => write!(f, "call timed out after {budget:?}"),
        }
    }
}

impl std::error::Error for TimeoutReason {}

/// A time limit on any async call, on a [`Clock`], that also stops at the deadline the call
/// runs under ([`Deadline`]).
///
/// A call runs for the smaller of the timeout's own budget and what the
/// [current deadline](Deadline::current) leaves, under that deadline (so that timeouts and
/// retries nested inside stop there too). One whose deadline had already passed never runs
/// ([`TimeoutReason::Exceeded`]); one that has not ended by its deadline is dropped and
/// answered [`TimeoutReason::Elapsed`], as tower's `Timeout` and failsafe-go's timeout do.
/// A budget of zero is no timeout of its own, as the core's [`ironward::Deadline`], a
/// gRPC call without a deadline and go-zero's `Timeout: 0` read it: such a timeout bounds a
/// call only by the deadline around it.
///
/// **Judged on the clock.** The call is polled first, and its value delivered if it is
/// ready by the deadline as the clock reads it when it ends: a value ready later is cut as
/// the timer would have cut it. On a [manual](Clock::manual) clock that is what makes a
/// timeout exact: a sleep on it moves the clock rather than waiting, so a call that sleeps
/// past its deadline ends at once with the clock past it, and is answered `Elapsed`; and a
/// call still pending is cut at once, the clock moved to its deadline by the timeout's own
/// sleep.
///
/// `Clone` is an `Arc` clone; the timeout holds no state but its budget and handles, and
/// [`retune`](Self::retune) changes the budget for every clone.
///
/// # Metrics and events
///
/// `ironward.requests{piece="timeout", name, outcome, reason}`: `admitted` for a call that
/// ended in time (or was dropped before its deadline), `refused` with `reason="exceeded"`
/// or `"elapsed"`; each refusal is a `DEBUG` event. A call with no deadline at all is
/// counted `admitted`.
///
/// # Examples
///
/// An outer deadline of a second bounds an inner timeout of five:
///
/// ```
/// use std::future::pending;
/// use std::time::Duration;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{CallError, Deadline, Timeout, TimeoutReason};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let timeout = Timeout::new(Duration::from_secs(5)).with_clock(clock.clone());
/// let hung = timeout.call(pending::<Result<(), ()>>);
/// let cut = Deadline::after(Duration::from_secs(1), &clock).scope(hung).await;
/// let budget = Duration::from_secs(1);
/// assert_eq!(cut, Err(CallError::Refused(TimeoutReason::Elapsed { budget })));
/// assert_eq!(clock.now(), Duration::from_secs(1));
/// # }
/// ```
#[derive(Clone)]
pub struct Timeout {
    shared: Arc<Shared>,
}

struct Shared {
    /// The budget in nanoseconds, saturating: what a [`Clock`] reads in too.
    budget: AtomicU64,
    clock: Clock,
    name: &'static str,
    decisions: Decisions,
}

impl Timeout {
    /// A timeout of `budget` (zero: none of its own) on the monotonic clock.
    pub fn new(budget: Duration) -> Self {
        Self::build(budget, Clock::default(), DEFAULT_NAME)
    }

    fn build(budget: Duration, clock: Clock, name: &'static str) -> Self {
        Self {
            shared: Arc::new(Shared {
                budget: AtomicU64::new(nanos(budget)),
                clock,
                name,
                decisions: Decisions::new("timeout", name, "refused", REASONS),
            }),
        }
    }

    /// The same timeout on `clock`.
    #[must_use]
    pub fn with_clock(self, clock: Clock) -> Self {
        Self::build(self.budget(), clock, self.name())
    }

    /// The same timeout reporting under `name` (by default `"default"`).
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        Self::build(self.budget(), self.shared.clock.clone(), name)
    }

    /// Its own budget (zero: none), as the last [`new`](Self::new) or
    /// [`retune`](Self::retune) gave it; one past `u64::MAX` nanoseconds (584 years, the
    /// most a [`Clock`] reads) is held as that.
    pub fn budget(&self) -> Duration {
        Duration::from_nanos(self.shared.budget.load(Ordering::Relaxed))
    }

    /// Gives every clone `budget` from its next call on (zero: none of its own), and returns
    /// the budget it replaced; a call under way keeps the deadline it started with. A
    /// `DEBUG` event with both.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::call::Timeout;
    ///
    /// let timeout = Timeout::new(Duration::from_secs(2));
    /// let was = timeout.clone().retune(Duration::from_millis(500));
    /// assert_eq!((was, timeout.budget()), (Duration::from_secs(2), Duration::from_millis(500)));
    /// assert_eq!(timeout.retune(Duration::MAX), Duration::from_millis(500));
    /// assert_eq!(timeout.budget(), Duration::from_nanos(u64::MAX));
    /// ```
    pub fn retune(&self, budget: Duration) -> Duration {
        let shared = &*self.shared;
        let was = Duration::from_nanos(shared.budget.swap(nanos(budget), Ordering::Relaxed));
        tracing::debug!(name = shared.name, from = ?was, to = ?budget, "timeout retuned");
        was
    }

    /// The name it reports under.
    pub fn name(&self) -> &'static str {
        self.shared.name
    }

    /// Runs `call` until it ends or its deadline passes: its value, its own error as
    /// [`CallError::Failed`], or [`CallError::Refused`] with why time ran out.
    pub async fn call<T, E, Fut>(
        &self,
        call: impl FnOnce() -> Fut,
    ) -> Result<T, CallError<E, TimeoutReason>>
    where
        Fut: IntoFuture<Output = Result<T, E>>,
    {
        let shared = &*self.shared;
        let own = self.budget();
        let own = (!own.is_zero()).then_some(own);
        let Some((deadline, budget)) = Deadline::bound(own, &shared.clock) else {
            shared.decisions.admitted();
            return call().await.map_err(CallError::Failed);
        };
        if budget.is_zero() {
            shared.refused(TimeoutReason::Exceeded, EXCEEDED);
            return Err(CallError::Refused(TimeoutReason::Exceeded));
        }
        let mut count = Count {
            decisions: &shared.decisions,
            deadline: deadline.clone(),
            done: false,
        };
        let cut = cut(deadline, call().into_future()).await;
        count.done = true;
        match cut {
            Some(result) => {
                shared.decisions.admitted();
                result.map_err(CallError::Failed)
            }
            None => {
                let reason = TimeoutReason::Elapsed { budget };
                shared.refused(reason, ELAPSED);
                Err(CallError::Refused(reason))
            }
        }
    }
}

impl Shared {
    /// Counts and reports a refusal.
    #[cold]
    fn refused(&self, reason: TimeoutReason, index: usize) {
        self.decisions.refused(index);
        tracing::debug!(
            name = self.name,
            outcome = "refused",
            reason = REASONS[index],
            numbers = ?reason,
            "timeout refused a call"
        );
    }
}

/// Counts a call dropped before it ended, by the clock: `admitted` before its deadline,
/// `elapsed` after.
struct Count<'a> {
    decisions: &'a Decisions,
    deadline: Deadline,
    done: bool,
}

impl Drop for Count<'_> {
    fn drop(&mut self) {
        if !self.done {
            if self.deadline.expired() {
                self.decisions.refused(ELAPSED);
            } else {
                self.decisions.admitted();
            }
        }
    }
}

/// `future` run under `deadline` and raced against it: its output if ready by the deadline
/// as the clock reads it when it ends, `None` once the deadline has passed. What a
/// [`Timeout`] and each attempt of a [`Retry`](super::Retry) are cut by.
pub(super) fn cut<F: Future>(deadline: Deadline, future: F) -> Cut<Scope<F>> {
    Cut {
        future: deadline.clone().scope(future),
        sleep: None,
        deadline,
    }
}

pin_project! {
    /// A future raced against a deadline: its output if ready by the deadline, `None` once
    /// the deadline has passed.
    pub(super) struct Cut<F> {
        #[pin]
        future: F,
        // Made by the first poll that finds the future pending, so a call ready at once
        // makes no timer (and moves no manual clock).
        #[pin]
        sleep: Option<Delay>,
        deadline: Deadline,
    }
}

impl<F: Future> Future for Cut<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Poll::Ready(output) = this.future.poll(cx) {
            let late = this.deadline.clock().now() > this.deadline.instant();
            return Poll::Ready((!late).then_some(output));
        }
        if this.sleep.is_none() {
            let left = this.deadline.remaining();
            this.sleep.set(Some(this.deadline.clock().sleep(left)));
        }
        match this.sleep.as_pin_mut().map(|sleep| sleep.poll(cx)) {
            Some(Poll::Pending) => Poll::Pending,
            _ => Poll::Ready(None),
        }
    }
}

impl fmt::Debug for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timeout")
            .field("budget", &self.budget())
            .field("clock", &self.shared.clock)
            .field("name", &self.shared.name)
            .finish()
    }
}
