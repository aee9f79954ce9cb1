//! [`ChaosService`]: decide each request's fault, and apply it.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward::chaos::Fault;
use ironward_tokio::SharedChaos;
use tower_service::Service;

use super::future::ChaosFuture;
use super::{ChaosAnswer, PlainAnswer};

/// A service that injects the faults of a chaos policy into the calls of its inner service,
/// made by [`ChaosLayer`](super::ChaosLayer).
///
/// Each call asks the layer's [`SharedChaos::next`] for its fault (numbered as it arrives,
/// decided by the core's [`Injector::decide`](ironward::chaos::Injector::decide) from its
/// draw, counted and logged there); the service only applies the answer:
///
/// - no fault: the inner call, untouched;
/// - [`Fault::Error`]: the [`ChaosAnswer`]'s response at once, the inner service never called;
/// - [`Fault::Latency`]: a wait of the drawn delay on tokio's timer, then the inner call (so a
///   layer inside, a gate or a limiter, sees the request arrive late, not wait inside);
/// - [`Fault::Abort`]: no answer ever, the inner service never called: the future stays
///   pending until the caller drops it, so a server needs a timeout in front (see the
///   [module docs](super#aborts-need-a-timeout));
/// - [`Fault::Replace`]: the inner call, then the [`ChaosAnswer`]'s response in place of its
///   result;
/// - a fault decided in shadow mode: counted and logged with `shadow` true, and the inner
///   call, untouched.
///
/// `poll_ready` is the inner service's. A latency takes the service made ready into its
/// future, to call after the wait, and leaves a clone in its place for the next request
/// (the ready one is the one called, as `poll_ready`'s contract asks), so the inner service
/// must be `Clone`: axum's routers and handlers and hyper's clients are.
///
/// `Clone` shares the layer's policy, draws and counts: clones, one per connection in a
/// server, number their requests in one sequence.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use http::{Request, Response, StatusCode};
/// use ironward::chaos::{Chaos, Fault, Injection};
/// use ironward_tower::{ChaosLayer, ChaosService};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let reached = Arc::new(AtomicU32::new(0));
/// let counter = Arc::clone(&reached);
/// let backend = service_fn(move |_: Request<()>| {
///     counter.fetch_add(1, Ordering::Relaxed);
///     async { Ok::<_, std::convert::Infallible>(Response::new(String::from("real"))) }
/// });
/// let replace_all = Chaos {
///     enabled: true,
///     faults: vec![Injection { fault: Fault::Replace, rate: 1.0 }],
///     ..Chaos::default()
/// };
/// let service: ChaosService<_> = ChaosLayer::new(replace_all).unwrap().layer(backend);
/// let response = service.oneshot(Request::new(())).await.unwrap();
/// // The backend did the work; the caller got a 500.
/// assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
/// assert_eq!(reached.load(Ordering::Relaxed), 1);
/// # }
/// ```
pub struct ChaosService<S, A = PlainAnswer> {
    inner: S,
    /// `None` only for the configured stacks' routes without chaos, which pass every call.
    chaos: Option<SharedChaos>,
    answer: Arc<A>,
}

impl<S, A> ChaosService<S, A> {
    pub(crate) fn new(inner: S, chaos: Option<SharedChaos>, answer: Arc<A>) -> Self {
        Self {
            inner,
            chaos,
            answer,
        }
    }

    /// Faults injected so far by this service and everything sharing its layer's
    /// [`SharedChaos`].
    pub fn injected(&self) -> u64 {
        self.chaos.as_ref().map_or(0, SharedChaos::injected)
    }
}

impl<S: fmt::Debug, A> fmt::Debug for ChaosService<S, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChaosService")
            .field("inner", &self.inner)
            .field("name", &self.chaos.as_ref().map(SharedChaos::name))
            .finish_non_exhaustive()
    }
}

impl<S: Clone, A> Clone for ChaosService<S, A> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            chaos: self.chaos.clone(),
            answer: Arc::clone(&self.answer),
        }
    }
}

impl<S, Req, A> Service<Req> for ChaosService<S, A>
where
    S: Service<Req> + Clone,
    A: ChaosAnswer<S::Response>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ChaosFuture<S, Req, A>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let injected = self.chaos.as_ref().and_then(SharedChaos::next);
        let Some(injected) = injected else {
            return ChaosFuture::calling(self.inner.call(request));
        };
        if injected.shadow {
            return ChaosFuture::calling(self.inner.call(request));
        }
        match injected.fault {
            Fault::Error => ChaosFuture::answered(self.answer.answer(&injected, None)),
            Fault::Latency(_) => {
                // The service made ready goes with the request; its clone waits for the next.
                let clone = self.inner.clone();
                let ready = std::mem::replace(&mut self.inner, clone);
                let delay = injected.delay.unwrap_or_default();
                ChaosFuture::waiting(delay, ready, request)
            }
            Fault::Abort => ChaosFuture::hanging(),
            Fault::Replace => {
                ChaosFuture::replacing(self.inner.call(request), Arc::clone(&self.answer), injected)
            }
        }
    }
}
