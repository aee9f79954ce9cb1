//! The response future of a [`LimiterService`](crate::LimiterService).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use ironward_tokio::{LimiterPermit, LimiterRefusal, Waiter};
use pin_project_lite::pin_project;
use tower::BoxError;
use tower_service::Service;

use super::error::LimiterRefused;
use super::shared::Shared;
use crate::classify::Grade;

pin_project! {
    /// The response future of a [`LimiterService`](crate::LimiterService): the inner
    /// request's, settling its permit when it completes; or a wait in the limiter's queue
    /// before it; or a [`LimiterRefused`] error.
    ///
    /// Dropping it while the request is in flight settles the permit as ignored (it leaves
    /// flight and teaches the limit nothing); dropping it while it waits leaves the queue.
    /// `R` is the request type, kept with the inner service while the request waits.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward::ADAPTIVE;
    /// use ironward_tower::{LimiterFuture, LimiterLayer, Overloads};
    /// use tower::{Layer, Service, ServiceExt, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let hangs = service_fn(|_request: ()| {
    ///     std::future::pending::<Result<http::Response<()>, &'static str>>()
    /// });
    /// let layer = LimiterLayer::new(ADAPTIVE);
    /// let mut server = layer.layer(hangs);
    /// let future: LimiterFuture<_, (), Overloads> = server.ready().await.unwrap().call(());
    /// assert_eq!(layer.flying(), 1);
    /// drop(future); // the client hung up
    /// assert_eq!(layer.flying(), 0);
    /// # }
    /// ```
    pub struct LimiterFuture<S, R, C>
    where
        S: Service<R>,
    {
        #[pin]
        state: State<S, R, C>,
    }
}

pin_project! {
    #[project = StateProj]
    #[project_replace = StateTaken]
    enum State<S, R, C>
    where
        S: Service<R>,
    {
        Called {
            #[pin]
            future: S::Future,
            flight: Flight<C>,
        },
        Waiting {
            waiter: Waiter,
            service: S,
            request: R,
            shared: Arc<Shared<C>>,
        },
        Refused {
            refusal: LimiterRefusal,
        },
        Done,
    }
}

impl<S: Service<R>, R, C> LimiterFuture<S, R, C> {
    pub(super) fn called(future: S::Future, flight: Flight<C>) -> Self {
        Self {
            state: State::Called { future, flight },
        }
    }

    /// A request queued by the limiter, with the ready service that will serve it.
    pub(super) fn waiting(waiter: Waiter, service: S, request: R, shared: Arc<Shared<C>>) -> Self {
        Self {
            state: State::Waiting {
                waiter,
                service,
                request,
                shared,
            },
        }
    }

    pub(super) fn refused(refusal: LimiterRefusal) -> Self {
        Self {
            state: State::Refused { refusal },
        }
    }
}

impl<S, R, C> Future for LimiterFuture<S, R, C>
where
    S: Service<R>,
    S::Error: Into<BoxError>,
    C: Grade<S::Response>,
{
    type Output = Result<S::Response, BoxError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            match self.as_mut().project().state.project() {
                StateProj::Called { future, flight } => {
                    let result = ready!(future.poll(cx)).map_err(Into::into);
                    flight.land(&result);
                    return Poll::Ready(result);
                }
                StateProj::Waiting { waiter, .. } => {
                    let admitted = ready!(Pin::new(waiter).poll(cx));
                    let taken = self.as_mut().project().state.project_replace(State::Done);
                    let StateTaken::Waiting {
                        mut service,
                        request,
                        shared,
                        ..
                    } = taken
                    else {
                        continue;
                    };
                    shared.waited(&admitted);
                    match admitted {
                        Ok(permit) => {
                            let flight = Flight::new(permit, shared);
                            let future = service.call(request);
                            self.as_mut()
                                .project()
                                .state
                                .set(State::Called { future, flight });
                        }
                        Err(refusal) => {
                            return Poll::Ready(Err(Box::new(LimiterRefused::new(refusal))));
                        }
                    }
                }
                // The `Box` a `BoxError` needs is the refusal's one allocation.
                StateProj::Refused { refusal } => {
                    let refusal = *refusal;
                    self.as_mut().project().state.set(State::Done);
                    return Poll::Ready(Err(Box::new(LimiterRefused::new(refusal))));
                }
                // Polled after it completed: it has nothing more to give.
                StateProj::Done => return Poll::Pending,
            }
        }
    }
}

impl<S: Service<R>, R, C> fmt::Debug for LimiterFuture<S, R, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Called { .. } => "called",
            State::Waiting { .. } => "waiting",
            State::Refused { .. } => "refused",
            State::Done => "done",
        };
        f.debug_struct("LimiterFuture")
            .field("state", &state)
            .finish_non_exhaustive()
    }
}

/// A request in flight: settled once, as the grade reads its result when it completes, or
/// as ignored by its permit when it is dropped first.
pub(crate) struct Flight<C> {
    permit: Option<LimiterPermit>,
    shared: Arc<Shared<C>>,
}

impl<C> Flight<C> {
    pub(crate) fn new(permit: LimiterPermit, shared: Arc<Shared<C>>) -> Self {
        Self {
            permit: Some(permit),
            shared,
        }
    }

    /// Settles the request as the grade reads `result`; later calls do nothing.
    fn land<T>(&mut self, result: &Result<T, BoxError>)
    where
        C: Grade<T>,
    {
        if let Some(permit) = self.permit.take() {
            permit.settle(self.shared.grade(result));
            self.shared.gauge();
        }
    }

    /// [`land`](Self::land) with the reading `now` of the limiter's clock the caller took as
    /// the call ended, which a stack (server or client) shares among its pieces.
    pub(crate) fn land_at<T>(&mut self, result: &Result<T, BoxError>, now: std::time::Duration)
    where
        C: Grade<T>,
    {
        if let Some(permit) = self.permit.take() {
            permit.settle_at(self.shared.grade(result), now);
            self.shared.gauge();
        }
    }
}
