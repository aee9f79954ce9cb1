//! [`HttpRetryService`]: starts each call's retry run.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderValue, Request, Response};
use ironward::http_retry::{Call, Run, vouches};
use tower::BoxError;
use tower_service::Service;

use super::future::copy;
use super::layer::Config;
use super::{ClassifyError, FinalErrors, HttpRetryFuture};

/// A client service that retries failed HTTP requests; made by an
/// [`HttpRetryLayer`](super::HttpRetryLayer), whose [module](super) says what one call does.
///
/// It serves `http::Request<B>` for any body `B: Clone` (`Full<Bytes>`, `String`, `()`): every
/// attempt sends a copy of the request, method, URI, version, headers, extensions and body,
/// so a body must be one that can be sent again byte for byte. A streaming body (hyper's
/// `Incoming`) is refused when the program is compiled, not when a request fails; buffer it
/// first:
///
/// ```compile_fail
/// use http::{Request, Response};
/// use ironward_tower::retry::HttpRetryLayer;
/// use tower::{Layer, ServiceExt, service_fn};
///
/// struct Streamed; // a body read once, not `Clone`
///
/// # async fn run() {
/// let backend = service_fn(|_: Request<Streamed>| async { Ok::<_, &str>(Response::new(())) });
/// let _ = HttpRetryLayer::default().layer(backend).oneshot(Request::new(Streamed)).await;
/// # }
/// ```
///
/// The inner service must be `Clone`, as for tower's `Retry`: `call` sends the first attempt
/// on the service it was given ready, and moves a clone into the call's future, which drives
/// that clone's `poll_ready` before each retry. hyper-util's legacy `Client` and reqwest's
/// clients are cheap to clone and share their connection pool.
///
/// `Clone` shares the layer's settings and sources (one `Arc`); every call has a retry run of
/// its own, counted and timed from its own start. `F` is the error classifier
/// ([`FinalErrors`] by default), a type parameter because it reads the inner service's own
/// error type. Its error is `tower::BoxError`: from `poll_ready`, the inner service's own
/// error; from a call, always a [`GaveUp`](super::GaveUp).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response, StatusCode};
/// use ironward::http_retry::{Retried, Stop, StopReason};
/// use ironward_tower::retry::{HttpRetryLayer, HttpRetryService};
/// use ironward_tower::{Clock, Dice};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let busy = service_fn(|_: Request<()>| async {
///     Response::builder().status(StatusCode::SERVICE_UNAVAILABLE).body(())
/// });
/// let (clock, _) = Clock::manual(Duration::ZERO);
/// let layer = HttpRetryLayer::default().with_clock(clock.clone()).with_dice(Dice::from_fn(|| 1.0));
/// let client: HttpRetryService<_> = layer.layer(busy);
///
/// // 200, 400 and 800 ms of backoff, slept on the manual clock in no time; then the last 503.
/// let response = client.oneshot(Request::new(())).await.unwrap();
/// assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
/// assert_eq!(clock.now(), Duration::from_millis(1400));
/// let retried = response.extensions().get::<Retried>().unwrap();
/// assert_eq!(retried.attempts, 4);
/// assert_eq!(retried.stop, Some(Stop::Decided(StopReason::AttemptsExhausted)));
/// # }
/// ```
pub struct HttpRetryService<S, F = FinalErrors> {
    inner: S,
    config: Arc<Config<F>>,
}

impl<S, F> HttpRetryService<S, F> {
    pub(super) fn new(inner: S, config: Arc<Config<F>>) -> Self {
        Self { inner, config }
    }

    /// The inner service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, taken out.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, B, ResB, F> Service<Request<B>> for HttpRetryService<S, F>
where
    S: Service<Request<B>, Response = Response<ResB>> + Clone,
    S::Error: Into<BoxError>,
    B: Clone,
    F: ClassifyError<S::Error>,
{
    type Response = Response<ResB>;
    type Error = BoxError;
    type Future = HttpRetryFuture<S, B, F>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let config = Arc::clone(&self.config);
        // The clock is read when the call starts, which is when its first attempt is asked
        // for too, and before each later attempt.
        let now = config.knobs.clock.now();
        let mut run = begin(&config, &request, now);
        let attempt = run.attempt(now, config.attempt_timeout);
        if attempt.is_ok() {
            config.meter.attempt(run.retried().attempts);
        }
        let future = attempt.map(|timeout| {
            let sent = tokio::time::timeout(timeout.duration(), self.inner.call(copy(&request)));
            (timeout, sent)
        });
        HttpRetryFuture::new(self.inner.clone(), request, run, config, future)
    }
}

/// The retry run of a call of `request` starting at `now`: told its method, that its body
/// can be sent again (it is `Clone`), and whether the idempotency header vouches for it.
pub(crate) fn begin<F, B>(config: &Config<F>, request: &Request<B>, now: Duration) -> Run {
    let key = config
        .idempotency
        .as_ref()
        .and_then(|name| request.headers().get(name))
        .map(HeaderValue::as_bytes);
    let call = Call {
        method: request.method().as_str(),
        // Every attempt sends a copy of a body that is `Clone`.
        body_replayable: true,
        replay_safe: vouches(key),
    };
    Run::new(config.settings.get(), &call, now)
}

impl<S: Clone, F> Clone for HttpRetryService<S, F> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            config: Arc::clone(&self.config),
        }
    }
}

impl<S: fmt::Debug, F> fmt::Debug for HttpRetryService<S, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRetryService")
            .field("inner", &self.inner)
            .field("config", &self.config)
            .finish()
    }
}
