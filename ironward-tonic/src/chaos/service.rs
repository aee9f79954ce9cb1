//! [`GrpcChaosService`] and its future: a call as the fault decided for it shapes it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::{Request, Response};
use ironward::chaos::{Fault, Injected};
use pin_project_lite::pin_project;
use tokio::time::Sleep;
use tonic::Code;
use tower_service::Service;

use super::answer;
use super::layer::Config;
use crate::timeout::{GRPC_TIMEOUT, decode, encode};

/// A service injecting its layer's faults into the calls it passes on; made by a
/// [`GrpcChaosLayer`](super::GrpcChaosLayer), whose [module](super) says what each fault does.
///
/// The inner service must be `Clone`, as a tonic `Channel` and a server's routes are: the
/// service made ready goes with the call (or is dropped, for a call that never reaches it,
/// giving back whatever it reserved), and a clone is kept for the next. `Clone` shares the
/// layer's policy, draws and codes.
///
/// # Examples
///
/// Every answer replaced: the server is called, and the caller gets `ABORTED` instead.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use http::{Request, Response};
/// use ironward::chaos::{Chaos, Fault, Injection};
/// use ironward_tonic::GrpcChaosLayer;
/// use tonic::Code;
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let calls = Arc::new(AtomicU32::new(0));
/// let seen = Arc::clone(&calls);
/// let server = service_fn(move |_: Request<tonic::body::Body>| {
///     seen.fetch_add(1, Ordering::SeqCst);
///     async { Ok::<_, std::convert::Infallible>(Response::new(tonic::body::Body::empty())) }
/// });
/// let policy = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Replace, rate: 1.0 }],
///     ..Chaos::default()
/// };
/// let layer = GrpcChaosLayer::new(policy).unwrap().with_replace_code(Code::Aborted);
/// let mut service = layer.layer(server);
/// let future = service.ready().await.unwrap().call(Request::new(tonic::body::Body::empty()));
/// assert_eq!(format!("{future:?}"), r#"GrpcChaosFuture("replacing")"#);
/// let response = future.await.unwrap();
/// assert_eq!(response.headers()["grpc-status"], "10");
/// assert_eq!(response.headers()["x-ironward-chaos"], "replace");
/// assert_eq!(calls.load(Ordering::SeqCst), 1, "the call was made");
/// # }
/// ```
pub struct GrpcChaosService<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S> GrpcChaosService<S> {
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

impl<S, B, ResB> Service<Request<B>> for GrpcChaosService<S>
where
    S: Service<Request<B>, Response = Response<ResB>> + Clone,
    ResB: Default,
{
    type Response = Response<ResB>;
    type Error = S::Error;
    type Future = GrpcChaosFuture<S, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, clone);
        let config = &*self.config;
        let injected = match config.chaos.next() {
            Some(injected) if !injected.shadow => injected,
            // No fault, or one only reported.
            _ => return GrpcChaosFuture::from(State::calling(ready.call(request), None)),
        };
        // Read once, on arrival: the time the caller gave the whole call.
        let deadline = request.headers().get(GRPC_TIMEOUT).and_then(decode);
        let state = match injected.fault {
            Fault::Error => State::Answered {
                response: Some(answer(config.error, &injected.fault)),
            },
            Fault::Replace => State::calling(ready.call(request), Some(config.replace)),
            Fault::Abort => match deadline {
                Some(deadline) => State::expiring(deadline, injected),
                None => State::Hanging,
            },
            Fault::Latency(_) => {
                let delay = injected.delay.unwrap_or_default();
                match deadline {
                    Some(deadline) if delay >= deadline => State::expiring(deadline, injected),
                    Some(deadline) => {
                        // The delay spent part of the call's time; the rest goes on.
                        let left = encode(deadline.saturating_sub(delay));
                        request.headers_mut().insert(GRPC_TIMEOUT, left);
                        State::waiting(delay, injected, Some((ready, request)))
                    }
                    None => State::waiting(delay, injected, Some((ready, request))),
                }
            }
        };
        GrpcChaosFuture::from(state)
    }
}

impl<S: Clone> Clone for GrpcChaosService<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            config: Arc::clone(&self.config),
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for GrpcChaosService<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GrpcChaosService")
            .field("inner", &self.inner)
            .field("chaos", &self.config.chaos)
            .finish()
    }
}

pin_project! {
    /// The response future of a [`GrpcChaosService`]: the inner call as it is (no fault, or
    /// one in shadow mode), an injected error's answer, a wait and then the call (a latency),
    /// a wait for the deadline (an abort, or a latency past it), a future that never resolves
    /// (an abort without a deadline), or the inner call whose answer is then replaced. Its
    /// `Debug` names which (`"calling"`, `"answered"`, `"waiting"`, `"hanging"`,
    /// `"replacing"`).
    pub struct GrpcChaosFuture<S, B>
    where
        S: Service<Request<B>>,
    {
        #[pin]
        state: State<S, B>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<S, B>
    where
        S: Service<Request<B>>,
    {
        // The inner call; with `replace`, its answer is replaced by that code once it is ready.
        Calling {
            #[pin]
            future: S::Future,
            replace: Option<Code>,
        },
        // An injected error's answer, taken when first polled.
        Answered {
            response: Option<S::Response>,
        },
        // A wait: then the call, or without one, `DEADLINE_EXCEEDED` for the fault.
        Waiting {
            #[pin]
            sleep: Sleep,
            fault: Fault,
            call: Option<(S, Request<B>)>,
        },
        // An abort without a deadline: never ready.
        Hanging,
    }
}

impl<S, B> State<S, B>
where
    S: Service<Request<B>>,
{
    fn calling(future: S::Future, replace: Option<Code>) -> Self {
        Self::Calling { future, replace }
    }

    fn waiting(delay: Duration, injected: Injected, call: Option<(S, Request<B>)>) -> Self {
        Self::Waiting {
            sleep: tokio::time::sleep(delay),
            fault: injected.fault,
            call,
        }
    }

    /// Ends the call with `DEADLINE_EXCEEDED` once `deadline` has passed.
    fn expiring(deadline: Duration, injected: Injected) -> Self {
        Self::waiting(deadline, injected, None)
    }
}

impl<S, B> From<State<S, B>> for GrpcChaosFuture<S, B>
where
    S: Service<Request<B>>,
{
    fn from(state: State<S, B>) -> Self {
        Self { state }
    }
}

impl<S, B, ResB> Future for GrpcChaosFuture<S, B>
where
    S: Service<Request<B>, Response = Response<ResB>>,
    ResB: Default,
{
    type Output = Result<Response<ResB>, S::Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Calling { future, replace } => {
                    let result = ready!(future.poll(cx));
                    return Poll::Ready(match replace.take() {
                        // The call was made, side effects and all; its answer, or its
                        // failure, is not what the caller gets.
                        Some(code) => Ok(answer(code, &Fault::Replace)),
                        None => result,
                    });
                }
                StateProj::Answered { response } => {
                    let response = response
                        .take()
                        .expect("GrpcChaosFuture polled after it answered");
                    return Poll::Ready(Ok(response));
                }
                StateProj::Waiting { sleep, fault, call } => {
                    ready!(sleep.poll(cx));
                    let Some((mut service, request)) = call.take() else {
                        return Poll::Ready(Ok(answer(Code::DeadlineExceeded, fault)));
                    };
                    let future = service.call(request);
                    state.set(State::calling(future, None));
                }
                // Woken by nothing: the caller's cancelling (dropping this future) ends it.
                StateProj::Hanging => return Poll::Pending,
            }
        }
    }
}

impl<S, B> fmt::Debug for GrpcChaosFuture<S, B>
where
    S: Service<Request<B>>,
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
        f.debug_tuple("GrpcChaosFuture").field(&state).finish()
    }
}
