//! [`Hedging`]: one call through a [`Hedge`](super::Hedge), its hooks, and the futures that
//! run it ([`HedgeFuture`], [`Recorded`]).

use std::fmt;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ironward::grpc::{
    Codes, Ending, Halt, Hedge as Step, HedgingPlan, HedgingPolicy, Pushback, Verdict,
};
use pin_project_lite::pin_project;

use super::super::retry::{After, AnyError, Fallible, Unnamed, When};
use super::super::{CallError, Deadline};
use super::{HedgeReason, Hedged, Shared};
use crate::Delay;

/// What a call through a [`Hedge`](super::Hedge) answers.
pub(super) type Answer<T, E> = Result<T, CallError<E, HedgeReason>>;

/// One call through a [`Hedge`](super::Hedge): the operation, with the hooks that read its
/// errors, to await or to [`record`](Self::recorded).
///
/// Made by [`Hedge::call`](super::Hedge::call). Nothing runs until it is awaited. Each hook
/// replaces the one before; they are the retry's traits, [`When`] and [`After`], so one
/// predicate serves both pieces.
///
/// # Examples
///
/// A 404 is fatal: the call takes it at once and drops the attempt still racing.
///
/// ```
/// use std::future::pending;
/// use std::time::Duration;
/// use ironward_tokio::Clock;
/// use ironward_tokio::call::{CallError, Hedge};
///
/// #[derive(Debug, PartialEq)]
/// struct Status(u16);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (clock, _hand) = Clock::manual(Duration::ZERO);
/// let hedge = Hedge::new(Duration::from_millis(10), 3).with_clock(clock.clone());
/// let mut attempts = 0;
/// let answer = hedge
///     .call(|| {
///         attempts += 1;
///         let first = attempts == 1;
///         async move {
///             if first {
///                 pending::<()>().await;
///             }
///             Err::<(), _>(Status(404))
///         }
///     })
///     .when(|status: &Status| status.0 >= 500)
///     .await;
/// assert_eq!(answer, Err(CallError::Failed(Status(404))));
/// assert_eq!(attempts, 2, "no third attempt after a fatal error");
/// # }
/// ```
#[must_use = "a hedge does nothing unless awaited"]
pub struct Hedging<F, W = AnyError, A = Unnamed> {
    shared: Arc<Shared>,
    operation: F,
    when: W,
    after: A,
}

impl<F> Hedging<F> {
    pub(super) fn new(shared: Arc<Shared>, operation: F) -> Self {
        Self {
            shared,
            operation,
            when: AnyError,
            after: Unnamed,
        }
    }
}

impl<F, W, A> Hedging<F, W, A> {
    /// Lets the other attempts race on after the errors `when` accepts (any `Fn(&E) ->
    /// bool`, its argument typed from the operation's error by [`Fallible`]): the next hedge
    /// goes at once. Any other error is fatal: the call takes it and drops the rest. By
    /// default every error lets the others race.
    pub fn when<M, W2>(self, when: W2) -> Hedging<F, W2, A>
    where
        F: Fallible<M>,
        W2: Fn(&F::Error) -> bool,
    {
        self.rehook(|(_, after)| (when, after))
    }

    /// Reads the wait an error names (any `Fn(&E) -> Option<Duration>`),
    /// as gRPC A6's pushback: after an error `when` accepts, the next hedge goes that long
    /// after it rather than at once. A wait of `Duration::MAX` is A6's pushback that says
    /// stop ([`Halt::Pushback`]): no further hedge is sent, the attempts in flight race on,
    /// and if none is left the call fails with that error. By default none.
    pub fn after<M, A2>(self, after: A2) -> Hedging<F, W, A2>
    where
        F: Fallible<M>,
        A2: Fn(&F::Error) -> Option<Duration>,
    {
        self.rehook(|(when, _)| (when, after))
    }

    /// The same call with its hooks replaced by `change`, of any [`When`] and [`After`]
    /// types: what each hook's setter does, and how a [`Pipeline`](crate::call::Pipeline)
    /// lends the hedge its own.
    pub(crate) fn rehook<W2, A2>(
        self,
        change: impl FnOnce((W, A)) -> (W2, A2),
    ) -> Hedging<F, W2, A2> {
        let (when, after) = change((self.when, self.after));
        Hedging {
            shared: self.shared,
            operation: self.operation,
            when,
            after,
        }
    }

    /// The call's future, answering the [`Hedged`] record beside the result.
    pub fn recorded<T, E, Fut>(self) -> Recorded<F, Fut, T, E, W, A>
    where
        F: FnMut() -> Fut,
        Fut: IntoFuture<Output = Result<T, E>>,
        W: When<E>,
        A: After<E>,
    {
        Recorded {
            operation: self.operation,
            when: self.when,
            after: self.after,
            shared: self.shared,
            run: None,
            done: false,
            value: PhantomData,
        }
    }
}

impl<F, Fut, T, E, W, A> IntoFuture for Hedging<F, W, A>
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
    W: When<E>,
    A: After<E>,
{
    type Output = Answer<T, E>;
    type IntoFuture = HedgeFuture<F, Fut, T, E, W, A>;

    fn into_future(self) -> Self::IntoFuture {
        HedgeFuture {
            recorded: self.recorded(),
        }
    }
}

pin_project! {
    /// The future of an awaited [`Hedging`]: the answer alone.
    #[must_use = "a hedge does nothing unless awaited"]
    pub struct HedgeFuture<F, Fut: IntoFuture, T, E, W, A> {
        #[pin]
        recorded: Recorded<F, Fut, T, E, W, A>,
    }
}

impl<F, Fut, T, E, W, A> Future for HedgeFuture<F, Fut, T, E, W, A>
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
    W: When<E>,
    A: After<E>,
{
    type Output = Answer<T, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().recorded.poll(cx).map(|(answer, _)| answer)
    }
}

pin_project! {
    /// The future of [`Hedging::recorded`]: the answer and the [`Hedged`] record.
    ///
    /// The call starts (its clock read, its deadline and its delay taken) when first
    /// polled. Every attempt is a boxed future it owns and polls itself: dropped, it drops
    /// every attempt in flight and its sleeps, and nothing is left running.
    #[must_use = "a hedge does nothing unless awaited"]
    pub struct Recorded<F, Fut: IntoFuture, T, E, W, A> {
        operation: F,
        when: W,
        after: A,
        shared: Arc<Shared>,
        // Started by the first poll.
        run: Option<Run<Fut::IntoFuture, E>>,
        done: bool,
        value: PhantomData<fn() -> T>,
    }
}

/// An attempt in flight: its number, when it started, and its future.
struct Flying<Fut> {
    n: u32,
    at: Duration,
    attempt: Pin<Box<Fut>>,
}

/// One call under way.
struct Run<Fut, E> {
    plan: HedgingPlan,
    start: Duration,
    /// The deadline on the hedge's clock, if the call runs under one.
    deadline: Option<Duration>,
    flying: Vec<Flying<Fut>>,
    /// The sleep until the next hedge, and when it ends: kept while the hedge stays due
    /// then, so that a manual clock is moved once per wait.
    timer: Option<(Duration, Pin<Box<Delay>>)>,
    /// The sleep until the deadline, made only once nothing else can happen first.
    cut: Option<Pin<Box<Delay>>>,
    /// The last failure that let the others race, and its attempt.
    last: Option<(u32, E)>,
    hedged: Hedged,
}

impl<F, Fut, T, E, W, A> Future for Recorded<F, Fut, T, E, W, A>
where
    F: FnMut() -> Fut,
    Fut: IntoFuture<Output = Result<T, E>>,
    W: When<E>,
    A: After<E>,
{
    type Output = (Answer<T, E>, Hedged);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        assert!(!*this.done, "a hedge future polled after it answered");
        let shared = &**this.shared;
        let run = match this.run {
            Some(run) => run,
            None => match Run::begin(shared) {
                Ok(run) => this.run.insert(run),
                Err(refused) => {
                    *this.done = true;
                    return Poll::Ready((refused, Hedged::default()));
                }
            },
        };
        let operation = this.operation;
        let mut next = || operation().into_future();
        let answer = run.drive(cx, shared, &mut next, (&*this.when, &*this.after));
        if answer.is_ready() {
            *this.done = true;
        }
        answer
    }
}

impl<G, T, E> Run<G, E>
where
    G: Future<Output = Result<T, E>>,
{
    /// The call starts now: refused if its deadline has passed, else its plan made with the
    /// delay and the most attempts the hedge says now.
    fn begin(shared: &Shared) -> Result<Self, Answer<T, E>> {
        let now = shared.knobs.clock.now();
        let left = Deadline::left();
        if left.is_some_and(|left| left.is_zero()) {
            return Err(refuse(shared, HedgeReason::Exceeded));
        }
        let (delay, max_attempts) = shared.start();
        let policy = HedgingPolicy {
            max_attempts,
            hedging_delay: delay,
            // Which failures are fatal is the caller's `when`, not a gRPC code.
            non_fatal_status_codes: Codes::EMPTY,
        };
        let deadline = left.map(|left| now.saturating_add(left));
        let plan = HedgingPlan::new(&policy, deadline, now)
            .expect("`Tuning::max_attempts` is held to 2..=5, which A6 accepts");
        Ok(Self {
            plan,
            start: now,
            deadline,
            flying: Vec::new(),
            timer: None,
            cut: None,
            last: None,
            hedged: Hedged {
                delay,
                ..Hedged::default()
            },
        })
    }

    /// Runs the call as far as it goes without waiting: the answer, or pending with every
    /// attempt in flight and the sleep it waits on registered to wake it.
    ///
    /// The order is what makes a manual clock exact: hedges due start first; then the
    /// attempts are polled; only when none has answered is the next hedge's sleep made (on
    /// a manual clock, a move of the clock to it), and only when no hedge is to come the
    /// deadline's.
    fn drive<W: When<E>, A: After<E>>(
        &mut self,
        cx: &mut Context<'_>,
        shared: &Shared,
        next: &mut impl FnMut() -> G,
        hooks: (&W, &A),
    ) -> Poll<(Answer<T, E>, Hedged)> {
        let clock = &shared.knobs.clock;
        loop {
            let now = clock.now();
            // The wait until the next hedge, or why none will be sent.
            let step = match self.plan.send_shared(now, shared.budget.as_deref()) {
                Step::Send(n) => {
                    self.launch(shared, n, now, next());
                    continue;
                }
                Step::Wait(wait) => Ok(wait),
                Step::Halt(stop) => Err(stop),
            };
            if let Some((n, at, result)) = self.ended(cx) {
                match self.settle(shared, n, at, result, hooks) {
                    Some(answer) => return Poll::Ready((answer, self.hedged.clone())),
                    None => continue,
                }
            }
            match step {
                Ok(wait) => {
                    let due = now.saturating_add(wait);
                    let timer = match &mut self.timer {
                        Some((at, timer)) if *at == due => timer,
                        timer => &mut timer.insert((due, Box::pin(clock.sleep(wait)))).1,
                    };
                    if timer.as_mut().poll(cx).is_ready() {
                        self.timer = None;
                        continue;
                    }
                }
                Err(stop) => {
                    self.timer = None;
                    // Nothing in flight and nothing to come (the budget, shared, may have
                    // emptied since the last failure): that failure is the answer. (The
                    // first attempt is always sent, so one has failed; were none, the call
                    // would end as one the deadline cut.)
                    if self.flying.is_empty() {
                        let answer = match self.last.take() {
                            Some((n, error)) => self.failed(shared, n, error, stop),
                            None => self.cut(shared),
                        };
                        return Poll::Ready((answer, self.hedged.clone()));
                    }
                }
            }
            if let Some(deadline) = self.deadline {
                let cut = self
                    .cut
                    .get_or_insert_with(|| Box::pin(clock.sleep(deadline.saturating_sub(now))));
                if cut.as_mut().poll(cx).is_ready() {
                    return Poll::Ready((self.cut(shared), self.hedged.clone()));
                }
            }
            return Poll::Pending;
        }
    }

    /// Starts attempt `n` at `now`.
    fn launch(&mut self, shared: &Shared, n: u32, now: Duration, attempt: G) {
        let elapsed = now.saturating_sub(self.start);
        self.hedged.started.push(elapsed);
        if n == 0 {
            shared.meter.attempt(1);
        } else {
            shared.meter.hedge();
            tracing::debug!(
                name = shared.knobs.name,
                attempt = n.saturating_add(1),
                elapsed = ?elapsed,
                "hedging call"
            );
        }
        self.flying.push(Flying {
            n,
            at: now,
            attempt: Box::pin(attempt),
        });
        // The next hedge's delay counts from now.
        self.timer = None;
    }

    /// The first attempt in flight (first started first) that has ended, taken out.
    fn ended(&mut self, cx: &mut Context<'_>) -> Option<(u32, Duration, Result<T, E>)> {
        self.flying
            .iter_mut()
            .enumerate()
            .find_map(|(i, flying)| match flying.attempt.as_mut().poll(cx) {
                Poll::Ready(result) => Some((i, result)),
                Poll::Pending => None,
            })
            .map(|(i, result)| {
                let flying = self.flying.remove(i);
                (flying.n, flying.at, result)
            })
    }

    /// Attempt `n`, started at `at`, ended with `result`: the answer, or `None` while the
    /// others race on.
    fn settle<W: When<E>, A: After<E>>(
        &mut self,
        shared: &Shared,
        n: u32,
        at: Duration,
        result: Result<T, E>,
        (when, after): (&W, &A),
    ) -> Option<Answer<T, E>> {
        let now = shared.knobs.clock.now();
        // As a timeout reads it: an answer after the deadline is cut all the same.
        if self.deadline.is_some_and(|deadline| now > deadline) {
            return Some(self.cut(shared));
        }
        let budget = shared.budget.as_deref();
        match result {
            Ok(value) => {
                // A success always commits (and gives the budget its ratio back).
                let _commit = self.plan.on_end_shared(n, Ending::Succeeded, now, budget);
                self.flying.clear();
                shared.measured(now.saturating_sub(at));
                self.hedged.answered_by = Some(n);
                shared.meter.ended(None);
                shared.decisions.admitted();
                Some(Ok(value))
            }
            Err(error) => {
                let fatal = !when.retryable(&error);
                // A wait of `Duration::MAX` is never: A6's pushback that says stop, so the
                // attempts in flight race on and none is sent after them (a wait so long
                // would otherwise leave the call waiting on nothing).
                let pushback = match after.named(&error) {
                    None => Pushback::Absent,
                    Some(Duration::MAX) => Pushback::Halt,
                    Some(wait) => Pushback::Wait(wait),
                };
                let end = Ending::Failed { fatal, pushback };
                match self.plan.on_end_shared(n, end, now, budget) {
                    Verdict::Commit { .. } => {
                        Some(self.failed(shared, n, error, Halt::NotRetryable))
                    }
                    Verdict::Fail(stop) => Some(self.failed(shared, n, error, stop)),
                    Verdict::Pending | Verdict::Ignored => {
                        self.last = Some((n, error));
                        None
                    }
                }
            }
        }
    }

    /// The call fails with attempt `n`'s `error`, no more hedges sent for `stop`.
    fn failed(&mut self, shared: &Shared, n: u32, error: E, stop: Halt) -> Answer<T, E> {
        self.flying.clear();
        self.hedged.answered_by = Some(n);
        self.hedged.stop = Some(stop);
        shared.meter.ended(Some(stop));
        shared.decisions.admitted();
        // A refusal to hedge again is an answer, not an error.
        tracing::debug!(
            name = shared.knobs.name,
            attempts = self.hedged.attempts(),
            attempt = n.saturating_add(1),
            stop = %stop,
            "not hedging"
        );
        Err(CallError::Failed(error))
    }

    /// The deadline passed with no answer: every attempt in flight is dropped.
    fn cut(&mut self, shared: &Shared) -> Answer<T, E> {
        self.flying.clear();
        self.hedged.stop = Some(Halt::Deadline);
        refuse(
            shared,
            HedgeReason::Elapsed {
                attempts: self.hedged.attempts(),
            },
        )
    }
}

/// Counts and reports a refusal: the deadline passed, before the call or during it.
#[cold]
fn refuse<T, E>(shared: &Shared, reason: HedgeReason) -> Answer<T, E> {
    shared.meter.ended(Some(Halt::Deadline));
    shared.decisions.refused(reason.index());
    tracing::debug!(
        name = shared.knobs.name,
        outcome = "refused",
        reason = reason.as_str(),
        numbers = ?reason,
        "hedge refused a call"
    );
    Err(CallError::Refused(reason))
}

impl<F, W: fmt::Debug, A: fmt::Debug> fmt::Debug for Hedging<F, W, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hedging")
            .field("name", &self.shared.knobs.name)
            .field("when", &self.when)
            .field("after", &self.after)
            .finish_non_exhaustive()
    }
}

impl<F, Fut: IntoFuture, T, E, W, A> fmt::Debug for Recorded<F, Fut, T, E, W, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorded")
            .field("hedged", &self.run.as_ref().map(|run| &run.hedged))
            .finish_non_exhaustive()
    }
}

impl<F, Fut: IntoFuture, T, E, W, A> fmt::Debug for HedgeFuture<F, Fut, T, E, W, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.recorded.fmt(f)
    }
}
