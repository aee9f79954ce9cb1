//! [`HttpRetryFuture`]: one call, from its first attempt to its last.

use std::fmt;
use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::header::RETRY_AFTER;
use http::{HeaderValue, Request, Response};
use ironward::http_retry::{Fault, Reading, Run, Step, Stop, Timeout};
use pin_project_lite::pin_project;
use tower::BoxError;
use tower_service::Service;

use super::layer::Config;
use super::{ClassifyError, FinalErrors, GaveUp};

pin_project! {
    /// The response future of [`HttpRetryService`](super::HttpRetryService): one call's
    /// attempts, each under its timeout, and the waits between them.
    ///
    /// It holds the call's [`Run`], the request it copies for each attempt and a clone of the
    /// inner service, whose `poll_ready` it drives before each retry. Dropping it cancels the
    /// call at once, in an attempt or in a wait.
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response};
    /// use ironward::http_retry::Retried;
    /// use ironward_tower::retry::{HttpRetryFuture, HttpRetryLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let ok = service_fn(|_: Request<()>| async { Ok::<_, &str>(Response::new(())) });
    /// let mut client = HttpRetryLayer::default().layer(ok);
    /// let future: HttpRetryFuture<_, ()> = client.call(Request::new(()));
    /// let response = future.await.unwrap();
    /// assert_eq!(response.extensions().get::<Retried>().map(|r| r.attempts), Some(1));
    /// # }
    /// ```
    pub struct HttpRetryFuture<S, B, F = FinalErrors>
    where
        S: Service<Request<B>>,
    {
        #[pin]
        state: State<S::Future>,
        service: S,
        request: Request<B>,
        run: Run,
        config: Arc<Config<F>>,
        last: Last<S::Response>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<Fut> {
        /// An attempt in flight, under `timeout`.
        Calling {
            timeout: Timeout,
            #[pin]
            future: tokio::time::Timeout<Fut>,
        },
        /// The wait before a retry, on the layer's clock.
        Waiting {
            #[pin]
            sleep: ironward_tokio::Delay,
        },
        /// Driving the inner service's readiness before a retry: part of the attempt, so
        /// under its timeout, which `deadline` ends.
        Readying {
            timeout: Timeout,
            #[pin]
            deadline: tokio::time::Sleep,
        },
        /// The run stopped for `stop` without a response to return.
        Stopped { stop: Stop },
        /// The call has returned its response.
        Finished,
    }
}

/// How the last attempt ended, kept across the wait so that the call can still end with it
/// should the check after waking stop the retry; dropped when the retry goes ahead.
pub(crate) enum Last<Res> {
    /// No attempt has failed since the last one was sent.
    None,
    /// A failed response, kept unread.
    Response(Res),
    /// An error of the inner service (from `call` or `poll_ready`), boxed.
    Error(BoxError),
    /// Its timeout ran out after this long.
    TimedOut(Duration),
}

/// How one attempt ended.
enum Outcome<Res, E> {
    Response(Res),
    Error(E),
    TimedOut(Timeout),
}

impl<S, B, F> HttpRetryFuture<S, B, F>
where
    S: Service<Request<B>>,
{
    /// The call of `request`, whose first attempt is `first` (or which `run` stopped before
    /// it), retried on `service`.
    pub(super) fn new(
        service: S,
        request: Request<B>,
        run: Run,
        config: Arc<Config<F>>,
        first: Result<(Timeout, tokio::time::Timeout<S::Future>), Stop>,
    ) -> Self {
        let state = match first {
            Ok((timeout, future)) => State::Calling { timeout, future },
            Err(stop) => State::Stopped { stop },
        };
        Self {
            state,
            service,
            request,
            run,
            config,
            last: Last::None,
        }
    }
}

impl<S, B, ResB, F> Future for HttpRetryFuture<S, B, F>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    S::Error: Into<BoxError>,
    B: Clone,
    F: ClassifyError<S::Error>,
{
    type Output = Result<Response<ResB>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            let outcome = match this.state.as_mut().project() {
                StateProj::Calling { timeout, future } => {
                    let timeout = *timeout;
                    match ready!(future.poll(cx)) {
                        Ok(Ok(response)) => Outcome::Response(response),
                        Ok(Err(error)) => Outcome::Error(error),
                        Err(_elapsed) => Outcome::TimedOut(timeout),
                    }
                }
                StateProj::Waiting { sleep } => {
                    ready!(sleep.poll(cx));
                    // The check the rules ask for after waking: a loaded runtime may oversleep.
                    let now = this.config.knobs.clock.now();
                    match this.run.attempt(now, this.config.attempt_timeout) {
                        Ok(timeout) => {
                            this.config.meter.attempt(this.run.retried().attempts);
                            // The retry is going ahead: the failure it replaces is not needed.
                            *this.last = Last::None;
                            let deadline = tokio::time::sleep(timeout.duration());
                            this.state.set(State::Readying { timeout, deadline });
                        }
                        Err(stop) => {
                            stopped(this.config, this.request, this.run, stop);
                            this.state.set(State::Stopped { stop });
                        }
                    }
                    continue;
                }
                StateProj::Readying { timeout, deadline } => {
                    let timeout = *timeout;
                    match this.service.poll_ready(cx) {
                        Poll::Ready(Ok(())) => {
                            let end = deadline.deadline();
                            let call = this.service.call(copy(this.request));
                            let future = tokio::time::timeout_at(end, call);
                            this.state.set(State::Calling { timeout, future });
                            continue;
                        }
                        Poll::Ready(Err(error)) => Outcome::Error(error),
                        Poll::Pending => {
                            ready!(deadline.poll(cx));
                            Outcome::TimedOut(timeout)
                        }
                    }
                }
                StateProj::Finished => panic!("HttpRetryFuture polled after it returned"),
                StateProj::Stopped { stop } => {
                    let stop = *stop;
                    this.state.set(State::Finished);
                    return Poll::Ready(finish(this.config, this.run, this.last, stop));
                }
            };

            let config: &Config<F> = this.config;
            let now = config.knobs.clock.now();
            let outcome = match outcome {
                Outcome::Response(response) => Ended::Response(response),
                Outcome::Error(error) => Ended::Error(config.errors.fault(&error), error.into()),
                Outcome::TimedOut(timeout) => Ended::TimedOut(timeout),
            };
            match judge(config, this.run, this.last, outcome, now) {
                Ok(response) => {
                    this.state.set(State::Finished);
                    return Poll::Ready(Ok(response));
                }
                Err(Step::Wait(wait)) => {
                    let sleep = waiting(config, this.request, this.run, this.last, wait);
                    this.state.set(State::Waiting { sleep });
                }
                Err(Step::Stop(stop)) => {
                    stopped(config, this.request, this.run, stop);
                    this.state.set(State::Stopped { stop });
                }
                // Only a response is done, and it was returned above.
                Err(Step::Done) => this.state.set(State::Finished),
            }
        }
    }
}

/// How one attempt ended, an error already classified ([`ClassifyError`]) and boxed: what
/// the run is told, by this layer's future and by a client stack's alike.
pub(crate) enum Ended<Res> {
    Response(Res),
    Error(Fault, BoxError),
    TimedOut(Timeout),
}

/// Tells `run` how the attempt ended at `now`: a response it is done with (a success, or
/// the rules' last word on it), marked with the call's [`Retried`](super::Retried); else the
/// next step, the failure kept in `last` for the call to end with.
pub(crate) fn judge<F, ResB>(
    config: &Config<F>,
    run: &mut Run,
    last: &mut Last<Response<ResB>>,
    ended: Ended<Response<ResB>>,
    now: Duration,
) -> Result<Response<ResB>, Step> {
    let step = match ended {
        Ended::Response(mut response) => {
            let status = response.status().as_u16();
            let reading = reading(config, now, status >= 400);
            let retry_after = response.headers().get_all(RETRY_AFTER);
            let step = run.response_shared(
                status,
                retry_after.iter().map(HeaderValue::as_bytes),
                reading,
                config.budget(),
            );
            if step == Step::Done {
                let retried = run.retried();
                config.meter.ended(retried.stop);
                response.extensions_mut().insert(retried);
                return Ok(response);
            }
            *last = Last::Response(response);
            step
        }
        Ended::Error(fault, error) => {
            let reading = reading(config, now, true);
            *last = Last::Error(error);
            run.error_shared(fault, reading, config.budget())
        }
        Ended::TimedOut(timeout) => {
            let reading = reading(config, now, true);
            *last = Last::TimedOut(timeout.duration());
            run.timed_out_shared(timeout, reading, config.budget())
        }
    };
    Err(step)
}

/// The wait the run decided before the next attempt: counted, logged, and slept on the
/// layer's clock.
pub(crate) fn waiting<F, B, Res>(
    config: &Config<F>,
    request: &Request<B>,
    run: &Run,
    last: &Last<Response<Res>>,
    wait: Duration,
) -> ironward_tokio::Delay {
    config.meter.wait(wait);
    tracing::debug!(
        name = config.meter.name(),
        method = %request.method(),
        uri = %request.uri(),
        attempt = run.retried().attempts,
        wait = ?wait,
        status = last.status(),
        reason = %last,
        "retrying request"
    );
    config.knobs.clock.sleep(wait)
}

/// The end of a call the run stopped for `stop`: the last failed response marked with the
/// record, else a [`GaveUp`] with the last error, if any.
pub(crate) fn finish<F, Res>(
    config: &Config<F>,
    run: &Run,
    last: &mut Last<Response<Res>>,
    stop: Stop,
) -> Result<Response<Res>, BoxError> {
    let retried = run.retried();
    config.meter.ended(retried.stop);
    let (timed_out, error) = match mem::replace(last, Last::None) {
        Last::Response(mut response) => {
            response.extensions_mut().insert(retried);
            return Ok(response);
        }
        Last::Error(error) => (false, Some(error)),
        Last::TimedOut(_) => (true, None),
        Last::None => (false, None),
    };
    Err(GaveUp::new(retried, stop, timed_out, error).into())
}

/// What the sources read when an attempt ended: the clocks, and one roll of the dice when it
/// `failed` (a status of 400 or more, an error, a timeout); a success draws nothing.
pub(crate) fn reading<F>(config: &Config<F>, now: Duration, failed: bool) -> Reading {
    Reading {
        now,
        unix: config.wall.now(),
        // Never read: a success is done before its roll would be.
        roll: if failed {
            config.knobs.dice.roll()
        } else {
            1.0
        },
    }
}

/// Reports that the run stopped, and why: an answer, not an error, so a debug event with the
/// stop's label and the record's numbers.
pub(crate) fn stopped<F, B>(config: &Config<F>, request: &Request<B>, run: &Run, stop: Stop) {
    let retried = run.retried();
    tracing::debug!(
        name = config.meter.name(),
        method = %request.method(),
        uri = %request.uri(),
        attempts = retried.attempts,
        waited = ?retried.waited,
        stop = stop.as_str(),
        reason = %stop,
        "not retrying"
    );
}

impl<B> Last<Response<B>> {
    /// The failed response's status; `None` for an error or a timeout.
    fn status(&self) -> Option<u16> {
        match self {
            Self::Response(response) => Some(response.status().as_u16()),
            Self::None | Self::Error(_) | Self::TimedOut(_) => None,
        }
    }
}

/// Why the last attempt failed, for the retry's event: the status, the error, or the timeout.
impl<B> fmt::Display for Last<Response<B>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("no failure"),
            Self::Response(response) => fmt::Display::fmt(&response.status(), f),
            Self::Error(error) => fmt::Display::fmt(error, f),
            Self::TimedOut(after) => write!(f, "attempt timed out after {after:?}"),
        }
    }
}

/// A copy of the whole request, extensions included, to send as one attempt.
pub(crate) fn copy<B: Clone>(request: &Request<B>) -> Request<B> {
    let mut copy = Request::new(request.body().clone());
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    *copy.extensions_mut() = request.extensions().clone();
    copy
}

impl<S, B, F> fmt::Debug for HttpRetryFuture<S, B, F>
where
    S: Service<Request<B>>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRetryFuture")
            .field("method", self.request.method())
            .field("uri", self.request.uri())
            .field("state", &self.state)
            .field("retried", &self.run.retried())
            .finish()
    }
}

impl<Fut> fmt::Debug for State<Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Calling { timeout, .. } => f.debug_tuple("Calling").field(timeout).finish(),
            Self::Waiting { sleep } => f.debug_tuple("Waiting").field(sleep).finish(),
            Self::Readying { timeout, .. } => f.debug_tuple("Readying").field(timeout).finish(),
            Self::Stopped { stop } => f.debug_tuple("Stopped").field(stop).finish(),
            Self::Finished => f.write_str("Finished"),
        }
    }
}

#[cfg(test)]
mod tests {
    use http::{Method, Version};

    use super::*;

    #[test]
    fn the_copy_is_the_whole_request() {
        let mut request = Request::put("http://example.com/a?b=c")
            .version(Version::HTTP_10)
            .header("idempotency-key", "k1")
            .body(String::from("body"))
            .unwrap();
        request.extensions_mut().insert(7u8);
        let copy = copy(&request);
        assert_eq!(copy.method(), Method::PUT);
        assert_eq!(copy.uri(), request.uri());
        assert_eq!(copy.version(), Version::HTTP_10);
        assert_eq!(copy.headers(), request.headers());
        assert_eq!(copy.extensions().get::<u8>(), Some(&7));
        assert_eq!(copy.body(), "body");
    }
}
