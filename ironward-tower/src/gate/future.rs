//! The response future of [`GateService`](super::GateService), and the room it holds.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ironward::{GateReason, SharedGate};
use pin_project_lite::pin_project;

use super::GateFull;
use crate::tuner::Tune;

/// The core gate behind one [`GateLayer`](super::GateLayer), shared by every service it makes.
///
/// The core's [`SharedGate`]: the count and the limit in one atomic word, so that entering,
/// leaving and retuning are each one compare-and-swap and the services of every thread never
/// wait for one another's lock. A refusal is one load and writes nothing.
pub(crate) type Shared = Arc<SharedGate>;

/// One unit of room taken from the gate, given back when dropped.
#[derive(Debug)]
pub(crate) struct Room(Shared);

impl Room {
    /// Takes room if there is some, or says why not ([`SharedGate::check`]).
    pub(crate) fn enter(gate: &Shared) -> Result<Self, GateReason> {
        gate.check()?;
        Ok(Self(Arc::clone(gate)))
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        self.0.leave();
    }
}

pin_project! {
    /// The response future of [`GateService`](super::GateService).
    ///
    /// An admitted request holds its room until its inner future completes or this future is
    /// dropped, whichever comes first; a refused one resolves at once to [`GateFull`],
    /// boxed. For HTTP, the room is held until the response head is ready, not until its body is
    /// sent (as tower's `ConcurrencyLimit` does). A request the gate refused in
    /// [`Mode::Shadow`](crate::Mode::Shadow) is the inner future alone, holding no room, and
    /// its `Debug` says `"shadowed"`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::{GateFull, GateFuture, GateLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let layer = GateLayer::new(1);
    /// let mut service = layer.layer(service_fn(|n: u32| async move { Ok::<_, GateFull>(n) }));
    /// let admitted: GateFuture<_> = service.call(7);
    /// assert_eq!(layer.held(), 1);
    /// assert!(service.call(8).await.unwrap_err().is::<GateFull>());
    /// assert_eq!(admitted.await.unwrap(), 7);
    /// assert_eq!(layer.held(), 0);
    /// # }
    /// ```
    pub struct GateFuture<F> {
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
            room: Option<Room>,
        },
        Full {
            reason: GateReason,
        },
        Shadowed {
            #[pin]
            future: F,
        },
    }
}

impl<F> GateFuture<F> {
    pub(super) fn admitted(future: F, room: Room) -> Self {
        Self {
            state: State::Admitted {
                future,
                room: Some(room),
            },
        }
    }

    /// A request the gate refused in shadow mode, run without a room.
    pub(super) fn shadowed(future: F) -> Self {
        Self {
            state: State::Shadowed { future },
        }
    }

    pub(super) fn full(reason: GateReason) -> Self {
        Self {
            state: State::Full { reason },
        }
    }
}

impl<F, T, E> Future for GateFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Output = Result<T, Box<dyn std::error::Error + Send + Sync>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Admitted { future, room } => {
                let output = std::task::ready!(future.poll(cx));
                // Give the room back now rather than when the caller drops this future.
                drop(room.take());
                Poll::Ready(output.map_err(Into::into))
            }
            // The `Box` of the boxed error is the refusal's one allocation.
            StateProj::Full { reason } => Poll::Ready(Err(Box::new(GateFull::new(*reason)))),
            StateProj::Shadowed { future } => future.poll(cx).map_err(Into::into),
        }
    }
}

impl<F> fmt::Debug for GateFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match &self.state {
            State::Admitted { room: Some(_), .. } => "admitted",
            State::Admitted { room: None, .. } => "done",
            State::Full { .. } => "full",
            State::Shadowed { .. } => "shadowed",
        };
        f.debug_tuple("GateFuture").field(&state).finish()
    }
}

/// The gate's limit is its policy: a retune swaps it in one step, and the limit replaced is
/// read in the same swap, exact even while another tuner retunes.
impl Tune<u32> for SharedGate {
    fn retune(&self, limit: u32) -> u32 {
        let was = SharedGate::retune(self, limit);
        tracing::debug!(from = was, to = limit, "gate retuned");
        was
    }

    fn policy(&self) -> u32 {
        self.limit()
    }
}
