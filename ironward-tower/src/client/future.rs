//! [`ClientFuture`]: one call through the stack, from its first attempt to its last.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::{Request, Response};
use ironward::Criticality;
use ironward::http_retry::{Fault, Run, Step, Stop, StopReason, Timeout};
use ironward_tokio::{Admission, LimiterPermit, LimiterRefusal, SharedCircuitBreaker, Waiter};
use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tower::BoxError;
use tower_service::Service;

use super::layer::Pieces;
use crate::classify::Grade;
use crate::criticality::ReadCriticality;
use crate::limiter::Flight;
use crate::retry::{
    ClassifyError, Ended, Last, begin, copy, finish, judge, reading, stopped, waiting,
};
use crate::{BreakerRefused, Classify, DeadlineFuture, LimiterRefused, Mode};

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

/// What a call holds besides its state: the service and request of the next attempt, the
/// retry's run, and the permits of the attempt in flight.
pub(crate) struct Ride<S, B, BB: SharedCircuitBreaker, LC>
where
    S: Service<Request<B>>,
{
    service: S,
    /// Whether `service` is ready: the one `call` was given is, a retry's is not yet.
    ready: bool,
    /// The request, copied for each attempt with a retry, sent as it is without one.
    request: Option<Request<B>>,
    run: Option<Run>,
    last: Last<S::Response>,
    class: Criticality,
    permit: Option<BB::Permit>,
    flight: Option<Flight<LC>>,
}

/// When an attempt is cut off: never (no retry, or no attempt timeout), its timeout after
/// it starts waiting, or at the end its readiness already counted towards.
#[derive(Clone, Copy)]
enum Cut {
    Never,
    After(Duration),
    At(tokio::time::Instant),
}

/// What the call does next, as the pieces decided.
enum Next<Res> {
    Queue(Waiter),
    Send(Option<Timeout>),
    Wait(ironward_tokio::Delay),
    Over(Result<Res, BoxError>),
}

/// How an attempt ended, before it is settled.
enum Raw<Res, E> {
    Response(Res),
    Error(E),
    TimedOut(Option<Timeout>),
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
        request: Request<B>,
        pieces: Arc<Pieces<F, BC, BB, LC, LQ>>,
    ) -> Self
    where
        LQ: ReadCriticality<Request<B>>,
    {
        let class = pieces
            .limiter
            .as_ref()
            .map_or(Criticality::default(), |(_, source)| {
                source.criticality(&request)
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
            class,
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

    /// Asks the breaker and then the limiter for the next attempt at `now`, and, if both
    /// let it through, the retry's run.
    fn admit<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        now: Duration,
    ) -> Next<Response<ResB>> {
        if let Some(shared) = &pieces.breaker {
            match shared.check_at(now) {
                Ok(permit) => {
                    shared.meter.admitted();
                    self.permit = Some(permit);
                }
                Err(reason) => {
                    shared.refused(&reason);
                    if shared.mode() == Mode::Enforce {
                        return self.breaker_refused(pieces, reason, now);
                    }
                }
            }
        }
        if let Some((shared, _)) = &pieces.limiter {
            match shared.limiter.admit_at(now, self.class) {
                Admission::Admitted(permit) => {
                    shared.meter.admitted_as(self.class);
                    self.flight = Some(Flight::new(permit, Arc::clone(shared)));
                }
                Admission::Queued(waiter) => return Next::Queue(waiter),
                Admission::Refused(refusal) => return self.limiter_refused(pieces, refusal),
            }
        }
        self.go(pieces, now)
    }

    /// The limiter's answer to a queued attempt: a permit, or the refusal.
    fn queued<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        admitted: Result<LimiterPermit, LimiterRefusal>,
    ) -> Next<Response<ResB>> {
        let Some((shared, _)) = &pieces.limiter else {
            return self.go(pieces, pieces.now());
        };
        match admitted {
            Ok(permit) => {
                shared.meter.admitted_as(permit.criticality());
                self.flight = Some(Flight::new(permit, Arc::clone(shared)));
                // The queue took time: the attempt is asked for on a reading of its own.
                self.go(pieces, pieces.now())
            }
            Err(refusal) => self.limiter_refused(pieces, refusal),
        }
    }

    /// The limiter refused the attempt: it is not sent, the breaker's permit is dropped
    /// unsettled (the backend said nothing), and the call ends.
    fn limiter_refused<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        refusal: LimiterRefusal,
    ) -> Next<Response<ResB>> {
        if let Some((shared, _)) = &pieces.limiter {
            shared.refused(&refusal);
        }
        self.permit = None;
        self.refused(pieces, Box::new(LimiterRefused::new(refusal)))
    }

    /// The breaker refused the attempt with `reason` at `now`. A refusal that says when the
    /// breaker lets a call through again (a classic breaker, open) is decided by the retry
    /// as the `503` with that `Retry-After` it stands for; any other ends the call.
    fn breaker_refused<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        reason: BB::Reason,
        now: Duration,
    ) -> Next<Response<ResB>> {
        let wait = BB::retry_after(&reason);
        let refused: BoxError = Box::new(BreakerRefused::new(reason).with_retry_after(wait));
        let (Some(config), Some(run), Some(wait)) = (&pieces.retry, &mut self.run, wait) else {
            return self.refused(pieces, refused);
        };
        if let Err(stop) = run.attempt(now, config.attempt_timeout) {
            return self.stop(pieces, stop);
        }
        config.meter.attempt(run.retried().attempts);
        // RFC 9110 §10.2.3: delay-seconds, whole seconds, rounded up so no retry comes early.
        let seconds = wait
            .as_secs()
            .saturating_add(u64::from(wait.subsec_nanos() > 0));
        let mut field = itoa::Buffer::new();
        let field = field.format(seconds).as_bytes();
        let reading = reading(config, now, true);
        let step = run.response_shared(503, [field], reading, config.budget());
        self.last = Last::Error(refused);
        self.step(pieces, step)
    }

    /// A piece refused the attempt with `refused`: the call ends with it, inside a
    /// [`GaveUp`](crate::GaveUp) with a retry ([`Stop::Refused`]), the last failed response
    /// kept if there was one.
    fn refused<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        refused: BoxError,
    ) -> Next<Response<ResB>> {
        let Some(run) = &mut self.run else {
            return Next::Over(Err(refused));
        };
        let stop = run.refused();
        if !matches!(self.last, Last::Response(_)) {
            self.last = Last::Error(refused);
        }
        self.stop(pieces, stop)
    }

    /// The pieces let the attempt through at `now`: the retry's run gives it its timeout, or
    /// stops (its budget spent), dropping the permits unused.
    fn go<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        now: Duration,
    ) -> Next<Response<ResB>> {
        let (Some(config), Some(run)) = (&pieces.retry, &mut self.run) else {
            return Next::Send(None);
        };
        match run.attempt(now, config.attempt_timeout) {
            Ok(timeout) => {
                config.meter.attempt(run.retried().attempts);
                // The attempt is going ahead: the failure it replaces is not needed.
                self.last = Last::None;
                Next::Send(Some(timeout))
            }
            Err(stop) => {
                self.permit = None;
                self.flight = None;
                self.stop(pieces, stop)
            }
        }
    }

    /// The next attempt's future: a copy of the request with a retry, the request itself
    /// without one.
    fn send(&mut self) -> Result<S::Future, BoxError> {
        let request = match (&self.run, self.request.take()) {
            (Some(_), Some(request)) => {
                let attempt = copy(&request);
                self.request = Some(request);
                attempt
            }
            (None, Some(request)) => request,
            // Without a retry there is one attempt, and it has its request.
            (_, None) => return Err("the client stack has no request left to send".into()),
        };
        Ok(self.service.call(request))
    }

    /// The attempt ended as `raw` says: the limiter, the breaker and the retry settle it on
    /// one reading of the clock, innermost first.
    fn ended<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        raw: Raw<Response<ResB>, S::Error>,
    ) -> Next<Response<ResB>>
    where
        F: ClassifyError<S::Error>,
        BC: Classify<Response<ResB>>,
    {
        let now = pieces.now();
        let mut fault = Fault::Final;
        let mut timed_out = None;
        let result: Result<Response<ResB>, BoxError> = match raw {
            Raw::Response(response) => Ok(response),
            Raw::Error(error) => {
                if let Some(config) = &pieces.retry {
                    fault = config.errors.fault(&error);
                }
                Err(error.into())
            }
            // As tower's `Timeout` reports it, which the classifiers read as a timeout.
            Raw::TimedOut(timeout) => {
                timed_out = timeout;
                Err(Box::new(tower::timeout::error::Elapsed::new()))
            }
        };
        if let Some(mut flight) = self.flight.take() {
            flight.land_at(&result, now);
        }
        if let (Some(permit), Some(shared)) = (self.permit.take(), &pieces.breaker) {
            shared.settle_at(permit, &result, now);
        }
        let (Some(config), Some(run)) = (&pieces.retry, &mut self.run) else {
            return Next::Over(result);
        };
        let ended = match (result, timed_out) {
            (_, Some(timeout)) => Ended::TimedOut(timeout),
            (Ok(response), None) => Ended::Response(response),
            (Err(error), None) => Ended::Error(fault, error),
        };
        match judge(config, run, &mut self.last, ended, now) {
            Ok(response) => Next::Over(Ok(response)),
            Err(step) => self.step(pieces, step),
        }
    }

    /// Follows the retry's `step`: a wait before the next attempt, or the end.
    fn step<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        step: Step,
    ) -> Next<Response<ResB>> {
        match step {
            Step::Wait(wait) => match (&pieces.retry, &self.run, &self.request) {
                (Some(config), Some(run), Some(request)) => {
                    Next::Wait(waiting(config, request, run, &self.last, wait))
                }
                _ => self.stop(pieces, StopReason::NotRetryable.into()),
            },
            Step::Stop(stop) => self.stop(pieces, stop),
            // Only a response is done, and it was returned as it came.
            Step::Done => self.stop(pieces, StopReason::NotRetryable.into()),
        }
    }

    /// The retry's run stopped for `stop`: the last failed response, or a `GaveUp`.
    fn stop<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        stop: Stop,
    ) -> Next<Response<ResB>> {
        let (Some(config), Some(run)) = (&pieces.retry, &self.run) else {
            let last = std::mem::replace(&mut self.last, Last::None);
            return Next::Over(match last {
                Last::Response(response) => Ok(response),
                Last::Error(error) => Err(error),
                Last::TimedOut(_) | Last::None => Err("the client stack stopped".into()),
            });
        };
        if let Some(request) = &self.request {
            stopped(config, request, run, stop);
        }
        Next::Over(finish(config, run, &mut self.last, stop))
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
