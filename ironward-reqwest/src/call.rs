//! One call through the middleware, attempt by attempt: the core's [`Run`] decides, this reads
//! reqwest's request and answers and does what the run says.

use std::fmt;
use std::time::Duration;

use http::header::RETRY_AFTER;
use http::{Extensions, HeaderValue};
use ironward::http_retry::{Call, Retried, Run, Step, Stop, StopReason, vouches};
use ironward_tokio::SharedCircuitBreaker;
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next};

use crate::classify::{self, Verdict};
use crate::error::into_middleware;
use crate::{GaveUp, RetryMiddleware};

#[async_trait::async_trait]
impl<B: SharedCircuitBreaker> Middleware for RetryMiddleware<B> {
    async fn handle(
        &self,
        req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        // A copy for the next attempt; none for a streaming body, which is then sent once.
        let mut spare = req.try_clone();
        let key = self
            .idempotency_header
            .as_ref()
            .and_then(|name| req.headers().get(name));
        let call = Call {
            method: req.method().as_str(),
            body_replayable: spare.is_some(),
            replay_safe: vouches(key.map(HeaderValue::as_bytes)),
        };
        // The clock is read when the call starts, which is when its first attempt is asked
        // for too, when each attempt ends, and after each wait, for the attempt it was for.
        let mut asked = self.knobs.clock.now();
        let mut run = Run::new(self.settings, &call, asked);
        let mut request = req;
        let mut last: Option<Failed> = None;
        loop {
            let permit = match &self.breaker {
                None => None,
                Some(breaker) => match breaker.allow() {
                    Some(permit) => Some(permit),
                    None => {
                        let stop = run.refused();
                        return self.give_up(last, run.retried(), stop);
                    }
                },
            };
            // An attempt the run refuses is not sent: its permit is dropped unsettled.
            let timeout = match run.attempt(asked, self.attempt_timeout) {
                Ok(timeout) => timeout,
                Err(stop) => return self.give_up(last, run.retried(), stop),
            };
            self.meter.attempt(run.retried().attempts);
            // The attempt is going ahead: the failed response it replaces is no longer needed.
            drop(last.take());
            let sent = next.clone().run(request, extensions);
            let result = tokio::time::timeout(timeout.duration(), sent).await;
            let now = self.knobs.clock.now();
            let settle = |verdict| {
                if let (Some(breaker), Some(permit)) = (&self.breaker, permit) {
                    breaker.settle(permit, verdict);
                }
            };
            let (step, failed) = match result {
                Ok(Ok(response)) => {
                    let status = response.status();
                    settle(Verdict::of_status(status));
                    let reading = self.reading(now, status.as_u16() >= 400);
                    let retry_after = response.headers().get_all(RETRY_AFTER);
                    let fields = retry_after.iter().map(HeaderValue::as_bytes);
                    let step = run.response_shared(status.as_u16(), fields, reading, self.budget());
                    if step == Step::Done {
                        let retried = run.retried();
                        self.meter.ended(retried.stop);
                        return Ok(mark(response, retried));
                    }
                    (step, Failed::Response(response))
                }
                Ok(Err(error)) => {
                    let fault = classify::fault(&error);
                    settle(Verdict::of_fault(fault));
                    let reading = self.reading(now, true);
                    let step = run.error_shared(fault, reading, self.budget());
                    (step, Failed::Error(error))
                }
                Err(_elapsed) => {
                    settle(Verdict::of_timeout(timeout));
                    let reading = self.reading(now, true);
                    let step = run.timed_out_shared(timeout, reading, self.budget());
                    (step, Failed::TimedOut(timeout.duration()))
                }
            };
            let wait = match step {
                Step::Wait(wait) => wait,
                Step::Stop(stop) => return self.give_up(Some(failed), run.retried(), stop),
                // Only a response is done, and it was returned above: there is nothing to
                // send again.
                Step::Done => {
                    let stop = StopReason::NotRetryable.into();
                    return self.give_up(Some(failed), run.retried(), stop);
                }
            };
            // The run decides a wait only for a body that could be copied, and a copy of a
            // copied body is always possible; should one fail, the retry is not sent.
            let Some(retry) = spare.take() else {
                let stop = StopReason::NotReplayable.into();
                return self.give_up(Some(failed), run.retried(), stop);
            };
            self.meter.wait(wait);
            tracing::debug!(
                name = self.meter.name(),
                attempt = run.retried().attempts,
                wait = ?wait,
                status = failed.status(),
                reason = %failed,
                "retrying request"
            );
            self.knobs.clock.sleep(wait).await;
            asked = self.knobs.clock.now();
            spare = retry.try_clone();
            request = retry;
            last = Some(failed);
        }
    }
}

impl<B: SharedCircuitBreaker> RetryMiddleware<B> {
    /// Ends the call for `stop`: the last failed response marked with the record, or the
    /// error.
    fn give_up(
        &self,
        last: Option<Failed>,
        retried: Retried,
        stop: Stop,
    ) -> reqwest_middleware::Result<Response> {
        let retried = Retried {
            stop: Some(stop),
            ..retried
        };
        self.meter.ended(retried.stop);
        // A refusal to retry is an answer, not an error.
        tracing::debug!(
            name = self.meter.name(),
            attempts = retried.attempts,
            waited = ?retried.waited,
            stop = stop.as_str(),
            reason = %stop,
            "not retrying"
        );
        match last {
            Some(Failed::Response(response)) => Ok(mark(response, retried)),
            Some(Failed::Error(error)) => Err(into_middleware(GaveUp::new(
                retried,
                stop,
                false,
                Some(error.into()),
            ))),
            Some(Failed::TimedOut(_)) => {
                Err(into_middleware(GaveUp::new(retried, stop, true, None)))
            }
            None => Err(into_middleware(GaveUp::new(retried, stop, false, None))),
        }
    }
}

/// How an attempt ended: the response or the error, kept to be returned if the middleware
/// gives up, or the time it ran out of.
enum Failed {
    Response(Response),
    Error(reqwest_middleware::Error),
    TimedOut(Duration),
}

impl Failed {
    /// The response status code; `None` for an error or a timeout.
    fn status(&self) -> Option<u16> {
        match self {
            Self::Response(response) => Some(response.status().as_u16()),
            Self::Error(_) | Self::TimedOut(_) => None,
        }
    }
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Response(response) => fmt::Display::fmt(&response.status(), f),
            Self::Error(error) => fmt::Display::fmt(error, f),
            Self::TimedOut(after) => write!(f, "attempt timed out after {after:?}"),
        }
    }
}

/// `response` with `retried` in its extensions, replacing any earlier record (an outer retry
/// middleware's view of the call is its own).
fn mark(mut response: Response, retried: Retried) -> Response {
    response.extensions_mut().insert(retried);
    response
}
