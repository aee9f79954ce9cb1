//! [`GrpcRetryService`]: starts each call's retries.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use tower_service::Service;

use super::body::ResponseBody;
use super::call;
use super::config::Config;
use super::error::BoxError;

/// A gRPC client service that retries calls as the service config says; made by a
/// [`GrpcRetryLayer`](super::GrpcRetryLayer), whose [module](super) says what one call does.
///
/// It serves `http::Request<tonic::body::Body>`, what tonic's generated clients and
/// `tonic::client::Grpc` send, over any inner service of that request (a tonic `Channel`, or
/// any tower service) answering `http::Response<B>`. The inner service must be `Clone`, as
/// for tower's `Retry`: the first attempt goes to the service `call` was given ready, and each
/// retry to a clone, made ready first; a tonic `Channel` is cheap to clone and shares its
/// connection.
///
/// The response is the attempt's own, its body in a [`ResponseBody`] that gives the retry
/// budget back when the call succeeds. `Clone` shares the layer's config, sources and budget.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use http::{Request, Response};
/// use ironward_tonic::retry::GrpcRetryLayer;
/// use ironward_tonic::{Clock, Dice};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // A server that answers every attempt with a trailers-only UNAVAILABLE.
/// let unavailable = service_fn(|_: Request<tonic::body::Body>| async {
///     Response::builder().header("grpc-status", "14").body(tonic::body::Body::empty())
/// });
/// let (clock, _) = Clock::manual(Duration::ZERO);
/// let layer = GrpcRetryLayer::from_json(r#"{"methodConfig": [{"name": [{}], "retryPolicy": {
///     "maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
///     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#)
///     .unwrap()
///     .with_clock(clock.clone())
///     .with_dice(Dice::from_fn(|| 0.5));
///
/// let request = Request::builder().uri("/pkg.Service/Method").body(tonic::body::Body::empty());
/// let response = layer.layer(unavailable).oneshot(request.unwrap()).await.unwrap();
/// // Three attempts, 100 and 200 ms apart on the manual clock; then the last UNAVAILABLE.
/// assert_eq!(response.headers()["grpc-status"], "14");
/// assert_eq!(clock.now(), Duration::from_millis(300));
/// # }
/// ```
pub struct GrpcRetryService<S> {
    inner: S,
    config: Arc<Config>,
}

/// The future of a [`GrpcRetryService`]'s call: every attempt of it, and the waits between.
pub struct ResponseFuture<B> {
    future: Pin<Box<dyn Future<Output = Answer<B>> + Send>>,
}

/// What a call ends with.
type Answer<B> = Result<Response<ResponseBody<B>>, BoxError>;

impl<B> Future for ResponseFuture<B> {
    type Output = Answer<B>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.future.as_mut().poll(cx)
    }
}

impl<B> fmt::Debug for ResponseFuture<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl<S> GrpcRetryService<S> {
    pub(super) fn new(inner: S, config: Arc<Config>) -> Self {
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

impl<S, B> Service<Request<tonic::body::Body>> for GrpcRetryService<S>
where
    S: Service<Request<tonic::body::Body>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    type Response = Response<ResponseBody<B>>;
    type Error = BoxError;
    type Future = ResponseFuture<B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<tonic::body::Body>) -> Self::Future {
        // The service made ready goes with the call; this one is a fresh clone, to be made
        // ready for the next (tower's `Service` docs: "take the ready service").
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        ResponseFuture {
            future: Box::pin(call::run(ready, request, Arc::clone(&self.config))),
        }
    }
}

impl<S: Clone> Clone for GrpcRetryService<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            config: Arc::clone(&self.config),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for GrpcRetryService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcRetryService")
            .field("inner", &self.inner)
            .field("config", &self.config)
            .finish()
    }
}
