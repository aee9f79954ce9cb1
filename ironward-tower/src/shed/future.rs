//! The response future of a [`ShedService`](crate::ShedService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use ironward::ShedReason;
use ironward_tokio::ShedTicket;
use pin_project_lite::pin_project;
use tower::BoxError;

use super::error::ShedRefused;
use super::shared::Shared;
use crate::Classify;

pin_project! {
    /// The response future of a [`ShedService`](crate::ShedService): the inner request's,
    /// taking it out of flight when it completes, or a [`ShedRefused`] error at once.
    ///
    /// Dropping it before it completes takes the request out of flight as a failure. A
    /// request the shedder refused in [`Mode::Shadow`](crate::Mode::Shadow) is the inner
    /// future alone, never in flight, and its `Debug` says `"shadowed"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::SHED;
    /// use ironward_tower::{Cpu, ShedFailures, ShedFuture, ShedLayer};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let hangs = service_fn(|_request: ()| {
    ///     std::future::pending::<Result<http::Response<()>, &'static str>>()
    /// });
    /// let mut server = ShedLayer::new(SHED, Cpu::fixed(0)).layer(hangs);
    /// let future: ShedFuture<_, ShedFailures> = server.ready().await.unwrap().call(());
    /// assert_eq!(server.flying(), 1);
    /// drop(future); // the client hung up
    /// assert_eq!(server.flying(), 0);
    /// # }
    /// ```
    pub struct ShedFuture<F, C> {
        #[pin]
        state: State<F, C>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, C> {
        Called {
            #[pin]
            future: F,
            flight: Flight<C>,
        },
        Overloaded {
            reason: ShedReason,
        },
        Shadowed {
            #[pin]
            future: F,
        },
    }
}

impl<F, C> ShedFuture<F, C> {
    pub(crate) fn called(future: F, flight: Flight<C>) -> Self {
        Self {
            state: State::Called { future, flight },
        }
    }

    /// A request the shedder refused in shadow mode, run out of flight.
    pub(crate) fn shadowed(future: F) -> Self {
        Self {
            state: State::Shadowed { future },
        }
    }

    pub(crate) fn overloaded(reason: ShedReason) -> Self {
        Self {
            state: State::Overloaded { reason },
        }
    }
}

impl<F, C, T, E> Future for ShedFuture<F, C>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
    C: Classify<T>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Called { future, flight } => {
                let result = ready!(future.poll(cx)).map_err(Into::into);
                flight.land(&result);
                Poll::Ready(result)
            }
            // The `Box` a `BoxError` needs is the refusal's one allocation.
            StateProj::Overloaded { reason } => {
                Poll::Ready(Err(Box::new(ShedRefused::new(*reason))))
            }
            StateProj::Shadowed { future } => future.poll(cx).map_err(Into::into),
        }
    }
}

impl<F, C> fmt::Debug for ShedFuture<F, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Called { .. } => "called",
            State::Overloaded { .. } => "overloaded",
            State::Shadowed { .. } => "shadowed",
        };
        f.debug_struct("ShedFuture")
            .field("state", &state)
            .finish_non_exhaustive()
    }
}

/// A request in flight: lands once, when it completes or, failing that, when it is dropped.
pub(crate) struct Flight<C> {
    ticket: Option<ShedTicket>,
    shared: Arc<Shared<C>>,
}

impl<C> Flight<C> {
    pub(crate) fn new(ticket: ShedTicket, shared: Arc<Shared<C>>) -> Self {
        Self {
            ticket: Some(ticket),
            shared,
        }
    }

    /// Lands the request as the classifier reads `result`; later calls do nothing.
    fn land<T>(&mut self, result: &Result<T, BoxError>)
    where
        C: Classify<T>,
    {
        if let Some(ticket) = self.ticket.take() {
            self.shared.settle(ticket, result);
        }
    }
}

impl<C> Drop for Flight<C> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.shared.abandon(ticket);
        }
    }
}
