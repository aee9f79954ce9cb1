//! [`FleetQuotaService`]: take from the budget in Redis, then call the inner service, or
//! refuse with [`Limited`](ironward_tower::Limited).

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Request;
use tower::{BoxError, Service};

use super::FleetQuotaFuture;
use super::layer::Shared;

/// A service that admits requests within a rate limit kept in Redis and refuses the rest
/// with [`Limited`](ironward_tower::Limited), made by
/// [`FleetQuotaLayer`](super::FleetQuotaLayer).
///
/// `poll_ready` is the inner service's. `call` takes the inner service that was made
/// ready (leaving a clone in its place, as tower's `Buffer` does), asks Redis, and then
/// either calls it or resolves to the boxed refusal without calling it. The inner service
/// must therefore be `Clone`, and everything `Send`, as axum's and hyper's services are.
///
/// `Clone` shares the budget, which is in Redis anyway.
///
/// # Examples
///
/// Two clones hold one budget (this example runs without a server, on the fallback):
///
/// ```
/// use std::time::Duration;
/// use http::Request;
/// use ironward_redis::{Options, FleetQuotaLayer, FleetQuotaService, Store};
/// use ironward_tower::{Limited, Quota};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let layer = FleetQuotaLayer::new(&store, "echo", Quota::bucket(2.0, 2.0));
/// let echo = service_fn(|request: Request<u32>| async move { Ok::<_, Limited>(*request.body()) });
/// let mut service: FleetQuotaService<_> = layer.layer(echo);
/// let mut clone = service.clone();
///
/// assert_eq!(service.ready().await.unwrap().call(Request::new(1)).await.unwrap(), 1);
/// assert_eq!(clone.ready().await.unwrap().call(Request::new(2)).await.unwrap(), 2);
/// let err = clone.ready().await.unwrap().call(Request::new(3)).await.unwrap_err();
/// assert!(err.is::<Limited>());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct FleetQuotaService<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> FleetQuotaService<S> {
    pub(super) fn new(inner: S, shared: Arc<Shared>) -> Self {
        Self { inner, shared }
    }
}

impl<S, B> Service<Request<B>> for FleetQuotaService<S>
where
    S: Service<Request<B>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = FleetQuotaFuture<S::Response>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The service polled ready is the one to call; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let shared = Arc::clone(&self.shared);
        FleetQuotaFuture(Box::pin(async move {
            let (head, body) = request.into_parts();
            match shared.take(&head).await {
                Ok(()) => inner
                    .call(Request::from_parts(head, body))
                    .await
                    .map_err(Into::into),
                Err(limited) => Err(Box::new(limited) as BoxError),
            }
        }))
    }
}

impl<S: fmt::Debug> fmt::Debug for FleetQuotaService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FleetQuotaService")
            .field("inner", &self.inner)
            .field("shared", &self.shared)
            .finish()
    }
}
