//! [`Retrying`]: one call through a [`Retry`](super::Retry), its hooks, and the futures and
//! the blocking loop that run it.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use ironward::retry::Retried;
use pin_project_lite::pin_project;

use super::driver::{Answer, Driver, Ended, Then};
use super::{After, AnyError, Fallible, Notify, Silent, Tuned, Unnamed, When};
use crate::Delay;
use crate::call::Scope;
use crate::call::timeout::{Cut, cut};

/// One call through a [`Retry`](super::Retry): the operation and the hooks that read its
/// errors, to await (an async operation), to [`record`](Self::recorded), or to run
/// [`blocking`](Self::blocking) (a synchronous one).
///
/// Made by [`Retry::call`](super::Retry::call) or [`RetryExt::retry`](super::RetryExt::retry).
/// Nothing runs until it is awaited or run. Each hook replaces the one before, and takes a
/// closure whose argument is typed from the operation's error ([`Fallible`]), or a function
/// path (`.when(Error::is_transient)`).
///
/// # Examples
///
/// A 404 is not worth retrying; a 503 names its wait.
///
/// ```
/// use std::sync::Mutex;
/// use std::time::Duration;
/// use ironward::retry::Rules;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{CallError, Retry, RetryExt};
///
/// #[derive(Debug, PartialEq)]
/// struct Status(u16);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let retry = Retry::new(Rules::default()).with_clock(clock.clone());
/// let answers = Mutex::new(vec![Status(404), Status(503)]);
/// let fetch = || async { Err::<(), _>(answers.lock().unwrap().pop().unwrap()) };
/// let waits = Mutex::new(Vec::new());
/// let answer = fetch
///     .retry(&retry)
///     .when(|status| status.0 >= 500)
///     .after(|status| (status.0 == 503).then(|| Duration::from_millis(700)))
///     .notify(|_, wait| waits.lock().unwrap().push(wait))
///     .await;
/// assert_eq!(answer, Err(CallError::Failed(Status(404))));
/// assert_eq!(*waits.lock().unwrap(), [Duration::from_millis(700)]);
/// assert_eq!(clock.now(), Duration::from_millis(700));
/// # }
/// ```
#[must_use = "a retry does nothing unless awaited or run"]
pub struct Retrying<F, W = AnyError, A = Unnamed, N = Silent> {
    tuned: Arc<Tuned>,
    operation: F,
    when: W,
    after: A,
    notify: N,
}

impl<F> Retrying<F> {
    pub(super) fn new(tuned: Arc<Tuned>, operation: F) -> Self {
        Self {
            tuned,
            operation,
            when: AnyError,
            after: Unnamed,
            notify: Silent,
        }
    }
}

impl<F, W, A, N> Retrying<F, W, A, N> {
    /// Retries only the errors `when` finds worth it (any `Fn(&E) -> bool`, its argument
    /// typed from the operation's error by [`Fallible`]); any other stops the call at once
    /// with it. By default every error is retried.
    pub fn when<M, W2>(self, when: W2) -> Retrying<F, W2, A, N>
    where
        F: Fallible<M>,
        W2: Fn(&F::Error) -> bool,
    {
        self.rehook(|(_, after, notify)| (when, after, notify))
    }

    /// Reads the wait each error names (any `Fn(&E) -> Option<Duration>`), as HTTP's
    /// `Retry-After`: the next attempt waits at least that long. By default none.
    pub fn after<M, A2>(self, after: A2) -> Retrying<F, W, A2, N>
    where
        F: Fallible<M>,
        A2: Fn(&F::Error) -> Option<Duration>,
    {
        self.rehook(|(when, _, notify)| (when, after, notify))
    }

    /// Calls `notify` (any `Fn(&E, Duration)`) with the failed attempt's error and the wait
    /// decided, before each wait is slept. By default nobody.
    pub fn notify<M, N2>(self, notify: N2) -> Retrying<F, W, A, N2>
    where
        F: Fallible<M>,
        N2: Fn(&F::Error, Duration),
    {
        self.rehook(|(when, after, _)| (when, after, notify))
    }

    /// The same call with its hooks replaced by `change`, of any [`When`], [`After`] and
    /// [`Notify`] types: what each hook's setter does, and how a
    /// [`Pipeline`](crate::call::Pipeline) lends the retry its own.
    pub(crate) fn rehook<W2, A2, N2>(
        self,
        change: impl FnOnce((W, A, N)) -> (W2, A2, N2),
    ) -> Retrying<F, W2, A2, N2> {
        let (when, after, notify) = change((self.when, self.after, self.notify));
        Retrying {
            tuned: self.tuned,
            operation: self.operation,
            when,
            after,
            notify,
        }
    }

    /// The call's future, answering the [`Retried`] record beside the result: attempts made,
    /// time waited, and why the call stopped (`None` after a success).
    pub fn recorded<T, E, Fut>(self) -> Recorded<F, Fut, T, E, W, A, N>
    where
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
        W: When<E>,
        A: After<E>,
        N: Notify<E>,
    {
        Recorded {
            operation: self.operation,
            hooks: (self.when, self.after, self.notify),
            driver: Driver::new(self.tuned),
            last: None,
            stage: Stage::Ask,
            boxed: None,
            value: PhantomData,
        }
    }

    /// Runs a synchronous operation to its answer on this thread, each wait slept with
    /// [`Clock::sleep_blocking`](crate::Clock::sleep_blocking): `std::thread::sleep`, or on a
    /// [manual](crate::Clock::manual) clock a move of the clock.
    ///
    /// An attempt cannot be cut short: the attempt timeout does not apply, and an attempt that
    /// fails after the budget has run out ends the call. The engine's rules are otherwise the
    /// async form's, and the [`Deadline`](crate::call::Deadline) read is the current one if
    /// this runs inside a task under one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ironward::retry::{Cause, Rules};
    /// use ironward::{BACKOFF, Backoff, Jitter};
    /// use ironward_tokio::Clock;
    /// use ironward_tokio::call::{CallError, Retry};
    ///
    /// let (clock, _hand) = Clock::manual(Duration::ZERO);
    /// let rules = Rules::new(Backoff { jitter: Jitter::Rigid, ..BACKOFF });
    /// let retry = Retry::new(rules).with_clock(clock.clone());
    /// let (answer, retried) = retry.call(|| Err::<(), _>("locked")).blocking_recorded();
    /// assert_eq!(answer, Err(CallError::Failed("locked")));
    /// assert_eq!(retried.stop, Some(Cause::AttemptsExhausted));
    /// assert_eq!(clock.now(), Duration::from_millis(300));
    /// ```
    pub fn blocking<T, E>(self) -> Answer<T, E>
    where
        F: FnMut() -> Result<T, E>,
        W: When<E>,
        A: After<E>,
        N: Notify<E>,
    {
        self.blocking_recorded().0
    }

    /// [`blocking`](Self::blocking), with the [`Retried`] record beside the answer.
    pub fn blocking_recorded<T, E>(mut self) -> (Answer<T, E>, Retried)
    where
        F: FnMut() -> Result<T, E>,
        W: When<E>,
        A: After<E>,
        N: Notify<E>,
    {
        let clock = self.tuned.fixed.parts.knobs.clock.clone();
        let hooks = (self.when, self.after, self.notify);
        let mut driver = Driver::new(self.tuned);
        let mut last = None;
        loop {
            if let Err(answer) = driver.attempt::<T, E>(last.take(), None) {
                return (answer, driver.retried());
            }
            match driver.settle(Ended::Returned((self.operation)()), &hooks) {
                Then::Wait(wait, error) => {
                    last = error;
                    clock.sleep_blocking(wait);
                }
                Then::Answer(answer) => return (answer, driver.retried()),
            }
        }
    }
}

impl<F, Fut, T, E, W, A, N> IntoFuture for Retrying<F, W, A, N>
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
    W: When<E>,
    A: After<E>,
    N: Notify<E>,
{
    type Output = Answer<T, E>;
    type IntoFuture = RetryFuture<F, Fut, T, E, W, A, N>;

    fn into_future(self) -> Self::IntoFuture {
        RetryFuture {
            recorded: self.recorded(),
        }
    }
}

pin_project! {
    /// The future of an awaited [`Retrying`]: the answer alone.
    #[must_use = "a retry does nothing unless awaited"]
    pub struct RetryFuture<F, Fut: IntoFuture, T, E, W, A, N> {
        #[pin]
        recorded: Recorded<F, Fut, T, E, W, A, N>,
    }
}

impl<F, Fut, T, E, W, A, N> Future for RetryFuture<F, Fut, T, E, W, A, N>
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
    W: When<E>,
    A: After<E>,
    N: Notify<E>,
{
    type Output = Answer<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().recorded.poll(cx).map(|(answer, _)| answer)
    }
}

pin_project! {
    /// The future of [`Retrying::recorded`]: the answer and the [`Retried`] record.
    ///
    /// The call starts (its clock read, its deadline taken) when first polled. Dropped while
    /// an attempt runs, it drops that attempt's future; while it waits, its sleep: nothing is
    /// left running, and nothing is counted as ended.
    #[must_use = "a retry does nothing unless awaited"]
    pub struct Recorded<F, Fut: IntoFuture, T, E, W, A, N> {
        operation: F,
        hooks: (W, A, N),
        // Started (its clock read, its deadline taken) by the first poll.
        driver: Driver,
        // The failed attempt's error, returned should the next attempt not be made.
        last: Option<E>,
        #[pin]
        stage: Stage<Fut::IntoFuture>,
        // The attempt raced against its deadline, or the wait, of the stage `Cut` or `Wait`.
        boxed: Option<Pin<Box<Boxed<Fut::IntoFuture>>>>,
        value: PhantomData<fn() -> T>,
    }
}

pin_project! {
    #[project = StageProj]
    enum Stage<Fut: Future> {
        // The next attempt is to be asked for.
        Ask,
        // An attempt raced against its deadline, in `boxed`.
        Cut,
        // An attempt with no deadline at all.
        Free { #[pin] attempt: Fut },
        // A wait, in `boxed`.
        Wait,
        Done,
    }
}

pin_project! {
    // An attempt raced against its deadline, and a wait, live out of line: a deadline's scope
    // and timer are some 200 bytes, which inline would make every call's future that much
    // larger (an executor moves it by value, and a call that needs neither, an attempt with
    // no deadline answered at once, would pay for copying them). One allocation, made by the
    // first that needs it and reused by every later one, where a deadline or a timer is set
    // up anyway.
    #[project = BoxedProj]
    enum Boxed<Fut: Future> {
        Idle,
        Cut { #[pin] attempt: Cut<Scope<Fut>> },
        Wait { #[pin] delay: Delay },
    }
}

/// Puts `value` in `slot`'s box, dropping what it held there, or in a new box.
fn put<Fut: Future>(slot: &mut Option<Pin<Box<Boxed<Fut>>>>, value: Boxed<Fut>) {
    match slot {
        Some(boxed) => boxed.as_mut().set(value),
        None => *slot = Some(Box::pin(value)),
    }
}

/// Drops what `slot`'s box holds, keeping the box for the next.
fn idle<Fut: Future>(slot: &mut Option<Pin<Box<Boxed<Fut>>>>) {
    if let Some(boxed) = slot {
        boxed.as_mut().set(Boxed::Idle);
    }
}

impl<F, Fut, T, E, W, A, N> Future for Recorded<F, Fut, T, E, W, A, N>
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
    W: When<E>,
    A: After<E>,
    N: Notify<E>,
{
    type Output = (Answer<T, E>, Retried);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let driver = this.driver;
        loop {
            let ended = match this.stage.as_mut().project() {
                StageProj::Ask => {
                    let per_attempt = driver.attempt_timeout();
                    match driver.attempt::<T, E>(this.last.take(), per_attempt) {
                        Ok(Some(deadline)) => {
                            let attempt = cut(deadline, (this.operation)().into_future());
                            put(this.boxed, Boxed::Cut { attempt });
                            this.stage.set(Stage::Cut);
                        }
                        Ok(None) => {
                            let attempt = (this.operation)().into_future();
                            this.stage.set(Stage::Free { attempt });
                        }
                        Err(answer) => {
                            this.stage.set(Stage::Done);
                            return Poll::Ready((answer, driver.retried()));
                        }
                    }
                    continue;
                }
                StageProj::Cut => {
                    let boxed = this.boxed.as_mut().map(|boxed| boxed.as_mut().project());
                    let Some(BoxedProj::Cut { attempt }) = boxed else {
                        unreachable!("the stage Cut holds its attempt in the box")
                    };
                    match ready!(attempt.poll(cx)) {
                        Some(result) => Ended::Returned(result),
                        None => Ended::TimedOut,
                    }
                }
                StageProj::Free { attempt } => Ended::Returned(ready!(attempt.poll(cx))),
                StageProj::Wait => {
                    let boxed = this.boxed.as_mut().map(|boxed| boxed.as_mut().project());
                    let Some(BoxedProj::Wait { delay }) = boxed else {
                        unreachable!("the stage Wait holds its delay in the box")
                    };
                    ready!(delay.poll(cx));
                    idle(this.boxed);
                    this.stage.set(Stage::Ask);
                    continue;
                }
                StageProj::Done => panic!("a retry future polled after it answered"),
            };
            let settled = driver.settle(ended, this.hooks);
            // The attempt ended: its future goes now, as a stage's would when the next is set.
            idle(this.boxed);
            match settled {
                Then::Wait(wait, error) => {
                    *this.last = error;
                    if wait.is_zero() {
                        // A zero wait is no wait: the next attempt is asked for at once, not
                        // after a turn of the runtime's timer (whose tick, a millisecond, a
                        // zero sleep would wait for). It still takes a unit of the task's
                        // cooperative budget, so that a long run of them yields to the other
                        // tasks as sleeps would.
                        this.stage.set(Stage::Ask);
                        ready!(tokio::task::coop::poll_proceed(cx)).made_progress();
                    } else {
                        let delay = driver.clock().sleep(wait);
                        put(this.boxed, Boxed::Wait { delay });
                        this.stage.set(Stage::Wait);
                    }
                }
                Then::Answer(answer) => {
                    this.stage.set(Stage::Done);
                    return Poll::Ready((answer, driver.retried()));
                }
            }
        }
    }
}

impl<F, W: fmt::Debug, A: fmt::Debug, N: fmt::Debug> fmt::Debug for Retrying<F, W, A, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Retrying")
            .field("name", &self.tuned.fixed.parts.knobs.name)
            .finish_non_exhaustive()
    }
}

impl<F, Fut: IntoFuture, T, E, W, A, N> fmt::Debug for Recorded<F, Fut, T, E, W, A, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorded")
            .field("retried", &self.driver.retried())
            .finish_non_exhaustive()
    }
}

impl<F, Fut: IntoFuture, T, E, W, A, N> fmt::Debug for RetryFuture<F, Fut, T, E, W, A, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.recorded.fmt(f)
    }
}
