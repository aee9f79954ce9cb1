//! [`ShedTuner`]: changes the policy of one layer's shedder, for every service at once.

use std::fmt;
use std::sync::Arc;

use ironward::Shed;

/// What a tuner asks of the state a layer's services share, whatever their classifier.
pub(super) trait Tune: Send + Sync {
    /// Moves the shedder to `shed` now on the layer's clock, keeping what it has learnt.
    fn retune(&self, shed: Shed);

    /// The policy the shedder runs.
    fn shed(&self) -> Shed;
}

/// Changes the policy of a [`ShedLayer`](crate::ShedLayer)'s shedder in place, for a
/// configuration reload: every service the layer made, every clone of those and of the layer
/// see the new policy on their next request.
///
/// Made by [`ShedLayer::tuner`](crate::ShedLayer::tuner). It holds the layer's shared state
/// (one `Arc`), so it is cheap to clone, `Send` and `Sync`, and keeps no copy of the policy:
/// [`shed`](Self::shed) reads the one in force. [`retune`](Self::retune) calls
/// [`ironward::Shedder::retune`] at the layer's clock's `now`, under the lock the requests
/// take, so a request is decided wholly under the old policy or wholly under the new one. The
/// shedder keeps the requests in flight (their tickets land as usual), the moving average,
/// whether the server is still hot, and its windows as far as the new buckets allow (the
/// core's docs say how far). Each retune is a `tracing` event at the debug level, with the
/// policy it replaced (`from`) and the new one (`to`).
///
/// The layer's builders ([`with_clock`](crate::ShedLayer::with_clock),
/// [`with_classifier`](crate::ShedLayer::with_classifier)) make a new shedder under the policy
/// in force; a tuner made before them keeps tuning the old one, and the services made from it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ironward::{SHED, Shed};
/// use ironward_tower::{Cpu, ShedLayer, ShedRefused};
/// use tower::{Layer, Service, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let hangs = service_fn(|_request: ()| {
///     std::future::pending::<Result<http::Response<()>, &'static str>>()
/// });
/// let layer = ShedLayer::new(SHED, Cpu::fixed(950));
/// let mut server = layer.layer(hangs);
/// let tuner = layer.tuner();
///
/// // Hot (950 ‰ is over the default 900 ‰) and full: the server sheds.
/// let mut held = Vec::new();
/// for _ in 0..40 {
///     held.push(server.ready().await.unwrap().call(()));
/// }
/// held.truncate(20);
/// assert!(server.ready().await.unwrap().call(()).await.unwrap_err().is::<ShedRefused>());
///
/// // Overloaded only at 1000 ‰, and hot no longer than that: the next request is admitted,
/// // and the twenty in flight are still counted.
/// tuner.retune(Shed { cpu: 1000, cool: Duration::ZERO, ..SHED });
/// assert_eq!(tuner.shed().cpu, 1000);
/// held.push(server.ready().await.unwrap().call(()));
/// assert_eq!(layer.flying(), 21);
/// # }
/// ```
#[derive(Clone)]
pub struct ShedTuner {
    shared: Arc<dyn Tune>,
}

impl ShedTuner {
    pub(super) fn new(shared: Arc<dyn Tune>) -> Self {
        Self { shared }
    }

    /// Moves the shedder to `shed` now, keeping the requests in flight and what it has learnt
    /// ([`ironward::Shedder::retune`]): the next request on any of the layer's services is
    /// decided by `shed`.
    pub fn retune(&self, shed: Shed) {
        self.shared.retune(shed);
    }

    /// The policy the shedder runs now, as it was last given.
    pub fn shed(&self) -> Shed {
        self.shared.shed()
    }
}

impl fmt::Debug for ShedTuner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShedTuner")
            .field("shed", &self.shed())
            .finish()
    }
}
