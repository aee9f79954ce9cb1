//! [`Ride`]: what a call through the client stack holds besides its state, and the pieces'
//! decisions on it, attempt after attempt.

use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use ironward::http_retry::{Fault, Run, Step, Stop, StopReason, Timeout};
use ironward_tokio::{Admission, LimiterPermit, LimiterRefusal, SharedCircuitBreaker, Waiter};
use tower::BoxError;
use tower_service::Service;

use super::layer::Pieces;
use crate::classify::Grade;
use crate::limiter::{Flight, Pass};
use crate::retry::{ClassifyError, Ended, Last, copy, finish, judge, reading, stopped, waiting};
use crate::{BreakerRefused, Classify, LimiterRefused, Mode};

/// What a call holds besides its state: the service and request of the next attempt, the
/// retry's run, and the permits of the attempt in flight.
pub(super) struct Ride<S, B, BB: SharedCircuitBreaker, LC>
where
    S: Service<Request<B>>,
{
    pub(super) service: S,
    /// Whether `service` is ready: the one `call` was given is, a retry's is not yet.
    pub(super) ready: bool,
    /// The request, copied for each attempt with a retry, sent as it is without one.
    pub(super) request: Option<Request<B>>,
    pub(super) run: Option<Run>,
    pub(super) last: Last<S::Response>,
    /// How the limiter takes each attempt: read once, from the request as it came.
    pub(super) pass: Pass,
    pub(super) permit: Option<BB::Permit>,
    pub(super) flight: Option<Flight<LC>>,
}

/// What the call does next, as the pieces decided.
pub(super) enum Next<Res> {
    Queue(Waiter),
    Send(Option<Timeout>),
    Wait(ironward_tokio::Delay),
    Over(Result<Res, BoxError>),
}

/// How an attempt ended, before it is settled.
pub(super) enum Raw<Res, E> {
    Response(Res),
    Error(E),
    TimedOut(Option<Timeout>),
}

impl<S, B, ResB, BB, LC> Ride<S, B, BB, LC>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<BoxError>,
    B: Clone,
    BB: SharedCircuitBreaker,
    LC: Grade<Response<ResB>>,
{
    /// Asks the breaker and then the limiter for the next attempt at `now`, and, if both
    /// let it through, the retry's run.
    pub(super) fn admit<F, BC, LQ>(
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
            match shared.admit_at(self.pass, Some(now)) {
                Admission::Admitted(permit) => {
                    self.flight = Some(Flight::new(permit, Arc::clone(shared)));
                }
                Admission::Queued(waiter) => return Next::Queue(waiter),
                Admission::Refused(refusal) => return self.limiter_refused(pieces, refusal),
            }
        }
        self.go(pieces, now)
    }

    /// The limiter's answer to a queued attempt: a permit, or the refusal.
    pub(super) fn queued<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        admitted: Result<LimiterPermit, LimiterRefusal>,
    ) -> Next<Response<ResB>> {
        let Some((shared, _)) = &pieces.limiter else {
            return self.go(pieces, pieces.now());
        };
        shared.waited(&admitted);
        match admitted {
            Ok(permit) => {
                self.flight = Some(Flight::new(permit, Arc::clone(shared)));
                // The queue took time: the attempt is asked for on a reading of its own.
                self.go(pieces, pieces.now())
            }
            Err(refusal) => self.limiter_refused(pieces, refusal),
        }
    }

    /// The limiter refused the attempt (its shared state reported it): it is not sent, the
    /// breaker's permit is dropped unsettled (the backend said nothing), and the call ends.
    fn limiter_refused<F, BC, LQ>(
        &mut self,
        pieces: &Pieces<F, BC, BB, LC, LQ>,
        refusal: LimiterRefusal,
    ) -> Next<Response<ResB>> {
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
    pub(super) fn send(&mut self) -> Result<S::Future, BoxError> {
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
    pub(super) fn ended<F, BC, LQ>(
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
