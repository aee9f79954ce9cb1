//! The response future of [`DeadlineService`](super::DeadlineService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use super::DeadlineExceeded;

pin_project! {
    /// The response future of [`DeadlineService`](super::DeadlineService): the inner future
    /// raced against the request's deadline.
    ///
    /// The inner future is polled first, so a response ready at the deadline is delivered;
    /// after that the sleep, and when it fires the future resolves to [`DeadlineExceeded`],
    /// boxed. Without a deadline it is the inner future with its error boxed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::pending;
    /// use std::time::Duration;
    /// use ironward_tower::{DeadlineExceeded, DeadlineFuture, DeadlineLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let never = service_fn(|_: http::Request<()>| pending::<Result<(), DeadlineExceeded>>());
    /// let mut service = DeadlineLayer::new(Duration::from_millis(50)).layer(never);
    /// let future: DeadlineFuture<_> = service.call(http::Request::new(()));
    /// assert!(future.await.unwrap_err().is::<DeadlineExceeded>());
    /// # }
    /// ```
    pub struct DeadlineFuture<F> {
        #[pin]
        state: State<F>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F> {
        Running {
            #[pin]
            future: F,
            #[pin]
            sleep: Option<Sleep>,
        },
        Exceeded,
    }
}

impl<F> DeadlineFuture<F> {
    pub(super) fn new(future: F, sleep: Option<Sleep>) -> Self {
        Self {
            state: State::Running { future, sleep },
        }
    }

    pub(super) fn exceeded() -> Self {
        Self {
            state: State::Exceeded,
        }
    }
}

impl<F, T, E> Future for DeadlineFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Output = Result<T, Box<dyn std::error::Error + Send + Sync>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Running { future, sleep } => {
                if let Poll::Ready(output) = future.poll(cx) {
                    return Poll::Ready(output.map_err(Into::into));
                }
                match sleep.as_pin_mut().map(|sleep| sleep.poll(cx)) {
                    Some(Poll::Ready(())) => Poll::Ready(Err(DeadlineExceeded::new().into())),
                    _ => Poll::Pending,
                }
            }
            StateProj::Exceeded => Poll::Ready(Err(DeadlineExceeded::new().into())),
        }
    }
}

impl<F> fmt::Debug for DeadlineFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let deadline = match &self.state {
            State::Running {
                sleep: Some(sleep), ..
            } => Some(sleep.deadline()),
            State::Running { sleep: None, .. } => None,
            State::Exceeded => return f.write_str("DeadlineFuture(exceeded)"),
        };
        f.debug_struct("DeadlineFuture")
            .field("deadline", &deadline)
            .finish()
    }
}
