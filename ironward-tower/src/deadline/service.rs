//! [`DeadlineService`]: a time budget around each call.

use std::sync::Arc;
use std::task::{Context, Poll};

use http::Request;
use tower_service::Service;

use super::layer::Budget;
use super::{DeadlineFuture, RequestDeadline};
use crate::meter::Meter;

/// A service that cuts each request off when its time budget runs out, made by
/// [`DeadlineLayer`](super::DeadlineLayer).
///
/// For each request it starts a [`RequestDeadline`], puts it in the request's extensions for
/// the handler, and races the inner future against a `tokio::time::Sleep` of the budget; on
/// expiry the call resolves to [`DeadlineExceeded`](super::DeadlineExceeded) and the inner
/// future is dropped, as tower's `Timeout` does. A request that already carries a
/// `RequestDeadline` (from a layer further out, or put there by the caller) keeps whichever of
/// the two ends first, so a budget only ever shrinks on its way in; one already spent fails at
/// once without reaching the inner service.
///
/// It serves `http::Request<B>`, the request type of axum, hyper and tonic alike: the
/// budget's reader and the extensions it writes are parts of an HTTP request. For any other
/// request type, tower's `Timeout` is the fixed-budget equivalent.
///
/// `Clone` shares the budget's reader; there is no other state. It must be called within a
/// tokio runtime with the time driver enabled, which the `Sleep` needs.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward_tower::{DeadlineExceeded, DeadlineLayer, DeadlineService, RequestDeadline};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let handler = service_fn(|request: http::Request<()>| async move {
///     let deadline = request.extensions().get::<RequestDeadline>().copied();
///     Ok::<_, DeadlineExceeded>(deadline.and_then(|d| d.remaining()))
/// });
/// let service: DeadlineService<_> = DeadlineLayer::new(Duration::from_secs(1)).layer(handler);
/// let left = service.oneshot(http::Request::new(())).await.unwrap();
/// assert_eq!(left, Some(Duration::from_secs(1)));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct DeadlineService<S> {
    inner: S,
    budget: Budget,
    meter: Arc<Meter>,
}

/// The one reason a deadline refuses for, as the `reason` label gives it: the request's time
/// had run out when it arrived.
pub(super) const REASONS: &[&str] = &["exceeded"];

impl<S> DeadlineService<S> {
    pub(super) fn new(inner: S, budget: Budget, meter: Arc<Meter>) -> Self {
        Self {
            inner,
            budget,
            meter,
        }
    }
}

impl<S, B> Service<Request<B>> for DeadlineService<S>
where
    S: Service<Request<B>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = S::Response;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = DeadlineFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        // Only a budget read from the request splits it to show the reader its head: moving
        // an `http::Request` apart and back copies it twice.
        let budget = match &self.budget {
            Budget::Fixed(budget) => *budget,
            Budget::FromRequest(read) => {
                let (head, body) = request.into_parts();
                let budget = read(&head).unwrap_or_default();
                request = Request::from_parts(head, body);
                budget
            }
        };
        let mut deadline = RequestDeadline::start(budget);
        // The one clock reading of the call: what has ended, and when the sleep wakes, are
        // both measured from it (`sleep_until` reads no clock, `sleep` would).
        let now = deadline.origin();
        if let Some(outer) = request.extensions().get::<RequestDeadline>() {
            deadline = deadline.earlier(*outer);
        }
        let end = deadline.end();
        if let Some(end) = end.filter(|&end| end <= now) {
            self.meter.refused(0);
            tracing::debug!(
                name = self.meter.name(),
                budget = ?budget,
                over = ?now.saturating_duration_since(end),
                "deadline refused a request whose time had run out"
            );
            return DeadlineFuture::exceeded();
        }
        self.meter.admitted();
        request.extensions_mut().insert(deadline);
        let future = self.inner.call(request);
        DeadlineFuture::new(future, end.map(tokio::time::sleep_until))
    }
}
