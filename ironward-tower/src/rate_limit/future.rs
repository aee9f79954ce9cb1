//! The response future of [`QuotaService`](super::QuotaService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use http::Response;

use pin_project_lite::pin_project;

use super::Limited;
use super::http::Stamp;

pin_project! {
    /// The response future of [`QuotaService`](super::QuotaService): the inner
    /// service's future for an admitted request, or a refusal that is ready at once.
    ///
    /// A refused request resolves on its first poll to [`Limited`], boxed; an admitted one
    /// to whatever the inner future gives, its error boxed, and its response carrying the
    /// request's [`Headroom`] as the `RateLimit` fields unless the layer was told not to
    /// send them. The budget was taken in `call`,
    /// so dropping this future gives nothing back: a request counts when it is admitted,
    /// as go-zero's limiters count it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::{Request, Response};
    /// use ironward_tower::{Limited, Quota, QuotaFuture, QuotaLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let layer = QuotaLayer::new(Quota::sliding(1, Duration::from_secs(60)));
    /// let ok = service_fn(|_: Request<()>| async { Ok::<_, Limited>(Response::new(7)) });
    /// let mut service = layer.layer(ok);
    /// let admitted: QuotaFuture<_> = service.call(Request::new(()));
    /// let refused = service.call(Request::new(()));
    /// assert!(refused.await.unwrap_err().is::<Limited>());
    /// assert_eq!(*admitted.await.unwrap().body(), 7);
    /// # }
    /// ```
    pub struct QuotaFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Admitted {
            #[pin]
            future: F,
            // Boxed, so that a layer sending no fields carries one null pointer in every
            // future rather than a hundred bytes of room: the future is moved on every call.
            stamp: Option<Box<Stamp>>,
        },
        Limited {
            limited: Limited,
        },
    }
}

impl<F> QuotaFuture<F> {
    /// The inner service's `future`, whose response gets the fields of `stamp`, if any.
    #[inline]
    pub(super) fn admitted(future: F, stamp: Option<Stamp>) -> Self {
        Self {
            state: State::Admitted {
                future,
                stamp: stamp.map(Box::new),
            },
        }
    }

    pub(super) fn limited(limited: Limited) -> Self {
        Self {
            state: State::Limited { limited },
        }
    }
}

impl<F, B, E> Future for QuotaFuture<F>
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Output = Result<Response<B>, Box<dyn std::error::Error + Send + Sync>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Admitted { future, stamp } => {
                let mut response = ready!(future.poll(cx)).map_err(Into::into)?;
                if let Some(stamp) = stamp.take() {
                    (*stamp).append_to(response.headers_mut());
                }
                Poll::Ready(Ok(response))
            }
            StateProj::Limited { limited } => Poll::Ready(Err(Box::new(*limited))),
        }
    }
}

impl<F> fmt::Debug for QuotaFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Admitted { .. } => f.write_str("QuotaFuture::Admitted"),
            State::Limited { limited } => f
                .debug_tuple("QuotaFuture::Limited")
                .field(limited)
                .finish(),
        }
    }
}
