//! [`Deadline`]: an instant on a clock by which a call must end, carried by the task so
//! that nested calls read it.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::task::futures::TaskLocalFuture;

use crate::Clock;

tokio::task_local! {
    /// The innermost deadline of the task's scopes.
    static CURRENT: Deadline;
}

/// An instant on a [`Clock`] by which a call must end, and the task-local that hands it to
/// every call nested inside: [`Deadline::scope`] runs a future under a deadline,
/// [`Deadline::current`] reads the innermost one.
///
/// A request's budget belongs to the request, not to each call it makes: with a second
/// left, an inner call's own 5 s timeout must stop at that second, and a retry must not
/// start an attempt the second cannot hold. So every [`Timeout`](super::Timeout) reads the
/// current deadline and runs for the smaller of its own budget and what the deadline
/// leaves, and runs its call under the deadline it keeps, so that calls nested deeper see
/// it too. A scope only ever tightens: under an earlier deadline a later one is the earlier.
///
/// The deadline holds its clock, so that what it leaves is read on the clock it was set on
/// whichever clock the piece that reads it runs on (each [`Clock::monotonic`] counts from
/// its own start). It is carried by the task, as tokio's task-locals are: a future spawned
/// onto another task does not inherit it; pass [`current`](Self::current) along and scope
/// it there.
///
/// This is the core's [`ironward::Deadline`] (a budget from a start, read at a `now` the
/// caller passes) made an instant on a clock, which is what a task-local can hold; its
/// "zero is no deadline" belongs to budgets, so [`Timeout::new`](super::Timeout::new) keeps
/// it, and here [`after`](Self::after) a zero budget is an instant already reached.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::Deadline;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, hand) = Clock::manual(Duration::ZERO);
/// assert!(Deadline::current().is_none());
/// let left = Deadline::after(Duration::from_secs(2), &clock)
///     .scope(async {
///         hand.advance(Duration::from_millis(500));
///         // A later deadline inside changes nothing: the outer one is sooner.
///         Deadline::after(Duration::from_secs(10), &clock)
///             .scope(async { Deadline::current().unwrap().remaining() })
///             .await
///     })
///     .await;
/// assert_eq!(left, Duration::from_millis(1500));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Deadline {
    at: Duration,
    clock: Clock,
}

impl Deadline {
    /// The instant `at` on `clock`.
    pub fn at(at: Duration, clock: Clock) -> Self {
        Self { at, clock }
    }

    /// The instant `budget` from now on `clock`, saturating; a zero budget is now.
    pub fn after(budget: Duration, clock: &Clock) -> Self {
        Self::at(clock.now().saturating_add(budget), clock.clone())
    }

    /// The instant, on [`clock`](Self::clock).
    pub fn instant(&self) -> Duration {
        self.at
    }

    /// The clock the instant is on.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// What is left now, on its clock: zero once it is reached.
    pub fn remaining(&self) -> Duration {
        self.at.saturating_sub(self.clock.now())
    }

    /// Whether it is reached now.
    pub fn expired(&self) -> bool {
        self.remaining().is_zero()
    }

    /// Whichever of the two leaves less now.
    #[must_use]
    pub fn sooner(self, other: Self) -> Self {
        if other.remaining() < self.remaining() {
            other
        } else {
            self
        }
    }

    /// The innermost deadline of the task's scopes, if it runs under one.
    ///
    /// Outside a tokio task (or a scope) there is none.
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Self::clone).ok()
    }

    /// What is left of the [current](Self::current) deadline now, if there is one: what a
    /// call nested inside may spend at most.
    pub fn left() -> Option<Duration> {
        CURRENT.try_with(Self::remaining).ok()
    }

    /// The smaller of `budget` on `clock` and what the current deadline leaves: the deadline
    /// a call that may spend `budget` (`None`: no budget of its own) must keep here, and
    /// `None` if neither bounds it.
    ///
    /// What a [`Timeout`](super::Timeout) keeps, and what a piece that loops (a retry) asks
    /// before each attempt.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward_tokio::Clock;
    /// use ironward_tokio::call::Deadline;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let secs = Duration::from_secs;
    /// assert!(Deadline::within(None, &clock).is_none());
    /// let kept = Deadline::after(secs(1), &clock)
    ///     .scope(async { Deadline::within(Some(secs(5)), &clock).unwrap() })
    ///     .await;
    /// assert_eq!(kept.instant(), secs(1));
    /// # }
    /// ```
    pub fn within(budget: Option<Duration>, clock: &Clock) -> Option<Self> {
        Self::bound(budget, clock).map(|(deadline, _)| deadline)
    }

    /// [`within`](Self::within), and what the deadline leaves now: `budget` itself when it
    /// is the sooner (read once, so that a timeout reports the budget it was given rather
    /// than a reading a few nanoseconds later), else what the current one leaves.
    pub(super) fn bound(budget: Option<Duration>, clock: &Clock) -> Option<(Self, Duration)> {
        let outer = Self::current().map(|outer| {
            let left = outer.remaining();
            (outer, left)
        });
        match (budget, outer) {
            (Some(budget), Some((outer, left))) if left < budget => Some((outer, left)),
            (Some(budget), _) => Some((Self::after(budget, clock), budget)),
            (None, outer) => outer,
        }
    }

    /// Runs `future` under this deadline, or under the current one if that is sooner: within
    /// it, [`current`](Self::current) reads the sooner of the two. Which is sooner is
    /// decided when the scope is first polled, inside whatever scopes it runs in, wherever
    /// it was made.
    ///
    /// The deadline is only handed on: nothing here cuts `future` off. A
    /// [`Timeout`](super::Timeout) cuts; a call that reads the deadline (to send it on as a
    /// gRPC `grpc-timeout`, to size its own wait) keeps it.
    pub fn scope<F: IntoFuture>(self, future: F) -> Scope<F::IntoFuture> {
        Scope {
            state: Stage::Unpolled {
                deadline: Some((self, future.into_future())),
            },
        }
    }
}

pin_project! {
    /// The future of [`Deadline::scope`]: `F` run under the sooner of its deadline and the
    /// one current where it is first polled.
    #[must_use = "a scope does nothing unless awaited"]
    pub struct Scope<F: Future> {
        #[pin]
        state: Stage<F>,
    }
}

pin_project! {
    #[project = StageProj]
    enum Stage<F: Future> {
        // Not yet polled: the deadline and the future, neither pinned yet.
        Unpolled { deadline: Option<(Deadline, F)> },
        Scoped { #[pin] future: TaskLocalFuture<Deadline, F> },
    }
}

impl<F: Future> Future for Scope<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        if let StageProj::Unpolled { deadline } = self.as_mut().project().state.project()
            && let Some((deadline, future)) = deadline.take()
        {
            let deadline = match Deadline::current() {
                Some(outer) => deadline.sooner(outer),
                None => deadline,
            };
            let future = CURRENT.scope(deadline, future);
            self.as_mut().project().state.set(Stage::Scoped { future });
        }
        match self.project().state.project() {
            StageProj::Scoped { future } => future.poll(cx),
            // Only a scope whose first poll panicked is left here.
            StageProj::Unpolled { .. } => Poll::Pending,
        }
    }
}

impl<F: Future> fmt::Debug for Scope<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}
