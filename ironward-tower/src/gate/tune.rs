//! [`GateTuner`]: changes the limit of one layer's gate, for every service at once.

use std::fmt;

use super::future::Shared;

/// Changes the limit of a [`GateLayer`](super::GateLayer)'s gate in place, for a
/// configuration reload: every service the layer made, every clone of those and of the layer
/// see the new limit on their next request.
///
/// Made by [`GateLayer::tuner`](super::GateLayer::tuner). It holds the layer's gate (one
/// `Arc`), so it is cheap to clone, `Send` and `Sync`, and keeps no copy of the limit:
/// [`limit`](Self::limit) reads the one in force. [`retune`](Self::retune) calls
/// [`ironward::SharedGate::retune`] on the one atomic word the requests enter and leave by, so
/// a request deciding at the same time decides against the old limit or the new one, never
/// half of each. Nobody inside is turned out:
/// a limit lowered below the requests in flight admits nobody until enough of them have left
/// to bring the count under it, and a raised one has room at once. The gate reads no clock,
/// so neither does the tuner. Each retune is a `tracing` event at the debug level, with the
/// limit it replaced (`from`) and the new one (`to`).
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
/// assert_eq!((tuner.limit(), layer.held()), (1, 3));
/// assert!(service.call(3).await.unwrap_err().is::<GateFull>());
///
/// // Nobody gets in until all three have left.
/// held.truncate(1);
/// assert!(service.call(4).await.unwrap_err().is::<GateFull>());
/// held.clear();
/// assert_eq!(service.call(5).await.unwrap(), 5);
/// # }
/// ```
#[derive(Clone)]
pub struct GateTuner {
    gate: Shared,
}

impl GateTuner {
    pub(super) fn new(gate: Shared) -> Self {
        Self { gate }
    }

    /// Sets the most the gate lets in at once to `limit`, keeping everyone inside
    /// ([`ironward::SharedGate::retune`]); a limit of 0 refuses every request from now on.
    pub fn retune(&self, limit: u32) {
        // The limit replaced, read in the same swap: exact even while another tuner retunes.
        let was = self.gate.retune(limit);
        tracing::debug!(from = was, to = limit, "gate retuned");
    }

    /// The most the gate lets in at once now.
    pub fn limit(&self) -> u32 {
        self.gate.limit()
    }
}

impl fmt::Debug for GateTuner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GateTuner")
            .field("limit", &self.gate.limit())
            .field("held", &self.gate.held())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::GateLayer;

    #[test]
    fn a_tuner_is_one_arc_and_can_cross_threads() {
        fn send_sync<T: Send + Sync + Clone>() {}
        send_sync::<GateTuner>();
        assert_eq!(size_of::<GateTuner>(), size_of::<Arc<()>>());
        let tuner = GateLayer::new(2).tuner();
        assert_eq!(format!("{tuner:?}"), "GateTuner { limit: 2, held: 0 }");
    }
}
