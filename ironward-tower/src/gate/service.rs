//! [`GateService`]: enter the gate or fail fast.

use std::sync::Arc;
use std::task::{Context, Poll};

use tower_service::Service;

use super::GateFuture;
use super::future::{Room, Shared};
use crate::Mode;
use crate::meter::Meter;
use ironward::GateReason;

/// A service that lets at most a gate's limit of requests in flight and refuses the rest at
/// once with [`GateFull`](super::GateFull), made by [`GateLayer`](super::GateLayer).
///
/// Unlike tower's `ConcurrencyLimit`, which makes a caller wait for a permit, this never
/// queues: a server past its limit answers straight away, so a queue cannot become the outage
/// (go-zero's `rest/handler/maxconnshandler.go` does the same). `poll_ready` is the inner
/// service's; `call` enters the gate, and the room is given back when the
/// response future completes or is dropped. Entering and leaving are one compare-and-swap each
/// on the shared gate, with no lock; a refusal is one atomic load that writes nothing, and
/// allocates only the `Box` of its boxed error, which carries the gate's
/// [`GateReason`](ironward::GateReason).
///
/// `Clone` shares the gate: clones, one per connection in a server, hold one limit together.
///
/// # Examples
///
/// ```
/// use ironward_tower::{GateFull, GateLayer, GateService};
/// use tower::{Layer, Service, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let echo = service_fn(|n: u32| async move { Ok::<_, GateFull>(n) });
/// let mut service: GateService<_> = GateLayer::new(2).layer(echo);
/// let mut clone = service.clone();
///
/// let first = service.call(1);
/// let second = clone.call(2);
/// assert_eq!(service.held(), 2);
/// assert!(clone.call(3).await.unwrap_err().is::<GateFull>());
/// assert_eq!(first.await.unwrap() + second.await.unwrap(), 3);
/// assert_eq!(clone.held(), 0);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct GateService<S> {
    inner: S,
    gate: Shared,
    meter: Arc<Meter>,
}

/// The one reason a gate refuses for, as the `reason` label gives it.
pub(super) const REASONS: &[&str] = &["full"];

impl<S> GateService<S> {
    pub(super) fn new(inner: S, gate: Shared, meter: Arc<Meter>) -> Self {
        Self { inner, gate, meter }
    }

    /// How many requests are in flight through this service and everything sharing its gate.
    pub fn held(&self) -> u32 {
        self.gate.held()
    }

    /// The most the gate lets in at once.
    pub fn limit(&self) -> u32 {
        self.gate.limit()
    }
}

impl<S, Req> Service<Req> for GateService<S>
where
    S: Service<Req>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = S::Response;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = GateFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        match Room::enter(&self.gate) {
            Ok(room) => {
                self.meter.admitted();
                GateFuture::admitted(self.inner.call(request), room)
            }
            Err(reason) => {
                refused(&self.meter, &reason);
                match self.meter.mode() {
                    Mode::Enforce => GateFuture::full(reason),
                    // No room, as the enforcing twin gave it none.
                    Mode::Shadow => GateFuture::shadowed(self.inner.call(request)),
                }
            }
        }
    }
}

/// Reports a refusal of the gate `meter` counts (or, in shadow mode, a would-be refusal): the
/// counter, and a debug event with the numbers that decided it.
pub(crate) fn refused(meter: &Meter, reason: &GateReason) {
    meter.refused(0);
    tracing::debug!(
        name = meter.name(),
        outcome = meter.refusal(),
        held = reason.held,
        limit = reason.limit,
        "gate refused a request"
    );
}

#[cfg(test)]
mod tests {
    use std::future::{Future, pending};
    use std::pin::pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Waker};

    use ironward::GateReason;
    use tower::{Layer, Service, ServiceExt, service_fn};

    use crate::{GateFull, GateLayer};

    type BoxError = Box<dyn std::error::Error + Send + Sync>;

    /// A service whose calls never finish, counting how many reached it.
    fn stuck(
        calls: &Arc<AtomicUsize>,
    ) -> impl Service<(), Response = (), Error = BoxError, Future: Send> + Clone {
        let calls = Arc::clone(calls);
        service_fn(move |()| {
            calls.fetch_add(1, Ordering::Relaxed);
            async {
                pending::<()>().await;
                Ok(())
            }
        })
    }

    #[tokio::test]
    async fn refuses_past_the_limit_without_reaching_the_inner_service() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut service = GateLayer::new(2).layer(stuck(&calls));
        let _first = service.ready().await.unwrap().call(());
        let _second = service.ready().await.unwrap().call(());
        let refused = service.ready().await.unwrap().call(()).await.unwrap_err();
        assert!(refused.is::<GateFull>());
        assert_eq!(calls.load(Ordering::Relaxed), 2);
        assert_eq!(service.held(), 2);
    }

    #[tokio::test]
    async fn dropping_a_future_gives_the_room_back() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut service = GateLayer::new(1).layer(stuck(&calls));
        let held = service.call(());
        assert!(service.call(()).await.unwrap_err().is::<GateFull>());
        drop(held);
        assert_eq!(service.held(), 0);
        let _again = service.call(());
        assert_eq!(service.held(), 1);
        assert_eq!(calls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn completing_a_future_gives_the_room_back_before_it_is_dropped() {
        let mut service = GateLayer::new(1).layer(service_fn(|()| async { Ok::<_, GateFull>(5) }));
        let mut future = pin!(service.call(()));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(matches!(future.as_mut().poll(&mut cx), Poll::Ready(Ok(5))));
        // The future is still alive, but its room is already back.
        assert_eq!(service.held(), 0);
        let mut again = pin!(service.call(()));
        assert!(matches!(again.as_mut().poll(&mut cx), Poll::Ready(Ok(5))));
    }

    #[tokio::test]
    async fn an_inner_error_gives_the_room_back_and_passes_through() {
        let failing = service_fn(|()| async { Err::<(), _>(std::fmt::Error) });
        let mut service = GateLayer::new(1).layer(failing);
        let err = service.call(()).await.unwrap_err();
        assert!(err.is::<std::fmt::Error>());
        assert_eq!(service.held(), 0);
    }

    #[tokio::test]
    async fn clones_and_services_of_one_layer_share_one_gate() {
        let calls = Arc::new(AtomicUsize::new(0));
        let layer = GateLayer::new(3);
        let mut a = layer.layer(stuck(&calls));
        let mut b = a.clone();
        let mut c = layer.clone().layer(stuck(&calls));
        let _held = [a.call(()), b.call(()), c.call(())];
        for service in [&mut a, &mut b, &mut c] {
            assert!(service.call(()).await.unwrap_err().is::<GateFull>());
        }
        assert_eq!(layer.held(), 3);
    }

    // The gate is one atomic word, not a lock: clones on eight threads, each counting itself
    // into the inner service while its room is held, never find more inside than the limit,
    // and every room comes back.
    #[test]
    fn clones_on_many_threads_never_hold_more_than_the_limit() {
        const LIMIT: usize = 3;
        let inside = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&inside);
        let layer = GateLayer::new(LIMIT as u32);
        let service = layer.layer(service_fn(move |()| {
            let now = counted.fetch_add(1, Ordering::SeqCst) + 1;
            assert!(now <= LIMIT, "{now} inside a gate of {LIMIT}");
            let counted = Arc::clone(&counted);
            async move {
                counted.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, GateFull>(())
            }
        }));
        let admitted: usize = std::thread::scope(|s| {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    let mut service = service.clone();
                    s.spawn(move || {
                        let mut cx = Context::from_waker(Waker::noop());
                        (0..10_000)
                            .filter(|_| {
                                let mut future = pin!(service.call(()));
                                match future.as_mut().poll(&mut cx) {
                                    Poll::Ready(Ok(())) => true,
                                    Poll::Ready(Err(err)) => {
                                        assert!(err.is::<GateFull>());
                                        false
                                    }
                                    Poll::Pending => unreachable!("the inner future is ready"),
                                }
                            })
                            .count()
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).sum()
        });
        assert!(admitted > 0);
        assert_eq!((layer.held(), inside.load(Ordering::SeqCst)), (0, 0));
    }

    #[tokio::test]
    async fn a_limit_of_zero_refuses_everything() {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut service = GateLayer::new(0).layer(stuck(&calls));
        assert!(service.call(()).await.unwrap_err().is::<GateFull>());
        assert_eq!(calls.load(Ordering::Relaxed), 0);
    }

    #[tokio::test]
    async fn a_refusal_carries_the_gates_count_and_limit_on_one_line() {
        let calls = Arc::new(AtomicUsize::new(0));
        let layer = GateLayer::new(2);
        let mut service = layer.layer(stuck(&calls));
        let _held = [service.call(()), service.call(())];
        let err: BoxError = service.call(()).await.unwrap_err();
        assert!(err.is::<GateFull>());
        assert!(
            err.source().is_none(),
            "the reason is in the line, not a source"
        );
        let full = err.downcast_ref::<GateFull>().unwrap();
        assert_eq!(full.reason(), GateReason { held: 2, limit: 2 });
        let line = err.to_string();
        assert_eq!(
            line,
            "concurrency cap refused the request: gate full: 2 held against a limit of 2"
        );
        assert!(!line.contains('\n') && !line.ends_with('.'));
        assert_eq!(line, line.to_lowercase());

        // Lowered under its holders, the gate reports them past the new limit.
        layer.tuner().retune(1);
        let err = service.call(()).await.unwrap_err();
        let full = err.downcast_ref::<GateFull>().unwrap();
        assert_eq!(full.reason(), GateReason { held: 2, limit: 1 });
        assert_eq!(calls.load(Ordering::Relaxed), 2);
    }
}
