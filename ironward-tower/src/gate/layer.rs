//! [`GateLayer`]: one concurrency limit, shared by every service it makes.

use std::sync::Arc;

use ironward::SharedGate;
use tower_layer::Layer;

use super::GateService;
use super::future::Shared;
use crate::Mode;
use crate::meter::Meter;
use crate::tuner::{Tune, Tuner};
use ironward_tokio::Knobs;

/// Applies one concurrency limit, which refuses at once, to every service it wraps.
///
/// The layer owns the gate (the core's [`SharedGate`], shared by `&` without a lock): every
/// service it makes, and every clone of those, enters the same one, so
/// `Router::layer(GateLayer::new(100))` is 100 in flight across all the routes, methods and
/// connections of the app. (axum calls `layer` once per route and per method, and
/// a limit made inside `layer`, as tower's `ConcurrencyLimitLayer` makes its semaphore, ends up
/// one per route.) For a separate limit per route, give each route its own
/// `GateLayer::new`.
///
/// [`new`](Self::new) makes the gate behind an `Arc`, as tower's
/// `GlobalConcurrencyLimitLayer` makes its semaphore and as every layer of this crate that
/// shares state does: cloning the layer is an `Arc` clone, which is what keeps the limit
/// whole however often the layer is cloned or applied.
///
/// To change the limit while the layer serves (a configuration reload), take a
/// [`tuner`](Self::tuner): it retunes the one gate that every service and clone shares.
///
/// # Examples
///
/// ```
/// use ironward_tower::{GateFull, GateLayer};
/// use tower::{Layer, Service, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let layer = GateLayer::new(1);
/// let echo = service_fn(|n: u32| async move { Ok::<_, GateFull>(n) });
/// let mut a = layer.layer(echo);
/// let mut b = layer.layer(echo); // a second route: same gate
///
/// let held = a.call(1);
/// assert_eq!(layer.held(), 1);
/// assert!(b.call(2).await.unwrap_err().is::<GateFull>());
/// drop(held);
/// assert_eq!(b.call(3).await.unwrap(), 3);
/// assert_eq!(layer.limit(), 1);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct GateLayer {
    pub(crate) gate: Shared,
    knobs: Knobs,
    pub(crate) meter: Arc<Meter>,
}

impl GateLayer {
    /// A gate with room for `limit` requests in flight at once; a limit of 0 refuses all.
    pub fn new(limit: u32) -> Self {
        let knobs = Knobs::default();
        Self {
            gate: Arc::new(SharedGate::new(limit)),
            meter: Arc::new(Meter::of(&knobs, "gate", super::service::REASONS)),
            knobs,
        }
    }

    /// The same layer, and the same gate, reporting under `name` (by default `"default"`):
    /// the `name` label of its metrics and the `name` field of its `tracing` events (see the
    /// guide's [metrics](crate::_guide::metrics)). Services made before keep the name they had.
    #[must_use]
    pub fn with_name(self, name: &'static str) -> Self {
        self.remade(|knobs| knobs.name = name)
    }

    /// The same layer, and the same gate, in `mode` (by default [`Mode::Enforce`]). In
    /// [`Mode::Shadow`] a request the gate refuses goes through to the inner service
    /// instead, holding no room (as the enforcing gate let it have none), so the count in
    /// flight is the one the enforcing gate would see. The refusal is reported as `shadowed`
    /// (see [`Mode`]). Services made before keep the mode they had.
    #[must_use]
    pub fn with_mode(self, mode: Mode) -> Self {
        self.remade(|knobs| knobs.mode = mode)
    }

    /// Whether the layer enforces its refusals or only reports them; see
    /// [`with_mode`](Self::with_mode).
    pub fn mode(&self) -> Mode {
        self.knobs.mode
    }

    /// The same layer, and the same gate, with one knob changed and counters under it.
    fn remade(self, change: impl FnOnce(&mut Knobs)) -> Self {
        let mut knobs = self.knobs;
        change(&mut knobs);
        Self {
            gate: self.gate,
            meter: Arc::new(Meter::of(&knobs, "gate", super::service::REASONS)),
            knobs,
        }
    }

    /// How many requests are in flight through this layer's services.
    pub fn held(&self) -> u32 {
        self.gate.held()
    }

    /// The most this layer's services let in at once.
    pub fn limit(&self) -> u32 {
        self.gate.limit()
    }

    /// A handle that changes the limit of this layer's gate in place, for every service the
    /// layer made and every clone at once; see [`Tuner`]. One `Arc` clone.
    ///
    /// Nobody inside is turned out ([`ironward::SharedGate::retune`]): a limit lowered below
    /// the requests in flight admits nobody until enough of them have left to bring the count
    /// under it, and a raised one has room at once; a limit of 0 refuses every request from
    /// then on. The gate reads no clock, so neither does its tuner.
    ///
    /// # Examples
    ///
    /// ```
    /// use ironward_tower::{GateFull, GateLayer};
    /// use tower::{Layer, Service, service_fn};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let layer = GateLayer::new(3);
    /// let mut service = layer.layer(service_fn(|n: u32| async move { Ok::<_, GateFull>(n) }));
    /// let tuner = layer.tuner();
    /// let mut held: Vec<_> = (0..3).map(|n| service.call(n)).collect();
    ///
    /// // One at a time from now on: the three inside stay, and the next request is refused.
    /// tuner.retune(1);
    /// assert_eq!((tuner.policy(), layer.held()), (1, 3));
    /// assert!(service.call(3).await.unwrap_err().is::<GateFull>());
    ///
    /// // Nobody gets in until all three have left.
    /// held.truncate(1);
    /// assert!(service.call(4).await.unwrap_err().is::<GateFull>());
    /// held.clear();
    /// assert_eq!(service.call(5).await.unwrap(), 5);
    /// # }
    /// ```
    pub fn tuner(&self) -> Tuner<u32> {
        Tuner::new(Arc::clone(&self.gate) as Arc<dyn Tune<u32>>)
    }
}

impl<S> Layer<S> for GateLayer {
    type Service = GateService<S>;

    /// A service sharing the layer's gate. The first one registers the gate's metrics, under
    /// the name that is now final.
    fn layer(&self, inner: S) -> Self::Service {
        self.meter.register();
        GateService::new(inner, Arc::clone(&self.gate), Arc::clone(&self.meter))
    }
}
