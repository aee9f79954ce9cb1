//! The response future of [`DeadlineService`](super::DeadlineService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use super::DeadlineExceeded;
use crate::Mode;
use crate::meter::Meter;

pin_project! {
    /// The response future of [`DeadlineService`](super::DeadlineService): the inner future
    /// raced against the request's deadline.
    ///
    /// The inner future is polled first, so a response ready at the deadline is delivered;
    /// after that the sleep, and when it fires the future resolves to [`DeadlineExceeded`],
    /// boxed. Without a deadline it is the inner future with its error boxed. In
    /// [`Mode::Shadow`] there is no sleep: the inner future runs to its end, and is reported
    /// as `shadowed` (reason `elapsed`) if that end came after the deadline.
    ///
    /// A call with a deadline is counted when it ends: `admitted` if the inner service
    /// answered in time (or the future was dropped before the deadline), `elapsed` if not.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::pending;
    /// use std::time::Duration;
    /// use ironward_tower::{DeadlineExceeded, DeadlineFuture, DeadlineLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let never = service_fn(|_: http::Request<()>| pending::<Result<(), DeadlineExceeded>>());
    /// let mut service = DeadlineLayer::new(Duration::from_millis(50)).layer(never);
    /// let future: DeadlineFuture<_> = service.call(http::Request::new(()));
    /// assert!(future.await.unwrap_err().is::<DeadlineExceeded>());
    /// # }
    /// ```
    pub struct DeadlineFuture<F> {
        #[pin]
        state: State<F>,
        // What the call is counted as when it ends; `None` once it is counted, or when it
        // was counted on arrival (no deadline, or a time already spent).
        watch: Option<Watch>,
    }

    impl<F> PinnedDrop for DeadlineFuture<F> {
        fn drop(this: Pin<&mut Self>) {
            // Dropped before it ended (the caller gave up): counted by the clock.
            if let Some(watch) = this.project().watch.take() {
                watch.settle(Instant::now());
            }
        }
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Running {
            #[pin]
            future: F,
            // When the enforcing race cuts the call: `None` for no deadline, and in shadow
            // mode, which never cuts one.
            cut: Option<Instant>,
            // The timer of `cut`, made by the first poll that finds the inner future pending:
            // a call answered at once (most are) makes none, and `sleep_until` reads no clock,
            // so making it later changes nothing of when it wakes.
            #[pin]
            sleep: Option<Sleep>,
        },
        Exceeded,
        // A shadowed request whose time had run out when it arrived: the inner future, with
        // nothing left to decide.
        Shadowed {
            #[pin]
            future: F,
        },
    }
}

/// A call with a deadline, to be counted when it ends.
struct Watch {
    source: Source,
    mode: Mode,
    end: Instant,
    budget: Duration,
}

/// What a [`Watch`] counts through: with the `metrics` feature, the layer's meter, whose
/// counters its end lands on. One reference is two atomic operations a call; copies of the
/// two counter handles it would land on made the future larger, and moving it cost more
/// (callgrind, a no-op recorder), and with counting handles two reference counts each.
#[cfg(feature = "metrics")]
type Source = Arc<Meter>;

/// What a [`Watch`] counts through: without the `metrics` feature, nothing but the layer's
/// name, which its `tracing` event reads.
#[cfg(not(feature = "metrics"))]
type Source = &'static str;

impl Watch {
    /// Counts the call as admitted.
    fn admitted(&self) {
        #[cfg(feature = "metrics")]
        self.source.admitted();
    }

    /// Counts the call as elapsed.
    fn refused(&self) {
        #[cfg(feature = "metrics")]
        self.source.refused(super::service::ELAPSED);
    }

    /// The name of the layer, for the `tracing` event.
    fn name(&self) -> &'static str {
        #[cfg(feature = "metrics")]
        return self.source.name();
        #[cfg(not(feature = "metrics"))]
        self.source
    }

    /// The inner service answered. An enforcing race that gets here was not lost, so the
    /// call was in time and no clock is read; a shadow one reads the clock.
    fn answered(&self) {
        match self.mode {
            Mode::Enforce => self.admitted(),
            Mode::Shadow => self.settle(Instant::now()),
        }
    }

    /// The call ended at `now`: in time if that is no later than the deadline, as the
    /// enforcing race delivers a response ready at it.
    fn settle(&self, now: Instant) {
        if now > self.end {
            self.elapsed(now);
        } else {
            self.admitted();
        }
    }

    /// The deadline passed inside the call, which the enforcing layer cuts at `now` and the
    /// shadow one let run until `now`.
    fn elapsed(&self, now: Instant) {
        self.refused();
        tracing::debug!(
            name = self.name(),
            outcome = self.mode.refusal(),
            budget = ?self.budget,
            over = ?now.saturating_duration_since(self.end),
            "deadline ran out inside a call"
        );
    }
}

impl<F> DeadlineFuture<F> {
    /// The inner future, raced against `end` unless `mode` is shadow; counted through
    /// `meter` when it ends. Without a deadline, counted already.
    pub(crate) fn new(
        future: F,
        end: Option<Instant>,
        budget: Duration,
        meter: &Arc<Meter>,
    ) -> Self {
        Self {
            state: State::Running {
                future,
                cut: end.filter(|_| meter.mode() == Mode::Enforce),
                sleep: None,
            },
            watch: end.map(|end| Watch {
                #[cfg(feature = "metrics")]
                source: Arc::clone(meter),
                #[cfg(not(feature = "metrics"))]
                source: meter.name(),
                mode: meter.mode(),
                end,
                budget,
            }),
        }
    }

    pub(crate) fn exceeded() -> Self {
        Self {
            state: State::Exceeded,
            watch: None,
        }
    }

    /// The inner future of a request a shadow deadline found out of time.
    pub(crate) fn shadowed(future: F) -> Self {
        Self {
            state: State::Shadowed { future },
            watch: None,
        }
    }
}

impl<F, T, E> Future for DeadlineFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Output = Result<T, Box<dyn std::error::Error + Send + Sync>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.poll_timed(cx).map(|timed| match timed {
            Ok(output) => output.map_err(Into::into),
            Err(exceeded) => Err(exceeded.into()),
        })
    }
}

impl<F: Future> DeadlineFuture<F> {
    /// The inner future, run with no deadline: what a stack without one runs.
    pub(crate) fn bare(future: F) -> Self {
        Self {
            state: State::Running {
                future,
                cut: None,
                sleep: None,
            },
            watch: None,
        }
    }

    /// The inner future's output as it is, or the deadline's refusal: the race, apart from
    /// what a caller makes of the inner error.
    pub(crate) fn poll_timed(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<F::Output, DeadlineExceeded>> {
        let this = self.project();
        match this.state.project() {
            StateProj::Running {
                future,
                cut,
                mut sleep,
            } => {
                if let Poll::Ready(output) = future.poll(cx) {
                    // Counted in place and then forgotten: moving the watch out would copy it.
                    if let Some(watch) = this.watch.as_ref() {
                        watch.answered();
                    }
                    *this.watch = None;
                    return Poll::Ready(Ok(output));
                }
                if let (None, Some(end)) = (sleep.as_ref().get_ref(), *cut) {
                    sleep.set(Some(tokio::time::sleep_until(end)));
                }
                match sleep.as_pin_mut().map(|sleep| sleep.poll(cx)) {
                    Some(Poll::Ready(())) => {
                        if let Some(watch) = this.watch.take() {
                            watch.elapsed(Instant::now());
                        }
                        Poll::Ready(Err(DeadlineExceeded::new()))
                    }
                    _ => Poll::Pending,
                }
            }
            StateProj::Exceeded => Poll::Ready(Err(DeadlineExceeded::new())),
            StateProj::Shadowed { future } => future.poll(cx).map(Ok),
        }
    }
}

impl<F> fmt::Debug for DeadlineFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Exceeded => f.write_str("DeadlineFuture(exceeded)"),
            State::Shadowed { .. } => f.write_str("DeadlineFuture(shadowed)"),
            State::Running { .. } => f
                .debug_struct("DeadlineFuture")
                .field("deadline", &self.watch.as_ref().map(|watch| watch.end))
                .finish(),
        }
    }
}
