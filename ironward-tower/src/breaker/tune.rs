//! [`BreakerTuner`]: changes the policy of one layer's breaker, for every service at once.

use std::fmt;
use std::sync::Arc;

use ironward::Sre;

/// What a tuner asks of the state a layer's services share, whatever their classifier.
pub(super) trait Tune: Send + Sync {
    /// Moves the breaker to `sre` now on the layer's clock, keeping its window.
    fn retune(&self, sre: Sre);

    /// The policy the breaker runs.
    fn sre(&self) -> Sre;
}

/// Changes the policy of a [`BreakerLayer`](crate::BreakerLayer)'s breaker in place, for a
/// configuration reload: every service the layer made, every clone of those and of the layer
/// see the new policy on their next call.
///
/// Made by [`BreakerLayer::tuner`](crate::BreakerLayer::tuner). It holds the layer's shared
/// state (one `Arc`), so it is cheap to clone, `Send` and `Sync`, and keeps no copy of the
/// policy: [`sre`](Self::sre) reads the one in force. [`retune`](Self::retune) calls
/// [`ironward::Breaker::retune`] at the layer's clock's `now`, under the lock the calls
/// take, so a call is decided wholly under the old policy or wholly under the new one. The
/// breaker keeps its history: the outcomes in the window, and the probe's clock, so a reload
/// during an outage neither forgets it nor starts refusing afresh. Each retune is a `tracing`
/// event at the debug level, with the policy it replaced (`from`) and the new one (`to`).
///
/// The layer's builders ([`with_clock`](crate::BreakerLayer::with_clock) and the rest) make
/// a new breaker under the policy in force; a tuner made before them keeps tuning the old
/// one, and the services made from it.
///
/// # Examples
///
/// ```
/// use ironward::{SRE, Sre};
/// use ironward_tower::{AnyError, BreakerLayer, BreakerRefused, Dice};
/// use tower::{Layer, ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// // A backend that answers `true` and fails `false`, and a draw that is always refused
/// // while the ratio is above zero.
/// let backend = service_fn(|ok: bool| async move { if ok { Ok(()) } else { Err("down") } });
/// let layer = BreakerLayer::new(SRE).with_classifier(AnyError).with_dice(Dice::from_fn(|| 0.0));
/// let client = layer.layer(backend);
/// let tuner = layer.tuner();
///
/// // 60 calls pass, then the backend fails: with k = 1.5 the breaker refuses once the
/// // calls exceed 5 + 1.5 · 60.
/// for ok in [true; 60].into_iter().chain([false; 40]) {
///     let _ = client.clone().oneshot(ok).await;
/// }
/// assert!(layer.ratio() > 0.0);
/// assert!(client.clone().oneshot(true).await.unwrap_err().is::<BreakerRefused>());
///
/// // With k = 2 the same 60 accepts cover every call in the window: the next one goes through.
/// tuner.retune(Sre { k: 2.0, ..SRE });
/// assert_eq!(tuner.sre().k, 2.0);
/// assert_eq!(layer.ratio(), 0.0);
/// assert!(client.clone().oneshot(true).await.is_ok());
/// # }
/// ```
#[derive(Clone)]
pub struct BreakerTuner {
    shared: Arc<dyn Tune>,
}

impl BreakerTuner {
    pub(super) fn new(shared: Arc<dyn Tune>) -> Self {
        Self { shared }
    }

    /// Moves the breaker to `sre` now, keeping the outcomes in its window
    /// ([`ironward::Breaker::retune`]): the next call on any of the layer's services is
    /// decided by `sre`.
    pub fn retune(&self, sre: Sre) {
        self.shared.retune(sre);
    }

    /// The policy the breaker runs now, as it was last given.
    pub fn sre(&self) -> Sre {
        self.shared.sre()
    }
}

impl fmt::Debug for BreakerTuner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BreakerTuner")
            .field("sre", &self.sre())
            .finish()
    }
}
