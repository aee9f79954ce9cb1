//! The response future of [`FleetQuotaService`](super::FleetQuotaService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower::BoxError;

/// The response future of [`FleetQuotaService`](super::FleetQuotaService): the decision in
/// Redis, then the inner service's response, or a refusal.
///
/// It is boxed: the decision awaits Redis before the inner service is called, so the
/// future holds the request and the inner service across that wait. Dropping it before
/// the decision is back cancels the request, which is then neither admitted nor, if the
/// script has not run yet, counted.
///
/// # Examples
///
/// Nothing is decided until the future is polled (this example runs without a server, on
/// the fallback):
///
/// ```
/// use std::time::Duration;
/// use http::Request;
/// use ironward_redis::{Options, FleetQuotaFuture, FleetQuotaLayer, Store};
/// use ironward_tower::{Limited, Quota};
/// use tower::{Layer, Service, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> redis::RedisResult<()> {
/// // No Redis there: start on the fallback, with the whole quota for this one process.
/// let options = Options { start_local: true, share: 1.0, ..Options::default() };
/// let store = Store::connect("redis+unix:///nonexistent/redis.sock", options).await?;
/// let layer = FleetQuotaLayer::new(&store, "seven", Quota::period(1, Duration::from_secs(60)));
/// let mut service = layer.layer(service_fn(|_: Request<()>| async { Ok::<_, Limited>(7) }));
/// let first: FleetQuotaFuture<_> = service.call(Request::new(()));
/// let second = service.call(Request::new(()));
/// // The second is polled first, so it is the one admitted.
/// assert_eq!(second.await.unwrap(), 7);
/// assert!(first.await.unwrap_err().is::<Limited>());
/// # Ok(())
/// # }
/// ```
pub struct FleetQuotaFuture<T>(
    pub(super) Pin<Box<dyn Future<Output = Result<T, BoxError>> + Send>>,
);

impl<T> Future for FleetQuotaFuture<T> {
    type Output = Result<T, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.as_mut().poll(cx)
    }
}

impl<T> fmt::Debug for FleetQuotaFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FleetQuotaFuture")
    }
}
