//! The response future of [`ChaosService`](super::ChaosService): a call as the fault decided
//! shapes it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use ironward::chaos::Injected;
use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tower_service::Service;

use super::ChaosAnswer;

pin_project! {
    /// The response future of [`ChaosService`](super::ChaosService).
    ///
    /// What it does is what the fault decided for its request says: the inner service's
    /// future as it is (no fault, or one in shadow mode); the answer of an injected error,
    /// ready at once; a wait on tokio's timer and then the inner call; a future that never
    /// resolves (an abort); or the inner call, whose result is then replaced. Its `Debug`
    /// names which (`"calling"`, `"answered"`, `"waiting"`, `"hanging"`, `"replacing"`).
    ///
    /// # Examples
    ///
    /// ```
    /// use http::{Request, Response, StatusCode};
    /// use ironward::chaos::{Chaos, Fault, Injection};
    /// use ironward_tower::ChaosLayer;
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let policy = Chaos {
    ///     enabled: true,
    ///     faults: vec![Injection { fault: Fault::Error, rate: 1.0 }],
    ///     ..Chaos::default()
    /// };
    /// let ok = service_fn(|_: Request<()>| async { Ok::<_, std::convert::Infallible>(Response::new(String::new())) });
    /// let mut service = ChaosLayer::new(policy).unwrap().layer(ok);
    /// let future = service.call(Request::new(()));
    /// assert_eq!(format!("{future:?}"), "ChaosFuture(\"answered\")");
    /// assert_eq!(future.await.unwrap().status(), StatusCode::SERVICE_UNAVAILABLE);
    /// # }
    /// ```
    pub struct ChaosFuture<S, Req, A>
    where
        S: Service<Req>,
    {
        #[pin]
        state: State<S, Req, A>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, Req, A>
    where
        S: Service<Req>,
    {
        // The inner call; with `replace`, its result is replaced once it is ready.
        Calling {
            #[pin]
            future: S::Future,
            replace: Option<(Arc<A>, Injected)>,
        },
        // An injected error's answer, taken when first polled.
        Answered {
            response: Option<S::Response>,
        },
        // An injected latency: the wait, then the call of the service made ready for it.
        Waiting {
            #[pin]
            sleep: Sleep,
            call: Option<(S, Req)>,
        },
        // An injected abort: never ready.
        Hanging,
    }
}

impl<S, Req, A> ChaosFuture<S, Req, A>
where
    S: Service<Req>,
{
    pub(super) fn calling(future: S::Future) -> Self {
        Self::from(State::Calling {
            future,
            replace: None,
        })
    }

    pub(super) fn replacing(future: S::Future, answer: Arc<A>, injected: Injected) -> Self {
        Self::from(State::Calling {
            future,
            replace: Some((answer, injected)),
        })
    }

    pub(super) fn answered(response: S::Response) -> Self {
        Self::from(State::Answered {
            response: Some(response),
        })
    }

    /// Calls `service`, made ready, with `request` once `delay` has passed.
    pub(super) fn waiting(delay: Duration, service: S, request: Req) -> Self {
        Self::from(State::Waiting {
            sleep: tokio::time::sleep(delay),
            call: Some((service, request)),
        })
    }

    pub(super) fn hanging() -> Self {
        Self::from(State::Hanging)
    }

    fn from(state: State<S, Req, A>) -> Self {
        Self { state }
    }
}

impl<S, Req, A> Future for ChaosFuture<S, Req, A>
where
    S: Service<Req>,
    A: ChaosAnswer<S::Response>,
{
    type Output = Result<S::Response, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Calling { future, replace } => {
                    let result = ready!(future.poll(cx));
                    return Poll::Ready(match replace.take() {
                        // The call happened, side effects and all; its result is not what
                        // the caller gets.
                        Some((answer, injected)) => Ok(answer.answer(&injected, result.ok())),
                        None => result,
                    });
                }
                StateProj::Answered { response } => {
                    let response = response
                        .take()
                        .expect("ChaosFuture polled after it answered");
                    return Poll::Ready(Ok(response));
                }
                StateProj::Waiting { sleep, call } => {
                    ready!(sleep.poll(cx));
                    let (mut service, request) =
                        call.take().expect("ChaosFuture polled after its call");
                    let future = service.call(request);
                    state.set(State::Calling {
                        future,
                        replace: None,
                    });
                }
                // Woken by nothing: the caller's deadline, or its dropping the future, ends it.
                StateProj::Hanging => return Poll::Pending,
            }
        }
    }
}

impl<S, Req, A> fmt::Debug for ChaosFuture<S, Req, A>
where
    S: Service<Req>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Calling { replace: None, .. } => "calling",
            State::Calling {
                replace: Some(_), ..
            } => "replacing",
            State::Answered { .. } => "answered",
            State::Waiting { .. } => "waiting",
            State::Hanging => "hanging",
        };
        f.debug_tuple("ChaosFuture").field(&state).finish()
    }
}
