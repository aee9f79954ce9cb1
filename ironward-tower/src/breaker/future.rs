//! The response future of a [`BreakerService`](crate::BreakerService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use ironward_tokio::{SharedCircuitBreaker, SharedSreBreaker};
use pin_project_lite::pin_project;
use tower::BoxError;

use super::error::BreakerRefused;
use super::shared::Shared;
use crate::Classify;

pin_project! {
    /// The response future of a [`BreakerService`](crate::BreakerService): the inner call's,
    /// settling the breaker's permit when it completes, or a [`BreakerRefused`] error at once.
    ///
    /// Dropping it before it completes leaves the permit unsettled: the call is recorded neither
    /// as a success nor as a failure. A call the breaker refused in
    /// [`Mode::Shadow`](crate::Mode::Shadow) is the inner call's future alone, with no permit,
    /// and its `Debug` says `"shadowed"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SRE;
    /// use ironward_tower::{AnyError, BreakerFuture, BreakerLayer, BreakerRefused, Dice};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let down = service_fn(|_request: ()| async { Err::<(), _>("backend down") });
    /// let mut client = BreakerLayer::new(SRE)
    ///     .with_classifier(AnyError)
    ///     .with_dice(Dice::from_fn(|| 0.0))
    ///     .layer(down);
    /// for _ in 0..10 {
    ///     let _ = client.ready().await.unwrap().call(()).await;
    /// }
    /// let future: BreakerFuture<_, AnyError> = client.ready().await.unwrap().call(());
    /// assert!(future.await.unwrap_err().is::<BreakerRefused>());
    /// # }
    /// ```
    pub struct BreakerFuture<F, C, B: SharedCircuitBreaker = SharedSreBreaker> {
        #[pin]
        state: State<F, C, B>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, C, B: SharedCircuitBreaker> {
        Called {
            #[pin]
            future: F,
            settle: Option<(B::Permit, Arc<Shared<C, B>>)>,
        },
        Refused {
            reason: B::Reason,
        },
        Shadowed {
            #[pin]
            future: F,
        },
    }
}

impl<F, C, B: SharedCircuitBreaker> BreakerFuture<F, C, B> {
    pub(crate) fn called(future: F, permit: B::Permit, shared: Arc<Shared<C, B>>) -> Self {
        Self {
            state: State::Called {
                future,
                settle: Some((permit, shared)),
            },
        }
    }

    /// A call the breaker refused in shadow mode, run without a permit.
    pub(crate) fn shadowed(future: F) -> Self {
        Self {
            state: State::Shadowed { future },
        }
    }

    pub(crate) fn refused(reason: B::Reason) -> Self {
        Self {
            state: State::Refused { reason },
        }
    }
}

impl<F, C, B, T, E> Future for BreakerFuture<F, C, B>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
    C: Classify<T>,
    B: SharedCircuitBreaker,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Called { future, settle } => {
                let result = ready!(future.poll(cx)).map_err(Into::into);
                if let Some((permit, shared)) = settle.take() {
                    shared.settle(permit, &result);
                }
                Poll::Ready(result)
            }
            // The `Box` a `BoxError` needs is the refusal's one allocation.
            StateProj::Refused { reason } => {
                let wait = B::retry_after(reason);
                let refused = BreakerRefused::new(reason.clone()).with_retry_after(wait);
                Poll::Ready(Err(Box::new(refused)))
            }
            StateProj::Shadowed { future } => future.poll(cx).map_err(Into::into),
        }
    }
}

impl<F, C, B: SharedCircuitBreaker> fmt::Debug for BreakerFuture<F, C, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Called { .. } => "called",
            State::Refused { .. } => "refused",
            State::Shadowed { .. } => "shadowed",
        };
        f.debug_struct("BreakerFuture")
            .field("state", &state)
            .finish_non_exhaustive()
    }
}
