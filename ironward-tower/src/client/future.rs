//! [`ClientFuture`]: one call through the stack, from its first attempt to its last.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::{Request, Response};
use ironward::Criticality;
use ironward::http_retry::{Run, Timeout};
use ironward_tokio::{SharedCircuitBreaker, Waiter};
use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tower::BoxError;
use tower_service::Service;

use super::layer::Pieces;
use super::ride::{Next, Raw, Ride};
use crate::classify::Grade;
use crate::limiter::{Pass, ReadPass};
use crate::retry::{ClassifyError, Last, begin};
use crate::{Classify, DeadlineFuture};

pin_project! {
    /// The response future of a [`ClientService`](crate::ClientService): the call under its
    /// deadline, attempt after attempt.
    ///
    /// One future for every piece: it holds the deadline's timer, the retry's run, the
    /// breaker's permit and the limiter's permit of the attempt in flight, and the wait
    /// between attempts. Each attempt ends on one reading of the clock, on which the
    /// limiter, the breaker and the retry settle it, in that order (innermost first).
    ///
    /// Dropped before it completes (the caller gave up), it releases the limiter's permit
    /// unsampled and leaves the breaker's unsettled, as the pieces' own futures do: a call
    /// cancelled from outside says nothing about the backend.
    pub struct ClientFuture<S, B, F, BC, BB, LC, LQ>
    where
        S: Service<Request<B>>,
        BB: SharedCircuitBreaker,
    {
        #[pin]
        inner: DeadlineFuture<Trip<S, B, F, BC, BB, LC, LQ>>,
    }
}

impl<S, B, F, BC, BB, LC, LQ> ClientFuture<S, B, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>>,
    BB: SharedCircuitBreaker,
{
    pub(super) fn new(inner: DeadlineFuture<Trip<S, B, F, BC, BB, LC, LQ>>) -> Self {
        Self { inner }
    }
}

impl<S, B, ResB, F, BC, BB, LC, LQ> Future for ClientFuture<S, B, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<BoxError>,
    B: Clone,
    F: ClassifyError<S::Error>,
    BC: Classify<Response<ResB>>,
    BB: SharedCircuitBreaker,
    LC: Grade<Response<ResB>>,
{
    type Output = Result<Response<ResB>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx)
    }
}

impl<S, B, F, BC, BB, LC, LQ> fmt::Debug for ClientFuture<S, B, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>>,
    BB: SharedCircuitBreaker,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientFuture")
            .field("inner", &self.inner)
            .finish()
    }
}

pin_project! {
    /// The call inside the deadline: the retry's loop over attempts, each asked of the
    /// breaker and the limiter.
    pub(crate) struct Trip<S, B, F, BC, BB, LC, LQ>
    where
        S: Service<Request<B>>,
        BB: SharedCircuitBreaker,
    {
        #[pin]
        state: State<S::Future, S::Response>,
        ride: Ride<S, B, BB, LC>,
        pieces: Arc<Pieces<F, BC, BB, LC, LQ>>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<Fut, Res> {
        /// The limiter queued the attempt.
        Queued { waiter: Waiter },
        /// Driving the inner service's readiness before a retry, under the attempt's timeout.
        Readying {
            timeout: Option<Timeout>,
            #[pin]
            cut: Option<Sleep>,
        },
        /// An attempt in flight, under its timeout, whose timer is made by the first poll
        /// that finds the attempt pending (an answer ready at once makes none).
        Calling {
            timeout: Option<Timeout>,
            limit: Cut,
            #[pin]
            future: Fut,
            #[pin]
            cut: Option<Sleep>,
        },
        /// The wait before a retry, on the retry's clock.
        Waiting {
            #[pin]
            sleep: ironward_tokio::Delay,
        },
        /// The call's outcome, returned once.
        Over { output: Option<Result<Res, BoxError>> },
    }
}

/// When an attempt is cut off: never (no retry, or no attempt timeout), its timeout after
/// it starts waiting, or at the end its readiness already counted towards.
#[derive(Clone, Copy)]
enum Cut {
    Never,
    After(Duration),
    At(tokio::time::Instant),
}

impl<S, B, ResB, F, BC, BB, LC, LQ> Trip<S, B, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<BoxError>,
    B: Clone,
    F: ClassifyError<S::Error>,
    BC: Classify<Response<ResB>>,
    BB: SharedCircuitBreaker,
    LC: Grade<Response<ResB>>,
{
    /// The call of `request` on the ready `service`, its first attempt decided now, on one
    /// reading of the clock.
    pub(super) fn start(
        service: S,
        mut request: Request<B>,
        pieces: Arc<Pieces<F, BC, BB, LC, LQ>>,
    ) -> Self
    where
        LQ: ReadPass<Request<B>>,
    {
        let pass = pieces
            .limiter
            .as_ref()
            .map_or(Pass::Counted(Criticality::default()), |(_, source)| {
                source.pass(&mut request)
            });
        let now = pieces.now();
        let run = pieces
            .retry
            .as_ref()
            .map(|config| begin(config, &request, now));
        let mut ride = Ride {
            service,
            ready: true,
            request: Some(request),
            run,
            last: Last::None,
            pass,
            permit: None,
            flight: None,
        };
        let next = ride.admit(&pieces, now);
        let state = ride.state(next);
        Self {
            state,
            ride,
            pieces,
        }
    }
}

impl<S, B, ResB, F, BC, BB, LC, LQ> Future for Trip<S, B, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<BoxError>,
    B: Clone,
    F: ClassifyError<S::Error>,
    BC: Classify<Response<ResB>>,
    BB: SharedCircuitBreaker,
    LC: Grade<Response<ResB>>,
{
    type Output = Result<Response<ResB>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let pieces: &Pieces<F, BC, BB, LC, LQ> = this.pieces;
        loop {
            let next = match this.state.as_mut().project() {
                StateProj::Queued { waiter } => {
                    let admitted = ready!(Pin::new(waiter).poll(cx));
                    this.ride.queued(pieces, admitted)
                }
                StateProj::Readying { timeout, cut } => match this.ride.service.poll_ready(cx) {
                    Poll::Ready(Ok(())) => {
                        let timeout = *timeout;
                        let end = cut.as_ref().get_ref().as_ref().map(Sleep::deadline);
                        match this.ride.send() {
                            Ok(future) => {
                                this.state.set(State::Calling {
                                    timeout,
                                    limit: end.map_or(Cut::Never, Cut::At),
                                    future,
                                    cut: None,
                                });
                                continue;
                            }
                            Err(error) => Next::Over(Err(error)),
                        }
                    }
                    Poll::Ready(Err(error)) => this.ride.ended(pieces, Raw::Error(error)),
                    Poll::Pending => {
                        let Some(cut) = cut.as_pin_mut() else {
                            return Poll::Pending;
                        };
                        ready!(cut.poll(cx));
                        this.ride.ended(pieces, Raw::TimedOut(*timeout))
                    }
                },
                StateProj::Calling {
                    timeout,
                    limit,
                    future,
                    mut cut,
                } => match future.poll(cx) {
                    Poll::Ready(Ok(response)) => this.ride.ended(pieces, Raw::Response(response)),
                    Poll::Ready(Err(error)) => this.ride.ended(pieces, Raw::Error(error)),
                    Poll::Pending => {
                        if cut.is_none() {
                            match *limit {
                                Cut::Never => return Poll::Pending,
                                Cut::After(after) => cut.set(Some(tokio::time::sleep(after))),
                                Cut::At(end) => cut.set(Some(tokio::time::sleep_until(end))),
                            }
                        }
                        let Some(cut) = cut.as_pin_mut() else {
                            return Poll::Pending;
                        };
                        ready!(cut.poll(cx));
                        this.ride.ended(pieces, Raw::TimedOut(*timeout))
                    }
                },
                StateProj::Waiting { sleep } => {
                    ready!(sleep.poll(cx));
                    // The check the rules ask for after waking is the next attempt's.
                    this.ride.admit(pieces, pieces.now())
                }
                StateProj::Over { output } => {
                    // Polled again after it returned: it has nothing more to give.
                    return match output.take() {
                        Some(output) => Poll::Ready(output),
                        None => Poll::Pending,
                    };
                }
            };
            let state = this.ride.state(next);
            this.state.set(state);
        }
    }
}

impl<S, B, ResB, BB, LC> Ride<S, B, BB, LC>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<BoxError>,
    B: Clone,
    BB: SharedCircuitBreaker,
    LC: Grade<Response<ResB>>,
{
    /// The state that does `next`: an attempt the pieces let through is sent at once on a
    /// ready service, else after the service's readiness.
    fn state(&mut self, next: Next<Response<ResB>>) -> State<S::Future, Response<ResB>> {
        match next {
            Next::Queue(waiter) => State::Queued { waiter },
            Next::Send(timeout) => {
                if !std::mem::replace(&mut self.ready, false) {
                    let cut = timeout.map(|timeout| tokio::time::sleep(timeout.duration()));
                    return State::Readying { timeout, cut };
                }
                match self.send() {
                    Ok(future) => State::Calling {
                        timeout,
                        limit: timeout.map_or(Cut::Never, |timeout| Cut::After(timeout.duration())),
                        future,
                        cut: None,
                    },
                    Err(error) => State::Over {
                        output: Some(Err(error)),
                    },
                }
            }
            Next::Wait(sleep) => State::Waiting { sleep },
            Next::Over(output) => State::Over {
                output: Some(output),
            },
        }
    }
}

impl<S, B, F, BC, BB, LC, LQ> fmt::Debug for Trip<S, B, F, BC, BB, LC, LQ>
where
    S: Service<Request<B>>,
    BB: SharedCircuitBreaker,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Queued { .. } => "queued",
            State::Readying { .. } => "readying",
            State::Calling { .. } => "calling",
            State::Waiting { .. } => "waiting",
            State::Over { .. } => "over",
        };
        f.debug_struct("Trip")
            .field("state", &state)
            .field("retried", &self.ride.run.as_ref().map(Run::retried))
            .finish_non_exhaustive()
    }
}
